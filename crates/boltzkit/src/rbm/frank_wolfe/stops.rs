//! The two rules that end a Frank-Wolfe run before `T` units, each with its state: the size
//! selection by the train/validation gap ([`SizeSelection`], [`FwParams::gap_tol`],
//! [`FwParams::early_stop`]) and the objective guard ([`ObjectiveGuard`],
//! [`FwParams::fall_tol`]).

use super::model::FwModel;
use super::params::FwParams;
use super::record::FwRecord;
use crate::fit::{Count, StopReason};
use crate::rbm::train::early_stop::GapRule;

/// The size selection: while the gap has not grown past its minimum by more than
/// [`FwParams::gap_tol`], each evaluated size is the selected one; once it has, the run stops
/// there when [`FwParams::early_stop`] says so.
pub(super) struct SizeSelection {
    gap_rule: GapRule,
    grown: bool,
    early_stop: bool,
}

impl SizeSelection {
    pub(super) fn new(p: &FwParams) -> Self {
        SizeSelection {
            gap_rule: GapRule::new(p.gap_tol),
            grown: false,
            early_stop: p.early_stop,
        }
    }

    /// After an evaluation at `units` with `gap` (`None` without validation data): selects
    /// `model` in `record` while the gap has not grown; the stop when it has just grown and
    /// early stopping is on.
    pub(super) fn after_evaluation(
        &mut self,
        gap: Option<f64>,
        units: usize,
        model: &FwModel,
        record: &mut FwRecord,
    ) -> Option<StopReason> {
        match gap {
            Some(g) if !self.grown && self.gap_rule.grown(g) => {
                self.grown = true;
                if self.early_stop {
                    return Some(StopReason::EarlyStopped {
                        after: Count::units(units),
                        detail: "the train/validation gap grew".into(),
                    });
                }
            }
            Some(_) if !self.grown => {
                record.selected_units = Some(units);
                record.selected = Some(model.clone());
            }
            _ => {}
        }
        None
    }
}

/// The objective guard ([`FwParams::fall_tol`]): the best exact training log-likelihood
/// (with its units and model) and the iterations in a row it has stayed more than `tol`
/// below it.
pub(super) struct ObjectiveGuard {
    tol: f64,
    patience: usize,
    best: Option<(usize, f64, FwModel)>,
    fallen: usize,
}

impl ObjectiveGuard {
    pub(super) fn new(p: &FwParams) -> Self {
        ObjectiveGuard {
            tol: p.fall_tol,
            patience: p.fall_patience,
            best: None,
            fallen: 0,
        }
    }

    /// Records the exact training log-likelihood `ll` of `model` at `units`; once it has
    /// stayed fallen for `patience` iterations, the stop and the best model, to keep.
    pub(super) fn observe(
        &mut self,
        units: usize,
        ll: f64,
        model: &FwModel,
    ) -> Option<(StopReason, FwModel)> {
        match &self.best {
            Some((_, best_ll, _)) if ll < best_ll - self.tol => {
                self.fallen += 1;
                if self.fallen >= self.patience {
                    let (best_units, best_ll, best_model) = self.best.take()?;
                    let stop = StopReason::EarlyStopped {
                        after: Count::units(units),
                        detail: format!(
                            "the exact training log-likelihood stayed more than {} nats below \
                             its best {best_ll:.3} (at {best_units} units) for {} iterations, \
                             now {ll:.3}: the chains no longer follow the model (raise \
                             gibbs_steps or λ); kept the {best_units}-unit model",
                            self.tol, self.fallen
                        ),
                    };
                    return Some((stop, best_model));
                }
            }
            Some((_, best_ll, _)) if ll <= *best_ll => self.fallen = 0,
            _ => {
                self.fallen = 0;
                self.best = Some((units, ll, model.clone()));
            }
        }
        None
    }
}
