//! The end-of-run summary, the command's result: one JSON object (`--json`) or readable lines,
//! on stdout either way (progress, the seed line and warnings go to stderr).
//!
//! ```text
//! let mut s = Summary::new("gen ising", Some(seed));
//! s.set("output", path.display().to_string()).set("samples", 1000);
//! s.emit(&common)?;
//! ```
//!
//! The JSON object always has `command`, `seed` (null for a command without randomness) and
//! `wall_s` (seconds since the process started, [`started`]), then the fields in the order they
//! were set. The
//! human form leaves the seed out: [`crate::args::CommonArgs::init`] already printed it.

use crate::args::CommonArgs;
use crate::repro::Outcome;
use anyhow::Context;
use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use std::sync::OnceLock;
use std::time::Instant;

/// When the process started (the first call; `main` calls it before parsing), so a summary
/// made after the work still reports the whole run's wall time.
pub fn started() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

/// Writes `text` and a newline on stdout and flushes it. A closed pipe (`boltzkit ... | head`
/// that ended) or a full device (`> /dev/full`) is an error that says so in one line, never a
/// panic (`println!` panics on both), so the command ends with exit 1 and one line on stderr.
pub fn print_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush())
        .map_err(|e| anyhow::anyhow!("cannot write to stdout: {}", stdout_fault(&e)))
}

/// What a failed write on stdout means, in words.
fn stdout_fault(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::BrokenPipe => {
            "it was closed (the program reading it ended early)".to_string()
        }
        std::io::ErrorKind::StorageFull => "the device it goes to is full".to_string(),
        _ => e.to_string(),
    }
}

/// Prints lines (tables) on stdout from a callback that cannot fail: the first failed write
/// is kept, later lines are dropped, and [`StdoutLines::finish`] returns the failure.
#[derive(Debug, Default)]
pub struct StdoutLines {
    failed: Option<anyhow::Error>,
}

impl StdoutLines {
    /// Prints `text` and a newline unless an earlier write failed.
    pub fn print(&mut self, text: &str) {
        if self.failed.is_none() {
            self.failed = print_stdout(text).err();
        }
    }

    /// The first failed write, if any.
    pub fn finish(self) -> anyhow::Result<()> {
        self.failed.map_or(Ok(()), Err)
    }
}

/// The JSON error object printed on stdout when a `--json` run fails:
/// `{"error": "...", "exit_code": N}`.
pub fn json_error(message: &str, exit_code: u8) -> String {
    serde_json::json!({ "error": message, "exit_code": exit_code }).to_string()
}

/// Key/values describing a finished run.
#[derive(Debug, Clone)]
pub struct Summary {
    command: String,
    seed: Option<u64>,
    fields: Vec<(String, Value)>,
    start: Instant,
}

impl Summary {
    /// A summary of `command` (e.g. `"gen ising"`), run with `seed`; its wall clock started
    /// with the process.
    pub fn new(command: impl Into<String>, seed: Option<u64>) -> Self {
        Summary {
            command: command.into(),
            seed,
            fields: Vec::new(),
            start: started(),
        }
    }

    /// Sets `key` to `value` (replacing an earlier value of the same key, in place).
    /// Non-finite floats become `null`. The keys `command`, `seed` and `wall_s` are written by
    /// the summary itself; setting them is a programming error caught by a debug assertion.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<Value>) -> &mut Self {
        let key = key.into();
        debug_assert!(
            !["command", "seed", "wall_s"].contains(&key.as_str()),
            "`{key}` is written by Summary itself"
        );
        let value = value.into();
        match self.fields.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v = value,
            None => self.fields.push((key, value)),
        }
        self
    }

    /// Sets every field of `report`, a value that serializes to a JSON object (a command's
    /// `#[derive(Serialize)]` result struct), in its declaration order. A field left out by
    /// `skip_serializing_if` is not set.
    pub fn extend(&mut self, report: &impl Serialize) -> anyhow::Result<&mut Self> {
        let Value::Object(fields) = serde_json::to_value(report)? else {
            anyhow::bail!("a summary report must serialize to a JSON object");
        };
        for (key, value) in fields {
            self.set(key, value);
        }
        Ok(self)
    }

    /// The summary as one compact JSON object on one line, fields in insertion order.
    pub fn to_json(&self) -> String {
        let mut entries: Vec<(&str, Value)> = vec![
            ("command", Value::from(self.command.as_str())),
            ("seed", self.seed.map_or(Value::Null, Value::from)),
        ];
        entries.extend(self.fields.iter().map(|(k, v)| (k.as_str(), v.clone())));
        entries.push(("wall_s", Value::from(self.start.elapsed().as_secs_f64())));
        let body: Vec<String> = entries
            .iter()
            .map(|(k, v)| format!("{}:{}", Value::from(*k), v))
            .collect();
        format!("{{{}}}", body.join(","))
    }

    /// The summary as readable lines: a title, then `  key: value` aligned.
    pub fn to_human(&self) -> String {
        let width = self.fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        let mut out = format!(
            "{}: done in {:.3} s\n",
            self.command,
            self.start.elapsed().as_secs_f64()
        );
        for (k, v) in &self.fields {
            let shown = match v {
                Value::String(s) => s.clone(),
                Value::Null => "none".to_string(),
                other => other.to_string(),
            };
            out.push_str(&format!("  {k:<width$}  {shown}\n"));
        }
        out
    }

    /// Prints the summary on stdout: JSON with `--json`, else the human form unless
    /// `--quiet`.
    pub fn emit(&self, common: &CommonArgs) -> anyhow::Result<()> {
        let text = if common.json {
            self.to_json() + "\n"
        } else if !common.quiet {
            self.to_human()
        } else {
            return Ok(());
        };
        print_stdout(text.strip_suffix('\n').unwrap_or(&text)).context("writing the summary")
    }
}

/// What a sampling command (`fsll`, `fvbm`, `rbm sample`) reports: the model, the rows
/// drawn, how (FVBM: `exact` or `gibbs`; RBM: the Gibbs steps) and where they went.
#[derive(Debug, Clone, Serialize)]
pub struct SampleSummary {
    pub model: String,
    pub samples: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gibbs_steps: Option<usize>,
    pub output: String,
}

impl SampleSummary {
    /// `samples` rows drawn from the model in `model`, written to `output`.
    pub fn new(model: &std::path::Path, samples: usize, output: &std::path::Path) -> Self {
        SampleSummary {
            model: model.display().to_string(),
            samples,
            method: None,
            gibbs_steps: None,
            output: output.display().to_string(),
        }
    }
}

/// Prints a command's outcome as its summary ([`Summary::emit`]): the serialized result's
/// fields (all with `--json`; in the human form only the short ones, numbers, strings and
/// lists of them, as the tables went to stdout), then its further fields; then fails with
/// the outcome's failure, if any.
pub fn emit(outcome: Outcome, common: &CommonArgs) -> anyhow::Result<()> {
    let mut summary = Summary::new(outcome.command, outcome.seed);
    if let Some(report) = outcome.report {
        let Value::Object(fields) = report else {
            anyhow::bail!("a report must serialize to a JSON object");
        };
        let short = |v: &Value| match v {
            Value::Array(items) => items.iter().all(|x| !(x.is_array() || x.is_object())),
            Value::Object(_) => false,
            _ => true,
        };
        for (k, v) in fields {
            if common.json || (short(&v) && !k.ends_with("markdown")) {
                summary.set(k, v);
            }
        }
    }
    for (key, value) in outcome.fields {
        summary.set(key, value);
    }
    summary.emit(common)?;
    match outcome.failure {
        Some(why) => anyhow::bail!(why),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_one_object_with_seed_fields_in_order_and_wall_time() {
        let mut s = Summary::new("gen ising", Some(7));
        s.set("output", "a.npy")
            .set("samples", 10u64)
            .set("nan", f64::NAN)
            .set("samples", 11u64);
        let text = s.to_json();
        assert!(!text.contains('\n'));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["command"], "gen ising");
        assert_eq!(v["seed"], 7);
        assert_eq!(v["output"], "a.npy");
        assert_eq!(v["samples"], 11);
        assert!(v["nan"].is_null());
        assert!(v["wall_s"].as_f64().unwrap() >= 0.0);
        let order: Vec<usize> = [
            "\"command\"",
            "\"seed\"",
            "\"output\"",
            "\"samples\"",
            "\"wall_s\"",
        ]
        .iter()
        .map(|k| text.find(k).unwrap())
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert_eq!(
            text.matches("\"samples\"").count(),
            1,
            "replaced in place: {text}"
        );
    }

    #[test]
    fn errors_print_as_json() {
        let v: Value = serde_json::from_str(&json_error("no \"file\"", 2)).unwrap();
        assert_eq!(v["error"], "no \"file\"");
        assert_eq!(v["exit_code"], 2);
    }

    #[test]
    fn the_clock_starts_with_the_process() {
        let first = started();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let s = Summary::new("late", None);
        assert_eq!(s.start, first);
        assert!(s.start.elapsed().as_secs_f64() >= 0.02);
    }

    #[test]
    fn unseeded_summary_has_null_seed() {
        let v: Value = serde_json::from_str(&Summary::new("x", None).to_json()).unwrap();
        assert!(v["seed"].is_null());
    }

    #[test]
    fn human_form_aligns_keys_and_unquotes_strings() {
        let mut s = Summary::new("gen bn", Some(1));
        s.set("output", "bn.csv")
            .set("edges", 12u64)
            .set("truth", Value::Null);
        let h = s.to_human();
        let lines: Vec<&str> = h.lines().collect();
        assert!(lines[0].starts_with("gen bn: done in "), "{h}");
        assert_eq!(lines[1], "  output  bn.csv");
        assert_eq!(lines[2], "  edges   12");
        assert_eq!(lines[3], "  truth   none");
    }
}
