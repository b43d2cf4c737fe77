//! [`Gaussian`]: real units with learned variances, `U(x) = x²/(2σ²) − b x`, so given the
//! input `x | I ~ N(σ²(I + b), σ²)` and `Γ(I) = σ²(I + b)²/2 + ½ ln(2πσ²)`.
//!
//! The common Gaussian-Bernoulli energy `(x − μ)²/(2σ²) − (x/σ²) W h` (Cho et al. 2011;
//! Liao et al. 2022) is this one with `b = μ/σ²` and weights `W/σ²` (a constant apart): the
//! same family of models. Each variance lies in its layer's [`Bounded`] interval (default
//! [`VARIANCE_BOUNDS`], for standardized data) and trainers step its free parameter
//! ([`Bounded::zeta`]), so no variance collapses or blows up.

use super::bounded::Bounded;
use super::unit_type::UnitType;
use crate::error::{Error, Result};
use rand::Rng;
use rand_distr::{Distribution as _, StandardNormal};

/// The default variance interval, for data standardized to unit variance per column.
pub const VARIANCE_BOUNDS: (f64, f64) = (1e-4, 1e2);

/// A layer of Gaussian units with fields `b` and variances `σ²`.
#[derive(Debug, Clone, PartialEq)]
pub struct Gaussian {
    bias: Vec<f32>,
    variance: Vec<f32>,
    bounds: Bounded,
}

impl Gaussian {
    /// The layer with fields `bias` and variances `variance` (same length, finite, every
    /// variance inside `bounds`).
    pub fn new(bias: Vec<f32>, variance: Vec<f32>, bounds: Bounded) -> Result<Self> {
        super::check::params("bias", &bias, None)?;
        super::check::same_len("Gaussian::new", &[("variance", variance.len())], bias.len())?;
        let (lo, hi) = (bounds.lo as f32, bounds.hi as f32);
        if let Some(i) = variance.iter().position(|v| !(lo..=hi).contains(v)) {
            return Err(Error::param(
                format!("variance[{i}]"),
                format!(
                    "{} is not inside [{}, {}]",
                    variance[i], bounds.lo, bounds.hi
                ),
            ));
        }
        Ok(Gaussian {
            bias,
            variance,
            bounds,
        })
    }

    /// `n` units with zero fields and unit variances in the default bounds.
    pub fn standard(n: usize) -> Result<Self> {
        let (lo, hi) = VARIANCE_BOUNDS;
        Gaussian::new(vec![0.0; n], vec![1.0; n], Bounded::new(lo, hi)?)
    }

    /// The fields `b`.
    pub fn bias(&self) -> &[f32] {
        &self.bias
    }

    /// The variances `σ²`.
    pub fn variance(&self) -> &[f32] {
        &self.variance
    }

    /// The variances' interval and parameterization.
    pub fn bounds(&self) -> Bounded {
        self.bounds
    }

    /// The free coordinate `ζ` of a variance (one at a bound taken a hair inside it).
    fn zeta(&self, v: f64) -> f64 {
        let (lo, hi) = (self.bounds.lo, self.bounds.hi);
        let inside = v.clamp(lo * (1.0 + 1e-6), hi * (1.0 - 1e-6));
        self.bounds.zeta(inside).unwrap_or(0.0)
    }

    /// `dσ²/dζ` at the variance `v`.
    fn dvariance(&self, v: f64) -> f64 {
        self.bounds.derivative(self.zeta(v))
    }

    /// `(I + b, σ²)` of unit `j` in `f64`.
    fn at(&self, input: &[f32], j: usize) -> (f64, f64) {
        (
            f64::from(input[j]) + f64::from(self.bias[j]),
            f64::from(self.variance[j]),
        )
    }
}

impl UnitType for Gaussian {
    fn n_units(&self) -> usize {
        self.bias.len()
    }

    fn energy(&self, x: &[f32]) -> f64 {
        (0..self.bias.len())
            .map(|j| {
                let (x, b, v) = (
                    f64::from(x[j]),
                    f64::from(self.bias[j]),
                    f64::from(self.variance[j]),
                );
                0.5 * x * x / v - b * x
            })
            .sum()
    }

    fn log_partition(&self, input: &[f32]) -> f64 {
        (0..self.bias.len())
            .map(|j| {
                let (a, v) = self.at(input, j);
                0.5 * v * a * a + 0.5 * (std::f64::consts::TAU * v).ln()
            })
            .sum()
    }

    fn mean(&self, input: &[f32], out: &mut [f32]) {
        for (j, o) in out.iter_mut().enumerate() {
            let (a, v) = self.at(input, j);
            *o = (v * a) as f32;
        }
    }

    fn sample<R: Rng + ?Sized>(&self, input: &[f32], out: &mut [f32], rng: &mut R) {
        for (j, o) in out.iter_mut().enumerate() {
            let (a, v) = self.at(input, j);
            let z: f64 = StandardNormal.sample(rng);
            *o = (v * a + v.sqrt() * z) as f32;
        }
    }

    fn check_state(&self, x: &[f32]) -> Result<()> {
        super::check::real_state("Gaussian state", x, self.bias.len(), false)
    }

    /// With data: each unit's own Gaussian fitted to its column (variance clamped into the
    /// bounds, `b = mean / σ²`); without: zero fields and the layer's own variances.
    fn ais_base(&self, data: Option<&[f32]>) -> Result<Self> {
        let n = self.bias.len();
        let Some(data) = data else {
            return Gaussian::new(vec![0.0; n], self.variance.clone(), self.bounds);
        };
        let (mean, var) = super::check::column_moments(data, n)?;
        let var: Vec<f64> = var
            .iter()
            .map(|&v| v.clamp(self.bounds.lo, self.bounds.hi))
            .collect();
        Gaussian::new(
            mean.iter().zip(&var).map(|(m, v)| (m / v) as f32).collect(),
            var.iter()
                .map(|&v| (v as f32).clamp(self.bounds.lo as f32, self.bounds.hi as f32))
                .collect(),
            self.bounds,
        )
    }

    /// Linear in the natural parameters `b` and `1/σ²` (so the interpolated precision lies
    /// between the two layers', inside the bounds).
    fn interpolate(&self, base: &Self, beta: f64, out: &mut Self) {
        super::check::lerp(&base.bias, &self.bias, beta, &mut out.bias);
        for ((o, &a), &b) in out
            .variance
            .iter_mut()
            .zip(&base.variance)
            .zip(&self.variance)
        {
            let precision = (1.0 - beta) / f64::from(a) + beta / f64::from(b);
            *o = (1.0 / precision) as f32;
        }
    }

    /// `θ = (b_1 … b_n, ζ_1 … ζ_n)` with `σ²_j = bounds.value(ζ_j)` ([`Bounded`]).
    fn trainable(&self) -> Vec<f64> {
        let zeta = self.variance.iter().map(|&v| self.zeta(f64::from(v)));
        self.bias
            .iter()
            .map(|&b| f64::from(b))
            .chain(zeta)
            .collect()
    }

    fn set_trainable(&mut self, theta: &[f64]) {
        let n = self.bias.len();
        super::check::set(&mut self.bias, &theta[..n]);
        let (lo, hi) = (self.bounds.lo as f32, self.bounds.hi as f32);
        for (v, &z) in self.variance.iter_mut().zip(&theta[n..]) {
            *v = (self.bounds.value(z) as f32).clamp(lo, hi);
        }
    }

    /// `∂U/∂b = −x`, `∂U/∂ζ = −x²/(2σ⁴) · dσ²/dζ`.
    fn add_energy_grad(&self, x: &[f32], a: f64, out: &mut [f64]) {
        let n = self.bias.len();
        for j in 0..n {
            let (x, v) = (f64::from(x[j]), f64::from(self.variance[j]));
            out[j] -= a * x;
            out[n + j] -= a * 0.5 * x * x / (v * v) * self.dvariance(v);
        }
    }

    /// With `E[x | I] = σ²(I + b)` and `E[x² | I] = σ² + E[x | I]²`.
    fn add_mean_energy_grad(&self, input: &[f32], a: f64, out: &mut [f64]) {
        let n = self.bias.len();
        for j in 0..n {
            let (s, v) = self.at(input, j);
            let m = v * s;
            out[j] -= a * m;
            out[n + j] -= a * 0.5 * (v + m * m) / (v * v) * self.dvariance(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::quadrature::tanh_sinh;
    use super::super::twins;
    use super::*;

    fn layer() -> Gaussian {
        let (lo, hi) = VARIANCE_BOUNDS;
        Gaussian::new(
            vec![0.5, -1.0],
            vec![0.25, 3.0],
            Bounded::new(lo, hi).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn log_partition_and_mean_match_quadrature() {
        let u = layer();
        for &i in &[-30.0f32, -1.0, 0.0, 0.4, 12.0] {
            let input = [i, -i];
            let mut want = 0.0;
            let mut mean = [0.0f32; 2];
            u.mean(&input, &mut mean);
            for j in 0..2 {
                let (a, v) = (
                    f64::from(input[j]) + f64::from(u.bias[j]),
                    f64::from(u.variance[j]),
                );
                let (m, s) = (v * a, v.sqrt());
                let g = |x: f64| -0.5 * x * x / v + a * x;
                let (lo, hi) = (m - 40.0 * s, m + 40.0 * s);
                let z = tanh_sinh(&|x| (g(x) - g(m)).exp(), lo, hi, 64);
                let m1 = tanh_sinh(&|x| x * (g(x) - g(m)).exp(), lo, hi, 64) / z;
                want += g(m) + z.ln();
                assert!((f64::from(mean[j]) - m1).abs() < 1e-6 * m1.abs().max(1.0));
            }
            let got = u.log_partition(&input);
            assert!(
                (got - want).abs() < 1e-11 * want.abs().max(1.0),
                "{got} vs {want}"
            );
        }
    }

    #[test]
    fn sampler_checks_and_base() {
        let u = layer();
        twins::sampler_matches_mean(&u, &[1.0, -2.0], 4000, 7);
        twins::interpolation_ends(&u, &u.ais_base(None).unwrap(), &[0.3, -1.5]);
        assert!(u.check_state(&[f32::INFINITY, 0.0]).is_err());
        let b = u.bounds();
        assert!(Gaussian::new(vec![0.0], vec![0.0], b).is_err());
        assert!(Gaussian::new(vec![0.0], vec![1e3], b).is_err());
        // the base fitted to data: each column's mean and variance
        let data = [1.0, 10.0, 3.0, 10.0];
        let base = u.ais_base(Some(&data)).unwrap();
        let mut m = [0.0f32; 2];
        base.mean(&[0.0, 0.0], &mut m);
        assert!((m[0] - 2.0).abs() < 1e-6 && (m[1] - 10.0).abs() < 1e-4);
        assert_eq!(base.variance(), &[1.0, b.lo as f32]);
    }
}
