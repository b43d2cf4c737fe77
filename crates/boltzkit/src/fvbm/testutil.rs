//! Helpers shared by the FVBM tests: the data layer's chi-square and state counts.

pub(crate) use crate::data::synth::{chi_square, state_counts};
