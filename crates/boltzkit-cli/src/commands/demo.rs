//! `boltzkit demo`: the main jobs on built-in (generated) data, in seconds.

use crate::args::CommonArgs;
use crate::report::Summary;
use crate::repro::ReproProgress;
use boltzkit::fsll::FsllParams;
use boltzkit_repro::fsll::{markdown, run_row, Table1Row};
use clap::Args;

/// `boltzkit demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    common: CommonArgs,
}

impl DemoArgs {
    /// Learns FSLL models on Ising5x4S, Ising5x4L and BN20-37S (one trial each) and prints the
    /// Table-1 figures next to the paper's.
    pub fn run(self) -> anyhow::Result<()> {
        let common = CommonArgs {
            seed: Some(self.common.seed.unwrap_or(1)),
            ..self.common.clone()
        };
        let seed = common.init()?;
        let mut summary = Summary::new("demo", Some(seed));
        if !common.quiet {
            eprintln!(
                "FSLL (full-span log-linear model, greedy MDL learner) on generated data with known \
                 truth:\nIsing5x4 (20 spins, J = 1/2) with 1,000 and 100,000 samples, and a random \
                 20-node Bayesian network (37 edges) with 1,000 samples.\n"
            );
        }
        let rows = [Table1Row::ALL[0], Table1Row::ALL[1], Table1Row::ALL[2]];
        let mut results = Vec::new();
        let progress = ReproProgress::new(common.quiet);
        for row in rows {
            results.push(run_row(row, seed, 1, &FsllParams::default(), &progress)?);
        }
        let table = markdown(&results);
        if common.json {
            summary.set("fsll", serde_json::to_value(&results)?);
            summary.set("markdown", table);
        } else if !common.quiet {
            println!("{table}");
            eprintln!(
                "KL(p*||p_θ) is the distance from the true distribution (lower is better); the \
                 paper's times are Java on a 4 GHz i7.\nNext: `boltzkit repro fsll` for all of Table 1, \
                 `boltzkit fsll fit --help` to learn your own data."
            );
        }
        summary.emit(&common)
    }
}
