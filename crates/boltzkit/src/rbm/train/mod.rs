//! Training pieces for RBMs, kept apart as DESIGN.md asks: a sampler ([`GibbsChains`]) is
//! used by a [`GradientEstimator`] (CD-k, PCD-k: [`Cd`]) that fills a [`Gradient`], which an
//! optimizer step ([`Sgd`]) applies to the model.
//!
//! | module | what it holds |
//! |---|---|
//! | [`cd`] | [`Cd`]: contrastive divergence (Alg. 1 of the S-DCP paper) and its persistent form |
//! | [`centered`] | [`Centered`]: CS-DCP (Alg. 4) and CG (its `d = 1`), offsets `μ`, `λ`; [`to_centered`] / [`from_centered`] |
//! | [`early_stop`] | [`GapEarlyStop`]: ends training when the train/validation gap grows (`ln Z` cancels) |
//! | [`popcd`] | [`PopCd`]: pop-CD-k (Eq. 8 of the pop-CD paper; leave-one-out Eq. 9), CD-k's samples importance-weighted |
//! | [`pt`] | [`Pt`]: persistent parallel tempering ([`TemperedChains`](crate::rbm::tempering::TemperedChains)) as a gradient estimator |
//! | [`sdcp`] | [`Sdcp`]: S-DCP (Alg. 3), `d` inner steps; `d = 1` is CD |
//! | [`sgd`] | [`SgdParams`] → [`Sgd`]: learning rate, momentum, weight decay |
//! | [`algorithm`] | [`Algorithm`]: the one notation (`cd-1`, `pcd-1`, `sdcp-3-4`, `csdcp-3-4`, `popcd-1-loo`, `pt-10`, ...) |
//! | [`gradient`] | [`Gradient`] (the sparse 0/1 statistics `⟨v pᵀ⟩_pos − ⟨v pᵀ⟩_neg`) and the [`GradientEstimator`] trait |
//! | [`engine`] | [`Engine`]: the seam where a mini-batch becomes a new model ([`CpuEngine`]: the update, SGD step, guard and buffers); each engine's determinism promise |
//! | [`update`] | [`Update`]: what the loop applies per mini-batch (every [`GradientEstimator`] is one; S-DCP and CS-DCP implement it beside their types) |
//! | [`builtin`] | [`algorithm_update`]: the update of a built-in [`Algorithm`] |
//! | [`params`] | [`TrainParams`] → [`CheckedTrainParams`], [`LearningRate`]; [`RbmParams`] → [`CheckedRbmParams`] |
//! | [`learner`] | [`CheckedRbmParams`] as a [`Learner`](crate::fit::Learner): init by Sec. 4.1, `fit_from`, `fit_resumed`, `fit_update` |
//! | [`progress`] | [`Progress`]: what an observer sees, and the loop's state for a checkpoint |
//! | [`state`] | [`TrainState`]: the loop's state between epochs, what a resume continues from |
//! | [`observers`] | the provided [`Observer`]s (exact / AIS log-likelihood, monitors, JSONL log, checkpoints) |
//! | [`guard`] | the divergence guard: [`divergence`], the last good model put back after a failed update |
//! | [`divergence`] | the divergence watch: a pseudo-likelihood per unit (and the observers' `train_ll`) after every epoch, the best model kept when it falls ([`TrainParams::divergence_tol`]) |
//! | [`record`] | [`TrainRecord`], [`TrainOutcome`]: what a run gives back |
//! | [`trainer`] | [`Trainer`]: the builder (observers, interrupt, a user's update, resume); `run` drives the epoch loop (`epoch_loop.rs`: start, observe, epochs, finish) |
//!
//! [`GibbsChains`]: super::GibbsChains

pub mod algorithm;
pub mod builtin;
pub mod cd;
pub mod centered;
pub mod divergence;
pub mod early_stop;
pub mod engine;
mod epoch_loop;
pub mod gradient;
pub mod guard;
pub mod learner;
pub mod observers;
pub mod params;
pub mod popcd;
pub mod progress;
pub mod pt;
pub mod record;
pub mod sdcp;
pub mod sgd;
pub mod state;
pub mod trainer;
pub mod update;

pub use crate::fit::StopReason;
pub use algorithm::Algorithm;
pub use builtin::algorithm_update;
pub use cd::Cd;
pub use centered::{from_centered, to_centered, Centered};
pub use early_stop::{likelihood_gap, GapEarlyStop, GapRule};
pub use engine::{CpuEngine, Engine, EngineState, EpochEnd, EpochStop};
pub use gradient::{Gradient, GradientEstimator};
pub use guard::divergence;
pub use observers::{
    load_checkpoint, AisLogLikelihood, Checkpoint, ExactLogLikelihood, JsonlLog, Monitors,
    Observer, DEFAULT_EXACT_MONITOR_UNITS, TRAIN_STATE_KEY,
};
pub use params::{CheckedRbmParams, CheckedTrainParams, LearningRate, RbmParams, TrainParams};
pub use popcd::{PopCd, Weighting};
pub use progress::Progress;
pub use pt::Pt;
pub use record::{TrainOutcome, TrainRecord};
pub use sdcp::Sdcp;
pub use sgd::{Sgd, SgdParams};
pub use state::{TrainState, TRAIN_STATE_VERSION};
pub use trainer::Trainer;
pub use update::Update;

#[cfg(test)]
mod tests_resume;
