//! The RBM learner: [`RbmParams`] (the hidden layer, the initialization and the training
//! settings, the seed inside) → [`RbmParams::check`] → [`CheckedRbmParams`], a
//! [`Learner`] whose `fit` initializes a model from the data (Sec. 4.1 of the S-DCP paper)
//! and trains it with the [`Trainer`] loop.
//!
//! Seeds: the one seed of [`TrainParams::seed`] gives the initial weights
//! (`derive_seed(seed, 0)`) and the loop's chains and shuffling (`derive_seed(seed, 1)`),
//! which is how `boltzkit rbm fit --seed` wires it: the same seed gives the same bits.
//!
//! ```
//! use boltzkit::data::synth::BarsAndStripes;
//! use boltzkit::fit::{Learner, StopReason};
//! use boltzkit::rbm::train::{Algorithm, ExactLogLikelihood, RbmParams, TrainParams};
//! let data = BarsAndStripes::new(3, false)?.dataset()?;
//! let train = TrainParams::new().epochs(20).full_batch().learning_rate(0.3)
//!     .algorithm(Algorithm::Sdcp { inner: 3, k: 4 }).seed(7);
//! let learner = RbmParams::new(4).train(train).check()?;
//! let run = learner.run().observe_every(ExactLogLikelihood::new("train_ll", data.clone()), 10);
//! let fit = learner.fit_with(&data, run)?;
//! assert_eq!(fit.record.stop, StopReason::MaxEpochs);
//! assert_eq!(fit.record.history.len(), 3); // epochs 0, 10, 20
//! # Ok::<(), boltzkit::Error>(())
//! ```

use super::{CheckedTrainParams, Progress, TrainOutcome, TrainParams, TrainState, Trainer, Update};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::fit::{Learner, Run};
use crate::rbm::Rbm;
use crate::rng::{derive_seed, rng_from_seed};

/// Settings of the RBM learner.
#[derive(Debug, Clone, PartialEq)]
pub struct RbmParams {
    /// Hidden units (≥ 1). No default: [`RbmParams::new`] takes it.
    pub n_hidden: usize,
    /// Standard deviation of the initial weights, `W ~ N(0, sd²)`, visible biases at the
    /// data's base rates, hidden biases 0 (Sec. 4.1 of the S-DCP paper). Default 0.01.
    pub weight_sd: f32,
    /// The training loop's settings, with the seed. Default [`TrainParams::default`].
    pub train: TrainParams,
}

impl RbmParams {
    /// `n_hidden` hidden units, the other settings at their defaults.
    pub fn new(n_hidden: usize) -> Self {
        RbmParams {
            n_hidden,
            weight_sd: 0.01,
            train: TrainParams::default(),
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
    params: RbmParams,
    /// The loop's settings, its seed derived from the user's.
    train: CheckedTrainParams,
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

    /// Trains `rbm` (a warm start: a saved model, a previous fit) on `data`; `n_hidden` and
    /// `weight_sd` are not used.
    pub fn fit_from<'d>(
        &self,
        rbm: Rbm,
        data: &'d Dataset,
        run: Run<'d, Self>,
    ) -> Result<TrainOutcome> {
        Trainer::checked(rbm, data, self.train)?.with_run(run).run()
    }

    /// Continues a run from its checkpoint ([`super::load_checkpoint`]): `rbm` is the
    /// checkpoint's model and `state` its loop state ([`Trainer::resume`]); the result has the
    /// same bits as the uninterrupted run.
    pub fn fit_resumed<'d>(
        &self,
        rbm: Rbm,
        state: TrainState,
        data: &'d Dataset,
        run: Run<'d, Self>,
    ) -> Result<TrainOutcome> {
        Trainer::checked(rbm, data, self.train)?
            .resume(state)
            .with_run(run)
            .run()
    }

    /// Trains `rbm` on `data` with `update` (e.g. a user's estimator) instead of the update of
    /// [`TrainParams::algorithm`], which then only names the run.
    pub fn fit_update<'d>(
        &self,
        rbm: Rbm,
        data: &'d Dataset,
        update: impl Update + 'd,
        run: Run<'d, Self>,
    ) -> Result<TrainOutcome> {
        Trainer::checked(rbm, data, self.train)?
            .update(update)
            .with_run(run)
            .run()
    }
}

impl Learner for CheckedRbmParams {
    type Model = Rbm;
    type Record = super::TrainRecord;
    type Progress<'p> = Progress<'p>;

    /// Initializes a model from `data` ([`CheckedRbmParams::init`]) and trains it.
    fn fit_with(&self, data: &Dataset, run: Run<'_, Self>) -> Result<TrainOutcome> {
        let rbm = self.init(data)?;
        self.fit_from(rbm, data, run)
    }
}
