//! [`Potts`] as a [`Model`]: exact `ln Z` and samples by enumeration up to
//! [`super::exact::MAX_EXACT_STATES`] joint states, Gibbs chains beyond.

use super::model::Potts;
use super::{exact, gibbs};
use crate::data::Dataset;
use crate::error::Result;
use crate::estimate::Estimate;
use crate::linalg::deterministic_sum;
use crate::model::{exact_only, ExactTask, LogPartition, Metadata, Model, Sampler, Sampling};
use crate::rng::BkRng;
use std::path::Path;

impl Model for Potts {
    fn n_variables(&self) -> usize {
        self.n_sites()
    }

    /// Up to [`exact::MAX_EXACT_STATES`] joint states (`Π_i q_i`).
    fn exact_affordable(&self, _task: ExactTask) -> bool {
        exact::affordable(self)
    }

    fn unnormalized_log_probs(&self, data: &Dataset) -> Result<Vec<f64>> {
        self.log_potentials(data)
    }

    /// Summed by [`deterministic_sum`] (rows are scored in parallel).
    fn mean_unnormalized_log_prob(&self, data: &Dataset) -> Result<f64> {
        data.require_nonempty()?;
        let lp = self.unnormalized_log_probs(data)?;
        Ok(deterministic_sum(&lp, |x| x) / lp.len() as f64)
    }

    fn log_partition(&self, method: &LogPartition) -> Result<Estimate> {
        exact_only(method, "a Potts model")?;
        Ok(Estimate::exact(exact::log_partition(self)?))
    }

    /// Exact draws by enumeration, else Gibbs chains ([`gibbs::sample`]: the default
    /// burn-in of 1,000 sweeps, or `steps`).
    fn sample(&self, n: usize, sampling: &Sampling, rng: &mut BkRng) -> Result<Dataset> {
        match sampling.resolve(self.exact_affordable(ExactTask::Sampling)) {
            Sampler::Exact => exact::sample(self, n, rng),
            Sampler::Gibbs(steps) => {
                let default = gibbs::GibbsParams::default();
                let burn_in = steps.unwrap_or(default.burn_in);
                gibbs::sample(self, n, &gibbs::GibbsParams { burn_in, ..default }, rng)
            }
        }
    }

    fn save(&self, path: &Path, metadata: &Metadata) -> Result<()> {
        Potts::save(self, path, metadata)
    }

    fn load(path: &Path) -> Result<Self> {
        Potts::load(path)
    }
}
