//! Block Gibbs sampling of an [`Rbm`] on mini-batches of chains: `h ~ p(h | v)` then
//! `v ~ p(v | h)`, each layer sampled at once since its units are independent given the other
//! (the inner loop of Algs. 1-4 of the S-DCP paper).
//!
//! Chain `i` draws from its own stream [`derive_rng`]`(seed, i)`; conditionals come from
//! [`crate::linalg::sgemm_par`] (split by shape only) and draws are made in fixed blocks of
//! [`CHAIN_BLOCK`] chains, so the states after any number of steps are the same bits whatever
//! the number of threads.

mod anneal;
mod chains;
mod fused;
pub use crate::rng::{sample_bernoulli, LANE_DRAW_MIN_UNITS};
pub(crate) use anneal::AnnealChains;
pub(crate) use chains::sample_blocks;
pub use chains::{
    sample_from_uniform, step_operations, GibbsChains, CHAIN_BLOCK, DEFAULT_SAMPLE_STEPS,
};
pub use fused::FusedScratch;
pub(crate) use fused::StepPlan;
