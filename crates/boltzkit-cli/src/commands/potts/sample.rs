//! `boltzkit potts sample`: sequences from a model; their statistics against an alignment's.

use super::input::{load_model, AlignmentFlags, WeightFlags};
use crate::args::CommonArgs;
use crate::exit::UsageError;
use crate::guard;
use crate::progress;
use crate::report::Summary;
use boltzkit::data::{write_dataset, Dataset};
use boltzkit::potts::dca::{reading_alphabet, DcaInfo};
use boltzkit::potts::gibbs::{self, GibbsParams};
use boltzkit::potts::moments::{compare_moments, MomentComparison};
use boltzkit::potts::{exact, Potts};
use boltzkit::rng::rng_from_seed;
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(super) struct SampleArgs {
    /// The model file (safetensors, boltzkit/potts/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Number of sequences
    #[arg(long, short = 'n', value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    samples: u64,
    /// Output: FASTA (.fasta, .fa, .a2m) or a data file of codes (.npy, .csv, .tsv)
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Gibbs sweeps discarded at the start of each chain
    #[arg(long, value_name = "N", default_value_t = 1000)]
    burn_in: usize,
    /// Sweeps between two recorded sequences of a chain
    #[arg(long, value_name = "N", default_value_t = 10)]
    thin: usize,
    /// Independent Gibbs chains (the result does not depend on --threads)
    #[arg(long, value_name = "N", default_value_t = 16)]
    chains: usize,
    /// Compare the samples' statistics with this alignment's (weighted; read with the
    /// alignment flags and the model's alphabet)
    #[arg(long, value_name = "ALIGNMENT")]
    check: Option<PathBuf>,
    #[command(flatten)]
    alignment: AlignmentFlags,
    #[command(flatten)]
    weights: WeightFlags,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct SampleSummary<'a> {
    model: &'a Path,
    samples: usize,
    sampler: &'static str,
    output: &'a Path,
    check: Option<MomentComparison>,
}

/// Whether `path` names a FASTA file.
fn is_fasta(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    [".fasta", ".fa", ".faa", ".a2m"]
        .iter()
        .any(|e| name.ends_with(e))
}

impl SampleArgs {
    pub(super) fn run(self) -> anyhow::Result<()> {
        let seed = self.common.init()?;
        guard::distinct_files(
            &[
                Some(&self.model),
                self.check.as_deref(),
                self.weights.file(),
            ],
            &[Some(&self.output)],
        )?;
        let (model, info) = load_model(&self.model)?;
        let n = usize::try_from(self.samples).map_err(|_| UsageError::new("-n is too large"))?;
        guard::memory(
            &format!("potts sample -n {n}"),
            (n as u64).saturating_mul(model.n_sites() as u64),
        )?;
        if is_fasta(&self.output) && model.alphabet().is_none() {
            return Err(UsageError::new(format!(
                "{} names no alphabet, so its samples cannot be letters: write codes (.npy)",
                self.model.display()
            ))
            .into());
        }
        let reference = self.reference(&model, info.as_ref())?;
        let (samples, sampler) = self.draw(&model, n, seed)?;
        if is_fasta(&self.output) {
            write_fasta(&self.output, &samples, &model)?;
        } else {
            write_dataset(&self.output, &samples)?;
        }
        let check = match &reference {
            Some((data, w)) => Some(compare_moments(data, Some(w), &samples, None)?),
            None => None,
        };
        let summary = SampleSummary {
            model: &self.model,
            samples: n,
            sampler,
            output: &self.output,
            check,
        };
        Summary::new("potts sample", Some(seed))
            .extend(&summary)?
            .emit(&self.common)
    }

    /// The alignment to check against and its weights, read before any sampling.
    fn reference(
        &self,
        model: &Potts,
        info: Option<&DcaInfo>,
    ) -> anyhow::Result<Option<(Dataset, Vec<f64>)>> {
        let Some(path) = &self.check else {
            return Ok(None);
        };
        if info.is_some_and(|i| i.ignored_state.is_some()) {
            return Err(UsageError::new(
                "--check: the model ignores gaps (fitted with --ignore-gaps), so its samples \
                 have no gaps to compare with the alignment's",
            )
            .into());
        }
        let ali = self
            .alignment
            .read(path, Some(reading_alphabet(model, info)?))?;
        let data = ali.dataset()?;
        let states: Vec<u32> = model.states().iter().map(|&k| k as u32).collect();
        if data.cardinalities() != states.as_slice() {
            return Err(UsageError::new(format!(
                "--check: {} has {} sites of {} states after the alignment flags, the model {} \
                 sites of {:?}; read it as the fit did (same --focus and filters)",
                path.display(),
                ali.n_sites(),
                ali.alphabet.len(),
                model.n_sites(),
                model.states().iter().max()
            ))
            .into());
        }
        let w = self.weights.weighting().weights(&ali)?;
        Ok(Some((data, w)))
    }

    /// Exact draws for enumerable models, else Gibbs chains with a progress spinner.
    fn draw(&self, model: &Potts, n: usize, seed: u64) -> anyhow::Result<(Dataset, &'static str)> {
        let mut rng = rng_from_seed(seed);
        if exact::affordable(model) {
            return Ok((exact::sample(model, n, &mut rng)?, "exact"));
        }
        let params = GibbsParams {
            burn_in: self.burn_in,
            thin: self.thin,
            n_chains: self.chains,
        };
        let bar = progress::spinner("gibbs sampling", self.common.quiet);
        let out = gibbs::sample(model, n, &params, &mut rng)?;
        bar.finish_and_clear();
        Ok((out, "gibbs"))
    }
}

/// Writes sequences as FASTA (`>sample_K` headers, the model's letters), atomically.
fn write_fasta(path: &Path, data: &Dataset, model: &Potts) -> anyhow::Result<()> {
    let letters: Vec<char> = model.alphabet().unwrap_or_default().chars().collect();
    let mut text = String::with_capacity(data.n_samples() * (data.n_vars() + 16));
    for (k, row) in data.values().outer_iter().enumerate() {
        text.push_str(&format!(">sample_{}\n", k + 1));
        text.extend(row.iter().map(|&c| letters[c as usize]));
        text.push('\n');
    }
    boltzkit::io::write_atomic(path, text.as_bytes())?;
    Ok(())
}
