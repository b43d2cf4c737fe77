//! What the observers of the training loop see ([`Progress`]; the observer trait is the one
//! of every learner, [`crate::fit::Observer`]) and the provided observers:
//! [`ExactLogLikelihood`], [`AisLogLikelihood`], [`Monitors`], [`JsonlLog`] and
//! [`Checkpoint`] (and [`super::GapEarlyStop`], which can end a run).

pub use super::progress::Progress;
use super::state::TrainState;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::estimate::Method;
use crate::fit::Control;
pub use crate::fit::Observer;
use crate::fit::StopReason;
use crate::io::{MetricLog, MetricRecord};
use crate::rbm::ais::AisSchedule;
use crate::rbm::eval_settings::EvalParams;
use crate::rbm::file::{load_rbm, save_rbm, RbmFile};
use crate::rbm::loglik::{self, LogLikParams, LogLikelihood};
use crate::rbm::model::base_rate_biases;
use crate::rbm::{exact, monitor};
use crate::rng::derive_seed;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The smaller layer up to which `rbm fit` (and the Python `RBM`) monitor the exact
/// log-likelihood by default: `2^25` states per evaluation, cheap enough to repeat every few
/// epochs. A default, not a limit: asked for, [`ExactLogLikelihood`] enumerates up to the one
/// limit of exact enumeration, [`exact::MAX_ENUM_UNITS`] (30).
pub const DEFAULT_EXACT_MONITOR_UNITS: usize = 25;

/// Puts the exact average log-likelihood of a dataset ([`exact::average_log_likelihood`],
/// Eq. 4 of the S-DCP paper averaged over samples; the paper's ATLL on the training set) in
/// the metric `name`. Needs the smaller layer to have at most [`exact::MAX_ENUM_UNITS`] units (checked at
/// [`Observer::init`]).
#[derive(Debug, Clone)]
pub struct ExactLogLikelihood {
    name: String,
    data: Dataset,
}

impl ExactLogLikelihood {
    /// Evaluates `data` under metric name `name` (e.g. `train_ll`, `test_ll`).
    pub fn new(name: impl Into<String>, data: Dataset) -> Self {
        ExactLogLikelihood {
            name: name.into(),
            data,
        }
    }
}

impl<'a> Observer<Progress<'a>> for ExactLogLikelihood {
    fn start(&mut self, p: &mut Progress<'a>) -> Result<()> {
        let rbm = p.rbm;
        let m = rbm.n_visible().min(rbm.n_hidden());
        if m > exact::MAX_ENUM_UNITS {
            return Err(Error::TooLarge {
                what: format!("exact log-likelihood monitoring (`{}`)", self.name),
                needed: format!("2^{m} states per evaluation"),
                limit: format!("2^{} (use AIS)", exact::MAX_ENUM_UNITS),
            });
        }
        if self.data.n_vars() != rbm.n_visible() {
            return Err(Error::Shape {
                op: format!("ExactLogLikelihood `{}`", self.name),
                expected: format!("data with {} variables", rbm.n_visible()),
                found: format!("{}", self.data.n_vars()),
            });
        }
        Ok(())
    }

    fn observe(&mut self, p: &mut Progress<'a>) -> Result<Control> {
        let ll = exact::average_log_likelihood(p.rbm, &self.data)?;
        p.metrics.insert(self.name.clone(), ll);
        Ok(Control::Continue)
    }
}

/// Puts an AIS estimate of the average log-likelihood of a dataset in the metric `name`
/// (mean `−F(v)` over the data minus the AIS `ln Ẑ`, base-rate start from the data means, by
/// [`loglik::average_log_likelihood`]), with `name_log_z` and `name_log_z_se` (standard error
/// of `ln Ẑ`) beside it. For models too large for [`ExactLogLikelihood`]. Each observation
/// draws its chains from `derive_seed(seed, epoch)`. An AIS `ln Ẑ` below the truth makes the
/// log-likelihood too high: read it with its standard error, or ask for the bracket
/// ([`AisLogLikelihood::bracket`]), which adds RAISE's conservative end.
#[derive(Debug, Clone)]
pub struct AisLogLikelihood {
    name: String,
    data: Dataset,
    params: LogLikParams,
    seed: u64,
}

impl AisLogLikelihood {
    /// AIS with `chains ≥ 1` chains over `schedule`, evaluated on `data` (binary).
    pub fn new(
        name: impl Into<String>,
        data: Dataset,
        schedule: AisSchedule,
        chains: usize,
        seed: u64,
    ) -> Result<Self> {
        let params = LogLikParams::new(Method::Ais)
            .schedule(schedule)
            .chains(chains)
            .base(base_rate_biases(&data)?);
        params.check()?;
        Ok(AisLogLikelihood {
            name: name.into(),
            data,
            params,
            seed,
        })
    }

    /// AIS with the chains, schedule and seed of `eval` (checked), evaluated on `data`
    /// (binary): e.g. [`EvalParams::monitor`], the training monitor's.
    pub fn from_eval(name: impl Into<String>, data: Dataset, eval: &EvalParams) -> Result<Self> {
        eval.check()?;
        Self::new(name, data, eval.schedule()?, eval.ais_chains, eval.seed)
    }

    /// Reports the bracket [RAISE, forward AIS] instead: `name` stays the forward-AIS figure,
    /// `name_raise` and `name_raise_se` add RAISE's (one chain per vector, on a seeded random
    /// subset of `raise_vectors` rows, or all rows with `None`).
    pub fn bracket(mut self, raise_vectors: Option<usize>) -> Result<Self> {
        self.params = self
            .params
            .method(Method::Bracket)
            .raise_vectors(raise_vectors);
        self.params.check()?;
        Ok(self)
    }
}

impl<'a> Observer<Progress<'a>> for AisLogLikelihood {
    fn start(&mut self, p: &mut Progress<'a>) -> Result<()> {
        let rbm = p.rbm;
        if self.data.n_vars() != rbm.n_visible() {
            return Err(Error::Shape {
                op: format!("AisLogLikelihood `{}`", self.name),
                expected: format!("data with {} variables", rbm.n_visible()),
                found: format!("{}", self.data.n_vars()),
            });
        }
        Ok(())
    }

    fn observe(&mut self, p: &mut Progress<'a>) -> Result<Control> {
        let params = self
            .params
            .clone()
            .seed(derive_seed(self.seed, p.epoch as u64));
        let est = loglik::average_log_likelihood(p.rbm, &self.data, &params)?;
        let log_z = est
            .log_z()
            .ok_or_else(|| Error::Internal("the AIS observer's estimate has no ln Z".into()))?;
        p.metrics.insert(self.name.clone(), est.upper().value);
        p.metrics
            .insert(format!("{}_log_z", self.name), log_z.value);
        p.metrics
            .insert(format!("{}_log_z_se", self.name), log_z.stderr);
        if let LogLikelihood::Bracket(b) = &est {
            p.metrics
                .insert(format!("{}_raise", self.name), b.raise.value);
            p.metrics
                .insert(format!("{}_raise_se", self.name), b.raise.stderr);
        }
        Ok(Control::Continue)
    }
}

/// The cheap monitors of [`crate::rbm::monitor`] on `data` at each observation:
/// `{name}_recon_error` (mean-field reconstruction error) and `{name}_pseudo_ll` (the full
/// pseudo-log-likelihood, every unit); deterministic, neither a log-likelihood. Their cost is
/// `O(samples × n_visible × n_hidden)`: pass a subset of a large data set.
#[derive(Debug, Clone)]
pub struct Monitors {
    name: String,
    data: Dataset,
}

impl Monitors {
    /// Monitors of `data` (binary, shaped for the model), reported under `name`.
    pub fn new(name: impl Into<String>, data: Dataset) -> Self {
        Monitors {
            name: name.into(),
            data,
        }
    }
}

impl<'a> Observer<Progress<'a>> for Monitors {
    fn observe(&mut self, p: &mut Progress<'a>) -> Result<Control> {
        let recon = monitor::reconstruction_error(p.rbm, &self.data)?;
        let pl = monitor::pseudo_log_likelihood(p.rbm, &self.data)?;
        p.metrics
            .insert(format!("{}_recon_error", self.name), recon);
        p.metrics.insert(format!("{}_pseudo_ll", self.name), pl);
        Ok(Control::Continue)
    }
}

/// Appends each observation's metrics to a JSONL [`MetricLog`] (one record per observation:
/// step, epoch, wall seconds, metrics, and `lr`).
#[derive(Debug)]
pub struct JsonlLog {
    log: MetricLog,
}

impl JsonlLog {
    /// A log at `path`, created (emptied) now so an unwritable path fails before training.
    pub fn create(path: impl Into<PathBuf>) -> Result<Self> {
        Ok(JsonlLog {
            log: MetricLog::create(path)?,
        })
    }

    /// Continues the log at `path` of a run resumed after `epoch` epochs: records of later
    /// epochs (written after the checkpoint, before the run was killed) are dropped, since
    /// the resumed run writes them again.
    pub fn resume(path: impl Into<PathBuf>, epoch: usize) -> Result<Self> {
        let path = path.into();
        let kept: Vec<MetricRecord> = MetricLog::read(&path)?
            .into_iter()
            .filter(|r| r.epoch <= epoch as u64)
            .collect();
        let mut log = MetricLog::create(path)?;
        for r in kept {
            log.append(r)?;
        }
        Ok(JsonlLog { log })
    }

    /// The records written so far.
    pub fn records(&self) -> &[MetricRecord] {
        self.log.records()
    }
}

impl<'a> Observer<Progress<'a>> for JsonlLog {
    fn observe(&mut self, p: &mut Progress<'a>) -> Result<Control> {
        let mut metrics = p.metrics.clone();
        metrics.insert("lr".into(), f64::from(p.learning_rate));
        self.log.append(MetricRecord {
            step: p.step,
            epoch: p.epoch as u64,
            wall_s: p.wall_s,
            metrics,
        })?;
        Ok(Control::Continue)
    }
}

/// The metadata key of a checkpoint's loop state: [`TrainState`] in CBOR (binary, so every
/// float comes back with its bits), written as hexadecimal.
pub const TRAIN_STATE_KEY: &str = "train_state";

/// Writes the model (and the offsets of centered algorithms) to `path` (atomically, via
/// [`save_rbm`]) at each observation and at the end, with the caller's metadata plus
/// `algorithm`, `seed`, `epoch` and, at the end, `stop_reason`.
///
/// A checkpoint written at an observation also holds the loop's state
/// ([`Progress::train_state`], under [`TRAIN_STATE_KEY`]), from which [`load_checkpoint`] and
/// [`super::Trainer::resume`] continue the run bit for bit; add it after the evaluators so
/// their metrics of that epoch are in the restored history. When the run is interrupted the
/// last such checkpoint is left as it is (the model of an interrupted epoch could not
/// resume); at any other end the final model is written with `stop_reason` and no loop state.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    path: PathBuf,
    metadata: BTreeMap<String, String>,
    resumable: bool,
}

impl Checkpoint {
    /// A checkpoint at `path` carrying `metadata` (must not hold `format`) and a content
    /// checksum ([`crate::io::CHECKSUM_KEY`]), so a corrupted checkpoint is refused on load.
    pub fn new(path: impl Into<PathBuf>, mut metadata: BTreeMap<String, String>) -> Self {
        metadata.insert(crate::io::CHECKSUM_KEY.into(), String::new());
        Checkpoint {
            path: path.into(),
            metadata,
            resumable: false,
        }
    }
}

impl<'a> Observer<Progress<'a>> for Checkpoint {
    fn start(&mut self, p: &mut Progress<'a>) -> Result<()> {
        let params = p.params;
        self.metadata
            .insert("algorithm".into(), params.algorithm.name().into());
        // the seed the caller recorded (the user's) wins over the loop's derived one
        self.metadata
            .entry("seed".into())
            .or_insert_with(|| params.seed.to_string());
        self.metadata.insert(
            "settings".into(),
            crate::settings::to_json(params)?.to_string(),
        );
        Ok(())
    }

    fn observe(&mut self, p: &mut Progress<'a>) -> Result<Control> {
        self.metadata.insert("epoch".into(), p.epoch.to_string());
        let state = p.train_state()?;
        self.resumable = state.is_some();
        let mut meta = self.metadata.clone();
        if let Some(state) = state {
            meta.insert(TRAIN_STATE_KEY.into(), encode_state(&state)?);
        }
        save_rbm(&self.path, p.rbm, p.offsets, &meta)?;
        Ok(Control::Continue)
    }

    fn finish(&mut self, p: &mut Progress<'a>, stop: &StopReason) -> Result<()> {
        if self.resumable && matches!(stop, StopReason::Interrupted { .. }) {
            return Ok(());
        }
        self.metadata.insert("stop_reason".into(), stop.to_string());
        save_rbm(&self.path, p.rbm, p.offsets, &self.metadata)
    }
}

/// A checkpoint read back: the model file (its metadata without the loop state) and the loop
/// state when it holds one ([`Checkpoint`]; `None` for a model file, a finished run's final
/// checkpoint, or an update that cannot save its state).
pub fn load_checkpoint(path: &Path) -> Result<(RbmFile, Option<TrainState>)> {
    let mut file = load_rbm(path)?;
    let state = match file.metadata.remove(TRAIN_STATE_KEY) {
        None => None,
        Some(hex) => Some(decode_state(&hex).map_err(|reason| Error::Model {
            path: path.to_path_buf(),
            reason: format!("the loop state `{TRAIN_STATE_KEY}` cannot be read: {reason}"),
        })?),
    };
    Ok((file, state))
}

/// `state` as hexadecimal CBOR.
fn encode_state(state: &TrainState) -> Result<String> {
    let mut bytes = Vec::new();
    ciborium::into_writer(state, &mut bytes)
        .map_err(|e| Error::Internal(format!("serializing the loop state: {e}")))?;
    let mut hex = String::with_capacity(2 * bytes.len());
    for b in bytes {
        hex.push_str(&format!("{b:02x}"));
    }
    Ok(hex)
}

/// The inverse of [`encode_state`].
fn decode_state(hex: &str) -> std::result::Result<TrainState, String> {
    if !hex.len().is_multiple_of(2) || !hex.is_ascii() {
        return Err("not hexadecimal".into());
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
        .collect::<std::result::Result<Vec<u8>, _>>()
        .map_err(|e| e.to_string())?;
    ciborium::from_reader(bytes.as_slice()).map_err(|e| e.to_string())
}
