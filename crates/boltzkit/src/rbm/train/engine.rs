//! The engine seam of RBM training: what the epoch loop hands one epoch's mini-batches to.
//!
//! The loop ([`super::Trainer::run`], under [`crate::driver::drive`]) owns the schedule, the
//! shuffle, the counters, the observers, the divergence watch and the checkpoints; an
//! [`Engine`] owns what turns a batch of rows into a new model: the update (estimator, chains,
//! offsets), the optimizer step and its momentum, the divergence guard of every update, and
//! the scratch buffers. [`CpuEngine`] is today's update, SGD step, guard and packings,
//! unchanged; a GPU engine would implement [`Engine`] with the model's parameters, the chains
//! and the batch on the device, copying the model to `rbm` at the end of each epoch (where
//! observers read it).
//!
//! Determinism promise, per engine (ARCHITECTURE.md "The engine seam"):
//! - [`CpuEngine`]: the same bits for the same settings, seed and data, whatever the thread
//!   count (fixed blocks over threads in every reduction), and a run resumed from a checkpoint
//!   ends with the bits of the uninterrupted one.
//! - a device engine must state its own (e.g. the same bits on the same device and driver, or
//!   a tolerance against [`CpuEngine`]), and say whether [`Engine::save_state`] can resume.

use super::gradient::Gradient;
use super::guard::Guard;
use super::sgd::Sgd;
use super::update::Update;
use crate::data::Dataset;
use crate::error::Result;
use crate::fit::Interrupt;
use crate::rbm::file::Offsets;
use crate::rbm::model::fill_batch;
use crate::rbm::Rbm;
use std::collections::BTreeMap;

/// How one epoch of an [`Engine`] ended.
#[derive(Debug, Clone, PartialEq)]
pub struct EpochEnd {
    /// Updates applied and kept.
    pub updates: u64,
    /// Why the epoch ended before its last batch, if it did.
    pub stop: Option<EpochStop>,
}

/// Why an epoch ended early.
#[derive(Debug, Clone, PartialEq)]
pub enum EpochStop {
    /// The update after the kept ones diverged (what is wrong); the model is the one before it.
    Diverged(String),
    /// The interrupt was set; the model is the one after the last kept update.
    Interrupted,
}

/// The state of an engine between epochs that a checkpoint keeps ([`super::TrainState`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineState {
    /// The optimizer's momentum buffer.
    pub velocity: Option<Gradient>,
    /// The update's state ([`Update::save_state`]).
    pub update: serde_json::Value,
}

/// What applies an epoch's mini-batches to the model; see the module documentation.
pub trait Engine {
    /// One pass over the rows of `data` in `order`, `batch_size` at a time (the last batch may
    /// be smaller): one update of `rbm` per batch at `learning_rate`, its parameters checked
    /// after it (a failed check puts back the model of before it and ends the epoch), the
    /// `interrupt` polled after each kept update.
    fn epoch(
        &mut self,
        rbm: &mut Rbm,
        data: &Dataset,
        order: &[usize],
        batch_size: usize,
        learning_rate: f32,
        interrupt: Option<&Interrupt>,
    ) -> Result<EpochEnd>;

    /// Adds the update's diagnostics since the previous call (as [`Update::report`]).
    fn report(&mut self, out: &mut BTreeMap<String, f64>);

    /// The centering offsets of centered updates.
    fn offsets(&self) -> Option<Offsets>;

    /// The state a checkpoint keeps; `Ok(None)` when it cannot be saved (then the run cannot
    /// be resumed).
    fn save_state(&self) -> Result<Option<EngineState>>;

    /// Restores a state written by [`Engine::save_state`].
    fn restore_state(&mut self, state: EngineState) -> Result<()>;
}

/// The CPU engine: an [`Update`] per batch with the [`Sgd`] step under the divergence
/// [`Guard`], the batch and gradient buffers allocated once per run.
pub struct CpuEngine<'d> {
    update: Box<dyn Update + 'd>,
    sgd: Sgd,
    guard: Guard,
    batch: Vec<f32>,
    grad: Gradient,
}

impl std::fmt::Debug for CpuEngine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuEngine")
            .field("sgd", &self.sgd)
            .finish_non_exhaustive()
    }
}

impl<'d> CpuEngine<'d> {
    /// An engine training models shaped like `rbm` with `update` and `sgd`, bounding every
    /// parameter by `max_abs`, on batches of at most `batch_size` rows.
    pub fn new(
        rbm: &Rbm,
        update: Box<dyn Update + 'd>,
        sgd: Sgd,
        max_abs: f32,
        batch_size: usize,
    ) -> Self {
        let guard = Guard::new(rbm, &*update, max_abs);
        CpuEngine {
            update,
            sgd,
            guard,
            batch: vec![0f32; batch_size * rbm.n_visible()],
            grad: Gradient::like(rbm),
        }
    }
}

impl Engine for CpuEngine<'_> {
    fn epoch(
        &mut self,
        rbm: &mut Rbm,
        data: &Dataset,
        order: &[usize],
        batch_size: usize,
        learning_rate: f32,
        interrupt: Option<&Interrupt>,
    ) -> Result<EpochEnd> {
        self.sgd.set_learning_rate(learning_rate)?;
        let nv = rbm.n_visible();
        // the other workers poll through the epoch's short parallel regions
        let _warm = crate::warm::Warm::for_weights(nv * rbm.n_hidden());
        let mut updates = 0;
        for rows in order.chunks(batch_size) {
            let v = &mut self.batch[..rows.len() * nv];
            fill_batch(data, rows, v)?;
            let diverged =
                self.guard
                    .update(&mut *self.update, rbm, v, &mut self.sgd, &mut self.grad)?;
            if let Some(detail) = diverged {
                return Ok(EpochEnd {
                    updates,
                    stop: Some(EpochStop::Diverged(detail)),
                });
            }
            updates += 1;
            if interrupt.is_some_and(Interrupt::is_set) {
                return Ok(EpochEnd {
                    updates,
                    stop: Some(EpochStop::Interrupted),
                });
            }
        }
        Ok(EpochEnd {
            updates,
            stop: None,
        })
    }

    fn report(&mut self, out: &mut BTreeMap<String, f64>) {
        self.update.report(out);
    }

    fn offsets(&self) -> Option<Offsets> {
        self.update.offsets()
    }

    fn save_state(&self) -> Result<Option<EngineState>> {
        Ok(self.update.save_state()?.map(|update| EngineState {
            velocity: self.sgd.velocity().cloned(),
            update,
        }))
    }

    fn restore_state(&mut self, state: EngineState) -> Result<()> {
        self.update.restore_state(state.update)?;
        self.sgd.set_velocity(state.velocity);
        Ok(())
    }
}
