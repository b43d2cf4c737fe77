//! [`Rbm`] as a [`Model`]: `ln Z` by enumerating the smaller layer when affordable, AIS
//! otherwise; exact samples from a small layer, block Gibbs beyond.

use super::ais::{ais_log_partition, ais_log_partition_with_interrupt};
use super::exact as rbm_exact;
use super::model::Rbm;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::estimate::{Estimate, Method};
use crate::model::{ExactTask, LogPartition, Metadata, Model, Sampler, Sampling};
use crate::rng::BkRng;
use rand::Rng;
use std::path::Path;

impl Model for Rbm {
    fn n_variables(&self) -> usize {
        self.n_visible()
    }

    /// `ln Z` when the smaller layer has at most [`rbm_exact::MAX_ENUM_UNITS`] units; exact
    /// sampling up to [`rbm_exact::MAX_SAMPLE_UNITS`].
    fn exact_affordable(&self, task: ExactTask) -> bool {
        rbm_exact_affordable(self.n_visible(), self.n_hidden(), task)
    }

    /// `−F(v)` of every row, in `f64` throughout ([`Rbm::free_energy`]).
    fn unnormalized_log_probs(&self, data: &Dataset) -> Result<Vec<f64>> {
        rbm_exact::neg_free_energies(self, data)
    }

    fn log_partition(&self, method: &LogPartition) -> Result<Estimate> {
        match method.resolve(self.exact_affordable(ExactTask::LogPartition)) {
            LogPartition::Exact => Ok(Estimate::exact(rbm_exact::log_partition(self)?)),
            LogPartition::Ais(o) => {
                let zeros;
                let base = match &o.base_b {
                    Some(b) => b.as_slice(),
                    None => {
                        zeros = vec![0f32; self.n_visible()];
                        &zeros
                    }
                };
                let est = match &o.interrupt {
                    Some(flag) => ais_log_partition_with_interrupt(
                        self,
                        base,
                        &o.schedule,
                        o.chains,
                        o.seed,
                        flag,
                    )?,
                    None => ais_log_partition(self, base, &o.schedule, o.chains, o.seed)?,
                };
                Ok(est.to_estimate(Method::Ais))
            }
            LogPartition::Auto => Err(Error::Internal(
                "LogPartition::resolve returned Auto".into(),
            )),
        }
    }

    /// AIS without a base model takes the base-rate biases of the data being scored.
    fn with_data_base(&self, method: &LogPartition, data: &Dataset) -> Result<LogPartition> {
        Ok(
            match method.resolve(self.exact_affordable(ExactTask::LogPartition)) {
                LogPartition::Ais(mut o) if o.base_b.is_none() => {
                    o.base_b = Some(crate::rbm::base_rate_biases(data)?);
                    LogPartition::Ais(o)
                }
                other => other,
            },
        )
    }

    /// Exact draws, or `n` block-Gibbs chains from uniform random states
    /// ([`crate::rbm::gibbs::sample_from_uniform`], default 1,000 steps, seeded by one draw
    /// of `rng`).
    fn sample(&self, n: usize, sampling: &Sampling, rng: &mut BkRng) -> Result<Dataset> {
        let v = match sampling.resolve(self.exact_affordable(ExactTask::Sampling)) {
            Sampler::Exact => rbm_exact::sample(self, n, rng)?,
            Sampler::Gibbs(steps) => crate::rbm::gibbs::sample_from_uniform(
                self,
                n,
                steps.unwrap_or(crate::rbm::gibbs::DEFAULT_SAMPLE_STEPS),
                rng.random(),
                &mut |_| {},
            )?,
        };
        crate::rbm::model::states_to_dataset(&v, self.n_visible())
    }

    fn save(&self, path: &Path, metadata: &Metadata) -> Result<()> {
        crate::rbm::file::save_rbm(path, self, None, metadata)
    }

    /// The model of an RBM file (centering offsets, when stored, are dropped: the model is
    /// the standard-energy one).
    fn load(path: &Path) -> Result<Self> {
        Ok(crate::rbm::file::load_rbm(path)?.rbm)
    }
}

/// Whether an RBM with these layer sizes can afford the exact `task`: the smaller layer is
/// enumerated, up to [`rbm_exact::MAX_ENUM_UNITS`] units for `ln Z` and
/// [`rbm_exact::MAX_SAMPLE_UNITS`] for sampling.
pub(crate) fn rbm_exact_affordable(n_visible: usize, n_hidden: usize, task: ExactTask) -> bool {
    let small = n_visible.min(n_hidden);
    match task {
        ExactTask::LogPartition => small <= rbm_exact::MAX_ENUM_UNITS,
        ExactTask::Sampling => small <= rbm_exact::MAX_SAMPLE_UNITS,
    }
}
