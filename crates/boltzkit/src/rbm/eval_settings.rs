//! The settings of a likelihood estimate by annealing ([`EvalParams`]): forward AIS's chains
//! and schedule, RAISE's chains and test vectors, the bracket's width threshold and the seed,
//! by their stable serialized names. One schema for the CLI's `rbm eval` (its flags put over
//! the defaults) and Python's `score_samples` / `log_likelihood` / `log_partition` (one
//! settings object); [`LogLikParams`](super::loglik::LogLikParams) and
//! [`AisOptions`](crate::model::AisOptions) take their defaults from here.
//!
//! ```
//! use boltzkit::rbm::eval_settings::EvalParams;
//! use boltzkit::settings;
//! let p: EvalParams = settings::from_json("eval", r#"{"ais_steps": 300, "seed": 4}"#)?;
//! assert_eq!((p.ais_chains, p.schedule()?.steps(), p.seed), (100, 300, 4));
//! assert_eq!(EvalParams::default().schedule()?.steps(), 14_500); // the standard schedule
//! assert!(settings::from_json::<EvalParams>("eval", r#"{"ais_chains": 0}"#)?.check().is_err());
//! # Ok::<(), boltzkit::Error>(())
//! ```

use super::ais::AisSchedule;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Settings of a likelihood estimate by annealing (which method is the call's choice).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalParams {
    /// Forward AIS chains (also the data-row starts of `reverse-ais-from-data`), ≥ 1; 100.
    pub ais_chains: usize,
    /// Steps of a linear annealing schedule; `None` (the default): the standard 14,500-step
    /// schedule of Salakhutdinov & Murray (2008).
    pub ais_steps: Option<usize>,
    /// RAISE chains per test vector `M ≥ 1`; 1.
    pub raise_chains: usize,
    /// RAISE on a seeded random subset of this many test vectors; `None` (the default): all.
    pub raise_vectors: Option<usize>,
    /// A bracket [RAISE, forward AIS] wider than this many nats is diagnosed as too wide; 1.
    pub max_width: f64,
    /// The seed of the chains (RAISE and its subset use seeds derived from it); 0.
    pub seed: u64,
}

impl Default for EvalParams {
    fn default() -> Self {
        EvalParams {
            ais_chains: 100,
            ais_steps: None,
            raise_chains: 1,
            raise_vectors: None,
            max_width: 1.0,
            seed: 0,
        }
    }
}

/// Steps of the linear schedule of the training monitor ([`EvalParams::monitor`]): fewer than
/// the standard 14,500, since it runs every `eval_every` epochs.
pub const MONITOR_AIS_STEPS: usize = 1000;

impl EvalParams {
    /// The settings of the log-likelihood monitor during training (`rbm fit --eval ais|bracket`,
    /// Python's `fit(monitor="ais")`): the default chains over a linear schedule of
    /// [`MONITOR_AIS_STEPS`] steps, seeded by `seed`.
    pub fn monitor(seed: u64) -> Self {
        EvalParams {
            ais_steps: Some(MONITOR_AIS_STEPS),
            seed,
            ..EvalParams::default()
        }
    }

    /// The annealing schedule: linear with `ais_steps`, else the standard one.
    pub fn schedule(&self) -> Result<AisSchedule> {
        match self.ais_steps {
            Some(k) => AisSchedule::linear(k),
            None => Ok(AisSchedule::standard()),
        }
    }

    /// Fails with the setting at fault (by its serialized name) unless the AIS settings are
    /// usable; RAISE's and the bracket's are checked where they are used
    /// ([`LogLikParams::check`](super::loglik::LogLikParams::check)).
    pub fn check(&self) -> Result<()> {
        if self.ais_chains == 0 {
            return Err(Error::param("ais_chains", "AIS needs at least one chain"));
        }
        if self.ais_steps == Some(0) {
            return Err(Error::param("ais_steps", "AIS needs at least one step"));
        }
        Ok(())
    }
}
