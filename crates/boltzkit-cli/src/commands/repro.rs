//! `boltzkit repro <paper>`: regenerate a paper's experiments from scratch.
//!
//! The protocols live in `boltzkit_repro`, one module per paper (plan → run → result →
//! writers). This file parses the flags into a plan, finds the data, runs the plan with a
//! progress display on stderr, calls the writers and prints: the tables on stdout, the
//! `--json` summary as the serialized result.

use crate::args::CommonArgs;
use crate::report::Summary;
use crate::repro::ReproProgress;
use anyhow::Context;
use boltzkit::fsll::TransformPath;
use boltzkit::io::write_atomic;
use boltzkit_repro::data::{find_data_dir, require_file};
use boltzkit_repro::popcd::{PaperData, PopcdPart as Part};
use boltzkit_repro::{bslm, frank_wolfe, fsll, popcd, sdcp};
use clap::{Args, Subcommand};
use serde::Serialize;
use std::path::{Path, PathBuf};

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
    Sdcp(SdcpReproArgs),

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
    FrankWolfe(FwReproArgs),
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
    datasets: Vec<PaperData>,
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
    /// Binarized MNIST training rows [default: binarized_mnist/binarized_mnist_train.amat.gz
    /// in the data folder]
    #[arg(long, value_name = "FILE")]
    mnist: Option<PathBuf>,
    /// Caltech101 Silhouettes training rows [default:
    /// caltech101_silhouettes/caltech101_silhouettes_28_split1_train.amat.gz in the data folder]
    #[arg(long, value_name = "FILE")]
    caltech: Option<PathBuf>,
    /// The data folder [default: shared/data beside the repository, searched upward from the
    /// executable and from the working directory; BOLTZKIT_DATA_DIR overrides]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
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

/// `boltzkit repro sdcp`.
#[derive(Debug, Args)]
pub struct SdcpReproArgs {
    /// The small experiments: bars & stripes 3×3 and shifting bar 9/1 (Figs. 1-2)
    #[arg(long)]
    small: bool,
    /// The MNIST experiment (Fig. 3)
    #[arg(long)]
    mnist: bool,
    /// Epochs per run [default: the paper's 50,000 (small) or 200 (MNIST)]
    #[arg(long, value_name = "N")]
    epochs: Option<usize>,
    /// Trials per setting [default: the paper's 25 (small) or 10 (MNIST)]
    #[arg(long, value_name = "N")]
    trials: Option<usize>,
    /// Learning rates, comma-separated [default: 0.3,0.5 (small) or 0.01 (MNIST)]
    #[arg(long, value_name = "X", value_delimiter = ',')]
    lr: Vec<f32>,
    /// Algorithms, comma-separated [default: all five (small) or cd,cg,sdcp,csdcp (MNIST)]
    #[arg(long, value_name = "NAME", value_delimiter = ',',
          value_parser = sdcp::ALGORITHMS)]
    algos: Vec<String>,
    /// ATLL every N epochs [default: 10 (small) or 10 (MNIST)]
    #[arg(long, value_name = "N")]
    eval_every: Option<usize>,
    /// MNIST: the folder holding binarized_mnist/ [default: shared/data beside the repository,
    /// searched upward from the executable and from the working directory; BOLTZKIT_DATA_DIR
    /// overrides]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// MNIST: AIS chains of the monitor and of the final estimates
    #[arg(long, value_name = "N", default_value_t = 100)]
    ais_chains: usize,
    /// MNIST: linear AIS steps of the monitor (the paper: 10,000)
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    ais_steps: usize,
    /// Directory for the curves (CSV, PNG), the final table and (MNIST) the models
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

/// `boltzkit repro frank-wolfe` flags.
#[derive(Debug, Args)]
pub struct FwReproArgs {
    /// Datasets, comma-separated: caltech, mnist
    #[arg(long, value_delimiter = ',', default_values_t = ["caltech".to_string(), "mnist".to_string()],
          value_parser = ["caltech", "mnist"])]
    datasets: Vec<String>,
    /// Directory holding caltech101_silhouettes/ and mnist/ [default: shared/data beside the
    /// repository, searched upward from the executable and from the working directory;
    /// BOLTZKIT_DATA_DIR overrides]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// T: Frank-Wolfe grows the model up to this many units
    #[arg(long, value_name = "T", default_value_t = 700)]
    max_units: usize,
    /// Sizes at which CD runs (random and FW-initialized), comma-separated (≤ --max-units)
    #[arg(long, value_delimiter = ',',
          default_values_t = [20usize, 50, 100, 200, 300, 400, 500, 600, 700])]
    sizes: Vec<usize>,
    /// CD epochs [default: 400 on Caltech, 200 on MNIST, as the paper]
    #[arg(long, value_name = "N")]
    epochs: Option<usize>,
    /// Random initializations of CD per size (the best on validation is kept)
    #[arg(long, value_name = "N", default_value_t = 5)]
    restarts: usize,
    /// CD-k's k
    #[arg(long, value_name = "N", default_value_t = 10)]
    k: usize,
    /// CD learning rates, comma-separated: every CD start (each random one and the FW one) is
    /// trained at each and the rate best on validation is kept, as the paper selects its fixed
    /// rate from {0.05, 0.02, 0.01, 0.005} [default: 0.05 alone, to keep runs short]
    #[arg(long = "lrs", alias = "lr", value_name = "X,..", value_delimiter = ',',
          default_values_t = [0.05])]
    lrs: Vec<f64>,
    /// CD mini-batch size
    #[arg(long, value_name = "N", default_value_t = 100)]
    batch_size: usize,
    /// CD early stopping, as the paper's protocol: every --cd-eval-every epochs the train −
    /// validation gap is taken and a CD run ends once it has grown this many nats above its
    /// minimum (off by default: every run takes --epochs)
    #[arg(long, value_name = "X")]
    cd_gap_tol: Option<f64>,
    /// Epochs between the gap checks of --cd-gap-tol
    #[arg(long, value_name = "N", default_value_t = 5)]
    cd_eval_every: usize,
    /// FW: λ (Eqs. 6, 9)
    #[arg(long, value_name = "X", default_value_t = 0.1)]
    lambda: f64,
    /// FW: η of the bias update (Eq. 10)
    #[arg(long, value_name = "X", default_value_t = 0.5)]
    bias_lr: f64,
    /// FW: persistent chains S
    #[arg(long, value_name = "S", default_value_t = 2000)]
    samples: usize,
    /// FW: Gibbs steps per draw
    #[arg(long, value_name = "N", default_value_t = 3)]
    gibbs_steps: usize,
    /// FW: L-BFGS iterations per subproblem
    #[arg(long, value_name = "N", default_value_t = 50)]
    lbfgs_iters: usize,
    /// FW: starts per subproblem (one small random, the others data-row templates)
    #[arg(long, value_name = "N", default_value_t = 1)]
    starts: usize,
    /// FW: most bias steps per iteration
    #[arg(long, value_name = "N", default_value_t = 20)]
    bias_steps: usize,
    /// FW: the gap tolerance (nats) of the size selection
    #[arg(long, value_name = "X", default_value_t = 5.0)]
    gap_tol: f64,
    /// FW: units between test log-likelihood / gap evaluations
    #[arg(long, value_name = "N", default_value_t = 20)]
    eval_every: usize,
    /// AIS chains (the paper: 500)
    #[arg(long, value_name = "N", default_value_t = 100)]
    ais_chains: usize,
    /// AIS steps, linear schedule; 0: the standard 14,500-step schedule (the paper's)
    #[arg(long, value_name = "N", default_value_t = 0)]
    ais_steps: usize,
    /// Skip the classification (Figure 2)
    #[arg(long)]
    no_classify: bool,
    /// Only redraw the PNGs from the JSON results already in -o DIR (no training)
    #[arg(long)]
    replot: bool,
    /// Output directory (CSV, JSON)
    #[arg(short, long, value_name = "DIR", default_value = "fw-repro")]
    output: PathBuf,
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

/// `common` with `default` as the seed unless `--seed` was given.
fn with_seed(common: &CommonArgs, default: u64) -> CommonArgs {
    CommonArgs {
        seed: Some(common.seed.unwrap_or(default)),
        ..common.clone()
    }
}

/// Sets every field of the serialized `report` in `summary`: all of them with `--json`; in the
/// human form only the short ones (numbers, strings, lists of them), not the tables, which go
/// to stdout.
fn set_report<T: Serialize>(
    summary: &mut Summary,
    report: &T,
    common: &CommonArgs,
) -> anyhow::Result<()> {
    use serde_json::Value;
    let Value::Object(fields) = serde_json::to_value(report)? else {
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

/// Prints a table on stdout unless `--json` (where it is in the summary); `--quiet` silences
/// stderr only.
fn print_table(table: &str, common: &CommonArgs) {
    if !common.json && !table.is_empty() {
        println!("{table}");
    }
}

/// Creates the output folder `dir`.
fn create_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the output folder {}", dir.display()))
}

impl FsllReproArgs {
    fn run(self) -> anyhow::Result<()> {
        let common = with_seed(&self.common, fsll::SEED);
        let plan = fsll::FsllPlan {
            seed: common.seed.unwrap_or(fsll::SEED),
            trials: self.trials as usize,
            path: match self.path.as_str() {
                "xor" => TransformPath::Xor,
                "full" => TransformPath::Full,
                _ => TransformPath::Auto,
            },
            only: self.only.clone(),
            bm: [("di", fsll::BmKind::Di), ("pcd", fsll::BmKind::Pcd)]
                .into_iter()
                .filter(|(k, _)| self.bm.iter().any(|b| b == k))
                .map(|(_, kind)| kind)
                .collect(),
            scale_vars: self.scale_vars,
        };
        plan.check()?;
        let seed = common.init()?;
        let mut summary = Summary::new("repro fsll", Some(seed));
        let report = fsll::run(&plan, &ReproProgress::new(common.quiet))?;
        set_report(&mut summary, &report, &common)?;
        print_table(report.markdown.as_deref().unwrap_or(""), &common);
        print_table(report.bm_markdown.as_deref().unwrap_or(""), &common);
        if let Some(out) = &self.output {
            write_atomic(out, fsll::results_json(&report, seed)?.as_bytes())?;
            summary.set("output", out.display().to_string());
        }
        summary.emit(&common)
    }
}

impl BslmReproArgs {
    fn run(self) -> anyhow::Result<()> {
        let common = with_seed(&self.common, bslm::SEED);
        let plan = bslm::BslmPlan {
            seed: common.seed.unwrap_or(bslm::SEED),
            reps: self.reps as usize,
            dims: self.dims.clone(),
            samples: usize::try_from(self.samples)?,
            tau: self.tau,
        };
        plan.check()?;
        let seed = common.init()?;
        let mut summary = Summary::new("repro bslm", Some(seed));
        if let Some(dir) = &self.output {
            create_dir(dir)?;
        }
        let report = bslm::run(&plan, &ReproProgress::new(common.quiet))?;
        set_report(&mut summary, &report, &common)?;
        summary.set(
            "plot",
            self.output
                .as_ref()
                .map(|dir| dir.join("bslm-figure1.png").display().to_string()),
        );
        print_table(&report.markdown, &common);
        if let Some(dir) = &self.output {
            for run in &report.runs {
                let path = dir.join(format!("bslm-d{}-rep{}.csv", run.d, run.rep));
                write_atomic(&path, bslm::trace_csv(run).as_bytes())?;
            }
            write_atomic(
                &dir.join("bslm.json"),
                bslm::results_json(&report, seed)?.as_bytes(),
            )?;
            bslm::write_figure1(&dir.join("bslm-figure1.png"), &report.runs)?;
            summary.set("output", dir.display().to_string());
        }
        summary.emit(&common)?;
        if !report.all_monotone {
            anyhow::bail!("a log-pseudo-likelihood trace decreased (see the table)");
        }
        Ok(())
    }
}

impl SdcpReproArgs {
    fn run(self) -> anyhow::Result<()> {
        let common = with_seed(&self.common, sdcp::SEED);
        let mut plan = sdcp::SdcpPlan {
            seed: common.seed.unwrap_or(sdcp::SEED),
            small: self.small,
            mnist: self.mnist,
            epochs: self.epochs,
            trials: self.trials,
            lrs: self.lr.clone(),
            algos: self.algos.clone(),
            eval_every: self.eval_every,
            data_dir: None,
            ais_chains: self.ais_chains,
            ais_steps: self.ais_steps,
            models_dir: self.output.clone(),
        };
        if self.mnist {
            plan.data_dir = Some(find_data_dir(self.data_dir.as_deref(), &plan.data_files())?);
        }
        plan.check()?;
        let seed = common.init()?;
        if let Some(dir) = &self.output {
            create_dir(dir)?;
        }
        let mut summary = Summary::new("repro sdcp", Some(seed));
        let report = sdcp::run(&plan, &ReproProgress::new(common.quiet))?;
        set_report(&mut summary, &report, &common)?;
        for exp in [&report.small, &report.mnist].into_iter().flatten() {
            print_table(&exp.table, &common);
        }
        if let Some(dir) = &self.output {
            sdcp::write_experiment(dir, &report)?;
        }
        summary.emit(&common)
    }
}

impl FwReproArgs {
    fn run(self) -> anyhow::Result<()> {
        let common = with_seed(&self.common, frank_wolfe::SEED);
        let mut plan = frank_wolfe::FwPlan {
            seed: common.seed.unwrap_or(frank_wolfe::SEED),
            datasets: self.datasets.clone(),
            data_dir: PathBuf::new(),
            max_units: self.max_units,
            sizes: self.sizes.clone(),
            epochs: self.epochs,
            restarts: self.restarts,
            k: self.k,
            lrs: self.lrs.clone(),
            batch_size: self.batch_size,
            cd_gap_tol: self.cd_gap_tol,
            cd_eval_every: self.cd_eval_every,
            fw: frank_wolfe::FwSettings {
                lambda: self.lambda,
                bias_lr: self.bias_lr,
                samples: self.samples,
                gibbs_steps: self.gibbs_steps,
                lbfgs_iters: self.lbfgs_iters,
                starts: self.starts,
                bias_steps: self.bias_steps,
            },
            gap_tol: self.gap_tol,
            eval_every: self.eval_every,
            ais_chains: self.ais_chains,
            ais_steps: self.ais_steps,
            classify: !self.no_classify,
            output: self.output.clone(),
        };
        plan.check()?;
        if !self.replot {
            let files = plan.data_files();
            let needs: Vec<&str> = files.iter().map(String::as_str).collect();
            plan.data_dir = find_data_dir(self.data_dir.as_deref(), &needs)?;
        }
        let seed = common.init()?;
        create_dir(&self.output)?;
        let mut summary = Summary::new("repro frank-wolfe", Some(seed));
        if self.replot {
            for name in &self.datasets {
                let path = self.output.join(format!("frank-wolfe-{name}.json"));
                let text = std::fs::read_to_string(&path).with_context(|| {
                    format!("reading {} (run without --replot first)", path.display())
                })?;
                let result: serde_json::Value = serde_json::from_str(&text).with_context(|| {
                    format!("{}: not the JSON of repro frank-wolfe", path.display())
                })?;
                frank_wolfe::draw_figures(&self.output, name, &result, self.k, self.restarts)?;
                summary.set(name.clone(), format!("fig1-{name}.png"));
            }
        } else {
            let report = frank_wolfe::run(&plan, &ReproProgress::new(common.quiet))?;
            set_report(&mut summary, &report, &common)?;
        }
        summary.set("output", self.output.display().to_string());
        summary.emit(&common)
    }
}

impl PopcdReproArgs {
    fn run(self) -> anyhow::Result<()> {
        use crate::commands::lab::parse_estimators;
        let common = with_seed(&self.common, popcd::SEED);
        let mut plan = popcd::PopcdPlan {
            seed: common.seed.unwrap_or(popcd::SEED),
            part: match self.part {
                PopcdPart::Curves => Part::Curves,
                PopcdPart::Table1 => Part::Table1,
                PopcdPart::All => Part::All,
            },
            datasets: self.datasets.clone(),
            lrs: self.lrs.clone(),
            algos: parse_estimators(&self.algos)?,
            trials: self.trials as usize,
            iterations: self.iterations.map(|n| n as usize),
            table1_estimates: self.table1_estimates,
            table1_estimators: parse_estimators(&self.table1_estimators)?,
            table1_train_iterations: self.table1_train_iterations,
            mnist: self.mnist.clone(),
            caltech: self.caltech.clone(),
        };
        plan.check()?;
        // the data files, found and checked before any output is created
        let files: Vec<(&str, Option<PathBuf>)> = plan
            .data_files()
            .into_iter()
            .map(|(what, given)| (what, given.map(Path::to_path_buf)))
            .collect();
        for (what, given) in files {
            let path = match given {
                Some(p) => {
                    require_file(&p, &format!("--{what}"))?;
                    p
                }
                None => {
                    let file = match what {
                        "mnist" => boltzkit_repro::data::BINARIZED_MNIST_TRAIN,
                        _ => boltzkit_repro::data::CALTECH_TRAIN,
                    };
                    find_data_dir(self.data_dir.as_deref(), &[file])
                        .with_context(|| {
                            format!("{what}: give the file with --{what}, or leave {what} out of --datasets")
                        })?
                        .join(file)
                }
            };
            match what {
                "mnist" => plan.mnist = Some(path),
                _ => plan.caltech = Some(path),
            }
        }
        let seed = common.init()?;
        let mut summary = Summary::new("repro popcd", Some(seed));
        if let Some(dir) = &self.output {
            create_dir(dir)?;
        }
        let report = popcd::run(&plan, &ReproProgress::new(common.quiet))?;
        set_report(&mut summary, &report, &common)?;
        if !common.json {
            println!("{}\n{}", report.curves_markdown, report.table1_markdown);
        }
        if let Some(dir) = &self.output {
            if let Some(png) = popcd::write_outputs(dir, &report, seed)? {
                summary.set("figure", png.display().to_string());
            }
            summary.set("output", dir.display().to_string());
        }
        summary.emit(&common)
    }
}
