//! What the loop applies to each mini-batch: the [`Update`] trait (every
//! [`GradientEstimator`] is one, estimate then one [`Sgd`] step; S-DCP and CS-DCP take their
//! inner steps themselves and implement it beside their types), and the JSON state helpers
//! of the built-in updates. The update of a built-in algorithm is
//! [`super::builtin::algorithm_update`]'s.

use super::gradient::{Gradient, GradientEstimator};
use super::sgd::Sgd;
use crate::error::{Error, Result};
use crate::rbm::file::Offsets;
use crate::rbm::Rbm;
use std::collections::BTreeMap;

/// One optimizer step on a mini-batch: what the loop calls for every batch.
///
/// Every [`GradientEstimator`] is an `Update` (estimate the gradient, then one [`Sgd`] step),
/// so a user's estimator trains with the same loop as CD, PCD, pop-CD and PT. S-DCP
/// ([`super::Sdcp`], Alg. 3) and CS-DCP / CG ([`super::Centered`], Alg. 4) take several inner steps per
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
    /// checkpoint ([`super::TrainState::update`]); `Ok(None)`, the default, means it cannot be saved,
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

/// [`Update::save_state`] of a built-in update: the whole value, as JSON.
pub(crate) fn save_json<T: serde::Serialize>(x: &T) -> Result<Option<serde_json::Value>> {
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
