//! The RBM training loop (argmin's `Executor` habit, DESIGN.md "The loop"):
//! [`Trainer::new`]`(rbm, data, params)` → [`Trainer::add_observer`] → [`Trainer::run`], which
//! returns the model and a [`TrainRecord`] with the recorded [`StopReason`](crate::fit::StopReason).
//!
//! Each epoch shuffles the samples (seeded), cuts them into mini-batches (the full batch
//! allowed, as the S-DCP paper's small-data set-up, Sec. 4.1), and applies one update per
//! batch with the chosen [`Algorithm`] (CD-k, PCD-k, S-DCP, CG, CS-DCP; CD runs as S-DCP with
//! `d = 1`, Alg. 3 of the S-DCP paper, and CG as CS-DCP with `d = 1`, Alg. 4). After every
//! update a divergence guard ([`super::guard`]) checks the parameters: a NaN, an infinity or a
//! parameter above [`TrainParams::max_abs_param`] in magnitude stops training with
//! [`StopReason::Diverged`](crate::fit::StopReason::Diverged) and the model of before that update is returned. The loop itself,
//! step by step with its guard and observer points, is `epoch_loop.rs`.
//!
//! Observers ([`Observer`]) run on the initial model (epoch 0) and after every `every`-th
//! epoch; metrics they put in [`Progress::metrics`] are kept in [`TrainRecord::history`].
//! Provided: [`ExactLogLikelihood`] (exact average log-likelihood, smaller layer ≤ 25 units),
//! [`AisLogLikelihood`] (AIS estimate with its standard error, for larger models),
//! [`JsonlLog`] (a JSONL [`MetricLog`](crate::io::MetricLog)) and [`Checkpoint`] (model files
//! via [`save_rbm`](crate::rbm::file::save_rbm)).
//!
//! ```
//! use boltzkit::data::synth::BarsAndStripes;
//! use boltzkit::rbm::train::{Algorithm, ExactLogLikelihood, TrainParams, Trainer, StopReason};
//! use boltzkit::rbm::Rbm;
//! use boltzkit::rng::rng_from_seed;
//! let data = BarsAndStripes::new(3, false)?.dataset()?;
//! let rbm = Rbm::init_from_data(&data, 4, 0.01, &mut rng_from_seed(1))?;
//! let params = TrainParams::new().epochs(20).full_batch().learning_rate(0.3)
//!     .algorithm(Algorithm::Sdcp { inner: 3, k: 4 }).seed(7);
//! let out = Trainer::new(rbm, &data, params)?
//!     .add_observer(ExactLogLikelihood::new("train_ll", data.clone()), 10)
//!     .run()?;
//! assert_eq!(out.record.stop, StopReason::MaxEpochs);
//! assert_eq!(out.record.history.len(), 3); // epochs 0, 10, 20
//! # Ok::<(), boltzkit::Error>(())
//! ```

use super::epoch_loop::EpochLoop;
use super::params::{CheckedRbmParams, CheckedTrainParams, TrainParams};
use super::progress::Progress;
use super::record::TrainOutcome;
use super::state::TrainState;
use super::update::Update;
use crate::data::Dataset;
use crate::driver::drive;
use crate::error::{Error, Result};
use crate::fit::{Interrupt, Observer, Run};
use crate::rbm::model::require_binary_data;
use crate::rbm::Rbm;

/// The training loop; see the module documentation.
pub struct Trainer<'d> {
    rbm: Rbm,
    data: &'d Dataset,
    params: TrainParams,
    update: Option<Box<dyn Update + 'd>>,
    run: Run<'d, CheckedRbmParams>,
    resume: Option<TrainState>,
}

impl std::fmt::Debug for Trainer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("rbm", &self.rbm)
            .field("params", &self.params)
            .field("run", &self.run)
            .finish()
    }
}

impl<'d> Trainer<'d> {
    /// A run training `rbm` on the binary dataset `data` with checked `params`.
    pub fn new(rbm: Rbm, data: &'d Dataset, params: TrainParams) -> Result<Self> {
        Self::checked(rbm, data, params.check()?)
    }

    /// [`Trainer::new`] with settings already checked.
    pub fn checked(rbm: Rbm, data: &'d Dataset, params: CheckedTrainParams) -> Result<Self> {
        require_binary_data(data)?;
        if data.n_vars() != rbm.n_visible() {
            return Err(Error::Shape {
                op: "Trainer::new".into(),
                expected: format!("data with {} variables (n_visible)", rbm.n_visible()),
                found: format!("{}", data.n_vars()),
            });
        }
        params.check_work(data.n_samples(), rbm.n_visible(), rbm.n_hidden())?;
        let params = *params.get();
        Ok(Trainer {
            rbm,
            data,
            params,
            update: None,
            run: Run::new(),
            resume: None,
        })
    }

    /// Continues the run whose state after some epoch is `state` (from a checkpoint:
    /// [`super::observers::load_checkpoint`]); the trainer's model must be the model of that
    /// epoch. The loop starts at the next epoch with the saved shuffle, optimizer and update
    /// state, without the initial observation, so it ends with the same bits as the
    /// uninterrupted run. [`Trainer::run`] refuses other settings, another data size, or a
    /// state from the end of the run.
    pub fn resume(mut self, state: TrainState) -> Self {
        self.resume = Some(state);
        self
    }

    /// Runs with the observers and interrupt of `run` (replacing those added so far).
    pub fn with_run(mut self, run: Run<'d, CheckedRbmParams>) -> Self {
        self.run = run;
        self
    }

    /// Stops the run when `flag` is set: after the current update, with
    /// [`StopReason::Interrupted`](crate::fit::StopReason::Interrupted) and the model of that update (observers' `finish` still
    /// runs, so checkpoints and logs are written).
    pub fn interrupt(mut self, flag: Interrupt) -> Self {
        self.run = self.run.interrupt(flag);
        self
    }

    /// Trains with `update` (e.g. a user's [`GradientEstimator`](super::GradientEstimator)) instead of the update of
    /// [`TrainParams::algorithm`], which then only names the run.
    pub fn update(mut self, update: impl Update + 'd) -> Self {
        self.update = Some(Box::new(update));
        self
    }

    /// Adds an observer called on the initial model and after every `every`-th epoch (`every`
    /// of 0 means only [`Observer::start`] and [`Observer::finish`]).
    pub fn add_observer(
        mut self,
        obs: impl for<'p> Observer<Progress<'p>> + 'd,
        every: usize,
    ) -> Self {
        self.run = self.run.observe_every(obs, every);
        self
    }

    /// Runs the loop (`epoch_loop.rs`, one epoch per step of [`drive`]): the initial
    /// observation (not on resume), the epochs, the observers' `finish`. Errors from observers (I/O, evaluation) end the run
    /// with that error; divergence is not an error but a [`StopReason`](crate::fit::StopReason).
    pub fn run(self) -> Result<TrainOutcome> {
        let Trainer {
            rbm,
            data,
            params,
            update,
            run,
            resume,
        } = self;
        let mut run = run;
        let mut epochs = EpochLoop::start(rbm, data, params, update, &run, resume)?;
        let driven = drive(&mut epochs, &mut run)?;
        epochs.finish(&mut run, driven.stop)
    }
}

#[cfg(test)]
mod tests;
