//! What a Frank-Wolfe run records: per iteration ([`IterationRecord`]), per size evaluation
//! ([`SizeEvaluation`]), the whole run ([`FwRecord`], [`FwFit`]), and what observers see
//! ([`FwProgress`]).

use super::model::FwModel;
use crate::fit::{Fit, StopReason};
use std::collections::BTreeMap;

/// What one iteration did, with its time split.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct IterationRecord {
    /// Iteration `t` of Algorithm 1 (1-based, counted over the run; a warm start from `h`
    /// units begins at `h + 1`).
    pub iteration: usize,
    /// Units after the iteration.
    pub units: usize,
    /// `α` after the iteration.
    pub alpha: f64,
    /// `f(w*)` of Eq. 9.
    pub subproblem_f: f64,
    /// L-BFGS iterations of the subproblem, summed over its starts.
    pub lbfgs_iterations: usize,
    /// Objective and gradient evaluations of the subproblem, summed over its starts.
    pub lbfgs_evaluations: usize,
    /// Bias steps taken.
    pub bias_steps: usize,
    /// RMS of `∇_b L` when the bias update stopped (before the step budget's last step, if
    /// it ran out).
    pub bias_grad_rms: f64,
    /// The unit removed by an away step (its index before removal), if any.
    pub removed: Option<usize>,
    /// The exact average log-likelihood of the training data, while the objective guard
    /// computes it ([`FwParams::fall_tol`], [`GUARD_MAX_UNITS`]).
    pub train_ll: Option<f64>,
    /// Seconds drawing the samples `{v_s}`.
    pub sampling_s: f64,
    /// Seconds solving the subproblem.
    pub subproblem_s: f64,
    /// Seconds in the bias update (its sampling included).
    pub bias_s: f64,
    /// Seconds in the away step and the `α` update.
    pub other_s: f64,
}

/// One model-size evaluation (every [`FwParams::eval_every`] units).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SizeEvaluation {
    /// Units of the model evaluated.
    pub units: usize,
    /// The iteration after which it was evaluated.
    pub iteration: usize,
    /// Mean `ln p̃(v)` (log-likelihood plus `ln Z`) over the training data.
    pub train_nfe: f64,
    /// The same over the validation data (when given).
    pub valid_nfe: Option<f64>,
    /// `train − valid` average log-likelihood: `ln Z` cancels (Hinton 2010).
    pub gap: Option<f64>,
    /// Seconds since the run started.
    pub wall_s: f64,
    /// Metrics the observers added (e.g. an AIS test log-likelihood).
    pub metrics: BTreeMap<String, f64>,
}

/// Why a Frank-Wolfe run stopped: [`StopReason::MaxUnits`] (`T` units),
/// [`StopReason::EarlyStopped`] (the train/validation gap grew) or
/// [`StopReason::MaxIterations`] (`2 T` iterations: away steps kept removing units).
pub type FwStop = StopReason;

/// What a run did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FwRecord {
    /// Every iteration.
    pub iterations: Vec<IterationRecord>,
    /// Every size evaluation.
    pub evaluations: Vec<SizeEvaluation>,
    /// Units removed by away steps.
    pub removed: usize,
    /// The size chosen by the gap rule: the last evaluated size before the gap rose more
    /// than [`FwParams::gap_tol`] above its minimum (`None` without validation data).
    pub selected_units: Option<usize>,
    /// Metropolis-Hastings acceptance rate (fractional runs).
    pub mh_acceptance: Option<f64>,
    /// Why it stopped.
    pub stop: FwStop,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// The model at the selected size (when a size was selected).
    #[serde(skip)]
    pub selected: Option<FwModel>,
}

/// The result of [`FrankWolfe::run`]: the final model and the record (with the model at the
/// selected size).
pub type FwFit = Fit<FwModel, FwRecord>;

/// What an observer sees after each iteration.
#[derive(Debug)]
pub struct FwProgress<'a> {
    /// The current model.
    pub model: &'a FwModel,
    /// The iteration just done.
    pub iteration: &'a IterationRecord,
    /// Whether this iteration is a size evaluation (metrics added now are recorded in it).
    pub evaluation: bool,
    /// Seconds since the run started.
    pub wall_s: f64,
    /// Metrics of this evaluation, by name (the gap figures are already in).
    pub metrics: &'a mut BTreeMap<String, f64>,
}
