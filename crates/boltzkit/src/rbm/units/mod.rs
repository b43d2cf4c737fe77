//! RBM unit types beyond 0/1 (issue 34): per layer a [`UnitType`] with its energy, per-unit
//! log-partition (the free energy's term), conditional mean and sampler, state check and AIS
//! base model; [`Units`] holds a layer of any type and dispatches once per batch.
//!
//! | module | what it holds |
//! |---|---|
//! | `unit_type` | [`UnitType`]: the seam every type implements |
//! | `layer` | [`Units`] (one layer of any type, batch operations), [`UnitKind`] (names) |
//! | `model` | [`UnitRbm`]: an RBM over two layers of any types; energy, free energy, exact `ln Z` |
//! | `conditionals` | [`UnitRbm`]'s inputs, means and draws of one layer given the other, on mini-batches |
//! | `chains` | [`UnitChains`]: block Gibbs chains over a [`UnitRbm`], one generator per chain |
//! | `statistics` | [`UnitStats`]: the log-likelihood gradient's statistics; the exact gradient by enumeration |
//! | `sample_weights` | [`normalized_weights`]: data rows' weights scaled to add to 1 |
//! | `init` | [`UnitRbm::init_from_data`], [`UnitRbmParams`] (a whole run's settings), [`default_layer`] |
//! | `pipeline` | the runs both front ends make: [`visible_layer`], codes as rows and back, [`fit_unit_rbm`], [`continue_unit_rbm`], [`fit_metadata`], [`ais_with`], [`sample_chains`] |
//! | `train` | [`train`]: CD-k / PCD-k over the seam, sample weights, L2 and L1², [`UnitTrainParams`] |
//! | `file` | model files `boltzkit/rbm/v2`: [`save_unit_rbm`], [`load_unit_rbm`] |
//! | `couplings` | [`effective_couplings`]: PGM's effective couplings of categorical visible units, for contacts |
//! | `ais` | [`ais_log_partition`] (forward AIS) and [`raise_log_likelihoods`] (RAISE) over the seam |
//! | `bernoulli` | [`Bernoulli`]: 0/1 units |
//! | `categorical` | [`Categorical`]: Potts units, `q_i` states per site as one-hot blocks |
//! | `gaussian` | [`Gaussian`]: real units with learned, bounded variances |
//! | `gaussian_fit` | [`Standardization`] (Gaussian data standardized, the model written back in data units), [`clip_gradient`] |
//! | `gibbs_langevin` | [`GibbsLangevin`]: Gibbs steps plus Metropolis-adjusted Langevin steps on `p(v)` (Liao et al. 2022) |
//! | `relu` | [`Relu`]: non-negative real units (a truncated Gaussian) |
//! | `drelu` | [`DRelu`]: double-sided ReLU (Tubiana, Cocco & Monasson 2019), PGM's gauge |
//! | `bounded` | [`Bounded`]: the positive, bounded parameterization of variances |
//! | `special` | `erfcx`, `ln erfcx`, half-Gaussian partition, moments and exact sampler |
//!
//! The (Bernoulli, Bernoulli) RBM keeps [`crate::rbm::Rbm`] and its fused kernels; these
//! types serve every other pair.

mod ais;
mod bernoulli;
mod bounded;
mod categorical;
mod chains;
mod check;
mod conditionals;
mod couplings;
mod drelu;
mod file;
mod gaussian;
mod gaussian_fit;
mod gibbs_langevin;
mod init;
mod layer;
mod model;
mod optim;
mod pipeline;
mod relu;
mod sample_weights;
pub mod special;
mod statistics;
mod train;
mod unit_type;

#[cfg(test)]
mod quadrature;
#[cfg(test)]
mod twins;

pub use ais::{ais_log_partition, raise_log_likelihoods};
pub use bernoulli::Bernoulli;
pub use bounded::Bounded;
pub use categorical::Categorical;
pub use chains::UnitChains;
pub use couplings::{effective_couplings, CouplingParams, EffectiveCouplings};
pub use drelu::DRelu;
pub use file::{
    is_unit_model_file, load_unit_rbm, save_unit_rbm, unit_rbm_tensors, UnitRbmFile,
    UNIT_RBM_FORMAT,
};
pub use gaussian::{Gaussian, VARIANCE_BOUNDS};
pub use gaussian_fit::{clip_gradient, Standardization, StandardizeParams};
pub use gibbs_langevin::{GibbsLangevin, LangevinParams};
pub use init::{default_layer, UnitRbmParams};
pub use layer::{UnitKind, Units};
pub use model::{UnitRbm, MAX_ENUM_STATES};
pub use optim::UnitOptimizer;
pub use pipeline::{
    ais_with, continue_unit_rbm, fit_metadata, fit_unit_rbm, sample_chains, sample_start,
    visible_layer,
};
pub use relu::Relu;
pub use sample_weights::normalized_weights;
pub use statistics::UnitStats;
pub use train::{train, UnitFit, UnitTrainParams};
pub use unit_type::{UnitType, GAMMA_MIN};
