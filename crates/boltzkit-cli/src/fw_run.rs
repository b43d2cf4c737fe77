//! Frank-Wolfe runs with progress, an optional test log-likelihood (forward AIS or the bracket:
//! `boltzkit::rbm::frank_wolfe::TestLogLikelihood`) at every size evaluation and an optional
//! JSONL log (shared by `rbm fit --algo frank-wolfe` and `repro frank-wolfe`; the run itself is
//! `boltzkit_repro::frank_wolfe::run_fw`).

use crate::repro::ReproProgress;
use boltzkit::rbm::frank_wolfe::{FrankWolfe, FwFit};
pub use boltzkit_repro::frank_wolfe::{ais_schedule, TestLogLikelihood};
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
