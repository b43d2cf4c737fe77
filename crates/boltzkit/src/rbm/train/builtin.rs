//! The update of a built-in [`Algorithm`]: CD-k as S-DCP with `d = 1`, PCD-k, S-DCP, CG as
//! CS-DCP with `d = 1`, CS-DCP, pop-CD-k, PT-M.

use super::algorithm::Algorithm;
use super::cd::Cd;
use super::centered::Centered;
use super::params::TrainParams;
use super::popcd::{PopCd, Weighting};
use super::pt::Pt;
use super::sdcp::Sdcp;
use super::update::Update;
use crate::data::Dataset;
use crate::error::Result;

/// The update of a built-in [`Algorithm`], its chains seeded by `chain_seed`; centered
/// algorithms take their offsets from `data`.
pub fn algorithm_update(
    algorithm: Algorithm,
    params: &TrainParams,
    data: &Dataset,
    n_hidden: usize,
    chain_seed: u64,
) -> Result<Box<dyn Update>> {
    Ok(match algorithm {
        // CD-k is S-DCP with d = 1 (Alg. 3), the same bits as Cd + one Sgd step.
        Algorithm::Cd { k } => Box::new(Sdcp::new(1, k, chain_seed)?),
        Algorithm::Sdcp { inner, k } => Box::new(Sdcp::new(inner, k, chain_seed)?),
        Algorithm::Pcd { k } => Box::new(Cd::persistent(k, chain_seed)?),
        // CG is CS-DCP with d = 1 (Alg. 4).
        Algorithm::Cg { k } | Algorithm::CsDcp { k, .. } => {
            let inner = match algorithm {
                Algorithm::CsDcp { inner, .. } => inner,
                _ => 1,
            };
            Box::new(Centered::from_data(
                data,
                n_hidden,
                inner,
                k,
                chain_seed,
                params.nu_mu,
                params.nu_lambda,
            )?)
        }
        Algorithm::PopCd { k, loo } => {
            let w = if loo {
                Weighting::LeaveOneOut
            } else {
                Weighting::SelfNormalized
            };
            Box::new(PopCd::new(k, chain_seed)?.weighting(w))
        }
        Algorithm::Pt { replicas, k } => Box::new(Pt::new(replicas, k, chain_seed)?),
    })
}
