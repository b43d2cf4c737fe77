//! Whether the MPLE exists, matrix-free: Stiemke's certificate of
//! [`crate::fvbm::separation`] with its linear system solved by preconditioned conjugate
//! gradients on products with the design ([`Design::gram_times`]) instead of a dense
//! Cholesky factor of `p = d(d+1)/2` unknowns, and usually no solve at all.
//!
//! At the fitted `θ`, `y⁰_q = w_u |x_uj − E[x_j | h_uj]| > 0` has `Aᵀy⁰ = ∇P_n(θ) = g` (the
//! notation of `separation`: pair `q` = (distinct row `u`, unit `j`), `a_q = s_q ∂h_uj/∂θ`).
//! The MPLE fails to exist exactly when a recession direction `Δ ≠ 0` has `AΔ ≥ 0`.
//!
//! **The bound** (exact, no tolerance). Let `y ≥ m > 0` componentwise with `Aᵀy = ρ`, and
//! `σ² ≤ λ_min(AᵀA)`. For a recession direction, `z = AΔ ≥ 0` and
//! `m‖z‖₂ ≤ m‖z‖₁ ≤ yᵀz = ρᵀΔ ≤ ‖ρ‖₂‖Δ‖₂ ≤ ‖ρ‖₂‖z‖₂ / σ`, so `mσ ≤ ‖ρ‖₂` (and `σ > 0`
//! rules out `AΔ = 0`). Hence `‖ρ‖₂ < mσ` proves that no recession direction exists: the
//! MPLE exists (and is unique). With `‖z‖₁ ≥ ‖z‖₂² / ‖z‖_∞` and `‖z‖_∞ ≤ ‖Δ‖₂ max_q ‖a_q‖₂`
//! instead, `mσ² ≤ ‖ρ‖₂ max_q ‖a_q‖₂`, with `‖a_q‖₂ ≤ √(d + 1)`: the weaker demand when
//! `‖ρ‖₂ / m > √(d + 1)`, so far from the optimum (a relative-gain stop) the bound still
//! holds without a solve ([`bound_holds`] takes the better of the two). The rows of `A` are `±∂h_uj/∂θ`, and
//! `AᵀA = Sᵀ(I_d ⊗ C₀)S` with `C₀ = X₁ᵀX₁` over the distinct rows ([`Design::second_moments`])
//! and `S` the map from `θ` to `P = [M; bᵀ]`, which has `‖Sθ‖ ≥ ‖θ‖`; so
//! `λ_min(AᵀA) ≥ λ_min(C₀)`, and `λ_min(C₀) > c` is proved by a Cholesky factor of
//! `C₀ − (c + δ)I` ([`eigenvalues_exceed`]), `O(d³)` once. At a converged fit `y = y⁰`,
//! `ρ = g` usually passes at once; otherwise conjugate gradients on `Kν = g`, with
//! `K = Σ_q c_q a_q a_qᵀ` and `c_q = y⁰_q` rounded to `f32` ([`Design::base_weights`]), give
//! `y_q = y⁰_q − c_q a_qᵀν ≈ y⁰_q (1 − a_qᵀν)` and `ρ = g − Kν` (any `c` keeps `Aᵀy = ρ`
//! exact; this one keeps `y > 0` while the fields of `ν` are below 1, so a fit stopped by the
//! relative-gain rule, its gradient far above the gradient test's, still passes), and the
//! bound is tried again on them.
//!
//! **The weighted bound** (tried first; exact, no tolerance). With `z = AΔ ≥ 0`,
//! `0 ≤ z_q ≤ ‖a_q‖₂‖Δ‖₂`, so `y_q z_q ≥ c_q z_q² / ‖Δ‖₂` for any `0 ≤ c_q ≤ y_q / ‖a_q‖₂`, and
//! over any subset `Q` of the pairs `ρᵀΔ = yᵀz ≥ ΔᵀK_QΔ / ‖Δ‖₂` with `K_Q = Σ_{q∈Q} c_q a_q a_qᵀ`.
//! `ΔᵀK_QΔ = Σ_j P_jᵀC_jP_j` over the units, `P_j` unit `j`'s parameters (its couplings and
//! field, `Σ_j ‖P_j‖² ≥ ‖Δ‖²`) and `C_j` the weighted Gram matrix of its pairs in `Q`, so
//! `min_j λ_min(C_j) ≤ ‖ρ‖₂` for every recession direction: `‖ρ‖₂ < min_j λ_min(C_j)` proves
//! the MPLE exists. Unlike the bound above it keeps each pair's own weight (no pair dropped
//! at a cost of `d + 1`), so on the d = 100 benchmark, where over half the weights are below
//! 1/16, it holds at `ρ = g` from the `8(d + 1)` heaviest rows of each unit alone
//! (`min_j λ_min(C_j) = 18.9` against `2‖g‖₂ = 10.8`; [`Design::unit_grams_pass`], `O(m d³)`
//! work and no solve).
//!
//! The older test stays as a second way to pass: if every `y_q ≥ m > 0` and `Aᵀy = ρ`, then
//! for any `Δ` in the unit box with `AΔ ≥ 0`, `m Σ_q a_qᵀΔ ≤ ‖ρ‖₁`: its slacks sum to at most
//! `‖ρ‖₁ / m`, below [`LP_TOL`] (the tolerance below which the separation LP counts a slack as
//! zero) when the certificate holds. Cost: one pass and `C₀` (half a pass), then a few dozen
//! passes of two matrix products each only when the bound fails, `O(n d²)` work and
//! `O(p + d²)` memory, against the LP's `O(d² · n)` constraints on `p` unknowns.

use super::super::dense::cholesky_until;
use super::super::separation::{Existence, LP_TOL};
use super::design::{Design, Precision, Weights};
use crate::error::{Error, Result};
use crate::fit::Interrupt;
use std::time::Instant;

/// Most conjugate-gradient steps.
const MAX_STEPS: usize = 300;

/// The weighted bound's stages are tried while each costs at most this many passes (two
/// products over the data) of work: at `d = 100`, `n = 20,000` both stages; at `d = 1,000`,
/// `n = 50,000` neither (`d³` per row: 80 passes for its first 8,008 rows).
const WEIGHTED_BUDGET: u64 = 8;

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
    design.log_pl_gradient(theta, &mut g, Precision::Double, interrupt)?;
    let base = design.base_weights(theta, interrupt)?;
    if weighted_bound_holds(design, &base, l2(&g), interrupt)? {
        return Ok(Ok(holds(design, n_distinct, start)));
    }
    let moments = design.second_moments(interrupt)?;
    let zero = vec![0.0; p];
    let w0 = design.stiemke_weights(theta, &zero, None, interrupt)?;
    if bound_holds(&moments, &w0, l2(&g), interrupt)? {
        return Ok(Ok(holds(design, n_distinct, start)));
    }
    let m0 = w0.min;
    if m0.is_nan() || m0 <= 0.0 {
        return Ok(Err(format!(
            "some conditional probability at the fitted point is 0 or 1 to working precision \
             (smallest weight {m0:.1e})"
        )));
    }
    // The correction `δ_q = y⁰_q a_qᵀν` is weighted by the weights themselves, so that
    // `y = y⁰ ⊙ (1 − Aν)` stays positive while the fields of ν are small: a fit stopped short
    // of the gradient test (the relative-gain rule) still passes.
    let pair = Some(base.as_slice());
    // Both tests at ν, with the residual recomputed (the recurrence's drifts): whether the
    // certificate holds, the smallest corrected weight and ‖ρ‖₁.
    let mut kd = vec![0.0; p];
    let attempt = |nu: &[f64], kd: &mut [f64]| -> Result<(bool, f64, f64)> {
        design.gram_times(nu, pair, Precision::Double, kd, interrupt)?;
        let rho1: f64 = g.iter().zip(&*kd).map(|(a, b)| (a - b).abs()).sum();
        let rho2 = g
            .iter()
            .zip(&*kd)
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>();
        let w = design.stiemke_weights(theta, nu, pair, interrupt)?;
        let m = w.min;
        let ok =
            (m > 0.0 && rho1 <= LP_TOL * m) || bound_holds(&moments, &w, rho2.sqrt(), interrupt)?;
        Ok((ok, m, rho1))
    };
    let target = 0.25 * LP_TOL * m0;
    let diag = design.pair_diagonal(&base);
    let mut nu = vec![0.0; p];
    let mut r = g.clone();
    let mut z: Vec<f64> = r.iter().zip(&diag).map(|(a, b)| a / b).collect();
    let mut dir = z.clone();
    let mut rz = dot(&r, &z);
    let mut steps = 0;
    while l1(&r) > target && steps < MAX_STEPS && rz > 0.0 {
        steps += 1;
        // f32 products: the steps only look for ν; every attempt recomputes ρ in f64
        design.gram_times(&dir, pair, Precision::Single, &mut kd, interrupt)?;
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
        // the bound usually holds long before the residual reaches the LP's tolerance; tried
        // at steps 4, 8, then every 8th (each try costs about two steps)
        if steps >= 4 && (steps == 4 || steps % 8 == 0) && attempt(&nu, &mut kd)?.0 {
            return Ok(Ok(holds(design, n_distinct, start)));
        }
    }
    let (ok, m, rho) = attempt(&nu, &mut kd)?;
    if ok {
        Ok(Ok(holds(design, n_distinct, start)))
    } else {
        Ok(Err(format!(
            "Stiemke's certificate at the fitted point did not hold (smallest corrected \
             weight {m:.2e}, residual {rho:.2e} after {steps} conjugate-gradient steps)"
        )))
    }
}

/// The bound of the module's doc at corrected weights `w` with `‖ρ‖₂ = rho`: for a
/// threshold `τ = 2^−i`, drop the pairs with `y_q < τ` (at most `k_i` per unit, each
/// lowering `λ_min` of its unit's block of `AᵀA` by at most `‖x̃_u‖² ≤ d + 1`), so that
/// `τ‖z‖₁` over the rest is at most `yᵀz`: no recession direction if
/// `λ_min(C₀) > k_i (d + 1) + (2‖ρ‖₂ / τ)²` (with `‖z‖₁ ≥ ‖z‖₂`; a factor 2 for round-off in
/// `ρ` and `y`) or `λ_min(C₀) > k_i (d + 1) + 2√(d + 1)‖ρ‖₂ / τ` (with
/// `‖z‖₁ ≥ ‖z‖₂² / ‖z‖_∞` and `‖z‖_∞ ≤ max_q ‖a_q‖₂ ‖Δ‖₂ ≤ √(d + 1)‖Δ‖₂`: far weaker a demand
/// when `‖ρ‖₂ / τ` is large, as at a fit stopped by the relative-gain rule), tried at the `i`
/// with the smallest right side ([`bound_need`]). Needs every `y_q ≥ 0`.
fn bound_holds(
    moments: &[f64],
    w: &Weights,
    rho: f64,
    interrupt: Option<&Interrupt>,
) -> Result<bool> {
    if !(w.min >= 0.0 && rho.is_finite()) {
        return Ok(false);
    }
    let e = (moments.len() as f64).sqrt().round() as usize;
    let need = w
        .most_below()
        .iter()
        .enumerate()
        .map(|(i, &k)| k as f64 * e as f64 + bound_need(rho * 2f64.powi(i as i32), e))
        .fold(f64::INFINITY, f64::min);
    eigenvalues_exceed(moments, e, need, interrupt)
}

/// The weighted bound of the module's doc at the uncorrected weights `y⁰` (`base`, `f32`)
/// with `‖∇P_n‖₂ = rho`: every unit's Gram matrix `C_j` of its heaviest rows
/// ([`Design::unit_grams_pass`]) has `λ_min(C_j) > 2·rho` (a factor 2 for round-off in `ρ`
/// and `y`). Tried on the `8(d + 1)` heaviest rows per unit, then `32(d + 1)`, each stage
/// only while its work is at most [`WEIGHTED_BUDGET`] passes.
fn weighted_bound_holds(
    design: &Design,
    base: &[f32],
    rho: f64,
    interrupt: Option<&Interrupt>,
) -> Result<bool> {
    if !rho.is_finite() || base.iter().any(|v| v.is_nan() || *v < 0.0) {
        return Ok(false);
    }
    let d = design.d();
    let rows = base.len() / d;
    let budget = WEIGHTED_BUDGET.saturating_mul(Design::pass_work(d as u64, rows as u64));
    let mut last = 0;
    for factor in [8, 32] {
        let m = (factor * (d + 1)).min(rows);
        let work = (m as u64).saturating_mul((d as u64).pow(3));
        if m <= last || work > budget {
            break;
        }
        last = m;
        let test = |_, c: &[f64]| eigenvalues_exceed(c, d, 2.0 * rho, interrupt);
        if design.unit_grams_pass(base, m, interrupt, test)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// What `λ_min(C₀)` must exceed beyond the dropped pairs' share, for `‖ρ‖₂ / τ = r` on
/// `e = d + 1` columns: the smaller of the two sufficient conditions of [`bound_holds`],
/// `(2r)²` by `‖z‖₁ ≥ ‖z‖₂` and `2r·√e` by `‖z‖₁ ≥ ‖z‖₂² / ‖z‖_∞` (`‖z‖_∞ ≤ √e·‖Δ‖₂`).
fn bound_need(r: f64, e: usize) -> f64 {
    (2.0 * r).powi(2).min(2.0 * r * (e as f64).sqrt())
}

/// The record of a certificate that holds.
fn holds(design: &Design, n_distinct: usize, start: Instant) -> Existence {
    Existence {
        separation: None,
        pairs: design.d() * n_distinct,
        rounds: 0,
        constraints: 0,
        certificate: true,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Whether every eigenvalue of the symmetric `e × e` matrix `c0` exceeds `c`: a Cholesky
/// factor of `c0 − (c + δ)I` exists. `δ = 2(e + 1)²·ε·max_i c0_ii` covers the round-off: a
/// factorization that runs to its end in floating point is exact for a perturbation of norm
/// at most `(e + 1)·e·(ε/2)·max_i c0_ii` (Demmel's bound), so success proves
/// `λ_min(c0) ≥ c + δ − δ/4 > c`.
pub(crate) fn eigenvalues_exceed(
    c0: &[f64],
    e: usize,
    c: f64,
    interrupt: Option<&Interrupt>,
) -> Result<bool> {
    let max_diag = (0..e).map(|i| c0[i * e + i]).fold(0.0f64, f64::max);
    let delta = 2.0 * ((e + 1) * (e + 1)) as f64 * f64::EPSILON * max_diag;
    let shift = c + delta;
    if !shift.is_finite() || shift >= max_diag {
        return Ok(false);
    }
    let mut a = c0.to_vec();
    for i in 0..e {
        a[i * e + i] -= shift;
    }
    match cholesky_until(&mut a, e, interrupt) {
        None => Err(Error::Interrupted {
            what: "the existence certificate".into(),
        }),
        Some(factor) => Ok(factor.is_ok()),
    }
}

fn l2(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn l1(a: &[f64]) -> f64 {
    a.iter().map(|x| x.abs()).sum()
}

#[cfg(test)]
mod tests {
    use super::super::super::pseudo::PlData;
    use super::super::super::{exact, separation, Convention, Fvbm, MpleParams};
    use super::super::PlmParams;
    use super::*;
    use crate::fit::Learner;
    use crate::rng::rng_from_seed;

    #[test]
    fn certificate_agrees_with_the_lp() {
        // small samples of 4 units: some separated (the LP finds a direction), some not
        let (mut certified, mut separated) = (0, 0);
        for (seed, n) in [(1, 25), (2, 40), (3, 60), (4, 400), (5, 30), (6, 2000)] {
            for conv in [Convention::Spin, Convention::Binary] {
                let truth = Fvbm::random(4, 0.5, conv, &mut rng_from_seed(seed)).unwrap();
                let data = exact::sample(&truth, n, &mut rng_from_seed(seed + 100)).unwrap();
                let p = PlmParams {
                    mple: MpleParams {
                        convention: conv,
                        check_existence: false,
                        max_iterations: 300,
                        ..MpleParams::default()
                    },
                    ..PlmParams::default()
                };
                let fit = p.check().unwrap().fit(&data).unwrap();
                let pl = PlData::new(&data, conv).unwrap();
                let design = Design::new(&pl);
                let verdict = check(&design, &fit.model.theta(), pl.n_distinct(), None).unwrap();
                let lp = separation::check(&pl).unwrap();
                if verdict.is_ok() {
                    certified += 1;
                    assert!(
                        lp.exists(),
                        "seed {seed}, n {n}, {conv}: certified but separated"
                    );
                }
                if !lp.exists() {
                    separated += 1;
                }
            }
        }
        assert!(
            certified >= 2 && separated >= 2,
            "{certified} certified, {separated} separated"
        );
    }

    #[test]
    fn weighted_bound_certifies_what_exists_and_never_a_separation() {
        let fit_at = |data: &crate::data::Dataset| {
            let p = PlmParams {
                mple: MpleParams {
                    check_existence: false,
                    max_iterations: 60,
                    ..MpleParams::default()
                },
                ..PlmParams::default()
            };
            let fit = p.check().unwrap().fit(data).unwrap();
            let pl = PlData::new(data, Convention::Spin).unwrap();
            let design = Design::new(&pl);
            let theta = fit.model.theta();
            let mut g = vec![0.0; theta.len()];
            design
                .log_pl_gradient(&theta, &mut g, Precision::Double, None)
                .unwrap();
            let base = design.base_weights(&theta, None).unwrap();
            let ok = weighted_bound_holds(&design, &base, l2(&g), None).unwrap();
            (ok, separation::check(&pl).unwrap().exists())
        };
        // 6 units, 3,000 samples: the MPLE exists and the bound proves it (the LP agrees)
        let truth = Fvbm::random(6, 0.4, Convention::Spin, &mut rng_from_seed(11)).unwrap();
        let data = exact::sample(&truth, 3000, &mut rng_from_seed(12)).unwrap();
        assert_eq!(fit_at(&data), (true, true));
        // unit 2 a copy of unit 0: separated, and the bound must not hold
        let mut v = data.into_values();
        for mut row in v.outer_iter_mut() {
            row[2] = row[0];
        }
        let data = crate::data::Dataset::binary(v).unwrap();
        assert_eq!(fit_at(&data), (false, false));
    }

    #[test]
    fn eigenvalue_bound_matches_the_known_spectrum() {
        // [[2, 1], [1, 2]] has eigenvalues 1 and 3
        let c0 = [2.0, 1.0, 1.0, 2.0];
        assert!(eigenvalues_exceed(&c0, 2, 0.999, None).unwrap());
        assert!(!eigenvalues_exceed(&c0, 2, 1.0, None).unwrap());
        assert!(!eigenvalues_exceed(&c0, 2, f64::NAN, None).unwrap());
        // singular: nothing positive exceeds its smallest eigenvalue 0
        let c1 = [1.0, 1.0, 1.0, 1.0];
        assert!(!eigenvalues_exceed(&c1, 2, 1e-300, None).unwrap());
    }
}
