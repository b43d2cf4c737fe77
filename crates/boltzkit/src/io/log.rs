//! Metric logs: JSONL, one JSON object per evaluation.
//!
//! Each line is a [`MetricRecord`]: `{"step":..,"epoch":..,"wall_s":..,"<metric>":<value>,..}`.
//! A [`MetricLog`] keeps its records in memory and rewrites the whole file atomically on each
//! [`MetricLog::append`], so a reader (or a crash) never sees half a record. Logs are small
//! (one record per evaluation), so the rewrite costs little.
//!
//! ```
//! use boltzkit::io::{MetricLog, MetricRecord};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("train.jsonl");
//! let mut log = MetricLog::create(&path).unwrap();
//! log.record(10, 1, [("train_ll", -12.5), ("test_ll", -13.25)]).unwrap();
//! let back = MetricLog::read(&path).unwrap();
//! assert_eq!(back[0].step, 10);
//! assert_eq!(back[0].metrics["test_ll"], -13.25);
//! ```

use crate::error::{Error, Result};
use crate::io::atomic::write_atomic_with;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Keys every record has; a metric may not use them as its name.
pub const RESERVED_KEYS: [&str; 3] = ["step", "epoch", "wall_s"];

/// One evaluation: where in training it happened and the metric values.
///
/// Serialized flat: the metrics sit beside `step`, `epoch` and `wall_s` in one object. A
/// non-finite metric value is written as JSON `null` and read back as NaN.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRecord {
    /// Optimizer steps (parameter updates) done so far.
    pub step: u64,
    /// Epochs (passes over the data) done so far.
    pub epoch: u64,
    /// Wall-clock seconds since the run started.
    pub wall_s: f64,
    /// Metric values by name (e.g. `train_ll`, `kl`), in name order.
    #[serde(flatten, deserialize_with = "de_metrics")]
    pub metrics: BTreeMap<String, f64>,
}

fn de_metrics<'de, D>(d: D) -> std::result::Result<BTreeMap<String, f64>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let raw = BTreeMap::<String, Option<f64>>::deserialize(d)?;
    Ok(raw
        .into_iter()
        .map(|(k, v)| (k, v.unwrap_or(f64::NAN)))
        .collect())
}

/// A JSONL metric log at a fixed path.
#[derive(Debug)]
pub struct MetricLog {
    path: PathBuf,
    records: Vec<MetricRecord>,
    start: Instant,
}

impl MetricLog {
    /// A new, empty log at `path`; the file is created (or emptied) now, so an unwritable
    /// path fails before any training starts. The wall clock of [`MetricLog::record`] starts
    /// here.
    pub fn create(path: impl Into<PathBuf>) -> Result<Self> {
        let log = MetricLog {
            path: path.into(),
            records: Vec::new(),
            start: Instant::now(),
        };
        log.flush()?;
        Ok(log)
    }

    /// The file the log is written to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The records appended so far.
    pub fn records(&self) -> &[MetricRecord] {
        &self.records
    }

    /// Appends `record` and rewrites the file atomically.
    ///
    /// Fails with [`Error::InvalidParam`] when a metric is named like a reserved key
    /// ([`RESERVED_KEYS`]) or has an empty name, and with [`Error::Io`] when the file cannot be
    /// written; the record is then not kept.
    pub fn append(&mut self, record: MetricRecord) -> Result<()> {
        for name in record.metrics.keys() {
            if name.is_empty() || RESERVED_KEYS.contains(&name.as_str()) {
                return Err(Error::param(
                    "metric name",
                    format!(
                        "`{name}` is empty or reserved ({})",
                        RESERVED_KEYS.join(", ")
                    ),
                ));
            }
        }
        self.records.push(record);
        if let Err(e) = self.flush() {
            self.records.pop();
            return Err(e);
        }
        Ok(())
    }

    /// Appends a record stamped with the seconds since [`MetricLog::create`].
    pub fn record<K, I>(&mut self, step: u64, epoch: u64, metrics: I) -> Result<()>
    where
        K: Into<String>,
        I: IntoIterator<Item = (K, f64)>,
    {
        let record = MetricRecord {
            step,
            epoch,
            wall_s: self.start.elapsed().as_secs_f64(),
            metrics: metrics.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        };
        self.append(record)
    }

    /// Reads a JSONL metric log (blank lines are skipped).
    pub fn read(path: &Path) -> Result<Vec<MetricRecord>> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l).map_err(|e| Error::Parse {
                    path: path.to_path_buf(),
                    row: Some(i + 1),
                    column: None,
                    expected: "a JSON metric record with step, epoch, wall_s".into(),
                    found: e.to_string(),
                })
            })
            .collect()
    }

    fn flush(&self) -> Result<()> {
        write_atomic_with(&self.path, |w| {
            for r in &self.records {
                serde_json::to_writer(&mut *w, r).map_err(std::io::Error::other)?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_append_rewrites_whole_file_one_object_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log.jsonl");
        let mut log = MetricLog::create(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "");
        log.append(MetricRecord {
            step: 1,
            epoch: 0,
            wall_s: 0.5,
            metrics: BTreeMap::from([("ll".into(), -3.0), ("kl".into(), 0.25)]),
        })
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\"step\":1,\"epoch\":0,\"wall_s\":0.5,\"kl\":0.25,\"ll\":-3.0}\n"
        );
        log.record(2, 1, [("ll", -2.0), ("kl", f64::NAN)]).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let v: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(v["step"], 2);
        assert_eq!(v["epoch"], 1);
        assert!(v["wall_s"].as_f64().unwrap() >= 0.0);
        assert!(v["kl"].is_null());

        let back = MetricLog::read(&p).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0], log.records()[0]);
        assert_eq!(back[1].metrics["ll"], -2.0);
        assert!(back[1].metrics["kl"].is_nan());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary files left"
        );
    }

    #[test]
    fn reserved_metric_names_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = MetricLog::create(dir.path().join("l.jsonl")).unwrap();
        let e = log.record(0, 0, [("step", 1.0)]).unwrap_err();
        assert!(matches!(e, Error::InvalidParam { .. }), "{e}");
        assert!(log.records().is_empty());
    }

    #[test]
    fn unwritable_path_fails_at_create_and_names_it() {
        let e = MetricLog::create("/nonexistent-dir/l.jsonl").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir/l.jsonl"), "{e}");
    }

    #[test]
    fn failed_append_keeps_memory_and_file_consistent() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let p = sub.join("l.jsonl");
        let mut log = MetricLog::create(&p).unwrap();
        log.record(1, 0, [("ll", 1.0)]).unwrap();
        std::fs::remove_dir_all(&sub).unwrap();
        assert!(log.record(2, 0, [("ll", 2.0)]).is_err());
        assert_eq!(log.records().len(), 1);
    }

    #[test]
    fn read_reports_bad_line_number() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.jsonl");
        std::fs::write(&p, "{\"step\":1,\"epoch\":0,\"wall_s\":0.1}\n{\"step\":\n").unwrap();
        let e = MetricLog::read(&p).unwrap_err().to_string();
        assert!(e.contains("l.jsonl:2"), "{e}");
    }
}
