//! Small statistics of repeated runs: mean, sample standard deviation, median, and the normal
//! and Student-t quantiles of confidence intervals. One copy for the whole workspace (the
//! paper protocols of `boltzkit-repro`, the gradient lab, FVBM inference, the benches).
//!
//! Empty input has no mean, spread or median: those functions return `None`, and each caller
//! says what it prints instead.
//!
//! ```
//! use boltzkit::estimate::stats::{mean, mean_sd, median, t95};
//! assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
//! let (m, sd) = mean_sd(&[2.0, 4.0]).unwrap();
//! assert_eq!((m, sd), (3.0, 2f64.sqrt()));
//! assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
//! assert!((t95(4) - 2.776).abs() < 1e-2);
//! ```

/// The arithmetic mean (summed left to right), `None` for no values.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The mean and the sample standard deviation (divisor `n − 1`; 0 for a single value),
/// `None` for no values.
pub fn mean_sd(xs: &[f64]) -> Option<(f64, f64)> {
    let m = mean(xs)?;
    let n = xs.len() as f64;
    let v = if xs.len() > 1 {
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    Some((m, v.sqrt()))
}

/// The median (the mean of the two middle values for an even count; NaN sorts last),
/// `None` for no values.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    })
}

/// Mean and sample standard deviation at each of the first `len` positions of several
/// series (the curves of repeated runs); a series shorter than `len` (a run that stopped
/// early) counts only where it has values. `None` at a position no series reaches.
pub fn mean_sd_by_position(series: &[Vec<f64>], len: usize) -> Vec<Option<(f64, f64)>> {
    (0..len)
        .map(|i| {
            let xs: Vec<f64> = series.iter().filter_map(|c| c.get(i).copied()).collect();
            mean_sd(&xs)
        })
        .collect()
}

/// The two-sided 95% quantile of Student's t with `df ≥ 1` degrees of freedom (Cornish-Fisher
/// expansion around the normal; within 2e-3 of the exact value for `df ≥ 3`).
pub fn t95(df: usize) -> f64 {
    let z = 1.959_963_984_540_054f64;
    let n = df.max(1) as f64;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * n)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * n * n * n)
}

/// The standard normal quantile `Φ⁻¹(p)`, `0 < p < 1` (Acklam's rational approximation,
/// relative error below 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sd_against_known_values() {
        assert_eq!(mean(&[]), None);
        assert_eq!(mean_sd(&[]), None);
        assert_eq!(mean_sd(&[5.0]), Some((5.0, 0.0)));
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32 / 7
        let (m, sd) = mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(m, 5.0);
        assert!((sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn by_position_handles_short_series() {
        let r = mean_sd_by_position(&[vec![1.0, 2.0, 3.0], vec![3.0, 4.0]], 4);
        assert_eq!(r[0].unwrap().0, 2.0);
        assert!((r[0].unwrap().1 - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(r[1].unwrap().0, 3.0);
        assert_eq!(r[2], Some((3.0, 0.0)));
        assert_eq!(r[3], None);
    }

    #[test]
    fn quantiles_against_tables() {
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-8);
        assert!((normal_quantile(0.01) + 2.326_347_874_040_841).abs() < 1e-8);
        assert!((normal_quantile(0.999) - 3.090_232_306_167_813).abs() < 1e-8);
        // Student's t, two-sided 95%: 2.093 (19 df), 2.776 (4), 1.962 (1000)
        assert!((t95(19) - 2.093).abs() < 2e-3);
        assert!((t95(4) - 2.776).abs() < 1e-2);
        assert!((t95(1000) - 1.962).abs() < 1e-3);
    }
}
