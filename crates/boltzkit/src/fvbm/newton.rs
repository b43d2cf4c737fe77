//! MPLE by damped Newton: a faster solver for the same strictly concave objective as BSLM.
//!
//! Each iteration solves `(−∇²F) Δ = ∇F` for the full parameter vector (`d(d+1)/2` unknowns;
//! `F` is the log-PL of Eq. 2.1 minus the optional L2 penalty) by a Cholesky factorization,
//! adding a multiple of the identity when `−∇²F` is not positive definite to working
//! precision, then backtracks along `Δ` (halving the step) until the Armijo condition
//! `F(θ + tΔ) ≥ F(θ) + c·t·∇Fᵀ Δ` holds. The step's fields are computed once per iteration,
//! so each trial point costs `O(n d)`. The stopping rule is BSLM's: stop when `F` gains less
//! than `τ` in an iteration.

use super::dense::{cholesky_solve, cholesky_until, refuse_dense};
use super::model::{n_params, Fvbm};
use super::mple::{
    drive, prepare, Algorithm, FvbmFit, MpleParams, MpleRecord, Progress, Solver, Step,
};
use super::pseudo::{
    fields, gradient_from_fields, hessian_memory, hessian_until, log_pl_from_fields, PlData,
};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::fit::{Interrupt, Learner, Run};
use std::time::Instant;

/// Settings of the Newton solver (serialized flat: the MPLE settings, then its own).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NewtonParams {
    /// The settings shared with the other MPLE solvers (the default `τ` is 1e-5, the paper's).
    #[serde(flatten)]
    pub mple: MpleParams,
    /// The Armijo constant `c ∈ (0, 1)` of the line search. Default 1e-4.
    pub armijo: f64,
    /// Most step halvings per iteration before giving up (`StopReason::NoProgress`).
    /// Default 50.
    pub max_backtracks: usize,
}

impl Default for NewtonParams {
    fn default() -> Self {
        NewtonParams {
            mple: MpleParams::paper(),
            armijo: 1e-4,
            max_backtracks: 50,
        }
    }
}

/// [`NewtonParams`] checked by [`NewtonParams::check`]: the damped-Newton MPLE learner.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedNewtonParams(NewtonParams);

impl CheckedNewtonParams {
    /// The settings.
    pub fn get(&self) -> &NewtonParams {
        &self.0
    }
}

/// Newton steps assumed by [`NewtonParams::check_size`]'s time estimate: fits from zero take
/// 5 to 10 on the paper's sizes.
pub const TYPICAL_STEPS: u64 = 10;

/// Multiply-adds of one Newton step on `rows` distinct rows of `d` units: the Hessian's
/// per-unit Gram sums (`rows·d³/2`) and its Cholesky factor (`p³/6`, `p = d(d+1)/2`).
pub fn step_work(d: u64, rows: u64) -> f64 {
    let (d, p) = (d as f64, n_params(d as usize) as f64);
    rows as f64 * d.powi(3) / 2.0 + p.powi(3) / 6.0
}

impl NewtonParams {
    /// Refuses up front a fit on `rows` distinct rows (at most the samples) of `d` units that
    /// would not fit in memory (the dense Hessian, [`hessian_memory`]) or not end within an
    /// hour ([`TYPICAL_STEPS`] steps of [`step_work`]), with both estimates and the solver
    /// that scales: [`Error::TooLarge`]. [`Learner::fit`] calls it before any work.
    pub fn check_size(d: usize, rows: usize) -> Result<()> {
        let (d64, rows64) = (d as u64, rows as u64);
        let step = step_work(d64, rows64);
        refuse_dense(
            &format!(
                "the Newton solver (`--algo newton`) on {d} variables ({} parameters)",
                n_params(d)
            ),
            hessian_memory(d64),
            TYPICAL_STEPS as f64 * step,
            &format!("its dense Hessian; {TYPICAL_STEPS} steps of {step:.1e}"),
            "the L-BFGS solver `--algo plm` (Python algo=\"plm\") fits this size in \
             O(n·d + d²) memory and O(n·d²) work per iteration",
        )
    }

    /// Checks every setting (the error names the field at fault) and returns the learner.
    pub fn check(&self) -> Result<CheckedNewtonParams> {
        if !(self.armijo > 0.0 && self.armijo < 1.0) {
            return Err(Error::param(
                "armijo",
                format!("must lie in (0, 1), got {}", self.armijo),
            ));
        }
        if self.max_backtracks == 0 {
            return Err(Error::param("max_backtracks", "must be at least 1"));
        }
        self.mple.validate()?;
        Ok(CheckedNewtonParams(self.clone()))
    }
}

impl Learner for CheckedNewtonParams {
    type Model = Fvbm;
    type Record = MpleRecord;
    type Progress<'p> = Progress;

    /// Fits an FVBM by damped Newton (MPLE); observers see every iteration.
    ///
    /// ```
    /// use boltzkit::fit::Learner;
    /// use boltzkit::fvbm::{exact, newton, Convention, Fvbm};
    /// use boltzkit::rng::rng_from_seed;
    /// let truth = Fvbm::random(5, 0.5, Convention::Spin, &mut rng_from_seed(0))?;
    /// let data = exact::sample(&truth, 5000, &mut rng_from_seed(1))?;
    /// let fit = newton::NewtonParams::default().check()?.fit(&data)?;
    /// assert!(fit.record.iterations < 20 && fit.record.final_gradient < 1e-6);
    /// # Ok::<(), boltzkit::Error>(())
    /// ```
    fn fit_with(&self, data: &Dataset, mut run: Run<'_, Self>) -> Result<FvbmFit> {
        let start = Instant::now();
        let params = &self.0;
        NewtonParams::check_size(data.n_vars(), data.n_samples())?;
        let (pl, init) = prepare(data, &params.mple)?;
        let mut solver = NewtonSolver::new(&pl, &init, params, run.interrupt_flag().cloned())?;
        drive(
            &mut solver,
            &pl,
            &params.mple,
            Algorithm::Newton,
            start,
            &mut run,
        )
    }
}

/// Newton decrements below this (relative to `|F|`) are taken as full steps without a line
/// search: the predicted gain is then below what `F` can resolve.
const NOISE_SLOPE: f64 = 1e-11;

/// The Newton iteration's state.
struct NewtonSolver<'a> {
    data: &'a PlData,
    params: &'a NewtonParams,
    theta: Vec<f64>,
    /// Local fields at `theta`.
    h: Vec<f64>,
    objective: f64,
    /// `n·λ`.
    l2n: f64,
    /// Polled inside the Hessian and its factorization, so Ctrl-C stops even a step of
    /// minutes within a second (the iterate stays the last accepted one).
    interrupt: Option<Interrupt>,
}

impl<'a> NewtonSolver<'a> {
    fn new(
        data: &'a PlData,
        init: &Fvbm,
        params: &'a NewtonParams,
        interrupt: Option<Interrupt>,
    ) -> Result<Self> {
        data.check_model(init)?;
        let l2n = data.n_samples() as f64 * params.mple.l2;
        let theta = init.theta();
        let h = fields(init, data);
        let objective = Self::penalized(data, &h, &theta, l2n);
        Ok(NewtonSolver {
            data,
            params,
            theta,
            h,
            objective,
            l2n,
            interrupt,
        })
    }

    fn penalized(data: &PlData, h: &[f64], theta: &[f64], l2n: f64) -> f64 {
        let sq: f64 = theta.iter().map(|t| t * t).sum();
        log_pl_from_fields(data, h) - 0.5 * l2n * sq
    }

    /// The Newton direction `(−∇²F + μI)⁻¹ ∇F`, with the smallest shift `μ ≥ 0` (from a
    /// geometric ladder) that makes the matrix positive definite.
    /// Fails with [`Error::Interrupted`] when the interrupt is set meanwhile.
    fn direction(&self, grad: &[f64]) -> Result<Vec<f64>> {
        let p = grad.len();
        let interrupted = || Error::Interrupted {
            what: "the Newton step".into(),
        };
        let interrupt = self.interrupt.as_ref();
        let mut neg = hessian_until(self.data, &self.h, interrupt).ok_or_else(interrupted)?;
        neg.iter_mut().for_each(|v| *v = -*v);
        for a in 0..p {
            neg[a * p + a] += self.l2n;
        }
        let scale = (0..p).map(|a| neg[a * p + a].abs()).fold(1e-300, f64::max);
        let mut shift = 0.0;
        for _ in 0..40 {
            let mut l = neg.clone();
            for a in 0..p {
                l[a * p + a] += shift;
            }
            if cholesky_until(&mut l, p, interrupt)
                .ok_or_else(interrupted)?
                .is_ok()
            {
                let mut dir = grad.to_vec();
                cholesky_solve(&l, p, &mut dir);
                return Ok(dir);
            }
            shift = if shift == 0.0 {
                1e-12 * scale
            } else {
                shift * 10.0
            };
        }
        Err(Error::Numerical {
            context: "Newton step".into(),
            detail: "the Hessian could not be made positive definite".into(),
        })
    }
}

impl Solver for NewtonSolver<'_> {
    fn objective(&self) -> f64 {
        self.objective
    }

    fn step(&mut self) -> Result<Step> {
        let d = self.data.d();
        let mut grad = gradient_from_fields(self.data, &self.h);
        for (g, t) in grad.iter_mut().zip(&self.theta) {
            *g -= self.l2n * t;
        }
        let dir = self.direction(&grad)?;
        let slope: f64 = grad.iter().zip(&dir).map(|(a, b)| a * b).sum();
        if slope.is_nan() || slope <= 0.0 {
            return Ok(Step::Stuck);
        }
        // Fields of the step: h(θ + tΔ) = h(θ) + t·h_Δ (h is linear in θ).
        let step_model = Fvbm::from_theta(d, &dir, self.data.convention())?;
        let dh = fields(&step_model, self.data);
        let mut trial_h = vec![0.0; self.h.len()];
        let mut trial_theta = vec![0.0; n_params(d)];
        // Within round-off of the optimum (Newton decrement ∇FᵀΔ tiny), the objective cannot
        // resolve the Armijo test: take the full step, whose quadratic convergence still
        // shrinks the gradient.
        let resolvable = slope > NOISE_SLOPE * self.objective.abs().max(1.0);
        let mut t = 1.0;
        for _ in 0..self.params.max_backtracks {
            for ((th, h), dv) in trial_h.iter_mut().zip(&self.h).zip(&dh) {
                *th = h + t * dv;
            }
            for ((tt, th), dv) in trial_theta.iter_mut().zip(&self.theta).zip(&dir) {
                *tt = th + t * dv;
            }
            let f = Self::penalized(self.data, &trial_h, &trial_theta, self.l2n);
            if !resolvable || f >= self.objective + self.params.armijo * t * slope {
                self.theta.copy_from_slice(&trial_theta);
                self.h = trial_h;
                self.objective = f;
                return Ok(Step::Moved);
            }
            t *= 0.5;
        }
        Ok(Step::Stuck)
    }

    fn theta(&self) -> Vec<f64> {
        self.theta.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil;
    use super::super::{exact, ga, Convention, StopReason};
    use super::*;
    use crate::fit::Count;
    use crate::rng::rng_from_seed;

    #[test]
    fn sizes_that_would_not_fit_or_end_are_refused_before_any_work() {
        assert!(NewtonParams::check_size(30, 20_000).is_ok());
        // d = 200: 10 factors of a 20,100 × 20,100 Hessian, 1.4e13 multiply-adds
        let err = NewtonParams::check_size(200, 20).unwrap_err();
        assert!(matches!(err, Error::TooLarge { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("hours") && text.contains("--algo plm"),
            "{text}"
        );
        // the learner refuses before reading the data's fields
        let data = crate::data::Dataset::binary(ndarray::Array2::<u8>::zeros((3, 200))).unwrap();
        let fit = NewtonParams::default().check().unwrap().fit(&data);
        assert!(matches!(fit, Err(Error::TooLarge { .. })));
    }

    /// An interrupt set before the fit stops it inside the first step (the Hessian polls it):
    /// the starting model is kept, the stop says interrupted after 0 iterations, and no
    /// existence check runs.
    #[test]
    fn interrupt_inside_the_step_keeps_the_last_iterate() {
        let truth = Fvbm::random(6, 0.5, Convention::Spin, &mut rng_from_seed(5)).unwrap();
        let data = exact::sample(&truth, 2000, &mut rng_from_seed(6)).unwrap();
        let flag = Interrupt::new();
        flag.set();
        let fit = NewtonParams::default()
            .check()
            .unwrap()
            .fit_with(&data, Run::new().interrupt(flag))
            .unwrap();
        assert_eq!(
            fit.record.stop,
            StopReason::Interrupted {
                after: Count::iterations(0)
            }
        );
        assert_eq!(fit.record.iterations, 0);
        assert!(fit.model.theta().iter().all(|&t| t == 0.0));
        assert!(fit.record.existence.is_none());
        // The factorization polls too.
        let mut a = vec![4.0, 1.0, 1.0, 3.0];
        let stop = Interrupt::new();
        stop.set();
        assert!(cholesky_until(&mut a, 2, Some(&stop)).is_none());
        assert_eq!(cholesky_until(&mut a, 2, None), Some(Ok(())));
    }

    /// BSLM, GA (μ = 1 and μ = 0.5) and Newton reach the same maximizer to 1e-6 on a seeded
    /// simulated problem (the paper's design, d = 5) whose MPLE exists: Newton finds a finite
    /// point where the gradient vanishes, which for a strictly concave function is the unique
    /// maximizer. The same in the binary convention, and with a penalty.
    #[test]
    fn solvers_agree_on_the_maximizer() {
        for (conv, l2) in [
            (Convention::Spin, 0.0),
            (Convention::Binary, 0.0),
            (Convention::Spin, 0.01),
        ] {
            let truth = Fvbm::random(5, 0.5, Convention::Spin, &mut rng_from_seed(31))
                .unwrap()
                .to_convention(conv);
            let data = exact::sample(&truth, 4000, &mut rng_from_seed(32)).unwrap();
            let tight = MpleParams {
                convention: conv,
                tau: 0.0,
                grad_tol: 1e-10,
                l2,
                max_iterations: 50_000,
                init: Some(Fvbm::random(5, 0.5, conv, &mut rng_from_seed(33)).unwrap()),
                check_existence: true,
            };
            let nw = testutil::newton(
                &data,
                &NewtonParams {
                    mple: tight.clone(),
                    ..Default::default()
                },
            )
            .unwrap();
            let bs = testutil::bslm(&data, &tight).unwrap();
            let ga1 = testutil::ga(
                &data,
                &ga::GaParams {
                    step: 1.0,
                    mple: tight.clone(),
                },
            )
            .unwrap();
            let ga_half = testutil::ga(
                &data,
                &ga::GaParams {
                    step: 0.5,
                    mple: tight,
                },
            )
            .unwrap();
            assert!(
                nw.record.iterations < 30,
                "{conv} {l2} {:?} {:?} {:?}",
                nw.record.iterations,
                nw.record.final_gradient,
                &nw.record.objective[..10]
            );
            assert!(bs.record.iterations > nw.record.iterations);
            for other in [&nw, &bs, &ga1, &ga_half] {
                eprintln!(
                    "{conv} {l2}: {:?} iters {} grad {:e} obj {}",
                    other.record.stop,
                    other.record.iterations,
                    other.record.final_gradient,
                    other.record.final_objective()
                );
            }
            for other in [&bs, &ga1, &ga_half] {
                assert_eq!(other.record.stop, StopReason::GradientTolerance);
                for (a, b) in nw.model.theta().iter().zip(other.model.theta()) {
                    assert!((a - b).abs() < 1e-6, "{conv} λ={l2}: {a} vs {b}");
                }
            }
            // The maximizer exists: a finite stationary point.
            assert!(nw.record.final_gradient <= 1e-10);
            assert!(*nw.record.max_abs_theta.last().unwrap() < 5.0);
            assert!(nw.record.is_monotone());
            assert!(nw.record.runaway.is_none() && bs.record.runaway.is_none());
        }
    }

    /// With the default τ = 1e-5, Newton stops near the optimum in a handful of steps.
    #[test]
    fn default_stopping_rule() {
        let truth = Fvbm::random(8, 0.5, Convention::Spin, &mut rng_from_seed(2)).unwrap();
        let data = exact::sample(&truth, 3000, &mut rng_from_seed(3)).unwrap();
        let nw = testutil::newton(&data, &NewtonParams::default()).unwrap();
        assert_eq!(nw.record.stop, StopReason::Converged);
        assert!(nw.record.iterations <= 12, "{}", nw.record.iterations);
        assert!(nw.record.final_gradient < 1e-5);
        let bad = NewtonParams {
            armijo: 1.5,
            ..Default::default()
        };
        assert!(testutil::newton(&data, &bad)
            .unwrap_err()
            .to_string()
            .contains("armijo"));
    }
}
