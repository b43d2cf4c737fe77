//! The runs of the curves as a file (`popcd-runs.cbor`), and their merge: a protocol spread
//! over processes or machines (a batch scheduler's job array, a joblib loop), each running a
//! range of the trials, gives the tables of one process running them all, bit for bit.
//!
//! Every run's seeds follow its dataset, trial and rate ([`crate::popcd::curve_run`]), so a
//! trial's runs are the same wherever they ran; the file keeps each number's exact bits
//! (CBOR), and [`merge`] puts the runs in the order one process makes them ([`order`]) before
//! the means are taken. The module imports nothing of `popcd` (which uses it):
//! [`crate::popcd::identity`] makes an [`Identity`] of the curves' settings.

use anyhow::Context;
use boltzkit::io::write_atomic;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// One training run of the curves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveRun {
    /// Index into the datasets.
    pub data: usize,
    /// Index into the learning rates.
    pub lr: usize,
    /// Index into the algorithms.
    pub algo: usize,
    /// Trial number.
    pub trial: usize,
    /// Exact average log-likelihood at iterations 0, 100, 200, … (NaN after a divergence).
    pub ll: Vec<f64>,
    /// Whether the divergence guard stopped it.
    pub diverged: bool,
    /// The estimator's diagnostics averaged over the evaluations (effective sample size,
    /// exchange rates).
    pub diagnostics: std::collections::BTreeMap<String, f64>,
    /// Seconds.
    pub wall_s: f64,
}

/// The runs' file name in an output folder.
pub const FILE: &str = "popcd-runs.cbor";

/// The `format` of the file.
const FORMAT: &str = "boltzkit/popcd-runs/v1";

/// What makes runs comparable: every setting of the curves but the trials, and the trials
/// they cover.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// The run's seed.
    pub seed: u64,
    /// Dataset names, in the plan's order (the runs' `data` indices).
    pub datasets: Vec<String>,
    /// Learning rates (the runs' `lr` indices).
    pub lrs: Vec<f32>,
    /// Algorithms in the library's notation (the runs' `algo` indices).
    pub algos: Vec<String>,
    /// Iterations per run when not the paper's.
    pub iterations: Option<usize>,
    /// The trials covered.
    pub trials: Range<usize>,
}

impl Identity {
    /// How many runs cover its trials.
    fn runs(&self) -> usize {
        self.datasets.len() * self.lrs.len() * self.algos.len() * self.trials.len()
    }
}

#[derive(Serialize, Deserialize)]
struct RunsFile {
    format: String,
    identity: Identity,
    runs: Vec<CurveRun>,
}

/// The place of a run in the order one process makes them: dataset, rate, trial, algorithm.
pub fn order(r: &CurveRun) -> (usize, usize, usize, usize) {
    (r.data, r.lr, r.trial, r.algo)
}

/// Writes `runs` (of `identity`) to `path`, atomically.
pub fn write(path: &Path, identity: &Identity, runs: &[CurveRun]) -> anyhow::Result<()> {
    let file = RunsFile {
        format: FORMAT.into(),
        identity: identity.clone(),
        runs: runs.to_vec(),
    };
    let mut bytes = Vec::new();
    ciborium::into_writer(&file, &mut bytes)
        .with_context(|| format!("encoding {}", path.display()))?;
    Ok(write_atomic(path, &bytes)?)
}

/// Reads a runs file: its identity and runs, checked for completeness.
pub fn read(path: &Path) -> anyhow::Result<(Identity, Vec<CurveRun>)> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let file: RunsFile = ciborium::from_reader(bytes.as_slice())
        .map_err(|e| anyhow::anyhow!("{}: not a runs file of repro popcd ({e})", path.display()))?;
    anyhow::ensure!(
        file.format == FORMAT,
        "{}: format {}, expected {FORMAT}",
        path.display(),
        file.format
    );
    anyhow::ensure!(
        file.runs.len() == file.identity.runs(),
        "{}: {} runs, expected {} for its settings (an interrupted run?)",
        path.display(),
        file.runs.len(),
        file.identity.runs()
    );
    Ok((file.identity, file.runs))
}

/// The runs of the folders `dirs` (each holding [`FILE`], or the file itself), checked to be
/// of the settings `want` and to cover its trials exactly once, in the order of one process.
pub fn merge(dirs: &[PathBuf], want: &Identity) -> anyhow::Result<Vec<CurveRun>> {
    let mut parts = Vec::new();
    for dir in dirs {
        let path = if dir.is_dir() {
            dir.join(FILE)
        } else {
            dir.clone()
        };
        let (id, runs) = read(&path)?;
        let same_settings = Identity {
            trials: want.trials.clone(),
            ..id.clone()
        };
        anyhow::ensure!(
            same_settings == *want,
            "{}: runs of other settings ({:?}) than this command's ({:?})",
            path.display(),
            Identity {
                trials: id.trials.clone(),
                ..same_settings
            },
            want
        );
        parts.push((id.trials, runs, path));
    }
    parts.sort_by_key(|p| (p.0.start, p.0.end));
    let mut next = want.trials.start;
    for (trials, _, path) in &parts {
        anyhow::ensure!(
            trials.start == next,
            "{}: trials {}..{}, where the next part should start at trial {next} (--trials \
             {}..{} is to be covered once)",
            path.display(),
            trials.start,
            trials.end,
            want.trials.start,
            want.trials.end
        );
        next = trials.end;
    }
    anyhow::ensure!(
        next == want.trials.end,
        "the runs merged cover trials {}..{next}, --trials asks for {}..{}",
        want.trials.start,
        want.trials.start,
        want.trials.end
    );
    let mut runs: Vec<CurveRun> = parts.into_iter().flat_map(|p| p.1).collect();
    runs.sort_by_key(order);
    Ok(runs)
}
