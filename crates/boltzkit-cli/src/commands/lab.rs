//! `boltzkit lab`: experiments on the estimators themselves. The flags and the work are
//! `crate::repro::Lab`'s; this file adds the common flags, progress and printing.

use crate::args::CommonArgs;
use crate::repro::Bars;
use crate::repro::Lab;
use clap::Args;

/// `boltzkit lab <verb>`.
#[derive(Debug, Args)]
pub struct LabArgs {
    #[command(subcommand)]
    verb: Lab<CommonArgs>,
}

impl LabArgs {
    /// Runs the chosen verb.
    pub fn run(self) -> anyhow::Result<()> {
        let common = self.verb.common().clone();
        let mut stdout = crate::report::StdoutLines::default();
        let show = &mut |table: &str| {
            if !common.quiet {
                stdout.print(table);
            }
        };
        let outcome = self.verb.run(&Bars::new(common.quiet), common.json, show)?;
        stdout.finish()?;
        crate::report::emit(outcome, &common)
    }
}
