//! Elementwise work over slices: `σ` and softplus in place (vectorized, AVX2 when available),
//! a bias added to every row, and a software prefetch of scattered rows.

use super::fast_math::{fast_sigmoid, fast_softplus};

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
mod tests {
    use super::*;
    use crate::linalg::{sigmoid_f64, softplus_f64};

    #[test]
    fn maps_match_scalar_reference() {
        let x: Vec<f32> = (0..37).map(|i| i as f32 * 0.7 - 12.0).collect();
        let mut s = x.clone();
        sigmoid_inplace(&mut s);
        let mut p = x.clone();
        softplus_inplace(&mut p);
        for ((&v, &sv), &pv) in x.iter().zip(&s).zip(&p) {
            assert!((f64::from(sv) - sigmoid_f64(f64::from(v))).abs() < 2e-7);
            assert!((f64::from(pv) - softplus_f64(f64::from(v))).abs() < 1e-5);
        }
        let mut m = vec![0f32; 6];
        add_row_bias(&mut m, &[1.0, 2.0, 3.0]);
        assert_eq!(m, vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    }
}
