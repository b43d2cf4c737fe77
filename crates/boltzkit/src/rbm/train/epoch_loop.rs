//! The epoch loop behind [`super::Trainer::run`]: a [`Stepper`] of one epoch per step, which
//! [`drive`](crate::driver::drive) runs, one method per stage, so that each point where a
//! guard or an observer acts has a name:
//!
//! 1. [`EpochLoop::start`]: the update (the built-in one of the settings' algorithm, or the
//!    user's) and the optimizer in the [`CpuEngine`], a resumed state restored (after
//!    [`TrainState::check_continues`]).
//! 2. [`Stepper::begin`]: the observers' `start`, then those due at epoch 0 see the initial
//!    model (not on resume).
//! 3. [`Stepper::step`]: the epoch's learning rate and the seeded shuffle, then the engine's
//!    epoch ([`Engine::epoch`]: one update per mini-batch under the divergence guard, the
//!    last good model put back, the interrupt checked after each update); the driver then
//!    calls the observers due at that epoch ([`Stepper::with_progress`]: metrics into the
//!    history; any may end the run), then [`Stepper::after_observers`], the divergence watch
//!    ([`super::divergence`]: the best model put back when the run left the data).
//! 4. [`EpochLoop::finish`]: the observers' `finish` with the stop reason, the record.

use super::builtin::algorithm_update;
use super::divergence::{DivergenceWatch, TRAIN_LL};
use super::engine::{CpuEngine, Engine, EngineState, EpochStop};
use super::params::{CheckedRbmParams, TrainParams};
use super::progress::Progress;
use super::record::{TrainOutcome, TrainRecord};
use super::sgd::SgdParams;
use super::state::{LoopState, TrainState};
use super::update::Update;
use crate::data::Dataset;
use crate::driver::{Begin, Stepper};
use crate::error::Result;
use crate::fit::{Count, Fit, Interrupt, Run, StopReason};
use crate::io::MetricRecord;
use crate::rbm::file::Offsets;
use crate::rbm::Rbm;
use crate::rng::{derive_rng, derive_seed, BkRng};
use rand::seq::SliceRandom;
use std::collections::BTreeMap;
use std::time::Instant;

/// One run of the loop: the model, the engine (update and optimizer), the shuffle, the
/// counters.
pub(crate) struct EpochLoop<'d> {
    rbm: Rbm,
    data: &'d Dataset,
    p: TrainParams,
    engine: Box<dyn Engine + 'd>,
    interrupt: Option<Interrupt>,
    shuffle_rng: BkRng,
    /// The sample order, shuffled in place each epoch.
    order: Vec<usize>,
    history: Vec<MetricRecord>,
    /// Updates done (and kept).
    step: u64,
    /// The first epoch to run (after a resumed state's).
    first_epoch: usize,
    epochs_done: usize,
    resumed: bool,
    /// The divergence watch (none when off or the data is not 0/1).
    watch: Option<DivergenceWatch>,
    /// The offsets of the model kept by the watch, when it stopped the run.
    kept_offsets: Option<Option<Offsets>>,
    /// Seconds of the run before this process (a resumed state's), and this part's clock.
    wall0: f64,
    start: Instant,
    /// The learning rate of the epoch just taken.
    lr: f32,
}

impl<'d> EpochLoop<'d> {
    /// Sets the run up (stage 1 of the module documentation).
    pub(crate) fn start(
        rbm: Rbm,
        data: &'d Dataset,
        p: TrainParams,
        update: Option<Box<dyn Update + 'd>>,
        run: &Run<'d, CheckedRbmParams>,
        resume: Option<TrainState>,
    ) -> Result<Self> {
        let start = Instant::now();
        let n = data.n_samples();
        let update = match update {
            Some(u) => u,
            None => algorithm_update(
                p.algorithm,
                &p,
                data,
                rbm.n_hidden(),
                derive_seed(p.seed, 0),
            )?,
        };
        let sgd = SgdParams::new()
            .learning_rate(p.learning_rate_schedule().at(0, p.epochs))
            .momentum(p.momentum)
            .weight_decay(p.weight_decay)
            .check()?;
        let bs = p.batch_size.unwrap_or(n).min(n);
        let engine = Box::new(CpuEngine::new(&rbm, update, sgd, p.max_abs_param, bs));
        let mut lp = EpochLoop {
            rbm,
            data,
            p,
            engine,
            interrupt: run.interrupt_flag().cloned(),
            shuffle_rng: derive_rng(p.seed, 1),
            order: (0..n).collect(),
            history: Vec::new(),
            step: 0,
            first_epoch: 0,
            epochs_done: 0,
            resumed: resume.is_some(),
            watch: None,
            kept_offsets: None,
            wall0: 0.0,
            start,
            lr: p.learning_rate_schedule().at(0, p.epochs),
        };
        if let Some(state) = resume {
            state.check_continues(&p, n)?;
            lp.engine.restore_state(EngineState {
                velocity: state.velocity,
                update: state.update,
            })?;
            lp.shuffle_rng = state.shuffle_rng;
            lp.order = state.order;
            lp.history = state.history;
            lp.step = state.step;
            lp.first_epoch = state.epoch;
            lp.wall0 = state.wall_s;
        }
        lp.epochs_done = lp.first_epoch;
        let offsets = lp.engine.offsets();
        lp.watch =
            DivergenceWatch::start(data, &lp.rbm, offsets, p.divergence_tol, lp.first_epoch)?;
        Ok(lp)
    }

    /// Seconds of the whole run so far.
    fn wall_s(&self) -> f64 {
        self.wall0 + self.start.elapsed().as_secs_f64()
    }

    /// The training log-likelihood an observer recorded after `epoch` epochs, if any.
    fn train_ll_at(&self, epoch: usize) -> Option<f64> {
        self.history
            .last()
            .filter(|r| r.epoch == epoch as u64)
            .and_then(|r| r.metrics.get(TRAIN_LL).copied())
    }

    /// Calls `f` with what an observer sees after `epoch` epochs (learning rate `lr`): the
    /// engine's diagnostics since the last observation (pop-CD's effective sample size, PT's
    /// exchange rates) and what the observers add go into the history.
    fn observed<R>(
        &mut self,
        epoch: usize,
        lr: f32,
        f: impl for<'p> FnOnce(&mut Progress<'p>) -> Result<R>,
    ) -> Result<R> {
        let mut metrics = BTreeMap::new();
        self.engine.report(&mut metrics);
        let offsets = self.engine.offsets();
        let wall_s = self.wall_s();
        let r = f(&mut Progress {
            params: &self.p,
            rbm: &self.rbm,
            epoch,
            step: self.step,
            learning_rate: lr,
            wall_s,
            metrics: &mut metrics,
            offsets: offsets.as_ref(),
            history: &self.history,
            state: Some(LoopState {
                params: &self.p,
                shuffle_rng: &self.shuffle_rng,
                order: &self.order,
                engine: &*self.engine,
            }),
        })?;
        if !metrics.is_empty() {
            self.history.push(MetricRecord {
                step: self.step,
                epoch: epoch as u64,
                wall_s,
                metrics,
            });
        }
        Ok(r)
    }

    /// The divergence watch after `epoch` epochs (with the `train_ll` an observer recorded at
    /// that epoch): `Some` when the run diverged, the watch's best model then put back.
    fn watch(&mut self, epoch: usize) -> Result<Option<StopReason>> {
        let ll = self.train_ll_at(epoch);
        let Some(watch) = self.watch.as_mut() else {
            return Ok(None);
        };
        let offsets = self.engine.offsets();
        let Some(why) = watch.after_epoch(&self.rbm, offsets, self.data, epoch, ll)? else {
            return Ok(None);
        };
        let best = self.watch.take().expect("watched above").into_best();
        self.rbm = best.rbm;
        self.kept_offsets = Some(best.offsets);
        Ok(Some(StopReason::Diverged {
            epoch,
            step: self.step,
            detail: format!("{why}; kept the model of epoch {}, its best", best.epoch),
        }))
    }

    /// The observers' `finish` with `stop`, and the model with its record.
    pub(crate) fn finish(
        mut self,
        run: &mut Run<'d, CheckedRbmParams>,
        stop: StopReason,
    ) -> Result<TrainOutcome> {
        let offsets = match self.kept_offsets.take() {
            Some(kept) => kept,
            None => self.engine.offsets(),
        };
        let wall_s = self.wall_s();
        let epochs = self.epochs_done;
        run.finish(
            &mut Progress {
                params: &self.p,
                rbm: &self.rbm,
                epoch: epochs,
                step: self.step,
                learning_rate: self
                    .p
                    .learning_rate_schedule()
                    .at(epochs.saturating_sub(1), self.p.epochs),
                wall_s,
                metrics: &mut BTreeMap::new(),
                offsets: offsets.as_ref(),
                history: &self.history,
                state: None,
            },
            &stop,
        )?;
        Ok(Fit {
            model: self.rbm,
            record: TrainRecord {
                stop,
                epochs,
                steps: self.step,
                wall_s,
                history: self.history,
                offsets,
            },
        })
    }
}

impl<'d> Stepper for EpochLoop<'d> {
    type Learner = CheckedRbmParams;

    fn limit(&self) -> Option<StopReason> {
        (self.epochs_done >= self.p.epochs).then_some(StopReason::MaxEpochs)
    }

    fn done(&self) -> Count {
        Count::epochs(self.epochs_done)
    }

    /// The observers' `start` (at the first epoch to run), then the observation of the initial
    /// model (epoch 0; none on resume) and the divergence watch's note of its `train_ll`.
    fn begin(&mut self, run: &mut Run<'_, CheckedRbmParams>) -> Result<Begin> {
        let lr = self
            .p
            .learning_rate_schedule()
            .at(self.first_epoch.saturating_sub(1), self.p.epochs);
        let offsets = self.engine.offsets();
        run.start(&mut Progress {
            params: &self.p,
            rbm: &self.rbm,
            epoch: self.first_epoch,
            step: self.step,
            learning_rate: lr,
            wall_s: self.wall0,
            metrics: &mut BTreeMap::new(),
            offsets: offsets.as_ref(),
            history: &self.history,
            state: None,
        })?;
        if self.resumed || !run.due(0) {
            return Ok(Begin::Started);
        }
        let stop = self.observed(0, self.lr, |p| run.observe_at(0, p))?;
        if let (Some(ll), Some(watch)) = (self.train_ll_at(0), self.watch.as_mut()) {
            watch.record_ll(&self.rbm, self.engine.offsets(), 0, ll);
        }
        Ok(stop.map_or(Begin::Started, Begin::Stopped))
    }

    /// One epoch: its learning rate, the seeded shuffle, the engine's pass over the batches.
    fn step(&mut self) -> Result<Option<StopReason>> {
        let epoch = self.epochs_done;
        let lr = self.p.learning_rate_schedule().at(epoch, self.p.epochs);
        if self.p.shuffle {
            self.order.shuffle(&mut self.shuffle_rng);
        }
        let n = self.data.n_samples();
        let bs = self.p.batch_size.unwrap_or(n).min(n);
        let end = self.engine.epoch(
            &mut self.rbm,
            self.data,
            &self.order,
            bs,
            lr,
            self.interrupt.as_ref(),
        )?;
        self.step += end.updates;
        match end.stop {
            Some(EpochStop::Diverged(detail)) => Ok(Some(StopReason::Diverged {
                epoch: epoch + 1,
                step: self.step + 1,
                detail: format!("{detail}; kept the model before it"),
            })),
            Some(EpochStop::Interrupted) => Ok(Some(StopReason::Interrupted {
                after: Count::epochs(epoch),
            })),
            None => {
                self.epochs_done = epoch + 1;
                self.lr = lr;
                Ok(None)
            }
        }
    }

    fn at(&self) -> usize {
        self.epochs_done
    }

    fn with_progress<R>(
        &mut self,
        f: impl for<'p> FnOnce(&mut Progress<'p>) -> Result<R>,
    ) -> Result<R> {
        self.observed(self.epochs_done, self.lr, f)
    }

    /// The divergence watch, unless an observer ended the run at this epoch.
    fn after_observers(&mut self, observed: Option<&StopReason>) -> Result<Option<StopReason>> {
        if observed.is_some() {
            return Ok(None);
        }
        self.watch(self.epochs_done)
    }
}
