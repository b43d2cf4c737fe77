//! Stage progress of the `repro`-crate work on stderr: [`boltzkit_repro::cli::progress`].

pub use boltzkit_repro::cli::progress::{Bars, ReproProgress};
