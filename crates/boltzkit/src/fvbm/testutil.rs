//! Helpers shared by the FVBM tests: the data layer's chi-square and state counts.

pub(crate) use crate::data::synth::{chi_square, state_counts};

use super::ga::GaParams;
use super::mle::{MleFit, MleParams};
use super::newton::NewtonParams;
use super::pcd::{PcdFit, PcdParams};
use super::{FvbmFit, MpleParams};
use crate::data::Dataset;
use crate::error::Result;
use crate::fit::Learner;

/// BSLM with `params` checked.
pub(crate) fn bslm(data: &Dataset, params: &MpleParams) -> Result<FvbmFit> {
    params.check()?.fit(data)
}

/// Damped Newton with `params` checked.
pub(crate) fn newton(data: &Dataset, params: &NewtonParams) -> Result<FvbmFit> {
    params.check()?.fit(data)
}

/// Gradient ascent with `params` checked.
pub(crate) fn ga(data: &Dataset, params: &GaParams) -> Result<FvbmFit> {
    params.check()?.fit(data)
}

/// Exact ML with `params` checked.
pub(crate) fn mle(data: &Dataset, params: &MleParams) -> Result<MleFit> {
    params.check()?.fit(data)
}

/// PCD with `params` and `seed`.
pub(crate) fn pcd(data: &Dataset, params: &PcdParams, seed: u64) -> Result<PcdFit> {
    PcdParams {
        seed,
        ..params.clone()
    }
    .check()?
    .fit(data)
}
