//! `boltzkit rbm fit` with every trainer but Frank-Wolfe (`fw.rs`), as parse → plan → run →
//! print: the flags (clap) → [`FitArgs::plan`] (every setting, output, data file, resumed
//! checkpoint and the starting model checked before any training: a refusal costs nothing) →
//! [`FitPlan::train`] (the observers and the trainer) → [`FitPlan::print`] (the model file,
//! the summary, the exit status).

use super::fw_flags::FwFlags;
use super::input::{check_vars, check_widths, load_binary, load_optional};
use super::resume::{check_resumed_settings, read_resume, CLI_SETTINGS_KEY};
use crate::args::{BinarizeArgs, CommonArgs};
use crate::exit::UsageError;
use crate::guard;
use crate::progress;
use crate::report::Summary;
use crate::training_outputs::{after_training, StopOnWriteFailure, WriteFailures};
use anyhow::Context;
use boltzkit::data::{Binarize, Dataset};
use boltzkit::fit::{Control, Run};
use boltzkit::provenance::{self, DataFile};
use boltzkit::rbm::eval_settings::EvalParams;
use boltzkit::rbm::exact;
use boltzkit::rbm::file::{load_rbm, save_rbm, RbmFile};
use boltzkit::rbm::train::early_stop::GapEarlyStop;
use boltzkit::rbm::train::{
    AisLogLikelihood, Algorithm, CheckedRbmParams, Checkpoint, ExactLogLikelihood, JsonlLog,
    Monitors, Observer, Progress, RbmParams, StopReason, TrainOutcome, TrainState,
    DEFAULT_EXACT_MONITOR_UNITS,
};
use boltzkit::rbm::{GibbsChains, Rbm};
use boltzkit::rng::derive_seed;
use clap::{Args, ValueEnum};
use indicatif::ProgressBar;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Rows of the training data `rbm fit --monitors` evaluates.
const MONITOR_ROWS: usize = 1000;

/// Training rows RAISE scores for `rbm fit --eval bracket`.
const BRACKET_MONITOR_ROWS: usize = 100;

/// The training algorithm of `rbm fit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum AlgoArg {
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
    pub(super) family: AlgoArg,
    pub(super) spec: Option<Algorithm>,
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
pub(super) enum EvalArg {
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

#[derive(Debug, Args)]
pub(super) struct FitArgs {
    /// Training data (.npy, .csv, .tsv, IDX, .amat; .gz read transparently)
    #[arg(long, value_name = "FILE")]
    pub(super) data: PathBuf,
    #[command(flatten)]
    pub(super) binarize: BinarizeArgs,
    /// Training algorithm: a family, cd, pcd, cg, sdcp, csdcp, popcd, pt (settings from --k,
    /// --inner, --replicas, --loo) or frank-wolfe; or one name in the library's notation:
    /// cd-K, pcd-K, sdcp-D-K, cg-K, csdcp-D-K, popcd-K, popcd-K-loo, pt-M, pt-M-K
    #[arg(long, value_name = "ALGO", default_value = "cd", value_parser = parse_algo)]
    pub(super) algo: AlgoChoice,
    /// Hidden units (required without --model)
    #[arg(long, value_name = "N")]
    pub(super) hidden: Option<usize>,
    #[command(flatten)]
    pub(super) train: TrainFlags,
    /// Gibbs steps per estimate (K; K′ per inner step for sdcp, csdcp; frank-wolfe: per draw
    /// of the chains) [default: 1; frank-wolfe: 3, measured: on Caltech101 K = 1 lets the
    /// grown model fall to −827 nats at 20 units where K = 3 reaches −287]
    #[arg(long, value_name = "N")]
    pub(super) k: Option<usize>,
    /// Inner steps d of sdcp and csdcp [default: 3]
    #[arg(long, value_name = "D")]
    pub(super) inner: Option<usize>,
    /// Replicas M of pt (inverse temperatures uniform in [0, 1]) [default: 10]
    #[arg(long, value_name = "M")]
    pub(super) replicas: Option<usize>,
    /// popcd: the leave-one-out weights of Eq. 9 instead of Eq. 8
    #[arg(long)]
    pub(super) loo: bool,
    /// Monitor the log-likelihood every N epochs (0: never)
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub(super) eval_every: usize,
    /// Log-likelihood monitor [default: exact when the smaller layer has ≤ 25 units, else
    /// none; exact works up to 30]
    #[arg(long, value_enum)]
    pub(super) eval: Option<EvalArg>,
    /// Write the monitored metrics to this JSONL file
    #[arg(long, value_name = "FILE")]
    pub(super) log: Option<PathBuf>,
    /// Also monitor the reconstruction error and the full pseudo-log-likelihood of (the
    /// first 1,000 rows of) the training data every --eval-every epochs
    #[arg(long)]
    pub(super) monitors: bool,
    /// Write the model to this file every --eval-every epochs (and at the end)
    #[arg(long, value_name = "FILE")]
    pub(super) checkpoint: Option<PathBuf>,
    /// Start from this model file instead of the Sec. 4.1 initialization
    #[arg(long, value_name = "FILE")]
    pub(super) model: Option<PathBuf>,
    /// Continue the killed or interrupted run whose --checkpoint is FILE, given the same
    /// arguments: the final model is bit-identical to an uninterrupted run's. The checkpoint
    /// goes on being written to FILE (or to --checkpoint), and --log drops its lines after the
    /// checkpoint's epoch and continues
    #[arg(long, value_name = "FILE", conflicts_with = "model")]
    pub(super) resume: Option<PathBuf>,
    /// Validation data: the train − validation gap of the average log-likelihood (ln Z
    /// cancels) is recorded every --eval-every epochs (frank-wolfe: units) as `gap`; FW's size
    /// selection reads it
    #[arg(long, value_name = "FILE")]
    pub(super) valid: Option<PathBuf>,
    /// Stop when the gap has grown more than --gap-tol above its minimum (needs --valid):
    /// training ends and the model of that evaluation is written (frank-wolfe: no more units)
    #[arg(long)]
    pub(super) early_stop: bool,
    /// How far (nats) the gap may rise above its minimum before it counts as grown
    #[arg(long, value_name = "X", default_value_t = 5.0)]
    pub(super) gap_tol: f64,
    /// Where to write the model (safetensors)
    #[arg(short, long, value_name = "FILE")]
    pub(super) output: PathBuf,
    #[command(flatten)]
    pub(super) units: Box<super::units_flags::UnitFlags>,
    #[command(flatten)]
    pub(super) fw: Box<FwFlags>,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

/// The trainer's settings as flags: serialized under the settings' names ([`RbmParams`], the
/// one schema) and put over its defaults ([`boltzkit::settings::overlay`]), each default the
/// struct's. A new setting of the trainer with a flag is one field here.
#[derive(Debug, Args, Serialize)]
pub(super) struct TrainFlags {
    /// Passes over the data
    #[arg(long, value_name = "N", default_value_t = RbmParams::default().train.epochs)]
    #[serde(rename = "n_epochs")]
    pub(super) epochs: usize,
    /// Learning rate (the default measured best at 100 epochs, batch 100: BENCHMARKS.md,
    /// "Default learning rate")
    #[arg(long, value_name = "X", default_value_t = RbmParams::default().train.learning_rate)]
    #[serde(rename = "learning_rate")]
    pub(super) lr: f32,
    /// Decay the learning rate linearly from --lr at the first epoch to this value at the last
    #[arg(long, value_name = "X")]
    #[serde(rename = "learning_rate_end")]
    pub(super) lr_end: Option<f32>,
    /// Mini-batch rows (0 = the full batch)
    #[arg(long, value_name = "N",
          default_value_t = RbmParams::default().train.batch_size.unwrap_or(0))]
    pub(super) batch_size: usize,
    /// Momentum in [0, 1)
    #[arg(long, value_name = "X", default_value_t = RbmParams::default().train.momentum)]
    pub(super) momentum: f32,
    /// L2 weight decay on W
    #[arg(long, value_name = "X", default_value_t = RbmParams::default().train.weight_decay)]
    pub(super) weight_decay: f32,
    /// The divergence guard's bound: a parameter larger in magnitude (or not finite) stops
    /// the run as diverged, keeping the last good model
    #[arg(long, value_name = "X", default_value_t = RbmParams::default().train.max_abs_param)]
    pub(super) max_abs_param: f32,
    /// Stop as diverged, keeping the best model, when the watched pseudo-likelihood (or the
    /// monitored log-likelihood) falls below its best by more than this fraction of the
    /// independent-units model's figure (0: no watch)
    #[arg(long, value_name = "FRACTION",
          default_value_t = RbmParams::default().train.divergence_tol)]
    pub(super) divergence_tol: f32,
}

/// Bytes `rbm fit` needs: the model and the trainer's copies of it (gradient, velocity,
/// packed transposes), `chains` Gibbs chains, the data as f32 rows.
fn fit_memory(nv: u64, nh: u64, chains: u64, rows: u64) -> u64 {
    Rbm::memory_estimate(nv, nh)
        .saturating_mul(5)
        .saturating_add(GibbsChains::memory_estimate(chains, nv, nh).saturating_mul(2))
        .saturating_add(Dataset::memory_estimate(rows, nv).saturating_mul(5))
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
    /// `--algo frank-wolfe`: run by `fw.rs`.
    pub(super) fn is_frank_wolfe(&self) -> bool {
        self.algo.family == AlgoArg::FrankWolfe
    }

    /// Parse (clap) → plan → run → print.
    pub(super) fn run(self) -> anyhow::Result<()> {
        let mut plan = self.plan()?;
        let outcome = plan.train()?;
        plan.print(outcome)
    }

    /// Everything decided and checked before training.
    fn plan(self) -> anyhow::Result<FitPlan> {
        let seed = self.common.init()?;
        let algorithm = self.algorithm()?;
        let mut params = self.params(algorithm, seed)?;
        let checkpoint = self.check_outputs()?;
        let binarize = self.binarize.resolve(derive_seed(seed, 2));
        let data = load_binary(&self.data, binarize)?;
        let valid = load_optional(self.valid.as_ref(), binarize)?;
        check_widths(&data, &[("--valid", self.valid.as_ref(), valid.as_ref())])?;
        self.check_memory(&data, algorithm)?;
        if self.early_stop && (valid.is_none() || self.eval_every == 0) {
            return Err(
                UsageError::new("--early-stop needs --valid FILE and --eval-every N ≥ 1").into(),
            );
        }
        let data_sha256 = boltzkit::io::sha256_file(&self.data)?;
        let resumed = self
            .resume
            .as_deref()
            .map(|path| read_resume(path, seed, self.common.seed.is_some(), &data_sha256))
            .transpose()?;
        let rbm = self.initial_model(&data, resumed.as_ref().map(|(f, _)| f), &params)?;
        params.n_hidden = rbm.n_hidden();
        let (eval, small) = self.monitor(&rbm)?;
        let settings = provenance::settings_entry(&params, &self.run_entries(binarize))?;
        let resumed = match (resumed, &self.resume) {
            (Some((file, state)), Some(path)) => {
                check_resumed_settings(path, &file, &settings)?;
                Some(state)
            }
            _ => None,
        };
        Ok(FitPlan {
            seed,
            binarize,
            params,
            checkpoint,
            data,
            valid,
            data_sha256,
            resumed_at_epoch: resumed.as_ref().map(|state| state.epoch),
            resumed,
            rbm: Some(rbm),
            eval,
            small,
            settings,
            failures: WriteFailures::default(),
            args: self,
        })
    }

    /// The trainer of `--algo` and its flags: a family with --k, --inner, --replicas, --loo,
    /// or one name in the library's notation; flags that do not apply are refused.
    pub(super) fn algorithm(&self) -> anyhow::Result<Algorithm> {
        let family = self.algo.family;
        let centered_or_dcp = matches!(family, AlgoArg::Sdcp | AlgoArg::Csdcp);
        if self.inner.is_some() && !centered_or_dcp {
            return Err(UsageError::new("--inner applies only to --algo sdcp and csdcp").into());
        }
        if self.replicas.is_some() && family != AlgoArg::Pt {
            return Err(UsageError::new("--replicas applies only to --algo pt").into());
        }
        if self.loo && family != AlgoArg::Popcd {
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
        let algorithm = match family {
            AlgoArg::Cd => Algorithm::Cd { k },
            AlgoArg::Pcd => Algorithm::Pcd { k },
            AlgoArg::Cg => Algorithm::Cg { k },
            AlgoArg::Sdcp => Algorithm::Sdcp { inner, k },
            AlgoArg::Csdcp => Algorithm::CsDcp { inner, k },
            AlgoArg::FrankWolfe => {
                return Err(anyhow::anyhow!("frank-wolfe is fitted by rbm/fw.rs"));
            }
            AlgoArg::Popcd => Algorithm::PopCd { k, loo: self.loo },
            AlgoArg::Pt => Algorithm::Pt { replicas, k },
        };
        Ok(self.algo.spec.unwrap_or(algorithm))
    }

    /// The learner's settings: the flags over the defaults, the algorithm and the seed;
    /// the loop's checked.
    pub(super) fn params(&self, algorithm: Algorithm, seed: u64) -> anyhow::Result<RbmParams> {
        let mut params: RbmParams =
            boltzkit::settings::overlay(&RbmParams::default(), &self.train)?;
        params.train.algorithm = algorithm;
        params.train.seed = seed;
        params.train.check()?;
        Ok(params)
    }

    /// The output files checked before any work: -o, the checkpoint (a resumed run goes on
    /// writing its checkpoint where it read it, unless told otherwise) and the log, none of
    /// them an input. Returns the checkpoint's path.
    fn check_outputs(&self) -> anyhow::Result<Option<PathBuf>> {
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
        Ok(checkpoint.cloned())
    }

    /// Refuses a `--hidden` whose run would not fit in memory (the model and its copies, the
    /// chains of a mini-batch, the data).
    fn check_memory(&self, data: &Dataset, algorithm: Algorithm) -> anyhow::Result<()> {
        let Some(h) = self.hidden else {
            return Ok(());
        };
        let batch = if self.train.batch_size == 0 {
            data.n_samples()
        } else {
            self.train.batch_size
        };
        let replicas = match algorithm {
            Algorithm::Pt { replicas, .. } => replicas,
            _ => 1,
        };
        guard::memory(
            &format!("rbm fit --hidden {h}"),
            fit_memory(
                data.n_vars() as u64,
                h as u64,
                (batch * replicas) as u64,
                data.n_samples() as u64,
            ),
        )?;
        Ok(())
    }

    /// The model training starts from: the checkpoint's (`--resume`), a model file
    /// (`--model`), or the initialization of Sec. 4.1 with `--hidden` units.
    fn initial_model(
        &self,
        data: &Dataset,
        resumed: Option<&RbmFile>,
        params: &RbmParams,
    ) -> anyhow::Result<Rbm> {
        let (rbm, flag) = match (&self.model, resumed) {
            (_, Some(file)) => (file.rbm.clone(), "--resume"),
            (Some(path), None) => (load_rbm(path)?.rbm, "--model"),
            (None, None) => {
                let h = self
                    .hidden
                    .ok_or_else(|| UsageError::new("give --hidden N (or --model FILE)"))?;
                if h == 0 {
                    return Err(UsageError::new("--hidden must be at least 1").into());
                }
                let params = RbmParams {
                    n_hidden: h,
                    ..params.clone()
                };
                return Ok(params.check()?.init(data)?);
            }
        };
        if let Some(h) = self.hidden.filter(|&h| h != rbm.n_hidden()) {
            return Err(UsageError::new(format!(
                "--hidden {h} does not match the {} hidden units of {flag}",
                rbm.n_hidden()
            ))
            .into());
        }
        let file = match flag {
            "--resume" => self.resume.as_deref(),
            _ => self.model.as_deref(),
        };
        check_vars(&self.data, data, file.unwrap_or(Path::new(flag)), &rbm)?;
        Ok(rbm)
    }

    /// The log-likelihood monitor (exact by default up to 2^25 states per evaluation; asked
    /// for, up to the enumeration limit of `rbm eval --method exact`), and whether the model
    /// is small enough for the exact figure by default.
    fn monitor(&self, rbm: &Rbm) -> anyhow::Result<(EvalArg, bool)> {
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
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
        Ok((eval, small))
    }

    /// The model file's entries about the run beside the learner's settings (also what
    /// `--resume` compares).
    fn run_entries(&self, binarize: Binarize) -> Vec<(&'static str, serde_json::Value)> {
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        provenance::rbm_run_entries(
            path(&self.valid),
            self.early_stop,
            self.gap_tol,
            &binarize,
            path(&self.model),
        )
    }
}

/// What `rbm fit` decided before training ([`FitArgs::plan`]).
struct FitPlan {
    args: FitArgs,
    seed: u64,
    /// The data's binarization as read.
    binarize: Binarize,
    /// The learner's settings, checked (its `n_hidden` the starting model's).
    params: RbmParams,
    /// Where the checkpoint goes (`--checkpoint`, else the `--resume` file).
    checkpoint: Option<PathBuf>,
    data: Dataset,
    valid: Option<Dataset>,
    data_sha256: String,
    /// The checkpoint's loop state (taken by [`FitPlan::train`]).
    resumed: Option<TrainState>,
    resumed_at_epoch: Option<usize>,
    /// The starting model (taken by [`FitPlan::train`]).
    rbm: Option<Rbm>,
    eval: EvalArg,
    /// The smaller layer has at most [`DEFAULT_EXACT_MONITOR_UNITS`] units.
    small: bool,
    /// The model file's `settings` entry (what `--resume` compares).
    settings: serde_json::Value,
    /// The first failed write of the log or the checkpoint (which stops training).
    failures: WriteFailures,
}

impl FitPlan {
    /// Runs the trainer with its observers and a progress bar; Ctrl-C ends it after the
    /// current update.
    fn train(&mut self) -> anyhow::Result<TrainOutcome> {
        let rbm = self.rbm.take().expect("trained once");
        let resumed = self.resumed.take();
        let learner = self.params.check()?;
        let epochs = self.params.train.epochs as u64;
        let bar = progress::bar(epochs, "epochs", self.args.common.quiet);
        if let Some(epoch) = self.resumed_at_epoch {
            bar.set_position(epoch as u64);
        }
        let run = self
            .observers()?
            .observe(BarObserver(bar.clone()))
            .interrupt(crate::interrupt::flag());
        let outcome = match resumed {
            Some(state) => learner.fit_resumed(rbm, state, &self.data, run)?,
            None => learner.fit_from(rbm, &self.data, run)?,
        };
        bar.finish_and_clear();
        Ok(outcome)
    }

    /// The observers every `--eval-every` epochs: the log-likelihood monitor, the validation
    /// gap, the cheap monitors, the checkpoint, the log (in that order: the checkpoint and
    /// the log record the figures of the evaluators before them).
    fn observers(&self) -> anyhow::Result<Run<'_, CheckedRbmParams>> {
        let (a, data, every) = (&self.args, &self.data, self.args.eval_every);
        let mut run: Run<'_, CheckedRbmParams> = Run::new();
        match self.eval {
            EvalArg::Exact => {
                run = run.observe_every(ExactLogLikelihood::new("train_ll", data.clone()), every)
            }
            EvalArg::Ais | EvalArg::Bracket => {
                let eval = EvalParams::monitor(derive_seed(self.seed, 3));
                let mut obs = AisLogLikelihood::from_eval("train_ll", data.clone(), &eval)?;
                if self.eval == EvalArg::Bracket {
                    obs = obs.bracket(Some(BRACKET_MONITOR_ROWS))?;
                }
                run = run.observe_every(obs, every);
            }
            EvalArg::None => {}
        }
        if let Some(v) = &self.valid {
            // the gap is recorded either way; it ends training only with --early-stop
            let tol = if a.early_stop { a.gap_tol } else { f64::MAX };
            run = run.observe_every(GapEarlyStop::new(data.clone(), v.clone(), tol)?, every);
        }
        if a.monitors {
            let rows: Vec<usize> = (0..data.n_samples().min(MONITOR_ROWS)).collect();
            run = run.observe_every(Monitors::new("train", data.select(&rows)?), every);
        }
        if let Some(path) = &self.checkpoint {
            let meta = BTreeMap::from([
                ("data_file".to_string(), a.data.display().to_string()),
                ("seed".to_string(), self.seed.to_string()),
                ("data_sha256".to_string(), self.data_sha256.clone()),
                (CLI_SETTINGS_KEY.to_string(), self.settings.to_string()),
            ]);
            let checkpoint = Checkpoint::new(path, meta);
            let what = format!("the checkpoint {}", path.display());
            run = run.observe_every(
                StopOnWriteFailure::new(checkpoint, what, &self.failures),
                every,
            );
        }
        if let Some(path) = &a.log {
            let log = match self.resumed_at_epoch {
                Some(epoch) if path.exists() => JsonlLog::resume(path, epoch)
                    .with_context(|| format!("continuing the log {}", path.display()))?,
                _ => JsonlLog::create(path)
                    .with_context(|| format!("creating the log {}", path.display()))?,
            };
            let what = format!("the log {}", path.display());
            run = run.observe_every(StopOnWriteFailure::new(log, what, &self.failures), every);
        }
        Ok(run)
    }

    /// Writes the model (the last good one, whatever the stop), prints the summary, and
    /// exits non-zero after an interrupt or a divergence.
    fn print(self, outcome: TrainOutcome) -> anyhow::Result<()> {
        let a = &self.args;
        let record = &outcome.record;
        let data_file = DataFile {
            path: a.data.display().to_string(),
            sha256: self.data_sha256.clone(),
        };
        let run = self.args.run_entries(self.binarize);
        let meta = provenance::rbm_fit(
            &self.params,
            &run,
            record.epochs,
            &record.stop,
            Some(&data_file),
        )?;
        let written = save_rbm(&a.output, &outcome.model, record.offsets.as_ref(), &meta)
            .map_err(anyhow::Error::from);
        let failure = self.failures.first();
        if written.is_err() {
            // no summary of a model that is nowhere: the line says where the last good one is
            return after_training(failure, written, &a.output, self.checkpoint.as_deref());
        }
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
        let mut summary = Summary::new("rbm fit", Some(self.seed));
        summary.extend(&FitSummary {
            data: a.data.display().to_string(),
            samples: self.data.n_samples(),
            visible: outcome.model.n_visible(),
            hidden: outcome.model.n_hidden(),
            algo: self.params.train.algorithm.name().to_string(),
            resumed_at_epoch: self.resumed_at_epoch,
            epochs: record.epochs,
            updates: record.steps,
            stop: record.stop.to_string(),
            monitors,
            avg_log_likelihood: (self.small || self.eval == EvalArg::Exact)
                .then(|| exact::average_log_likelihood(&outcome.model, &self.data))
                .transpose()?,
            learn_s: record.wall_s,
            output: a.output.display().to_string(),
        })?;
        summary.emit(&a.common)?;
        if failure.is_some() {
            return after_training(failure, Ok(()), &a.output, self.checkpoint.as_deref());
        }
        match record.stop {
            StopReason::Interrupted { .. } => Err(crate::interrupt::Interrupted(format!(
                "interrupted after {} updates ({} epochs); wrote the last good model to {}",
                record.steps,
                record.epochs,
                a.output.display()
            ))
            .into()),
            StopReason::Diverged { .. } => anyhow::bail!(
                "training {}; wrote it to {}",
                record.stop,
                a.output.display()
            ),
            _ => Ok(()),
        }
    }
}
