//! Deterministic parallel reductions over `f64` slices: sums in fixed chunks (the same bits for
//! any number of threads), `ln Σ e^v` and normalization by it.

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
