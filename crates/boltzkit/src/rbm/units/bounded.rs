//! [`Bounded`]: a positive parameter kept inside `[lo, hi]` by its parameterization, for the
//! variances of Gaussian units: `value(ζ) = exp(ln lo + (ln hi − ln lo)·σ(ζ))` over a free
//! `ζ ∈ ℝ`. An optimizer steps `ζ` (the chain rule through [`Bounded::derivative`]), so no
//! step can make a variance zero, negative or larger than `hi` (the blow-up that Gaussian-
//! Bernoulli RBMs are known for), and the bounds are scale-free (equal ratios per unit of `ζ`).

use crate::error::{Error, Result};

/// The interval `[lo, hi]`, `0 < lo < hi < ∞`, and its log-sigmoid parameterization.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bounded {
    /// Smallest value.
    pub lo: f64,
    /// Largest value.
    pub hi: f64,
}

impl Bounded {
    /// The interval, checked.
    pub fn new(lo: f64, hi: f64) -> Result<Self> {
        if lo.is_nan() || lo <= 0.0 || hi.is_nan() || hi <= lo || hi.is_infinite() {
            return Err(Error::param(
                "bounds",
                format!("need 0 < lo < hi < ∞, found [{lo}, {hi}]"),
            ));
        }
        Ok(Bounded { lo, hi })
    }

    fn log_width(&self) -> f64 {
        (self.hi / self.lo).ln()
    }

    /// `value(ζ)`, inside `[lo, hi]` for every `ζ` (the ends for `ζ = ∓∞`).
    pub fn value(&self, zeta: f64) -> f64 {
        (self.lo.ln() + self.log_width() * sigmoid(zeta))
            .exp()
            .clamp(self.lo, self.hi)
    }

    /// `dvalue/dζ = value · ln(hi/lo) · σ(ζ)(1 − σ(ζ))`.
    pub fn derivative(&self, zeta: f64) -> f64 {
        let s = sigmoid(zeta);
        self.value(zeta) * self.log_width() * s * (1.0 - s)
    }

    /// The `ζ` of `value` (the inverse of [`Bounded::value`]); an error outside `(lo, hi)`.
    pub fn zeta(&self, value: f64) -> Result<f64> {
        if value.is_nan() || value <= self.lo || value >= self.hi {
            return Err(Error::param(
                "value",
                format!("{value} is not inside ({}, {})", self.lo, self.hi),
            ));
        }
        let s = (value / self.lo).ln() / self.log_width();
        Ok((s / (1.0 - s)).ln())
    }

    /// Whether `value` lies in `[lo, hi]`.
    pub fn contains(&self, value: f64) -> bool {
        value >= self.lo && value <= self.hi
    }
}

fn sigmoid(x: f64) -> f64 {
    crate::linalg::sigmoid_f64(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_inside_and_inverts() {
        let b = Bounded::new(1e-4, 1e2).unwrap();
        for &z in &[-1e6, -40.0, -3.0, 0.0, 0.5, 7.0, 1e6] {
            let v = b.value(z);
            assert!(b.contains(v), "ζ = {z}: {v}");
        }
        for &v in &[2e-4, 0.01, 1.0, 99.0] {
            let z = b.zeta(v).unwrap();
            assert!((b.value(z) - v).abs() < 1e-12 * v);
        }
        assert!(b.zeta(0.0).is_err() && b.zeta(1e2).is_err());
        assert!(Bounded::new(1.0, 1.0).is_err() && Bounded::new(0.0, 1.0).is_err());
    }

    #[test]
    fn derivative_matches_finite_differences() {
        let b = Bounded::new(0.05, 20.0).unwrap();
        for &z in &[-4.0, -0.3, 0.0, 1.2, 5.0] {
            let h = 1e-6;
            let fd = (b.value(z + h) - b.value(z - h)) / (2.0 * h);
            assert!(
                (b.derivative(z) - fd).abs() < 1e-8 * fd.abs().max(1e-3),
                "ζ = {z}"
            );
        }
    }
}
