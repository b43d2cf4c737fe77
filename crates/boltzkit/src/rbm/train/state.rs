//! The loop's state between epochs: [`TrainState`] (what a checkpoint saves and
//! [`super::Trainer::resume`] continues from, bit for bit), the check that a state continues a
//! run ([`TrainState::check_continues`]), and what the loop lends an observation to assemble
//! one ([`LoopState`]).

use super::engine::Engine;
use super::gradient::Gradient;
use super::params::TrainParams;
use crate::error::{Error, Result};
use crate::io::MetricRecord;
use crate::rng::BkRng;
use serde::{Deserialize, Serialize};

/// The layout version of [`TrainState`].
pub const TRAIN_STATE_VERSION: u32 = 2;

/// The loop's whole state after an epoch: with the model of that epoch, what
/// [`super::Trainer::resume`] needs to continue a run so that it ends with the same bits as an
/// uninterrupted one (same settings, data and seed). [`super::Checkpoint`] stores it in the
/// checkpoint file ([`super::observers::load_checkpoint`] reads it back).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainState {
    /// [`TRAIN_STATE_VERSION`].
    pub version: u32,
    /// The run's settings (its [`TrainParams`] serialized, [`crate::settings`], as JSON
    /// text); a resume under others is refused, naming each that differs.
    pub settings: String,
    /// Epochs done.
    pub epoch: usize,
    /// Updates done.
    pub step: u64,
    /// Wall-clock seconds of the run so far (the resumed run's clock continues from here).
    pub wall_s: f64,
    /// The optimizer's momentum buffer ([`Sgd::velocity`](super::Sgd::velocity)).
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
    pub(crate) shuffle_rng: &'a BkRng,
    pub(crate) order: &'a [usize],
    pub(crate) engine: &'a dyn Engine,
}

impl std::fmt::Debug for LoopState<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopState").finish_non_exhaustive()
    }
}

impl TrainState {
    /// Refuses a state that does not continue a run of `p` on `n` samples: another layout
    /// version, other settings, another number of samples, or the end of the run.
    pub fn check_continues(&self, p: &TrainParams, n: usize) -> Result<()> {
        let state = self;
        let refuse = |why: String| Err(Error::param("resume", why));
        if state.version != TRAIN_STATE_VERSION {
            return refuse(format!(
                "the saved state has layout version {}, this build reads {TRAIN_STATE_VERSION}",
                state.version
            ));
        }
        let settings = crate::settings::to_json(p)?;
        let saved: serde_json::Value = serde_json::from_str(&state.settings).unwrap_or_default();
        if saved != settings {
            return refuse(format!(
                "the saved run's settings differ: {}",
                crate::settings::differences(&saved, &settings, "saved").join(", ")
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
}
