//! What every learner shares: one shape and one vocabulary for FSLL, the FVBM solvers
//! (MPLE, MLE, PCD), the RBM trainers, Frank-Wolfe and L-BFGS.
//!
//! - Settings: each family's `XParams` (documented defaults, the seed inside) → `check()` →
//!   a checked type that implements [`Learner`]; nothing else fits.
//! - [`Learner::fit`] (or [`Learner::fit_with`] and a [`Run`] carrying [`Observer`]s and an
//!   [`Interrupt`]) returns a [`Fit`]: the model and a record that derives `Serialize`.
//! - Every run stops for a [`StopReason`]; an observer ends one early by returning
//!   [`Control::Stop`] with a typed reason.
//!
//! ```
//! use boltzkit::data::Dataset;
//! use boltzkit::fit::{Control, Learner, Run};
//! use boltzkit::fsll::{FsllParams, Progress};
//! use ndarray::array;
//! // x1 copies x0: a dependency the learner finds in a few steps
//! let rows = array![[0u8, 0], [1, 1], [0, 0], [1, 1], [0, 0], [1, 1], [1, 1], [0, 0]];
//! let data = Dataset::binary(rows).unwrap();
//! let learner = FsllParams::default().check().unwrap();
//! let mut costs = Vec::new();
//! let run = Run::new().observe(|p: &mut Progress| {
//!     costs.push(p.cost);
//!     Ok(Control::Continue)
//! });
//! let fit = learner.fit_with(&data, run).unwrap();
//! assert!(fit.record.stop.is_converged() && !costs.is_empty());
//! ```
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

use crate::data::Dataset;
use crate::error::Result;
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

/// Two handles are equal when they are the same flag (clones of one [`Interrupt::new`]), so
/// that settings holding one can still be compared.
impl PartialEq for Interrupt {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

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
    /// The divergence guard fired after update `step` of epoch `epoch` (1-based), or the
    /// divergence watch at the end of that epoch; `detail` says which model is kept (the one
    /// before that update, or the watch's best).
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
                "diverged at update {step} (epoch {epoch}): {detail} (lower the learning rate)"
            ),
            StopReason::Interrupted { after } => {
                write!(f, "interrupted after {after}; kept the last good model")
            }
        }
    }
}

/// What every learner returns: the learned model (the last good one when a run diverged or
/// was interrupted) and the record of the run, which serializes (JSON summaries, logs).
#[derive(Debug, Clone, Serialize)]
pub struct Fit<M, R> {
    /// The learned model.
    #[serde(skip)]
    pub model: M,
    /// How the run went; its `stop` field says why it ended.
    pub record: R,
}

/// What an observer tells the run after looking at it.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    /// Go on.
    Continue,
    /// End the run now, keeping the model just observed, for this reason (usually
    /// [`StopReason::EarlyStopped`]).
    Stop(StopReason),
}

/// A hook of a run, the one mechanism of every learner: it sees the learner's progress type
/// `P` (the model so far and what the learner measured) on the initial state and then every
/// `every` iterations, epochs or units ([`Run::observe_every`]), may add metrics to it, and
/// may end the run. Closures `FnMut(&mut P) -> Result<Control>` are observers.
pub trait Observer<P: ?Sized> {
    /// Called once before the first observation (check sizes, open files). Nothing by default.
    fn start(&mut self, _progress: &mut P) -> Result<()> {
        Ok(())
    }

    /// Called on the initial state and then every `every` steps of the run.
    fn observe(&mut self, progress: &mut P) -> Result<Control>;

    /// Called once at the end with the state returned and why the run stopped. Nothing by
    /// default.
    fn finish(&mut self, _progress: &mut P, _stop: &StopReason) -> Result<()> {
        Ok(())
    }
}

impl<P: ?Sized, F: FnMut(&mut P) -> Result<Control>> Observer<P> for F {
    fn observe(&mut self, progress: &mut P) -> Result<Control> {
        self(progress)
    }
}

/// An observer with its period.
type Observed<'a, L> = (
    Box<dyn for<'p> Observer<<L as Learner>::Progress<'p>> + 'a>,
    usize,
);

/// How to run a [`Learner`]: its observers (each with its period) and an optional
/// [`Interrupt`]. `Run::new()` runs plainly.
pub struct Run<'a, L: Learner + ?Sized> {
    observers: Vec<Observed<'a, L>>,
    interrupt: Option<Interrupt>,
}

impl<L: Learner + ?Sized> Default for Run<'_, L> {
    fn default() -> Self {
        Run {
            observers: Vec::new(),
            interrupt: None,
        }
    }
}

impl<L: Learner + ?Sized> fmt::Debug for Run<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run")
            .field("observers", &self.observers.len())
            .field("interrupt", &self.interrupt)
            .finish()
    }
}

impl<'a, L: Learner + ?Sized> Run<'a, L> {
    /// A run with no observer and no interrupt.
    pub fn new() -> Self {
        Run::default()
    }

    /// Adds an observer called on the initial state and after every step (iteration, epoch or
    /// unit, whatever the learner counts).
    pub fn observe(self, observer: impl for<'p> Observer<L::Progress<'p>> + 'a) -> Self {
        self.observe_every(observer, 1)
    }

    /// Adds an observer called on the initial state and after every `every`-th step; with
    /// `every = 0` only its `start` and `finish` run.
    pub fn observe_every(
        mut self,
        observer: impl for<'p> Observer<L::Progress<'p>> + 'a,
        every: usize,
    ) -> Self {
        self.observers.push((Box::new(observer), every));
        self
    }

    /// Ends the run after the current update when `flag` is set, with
    /// [`StopReason::Interrupted`] and the last good model.
    pub fn interrupt(mut self, flag: Interrupt) -> Self {
        self.interrupt = Some(flag);
        self
    }

    /// Whether an interrupt was asked for.
    pub fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(Interrupt::is_set)
    }

    /// The interrupt flag, if any.
    pub fn interrupt_flag(&self) -> Option<&Interrupt> {
        self.interrupt.as_ref()
    }

    /// Whether some observer is due at step `step` (step 0 is the initial state).
    pub fn due(&self, step: usize) -> bool {
        self.observers
            .iter()
            .any(|(_, every)| *every > 0 && step.is_multiple_of(*every))
    }

    /// Calls every observer's `start`.
    pub fn start(&mut self, progress: &mut L::Progress<'_>) -> Result<()> {
        for (o, _) in self.observers.iter_mut() {
            o.start(progress)?;
        }
        Ok(())
    }

    /// Calls the observers due at step `step`, in the order they were added (so a logger added
    /// after an evaluator sees its metrics); the first `Stop` wins, the others still run.
    pub fn observe_at(
        &mut self,
        step: usize,
        progress: &mut L::Progress<'_>,
    ) -> Result<Option<StopReason>> {
        let mut stop = None;
        for (o, every) in self.observers.iter_mut() {
            if *every > 0 && step.is_multiple_of(*every) {
                if let Control::Stop(why) = o.observe(progress)? {
                    stop.get_or_insert(why);
                }
            }
        }
        Ok(stop)
    }

    /// Calls every observer's `finish`.
    pub fn finish(&mut self, progress: &mut L::Progress<'_>, stop: &StopReason) -> Result<()> {
        for (o, _) in self.observers.iter_mut() {
            o.finish(progress, stop)?;
        }
        Ok(())
    }
}

/// A learner: the checked settings of one family, which fit a model to a dataset.
///
/// Implemented by [`crate::fsll::CheckedFsllParams`]; the FVBM solvers
/// [`crate::fvbm::CheckedNewtonParams`], [`crate::fvbm::CheckedBslmParams`],
/// [`crate::fvbm::CheckedGaParams`], [`crate::fvbm::CheckedMleParams`] and
/// [`crate::fvbm::CheckedPcdParams`]; [`crate::rbm::train::CheckedRbmParams`] and
/// [`crate::rbm::frank_wolfe::CheckedFwParams`].
pub trait Learner {
    /// The model learned.
    type Model;
    /// The record of a run.
    type Record: Serialize;
    /// What observers see (the model so far and what the learner measured).
    type Progress<'p>;

    /// Fits a model to `data`, with the observers and interrupt of `run`.
    fn fit_with(
        &self,
        data: &Dataset,
        run: Run<'_, Self>,
    ) -> Result<Fit<Self::Model, Self::Record>>;

    /// Fits a model to `data`.
    fn fit(&self, data: &Dataset) -> Result<Fit<Self::Model, Self::Record>> {
        self.fit_with(data, Run::new())
    }

    /// An empty [`Run`] of this learner, so that the observers added to it know the progress
    /// type: `learner.run().observe_every(observer, 10)`.
    fn run<'a>(&self) -> Run<'a, Self>
    where
        Self: Sized,
    {
        Run::new()
    }
}
