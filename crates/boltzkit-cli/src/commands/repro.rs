//! `boltzkit repro <paper>`: regenerate a paper's experiments from scratch.
//!
//! The flags, the plans and the writers are `boltzkit_repro::cli`'s (one module per paper in
//! `boltzkit_repro`). This file adds the common flags, runs the plan with a progress display
//! on stderr and prints: the tables on stdout, the `--json` summary as the serialized result.

use crate::args::CommonArgs;
use crate::report::Summary;
use crate::repro::ReproProgress;
use boltzkit_repro::cli::Paper;
use clap::Args;
use serde_json::Value;

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
        let mut summary = Summary::new(format!("repro {}", job.name()), Some(seed));
        let progress = ReproProgress::new(common.quiet);
        let outcome = job.run(seed, &progress, &mut |table| {
            // with --json the tables are in the summary; --quiet silences stderr only
            if !common.json && !table.is_empty() {
                println!("{table}");
            }
        })?;
        drop(progress);
        if let Some(report) = outcome.report {
            set_report(&mut summary, report, &common)?;
        }
        for (key, value) in outcome.fields {
            summary.set(key, value);
        }
        summary.emit(&common)?;
        match outcome.failure {
            Some(why) => anyhow::bail!(why),
            None => Ok(()),
        }
    }
}

/// Sets every field of the serialized `report` in `summary`: all of them with `--json`; in the
/// human form only the short ones (numbers, strings, lists of them), not the tables, which go
/// to stdout.
fn set_report(summary: &mut Summary, report: Value, common: &CommonArgs) -> anyhow::Result<()> {
    let Value::Object(fields) = report else {
        anyhow::bail!("a report must serialize to a JSON object");
    };
    let short = |v: &Value| match v {
        Value::Array(items) => items.iter().all(|x| !(x.is_array() || x.is_object())),
        Value::Object(_) => false,
        _ => true,
    };
    for (k, v) in fields {
        if common.json || (short(&v) && !k.ends_with("markdown")) {
            summary.set(k, v);
        }
    }
    Ok(())
}
