//! Data: the [`Dataset`] type, file readers and writers, and synthetic generators.
//!
//! - [`read_dataset`]: `.npy`, `.csv`/`.tsv`/`.data`, `.amat`/`.txt`, IDX (`*-ubyte`), each
//!   optionally `.gz`, with explicit [`Binarize`] choices and inferred or declared
//!   cardinalities ([`ReadOptions`]); [`read_binary`]: a 0/1 data file for an RBM, checked.
//! - [`write_dataset`] and friends: `.npy`, `.csv`, `.tsv`, `.amat` (optionally `.gz`);
//!   [`write_npy_f64`] / [`read_npy_f64`] for distributions over all states.
//! - [`registry`]: the public data sets by name (URL, size, SHA-256, licence), fetched into a
//!   cache from a mirror folder or the network and verified.
//! - [`synth`]: generators with exact truths (explicit tables, Ising grids, Bayesian networks).

mod binary;
mod dataset;
mod read;
pub mod registry;
pub mod synth;
mod write;

pub use binary::read_binary;
pub use dataset::{inferred_cardinalities, Dataset, MAX_CARDINALITY};
pub(crate) use read::{load as load_bytes, parse_error};
pub use read::{read_dataset, read_npy_f64, Binarize, ReadOptions};
pub use write::{write_csv, write_dataset, write_npy, write_npy_f64};
