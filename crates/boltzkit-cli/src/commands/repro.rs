//! `boltzkit repro <paper>`: regenerate a paper's experiments from scratch.

use crate::args::CommonArgs;
use crate::fsll_run::{fit_with_progress, kl_to_truth};
use crate::report::Summary;
use crate::repro::fsll::{markdown, markdown_bm, run_bm_row, run_row, BmKind, Table1Row};
use anyhow::Context;
use boltzkit::data::synth::BayesNet;
use boltzkit::fsll::{FsllParams, TransformPath};
use boltzkit::fvbm::exact;
use boltzkit::io::write_atomic;
use boltzkit::rng::{derive_seed, rng_from_seed};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::Instant;

/// The seed `repro fsll` uses unless `--seed` says otherwise.
pub const FSLL_REPRO_SEED: u64 = 20_211;

/// The seed `repro bslm` uses unless `--seed` says otherwise.
pub const BSLM_REPRO_SEED: u64 = 2016;

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

    /// Sec. 5 of Nguyen & Wood (BSLM): log-PL traces and MSE for d = 5, 10, 15, 20
    #[command(
        long_about = "The simulation of Sec. 5 of Nguyen & Wood (BSLM for the MPLE of \
        FVBMs): for each d (5, 10, 15, 20) and repetition, a truth with b and upper M drawn \
        from N(0, 0.5), n = 16,000 exact samples, BSLM started from a point drawn the same way \
        and run to τ = 1e-5. Checks that every log-PL trace is monotone, flags the runs where \
        the MPLE does not exist, and prints the average MSE per d next to the paper's values \
        (with the mean sandwich variance, the MSE one should expect). -o DIR writes every trace \
        as CSV (bslm-d{d}-rep{r}.csv), all results as bslm.json and the paper's Figure 1 as \
        bslm-figure1.png (log-PL and log10 gain per sweep, a line per repetition, a column per \
        d).\n\n\
        Examples:\n  boltzkit repro bslm -o bslm-out\n  boltzkit repro bslm --reps 1 --dims 5,10"
    )]
    Bslm(BslmReproArgs),

    /// Sec. 4 of Upadhya & Sastry (S-DCP): ATLL curves of CD, PCD, CG, S-DCP, CS-DCP
    #[command(
        long_about = "The experiments of Sec. 4 of Upadhya & Sastry (S-DCP and CS-DCP \
        against CD, PCD and the centered gradient). --small: bars & stripes 3×3 and shifting \
        bar 9/1, 4 hidden units, full batch, CD-12, PCD-12, CG (K = 12), S-DCP and CS-DCP \
        (d = 3, K′ = 4), η ∈ {0.3, 0.5}, 25 trials of 50,000 epochs, exact ATLL every \
        --eval-every epochs (Figs. 1-2). --mnist: binarized MNIST (--data-dir), 500 hidden, \
        batch 200, CD-24, CG (K = 24), S-DCP and CS-DCP (d = 6, K′ = 4), η = 0.01, test ATLL \
        by AIS (--ais-chains, --ais-steps linear steps) every --eval-every epochs and at the \
        end by AIS on the standard schedule beside reverse AIS (Fig. 3). Every trial starts \
        all algorithms from the same initial model. Prints the final-ATLL table (mean ± sd \
        over trials, the epoch at which the mean reaches 90% of its rise); -o DIR writes the \
        mean ± sd curves (CSV, PNG), the table and, for MNIST, the models.\n\n\
        Examples:\n  boltzkit repro sdcp --small --epochs 3000 -o sdcp-out\n  \
        boltzkit repro sdcp --mnist --epochs 20 --trials 1 --algos cd,csdcp -o sdcp-mnist"
    )]
    Sdcp(crate::repro::sdcp::SdcpReproArgs),

    /// Figures 1-2 of Ping, Liu & Ihler (Frank-Wolfe infinite RBM) on Caltech101 and MNIST
    #[command(
        long_about = "Figures 1 and 2 of Ping, Liu & Ihler, Learning Infinite RBMs with \
        Frank-Wolfe: on Caltech101 Silhouettes (split1) and MNIST (binarized at 127, 10,000 \
        training images held out for validation), Frank-Wolfe grows an RBM to --max-units with \
        an AIS test log-likelihood and the train/validation gap every --eval-every units; at \
        each of --sizes, CD-k from --restarts random starts (best on validation) and CD-k \
        started from the FW model are trained and scored by AIS, and a logistic regression on \
        E[h | v] gives the test error. Writes CSV and JSON into -o DIR.\n\n\
        Examples:\n  boltzkit repro frank-wolfe --datasets caltech -o fw-out\n  \
        boltzkit repro frank-wolfe --max-units 100 --sizes 50,100 --epochs 20 --ais-steps 1000"
    )]
    FrankWolfe(crate::repro::frank_wolfe::FwReproArgs),
}

#[derive(Debug, Args)]
struct BslmReproArgs {
    /// Repetitions per d
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    reps: u64,
    /// Dimensions d, comma-separated
    #[arg(long, value_delimiter = ',', default_values_t = [5usize, 10, 15, 20])]
    dims: Vec<usize>,
    /// Observations per data set
    #[arg(long, value_name = "N", default_value_t = 16_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    samples: u64,
    /// Stopping tolerance τ on the log-PL gain per sweep
    #[arg(long, default_value_t = 1e-5)]
    tau: f64,
    /// Directory for the per-run trace CSVs, bslm.json and bslm-figure1.png
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
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
    /// Also fit the Boltzmann-machine baselines on the same samples: `di` (BM-DI, exact
    /// maximum likelihood), `pcd` (BM-PCD: rate 0.01, 100 chains, 10,000 updates), or both
    #[arg(long, value_delimiter = ',', default_value = "none",
          value_parser = ["none", "di", "pcd"])]
    bm: Vec<String>,
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
            ReproPaper::Bslm(a) => a.run(),
            ReproPaper::Sdcp(a) => a.run(),
            ReproPaper::FrankWolfe(a) => a.run(),
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
        let kinds: Vec<BmKind> = [("di", BmKind::Di), ("pcd", BmKind::Pcd)]
            .into_iter()
            .filter(|(k, _)| self.bm.iter().any(|b| b == k))
            .map(|(_, kind)| kind)
            .collect();
        let mut bm_results = Vec::new();
        for &row in &rows {
            for &kind in &kinds {
                bm_results.push(run_bm_row(
                    row,
                    kind,
                    seed,
                    self.trials as usize,
                    common.quiet,
                )?);
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
        if !bm_results.is_empty() {
            let table = markdown_bm(&bm_results);
            if common.json {
                summary.set("bm_results", serde_json::to_value(&bm_results)?);
                summary.set("bm_markdown", table);
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
                "bm_results": bm_results,
                "scale": scale,
            }))?;
            write_atomic(out, body.as_bytes())?;
            summary.set("output", out.display().to_string());
        }
        summary.emit(&common)
    }
}

impl BslmReproArgs {
    fn run(self) -> anyhow::Result<()> {
        use crate::repro::bslm;
        let common = CommonArgs {
            seed: Some(self.common.seed.unwrap_or(BSLM_REPRO_SEED)),
            ..self.common.clone()
        };
        let seed = common.init()?;
        let mut summary = Summary::new("repro bslm", Some(seed));
        if let Some(&d) = self
            .dims
            .iter()
            .find(|&&d| !(2..=exact::MAX_EXACT_UNITS).contains(&d))
        {
            return Err(crate::exit::UsageError::new(format!(
                "--dims: each d must lie in 2..={} (exact sampling), found {d}",
                exact::MAX_EXACT_UNITS
            ))
            .into());
        }
        if !(self.tau.is_finite() && self.tau >= 0.0) {
            return Err(crate::exit::UsageError::new("--tau must be a finite number ≥ 0").into());
        }
        let mut dims = self.dims.clone();
        dims.sort_unstable();
        dims.dedup();
        let n = usize::try_from(self.samples)?;
        let reps = self.reps as usize;
        if let Some(dir) = &self.output {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let bar = crate::progress::bar((dims.len() * reps) as u64, "runs", common.quiet);
        let mut runs = Vec::new();
        for &d in &dims {
            for rep in 0..reps {
                bar.set_message(format!("d={d} rep {rep}"));
                let run = bslm::run_one(d, rep, n, self.tau, seed)
                    .with_context(|| format!("d = {d}, repetition {rep}"))?;
                if !common.quiet {
                    bar.suspend(|| {
                        eprintln!(
                            "d={d:>2} rep={rep} sweeps={:>6} stop={:?} monotone={} mple_exists={} mse={:.3e}{}",
                            run.sweeps,
                            run.stop,
                            run.monotone,
                            run.mple_exists,
                            run.mse,
                            if run.mple_exists {
                                ""
                            } else {
                                "  (the MPLE does not exist for this data set: the estimate drifts)"
                            }
                        )
                    });
                }
                if let Some(dir) = &self.output {
                    let path = dir.join(format!("bslm-d{d}-rep{rep}.csv"));
                    write_atomic(&path, bslm::trace_csv(&run).as_bytes())?;
                }
                runs.push(run);
                bar.inc(1);
            }
        }
        bar.finish_and_clear();
        let rows = bslm::rows(&runs);
        let table = bslm::markdown(&rows);
        let all_monotone = runs.iter().all(|r| r.monotone);
        summary
            .set("reps", reps)
            .set("dims", dims.clone())
            .set("samples", n)
            .set("tau", self.tau)
            .set("all_monotone", all_monotone)
            .set(
                "mple_missing",
                runs.iter().filter(|r| !r.mple_exists).count(),
            )
            .set(
                "plot",
                self.output
                    .as_ref()
                    .map(|dir| dir.join("bslm-figure1.png").display().to_string()),
            );
        if common.json {
            summary.set("rows", serde_json::to_value(&rows)?);
            summary.set("markdown", table);
        } else if !common.quiet {
            println!("{table}");
        }
        if let Some(dir) = &self.output {
            let runs_json: Vec<serde_json::Value> = runs
                .iter()
                .map(|r| {
                    serde_json::json!({"d": r.d, "rep": r.rep, "seed": r.seed,
                        "sweeps": r.sweeps, "stop": r.stop, "monotone": r.monotone,
                        "mple_exists": r.mple_exists, "mse": r.mse,
                        "mean_se2": r.mean_se2, "seconds": r.seconds})
                })
                .collect();
            let body = serde_json::to_string_pretty(&serde_json::json!({
                "seed": seed, "reps": reps, "dims": dims, "samples": n, "tau": self.tau,
                "rows": rows, "runs": runs_json,
            }))?;
            write_atomic(&dir.join("bslm.json"), body.as_bytes())?;
            bslm::write_figure1(&dir.join("bslm-figure1.png"), &runs)?;
            summary.set("output", dir.display().to_string());
        }
        summary.emit(&common)?;
        if !all_monotone {
            anyhow::bail!("a log-pseudo-likelihood trace decreased (see the table)");
        }
        Ok(())
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
