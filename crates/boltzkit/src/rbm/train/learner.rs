//! The RBM learner: [`RbmParams`](super::RbmParams) (the hidden layer, the initialization and the training
//! settings, the seed inside) → [`RbmParams::check`](super::RbmParams::check) → [`CheckedRbmParams`], a
//! [`Learner`] whose `fit` initializes a model from the data (Sec. 4.1 of the S-DCP paper)
//! and trains it with the [`Trainer`] loop.
//!
//! Seeds: the one seed of [`TrainParams::seed`](super::TrainParams::seed) gives the initial weights
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

use super::params::CheckedRbmParams;
use super::progress::Progress;
use super::record::{TrainOutcome, TrainRecord};
use super::state::TrainState;
use super::trainer::Trainer;
use super::update::Update;
use crate::data::Dataset;
use crate::error::Result;
use crate::fit::{Learner, Run};
use crate::rbm::Rbm;

impl CheckedRbmParams {
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
    /// [`TrainParams::algorithm`](super::TrainParams::algorithm), which then only names the run.
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
    type Record = TrainRecord;
    type Progress<'p> = Progress<'p>;

    /// Initializes a model from `data` ([`CheckedRbmParams::init`]) and trains it.
    fn fit_with(&self, data: &Dataset, run: Run<'_, Self>) -> Result<TrainOutcome> {
        let rbm = self.init(data)?;
        self.fit_from(rbm, data, run)
    }
}
