//! The commands whose work is `boltzkit_repro`'s, as flags (clap) and wiring: `repro <paper>`
//! ([`Paper`]), `gen` ([`Gen`]), `lab` ([`Lab`]) and `bench` ([`Bench`]). Each checks its
//! flags before any work, runs and writes its files, and returns an [`Outcome`]; the command
//! files (`commands/repro.rs`, ...) supply the common flags (a type `C` implementing
//! [`Common`]: seed, threads, `--json`), draw the [`boltzkit_repro::Progress`] on stderr
//! ([`ReproProgress`], [`Bars`], with the bars and spinners of [`crate::progress`]) and print
//! the outcome as the summary. This face only declares and re-exports (`common.rs` holds what
//! the commands share).

mod bench;
mod binarize;
mod common;
mod gen;
mod lab;
mod paper;
mod progress;

pub use bench::{AisChoice, Bench};
pub use binarize::BinarizeArgs;
pub use common::{Common, Outcome};
pub use gen::Gen;
pub use lab::Lab;
pub use paper::Paper;
pub use progress::{Bars, ReproProgress};
