//! `boltzkit rbm features`: the hidden features `E[h | v]` of every row of a data file.

use super::input::{check_vars, load_binary};
use crate::args::CommonArgs;
use crate::guard;
use crate::report::Summary;
use anyhow::Context;
use boltzkit::data::{write_npy_f64, Binarize, Dataset};
use boltzkit::rbm::features::hidden_features;
use boltzkit::rbm::file::load_rbm;
use boltzkit::rbm::frank_wolfe::file::load_fw_model;
use boltzkit::rbm::Rbm;
use boltzkit::rng::derive_seed;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// `rbm features`: `E[h | v]` of every row of a data file.
#[derive(Debug, Args)]
pub(super) struct FeaturesArgs {
    /// The model file (boltzkit/rbm/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Data of 0/1 values (after --binarize)
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    #[command(flatten)]
    binarize: crate::args::BinarizeArgs,
    /// Output: .npy (f64, samples × hidden)
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    common: CommonArgs,
}

impl FeaturesArgs {
    /// Parse (clap) → plan → run → print.
    pub(super) fn run(self) -> anyhow::Result<()> {
        let (seed, rbm, data) = self.plan()?;
        let spin = crate::progress::spinner("features", self.common.quiet);
        let f = hidden_features(&rbm, &data)?;
        spin.finish_and_clear();
        let f64s: Vec<f64> = f.iter().map(|&x| f64::from(x)).collect();
        write_npy_f64(&self.output, &[data.n_samples(), rbm.n_hidden()], &f64s)
            .with_context(|| format!("writing the features to {}", self.output.display()))?;
        self.print(seed, &data, rbm.n_hidden())
    }

    /// The seed (when the binarization draws), the output checked, the model and data read,
    /// the memory estimate checked.
    fn plan(&self) -> anyhow::Result<(Option<u64>, Rbm, Dataset)> {
        let randomized = self.binarize.is_random();
        let seed = if randomized {
            Some(self.common.init()?)
        } else {
            self.common.init_threads()?;
            None
        };
        guard::files(
            &[Some(&self.model), Some(&self.data)],
            &[Some(&self.output)],
        )?;
        let rbm = match load_rbm(&self.model) {
            Ok(f) => f.rbm,
            Err(e) => match load_fw_model(&self.model) {
                Ok(m) if !m.is_standard() => anyhow::bail!(
                    "{}: a fractional RBM has no hidden units to read features from",
                    self.model.display()
                ),
                _ => return Err(e.into()),
            },
        };
        let binarize: Binarize = self.binarize.resolve(derive_seed(seed.unwrap_or(0), 2));
        let data = load_binary(&self.data, binarize)?;
        check_vars(&self.data, &data, &self.model, &rbm)?;
        guard::memory(
            &format!("rbm features of {} rows", data.n_samples()),
            // f32 features and their f64 copy
            Dataset::memory_estimate(data.n_samples() as u64, rbm.n_hidden() as u64)
                .saturating_mul(12),
        )?;
        Ok((seed, rbm, data))
    }

    /// The summary of the features written.
    fn print(&self, seed: Option<u64>, data: &Dataset, hidden: usize) -> anyhow::Result<()> {
        Summary::new("rbm features", seed)
            .extend(&FeaturesSummary {
                model: self.model.display().to_string(),
                data: self.data.display().to_string(),
                samples: data.n_samples(),
                hidden,
                output: self.output.display().to_string(),
            })?
            .emit(&self.common)
    }
}

/// What `rbm features` reports: E[h | v] of `samples` rows, `hidden` columns, in `output`.
#[derive(Serialize)]
struct FeaturesSummary {
    model: String,
    data: String,
    samples: usize,
    hidden: usize,
    output: String,
}
