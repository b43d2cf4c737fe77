//! What every learner shares: the one [`StopReason`] vocabulary of FSLL, the FVBM solvers
//! (MPLE, MLE, PCD), the RBM trainers, Frank-Wolfe and L-BFGS.
//!
//! A run's record says why it stopped in these words, whatever the learner; the variants a
//! learner can produce are listed in its docs. Unit variants serialize as their snake-case
//! names (`"converged"`, `"max_iterations"`, ...), the others as one-key objects.
//!
//! ```
//! use boltzkit::fit::{Count, StopReason};
//! let s = StopReason::EarlyStopped { after: Count::epochs(12), detail: "the gap grew".into() };
//! assert_eq!(s.to_string(), "stopped early after epoch 12: the gap grew");
//! assert!(!s.is_failure() && StopReason::Converged.is_converged());
//! assert_eq!(serde_json::to_string(&StopReason::MaxIterations).unwrap(), "\"max_iterations\"");
//! ```

use serde::Serialize;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A request to stop a run early, shared between the run and whoever asks (a signal handler,
/// a GUI, a Python `KeyboardInterrupt`): a learner checks it between updates, finishes the
/// current one, and returns the last good model with [`StopReason::Interrupted`].
///
/// ```
/// use boltzkit::fit::Interrupt;
/// let flag = Interrupt::new();
/// let handle = flag.clone();
/// assert!(!flag.is_set());
/// handle.set();
/// assert!(flag.is_set());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// A flag not yet set.
    pub fn new() -> Self {
        Interrupt::default()
    }

    /// Asks the run to stop after its current update.
    pub fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether a stop was asked for.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// A position in a run: `count` epochs, iterations or units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Count {
    /// How many.
    pub count: usize,
    /// Of what.
    pub unit: CountUnit,
}

/// What a [`Count`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CountUnit {
    /// Passes over the data (RBM trainers).
    Epoch,
    /// Iterations of an optimizer (FSLL, MPLE, L-BFGS, PCD updates).
    Iteration,
    /// Hidden units (Frank-Wolfe).
    Unit,
}

impl Count {
    /// `n` epochs.
    pub fn epochs(n: usize) -> Self {
        Count {
            count: n,
            unit: CountUnit::Epoch,
        }
    }

    /// `n` iterations.
    pub fn iterations(n: usize) -> Self {
        Count {
            count: n,
            unit: CountUnit::Iteration,
        }
    }

    /// `n` hidden units.
    pub fn units(n: usize) -> Self {
        Count {
            count: n,
            unit: CountUnit::Unit,
        }
    }
}

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.unit {
            CountUnit::Epoch => write!(f, "epoch {}", self.count),
            CountUnit::Iteration => write!(f, "iteration {}", self.count),
            CountUnit::Unit => write!(f, "{} units", self.count),
        }
    }
}

/// Why a run stopped: one vocabulary for every learner.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The objective's improvement fell below its tolerance (FSLL: the best Δ above `−ε`;
    /// MPLE: the relative gain below `τ`).
    Converged,
    /// The gradient fell below its tolerance (MPLE, L-BFGS, MLE).
    GradientTolerance,
    /// An iteration changed the objective by less than its relative tolerance (L-BFGS).
    FunctionTolerance,
    /// The line search found no improving step: the optimum to working precision (Newton,
    /// L-BFGS).
    NoProgress,
    /// The objective decreased (gradient ascent with too large a step); the iterate before the
    /// decrease is kept.
    Decreased,
    /// The iteration budget ran out (FSLL, MPLE, L-BFGS; Frank-Wolfe: `2 T` iterations).
    MaxIterations,
    /// All epochs done (RBM trainers, FVBM PCD).
    MaxEpochs,
    /// The largest model allowed was reached (Frank-Wolfe: `T` units).
    MaxUnits,
    /// An observer or a validation rule ended the run (e.g. the train/validation gap grew);
    /// the model it observed is kept.
    EarlyStopped {
        /// Where the run stopped.
        after: Count,
        /// Why, in the rule's words.
        detail: String,
    },
    /// The divergence guard fired after update `step` of epoch `epoch` (1-based); the model
    /// of before that update is kept.
    Diverged {
        /// The epoch (1-based) of the failed update.
        epoch: usize,
        /// The update (1-based, counted over the run) that failed.
        step: u64,
        /// What was wrong (which parameter, its value).
        detail: String,
    },
    /// An interrupt (Ctrl-C, SIGTERM) ended the run after the current update; the last good
    /// model is kept.
    Interrupted {
        /// Where the run stopped.
        after: Count,
    },
}

impl StopReason {
    /// Whether the run reached its optimum by its own criterion (converged, gradient or
    /// function tolerance, no further progress).
    pub fn is_converged(&self) -> bool {
        matches!(
            self,
            StopReason::Converged
                | StopReason::GradientTolerance
                | StopReason::FunctionTolerance
                | StopReason::NoProgress
        )
    }

    /// Whether the run failed (diverged or was interrupted): the model kept is the last good
    /// one, not a finished one.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            StopReason::Diverged { .. } | StopReason::Interrupted { .. }
        )
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Converged => f.write_str("converged"),
            StopReason::GradientTolerance => f.write_str("the gradient fell below its tolerance"),
            StopReason::FunctionTolerance => {
                f.write_str("the objective changed less than its tolerance")
            }
            StopReason::NoProgress => f.write_str("no further progress (optimum to precision)"),
            StopReason::Decreased => {
                f.write_str("the objective decreased; kept the iterate before (lower the step)")
            }
            StopReason::MaxIterations => f.write_str("reached the maximum number of iterations"),
            StopReason::MaxEpochs => f.write_str("all epochs done"),
            StopReason::MaxUnits => f.write_str("reached the maximum number of units"),
            StopReason::EarlyStopped { after, detail } => {
                write!(f, "stopped early after {after}: {detail}")
            }
            StopReason::Diverged {
                epoch,
                step,
                detail,
            } => write!(
                f,
                "diverged at update {step} (epoch {epoch}): {detail}; kept the model before it \
                 (lower the learning rate)"
            ),
            StopReason::Interrupted { after } => {
                write!(f, "interrupted after {after}; kept the last good model")
            }
        }
    }
}
