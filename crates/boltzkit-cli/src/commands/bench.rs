//! `boltzkit bench`: wall-clock timings of the library's hot paths on real shapes (the boltzkit
//! side of BENCHMARKS.md's comparisons). The flags and the timings are
//! `crate::repro::Bench`'s; this file adds the common and AIS flags, progress and
//! printing.

use crate::args::{AisFlags, CommonArgs};
use crate::repro::Bars;
use crate::repro::Bench;
use clap::Args;

/// `boltzkit bench <verb>`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    verb: Bench<CommonArgs, AisFlags>,
}

impl BenchArgs {
    /// Runs the chosen verb.
    pub fn run(self) -> anyhow::Result<()> {
        let common = self.verb.common().clone();
        let outcome = self.verb.run(&Bars::new(common.quiet))?;
        crate::report::emit(outcome, &common)
    }
}
