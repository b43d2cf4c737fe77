//! [`DRelu`]: the double-sided ReLU of Tubiana, Cocco & Monasson (eLife 2019; PGM's dReLU),
//! `U(h) = γ₊h₊²/2 + θ₊h₊ + γ₋h₋²/2 + θ₋h₋` with `h₊ = max(h, 0)`, `h₋ = max(−h, 0)`:
//! two half-Gaussians joined at 0, so `Γ(I) = ln(Z₊ + Z₋)` with
//! `ln Z₊ = ½ ln(π/(2γ₊)) + ln erfcx((θ₊ − I)/√(2γ₊))` and
//! `ln Z₋ = ½ ln(π/(2γ₋)) + ln erfcx((θ₋ + I)/√(2γ₋))`, their log-sum-exp: finite at every
//! input (each term is, by [`special::ln_erfcx`]). Given the input, `h ≥ 0` with probability
//! `p₊ = σ(ln Z₊ − ln Z₋)`, then a half-Gaussian on that side.
//!
//! PGM's gauge: `γ₊ = γ/(1 + η)`, `γ₋ = γ/(1 − η)`, `θ₊ = θ + δ/√(1 + η)`,
//! `θ₋ = −θ + δ/√(1 − η)` with `γ > 0`, `|η| < 1` ([`DRelu::from_gauge`], [`DRelu::gauge`]):
//! `γ` the scale, `θ` the shift, `δ` the gap at 0 and `η` the asymmetry. `γ₊ = γ₋`,
//! `θ₊ = −θ₋` is a Gaussian unit.

use super::special;
use super::unit_type::{UnitType, GAMMA_MIN};
use crate::error::{Error, Result};
use rand::Rng;

/// A layer of dReLU units.
#[derive(Debug, Clone, PartialEq)]
pub struct DRelu {
    gamma_plus: Vec<f32>,
    gamma_minus: Vec<f32>,
    theta_plus: Vec<f32>,
    theta_minus: Vec<f32>,
}

/// One unit's `(ln Z₊, ln Z₋)` at input `i` for `[γ₊, γ₋, θ₊, θ₋]`.
fn sides(i: f64, [gp, gm, tp, tm]: [f64; 4]) -> (f64, f64) {
    (
        special::ln_half_gauss(gp, i - tp),
        special::ln_half_gauss(gm, -i - tm),
    )
}

/// One unit's `Γ(I) = ln(Z₊ + Z₋)` for `[γ₊, γ₋, θ₊, θ₋]` (every `γ > 0`), finite for every
/// finite input.
pub fn ln_partition(i: f64, params: [f64; 4]) -> f64 {
    let (a, b) = sides(i, params);
    a.max(b) + (-(a - b).abs()).exp().ln_1p()
}

/// One unit's `(E[h], E[h²])` at input `i`.
pub fn moments(i: f64, params: [f64; 4]) -> (f64, f64) {
    let [gp, gm, tp, tm] = params;
    let (a, b) = sides(i, params);
    let p_plus = crate::linalg::sigmoid_f64(a - b);
    let (m_plus, s_plus) = special::half_gauss_moments(gp, i - tp);
    let (m_minus, s_minus) = special::half_gauss_moments(gm, -i - tm);
    (
        p_plus * m_plus - (1.0 - p_plus) * m_minus,
        p_plus * s_plus + (1.0 - p_plus) * s_minus,
    )
}

impl DRelu {
    /// The layer from `γ₊, γ₋` (finite, `> 0`) and `θ₊, θ₋` (finite), all of one length.
    pub fn new(
        gamma_plus: Vec<f32>,
        gamma_minus: Vec<f32>,
        theta_plus: Vec<f32>,
        theta_minus: Vec<f32>,
    ) -> Result<Self> {
        let n = gamma_plus.len();
        super::check::same_len(
            "DRelu::new",
            &[
                ("gamma_minus", gamma_minus.len()),
                ("theta_plus", theta_plus.len()),
                ("theta_minus", theta_minus.len()),
            ],
            n,
        )?;
        super::check::params("gamma_plus", &gamma_plus, Some(0.0))?;
        super::check::params("gamma_minus", &gamma_minus, Some(0.0))?;
        super::check::params("theta_plus", &theta_plus, None)?;
        super::check::params("theta_minus", &theta_minus, None)?;
        Ok(DRelu {
            gamma_plus,
            gamma_minus,
            theta_plus,
            theta_minus,
        })
    }

    /// The layer from PGM's gauge `(γ, θ, δ, η)` per unit (`γ > 0`, `|η| < 1`).
    pub fn from_gauge(gamma: &[f32], theta: &[f32], delta: &[f32], eta: &[f32]) -> Result<Self> {
        if let Some(j) = eta.iter().position(|e| e.is_nan() || e.abs() >= 1.0) {
            return Err(Error::param(
                format!("eta[{j}]"),
                format!("{} is not inside (−1, 1)", eta[j]),
            ));
        }
        let n = gamma.len();
        super::check::same_len(
            "DRelu::from_gauge",
            &[
                ("theta", theta.len()),
                ("delta", delta.len()),
                ("eta", eta.len()),
            ],
            n,
        )?;
        let f = |v: &[f32], j: usize| f64::from(v[j]);
        let map = |g: &dyn Fn(usize) -> f64| (0..n).map(|j| g(j) as f32).collect::<Vec<f32>>();
        DRelu::new(
            map(&|j| f(gamma, j) / (1.0 + f(eta, j))),
            map(&|j| f(gamma, j) / (1.0 - f(eta, j))),
            map(&|j| f(theta, j) + f(delta, j) / (1.0 + f(eta, j)).sqrt()),
            map(&|j| -f(theta, j) + f(delta, j) / (1.0 - f(eta, j)).sqrt()),
        )
    }

    /// PGM's gauge `(γ, θ, δ, η)` per unit, the inverse of [`DRelu::from_gauge`]:
    /// `γ = 2/(1/γ₊ + 1/γ₋)`, `η = (γ/γ₊ − γ/γ₋)/2`,
    /// `δ = (θ₊ + θ₋)/(1/√(1 + η) + 1/√(1 − η))`, `θ = θ₊ − δ/√(1 + η)`.
    pub fn gauge(&self) -> [Vec<f32>; 4] {
        let n = self.n_units();
        let mut out = [vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]];
        for j in 0..n {
            let [gp, gm, tp, tm] = self.params(j);
            let gamma = 2.0 / (1.0 / gp + 1.0 / gm);
            let eta = 0.5 * (gamma / gp - gamma / gm);
            let (sp, sm) = ((1.0 + eta).sqrt(), (1.0 - eta).sqrt());
            let delta = (tp + tm) / (1.0 / sp + 1.0 / sm);
            let theta = tp - delta / sp;
            for (o, v) in out.iter_mut().zip([gamma, theta, delta, eta]) {
                o[j] = v as f32;
            }
        }
        out
    }

    /// The layer's `[γ₊, γ₋, θ₊, θ₋]`, each one value per unit.
    pub fn sides(&self) -> [&[f32]; 4] {
        [
            &self.gamma_plus,
            &self.gamma_minus,
            &self.theta_plus,
            &self.theta_minus,
        ]
    }

    /// `[γ₊, γ₋, θ₊, θ₋]` of unit `j` in `f64`.
    pub fn params(&self, j: usize) -> [f64; 4] {
        [
            f64::from(self.gamma_plus[j]),
            f64::from(self.gamma_minus[j]),
            f64::from(self.theta_plus[j]),
            f64::from(self.theta_minus[j]),
        ]
    }
}

impl UnitType for DRelu {
    fn n_units(&self) -> usize {
        self.gamma_plus.len()
    }

    fn energy(&self, x: &[f32]) -> f64 {
        (0..self.n_units())
            .map(|j| {
                let [gp, gm, tp, tm] = self.params(j);
                let h = f64::from(x[j]);
                if h >= 0.0 {
                    0.5 * gp * h * h + tp * h
                } else {
                    0.5 * gm * h * h - tm * h
                }
            })
            .sum()
    }

    fn log_partition(&self, input: &[f32]) -> f64 {
        (0..self.n_units())
            .map(|j| ln_partition(f64::from(input[j]), self.params(j)))
            .sum()
    }

    fn mean(&self, input: &[f32], out: &mut [f32]) {
        for (j, o) in out.iter_mut().enumerate() {
            *o = moments(f64::from(input[j]), self.params(j)).0 as f32;
        }
    }

    fn sample<R: Rng + ?Sized>(&self, input: &[f32], out: &mut [f32], rng: &mut R) {
        for (j, o) in out.iter_mut().enumerate() {
            let i = f64::from(input[j]);
            let params @ [gp, gm, tp, tm] = self.params(j);
            let (a, b) = sides(i, params);
            let p_plus = crate::linalg::sigmoid_f64(a - b);
            *o = if rng.random::<f64>() < p_plus {
                special::sample_half_gauss(gp, i - tp, rng)
            } else {
                -special::sample_half_gauss(gm, -i - tm, rng)
            } as f32;
        }
    }

    fn check_state(&self, x: &[f32]) -> Result<()> {
        super::check::real_state("dReLU state", x, self.n_units(), false)
    }

    /// The layer itself: its own energy is kept along the AIS path, as for [`super::Relu`].
    fn ais_base(&self, _data: Option<&[f32]>) -> Result<Self> {
        Ok(self.clone())
    }

    fn interpolate(&self, base: &Self, beta: f64, out: &mut Self) {
        use super::check::lerp;
        lerp(
            &base.gamma_plus,
            &self.gamma_plus,
            beta,
            &mut out.gamma_plus,
        );
        lerp(
            &base.gamma_minus,
            &self.gamma_minus,
            beta,
            &mut out.gamma_minus,
        );
        lerp(
            &base.theta_plus,
            &self.theta_plus,
            beta,
            &mut out.theta_plus,
        );
        lerp(
            &base.theta_minus,
            &self.theta_minus,
            beta,
            &mut out.theta_minus,
        );
    }

    /// `θ = (γ₊, γ₋, θ₊, θ₋)`, each a block of `n` values.
    fn trainable(&self) -> Vec<f64> {
        let f = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
        [
            f(&self.gamma_plus),
            f(&self.gamma_minus),
            f(&self.theta_plus),
            f(&self.theta_minus),
        ]
        .concat()
    }

    fn set_trainable(&mut self, theta: &[f64]) {
        let n = self.n_units();
        let gamma = |b: &[f64]| b.iter().map(|&g| g.max(GAMMA_MIN)).collect::<Vec<_>>();
        super::check::set(&mut self.gamma_plus, &gamma(&theta[..n]));
        super::check::set(&mut self.gamma_minus, &gamma(&theta[n..2 * n]));
        super::check::set(&mut self.theta_plus, &theta[2 * n..3 * n]);
        super::check::set(&mut self.theta_minus, &theta[3 * n..]);
    }

    /// `∂U/∂(γ₊, γ₋, θ₊, θ₋) = (h₊²/2, h₋²/2, h₊, h₋)`.
    fn add_energy_grad(&self, x: &[f32], a: f64, out: &mut [f64]) {
        let n = self.n_units();
        for (j, &h) in x.iter().enumerate() {
            let h = f64::from(h);
            let (hp, hm) = (h.max(0.0), (-h).max(0.0));
            out[j] += a * 0.5 * hp * hp;
            out[n + j] += a * 0.5 * hm * hm;
            out[2 * n + j] += a * hp;
            out[3 * n + j] += a * hm;
        }
    }

    /// `E[h₊^k] = p₊ E₊[h^k]`, `E[h₋^k] = (1 − p₊) E₋[h^k]` of the two half-Gaussians.
    fn add_mean_energy_grad(&self, input: &[f32], a: f64, out: &mut [f64]) {
        let n = self.n_units();
        for j in 0..n {
            let i = f64::from(input[j]);
            let params @ [gp, gm, tp, tm] = self.params(j);
            let (lp, lm) = sides(i, params);
            let p_plus = crate::linalg::sigmoid_f64(lp - lm);
            let (m1p, m2p) = special::half_gauss_moments(gp, i - tp);
            let (m1m, m2m) = special::half_gauss_moments(gm, -i - tm);
            out[j] += a * p_plus * 0.5 * m2p;
            out[n + j] += a * (1.0 - p_plus) * 0.5 * m2m;
            out[2 * n + j] += a * p_plus * m1p;
            out[3 * n + j] += a * (1.0 - p_plus) * m1m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::quadrature::ln_half_line;
    use super::super::twins;
    use super::*;

    // scripts/units_reference.py: mpmath at 50 digits, ln(√(π/2γ₊) erfcx(t₊) + √(π/2γ₋) erfcx(t₋)).
    include!("drelu_reference.rs");

    #[test]
    fn log_partition_matches_mpmath_to_1e_10_over_inputs_to_1e4() {
        let mut worst: f64 = 0.0;
        for &(i, p, want) in &DRELU_REF {
            let got = ln_partition(i, p);
            assert!(got.is_finite());
            worst = worst.max((got - want).abs() / want.abs());
        }
        eprintln!("dReLU ln Z: worst relative error against mpmath {worst:.2e}");
        assert!(worst < 1e-13, "worst relative error {worst:e}");
    }

    #[test]
    fn log_partition_and_moments_match_quadrature() {
        let mut worst: f64 = 0.0;
        for p in [
            [1.0, 1.0, 0.0, 0.0],
            [0.05, 3.0, 1.5, -2.0],
            [20.0, 0.5, -3.0, 4.0],
        ] {
            for k in -12i32..=12 {
                let i = f64::from(k).signum() * 10f64.powf(f64::from(k.abs()) / 3.0) * 0.99;
                let (zp, m1p, m2p) = ln_half_line(p[0], i - p[2]);
                let (zm, m1m, m2m) = ln_half_line(p[1], -i - p[3]);
                let want = zp.max(zm) + (-(zp - zm).abs()).exp().ln_1p();
                let got = ln_partition(i, p);
                worst = worst.max((got - want).abs() / want.abs().max(1.0));
                assert!(
                    (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                    "I = {i}, {p:?}: {got} vs {want}"
                );
                let pp = (zp - want).exp();
                let (m1, m2) = moments(i, p);
                let (w1, w2) = (pp * m1p - (1.0 - pp) * m1m, pp * m2p + (1.0 - pp) * m2m);
                assert!((m1 - w1).abs() <= 1e-10 * w2.sqrt(), "E[h], I = {i}, {p:?}");
                assert!((m2 - w2).abs() <= 1e-10 * w2, "E[h²], I = {i}, {p:?}");
            }
        }
        eprintln!(
            "dReLU ln Z: worst error against quadrature {worst:.2e} (relative to max(1, |ln Z|))"
        );
    }

    #[test]
    fn never_overflows_and_the_mean_is_the_derivative() {
        let p = [0.05, 3.0, 1.5, -2.0];
        for &i in &[-1e300, -1e30, -1e4, 1e4, 1e30, 1e300] {
            assert!(ln_partition(i, p).is_finite() || i.abs() > 1e150, "I = {i}");
            assert!(moments(i, p).0.is_finite() || i.abs() > 1e150, "I = {i}");
        }
        for &i in &[-7.0, -0.3, 0.0, 0.2, 2.5, 40.0] {
            let h = 1e-5;
            let fd = (ln_partition(i + h, p) - ln_partition(i - h, p)) / (2.0 * h);
            assert!(
                (moments(i, p).0 - fd).abs() < 1e-7 * fd.abs().max(1.0),
                "I = {i}"
            );
        }
    }

    #[test]
    fn equal_sides_are_a_gaussian_and_the_gauge_round_trips() {
        // γ₊ = γ₋ = γ, θ₊ = −θ₋ = θ: a Gaussian of precision γ and field −θ
        let (g, t) = (2.0, 0.7);
        for &i in &[-3.0, 0.0, 1.1, 25.0] {
            let a = i - t;
            let want = 0.5 * a * a / g + 0.5 * (std::f64::consts::TAU / g).ln();
            assert!((ln_partition(i, [g, g, t, -t]) - want).abs() < 1e-12 * want.abs().max(1.0));
        }
        let u = DRelu::from_gauge(&[1.0, 3.0], &[0.5, -1.0], &[0.2, 2.0], &[0.3, -0.9]).unwrap();
        let [gamma, theta, delta, eta] = u.gauge();
        let back = DRelu::from_gauge(&gamma, &theta, &delta, &eta).unwrap();
        for j in 0..2 {
            for (a, b) in u.params(j).iter().zip(back.params(j)) {
                assert!((a - b).abs() < 1e-5 * a.abs().max(1.0));
            }
        }
        assert!(DRelu::from_gauge(&[1.0], &[0.0], &[0.0], &[1.0]).is_err());
    }

    #[test]
    fn sampler_and_layer() {
        let u = DRelu::new(
            vec![1.0, 0.5],
            vec![2.0, 0.5],
            vec![0.3, -1.0],
            vec![-0.5, 1.0],
        )
        .unwrap();
        twins::sampler_matches_mean(&u, &[0.4, -1.5], 4000, 13);
        twins::interpolation_ends(
            &u,
            &DRelu::new(vec![1.0; 2], vec![1.0; 2], vec![0.0; 2], vec![0.0; 2]).unwrap(),
            &[0.3, -1.2],
        );
        let mut m = [0.0f32; 2];
        u.mean(&[0.4, -1.5], &mut m);
        assert!((f64::from(m[1]) - moments(-1.5, u.params(1)).0).abs() < 1e-6);
        assert!(u.check_state(&[f32::NAN, 0.0]).is_err());
        assert!(DRelu::new(vec![1.0], vec![-1.0], vec![0.0], vec![0.0]).is_err());
    }
}
