//! `boltzkit repro <paper>`: each paper's flags become its plan ([`Flags::plan`]: checked,
//! data found, before any output exists), and [`Job::run`] runs it and calls its writers.
//! The command line adds its common flags `C` (seed, threads, `--json`), draws the
//! [`Progress`], prints the tables it is shown and turns the [`Outcome`] into its summary.

use super::common::Outcome;
use anyhow::Context;
use boltzkit::fsll::TransformPath;
use boltzkit::io::write_atomic;
use boltzkit_repro::data::{find_data_dir, local_file, require_file};
use boltzkit_repro::popcd::PaperData;
use boltzkit_repro::{bslm, frank_wolfe, fsll, lab, popcd, sdcp, Progress};
use clap::{Args, Subcommand};
use serde_json::Value;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The papers of `boltzkit repro`, each with its own flags and the command line's common
/// flags `C` (seed, threads, output format).
#[derive(Debug, Subcommand)]
pub enum Paper<C: Args> {
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
    Fsll {
        #[command(flatten)]
        flags: FsllFlags,
        #[command(flatten)]
        common: C,
    },

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
    Bslm {
        #[command(flatten)]
        flags: BslmFlags,
        #[command(flatten)]
        common: C,
    },

    /// Sec. 4 of Upadhya & Sastry (S-DCP): ATLL curves of CD, PCD, CG, S-DCP, CS-DCP
    #[command(
        long_about = "The experiments of Sec. 4 of Upadhya & Sastry (S-DCP and CS-DCP \
        against CD, PCD and the centered gradient). --small: bars & stripes 3×3 and shifting \
        bar 9/1, 4 hidden units, full batch, CD-12, PCD-12, CG (K = 12), S-DCP and CS-DCP \
        (d = 3, K′ = 4), η ∈ {0.3, 0.5}, 25 trials of 50,000 epochs, exact ATLL every \
        --eval-every epochs (Figs. 1-2). --mnist: binarized MNIST (--data-dir), 500 hidden, \
        batch 200, CD-24, CG (K = 24), S-DCP and CS-DCP (d = 6, K′ = 4), η = 0.01, test ATLL \
        by AIS (--ais-chains, --ais-steps linear steps) every --eval-every epochs and at the \
        end the bracket [RAISE, forward AIS] on the standard schedule (--final-steps, RAISE on \
        --raise-vectors test vectors) with each end's standard error and a one-line \
        diagnosis (Fig. 3). --algos takes the library's notation (cd-12, sdcp-3-4, csdcp-6-4); \
        the family names cd, pcd, cg, sdcp, csdcp mean the paper's budget. Every trial starts \
        all algorithms from the same initial model. Prints the final-ATLL table (mean ± sd \
        over trials, the epoch at which the mean reaches 90% of its rise); -o DIR writes the \
        mean ± sd curves (CSV, PNG), the table and, for MNIST, the models.\n\n\
        Examples:\n  boltzkit repro sdcp --small --epochs 3000 -o sdcp-out\n  \
        boltzkit repro sdcp --small --algos cd-12,sdcp-3-4,csdcp-3-4 -o sdcp-out\n  \
        boltzkit repro sdcp --mnist --epochs 20 --trials 1 --algos cd-24,csdcp-6-4 -o sdcp-mnist"
    )]
    Sdcp {
        #[command(flatten)]
        flags: SdcpFlags,
        #[command(flatten)]
        common: C,
    },

    /// Figures 1-2 of Ping, Liu & Ihler (Frank-Wolfe infinite RBM) on Caltech101 and MNIST
    #[command(
        long_about = "Figures 1 and 2 of Ping, Liu & Ihler, Learning Infinite RBMs with \
        Frank-Wolfe: on Caltech101 Silhouettes (split1) and MNIST (binarized at 127, 10,000 \
        training images held out for validation), Frank-Wolfe grows an RBM to --max-units with \
        an AIS test log-likelihood and the train/validation gap every --eval-every units; at \
        each of --sizes, CD-k from --restarts random starts (best on validation) and CD-k \
        started from the FW model are trained and scored, and a logistic regression on \
        E[h | v] gives the test error. Scores: with --eval bracket (the default) the test \
        log-likelihood is the interval [RAISE, forward AIS] (RAISE on --raise-vectors test \
        vectors) with each end's standard error and a one-line diagnosis, and at each size \
        the brackets of FW-initialized CD and the best random start are compared (disjoint or \
        not); the selection on validation reads forward AIS. Writes CSV, Markdown and JSON \
        into -o DIR.\n\n\
        Examples:\n  boltzkit repro frank-wolfe --datasets caltech -o fw-out\n  \
        boltzkit repro frank-wolfe --max-units 100 --sizes 50,100 --epochs 20 --ais-steps 1000"
    )]
    FrankWolfe {
        #[command(flatten)]
        flags: FwFlags,
        #[command(flatten)]
        common: C,
    },
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
    Popcd {
        #[command(flatten)]
        flags: PopcdFlags,
        #[command(flatten)]
        common: C,
    },
}

/// Which part of `repro popcd` to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PopcdPart {
    /// The log-likelihood curves (first experiment set)
    Curves,
    /// Table 1 (third experiment set)
    Table1,
    /// Both
    All,
}

/// `boltzkit repro popcd` flags.
#[derive(Debug, Args)]
pub struct PopcdFlags {
    /// What to run
    #[arg(long, value_enum, default_value_t = PopcdPart::All)]
    pub part: PopcdPart,
    /// Datasets, comma-separated: bas, modes, mnist, caltech
    #[arg(long, value_delimiter = ',', default_value = "bas,modes,mnist")]
    pub datasets: Vec<PaperData>,
    /// Learning rates of the curves
    #[arg(long, value_delimiter = ',', default_values_t = [0.1f32, 0.01])]
    pub lrs: Vec<f32>,
    /// Algorithms of the curves (cd-K, pcd-K, popcd-K, popcd-K-loo, sdcp-D-K, pt-M; the one notation of rbm fit --algo)
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "cd-1,cd-10,pcd-1,popcd-1,popcd-10,pt-10"
    )]
    pub algos: Vec<String>,
    /// Runs per (dataset, rate, algorithm), the curves being their means: N (trials 0 to
    /// N−1), or A..B for trials A to B−1 alone (one part of a job array: -o DIR keeps its runs
    /// in DIR/popcd-runs.cbor for --merge)
    #[arg(long, default_value = "25", value_name = "N|A..B", value_parser = parse_trials)]
    pub trials: Range<usize>,
    /// Folders (comma-separated) of runs of parts of --trials (each one's -o DIR): their runs
    /// are merged into the curves, the same bits as one process running every trial, instead
    /// of being run again
    #[arg(long, value_delimiter = ',', value_name = "DIR,...")]
    pub merge: Vec<PathBuf>,
    /// Iterations per run instead of the paper's (to shorten)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: Option<u64>,
    /// Table 1: estimates per estimator (the paper: 50,000)
    #[arg(long, value_name = "N", default_value_t = 50_000)]
    pub table1_estimates: usize,
    /// Table 1: estimators
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "cd-1,cd-10,popcd-1,popcd-10"
    )]
    pub table1_estimators: Vec<String>,
    /// Table 1: CD-1 updates of the reference model instead of the paper's
    #[arg(long, value_name = "N")]
    pub table1_train_iterations: Option<usize>,
    /// Binarized MNIST training rows [default: binarized_mnist/binarized_mnist_train.amat.gz
    /// in the data folder]
    #[arg(long, value_name = "FILE")]
    pub mnist: Option<PathBuf>,
    /// Caltech101 Silhouettes training rows [default:
    /// caltech101_silhouettes/caltech101_silhouettes_28_split1_train.amat.gz in the data folder]
    #[arg(long, value_name = "FILE")]
    pub caltech: Option<PathBuf>,
    /// The data: a mirror folder of the data registry (`boltzkit data list`), e.g. ../shared/data:
    /// the files are copied into the cache (BOLTZKIT_DATA) and checked [default:
    /// BOLTZKIT_DATA_MIRROR (BOLTZKIT_DATA_DIR: its old name), else shared/data beside or above the
    /// working directory or the executable, else the network]
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Directory for the curve CSVs and popcd.json
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// `boltzkit repro bslm` flags.
#[derive(Debug, Args)]
pub struct BslmFlags {
    /// Repetitions per d
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    pub reps: u64,
    /// Dimensions d, comma-separated
    #[arg(long, value_delimiter = ',', default_values_t = [5usize, 10, 15, 20])]
    pub dims: Vec<usize>,
    /// Observations per data set
    #[arg(long, value_name = "N", default_value_t = 16_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub samples: u64,
    /// Stopping tolerance τ on the log-PL gain per sweep
    #[arg(long, default_value_t = 1e-5)]
    pub tau: f64,
    /// Directory for the per-run trace CSVs, bslm.json and bslm-figure1.png
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// `boltzkit repro fsll` flags.
#[derive(Debug, Args)]
pub struct FsllFlags {
    /// Trials (sample seeds) per dataset; the table shows medians
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    pub trials: u64,
    /// Update path of the learner (auto = XOR for binary data)
    #[arg(long, default_value = "auto", value_parser = ["auto", "xor", "full"])]
    pub path: String,
    /// Datasets to run, comma-separated names (e.g. Ising5x4S,BN20-37L), `all` or `none`
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Also learn an N-variable Bayesian network (3 parents, 100,000 samples): scale test
    #[arg(long, value_name = "N")]
    pub scale_vars: Option<usize>,
    /// Also fit the Boltzmann-machine baselines on the same samples: `di` (BM-DI, exact
    /// maximum likelihood), `pcd` (BM-PCD: rate 0.01, 100 chains, 10,000 updates), or both
    #[arg(long, value_delimiter = ',', default_value = "none",
          value_parser = ["none", "di", "pcd"])]
    pub bm: Vec<String>,
    /// Write all results (every trial, medians, the paper's values, seeds) as JSON
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `boltzkit repro sdcp` flags.
#[derive(Debug, Args)]
pub struct SdcpFlags {
    /// The small experiments: bars & stripes 3×3 and shifting bar 9/1 (Figs. 1-2)
    #[arg(long)]
    pub small: bool,
    /// The MNIST experiment (Fig. 3)
    #[arg(long)]
    pub mnist: bool,
    /// Epochs per run [default: the paper's 50,000 (small) or 200 (MNIST)]
    #[arg(long, value_name = "N")]
    pub epochs: Option<usize>,
    /// Trials per setting [default: the paper's 25 (small) or 10 (MNIST)]
    #[arg(long, value_name = "N")]
    pub trials: Option<usize>,
    /// Learning rates, comma-separated [default: 0.3,0.5 (small) or 0.01 (MNIST)]
    #[arg(long, value_name = "X", value_delimiter = ',')]
    pub lr: Vec<f32>,
    /// Algorithms, comma-separated, in the library's notation: cd-K, pcd-K, cg-K, sdcp-D-K,
    /// csdcp-D-K (also popcd-K, pt-M; the notation of rbm fit --algo); the family names cd,
    /// pcd, cg, sdcp, csdcp mean the paper's budget of each experiment (cd-12, pcd-12, cg-12,
    /// sdcp-3-4, csdcp-3-4 on --small; cd-24, pcd-24, cg-24, sdcp-6-4, csdcp-6-4 on --mnist)
    /// [default: all five (small) or cd,cg,sdcp,csdcp (MNIST)]
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub algos: Vec<String>,
    /// ATLL every N epochs [default: 10 (small) or 10 (MNIST)]
    #[arg(long, value_name = "N")]
    pub eval_every: Option<usize>,
    /// MNIST's data (binarized_mnist): a mirror folder of the data registry (`boltzkit data list`),
    /// e.g. ../shared/data: the files are copied into the cache (BOLTZKIT_DATA) and checked
    /// [default: BOLTZKIT_DATA_MIRROR (BOLTZKIT_DATA_DIR: its old name), else shared/data beside or
    /// above the working directory or the executable, else the network]
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// MNIST: AIS chains of the monitor and of the final estimates
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub ais_chains: usize,
    /// MNIST: linear AIS steps of the monitor (the paper: 10,000)
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub ais_steps: usize,
    /// MNIST: steps of the final bracket [RAISE, forward AIS], the standard schedule's shape;
    /// 0: the standard 14,500-step schedule
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub final_steps: usize,
    /// MNIST: RAISE chains per test vector of the final bracket
    #[arg(long, value_name = "M", default_value_t = 1)]
    pub raise_chains: usize,
    /// MNIST: RAISE on a seeded random subset of N test vectors (0: all 10,000)
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub raise_vectors: usize,
    /// Directory for the curves (CSV, PNG), the final table and (MNIST) the models
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// `boltzkit repro frank-wolfe` flags.
#[derive(Debug, Args)]
pub struct FwFlags {
    /// Datasets, comma-separated: caltech, mnist
    #[arg(long, value_delimiter = ',', default_values_t = ["caltech".to_string(), "mnist".to_string()],
          value_parser = ["caltech", "mnist"])]
    pub datasets: Vec<String>,
    /// The data (Caltech101, MNIST): a mirror folder of the data registry (`boltzkit data list`),
    /// e.g. ../shared/data: the files are copied into the cache (BOLTZKIT_DATA) and checked
    /// [default: BOLTZKIT_DATA_MIRROR (BOLTZKIT_DATA_DIR: its old name), else shared/data beside or
    /// above the working directory or the executable, else the network]
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// T: Frank-Wolfe grows the model up to this many units
    #[arg(long, value_name = "T", default_value_t = 700)]
    pub max_units: usize,
    /// Sizes at which CD runs (random and FW-initialized), comma-separated (≤ --max-units)
    #[arg(long, value_delimiter = ',',
          default_values_t = [20usize, 50, 100, 200, 300, 400, 500, 600, 700])]
    pub sizes: Vec<usize>,
    /// CD epochs [default: 400 on Caltech, 200 on MNIST, as the paper]
    #[arg(long, value_name = "N")]
    pub epochs: Option<usize>,
    /// Random initializations of CD per size (the best on validation is kept)
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub restarts: usize,
    /// CD-k's k
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub k: usize,
    /// CD learning rates, comma-separated: every CD start (each random one and the FW one) is
    /// trained at each and the rate best on validation is kept, as the paper selects its fixed
    /// rate from {0.05, 0.02, 0.01, 0.005} [default: 0.05 alone, to keep runs short]
    #[arg(long = "lrs", alias = "lr", value_name = "X,..", value_delimiter = ',',
          default_values_t = [0.05])]
    pub lrs: Vec<f64>,
    /// CD mini-batch size
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub batch_size: usize,
    /// CD early stopping, as the paper's protocol: every --cd-eval-every epochs the train −
    /// validation gap is taken and a CD run ends once it has grown this many nats above its
    /// minimum (off by default: every run takes --epochs)
    #[arg(long, value_name = "X")]
    pub cd_gap_tol: Option<f64>,
    /// Epochs between the gap checks of --cd-gap-tol
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub cd_eval_every: usize,
    /// FW: λ (Eqs. 6, 9)
    #[arg(long, value_name = "X", default_value_t = 0.1)]
    pub lambda: f64,
    /// FW: η of the bias update (Eq. 10)
    #[arg(long, value_name = "X", default_value_t = 0.5)]
    pub bias_lr: f64,
    /// FW: persistent chains S
    #[arg(long, value_name = "S", default_value_t = 2000)]
    pub samples: usize,
    /// FW: Gibbs steps per draw
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub gibbs_steps: usize,
    /// FW: L-BFGS iterations per subproblem
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub lbfgs_iters: usize,
    /// FW: starts per subproblem (one small random, the others data-row templates)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub starts: usize,
    /// FW: most bias steps per iteration
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub bias_steps: usize,
    /// FW: the gap tolerance (nats) of the size selection
    #[arg(long, value_name = "X", default_value_t = 5.0)]
    pub gap_tol: f64,
    /// FW: units between test log-likelihood / gap evaluations
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub eval_every: usize,
    /// AIS chains (the paper: 500)
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub ais_chains: usize,
    /// AIS steps, linear schedule; 0: the standard 14,500-step schedule (the paper's); RAISE
    /// walks the same schedule
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub ais_steps: usize,
    /// The test log-likelihood of the FW curve and of every model scored: forward AIS alone,
    /// or the bracket [RAISE, forward AIS] with each end's standard error and a diagnosis
    /// (and, at each size, whether the brackets of FW-initialized CD and the best random start
    /// are disjoint)
    #[arg(long, value_enum, default_value_t = TestEval::Bracket)]
    pub eval: TestEval,
    /// RAISE chains per test vector (--eval bracket)
    #[arg(long, value_name = "M", default_value_t = 1)]
    pub raise_chains: usize,
    /// RAISE on a seeded random subset of N test vectors (0: all; --eval bracket)
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub raise_vectors: usize,
    /// Skip the classification (Figure 2)
    #[arg(long)]
    pub no_classify: bool,
    /// Only redraw the PNGs from the JSON results already in -o DIR (no training)
    #[arg(long)]
    pub replot: bool,
    /// Output directory (CSV, JSON)
    #[arg(short, long, value_name = "DIR", default_value = "fw-repro")]
    pub output: PathBuf,
}

/// The test log-likelihood of `repro frank-wolfe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TestEval {
    /// Forward AIS (optimistic in expectation)
    Ais,
    /// The bracket [RAISE, forward AIS] with its diagnosis
    Bracket,
}

/// `Some(n)`, or `None` (all) for 0.
fn subset(n: usize) -> Option<usize> {
    (n > 0).then_some(n)
}

/// A paper's own flags, split from the common ones by [`Paper::split`].
#[derive(Debug)]
pub enum Flags {
    /// `repro fsll`
    Fsll(FsllFlags),
    /// `repro bslm`
    Bslm(BslmFlags),
    /// `repro sdcp`
    Sdcp(SdcpFlags),
    /// `repro frank-wolfe`
    FrankWolfe(FwFlags),
    /// `repro popcd`
    Popcd(PopcdFlags),
}

impl<C: Args> Paper<C> {
    /// The paper's flags and the common ones.
    pub fn split(self) -> (Flags, C) {
        match self {
            Paper::Fsll { flags, common } => (Flags::Fsll(flags), common),
            Paper::Bslm { flags, common } => (Flags::Bslm(flags), common),
            Paper::Sdcp { flags, common } => (Flags::Sdcp(flags), common),
            Paper::FrankWolfe { flags, common } => (Flags::FrankWolfe(flags), common),
            Paper::Popcd { flags, common } => (Flags::Popcd(flags), common),
        }
    }
}

/// A checked plan with where its results go, ready to [`Job::run`].
#[derive(Debug)]
pub enum Job {
    /// `repro fsll`
    Fsll(fsll::FsllPlan, Option<PathBuf>),
    /// `repro bslm`
    Bslm(bslm::BslmPlan, Option<PathBuf>),
    /// `repro sdcp`
    Sdcp(sdcp::SdcpPlan, Option<PathBuf>),
    /// `repro frank-wolfe`; with `--replot` only the figures are redrawn
    FrankWolfe(Box<(frank_wolfe::FwPlan, FwFlags)>),
    /// `repro popcd`
    Popcd(popcd::PopcdPlan, Option<PathBuf>),
}

impl Flags {
    /// The paper's fixed seed, used unless one is given.
    pub fn default_seed(&self) -> u64 {
        match self {
            Flags::Fsll(_) => fsll::SEED,
            Flags::Bslm(_) => bslm::SEED,
            Flags::Sdcp(_) => sdcp::SEED,
            Flags::FrankWolfe(_) => frank_wolfe::SEED,
            Flags::Popcd(_) => popcd::SEED,
        }
    }

    /// The checked plan run with `seed`, its data files found (an error names the flag or
    /// file at fault before any output is created).
    pub fn plan(self, seed: u64) -> anyhow::Result<Job> {
        let job = match self {
            Flags::Fsll(f) => f.plan(seed),
            Flags::Bslm(f) => f.plan(seed),
            Flags::Sdcp(f) => f.plan(seed),
            Flags::FrankWolfe(f) => f.plan(seed),
            Flags::Popcd(f) => f.plan(seed),
        }?;
        job.check_output()?;
        Ok(job)
    }
}

impl Job {
    /// The paper's name, as in `repro <name>`.
    pub fn name(&self) -> &'static str {
        match self {
            Job::Fsll(..) => "fsll",
            Job::Bslm(..) => "bslm",
            Job::Sdcp(..) => "sdcp",
            Job::FrankWolfe(..) => "frank-wolfe",
            Job::Popcd(..) => "popcd",
        }
    }

    /// Checks `-o` before any work: fsll's results file can be written
    /// ([`boltzkit::io::check_output`]), the other papers' output folder can be made and
    /// written into ([`boltzkit::io::check_output_dir`]).
    fn check_output(&self) -> boltzkit::Result<()> {
        match self {
            Job::Fsll(_, Some(file)) => boltzkit::io::check_output(file),
            Job::Bslm(_, Some(dir)) | Job::Sdcp(_, Some(dir)) | Job::Popcd(_, Some(dir)) => {
                boltzkit::io::check_output_dir(dir)
            }
            Job::FrankWolfe(job) => boltzkit::io::check_output_dir(&job.1.output),
            _ => Ok(()),
        }
    }

    /// Runs the plan with `progress`, shows each table (Markdown) to `show` as it is made and
    /// writes the results.
    pub fn run(
        self,
        seed: u64,
        progress: &dyn Progress,
        show: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Outcome> {
        let command = format!("repro {}", self.name());
        let mut outcome = match self {
            Job::Fsll(plan, out) => run_fsll(&plan, out.as_deref(), seed, progress, show),
            Job::Bslm(plan, out) => run_bslm(&plan, out.as_deref(), seed, progress, show),
            Job::Sdcp(plan, out) => run_sdcp(&plan, out.as_deref(), progress, show),
            Job::FrankWolfe(job) => run_fw(&job.0, &job.1, progress),
            Job::Popcd(plan, out) => run_popcd(&plan, out.as_deref(), seed, progress, show),
        }?;
        outcome.command = command;
        outcome.seed = Some(seed);
        Ok(outcome)
    }
}

/// Creates the output folder `dir`, if there is one.
fn create_dir(dir: Option<&Path>) -> anyhow::Result<()> {
    match dir {
        Some(dir) => std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the output folder {}", dir.display())),
        None => Ok(()),
    }
}

impl FsllFlags {
    fn plan(self, seed: u64) -> anyhow::Result<Job> {
        let plan = fsll::FsllPlan {
            seed,
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
        Ok(Job::Fsll(plan, self.output))
    }
}

fn run_fsll(
    plan: &fsll::FsllPlan,
    out: Option<&Path>,
    seed: u64,
    progress: &dyn Progress,
    show: &mut dyn FnMut(&str),
) -> anyhow::Result<Outcome> {
    let report = fsll::run(plan, progress)?;
    let mut outcome = Outcome::report(&report)?;
    show(report.markdown.as_deref().unwrap_or(""));
    show(report.bm_markdown.as_deref().unwrap_or(""));
    if let Some(out) = out {
        write_atomic(out, fsll::results_json(&report, seed)?.as_bytes())?;
    }
    outcome.output(out);
    Ok(outcome)
}

impl BslmFlags {
    fn plan(self, seed: u64) -> anyhow::Result<Job> {
        let plan = bslm::BslmPlan {
            seed,
            reps: self.reps as usize,
            dims: self.dims.clone(),
            samples: usize::try_from(self.samples)?,
            tau: self.tau,
        };
        plan.check()?;
        Ok(Job::Bslm(plan, self.output))
    }
}

fn run_bslm(
    plan: &bslm::BslmPlan,
    dir: Option<&Path>,
    seed: u64,
    progress: &dyn Progress,
    show: &mut dyn FnMut(&str),
) -> anyhow::Result<Outcome> {
    create_dir(dir)?;
    let report = bslm::run(plan, progress)?;
    let mut outcome = Outcome::report(&report)?;
    let figure = dir.map(|d| d.join("bslm-figure1.png"));
    outcome.set("plot", figure.as_ref().map(|p| p.display().to_string()));
    show(&report.markdown);
    if let (Some(dir), Some(figure)) = (dir, &figure) {
        for run in &report.runs {
            let path = dir.join(format!("bslm-d{}-rep{}.csv", run.d, run.rep));
            write_atomic(&path, bslm::trace_csv(run).as_bytes())?;
        }
        let json = bslm::results_json(&report, seed)?;
        write_atomic(&dir.join("bslm.json"), json.as_bytes())?;
        bslm::write_figure1(figure, &report.runs)?;
    }
    outcome.output(dir);
    if !report.all_monotone {
        outcome.failure = Some("a log-pseudo-likelihood trace decreased (see the table)".into());
    }
    Ok(outcome)
}

impl SdcpFlags {
    fn plan(self, seed: u64) -> anyhow::Result<Job> {
        let mut plan = sdcp::SdcpPlan {
            seed,
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
            final_steps: self.final_steps,
            raise_chains: self.raise_chains,
            raise_vectors: subset(self.raise_vectors),
            models_dir: self.output.clone(),
        };
        if self.mnist {
            plan.data_dir = Some(find_data_dir(self.data_dir.as_deref(), &plan.data_files())?);
        }
        plan.check()?;
        Ok(Job::Sdcp(plan, self.output))
    }
}

fn run_sdcp(
    plan: &sdcp::SdcpPlan,
    dir: Option<&Path>,
    progress: &dyn Progress,
    show: &mut dyn FnMut(&str),
) -> anyhow::Result<Outcome> {
    create_dir(dir)?;
    let report = sdcp::run(plan, progress)?;
    let outcome = Outcome::report(&report)?;
    for exp in [&report.small, &report.mnist].into_iter().flatten() {
        show(&exp.table);
    }
    if let Some(dir) = dir {
        sdcp::write_experiment(dir, &report)?;
    }
    Ok(outcome)
}

impl FwFlags {
    fn plan(self, seed: u64) -> anyhow::Result<Job> {
        let mut plan = frank_wolfe::FwPlan {
            seed,
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
            test_method: match self.eval {
                TestEval::Ais => boltzkit::estimate::Method::Ais,
                TestEval::Bracket => boltzkit::estimate::Method::Bracket,
            },
            raise_chains: self.raise_chains,
            raise_vectors: subset(self.raise_vectors),
            classify: !self.no_classify,
            output: self.output.clone(),
        };
        plan.check()?;
        if !self.replot {
            let files = plan.data_files();
            let needs: Vec<&str> = files.iter().map(String::as_str).collect();
            plan.data_dir = find_data_dir(self.data_dir.as_deref(), &needs)?;
        }
        Ok(Job::FrankWolfe(Box::new((plan, self))))
    }
}

fn run_fw(
    plan: &frank_wolfe::FwPlan,
    flags: &FwFlags,
    progress: &dyn Progress,
) -> anyhow::Result<Outcome> {
    create_dir(Some(&flags.output))?;
    let mut outcome = if flags.replot {
        let mut outcome = Outcome::default();
        for name in &flags.datasets {
            let path = flags.output.join(format!("frank-wolfe-{name}.json"));
            let text = std::fs::read_to_string(&path).with_context(|| {
                format!("reading {} (run without --replot first)", path.display())
            })?;
            let result: Value = serde_json::from_str(&text).with_context(|| {
                format!("{}: not the JSON of repro frank-wolfe", path.display())
            })?;
            frank_wolfe::draw_figures(&flags.output, name, &result, flags.k, flags.restarts)?;
            outcome.set(name.clone(), format!("fig1-{name}.png"));
        }
        outcome
    } else {
        Outcome::report(&frank_wolfe::run(plan, progress)?)?
    };
    outcome.output(Some(&flags.output));
    Ok(outcome)
}

impl PopcdFlags {
    fn plan(self, seed: u64) -> anyhow::Result<Job> {
        let mut plan = popcd::PopcdPlan {
            seed,
            part: match self.part {
                PopcdPart::Curves => popcd::PopcdPart::Curves,
                PopcdPart::Table1 => popcd::PopcdPart::Table1,
                PopcdPart::All => popcd::PopcdPart::All,
            },
            datasets: self.datasets.clone(),
            lrs: self.lrs.clone(),
            algos: lab::parse_estimators("--algos", &self.algos)?,
            trials: self.trials.clone(),
            merge: self.merge.clone(),
            iterations: self.iterations.map(|n| n as usize),
            table1_estimates: self.table1_estimates,
            table1_estimators: lab::parse_estimators(
                "--table1-estimators",
                &self.table1_estimators,
            )?,
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
                    let dir = find_data_dir(self.data_dir.as_deref(), &[file]).with_context(|| {
                        format!("{what}: give the file with --{what}, or leave {what} out of --datasets")
                    })?;
                    local_file(&dir, file)
                }
            };
            match what {
                "mnist" => plan.mnist = Some(path),
                _ => plan.caltech = Some(path),
            }
        }
        Ok(Job::Popcd(plan, self.output))
    }
}

fn run_popcd(
    plan: &popcd::PopcdPlan,
    dir: Option<&Path>,
    seed: u64,
    progress: &dyn Progress,
    show: &mut dyn FnMut(&str),
) -> anyhow::Result<Outcome> {
    create_dir(dir)?;
    let report = popcd::run(plan, progress)?;
    let mut outcome = Outcome::report(&report)?;
    show(&format!(
        "{}\n{}",
        report.curves_markdown, report.table1_markdown
    ));
    if let Some(dir) = dir {
        if let Some(png) = popcd::write_outputs(dir, &report, seed)? {
            outcome.set("figure", png.display().to_string());
        }
    }
    outcome.output(dir);
    Ok(outcome)
}

/// `--trials` of `repro popcd`: `N` (trials `0..N`) or `A..B` (trials A to B − 1), at least
/// one trial.
fn parse_trials(s: &str) -> Result<Range<usize>, String> {
    let num = |x: &str| {
        x.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{x}` is not a whole number"))
    };
    let r = match s.split_once("..") {
        Some((a, b)) => num(a)?..num(b)?,
        None => 0..num(s)?,
    };
    if r.is_empty() {
        return Err(format!(
            "`{s}` holds no trial: N runs trials 0 to N−1, A..B trials A to B−1 (B > A)"
        ));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Clone, Args)]
    struct Common {
        #[arg(long)]
        seed: Option<u64>,
    }

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        paper: Paper<Common>,
    }

    #[test]
    fn a_paper_parses_plans_and_runs() {
        let cli = Cli::parse_from([
            "repro",
            "bslm",
            "--reps",
            "1",
            "--dims",
            "3",
            "--samples",
            "300",
        ]);
        let (flags, common) = cli.paper.split();
        let seed = common.seed.unwrap_or(flags.default_seed());
        let job = flags.plan(seed).unwrap();
        let outcome = job
            .run(seed, &boltzkit_repro::Silent, &mut |_table| {})
            .unwrap();
        assert!(outcome.failure.is_none());
    }
}
