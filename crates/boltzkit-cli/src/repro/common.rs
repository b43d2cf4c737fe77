//! What every command here shares: the command line's common flags ([`Common`]), the
//! [`Outcome`] a command hands back, and the small value helpers of its flags.

use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// The command line's common flags as the commands here use them (`boltzkit`'s
/// `CommonArgs`).
pub trait Common: clap::Args {
    /// Sets the worker threads, resolves the seed (given, or drawn) and announces it.
    fn init(&self) -> anyhow::Result<u64>;
    /// Sets the worker threads, for a command without randomness.
    fn init_threads(&self) -> anyhow::Result<()>;
}

/// What a command hands back to be summarized: its name and seed, the serialized result (if
/// any), further fields in order (settings, output paths, figures), and why the run failed
/// after writing everything (a check of the paper that did not hold).
#[derive(Debug, Default)]
pub struct Outcome {
    /// The command, e.g. `gen ising`.
    pub command: String,
    /// The seed (`None` for a command without randomness).
    pub seed: Option<u64>,
    /// The result, serialized (a JSON object).
    pub report: Option<Value>,
    /// Fields after the result's, in order.
    pub fields: Vec<(String, Value)>,
    /// A failed check, reported once the results are written.
    pub failure: Option<String>,
}

impl Outcome {
    /// An outcome of `command` run with `seed`, with no fields yet.
    pub fn new(command: impl Into<String>, seed: Option<u64>) -> Self {
        Outcome {
            command: command.into(),
            seed,
            ..Outcome::default()
        }
    }

    pub(super) fn report(report: &impl Serialize) -> anyhow::Result<Self> {
        Ok(Outcome {
            report: Some(serde_json::to_value(report)?),
            ..Outcome::default()
        })
    }

    /// Appends the field `key` (a repeated key replaces the earlier value in place).
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<Value>) -> &mut Self {
        let (key, value) = (key.into(), value.into());
        match self.fields.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v = value,
            None => self.fields.push((key, value)),
        }
        self
    }

    /// Sets `output` to `dir` when there is one.
    pub(super) fn output(&mut self, dir: Option<&Path>) {
        if let Some(dir) = dir {
            self.set("output", dir.display().to_string());
        }
    }
}

/// An `f32` setting as the user typed it (`0.02`, not `0.019999999552965164`): its shortest
/// decimal form read back as an f64.
pub fn f32_value(x: f32) -> Value {
    x.to_string()
        .parse::<f64>()
        .map_or(Value::Null, Value::from)
}

/// `v` as a `usize`, or a usage error naming `flag`.
pub(super) fn to_usize(v: u64, flag: &str) -> anyhow::Result<usize> {
    usize::try_from(v)
        .map_err(|_| crate::guard::UsageError::new(format!("{flag} {v} is too large")).into())
}

#[cfg(test)]
mod tests {
    #[test]
    fn f32_settings_print_as_typed() {
        assert_eq!(super::f32_value(0.02).to_string(), "0.02");
        assert_eq!(super::f32_value(-0.1).to_string(), "-0.1");
        assert!(super::f32_value(f32::NAN).is_null());
    }
}
