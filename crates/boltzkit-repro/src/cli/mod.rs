//! The commands whose work is this crate's, as flags (clap) and wiring: `repro <paper>`
//! ([`Paper`]), `gen` ([`Gen`]), `lab` ([`Lab`]) and `bench` ([`Bench`]). Each checks its
//! flags before any work, runs and writes its files, and returns an [`Outcome`]; the command
//! line supplies its common flags (a type `C` implementing [`Common`]: seed, threads,
//! `--json`), draws the [`crate::Progress`] (on stderr: [`progress::ReproProgress`], with the
//! bars and spinners of [`terminal`]) and prints the outcome as its summary. This face only
//! declares and re-exports (`common.rs` holds what the commands share).

mod bench;
mod binarize;
mod common;
mod gen;
mod lab;
pub mod progress;
mod repro;
pub mod terminal;

pub use bench::{AisChoice, Bench, EpochAlgo};
pub use binarize::BinarizeArgs;
pub use common::{f32_value, Common, Outcome};
pub use gen::{Gen, MAX_TRUTH_VARS};
pub use lab::Lab;
pub use repro::{
    BslmFlags, Flags, FsllFlags, FwFlags, Job, Paper, PopcdFlags, PopcdPart, SdcpFlags,
};
