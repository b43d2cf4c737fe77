//! Data: the [`Dataset`] type, file readers and writers, and synthetic generators.

mod dataset;

pub use dataset::{Dataset, MAX_CARDINALITY};
