//! `boltzkit rbm sample`: samples of a model by block Gibbs chains from uniform states.

use super::input::sample_memory;
use crate::args::CommonArgs;
use crate::exit::UsageError;
use crate::guard;
use crate::progress;
use crate::report::{SampleSummary, Summary};
use anyhow::Context;
use boltzkit::data::write_dataset;
use boltzkit::rbm::file::load_rbm;
use boltzkit::rbm::gibbs::sample_from_uniform;
use boltzkit::rbm::model::states_to_dataset;
use boltzkit::rbm::Rbm;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(super) struct SampleArgs {
    /// The model file (safetensors, boltzkit/rbm/v1)
    #[arg(long, value_name = "FILE")]
    pub(super) model: PathBuf,
    /// Number of samples (one Gibbs chain each)
    #[arg(long, short = 'n', value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) samples: u64,
    /// Block Gibbs steps per chain
    #[arg(long, value_name = "K", default_value_t = 1000)]
    pub(super) gibbs_steps: usize,
    /// Output data file (.npy, .csv, .tsv, .amat; optionally .gz)
    #[arg(short, long, value_name = "FILE")]
    pub(super) output: PathBuf,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

impl SampleArgs {
    /// Parse (clap) → plan → run → print.
    pub(super) fn run(self) -> anyhow::Result<()> {
        let (seed, rbm, n) = self.plan()?;
        let v = gibbs_samples(&rbm, n, self.gibbs_steps, seed, self.common.quiet)?;
        write_samples(&self.output, &v, rbm.n_visible())?;
        self.print(seed, n)
    }

    /// The seed, the model and the number of chains, after the output and memory checks.
    fn plan(&self) -> anyhow::Result<(u64, Rbm, usize)> {
        let seed = self.common.init()?;
        let rbm = load_rbm(&self.model)?.rbm;
        let nv = rbm.n_visible();
        guard::files(&[Some(&self.model)], &[Some(&self.output)])?;
        guard::memory(
            &format!("rbm sample -n {}", self.samples),
            sample_memory(self.samples, nv as u64, rbm.n_hidden() as u64),
        )?;
        let n =
            usize::try_from(self.samples).map_err(|_| UsageError::new("--samples is too large"))?;
        Ok((seed, rbm, n))
    }

    /// The summary of `n` samples written.
    fn print(&self, seed: u64, n: usize) -> anyhow::Result<()> {
        let mut report = SampleSummary::new(&self.model, n, &self.output);
        report.gibbs_steps = Some(self.gibbs_steps);
        Summary::new("rbm sample", Some(seed))
            .extend(&report)?
            .emit(&self.common)
    }
}

/// [`sample_from_uniform`] with a progress bar (unless `quiet`).
pub(super) fn gibbs_samples(
    rbm: &Rbm,
    n: usize,
    steps: usize,
    seed: u64,
    quiet: bool,
) -> anyhow::Result<Vec<f32>> {
    let bar = progress::bar(steps as u64, "gibbs steps", quiet);
    let v = sample_from_uniform(rbm, n, steps, seed, &mut |_| bar.inc(1))?;
    bar.finish_and_clear();
    Ok(v)
}

/// Writes 0/1 rows of width `nv` to `path` in the format its name asks for.
fn write_samples(path: &Path, v: &[f32], nv: usize) -> anyhow::Result<()> {
    let data = states_to_dataset(v, nv)?;
    write_dataset(path, &data).context("cannot write the samples")
}
