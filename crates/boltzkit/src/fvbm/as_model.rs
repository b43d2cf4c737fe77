//! [`Fvbm`] as a [`Model`]: exact `ln Z`, probabilities and samples by the Gray-code
//! enumeration up to [`exact::MAX_EXACT_UNITS`] units, Gibbs samples beyond.

use super::exact;
use super::model::Fvbm;
use crate::data::Dataset;
use crate::error::Result;
use crate::estimate::Estimate;
use crate::linalg::deterministic_sum;
use crate::model::{
    exact_only, not_affordable, ExactTask, LogPartition, Metadata, Model, Sampler, Sampling,
};
use crate::rng::BkRng;
use std::path::Path;

impl Model for Fvbm {
    fn n_variables(&self) -> usize {
        self.d()
    }

    /// `ln Z` and exact sampling (two passes over the states, no table) up to
    /// [`exact::MAX_EXACT_UNITS`] units.
    fn exact_affordable(&self, _task: ExactTask) -> bool {
        self.d() <= exact::MAX_EXACT_UNITS
    }

    fn unnormalized_log_probs(&self, data: &Dataset) -> Result<Vec<f64>> {
        exact::log_potentials(self, data)
    }

    /// Summed by [`deterministic_sum`] (rows are scored in parallel).
    fn mean_unnormalized_log_prob(&self, data: &Dataset) -> Result<f64> {
        data.require_nonempty()?;
        let lp = self.unnormalized_log_probs(data)?;
        Ok(deterministic_sum(&lp, |x| x) / lp.len() as f64)
    }

    fn log_partition(&self, method: &LogPartition) -> Result<Estimate> {
        exact_only(method, "FVBM")?;
        if !self.exact_affordable(ExactTask::LogPartition) {
            return Err(not_affordable(
                "an FVBM",
                ExactTask::LogPartition,
                format!("{} units", self.d()),
                format!("{} units", exact::MAX_EXACT_UNITS),
            ));
        }
        Ok(Estimate::exact(exact::log_partition(self)?))
    }

    fn sample(&self, n: usize, sampling: &Sampling, rng: &mut BkRng) -> Result<Dataset> {
        match sampling.resolve(self.exact_affordable(ExactTask::Sampling)) {
            Sampler::Exact => exact::sample(self, n, rng),
            Sampler::Gibbs(steps) => {
                let mut params = super::gibbs::GibbsParams::default();
                if let Some(s) = steps {
                    params.burn_in = s;
                }
                super::gibbs::sample(self, n, &params, rng)
            }
        }
    }

    fn save(&self, path: &Path, metadata: &Metadata) -> Result<()> {
        Fvbm::save(self, path, metadata)
    }

    fn load(path: &Path) -> Result<Self> {
        Fvbm::load(path)
    }
}
