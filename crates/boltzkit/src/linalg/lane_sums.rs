//! Vectorized sums over `f32` slices, each term in `f32` and the lanes accumulated in `f64` in a
//! fixed order (deterministic; AVX2 when available): softplus sums, the AIS weight increments
//! of the hidden units, pop-CD's importance-weight terms, the largest magnitude.

use super::fast_math::{fast_ln, fast_log1p_exp_neg, fast_sigmoid, fast_softplus};

multiversion! {
    /// `Σ_i softplus(x_i)`, each term in `f32` and the sum accumulated in `f64` over fixed lanes
    /// (deterministic; vectorized, AVX2 when available).
    pub fn softplus_sum(x: &[f32]) -> f64 {
        const LANES: usize = 8;
        let mut acc = [0f64; LANES];
        let mut chunks = x.chunks_exact(LANES);
        for ch in &mut chunks {
            for (a, &v) in acc.iter_mut().zip(ch) {
                *a += f64::from(fast_softplus(v));
            }
        }
        let tail: f64 = chunks.remainder().iter().map(|&v| f64::from(fast_softplus(v))).sum();
        acc.iter().sum::<f64>() + tail
    }
}

multiversion! {
    /// `Σ_i softplus(x_i)` for `f64` inputs: the unbounded part `max(x_i, 0)` exactly in `f64`,
    /// the bounded part `ln(1 + e^{−|x_i|})` by [`fast_log1p_exp_neg`] in `f32` (in `scratch`,
    /// at least as long as `x`), accumulated in `f64` over fixed lanes (absolute error below
    /// `2e-7` per term, deterministic; vectorized, AVX2 when available).
    pub fn softplus_sum_f64_fast(x: &[f64], scratch: &mut [f32]) -> f64 {
        const LANES: usize = 8;
        let buf = &mut scratch[..x.len()];
        let mut pos = [0f64; LANES];
        let mut xc = x.chunks_exact(LANES);
        let mut bc = buf.chunks_exact_mut(LANES);
        for (xs, bs) in (&mut xc).zip(&mut bc) {
            for ((p, b), &v) in pos.iter_mut().zip(bs.iter_mut()).zip(xs) {
                *p += v.max(0.0);
                *b = v.abs() as f32;
            }
        }
        let mut tail = 0f64;
        for (b, &v) in bc.into_remainder().iter_mut().zip(xc.remainder()) {
            tail += v.max(0.0);
            *b = v.abs() as f32;
        }
        for b in buf.iter_mut() {
            *b = fast_log1p_exp_neg(*b);
        }
        let mut acc = [0f64; LANES];
        let mut chunks = buf.chunks_exact(LANES);
        for ch in &mut chunks {
            for (a, &v) in acc.iter_mut().zip(ch) {
                *a += f64::from(v);
            }
        }
        tail += chunks.remainder().iter().map(|&v| f64::from(v)).sum::<f64>();
        pos.iter().sum::<f64>() + acc.iter().sum::<f64>() + tail
    }
}

multiversion! {
    /// `y_i ← y_i · f_i`, then returns `Σ_i ln(1 + y_i)` (all `f64`): the products
    /// `Π (1 + y_i)` are kept per lane with their binary exponent moved into an integer every
    /// `group` factors, so one logarithm serves the whole slice. The caller picks `group` so
    /// that `group` factors cannot overflow (`(1 + max y)^group < 2^1022`). Used by the exact
    /// RBM enumeration, where `y_i = e^{x_i}` is updated multiplicatively along a Gray code.
    /// Deterministic; vectorized, AVX2 when available.
    pub fn scale_sum_log1p(y: &mut [f64], f: &[f64], group: usize) -> f64 {
        const LANES: usize = 16;
        const MANTISSA: u64 = (1 << 52) - 1;
        const ONE: u64 = 1023 << 52;
        let renorm = |prod: &mut [f64; LANES], expo: &mut [i64; LANES]| {
            for (p, e) in prod.iter_mut().zip(expo.iter_mut()) {
                let bits = p.to_bits();
                *e += ((bits >> 52) & 0x7ff) as i64 - 1023;
                *p = f64::from_bits((bits & MANTISSA) | ONE);
            }
        };
        let group = group.max(1);
        let mut prod = [1f64; LANES];
        let mut expo = [0i64; LANES];
        let mut count = 0;
        let mut yc = y.chunks_exact_mut(LANES);
        let mut fc = f.chunks_exact(LANES);
        for (ys, fs) in (&mut yc).zip(&mut fc) {
            for ((p, yv), &fv) in prod.iter_mut().zip(ys.iter_mut()).zip(fs) {
                *yv *= fv;
                *p *= 1.0 + *yv;
            }
            count += 1;
            if count == group {
                count = 0;
                renorm(&mut prod, &mut expo);
            }
        }
        let mut tail = 0f64;
        for (yv, &fv) in yc.into_remainder().iter_mut().zip(fc.remainder()) {
            *yv *= fv;
            tail += yv.ln_1p();
        }
        renorm(&mut prod, &mut expo);
        // each lane's mantissa is in [1, 2): their product cannot overflow
        let mantissa: f64 = prod.iter().product();
        let exponent: i64 = expo.iter().sum();
        mantissa.ln() + exponent as f64 * std::f64::consts::LN_2 + tail
    }
}

multiversion! {
    /// `Σ_j [softplus(β₁ x_j) − softplus(β₀ x_j)]` for `β₀, β₁ ≥ 0` (the AIS weight increment of
    /// the hidden units): `(β₁ − β₀) Σ_j max(x_j, 0)` plus the bounded parts
    /// `ln(1 + e^{−β|x_j|})` by [`fast_log1p_exp_neg`] in `f32` (absolute error below `4e-7`
    /// per term; the `β` rounded to `f32` there); lanes summed in `f64`. Deterministic;
    /// vectorized, AVX2 when available.
    pub fn softplus_scaled_diff_sum(x: &[f32], beta0: f64, beta1: f64) -> f64 {
        let (b0, b1) = (beta0 as f32, beta1 as f32);
        const LANES: usize = 8;
        let mut pos = [0f32; LANES];
        let mut bounded = [0f32; LANES];
        let mut chunks = x.chunks_exact(LANES);
        for ch in &mut chunks {
            for ((p, d), &v) in pos.iter_mut().zip(bounded.iter_mut()).zip(ch) {
                let a = v.abs();
                *p += v.max(0.0);
                *d += fast_log1p_exp_neg(b1 * a) - fast_log1p_exp_neg(b0 * a);
            }
        }
        let mut tail_pos = 0f64;
        let mut tail = 0f64;
        for &v in chunks.remainder() {
            let a = v.abs();
            tail_pos += f64::from(v.max(0.0));
            tail += f64::from(fast_log1p_exp_neg(b1 * a) - fast_log1p_exp_neg(b0 * a));
        }
        let pos: f64 = pos.iter().map(|&p| f64::from(p)).sum::<f64>() + tail_pos;
        let bounded: f64 = bounded.iter().map(|&d| f64::from(d)).sum::<f64>() + tail;
        (beta1 - beta0) * pos + bounded
    }
}

/// Largest `|(β₁ − β₀) x|` for which [`sigmoid_with_softplus_gain`]'s series replaces the
/// difference of two logarithms: its remainder is at most `δ⁴ / 192 ≈ 5e-11` per unit there,
/// far below the rounding of the difference of two `f32` softplus values (about `4e-7` per
/// unit, [`softplus_scaled_diff_sum`]).
pub const SOFTPLUS_SERIES_MAX_STEP: f32 = 0.01;

multiversion! {
    /// The largest `|x_i|` (0 for an empty slice; vectorized, AVX2 when available).
    pub fn max_abs(x: &[f32]) -> f32 {
        const LANES: usize = 8;
        let mut m = [0f32; LANES];
        let mut chunks = x.chunks_exact(LANES);
        for ch in &mut chunks {
            for (m, &v) in m.iter_mut().zip(ch) {
                *m = m.max(v.abs());
            }
        }
        let tail = chunks.remainder().iter().fold(0f32, |a, &v| a.max(v.abs()));
        m.iter().fold(tail, |a, &b| a.max(b))
    }
}

multiversion! {
    /// `x_j ← σ(β₁ x_j)` (the bits of scaling by `β₁` in `f32`, then
    /// [`sigmoid_inplace`](super::sigmoid_inplace)),
    /// returning `Σ_j [softplus(β₁ x_j) − softplus(β₀ x_j)]` (the AIS weight increment of the
    /// hidden units) from those probabilities `p` by the Taylor series of softplus at
    /// `β₁ x_j`: with `δ = (β₁ − β₀) x_j`, `δ p − δ²/2 · p(1 − p) + δ³/6 · p(1 − p)(1 − 2p)`.
    /// Accurate to `5e-11` per unit when every `|δ| ≤` [`SOFTPLUS_SERIES_MAX_STEP`] (the caller
    /// checks, [`max_abs`]); no logarithm, so an AIS step near `β = 1` (`β₁ − β₀ = 1e-5`)
    /// costs one exponential per hidden unit instead of three. Terms in `f32`, lanes summed
    /// in `f64`; deterministic; vectorized, AVX2 when available.
    pub fn sigmoid_with_softplus_gain(x: &mut [f32], beta0: f64, beta1: f64) -> f64 {
        const LANES: usize = 8;
        let (b1, d) = (beta1 as f32, (beta1 - beta0) as f32);
        let term = |v: &mut f32| {
            let p = fast_sigmoid(*v * b1);
            let delta = d * *v;
            let q = p * (1.0 - p);
            *v = p;
            delta * (p - delta * (0.5 * q) + delta * delta * (q * (1.0 - 2.0 * p) * (1.0 / 6.0)))
        };
        let mut acc = [0f32; LANES];
        let mut chunks = x.chunks_exact_mut(LANES);
        for ch in &mut chunks {
            for (a, v) in acc.iter_mut().zip(ch.iter_mut()) {
                *a += term(v);
            }
        }
        let tail: f64 = chunks.into_remainder().iter_mut().map(|v| f64::from(term(v))).sum();
        acc.iter().map(|&a| f64::from(a)).sum::<f64>() + tail
    }
}

/// `Σ_i term(a_i, b_i, c_i)` over the common length, each term in `f32`, summed in `f64` over
/// fixed lanes (deterministic); inlined into the multiversioned kernels below, where it
/// vectorizes when `term` is branch-free.
#[inline(always)]
fn lane_sum3(a: &[f32], b: &[f32], c: &[f32], term: impl Fn(f32, f32, f32) -> f32) -> f64 {
    const LANES: usize = 8;
    let n = a.len().min(b.len()).min(c.len());
    let (a, b, c) = (&a[..n], &b[..n], &c[..n]);
    let mut acc = [0f64; LANES];
    let mut ac = a.chunks_exact(LANES);
    let mut bc = b.chunks_exact(LANES);
    let mut cc = c.chunks_exact(LANES);
    for ((xs, ys), zs) in (&mut ac).zip(&mut bc).zip(&mut cc) {
        let mut t = [0f32; LANES];
        for (((t, &x), &y), &z) in t.iter_mut().zip(xs).zip(ys).zip(zs) {
            *t = term(x, y, z);
        }
        for (s, &v) in acc.iter_mut().zip(&t) {
            *s += f64::from(v);
        }
    }
    let tail: f64 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .zip(cc.remainder())
        .map(|((&x, &y), &z)| f64::from(term(x, y, z)))
        .sum();
    acc.iter().sum::<f64>() + tail
}

multiversion! {
    /// `bᵀx − Σ_i ln P(x_i)` for 0/1 values `x_i` drawn as independent Bernoulli(`p_i`): the
    /// visible part of pop-CD's log importance weight `ln p̃(v′) − ln p(v′ | h′)` (Eq. 8 of the
    /// pop-CD paper). `P(x_i)` is `p_i` or `1 − p_i` in `f32`, its logarithm by [`fast_ln`],
    /// each term in `f32`; terms summed in `f64` over fixed lanes (deterministic; vectorized,
    /// AVX2 when available). A zero `P(x_i)` (a value the sampler cannot draw) gives `+∞`.
    pub fn linear_minus_bernoulli_log_prob(b: &[f32], p: &[f32], x: &[f32]) -> f64 {
        lane_sum3(b, p, x, |b, p, x| {
            let on = x > 0.5;
            let q = if on { p } else { 1.0 - p };
            let lin = if on { b } else { 0.0 };
            let t = lin - fast_ln(q.max(f32::MIN_POSITIVE));
            if q > 0.0 {
                t
            } else {
                f32::INFINITY
            }
        })
    }
}

multiversion! {
    /// `Σ_i softplus(x_i)` given `p_i = σ(x_i)` as already computed (e.g. by
    /// [`sigmoid_inplace`](super::sigmoid_inplace)):
    /// `softplus(x) = max(x, 0) − ln(x > 0 ? p : 1 − p)`, one [`fast_ln`] per term of the probability not below ½ (so `1 − p` loses nothing), terms in `f32`,
    /// summed in `f64` over fixed lanes (deterministic; vectorized, AVX2 when available).
    /// Agrees with [`softplus_sum`] to the accuracy of `σ` (about `2e-7` per term); pop-CD's
    /// `ln p̃(v′)` uses it to reuse `p(h | v′)`.
    pub fn softplus_sum_given_sigmoid(x: &[f32], p: &[f32]) -> f64 {
        lane_sum3(x, p, x, |x, p, _| {
            let pos = x > 0.0;
            let q = if pos { p } else { 1.0 - p };
            x.max(0.0) - fast_ln(q.max(f32::MIN_POSITIVE))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{sigmoid_f64, sigmoid_inplace, softplus_f64};

    #[test]
    fn slice_kernels_match_scalar_reference() {
        let x: Vec<f32> = (0..37).map(|i| i as f32 * 0.7 - 12.0).collect();
        let want: f64 = x.iter().map(|&v| softplus_f64(f64::from(v))).sum();
        assert!((softplus_sum(&x) - want).abs() < 1e-5 * want);
        let xd: Vec<f64> = (0..1001).map(|i| f64::from(i) * 0.061 - 30.0).collect();
        let want: f64 = xd.iter().map(|&v| softplus_f64(v)).sum();
        let got = softplus_sum_f64_fast(&xd, &mut vec![0.0; xd.len()]);
        assert!((got - want).abs() < 1001.0 * 2e-7, "{got} vs {want}");
        for len in [0, 5, 16, 37, 200] {
            let x: Vec<f64> = (0..len).map(|i| f64::from(i) * 0.37 - 30.0).collect();
            let f: Vec<f64> = (0..len)
                .map(|i| (f64::from(i) * 0.11 - 1.0).exp())
                .collect();
            let mut y: Vec<f64> = x.iter().map(|v| v.exp()).collect();
            let want: f64 = x
                .iter()
                .zip(&f)
                .map(|(&v, &g)| softplus_f64(v + g.ln()))
                .sum();
            for group in [1, 3] {
                let mut yy = y.clone();
                let got = scale_sum_log1p(&mut yy, &f, group);
                assert!(
                    (got - want).abs() < 1e-12 * want.max(1.0),
                    "{len}: {got} vs {want}"
                );
            }
            scale_sum_log1p(&mut y, &f, 1);
            for ((&yv, &v), &g) in y.iter().zip(&x).zip(&f) {
                assert!((yv.ln() - (v + g.ln())).abs() < 1e-12);
            }
        }
        let x: Vec<f32> = (0..203).map(|i| i as f32 * 0.3 - 30.0).collect();
        for (b0, b1) in [(0.0, 0.001), (0.5, 0.5001), (0.99, 1.0)] {
            let want: f64 = x
                .iter()
                .map(|&v| softplus_f64(b1 * f64::from(v)) - softplus_f64(b0 * f64::from(v)))
                .sum();
            let got = softplus_scaled_diff_sum(&x, b0, b1);
            assert!(
                (got - want).abs() < 203.0 * 4e-7,
                "{b0},{b1}: {got} vs {want}"
            );
        }
        // the series: the bits of scale-then-sigmoid, and the difference of the exact
        // softplus values within its remainder and the f32 rounding of its terms
        for (b0, b1) in [(0.99, 0.99001), (0.5, 0.5001), (0.0, 0.0003), (0.7, 0.7)] {
            let want: f64 = x
                .iter()
                .map(|&v| softplus_f64(b1 * f64::from(v)) - softplus_f64(b0 * f64::from(v)))
                .sum();
            assert!((b1 - b0) as f32 * max_abs(&x) <= SOFTPLUS_SERIES_MAX_STEP);
            let mut p = x.clone();
            let got = sigmoid_with_softplus_gain(&mut p, b0, b1);
            let mut q: Vec<f32> = x.iter().map(|&v| v * b1 as f32).collect();
            sigmoid_inplace(&mut q);
            assert_eq!(p, q);
            assert!(
                (got - want).abs() < 203.0 * 2e-9,
                "{b0},{b1}: {got} vs {want}"
            );
            if b0 == b1 {
                assert_eq!(got, 0.0);
            }
        }
        assert_eq!(max_abs(&x), x.iter().fold(0f32, |a, &v| a.max(v.abs())));
        assert_eq!(max_abs(&[]), 0.0);
    }

    /// The pop-CD weight kernel against its definition in `f64` (lengths with and without a
    /// tail, probabilities from σ(−35) ≈ 6e-16 to σ(15) ≈ 1 − 3e-7).
    #[test]
    fn linear_minus_bernoulli_log_prob_matches_reference() {
        for len in [5usize, 16, 203] {
            let p: Vec<f32> = (0..len)
                .map(|i| sigmoid_f64((i as f64 * 0.37) % 50.0 - 35.0) as f32)
                .collect();
            let x: Vec<f32> = (0..len)
                .map(|i| ((i * 7 + 3) % 5 < 2) as u8 as f32)
                .collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).sin()).collect();
            let want: f64 = (0..len)
                .map(|i| {
                    let (pi, on) = (f64::from(p[i]), x[i] > 0.5);
                    if on {
                        f64::from(b[i]) - pi.ln()
                    } else {
                        -(1.0 - pi).ln()
                    }
                })
                .sum();
            let got = linear_minus_bernoulli_log_prob(&b, &p, &x);
            assert!(
                (got - want).abs() < 1e-6 * want.abs().max(1.0),
                "{len}: {got} vs {want}"
            );
        }
        assert_eq!(
            linear_minus_bernoulli_log_prob(&[0.0], &[0.0], &[1.0]),
            f64::INFINITY
        );
        // softplus from the sigmoid, against the f64 reference over [−90, 90]
        for len in [7usize, 64, 301] {
            let x: Vec<f32> = (0..len)
                .map(|i| (i as f32 * 0.61).rem_euclid(180.0) - 90.0)
                .collect();
            let mut p = x.clone();
            sigmoid_inplace(&mut p);
            let want: f64 = x.iter().map(|&v| softplus_f64(f64::from(v))).sum();
            let got = softplus_sum_given_sigmoid(&x, &p);
            assert!(
                (got - want).abs() < 1e-6 * want.max(1.0),
                "{len}: {got} vs {want}"
            );
            assert!((got - softplus_sum(&x)).abs() < 1e-6 * want.max(1.0));
        }
    }
}
