//! The per-unit terms of a binary pseudo-likelihood in `f64`, vectorized: for the fields `h`
//! of one row and its values `x`, `Σ_j (x_j h_j − A(h_j))` and the weighted residuals
//! `w (x_j − E[x_j | h_j])` (spin ±1: `A(h) = ln 2cosh h`, `E = tanh h`; binary 0/1:
//! `A(h) = ln(1 + e^h)`, `E = σ(h)`), the terms of Eq. 2.1 of Nguyen & Wood and of its gradient.
//!
//! libm's `exp` and `ln_1p` do not vectorize and were two thirds of an L-BFGS evaluation's
//! non-product time; [`exp_nonpositive`] and [`ln_1p_unit`] are branch-free polynomials
//! accurate to a few units in the last place (not the `f32` accuracy of the RBM kernels of
//! [`super`]), so the line search sees the objective to its last digits. Their portable twins
//! are `f64::exp` and `f64::ln_1p` (tests).

/// `e^x` for `x ≤ 0` (inputs above 0 are taken as 0, below −708 as −708: the result never
/// underflows to a denormal). Cody and Waite's reduction `x = k ln 2 + r`, `|r| ≤ ln 2 / 2`,
/// with `k` rounded by the `1.5·2^52` trick, then Taylor's series of `e^r` to degree 13
/// (truncation below `5e-18`); relative error within 2 ulp.
#[inline(always)]
pub fn exp_nonpositive(x: f64) -> f64 {
    // 1.5·2^52: adding it rounds to an integer, which lands in the low mantissa bits
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    // ln 2 split so that k·LN2_HI is exact for |k| < 2^20 (fdlibm's constants)
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    let x = x.clamp(-708.0, 0.0);
    let t = x * std::f64::consts::LOG2_E + MAGIC;
    let kf = t - MAGIC;
    let k = (t.to_bits() as i64).wrapping_sub(MAGIC.to_bits() as i64);
    let r = (-kf).mul_add(LN2_LO, (-kf).mul_add(LN2_HI, x));
    let mut p: f64 = 1.0 / 6_227_020_800.0;
    for c in [
        1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        1.0 / 40_320.0,
        1.0 / 5_040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ] {
        p = p.mul_add(r, c);
    }
    p * f64::from_bits(((k + 1023) as u64) << 52)
}

/// `ln(1 + t)` for `t ∈ [0, 1]`: [`ln_1p_of_ratio`] of `t / (2 + t)`; relative error within
/// 4 ulp.
#[inline(always)]
pub fn ln_1p_unit(t: f64) -> f64 {
    ln_1p_of_ratio(t / (2.0 + t))
}

/// `ln(1 + t)` from `s = t / (2 + t) ∈ [0, 1/3]` (`t ∈ [0, 1]`): `2 atanh(s)`, the odd series
/// `2s Σ_{i ≤ 17} s^{2i} / (2i + 1)` (truncation below `2e-18`), no branch and no division
/// (the callers share one division between `s` and the conditional mean).
#[inline(always)]
pub fn ln_1p_of_ratio(s: f64) -> f64 {
    let z = s * s;
    let mut p: f64 = 1.0 / 35.0;
    for i in (1..17).rev() {
        p = p.mul_add(z, 1.0 / (2 * i + 1) as f64);
    }
    let two_s = s + s;
    (two_s * z).mul_add(p, two_s)
}

/// `(A(h), E[x | h])` of a spin unit: `A = |h| + ln(1 + e^{−2|h|})`, `E = tanh h`, with one
/// division for `1 / ((1 + e)(2 + e))`.
#[inline(always)]
pub fn spin_terms(h: f64) -> (f64, f64) {
    let a = h.abs();
    let e = exp_nonpositive(-2.0 * a);
    let (one_e, two_e) = (1.0 + e, 2.0 + e);
    let q = 1.0 / (one_e * two_e);
    let t = (1.0 - e) * two_e * q;
    (
        a + ln_1p_of_ratio(e * one_e * q),
        if h < 0.0 { -t } else { t },
    )
}

/// `(A(h), E[x | h])` of a 0/1 unit: `A = max(h, 0) + ln(1 + e^{−|h|})`, `E = σ(h)`, with
/// one division.
#[inline(always)]
pub fn binary_terms(h: f64) -> (f64, f64) {
    let e = exp_nonpositive(-h.abs());
    let (one_e, two_e) = (1.0 + e, 2.0 + e);
    let q = 1.0 / (one_e * two_e);
    let inv = two_e * q;
    (
        h.max(0.0) + ln_1p_of_ratio(e * one_e * q),
        if h < 0.0 { e * inv } else { inv },
    )
}

/// Lanes of the deterministic sums (fixed, so the bits do not depend on the instruction set).
const LANES: usize = 8;

/// One row's terms with `terms` (spin or binary): returns `Σ_j (x_j h_j − A(h_j))` and
/// writes `h_j ← w (x_j − E[x_j | h_j])`, summed over fixed lanes.
#[inline(always)]
fn row_terms(x: &[f64], h: &mut [f64], w: f64, terms: impl Fn(f64) -> (f64, f64)) -> f64 {
    let mut acc = [0f64; LANES];
    let mut hc = h.chunks_exact_mut(LANES);
    let mut xc = x.chunks_exact(LANES);
    for (hs, xs) in (&mut hc).zip(&mut xc) {
        for ((hv, &xv), a) in hs.iter_mut().zip(xs).zip(acc.iter_mut()) {
            let (log_norm, mean) = terms(*hv);
            *a += xv * *hv - log_norm;
            *hv = w * (xv - mean);
        }
    }
    let mut tail = 0.0;
    for (hv, &xv) in hc.into_remainder().iter_mut().zip(xc.remainder()) {
        let (log_norm, mean) = terms(*hv);
        tail += xv * *hv - log_norm;
        *hv = w * (xv - mean);
    }
    acc.iter().sum::<f64>() + tail
}

/// [`row_terms`] of spin units (`x`, `h` of equal length), compiled for the widest vectors
/// the CPU runs ([`fastest`]).
pub fn spin_row_terms(x: &[f64], h: &mut [f64], w: f64) -> f64 {
    fastest(x, h, w, spin_terms)
}

/// [`row_terms`] of 0/1 units (`x`, `h` of equal length), compiled for the widest vectors the
/// CPU runs ([`fastest`]).
pub fn binary_row_terms(x: &[f64], h: &mut [f64], w: f64) -> f64 {
    fastest(x, h, w, binary_terms)
}

/// [`row_terms`] compiled for AVX-512F when the CPU has it, else AVX2 + FMA, else the
/// baseline: the same bits on all three, since every multiply-add is an explicit `mul_add`
/// (exactly rounded everywhere; a library call on a CPU without FMA).
#[inline(always)]
fn fastest<F: Fn(f64) -> (f64, f64)>(x: &[f64], h: &mut [f64], w: f64, terms: F) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx2,fma")]
        unsafe fn avx512<F: Fn(f64) -> (f64, f64)>(x: &[f64], h: &mut [f64], w: f64, t: F) -> f64 {
            row_terms(x, h, w, t)
        }
        #[target_feature(enable = "avx2,fma")]
        unsafe fn avx2<F: Fn(f64) -> (f64, f64)>(x: &[f64], h: &mut [f64], w: f64, t: F) -> f64 {
            row_terms(x, h, w, t)
        }
        use crate::cpu::{has, Feature};
        if has(Feature::Avx512f) {
            // SAFETY: the CPU supports AVX-512F, AVX2 and FMA (AVX-512F implies both).
            return unsafe { avx512(x, h, w, terms) };
        }
        if has(Feature::Avx2Fma) {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { avx2(x, h, w, terms) };
        }
    }
    row_terms(x, h, w, terms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f64, b: f64) -> f64 {
        ((a - b) / b.abs().max(f64::MIN_POSITIVE)).abs() / f64::EPSILON
    }

    #[test]
    fn exp_and_ln_1p_match_libm_within_a_few_ulps() {
        let mut worst = (0.0f64, 0.0f64);
        for i in 0..=200_000 {
            let x = (-(i as f64) * 3.54e-3 - 1e-9 * (i % 7) as f64).max(-708.0);
            worst.0 = worst.0.max(ulps(exp_nonpositive(x), x.exp()));
            let t = i as f64 / 200_000.0;
            if t > 0.0 {
                worst.1 = worst.1.max(ulps(ln_1p_unit(t), t.ln_1p()));
            }
        }
        assert!(worst.0 <= 3.0 && worst.1 <= 4.0, "{worst:?}");
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert_eq!(ln_1p_unit(0.0), 0.0);
        assert!(ulps(ln_1p_unit(1.0), std::f64::consts::LN_2) <= 4.0);
        // clamped: never a denormal, never above 1
        assert!(exp_nonpositive(-1e6) > 0.0 && exp_nonpositive(-1e6) < 1e-307);
        assert_eq!(exp_nonpositive(3.0), 1.0);
    }

    #[test]
    fn row_terms_equal_the_libm_formulas() {
        for spin in [true, false] {
            let d = 37;
            let x: Vec<f64> = (0..d)
                .map(|j| match (spin, j % 3 == 0) {
                    (true, true) => -1.0,
                    (true, false) | (false, false) => 1.0,
                    (false, true) => 0.0,
                })
                .collect();
            let h0: Vec<f64> = (0..d).map(|j| (j as f64 * 1.7).sin() * 9.0).collect();
            let mut h = h0.clone();
            let w = 3.0;
            let s = if spin {
                spin_row_terms(&x, &mut h, w)
            } else {
                binary_row_terms(&x, &mut h, w)
            };
            let mut direct = 0.0;
            for j in 0..d {
                let v = h0[j];
                let (a, mean) = if spin {
                    ((2.0 * v.cosh()).ln(), v.tanh())
                } else {
                    (v.exp().ln_1p(), 1.0 / (1.0 + (-v).exp()))
                };
                direct += x[j] * v - a;
                assert!((h[j] - w * (x[j] - mean)).abs() < 1e-14, "{spin} {j}");
            }
            assert!(
                (s - direct).abs() < 1e-13 * direct.abs(),
                "{spin}: {s} {direct}"
            );
        }
    }
}
