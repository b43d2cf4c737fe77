//! `boltzkit rbm`: train, evaluate and sample restricted Boltzmann machines.

use crate::args::{AisFlags, BinarizeArgs, CommonArgs};
use crate::exit::UsageError;
use crate::guard;
use crate::progress;
use crate::report::{SampleSummary, Summary};
use anyhow::Context;
use boltzkit::data::{write_dataset, Binarize, Dataset};
use boltzkit::estimate::{Estimate, Method};
use boltzkit::fit::{Control, Run};
use boltzkit::provenance::{self, DataFile, RbmFitSettings};
use boltzkit::rbm::ais::AisSchedule;
use boltzkit::rbm::exact::{self, MAX_ENUM_UNITS};
use boltzkit::rbm::file::{load_rbm, save_rbm, Offsets};
use boltzkit::rbm::gibbs::sample_from_uniform;
use boltzkit::rbm::loglik::{
    average_log_likelihood, bracket_convergence, convergence_steps, Bracket, LogLikParams,
    LogLikelihood, DEFAULT_MAX_WIDTH,
};
use boltzkit::rbm::model::states_to_dataset;
use boltzkit::rbm::train::early_stop::GapEarlyStop;
use boltzkit::rbm::train::{
    load_checkpoint, AisLogLikelihood, Algorithm, CheckedRbmParams, Checkpoint, ExactLogLikelihood,
    JsonlLog, LearningRate, Monitors, Observer, Progress, RbmParams, StopReason, TrainParams,
    TrainState, DEFAULT_EXACT_MONITOR_UNITS,
};
use boltzkit::rbm::{monitor, GibbsChains, Rbm};
use boltzkit::rng::derive_seed;
use clap::{Args, Subcommand, ValueEnum};
use indicatif::ProgressBar;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod fw;
mod plot;

/// Rows of the training data `rbm fit --monitors` evaluates.
const MONITOR_ROWS: usize = 1000;

/// Training rows RAISE scores for `rbm fit --eval bracket`.
const BRACKET_MONITOR_ROWS: usize = 100;

/// `boltzkit rbm <verb>`.
#[derive(Debug, Args)]
pub struct RbmArgs {
    #[command(subcommand)]
    verb: RbmVerb,
}

#[derive(Debug, Subcommand)]
enum RbmVerb {
    /// Train an RBM on 0/1 data (CD, PCD, CG, S-DCP, CS-DCP, pop-CD, PT)
    #[command(
        long_about = "Train a binary restricted Boltzmann machine on 0/1 data with CD-k, \
        PCD-k, the centered gradient (cg), S-DCP, centered S-DCP (csdcp), pop-CD-k (popcd: \
        CD-k with importance-weighted negative samples, Eq. 8 of Krause et al.; --loo for Eq. 9) \
        or parallel tempering (pt: --replicas M at inverse temperatures uniform in [0, 1], --k \
        tempered steps and exchange rounds per update). The --log file carries pop-CD's \
        effective sample size (popcd_ess) and PT's exchange rates (pt_swap_rate_*). Without --model the \
        model starts from the initialization of Sec. 4.1 of the S-DCP paper (W ~ N(0, 0.01²), \
        c = 0, b = logit of the data means). Prints the stop reason, the exact average \
        log-likelihood when the smaller layer has at most 25 units (or with --eval exact, up \
        to 30), and the wall time. A run \
        that diverges exits 1 but still writes the last good model to -o.\n\n\
        Example:\n  boltzkit rbm fit --data bas.csv --algo sdcp --hidden 4 --epochs 200 \
        --lr 0.1 --batch-size 0 --k 1 --inner 3 -o m.safetensors --seed 1"
    )]
    Fit(FitArgs),
    /// Average log-likelihood of data under a model: exact, or the bracket [RAISE, AIS]
    #[command(
        long_about = "Evaluate a model on data: the average log-likelihood (nats per \
        sample). exact: ln Z by enumerating the smaller layer (≤ 30 units; the default for such \
        models). bracket (the default for larger models): the interval [RAISE, forward AIS], \
        each end with its standard error, and a one-line diagnosis when the interval is \
        inverted beyond 3 standard errors (an estimator has failed: more steps needed) or wider \
        than --max-width. Forward AIS (ais) anneals from the base-rate model: on average it \
        underestimates ln Z, so its log-likelihood is optimistic. RAISE (raise, Burda, Grosse & \
        Salakhutdinov 2015) anneals each test vector back to the base model (--raise-chains \
        chains per vector, on --raise-vectors of them at random if given): on average it is \
        below the log-likelihood of the annealing model (forward AIS's own chain), which \
        approaches the model's as the steps grow. --convergence K reports the bracket at K, \
        2K, 4K, ... steps up to the schedule's, so you see whether the ends meet. \
        reverse-ais-from-data pools reverse chains started at data rows into one ln Z: neither \
        a bound nor consistent, kept for comparison.\n\n\
        Examples:\n  boltzkit rbm eval --model m.safetensors --data bas.csv --method exact\n  \
        boltzkit rbm eval --model mnist.safetensors --data test.amat.gz --raise-vectors 1000 --json\n  \
        boltzkit rbm eval --model mnist.safetensors --data test.amat.gz --convergence 500"
    )]
    Eval(EvalArgs),
    /// Draw samples from a model by block Gibbs sampling
    #[command(
        long_about = "Draw samples (0/1 rows) from a model: one block Gibbs chain per \
        sample, started from uniform random visible states, run for --gibbs-steps steps.\n\n\
        Example:\n  boltzkit rbm sample --model m.safetensors -n 1000 -o s.npy --seed 3"
    )]
    Sample(SampleArgs),
    /// Hidden features E[h | v] of a data file (for downstream classifiers)
    #[command(
        long_about = "Write the hidden features E[h_j | v] = σ(c_j + vᵀW_j) of every row of a \
        data file as a samples × hidden .npy (f64), e.g. for the classification error of \
        Figure 2 of the Frank-Wolfe paper.\n\n\
        Example:\n  boltzkit rbm features --model m.safetensors --data x.amat -o f.npy"
    )]
    Features(fw::FeaturesArgs),
    /// Draw learning curves, weight filters, samples or reconstructions as a PNG
    #[command(long_about = plot::LONG_ABOUT)]
    Plot(plot::PlotArgs),
}

/// The training algorithm of `rbm fit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AlgoArg {
    /// Contrastive divergence CD-k
    Cd,
    /// Persistent contrastive divergence PCD-k
    Pcd,
    /// Centered gradient with CD-k
    Cg,
    /// Stochastic difference-of-convex programming (S-DCP)
    Sdcp,
    /// Centered S-DCP
    Csdcp,
    /// Frank-Wolfe: an infinite RBM grown by one hidden unit per iteration (Ping et al. 2016)
    FrankWolfe,
    /// Population contrastive divergence pop-CD-k (Krause et al., Eq. 8; --loo for Eq. 9)
    Popcd,
    /// Parallel tempering PT-M (--replicas M, β uniform in [0, 1]; --k steps per update)
    Pt,
}

/// `--algo`: a family name (its settings from --k, --inner, --replicas, --loo) or a whole
/// algorithm in the library's one notation ([`Algorithm`]: `pcd-1`, `sdcp-3-4`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlgoChoice {
    family: AlgoArg,
    spec: Option<Algorithm>,
}

/// Parses `--algo`: a family (`cd`, `frank-wolfe`, ...) or a name like `csdcp-3-4`.
fn parse_algo(s: &str) -> Result<AlgoChoice, String> {
    if let Ok(family) = AlgoArg::from_str(s, true) {
        return Ok(AlgoChoice { family, spec: None });
    }
    let spec: Algorithm = s.parse().map_err(|e: boltzkit::Error| {
        format!("{e}; or a family: cd, pcd, cg, sdcp, csdcp, popcd, pt, frank-wolfe")
    })?;
    let family = match spec {
        Algorithm::Cd { .. } => AlgoArg::Cd,
        Algorithm::Pcd { .. } => AlgoArg::Pcd,
        Algorithm::Cg { .. } => AlgoArg::Cg,
        Algorithm::Sdcp { .. } => AlgoArg::Sdcp,
        Algorithm::CsDcp { .. } => AlgoArg::Csdcp,
        Algorithm::PopCd { .. } => AlgoArg::Popcd,
        Algorithm::Pt { .. } => AlgoArg::Pt,
    };
    Ok(AlgoChoice {
        family,
        spec: Some(spec),
    })
}

/// How `rbm fit` monitors the log-likelihood during training.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EvalArg {
    /// Exact average log-likelihood (smaller layer ≤ 25 units)
    Exact,
    /// AIS estimate (1,000 linear steps, 100 chains)
    Ais,
    /// The bracket: AIS as above and RAISE (the same schedule, one chain per vector) on 100
    /// random training rows
    Bracket,
    /// No monitoring
    None,
}

/// How `rbm eval` estimates the average log-likelihood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum MethodArg {
    /// Enumeration of the smaller layer (≤ 30 units)
    Exact,
    /// Forward annealed importance sampling (optimistic in expectation)
    Ais,
    /// RAISE per test vector (conservative in expectation for the annealing model)
    Raise,
    /// The interval [RAISE, forward AIS] with a diagnosis
    Bracket,
    /// Reverse AIS from data rows pooled into one ln Z (neither a bound nor consistent)
    ReverseAisFromData,
}

impl MethodArg {
    fn method(self) -> Method {
        match self {
            MethodArg::Exact => Method::Exact,
            MethodArg::Ais => Method::Ais,
            MethodArg::Raise => Method::Raise,
            MethodArg::Bracket => Method::Bracket,
            MethodArg::ReverseAisFromData => Method::ReverseAisFromData,
        }
    }
}

#[derive(Debug, Args)]
struct FitArgs {
    /// Training data (.npy, .csv, .tsv, IDX, .amat; .gz read transparently)
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    #[command(flatten)]
    binarize: BinarizeArgs,
    /// Training algorithm: a family, cd, pcd, cg, sdcp, csdcp, popcd, pt (settings from --k,
    /// --inner, --replicas, --loo) or frank-wolfe; or one name in the library's notation:
    /// cd-K, pcd-K, sdcp-D-K, cg-K, csdcp-D-K, popcd-K, popcd-K-loo, pt-M, pt-M-K
    #[arg(long, value_name = "ALGO", default_value = "cd", value_parser = parse_algo)]
    algo: AlgoChoice,
    /// Hidden units (required without --model)
    #[arg(long, value_name = "N")]
    hidden: Option<usize>,
    /// Passes over the data
    #[arg(long, value_name = "N", default_value_t = 100)]
    epochs: usize,
    /// Learning rate (the default measured best at 100 epochs, batch 100: BENCHMARKS.md,
    /// "Default learning rate")
    #[arg(long, value_name = "X", default_value_t = 0.03)]
    lr: f32,
    /// Decay the learning rate linearly from --lr at the first epoch to this value at the last
    #[arg(long, value_name = "X")]
    lr_end: Option<f32>,
    /// Mini-batch rows (0 = the full batch)
    #[arg(long, value_name = "N", default_value_t = 100)]
    batch_size: usize,
    /// Gibbs steps per estimate (K; K′ per inner step for sdcp, csdcp; frank-wolfe: per draw
    /// of the chains) [default: 1; frank-wolfe: 3, measured: on Caltech101 K = 1 lets the
    /// grown model fall to −827 nats at 20 units where K = 3 reaches −287]
    #[arg(long, value_name = "N")]
    k: Option<usize>,
    /// Inner steps d of sdcp and csdcp [default: 3]
    #[arg(long, value_name = "D")]
    inner: Option<usize>,
    /// Replicas M of pt (inverse temperatures uniform in [0, 1]) [default: 10]
    #[arg(long, value_name = "M")]
    replicas: Option<usize>,
    /// popcd: the leave-one-out weights of Eq. 9 instead of Eq. 8
    #[arg(long)]
    loo: bool,
    /// Momentum in [0, 1)
    #[arg(long, value_name = "X", default_value_t = 0.0)]
    momentum: f32,
    /// L2 weight decay on W
    #[arg(long, value_name = "X", default_value_t = 0.0)]
    weight_decay: f32,
    /// Monitor the log-likelihood every N epochs (0: never)
    #[arg(long, value_name = "N", default_value_t = 10)]
    eval_every: usize,
    /// Log-likelihood monitor [default: exact when the smaller layer has ≤ 25 units, else
    /// none; exact works up to 30]
    #[arg(long, value_enum)]
    eval: Option<EvalArg>,
    /// Write the monitored metrics to this JSONL file
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Also monitor the reconstruction error and the full pseudo-log-likelihood of (the
    /// first 1,000 rows of) the training data every --eval-every epochs
    #[arg(long)]
    monitors: bool,
    /// Write the model to this file every --eval-every epochs (and at the end)
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// Start from this model file instead of the Sec. 4.1 initialization
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// Continue the killed or interrupted run whose --checkpoint is FILE, given the same
    /// arguments: the final model is bit-identical to an uninterrupted run's. The checkpoint
    /// goes on being written to FILE (or to --checkpoint), and --log drops its lines after the
    /// checkpoint's epoch and continues
    #[arg(long, value_name = "FILE", conflicts_with = "model")]
    resume: Option<PathBuf>,
    /// Validation data: the train − validation gap of the average log-likelihood (ln Z
    /// cancels) is recorded every --eval-every epochs (frank-wolfe: units) as `gap`; FW's size
    /// selection reads it
    #[arg(long, value_name = "FILE")]
    valid: Option<PathBuf>,
    /// Stop when the gap has grown more than --gap-tol above its minimum (needs --valid):
    /// training ends and the model of that evaluation is written (frank-wolfe: no more units)
    #[arg(long)]
    early_stop: bool,
    /// How far (nats) the gap may rise above its minimum before it counts as grown
    #[arg(long, value_name = "X", default_value_t = 5.0)]
    gap_tol: f64,
    /// Where to write the model (safetensors)
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    fw: Box<fw::FwFlags>,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Args)]
struct EvalArgs {
    /// The model file (safetensors, boltzkit/rbm/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Data of 0/1 values
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    /// How to estimate it [default: exact when the smaller layer has ≤ 30 units, else bracket]
    #[arg(long, value_enum)]
    method: Option<MethodArg>,
    #[command(flatten)]
    binarize: BinarizeArgs,
    #[command(flatten)]
    ais: AisFlags,
    /// RAISE chains per test vector
    #[arg(long, value_name = "M", default_value_t = 1)]
    raise_chains: usize,
    /// RAISE on a seeded random subset of N test vectors [default: all]
    #[arg(long, value_name = "N")]
    raise_vectors: Option<usize>,
    /// Report the bracket at K, 2K, 4K, ... steps up to the schedule's (the standard schedule's
    /// shape, or linear with --ais-steps)
    #[arg(long, value_name = "K")]
    convergence: Option<usize>,
    /// A bracket wider than this many nats is diagnosed as too wide
    #[arg(long, value_name = "X", default_value_t = DEFAULT_MAX_WIDTH)]
    max_width: f64,
    /// Also report the mean-field reconstruction error and the full pseudo-log-likelihood
    /// (every unit) of the data: cheap, deterministic monitors, not log-likelihoods
    #[arg(long)]
    monitors: bool,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Args)]
struct SampleArgs {
    /// The model file (safetensors, boltzkit/rbm/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Number of samples (one Gibbs chain each)
    #[arg(long, short = 'n', value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    samples: u64,
    /// Block Gibbs steps per chain
    #[arg(long, value_name = "K", default_value_t = 1000)]
    gibbs_steps: usize,
    /// Output data file (.npy, .csv, .tsv, .amat; optionally .gz)
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    common: CommonArgs,
}

impl RbmArgs {
    /// Runs the chosen verb.
    pub fn run(self) -> anyhow::Result<()> {
        match self.verb {
            RbmVerb::Fit(a) => a.run(),
            RbmVerb::Eval(a) => a.run(),
            RbmVerb::Sample(a) => a.run(),
            RbmVerb::Features(a) => a.run(),
            RbmVerb::Plot(a) => a.run(),
        }
    }
}

/// Reads a data file of 0/1 values (after the binarization, if any).
pub(crate) fn load_binary(path: &Path, binarize: Binarize) -> anyhow::Result<Dataset> {
    boltzkit_repro::data::read_binary(path, binarize)
}

/// [`load_binary`] of an optional file (`--valid`, `--test`).
pub(crate) fn load_optional(
    path: Option<&PathBuf>,
    binarize: Binarize,
) -> anyhow::Result<Option<Dataset>> {
    path.map(|p| load_binary(p, binarize)).transpose()
}

/// Refuses `--valid`/`--test` files (flag, path, data) whose width differs from `train`'s.
pub(crate) fn check_widths(
    train: &Dataset,
    others: &[(&str, Option<&PathBuf>, Option<&Dataset>)],
) -> anyhow::Result<()> {
    for (flag, path, data) in others {
        if let (Some(path), Some(data)) = (path, data) {
            guard::same_width(flag, path, data.n_vars(), train.n_vars())?;
        }
    }
    Ok(())
}

/// Bytes `rbm fit` needs: the model and the trainer's copies of it (gradient, velocity,
/// packed transposes), `chains` Gibbs chains, the data as f32 rows.
fn fit_memory(nv: u64, nh: u64, chains: u64, rows: u64) -> u64 {
    Rbm::memory_estimate(nv, nh)
        .saturating_mul(5)
        .saturating_add(GibbsChains::memory_estimate(chains, nv, nh).saturating_mul(2))
        .saturating_add(Dataset::memory_estimate(rows, nv).saturating_mul(5))
}

/// Bytes `rbm sample` (and `rbm plot --what samples`) need for `n` chains: the chains, the
/// starting states and the written rows.
pub(crate) fn sample_memory(n: u64, nv: u64, nh: u64) -> u64 {
    GibbsChains::memory_estimate(n, nv, nh)
        .saturating_add(Dataset::memory_estimate(n, nv).saturating_mul(9))
}

fn check_vars(path: &Path, data: &Dataset, rbm: &Rbm) -> anyhow::Result<()> {
    if data.n_vars() != rbm.n_visible() {
        anyhow::bail!(
            "{}: {} variables, the model has {} visible units",
            path.display(),
            data.n_vars(),
            rbm.n_visible()
        );
    }
    Ok(())
}

/// Advances the epoch bar and shows the latest monitored log-likelihood.
struct BarObserver(ProgressBar);

impl<'p> Observer<Progress<'p>> for BarObserver {
    fn observe(&mut self, p: &mut Progress<'p>) -> boltzkit::Result<Control> {
        if let Some(ll) = p.metrics.get("train_ll") {
            self.0.set_message(format!("ll {ll:.4}"));
        }
        if p.epoch > 0 {
            self.0.inc(1);
        }
        Ok(Control::Continue)
    }
}

/// What `rbm fit` reports (Frank-Wolfe reports its own figures).
#[derive(Serialize)]
struct FitSummary {
    data: String,
    samples: usize,
    visible: usize,
    hidden: usize,
    algo: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    resumed_at_epoch: Option<usize>,
    epochs: usize,
    updates: u64,
    stop: String,
    /// `monitor_NAME` for each figure of the last evaluation, when it evaluated the result.
    #[serde(flatten)]
    monitors: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_log_likelihood: Option<f64>,
    learn_s: f64,
    output: String,
}

impl FitArgs {
    fn run(self) -> anyhow::Result<()> {
        if self.algo.family == AlgoArg::FrankWolfe {
            if self.resume.is_some() {
                return Err(
                    UsageError::new("--resume does not apply to --algo frank-wolfe").into(),
                );
            }
            return fw::fit(self);
        }
        let seed = self.common.init()?;
        let centered_or_dcp = matches!(self.algo.family, AlgoArg::Sdcp | AlgoArg::Csdcp);
        if self.inner.is_some() && !centered_or_dcp {
            return Err(UsageError::new("--inner applies only to --algo sdcp and csdcp").into());
        }
        if self.replicas.is_some() && self.algo.family != AlgoArg::Pt {
            return Err(UsageError::new("--replicas applies only to --algo pt").into());
        }
        if self.loo && self.algo.family != AlgoArg::Popcd {
            return Err(UsageError::new("--loo applies only to --algo popcd").into());
        }
        if self.algo.spec.is_some()
            && (self.inner.is_some() || self.replicas.is_some() || self.loo || self.k.is_some())
        {
            return Err(UsageError::new(
                "--algo names the whole algorithm (e.g. sdcp-3-4): give K, D, M and loo in the \
                 name, not as --k, --inner, --replicas, --loo",
            )
            .into());
        }
        let inner = self.inner.unwrap_or(3);
        let replicas = self.replicas.unwrap_or(10);
        let k = self.k.unwrap_or(1);
        let algorithm = match self.algo.family {
            AlgoArg::Cd => Algorithm::Cd { k },
            AlgoArg::Pcd => Algorithm::Pcd { k },
            AlgoArg::Cg => Algorithm::Cg { k },
            AlgoArg::Sdcp => Algorithm::Sdcp { inner, k },
            AlgoArg::Csdcp => Algorithm::CsDcp { inner, k },
            AlgoArg::FrankWolfe => return fw::fit(self),
            AlgoArg::Popcd => Algorithm::PopCd { k, loo: self.loo },
            AlgoArg::Pt => Algorithm::Pt { replicas, k },
        };
        let algorithm = self.algo.spec.unwrap_or(algorithm);
        // (the file's settings record k, inner, replicas and loo from the algorithm)
        let replicas = match algorithm {
            Algorithm::Pt { replicas, .. } => replicas,
            _ => replicas,
        };
        let mut params = TrainParams::new()
            .epochs(self.epochs)
            .algorithm(algorithm)
            .schedule(match self.lr_end {
                Some(end) => LearningRate::Linear {
                    start: self.lr,
                    end,
                },
                None => LearningRate::Constant(self.lr),
            })
            .momentum(self.momentum)
            .weight_decay(self.weight_decay)
            .seed(seed);
        params = if self.batch_size == 0 {
            params.full_batch()
        } else {
            params.batch_size(self.batch_size)
        };
        params.check()?;
        // a resumed run goes on writing its checkpoint where it read it (unless told otherwise)
        let checkpoint = self.checkpoint.as_ref().or(self.resume.as_ref());
        let resume_input = self
            .resume
            .as_deref()
            .filter(|r| Some(*r) != checkpoint.map(|c| c.as_path()));
        guard::model_files(
            &[
                Some(&self.data),
                self.valid.as_deref(),
                self.model.as_deref(),
                resume_input,
            ],
            &[
                ("-o", Some(&self.output)),
                ("--checkpoint", checkpoint.map(|c| c.as_path())),
            ],
            &[self.log.as_deref()],
        )?;
        if let (Some(r), None) = (&self.resume, resume_input) {
            // the checkpoint is read and rewritten in place: it must not be -o or the log
            guard::model_files(
                &[Some(r)],
                &[("-o", Some(&self.output))],
                &[self.log.as_deref()],
            )?;
        }

        let binarize = self.binarize.resolve(derive_seed(seed, 2));
        let data = load_binary(&self.data, binarize)?;
        let valid = load_optional(self.valid.as_ref(), binarize)?;
        check_widths(&data, &[("--valid", self.valid.as_ref(), valid.as_ref())])?;
        if let Some(h) = self.hidden {
            let batch = if self.batch_size == 0 {
                data.n_samples()
            } else {
                self.batch_size
            };
            let chains = batch
                * if matches!(algorithm, Algorithm::Pt { .. }) {
                    replicas
                } else {
                    1
                };
            guard::memory(
                &format!("rbm fit --hidden {h}"),
                fit_memory(
                    data.n_vars() as u64,
                    h as u64,
                    chains as u64,
                    data.n_samples() as u64,
                ),
            )?;
        }
        if self.early_stop && (valid.is_none() || self.eval_every == 0) {
            return Err(
                UsageError::new("--early-stop needs --valid FILE and --eval-every N ≥ 1").into(),
            );
        }
        let data_sha256 = boltzkit::io::sha256_file(&self.data)?;
        let resumed = self
            .resume
            .as_deref()
            .map(|path| read_resume(path, seed, &data_sha256))
            .transpose()?;
        let rbm = match (&self.model, &resumed) {
            (_, Some((file, _))) => {
                let rbm = file.rbm.clone();
                if let Some(h) = self.hidden.filter(|&h| h != rbm.n_hidden()) {
                    return Err(UsageError::new(format!(
                        "--hidden {h} does not match the {} hidden units of --resume",
                        rbm.n_hidden()
                    ))
                    .into());
                }
                check_vars(&self.data, &data, &rbm)?;
                rbm
            }
            (Some(path), None) => {
                let rbm = load_rbm(path)?.rbm;
                if let Some(h) = self.hidden.filter(|&h| h != rbm.n_hidden()) {
                    return Err(UsageError::new(format!(
                        "--hidden {h} does not match the {} hidden units of --model",
                        rbm.n_hidden()
                    ))
                    .into());
                }
                check_vars(&self.data, &data, &rbm)?;
                rbm
            }
            (None, None) => {
                let h = self
                    .hidden
                    .ok_or_else(|| UsageError::new("give --hidden N (or --model FILE)"))?;
                if h == 0 {
                    return Err(UsageError::new("--hidden must be at least 1").into());
                }
                RbmParams::new(h).train(params).check()?.init(&data)?
            }
        };
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        // exact monitoring by default up to 2^25 states per evaluation; asked for, up to the
        // enumeration limit of `rbm eval --method exact`
        let small = nv.min(nh) <= DEFAULT_EXACT_MONITOR_UNITS;
        let eval = self
            .eval
            .unwrap_or(if small { EvalArg::Exact } else { EvalArg::None });
        if eval == EvalArg::Exact && nv.min(nh) > exact::MAX_ENUM_UNITS {
            return Err(UsageError::new(format!(
                "--eval exact needs a layer of at most {} units, the \
                 model is {nv} × {nh} (use --eval ais)",
                exact::MAX_ENUM_UNITS
            ))
            .into());
        }
        let settings = RbmFitSettings {
            algorithm,
            hidden: nh,
            epochs: self.epochs,
            lr: self.lr,
            lr_end: self.lr_end,
            batch_size: self.batch_size,
            momentum: self.momentum,
            weight_decay: self.weight_decay,
            valid: self.valid.as_ref().map(|p| p.display().to_string()),
            early_stop: self.early_stop,
            gap_tol: self.gap_tol,
            binarize,
            init_model: self.model.as_ref().map(|p| p.display().to_string()),
        };
        let data_file = DataFile {
            path: self.data.display().to_string(),
            sha256: data_sha256.clone(),
        };
        let resumed = match (resumed, &self.resume) {
            (Some((file, state)), Some(path)) => {
                check_resumed_settings(path, &file, &settings.to_json())?;
                Some(state)
            }
            _ => None,
        };
        let every = self.eval_every;
        let learner = RbmParams::new(nh).train(params).check()?;
        let mut run: Run<'_, CheckedRbmParams> = Run::new();
        match eval {
            EvalArg::Exact => {
                run = run.observe_every(ExactLogLikelihood::new("train_ll", data.clone()), every)
            }
            EvalArg::Ais | EvalArg::Bracket => {
                let mut obs = AisLogLikelihood::new(
                    "train_ll",
                    data.clone(),
                    AisSchedule::linear(1000)?,
                    100,
                    derive_seed(seed, 3),
                )?;
                if eval == EvalArg::Bracket {
                    obs = obs.bracket(Some(BRACKET_MONITOR_ROWS))?;
                }
                run = run.observe_every(obs, every);
            }
            EvalArg::None => {}
        }
        if let Some(v) = &valid {
            // the gap is recorded either way; it ends training only with --early-stop
            let tol = if self.early_stop {
                self.gap_tol
            } else {
                f64::MAX
            };
            run = run.observe_every(GapEarlyStop::new(data.clone(), v.clone(), tol)?, every);
        }
        if self.monitors {
            let rows: Vec<usize> = (0..data.n_samples().min(MONITOR_ROWS)).collect();
            run = run.observe_every(Monitors::new("train", data.select(&rows)?), every);
        }
        if let Some(path) = checkpoint {
            let meta = BTreeMap::from([
                ("data_file".to_string(), self.data.display().to_string()),
                ("seed".to_string(), seed.to_string()),
                ("data_sha256".to_string(), data_sha256.clone()),
                (CLI_SETTINGS_KEY.to_string(), settings.to_json().to_string()),
            ]);
            run = run.observe_every(Checkpoint::new(path, meta), every);
        }
        if let Some(path) = &self.log {
            let log = match &resumed {
                Some(state) if path.exists() => JsonlLog::resume(path, state.epoch)
                    .with_context(|| format!("continuing the log {}", path.display()))?,
                _ => JsonlLog::create(path)
                    .with_context(|| format!("creating the log {}", path.display()))?,
            };
            run = run.observe_every(log, every);
        }
        let bar = progress::bar(self.epochs as u64, "epochs", self.common.quiet);
        if let Some(state) = &resumed {
            bar.set_position(state.epoch as u64);
        }
        run = run
            .observe(BarObserver(bar.clone()))
            .interrupt(crate::interrupt::flag());
        let resumed_at_epoch = resumed.as_ref().map(|state| state.epoch);
        let outcome = match resumed {
            Some(state) => learner.fit_resumed(rbm, state, &data, run)?,
            None => learner.fit_from(rbm, &data, run)?,
        };
        bar.finish_and_clear();
        let record = &outcome.record;

        let meta = provenance::rbm_fit(
            &settings,
            seed,
            record.epochs,
            &record.stop,
            Some(&data_file),
        );
        write_model(
            &self.output,
            &outcome.model,
            outcome.record.offsets.as_ref(),
            &meta,
        )?;

        // the monitors of the last evaluation, when it evaluated the result: with --eval-every
        // above the epochs run it was the starting model (epoch 0), a stale figure
        let monitors = record
            .history
            .last()
            .filter(|r| r.epoch == record.epochs as u64)
            .map(|last| {
                let named = last
                    .metrics
                    .iter()
                    .map(|(k, v)| (format!("monitor_{k}"), *v));
                named.collect()
            })
            .unwrap_or_default();
        let mut summary = Summary::new("rbm fit", Some(seed));
        summary.extend(&FitSummary {
            data: self.data.display().to_string(),
            samples: data.n_samples(),
            visible: nv,
            hidden: nh,
            algo: algorithm.name().to_string(),
            resumed_at_epoch,
            epochs: record.epochs,
            updates: record.steps,
            stop: record.stop.to_string(),
            monitors,
            avg_log_likelihood: (small || eval == EvalArg::Exact)
                .then(|| exact::average_log_likelihood(&outcome.model, &data))
                .transpose()?,
            learn_s: record.wall_s,
            output: self.output.display().to_string(),
        })?;
        summary.emit(&self.common)?;
        if let StopReason::Interrupted { .. } = record.stop {
            return Err(crate::interrupt::Interrupted(format!(
                "interrupted after {} updates ({} epochs); wrote the last good model to {}",
                record.steps,
                record.epochs,
                self.output.display()
            ))
            .into());
        }
        if let StopReason::Diverged { .. } = record.stop {
            anyhow::bail!(
                "training {}; wrote it to {}",
                record.stop,
                self.output.display()
            );
        }
        Ok(())
    }
}

/// The checkpoint metadata key of `rbm fit`'s settings (the `settings` of its `-o` file),
/// which `--resume` compares with the settings given.
const CLI_SETTINGS_KEY: &str = "cli_settings";

/// Reads the checkpoint of `--resume`: refused (exit 2) when it is not a checkpoint with loop
/// state, when its run finished, or when its seed or data differ from the ones given.
fn read_resume(
    path: &Path,
    seed: u64,
    data_sha256: &str,
) -> anyhow::Result<(boltzkit::rbm::file::RbmFile, TrainState)> {
    let (file, state) = load_checkpoint(path)
        .with_context(|| format!("reading the checkpoint {}", path.display()))?;
    let shown = path.display();
    if let Some(stop) = file.metadata.get("stop_reason") {
        return Err(UsageError::new(format!(
            "--resume {shown}: the run it records already finished ({stop}); nothing to resume"
        ))
        .into());
    }
    let Some(state) = state else {
        return Err(UsageError::new(format!(
            "--resume {shown}: not a checkpoint with loop state (write one with `rbm fit \
             --checkpoint FILE --eval-every N`)"
        ))
        .into());
    };
    let meta = |key: &str| file.metadata.get(key).map(String::as_str).unwrap_or("none");
    if meta("seed") != seed.to_string() {
        return Err(UsageError::new(format!(
            "--resume {shown}: the checkpoint's seed is {}, the run was given --seed {seed}",
            meta("seed")
        ))
        .into());
    }
    if meta("data_sha256") != data_sha256 {
        return Err(UsageError::new(format!(
            "--resume {shown}: the checkpoint was trained on other data (sha256 {}, --data has \
             {data_sha256})",
            meta("data_sha256")
        ))
        .into());
    }
    Ok((file, state))
}

/// Refuses a `--resume` whose checkpoint recorded other settings, naming each that differs.
fn check_resumed_settings(
    path: &Path,
    file: &boltzkit::rbm::file::RbmFile,
    settings: &serde_json::Value,
) -> anyhow::Result<()> {
    let saved: serde_json::Value = file
        .metadata
        .get(CLI_SETTINGS_KEY)
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or(serde_json::Value::Null);
    // both sides through the same text and parser, so equal settings compare equal
    let given: serde_json::Value =
        serde_json::from_str(&settings.to_string()).unwrap_or(serde_json::Value::Null);
    let empty = serde_json::Map::new();
    let (given, saved_map) = (
        given.as_object().unwrap_or(&empty),
        saved.as_object().unwrap_or(&empty),
    );
    let differ: Vec<String> = given
        .iter()
        .filter(|(k, v)| saved_map.get(*k) != Some(*v))
        .map(|(k, v)| {
            let was = saved_map
                .get(k)
                .map_or("none".to_string(), |s| s.to_string());
            format!("{k} (checkpoint {was}, given {v})")
        })
        .collect();
    if !differ.is_empty() {
        return Err(UsageError::new(format!(
            "--resume {}: the settings differ from the checkpoint's: {}",
            path.display(),
            differ.join(", ")
        ))
        .into());
    }
    Ok(())
}

fn write_model(
    path: &Path,
    rbm: &Rbm,
    offsets: Option<&Offsets>,
    meta: &BTreeMap<String, String>,
) -> anyhow::Result<()> {
    save_rbm(path, rbm, offsets, meta)
        .with_context(|| format!("writing the model to {}", path.display()))
}

/// What `rbm eval` reports (its `--json` fields after `command` and `seed`, in order).
#[derive(Debug, Default, Serialize)]
struct EvalReport {
    model: String,
    data: String,
    samples: usize,
    visible: usize,
    hidden: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    reconstruction_error: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pseudo_log_likelihood: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<Method>,
    /// Forward AIS chains (or data-row starts).
    #[serde(skip_serializing_if = "Option::is_none")]
    chains: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    steps: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    raise_chains: Option<usize>,
    /// Test vectors RAISE scored.
    #[serde(skip_serializing_if = "Option::is_none")]
    raise_vectors: Option<usize>,
    /// The figure of exact, ais, raise and reverse-ais-from-data.
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_log_likelihood: Option<f64>,
    /// Its standard error (raise).
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_log_likelihood_se: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_z: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_z_se: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_z_lower: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_z_upper: Option<f64>,
    /// The bracket's conservative end.
    #[serde(skip_serializing_if = "Option::is_none")]
    raise: Option<Estimate>,
    /// The bracket's optimistic end.
    #[serde(skip_serializing_if = "Option::is_none")]
    ais: Option<Estimate>,
    /// Forward AIS − RAISE.
    #[serde(skip_serializing_if = "Option::is_none")]
    bracket_width: Option<f64>,
    /// The bracket's diagnosis, one plain line.
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnosis: Option<String>,
    /// The bracket at each level of --convergence.
    #[serde(skip_serializing_if = "Option::is_none")]
    convergence: Option<Vec<Bracket>>,
}

impl EvalReport {
    /// Fills the figures of `est`: method, the figure or the bracket's ends, ln Z.
    fn set_estimate(&mut self, est: &LogLikelihood) {
        self.method = Some(est.method());
        if let Some(z) = est.log_z() {
            self.log_z = Some(z.value);
            if !z.is_exact() {
                self.log_z_se = Some(z.stderr);
                self.log_z_lower = Some(z.lower);
                self.log_z_upper = Some(z.upper);
            }
        }
        match est {
            LogLikelihood::Bracket(b) => {
                self.raise_vectors = Some(b.raise_vectors);
                self.raise = Some(b.raise);
                self.ais = Some(b.ais);
                self.bracket_width = Some(b.width());
                self.diagnosis = Some(b.diagnosis.to_string());
            }
            LogLikelihood::Raise { ll, raise_vectors } => {
                self.raise_vectors = Some(*raise_vectors);
                self.avg_log_likelihood = Some(ll.value);
                self.avg_log_likelihood_se = Some(ll.stderr);
            }
            other => self.avg_log_likelihood = Some(other.lower().value),
        }
    }
}

impl EvalArgs {
    fn run(self) -> anyhow::Result<()> {
        let (chains, steps) = self.ais.resolve()?;
        let file = load_rbm(&self.model)?;
        let rbm = file.rbm;
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let small = nv.min(nh) <= MAX_ENUM_UNITS;
        let method = self
            .method
            .unwrap_or(if small {
                MethodArg::Exact
            } else {
                MethodArg::Bracket
            })
            .method();
        let seed = match method {
            Method::Exact if self.binarize.is_random() => Some(self.common.init()?),
            Method::Exact => {
                self.common.init_threads()?;
                None
            }
            _ => Some(self.common.init()?),
        };
        let mut summary = Summary::new("rbm eval", seed);
        if method == Method::Exact && !small {
            return Err(UsageError::new(format!(
                "--method exact needs a layer of at most {MAX_ENUM_UNITS} units, the model is \
                 {nv} × {nh} (use --method bracket)"
            ))
            .into());
        }
        if self.convergence.is_some() && method != Method::Bracket {
            return Err(UsageError::new("--convergence applies only to --method bracket").into());
        }
        if method != Method::Exact && chains == 0 {
            return Err(UsageError::new("--ais-chains must be at least 1").into());
        }
        if method != Method::Exact {
            guard::memory(
                &format!("rbm eval --ais-chains {chains}"),
                GibbsChains::memory_estimate(chains as u64, nv as u64, nh as u64).saturating_mul(2),
            )?;
        }
        let binarize = self.binarize.resolve(derive_seed(seed.unwrap_or(0), 2));
        let data = load_binary(&self.data, binarize)?;
        check_vars(&self.data, &data, &rbm)?;
        let mut report = EvalReport {
            model: self.model.display().to_string(),
            data: self.data.display().to_string(),
            samples: data.n_samples(),
            visible: nv,
            hidden: nh,
            ..EvalReport::default()
        };
        if self.monitors {
            report.reconstruction_error = Some(monitor::reconstruction_error(&rbm, &data)?);
            report.pseudo_log_likelihood = Some(monitor::pseudo_log_likelihood(&rbm, &data)?);
        }
        // a level of K steps: linear with --ais-steps, else the standard schedule's shape
        let schedule = |k: usize| match steps {
            Some(_) => AisSchedule::linear(k),
            None => AisSchedule::standard_shaped(k),
        };
        let final_schedule = match steps {
            Some(k) => AisSchedule::linear(k)?,
            None => AisSchedule::standard(),
        };
        let params = LogLikParams::new(method)
            .schedule(final_schedule.clone())
            .chains(chains)
            .raise_chains(self.raise_chains)
            .raise_vectors(self.raise_vectors)
            .max_width(self.max_width)
            .seed(seed.unwrap_or(0));
        params.check()?;
        if method != Method::Exact {
            report.steps = Some(final_schedule.steps());
        }
        if matches!(
            method,
            Method::Ais | Method::Bracket | Method::ReverseAisFromData
        ) {
            report.chains = Some(chains);
        }
        if matches!(method, Method::Raise | Method::Bracket) {
            report.raise_chains = Some(self.raise_chains);
        }
        let spin = progress::spinner(method.name(), self.common.quiet);
        if let Some(first) = self.convergence {
            let levels = convergence_steps(first, final_schedule.steps())?
                .into_iter()
                .map(schedule)
                .collect::<boltzkit::Result<Vec<_>>>()?;
            let brackets = bracket_convergence(&rbm, &data, &params, &levels)?;
            if let Some(last) = brackets.last() {
                report.set_estimate(&LogLikelihood::Bracket(last.clone()));
            }
            report.convergence = Some(brackets);
        } else {
            report.set_estimate(&average_log_likelihood(&rbm, &data, &params)?);
        }
        spin.finish_and_clear();
        if !self.common.json && !self.common.quiet {
            for b in report.convergence.iter().flatten() {
                eprintln!(
                    "{:>6} steps: RAISE {:.4} ± {:.4}, AIS {:.4} ± {:.4}, width {:.4}",
                    b.steps,
                    b.raise.value,
                    b.raise.stderr,
                    b.ais.value,
                    b.ais.stderr,
                    b.width()
                );
            }
        }
        summary.extend(&report)?.emit(&self.common)
    }
}

impl SampleArgs {
    fn run(self) -> anyhow::Result<()> {
        let seed = self.common.init()?;
        let rbm = load_rbm(&self.model)?.rbm;
        let nv = rbm.n_visible();
        guard::distinct_files(&[Some(&self.model)], &[Some(&self.output)])?;
        guard::memory(
            &format!("rbm sample -n {}", self.samples),
            sample_memory(self.samples, nv as u64, rbm.n_hidden() as u64),
        )?;
        let n =
            usize::try_from(self.samples).map_err(|_| UsageError::new("--samples is too large"))?;
        let v = gibbs_samples(&rbm, n, self.gibbs_steps, seed, self.common.quiet)?;
        write_samples(&self.output, &v, nv)?;
        let mut report = SampleSummary::new(&self.model, n, &self.output);
        report.gibbs_steps = Some(self.gibbs_steps);
        Summary::new("rbm sample", Some(seed))
            .extend(&report)?
            .emit(&self.common)
    }
}

/// [`sample_from_uniform`] with a progress bar (unless `quiet`).
fn gibbs_samples(
    rbm: &Rbm,
    n: usize,
    steps: usize,
    seed: u64,
    quiet: bool,
) -> anyhow::Result<Vec<f32>> {
    let bar = progress::bar(steps as u64, "gibbs steps", quiet);
    let v = sample_from_uniform(rbm, n, steps, seed, &mut |_| bar.inc(1))?;
    bar.finish_and_clear();
    Ok(v)
}

/// Writes 0/1 rows of width `nv` to `path` in the format its name asks for.
fn write_samples(path: &Path, v: &[f32], nv: usize) -> anyhow::Result<()> {
    let data = states_to_dataset(v, nv)?;
    write_dataset(path, &data).context("cannot write the samples")
}
