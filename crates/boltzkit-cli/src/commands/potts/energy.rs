//! `boltzkit potts energy`: statistical energies of an alignment's sequences under a model.

use super::input::{load_model, AlignmentFlags};
use crate::args::CommonArgs;
use crate::exit::UsageError;
use crate::guard;
use crate::report::Summary;
use boltzkit::potts::dca::{energies, reading_alphabet};
use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(super) struct EnergyArgs {
    /// The model file (safetensors, boltzkit/potts/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// The sequences (an alignment with the fit's columns; read with the model's alphabet)
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    #[command(flatten)]
    alignment: AlignmentFlags,
    /// Where to write `name energy` lines [default: stdout]
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct EnergySummary<'a> {
    model: &'a Path,
    data: &'a Path,
    sequences: usize,
    mean_energy: f64,
    output: Option<&'a Path>,
}

impl EnergyArgs {
    pub(super) fn run(self) -> anyhow::Result<()> {
        self.common.init_threads()?;
        guard::distinct_files(
            &[Some(&self.model), Some(&self.data)],
            &[self.output.as_deref()],
        )?;
        let (model, info) = load_model(&self.model)?;
        let ali = self
            .alignment
            .read(&self.data, Some(reading_alphabet(&model, info.as_ref())?))?;
        if ali.n_sites() != model.n_sites() {
            return Err(UsageError::new(format!(
                "{} has {} columns after the alignment flags, the model {} sites: read it as the \
                 fit did (same --focus and filters)",
                self.data.display(),
                ali.n_sites(),
                model.n_sites()
            ))
            .into());
        }
        let ignored = info.as_ref().and_then(|i| i.ignored_state);
        let e = energies(&model, &ali.dataset()?, ignored)?;
        let mut text = String::with_capacity(e.len() * 32);
        for (name, v) in ali.names.iter().zip(&e) {
            text.push_str(&format!("{name}\t{v:.6}\n"));
        }
        match &self.output {
            Some(path) => boltzkit::io::write_atomic(path, text.as_bytes())?,
            None => std::io::stdout().lock().write_all(text.as_bytes())?,
        }
        let summary = EnergySummary {
            model: &self.model,
            data: &self.data,
            sequences: e.len(),
            mean_energy: e.iter().sum::<f64>() / e.len() as f64,
            output: self.output.as_deref(),
        };
        if self.output.is_none() {
            return Ok(());
        }
        Summary::new("potts energy", None)
            .extend(&summary)?
            .emit(&self.common)
    }
}
