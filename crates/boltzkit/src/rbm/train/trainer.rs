//! The RBM training loop (argmin's `Executor` habit, DESIGN.md "The loop"):
//! [`Trainer::new`]`(rbm, data, params)` → [`Trainer::add_observer`] → [`Trainer::run`], which
//! returns the model and a [`TrainRecord`] with the recorded [`StopReason`].
//!
//! Each epoch shuffles the samples (seeded), cuts them into mini-batches (the full batch
//! allowed, as the S-DCP paper's small-data set-up, Sec. 4.1), and applies one update per
//! batch with the chosen [`Algorithm`] (CD-k, PCD-k, S-DCP, CG, CS-DCP; CD runs as S-DCP with
//! `d = 1`, Alg. 3 of the S-DCP paper, and CG as CS-DCP with `d = 1`, Alg. 4). After every update a divergence guard checks the parameters:
//! a NaN, an infinity or a parameter above [`TrainParams::max_abs_param`] in magnitude stops
//! training with [`StopReason::Diverged`] and the model of before that update is returned.
//!
//! Observers ([`Observer`]) run on the initial model (epoch 0) and after every `every`-th
//! epoch; metrics they put in [`Progress::metrics`] are kept in [`TrainRecord::history`].
//! Provided: [`ExactLogLikelihood`] (exact average log-likelihood, smaller layer ≤ 25 units),
//! [`AisLogLikelihood`] (AIS estimate with its standard error, for larger models),
//! [`JsonlLog`] (a JSONL [`MetricLog`]) and [`Checkpoint`] (model files via [`save_rbm`]).
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

use super::CheckedRbmParams;
use super::{
    Algorithm, Cd, Centered, CheckedTrainParams, Gradient, GradientEstimator, GuardVerdict,
    Observer, PopCd, Progress, Pt, Sdcp, Sgd, SgdParams, TrainParams, Weighting,
};
use crate::data::Dataset;
use crate::error::{Error, Result};
pub use crate::fit::StopReason;
use crate::fit::{Count, Fit, Interrupt, Run};
use crate::io::MetricRecord;
use crate::rbm::file::Offsets;
use crate::rbm::model::{fill_batch, require_binary_data};
use crate::rbm::Rbm;
use crate::rng::{derive_rng, derive_seed, BkRng};
use rand::seq::SliceRandom;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// What a run did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrainRecord {
    /// Why it stopped.
    pub stop: StopReason,
    /// Epochs completed.
    pub epochs: usize,
    /// Updates applied (and kept).
    pub steps: u64,
    /// Wall-clock seconds of the run.
    pub wall_s: f64,
    /// One record per observation that produced metrics.
    pub history: Vec<MetricRecord>,
    /// The final centering offsets (centered algorithms only; saved beside the model). After
    /// a divergence they include the failed update's slide toward the batch means (computed
    /// at the last good model).
    #[serde(skip)]
    pub offsets: Option<Offsets>,
}

/// The result of [`Trainer::run`]: the model (the last good one when the run diverged) and
/// its record.
pub type TrainOutcome = Fit<Rbm, TrainRecord>;

/// One optimizer step on a mini-batch: what the loop calls for every batch.
///
/// Every [`GradientEstimator`] is an `Update` (estimate the gradient, then one [`Sgd`] step),
/// so a user's estimator trains with the same loop as CD, PCD, pop-CD and PT. S-DCP
/// ([`Sdcp`], Alg. 3) and CS-DCP / CG ([`Centered`], Alg. 4) take several inner steps per
/// batch and implement it directly. CD runs as S-DCP with `d = 1` (the same bits), and pop-CD
/// with unit weights is CD.
pub trait Update {
    /// Updates `rbm` on the mini-batch `v` (`batch × n_visible`, 0/1) with the optimizer
    /// `sgd`; `grad` is scratch space shaped like the model.
    fn update(
        &mut self,
        rbm: &mut Rbm,
        v: &[f32],
        sgd: &mut Sgd,
        grad: &mut Gradient,
    ) -> Result<()>;

    /// Adds diagnostics since the previous call to `out` (as [`GradientEstimator::report`]);
    /// the loop calls it when an observer runs. None by default.
    fn report(&mut self, _out: &mut BTreeMap<String, f64>) {}

    /// The centering offsets, for centered updates. None by default.
    fn offsets(&self) -> Option<Offsets> {
        None
    }

    /// True when `update` changes the model only through `sgd.step` (then the loop folds
    /// its divergence guard into the first step: one pass over the parameters instead of
    /// three). False, the safe default, for an update that may change it otherwise.
    fn changes_model_only_by_sgd(&self) -> bool {
        false
    }

    /// The update's state between mini-batches (chains, their generators, offsets) for a
    /// checkpoint ([`TrainState::update`]); `Ok(None)`, the default, means it cannot be saved,
    /// and such a run cannot be resumed.
    fn save_state(&self) -> Result<Option<serde_json::Value>> {
        Ok(None)
    }

    /// Restores a state written by [`Update::save_state`]. Refuses by default.
    fn restore_state(&mut self, _state: serde_json::Value) -> Result<()> {
        Err(Error::param(
            "resume",
            "this update cannot restore a saved state (it implements no Update::restore_state)",
        ))
    }
}

/// [`Update::save_state`] of a built-in update: the whole value, as JSON.
pub(crate) fn save_json<T: Serialize>(x: &T) -> Result<Option<serde_json::Value>> {
    serde_json::to_value(x)
        .map(Some)
        .map_err(|e| Error::Internal(format!("saving the update's state: {e}")))
}

/// [`Update::restore_state`] of a built-in update.
pub(crate) fn restore_json<T: serde::de::DeserializeOwned>(
    x: &mut T,
    state: serde_json::Value,
    what: &str,
) -> Result<()> {
    *x = serde_json::from_value(state).map_err(|e| {
        Error::param(
            "resume",
            format!("the saved state is not a {what} state: {e}"),
        )
    })?;
    Ok(())
}

impl<E: GradientEstimator + ?Sized> Update for E {
    fn update(
        &mut self,
        rbm: &mut Rbm,
        v: &[f32],
        sgd: &mut Sgd,
        grad: &mut Gradient,
    ) -> Result<()> {
        self.estimate(rbm, v, grad)?;
        sgd.step(rbm, grad)
    }

    /// An estimator sees the model read-only: only the step changes it.
    fn changes_model_only_by_sgd(&self) -> bool {
        true
    }

    fn report(&mut self, out: &mut BTreeMap<String, f64>) {
        GradientEstimator::report(self, out)
    }

    fn save_state(&self) -> Result<Option<serde_json::Value>> {
        GradientEstimator::save_state(self)
    }

    fn restore_state(&mut self, state: serde_json::Value) -> Result<()> {
        GradientEstimator::restore_state(self, state)
    }
}

impl Update for Sdcp {
    fn update(
        &mut self,
        rbm: &mut Rbm,
        v: &[f32],
        sgd: &mut Sgd,
        grad: &mut Gradient,
    ) -> Result<()> {
        self.step(rbm, v, sgd, grad)
    }

    /// Alg. 3 changes the model only by its `d` SGD steps.
    fn changes_model_only_by_sgd(&self) -> bool {
        true
    }

    fn save_state(&self) -> Result<Option<serde_json::Value>> {
        save_json(self)
    }

    fn restore_state(&mut self, state: serde_json::Value) -> Result<()> {
        restore_json(self, state, "S-DCP")
    }
}

impl Update for Centered {
    fn update(
        &mut self,
        rbm: &mut Rbm,
        v: &[f32],
        sgd: &mut Sgd,
        grad: &mut Gradient,
    ) -> Result<()> {
        self.step(rbm, v, sgd, grad)
    }

    fn offsets(&self) -> Option<Offsets> {
        Some(Centered::offsets(self))
    }

    fn save_state(&self) -> Result<Option<serde_json::Value>> {
        save_json(self)
    }

    fn restore_state(&mut self, state: serde_json::Value) -> Result<()> {
        restore_json(self, state, "centered (CG / CS-DCP)")
    }
}

/// The update of a built-in [`Algorithm`], its chains seeded by `chain_seed`; centered
/// algorithms take their offsets from `data`.
pub fn algorithm_update(
    algorithm: Algorithm,
    params: &TrainParams,
    data: &Dataset,
    n_hidden: usize,
    chain_seed: u64,
) -> Result<Box<dyn Update>> {
    Ok(match algorithm {
        // CD-k is S-DCP with d = 1 (Alg. 3), the same bits as Cd + one Sgd step.
        Algorithm::Cd { k } => Box::new(Sdcp::new(1, k, chain_seed)?),
        Algorithm::Sdcp { inner, k } => Box::new(Sdcp::new(inner, k, chain_seed)?),
        Algorithm::Pcd { k } => Box::new(Cd::persistent(k, chain_seed)?),
        // CG is CS-DCP with d = 1 (Alg. 4).
        Algorithm::Cg { k } | Algorithm::CsDcp { k, .. } => {
            let inner = match algorithm {
                Algorithm::CsDcp { inner, .. } => inner,
                _ => 1,
            };
            Box::new(Centered::from_data(
                data,
                n_hidden,
                inner,
                k,
                chain_seed,
                params.nu_mu,
                params.nu_lambda,
            )?)
        }
        Algorithm::PopCd { k, loo } => {
            let w = if loo {
                Weighting::LeaveOneOut
            } else {
                Weighting::SelfNormalized
            };
            Box::new(PopCd::new(k, chain_seed)?.weighting(w))
        }
        Algorithm::Pt { replicas, k } => Box::new(Pt::new(replicas, k, chain_seed)?),
    })
}

/// The layout version of [`TrainState`].
pub const TRAIN_STATE_VERSION: u32 = 1;

/// The loop's whole state after an epoch: with the model of that epoch, what
/// [`Trainer::resume`] needs to continue a run so that it ends with the same bits as an
/// uninterrupted one (same settings, data and seed). [`super::Checkpoint`] stores it in the
/// checkpoint file ([`super::observers::load_checkpoint`] reads it back).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainState {
    /// [`TRAIN_STATE_VERSION`].
    pub version: u32,
    /// The run's settings (`{:?}` of its [`TrainParams`]); a resume under others is refused.
    pub settings: String,
    /// Epochs done.
    pub epoch: usize,
    /// Updates done.
    pub step: u64,
    /// Wall-clock seconds of the run so far (the resumed run's clock continues from here).
    pub wall_s: f64,
    /// The optimizer's momentum buffer ([`Sgd::velocity`]).
    pub velocity: Option<Gradient>,
    /// The shuffling generator (`derive_rng(seed, 1)` after `epoch` shuffles).
    pub shuffle_rng: BkRng,
    /// The sample order, shuffled in place each epoch (the next shuffle permutes it).
    pub order: Vec<usize>,
    /// The update's state ([`Update::save_state`]).
    pub update: serde_json::Value,
    /// The metric history up to and including the observation at `epoch`.
    pub history: Vec<MetricRecord>,
}

/// What the loop lends an observation so that [`Progress::train_state`] can assemble a
/// [`TrainState`] (only when asked: a checkpoint).
#[derive(Clone, Copy)]
pub struct LoopState<'a> {
    pub(crate) params: &'a TrainParams,
    pub(crate) sgd: &'a Sgd,
    pub(crate) shuffle_rng: &'a BkRng,
    pub(crate) order: &'a [usize],
    pub(crate) update: &'a dyn Update,
}

impl std::fmt::Debug for LoopState<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopState").finish_non_exhaustive()
    }
}

impl Progress<'_> {
    /// The loop's state at this observation, with the record of this observation as far as
    /// the observers before the caller filled it (add [`super::Checkpoint`] after the
    /// evaluators); `None` at `start` and `finish` (not an epoch boundary) and when the update
    /// cannot save its state ([`Update::save_state`]).
    pub fn train_state(&self) -> Result<Option<TrainState>> {
        let Some(s) = self.state else {
            return Ok(None);
        };
        let Some(update) = s.update.save_state()? else {
            return Ok(None);
        };
        let mut history = self.history.to_vec();
        if !self.metrics.is_empty() {
            history.push(MetricRecord {
                step: self.step,
                epoch: self.epoch as u64,
                wall_s: self.wall_s,
                metrics: self.metrics.clone(),
            });
        }
        Ok(Some(TrainState {
            version: TRAIN_STATE_VERSION,
            settings: format!("{:?}", s.params),
            epoch: self.epoch,
            step: self.step,
            wall_s: self.wall_s,
            velocity: s.sgd.velocity().cloned(),
            shuffle_rng: s.shuffle_rng.clone(),
            order: s.order.to_vec(),
            update,
            history,
        }))
    }
}

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
        let params = *params.get();
        require_binary_data(data)?;
        if data.n_vars() != rbm.n_visible() {
            return Err(Error::Shape {
                op: "Trainer::new".into(),
                expected: format!("data with {} variables (n_visible)", rbm.n_visible()),
                found: format!("{}", data.n_vars()),
            });
        }
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
    /// [`StopReason::Interrupted`] and the model of that update (observers' `finish` still
    /// runs, so checkpoints and logs are written).
    pub fn interrupt(mut self, flag: Interrupt) -> Self {
        self.run = self.run.interrupt(flag);
        self
    }

    /// Trains with `update` (e.g. a user's [`GradientEstimator`]) instead of the update of
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

    /// Runs the loop. Errors from observers (I/O, evaluation) end the run with that error;
    /// divergence is not an error but a [`StopReason`].
    pub fn run(self) -> Result<TrainOutcome> {
        let Trainer {
            mut rbm,
            data,
            params,
            update,
            mut run,
            resume,
        } = self;
        let start = Instant::now();
        let p = params;
        let n = data.n_samples();
        let nv = rbm.n_visible();
        let bs = p.batch_size.unwrap_or(n).min(n);
        let chain_seed = derive_seed(p.seed, 0);
        let mut shuffle_rng = derive_rng(p.seed, 1);
        let mut engine: Box<dyn Update + 'd> = match update {
            Some(u) => u,
            None => algorithm_update(p.algorithm, &p, data, rbm.n_hidden(), chain_seed)?,
        };
        let lr0 = p.learning_rate.at(0, p.epochs);
        let mut sgd: Sgd = SgdParams::new()
            .learning_rate(lr0)
            .momentum(p.momentum)
            .weight_decay(p.weight_decay)
            .check()?;
        let mut order: Vec<usize> = (0..n).collect();
        let mut history = Vec::new();
        let mut step = 0u64;
        let mut first_epoch = 0usize;
        let mut wall0 = 0.0;
        let resumed = resume.is_some();
        if let Some(state) = resume {
            check_resume(&state, &p, n)?;
            engine.restore_state(state.update)?;
            sgd.set_velocity(state.velocity);
            shuffle_rng = state.shuffle_rng;
            order = state.order;
            history = state.history;
            step = state.step;
            first_epoch = state.epoch;
            wall0 = state.wall_s;
        }
        let lr_start = p.learning_rate.at(first_epoch.saturating_sub(1), p.epochs);
        run.start(&mut Progress {
            params: &p,
            rbm: &rbm,
            epoch: first_epoch,
            step,
            learning_rate: lr_start,
            wall_s: wall0,
            metrics: &mut BTreeMap::new(),
            offsets: engine.offsets().as_ref(),
            history: &history,
            state: None,
        })?;
        let mut observe = |run: &mut Run<'d, CheckedRbmParams>,
                           rbm: &Rbm,
                           epoch: usize,
                           step: u64,
                           lr: f32,
                           engine: &mut Box<dyn Update + 'd>,
                           sgd: &Sgd,
                           shuffle_rng: &BkRng,
                           order: &[usize]|
         -> Result<Option<StopReason>> {
            if !run.due(epoch) {
                return Ok(None);
            }
            // the estimator's diagnostics since the last observation (pop-CD's effective
            // sample size, PT's exchange rates)
            let mut metrics = BTreeMap::new();
            engine.report(&mut metrics);
            let offsets = engine.offsets();
            let wall_s = wall0 + start.elapsed().as_secs_f64();
            let stop = run.observe_at(
                epoch,
                &mut Progress {
                    params: &p,
                    rbm,
                    epoch,
                    step,
                    learning_rate: lr,
                    wall_s,
                    metrics: &mut metrics,
                    offsets: offsets.as_ref(),
                    history: &history,
                    state: Some(LoopState {
                        params: &p,
                        sgd,
                        shuffle_rng,
                        order,
                        update: &**engine,
                    }),
                },
            )?;
            if !metrics.is_empty() {
                history.push(MetricRecord {
                    step,
                    epoch: epoch as u64,
                    wall_s,
                    metrics,
                });
            }
            Ok(stop)
        };
        let mut stop = if resumed {
            StopReason::MaxEpochs
        } else {
            observe(
                &mut run,
                &rbm,
                0,
                0,
                lr0,
                &mut engine,
                &sgd,
                &shuffle_rng,
                &order,
            )?
            .unwrap_or(StopReason::MaxEpochs)
        };

        let mut batch = vec![0f32; bs * nv];
        let mut grad = Gradient::like(&rbm);
        let mut last_good = Some(rbm.clone());
        let fold_guard = engine.changes_model_only_by_sgd();
        let mut epochs_done = first_epoch;
        let epochs = if stop == StopReason::MaxEpochs {
            p.epochs
        } else {
            0
        };
        'epochs: for epoch in first_epoch..epochs {
            let lr = p.learning_rate.at(epoch, p.epochs);
            sgd.set_learning_rate(lr)?;
            if p.shuffle {
                order.shuffle(&mut shuffle_rng);
            }
            // the other workers poll through the epoch's short parallel regions
            let warm = crate::warm::Warm::for_weights(nv * rbm.n_hidden());
            for rows in order.chunks(bs) {
                let v = &mut batch[..rows.len() * nv];
                fill_batch(data, rows, v)?;
                let mut good = last_good.take().expect("the last good model is put back");
                let verdict = if fold_guard {
                    sgd.arm_guard(good, p.max_abs_param);
                    let updated = engine.update(&mut rbm, v, &mut sgd, &mut grad);
                    let (backup, verdict) = sgd.disarm_guard().expect("armed above");
                    good = backup;
                    updated?;
                    verdict
                } else {
                    copy_params(&mut good, &rbm);
                    engine.update(&mut rbm, v, &mut sgd, &mut grad)?;
                    GuardVerdict::Unchecked
                };
                step += 1;
                // the step's own check when it made one (the full scan only to say what is
                // wrong, or when the step did not check)
                let diverged = match verdict {
                    GuardVerdict::Checked { bad: false } | GuardVerdict::NotStepped => None,
                    _ => divergence(&rbm, p.max_abs_param),
                };
                last_good = Some(good);
                if let Some(detail) = diverged {
                    let good = last_good.as_mut().expect("put back above");
                    std::mem::swap(&mut rbm, good);
                    stop = StopReason::Diverged {
                        epoch: epoch + 1,
                        step,
                        detail,
                    };
                    step -= 1;
                    break 'epochs;
                }
                if run.interrupted() {
                    stop = StopReason::Interrupted {
                        after: Count::epochs(epoch),
                    };
                    epochs_done = epoch;
                    break 'epochs;
                }
            }
            drop(warm);
            epochs_done = epoch + 1;
            if let Some(why) = observe(
                &mut run,
                &rbm,
                epochs_done,
                step,
                lr,
                &mut engine,
                &sgd,
                &shuffle_rng,
                &order,
            )? {
                stop = why;
                break;
            }
        }
        let offsets = engine.offsets();
        let wall_s = wall0 + start.elapsed().as_secs_f64();
        run.finish(
            &mut Progress {
                params: &p,
                rbm: &rbm,
                epoch: epochs_done,
                step,
                learning_rate: p.learning_rate.at(epochs_done.saturating_sub(1), p.epochs),
                wall_s,
                metrics: &mut BTreeMap::new(),
                offsets: offsets.as_ref(),
                history: &history,
                state: None,
            },
            &stop,
        )?;
        Ok(Fit {
            model: rbm,
            record: TrainRecord {
                stop,
                epochs: epochs_done,
                steps: step,
                wall_s,
                history,
                offsets,
            },
        })
    }
}

/// Refuses a [`TrainState`] that does not continue a run of `p` on `n` samples.
fn check_resume(state: &TrainState, p: &TrainParams, n: usize) -> Result<()> {
    let refuse = |why: String| Err(Error::param("resume", why));
    if state.version != TRAIN_STATE_VERSION {
        return refuse(format!(
            "the saved state has layout version {}, this build reads {TRAIN_STATE_VERSION}",
            state.version
        ));
    }
    let settings = format!("{p:?}");
    if state.settings != settings {
        return refuse(format!(
            "the saved run's settings differ: saved {}, given {settings}",
            state.settings
        ));
    }
    if state.order.len() != n {
        return refuse(format!(
            "the saved run had {} samples, the data has {n}",
            state.order.len()
        ));
    }
    if state.epoch >= p.epochs {
        return refuse(format!(
            "the saved state is at epoch {} of {}: nothing to resume",
            state.epoch, p.epochs
        ));
    }
    Ok(())
}

/// Copies the parameters of `src` into `dst` (same shape) without allocating.
fn copy_params(dst: &mut Rbm, src: &Rbm) {
    let (w, b, c) = dst.params_mut();
    // in parallel: a serial copy of W per update held the second thread idle (issue 19)
    w.par_chunks_mut(GUARD_CHUNK)
        .zip(src.w().par_chunks(GUARD_CHUNK))
        .for_each(|(d, s)| d.copy_from_slice(s));
    b.copy_from_slice(src.b());
    c.copy_from_slice(src.c());
}

/// Parameters per parallel task of the divergence guard's copy and check.
const GUARD_CHUNK: usize = 1 << 14;

/// The divergence guard's check: `None` when every parameter is finite and within
/// `max_abs` in magnitude, else what is wrong.
pub fn divergence(rbm: &Rbm, max_abs: f32) -> Option<String> {
    for (name, xs) in [("W", rbm.w()), ("b", rbm.b()), ("c", rbm.c())] {
        // a branch-free scan (vectorized) first; the position only when something is wrong
        // (the bound is finite, so ±∞ exceed it; NaN is caught on its own)
        let bound = max_abs.min(f32::MAX);
        // one comparison, false for NaN: no branch in the scan, which the compiler then
        // vectorizes (with `is_nan() || >` it compiled to two scalar compares and a branch
        // per entry: 6% of a one-thread PCD-1 MNIST epoch, issue 19)
        // (the negated comparison is the point: it is true for NaN)
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let bad = |x: &f32| !(x.abs() <= bound);
        // in parallel over fixed chunks (a yes/no answer: the same for any thread count)
        if !xs
            .par_chunks(GUARD_CHUNK)
            .any(|ch| ch.iter().fold(0u32, |any, x| any | u32::from(bad(x))) != 0)
        {
            continue;
        }
        if let Some(i) = xs.iter().position(bad) {
            let x = xs[i];
            return Some(if x.is_finite() {
                format!("|{name}[{i}]| = {} exceeds the bound {max_abs}", x.abs())
            } else {
                format!("{name}[{i}] = {x} is not finite")
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synth::{BarsAndStripes, ShiftingBar};
    use crate::io::MetricLog;
    use crate::rbm::ais::AisSchedule;
    use crate::rbm::exact;
    use crate::rbm::train::{
        AisLogLikelihood, Checkpoint, ExactLogLikelihood, JsonlLog, LearningRate,
    };
    use crate::rng::rng_from_seed;

    #[test]
    fn an_interrupt_ends_the_run_after_the_current_update_with_that_model() {
        let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        let rbm = Rbm::init_from_data(&data, 4, 0.01, &mut rng_from_seed(1)).unwrap();
        let params = TrainParams::new().epochs(50).batch_size(4).seed(2);
        let flag = Interrupt::new();
        flag.set();
        let out = Trainer::new(rbm.clone(), &data, params)
            .unwrap()
            .interrupt(flag)
            .run()
            .unwrap();
        assert_eq!(
            out.record.stop,
            StopReason::Interrupted {
                after: Count::epochs(0)
            }
        );
        assert_eq!((out.record.steps, out.record.epochs), (1, 0));
        // The model returned carries that one update.
        assert_ne!(out.model, rbm);
        assert!(out.model.is_finite());
    }

    #[test]
    fn invalid_settings_name_their_field() {
        let field = |p: TrainParams| match p.check() {
            Err(Error::InvalidParam { field, .. }) => field,
            other => panic!("expected an error, got {other:?}"),
        };
        assert_eq!(field(TrainParams::new().epochs(0)), "epochs");
        assert_eq!(field(TrainParams::new().batch_size(0)), "batch_size");
        assert_eq!(
            field(TrainParams::new().algorithm(Algorithm::Pcd { k: 0 })),
            "k"
        );
        assert_eq!(
            field(TrainParams::new().algorithm(Algorithm::Sdcp { inner: 0, k: 4 })),
            "inner"
        );
        assert_eq!(
            field(TrainParams::new().learning_rate(-1.0)),
            "learning_rate"
        );
        assert_eq!(
            field(TrainParams::new().schedule(LearningRate::Linear {
                start: 0.1,
                end: 0.0
            })),
            "learning_rate"
        );
        assert_eq!(field(TrainParams::new().momentum(1.5)), "momentum");
        assert_eq!(field(TrainParams::new().weight_decay(-0.1)), "weight_decay");
        assert_eq!(
            field(TrainParams::new().max_abs_param(0.0)),
            "max_abs_param"
        );
        assert!(TrainParams::new().check().is_ok());
        let s = LearningRate::Linear {
            start: 0.5,
            end: 0.1,
        };
        assert_eq!((s.at(0, 5), s.at(4, 5)), (0.5, 0.1));
        assert!((s.at(2, 5) - 0.3).abs() < 1e-6);
    }

    /// The guard fires on η = 1e6 and returns the model before the failing update; with the
    /// full batch and no shuffling that is the initial model after 0 kept updates.
    #[test]
    fn divergence_guard_fires_on_huge_learning_rate() {
        let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        let rbm0 = Rbm::init_from_data(&data, 16, 0.01, &mut rng_from_seed(3)).unwrap();
        let out = Trainer::new(
            rbm0.clone(),
            &data,
            TrainParams::new().learning_rate(1e6).batch_size(5).seed(1),
        )
        .unwrap()
        .run()
        .unwrap();
        let StopReason::Diverged {
            epoch,
            step,
            ref detail,
        } = out.record.stop
        else {
            panic!("expected divergence, got {:?}", out.record.stop);
        };
        assert_eq!((epoch, step), (1, 1), "{detail}");
        assert!(detail.contains("exceeds"), "{detail}");
        assert_eq!(out.model, rbm0);
        assert_eq!(out.record.steps, 0);
        assert_eq!(out.record.epochs, 0);
        assert!(out.record.stop.to_string().contains("diverged"));

        // a looser bound lets some updates through. With the full batch (one update per
        // epoch), find the first update k* whose largest |parameter| exceeds all before it,
        // and put the bound between: the guard fires at k* and returns the model of k* − 1
        // updates, the last good one, bit for bit.
        let params = TrainParams::new()
            .learning_rate(1e6)
            .full_batch()
            .seed(1)
            .max_abs_param(f32::INFINITY);
        let after = |epochs: usize| {
            Trainer::new(rbm0.clone(), &data, params.epochs(epochs))
                .unwrap()
                .run()
                .unwrap()
                .model
        };
        let max_abs = |r: &Rbm| {
            r.w()
                .iter()
                .chain(r.b())
                .chain(r.c())
                .fold(0f32, |a, &x| a.max(x.abs()))
        };
        let mut best = max_abs(&after(1));
        let mut k_star = 0;
        for k in 2..=10 {
            let m = max_abs(&after(k));
            if m > best * 1.01 {
                k_star = k;
                break;
            }
            best = best.max(m);
        }
        assert!(k_star >= 2, "the weights never grew");
        let bound = best * 1.005;
        let out = Trainer::new(rbm0.clone(), &data, params.epochs(20).max_abs_param(bound))
            .unwrap()
            .run()
            .unwrap();
        let StopReason::Diverged { step, epoch, .. } = out.record.stop else {
            panic!("expected divergence, got {:?}", out.record.stop);
        };
        assert_eq!((step, epoch), (k_star as u64, k_star));
        assert_eq!(out.record.steps, k_star as u64 - 1);
        assert_eq!(out.model, after(k_star - 1));
        assert!(out.model.is_finite() && divergence(&out.model, bound).is_none());
    }

    #[test]
    fn divergence_detects_nan_inf_and_size() {
        let mut rbm = Rbm::zeros(2, 2).unwrap();
        assert_eq!(divergence(&rbm, 1.0), None);
        rbm.params_mut().1[1] = f32::NAN;
        assert!(divergence(&rbm, 1.0).unwrap().contains("b[1] = NaN"));
        rbm.params_mut().1[1] = 0.0;
        rbm.params_mut().2[0] = f32::INFINITY;
        assert!(divergence(&rbm, f32::INFINITY)
            .unwrap()
            .contains("not finite"));
        rbm.params_mut().2[0] = 0.0;
        rbm.params_mut().0[3] = -2.0;
        assert!(divergence(&rbm, 1.0).unwrap().contains("|W[3]| = 2"));
    }

    /// CD-1 on bars & stripes 3×3 with 16 hidden units raises the exact log-likelihood.
    #[test]
    fn cd1_on_bars_and_stripes_raises_exact_log_likelihood() {
        let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        let rbm0 = Rbm::init_from_data(&data, 16, 0.01, &mut rng_from_seed(5)).unwrap();
        let ll0 = exact::average_log_likelihood(&rbm0, &data).unwrap();
        // from the near-symmetric start learning is slow at first (a saddle: the exact
        // gradient ascent twin is as slow); mini-batches of 2 at η = 0.1 leave it in time
        let params = TrainParams::new()
            .epochs(300)
            .batch_size(2)
            .learning_rate(0.1)
            .seed(11);
        let out = Trainer::new(rbm0, &data, params)
            .unwrap()
            .add_observer(ExactLogLikelihood::new("train_ll", data.clone()), 100)
            .run()
            .unwrap();
        assert_eq!(out.record.stop, StopReason::MaxEpochs);
        let lls: Vec<f64> = out
            .record
            .history
            .iter()
            .map(|r| r.metrics["train_ll"])
            .collect();
        assert_eq!(lls.len(), 4);
        assert_eq!(lls[0], ll0);
        let ll = exact::average_log_likelihood(&out.model, &data).unwrap();
        assert_eq!(*lls.last().unwrap(), ll);
        // the initial model is near the base-rate (uniform) model, −ln 2^9 ≈ −6.24; training
        // gains at least 1 nat and stays below the bound −ln 14
        assert!(ll > ll0 + 1.0, "{ll0} → {ll}");
        assert!(ll < -(14f64.ln()) + 1e-9, "{ll}");
        // same seed, same bits
        let again = Trainer::new(
            Rbm::init_from_data(&data, 16, 0.01, &mut rng_from_seed(5)).unwrap(),
            &data,
            params,
        )
        .unwrap()
        .run()
        .unwrap();
        assert_eq!(again.model, out.model);
    }

    /// The loop's CD is S-DCP with d = 1 (bit for bit), mini-batches follow the shuffle, and
    /// PCD and S-DCP run.
    #[test]
    fn algorithms_and_batches() {
        let data = ShiftingBar::paper().dataset().unwrap();
        let rbm0 = Rbm::init_from_data(&data, 4, 0.01, &mut rng_from_seed(2)).unwrap();
        let run = |a: Algorithm, bs: Option<usize>| {
            let mut p = TrainParams::new()
                .epochs(5)
                .learning_rate(0.3)
                .algorithm(a)
                .seed(4);
            p.batch_size = bs;
            Trainer::new(rbm0.clone(), &data, p).unwrap().run().unwrap()
        };
        let cd = run(Algorithm::Cd { k: 2 }, Some(4));
        let sd1 = run(Algorithm::Sdcp { inner: 1, k: 2 }, Some(4));
        assert_eq!(cd.model, sd1.model);
        assert_eq!(cd.record.steps, 5 * 3); // 9 rows in batches of 4, 4, 1
        let sd3 = run(Algorithm::Sdcp { inner: 3, k: 4 }, None);
        assert_eq!(sd3.record.steps, 5);
        assert_ne!(sd3.model, cd.model);
        let pcd = run(Algorithm::Pcd { k: 1 }, Some(3));
        assert!(pcd.model.is_finite() && pcd.model != cd.model);

        // by hand: full batch, no shuffle, CD-1 = one Cd estimate + one Sgd step per epoch
        let p = TrainParams::new()
            .epochs(3)
            .full_batch()
            .shuffle(false)
            .learning_rate(0.2)
            .seed(9);
        let out = Trainer::new(rbm0.clone(), &data, p).unwrap().run().unwrap();
        let mut want = rbm0.clone();
        let mut cd = Cd::new(1, derive_seed(9, 0)).unwrap();
        let mut sgd = SgdParams::new().learning_rate(0.2).check().unwrap();
        let mut g = Gradient::like(&want);
        let mut v = vec![0.0; 9 * 9];
        fill_batch(&data, &(0..9).collect::<Vec<_>>(), &mut v).unwrap();
        for _ in 0..3 {
            cd.estimate(&want, &v, &mut g).unwrap();
            sgd.step(&mut want, &g).unwrap();
        }
        assert_eq!(out.model, want);
    }

    /// The AIS observer agrees with the exact one within 3 standard errors (plus a little).
    #[test]
    fn ais_observer_matches_exact() {
        let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        let rbm0 = Rbm::init_from_data(&data, 16, 0.01, &mut rng_from_seed(5)).unwrap();
        let p = TrainParams::new()
            .epochs(300)
            .batch_size(2)
            .learning_rate(0.1)
            .seed(1);
        let ais = AisLogLikelihood::new(
            "ll_ais",
            data.clone(),
            AisSchedule::linear(500).unwrap(),
            64,
            9,
        )
        .unwrap();
        let bracket = AisLogLikelihood::new(
            "ll_b",
            data.clone(),
            AisSchedule::linear(500).unwrap(),
            64,
            9,
        )
        .unwrap()
        .bracket(None)
        .unwrap();
        let out = Trainer::new(rbm0, &data, p)
            .unwrap()
            .add_observer(ExactLogLikelihood::new("ll", data.clone()), 150)
            .add_observer(ais, 150)
            .add_observer(bracket, 150)
            .run()
            .unwrap();
        assert_eq!(out.record.history.len(), 3);
        for r in &out.record.history {
            // the bracket's AIS end is the AIS observer's figure; its RAISE end is below the
            // exact figure within noise (and not far below at 500 steps)
            assert_eq!(r.metrics["ll_b"], r.metrics["ll_ais"]);
            let (raise, raise_se) = (r.metrics["ll_b_raise"], r.metrics["ll_b_raise_se"]);
            assert!(
                raise <= r.metrics["ll"] + 3.0 * raise_se + 0.02 && raise > r.metrics["ll"] - 1.0,
                "RAISE {raise} ± {raise_se} vs exact {}",
                r.metrics["ll"]
            );
            let (exact_ll, ais_ll, se) = (
                r.metrics["ll"],
                r.metrics["ll_ais"],
                r.metrics["ll_ais_log_z_se"],
            );
            assert!(
                (exact_ll - ais_ll).abs() <= 3.0 * se + 0.02,
                "{exact_ll} vs {ais_ll} ± {se}"
            );
        }
        // training moved the model, so the check is not only at the start
        let h = &out.record.history;
        assert!(h[2].metrics["ll"] > h[0].metrics["ll"] + 0.5);
        assert!(AisLogLikelihood::new("x", data, AisSchedule::linear(1).unwrap(), 0, 1).is_err());
    }

    /// CG is CS-DCP with d = 1 (bit for bit); the centered runs keep offsets, checkpoint
    /// them, and the offsets slide from (data mean, 0.5) as set.
    #[test]
    fn centered_algorithms_in_the_loop() {
        let dir = tempfile::tempdir().unwrap();
        let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        let rbm0 = Rbm::init_from_data(&data, 4, 0.01, &mut rng_from_seed(2)).unwrap();
        let ckpt = dir.path().join("cg.safetensors");
        let run = |a: Algorithm, nu: f32| {
            let p = TrainParams::new()
                .epochs(30)
                .full_batch()
                .learning_rate(0.5)
                .algorithm(a)
                .sliding(nu, nu)
                .seed(3);
            Trainer::new(rbm0.clone(), &data, p)
                .unwrap()
                .add_observer(Checkpoint::new(&ckpt, BTreeMap::new()), 10)
                .run()
                .unwrap()
        };
        let cg = run(Algorithm::Cg { k: 2 }, 0.01);
        let cs1 = run(Algorithm::CsDcp { inner: 1, k: 2 }, 0.01);
        assert_eq!(cg.model, cs1.model);
        assert_eq!(cg.record.offsets, cs1.record.offsets);
        let f = crate::rbm::file::load_rbm(&ckpt).unwrap();
        assert_eq!(f.rbm, cs1.model);
        assert_eq!(f.offsets, cs1.record.offsets);
        assert_eq!(f.metadata["algorithm"], "csdcp");
        // ν = 0 keeps the initial offsets: μ = data mean (0.5 for bars & stripes), λ = 0.5
        let still = run(Algorithm::CsDcp { inner: 3, k: 4 }, 0.0);
        let off = still.record.offsets.unwrap();
        assert!(off.mu.iter().chain(&off.lambda).all(|&x| x == 0.5));
        assert_ne!(still.model, cg.model);
        let moved = cg.record.offsets.unwrap();
        assert!(moved.lambda.iter().any(|&x| x != 0.5));
        // CD keeps none
        assert!(run(Algorithm::Cd { k: 1 }, 0.01).record.offsets.is_none());
        match TrainParams::new().sliding(1.5, 0.0).check() {
            Err(Error::InvalidParam { field, .. }) => assert_eq!(field, "nu_mu"),
            other => panic!("{other:?}"),
        }
        match TrainParams::new()
            .algorithm(Algorithm::CsDcp { inner: 0, k: 1 })
            .check()
        {
            Err(Error::InvalidParam { field, .. }) => assert_eq!(field, "inner"),
            other => panic!("{other:?}"),
        }
    }

    /// Fidelity in small (Sec. 4.1 of the S-DCP paper, Fig. 1): on shifting bar 9/1 with 4
    /// hidden units, full batch, η = 0.3, 3,000 epochs, CD-12 stays near the paper's local
    /// optimum −3.15 while S-DCP and CS-DCP (d = 3, K′ = 4) escape it (bound −ln 9 ≈ −2.197).
    #[test]
    fn shifting_bar_sdcp_escapes_the_cd_optimum() {
        let data = ShiftingBar::paper().dataset().unwrap();
        for trial in 0..2u64 {
            let rbm0 =
                Rbm::init_from_data(&data, 4, 0.01, &mut rng_from_seed(100 + trial)).unwrap();
            let ll = |a: Algorithm| {
                let p = TrainParams::new()
                    .epochs(3000)
                    .full_batch()
                    .learning_rate(0.3)
                    .algorithm(a)
                    .seed(trial);
                let out = Trainer::new(rbm0.clone(), &data, p).unwrap().run().unwrap();
                exact::average_log_likelihood(&out.model, &data).unwrap()
            };
            let cd = ll(Algorithm::Cd { k: 12 });
            let sdcp = ll(Algorithm::Sdcp { inner: 3, k: 4 });
            let csdcp = ll(Algorithm::CsDcp { inner: 3, k: 4 });
            assert!((-3.3..-3.0).contains(&cd), "CD {cd}");
            assert!(sdcp > cd + 0.2, "S-DCP {sdcp} vs CD {cd}");
            assert!(csdcp >= -2.9 && csdcp < -(9f64.ln()), "CS-DCP {csdcp}");
        }
    }

    #[test]
    fn log_and_checkpoint_observers_write_files() {
        let dir = tempfile::tempdir().unwrap();
        let data = ShiftingBar::paper().dataset().unwrap();
        let rbm0 = Rbm::init_from_data(&data, 3, 0.01, &mut rng_from_seed(2)).unwrap();
        let log_path = dir.path().join("train.jsonl");
        let ckpt = dir.path().join("rbm.safetensors");
        let out = Trainer::new(
            rbm0,
            &data,
            TrainParams::new().epochs(6).full_batch().learning_rate(0.3),
        )
        .unwrap()
        .add_observer(ExactLogLikelihood::new("train_ll", data.clone()), 2)
        .add_observer(JsonlLog::create(&log_path).unwrap(), 2)
        .add_observer(
            Checkpoint::new(&ckpt, BTreeMap::from([("data".into(), "sb9".into())])),
            3,
        )
        .run()
        .unwrap();
        let recs = MetricLog::read(&log_path).unwrap();
        assert_eq!(
            recs.iter().map(|r| r.epoch).collect::<Vec<_>>(),
            vec![0, 2, 4, 6]
        );
        assert_eq!(
            recs[3].metrics["train_ll"],
            out.record.history[3].metrics["train_ll"]
        );
        assert!((recs[1].metrics["lr"] - 0.3).abs() < 1e-7);
        let f = crate::rbm::file::load_rbm(&ckpt).unwrap();
        assert_eq!(f.rbm, out.model);
        assert_eq!(f.metadata["data"], "sb9");
        assert_eq!(f.metadata["algorithm"], "cd");
        assert_eq!(f.metadata["stop_reason"], "all epochs done");

        // the exact observer refuses a model too large to enumerate (both layers above
        // exact::MAX_ENUM_UNITS = 30)
        let wide = Dataset::binary(ndarray::Array2::zeros((2, 40))).unwrap();
        let rbm = Rbm::zeros(40, 32).unwrap();
        let e = Trainer::new(rbm, &wide, TrainParams::new().epochs(1))
            .unwrap()
            .add_observer(ExactLogLikelihood::new("ll", wide.clone()), 1)
            .run()
            .unwrap_err();
        assert!(matches!(e, Error::TooLarge { .. }), "{e}");
    }
}
