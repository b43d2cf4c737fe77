//! The special functions of the continuous unit types, in `f64`: the scaled complementary
//! error function `erfcx(x) = e^{x²} erfc(x)` and its logarithm, and the half-Gaussian
//! `∫_0^∞ e^{−γh²/2 + b h} dh` (the per-side partition of ReLU and dReLU units): its
//! logarithm, the mean and second moment of its density, and an exact sampler.
//!
//! `erfcx` in three regimes: `x < 12` as `e^{x²} · erfc(x)` with `x²` split exactly into
//! `hi + lo` (one FMA) and `erfc` from `libm` (musl's, under 1 ulp), so the product is good to
//! a few ulps and overflows only where `erfcx` itself does (`x < −26.6`); `x ≥ 12` by the
//! asymptotic series `1/(x√π) Σ_k (−1)^k (2k−1)!! / (2x²)^k` (13 terms: the first one left out
//! is below `1e-19` of the sum). `ln erfcx` never overflows: `x² + ln erfc(x)` for `x < 0`.

/// `1/√π`.
const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;
/// `√2`.
const SQRT_2: f64 = std::f64::consts::SQRT_2;
/// Where the asymptotic series takes over.
const ASYMPTOTIC_FROM: f64 = 12.0;
/// Terms of the asymptotic series after the first.
const ASYMPTOTIC_TERMS: u32 = 12;

/// The asymptotic series of `x√π · erfcx(x)` at `u = 1/(2x²)` for `x ≥ ASYMPTOTIC_FROM`, as
/// `(S, 1 − S, S − T)` with `S = Σ_{k≥0} (−1)^k (2k−1)!! u^k` and
/// `T = Σ_{k≥0} (−1)^k (2k+1)!! u^k` (so `1 − S = u·T`), each summed from its own terms so
/// that none is a difference of nearly equal numbers.
fn asymptotic(x: f64) -> (f64, f64, f64) {
    let u = 0.5 / x / x;
    // term_k = (2k−1)!! u^k, k ≥ 1
    let (mut term, mut one_minus_s, mut s_minus_t) = (u, 0.0, 0.0);
    let mut sign = 1.0;
    for k in 1..=ASYMPTOTIC_TERMS {
        one_minus_s += sign * term;
        s_minus_t += sign * 2.0 * f64::from(k) * term;
        term *= f64::from(2 * k + 1) * u;
        sign = -sign;
    }
    (1.0 - one_minus_s, one_minus_s, s_minus_t)
}

/// `e^{x²}` as `e^{hi} · (1 + lo)` with `x² = hi + lo` exactly.
fn exp_square(x: f64) -> f64 {
    let hi = x * x;
    let lo = x.mul_add(x, -hi);
    hi.exp() * (1.0 + lo)
}

/// The scaled complementary error function `erfcx(x) = e^{x²} erfc(x)`: `+∞` below about
/// `−26.6` (where the value exceeds `f64`), `1/(x√π)` to within `1e-19` relative at `x ≥ 1e9`.
pub fn erfcx(x: f64) -> f64 {
    if x < ASYMPTOTIC_FROM {
        exp_square(x) * libm::erfc(x)
    } else {
        FRAC_1_SQRT_PI / x * asymptotic(x).0
    }
}

/// `ln erfcx(x)`, finite for every finite `x` (about `x²` as `x → −∞`, `−ln(x√π)` as
/// `x → +∞`).
pub fn ln_erfcx(x: f64) -> f64 {
    if x < 0.0 {
        let hi = x * x;
        let lo = x.mul_add(x, -hi);
        (hi + libm::erfc(x).ln()) + lo
    } else {
        erfcx(x).ln()
    }
}

/// `ln ∫_0^∞ e^{−γh²/2 + b h} dh = ½ ln(π / (2γ)) + ln erfcx(−b / √(2γ))` for `γ > 0`: finite
/// for every finite `b`.
pub fn ln_half_gauss(gamma: f64, b: f64) -> f64 {
    0.5 * (std::f64::consts::PI / (2.0 * gamma)).ln() + ln_erfcx(-b / (2.0 * gamma).sqrt())
}

/// `λ(α) − α` and `1 − α(λ(α) − α)`, with `λ(α) = φ(α) / (1 − Φ(α)) = √(2/π) / erfcx(α/√2)`
/// the inverse Mills ratio of the standard normal truncated to `z ≥ α`: the first and second
/// moments of `z − α` under that truncation. Beyond the series' threshold
/// both come from the series' terms, so neither loses digits to cancellation at large `α`.
fn mills(alpha: f64) -> (f64, f64) {
    let x = alpha / SQRT_2;
    if x < ASYMPTOTIC_FROM {
        let lambda = (2.0 / std::f64::consts::PI).sqrt() / erfcx(x);
        let excess = lambda - alpha;
        (excess, 1.0 - alpha * excess)
    } else {
        // λ = α / S, so λ − α = α (1 − S) / S and 1 − α(λ − α) = (S − T) / S (α² u = 1)
        let (s, one_minus_s, s_minus_t) = asymptotic(x);
        (alpha * one_minus_s / s, s_minus_t / s)
    }
}

/// The mean and the second moment `(E[h], E[h²])` of the density `∝ e^{−γh²/2 + b h}` on
/// `h ≥ 0` (`γ > 0`): `E[h] = s (λ(α) − α)` and `E[h²] = s² (1 − α (λ(α) − α))` with
/// `s = 1/√γ`, `α = −b s` (`h = s (z − α)`, `z` a standard normal truncated to `z ≥ α`).
pub fn half_gauss_moments(gamma: f64, b: f64) -> (f64, f64) {
    let s = 1.0 / gamma.sqrt();
    let (first, second) = mills(-b * s);
    (s * first, s * s * second)
}

/// One draw from the density `∝ e^{−γh²/2 + b h}` on `h ≥ 0` (`γ > 0`): `h = s (z − α)` for a
/// standard normal `z` truncated to `z ≥ α = −b s`, drawn exactly: by rejection from the
/// normal when `α < 0.5` (acceptance at least 0.3), else by Robert's (1995) exponential
/// proposal `z = α + E/λ*`, `λ* = (α + √(α² + 4))/2`, accepted with probability
/// `e^{−(z − λ*)²/2}` (at least 0.6). `z − λ* = (E − 1)/λ*`, so no step overflows at any `α`.
pub fn sample_half_gauss<R: rand::Rng + ?Sized>(gamma: f64, b: f64, rng: &mut R) -> f64 {
    use rand_distr::{Distribution as _, Exp1, StandardNormal};
    let s = 1.0 / gamma.sqrt();
    let alpha = -b * s;
    if alpha < 0.5 {
        loop {
            let z: f64 = StandardNormal.sample(rng);
            if z >= alpha {
                return s * (z - alpha);
            }
        }
    }
    let lambda = 0.5 * alpha * (1.0 + (1.0 + 4.0 / alpha / alpha).sqrt());
    loop {
        let e: f64 = Exp1.sample(rng);
        let u: f64 = rng.random();
        let d = (e - 1.0) / lambda;
        if u.ln() <= -0.5 * d * d {
            return s * e / lambda;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::quadrature::ln_half_line;
    use super::*;
    use crate::rng::rng_from_seed;

    // scripts/units_reference.py: mpmath at 50 digits, e^{x²} erfc(x) and its logarithm.
    include!("special_reference.rs");

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1e-300)
    }

    #[test]
    fn erfcx_matches_mpmath() {
        let worst = ERFCX_REF
            .iter()
            .map(|&(x, want)| rel(erfcx(x), want))
            .fold(0.0, f64::max);
        eprintln!("erfcx: worst relative error against mpmath {worst:.2e}");
        assert!(worst < 1e-14, "worst relative error {worst:e}");
        assert_eq!(erfcx(-27.0), f64::INFINITY);
        assert_eq!(erfcx(f64::INFINITY), 0.0);
        assert!(erfcx(f64::NAN).is_nan());
    }

    #[test]
    fn ln_erfcx_matches_mpmath_and_never_overflows() {
        for &(x, want) in ERFCX_REF.iter().filter(|(_, v)| *v > 0.0) {
            let got = ln_erfcx(x);
            // absolute near ln erfcx = 0 (x near 0), relative elsewhere
            assert!(
                (got - want.ln()).abs() <= 1e-14 * want.ln().abs().max(1.0),
                "x = {x}: {got} vs {}",
                want.ln()
            );
        }
        for &(x, want) in &LOG_ERFCX_REF {
            assert!(rel(ln_erfcx(x), want) < 1e-15, "x = {x}");
        }
        assert!(ln_erfcx(-1e150).is_finite() || ln_erfcx(-1e150) == f64::INFINITY);
        assert!(ln_erfcx(1e300).is_finite());
    }

    #[test]
    fn half_gauss_log_partition_and_moments_match_quadrature() {
        for &gamma in &[0.05, 1.0, 20.0] {
            for &b in &[-300.0, -20.0, -3.0, -0.5, 0.0, 0.7, 4.0, 50.0] {
                let (z, m1, m2) = ln_half_line(gamma, b);
                let got = ln_half_gauss(gamma, b);
                assert!(
                    (got - z).abs() <= 1e-12 * z.abs().max(1.0),
                    "γ = {gamma}, b = {b}: {got} vs {z}"
                );
                let (mean, second) = half_gauss_moments(gamma, b);
                assert!(
                    rel(mean, m1) < 1e-11,
                    "mean γ = {gamma}, b = {b}: {mean} vs {m1}"
                );
                assert!(rel(second, m2) < 1e-11, "E[h²] γ = {gamma}, b = {b}");
            }
        }
    }

    #[test]
    fn moments_stay_accurate_far_in_the_tail() {
        // α = 1e4: E[z − α] = 1/α − 2/α³ + ..., Var z = 1/α² − 6/α⁴ + ... (the series)
        let a = 1e4_f64;
        let (mean, second) = half_gauss_moments(1.0, -a);
        assert!(rel(mean, 1.0 / a - 2.0 / a.powi(3)) < 1e-12);
        let var = second - mean * mean;
        assert!(rel(var, 1.0 / (a * a) - 6.0 / a.powi(4)) < 1e-7);
        // and across the switch to the series the moments are continuous
        let x0 = ASYMPTOTIC_FROM * SQRT_2;
        let (lo, hi) = (
            half_gauss_moments(1.0, -x0 * (1.0 - 1e-15)),
            half_gauss_moments(1.0, -x0 * (1.0 + 1e-15)),
        );
        assert!(
            rel(lo.0, hi.0) < 1e-11 && rel(lo.1, hi.1) < 1e-9,
            "{lo:?} vs {hi:?}"
        );
    }

    #[test]
    fn sampler_moments_match_the_closed_form() {
        let mut rng = rng_from_seed(11);
        let n = 20_000;
        for &(gamma, b) in &[(1.0, 2.0), (4.0, 0.0), (0.5, -1.0), (2.0, -30.0)] {
            let (m1, m2) = half_gauss_moments(gamma, b);
            let sd = (m2 - m1 * m1).sqrt();
            let xs: Vec<f64> = (0..n)
                .map(|_| sample_half_gauss(gamma, b, &mut rng))
                .collect();
            assert!(xs.iter().all(|&x| x >= 0.0 && x.is_finite()));
            let mean = xs.iter().sum::<f64>() / n as f64;
            assert!(
                (mean - m1).abs() < 5.0 * sd / (n as f64).sqrt(),
                "γ = {gamma}, b = {b}: mean {mean} vs {m1}"
            );
            let second = xs.iter().map(|x| x * x).sum::<f64>() / n as f64;
            assert!(
                rel(second, m2) < 0.05,
                "γ = {gamma}, b = {b}: {second} vs {m2}"
            );
        }
        // far tails draw without overflow and land where the density is
        let x = sample_half_gauss(1.0, -1e12, &mut rng);
        assert!(x > 0.0 && x < 1e-10);
        let x = sample_half_gauss(1.0, 1e12, &mut rng);
        assert!((x - 1e12).abs() < 10.0);
    }
}
