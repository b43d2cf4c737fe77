//! The FVBM learners' settings as one schema ([`crate::settings`]): [`FvbmParams`] names the
//! solver (`algo`) and holds its `XParams`, serialized flat under the fields' names. `fvbm fit`
//! builds it from its flags, Python's `FVBM` from its keyword arguments, and the model file
//! records it ([`crate::provenance::fvbm_fit`]); each default is the solver's own, written
//! once in its `Default` (BSLM stops at first-order optimality, GA and Newton at the paper's
//! gain `τ = 1e-5`).
//!
//! ```
//! use boltzkit::fvbm::FvbmParams;
//! let p = FvbmParams::from_json(r#"{"algo": "ga", "step": 0.5}"#)?;
//! let FvbmParams::Ga(ga) = &p else { unreachable!() };
//! assert_eq!((ga.step, ga.mple.tau), (0.5, 1e-5)); // τ left out: GA's default
//! let json = boltzkit::settings::to_json(&p)?;
//! assert_eq!((json["algo"].as_str(), json["step"].as_f64()), (Some("ga"), Some(0.5)));
//! assert!(FvbmParams::from_json(r#"{"algo": "ga", "step": -1}"#)?.check().is_err());
//! assert!(FvbmParams::from_json(r#"{"algo": "nope"}"#).is_err());
//! # Ok::<(), boltzkit::Error>(())
//! ```

use super::convention::Convention;
use super::ga::GaParams;
use super::mle::MleParams;
use super::mple::MpleParams;
use super::newton::NewtonParams;
use super::pcd::PcdParams;
use super::plm::PlmParams;
use crate::error::{Error, Result};
use serde_json::Value;

/// The solvers' names, as `algo` takes them.
pub const ALGOS: [&str; 6] = ["plm", "bslm", "ga", "newton", "mle", "pcd"];

/// The settings of one FVBM fit: the solver (`algo`, the serialized tag) and its settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "algo", rename_all = "lowercase")]
pub enum FvbmParams {
    /// MPLE by L-BFGS on matrix products ([`super::plm`]).
    Plm(PlmParams),
    /// MPLE by block successive lower-bound maximization ([`super::bslm`]).
    Bslm(MpleParams),
    /// MPLE by gradient ascent with step `μ` ([`super::ga`]).
    Ga(GaParams),
    /// MPLE by damped Newton ([`super::newton`]).
    Newton(NewtonParams),
    /// Exact maximum likelihood on exact moments ([`super::mle`]).
    Mle(MleParams),
    /// Persistent contrastive divergence ([`super::pcd`]).
    Pcd(PcdParams),
}

impl FvbmParams {
    /// The default settings of solver `algo` (one of [`ALGOS`]).
    pub fn default_for(algo: &str) -> Result<Self> {
        Ok(match algo {
            "plm" => FvbmParams::Plm(PlmParams::default()),
            "bslm" => FvbmParams::Bslm(MpleParams::default()),
            "ga" => FvbmParams::Ga(GaParams::default()),
            "newton" => FvbmParams::Newton(NewtonParams::default()),
            "mle" => FvbmParams::Mle(MleParams::default()),
            "pcd" => FvbmParams::Pcd(PcdParams::default()),
            other => {
                return Err(Error::param(
                    "algo",
                    format!("must be one of {}, got {other:?}", ALGOS.join(", ")),
                ))
            }
        })
    }

    /// Settings from a JSON object naming `algo`: the entries given over that solver's
    /// defaults (an entry no solver of that name has is ignored).
    pub fn from_json(json: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(json)
            .map_err(|e| Error::param("settings", format!("FVBM: not a JSON object: {e}")))?;
        Self::from_value(value)
    }

    /// [`FvbmParams::from_json`] of a parsed value.
    pub fn from_value(value: Value) -> Result<Self> {
        let algo = value.get("algo").and_then(Value::as_str).ok_or_else(|| {
            Error::param(
                "algo",
                format!("must name the solver ({})", ALGOS.join(", ")),
            )
        })?;
        crate::settings::overlay(&Self::default_for(algo)?, &value)
    }

    /// Refuses up front, with its memory and time estimates and the solver that scales, a fit
    /// on `rows` samples of `d` units that the dense solvers would not hold in memory or end
    /// within an hour: Newton's Hessian ([`NewtonParams::check_size`]) and the dense
    /// existence check of BSLM, gradient ascent and Newton
    /// ([`super::separation::check_size`]). The fits run the same checks before any work.
    pub fn check_size(&self, d: usize, rows: usize) -> Result<()> {
        let mple = match self {
            FvbmParams::Newton(p) => {
                NewtonParams::check_size(d, rows)?;
                &p.mple
            }
            FvbmParams::Bslm(p) => p,
            FvbmParams::Ga(p) => &p.mple,
            FvbmParams::Plm(_) | FvbmParams::Mle(_) | FvbmParams::Pcd(_) => return Ok(()),
        };
        if mple.l2 == 0.0 && mple.check_existence {
            super::separation::check_size(d, rows)?;
        }
        Ok(())
    }

    /// The solver's name.
    pub fn algo(&self) -> &'static str {
        match self {
            FvbmParams::Plm(_) => "plm",
            FvbmParams::Bslm(_) => "bslm",
            FvbmParams::Ga(_) => "ga",
            FvbmParams::Newton(_) => "newton",
            FvbmParams::Mle(_) => "mle",
            FvbmParams::Pcd(_) => "pcd",
        }
    }

    /// The convention of the fitted model.
    pub fn convention(&self) -> Convention {
        match self {
            FvbmParams::Plm(p) => p.mple.convention,
            FvbmParams::Bslm(p) => p.convention,
            FvbmParams::Ga(p) => p.mple.convention,
            FvbmParams::Newton(p) => p.mple.convention,
            FvbmParams::Mle(p) => p.convention,
            FvbmParams::Pcd(p) => p.convention,
        }
    }

    /// The seed, for the solvers that draw random numbers (PCD).
    pub fn seed(&self) -> Option<u64> {
        match self {
            FvbmParams::Pcd(p) => Some(p.seed),
            _ => None,
        }
    }

    /// Checks every setting of the solver; the error names the field at fault.
    pub fn check(&self) -> Result<()> {
        match self {
            FvbmParams::Plm(p) => p.check().map(drop),
            FvbmParams::Bslm(p) => p.check().map(drop),
            FvbmParams::Ga(p) => p.check().map(drop),
            FvbmParams::Newton(p) => p.check().map(drop),
            FvbmParams::Mle(p) => p.check().map(drop),
            FvbmParams::Pcd(p) => p.check().map(drop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_solver_reads_back_as_written_with_its_own_defaults() {
        for algo in ALGOS {
            let p = FvbmParams::default_for(algo).unwrap();
            let json = crate::settings::to_json(&p).unwrap();
            assert_eq!(json["algo"], algo);
            assert_eq!(FvbmParams::from_value(json).unwrap(), p, "{algo}");
            assert_eq!(p.algo(), algo);
        }
        // τ left out: BSLM's default is off, Newton's the paper's
        let bslm = FvbmParams::from_json(r#"{"algo": "bslm", "l2": 0.5}"#).unwrap();
        let newton = FvbmParams::from_json(r#"{"algo": "newton", "l2": 0.5}"#).unwrap();
        let (FvbmParams::Bslm(b), FvbmParams::Newton(n)) = (bslm, newton) else {
            panic!("the solvers named")
        };
        assert_eq!((b.tau, b.l2, n.mple.tau, n.mple.l2), (0.0, 0.5, 1e-5, 0.5));
        let mle = FvbmParams::from_json(r#"{"algo": "mle", "max_iterations": 7}"#).unwrap();
        let FvbmParams::Mle(m) = mle else {
            panic!("mle")
        };
        assert_eq!(m.lbfgs.max_iterations, 7);
        let err = FvbmParams::from_json(r#"{"algo": "pcd", "n_chains": "x"}"#).unwrap_err();
        assert!(err.to_string().contains("n_chains"), "{err}");
        assert!(FvbmParams::from_json(r#"{"l2": 1}"#).is_err());
    }
}
