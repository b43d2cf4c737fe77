//! Settings of a training run: [`TrainParams`] (unchecked, builder methods, documented
//! defaults) → [`TrainParams::check`] → [`CheckedTrainParams`], what [`super::Trainer`]
//! consumes; the [`LearningRate`] schedule; the RBM learner's settings [`RbmParams`] (the
//! hidden layer, the initialization, the [`TrainParams`]) → [`CheckedRbmParams`] (its
//! `Learner` impl, the fits, is [`super::learner`]'s).

use super::algorithm::Algorithm;
use super::sgd::SgdParams;
use crate::budget::OPERATIONS_PER_SECOND;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::rbm::Rbm;
use crate::rng::{derive_seed, rng_from_seed};
use serde::{Deserialize, Serialize};

/// The learning rate per epoch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LearningRate {
    /// The same `η` every epoch.
    Constant(f32),
    /// Linear from `start` at epoch 0 to `end` at the last epoch.
    Linear {
        /// `η` of the first epoch.
        start: f32,
        /// `η` of the last epoch.
        end: f32,
    },
}

impl LearningRate {
    /// `η` for epoch `epoch` (0-based) of `epochs`.
    pub fn at(&self, epoch: usize, epochs: usize) -> f32 {
        match *self {
            LearningRate::Constant(x) => x,
            LearningRate::Linear { start, end } => {
                if epochs <= 1 {
                    start
                } else {
                    let t = epoch as f64 / (epochs - 1) as f64;
                    (f64::from(start) + t * (f64::from(end) - f64::from(start))) as f32
                }
            }
        }
    }
}

/// Unchecked settings of a training run; [`TrainParams::check`] validates them, naming the
/// field at fault. Serialized (the settings schema, [`crate::settings`]) under the field names,
/// but `epochs` as `n_epochs` and `algorithm` as `algo` (its name, `"pcd-1"`); a full batch is
/// `batch_size` 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrainParams {
    /// Passes over the data (default 100), ≥ 1.
    #[serde(rename = "n_epochs")]
    pub epochs: usize,
    /// Mini-batch rows (default `Some(100)`); `None` is the full batch (0 when serialized).
    /// The last batch of an epoch may be smaller.
    #[serde(with = "full_batch_as_zero")]
    pub batch_size: Option<usize>,
    /// The update (default CD-1).
    #[serde(rename = "algo")]
    pub algorithm: Algorithm,
    /// The learning rate of the first epoch (default 0.03: of 0.003-0.3 the best or near-best
    /// test log-likelihood at the other defaults on MNIST (20 and 500 hidden, CD-1 and PCD-1)
    /// and DEBD nltcs, and far above 0.01 on DEBD mushrooms; BENCHMARKS.md "Default learning
    /// rate").
    pub learning_rate: f32,
    /// The learning rate of the last epoch, reached linearly from `learning_rate` (default
    /// `None`: constant).
    pub learning_rate_end: Option<f32>,
    /// Momentum (default 0, as the paper), in `[0, 1)`.
    pub momentum: f32,
    /// L2 weight decay on `W` (default 0, as the paper), ≥ 0.
    pub weight_decay: f32,
    /// Shuffle the samples at each epoch (default true).
    pub shuffle: bool,
    /// The seed of the shuffles and of the chains (default 0).
    pub seed: u64,
    /// The divergence guard's bound on `|W|`, `|b|`, `|c|` (default 1e4): larger means the
    /// run exploded. Must be > 0 (may be `f32::INFINITY` to check finiteness only: serialized
    /// as `null`, read from `null` or `"inf"`).
    #[serde(with = "crate::settings::infinity_as_null")]
    pub max_abs_param: f32,
    /// Sliding factor `ν_μ` of the visible offsets of centered algorithms (default 0.01, Sec.
    /// 4.1 of the S-DCP paper), in `[0, 1]`. The offsets start at `μ` = data mean, `λ = 0.5`.
    pub nu_mu: f32,
    /// Sliding factor `ν_λ` of the hidden offsets (default 0.01), in `[0, 1]`.
    pub nu_lambda: f32,
    /// The divergence watch's tolerance (default 0.1; 0 turns the watch off), ≥ 0, a fraction
    /// of the independent-units model's figure: after every epoch the mean `ln p(v_i | v_{−i})`
    /// of 256 fixed (row, unit) pairs of the training data, and the training log-likelihood
    /// where an observer computes it (× `n_visible`; the median of its last 3 records, so one
    /// noisy record neither stops the run nor sets its best), falling more than `tol × |ln p̂|`
    /// below its best (`ln p̂`: the independent-units model's mean `ln p̂_i(v_i)` on the same
    /// pairs, nats per unit) stops the run as diverged with the best model kept
    /// ([`super::divergence`]).
    /// Measured on binarized MNIST (`|ln p̂|` 0.22 per unit): rate 10 and 100 stop within 5
    /// epochs for every trainer, the default rate falls never; healthy small runs (bars and
    /// stripes, NLTCS, modes) fall by at most 0.005 of it.
    pub divergence_tol: f32,
}

/// `batch_size` serialized as a number, 0 for the full batch (as the CLI's and Python's).
mod full_batch_as_zero {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &Option<usize>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(b.unwrap_or(0) as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
        let n = usize::deserialize(d)?;
        Ok((n > 0).then_some(n))
    }
}

impl Default for TrainParams {
    fn default() -> Self {
        TrainParams {
            epochs: 100,
            batch_size: Some(100),
            algorithm: Algorithm::Cd { k: 1 },
            learning_rate: 0.03,
            learning_rate_end: None,
            momentum: 0.0,
            weight_decay: 0.0,
            shuffle: true,
            seed: 0,
            max_abs_param: 1e4,
            nu_mu: 0.01,
            nu_lambda: 0.01,
            divergence_tol: 0.1,
        }
    }
}

impl TrainParams {
    /// The defaults.
    pub fn new() -> Self {
        TrainParams::default()
    }

    /// Sets the number of epochs.
    pub fn epochs(mut self, n: usize) -> Self {
        self.epochs = n;
        self
    }

    /// Sets the mini-batch size.
    pub fn batch_size(mut self, n: usize) -> Self {
        self.batch_size = Some(n);
        self
    }

    /// Uses the full batch.
    pub fn full_batch(mut self) -> Self {
        self.batch_size = None;
        self
    }

    /// Sets the algorithm.
    pub fn algorithm(mut self, a: Algorithm) -> Self {
        self.algorithm = a;
        self
    }

    /// Sets a constant learning rate.
    pub fn learning_rate(mut self, x: f32) -> Self {
        self.learning_rate = x;
        self.learning_rate_end = None;
        self
    }

    /// Sets a learning-rate schedule.
    pub fn schedule(mut self, s: LearningRate) -> Self {
        (self.learning_rate, self.learning_rate_end) = match s {
            LearningRate::Constant(x) => (x, None),
            LearningRate::Linear { start, end } => (start, Some(end)),
        };
        self
    }

    /// The learning-rate schedule of `learning_rate` and `learning_rate_end`.
    pub fn learning_rate_schedule(&self) -> LearningRate {
        match self.learning_rate_end {
            None => LearningRate::Constant(self.learning_rate),
            Some(end) => LearningRate::Linear {
                start: self.learning_rate,
                end,
            },
        }
    }

    /// Sets the momentum.
    pub fn momentum(mut self, x: f32) -> Self {
        self.momentum = x;
        self
    }

    /// Sets the weight decay.
    pub fn weight_decay(mut self, x: f32) -> Self {
        self.weight_decay = x;
        self
    }

    /// Turns per-epoch shuffling on or off.
    pub fn shuffle(mut self, on: bool) -> Self {
        self.shuffle = on;
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, s: u64) -> Self {
        self.seed = s;
        self
    }

    /// Sets the divergence guard's bound.
    pub fn max_abs_param(mut self, x: f32) -> Self {
        self.max_abs_param = x;
        self
    }

    /// Sets the divergence watch's tolerance (nats per visible unit; 0: off).
    pub fn divergence_tol(mut self, x: f32) -> Self {
        self.divergence_tol = x;
        self
    }

    /// Sets both sliding factors of centered algorithms.
    pub fn sliding(mut self, nu_mu: f32, nu_lambda: f32) -> Self {
        self.nu_mu = nu_mu;
        self.nu_lambda = nu_lambda;
        self
    }

    /// Validates the settings; the error ([`Error::InvalidParam`]) names the field at fault.
    pub fn check(self) -> Result<CheckedTrainParams> {
        if self.epochs == 0 {
            return Err(Error::param("n_epochs", "at least one epoch is needed"));
        }
        if self.batch_size == Some(0) {
            return Err(Error::param(
                "batch_size",
                "must be ≥ 1 (or the full batch)",
            ));
        }
        match self.algorithm {
            Algorithm::Cd { k }
            | Algorithm::Pcd { k }
            | Algorithm::Cg { k }
            | Algorithm::Sdcp { k, .. }
            | Algorithm::CsDcp { k, .. }
            | Algorithm::PopCd { k, .. }
            | Algorithm::Pt { k, .. }
                if k == 0 =>
            {
                return Err(Error::param("k", "at least one Gibbs step is needed"));
            }
            Algorithm::Sdcp { inner: 0, .. } | Algorithm::CsDcp { inner: 0, .. } => {
                return Err(Error::param(
                    "inner",
                    "S-DCP needs at least one inner step (d ≥ 1)",
                ));
            }
            Algorithm::Pt { replicas, .. } if replicas < 2 => {
                return Err(Error::param(
                    "replicas",
                    format!("parallel tempering needs at least 2 replicas, got {replicas}"),
                ));
            }
            Algorithm::PopCd { loo: true, .. } if self.batch_size == Some(1) => {
                return Err(Error::param(
                    "batch_size",
                    "the leave-one-out weights (Eq. 9) need batches of at least 2",
                ));
            }
            _ => {}
        }
        let sgd = |lr: f32| {
            SgdParams::new()
                .learning_rate(lr)
                .momentum(self.momentum)
                .weight_decay(self.weight_decay)
                .check()
        };
        sgd(self.learning_rate)?;
        if let Some(end) = self.learning_rate_end {
            sgd(end).map_err(|e| match e {
                Error::InvalidParam { reason, .. } => Error::param("learning_rate_end", reason),
                e => e,
            })?;
        }
        if self.max_abs_param.is_nan() || self.max_abs_param <= 0.0 {
            return Err(Error::param(
                "max_abs_param",
                format!("must be > 0, got {}", self.max_abs_param),
            ));
        }
        if self.divergence_tol.is_nan()
            || self.divergence_tol < 0.0
            || self.divergence_tol.is_infinite()
        {
            return Err(Error::param(
                "divergence_tol",
                format!(
                    "must be ≥ 0, a fraction of the independent-units model's figure \
                     (0: no watch), got {}",
                    self.divergence_tol
                ),
            ));
        }
        for (name, nu) in [("nu_mu", self.nu_mu), ("nu_lambda", self.nu_lambda)] {
            if !(0.0..=1.0).contains(&nu) {
                return Err(Error::param(name, format!("must be in [0, 1], got {nu}")));
            }
        }
        Ok(CheckedTrainParams(self))
    }
}

/// Settings that passed [`TrainParams::check`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckedTrainParams(TrainParams);

impl CheckedTrainParams {
    /// The settings.
    pub fn get(&self) -> &TrainParams {
        &self.0
    }

    /// Refuses up front, with the estimate, training on `rows` rows an `n_visible × n_hidden`
    /// model when one update (a mini-batch of chains × the algorithm's Gibbs steps,
    /// [`Algorithm::chain_steps`]) would take more than [`MAX_UPDATE_OPERATIONS`] (an hour at
    /// best: Ctrl-C, checkpoints and the divergence watch act only between updates), or the
    /// whole run more than a year ([`crate::budget::check_work`]): [`Error::TooLarge`].
    pub fn check_work(&self, rows: usize, n_visible: usize, n_hidden: usize) -> Result<()> {
        let p = &self.0;
        let batch = p.batch_size.unwrap_or(rows).min(rows).max(1);
        let steps = p.algorithm.chain_steps();
        let update = batch as f64
            * steps as f64
            * crate::rbm::gibbs::step_operations(n_visible as u64, n_hidden as u64);
        let alg = p.algorithm;
        if update > MAX_UPDATE_OPERATIONS {
            return Err(Error::TooLarge {
                what: format!(
                    "one update of {alg} ({batch} chains × {steps} Gibbs steps of a \
                     {n_visible} × {n_hidden} model)"
                ),
                needed: format!(
                    "about {update:.1e} operations ({} at {OPERATIONS_PER_SECOND:.0e} per second)",
                    crate::budget::human_duration(update / OPERATIONS_PER_SECOND)
                ),
                limit: "an hour per update (Ctrl-C, checkpoints and the divergence watch act \
                        only between updates): lower k (`--k`, the algorithm's steps)"
                    .into(),
            });
        }
        let updates = p.epochs as f64 * rows.div_ceil(batch) as f64;
        crate::budget::check_work(
            &format!("training {} epochs of {alg}", p.epochs),
            updates * update,
        )
    }
}

/// The most elementary operations one training update may take
/// ([`CheckedTrainParams::check_work`]): an hour at [`OPERATIONS_PER_SECOND`].
pub const MAX_UPDATE_OPERATIONS: f64 = OPERATIONS_PER_SECOND * 3600.0;

/// Settings of the RBM learner, serialized as one flat object: `n_hidden`, `weight_sd` and the
/// [`TrainParams`] entries ([`crate::settings`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RbmParams {
    /// Hidden units (default 256), ≥ 1. `boltzkit rbm fit` asks for it (`--hidden`).
    pub n_hidden: usize,
    /// Standard deviation of the initial weights, `W ~ N(0, sd²)`, visible biases at the
    /// data's base rates, hidden biases 0 (Sec. 4.1 of the S-DCP paper). Default 0.01.
    pub weight_sd: f32,
    /// The training loop's settings, with the seed. Default [`TrainParams::default`].
    #[serde(flatten)]
    pub train: TrainParams,
}

impl Default for RbmParams {
    fn default() -> Self {
        RbmParams {
            n_hidden: 256,
            weight_sd: 0.01,
            train: TrainParams::default(),
        }
    }
}

impl RbmParams {
    /// `n_hidden` hidden units, the other settings at their defaults.
    pub fn new(n_hidden: usize) -> Self {
        RbmParams {
            n_hidden,
            ..RbmParams::default()
        }
    }

    /// Sets the training settings.
    pub fn train(mut self, train: TrainParams) -> Self {
        self.train = train;
        self
    }

    /// Sets the initial weights' standard deviation.
    pub fn weight_sd(mut self, sd: f32) -> Self {
        self.weight_sd = sd;
        self
    }

    /// Checks every setting (the error names the field at fault) and returns the learner.
    pub fn check(&self) -> Result<CheckedRbmParams> {
        if self.n_hidden == 0 {
            return Err(Error::param("n_hidden", "must be at least 1"));
        }
        if !(self.weight_sd.is_finite() && self.weight_sd >= 0.0) {
            return Err(Error::param(
                "weight_sd",
                format!("must be a finite number ≥ 0, got {}", self.weight_sd),
            ));
        }
        let seed = self.train.seed;
        Ok(CheckedRbmParams {
            params: self.clone(),
            train: self.train.seed(derive_seed(seed, 1)).check()?,
        })
    }
}

/// [`RbmParams`] checked by [`RbmParams::check`]: the RBM learner.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedRbmParams {
    pub(super) params: RbmParams,
    /// The loop's settings, its seed derived from the user's.
    pub(super) train: CheckedTrainParams,
}

impl CheckedRbmParams {
    /// The settings as given.
    pub fn get(&self) -> &RbmParams {
        &self.params
    }

    /// The initial model for `data`: Sec. 4.1 of the S-DCP paper, from `derive_seed(seed, 0)`.
    pub fn init(&self, data: &Dataset) -> Result<Rbm> {
        let mut rng = rng_from_seed(derive_seed(self.params.train.seed, 0));
        Rbm::init_from_data(data, self.params.n_hidden, self.params.weight_sd, &mut rng)
    }
}
