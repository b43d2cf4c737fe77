//! `boltzkit rbm`: train, evaluate and sample restricted Boltzmann machines.

use crate::args::{renamed, BinarizeArgs, CommonArgs};
use crate::exit::UsageError;
use crate::guard;
use crate::progress;
use crate::report::{f32_value, Summary};
use anyhow::Context;
use boltzkit::data::{write_dataset, Binarize, Dataset};
use boltzkit::rbm::ais::{
    ais_log_partition, data_starts, reverse_ais_log_partition, AisEstimate, AisSchedule,
};
use boltzkit::rbm::exact::{self, MAX_ENUM_UNITS};
use boltzkit::rbm::file::{load_rbm, save_rbm, Offsets};
use boltzkit::rbm::gibbs::sample_from_uniform;
use boltzkit::rbm::model::states_to_dataset;
use boltzkit::rbm::train::early_stop::GapEarlyStop;
use boltzkit::rbm::train::{
    AisLogLikelihood, Algorithm, Checkpoint, ExactLogLikelihood, JsonlLog, LearningRate, Monitors,
    Observer, Progress, StopReason, TrainParams, Trainer, MAX_EXACT_OBSERVER_UNITS,
};
use boltzkit::rbm::{base_rate_biases, mean_neg_free_energy, monitor, GibbsChains, Rbm};
use boltzkit::rng::{derive_seed, rng_from_seed};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::ProgressBar;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod fw;
mod plot;

/// Rows of the training data `rbm fit --monitors` evaluates.
const MONITOR_ROWS: usize = 1000;

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
        log-likelihood when the smaller layer has at most 25 units, and the wall time. A run \
        that diverges exits 1 but still writes the last good model to -o.\n\n\
        Example:\n  boltzkit rbm fit --data bas.csv --algo sdcp --hidden 4 --epochs 200 \
        --lr 0.1 --batch-size 0 --k 1 --inner 3 -o m.safetensors --seed 1"
    )]
    Fit(FitArgs),
    /// Average log-likelihood of data and ln Z of a model (exact or AIS)
    #[command(
        long_about = "Evaluate a model on data: the average log-likelihood (nats per \
        sample) and ln Z, by enumeration of the smaller layer (exact, ≤ 30 units), by \
        annealed importance sampling from the base-rate model (ais: ln Z, its standard error \
        and the ±3σ interval; on average AIS underestimates ln Z, so its log-likelihood is \
        optimistic), or by both AIS and reverse AIS started at --ais-chains data rows (raise, \
        Burda et al. 2015 with the weights of Upadhya & Sastry 2015: the reverse estimate \
        errs the other way when its starts are model samples; from data rows it is an \
        approximation, and the gap between the two shows how far either can be trusted).\n\n\
        Examples:\n  boltzkit rbm eval --model m.safetensors --data bas.csv --method exact\n  \
        boltzkit rbm eval --model mnist.safetensors --data test.amat.gz --method raise --json"
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
    /// No monitoring
    None,
}

/// How `rbm eval` computes ln Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum MethodArg {
    /// Enumeration of the smaller layer (≤ 30 units)
    Exact,
    /// Annealed importance sampling
    Ais,
    /// Forward AIS and reverse AIS started at data rows (RAISE), both estimates reported
    Raise,
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
    /// Learning rate
    #[arg(long, value_name = "X", default_value_t = 0.01)]
    lr: f32,
    /// Decay the learning rate linearly from --lr at the first epoch to this value at the last
    #[arg(long, value_name = "X")]
    lr_end: Option<f32>,
    /// Mini-batch rows (0 = the full batch)
    #[arg(long, value_name = "N", default_value_t = 100)]
    batch_size: usize,
    /// Gibbs steps per estimate (K; K′ per inner step for sdcp, csdcp)
    #[arg(long, value_name = "N", default_value_t = 1)]
    k: usize,
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
    /// Log-likelihood monitor [default: exact when the smaller layer has ≤ 25 units, else none]
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
    /// How to compute ln Z [default: exact when the smaller layer has ≤ 30 units, else ais]
    #[arg(long, value_enum)]
    method: Option<MethodArg>,
    #[command(flatten)]
    binarize: BinarizeArgs,
    /// AIS chains [default: 100]
    #[arg(long, value_name = "N")]
    ais_chains: Option<usize>,
    /// AIS steps of a linear schedule [default: the standard 14,500-step schedule]
    #[arg(long, value_name = "N")]
    ais_steps: Option<usize>,
    /// The old name of --ais-chains
    #[arg(long = "chains", value_name = "N", hide = true)]
    chains_alias: Option<usize>,
    /// The old name of --ais-steps
    #[arg(long = "steps", value_name = "N", hide = true)]
    steps_alias: Option<usize>,
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

impl Observer for BarObserver {
    fn observe(&mut self, p: &mut Progress<'_>) -> boltzkit::Result<()> {
        if let Some(ll) = p.metrics.get("train_ll") {
            self.0.set_message(format!("ll {ll:.4}"));
        }
        if p.epoch > 0 {
            self.0.inc(1);
        }
        Ok(())
    }
}

impl FitArgs {
    fn run(self) -> anyhow::Result<()> {
        if self.algo.family == AlgoArg::FrankWolfe {
            return fw::fit(self);
        }
        let seed = self.common.init()?;
        let mut summary = Summary::new("rbm fit", Some(seed));
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
            && (self.inner.is_some() || self.replicas.is_some() || self.loo || self.k != 1)
        {
            return Err(UsageError::new(
                "--algo names the whole algorithm (e.g. sdcp-3-4): give K, D, M and loo in the \
                 name, not as --k, --inner, --replicas, --loo",
            )
            .into());
        }
        let inner = self.inner.unwrap_or(3);
        let replicas = self.replicas.unwrap_or(10);
        let k = self.k;
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
        let (k, inner, replicas) = match algorithm {
            Algorithm::Sdcp { inner, k } | Algorithm::CsDcp { inner, k } => (k, inner, replicas),
            Algorithm::Pt { replicas, k } => (k, inner, replicas),
            Algorithm::Cd { k }
            | Algorithm::Pcd { k }
            | Algorithm::Cg { k }
            | Algorithm::PopCd { k, .. } => (k, inner, replicas),
        };
        let loo = matches!(algorithm, Algorithm::PopCd { loo: true, .. });
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
            .seed(derive_seed(seed, 1));
        params = if self.batch_size == 0 {
            params.full_batch()
        } else {
            params.batch_size(self.batch_size)
        };
        params.check()?;
        guard::model_files(
            &[
                Some(&self.data),
                self.valid.as_deref(),
                self.model.as_deref(),
            ],
            &[
                ("-o", Some(&self.output)),
                ("--checkpoint", self.checkpoint.as_deref()),
            ],
            &[self.log.as_deref()],
        )?;

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
        let rbm = match &self.model {
            Some(path) => {
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
            None => {
                let h = self
                    .hidden
                    .ok_or_else(|| UsageError::new("give --hidden N (or --model FILE)"))?;
                if h == 0 {
                    return Err(UsageError::new("--hidden must be at least 1").into());
                }
                Rbm::init_from_data(&data, h, 0.01, &mut rng_from_seed(derive_seed(seed, 0)))?
            }
        };
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let small = nv.min(nh) <= MAX_EXACT_OBSERVER_UNITS;
        let eval = self
            .eval
            .unwrap_or(if small { EvalArg::Exact } else { EvalArg::None });
        if eval == EvalArg::Exact && !small {
            return Err(UsageError::new(format!(
                "--eval exact needs a layer of at most {MAX_EXACT_OBSERVER_UNITS} units, the \
                 model is {nv} × {nh} (use --eval ais)"
            ))
            .into());
        }
        summary
            .set("data", self.data.display().to_string())
            .set("samples", data.n_samples())
            .set("visible", nv)
            .set("hidden", nh)
            .set("algo", algorithm.name());

        let every = self.eval_every;
        let mut trainer = Trainer::new(rbm, &data, params)?;
        match eval {
            EvalArg::Exact => {
                trainer =
                    trainer.add_observer(ExactLogLikelihood::new("train_ll", data.clone()), every)
            }
            EvalArg::Ais => {
                let obs = AisLogLikelihood::new(
                    "train_ll",
                    data.clone(),
                    AisSchedule::linear(1000)?,
                    100,
                    derive_seed(seed, 3),
                )?;
                trainer = trainer.add_observer(obs, every);
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
            trainer = trainer.add_observer(GapEarlyStop::new(data.clone(), v.clone(), tol)?, every);
        }
        if self.monitors {
            let rows: Vec<usize> = (0..data.n_samples().min(MONITOR_ROWS)).collect();
            trainer = trainer.add_observer(Monitors::new("train", data.select(&rows)?), every);
        }
        if let Some(path) = &self.checkpoint {
            let meta = BTreeMap::from([
                ("data_file".to_string(), self.data.display().to_string()),
                ("seed".to_string(), seed.to_string()),
            ]);
            trainer = trainer.add_observer(Checkpoint::new(path, meta), every);
        }
        if let Some(path) = &self.log {
            let log = JsonlLog::create(path)
                .with_context(|| format!("creating the log {}", path.display()))?;
            trainer = trainer.add_observer(log, every);
        }
        let bar = progress::bar(self.epochs as u64, "epochs", self.common.quiet);
        trainer = trainer
            .add_observer(BarObserver(bar.clone()), 1)
            .interrupt(crate::interrupt::flag());
        let outcome = trainer.run()?;
        bar.finish_and_clear();
        let record = &outcome.record;

        let settings = json!({
            "algo": algorithm.name(), "hidden": nh, "epochs": self.epochs, "lr": f32_value(self.lr),
            "lr_end": self.lr_end.map(f32_value),
            "batch_size": self.batch_size, "k": k,
            "inner": if centered_or_dcp { Some(inner) } else { None },
            "replicas": if self.algo.family == AlgoArg::Pt { Some(replicas) } else { None },
            "loo": loo,
            "valid": self.valid.as_ref().map(|p| p.display().to_string()),
            "early_stop": self.early_stop, "gap_tol": self.gap_tol,
            "momentum": f32_value(self.momentum), "weight_decay": f32_value(self.weight_decay),
            "binarize": format!("{:?}", self.binarize),
            "init_model": self.model.as_ref().map(|p| p.display().to_string()),
        });
        let mut meta = BTreeMap::new();
        meta.insert("algorithm".to_string(), algorithm.name().to_string());
        meta.insert("settings".into(), settings.to_string());
        meta.insert("seed".into(), seed.to_string());
        meta.insert("data_file".into(), self.data.display().to_string());
        meta.insert("data_sha256".into(), boltzkit::io::sha256_file(&self.data)?);
        meta.insert("epochs_done".into(), record.epochs.to_string());
        meta.insert("stop_reason".into(), record.stop.to_string());
        write_model(&self.output, &outcome.rbm, outcome.offsets.as_ref(), &meta)?;

        summary
            .set("epochs", record.epochs)
            .set("updates", record.steps)
            .set("stop", record.stop.to_string());
        // the monitors of the last evaluation, when it evaluated the result: with --eval-every
        // above the epochs run it was the starting model (epoch 0), a stale figure
        if let Some(last) = record
            .history
            .last()
            .filter(|r| r.epoch == record.epochs as u64)
        {
            for (key, v) in &last.metrics {
                summary.set(format!("monitor_{key}"), *v);
            }
        }
        if small {
            summary.set(
                "avg_log_likelihood",
                exact::average_log_likelihood(&outcome.rbm, &data)?,
            );
        }
        summary
            .set("learn_s", record.wall_s)
            .set("output", self.output.display().to_string());
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

fn write_model(
    path: &Path,
    rbm: &Rbm,
    offsets: Option<&Offsets>,
    meta: &BTreeMap<String, String>,
) -> anyhow::Result<()> {
    save_rbm(path, rbm, offsets, meta)
        .with_context(|| format!("writing the model to {}", path.display()))
}

impl EvalArgs {
    fn run(self) -> anyhow::Result<()> {
        let chains =
            renamed(self.ais_chains, self.chains_alias, "ais-chains", "chains")?.unwrap_or(100);
        let steps = renamed(self.ais_steps, self.steps_alias, "ais-steps", "steps")?;
        let file = load_rbm(&self.model)?;
        let rbm = file.rbm;
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let method = self.method.unwrap_or(if nv.min(nh) <= MAX_ENUM_UNITS {
            MethodArg::Exact
        } else {
            MethodArg::Ais
        });
        let seed = match method {
            MethodArg::Ais | MethodArg::Raise => Some(self.common.init()?),
            MethodArg::Exact if self.binarize.is_random() => Some(self.common.init()?),
            MethodArg::Exact => {
                self.common.init_threads()?;
                None
            }
        };
        if method == MethodArg::Exact && nv.min(nh) > MAX_ENUM_UNITS {
            return Err(UsageError::new(format!(
                "--method exact needs a layer of at most {MAX_ENUM_UNITS} units, the model is \
                 {nv} × {nh} (use --method ais or raise)"
            ))
            .into());
        }
        if method != MethodArg::Exact && chains == 0 {
            return Err(UsageError::new("--ais-chains must be at least 1").into());
        }
        if method != MethodArg::Exact {
            guard::memory(
                &format!("rbm eval --ais-chains {chains}"),
                GibbsChains::memory_estimate(chains as u64, nv as u64, nh as u64).saturating_mul(2),
            )?;
        }
        let binarize = self.binarize.resolve(derive_seed(seed.unwrap_or(0), 2));
        let data = load_binary(&self.data, binarize)?;
        check_vars(&self.data, &data, &rbm)?;
        let mut summary = Summary::new("rbm eval", seed);
        summary
            .set("model", self.model.display().to_string())
            .set("data", self.data.display().to_string())
            .set("samples", data.n_samples())
            .set("visible", nv)
            .set("hidden", nh);
        if self.monitors {
            summary
                .set(
                    "reconstruction_error",
                    monitor::reconstruction_error(&rbm, &data)?,
                )
                .set(
                    "pseudo_log_likelihood",
                    monitor::pseudo_log_likelihood(&rbm, &data)?,
                );
        }
        let nfe = mean_neg_free_energy(&rbm, &data)?;
        let seed = seed.unwrap_or(0);
        if method == MethodArg::Exact {
            let log_z = exact::log_partition(&rbm)?;
            summary
                .set("method", "exact")
                .set("avg_log_likelihood", nfe - log_z)
                .set("log_z", log_z);
            return summary.emit(&self.common);
        }
        let schedule = match steps {
            Some(k) => AisSchedule::linear(k)?,
            None => AisSchedule::standard(),
        };
        let base_b = base_rate_biases(&data)?;
        let spin = progress::spinner("AIS", self.common.quiet);
        let forward = ais_log_partition(&rbm, &base_b, &schedule, chains, seed)?;
        summary
            .set(
                "method",
                if method == MethodArg::Ais {
                    "ais"
                } else {
                    "raise"
                },
            )
            .set("chains", chains)
            .set("steps", schedule.betas().len() - 1);
        set_estimate(&mut summary, "", &forward, nfe);
        if method == MethodArg::Raise {
            spin.set_message("reverse AIS");
            let starts = data_starts(&data, chains, derive_seed(seed, 1))?;
            let reverse =
                reverse_ais_log_partition(&rbm, &base_b, &schedule, &starts, derive_seed(seed, 2))?;
            set_estimate(&mut summary, "reverse_", &reverse, nfe);
        }
        spin.finish_and_clear();
        summary.emit(&self.common)
    }
}

/// Sets `{prefix}log_z`, its standard error, the ±3σ interval and the average
/// log-likelihood `mean(−F(v)) − ln Ẑ` from an AIS estimate.
fn set_estimate(summary: &mut Summary, prefix: &str, est: &AisEstimate, nfe: f64) {
    summary
        .set(format!("{prefix}avg_log_likelihood"), nfe - est.log_z)
        .set(format!("{prefix}log_z"), est.log_z)
        .set(format!("{prefix}log_z_se"), est.std_err)
        .set(format!("{prefix}log_z_lower"), est.log_z_lower)
        .set(format!("{prefix}log_z_upper"), est.log_z_upper);
}

impl SampleArgs {
    fn run(self) -> anyhow::Result<()> {
        let seed = self.common.init()?;
        let mut summary = Summary::new("rbm sample", Some(seed));
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
        summary
            .set("model", self.model.display().to_string())
            .set("samples", n)
            .set("gibbs_steps", self.gibbs_steps)
            .set("output", self.output.display().to_string());
        summary.emit(&self.common)
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
