//! Estimators and metrics: the [`Estimate`] every likelihood figure is reported as, KL,
//! entropy, and the small statistics of repeated runs ([`stats`]).

pub mod metrics;
pub mod stats;
pub mod value;

pub use metrics::{entropy, kl_divergence};
pub use value::{Estimate, Method};
