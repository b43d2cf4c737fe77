//! Potts models: `q_i` states per site, fields and pairwise couplings (the categorical
//! generalization of the fully visible Boltzmann machine), for direct coupling analysis of
//! protein sequence alignments: alignments read into integer codes, sequence weights, the
//! models fitted to them, coupling scores and contact precision.
//!
//! | module | what it holds |
//! |---|---|
//! | [`model`] | [`Potts`]: parameters, log-potentials and energies, the zero-sum gauge |
//! | [`exact`] | `ln Z` and exact samples by enumeration (small models; the tests' twins) |
//! | [`plm`] | the pseudo-likelihood engine: symmetric / asymmetric PLM, L2 and group L1, weights |
//! | `file` | model files, `format = boltzkit/potts/v1` ([`FORMAT`]) |
//! | [`gibbs`] | Gibbs sampling (kept local fields, per-chain streams, thread-independent) |
//! | [`alphabet`] | [`Alphabet`]: letters ↔ codes (protein, RNA, DNA or given; gap first) |
//! | [`alignment`] | [`read_alignment`]: FASTA, A2M, Stockholm (gzip) → [`Alignment`] (codes, names, kept columns), focus and gap filters |
//! | [`weights`] | sequence weights 1 / (neighbours at identity ≥ θ), plmc's weights files |
//! | [`scores`] | Frobenius norms of zero-sum-gauge couplings, APC, plmc's couplings file |
//! | [`contacts`] | distance files, precision of the top L/5 … 2L pairs against a structure |
//! | [`dca`] | the pipeline CLI and Python share: alignment + weights → fit → model with positions → scores |
//! | [`moments`] | generative checks: one-, two-site frequencies and connected correlations of two sets, by Pearson |

pub mod alignment;
pub mod alphabet;
mod as_model;
pub mod contacts;
pub mod dca;
pub mod exact;
mod file;
pub mod gibbs;
pub mod model;
pub mod moments;
pub mod plm;
pub mod scores;
pub mod weights;

pub use alignment::{read_alignment, Alignment, AlignmentFormat, AlignmentParams};
pub use alphabet::Alphabet;
pub use file::FORMAT;
pub use model::{pair_index, parameter_count, Potts, MAX_STATES};
