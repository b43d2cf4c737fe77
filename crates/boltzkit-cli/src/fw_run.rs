//! Frank-Wolfe runs of `rbm fit --algo frank-wolfe` with progress: the library's
//! `boltzkit::rbm::frank_wolfe::run_reported` (an optional test log-likelihood at every size
//! evaluation, an optional JSONL log) reporting to [`ReproProgress`] on stderr, through the
//! same adapter as `repro frank-wolfe` (`boltzkit_repro::frank_wolfe::run_fw`).

use crate::repro::ReproProgress;
use boltzkit::rbm::frank_wolfe::{FrankWolfe, FwFit, TestLogLikelihood};
use std::path::PathBuf;

/// Runs `fw` with a progress bar over units (unless `quiet`), the test evaluation and the
/// JSONL log when given.
pub fn run(
    fw: FrankWolfe<'_>,
    quiet: bool,
    test: Option<TestLogLikelihood>,
    log: Option<&PathBuf>,
) -> anyhow::Result<FwFit> {
    let progress = ReproProgress::new(quiet);
    boltzkit_repro::frank_wolfe::run_fw(fw, &progress, test, log.map(PathBuf::as_path))
}
