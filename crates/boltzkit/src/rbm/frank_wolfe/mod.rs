//! Infinite RBMs learned by Frank-Wolfe (Ping, Liu & Ihler, *Learning Infinite RBMs with
//! Frank-Wolfe*, NIPS 2016; equations cited as "Eq. 9", "Algorithm 1", "Sec. 3.3").
//!
//! The model (Eq. 5) replaces the sum over hidden units of an RBM's free energy by `α` times an
//! expectation over a distribution `q` of weight vectors; the hidden bias is the weight of a
//! constant visible unit. Maximizing the penalized likelihood (Eq. 6) over `q` is convex and
//! Frank-Wolfe with step `1/t` adds one atom, i.e. one hidden unit, per iteration: with
//! `α_t = t` the model after `t` iterations is a standard RBM with `t` hidden units.
//!
//! | module | what it holds |
//! |---|---|
//! | [`model`] | [`FwModel`] (atoms, `q`, `α`, `b`), its standard RBM (Prop. 3.1) and the Eq. 12 proposal |
//! | [`subproblem`] | the linear subproblem Eq. 9 and its gradient over 0/1 rows ([`Subproblem`]) |
//! | [`sampler`] | [`FwSampler`]: persistent Gibbs chains, or Metropolis-Hastings for fractional RBMs (Sec. 3.3) |
//! | [`learner`] | [`FwParams`] → [`FrankWolfe`] (Algorithm 1, Eq. 10, away steps, size selection) → [`FwFit`] |
//! | [`test_ll`] | [`TestLogLikelihood`]: the test log-likelihood (forward AIS or the bracket) at every size evaluation |
//! | `run` | [`run_reported`]: a run with the test log-likelihood, the JSONL log ([`FwLog`]) and a report per iteration (the command line's and `repro frank-wolfe`'s run) |
//! | [`file`](mod@file) | model files: standard RBMs as `boltzkit/rbm/v1`, fractional ones as [`file::FW_FORMAT`] |
//!
//! Model files: a standard FW model is saved as the RBM it equals, `W[:, i] = w_i[..n_visible]`,
//! `c_i = w_i[n_visible]` (the constant unit's weight), `b = b`; any RBM tool reads it, and an
//! RBM file loads back as `q` uniform, `α = |h|`. To continue with CD ("FW-initialized CD"),
//! hand [`FwModel::to_rbm`] to [`crate::rbm::train::Trainer::new`].

mod as_model;
pub mod file;
pub mod learner;
pub mod log;
pub mod model;
pub mod params;
pub mod record;
mod run;
pub mod sampler;
mod stops;
pub mod subproblem;
pub mod test_ll;

#[cfg(test)]
mod tests;

pub use learner::{mean_log_unnormalized, FrankWolfe};
pub use log::FwLog;
pub use model::FwModel;
pub use params::{AlphaRule, CheckedFwParams, FwParams, GUARD_MAX_UNITS};
pub use record::{FwFit, FwProgress, FwRecord, FwStop, IterationRecord, SizeEvaluation};
pub use run::{evaluation_status, run_reported};
pub use sampler::FwSampler;
pub use subproblem::{BinaryRows, Subproblem};
pub use test_ll::TestLogLikelihood;
