//! [`Estimate`]: a figure with its standard error, an interval and the method that gave it.
//!
//! Every log-partition function and average log-likelihood the library reports is an
//! `Estimate`: exact ones have a zero standard error and a degenerate interval; sampled ones
//! (AIS, RAISE) carry the standard error of the estimate and an interval whose meaning the
//! method states (for AIS, the ±3σ range of the mean importance weight mapped through `ln`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How a figure was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Exact enumeration (of the states, or of the smaller RBM layer).
    Exact,
    /// Forward annealed importance sampling: `ln Ẑ` low, the log-likelihood optimistic, in
    /// expectation.
    Ais,
    /// Reverse annealing started at data rows, pooled into one `ln Ẑ` ("from the data side"):
    /// neither a bound nor consistent; kept to show why RAISE replaced it.
    ReverseAisFromData,
    /// RAISE (Burda, Grosse & Salakhutdinov 2015): a per-vector reverse-annealing estimate of
    /// `ln p(v)`, conservative in expectation for the annealing model (forward AIS's chain),
    /// which approaches the model as the steps grow (`rbm::raise`).
    Raise,
    /// The interval [RAISE, forward AIS] of an average log-likelihood.
    Bracket,
}

impl Method {
    /// The name used on the command line, in files and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Ais => "ais",
            Method::ReverseAisFromData => "reverse-ais-from-data",
            Method::Raise => "raise",
            Method::Bracket => "bracket",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = crate::Error;

    fn from_str(s: &str) -> crate::Result<Self> {
        [
            Method::Exact,
            Method::Ais,
            Method::ReverseAisFromData,
            Method::Raise,
            Method::Bracket,
        ]
        .into_iter()
        .find(|m| m.name() == s)
        .ok_or_else(|| {
            crate::Error::param(
                "method",
                format!("unknown method `{s}` (exact, ais, raise, bracket, reverse-ais-from-data)"),
            )
        })
    }
}

/// A number with its uncertainty: `value`, its standard error, an interval `[lower, upper]`
/// and the [`Method`] that produced it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The figure itself.
    pub value: f64,
    /// Its standard error (0 for exact figures).
    pub stderr: f64,
    /// Lower end of the interval the method reports (`value` for exact figures).
    pub lower: f64,
    /// Upper end of the interval the method reports (`value` for exact figures).
    pub upper: f64,
    /// How it was obtained.
    pub method: Method,
}

impl Estimate {
    /// An exact figure: zero standard error, the interval a point.
    ///
    /// ```
    /// use boltzkit::estimate::{Estimate, Method};
    /// let e = Estimate::exact(-3.5);
    /// assert_eq!((e.lower, e.upper, e.stderr, e.method), (-3.5, -3.5, 0.0, Method::Exact));
    /// ```
    pub fn exact(value: f64) -> Self {
        Estimate {
            value,
            stderr: 0.0,
            lower: value,
            upper: value,
            method: Method::Exact,
        }
    }

    /// Whether the figure is exact.
    pub fn is_exact(&self) -> bool {
        self.method == Method::Exact
    }

    /// The same estimate shifted by `delta` (value and interval), e.g. `−ln Ẑ` added to a
    /// mean unnormalized log-probability; the standard error is unchanged.
    pub fn shifted(self, delta: f64) -> Self {
        Estimate {
            value: self.value + delta,
            lower: self.lower + delta,
            upper: self.upper + delta,
            ..self
        }
    }

    /// The same estimate negated (value, interval ends swapped); the standard error is
    /// unchanged. `ln Ẑ` → `−ln Ẑ`.
    pub fn negated(self) -> Self {
        Estimate {
            value: -self.value,
            lower: -self.upper,
            upper: -self.lower,
            ..self
        }
    }
}

impl fmt::Display for Estimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_exact() {
            write!(f, "{:.4} (exact)", self.value)
        } else {
            write!(
                f,
                "{:.4} ± {:.4} ({}, interval [{:.4}, {:.4}])",
                self.value, self.stderr, self.method, self.lower, self.upper
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip() {
        for m in [
            Method::Exact,
            Method::Ais,
            Method::ReverseAisFromData,
            Method::Raise,
            Method::Bracket,
        ] {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
            assert_eq!(
                serde_json::to_string(&m).unwrap(),
                format!("\"{}\"", m.name())
            );
        }
        assert!("raise2".parse::<Method>().is_err());
    }

    #[test]
    fn shift_and_negate_keep_the_interval_ordered() {
        let e = Estimate {
            value: 2.0,
            stderr: 0.1,
            lower: 1.5,
            upper: 2.6,
            method: Method::Ais,
        };
        let n = e.negated().shifted(10.0);
        assert_eq!((n.value, n.lower, n.upper, n.stderr), (8.0, 7.4, 8.5, 0.1));
    }
}
