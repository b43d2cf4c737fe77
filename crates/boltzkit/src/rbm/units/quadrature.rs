//! (tests) Numerical integration, the brute-force twin of the continuous units' closed forms:
//! tanh-sinh quadrature (step 1/16, `|t| ≤ 4`) on equal pieces of the interval where the
//! integrand is within `e^{−800}` of its maximum, the integrand scaled by that maximum.

/// `∫_a^b f` by tanh-sinh on `pieces` equal pieces.
pub fn tanh_sinh(f: &impl Fn(f64) -> f64, a: f64, b: f64, pieces: usize) -> f64 {
    let h = 1.0 / 16.0;
    let width = (b - a) / pieces as f64;
    let half_pi = std::f64::consts::FRAC_PI_2;
    let mut total = 0.0;
    for p in 0..pieces {
        let (lo, hi) = (a + width * p as f64, a + width * (p + 1) as f64);
        let (mid, rad) = (0.5 * (lo + hi), 0.5 * (hi - lo));
        let mut sum = 0.0;
        for k in -64i32..=64 {
            let t = f64::from(k) * h;
            let u = half_pi * t.sinh();
            let x = mid + rad * u.tanh();
            let w = half_pi * t.cosh() / (u.cosh() * u.cosh());
            if w > 0.0 && x > lo - rad && x < hi + rad {
                sum += w * f(x.clamp(lo, hi));
            }
        }
        total += sum * h * rad;
    }
    total
}

/// `(ln Z, E[h], E[h²])` of the density `∝ e^{−γh²/2 + b h}` on `h ≥ 0` by quadrature.
pub fn ln_half_line(gamma: f64, b: f64) -> (f64, f64, f64) {
    let s = 1.0 / gamma.sqrt();
    let mode = (b / gamma).max(0.0);
    let g = |h: f64| -0.5 * gamma * h * h + b * h;
    let g_max = g(mode);
    let (lo, hi) = if b >= 0.0 {
        ((mode - 40.0 * s).max(0.0), mode + 40.0 * s)
    } else {
        (0.0, (40.0 * s).min(800.0 / -b))
    };
    let pieces = 64;
    let z = tanh_sinh(&|h| (g(h) - g_max).exp(), lo, hi, pieces);
    let m1 = tanh_sinh(&|h| h * (g(h) - g_max).exp(), lo, hi, pieces) / z;
    let m2 = tanh_sinh(&|h| h * h * (g(h) - g_max).exp(), lo, hi, pieces) / z;
    (g_max + z.ln(), m1, m2)
}
