//! [`FwModel`] as a [`Model`]: a standard model answers as its RBM; a fractional one by
//! enumerating its visible states, up to [`FW_MAX_ENUM_VISIBLE`] visible units.

use super::file as fw_file;
use super::model::FwModel;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::estimate::Estimate;
use crate::model::{
    exact_only, not_affordable, ExactTask, LogPartition, Metadata, Model, Sampler, Sampling,
};
use crate::rbm::as_model::rbm_exact_affordable;
use crate::rng::BkRng;
use std::path::Path;

impl Model for FwModel {
    fn n_variables(&self) -> usize {
        self.n_visible()
    }

    /// Standard models: as their RBM. Fractional models: by enumerating the `2^n_visible`
    /// visible states, up to [`FW_MAX_ENUM_VISIBLE`] visible units.
    fn exact_affordable(&self, task: ExactTask) -> bool {
        if self.is_standard() {
            rbm_exact_affordable(self.n_visible(), self.n_units(), task)
        } else {
            self.n_visible() <= FW_MAX_ENUM_VISIBLE
        }
    }

    fn unnormalized_log_probs(&self, data: &Dataset) -> Result<Vec<f64>> {
        if data.n_vars() != self.n_visible() {
            return Err(Error::Shape {
                op: "FwModel::unnormalized_log_probs".into(),
                expected: format!("{} columns", self.n_visible()),
                found: format!("{}", data.n_vars()),
            });
        }
        if !data.is_binary() {
            return Err(Error::InvalidData("an RBM needs binary (0/1) data".into()));
        }
        data.values()
            .outer_iter()
            .map(|row| self.unnormalized_log_prob(&row.to_vec()))
            .collect()
    }

    fn log_partition(&self, method: &LogPartition) -> Result<Estimate> {
        if self.is_standard() {
            return self.to_rbm()?.log_partition(method);
        }
        exact_only(method, "a fractional Frank-Wolfe model")?;
        let lp = self.enumerate_visible()?;
        Ok(Estimate::exact(crate::linalg::log_sum_exp(&lp)))
    }

    fn with_data_base(&self, method: &LogPartition, data: &Dataset) -> Result<LogPartition> {
        if self.is_standard() {
            return self.to_rbm()?.with_data_base(method, data);
        }
        Ok(method.clone())
    }

    fn sample(&self, n: usize, sampling: &Sampling, rng: &mut BkRng) -> Result<Dataset> {
        if self.is_standard() {
            return self.to_rbm()?.sample(n, sampling, rng);
        }
        match sampling.resolve(self.exact_affordable(ExactTask::Sampling)) {
            Sampler::Exact => {
                let lp = self.enumerate_visible()?;
                let dist = crate::data::synth::Distribution::from_log_weights(
                    vec![2; self.n_visible()],
                    &lp,
                )?;
                dist.sample(n, rng)
            }
            Sampler::Gibbs(_) => Err(Error::param(
                "sampling",
                "a fractional Frank-Wolfe model is sampled exactly (at most \
                 FW_MAX_ENUM_VISIBLE visible units); its Metropolis-Hastings sampler runs \
                 inside the learner",
            )),
        }
    }

    fn save(&self, path: &Path, metadata: &Metadata) -> Result<()> {
        fw_file::save_fw_model(path, self, metadata)
    }

    fn load(path: &Path) -> Result<Self> {
        fw_file::load_fw_model(path)
    }
}

/// The most visible units of a fractional Frank-Wolfe model whose `2^n_visible` states are
/// enumerated for its exact `ln Z` and samples.
pub const FW_MAX_ENUM_VISIBLE: usize = 24;

impl FwModel {
    /// `ln p̃(v)` of every visible state (index `Σ_i v_i 2^i`), for exact `ln Z` and sampling.
    fn enumerate_visible(&self) -> Result<Vec<f64>> {
        let nv = self.n_visible();
        if nv > FW_MAX_ENUM_VISIBLE {
            return Err(not_affordable(
                "a fractional Frank-Wolfe model",
                ExactTask::LogPartition,
                format!("{nv} visible units"),
                format!("{FW_MAX_ENUM_VISIBLE}"),
            ));
        }
        let mut v = vec![0u8; nv];
        (0..1usize << nv)
            .map(|x| {
                v.iter_mut()
                    .enumerate()
                    .for_each(|(i, b)| *b = ((x >> i) & 1) as u8);
                self.unnormalized_log_prob(&v)
            })
            .collect()
    }
}
