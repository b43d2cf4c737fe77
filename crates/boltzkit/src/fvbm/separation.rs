//! When the maximum pseudo-likelihood estimate (MPLE) exists: the exact test by a linear
//! program, and the detection of runaway parameters during a fit.
//!
//! # The existence theorem
//!
//! Index the pairs (distinct row `u`, unit `j`) by `q`, let `s_q = ±1` tell on which side of
//! the midpoint of the two unit values `x_uj` lies, and `a_q = s_q ∂h_uj/∂θ` (so
//! `a_qᵀθ = s_q h_uj`: `s_q` for `b_j`, `s_q x_uk` for `m_jk`). The `q`-th term of `P_n`
//! (Eq. 2.1) is `w_u ℓ(a_qᵀθ)` with `ℓ(t) = −ln(1 + e^{−g t})` and `g` the gap between the
//! unit values (2 for spin, 1 for binary). `ℓ` is strictly increasing, negative, and tends to
//! `−∞` as `t → −∞`. A *recession direction* is a `Δ` with `a_qᵀΔ ≥ 0` for every `q` and
//! `> 0` for some: along it the `d` conditional logistic regressions are jointly
//! (quasi-)separated.
//!
//! **Theorem.** `P_n` attains its supremum if and only if there is no recession direction.
//!
//! *Proof.* Given one, `P_n(θ + Δ) > P_n(θ)` for every `θ` (`ℓ` is strictly increasing), so
//! no `θ` is a maximizer, and along `θ + tΔ` the log-PL rises for ever while `|θ|` grows
//! without bound. Conversely, let there be none and `θ_k` be a maximizing sequence with
//! `v_k = Aθ_k`. Every term is negative, so `P_n(θ_k) ≥ P_n(0)` bounds each `w_u ℓ(v_kq)`
//! below, hence `v_kq ≥ −C` for one `C`. Were `‖v_k‖` unbounded, a limit point `v̄` of
//! `v_k/‖v_k‖` would lie in the (closed) range of `A` with `‖v̄‖ = 1` and `v̄ ≥ 0`: `v̄ = AΔ`
//! for a recession direction `Δ`. So `v_k` is bounded, has a limit point `Aθ̄` in the range
//! of `A`, and `P_n(θ̄)` is the supremum by continuity. ∎
//!
//! # The separation LP ([`check`])
//!
//! `max cᵀΔ` subject to `a_qᵀΔ ≥ 0` for every `q` and `−1 ≤ Δ_a ≤ 1`, with
//! `c = (1/N) Σ_q a_q` over all `N = d × rows` pairs. `Δ = 0` is feasible and the box bounds
//! the objective, so an optimum exists. For a feasible `Δ`, `cᵀΔ` is the mean slack
//! `(1/N) Σ_q a_qᵀΔ`, positive if and only if one slack is: the optimum is positive if and
//! only if a recession direction exists (scale any into the box), and an optimal `Δ` is one.
//! The box makes "nonzero" linear; summing every slack lets one positive slack suffice.
//!
//! *Row generation.* `N` reaches 3·10⁵ at `d = 20`, `n = 16,000` (the simplex on all of it
//! took 34 s), yet at most `d(d+1)/2` constraints bind at a vertex. So the LP is solved on a
//! subset `S` of the constraints with the same `c`. The feasible set of `LP_S` contains the
//! full LP's, so `opt(LP_S) ≥ opt(LP) ≥ 0`: if `opt(LP_S) = 0` the MPLE exists; if the optimal
//! `Δ_S` meets every constraint it is feasible, hence optimal, for the full LP. Otherwise the
//! most violated constraints join `S` and `LP_S` is solved again; every round adds at least
//! one new constraint, so the rounds end (3 to 6 in our measurements, about a second at
//! `d = 20`).
//!
//! The simplex (microlp) meets constraints to 1e-7 on coefficients of size at most 1, so
//! slacks within [`LP_TOL`] count as zero.
//!
//! # The fast path after a fit: Stiemke's certificate ([`check_at`])
//!
//! By Stiemke's lemma no recession direction exists exactly when some `y > 0` has `Aᵀy = 0`
//! (then `AΔ ≥ 0` gives `0 = yᵀAΔ`, so `AΔ = 0`). A fitted point supplies one almost: with
//! `y⁰_q = w_u |x_uj − E[x_j | h_uj]| > 0`, `Aᵀy⁰ = ∇P_n(θ)`, small near a maximizer. The
//! correction `z_q = −w_u a_qᵀν` with `(Σ_q w_u a_q a_qᵀ) ν = ∇P_n(θ)` gives `Aᵀ(y⁰ + z) = 0`;
//! if every `y⁰_q + z_q` stays positive (margin above 1e-9), the MPLE exists and no LP is
//! needed. The matrix `Σ_q w_u a_q a_qᵀ` is `−∇²P_n(0)` divided by the convention's variance
//! at 0; when it is singular, or the margin is not positive (as it cannot be where the MPLE
//! does not exist), the LP decides. The LP at `d = 40` takes minutes; the certificate takes a
//! Hessian and a Cholesky factor.
//!
//! # During a fit (the second line of defence)
//!
//! The drift of a fit is itself a candidate direction: the change of `θ` over the second half
//! of the run. A fit is flagged ([`Runaway`]) when, without penalty, that drift is not small,
//! the objective rose over the same span, and the drift is a recession direction up to a
//! small relative tolerance ([`recession_violation`]). An L2 penalty (`MpleParams::l2 > 0`)
//! makes the objective strongly concave and coercive, so its maximizer always exists.

use super::convention::Convention;
use super::dense::{cholesky_solve, cholesky_until, refuse_dense};
use super::model::{n_params, Fvbm};
use super::pseudo::{
    fields, gradient_from_fields, hessian_memory, hessian_until, partner_index, PlData,
};
use crate::error::{Error, Result};
use crate::fit::Interrupt;
use microlp::{ComparisonOp, OptimizationDirection, Problem, Solution, SolveOptions, SolveOutcome};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Smallest drift (max-norm since an earlier iterate, in spin units) that counts as
/// running away.
const MIN_DRIFT: f64 = 0.05;
/// Largest relative violation of the recession condition tolerated for the drift.
const MAX_VIOLATION: f64 = 0.02;
/// Slacks of the separation LP within this of zero count as zero (the simplex's
/// feasibility tolerance on coefficients of size at most 1).
pub const LP_TOL: f64 = 1e-7;
/// Above this many pairs the LP starts from a subset of the constraints (row generation).
const ALL_AT_ONCE: usize = 2048;

/// A recession direction of `P_n`: the proof that the MPLE does not exist.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Separation {
    /// The direction `Δ` in the layout of `θ`, scaled to `max_a |Δ_a| = 1`.
    pub direction: Vec<f64>,
    /// Pairs (distinct row, unit) whose conditional log-likelihood strictly rises along `Δ`
    /// (slack `a_qᵀΔ > LP_TOL`).
    pub separated_pairs: usize,
    /// The units (0-based) whose regressions are separated along `Δ`.
    pub units: Vec<usize>,
}

/// The outcome of the separation LP ([`check`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Existence {
    /// The recession direction found, or `None` when the MPLE exists.
    pub separation: Option<Separation>,
    /// Pairs (distinct row, unit) in all: the constraints of the full LP.
    pub pairs: usize,
    /// LPs solved (rounds of row generation).
    pub rounds: usize,
    /// Constraints of the last LP.
    pub constraints: usize,
    /// True when Stiemke's certificate at a fitted point settled it without an LP
    /// ([`check_at`]; `rounds` and `constraints` are then 0).
    pub certificate: bool,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl Existence {
    /// True when the MPLE exists (no recession direction).
    pub fn exists(&self) -> bool {
        self.separation.is_none()
    }

    /// One plain sentence for the user when the MPLE does not exist.
    pub fn message(&self) -> Option<String> {
        let sep = self.separation.as_ref()?;
        const SHOWN: usize = 8;
        let mut units: Vec<String> = sep
            .units
            .iter()
            .take(SHOWN)
            .map(|j| (j + 1).to_string())
            .collect();
        if sep.units.len() > SHOWN {
            units.push(format!("… ({} in all)", sep.units.len()));
        }
        Some(format!(
            "the maximum pseudo-likelihood estimate does not exist for these data: the \
             conditional regressions of units {} are jointly (quasi-)separated (a linear \
             program found a direction along which the log-pseudo-likelihood rises for ever \
             while the parameters grow without bound), so the fitted values are arbitrary \
             along it — an L2 penalty λ > 0 (`--l2 λ` on the command line) gives a finite \
             estimate",
            units.join(", ")
        ))
    }
}

/// Decides whether the MPLE exists on `data` by the separation LP (see the module
/// documentation for the theorem, the LP and its row generation), returning a recession
/// direction when it does not.
///
/// ```
/// use boltzkit::data::Dataset;
/// use boltzkit::fvbm::{pseudo::PlData, separation, Convention};
/// // Unit 2 copies unit 1: its regression on unit 1 is separated (m_12 → ∞).
/// let data = Dataset::binary(ndarray::array![[0u8, 0], [1, 1], [1, 1]])?;
/// let pl = PlData::new(&data, Convention::Spin)?;
/// let check = separation::check(&pl)?;
/// assert!(!check.exists());
/// // All four states: nothing can be separated.
/// let data = Dataset::binary(ndarray::array![[0u8, 0], [0, 1], [1, 0], [1, 1]])?;
/// assert!(separation::check(&PlData::new(&data, Convention::Spin)?)?.exists());
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn check(data: &PlData) -> Result<Existence> {
    check_until(data, None)
}

/// [`check`], stopped with [`Error::Interrupted`] within [`LP_POLL`] while the simplex runs
/// (its slice left to end on a worker thread) or one pass over the pairs otherwise, once
/// `interrupt` is set.
pub fn check_until(data: &PlData, interrupt: Option<&Interrupt>) -> Result<Existence> {
    solve_lp(data, data.d() * data.n_distinct() <= ALL_AT_ONCE, interrupt)
}

/// Decides whether the MPLE exists, first by Stiemke's certificate at the fitted `model` (see
/// the module documentation), then, when that does not settle it, by [`check`]; stopped with
/// [`Error::Interrupted`] within a second or so once `interrupt` is set (polled in the
/// Hessian's rows, the factor's columns and between the LP's slices).
pub fn check_at(data: &PlData, model: &Fvbm, interrupt: Option<&Interrupt>) -> Result<Existence> {
    let start = Instant::now();
    if stiemke_margin(data, model, interrupt)?.is_some_and(|m| m > CERTIFICATE_MARGIN) {
        return Ok(Existence {
            separation: None,
            pairs: data.d() * data.n_distinct(),
            rounds: 0,
            constraints: 0,
            certificate: true,
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    let mut e = check_until(data, interrupt)?;
    e.seconds = start.elapsed().as_secs_f64();
    Ok(e)
}

/// Refuses up front [`check_at`] on `rows` distinct rows (at most the samples) of `d` units
/// when its dense Stiemke certificate (the `p × p` Gram matrix, `p = d(d+1)/2`, and its
/// Cholesky factor) would not fit in memory or not end within an hour, with both estimates
/// and what scales instead: [`Error::TooLarge`]. The separation LP after it, when the
/// certificate does not hold, only adds to that.
pub fn check_size(d: usize, rows: usize) -> Result<()> {
    let p = n_params(d) as f64;
    let work = rows as f64 * (d as f64).powi(3) / 2.0 + p.powi(3) / 6.0;
    refuse_dense(
        &format!(
            "the existence check of the MPLE on {d} variables ({} parameters)",
            n_params(d)
        ),
        hessian_memory(d as u64),
        work,
        "its dense Gram matrix and Cholesky factor",
        "the L-BFGS solver `--algo plm` (Python algo=\"plm\") checks this size matrix-free, \
         or `--no-existence-check` (check_existence=False) skips it",
    )
}

/// The error of a check stopped by its interrupt.
fn interrupted() -> Error {
    Error::Interrupted {
        what: "the existence check".into(),
    }
}

/// Simplex work between two looks at the interrupt by the LP's worker in [`check_until`]
/// (microlp stops at its deadline, checked every 1,000 pivots, and resumes where it stopped).
pub const LP_SLICE: Duration = Duration::from_millis(200);

/// Smallest `min_q (y⁰_q + z_q) / w_u` that certifies existence.
const CERTIFICATE_MARGIN: f64 = 1e-9;

/// `min_q (y⁰_q + z_q) / w_u` of the corrected Stiemke weights at `model`, or `None` when
/// `Σ_q w_u a_q a_qᵀ` is singular.
fn stiemke_margin(
    data: &PlData,
    model: &Fvbm,
    interrupt: Option<&Interrupt>,
) -> Result<Option<f64>> {
    data.check_model(model)?;
    let (d, rows, conv) = (data.d(), data.n_distinct(), data.convention());
    let p = n_params(d);
    let h = fields(model, data);
    let mut nu = gradient_from_fields(data, &h);
    let scale = conv.variance_bound();
    let mut gram: Vec<f64> = hessian_until(data, &vec![0.0; d * rows], interrupt)
        .ok_or_else(interrupted)?
        .iter()
        .map(|v| -v / scale)
        .collect();
    if cholesky_until(&mut gram, p, interrupt)
        .ok_or_else(interrupted)?
        .is_err()
    {
        return Ok(None);
    }
    cholesky_solve(&gram, p, &mut nu);
    let a_nu = slacks(data, &nu)?;
    let margin = h
        .iter()
        .zip(&a_nu)
        .enumerate()
        .map(|(q, (&hv, &an))| (data.column(q / rows)[q % rows] - conv.mean(hv)).abs() - an)
        .fold(f64::INFINITY, f64::min);
    Ok(Some(margin))
}

/// The separation LP, on all constraints at once or by row generation.
fn solve_lp(data: &PlData, all_at_once: bool, interrupt: Option<&Interrupt>) -> Result<Existence> {
    let stop = || interrupt.is_some_and(Interrupt::is_set);
    let start = Instant::now();
    let (d, rows, conv) = (data.d(), data.n_distinct(), data.convention());
    let p = n_params(d);
    let pairs = d * rows;
    let mid = 0.5 * (conv.value(0) + conv.value(1));
    let sign = |j: usize, u: usize| if data.column(j)[u] > mid { 1.0 } else { -1.0 };
    // The constraint of pair q = j·rows + u: a_q as (parameter, coefficient) pairs.
    let row = |q: usize| -> Vec<(usize, f64)> {
        let (j, u) = (q / rows, q % rows);
        let s = sign(j, u);
        (0..d)
            .filter_map(|k| {
                let v = if k == j { s } else { s * data.column(k)[u] };
                (v != 0.0).then(|| (partner_index(d, j, k), v))
            })
            .collect()
    };
    let mut c = vec![0.0; p];
    for q in 0..pairs {
        for (a, v) in row(q) {
            c[a] += v / pairs as f64;
        }
    }
    // The starting subset: every pair, or for each unit rows at an even stride (4p in all).
    let mut active: Vec<usize> = if all_at_once {
        (0..pairs).collect()
    } else {
        let stride = rows.div_ceil(2 * (d + 1)).max(1);
        (0..d)
            .flat_map(|j| (0..rows).step_by(stride).map(move |u| j * rows + u))
            .collect()
    };
    let mut in_lp = vec![false; pairs];
    active.iter().for_each(|&q| in_lp[q] = true);
    let mut rounds = 0;
    loop {
        rounds += 1;
        let mut lp = Problem::new(OptimizationDirection::Maximize);
        let vars: Vec<_> = c.iter().map(|&ca| lp.add_var(ca, (-1.0, 1.0))).collect();
        for &q in &active {
            let terms: Vec<_> = row(q).into_iter().map(|(a, v)| (vars[a], v)).collect();
            lp.add_constraint(&terms[..], ComparisonOp::Ge, 0.0);
        }
        let Some(solution) = lp_solution(lp, interrupt)? else {
            return Err(interrupted());
        };
        if stop() {
            return Err(interrupted());
        }
        let mut direction: Vec<f64> = vars.iter().map(|&v| solution.var_value(v)).collect();
        let norm = direction.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let done = |separation| {
            Ok(Existence {
                separation,
                pairs,
                rounds,
                constraints: active.len(),
                certificate: false,
                seconds: start.elapsed().as_secs_f64(),
            })
        };
        if solution.objective() <= LP_TOL / pairs as f64 || norm <= LP_TOL {
            return done(None);
        }
        direction.iter_mut().for_each(|v| *v /= norm);
        let slack = slacks(data, &direction)?;
        let mut violated: Vec<(f64, usize)> = slack
            .iter()
            .enumerate()
            .filter(|&(q, &v)| v < -LP_TOL && !in_lp[q])
            .map(|(q, &v)| (v, q))
            .collect();
        if violated.is_empty() {
            let mut units: Vec<usize> = (0..pairs)
                .filter(|&q| slack[q] > LP_TOL)
                .map(|q| q / rows)
                .collect();
            let separated_pairs = units.len();
            units.dedup();
            if separated_pairs == 0 {
                return done(None);
            }
            return done(Some(Separation {
                direction,
                separated_pairs,
                units,
            }));
        }
        violated.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for &(_, q) in violated.iter().take((2 * p).max(32)) {
            in_lp[q] = true;
            active.push(q);
        }
    }
}

/// A microlp failure as [`Error::Numerical`].
fn lp_error(e: microlp::Error) -> Error {
    Error::Numerical {
        context: "separation LP".into(),
        detail: e.to_string(),
    }
}

/// How often the caller of [`lp_solution`] polls the interrupt while the LP runs.
const LP_POLL: Duration = Duration::from_millis(20);

/// The optimum of `lp`, solved in slices of [`LP_SLICE`]; `None` once `interrupt` is set.
/// With an interrupt the slices run on a worker thread and the caller polls the flag every
/// [`LP_POLL`], returning at once: microlp checks its deadline only every 1,000 pivots, which
/// at `d = 60` can take over a second, so a slice may overrun it; the worker then ends at the
/// end of its slice on its own and its result is dropped.
fn lp_solution(lp: Problem, interrupt: Option<&Interrupt>) -> Result<Option<Solution>> {
    let flag = interrupt.cloned();
    let solve = move || -> Result<Option<Solution>> {
        let mut options = SolveOptions::default();
        options.time_limit = Some(LP_SLICE);
        let mut outcome = lp.solve_with(options).map_err(lp_error)?;
        loop {
            match outcome {
                SolveOutcome::Solution(s) => return Ok(Some(s)),
                SolveOutcome::Interrupted(_) if flag.as_ref().is_some_and(Interrupt::is_set) => {
                    return Ok(None)
                }
                o => outcome = o.resume().map_err(lp_error)?,
            }
        }
    };
    let Some(flag) = interrupt else {
        return solve();
    };
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("separation LP".into())
        .spawn(move || {
            // the receiver is gone when the caller returned on the interrupt: nothing to do
            let _ = tx.send(solve());
        })
        .map_err(|e| Error::Internal(format!("starting the separation LP's thread: {e}")))?;
    loop {
        match rx.recv_timeout(LP_POLL) {
            Ok(result) => return result,
            Err(RecvTimeoutError::Timeout) if flag.is_set() => return Ok(None),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Error::Internal(
                    "the separation LP's thread ended without a result".into(),
                ))
            }
        }
    }
}

/// The slacks `a_qᵀΔ = s_q Δh_q` of every pair `q = j·rows + u` along `direction`.
fn slacks(data: &PlData, direction: &[f64]) -> Result<Vec<f64>> {
    let conv = data.convention();
    let dh = fields(&Fvbm::from_theta(data.d(), direction, conv)?, data);
    let mid = 0.5 * (conv.value(0) + conv.value(1));
    let rows = data.n_distinct();
    Ok(dh
        .iter()
        .enumerate()
        .map(|(q, v)| {
            if data.column(q / rows)[q % rows] > mid {
                *v
            } else {
                -v
            }
        })
        .collect())
}

/// Evidence that a fit's parameters run away (the MPLE does not exist).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Runaway {
    /// Iterations of the fit.
    pub iterations: usize,
    /// The iteration from which the drift is measured.
    pub since: usize,
    /// `max_a |θ_a|` at the end.
    pub max_abs_theta: f64,
    /// `max_a |Δθ_a|` since [`Runaway::since`].
    pub drift: f64,
    /// The objective's rise since [`Runaway::since`].
    pub rise: f64,
    /// The drift's relative violation of the recession condition (≤ 0 is an exact
    /// recession direction; see [`recession_violation`]).
    pub violation: f64,
}

impl Runaway {
    /// One plain sentence for the user.
    pub fn message(&self) -> String {
        format!(
            "the maximum pseudo-likelihood estimate seems not to exist for these data: the \
             parameters grow along a direction that separates the conditional regressions \
             while the log-pseudo-likelihood keeps rising (they moved by {:.3} and the log-PL \
             rose by {:.3e} over the last {} iterations, max |θ| = {:.3}); the fitted values \
             are arbitrary along that direction — an L2 penalty λ > 0 (`--l2 λ` on the \
             command line) gives a finite estimate",
            self.drift,
            self.rise,
            self.iterations - self.since,
            self.max_abs_theta
        )
    }
}

/// How far `direction` (in the layout of `θ`) is from a recession direction of `P_n` on
/// `data`: `max_q −a_qᵀΔ / max_q |a_qᵀΔ|` over the pairs (distinct row, unit). A value
/// `≤ 0` means `P_n` never decreases along the direction (exactly); `+∞` is returned for a
/// direction that moves no field at all.
pub fn recession_violation(data: &PlData, direction: &[f64]) -> Result<f64> {
    let slack = slacks(data, direction)?;
    let scale = slack.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if scale == 0.0 {
        return Ok(f64::INFINITY);
    }
    let worst = slack.iter().fold(f64::NEG_INFINITY, |m, v| m.max(-v));
    Ok(worst / scale)
}

/// The drift scale of a convention: binary couplings are 4× and biases about 2× their spin
/// counterparts.
fn drift_unit(conv: Convention) -> f64 {
    match conv {
        Convention::Spin => 1.0,
        Convention::Binary => 4.0,
    }
}

/// An earlier iterate of a fit.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    /// Its iteration.
    pub(crate) iteration: usize,
    /// Its parameters.
    pub(crate) theta: Vec<f64>,
    /// Its objective.
    pub(crate) objective: f64,
}

/// Checks a finished fit (parameters `theta`, objective `objective` after `iterations`
/// iterations) for runaway parameters, taking as candidate directions the drifts from each of
/// the earlier iterates in `snapshots`.
/// `violation` measures a drift as [`recession_violation`] does.
pub(crate) fn runaway(
    conv: Convention,
    snapshots: &[Snapshot],
    theta: &[f64],
    objective: f64,
    iterations: usize,
    l2: f64,
    violation: &dyn Fn(&[f64]) -> Result<f64>,
) -> Result<Option<Runaway>> {
    if l2 > 0.0 || iterations < 2 {
        return Ok(None);
    }
    let unit = drift_unit(conv);
    let mut best: Option<Runaway> = None;
    for snap in snapshots.iter().filter(|s| s.iteration < iterations) {
        let drift_vec: Vec<f64> = theta.iter().zip(&snap.theta).map(|(a, b)| a - b).collect();
        let drift = drift_vec.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let rise = objective - snap.objective;
        if drift < MIN_DRIFT * unit || rise <= 0.0 {
            continue;
        }
        let violation = violation(&drift_vec)?;
        if violation > MAX_VIOLATION || best.as_ref().is_some_and(|b| b.violation <= violation) {
            continue;
        }
        best = Some(Runaway {
            iterations,
            since: snap.iteration,
            max_abs_theta: theta.iter().fold(0.0f64, |m, v| m.max(v.abs())),
            drift,
            rise,
            violation,
        });
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::super::testutil;
    use super::super::{exact, model::upper_index, newton, pseudo, MpleParams, StopReason};
    use super::*;
    use crate::data::Dataset;
    use crate::rng::rng_from_seed;
    use ndarray::Array2;

    #[test]
    fn an_interrupt_stops_the_lp_and_the_dense_certificate() {
        let data = separated(4, 300, Convention::Spin);
        let pl = PlData::new(&data, Convention::Spin).unwrap();
        let model = Fvbm::zeros(4, Convention::Spin).unwrap();
        let stop = Interrupt::new();
        stop.set();
        for result in [
            check_until(&pl, Some(&stop)),
            check_at(&pl, &model, Some(&stop)),
        ] {
            assert!(
                matches!(result, Err(Error::Interrupted { .. })),
                "{result:?}"
            );
        }
        // not set: the same calls decide (separated data: no MPLE)
        let idle = Interrupt::new();
        assert!(!check_until(&pl, Some(&idle)).unwrap().exists());
        assert!(!check_at(&pl, &model, Some(&idle)).unwrap().exists());
    }

    #[test]
    fn the_dense_check_refuses_what_would_not_fit_or_end() {
        assert!(check_size(20, 1000).is_ok());
        // d = 400: p = 80,200, a 103 GB Gram matrix and a 8.6e13 multiply-add factor
        let err = check_size(400, 1000).unwrap_err().to_string();
        assert!(
            err.contains("existence check") && err.contains("--algo plm"),
            "{err}"
        );
    }

    /// Data from a random model, then unit 2 overwritten by a copy of unit 0: the regression of
    /// unit 2 on unit 0 is completely separated along `m_02`.
    fn separated(d: usize, n: usize, conv: Convention) -> Dataset {
        let truth = Fvbm::random(d, 0.3, conv, &mut rng_from_seed(5)).unwrap();
        let data = exact::sample(&truth, n, &mut rng_from_seed(6)).unwrap();
        let mut v: Array2<u8> = data.into_values();
        for mut row in v.outer_iter_mut() {
            row[2] = row[0];
        }
        Dataset::binary(v).unwrap()
    }

    #[test]
    fn recession_direction_is_recognized_exactly() {
        let data = separated(4, 300, Convention::Spin);
        let pl = PlData::new(&data, Convention::Spin).unwrap();
        let mut dir = vec![0.0; 10];
        dir[upper_index(4, 0, 2)] = 1.0;
        assert!(recession_violation(&pl, &dir).unwrap() <= 0.0);
        dir[upper_index(4, 1, 3)] = 0.5;
        assert!(recession_violation(&pl, &dir).unwrap() > 0.1);
        assert_eq!(recession_violation(&pl, &[0.0; 10]).unwrap(), f64::INFINITY);
    }

    /// `P_n(θ₀ + tΔ)` for `t = 0, 1, 2, 4, …, 64` from a random `θ₀`: it never falls, and it
    /// rises from `t = 0` to `t = 1`; the parameters grow without bound along the way.
    fn assert_rises_along(pl: &PlData, direction: &[f64], seed: u64) {
        let conv = pl.convention();
        let d = pl.d();
        let theta0 = Fvbm::random(d, 0.3, conv, &mut rng_from_seed(seed))
            .unwrap()
            .theta();
        let at = |t: f64| {
            let th: Vec<f64> = theta0
                .iter()
                .zip(direction)
                .map(|(a, v)| a + t * v)
                .collect();
            pseudo::log_pl(&Fvbm::from_theta(d, &th, conv).unwrap(), pl).unwrap()
        };
        let ts = [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
        let values: Vec<f64> = ts.iter().map(|&t| at(t)).collect();
        for w in values.windows(2) {
            assert!(w[1] >= w[0] - 1e-12 * w[0].abs(), "{values:?}");
        }
        assert!(values[1] > values[0], "{values:?}");
    }

    /// A default Newton fit without the existence check.
    fn newton_fit(data: &Dataset, conv: Convention) -> super::super::FvbmFit {
        let mple = MpleParams {
            convention: conv,
            check_existence: false,
            ..MpleParams::paper()
        };
        testutil::newton(
            data,
            &newton::NewtonParams {
                mple,
                ..Default::default()
            },
        )
        .unwrap()
    }

    /// Newton from `θ = 0` to a vanishing gradient. Returns `max_a |θ_a|`, `min_q y_q / w_q`
    /// and `max_a |∂P_n/∂θ_a| / n` at the end, where `y_q = w_q |x_q − E[x_q | h_q]|` are the weights with `Aᵀy = ∇P_n`:
    /// a finite point with `∇P_n ≈ 0` and every `y_q > 0` is Stiemke's certificate that no
    /// recession direction exists (for any `Δ` with `AΔ ≥ 0`, `yᵀAΔ = ∇P_nᵀΔ ≈ 0`).
    fn newton_certificate(data: &Dataset, conv: Convention) -> (f64, f64, f64) {
        let fit = testutil::newton(
            data,
            &newton::NewtonParams {
                mple: MpleParams {
                    convention: conv,
                    tau: 0.0,
                    grad_tol: 1e-10,
                    max_iterations: 500,
                    check_existence: false,
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .unwrap();
        let pl = PlData::new(data, conv).unwrap();
        let h = fields(&fit.model, &pl);
        let rows = pl.n_distinct();
        let y_min = h
            .iter()
            .enumerate()
            .map(|(q, &hv)| (pl.column(q / rows)[q % rows] - conv.mean(hv)).abs() / conv.gap())
            .fold(f64::INFINITY, f64::min);
        let theta_max = fit.model.theta().iter().fold(0.0f64, |m, v| m.max(v.abs()));
        (theta_max, y_min, fit.record.final_gradient)
    }

    #[test]
    fn lp_finds_the_planted_separation() {
        for conv in [Convention::Spin, Convention::Binary] {
            let data = separated(5, 500, conv);
            let pl = PlData::new(&data, conv).unwrap();
            let e = check(&pl).unwrap();
            let sep = e.separation.as_ref().expect("unit 2 copies unit 0");
            assert!(recession_violation(&pl, &sep.direction).unwrap() <= 1e-12);
            assert!(sep.separated_pairs > 0 && !sep.units.is_empty());
            let max = sep.direction.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!((max - 1.0).abs() < 1e-12);
            assert_rises_along(&pl, &sep.direction, 3);
            let msg = e.message().unwrap();
            assert!(
                msg.contains("does not exist") && msg.contains("--l2"),
                "{msg}"
            );
            // Without the copy the MPLE exists, and Newton certifies it.
            let truth = Fvbm::random(5, 0.5, conv, &mut rng_from_seed(8)).unwrap();
            let ok = exact::sample(&truth, 2000, &mut rng_from_seed(9)).unwrap();
            let pl = PlData::new(&ok, conv).unwrap();
            let e = check(&pl).unwrap();
            assert!(e.exists() && e.message().is_none() && !e.certificate);
            let fit = newton_fit(&ok, conv);
            let at = check_at(&pl, &fit.model, None).unwrap();
            assert!(at.exists() && at.certificate && at.rounds == 0);
            // At the separated data's fitted point the certificate cannot hold: the LP runs.
            let sep_fit = newton_fit(&data, conv);
            let sep_pl = PlData::new(&data, conv).unwrap();
            let at = check_at(&sep_pl, &sep_fit.model, None).unwrap();
            assert!(!at.exists() && !at.certificate && at.rounds >= 1);
            let (theta_max, y_min, grad) = newton_certificate(&ok, conv);
            assert!(grad <= 1e-10);
            assert!(theta_max < 5.0 && y_min > 1e-3, "{theta_max} {y_min}");
        }
    }

    /// The brute-force twin: every nonempty set of distinct states of `d = 3` units (255
    /// data sets), in both conventions. Where the LP finds a direction, the log-PL rises
    /// along it; where it finds none, a long Newton fit ends at a finite stationary point
    /// with every Stiemke weight positive. The verdict does not depend on the convention.
    #[test]
    fn every_verdict_on_three_units_has_an_independent_certificate() {
        let d = 3;
        let (mut separated_sets, mut existing_sets, mut certified) = (0, 0, 0);
        for mask in 1u32..(1 << (1 << d)) {
            let states: Vec<u32> = (0..1u32 << d).filter(|s| mask >> s & 1 == 1).collect();
            let v = Array2::from_shape_fn((states.len(), d), |(i, j)| (states[i] >> j & 1) as u8);
            let data = Dataset::binary(v).unwrap();
            let mut verdicts = Vec::new();
            for conv in [Convention::Spin, Convention::Binary] {
                let pl = PlData::new(&data, conv).unwrap();
                let e = check(&pl).unwrap();
                match &e.separation {
                    Some(sep) => {
                        assert!(recession_violation(&pl, &sep.direction).unwrap() <= 1e-12);
                        assert_rises_along(&pl, &sep.direction, u64::from(mask));
                    }
                    None => {
                        let (theta_max, y_min, grad) = newton_certificate(&data, conv);
                        assert!(grad <= 1e-10, "states {states:?}: gradient {grad}");
                        assert!(
                            theta_max < 20.0 && y_min > 1e-6,
                            "{conv} states {states:?}: max |θ| {theta_max}, min y {y_min}"
                        );
                    }
                }
                // The fast path after a fit reaches the same verdict.
                let fit = newton_fit(&data, conv);
                let at = check_at(&pl, &fit.model, None).unwrap();
                assert_eq!(at.exists(), e.exists(), "{conv} states {states:?}");
                certified += usize::from(at.certificate);
                verdicts.push(e.exists());
            }
            assert_eq!(verdicts[0], verdicts[1], "states {states:?}");
            if verdicts[0] {
                existing_sets += 1;
            } else {
                separated_sets += 1;
            }
        }
        eprintln!(
            "d = 3: MPLE exists on {existing_sets} of 255 sets of states, {certified} of \
             {} verdicts certified without the LP",
            2 * existing_sets
        );
        assert!(existing_sets > 0 && separated_sets > 0 && certified > 0);
    }

    /// Row generation reaches the verdict of the LP on all constraints at once.
    #[test]
    fn row_generation_agrees_with_the_full_lp() {
        for (variance, seed) in [(0.05, 1u64), (1.5, 2), (0.5, 3)] {
            let truth =
                Fvbm::random(8, variance, Convention::Spin, &mut rng_from_seed(seed)).unwrap();
            let data = exact::sample(&truth, 3000, &mut rng_from_seed(seed + 10)).unwrap();
            let pl = PlData::new(&data, Convention::Spin).unwrap();
            let full = solve_lp(&pl, true, None).unwrap();
            let rowgen = solve_lp(&pl, false, None).unwrap();
            eprintln!(
                "var {variance}: {} rows, exists {}, {} rounds, {} of {} constraints",
                pl.n_distinct(),
                full.exists(),
                rowgen.rounds,
                rowgen.constraints,
                rowgen.pairs
            );
            assert_eq!(full.exists(), rowgen.exists());
            assert_eq!(full.rounds, 1);
            assert!(rowgen.constraints < rowgen.pairs);
            if let Some(sep) = &rowgen.separation {
                assert!(recession_violation(&pl, &sep.direction).unwrap() <= 1e-12);
            }
        }
    }

    #[test]
    fn runaway_is_flagged_for_separated_data_and_not_otherwise() {
        for conv in [Convention::Spin, Convention::Binary] {
            let data = separated(5, 500, conv);
            // the paper's stop: on separated data the gradient never reaches a tolerance
            let params = MpleParams {
                convention: conv,
                ..MpleParams::paper()
            };
            let bs = testutil::bslm(&data, &params).unwrap();
            let r = bs
                .record
                .runaway
                .as_ref()
                .expect("BSLM runs away on separated data");
            assert!(r.violation <= MAX_VIOLATION && r.drift > 0.0);
            // The LP decides and says so; without it the runaway is the warning.
            assert_eq!(bs.record.mple_exists(), Some(false));
            assert_eq!(bs.record.warnings.len(), 1, "{:?}", bs.record.warnings);
            assert!(bs.record.warnings[0].contains("does not exist"));
            let unchecked = MpleParams {
                check_existence: false,
                ..params.clone()
            };
            let bu = testutil::bslm(&data, &unchecked).unwrap();
            assert!(bu.record.existence.is_none() && bu.record.mple_exists() == Some(false));
            assert!(bu.record.warnings[0].contains("seems not to exist"));
            let nw = testutil::newton(
                &data,
                &newton::NewtonParams {
                    mple: params.clone(),
                    ..Default::default()
                },
            )
            .unwrap();
            assert!(nw.record.runaway.is_some(), "{conv}: {:?}", nw.record);

            // With a penalty the fit is finite and not flagged.
            let pen = MpleParams {
                l2: 1e-3,
                ..params.clone()
            };
            let bp = testutil::bslm(&data, &pen).unwrap();
            assert!(bp.record.runaway.is_none() && bp.record.existence.is_none());
            assert!(bp.record.warnings.is_empty());
            assert_eq!(bp.record.stop, StopReason::Converged);

            // The same size of problem without separation is not flagged.
            let truth = Fvbm::random(5, 0.5, conv, &mut rng_from_seed(8)).unwrap();
            let ok = exact::sample(&truth, 2000, &mut rng_from_seed(9)).unwrap();
            let fit = testutil::bslm(&ok, &params).unwrap();
            assert!(fit.record.runaway.is_none() && fit.record.mple_exists() == Some(true));
        }
    }
}
