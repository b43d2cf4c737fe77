//! Restricted Boltzmann machines (binary units, standard energy `E(v,h) = −vᵀWh − bᵀv − cᵀh`).
//!
//! | module | what it holds |
//! |---|---|
//! | [`model`] | [`Rbm`]: parameters, energy, free energy, conditionals on mini-batches, Sec. 4.1 initialization |
//! | [`gibbs`] | [`GibbsChains`]: block Gibbs on mini-batches of chains, per-chain seeded streams |
//! | [`ais`] | annealed importance sampling of `ln Z` from a base-rate model (linear and standard schedules) |
//! | [`raise`] | RAISE (Burda et al. 2015): per-test-vector reverse annealing, conservative in expectation for the annealing model |
//! | [`loglik`] | the average log-likelihood by method: exact, AIS, RAISE, the bracket [RAISE, AIS] with its diagnosis |
//! | [`exact`] | enumeration of the smaller layer (≤ 30 units): `ln Z`, average log-likelihood, its exact gradient |
//! | [`file`](mod@file) | model files (safetensors, `boltzkit/rbm/v1`): [`file::save_rbm`], [`file::load_rbm`] |
//! | [`features`] | `E[h | v]` of a dataset, for downstream classifiers |
//! | [`frank_wolfe`] | infinite RBMs learned by Frank-Wolfe, one hidden unit per iteration (Ping, Liu & Ihler 2016) |
//! | [`monitor`] | cheap deterministic monitors: mean-field reconstruction error, full pseudo-log-likelihood |
//! | [`tempering`] | [`tempering::TemperedChains`]: persistent parallel tempering (replica exchange), a sampler for trainers |
//! | [`units`] | unit types beyond 0/1 (Bernoulli, categorical, Gaussian, ReLU, dReLU) behind one seam, [`units::Units`] |
//! | [`lab`] | gradient bias / variance against the exact gradient (Table 1 of the pop-CD paper) |
//! | [`train`] | [`train::GradientEstimator`] (CD-k, PCD-k, pop-CD-k, PT), [`train::Sdcp`] (S-DCP, Alg. 3), [`train::Centered`] (CG, CS-DCP, Alg. 4), [`train::Gradient`], the [`train::Sgd`] step, the loop [`train::Trainer`] |
//!
//! Paper: Upadhya & Sastry, *Learning RBMs using stochastic difference of convex functions
//! programming* (S-DCP; equations and algorithms cited as "Eq. 5", "Alg. 3"); pop-CD,
//! tempering and the lab cite Krause, Fischer & Igel, *Population-Contrastive-Divergence*
//! ("Eq. 8 of the pop-CD paper").

pub mod ais;
pub(crate) mod as_model;
pub mod eval_settings;
pub mod exact;
pub mod features;
pub mod file;
pub mod frank_wolfe;
pub mod gibbs;
pub mod lab;
pub mod loglik;
pub mod model;
pub mod monitor;
pub(crate) mod packed;
pub mod raise;
pub mod tempering;
pub mod train;
pub mod units;

#[cfg(test)]
mod testutil;

pub use exact::{ExactGradient, Precision};
pub use gibbs::{sample_bernoulli, GibbsChains};
pub use model::{base_rate_biases, fill_batch, mean_neg_free_energy, visible_means, Rbm};
