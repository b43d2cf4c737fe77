//! Whether the MPLE exists, matrix-free: Stiemke's certificate of
//! [`crate::fvbm::separation`] with its linear system solved by preconditioned conjugate
//! gradients on products with the design ([`Design::gram_times`]) instead of a dense
//! Cholesky factor of `p = d(d+1)/2` unknowns.
//!
//! At the fitted `θ`, `y⁰_q = w_u |x_uj − E[x_j | h_uj]| > 0` has `Aᵀy⁰ = ∇P_n(θ) = g` (the
//! notation of `separation`: pair `q` = (distinct row `u`, unit `j`), `a_q = s_q ∂h_uj/∂θ`).
//! With `K = Σ_q w_u a_q a_qᵀ` and `ν ≈ K⁻¹g` by conjugate gradients, `y_q = y⁰_q − w_u a_qᵀν`
//! has `Aᵀy = g − Kν = ρ`, the solve's residual. If every `y_q ≥ m > 0`, then for any `Δ` in
//! the unit box with `AΔ ≥ 0`, `m Σ_q a_qᵀΔ ≤ yᵀAΔ = ρᵀΔ ≤ ‖ρ‖₁`: its slacks sum to at most
//! `‖ρ‖₁ / m`. The certificate holds when that is at most [`LP_TOL`], the tolerance below
//! which the separation LP counts a slack as zero: no recession direction exists that the LP
//! could find (with `ρ = 0` it is Stiemke's lemma exactly). Cost: a few dozen passes of two
//! matrix products each, `O(n d²)` work and `O(p)` memory, against the LP's
//! `O(d² · n)` constraints on `p` unknowns.

use super::super::separation::{Existence, LP_TOL};
use super::design::Design;
use crate::error::Result;
use crate::fit::Interrupt;
use std::time::Instant;

/// Most conjugate-gradient steps.
const MAX_STEPS: usize = 300;

/// The certificate at `theta` (the fitted parameters, no penalty): `Ok(existence)` when it
/// holds, else `Err(why)` in one clause (the MPLE may still exist; only the LP can say).
pub(crate) fn check(
    design: &Design,
    theta: &[f64],
    n_distinct: usize,
    interrupt: Option<&Interrupt>,
) -> Result<std::result::Result<Existence, String>> {
    let start = Instant::now();
    let p = theta.len();
    let mut g = vec![0.0; p];
    design.log_pl_gradient(theta, &mut g, interrupt)?;
    let zero = vec![0.0; p];
    let m0 = design.stiemke_margin(theta, &zero, interrupt)?;
    if m0.is_nan() || m0 <= 0.0 {
        return Ok(Err(format!(
            "some conditional probability at the fitted point is 0 or 1 to working precision \
             (smallest weight {m0:.1e})"
        )));
    }
    let target = 0.25 * LP_TOL * m0;
    let diag = design.gram_diagonal();
    let mut nu = vec![0.0; p];
    let mut r = g.clone();
    let mut z: Vec<f64> = r.iter().zip(&diag).map(|(a, b)| a / b).collect();
    let mut dir = z.clone();
    let mut rz = dot(&r, &z);
    let mut kd = vec![0.0; p];
    let mut steps = 0;
    while l1(&r) > target && steps < MAX_STEPS && rz > 0.0 {
        steps += 1;
        design.gram_times(&dir, &mut kd, interrupt)?;
        let curv = dot(&dir, &kd);
        if curv.is_nan() || curv <= 0.0 {
            break;
        }
        let alpha = rz / curv;
        nu.iter_mut().zip(&dir).for_each(|(x, v)| *x += alpha * v);
        r.iter_mut().zip(&kd).for_each(|(x, v)| *x -= alpha * v);
        z.iter_mut()
            .zip(&r)
            .zip(&diag)
            .for_each(|((zv, rv), dv)| *zv = rv / dv);
        let rz_new = dot(&r, &z);
        let beta = rz_new / rz;
        rz = rz_new;
        dir.iter_mut().zip(&z).for_each(|(x, v)| *x = v + beta * *x);
    }
    // The residual recomputed, not the recurrence's (which drifts).
    design.gram_times(&nu, &mut kd, interrupt)?;
    let rho: f64 = g.iter().zip(&kd).map(|(a, b)| (a - b).abs()).sum();
    let m = design.stiemke_margin(theta, &nu, interrupt)?;
    if m > 0.0 && rho <= LP_TOL * m {
        Ok(Ok(Existence {
            separation: None,
            pairs: design.d() * n_distinct,
            rounds: 0,
            constraints: 0,
            certificate: true,
            seconds: start.elapsed().as_secs_f64(),
        }))
    } else {
        Ok(Err(format!(
            "Stiemke's certificate at the fitted point did not hold (smallest corrected \
             weight {m:.2e}, residual {rho:.2e} after {steps} conjugate-gradient steps)"
        )))
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn l1(a: &[f64]) -> f64 {
    a.iter().map(|x| x.abs()).sum()
}
