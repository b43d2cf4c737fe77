//! What a training run gives back: [`TrainRecord`] (why it stopped, the counters, the metric
//! history, the centering offsets) and [`TrainOutcome`], the model with its record.

use crate::fit::{Fit, StopReason};
use crate::io::MetricRecord;
use crate::rbm::file::Offsets;
use crate::rbm::Rbm;

/// What a run did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrainRecord {
    /// Why it stopped.
    pub stop: StopReason,
    /// Epochs completed.
    pub epochs: usize,
    /// Updates applied (and kept).
    pub steps: u64,
    /// Wall-clock seconds of the run.
    pub wall_s: f64,
    /// One record per observation that produced metrics.
    pub history: Vec<MetricRecord>,
    /// The final centering offsets (centered algorithms only; saved beside the model). After
    /// a divergence they include the failed update's slide toward the batch means (computed
    /// at the last good model).
    #[serde(skip)]
    pub offsets: Option<Offsets>,
}

/// The result of [`Trainer::run`](super::Trainer::run): the model (the last good one when the run diverged) and
/// its record.
pub type TrainOutcome = Fit<Rbm, TrainRecord>;
