//! `boltzkit bench`: wall-clock timings of the library's hot paths on real shapes, the
//! boltzkit side of the peer comparisons in BENCHMARKS.md (e.g. `bench rbm-epoch` against
//! `bench/python/sklearn_rbm_epoch.py`): the flags, the model or data loaded, and the timings
//! of [`boltzkit_repro::bench`].

use super::binarize::BinarizeArgs;
use super::common::{Common, Outcome};
use crate::guard::UsageError;
use boltzkit::data::read_binary as load_binary;
use boltzkit::rbm::ais::AisSchedule;
use boltzkit::rbm::base_rate_biases;
use boltzkit::rbm::file::load_rbm;
use boltzkit::rbm::train::{Algorithm, TrainParams};
use boltzkit::rbm::{GibbsChains, Rbm};
use boltzkit::rng::{derive_seed, rng_from_seed};
use boltzkit_repro::bench::{self, Timings};
use boltzkit_repro::Progress;
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// The AIS flags of `bench ais` (the binary's `--ais-chains` / `--ais-steps`, shared with
/// `rbm eval`).
pub trait AisChoice: Args {
    /// `(chains, linear steps)`; `None` steps: the standard schedule.
    fn resolve(self) -> anyhow::Result<(usize, Option<usize>)>;
}

/// `boltzkit bench <verb>`, with the command line's common flags `C` and AIS flags `A`.
#[derive(Debug, Subcommand)]
pub enum Bench<C: Common, A: AisChoice> {
    /// Time RBM training epochs (initialization included, as scikit-learn's `fit` does)
    #[command(
        long_about = "Time whole RBM training epochs on a data file: a fresh model \
        (the Sec. 4.1 initialization) and --epochs epochs of CD-k or PCD-k, no monitoring, \
        --repeats times. The peer of bench/python/sklearn_rbm_epoch.py.\n\n\
        Example:\n  boltzkit bench rbm-epoch --data ../shared/data/mnist/train-images-idx3-ubyte.gz \
        --binarize threshold:127 --hidden 500 --batch-size 100 --algo pcd --k 1"
    )]
    RbmEpoch(EpochArgs<C>),
    /// Time one AIS estimate of ln Z
    #[command(
        long_about = "Time forward AIS of ln Z from the uniform base model on a model \
        file, or on a random RBM (W ~ N(0, --scale²), zero biases) of the given shape.\n\n\
        Example:\n  boltzkit bench ais --visible 784 --hidden 500 --ais-chains 100"
    )]
    Ais(AisArgs<C, A>),
    /// Time the exact ln Z by enumeration of the smaller layer
    #[command(
        long_about = "Time the exact ln Z (enumeration of the smaller layer) of a \
        model file or of a random RBM of the given shape.\n\n\
        Example:\n  boltzkit bench exact-logz --visible 784 --hidden 25"
    )]
    ExactLogz(ExactArgs<C>),
}

/// The trainer timed by `bench rbm-epoch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EpochAlgo {
    /// Contrastive divergence CD-k
    Cd,
    /// Persistent contrastive divergence PCD-k
    Pcd,
}

#[doc(hidden)]
#[derive(Debug, Args)]
pub struct EpochArgs<C: Common> {
    /// Training data (any supported format)
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    #[command(flatten)]
    binarize: BinarizeArgs,
    /// Hidden units
    #[arg(long, value_name = "N", default_value_t = 500)]
    hidden: usize,
    /// Mini-batch rows
    #[arg(long, value_name = "N", default_value_t = 100)]
    batch_size: usize,
    /// Trainer
    #[arg(long, value_enum, default_value_t = EpochAlgo::Pcd)]
    algo: EpochAlgo,
    /// Gibbs steps per update
    #[arg(long, value_name = "N", default_value_t = 1)]
    k: usize,
    /// Learning rate
    #[arg(long, value_name = "X", default_value_t = 0.01)]
    lr: f32,
    /// Epochs per timed run
    #[arg(long, value_name = "N", default_value_t = 1)]
    epochs: usize,
    /// Timed runs
    #[arg(long, value_name = "N", default_value_t = 3)]
    repeats: usize,
    #[command(flatten)]
    common: C,
}

/// The model a timing runs on: a file, or a random RBM of a given shape.
#[doc(hidden)]
#[derive(Debug, Args)]
pub struct ModelChoice {
    /// A model file; without it a random RBM of --visible × --hidden units
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// Visible units of the random RBM
    #[arg(long, value_name = "N", default_value_t = 784)]
    visible: usize,
    /// Hidden units of the random RBM
    #[arg(long, value_name = "N", default_value_t = 500)]
    hidden: usize,
    /// Standard deviation of the random RBM's weights
    #[arg(long, value_name = "X", default_value_t = 0.05)]
    scale: f32,
}

impl ModelChoice {
    /// The model; a random one is checked against the memory first (`chains` Gibbs chains
    /// will run on it).
    fn load(&self, seed: u64, chains: u64) -> anyhow::Result<(Rbm, String)> {
        if self.model.is_none() {
            let (nv, nh) = (self.visible as u64, self.hidden as u64);
            crate::guard::memory(
                &format!("--visible {} --hidden {}", self.visible, self.hidden),
                Rbm::memory_estimate(nv, nh)
                    .saturating_add(GibbsChains::memory_estimate(chains, nv, nh)),
            )?;
        }
        match &self.model {
            Some(path) => Ok((load_rbm(path)?.rbm, path.display().to_string())),
            None => {
                let rbm = Rbm::random(
                    self.visible,
                    self.hidden,
                    self.scale,
                    &mut rng_from_seed(seed),
                )?;
                Ok((rbm, format!("random (scale {})", self.scale)))
            }
        }
    }
}

#[doc(hidden)]
#[derive(Debug, Args)]
pub struct AisArgs<C: Common, A: AisChoice> {
    #[command(flatten)]
    model: ModelChoice,
    #[command(flatten)]
    ais: A,
    /// Start from the base-rate model of this data file (visible biases = logits of its
    /// clamped means, as the PyTorch peer does) [default: the uniform base model]
    #[arg(long, value_name = "FILE")]
    base_data: Option<PathBuf>,
    #[command(flatten)]
    binarize: BinarizeArgs,
    /// Timed runs
    #[arg(long, value_name = "N", default_value_t = 1)]
    repeats: usize,
    #[command(flatten)]
    common: C,
}

#[doc(hidden)]
#[derive(Debug, Args)]
pub struct ExactArgs<C: Common> {
    #[command(flatten)]
    model: ModelChoice,
    /// Timed runs
    #[arg(long, value_name = "N", default_value_t = 3)]
    repeats: usize,
    #[command(flatten)]
    common: C,
}

impl<C: Common, A: AisChoice> Bench<C, A> {
    /// The common flags.
    pub fn common(&self) -> &C {
        match self {
            Bench::RbmEpoch(a) => &a.common,
            Bench::Ais(a) => &a.common,
            Bench::ExactLogz(a) => &a.common,
        }
    }

    /// Runs the chosen verb, noting each run's seconds on `progress`.
    pub fn run(self, progress: &dyn Progress) -> anyhow::Result<Outcome> {
        match self {
            Bench::RbmEpoch(a) => a.run(progress),
            Bench::Ais(a) => a.run(progress),
            Bench::ExactLogz(a) => a.run(progress),
        }
    }
}

/// Sets `runs`, `min_s`, `median_s` and `runs_s` of a summary from the timings.
fn set_times(summary: &mut Outcome, t: Timings) {
    summary
        .set("runs", t.runs)
        .set("min_s", t.min_s)
        .set("median_s", t.median_s)
        .set("runs_s", t.runs_s);
}

impl<C: Common> EpochArgs<C> {
    fn run(self, progress: &dyn Progress) -> anyhow::Result<Outcome> {
        let seed = self.common.init()?;
        if self.hidden == 0 || self.batch_size == 0 || self.epochs == 0 {
            return Err(
                UsageError::new("--hidden, --batch-size and --epochs must be at least 1").into(),
            );
        }
        let data = load_binary(&self.data, self.binarize.resolve(derive_seed(seed, 2)))?;
        let algorithm = match self.algo {
            EpochAlgo::Cd => Algorithm::Cd { k: self.k },
            EpochAlgo::Pcd => Algorithm::Pcd { k: self.k },
        };
        let params = TrainParams::new()
            .epochs(self.epochs)
            .algorithm(algorithm)
            .learning_rate(self.lr)
            .batch_size(self.batch_size);
        let times = bench::rbm_epochs(&data, self.hidden, params, self.repeats, seed, progress)?;
        let mut summary = Outcome::new("bench rbm-epoch", Some(seed));
        summary
            .set("data", self.data.display().to_string())
            .set("samples", data.n_samples())
            .set("visible", data.n_vars())
            .set("hidden", self.hidden)
            .set("batch_size", self.batch_size)
            .set("algo", algorithm.name())
            .set("k", self.k)
            .set("epochs", self.epochs)
            .set("threads", rayon::current_num_threads());
        set_times(&mut summary, times);
        Ok(summary)
    }
}

impl<C: Common, A: AisChoice> AisArgs<C, A> {
    fn run(self, progress: &dyn Progress) -> anyhow::Result<Outcome> {
        let seed = self.common.init()?;
        let (chains, steps) = self.ais.resolve()?;
        let (rbm, source) = self.model.load(derive_seed(seed, 0), chains as u64 * 2)?;
        let schedule = match steps {
            Some(k) => AisSchedule::linear(k)?,
            None => AisSchedule::standard(),
        };
        let base = match &self.base_data {
            Some(path) => {
                let data = load_binary(path, self.binarize.resolve(derive_seed(seed, 2)))?;
                if data.n_vars() != rbm.n_visible() {
                    return Err(UsageError::new(format!(
                        "--base-data has {} variables, the model {} visible units",
                        data.n_vars(),
                        rbm.n_visible()
                    ))
                    .into());
                }
                base_rate_biases(&data)?
            }
            None => vec![0f32; rbm.n_visible()],
        };
        let b = bench::ais(&rbm, &base, &schedule, chains, self.repeats, seed, progress)?;
        let mut summary = Outcome::new("bench ais", Some(seed));
        let base = if self.base_data.is_some() {
            "base rate"
        } else {
            "uniform"
        };
        summary
            .set("model", source)
            .set("visible", rbm.n_visible())
            .set("hidden", rbm.n_hidden())
            .set("chains", b.chains)
            .set("steps", b.steps)
            .set("base", base)
            .set("threads", rayon::current_num_threads())
            .set("log_z", b.log_z)
            .set("log_z_se", b.log_z_se);
        set_times(&mut summary, b.timings);
        Ok(summary)
    }
}

impl<C: Common> ExactArgs<C> {
    fn run(self, progress: &dyn Progress) -> anyhow::Result<Outcome> {
        let seed = self.common.init()?;
        let (rbm, source) = self.model.load(derive_seed(seed, 0), 0)?;
        let (log_z, times) = bench::exact_log_z(&rbm, self.repeats, progress)?;
        let mut summary = Outcome::new("bench exact-logz", Some(seed));
        summary
            .set("model", source)
            .set("visible", rbm.n_visible())
            .set("hidden", rbm.n_hidden())
            .set("threads", rayon::current_num_threads())
            .set("log_z", log_z);
        set_times(&mut summary, times);
        Ok(summary)
    }
}
