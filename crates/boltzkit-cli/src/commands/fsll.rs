//! `boltzkit fsll`: learn, evaluate and sample full-span log-linear models.

use crate::args::{BinarizeArgs, CommonArgs};
use crate::fsll_run::{fit_with_progress, kl_to_truth, outcome};
use crate::guard;
use crate::report::{SampleSummary, Summary};
use anyhow::Context;
use boltzkit::data::synth::{sample_states, sample_states_memory};
use boltzkit::data::{read_dataset, read_npy_f64, write_dataset, Binarize, Dataset, ReadOptions};
use boltzkit::fit::StopReason;
use boltzkit::fsll::{FsllModel, FsllParams, TransformPath};
use boltzkit::provenance::{self, DataFile};
use boltzkit::rng::{derive_seed, rng_from_seed};
use boltzkit::settings;
use boltzkit_repro::fsll::FsllOutcome;
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// `boltzkit fsll <verb>`.
#[derive(Debug, Args)]
pub struct FsllArgs {
    #[command(subcommand)]
    verb: FsllVerb,
}

#[derive(Debug, Subcommand)]
enum FsllVerb {
    /// Learn an FSLL model from data (greedy MDL, Algorithm 1 of Takabatake & Akaho)
    #[command(
        long_about = "Learn a full-span log-linear model from discrete data with the \
        greedy MDL learner (Algorithms 1-3, cost of Eq. 7). Prints KL(p_d||p_θ), KL(p*||p_θ) \
        when --truth is given, the number of basis functions, the final cost, the iterations \
        and the wall time; -o writes the model (safetensors).\n\n\
        Example:\n  boltzkit gen ising --samples 1000 -o ising.npy --truth p.npy --seed 1\n  \
        boltzkit fsll fit --data ising.npy --truth p.npy -o ising.fsll.safetensors"
    )]
    Fit(FitArgs),
    /// Average log-likelihood of a data file and KL to a true distribution
    #[command(
        long_about = "Evaluate a model: the average log-likelihood (nats per sample) \
        of --data and KL(p*||p_θ) to the distribution in --truth.\n\n\
        Example:\n  boltzkit fsll eval --model ising.fsll.safetensors --data test.npy --truth p.npy"
    )]
    Eval(EvalArgs),
    /// Draw exact i.i.d. samples from a model
    #[command(
        long_about = "Draw exact i.i.d. samples from a model (by its probability \
        table over all states).\n\n\
        Example:\n  boltzkit fsll sample --model ising.fsll.safetensors --samples 500 -o s.npy --seed 3"
    )]
    Sample(SampleArgs),
}

/// How the learner keeps the dual parameters current (serialized as the schema's `path`).
#[derive(Debug, Clone, Copy, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
enum PathArg {
    /// XOR update when every cardinality is a power of two, full transform otherwise
    Auto,
    /// Fused in-place XOR update (power-of-two cardinalities only)
    Xor,
    /// Algorithm 3 plus a full transform every iteration (the paper's way)
    Full,
}

#[derive(Debug, Args)]
struct FitArgs {
    /// Training data (.npy, .csv, .tsv, IDX, .amat; .gz read transparently)
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    /// The true distribution over all states (.npy of f64) to report KL(p*||p_θ)
    #[arg(long, value_name = "FILE")]
    truth: Option<PathBuf>,
    /// Where to write the model (safetensors)
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    binarize: BinarizeArgs,
    /// Per-variable cardinalities, comma-separated [default: inferred as max + 1]
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    cardinalities: Option<Vec<u32>>,
    #[command(flatten)]
    settings: FsllFlags,
    #[command(flatten)]
    common: CommonArgs,
}

/// The learner's flags, serialized under the schema's names ([`FsllParams`]) and put over its
/// defaults (`settings::overlay`); each default is read from the struct.
#[derive(Debug, Args, Serialize)]
struct FsllFlags {
    /// Stop when the best candidate improves the cost by less than this
    #[arg(long, default_value_t = FsllParams::default().epsilon)]
    epsilon: f64,
    /// Stop after this many iterations at most
    #[arg(long, default_value_t = FsllParams::default().max_iterations)]
    max_iterations: usize,
    /// Recompute the dual parameters from scratch every N iterations (bounds round-off drift)
    #[arg(long, value_name = "N", default_value_t = FsllParams::default().refresh_every)]
    refresh_every: usize,
    /// Update path for the dual parameters [default: the library's, auto]
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<PathArg>,
}

#[derive(Debug, Args)]
struct EvalArgs {
    /// The model file (safetensors, boltzkit/fsll/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Data whose average log-likelihood to report
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,
    #[command(flatten)]
    binarize: BinarizeArgs,
    /// The true distribution over all states (.npy of f64)
    #[arg(long, value_name = "FILE")]
    truth: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Args)]
struct SampleArgs {
    /// The model file (safetensors, boltzkit/fsll/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Number of samples
    #[arg(long, short = 'n', value_name = "N", default_value_t = 1000)]
    samples: usize,
    /// Output data file (.npy, .csv, .tsv, .amat; optionally .gz)
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    common: CommonArgs,
}

impl FsllArgs {
    /// Runs the chosen verb.
    pub fn run(self) -> anyhow::Result<()> {
        match self.verb {
            FsllVerb::Fit(a) => a.run(),
            FsllVerb::Eval(a) => a.run(),
            FsllVerb::Sample(a) => a.run(),
        }
    }
}

/// Reads a data file, with cardinalities given or inferred, binarized as `binarize` says.
pub fn load_data(
    path: &Path,
    cardinalities: Option<Vec<u32>>,
    binarize: Binarize,
) -> anyhow::Result<Dataset> {
    let opts = ReadOptions {
        cardinalities,
        ..ReadOptions::default()
    }
    .with_binarize(binarize);
    Ok(read_dataset(path, &opts)?)
}

/// The seed of a command without other randomness: drawn (and printed) only when
/// `--binarize stochastic` needs one.
pub(crate) fn binarize_seed(
    common: &CommonArgs,
    binarize: BinarizeArgs,
) -> anyhow::Result<Option<u64>> {
    if binarize.is_random() {
        return common.init().map(Some);
    }
    common.init_threads()?;
    Ok(None)
}

/// Reads a true distribution (.npy of f64 over all states).
pub fn load_truth(path: &Path) -> anyhow::Result<Vec<f64>> {
    let (_, p) = read_npy_f64(path)?;
    let sum: f64 = p.iter().sum();
    if p.iter().any(|v| !v.is_finite() || *v < 0.0) || (sum - 1.0).abs() > 1e-6 {
        anyhow::bail!(
            "{}: expected a probability table (finite, nonnegative, summing to 1), found sum {sum}",
            path.display()
        );
    }
    Ok(p)
}

/// What `fsll fit` reports.
#[derive(Serialize)]
struct FitSummary<'a> {
    data: String,
    samples: usize,
    vars: usize,
    #[serde(flatten)]
    outcome: &'a FsllOutcome,
    path: TransformPath,
    stop: &'a StopReason,
    warnings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<String>,
}

impl FitArgs {
    fn run(self) -> anyhow::Result<()> {
        let seed = binarize_seed(&self.common, self.binarize)?;
        let params = settings::overlay(&FsllParams::default(), &self.settings)?;
        params.check()?;
        guard::model_files(
            &[Some(&self.data), self.truth.as_deref()],
            &[("-o", self.output.as_deref())],
            &[],
        )?;
        let data = load_data(
            &self.data,
            self.cardinalities.clone(),
            self.binarize.resolve(derive_seed(seed.unwrap_or(0), 2)),
        )?;
        // the memory of the fit is refused by the library (as in Python), before any work
        let truth = self.truth.as_deref().map(load_truth).transpose()?;
        let fit = fit_with_progress(&data, &params, self.common.quiet)?;
        let out = outcome(&fit, truth.as_deref())?;
        if let Some(path) = &self.output {
            let meta = provenance::fsll_fit(
                &params,
                fit.record.path,
                serde_json::to_string(&out)?,
                Some(&DataFile::of(&self.data)?),
            )?;
            fit.model
                .save(path, &meta)
                .with_context(|| format!("writing the model to {}", path.display()))?;
        }
        crate::interrupt::interrupted_after(&fit.record.stop, self.output.as_deref())?;
        Summary::new("fsll fit", seed)
            .extend(&FitSummary {
                data: self.data.display().to_string(),
                samples: data.n_samples(),
                vars: data.n_vars(),
                outcome: &out,
                path: fit.record.path,
                stop: &fit.record.stop,
                warnings: fit.record.warnings(),
                output: self.output.as_ref().map(|p| p.display().to_string()),
            })?
            .emit(&self.common)
    }
}

impl EvalArgs {
    fn run(self) -> anyhow::Result<()> {
        let seed = binarize_seed(&self.common, self.binarize)?;
        if self.data.is_none() && self.truth.is_none() {
            return Err(crate::exit::UsageError::new("give --data, --truth or both").into());
        }
        let model = FsllModel::load(&self.model)?;
        guard::memory("fsll eval", model.table_memory())?;
        let spin = crate::progress::spinner("evaluating", self.common.quiet);
        let mut report = EvalSummary {
            model: self.model.display().to_string(),
            n_basis: model.n_basis(),
            data: None,
            samples: None,
            avg_log_likelihood: None,
            truth: None,
            kl_truth: None,
        };
        if let Some(path) = &self.data {
            let data = load_data(
                path,
                Some(model.cardinalities().to_vec()),
                self.binarize.resolve(derive_seed(seed.unwrap_or(0), 2)),
            )?;
            report.data = Some(path.display().to_string());
            report.samples = Some(data.n_samples());
            report.avg_log_likelihood = Some(model.avg_log_likelihood(&data)?);
        }
        if let Some(path) = &self.truth {
            let truth = load_truth(path)?;
            report.truth = Some(path.display().to_string());
            report.kl_truth = Some(kl_to_truth(&model, &truth)?);
        }
        spin.finish_and_clear();
        Summary::new("fsll eval", seed)
            .extend(&report)?
            .emit(&self.common)
    }
}

/// What `fsll eval` reports: the data's figures with `--data`, the truth's with `--truth`.
#[derive(Serialize)]
struct EvalSummary {
    model: String,
    n_basis: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    samples: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_log_likelihood: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truth: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kl_truth: Option<f64>,
}

impl SampleArgs {
    fn run(self) -> anyhow::Result<()> {
        let seed = self.common.init()?;
        if self.samples == 0 {
            return Err(crate::exit::UsageError::new("--samples must be at least 1").into());
        }
        guard::files(&[Some(&self.model)], &[Some(&self.output)])?;
        let model = FsllModel::load(&self.model)?;
        guard::memory(
            &format!("fsll sample -n {}", self.samples),
            model.table_memory().saturating_add(sample_states_memory(
                model.cardinalities().len() as u64,
                self.samples as u64,
            )),
        )?;
        let spin = crate::progress::spinner("sampling", self.common.quiet);
        let (probs, _) = model.probs();
        let mut rng = rng_from_seed(seed);
        let data = sample_states(model.cardinalities(), &probs, self.samples, &mut rng)?;
        spin.finish_and_clear();
        write_dataset(&self.output, &data)?;
        Summary::new("fsll sample", Some(seed))
            .extend(&SampleSummary::new(&self.model, self.samples, &self.output))?
            .emit(&self.common)
    }
}
