//! Estimators and metrics: the [`Estimate`] every likelihood figure is reported as, KL,
//! entropy.

pub mod metrics;
pub mod value;

pub use metrics::{entropy, kl_divergence};
pub use value::{Estimate, Method};
