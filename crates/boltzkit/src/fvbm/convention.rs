//! [`Convention`]: the values a unit takes (spin ±1 or binary 0/1) and the one-unit
//! exponential family it implies.
//!
//! Given the rest of the state, unit `j` of an FVBM has the conditional law
//! `P(x_j | x_{−j}) ∝ exp(x_j h_j)` with the local field `h_j = b_j + m_jᵀx` (Eq. 2.1 of
//! Nguyen & Wood). Everything a learner needs about that law (its log-normalizer, mean and
//! variance, and the bound on the variance used by the BSLM minorizers) lives here.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// The values of a unit: spin (`x ∈ {−1, +1}`) or binary (`x ∈ {0, 1}`).
///
/// Data files always hold 0/1; in the spin convention bit 0 is the value −1 and bit 1 is +1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Convention {
    /// `x ∈ {−1, +1}`, the convention of Nguyen & Wood (Eq. 1.1).
    Spin,
    /// `x ∈ {0, 1}`, the convention of the FSLL paper (Eq. 1).
    Binary,
}

impl Convention {
    /// The value of bit `bit` (0 or 1): `2·bit − 1` (spin) or `bit` (binary).
    #[inline]
    pub fn value(self, bit: u8) -> f64 {
        match self {
            Convention::Spin => 2.0 * f64::from(bit) - 1.0,
            Convention::Binary => f64::from(bit),
        }
    }

    /// The value of bit 0: −1 (spin) or 0 (binary).
    #[inline]
    pub fn low(self) -> f64 {
        self.value(0)
    }

    /// The gap between the two values: 2 (spin) or 1 (binary).
    #[inline]
    pub fn gap(self) -> f64 {
        match self {
            Convention::Spin => 2.0,
            Convention::Binary => 1.0,
        }
    }

    /// The name used in files and on the command line: `spin` or `binary`.
    pub fn name(self) -> &'static str {
        match self {
            Convention::Spin => "spin",
            Convention::Binary => "binary",
        }
    }

    /// `ln Σ_x e^{x h}` over the two values: `ln(2 cosh h)` (spin) or `ln(1 + e^h)` (binary),
    /// computed without overflow.
    #[inline]
    pub fn log_norm(self, h: f64) -> f64 {
        match self {
            Convention::Spin => {
                let a = h.abs();
                a + (-2.0 * a).exp().ln_1p()
            }
            Convention::Binary => h.max(0.0) + (-h.abs()).exp().ln_1p(),
        }
    }

    /// The conditional mean `E[x | h]`: `tanh h` (spin) or the logistic `σ(h)` (binary).
    #[inline]
    pub fn mean(self, h: f64) -> f64 {
        match self {
            Convention::Spin => h.tanh(),
            Convention::Binary => sigmoid(h),
        }
    }

    /// The conditional variance `Var[x | h]`: `1 − tanh² h` (spin) or `σ(h)(1 − σ(h))`
    /// (binary).
    #[inline]
    pub fn variance(self, h: f64) -> f64 {
        match self {
            Convention::Spin => {
                // sech² h, accurate also where tanh h rounds to ±1.
                let c = h.cosh();
                if c.is_finite() {
                    1.0 / (c * c)
                } else {
                    0.0
                }
            }
            Convention::Binary => {
                let s = sigmoid(h);
                s * sigmoid(-h)
            }
        }
    }

    /// An upper bound on [`Convention::variance`] over all fields: 1 (spin) or 1/4 (binary).
    ///
    /// Its negative bounds the second derivative of the log-pseudo-likelihood, which gives the
    /// quadratic minorizers of Eqs. 2.3 and 2.6 (the "quadratic bound principle").
    #[inline]
    pub fn variance_bound(self) -> f64 {
        match self {
            Convention::Spin => 1.0,
            Convention::Binary => 0.25,
        }
    }

    /// The conditional mean after the field moves from `h` to `h + δ·x`, from the mean
    /// `e = E[x' | h]` before, with `t = tanh δ` (spin) or `t = e^δ` (binary) computed once for
    /// many updates; `x` is a value of the convention.
    ///
    /// Exact identities: `tanh(h ± δ) = (tanh h ± tanh δ) / (1 ± tanh h · tanh δ)` and
    /// `σ(h + δ) = σ(h) e^δ / (1 + σ(h)(e^δ − 1))`. They replace one transcendental function
    /// per sample by one division in the BSLM coordinate updates.
    #[inline]
    pub fn shifted_mean(self, e: f64, x: f64, t: f64) -> f64 {
        match self {
            Convention::Spin => {
                let s = x * t;
                (e + s) / (1.0 + e * s)
            }
            Convention::Binary => {
                // t^x for x ∈ {0, 1}, branch-free (exactly e when x = 0).
                let f = 1.0 + x * (t - 1.0);
                e * f / (1.0 + e * (f - 1.0))
            }
        }
    }

    /// `ln P(x | h) = x h − A(h)` split as `r + ln f`, from the field `h` and the mean
    /// `e = E[x | h]`: `r = x h − |h| − ln 2`, `f = 1 + |e| ∈ [1, 2]` (spin, as
    /// `A(h) = |h| + ln(2 / (1 + |e|))`) or `r = x h − max(h, 0)`, `f = max(e, 1 − e) ∈ [½, 1]`
    /// (binary, as `A(h) = max(h, 0) − ln max(e, 1 − e)`). `r` needs no logarithm and `ln f`
    /// is well conditioned, so the log-PL of a row is `Σ_j r_j + ln Π_j f_j`: one logarithm
    /// per row instead of one per unit.
    #[inline]
    pub fn log_prob_parts(self, x: f64, h: f64, e: f64) -> (f64, f64) {
        match self {
            Convention::Spin => (x * h - h.abs() - std::f64::consts::LN_2, 1.0 + e.abs()),
            Convention::Binary => (x * h - h.max(0.0), e.max(1.0 - e)),
        }
    }

    /// The per-update constant of [`Convention::shifted_mean`]: `tanh δ` or `e^δ`.
    #[inline]
    pub fn shift_constant(self, delta: f64) -> f64 {
        match self {
            Convention::Spin => delta.tanh(),
            Convention::Binary => delta.exp(),
        }
    }
}

/// The logistic function `1 / (1 + e^{−h})`, without overflow.
#[inline]
pub(crate) fn sigmoid(h: f64) -> f64 {
    if h >= 0.0 {
        1.0 / (1.0 + (-h).exp())
    } else {
        let e = h.exp();
        e / (1.0 + e)
    }
}

impl fmt::Display for Convention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Convention {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "spin" => Ok(Convention::Spin),
            "binary" => Ok(Convention::Binary),
            other => Err(Error::param(
                "convention",
                format!("expected `spin` or `binary`, found `{other}`"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: [Convention; 2] = [Convention::Spin, Convention::Binary];

    #[test]
    fn values_and_names() {
        assert_eq!(Convention::Spin.value(0), -1.0);
        assert_eq!(Convention::Spin.value(1), 1.0);
        assert_eq!(Convention::Binary.value(0), 0.0);
        assert_eq!(Convention::Binary.value(1), 1.0);
        for c in BOTH {
            assert_eq!(c.value(1) - c.value(0), c.gap());
            assert_eq!(c.name().parse::<Convention>().unwrap(), c);
        }
        assert!("ising".parse::<Convention>().is_err());
    }

    /// Log-normalizer, mean and variance against their definitions by direct sums.
    #[test]
    fn unit_family_matches_definitions() {
        for c in BOTH {
            for &h in &[-3.7, -0.4, 0.0, 0.9, 2.5] {
                let (lo, hi) = (c.value(0), c.value(1));
                let (a, b) = ((lo * h).exp(), (hi * h).exp());
                let z = a + b;
                assert!((c.log_norm(h) - z.ln()).abs() < 1e-14, "{c} {h}");
                let mean = (lo * a + hi * b) / z;
                assert!((c.mean(h) - mean).abs() < 1e-14);
                let var = (lo * lo * a + hi * hi * b) / z - mean * mean;
                assert!((c.variance(h) - var).abs() < 1e-14);
                assert!(c.variance(h) <= c.variance_bound() + 1e-15);
            }
            // Extreme fields: finite and saturated.
            assert!((c.log_norm(800.0) - 800.0 * c.value(1)).abs() < 1e-9);
            assert!(c.log_norm(-800.0).is_finite());
            assert_eq!(c.variance(1000.0), 0.0);
        }
        assert_eq!(
            Convention::Spin.variance_bound(),
            Convention::Spin.variance(0.0)
        );
        assert_eq!(
            Convention::Binary.variance_bound(),
            Convention::Binary.variance(0.0)
        );
    }

    #[test]
    fn log_prob_parts_give_the_log_conditional() {
        for c in BOTH {
            for &h in &[-40.0, -3.7, -0.4, 0.0, 0.9, 2.5, 40.0] {
                for bit in [0u8, 1] {
                    let x = c.value(bit);
                    let (r, f) = c.log_prob_parts(x, h, c.mean(h));
                    let want = x * h - c.log_norm(h);
                    assert!(
                        (r + f.ln() - want).abs() < 1e-14 * (1.0 + want.abs()),
                        "{c} {h}"
                    );
                }
            }
        }
    }

    #[test]
    fn shifted_mean_is_the_mean_at_the_shifted_field() {
        for c in BOTH {
            for &h in &[-2.0, -0.3, 0.0, 1.1] {
                for &delta in &[-0.7, 0.05, 1.3] {
                    let t = c.shift_constant(delta);
                    for bit in [0u8, 1] {
                        let x = c.value(bit);
                        let got = c.shifted_mean(c.mean(h), x, t);
                        let want = c.mean(h + delta * x);
                        assert!((got - want).abs() < 1e-14, "{c} h={h} δ={delta} x={x}");
                    }
                }
            }
        }
    }
}
