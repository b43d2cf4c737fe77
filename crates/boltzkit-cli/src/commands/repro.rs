//! `boltzkit repro <paper>`: regenerate a paper's experiments from scratch.

use crate::args::CommonArgs;
use crate::fsll_run::{fit_with_progress, kl_to_truth};
use crate::report::Summary;
use crate::repro::fsll::{markdown, run_row, Table1Row};
use anyhow::Context;
use boltzkit::data::synth::BayesNet;
use boltzkit::fsll::{FsllParams, TransformPath};
use boltzkit::io::write_atomic;
use boltzkit::rng::{derive_seed, rng_from_seed};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::Instant;

/// The seed `repro fsll` uses unless `--seed` says otherwise.
pub const FSLL_REPRO_SEED: u64 = 20_211;

/// `boltzkit repro <paper>`.
#[derive(Debug, Args)]
pub struct ReproArgs {
    #[command(subcommand)]
    paper: ReproPaper,
}

#[derive(Debug, Subcommand)]
enum ReproPaper {
    /// Table 1 of the FSLL paper: FL on Ising5x4S/L, BN20-37S/L, BN20-54S/L
    #[command(
        long_about = "Table 1 of Takabatake & Akaho (FSLL): generates the six \
        datasets of Sec. 3.4 (S = 1,000 samples, L = 100,000) from fixed, recorded seeds, learns \
        each --trials times (one sample seed per trial) and prints the FL columns (medians) as \
        Markdown next to the paper's values; -o writes every trial as JSON. --scale-vars N adds \
        a run on an N-variable Bayesian network (3 parents, 100,000 samples) with time and peak \
        memory.\n\n\
        Examples:\n  boltzkit repro fsll -o fsll-table1.json\n  \
        boltzkit repro fsll --path full --trials 3\n  boltzkit repro fsll --only none --scale-vars 28"
    )]
    Fsll(FsllReproArgs),
}

#[derive(Debug, Args)]
struct FsllReproArgs {
    /// Trials (sample seeds) per dataset; the table shows medians
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    trials: u64,
    /// Update path of the learner (auto = XOR for binary data)
    #[arg(long, default_value = "auto", value_parser = ["auto", "xor", "full"])]
    path: String,
    /// Datasets to run, comma-separated names (e.g. Ising5x4S,BN20-37L), `all` or `none`
    #[arg(long, default_value = "all", value_delimiter = ',')]
    only: Vec<String>,
    /// Also learn an N-variable Bayesian network (3 parents, 100,000 samples): scale test
    #[arg(long, value_name = "N")]
    scale_vars: Option<usize>,
    /// Write all results (every trial, medians, the paper's values, seeds) as JSON
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

impl ReproArgs {
    /// Runs the chosen reproduction.
    pub fn run(self) -> anyhow::Result<()> {
        match self.paper {
            ReproPaper::Fsll(a) => a.run(),
        }
    }
}

impl FsllReproArgs {
    fn run(self) -> anyhow::Result<()> {
        let common = CommonArgs {
            seed: Some(self.common.seed.unwrap_or(FSLL_REPRO_SEED)),
            ..self.common.clone()
        };
        let seed = common.init()?;
        let mut summary = Summary::new("repro fsll", Some(seed));
        let path = match self.path.as_str() {
            "xor" => TransformPath::Xor,
            "full" => TransformPath::Full,
            _ => TransformPath::Auto,
        };
        let params = FsllParams {
            path,
            ..FsllParams::default()
        };
        let rows: Vec<Table1Row> = Table1Row::ALL
            .into_iter()
            .filter(|r| {
                self.only
                    .iter()
                    .any(|o| o.eq_ignore_ascii_case("all") || o.eq_ignore_ascii_case(&r.name()))
            })
            .collect();
        for o in &self.only {
            let known = ["all", "none"].contains(&o.to_ascii_lowercase().as_str())
                || Table1Row::ALL
                    .iter()
                    .any(|r| r.name().eq_ignore_ascii_case(o));
            if !known {
                return Err(crate::exit::UsageError::new(format!(
                    "--only: unknown dataset `{o}`; expected names like Ising5x4S, BN20-37L, or all/none"
                ))
                .into());
            }
        }
        let mut results = Vec::new();
        for row in rows {
            results.push(run_row(
                row,
                seed,
                self.trials as usize,
                &params,
                common.quiet,
            )?);
        }
        summary
            .set("trials", self.trials)
            .set("path", self.path.clone());
        if !results.is_empty() {
            let table = markdown(&results);
            if common.json {
                summary.set("results", serde_json::to_value(&results)?);
                summary.set("markdown", table);
            } else {
                println!("{table}");
            }
        }
        let scale = self
            .scale_vars
            .map(|n| scale_run(n, seed, &params, common.quiet))
            .transpose()?;
        if let (Some(v), true) = (&scale, common.json) {
            summary.set("scale", v.clone());
        }
        if let Some(out) = &self.output {
            let body = serde_json::to_string_pretty(&serde_json::json!({
                "seed": seed,
                "trials": self.trials,
                "path": self.path,
                "results": results,
                "scale": scale,
            }))?;
            write_atomic(out, body.as_bytes())?;
            summary.set("output", out.display().to_string());
        }
        summary.emit(&common)
    }
}

/// Learns an `n`-variable random Bayesian network (3 parents, 100,000 samples); reports time,
/// size and peak memory (VmHWM), and KL(p*‖p_θ) when n ≤ 28.
fn scale_run(
    n: usize,
    seed: u64,
    params: &FsllParams,
    quiet: bool,
) -> anyhow::Result<serde_json::Value> {
    let mut rng = rng_from_seed(derive_seed(seed, 5000 + n as u64));
    let net = BayesNet::random(n, 3, &mut rng)?;
    let data = net.sample(100_000, &mut rng)?;
    let start = Instant::now();
    let fit = fit_with_progress(&data, params, quiet)
        .with_context(|| format!("learning the {n}-variable network"))?;
    let learn_s = start.elapsed().as_secs_f64();
    let peak_during_fit = peak_rss_gib();
    let kl_truth = if n <= 28 {
        let truth = net.distribution()?;
        Some(kl_to_truth(&fit.model, truth.probs())?)
    } else {
        None
    };
    let v = serde_json::json!({
        "vars": n,
        "states": fit.model.layout().n_states(),
        "samples": data.n_samples(),
        "edges": net.n_edges(),
        "learn_s": learn_s,
        "iterations": fit.record.iterations,
        "n_basis": fit.model.n_basis(),
        "kl_data": fit.record.kl_data,
        "kl_truth": kl_truth,
        "peak_rss_gib_after_fit": peak_during_fit,
        "peak_rss_gib_total": peak_rss_gib(),
    });
    if !quiet {
        eprintln!("scale run: {v}");
    }
    Ok(v)
}

/// Peak resident memory of this process in GiB (Linux `VmHWM`), when available.
fn peak_rss_gib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / (1024.0 * 1024.0))
}
