//! `boltzkit gen`: synthetic datasets and their exact distributions. The flags and the work
//! are `crate::repro::Gen`'s; this file adds the common flags, progress and printing.

use crate::args::CommonArgs;
use crate::repro::Bars;
use crate::repro::Gen;
use clap::Args;

/// `boltzkit gen <verb>`.
#[derive(Debug, Args)]
pub struct GenArgs {
    #[command(subcommand)]
    verb: Gen<CommonArgs>,
}

impl GenArgs {
    /// Runs the chosen `gen` verb.
    pub fn run(self) -> anyhow::Result<()> {
        let common = self.verb.common().clone();
        let outcome = self.verb.run(&Bars::new(common.quiet))?;
        crate::report::emit(outcome, &common)
    }
}
