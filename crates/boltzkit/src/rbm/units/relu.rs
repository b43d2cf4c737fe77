//! [`Relu`]: non-negative real units, `U(h) = γh²/2 + θh` on `h ≥ 0` (a Gaussian truncated
//! to the half-line; PGM's "ReLU+"), so given the input `p(h | I) ∝ e^{−γh²/2 + (I − θ)h}`
//! and `Γ(I) = ½ ln(π/(2γ)) + ln erfcx((θ − I)/√(2γ))` ([`special::ln_half_gauss`]): finite
//! at every input.

use super::special;
use super::unit_type::{UnitType, GAMMA_MIN};
use crate::error::Result;
use rand::Rng;

/// A layer of ReLU units with precisions `γ > 0` and thresholds `θ`.
#[derive(Debug, Clone, PartialEq)]
pub struct Relu {
    gamma: Vec<f32>,
    theta: Vec<f32>,
}

impl Relu {
    /// The layer (same lengths, finite, every `γ > 0`).
    pub fn new(gamma: Vec<f32>, theta: Vec<f32>) -> Result<Self> {
        super::check::params("gamma", &gamma, Some(0.0))?;
        super::check::same_len("Relu::new", &[("theta", theta.len())], gamma.len())?;
        super::check::params("theta", &theta, None)?;
        Ok(Relu { gamma, theta })
    }

    /// The precisions `γ`.
    pub fn gamma(&self) -> &[f32] {
        &self.gamma
    }

    /// The thresholds `θ`.
    pub fn theta(&self) -> &[f32] {
        &self.theta
    }

    /// `(γ, I − θ)` of unit `j` in `f64`.
    fn at(&self, input: &[f32], j: usize) -> (f64, f64) {
        (
            f64::from(self.gamma[j]),
            f64::from(input[j]) - f64::from(self.theta[j]),
        )
    }
}

impl UnitType for Relu {
    fn n_units(&self) -> usize {
        self.gamma.len()
    }

    fn energy(&self, x: &[f32]) -> f64 {
        (0..self.gamma.len())
            .map(|j| {
                let (h, g, t) = (
                    f64::from(x[j]),
                    f64::from(self.gamma[j]),
                    f64::from(self.theta[j]),
                );
                0.5 * g * h * h + t * h
            })
            .sum()
    }

    fn log_partition(&self, input: &[f32]) -> f64 {
        (0..self.gamma.len())
            .map(|j| {
                let (g, b) = self.at(input, j);
                special::ln_half_gauss(g, b)
            })
            .sum()
    }

    fn mean(&self, input: &[f32], out: &mut [f32]) {
        for (j, o) in out.iter_mut().enumerate() {
            let (g, b) = self.at(input, j);
            *o = special::half_gauss_moments(g, b).0 as f32;
        }
    }

    fn sample<R: Rng + ?Sized>(&self, input: &[f32], out: &mut [f32], rng: &mut R) {
        for (j, o) in out.iter_mut().enumerate() {
            let (g, b) = self.at(input, j);
            *o = special::sample_half_gauss(g, b, rng) as f32;
        }
    }

    fn check_state(&self, x: &[f32]) -> Result<()> {
        super::check::real_state("ReLU state", x, self.gamma.len(), true)
    }

    /// The layer itself, data or not: a hidden layer's own energy is kept along the AIS path
    /// (only the couplings and the visible layer move), as PGM does; scaling it by `β` would
    /// leave no proper distribution at `β = 0`.
    fn ais_base(&self, _data: Option<&[f32]>) -> Result<Self> {
        Ok(self.clone())
    }

    fn interpolate(&self, base: &Self, beta: f64, out: &mut Self) {
        super::check::lerp(&base.gamma, &self.gamma, beta, &mut out.gamma);
        super::check::lerp(&base.theta, &self.theta, beta, &mut out.theta);
    }

    /// `θ = (γ_1 … γ_n, θ_1 … θ_n)`.
    fn trainable(&self) -> Vec<f64> {
        let f = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
        [f(&self.gamma), f(&self.theta)].concat()
    }

    fn set_trainable(&mut self, theta: &[f64]) {
        let n = self.gamma.len();
        let gamma: Vec<f64> = theta[..n].iter().map(|&g| g.max(GAMMA_MIN)).collect();
        super::check::set(&mut self.gamma, &gamma);
        super::check::set(&mut self.theta, &theta[n..]);
    }

    /// `∂U/∂γ = h²/2`, `∂U/∂θ = h`.
    fn add_energy_grad(&self, x: &[f32], a: f64, out: &mut [f64]) {
        let n = self.gamma.len();
        for (j, &h) in x.iter().enumerate() {
            let h = f64::from(h);
            out[j] += a * 0.5 * h * h;
            out[n + j] += a * h;
        }
    }

    fn add_mean_energy_grad(&self, input: &[f32], a: f64, out: &mut [f64]) {
        let n = self.gamma.len();
        for j in 0..n {
            let (g, b) = self.at(input, j);
            let (m1, m2) = special::half_gauss_moments(g, b);
            out[j] += a * 0.5 * m2;
            out[n + j] += a * m1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::quadrature::ln_half_line;
    use super::super::twins;
    use super::*;

    fn layer() -> Relu {
        Relu::new(vec![1.0, 0.05, 20.0], vec![0.0, 1.5, -3.0]).unwrap()
    }

    #[test]
    fn log_partition_and_mean_match_quadrature() {
        let u = layer();
        for &i in &[-1e4f32, -50.0, -2.0, 0.0, 0.5, 8.0, 1e3] {
            let input = [i, -0.5 * i, i / 3.0];
            let (mut want, mut mean) = (0.0, [0.0f32; 3]);
            u.mean(&input, &mut mean);
            for (j, &m) in mean.iter().enumerate() {
                let (g, b) = u.at(&input, j);
                let (z, m1, _) = ln_half_line(g, b);
                want += z;
                assert!(
                    (f64::from(m) - m1).abs() <= 1e-6 * m1.abs(),
                    "I = {i}, j = {j}"
                );
            }
            let got = u.log_partition(&input);
            assert!(
                (got - want).abs() < 1e-11 * want.abs().max(1.0),
                "I = {i}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn sampler_checks_and_interpolation() {
        let u = layer();
        twins::sampler_matches_mean(&u, &[1.0, -0.2, 4.0], 4000, 9);
        let other = Relu::new(vec![2.0, 1.0, 1.0], vec![1.0, 0.0, 0.0]).unwrap();
        twins::interpolation_ends(&u, &other, &[0.3, 1.5, 0.0]);
        assert_eq!(u.ais_base(Some(&[1.0, 2.0, 3.0])).unwrap(), u);
        assert!(u.check_state(&[0.0, -1e-3, 1.0]).is_err());
        assert!(Relu::new(vec![0.0], vec![0.0]).is_err());
    }
}
