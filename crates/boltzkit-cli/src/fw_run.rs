//! Frank-Wolfe runs with progress, an optional AIS test log-likelihood at every size
//! evaluation and an optional JSONL log (shared by `rbm fit --algo frank-wolfe` and
//! `repro frank-wolfe`; the run itself is `boltzkit_repro::frank_wolfe::run_fw`).

use crate::repro::ReproProgress;
use boltzkit::rbm::frank_wolfe::{FrankWolfe, FwFit};
pub use boltzkit_repro::frank_wolfe::{ais_schedule, AisTest};
use std::path::PathBuf;

/// Runs `fw` with a progress bar over units (unless `quiet`), the AIS test evaluation and the
/// JSONL log when given.
pub fn run(
    fw: FrankWolfe<'_>,
    quiet: bool,
    ais: Option<AisTest>,
    log: Option<&PathBuf>,
) -> anyhow::Result<FwFit> {
    let progress = ReproProgress::new(quiet);
    boltzkit_repro::frank_wolfe::run_fw(fw, &progress, ais, log.map(PathBuf::as_path))
}
