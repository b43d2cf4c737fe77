//! Estimators and metrics: exact partition functions, KL, likelihoods.

pub mod metrics;

pub use metrics::{entropy, kl_divergence};
