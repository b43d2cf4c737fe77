//! What a model file records of the fit that made it: the metadata entries (`algorithm`,
//! `settings`, `seed`, the stop reason, …) written once here, for every front end. The CLI
//! (`rbm fit`, `rbm fit --algo frank-wolfe`, `fvbm fit`, `fsll fit`) and the Python package build their
//! files' metadata with these functions, so the same fit gives the same file from either.
//!
//! Two kinds of entries are about the invocation, not the fit, and a front end fills them
//! with what it has:
//! - [`DataFile`]: `data_file` (the path as given) and `data_sha256` (of the file's bytes),
//!   when the data came from a file (the CLI always; Python when told which file);
//! - in the settings, the paths of a validation file (`valid`) and of a starting model
//!   (`init_model`), and the reader's binarization of the data file (`binarize`).
//!
//! Every entry is a string; `settings` is JSON with sorted keys, `f32` settings written by
//! their shortest decimal (`0.01`, not `0.009999999776482582`).

use crate::data::Binarize;
use crate::error::Result;
use crate::fit::StopReason;
use crate::fsll::{FsllParams, TransformPath};
use crate::fvbm::FvbmParams;
use crate::model::Metadata;
use crate::rbm::frank_wolfe::{FwParams, FwRecord};
use crate::rbm::train::RbmParams;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::Path;

/// The data file a model was fitted on: `data_file` and `data_sha256` in its metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFile {
    /// The path as the user gave it.
    pub path: String,
    /// SHA-256 of the file's bytes, in hex.
    pub sha256: String,
}

impl DataFile {
    /// The file at `path`, hashed.
    pub fn of(path: &Path) -> Result<Self> {
        Ok(DataFile {
            path: path.display().to_string(),
            sha256: crate::io::sha256_file(path)?,
        })
    }

    /// Adds `data_file` and `data_sha256` to `meta`.
    pub fn record(&self, meta: &mut Metadata) {
        meta.insert("data_file".into(), self.path.clone());
        meta.insert("data_sha256".into(), self.sha256.clone());
    }
}

/// An `f32` setting as JSON: its shortest decimal (the value a user typed).
pub fn f32_json(x: f32) -> Value {
    x.to_string()
        .parse::<f64>()
        .map_or(Value::Null, Value::from)
}

/// The reader's binarization as a file records it: `None`, `Threshold(127.0)`, `Stochastic`.
pub fn binarize_name(b: &Binarize) -> String {
    match b {
        Binarize::None => "None".into(),
        Binarize::Threshold(t) => format!("Threshold({t:?})"),
        Binarize::Stochastic { .. } => "Stochastic".into(),
    }
}

/// A model file's `settings` entry: the learner's settings as serialized (its `XParams`, the
/// one schema of [`crate::settings`]), followed by the front end's entries about the run
/// (`binarize`, `valid`, `init_model`, ...), which are not the learner's.
pub fn settings_entry(params: &impl Serialize, run: &[(&str, Value)]) -> Result<Value> {
    let mut value = crate::settings::to_json(params)?;
    if let Some(obj) = value.as_object_mut() {
        for (k, v) in run {
            obj.insert((*k).to_string(), v.clone());
        }
    }
    Ok(value)
}

/// The run's entries of an RBM file's `settings` beside the learner's: the validation file
/// (`valid`), early stopping on its gap (`early_stop`, `gap_tol`), the data's binarization
/// (`binarize`) and the starting model (`init_model`): what every front end writes alike.
pub fn rbm_run_entries(
    valid: Option<String>,
    early_stop: bool,
    gap_tol: f64,
    binarize: &Binarize,
    init_model: Option<String>,
) -> Vec<(&'static str, Value)> {
    vec![
        ("valid", json!(valid)),
        ("early_stop", json!(early_stop)),
        ("gap_tol", json!(gap_tol)),
        ("binarize", json!(binarize_name(binarize))),
        ("init_model", json!(init_model)),
    ]
}

/// The metadata of a trained RBM's file: `algorithm` (the family, `cd`), `settings` (the
/// [`RbmParams`] entries and the run's, [`settings_entry`]), `seed`, `epochs_done`,
/// `stop_reason`, and the data file when there is one.
pub fn rbm_fit(
    params: &RbmParams,
    run: &[(&str, Value)],
    epochs_done: usize,
    stop: &StopReason,
    data: Option<&DataFile>,
) -> Result<Metadata> {
    let mut meta = Metadata::new();
    meta.insert("algorithm".into(), params.train.algorithm.name().into());
    meta.insert("settings".into(), settings_entry(params, run)?.to_string());
    meta.insert("seed".into(), params.train.seed.to_string());
    meta.insert("epochs_done".into(), epochs_done.to_string());
    meta.insert("stop_reason".into(), stop.to_string());
    if let Some(d) = data {
        d.record(&mut meta);
    }
    Ok(meta)
}

/// The run's entries of a Frank-Wolfe file's `settings` beside the learner's: `algo`
/// (`frank-wolfe`), the data's binarization (`binarize`) and the starting model
/// (`init_model`): what every front end writes alike.
pub fn fw_run_entries(
    binarize: &Binarize,
    init_model: Option<String>,
) -> Vec<(&'static str, Value)> {
    vec![
        ("algo", json!("frank-wolfe")),
        ("binarize", json!(binarize_name(binarize))),
        ("init_model", json!(init_model)),
    ]
}

/// The metadata of a Frank-Wolfe model's file (the grown model's and the selected one's):
/// `algorithm`, `settings` (the serialized [`FwParams`], the one schema, and the run's
/// entries, [`fw_run_entries`]), `seed` (the front end's, from which the learner's was
/// derived), `stop_reason`, `removed_units`, `selected_units` when a size was selected, and
/// the data file when there is one.
pub fn fw_fit(
    params: &FwParams,
    run: &[(&str, Value)],
    seed: u64,
    record: &FwRecord,
    data: Option<&DataFile>,
) -> Result<Metadata> {
    let mut meta = Metadata::new();
    meta.insert("algorithm".into(), "frank-wolfe".into());
    meta.insert("settings".into(), settings_entry(params, run)?.to_string());
    meta.insert("seed".into(), seed.to_string());
    meta.insert("stop_reason".into(), record.stop.to_string());
    meta.insert("removed_units".into(), record.removed.to_string());
    if let Some(s) = record.selected_units {
        meta.insert("selected_units".into(), s.to_string());
    }
    if let Some(d) = data {
        d.record(&mut meta);
    }
    Ok(meta)
}

/// The metadata of a fitted FVBM's file: `algorithm` (the solver), `settings` (the serialized
/// [`FvbmParams`], the one schema), `seed` when the fit drew random numbers (PCD), and the
/// data file when there is one.
pub fn fvbm_fit(params: &FvbmParams, data: Option<&DataFile>) -> Result<Metadata> {
    let mut meta = Metadata::new();
    meta.insert("algorithm".into(), params.algo().into());
    meta.insert(
        "settings".into(),
        crate::settings::to_json(params)?.to_string(),
    );
    if let Some(s) = params.seed() {
        meta.insert("seed".into(), s.to_string());
    }
    if let Some(d) = data {
        d.record(&mut meta);
    }
    Ok(meta)
}

/// The metadata of a fitted FSLL model's file: `algorithm` (`fsll-greedy-mdl`), `settings`
/// (the serialized [`FsllParams`], the one schema, with `path` the transform path the run
/// took), `record` (the front end's JSON of the run: the CLI's run figures, Python's the
/// learner's record), and the data file when there is one.
pub fn fsll_fit(
    params: &FsllParams,
    used_path: TransformPath,
    record: String,
    data: Option<&DataFile>,
) -> Result<Metadata> {
    let mut meta = Metadata::new();
    meta.insert("algorithm".into(), "fsll-greedy-mdl".into());
    let settings = settings_entry(params, &[("path", json!(used_path))])?;
    meta.insert("settings".into(), settings.to_string());
    meta.insert("record".into(), record);
    if let Some(d) = data {
        d.record(&mut meta);
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rbm_settings_record_the_schema_and_short_decimals() {
        let mut s = RbmParams::new(5);
        s.train = s
            .train
            .epochs(3)
            .learning_rate(0.01)
            .algorithm("sdcp-3-4".parse().unwrap())
            .seed(7);
        let run = [(
            "binarize",
            json!(binarize_name(&Binarize::Threshold(127.0))),
        )];
        let j = settings_entry(&s, &run).unwrap();
        assert_eq!(j["learning_rate"], json!(0.01));
        assert_eq!(j["algo"], json!("sdcp-3-4"));
        assert_eq!(
            (j["n_hidden"].clone(), j["n_epochs"].clone()),
            (json!(5), json!(3))
        );
        assert_eq!(j["learning_rate_end"], Value::Null);
        assert_eq!(j["binarize"], json!("Threshold(127.0)"));
        // the entry reads back as the settings it records
        let back: RbmParams = crate::settings::from_value("rbm", j).unwrap();
        assert_eq!(back, s);
        let stop = StopReason::MaxEpochs;
        let data = DataFile {
            path: "x.npy".into(),
            sha256: "ab".into(),
        };
        let m = rbm_fit(&s, &run, 3, &stop, Some(&data)).unwrap();
        let keys: Vec<&str> = m.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "algorithm",
                "data_file",
                "data_sha256",
                "epochs_done",
                "seed",
                "settings",
                "stop_reason"
            ]
        );
        assert!(!rbm_fit(&s, &run, 3, &stop, None)
            .unwrap()
            .contains_key("data_file"));
    }
}
