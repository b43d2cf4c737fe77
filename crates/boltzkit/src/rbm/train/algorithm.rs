//! The one algorithm notation of the RBM trainers: [`Algorithm`], parsed and printed in one
//! place (`FromStr` + `Display`) and used by the library, `rbm fit --algo`, `lab` and every
//! `repro`.
//!
//! | name | algorithm |
//! |---|---|
//! | `cd-K` | CD-K (Alg. 1 of the S-DCP paper) |
//! | `pcd-K` | persistent CD-K (Tieleman 2008) |
//! | `sdcp-D-K` | S-DCP (Alg. 3): `D` inner steps of `K′ = K` Gibbs steps |
//! | `cg-K` | centered gradient with CD-K (Melchior et al. 2016; CS-DCP with `d = 1`) |
//! | `csdcp-D-K` | centered S-DCP (Alg. 4) |
//! | `popcd-K`, `popcd-K-loo` | pop-CD-K (Eq. 8 of the pop-CD paper; Eq. 9 with `loo`) |
//! | `pt-M`, `pt-M-K` | parallel tempering with `M` replicas, `K` tempered steps (default 1) |
//!
//! An unknown name is an error naming the accepted forms, never dropped.
//!
//! ```
//! use boltzkit::rbm::train::Algorithm;
//! let a: Algorithm = "csdcp-3-4".parse()?;
//! assert_eq!(a, Algorithm::CsDcp { inner: 3, k: 4 });
//! assert_eq!(a.to_string(), "csdcp-3-4");
//! assert!("cd-0".parse::<Algorithm>().is_err() && "cdx-1".parse::<Algorithm>().is_err());
//! # Ok::<(), boltzkit::Error>(())
//! ```

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// The gradient estimator / update of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// CD-k (Alg. 1 of the S-DCP paper): chains restart at each mini-batch. Runs as S-DCP
    /// with `d = 1` (the same bits as [`Cd`] followed by one [`Sgd`] step).
    Cd {
        /// Gibbs steps per estimate (`K`), ≥ 1.
        k: usize,
    },
    /// PCD-k (Tieleman 2008): one persistent chain per row of the first mini-batch.
    Pcd {
        /// Gibbs steps per estimate, ≥ 1.
        k: usize,
    },
    /// S-DCP (Alg. 3 of the S-DCP paper): `inner` = `d` inner steps of `k` = `K′` Gibbs steps.
    Sdcp {
        /// Inner steps `d`, ≥ 1.
        inner: usize,
        /// Gibbs steps per inner step `K′`, ≥ 1.
        k: usize,
    },
    /// Centered gradient CG with CD-k (Melchior et al. 2016, Alg. 1): [`Centered`] with
    /// `d = 1`; offsets from [`TrainParams::nu_mu`], [`TrainParams::nu_lambda`].
    Cg {
        /// Gibbs steps per estimate, ≥ 1.
        k: usize,
    },
    /// CS-DCP (Alg. 4 of the S-DCP paper): centered S-DCP, `inner` = `d`, `k` = `K′`.
    CsDcp {
        /// Inner steps `d`, ≥ 1.
        inner: usize,
        /// Gibbs steps per inner step `K′`, ≥ 1.
        k: usize,
    },
    /// pop-CD-k ([`PopCd`], Eq. 8 of the pop-CD paper): CD-k with importance-weighted
    /// negative samples; the metric log gets the effective sample size.
    PopCd {
        /// Gibbs steps per estimate, ≥ 1.
        k: usize,
        /// The leave-one-out weights of Eq. 9 instead of Eq. 8 (batches of at least 2).
        loo: bool,
    },
    /// Parallel tempering PT-M ([`Pt`]): `replicas` persistent replicas per chain at `β`
    /// uniform in `[0, 1]`; the metric log gets the exchange acceptance rates.
    Pt {
        /// Replicas `M`, ≥ 2 (the pop-CD paper: 10).
        replicas: usize,
        /// Tempered Gibbs steps (each followed by an exchange round) per estimate, ≥ 1.
        k: usize,
    },
}

impl Algorithm {
    /// The short name used in logs and model metadata (`cd`, `pcd`, `sdcp`, `cg`, `csdcp`,
    /// `popcd`, `pt`).
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Cd { .. } => "cd",
            Algorithm::Pcd { .. } => "pcd",
            Algorithm::Sdcp { .. } => "sdcp",
            Algorithm::Cg { .. } => "cg",
            Algorithm::CsDcp { .. } => "csdcp",
            Algorithm::PopCd { .. } => "popcd",
            Algorithm::Pt { .. } => "pt",
        }
    }

    /// Whether the algorithm keeps centering offsets.
    pub fn is_centered(&self) -> bool {
        matches!(self, Algorithm::Cg { .. } | Algorithm::CsDcp { .. })
    }

    /// Block Gibbs steps of one chain per gradient estimate (`K`, `d · K′`, or `M · K` for
    /// PT's replicas), saturating: what [`crate::budget::check_work`] weighs an update by.
    pub fn chain_steps(&self) -> usize {
        match *self {
            Algorithm::Cd { k }
            | Algorithm::Pcd { k }
            | Algorithm::Cg { k }
            | Algorithm::PopCd { k, .. } => k,
            Algorithm::Sdcp { inner, k } | Algorithm::CsDcp { inner, k } => inner.saturating_mul(k),
            Algorithm::Pt { replicas, k } => replicas.saturating_mul(k),
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Algorithm::Cd { k } => write!(f, "cd-{k}"),
            Algorithm::Pcd { k } => write!(f, "pcd-{k}"),
            Algorithm::Sdcp { inner, k } => write!(f, "sdcp-{inner}-{k}"),
            Algorithm::Cg { k } => write!(f, "cg-{k}"),
            Algorithm::CsDcp { inner, k } => write!(f, "csdcp-{inner}-{k}"),
            Algorithm::PopCd { k, loo: false } => write!(f, "popcd-{k}"),
            Algorithm::PopCd { k, loo: true } => write!(f, "popcd-{k}-loo"),
            Algorithm::Pt { replicas, k: 1 } => write!(f, "pt-{replicas}"),
            Algorithm::Pt { replicas, k } => write!(f, "pt-{replicas}-{k}"),
        }
    }
}

/// The accepted forms, for error messages.
pub const ALGORITHM_FORMS: &str =
    "cd-K, pcd-K, sdcp-D-K, cg-K, csdcp-D-K, popcd-K, popcd-K-loo, pt-M or pt-M-K";

/// Serialized as its name in the one notation (`"pcd-1"`, `"sdcp-3-4"`).
impl serde::Serialize for Algorithm {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Algorithm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for Algorithm {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad =
            |why: String| Error::param("algorithm", format!("`{s}`: {why} ({ALGORITHM_FORMS})"));
        let num = |x: &str, min: usize, what: &str| -> Result<usize> {
            match x.parse::<usize>() {
                Ok(n) if n >= min => Ok(n),
                _ => Err(bad(format!(
                    "{what} must be an integer ≥ {min}, found `{x}`"
                ))),
            }
        };
        let lower = s.trim().to_ascii_lowercase();
        let parts: Vec<&str> = lower.split('-').collect();
        Ok(match parts[..] {
            ["cd", k] => Algorithm::Cd { k: num(k, 1, "K")? },
            ["pcd", k] => Algorithm::Pcd { k: num(k, 1, "K")? },
            ["cg", k] => Algorithm::Cg { k: num(k, 1, "K")? },
            ["sdcp", d, k] => Algorithm::Sdcp {
                inner: num(d, 1, "D")?,
                k: num(k, 1, "K")?,
            },
            ["csdcp", d, k] => Algorithm::CsDcp {
                inner: num(d, 1, "D")?,
                k: num(k, 1, "K")?,
            },
            ["popcd", k] => Algorithm::PopCd {
                k: num(k, 1, "K")?,
                loo: false,
            },
            ["popcd", k, "loo"] => Algorithm::PopCd {
                k: num(k, 1, "K")?,
                loo: true,
            },
            ["pt", m] => Algorithm::Pt {
                replicas: num(m, 2, "M")?,
                k: 1,
            },
            ["pt", m, k] => Algorithm::Pt {
                replicas: num(m, 2, "M")?,
                k: num(k, 1, "K")?,
            },
            _ => return Err(bad("unknown algorithm".into())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_algorithm_round_trips_through_its_name() {
        let all = [
            Algorithm::Cd { k: 1 },
            Algorithm::Pcd { k: 12 },
            Algorithm::Sdcp { inner: 3, k: 4 },
            Algorithm::Cg { k: 1 },
            Algorithm::CsDcp { inner: 2, k: 5 },
            Algorithm::PopCd { k: 1, loo: false },
            Algorithm::PopCd { k: 3, loo: true },
            Algorithm::Pt { replicas: 10, k: 1 },
            Algorithm::Pt { replicas: 4, k: 2 },
        ];
        for a in all {
            assert_eq!(a.to_string().parse::<Algorithm>().unwrap(), a);
        }
        assert_eq!(
            "PCD-1".parse::<Algorithm>().unwrap(),
            Algorithm::Pcd { k: 1 }
        );
    }

    #[test]
    fn unknown_or_incomplete_names_are_errors_naming_the_forms() {
        for bad in [
            "",
            "cd",
            "cd-0",
            "cd-x",
            "sdcp-3",
            "pt-1",
            "popcd-1-lo",
            "frank-wolfe",
            "cd-1-2",
        ] {
            let e = bad.parse::<Algorithm>().unwrap_err().to_string();
            assert!(e.contains("cd-K, pcd-K"), "{bad}: {e}");
        }
    }
}
