//! Potts models: `q_i` states per site, fields and pairwise couplings (the categorical
//! generalization of the fully visible Boltzmann machine), for direct coupling analysis of
//! protein sequence alignments.
//!
//! | module | what it holds |
//! |---|---|
//! | [`model`] | [`Potts`]: parameters, log-potentials and energies, the zero-sum gauge |
//! | [`exact`] | `ln Z` and exact samples by enumeration (small models; the tests' twins) |
//! | `file` | model files, `format = boltzkit/potts/v1` ([`FORMAT`]) |

pub mod exact;
mod file;
pub mod model;

pub use file::FORMAT;
pub use model::{pair_index, parameter_count, Potts, MAX_STATES};
