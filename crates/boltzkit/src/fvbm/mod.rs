//! Fully visible Boltzmann machines (FVBM, the Ising model):
//! `P(x) ∝ exp(½ xᵀMx + bᵀx)` in the spin (±1) or binary (0/1) [`Convention`].
//!
//! | module | what it holds |
//! |---|---|
//! | [`convention`] | [`Convention`]: unit values and the one-unit conditional law |
//! | [`model`] | [`Fvbm`], the parameter layout `θ`, the exact spin ↔ binary conversion |
//! | `file` | model files: [`Fvbm::save`], [`Fvbm::load`] (format [`FORMAT`]) |
//! | [`exact`] | enumeration for `d ≤ 30`: `ln Z`, moments, likelihood, KL, exact sampling |
//! | [`gibbs`] | systematic-scan Gibbs sampling for larger `d` |
//! | [`pseudo`] | the log-pseudo-likelihood (Eq. 2.1), its gradient and Hessian |
//! | [`mple`] | settings, loop, stopping rule and record shared by the MPLE solvers |
//! | [`bslm`] | MPLE by BSLM (Eqs. 2.4 and 2.7) |
//! | [`ga`] | MPLE by gradient ascent with step `μ` (Eqs. 4.1-4.2) |
//! | [`newton`] | MPLE by damped Newton with a line search (small `d`: a dense Hessian) |
//! | [`plm`] | MPLE by L-BFGS on matrix products, matrix-free existence check (the scalable solver) |
//! | [`separation`] | runaway parameters: when the MPLE does not exist |
//! | [`inference`] | sandwich standard errors and Wald z-tests for the MPLE |
//! | [`lbfgs`] | the shared L-BFGS minimizer ([`crate::optim::lbfgs`], re-exported here) |
//! | [`mle`] | exact maximum likelihood (BM-DI) by L-BFGS on exact moments |
//! | [`pcd`] | persistent contrastive divergence (BM-PCD) on persistent Gibbs chains |
//! | [`settings`] | [`FvbmParams`]: the solver and its settings, the one schema of a fit |
//!
//! Papers: Nguyen & Wood, *A block successive lower-bound maximization algorithm for the
//! maximum pseudo-likelihood estimation of fully visible Boltzmann machines* (Neural
//! Computation 28, 2016; equations cited as "Eq. 2.4" etc.), and the BM-DI / BM-PCD baselines
//! of Takabatake & Akaho's FSLL paper (Secs. 3.2-3.3).

mod as_model;
pub mod bslm;
pub mod convention;
mod dense;
pub mod exact;
mod file;
pub mod ga;
pub mod gibbs;
pub mod inference;
pub use crate::optim::lbfgs;
pub mod mle;
pub mod model;
pub mod mple;
pub mod newton;
pub mod pcd;
pub mod plm;
pub mod pseudo;
pub mod separation;
pub mod settings;

#[cfg(test)]
mod testutil;

pub use convention::Convention;
pub use exact::Moments;
pub use file::FORMAT;
pub use ga::{CheckedGaParams, GaParams};
pub use mle::{CheckedMleParams, MleParams};
pub use model::{n_params, upper_index, Fvbm};
pub use mple::CheckedBslmParams;
pub use mple::{Algorithm, BslmParams, FvbmFit, MpleParams, MpleRecord, Progress, StopReason};
pub use newton::{CheckedNewtonParams, NewtonParams};
pub use pcd::{CheckedPcdParams, PcdParams, PcdProgress};
pub use plm::{CheckedPlmParams, PlmParams};
pub use separation::{Existence, Runaway, Separation};
pub use settings::FvbmParams;
