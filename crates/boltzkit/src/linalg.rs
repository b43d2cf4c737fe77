//! The one home of fast elementwise math shared by the models.

use rayon::prelude::*;

/// Elements per chunk of a parallel sum; fixed so sums do not depend on the thread count.
const SUM_CHUNK: usize = 1 << 14;

/// `Σ_i f(v_i)` in parallel, bit-identical for any number of threads: fixed chunks are summed
/// in parallel, then the chunk sums in order.
pub fn deterministic_sum(v: &[f64], f: impl Fn(f64) -> f64 + Sync) -> f64 {
    let partial: Vec<f64> = v
        .par_chunks(SUM_CHUNK)
        .map(|c| c.iter().map(|&x| f(x)).sum::<f64>())
        .collect();
    partial.iter().sum()
}

/// `ln Σ_i e^{v_i}`, computed stably (max-shifted); `−∞` for an empty slice.
pub fn log_sum_exp(v: &[f64]) -> f64 {
    let m = v.par_iter().cloned().reduce(|| f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        return m;
    }
    m + deterministic_sum(v, |x| (x - m).exp()).ln()
}

/// Replaces `v` by `e^{v_i − ln Z}` (a normalized distribution) and returns `ln Z`.
pub fn exp_normalize(v: &mut [f64]) -> f64 {
    let log_z = log_sum_exp(v);
    v.par_iter_mut().for_each(|x| *x = (*x - log_z).exp());
    log_z
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_sum_exp_is_stable() {
        let v = [1000.0, 1000.0];
        assert!((log_sum_exp(&v) - (1000.0 + 2f64.ln())).abs() < 1e-12);
        assert_eq!(log_sum_exp(&[]), f64::NEG_INFINITY);
        let mut p = vec![0.0, 2f64.ln()];
        let lz = exp_normalize(&mut p);
        assert!((lz - 3f64.ln()).abs() < 1e-12);
        assert!((p[0] - 1.0 / 3.0).abs() < 1e-12 && (p[1] - 2.0 / 3.0).abs() < 1e-12);
    }
}

// ---------------------------------------------------------------------------------------------
// f32 GEMM and vectorizable elementwise kernels (RBM hot paths).
// ---------------------------------------------------------------------------------------------

/// Whether a GEMM operand is used as stored or transposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// The matrix as stored.
    N,
    /// Its transpose.
    T,
}

/// `C ← α·op(A)·op(B) + β·C` for row-major, contiguous `f32` matrices; the one GEMM entry point.
///
/// `op(A)` is `m × k` and `op(B)` is `k × n`; `A` is stored `m × k` for [`Op::N`] and `k × m` for
/// [`Op::T`] (likewise `B`), and `C` is `m × n`. With `β = 0`, `C` is only written (NaNs in it
/// do not propagate). The backend is the `gemm` crate (pure Rust, SIMD kernels chosen at run
/// time; measured fastest of `gemm`, `faer` and `matrixmultiply` on the RBM shapes), run
/// single-threaded here; [`sgemm_par`] splits `C` over threads. RBM uses: `V·W` (hidden input),
/// `H·Wᵀ` (visible input), `Vᵀ·H` (statistics).
///
/// # Panics
/// When a slice is shorter than its stated shape (a programming error, not user input).
#[allow(clippy::too_many_arguments)]
pub fn sgemm(
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c: &mut [f32],
) {
    gemm_dispatch(op_a, op_b, m, n, k, alpha, a, b, beta, c, false);
}

/// [`sgemm`] with `C` split into fixed blocks of [`GEMM_BLOCK`] columns (when `n ≥ m`) or rows
/// computed in parallel on the current rayon pool. The split depends only on the shapes, so
/// the result is the same bits for any number of threads.
///
/// # Panics
/// When a slice is shorter than its stated shape (a programming error, not user input).
#[allow(clippy::too_many_arguments)]
pub fn sgemm_par(
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c: &mut [f32],
) {
    gemm_dispatch(op_a, op_b, m, n, k, alpha, a, b, beta, c, true);
}

/// [`sgemm`] in `f64` (the same backend, single-threaded): the FVBM pseudo-likelihood's
/// `X·P` and `Xᵀ·R` on blocks of rows, which the caller runs in parallel
/// ([`crate::fvbm::plm`]).
///
/// # Panics
/// When a slice is shorter than its stated shape (a programming error, not user input).
#[allow(clippy::too_many_arguments)]
pub fn dgemm(
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: f64,
    a: &[f64],
    b: &[f64],
    beta: f64,
    c: &mut [f64],
) {
    gemm_dispatch(op_a, op_b, m, n, k, alpha, a, b, beta, c, false);
}

/// The element types of the GEMM entry points.
trait GemmScalar: Copy + PartialEq + std::ops::MulAssign + Send + Sync + 'static {
    const ZERO: Self;
}

impl GemmScalar for f32 {
    const ZERO: Self = 0.0;
}

impl GemmScalar for f64 {
    const ZERO: Self = 0.0;
}

/// Rows or columns of `C` per parallel task in [`sgemm_par`].
pub const GEMM_BLOCK: usize = 128;

/// Products smaller than this many multiply-adds run on one thread in [`sgemm_par`].
const GEMM_PAR_MIN: usize = 1 << 20;

#[allow(clippy::too_many_arguments)]
fn gemm_dispatch<T: GemmScalar>(
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: &[T],
    b: &[T],
    beta: T,
    c: &mut [T],
    parallel: bool,
) {
    assert!(
        a.len() >= m * k,
        "sgemm: A has {} < {m}×{k} entries",
        a.len()
    );
    assert!(
        b.len() >= k * n,
        "sgemm: B has {} < {k}×{n} entries",
        b.len()
    );
    assert!(
        c.len() >= m * n,
        "sgemm: C has {} < {m}×{n} entries",
        c.len()
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        scale_or_zero(&mut c[..m * n], beta);
        return;
    }
    // (row stride, column stride) of op(A) and op(B) in their row-major storage
    let (rsa, csa) = match op_a {
        Op::N => (k, 1),
        Op::T => (1, m),
    };
    let (rsb, csb) = match op_b {
        Op::N => (n, 1),
        Op::T => (1, k),
    };
    let (pa, pb, pc) = (
        a.as_ptr() as usize,
        b.as_ptr() as usize,
        c.as_mut_ptr() as usize,
    );
    // One block: rows i0..i0+mb and columns j0..j0+nb of C.
    let block = |i0: usize, mb: usize, j0: usize, nb: usize| {
        // SAFETY: the asserts above guarantee every index the kernel touches is in bounds:
        // op(A) rows i0..i0+mb ⊆ 0..m and columns < k, with the strides of its m×k or k×m
        // storage; op(B) columns j0..j0+nb ⊆ 0..n likewise; C rows and columns in range.
        // Blocks write disjoint elements of C (borrowed mutably for this call), and C does not
        // alias A or B. `gemm` computes dst ← alpha·dst + beta·lhs·rhs, reading dst only when
        // asked to.
        unsafe {
            gemm::gemm(
                mb,
                nb,
                k,
                (pc as *mut T).add(i0 * n + j0),
                1,
                n as isize,
                beta != T::ZERO,
                (pa as *const T).add(i0 * rsa),
                csa as isize,
                rsa as isize,
                (pb as *const T).add(j0 * csb),
                csb as isize,
                rsb as isize,
                beta,
                alpha,
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
    };
    if !parallel || m * n * k < GEMM_PAR_MIN {
        block(0, m, 0, n);
    } else if n >= m {
        (0..n.div_ceil(GEMM_BLOCK)).into_par_iter().for_each(|t| {
            let j0 = t * GEMM_BLOCK;
            block(0, m, j0, GEMM_BLOCK.min(n - j0));
        });
    } else {
        (0..m.div_ceil(GEMM_BLOCK)).into_par_iter().for_each(|t| {
            let i0 = t * GEMM_BLOCK;
            block(i0, GEMM_BLOCK.min(m - i0), 0, n);
        });
    }
}

fn scale_or_zero<T: GemmScalar>(c: &mut [T], beta: T) {
    if beta == T::ZERO {
        c.fill(T::ZERO);
    } else {
        c.iter_mut().for_each(|x| *x *= beta);
    }
}

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

/// Defines a slice kernel `$name` that runs its body compiled for AVX2 when the CPU has it
/// (detected once, at run time) and for the baseline target otherwise. Rust never fuses
/// multiply-adds on its own, so both versions give the same bits.
macro_rules! multiversion {
    ($(#[$doc:meta])* pub fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        $(#[$doc])*
        pub fn $name($($arg: $ty),*) -> $ret {
            #[inline(always)]
            fn generic($($arg: $ty),*) -> $ret $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) -> $ret {
                    generic($($arg),*)
                }
                if $crate::cpu::has($crate::cpu::Feature::Avx2) {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    return unsafe { avx2($($arg),*) };
                }
            }
            generic($($arg),*)
        }
    };
}

pub mod binary;
pub mod pl_terms;

multiversion! {
    /// `x_i ← σ(x_i)` over a slice (vectorized; AVX2 when available).
    pub fn sigmoid_inplace(x: &mut [f32]) -> () {
        for v in x.iter_mut() {
            *v = fast_sigmoid(*v);
        }
    }
}

multiversion! {
    /// `x_i ← softplus(x_i)` over a slice (vectorized; AVX2 when available).
    pub fn softplus_inplace(x: &mut [f32]) -> () {
        for v in x.iter_mut() {
            *v = fast_softplus(*v);
        }
    }
}

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
    /// `x_j ← σ(β₁ x_j)` (the bits of scaling by `β₁` in `f32`, then [`sigmoid_inplace`]),
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
    /// [`sigmoid_inplace`]): `softplus(x) = max(x, 0) − ln(x > 0 ? p : 1 − p)`, one [`fast_ln`]
    /// per term of the probability not below ½ (so `1 − p` loses nothing), terms in `f32`,
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

/// Asks the CPU to bring the cache lines of `bytes` into its caches (a software prefetch
/// per 64-byte line; a hint: it changes no value and never faults, and does nothing on other
/// architectures). For reads whose addresses are known ahead but scattered, such as the
/// shuffled rows of a mini-batch, so their memory latencies overlap instead of adding up.
pub fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing architecturally and cannot fault; SSE is part of
        // the x86_64 baseline
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// Adds `bias` (length `n`) to every row of the row-major `rows × n` matrix `x`.
///
/// # Panics
/// When `x.len()` is not a multiple of `bias.len()`.
pub fn add_row_bias(x: &mut [f32], bias: &[f32]) {
    let n = bias.len();
    assert!(n > 0 && x.len().is_multiple_of(n), "add_row_bias: shape");
    for row in x.chunks_exact_mut(n) {
        row.iter_mut().zip(bias).for_each(|(v, &b)| *v += b);
    }
}

#[cfg(test)]
mod f32_tests {
    use super::*;

    fn naive(op_a: Op, op_b: Op, m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f64> {
        let at = |i: usize, l: usize| match op_a {
            Op::N => a[i * k + l],
            Op::T => a[l * m + i],
        };
        let bt = |l: usize, j: usize| match op_b {
            Op::N => b[l * n + j],
            Op::T => b[j * k + l],
        };
        let mut c = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k)
                    .map(|l| f64::from(at(i, l)) * f64::from(bt(l, j)))
                    .sum();
            }
        }
        c
    }

    #[test]
    fn sgemm_matches_naive_in_every_layout() {
        let (m, n, k) = (7, 5, 11);
        let a: Vec<f32> = (0..m * k)
            .map(|i| ((i * 37) % 19) as f32 / 19.0 - 0.4)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| ((i * 53) % 23) as f32 / 23.0 - 0.6)
            .collect();
        for op_a in [Op::N, Op::T] {
            for op_b in [Op::N, Op::T] {
                let want = naive(op_a, op_b, m, n, k, &a, &b);
                let mut c = vec![1f32; m * n];
                sgemm(op_a, op_b, m, n, k, 2.0, &a, &b, 0.5, &mut c);
                for (x, w) in c.iter().zip(&want) {
                    assert!(
                        (f64::from(*x) - (2.0 * w + 0.5)).abs() < 1e-5,
                        "{op_a:?}{op_b:?}"
                    );
                }
                let mut c = vec![f32::NAN; m * n];
                sgemm(op_a, op_b, m, n, k, 1.0, &a, &b, 0.0, &mut c);
                for (x, w) in c.iter().zip(&want) {
                    assert!((f64::from(*x) - w).abs() < 1e-5);
                }
            }
        }
        // the parallel split (both directions, ragged last block) gives the same bits
        for (m, n, k) in [(300, 70, 60), (70, 300, 60)] {
            let a: Vec<f32> = (0..m * k)
                .map(|i| ((i * 37) % 19) as f32 / 19.0 - 0.4)
                .collect();
            let b: Vec<f32> = (0..k * n)
                .map(|i| ((i * 53) % 23) as f32 / 23.0 - 0.6)
                .collect();
            for (op_a, op_b) in [
                (Op::N, Op::N),
                (Op::T, Op::N),
                (Op::N, Op::T),
                (Op::T, Op::T),
            ] {
                let mut c1 = vec![0.5f32; m * n];
                let mut c2 = c1.clone();
                sgemm(op_a, op_b, m, n, k, 1.5, &a, &b, -1.0, &mut c1);
                sgemm_par(op_a, op_b, m, n, k, 1.5, &a, &b, -1.0, &mut c2);
                assert_eq!(c1, c2, "{m}×{n}×{k} {op_a:?}{op_b:?}");
                let want = naive(op_a, op_b, m, n, k, &a, &b);
                for (x, w) in c2.iter().zip(&want) {
                    assert!((f64::from(*x) - (1.5 * w - 0.5)).abs() < 1e-4);
                }
            }
        }
        let mut c = vec![3f32; 4];
        sgemm(Op::N, Op::N, 2, 2, 0, 1.0, &[], &[], 0.0, &mut c);
        assert_eq!(c, vec![0.0; 4]);
    }

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
    fn slice_kernels_match_scalar_reference() {
        let x: Vec<f32> = (0..37).map(|i| i as f32 * 0.7 - 12.0).collect();
        let mut s = x.clone();
        sigmoid_inplace(&mut s);
        let mut p = x.clone();
        softplus_inplace(&mut p);
        let want: f64 = x.iter().map(|&v| softplus_f64(f64::from(v))).sum();
        assert!((softplus_sum(&x) - want).abs() < 1e-5 * want);
        for ((&v, &sv), &pv) in x.iter().zip(&s).zip(&p) {
            assert!((f64::from(sv) - sigmoid_f64(f64::from(v))).abs() < 2e-7);
            assert!((f64::from(pv) - softplus_f64(f64::from(v))).abs() < 1e-5);
        }
        let xd: Vec<f64> = (0..1001).map(|i| f64::from(i) * 0.061 - 30.0).collect();
        let want: f64 = xd.iter().map(|&v| softplus_f64(v)).sum();
        let got = softplus_sum_f64_fast(&xd, &mut vec![0.0; xd.len()]);
        assert!((got - want).abs() < 1001.0 * 2e-7, "{got} vs {want}");
        for &v in &xd {
            let want = (-v.abs()).exp().ln_1p();
            let got = f64::from(fast_log1p_exp_neg(v.abs() as f32));
            assert!((got - want).abs() < 2e-7, "{v}: {got} vs {want}");
        }
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
        let mut m = vec![0f32; 6];
        add_row_bias(&mut m, &[1.0, 2.0, 3.0]);
        assert_eq!(m, vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
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
