//! What an observer of the training loop sees: [`Progress`], the model after an epoch with
//! its counters, the metric map of this observation, and (at epoch boundaries) the loop's
//! state, from which [`Progress::train_state`] assembles a checkpoint's [`TrainState`].

use super::params::TrainParams;
use super::state::{LoopState, TrainState, TRAIN_STATE_VERSION};
use crate::error::Result;
use crate::io::MetricRecord;
use crate::rbm::file::Offsets;
use crate::rbm::Rbm;
use std::collections::BTreeMap;

/// What an observer sees: the model after `epoch` epochs (`0` is the initial model) and a
/// metric map it may add to (observers run in the order they were added, so a logger added
/// after an evaluator records the evaluator's metrics). At `start` and `finish` the metric
/// map is empty.
#[derive(Debug)]
pub struct Progress<'a> {
    /// The run's settings.
    pub params: &'a TrainParams,
    /// The current model.
    pub rbm: &'a Rbm,
    /// Epochs done.
    pub epoch: usize,
    /// Updates (mini-batches) done.
    pub step: u64,
    /// The learning rate of the last epoch (of the first, at epoch 0).
    pub learning_rate: f32,
    /// Seconds since [`super::Trainer::run`] started.
    pub wall_s: f64,
    /// Metrics of this observation, by name.
    pub metrics: &'a mut BTreeMap<String, f64>,
    /// The centering offsets of centered algorithms.
    pub offsets: Option<&'a Offsets>,
    /// The records of the observations before this one (a resumed run's included).
    pub history: &'a [MetricRecord],
    /// The loop's state, for [`Progress::train_state`]; `None` at `start` and `finish`.
    pub(crate) state: Option<LoopState<'a>>,
}

impl Progress<'_> {
    /// The loop's state at this observation, with the record of this observation as far as
    /// the observers before the caller filled it (add [`super::Checkpoint`] after the
    /// evaluators); `None` at `start` and `finish` (not an epoch boundary) and when the update
    /// cannot save its state ([`Update::save_state`](super::Update::save_state)).
    pub fn train_state(&self) -> Result<Option<TrainState>> {
        let Some(s) = self.state else {
            return Ok(None);
        };
        let Some(engine) = s.engine.save_state()? else {
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
            settings: crate::settings::to_json(s.params)?.to_string(),
            epoch: self.epoch,
            step: self.step,
            wall_s: self.wall_s,
            velocity: engine.velocity,
            shuffle_rng: s.shuffle_rng.clone(),
            order: s.order.to_vec(),
            update: engine.update,
            history,
        }))
    }
}
