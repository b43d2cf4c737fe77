//! Scalar math: branch-free `f32` approximations of `exp`, `ln`, the logistic function and
//! softplus (inlined into the slice kernels, where they vectorize), and their `f64`
//! references.

/// `e^x` in `f32`, branch-free so loops over slices vectorize (Cephes `expf` polynomial, the
/// rounding to an integer by the `1.5·2^23` trick instead of a libm `floor`; relative error
/// below `2e-7`); inputs are clamped to `[−87.3, 88]`, so it never returns
/// infinity or a denormal.
#[inline(always)]
pub fn fast_exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const C1: f32 = 0.693_359_4;
    const C2: f32 = -2.121_944_4e-4;
    // 1.5·2^23: adding it rounds to the nearest integer, which lands in the low mantissa bits
    const MAGIC: f32 = 12_582_912.0;
    let x = x.clamp(-87.3, 88.0);
    let t = x * LOG2E + MAGIC;
    let fx = t - MAGIC;
    let ni = t.to_bits().wrapping_sub(MAGIC.to_bits()) as i32;
    let r = x - fx * C1 - fx * C2;
    let mut y = 1.987_569_1e-4_f32;
    y = y * r + 1.398_199_9e-3;
    y = y * r + 8.333_452e-3;
    y = y * r + 4.166_579_6e-2;
    y = y * r + 1.666_666_5e-1;
    y = y * r + 0.5;
    y = y * r * r + r + 1.0;
    let pow2 = f32::from_bits(((ni + 127) as u32) << 23);
    y * pow2
}

/// `ln x` in `f32` for finite `x > 0`, branch-free (Cephes `logf` polynomial, relative error
/// below `2e-7` away from `x = 1`, absolute below `1e-7` near it).
#[inline(always)]
pub fn fast_ln(x: f32) -> f32 {
    const SQRTHF: f32 = std::f32::consts::FRAC_1_SQRT_2;
    let bits = x.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 126;
    // mantissa in [0.5, 1)
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000);
    let small = m < SQRTHF;
    e -= small as i32;
    m = if small { m + m - 1.0 } else { m - 1.0 };
    let ef = e as f32;
    let z = m * m;
    let mut y = 7.037_683_6e-2_f32;
    y = y * m - 1.151_461e-1;
    y = y * m + 1.167_699_9e-1;
    y = y * m - 1.242_014_1e-1;
    y = y * m + 1.424_932_3e-1;
    y = y * m - 1.666_805_8e-1;
    y = y * m + 2.000_071_4e-1;
    y = y * m - 2.499_999_4e-1;
    y = y * m + 3.333_333e-1;
    y = y * m * z;
    y += ef * -2.121_944_4e-4;
    y += -0.5 * z;
    m + y + ef * 0.693_359_4
}

/// The logistic function `σ(x) = 1 / (1 + e^{−x})` in `f32` (via [`fast_exp`]).
#[inline(always)]
pub fn fast_sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + fast_exp(-x))
}

/// `softplus(x) = ln(1 + e^x)` in `f32`, computed as `max(x, 0) + ln(1 + e^{−|x|})`, the
/// logarithm corrected as `ln(u) · t / (u − 1)` with `u = 1 + t` (Goldberg's trick) so small
/// results keep their relative accuracy.
#[inline(always)]
pub fn fast_softplus(x: f32) -> f32 {
    x.max(0.0) + fast_log1p_exp_neg(x.abs())
}

/// `ln(1 + e^{−a})` for `a ≥ 0` in `f32`, branch-free (the bounded part of softplus, in
/// `(0, ln 2]`, absolute error below `2e-7`); `ln(1 + t)` is computed as `ln(u) · t / (u − 1)`,
/// `u = 1 + t`, which cancels the rounding of `1 + t` (Goldberg's trick).
#[inline(always)]
pub fn fast_log1p_exp_neg(a: f32) -> f32 {
    let t = fast_exp(-a);
    let u = 1.0 + t;
    let d = u - 1.0;
    // both sides computed, then selected: no branch, so loops vectorize
    let corrected = fast_ln(u) * (t / d);
    if d == 0.0 {
        t
    } else {
        corrected
    }
}

/// `softplus(x) = ln(1 + e^x)` in `f64`, stable for every finite `x` (reference precision).
#[inline]
pub fn softplus_f64(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// `σ(x) = 1 / (1 + e^{−x})` in `f64` (reference precision).
#[inline]
pub fn sigmoid_f64(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_math_is_accurate() {
        let mut worst = [0f64; 4];
        for i in -20_000..=20_000 {
            let x = i as f32 * 0.004; // [-80, 80]
            let xd = f64::from(x);
            let e = f64::from(fast_exp(x));
            worst[0] = worst[0].max(((e - xd.exp()) / xd.exp()).abs());
            let s = f64::from(fast_sigmoid(x));
            worst[1] = worst[1].max((s - sigmoid_f64(xd)).abs());
            let sp = f64::from(fast_softplus(x));
            let spr = softplus_f64(xd);
            worst[2] = worst[2].max(((sp - spr) / spr.max(1e-30)).abs());
            let y = (x.abs() + 1e-3) * 1.7;
            let l = f64::from(fast_ln(y));
            worst[3] =
                worst[3].max((l - f64::from(y).ln()).abs() / f64::from(y).ln().abs().max(1.0));
        }
        assert!(worst[0] < 5e-7, "exp {}", worst[0]);
        assert!(worst[1] < 2e-7, "sigmoid {}", worst[1]);
        assert!(worst[2] < 5e-7, "softplus {}", worst[2]);
        assert!(worst[3] < 5e-7, "ln {}", worst[3]);
        // clamps instead of overflowing
        assert!(fast_exp(1000.0).is_finite() && fast_exp(-1000.0) >= 0.0);
        assert_eq!(fast_sigmoid(-200.0), fast_sigmoid(-200.0).max(0.0));
        assert!((fast_softplus(200.0) - 200.0).abs() < 1e-4);
    }

    #[test]
    fn log1p_exp_neg_matches_reference() {
        for v in (0..1001).map(|i| f64::from(i) * 0.061 - 30.0) {
            let want = (-v.abs()).exp().ln_1p();
            let got = f64::from(fast_log1p_exp_neg(v.abs() as f32));
            assert!((got - want).abs() < 2e-7, "{v}: {got} vs {want}");
        }
    }
}
