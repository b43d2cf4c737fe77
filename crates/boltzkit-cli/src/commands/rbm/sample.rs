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
use boltzkit::rbm::units::LangevinParams;
use boltzkit::rbm::Rbm;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

/// The chains of `rbm sample`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum SamplerArg {
    /// Block Gibbs steps
    Gibbs,
    /// Each block Gibbs step followed by Metropolis-adjusted Langevin steps on p(v) (Liao et
    /// al. 2022; Gaussian visible units only)
    GibbsLangevin,
}

#[derive(Debug, Args)]
pub(super) struct SampleArgs {
    /// The model file (safetensors, boltzkit/rbm/v1)
    #[arg(long, value_name = "FILE")]
    pub(super) model: PathBuf,
    /// Number of samples (one Gibbs chain each)
    #[arg(long, short = 'n', value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) samples: u64,
    /// Block Gibbs steps per chain (sweeps of --sampler gibbs-langevin)
    #[arg(long, value_name = "K", default_value_t = 1000)]
    pub(super) gibbs_steps: usize,
    /// Sampler: gibbs, or gibbs-langevin (Gaussian visible units)
    #[arg(long, value_enum, value_name = "NAME", default_value_t = SamplerArg::Gibbs)]
    pub(super) sampler: SamplerArg,
    /// Langevin steps after each Gibbs step (--sampler gibbs-langevin)
    #[arg(long, value_name = "K", default_value_t = LangevinParams::default().steps)]
    pub(super) langevin_steps: usize,
    /// Langevin step size relative to each unit's variance (--sampler gibbs-langevin)
    #[arg(long, value_name = "X", default_value_t = LangevinParams::default().step_size)]
    pub(super) langevin_step_size: f64,
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

    /// The Langevin settings of `--sampler gibbs-langevin`, `None` for plain Gibbs; the
    /// Langevin flags refused without that sampler (they would be ignored).
    pub(super) fn langevin(&self) -> anyhow::Result<Option<LangevinParams>> {
        let params = LangevinParams {
            steps: self.langevin_steps,
            step_size: self.langevin_step_size,
            ..LangevinParams::default()
        };
        if self.sampler == SamplerArg::GibbsLangevin {
            return Ok(Some(params));
        }
        let default = LangevinParams::default();
        if params.steps != default.steps || params.step_size != default.step_size {
            return Err(UsageError::new(
                "--langevin-steps and --langevin-step-size need --sampler gibbs-langevin",
            )
            .into());
        }
        Ok(None)
    }

    /// The seed, the model and the number of chains, after the output and memory checks.
    fn plan(&self) -> anyhow::Result<(u64, Rbm, usize)> {
        if self.langevin()?.is_some() {
            return Err(UsageError::new(format!(
                "--sampler gibbs-langevin needs Gaussian visible units; {} is a binary RBM",
                self.model.display()
            ))
            .into());
        }
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
