//! A small L-BFGS minimizer (Nocedal & Wright, Algorithm 7.4, two-loop recursion) with a
//! weak-Wolfe line search by bracketing and bisection (Lewis & Overton), for smooth problems of
//! a few hundred unknowns: exact maximum likelihood of FVBMs ([`crate::fvbm::mle`]), the
//! Frank-Wolfe linear subproblem of infinite RBMs ([`crate::rbm::frank_wolfe`], Eq. 9) and the
//! logistic-regression readout ([`crate::classify`]).

use crate::error::{Error, Result};
use crate::fit::{Count, StopReason};

/// Settings of [`minimize`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LbfgsParams {
    /// Number of correction pairs kept. Default 10.
    pub memory: usize,
    /// Most iterations. Default 1,000.
    pub max_iterations: usize,
    /// Stop when `max_a |∂f/∂x_a| ≤ grad_tol`. Default 1e-8.
    pub grad_tol: f64,
    /// Stop when `‖∇f‖₂ ≤ grad_tol_relative · max(1, ‖x‖₂)` (liblbfgs' and so plmc's test);
    /// 0 turns the test off. Default 0.
    pub grad_tol_relative: f64,
    /// Stop when an iteration lowers `f` by at most `f_tol·max(|f|, 1)`; 0 turns the test
    /// off. Default 0.
    pub f_tol: f64,
    /// Sufficient-decrease constant `c₁` of the Wolfe conditions. Default 1e-4.
    pub c1: f64,
    /// Curvature constant `c₂ ∈ (c₁, 1)` of the Wolfe conditions. Default 0.9.
    pub c2: f64,
    /// Most function evaluations per line search. Default 60.
    pub max_line_search: usize,
    /// Keep the correction pairs in `f32` (half their memory, for problems of millions of
    /// unknowns; the iterate, gradient and every dot product stay `f64`). Default false.
    pub f32_pairs: bool,
}

impl Default for LbfgsParams {
    fn default() -> Self {
        LbfgsParams {
            memory: 10,
            max_iterations: 1000,
            grad_tol: 1e-8,
            grad_tol_relative: 0.0,
            f_tol: 0.0,
            c1: 1e-4,
            c2: 0.9,
            max_line_search: 60,
            f32_pairs: false,
        }
    }
}

impl LbfgsParams {
    /// Checks every setting; the error names the field at fault.
    pub fn check(&self) -> Result<()> {
        if self.memory == 0 {
            return Err(Error::param("memory", "must be at least 1"));
        }
        if self.max_iterations == 0 {
            return Err(Error::param("max_iterations", "must be at least 1"));
        }
        if self.max_line_search == 0 {
            return Err(Error::param("max_line_search", "must be at least 1"));
        }
        for (field, v) in [
            ("grad_tol", self.grad_tol),
            ("grad_tol_relative", self.grad_tol_relative),
            ("f_tol", self.f_tol),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::param(
                    field,
                    format!("must be a finite number ≥ 0, got {v}"),
                ));
            }
        }
        if !(self.c1 > 0.0 && self.c1 < self.c2 && self.c2 < 1.0) {
            return Err(Error::param(
                "c1/c2",
                format!(
                    "need 0 < c1 < c2 < 1, got c1 = {}, c2 = {}",
                    self.c1, self.c2
                ),
            ));
        }
        Ok(())
    }
}

/// Why [`minimize`] stopped: [`StopReason::GradientTolerance`],
/// [`StopReason::FunctionTolerance`], [`StopReason::NoProgress`] (the line search found no
/// acceptable step) or [`StopReason::MaxIterations`].
pub type LbfgsStop = StopReason;

/// The result of [`minimize`].
#[derive(Debug, Clone)]
pub struct LbfgsResult {
    /// The final point.
    pub x: Vec<f64>,
    /// `f` there.
    pub f: f64,
    /// `max_a |∂f/∂x_a|` there.
    pub grad_max: f64,
    /// Iterations done.
    pub iterations: usize,
    /// Function (and gradient) evaluations.
    pub evaluations: usize,
    /// `f` at the start and after every iteration.
    pub trace: Vec<f64>,
    /// Why it stopped.
    pub stop: LbfgsStop,
}

/// Relative changes of `f` below this are taken as round-off.
const ROUND_OFF: f64 = 1e-13;

/// How correction pairs are stored: `f64` as is, or rounded to `f32`.
trait PairValue: Copy + Default {
    fn get(self) -> f64;
    fn put(v: f64) -> Self;
}

impl PairValue for f64 {
    #[inline(always)]
    fn get(self) -> f64 {
        self
    }
    #[inline(always)]
    fn put(v: f64) -> Self {
        v
    }
}

impl PairValue for f32 {
    #[inline(always)]
    fn get(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn put(v: f64) -> Self {
        v as f32
    }
}

/// `Σ a_i b_i` of a stored pair vector and an `f64` vector (for `f64` pairs, [`dot`]'s bits).
fn dot_pair<T: PairValue>(a: &[T], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.get() * y).sum()
}

/// `Σ a_i b_i` of two stored pair vectors.
fn dot_pairs<T: PairValue>(a: &[T], b: &[T]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.get() * y.get()).sum()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// Minimizes `f` from `x0`. `eval(x, grad)` returns `f(x)` and writes `∇f(x)` into `grad`;
/// a non-finite value or an error from `eval` ends the run with that error.
///
/// ```
/// use boltzkit::optim::lbfgs::{minimize, LbfgsParams};
/// // f(x) = (x₀ − 1)² + 10 (x₁ + 2)²
/// let r = minimize(
///     |x, g| {
///         g[0] = 2.0 * (x[0] - 1.0);
///         g[1] = 20.0 * (x[1] + 2.0);
///         Ok((x[0] - 1.0).powi(2) + 10.0 * (x[1] + 2.0).powi(2))
///     },
///     vec![0.0, 0.0],
///     &LbfgsParams::default(),
/// )?;
/// assert!((r.x[0] - 1.0).abs() < 1e-8 && (r.x[1] + 2.0).abs() < 1e-8);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn minimize(
    eval: impl FnMut(&[f64], &mut [f64]) -> Result<f64>,
    x0: Vec<f64>,
    params: &LbfgsParams,
) -> Result<LbfgsResult> {
    minimize_observed(eval, x0, params, &mut |_, _| Ok(None))
}

/// [`minimize`] calling `observe(iteration, f)` after every accepted iteration; a returned
/// reason ends the run there (an observer's stop or an interrupt).
pub fn minimize_observed(
    eval: impl FnMut(&[f64], &mut [f64]) -> Result<f64>,
    x0: Vec<f64>,
    params: &LbfgsParams,
    observe: &mut dyn FnMut(usize, f64) -> Result<Option<StopReason>>,
) -> Result<LbfgsResult> {
    minimize_with_state(eval, x0, params, &mut |s: &LbfgsState<'_>| {
        observe(s.iteration, s.f)
    })
}

/// Where a run of [`minimize_with_state`] stands after an accepted iteration.
#[derive(Debug)]
pub struct LbfgsState<'a> {
    /// Iterations done (1-based).
    pub iteration: usize,
    /// Function evaluations so far.
    pub evaluations: usize,
    /// `f(x)`.
    pub f: f64,
    /// The iterate.
    pub x: &'a [f64],
    /// `∇f(x)`.
    pub g: &'a [f64],
}

/// [`minimize_observed`] with the whole state shown to `observe` (the iterate and its
/// gradient, for progress reports). An [`Error::Interrupted`] returned by `eval` (a long
/// evaluation that polls an interrupt flag) ends the run with the last accepted iterate and
/// [`StopReason::Interrupted`] instead of failing.
///
/// Buffers are allocated once: the correction pairs' vectors are reused as they age out, so
/// the memory is `(2·memory + 6)` vectors of the problem's size (the pairs' half as much with
/// [`LbfgsParams::f32_pairs`]).
pub fn minimize_with_state(
    eval: impl FnMut(&[f64], &mut [f64]) -> Result<f64>,
    x0: Vec<f64>,
    params: &LbfgsParams,
    observe: &mut dyn FnMut(&LbfgsState<'_>) -> Result<Option<StopReason>>,
) -> Result<LbfgsResult> {
    if params.f32_pairs {
        run::<f32>(eval, x0, params, observe)
    } else {
        run::<f64>(eval, x0, params, observe)
    }
}

fn run<T: PairValue>(
    mut eval: impl FnMut(&[f64], &mut [f64]) -> Result<f64>,
    x0: Vec<f64>,
    params: &LbfgsParams,
    observe: &mut dyn FnMut(&LbfgsState<'_>) -> Result<Option<StopReason>>,
) -> Result<LbfgsResult> {
    params.check()?;
    let p = x0.len();
    let mut x = x0;
    let mut g = vec![0.0; p];
    let mut evaluations = 1;
    let mut f = checked(eval(&x, &mut g)?, 0)?;
    let mut trace = vec![f];
    // Correction pairs (s, y, 1/yᵀs), oldest first.
    let mut pairs: std::collections::VecDeque<(Vec<T>, Vec<T>, f64)> =
        std::collections::VecDeque::with_capacity(params.memory);
    let mut alpha = vec![0.0; params.memory];
    let mut stop = StopReason::MaxIterations;
    let mut iterations = 0;
    let mut x_new = vec![0.0; p];
    let mut g_new = vec![0.0; p];
    let mut dir = vec![0.0; p];
    // Pair buffers no longer in use, reused before any new allocation.
    let mut spare: Vec<(Vec<T>, Vec<T>)> = Vec::new();
    for it in 1..=params.max_iterations {
        if converged_gradient(&x, &g, params) {
            stop = StopReason::GradientTolerance;
            break;
        }
        // Two-loop recursion: dir = −H g.
        dir.copy_from_slice(&g);
        for (i, (s, y, rho)) in pairs.iter().enumerate().rev() {
            alpha[i] = rho * dot_pair(s, &dir);
            dir.iter_mut()
                .zip(y)
                .for_each(|(qv, yv)| *qv -= alpha[i] * yv.get());
        }
        let gamma = pairs
            .back()
            .map_or(1.0 / max_abs(&g).max(1.0), |(s, y, _)| {
                dot_pairs(s, y) / dot_pairs(y, y)
            });
        dir.iter_mut().for_each(|v| *v *= gamma);
        for (i, (s, y, rho)) in pairs.iter().enumerate() {
            let beta = rho * dot_pair(y, &dir);
            dir.iter_mut()
                .zip(s)
                .for_each(|(qv, sv)| *qv += (alpha[i] - beta) * sv.get());
        }
        dir.iter_mut().for_each(|v| *v = -*v);
        let mut slope = dot(&g, &dir);
        if slope.is_nan() || slope >= 0.0 {
            // Not a descent direction (round-off): restart from steepest descent.
            spare.extend(pairs.drain(..).map(|(s, y, _)| (s, y)));
            dir.iter_mut().zip(&g).for_each(|(d, gv)| *d = -gv);
            slope = dot(&g, &dir);
        }
        // Weak-Wolfe line search by bracketing and bisection. The sufficient-decrease test
        // tolerates round-off in `f`, so near the minimum, where `f` can no longer resolve
        // the predicted decrease, the curvature condition (on gradients) still drives it.
        let noise = ROUND_OFF * f.abs().max(1.0);
        let (mut lo, mut hi, mut t) = (0.0f64, f64::INFINITY, 1.0f64);
        let mut accepted = None;
        let mut interrupted = false;
        for _ in 0..params.max_line_search {
            for ((xn, xv), dv) in x_new.iter_mut().zip(&x).zip(&dir) {
                *xn = xv + t * dv;
            }
            evaluations += 1;
            let ft = match eval(&x_new, &mut g_new) {
                Err(Error::Interrupted { .. }) => {
                    interrupted = true;
                    break;
                }
                other => other?,
            };
            if !ft.is_finite() || ft > f + params.c1 * t * slope + noise {
                hi = t;
            } else if dot(&g_new, &dir) < params.c2 * slope {
                lo = t;
            } else {
                accepted = Some(ft);
                break;
            }
            t = if hi.is_finite() {
                0.5 * (lo + hi)
            } else {
                2.0 * lo
            };
        }
        if interrupted {
            stop = StopReason::Interrupted {
                after: Count::iterations(iterations),
            };
            break;
        }
        let Some(f_new) = accepted else {
            stop = StopReason::NoProgress;
            break;
        };
        iterations = it;
        // sᵀy first, so that a pair is only made (and the oldest only dropped) when kept.
        let sy: f64 = x_new
            .iter()
            .zip(&x)
            .zip(g_new.iter().zip(&g))
            .map(|((a, b), (c, d))| (a - b) * (c - d))
            .sum();
        if sy > 1e-300 {
            if pairs.len() == params.memory {
                if let Some((s, y, _)) = pairs.pop_front() {
                    spare.push((s, y));
                }
            }
            let (mut s, mut y) = spare
                .pop()
                .unwrap_or_else(|| (vec![T::default(); p], vec![T::default(); p]));
            s.iter_mut()
                .zip(x_new.iter().zip(&x))
                .for_each(|(sv, (a, b))| *sv = T::put(a - b));
            y.iter_mut()
                .zip(g_new.iter().zip(&g))
                .for_each(|(yv, (a, b))| *yv = T::put(a - b));
            pairs.push_back((s, y, 1.0 / sy));
        }
        let decrease = f - f_new;
        x.copy_from_slice(&x_new);
        g.copy_from_slice(&g_new);
        f = f_new;
        trace.push(f);
        let state = LbfgsState {
            iteration: it,
            evaluations,
            f,
            x: &x,
            g: &g,
        };
        if let Some(why) = observe(&state)? {
            stop = why;
            break;
        }
        if converged_gradient(&x, &g, params) {
            stop = StopReason::GradientTolerance;
            break;
        }
        if params.f_tol > 0.0 && decrease <= params.f_tol * f.abs().max(1.0) {
            stop = StopReason::FunctionTolerance;
            break;
        }
    }
    Ok(LbfgsResult {
        grad_max: max_abs(&g),
        x,
        f,
        iterations,
        evaluations,
        trace,
        stop,
    })
}

/// The gradient tests: `max |g| ≤ grad_tol`, or (when on) `‖g‖₂ ≤ grad_tol_relative ·
/// max(1, ‖x‖₂)`.
fn converged_gradient(x: &[f64], g: &[f64], params: &LbfgsParams) -> bool {
    max_abs(g) <= params.grad_tol
        || (params.grad_tol_relative > 0.0
            && dot(g, g).sqrt() <= params.grad_tol_relative * dot(x, x).sqrt().max(1.0))
}

fn checked(f: f64, iteration: usize) -> Result<f64> {
    if f.is_finite() {
        Ok(f)
    } else {
        Err(Error::Numerical {
            context: format!("L-BFGS at iteration {iteration}"),
            detail: format!("the objective is {f} at the starting point"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The n-dimensional Rosenbrock function and its gradient.
    fn rosenbrock(x: &[f64], g: &mut [f64]) -> Result<f64> {
        let n = x.len();
        let mut f = 0.0;
        g.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..n - 1 {
            let a = x[i + 1] - x[i] * x[i];
            let b = 1.0 - x[i];
            f += 100.0 * a * a + b * b;
            g[i] += -400.0 * x[i] * a - 2.0 * b;
            g[i + 1] += 200.0 * a;
        }
        Ok(f)
    }

    #[test]
    fn minimizes_rosenbrock() {
        for n in [2usize, 10] {
            let x0: Vec<f64> = (0..n)
                .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
                .collect();
            let r = minimize(rosenbrock, x0, &LbfgsParams::default()).unwrap();
            assert_eq!(r.stop, StopReason::GradientTolerance, "{r:?}");
            for v in &r.x {
                assert!((v - 1.0).abs() < 1e-6, "{:?}", r.x);
            }
            assert!(
                r.trace.windows(2).all(|w| w[1] <= w[0] + 1e-13),
                "monotone decrease up to round-off"
            );
            assert!(r.iterations < 200);
        }
    }

    #[test]
    fn f32_pairs_reach_the_same_minimum() {
        let x0: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
            .collect();
        let params = LbfgsParams {
            f32_pairs: true,
            grad_tol: 1e-7,
            ..Default::default()
        };
        let r = minimize(rosenbrock, x0, &params).unwrap();
        assert_eq!(r.stop, StopReason::GradientTolerance, "{r:?}");
        assert!(r.x.iter().all(|v| (v - 1.0).abs() < 1e-5), "{:?}", r.x);
    }

    #[test]
    fn quadratic_with_known_minimizer_and_settings() {
        // f(x) = ½ Σ a_i (x_i − i)², minimizer x_i = i.
        let a: Vec<f64> = (0..20).map(|i| 1.0 + i as f64).collect();
        let r = minimize(
            |x, g| {
                let mut f = 0.0;
                for i in 0..x.len() {
                    let e = x[i] - i as f64;
                    f += 0.5 * a[i] * e * e;
                    g[i] = a[i] * e;
                }
                Ok(f)
            },
            vec![0.0; 20],
            &LbfgsParams {
                grad_tol: 1e-10,
                ..Default::default()
            },
        )
        .unwrap();
        for (i, v) in r.x.iter().enumerate() {
            assert!((v - i as f64).abs() < 1e-9);
        }
        let bad = LbfgsParams {
            c2: 1e-5,
            ..Default::default()
        };
        assert!(minimize(rosenbrock, vec![0.0; 2], &bad)
            .unwrap_err()
            .to_string()
            .contains("c1/c2"));
        let e = minimize(|_, _| Ok(f64::NAN), vec![0.0], &LbfgsParams::default());
        assert!(e.is_err());
    }
}
