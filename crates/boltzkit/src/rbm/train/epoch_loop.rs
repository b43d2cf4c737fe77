//! The epoch loop behind [`super::Trainer::run`], one method per stage, so that each point
//! where a guard or an observer acts has a name:
//!
//! 1. [`EpochLoop::start`]: the update (the built-in one of the settings' algorithm, or the
//!    user's), the optimizer, a resumed state restored (after
//!    [`TrainState::check_continues`]), the observers' `start`.
//! 2. [`EpochLoop::first_observation`]: the observers due at epoch 0 see the initial model
//!    (not on resume).
//! 3. [`EpochLoop::epochs`]: per epoch its learning rate and the seeded shuffle, then
//!    [`EpochLoop::epoch`], one update per mini-batch under the divergence guard
//!    ([`Guard::update`]: parameters checked after every update, the last good model put
//!    back), and the interrupt checked after each update; then [`EpochLoop::observe`], the
//!    observers due at that epoch (metrics into the history; any may end the run), then
//!    [`EpochLoop::watch`], the divergence watch ([`super::divergence`]: the best model put
//!    back when the run left the data).
//! 4. [`EpochLoop::finish`]: the observers' `finish` with the stop reason, the record.

use super::builtin::algorithm_update;
use super::divergence::{DivergenceWatch, TRAIN_LL};
use super::gradient::Gradient;
use super::guard::Guard;
use super::params::{CheckedRbmParams, TrainParams};
use super::progress::Progress;
use super::record::{TrainOutcome, TrainRecord};
use super::sgd::{Sgd, SgdParams};
use super::state::{LoopState, TrainState};
use super::update::Update;
use crate::data::Dataset;
use crate::error::Result;
use crate::fit::{Count, Fit, Run, StopReason};
use crate::io::MetricRecord;
use crate::rbm::file::Offsets;
use crate::rbm::model::fill_batch;
use crate::rbm::Rbm;
use crate::rng::{derive_rng, derive_seed, BkRng};
use rand::seq::SliceRandom;
use std::collections::BTreeMap;
use std::time::Instant;

/// One run of the loop: the model, the update and optimizer, the shuffle, the counters, the
/// observers.
pub(crate) struct EpochLoop<'d> {
    rbm: Rbm,
    data: &'d Dataset,
    p: TrainParams,
    update: Box<dyn Update + 'd>,
    sgd: Sgd,
    run: Run<'d, CheckedRbmParams>,
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
}

impl<'d> EpochLoop<'d> {
    /// Sets the run up (stage 1 of the module documentation).
    pub(crate) fn start(
        rbm: Rbm,
        data: &'d Dataset,
        p: TrainParams,
        update: Option<Box<dyn Update + 'd>>,
        run: Run<'d, CheckedRbmParams>,
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
        let sgd: Sgd = SgdParams::new()
            .learning_rate(p.learning_rate_schedule().at(0, p.epochs))
            .momentum(p.momentum)
            .weight_decay(p.weight_decay)
            .check()?;
        let mut lp = EpochLoop {
            rbm,
            data,
            p,
            update,
            sgd,
            run,
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
        };
        if let Some(state) = resume {
            state.check_continues(&p, n)?;
            lp.update.restore_state(state.update)?;
            lp.sgd.set_velocity(state.velocity);
            lp.shuffle_rng = state.shuffle_rng;
            lp.order = state.order;
            lp.history = state.history;
            lp.step = state.step;
            lp.first_epoch = state.epoch;
            lp.wall0 = state.wall_s;
        }
        lp.epochs_done = lp.first_epoch;
        let offsets = lp.update.offsets();
        lp.watch =
            DivergenceWatch::start(data, &lp.rbm, offsets, p.divergence_tol, lp.first_epoch)?;
        let lr = p
            .learning_rate_schedule()
            .at(lp.first_epoch.saturating_sub(1), p.epochs);
        let offsets = lp.update.offsets();
        lp.run.start(&mut Progress {
            params: &lp.p,
            rbm: &lp.rbm,
            epoch: lp.first_epoch,
            step: lp.step,
            learning_rate: lr,
            wall_s: lp.wall0,
            metrics: &mut BTreeMap::new(),
            offsets: offsets.as_ref(),
            history: &lp.history,
            state: None,
        })?;
        Ok(lp)
    }

    /// Seconds of the whole run so far.
    fn wall_s(&self) -> f64 {
        self.wall0 + self.start.elapsed().as_secs_f64()
    }

    /// The observation of the initial model (epoch 0; none on resume): `MaxEpochs` to go on,
    /// else why an observer ended the run.
    pub(crate) fn first_observation(&mut self) -> Result<StopReason> {
        if self.resumed {
            return Ok(StopReason::MaxEpochs);
        }
        let lr = self.p.learning_rate_schedule().at(0, self.p.epochs);
        let stop = self.observe(0, lr)?;
        if let (Some(ll), Some(watch)) = (self.train_ll_at(0), self.watch.as_mut()) {
            watch.record_ll(&self.rbm, self.update.offsets(), 0, ll);
        }
        Ok(stop.unwrap_or(StopReason::MaxEpochs))
    }

    /// The training log-likelihood an observer recorded after `epoch` epochs, if any.
    fn train_ll_at(&self, epoch: usize) -> Option<f64> {
        self.history
            .last()
            .filter(|r| r.epoch == epoch as u64)
            .and_then(|r| r.metrics.get(TRAIN_LL).copied())
    }

    /// The observers due at `epoch` (learning rate `lr`): the update's diagnostics since the
    /// last observation (pop-CD's effective sample size, PT's exchange rates) and what the
    /// observers add go into the history; `Some` when one ends the run.
    pub(crate) fn observe(&mut self, epoch: usize, lr: f32) -> Result<Option<StopReason>> {
        if !self.run.due(epoch) {
            return Ok(None);
        }
        let mut metrics = BTreeMap::new();
        self.update.report(&mut metrics);
        let offsets = self.update.offsets();
        let wall_s = self.wall_s();
        let stop = self.run.observe_at(
            epoch,
            &mut Progress {
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
                    sgd: &self.sgd,
                    shuffle_rng: &self.shuffle_rng,
                    order: &self.order,
                    update: &*self.update,
                }),
            },
        )?;
        if !metrics.is_empty() {
            self.history.push(MetricRecord {
                step: self.step,
                epoch: epoch as u64,
                wall_s,
                metrics,
            });
        }
        Ok(stop)
    }

    /// The epochs from the first to the last asked for, each followed by its observation:
    /// why the run ended.
    pub(crate) fn epochs(&mut self) -> Result<StopReason> {
        let (n, nv) = (self.data.n_samples(), self.rbm.n_visible());
        let bs = self.p.batch_size.unwrap_or(n).min(n);
        let mut batch = vec![0f32; bs * nv];
        let mut grad = Gradient::like(&self.rbm);
        let mut guard = Guard::new(&self.rbm, &*self.update, self.p.max_abs_param);
        for epoch in self.first_epoch..self.p.epochs {
            let lr = self.p.learning_rate_schedule().at(epoch, self.p.epochs);
            self.sgd.set_learning_rate(lr)?;
            if self.p.shuffle {
                self.order.shuffle(&mut self.shuffle_rng);
            }
            if let Some(stop) = self.epoch(epoch, &mut batch, &mut grad, &mut guard)? {
                return Ok(stop);
            }
            self.epochs_done = epoch + 1;
            if let Some(stop) = self.observe(self.epochs_done, lr)? {
                return Ok(stop);
            }
            if let Some(stop) = self.watch(self.epochs_done)? {
                return Ok(stop);
            }
        }
        Ok(StopReason::MaxEpochs)
    }

    /// The divergence watch after `epoch` epochs (with the `train_ll` an observer recorded at
    /// that epoch): `Some` when the run diverged, the watch's best model then put back.
    fn watch(&mut self, epoch: usize) -> Result<Option<StopReason>> {
        let ll = self.train_ll_at(epoch);
        let Some(watch) = self.watch.as_mut() else {
            return Ok(None);
        };
        let offsets = self.update.offsets();
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

    /// One pass over the mini-batches of the current order: one guarded update each, the
    /// interrupt checked after it. `Some` when an update diverged (the model is then the one
    /// before it) or the run was interrupted.
    fn epoch(
        &mut self,
        epoch: usize,
        batch: &mut [f32],
        grad: &mut Gradient,
        guard: &mut Guard,
    ) -> Result<Option<StopReason>> {
        let (n, nv) = (self.data.n_samples(), self.rbm.n_visible());
        let bs = self.p.batch_size.unwrap_or(n).min(n);
        // the other workers poll through the epoch's short parallel regions
        let _warm = crate::warm::Warm::for_weights(nv * self.rbm.n_hidden());
        for rows in self.order.chunks(bs) {
            let v = &mut batch[..rows.len() * nv];
            fill_batch(self.data, rows, v)?;
            let diverged =
                guard.update(&mut *self.update, &mut self.rbm, v, &mut self.sgd, grad)?;
            if let Some(detail) = diverged {
                return Ok(Some(StopReason::Diverged {
                    epoch: epoch + 1,
                    step: self.step + 1,
                    detail: format!("{detail}; kept the model before it"),
                }));
            }
            self.step += 1;
            if self.run.interrupted() {
                self.epochs_done = epoch;
                return Ok(Some(StopReason::Interrupted {
                    after: Count::epochs(epoch),
                }));
            }
        }
        Ok(None)
    }

    /// The observers' `finish` with `stop`, and the model with its record.
    pub(crate) fn finish(mut self, stop: StopReason) -> Result<TrainOutcome> {
        let offsets = match self.kept_offsets.take() {
            Some(kept) => kept,
            None => self.update.offsets(),
        };
        let wall_s = self.wall_s();
        let epochs = self.epochs_done;
        self.run.finish(
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
