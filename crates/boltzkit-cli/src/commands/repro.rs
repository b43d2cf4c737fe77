//! `boltzkit repro <paper>`: regenerate a paper's experiments from scratch.
//!
//! The flags are `crate::repro::Paper`'s, the plans and the writers `boltzkit_repro`'s (one
//! module per paper). This file adds the common flags, runs the plan with a progress display
//! on stderr and prints: the tables on stdout, the `--json` summary as the serialized result.

use crate::args::CommonArgs;
use crate::repro::Paper;
use crate::repro::ReproProgress;
use clap::Args;

/// `boltzkit repro <paper>`.
#[derive(Debug, Args)]
pub struct ReproArgs {
    #[command(subcommand)]
    paper: Paper<CommonArgs>,
}

impl ReproArgs {
    /// Runs the chosen reproduction with the paper's seed unless `--seed` is given.
    pub fn run(self) -> anyhow::Result<()> {
        let (flags, mut common) = self.paper.split();
        let seed = *common.seed.get_or_insert(flags.default_seed());
        let job = flags.plan(seed)?;
        let seed = common.init()?;
        let progress = ReproProgress::new(common.quiet);
        let mut stdout = crate::report::StdoutLines::default();
        let outcome = job.run(seed, &progress, &mut |table| {
            // with --json the tables are in the summary; --quiet silences stderr only
            if !common.json && !table.is_empty() {
                stdout.print(table);
            }
        })?;
        drop(progress);
        stdout.finish()?;
        crate::report::emit(outcome, &common)
    }
}
