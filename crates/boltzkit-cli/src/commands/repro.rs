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

/// The seed `repro popcd` uses unless `--seed` says otherwise.
pub const POPCD_REPRO_SEED: u64 = 2017;

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
    /// The pop-CD paper: log-likelihood curves (Figs. 1-2) and Table 1 (bias / variance)
    #[command(
        long_about = "The experiments of Krause, Fischer & Igel (pop-CD) with 16 hidden \
        units. Curves (first set, Figs. 1-2): CD-1, CD-10, PCD-1, pop-CD-1, pop-CD-10 and PT-10 \
        at η = 0.1 and 0.01 with the paper's iteration counts (bas: Bars & Stripes 4×4, the 32 \
        outcomes of the generative process, full batch, 50,000 iterations; modes: Artificial \
        Modes, batch 500, 10,000; mnist: binarized MNIST, batch 500, 5,000 at η = 0.1 and \
        20,000 at 0.01; caltech: Caltech101 Silhouettes, batch 410, standing in for the \
        unavailable Letters with its counts 10,000 / 30,000), the exact average \
        log-likelihood every 100 iterations, --trials runs each; the mean curves go to \
        curves-<data>-lr<η>.csv and popcd-curves.png (a panel per dataset and rate, like \
        Figs. 1-2). Table 1 (third set): a model trained by CD-1 (η = 0.1, the \
        paper's 10,000 updates, 5,000 on MNIST), then squared bias and variance per \
        parameter of CD-k and pop-CD-k against the exact gradient (`boltzkit lab gradient`). \
        -o DIR also writes popcd.json with every number.\n\n\
        Examples:\n  boltzkit repro popcd --datasets bas,modes -o popcd-out\n  \
        boltzkit repro popcd --part curves --datasets modes --trials 5 --iterations 2000\n  \
        boltzkit repro popcd --part table1 --table1-estimates 5000"
    )]
    Popcd(PopcdReproArgs),
}

/// Which part of `repro popcd` to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PopcdPart {
    /// The log-likelihood curves (first experiment set)
    Curves,
    /// Table 1 (third experiment set)
    Table1,
    /// Both
    All,
}

#[derive(Debug, Args)]
struct PopcdReproArgs {
    /// What to run
    #[arg(long, value_enum, default_value_t = PopcdPart::All)]
    part: PopcdPart,
    /// Datasets, comma-separated: bas, modes, mnist, caltech
    #[arg(long, value_delimiter = ',', default_value = "bas,modes,mnist")]
    datasets: Vec<crate::repro::popcd::PaperData>,
    /// Learning rates of the curves
    #[arg(long, value_delimiter = ',', default_values_t = [0.1f32, 0.01])]
    lrs: Vec<f32>,
    /// Algorithms of the curves (cd-K, pcd-K, popcd-K, popcd-K-loo, sdcp-D-K, pt-M; the one notation of rbm fit --algo)
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "cd-1,cd-10,pcd-1,popcd-1,popcd-10,pt-10"
    )]
    algos: Vec<String>,
    /// Runs per (dataset, rate, algorithm); the curves are their means
    #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u64).range(1..))]
    trials: u64,
    /// Iterations per run instead of the paper's (to shorten)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    iterations: Option<u64>,
    /// Table 1: estimates per estimator (the paper: 50,000)
    #[arg(long, value_name = "N", default_value_t = 50_000)]
    table1_estimates: usize,
    /// Table 1: estimators
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "cd-1,cd-10,popcd-1,popcd-10"
    )]
    table1_estimators: Vec<String>,
    /// Table 1: CD-1 updates of the reference model instead of the paper's
    #[arg(long, value_name = "N")]
    table1_train_iterations: Option<usize>,
    /// Binarized MNIST training rows
    #[arg(
        long,
        value_name = "FILE",
        default_value = "../shared/data/binarized_mnist/binarized_mnist_train.amat.gz"
    )]
    mnist: PathBuf,
    /// Caltech101 Silhouettes training rows
    #[arg(
        long,
        value_name = "FILE",
        default_value = "../shared/data/caltech101_silhouettes/caltech101_silhouettes_28_split1_train.amat.gz"
    )]
    caltech: PathBuf,
    /// Directory for the curve CSVs and popcd.json
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
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
            ReproPaper::Popcd(a) => a.run(),
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

impl PopcdReproArgs {
    fn run(self) -> anyhow::Result<()> {
        use crate::commands::lab::parse_estimators;
        use crate::repro::popcd::{
            curves_csv, curves_figure, curves_markdown, run_curves, summarize, table1_for,
            table1_markdown, CurveSettings,
        };
        let common = CommonArgs {
            seed: Some(self.common.seed.unwrap_or(POPCD_REPRO_SEED)),
            ..self.common.clone()
        };
        let algos = parse_estimators(&self.algos)?;
        let lab_specs = parse_estimators(&self.table1_estimators)?;
        if let Some(lr) = self.lrs.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
            return Err(crate::exit::UsageError::new(format!(
                "--lrs: each rate must be finite and > 0, found {lr}"
            ))
            .into());
        }
        let mut datasets = self.datasets.clone();
        datasets.dedup();
        let seed = common.init()?;
        let mut summary = Summary::new("repro popcd", Some(seed));
        if let Some(dir) = &self.output {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let spin = crate::progress::spinner("loading data", common.quiet);
        let data = datasets
            .iter()
            .map(|&d| {
                Ok((
                    d,
                    d.load(derive_seed(seed, 100), &self.mnist, &self.caltech)?,
                ))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        spin.finish_and_clear();
        let settings = CurveSettings {
            data,
            lrs: self.lrs.clone(),
            algos,
            trials: self.trials as usize,
            iterations: self.iterations.map(|n| n as usize),
            seed,
        };
        let do_curves = self.part != PopcdPart::Table1;
        let do_table = self.part != PopcdPart::Curves;
        let jobs = if do_curves {
            settings.data.len() * settings.lrs.len() * settings.trials * settings.algos.len()
        } else {
            0
        } + if do_table {
            settings.data.len() * lab_specs.len()
        } else {
            0
        };
        let bar = crate::progress::bar(jobs as u64, "runs", common.quiet);
        let mut curves = Vec::new();
        let mut runs = Vec::new();
        if do_curves {
            runs = run_curves(&settings, &bar)?;
            curves = summarize(&settings, &runs);
            if let Some(dir) = &self.output {
                let png = dir.join("popcd-curves.png");
                curves_figure(&png, &curves, &settings.lrs)?;
                summary.set("figure", png.display().to_string());
                for (pd, _) in &settings.data {
                    for &lr in &settings.lrs {
                        let group: Vec<_> = curves
                            .iter()
                            .filter(|c| c.dataset == pd.name() && c.lr == lr)
                            .collect();
                        let path = dir.join(format!("curves-{}-lr{lr}.csv", pd.name()));
                        write_atomic(&path, curves_csv(&group).as_bytes())?;
                    }
                }
            }
        }
        let mut tables = Vec::new();
        let mut table_md = String::new();
        if do_table {
            for (pd, data) in &settings.data {
                let t = table1_for(
                    *pd,
                    data,
                    &lab_specs,
                    self.table1_train_iterations,
                    self.table1_estimates,
                    derive_seed(seed, 200 + pd.id()),
                    &bar,
                )
                .with_context(|| format!("Table 1 on {}", pd.name()))?;
                table_md.push_str(&table1_markdown(*pd, &t));
                table_md.push('\n');
                tables.push(t);
            }
        }
        bar.finish_and_clear();
        let curves_md = if curves.is_empty() {
            String::new()
        } else {
            curves_markdown(&curves)
        };
        summary
            .set("part", format!("{:?}", self.part).to_lowercase())
            .set(
                "datasets",
                datasets.iter().map(|d| d.name()).collect::<Vec<_>>(),
            )
            .set("trials", self.trials)
            .set("iterations", self.iterations);
        if common.json {
            let brief: Vec<serde_json::Value> = curves
                .iter()
                .map(|c| {
                    serde_json::json!({"dataset": c.dataset, "lr": c.lr, "algo": c.algo,
                        "final_mean": c.final_mean, "best_mean": c.best_mean,
                        "best_iteration": c.best_iteration, "drop": c.drop,
                        "guard_stops": c.guard_stops, "diagnostics": c.diagnostics})
                })
                .collect();
            summary.set("curves", brief);
            summary.set("table1", serde_json::to_value(&tables)?);
        } else if !common.quiet {
            println!("{curves_md}\n{table_md}");
        }
        if let Some(dir) = &self.output {
            let body = serde_json::to_string_pretty(&serde_json::json!({
                "seed": seed, "trials": self.trials, "iterations": self.iterations,
                "lrs": self.lrs, "algos": self.algos,
                "curves": curves, "table1": tables,
                "runs": runs.iter().map(|r| serde_json::json!({
                    "dataset": settings.data[r.data].0.name(), "lr": settings.lrs[r.lr],
                    "algo": settings.algos[r.algo].to_string(), "trial": r.trial,
                    "final_ll": r.ll.last(), "diverged": r.diverged, "wall_s": r.wall_s,
                })).collect::<Vec<_>>(),
                "curves_markdown": curves_md, "table1_markdown": table_md,
            }))?;
            write_atomic(&dir.join("popcd.json"), body.as_bytes())?;
            summary.set("output", dir.display().to_string());
        }
        summary.emit(&common)
    }
}
