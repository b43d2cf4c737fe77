//! What the maximum pseudo-likelihood solvers ([`super::bslm`], [`super::ga`],
//! [`super::newton`]) share: their settings ([`MpleParams`]), the loop with its stopping rules
//! (first-order optimality, the default: every component of the gradient per sample at most
//! `grad_tol`; or the paper's, Sec. 2 of Nguyen & Wood: the objective gains less than `τ` in an
//! iteration, [`MpleParams::paper`]), and the training record ([`MpleRecord`]).
//!
//! The objective is the log-pseudo-likelihood `P_n(θ)` of Eq. 2.1, minus the optional L2
//! penalty `n·λ/2·‖θ‖²` (λ = [`MpleParams::l2`], per sample, so its weight does not change
//! with `n`). With `λ > 0` the objective is strongly concave and its maximizer always exists.

use super::convention::Convention;
use super::model::Fvbm;
use super::pseudo::{self, PlData};
use super::separation::{self, runaway, Existence, Runaway, Snapshot};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::fit::{Count, Fit, Interrupt, Learner, Run};
use std::time::Instant;

/// Relative changes of the objective below this are round-off: they count as no change.
pub const ROUND_OFF: f64 = 1e-13;

/// The default stop: every component of the objective's gradient, per sample, at most this.
/// The paper's rule (τ = 1e-5 on the gain of a sweep) stops BSLM about 0.01 short of the
/// maximum log-pseudo-likelihood on a d = 10, n = 16,000 set; this one reaches the MPLE to
/// about 4e-5 in the parameters.
pub const DEFAULT_GRAD_TOL: f64 = 1e-7;

/// Settings shared by the MPLE solvers. The default stops at first-order optimality
/// ([`DEFAULT_GRAD_TOL`]); [`MpleParams::paper`] is Sec. 5's gain rule.
///
/// The serialized names are the schema ([`super::FvbmParams`]); `init` is not a setting (it
/// is the starting model) and is not serialized.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct MpleParams {
    /// The convention of the fitted model (data files hold 0/1; spin maps 0 to −1).
    /// Default [`Convention::Spin`], the paper's.
    pub convention: Convention,
    /// Stop when the objective gains less than `τ` in one iteration (sweep); gains within
    /// round-off ([`ROUND_OFF`] relative) count as zero, so `τ = 0` leaves the stopping to
    /// `grad_tol` and `max_iterations`. Default 0 (off); the paper's 1e-5 in
    /// [`MpleParams::paper`].
    pub tau: f64,
    /// Hard cap on iterations (sweeps for BSLM and GA, Newton steps). Default 100,000.
    pub max_iterations: usize,
    /// Stop when every component of the objective's gradient, divided by `n`, is at most
    /// this; 0 turns the test off. Default [`DEFAULT_GRAD_TOL`]; 0 in [`MpleParams::paper`].
    pub grad_tol: f64,
    /// L2 penalty `λ ≥ 0` per sample: the objective is `P_n(θ) − n·λ/2·‖θ‖²`. Default 0
    /// (plain MPLE).
    pub l2: f64,
    /// The starting point (its convention must be [`MpleParams::convention`]); `None` starts
    /// at `θ = 0`. Default `None`.
    #[serde(skip)]
    pub init: Option<Fvbm>,
    /// Without penalty, decide after the fit whether the maximizer exists: by Stiemke's
    /// certificate at the fitted point, else by the separation LP
    /// ([`super::separation::check_at`]; runaway parameters on the fit's own path are
    /// detected either way). Default true.
    pub check_existence: bool,
}

/// The BSLM settings are the shared MPLE settings.
pub type BslmParams = MpleParams;

impl Default for MpleParams {
    fn default() -> Self {
        MpleParams {
            convention: Convention::Spin,
            tau: 0.0,
            max_iterations: 100_000,
            grad_tol: DEFAULT_GRAD_TOL,
            l2: 0.0,
            init: None,
            check_existence: true,
        }
    }
}

impl MpleParams {
    /// The paper's settings (Sec. 5 of Nguyen & Wood): stop when a sweep gains less than
    /// τ = 1e-5, no gradient test. Gradient ascent and Newton default to it.
    pub fn paper() -> Self {
        MpleParams {
            tau: 1e-5,
            grad_tol: 0.0,
            ..MpleParams::default()
        }
    }

    /// Checks every setting (the error names the field at fault) and returns BSLM's learner
    /// (these settings alone are [`BslmParams`]).
    pub fn check(&self) -> Result<CheckedBslmParams> {
        self.validate()?;
        Ok(CheckedBslmParams(self.clone()))
    }

    /// Checks every setting; the error names the field at fault.
    pub(crate) fn validate(&self) -> Result<()> {
        nonneg("tau", self.tau)?;
        nonneg("grad_tol", self.grad_tol)?;
        nonneg("l2", self.l2)?;
        if self.max_iterations == 0 {
            return Err(Error::param("max_iterations", "must be at least 1"));
        }
        check_init(self.init.as_ref(), self.convention)
    }

    /// The starting model for `d` units.
    pub(crate) fn start(&self, d: usize) -> Result<Fvbm> {
        starting_model(self.init.as_ref(), d, self.convention)
    }
}

/// [`BslmParams`] (= [`MpleParams`]) checked by [`MpleParams::check`]: the BSLM learner
/// (its fits are [`super::bslm`]'s).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedBslmParams(pub(super) MpleParams);

/// Which solver produced a fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// Block successive lower-bound maximization (Eqs. 2.4 and 2.7).
    Bslm,
    /// Gradient ascent with step `μ` (Eqs. 4.1-4.2).
    Ga,
    /// Damped Newton with a backtracking line search.
    Newton,
    /// L-BFGS on matrix products ([`super::plm`]).
    Plm,
}

/// Why a solver stopped: [`StopReason::Converged`] (gain below `τ`),
/// [`StopReason::GradientTolerance`], [`StopReason::MaxIterations`], [`StopReason::Decreased`]
/// (gradient ascent with `μ > 1`; the iterate before is kept) or [`StopReason::NoProgress`].
pub use crate::fit::StopReason;

/// The record of an MPLE fit.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MpleRecord {
    /// The solver.
    pub algorithm: Algorithm,
    /// Iterations done (sweeps for BSLM and GA, Newton steps).
    pub iterations: usize,
    /// The objective (log-PL minus the penalty, if any) at the start (`[0]`) and after every
    /// iteration.
    pub objective: Vec<f64>,
    /// `max_a |θ_a|` at the start and after every iteration.
    pub max_abs_theta: Vec<f64>,
    /// `max_a |∂objective/∂θ_a| / n` at the end.
    pub final_gradient: f64,
    /// Why the solver stopped.
    pub stop: StopReason,
    /// The L2 penalty λ used.
    pub l2: f64,
    /// Number of samples `n`.
    pub n_samples: usize,
    /// Number of distinct rows in the data.
    pub n_distinct: usize,
    /// The separation LP's verdict on whether the (unpenalized) maximizer exists, with a
    /// recession direction when it does not; `None` when it did not run (`l2 > 0` or
    /// `check_existence` off).
    pub existence: Option<Existence>,
    /// Parameters running away on the fit's own path (without penalty), if seen: the
    /// second line of defence, and the only one when the LP did not run.
    pub runaway: Option<Runaway>,
    /// Warnings for the user, one plain sentence each.
    pub warnings: Vec<String>,
    /// Wall-clock seconds of the fit, the separation LP excluded (its own seconds are in
    /// [`MpleRecord::existence`]).
    pub seconds: f64,
    /// The index into [`MpleRecord::objective`] from which its values come from `f64`
    /// products; those before it come from the `f32` products of the L-BFGS solver's first
    /// run (accurate to about `1e-11` relative), and the two parts are compared only within
    /// themselves. 0 for the other solvers.
    pub precise_from: usize,
}

impl MpleRecord {
    /// The final objective.
    pub fn final_objective(&self) -> f64 {
        *self
            .objective
            .last()
            .expect("the trace holds the starting value")
    }

    /// Whether the unpenalized MPLE exists: the separation LP's verdict when it ran, else
    /// `Some(false)` when parameters ran away, else `None` (not known).
    pub fn mple_exists(&self) -> Option<bool> {
        match (&self.existence, &self.runaway) {
            (Some(e), _) => Some(e.exists()),
            (None, Some(_)) => Some(false),
            (None, None) => None,
        }
    }

    /// True when the objective never decreased from one iteration to the next by more than
    /// round-off ([`ROUND_OFF`] relative), within each precision's part of the trace
    /// ([`MpleRecord::precise_from`]).
    pub fn is_monotone(&self) -> bool {
        let (single, double) = self.objective.split_at(self.precise_from);
        [single, double].iter().all(|part| {
            part.windows(2)
                .all(|w| w[1] >= w[0] - ROUND_OFF * w[0].abs().max(1.0))
        })
    }
}

/// A model fitted by maximum pseudo-likelihood and its record.
pub type FvbmFit = Fit<Fvbm, MpleRecord>;

/// Progress reported to an observer after every iteration.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Iterations done.
    pub iteration: usize,
    /// The objective now.
    pub objective: f64,
    /// Its gain in this iteration.
    pub gain: f64,
}

/// What one iteration of a solver achieved.
pub(crate) enum Step {
    /// The iterate moved.
    Moved,
    /// No increase could be found.
    Stuck,
}

/// A solver of the (penalized) MPLE problem, one iteration at a time.
pub(crate) trait Solver {
    /// The objective at the current iterate.
    fn objective(&self) -> f64;
    /// One iteration; an [`Error::Interrupted`] leaves the iterate as it was.
    fn step(&mut self) -> Result<Step>;
    /// The current parameters `θ`.
    fn theta(&self) -> Vec<f64>;
}

/// The objective's gradient `∇P_n(θ) − nλθ` at `model`.
/// Fails unless `v` is a finite number ≥ 0; the error names `field`.
pub(crate) fn nonneg(field: &str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(Error::param(
            field,
            format!("must be a finite number ≥ 0, got {v}"),
        ))
    }
}

/// The starting model: `init` when its size matches the data's `d`, else zeros.
pub(crate) fn starting_model(
    init: Option<&Fvbm>,
    d: usize,
    convention: Convention,
) -> Result<Fvbm> {
    match init {
        Some(m) if m.d() != d => Err(Error::param(
            "init",
            format!(
                "the starting model has {} units, the data {d} variables",
                m.d()
            ),
        )),
        Some(m) => Ok(m.clone()),
        None => Fvbm::zeros(d, convention),
    }
}

/// Fails unless the starting model, if any, is in the fit's convention.
pub(crate) fn check_init(init: Option<&Fvbm>, convention: Convention) -> Result<()> {
    match init {
        Some(m) if m.convention() != convention => Err(Error::param(
            "init",
            format!(
                "the starting model is in the {} convention, the fit in {}",
                m.convention(),
                convention
            ),
        )),
        _ => Ok(()),
    }
}

pub(crate) fn penalized_gradient(model: &Fvbm, data: &PlData, l2: f64) -> Result<Vec<f64>> {
    let n = data.n_samples() as f64;
    let mut g = pseudo::gradient(model, data)?;
    for (gv, t) in g.iter_mut().zip(model.theta()) {
        *gv -= n * l2 * t;
    }
    Ok(g)
}

/// The objective `P_n(θ) − nλ/2 ‖θ‖²` at `model`.
#[cfg(test)]
pub(crate) fn penalized_log_pl(model: &Fvbm, data: &PlData, l2: f64) -> Result<f64> {
    let n = data.n_samples() as f64;
    let sq: f64 = model.theta().iter().map(|t| t * t).sum();
    Ok(pseudo::log_pl(model, data)? - 0.5 * n * l2 * sq)
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// The path of a fit: the objective and `max |θ|` at the start and after every iteration, and
/// the earlier iterates from which runaway parameters are measured (every power of two, and
/// the iterate before the current one).
pub(crate) struct Path {
    objective: Vec<f64>,
    max_abs_theta: Vec<f64>,
    snapshots: Vec<Snapshot>,
    current: Snapshot,
    before_current: Option<Snapshot>,
    precise_from: usize,
}

impl Path {
    /// The path at the starting point.
    pub(crate) fn new(theta: Vec<f64>, objective: f64) -> Self {
        let start = Snapshot {
            iteration: 0,
            theta,
            objective,
        };
        Path {
            objective: vec![objective],
            max_abs_theta: vec![max_abs(&start.theta)],
            snapshots: vec![start.clone()],
            current: start,
            before_current: None,
            precise_from: 0,
        }
    }

    /// The objective now.
    pub(crate) fn last(&self) -> f64 {
        *self.objective.last().expect("the path holds the start")
    }

    /// Records iteration `iteration` at `theta` with `objective`.
    pub(crate) fn push(&mut self, iteration: usize, theta: Vec<f64>, objective: f64) {
        self.objective.push(objective);
        self.max_abs_theta.push(max_abs(&theta));
        let here = Snapshot {
            iteration,
            theta,
            objective,
        };
        if iteration.is_power_of_two() {
            self.snapshots.push(here.clone());
        }
        self.before_current = Some(std::mem::replace(&mut self.current, here));
    }

    /// Replaces the objective now by `objective`, the same point's value computed more
    /// precisely (the L-BFGS solver's switch from `f32` to `f64` products).
    /// [`MpleRecord::precise_from`] becomes this point.
    pub(crate) fn revalue_last(&mut self, objective: f64) {
        *self.objective.last_mut().expect("the path holds the start") = objective;
        self.current.objective = objective;
        self.precise_from = self.objective.len() - 1;
    }

    /// The iterate now.
    pub(crate) fn theta(&self) -> &[f64] {
        &self.current.theta
    }
}

/// How a fit ended: why, where, and the penalized gradient's `max |·| / n` there.
pub(crate) struct Ending {
    pub(crate) algorithm: Algorithm,
    pub(crate) start: Instant,
    pub(crate) stop: StopReason,
    pub(crate) theta: Vec<f64>,
    pub(crate) objective: f64,
    pub(crate) final_gradient: f64,
}

/// Whether the MPLE exists, decided at the fitted model; `Ok(None)` when it could not be
/// decided within the check's means (the reason is the `String`).
pub(crate) type ExistenceCheck<'a> =
    &'a dyn Fn(&Fvbm) -> Result<std::result::Result<Existence, String>>;

/// How far a direction (in the layout of `θ`) is from a recession direction
/// ([`separation::recession_violation`], or the same by matrix products).
pub(crate) type Violation<'a> = &'a dyn Fn(&[f64]) -> Result<f64>;

/// Runs `solver` until the stopping rule fires; returns the fitted model and its record.
pub(crate) fn drive(
    solver: &mut dyn Solver,
    data: &PlData,
    params: &MpleParams,
    algorithm: Algorithm,
    start: Instant,
    run: &mut dyn Hooks,
) -> Result<FvbmFit> {
    let d = data.d();
    if params.l2 == 0.0 && params.check_existence {
        separation::check_size(d, data.n_distinct())?;
    }
    let n = data.n_samples() as f64;
    let conv = params.convention;
    let mut path = Path::new(solver.theta(), solver.objective());
    let mut stop = StopReason::MaxIterations;
    for iteration in 1..=params.max_iterations {
        let prev = path.last();
        // An interrupt inside a long step (Newton's Hessian) keeps the iterate before it.
        let moved = match solver.step() {
            Err(Error::Interrupted { .. }) => {
                stop = StopReason::Interrupted {
                    after: Count::iterations(iteration - 1),
                };
                break;
            }
            other => other?,
        };
        let f = solver.objective();
        if !f.is_finite() {
            return Err(Error::Numerical {
                context: format!("{algorithm:?} iteration {iteration}"),
                detail: format!("the objective became {f}"),
            });
        }
        if let Step::Stuck = moved {
            stop = StopReason::NoProgress;
            break;
        }
        path.push(iteration, solver.theta(), f);
        if let Some(why) = after_iteration(run, params, iteration, f, f - prev)? {
            stop = why;
            break;
        }
        if params.grad_tol > 0.0 {
            let model = Fvbm::from_theta(d, path.theta(), conv)?;
            let g = penalized_gradient(&model, data, params.l2)?;
            if max_abs(&g) / n <= params.grad_tol {
                stop = StopReason::GradientTolerance;
                break;
            }
        }
    }
    // After a decrease the better iterate before it is returned.
    let (theta, objective) = match (&stop, &path.before_current) {
        (StopReason::Decreased, Some(b)) => (b.theta.clone(), b.objective),
        _ => (solver.theta(), path.last()),
    };
    let model = Fvbm::from_theta(d, &theta, conv)?;
    let final_gradient = max_abs(&penalized_gradient(&model, data, params.l2)?) / n;
    let ending = Ending {
        algorithm,
        start,
        stop,
        theta,
        objective,
        final_gradient,
    };
    let interrupt = run.interrupt_flag();
    let existence = |m: &Fvbm| separation::check_at(data, m, interrupt.as_ref()).map(Ok);
    let violation = |dir: &[f64]| separation::recession_violation(data, dir);
    conclude(path, ending, data, params, run, &existence, &violation)
}

/// The observers, the interrupt and the gain rules after iteration `iteration` reached `f`
/// (a gain of `gain`): `Some` ends the fit for that reason.
pub(crate) fn after_iteration(
    run: &mut dyn Hooks,
    params: &MpleParams,
    iteration: usize,
    f: f64,
    gain: f64,
) -> Result<Option<StopReason>> {
    if let Some(why) = run.observe(&mut Progress {
        iteration,
        objective: f,
        gain,
    })? {
        return Ok(Some(why));
    }
    if run.interrupted() {
        return Ok(Some(StopReason::Interrupted {
            after: Count::iterations(iteration),
        }));
    }
    // Gains at the level of round-off count as zero: not a decrease, and below any τ > 0.
    let noise = ROUND_OFF * f.abs().max(1.0);
    let gain = if gain.abs() <= noise { 0.0 } else { gain };
    if gain < 0.0 {
        return Ok(Some(StopReason::Decreased));
    }
    if gain < params.tau {
        return Ok(Some(StopReason::Converged));
    }
    Ok(None)
}

/// The end of every MPLE fit: runaway parameters on the path, the existence check (without
/// penalty, unless interrupted or switched off), the warnings, the observers' `finish`, the
/// record.
pub(crate) fn conclude(
    mut path: Path,
    ending: Ending,
    data: &PlData,
    params: &MpleParams,
    run: &mut dyn Hooks,
    existence_check: ExistenceCheck<'_>,
    violation: Violation<'_>,
) -> Result<FvbmFit> {
    let Ending {
        algorithm,
        start,
        stop,
        theta,
        objective: last,
        final_gradient,
    } = ending;
    let model = Fvbm::from_theta(data.d(), &theta, params.convention)?;
    let iterations = path.objective.len() - 1;
    if let Some(b) = path.before_current.take() {
        if path
            .snapshots
            .last()
            .is_some_and(|s| s.iteration < b.iteration)
        {
            path.snapshots.push(b);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let runaway = runaway(
        data.convention(),
        &path.snapshots,
        &theta,
        last,
        iterations,
        params.l2,
        violation,
    )?;
    // Not after an interrupt: the user asked to stop, and the LP can take minutes. An
    // interrupt during the check ends it within a second: the fitted model is kept, the
    // existence left undecided, and the run counts as interrupted.
    let mut stop = stop;
    let interrupted = matches!(stop, StopReason::Interrupted { .. });
    let mut warnings = Vec::new();
    let existence = if params.l2 == 0.0 && params.check_existence && !interrupted {
        match existence_check(&model) {
            Ok(Ok(e)) => Some(e),
            Ok(Err(why)) => {
                warnings.push(format!(
                    "whether the maximum pseudo-likelihood estimate exists was not decided: \
                     {why}; an L2 penalty λ > 0 (`--l2 λ`) makes it exist always"
                ));
                None
            }
            Err(Error::Interrupted { what }) => {
                warnings.push(format!(
                    "{what} was interrupted: whether the maximum pseudo-likelihood estimate \
                     exists was not decided"
                ));
                stop = StopReason::Interrupted {
                    after: Count::iterations(iterations),
                };
                None
            }
            Err(e) => return Err(e),
        }
    } else {
        None
    };
    match (&existence, &runaway) {
        (Some(e), _) if !e.exists() => warnings.extend(e.message()),
        (Some(_), Some(r)) => warnings.push(format!(
            "the parameters were still drifting when the fit stopped (by {:.3} over the last \
             {} iterations) although the MPLE exists (the separation LP finds no recession \
             direction): the fit may be far from the maximizer; a smaller τ or the Newton \
             solver gets closer",
            r.drift,
            r.iterations - r.since
        )),
        (None, Some(r)) => warnings.push(r.message()),
        _ => {}
    }
    match stop {
        StopReason::MaxIterations => warnings.push(if params.tau > 0.0 {
            format!(
                "stopped at the iteration limit ({}) before the objective gained less than τ = {}",
                params.max_iterations, params.tau
            )
        } else {
            format!(
                "stopped at the iteration limit ({}) before the gradient per sample fell to {}",
                params.max_iterations, params.grad_tol
            )
        }),
        StopReason::Decreased => warnings.push(
            "the objective decreased in the last iteration, so the fit stopped there; \
             gradient ascent is only monotone for step μ ≤ 1"
                .to_string(),
        ),
        _ => {}
    }
    run.finish(
        &mut Progress {
            iteration: iterations,
            objective: last,
            gain: 0.0,
        },
        &stop,
    )?;
    Ok(Fit {
        model,
        record: MpleRecord {
            algorithm,
            iterations,
            objective: path.objective,
            max_abs_theta: path.max_abs_theta,
            final_gradient,
            stop,
            l2: params.l2,
            n_samples: data.n_samples(),
            n_distinct: data.n_distinct(),
            existence,
            runaway,
            warnings,
            seconds,
            precise_from: path.precise_from,
        },
    })
}

/// What the shared MPLE loop needs of a [`Run`]: its observers and interrupt, whatever the
/// solver (BSLM, gradient ascent, Newton).
pub(crate) trait Hooks {
    /// The observers due at `progress.iteration`; `Some` ends the run with that reason.
    fn observe(&mut self, progress: &mut Progress) -> Result<Option<StopReason>>;
    /// Whether an interrupt was asked for.
    fn interrupted(&self) -> bool;
    /// The interrupt flag, for the checks after the fit (the existence certificate and LP).
    fn interrupt_flag(&self) -> Option<Interrupt>;
    /// Every observer's `finish`.
    fn finish(&mut self, progress: &mut Progress, stop: &StopReason) -> Result<()>;
}

impl<L: for<'p> Learner<Progress<'p> = Progress> + ?Sized> Hooks for Run<'_, L> {
    fn observe(&mut self, progress: &mut Progress) -> Result<Option<StopReason>> {
        if progress.iteration == 1 {
            self.start(progress)?;
        }
        self.observe_at(progress.iteration, progress)
    }

    fn interrupted(&self) -> bool {
        Run::interrupted(self)
    }

    fn interrupt_flag(&self) -> Option<Interrupt> {
        Run::interrupt_flag(self).cloned()
    }

    fn finish(&mut self, progress: &mut Progress, stop: &StopReason) -> Result<()> {
        Run::finish(self, progress, stop)
    }
}

/// Prepares data and the starting model for a fit: checks the settings, the data and the
/// starting point.
pub(crate) fn prepare(data: &Dataset, params: &MpleParams) -> Result<(PlData, Fvbm)> {
    params.validate()?;
    let pl = PlData::new(data, params.convention)?;
    let init = params.start(pl.d())?;
    Ok((pl, init))
}
