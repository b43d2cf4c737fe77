//! `boltzkit demo`: the five systems in about a minute on generated data
//! ([`boltzkit_repro::demo`]): a table on stdout, progress on stderr, `--json` for one object,
//! `-o DIR` for one PNG per row.

use crate::args::CommonArgs;
use crate::report::Summary;
use crate::repro::ReproProgress;
use boltzkit_repro::demo::{self, DemoPlan, DemoRow};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// `boltzkit demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Shorter runs (a few seconds; for CI): fewer samples, epochs and units, the same checks
    #[arg(long)]
    quick: bool,

    /// Also write one PNG per row (learning curves, traces) into this folder
    #[arg(short = 'o', long, value_name = "DIR")]
    output: Option<PathBuf>,

    #[command(flatten)]
    common: CommonArgs,
}

/// What `demo --json` reports: every row with its check, and whether all passed.
#[derive(Serialize)]
struct DemoSummary<'a> {
    quick: bool,
    rows: &'a [DemoRow],
    all_passed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<String>,
}

impl DemoArgs {
    /// Runs every row, prints the table (or the JSON object) and fails when a check fails.
    pub fn run(self) -> anyhow::Result<()> {
        let common = CommonArgs {
            seed: Some(self.common.seed.unwrap_or(demo::SEED)),
            ..self.common.clone()
        };
        let seed = common.init()?;
        if let Some(dir) = &self.output {
            boltzkit::io::check_output_dir(dir)?;
        }
        if !common.quiet {
            eprintln!(
                "boltzkit demo: one small seeded case of each system, checked against an exact \
                 answer or the paper{}",
                if self.quick { " (--quick)" } else { "" }
            );
        }
        let plan = DemoPlan {
            seed,
            quick: self.quick,
        };
        let report = demo::run(&plan, &ReproProgress::new(common.quiet))?;
        if let Some(dir) = &self.output {
            let paths = demo::write_charts(dir, &report)?;
            if !common.quiet {
                eprintln!("wrote {} charts to {}", paths.len(), dir.display());
            }
        }
        if common.json {
            Summary::new("demo", Some(seed))
                .extend(&DemoSummary {
                    quick: self.quick,
                    rows: &report.rows,
                    all_passed: report.all_passed(),
                    output: self.output.as_ref().map(|d| d.display().to_string()),
                })?
                .emit(&common)?;
        } else {
            crate::report::print_stdout(&demo::table(&report))?;
            if !common.quiet {
                crate::report::print_stdout(&demo::legend(&report))?;
            }
        }
        let failed: Vec<&str> = report
            .rows
            .iter()
            .filter(|r| !r.passed)
            .map(|r| r.system)
            .collect();
        anyhow::ensure!(
            failed.is_empty(),
            "the demo's check failed for {}: a bug until shown otherwise (please report it)",
            failed.join(", ")
        );
        Ok(())
    }
}
