//! MPLE by L-BFGS on matrix products: the solver for the sizes people fit (d in the
//! hundreds to thousands, n in the tens of thousands).
//!
//! The objective is the shared one ([`super::mple`]): the log-pseudo-likelihood `P_n(θ)` of
//! Eq. 2.1 (Nguyen & Wood) on `θ = (b, upper M)`, symmetric couplings, minus `n·λ/2·‖θ‖²`.
//! Each evaluation of it and its gradient is two matrix products over the distinct rows
//! ([`design`]: `H = X₁·P`, `G = X₁ᵀ·R`), `O(n d²)` multiply-adds in the `gemm` crate's
//! kernels, blocked and threaded; the library's L-BFGS ([`crate::optim::lbfgs`]) minimizes
//! `−objective / n`, so `grad_tol` is its own stopping rule (every component of the gradient
//! per sample at most `grad_tol`), `τ` stops it when an iteration gains less than `τ`, and,
//! by default, the relative-gain test stops it when the last 10 iterations together gained
//! at most `2.2e-8·|F|` ([`PlmParams::objective_tol`]: scipy L-BFGS-B's `factr·ε` per
//! iteration, over a window; the iterate is then as good as scipy's: its log-PL at least
//! scipy's final one on the d = 100 benchmark, in about 60 % of the gradient test's
//! iterations).
//! The run uses `f32` products (twice the lanes; fields to about `1e-7` relative) until it
//! stops; a fit that settled is then evaluated once in `f64`; one stopped by the gradient test
//! continues in a second L-BFGS run in `f64` from that point (usually zero or a few
//! iterations), so the reported objective, gradient and stop are `f64`'s.
//! Memory is `O(n d + d²)`: no Hessian, unlike [`super::newton`].
//!
//! Without penalty, whether the maximizer exists is decided by Stiemke's certificate solved
//! matrix-free ([`certificate`]); where it does not hold, by the separation LP when the LP is
//! small enough ([`LP_MAX_PARAMS`]), else the record says it was not decided (the drift test
//! for runaway parameters runs either way).

mod certificate;
mod design;

use super::model::{n_params, Fvbm};
use super::mple::{
    after_iteration, conclude, prepare, Algorithm, Ending, FvbmFit, MpleParams, MpleRecord, Path,
    Progress,
};
use super::separation;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::fit::{Learner, Run, StopReason};
use crate::optim::lbfgs::{minimize_with_state, LbfgsParams, LbfgsResult, LbfgsState};
use crate::potts::plm::ObjectiveWindow;
use design::{Design, Precision};
use std::cell::Cell;
use std::time::Instant;

/// Where Stiemke's certificate does not hold, the separation LP decides for models of at most
/// this many parameters (`d ≤ 44`; the LP takes minutes at `d = 40`); above, the existence is
/// left undecided.
pub const LP_MAX_PARAMS: usize = 1000;

/// Settings of the L-BFGS MPLE solver (serialized flat: the MPLE settings, then its own).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PlmParams {
    /// The settings shared with the other MPLE solvers (default: stop at first-order
    /// optimality, every gradient component per sample at most 1e-7; no gain rule).
    #[serde(flatten)]
    pub mple: MpleParams,
    /// L-BFGS correction pairs kept. Default 10.
    pub memory: usize,
    /// Also stop (converged) when the objective gained at most `objective_tol · |F|` over
    /// the last [`PlmParams::objective_window`] iterations, `F` the penalized log-PL: the
    /// relative-gain test of scipy's L-BFGS-B (`factr·ε = 2.2e-9` per iteration), summed
    /// over a window so that one slow iteration does not end the fit. 0 turns it off.
    /// Default [`DEFAULT_OBJECTIVE_TOL`].
    pub objective_tol: f64,
    /// Iterations over which [`PlmParams::objective_tol`]'s gain is measured. Default 10.
    pub objective_window: usize,
}

/// The default [`PlmParams::objective_tol`]: scipy L-BFGS-B's relative decrease per
/// iteration (`factr·ε = 1e7 · 2.2e-16`) times the default window of 10 iterations. On
/// `gen fvbm --vars 100 --samples 20000 --variance 0.01 --seed 1` it stops after 64
/// iterations instead of the gradient test's 105, its log-PL 0.02 above scipy's own stop
/// (BENCHMARKS.md, session 5).
pub const DEFAULT_OBJECTIVE_TOL: f64 = 2.2e-8;

impl Default for PlmParams {
    fn default() -> Self {
        PlmParams {
            mple: MpleParams::default(),
            memory: 10,
            objective_tol: DEFAULT_OBJECTIVE_TOL,
            objective_window: 10,
        }
    }
}

/// [`PlmParams`] checked by [`PlmParams::check`]: the L-BFGS MPLE learner.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedPlmParams(PlmParams);

impl CheckedPlmParams {
    /// The settings.
    pub fn get(&self) -> &PlmParams {
        &self.0
    }
}

impl PlmParams {
    /// Checks every setting (the error names the field at fault) and returns the learner.
    pub fn check(&self) -> Result<CheckedPlmParams> {
        if self.memory == 0 {
            return Err(Error::param("memory", "must be at least 1"));
        }
        if self.objective_window == 0 {
            return Err(Error::param("objective_window", "must be at least 1"));
        }
        super::mple::nonneg("objective_tol", self.objective_tol)?;
        self.mple.validate()?;
        Ok(CheckedPlmParams(self.clone()))
    }

    /// Bytes a fit on `rows` distinct rows of `d` units holds at its peak: the prepared data
    /// (column-major values and bits), the design, the L-BFGS vectors and the certificate's
    /// (its pair weights, 4 bytes a pair, among them).
    pub fn memory_estimate(&self, d: u64, rows: u64) -> u64 {
        let p = d.saturating_mul(d + 1) / 2;
        let vectors = 2 * self.memory as u64 + 12;
        rows.saturating_mul(d)
            .saturating_mul(13)
            .saturating_add(Design::memory_estimate(d, rows))
            .saturating_add(p.saturating_mul(8).saturating_mul(vectors))
    }

    /// Multiply-adds of one evaluation of the objective and its gradient.
    pub fn evaluation_work(d: u64, rows: u64) -> u64 {
        Design::pass_work(d, rows)
    }
}

impl Learner for CheckedPlmParams {
    type Model = Fvbm;
    type Record = MpleRecord;
    type Progress<'p> = Progress;

    /// Fits an FVBM by L-BFGS on the pseudo-likelihood (MPLE); observers see every iteration.
    ///
    /// ```
    /// use boltzkit::fit::Learner;
    /// use boltzkit::fvbm::{exact, plm, Convention, Fvbm};
    /// use boltzkit::rng::rng_from_seed;
    /// let truth = Fvbm::random(5, 0.5, Convention::Spin, &mut rng_from_seed(0))?;
    /// let data = exact::sample(&truth, 5000, &mut rng_from_seed(1))?;
    /// let fit = plm::PlmParams::default().check()?.fit(&data)?;
    /// assert!(fit.record.stop.is_converged() && fit.record.final_gradient <= 1e-4);
    /// assert_eq!(fit.record.mple_exists(), Some(true));
    /// # Ok::<(), boltzkit::Error>(())
    /// ```
    fn fit_with(&self, data: &Dataset, mut run: Run<'_, Self>) -> Result<FvbmFit> {
        let start = Instant::now();
        let params = &self.0;
        let (pl, init) = prepare(data, &params.mple)?;
        let design = Design::new(&pl);
        let interrupt = run.interrupt_flag().cloned();
        let n = pl.n_samples() as f64;
        let l2n = n * params.mple.l2;
        // The penalized objective F and −∇F / n; L-BFGS minimizes −F / n. `f32` products
        // until that run stops, then `f64` from where it stopped (the polish).
        let precision = Cell::new(Precision::Single);
        let first = Cell::new(None);
        let eval = |theta: &[f64], grad: &mut [f64]| -> Result<f64> {
            // The start is always evaluated, so an interrupt keeps the starting model.
            let poll = first.get().and(interrupt.as_ref());
            let f = design.log_pl_gradient(theta, grad, precision.get(), poll)?;
            let mut sq = 0.0;
            for (g, t) in grad.iter_mut().zip(theta) {
                sq += t * t;
                *g = -(*g - l2n * t) / n;
            }
            let f = f - 0.5 * l2n * sq;
            if first.get().is_none() {
                first.set(Some(f));
            }
            Ok(-f / n)
        };
        let lbfgs = LbfgsParams {
            memory: params.memory,
            max_iterations: params.mple.max_iterations,
            grad_tol: params.mple.grad_tol,
            ..LbfgsParams::default()
        };
        let mut path: Option<Path> = None;
        let mut window: Option<ObjectiveWindow> = None;
        let theta0 = init.theta();
        // Iterations of the f32 run, and the f64 objective where it stopped.
        let done = Cell::new(0);
        let revalued = Cell::new(None);
        let mut observe = |s: &LbfgsState<'_>| -> Result<Option<StopReason>> {
            let f = -s.f * n;
            let path = path.get_or_insert_with(|| {
                Path::new(theta0.clone(), first.get().expect("evaluated at the start"))
            });
            if let Some(v) = revalued.take() {
                path.revalue_last(v);
            }
            let iteration = done.get() + s.iteration;
            let gain = f - path.last();
            path.push(iteration, s.x.to_vec(), f);
            if let Some(why) = after_iteration(&mut run, &params.mple, iteration, f, gain)? {
                return Ok(Some(why));
            }
            // The window over −F / n (the f32 run's values and the polish's differ by about
            // 1e-11 relative, far below the tolerance).
            let window = window.get_or_insert_with(|| {
                let f0 = -first.get().expect("evaluated at the start") / n;
                ObjectiveWindow::new(params.objective_tol, params.objective_window, f0)
            });
            Ok(window.settled(s.f).then_some(StopReason::Converged))
        };
        let mut result = minimize_with_state(&eval, theta0.clone(), &lbfgs, &mut observe)?;
        if !matches!(result.stop, StopReason::Interrupted { .. }) {
            precision.set(Precision::Double);
            done.set(result.iterations);
            // A fit that settled (or hit a gain rule) ends where it is, its value in f64; one
            // stopped by the gradient test, or by what may be f32 round-off (no step found, a
            // decrease), continues in f64 until the rules hold there.
            let polish_iterations = match result.stop {
                StopReason::GradientTolerance | StopReason::NoProgress | StopReason::Decreased => {
                    lbfgs.max_iterations.saturating_sub(result.iterations)
                }
                _ => 0,
            };
            let polish = LbfgsParams {
                max_iterations: polish_iterations,
                ..lbfgs.clone()
            };
            let x = std::mem::take(&mut result.x);
            if polish.max_iterations == 0 {
                let mut g = vec![0.0; x.len()];
                result.f = eval(&x, &mut g)?;
                result.grad_max = g.iter().fold(0.0, |m, v| m.max(v.abs()));
                result.x = x;
                revalued.set(Some(-result.f * n));
            } else {
                let mut at_switch = true;
                let eval_polish = |theta: &[f64], grad: &mut [f64]| -> Result<f64> {
                    let f = eval(theta, grad)?;
                    if std::mem::take(&mut at_switch) {
                        revalued.set(Some(-f * n));
                    }
                    Ok(f)
                };
                let r = minimize_with_state(eval_polish, x, &polish, &mut observe)?;
                result = LbfgsResult {
                    iterations: result.iterations + r.iterations,
                    ..r
                };
            }
        }
        let f_end = -result.f * n;
        // Where the f64 run made no iteration, the last point's f64 value.
        let path = match (path, revalued.take()) {
            (Some(mut path), Some(v)) => {
                path.revalue_last(v);
                path
            }
            (Some(path), None) => path,
            (None, _) => Path::new(theta0, f_end),
        };
        let ending = Ending {
            algorithm: Algorithm::Plm,
            start,
            stop: result.stop,
            theta: result.x,
            objective: f_end,
            final_gradient: result.grad_max,
        };
        let existence = |model: &Fvbm| -> Result<std::result::Result<_, String>> {
            let stop = interrupt.as_ref();
            match certificate::check(&design, &model.theta(), pl.n_distinct(), stop)? {
                Ok(e) => Ok(Ok(e)),
                Err(_) if n_params(pl.d()) <= LP_MAX_PARAMS => {
                    separation::check_until(&pl, stop).map(Ok)
                }
                Err(why) => Ok(Err(format!(
                    "{why}, and the separation LP on {} parameters would take too long",
                    n_params(pl.d())
                ))),
            }
        };
        // the runaway test's recession check by one product per drift
        let violation = |dir: &[f64]| design.recession_violation(dir, None);
        conclude(
            path,
            ending,
            &pl,
            &params.mple,
            &mut run,
            &existence,
            &violation,
        )
    }
}

/// The shared MPLE data of a fit, for the tests.
#[cfg(test)]
fn pl_data(data: &Dataset, params: &MpleParams) -> super::pseudo::PlData {
    super::pseudo::PlData::new(data, params.convention).unwrap()
}

#[cfg(test)]
mod tests {
    use super::super::{exact, Convention, NewtonParams};
    use super::*;
    use crate::fit::Interrupt;
    use crate::rng::rng_from_seed;
    use ndarray::Array2;

    #[test]
    fn optimum_equals_newtons_mple() {
        for conv in [Convention::Spin, Convention::Binary] {
            let truth = Fvbm::random(6, 0.4, conv, &mut rng_from_seed(11)).unwrap();
            let data = exact::sample(&truth, 3000, &mut rng_from_seed(12)).unwrap();
            // the gradient test alone: this is about the optimum, not the stop
            let mut p = PlmParams {
                objective_tol: 0.0,
                ..PlmParams::default()
            };
            p.mple.convention = conv;
            let fit = p.check().unwrap().fit(&data).unwrap();
            let np = NewtonParams {
                mple: MpleParams {
                    convention: conv,
                    ..MpleParams::default()
                },
                ..NewtonParams::default()
            };
            let newton = np.check().unwrap().fit(&data).unwrap();
            let (a, b) = (fit.model.theta(), newton.model.theta());
            let diff = a
                .iter()
                .zip(&b)
                .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            assert!(diff < 1e-5, "{conv}: max |θ − θ_newton| = {diff}");
            let r = &fit.record;
            assert_eq!(r.algorithm, Algorithm::Plm);
            assert!(r.final_gradient <= 1e-7 && r.is_monotone(), "{conv}");
            assert!(r.final_objective() >= newton.record.final_objective() - 1e-6);
            // the matrix-free certificate decides, as the LP does
            let e = r.existence.as_ref().expect("checked");
            assert!(e.certificate && e.exists(), "{conv}");
        }
    }

    #[test]
    fn the_relative_gain_rule_stops_early_and_close_to_the_optimum() {
        let truth = Fvbm::random(8, 0.4, Convention::Spin, &mut rng_from_seed(21)).unwrap();
        let data = exact::sample(&truth, 4000, &mut rng_from_seed(22)).unwrap();
        let exact_stop = PlmParams {
            objective_tol: 0.0,
            ..PlmParams::default()
        };
        let best = exact_stop.check().unwrap().fit(&data).unwrap().record;
        let fit = PlmParams::default().check().unwrap().fit(&data).unwrap();
        let r = &fit.record;
        assert_eq!(r.stop, StopReason::Converged);
        assert!(
            r.iterations < best.iterations,
            "{} vs {}",
            r.iterations,
            best.iterations
        );
        // stopped once 10 iterations gained at most 2.2e-8·|F|: what is left is of that order
        let f = best.final_objective();
        let gap = f - r.final_objective();
        let tol = DEFAULT_OBJECTIVE_TOL * f.abs();
        assert!(
            (-1e-9 * tol..=10.0 * tol).contains(&gap),
            "gap {gap}, tol {tol}"
        );
        // the last 10 iterations gained at most that (the last value is f64's, the others
        // f32's: 1e-11 relative apart)
        let o = &r.objective;
        assert_eq!(r.precise_from, o.len() - 1);
        assert!(o[o.len() - 1] - o[o.len() - 11] <= 1.01 * tol);
        let bad = PlmParams {
            objective_window: 0,
            ..PlmParams::default()
        };
        assert!(bad
            .check()
            .unwrap_err()
            .to_string()
            .contains("objective_window"));
    }

    #[test]
    fn penalized_optimum_has_zero_penalized_gradient() {
        let truth = Fvbm::random(5, 0.4, Convention::Spin, &mut rng_from_seed(13)).unwrap();
        let data = exact::sample(&truth, 500, &mut rng_from_seed(14)).unwrap();
        // the gradient test alone: this is about the optimum, not the stop
        let mut p = PlmParams {
            objective_tol: 0.0,
            ..PlmParams::default()
        };
        p.mple.l2 = 0.05;
        let fit = p.check().unwrap().fit(&data).unwrap();
        let pl = pl_data(&data, &p.mple);
        let g = super::super::mple::penalized_gradient(&fit.model, &pl, 0.05).unwrap();
        let worst = g.iter().fold(0.0f64, |m, v| m.max(v.abs())) / 500.0;
        assert!(worst <= 1e-7, "{worst}");
        assert!(fit.record.existence.is_none());
    }

    #[test]
    fn separated_data_fail_the_certificate_and_the_lp_finds_the_direction() {
        // unit 2 a copy of unit 0: the regression of unit 2 on unit 0 is separated
        let truth = Fvbm::random(4, 0.3, Convention::Spin, &mut rng_from_seed(5)).unwrap();
        let data = exact::sample(&truth, 400, &mut rng_from_seed(6)).unwrap();
        let mut v: Array2<u8> = data.into_values();
        for mut row in v.outer_iter_mut() {
            row[2] = row[0];
        }
        let data = Dataset::binary(v).unwrap();
        let mut p = PlmParams::default();
        p.mple.max_iterations = 60;
        let fit = p.check().unwrap().fit(&data).unwrap();
        let e = fit.record.existence.as_ref().expect("checked");
        assert!(!e.certificate && !e.exists());
        assert_eq!(fit.record.mple_exists(), Some(false));
        let pl = pl_data(&data, &p.mple);
        let design = Design::new(&pl);
        let verdict = certificate::check(&design, &fit.model.theta(), pl.n_distinct(), None);
        assert!(verdict.unwrap().is_err());
    }

    #[test]
    fn an_interrupt_keeps_the_starting_model() {
        let truth = Fvbm::random(5, 0.4, Convention::Spin, &mut rng_from_seed(15)).unwrap();
        let data = exact::sample(&truth, 300, &mut rng_from_seed(16)).unwrap();
        let stop = Interrupt::new();
        stop.set();
        let fit = PlmParams::default()
            .check()
            .unwrap()
            .fit_with(&data, Run::new().interrupt(stop))
            .unwrap();
        assert!(matches!(fit.record.stop, StopReason::Interrupted { .. }));
        assert_eq!(fit.record.iterations, 0);
        assert!(fit.model.theta().iter().all(|&t| t == 0.0));
        assert!(fit.record.existence.is_none());
    }
}
