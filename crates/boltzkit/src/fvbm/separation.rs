//! When the MPLE does not exist: detection of runaway parameters during a fit.
//!
//! `P_n` is strictly concave but need not attain its supremum: if some direction `Δ ≠ 0`
//! never lowers any conditional log-likelihood — `(x_ij − x̄)·Δh_ij ≥ 0` for every sample `i`
//! and unit `j`, with `Δh_ij` the change of the local field along `Δ` and `x̄` the midpoint of
//! the two unit values — then the `d` conditional logistic regressions are jointly
//! (quasi-)separated, `P_n(θ + tΔ)` never decreases in `t`, and every solver drifts to
//! infinity while the log-PL keeps rising. Such a `Δ` is a *recession direction*; checking a
//! candidate is exact ([`recession_violation`]).
//!
//! During a fit the drift itself is the candidate: the change of `θ` over the second half of
//! the run. A fit is flagged ([`Runaway`]) when, without penalty, that drift is not small,
//! the objective rose over the same span, and the drift is a recession direction up to a small
//! relative tolerance. An L2 penalty (`MpleParams::l2 > 0`) makes the objective strongly
//! concave and coercive, so its maximizer always exists.

use super::convention::Convention;
use super::model::Fvbm;
use super::mple::{Solver, Step};
use super::newton::{NewtonParams, NewtonSolver};
use super::pseudo::{fields, PlData};
use crate::error::Result;

/// Smallest drift (max-norm since an earlier iterate, in spin units) that counts as
/// running away.
const MIN_DRIFT: f64 = 0.05;
/// Largest relative violation of the recession condition tolerated for the drift.
const MAX_VIOLATION: f64 = 0.02;

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
    /// True when found by the Newton [`probe`] after the fit (the iterations and drift are
    /// then the probe's), false when found on the fit's own path.
    pub probe: bool,
}

impl Runaway {
    /// One plain sentence for the user.
    pub fn message(&self) -> String {
        format!(
            "the maximum pseudo-likelihood estimate does not exist for these data: the \
             conditional regressions are (quasi-)separated, so the parameters grow without bound \
             while the log-pseudo-likelihood keeps rising (they moved by {:.3} and the \
             log-PL rose by {:.3e} over the last {} {}, max |θ| = {:.3}); the fitted \
             values are arbitrary along that direction — set an L2 penalty (l2 > 0) to get a \
             finite estimate",
            self.drift,
            self.rise,
            self.iterations - self.since,
            if self.probe {
                "Newton step(s) after the fit"
            } else {
                "iterations"
            },
            self.max_abs_theta
        )
    }
}

/// How far `direction` (in the layout of `θ`) is from a recession direction of `P_n` on
/// `data`: `max_{i,j} −(x_ij − x̄)·Δh_ij / max_{i,j} |Δh_ij|` over the distinct rows. A value
/// `≤ 0` means `P_n` never decreases along the direction (exactly); `+∞` is returned for a
/// direction that moves no field at all.
pub fn recession_violation(data: &PlData, direction: &[f64]) -> Result<f64> {
    let conv = data.convention();
    let model = Fvbm::from_theta(data.d(), direction, conv)?;
    let dh = fields(&model, data);
    let mid = 0.5 * (conv.value(0) + conv.value(1));
    let rows = data.n_distinct();
    let scale = dh.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if scale == 0.0 {
        return Ok(f64::INFINITY);
    }
    let mut worst = f64::NEG_INFINITY;
    for j in 0..data.d() {
        for (x, v) in data.column(j).iter().zip(&dh[j * rows..(j + 1) * rows]) {
            worst = worst.max(-(x - mid) * v);
        }
    }
    Ok(worst / scale)
}

/// Most Newton steps of the existence probe ([`probe`]).
const PROBE_STEPS: usize = 40;
/// Largest relative violation of the recession condition for a Newton step of the probe.
const PROBE_VIOLATION: f64 = 1e-6;
/// The probe stops, finding a finite maximizer, when `max |∂P_n/∂θ| / n` falls below this.
const PROBE_GRADIENT: f64 = 1e-9;

/// Probes for runaway parameters with Newton steps from `start` (unpenalized).
///
/// On separated data Newton's steps soon run along a recession direction, growing the
/// parameters linearly while the log-PL creeps up; a step that is not small and violates the
/// recession condition by at most 1e-6 (relative) is reported. Where the maximizer exists
/// Newton converges quadratically from a nearby start, and the probe returns `None` once the
/// gradient vanishes (or after 40 steps).
pub fn probe(data: &PlData, start: &Fvbm) -> Result<Option<Runaway>> {
    let params = NewtonParams::default();
    let mut solver = NewtonSolver::new(data, start, &params)?;
    let n = data.n_samples() as f64;
    let unit = drift_unit(data.convention());
    for step in 1..=PROBE_STEPS {
        if solver.gradient_max() / n <= PROBE_GRADIENT {
            return Ok(None);
        }
        let (before, f_before) = (solver.theta(), solver.objective());
        if let Step::Stuck = solver.step()? {
            return Ok(None);
        }
        let theta = solver.theta();
        let drift_vec: Vec<f64> = theta.iter().zip(&before).map(|(a, b)| a - b).collect();
        let drift = drift_vec.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let rise = solver.objective() - f_before;
        if drift < MIN_DRIFT * unit || rise <= 0.0 {
            continue;
        }
        let violation = recession_violation(data, &drift_vec)?;
        if violation <= PROBE_VIOLATION {
            return Ok(Some(Runaway {
                iterations: step,
                since: step - 1,
                max_abs_theta: theta.iter().fold(0.0f64, |m, v| m.max(v.abs())),
                drift,
                rise,
                violation,
                probe: true,
            }));
        }
    }
    Ok(None)
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
pub(crate) fn runaway(
    data: &PlData,
    snapshots: &[Snapshot],
    theta: &[f64],
    objective: f64,
    iterations: usize,
    l2: f64,
) -> Result<Option<Runaway>> {
    if l2 > 0.0 || iterations < 2 {
        return Ok(None);
    }
    let unit = drift_unit(data.convention());
    let mut best: Option<Runaway> = None;
    for snap in snapshots.iter().filter(|s| s.iteration < iterations) {
        let drift_vec: Vec<f64> = theta.iter().zip(&snap.theta).map(|(a, b)| a - b).collect();
        let drift = drift_vec.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let rise = objective - snap.objective;
        if drift < MIN_DRIFT * unit || rise <= 0.0 {
            continue;
        }
        let violation = recession_violation(data, &drift_vec)?;
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
            probe: false,
        });
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::super::{bslm, exact, model::upper_index, newton, MpleParams, StopReason};
    use super::*;
    use crate::data::Dataset;
    use crate::rng::rng_from_seed;
    use ndarray::Array2;

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

    #[test]
    fn newton_probe_decides_existence() {
        for conv in [Convention::Spin, Convention::Binary] {
            let data = separated(5, 500, conv);
            let pl = PlData::new(&data, conv).unwrap();
            let zero = Fvbm::zeros(5, conv).unwrap();
            let r = probe(&pl, &zero).unwrap().expect("separated data run away");
            assert!(r.probe && r.violation <= PROBE_VIOLATION && r.rise > 0.0);
            assert!(r.message().contains("Newton step"));
            let truth = Fvbm::random(5, 0.5, conv, &mut rng_from_seed(8)).unwrap();
            let ok = exact::sample(&truth, 2000, &mut rng_from_seed(9)).unwrap();
            let pl = PlData::new(&ok, conv).unwrap();
            assert!(probe(&pl, &zero).unwrap().is_none());
        }
    }

    #[test]
    fn runaway_is_flagged_for_separated_data_and_not_otherwise() {
        for conv in [Convention::Spin, Convention::Binary] {
            let data = separated(5, 500, conv);
            let params = MpleParams {
                convention: conv,
                ..Default::default()
            };
            let bs = bslm::fit(&data, &params).unwrap();
            let r = bs
                .record
                .runaway
                .as_ref()
                .expect("BSLM runs away on separated data");
            assert!(r.violation <= MAX_VIOLATION && r.drift > 0.0);
            assert!(
                bs.record.warnings[0].contains("does not exist"),
                "{:?}",
                bs.record.warnings
            );
            let nw = newton::fit(
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
            let bp = bslm::fit(&data, &pen).unwrap();
            assert!(bp.record.runaway.is_none());
            assert_eq!(bp.record.stop, StopReason::Converged);

            // The same size of problem without separation is not flagged.
            let truth = Fvbm::random(5, 0.5, conv, &mut rng_from_seed(8)).unwrap();
            let ok = exact::sample(&truth, 2000, &mut rng_from_seed(9)).unwrap();
            assert!(bslm::fit(&ok, &params).unwrap().record.runaway.is_none());
        }
    }
}
