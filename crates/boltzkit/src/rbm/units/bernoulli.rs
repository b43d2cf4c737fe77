//! [`Bernoulli`]: 0/1 units with biases, `U(x) = −b x`, `Γ(I) = softplus(I + b)`,
//! `E[x | I] = σ(I + b)`. The same units as [`crate::rbm::Rbm`]'s, whose fused kernels keep
//! serving the (Bernoulli, Bernoulli) pair; this is their form behind the seam, for pairs with
//! another type.

use super::unit_type::UnitType;
use crate::error::{Error, Result};
use crate::linalg::{sigmoid_f64, softplus_f64};
use crate::rbm::model::BASE_RATE_EPS;
use rand::Rng;

/// A layer of 0/1 units with biases `b`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bernoulli {
    bias: Vec<f32>,
}

impl Bernoulli {
    /// The layer with these biases (at least one, all finite).
    pub fn new(bias: Vec<f32>) -> Result<Self> {
        super::check::params("bias", &bias, None)?;
        Ok(Bernoulli { bias })
    }

    /// The biases.
    pub fn bias(&self) -> &[f32] {
        &self.bias
    }
}

impl UnitType for Bernoulli {
    fn n_units(&self) -> usize {
        self.bias.len()
    }

    fn energy(&self, x: &[f32]) -> f64 {
        -dot(&self.bias, x)
    }

    fn log_partition(&self, input: &[f32]) -> f64 {
        input
            .iter()
            .zip(&self.bias)
            .map(|(&i, &b)| softplus_f64(f64::from(i) + f64::from(b)))
            .sum()
    }

    fn mean(&self, input: &[f32], out: &mut [f32]) {
        for ((o, &i), &b) in out.iter_mut().zip(input).zip(&self.bias) {
            *o = sigmoid_f64(f64::from(i) + f64::from(b)) as f32;
        }
    }

    fn sample<R: Rng + ?Sized>(&self, input: &[f32], out: &mut [f32], rng: &mut R) {
        for ((o, &i), &b) in out.iter_mut().zip(input).zip(&self.bias) {
            let p = sigmoid_f64(f64::from(i) + f64::from(b));
            *o = if rng.random::<f64>() < p { 1.0 } else { 0.0 };
        }
    }

    fn check_state(&self, x: &[f32]) -> Result<()> {
        super::check::width("Bernoulli state", x, self.bias.len())?;
        match x.iter().position(|&v| v != 0.0 && v != 1.0) {
            Some(i) => Err(Error::InvalidData(format!(
                "Bernoulli unit {i} = {} is not 0 or 1",
                x[i]
            ))),
            None => Ok(()),
        }
    }

    /// With data: the base-rate biases `logit(mean_i)`, the means clamped to
    /// `[BASE_RATE_EPS, 1 − BASE_RATE_EPS]` (Salakhutdinov & Murray 2008); without: zeros
    /// (the uniform distribution).
    fn ais_base(&self, data: Option<&[f32]>) -> Result<Self> {
        let n = self.bias.len();
        let Some(data) = data else {
            return Bernoulli::new(vec![0.0; n]);
        };
        let means = super::check::column_means(data, n)?;
        Bernoulli::new(
            means
                .iter()
                .map(|&p| {
                    let p = p.clamp(BASE_RATE_EPS, 1.0 - BASE_RATE_EPS);
                    (p / (1.0 - p)).ln() as f32
                })
                .collect(),
        )
    }

    fn interpolate(&self, base: &Self, beta: f64, out: &mut Self) {
        super::check::lerp(&base.bias, &self.bias, beta, &mut out.bias);
    }

    /// `θ = b`.
    fn trainable(&self) -> Vec<f64> {
        self.bias.iter().map(|&b| f64::from(b)).collect()
    }

    fn set_trainable(&mut self, theta: &[f64]) {
        super::check::set(&mut self.bias, theta);
    }

    fn add_energy_grad(&self, x: &[f32], a: f64, out: &mut [f64]) {
        super::check::axpy(-a, x, out);
    }

    fn add_mean_energy_grad(&self, input: &[f32], a: f64, out: &mut [f64]) {
        for ((o, &i), &b) in out.iter_mut().zip(input).zip(&self.bias) {
            *o -= a * sigmoid_f64(f64::from(i) + f64::from(b));
        }
    }
}

/// `Σ a_i x_i` in `f64`.
pub(super) fn dot(a: &[f32], x: &[f32]) -> f64 {
    a.iter()
        .zip(x)
        .map(|(&a, &x)| f64::from(a) * f64::from(x))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::super::twins;
    use super::*;

    fn layer() -> Bernoulli {
        Bernoulli::new(vec![0.3, -1.2, 2.0]).unwrap()
    }

    #[test]
    fn log_partition_and_mean_match_enumeration() {
        let u = layer();
        let input = [0.5f32, -0.25, -3.0];
        let unit = vec![vec![0.0], vec![1.0]];
        twins::discrete_matches_enumeration(&u, &input, &[unit.clone(), unit.clone(), unit]);
    }

    #[test]
    fn sampler_and_interpolation() {
        let u = layer();
        twins::sampler_matches_mean(&u, &[0.5, 1.0, -2.5], 4000, 3);
        twins::interpolation_ends(&u, &u.ais_base(None).unwrap(), &[1.0, 0.0, 1.0]);
        assert!(u.check_state(&[1.0, 0.0, 1.0]).is_ok());
        assert!(u.check_state(&[1.0, 0.5, 1.0]).is_err());
        assert!(u.check_state(&[1.0, 0.0]).is_err());
        assert!(Bernoulli::new(vec![f32::NAN]).is_err());
    }

    #[test]
    fn base_rates_from_data() {
        let u = layer();
        let data = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0];
        let base = u.ais_base(Some(&data)).unwrap();
        // means 1, 0, 0.5: clamped logits, then 0
        let cap = ((1.0 - BASE_RATE_EPS) / BASE_RATE_EPS).ln() as f32;
        assert_eq!(base.bias(), &[cap, -cap, 0.0]);
    }
}
