//! `boltzkit gen`: the papers' synthetic datasets (FSLL's Ising grids and Bayesian networks,
//! the FVBM design of Nguyen & Wood, pop-CD's Artificial Modes, bars & stripes) and their
//! exact distributions, written as data files.

use super::common::{to_usize, Common, Outcome};
use crate::guard::{self, UsageError};
use anyhow::Context;
use boltzkit::data::synth::{
    sample_states_memory, table_memory, ArtificialModes, BarsAndStripes, BayesNet, Distribution,
    IsingGrid, MAX_BARS_AND_STRIPES_D, MAX_EXACT_VARS, MAX_PARENTS,
};
use boltzkit::data::{write_dataset, write_npy_f64, Dataset};
use boltzkit::rng::rng_from_seed;
use boltzkit_repro::Progress;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

use boltzkit::fvbm::exact::{self, MAX_TABLE_UNITS};
use boltzkit::fvbm::{Convention, Fvbm};
use boltzkit::model::{ExactTask, Model, Sampling};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use std::collections::BTreeMap;

/// The most variables for which `--truth` (all 2^n state probabilities) is written.
pub const MAX_TRUTH_VARS: usize = MAX_EXACT_VARS;

/// Data file extensions `gen` writes (each may be followed by `.gz`), as
/// [`boltzkit::data::write_dataset`] reads them.
const DATA_EXTENSIONS: [&str; 4] = ["npy", "csv", "tsv", "amat"];

/// `boltzkit gen <verb>`, with the command line's common flags `C`.
#[derive(Debug, Subcommand)]
pub enum Gen<C: Common> {
    /// Exact samples of an Ising model on a rows × cols grid (0/1 values)
    #[command(
        long_about = "Exact samples of an Ising model on a rows × cols grid with \
        nearest-neighbour coupling J (positive: neighbours agree), written as 0/1 values, one \
        row per sample and one column per site (row-major).\n\n\
        Example:\n  boltzkit gen ising --rows 5 --cols 4 --coupling 0.5 -o ising.npy \
        --truth p.npy --seed 1"
    )]
    Ising(IsingArgs<C>),

    /// Samples of a random Bayesian network over binary variables
    #[command(
        long_about = "Samples of a random Bayesian network over binary variables, \
        each with at most --parents parents among the earlier variables and random conditional \
        probability tables. The network is drawn from the seed too.\n\n\
        Example:\n  boltzkit gen bn --vars 20 --parents 2 --samples 5000 -o bn.csv \
        --truth bn-p.npy --seed 7"
    )]
    Bn(BnArgs<C>),

    /// Samples of a random fully visible Boltzmann machine (Ising model)
    #[command(
        long_about = "Samples of a fully visible Boltzmann machine P(x) ∝ exp(½ xᵀMx + bᵀx) \
        with b and the upper triangle of M drawn i.i.d. from N(0, --variance) (the simulation \
        design of Nguyen & Wood, Sec. 5), written as 0/1 values (in the spin convention 0 \
        stands for −1). Exact sampling for d ≤ 30, Gibbs sampling beyond. --truth writes the \
        parameters (.safetensors) or the probability table over all states (.npy, d ≤ 28).\n\n\
        Example:\n  boltzkit gen fvbm --vars 10 --samples 16000 -o x.npy --truth t.safetensors \
        --seed 1"
    )]
    Fvbm(FvbmGenArgs<C>),

    /// Artificial Modes: noisy copies of distant binary prototypes (pop-CD paper, Sec. 4.1)
    #[command(
        long_about = "Artificial Modes (Desjardins et al. 2010; the pop-CD paper's Sec. 4.1, \
        Shark's DistantModes): --modes prototypes of --dim bits, prototype m having bit i = \
        (m mod 2) XOR (floor(i (floor(m/2) + 1) / dim) mod 2), each copied --copies times with \
        every bit flipped with probability --flip. Rows are ordered mode by mode. The defaults \
        are the paper's: 16 bits, 4 modes, 2,500 copies (10,000 samples), p = 0.001. --truth \
        writes the exact mixture distribution over all 2^dim states.\n\n\
        Example:\n  boltzkit gen artificial-modes -o modes.npy --truth modes-p.npy --seed 1"
    )]
    ArtificialModes(ModesArgs<C>),

    /// Bars & stripes D × D (every pattern once, or all 2^(D+1) outcomes with --duplicated)
    #[command(
        long_about = "Bars & stripes on a D × D grid (MacKay 2003), pixel r·D + c. Distinct \
        form (default): the 2^(D+1) − 2 different patterns once each (14 for D = 3, the S-DCP \
        paper's set). --duplicated: all 2^(D+1) outcomes of the generative process (set each \
        row on or off, then rotate with probability ½), the all-off and all-on grids twice: 32 \
        patterns for D = 4, the pop-CD paper's set (its batch size is 32). No randomness.\n\n\
        Example:\n  boltzkit gen bars-stripes --size 4 --duplicated -o bas4.csv --truth bas4-p.npy"
    )]
    BarsStripes(BarsStripesArgs<C>),
}

#[doc(hidden)]
#[derive(Debug, Args)]
pub struct ModesArgs<C: Common> {
    /// Bits per sample
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u64).range(1..))]
    dim: u64,
    /// Number of modes (prototypes)
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u64).range(1..))]
    modes: u64,
    /// Copies of each prototype
    #[arg(long, value_name = "N", default_value_t = 2500,
          value_parser = clap::value_parser!(u64).range(1..))]
    copies: u64,
    /// Probability that a bit of a copy is flipped
    #[arg(long, value_name = "P", default_value_t = 0.001)]
    flip: f64,
    /// Output data file (.npy, .csv, .tsv or .amat, each optionally followed by .gz)
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Also write the exact distribution over all 2^dim states (f64 .npy; dim ≤ 28)
    #[arg(long, value_name = "FILE.npy")]
    truth: Option<PathBuf>,
    #[command(flatten)]
    common: C,
}

#[doc(hidden)]
#[derive(Debug, Args)]
pub struct BarsStripesArgs<C: Common> {
    /// Side D of the grid
    #[arg(long, value_name = "D", default_value_t = 4)]
    size: usize,
    /// All 2^(D+1) outcomes of the process (all-off and all-on twice) instead of the
    /// 2^(D+1) − 2 distinct patterns
    #[arg(long)]
    duplicated: bool,
    /// Output data file (.npy, .csv, .tsv or .amat, each optionally followed by .gz)
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Also write the exact distribution over all 2^(D·D) states (f64 .npy; D ≤ 5)
    #[arg(long, value_name = "FILE.npy")]
    truth: Option<PathBuf>,
    #[command(flatten)]
    common: C,
}

impl<C: Common> ModesArgs<C> {
    fn run(self) -> anyhow::Result<Outcome> {
        let dim = to_usize(self.dim, "--dim")?;
        let am = ArtificialModes::new(
            dim,
            to_usize(self.modes, "--modes")?,
            to_usize(self.copies, "--copies")?,
            self.flip,
        )
        .map_err(|e| UsageError::new(e.to_string()))?;
        let out = OutputArgs {
            samples: am.n_samples() as u64,
            output: self.output.clone(),
            truth: self.truth.clone(),
        };
        out.check(dim, false)?;
        let seed = self.common.init()?;
        let data = am
            .sample(&mut rng_from_seed(seed))
            .context("sampling Artificial Modes")?;
        let dist = match self.truth {
            Some(_) => Some(am.distribution().context("the exact distribution")?),
            None => None,
        };
        let mut summary = Outcome::new("gen artificial-modes", Some(seed));
        summary
            .set("modes", self.modes)
            .set("copies", self.copies)
            .set("flip", self.flip);
        out.write(&data, dist.as_ref(), dim, &mut summary)?;
        Ok(summary)
    }
}

impl<C: Common> BarsStripesArgs<C> {
    fn run(self) -> anyhow::Result<Outcome> {
        if self.size == 0 || self.size > MAX_BARS_AND_STRIPES_D {
            return Err(UsageError::new(format!(
                "--size must lie in 1..={MAX_BARS_AND_STRIPES_D}, found {}",
                self.size
            ))
            .into());
        }
        let bs = BarsAndStripes::new(self.size, self.duplicated)?;
        let out = OutputArgs {
            samples: bs.n_patterns() as u64,
            output: self.output.clone(),
            truth: self.truth.clone(),
        };
        out.check(bs.n_vars(), false)?;
        self.common.init_threads()?;
        let data = bs.dataset()?;
        let dist = match self.truth {
            Some(_) => Some(bs.distribution()?),
            None => None,
        };
        let mut summary = Outcome::new("gen bars-stripes", None);
        summary.set("size", self.size).set(
            "form",
            if self.duplicated {
                "duplicated"
            } else {
                "distinct"
            },
        );
        out.write(&data, dist.as_ref(), bs.n_vars(), &mut summary)?;
        Ok(summary)
    }
}

/// Where the samples (and the optional exact distribution) go.
#[derive(Debug, Args)]
struct OutputArgs {
    /// Number of samples
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    samples: u64,

    /// Output data file; the format follows the extension: .npy, .csv, .tsv or .amat, each
    /// optionally followed by .gz
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,

    /// Also write the exact distribution over all 2^n states (f64 .npy, state index with
    /// variable 0 as the least significant bit); needs n <= 28
    #[arg(long, value_name = "FILE.npy")]
    truth: Option<PathBuf>,
}

#[doc(hidden)]
#[derive(Debug, Args)]
pub struct IsingArgs<C: Common> {
    /// Grid rows
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..))]
    rows: u64,

    /// Grid columns
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u64).range(1..))]
    cols: u64,

    /// Coupling J between grid neighbours
    #[arg(
        long,
        value_name = "J",
        default_value_t = 0.5,
        allow_negative_numbers = true
    )]
    coupling: f64,

    #[command(flatten)]
    out: OutputArgs,

    #[command(flatten)]
    common: C,
}

#[doc(hidden)]
#[derive(Debug, Args)]
pub struct BnArgs<C: Common> {
    /// Number of binary variables
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u64).range(1..))]
    vars: u64,

    /// Most parents per variable
    #[arg(long, value_name = "K", default_value_t = 2)]
    parents: u64,

    #[command(flatten)]
    out: OutputArgs,

    #[command(flatten)]
    common: C,
}

impl<C: Common> Gen<C> {
    /// The common flags.
    pub fn common(&self) -> &C {
        match self {
            Gen::Ising(a) => &a.common,
            Gen::Bn(a) => &a.common,
            Gen::Fvbm(a) => &a.common,
            Gen::ArtificialModes(a) => &a.common,
            Gen::BarsStripes(a) => &a.common,
        }
    }

    /// Checks the flags, generates, writes the files and says what was written.
    pub fn run(self, progress: &dyn Progress) -> anyhow::Result<Outcome> {
        match self {
            Gen::Ising(a) => a.run(progress),
            Gen::Bn(a) => a.run(progress),
            Gen::Fvbm(a) => a.run(progress),
            Gen::ArtificialModes(a) => a.run(),
            Gen::BarsStripes(a) => a.run(),
        }
    }
}

impl<C: Common> IsingArgs<C> {
    fn run(self, progress: &dyn Progress) -> anyhow::Result<Outcome> {
        let rows = to_usize(self.rows, "--rows")?;
        let cols = to_usize(self.cols, "--cols")?;
        let n_vars = rows
            .checked_mul(cols)
            .ok_or_else(|| UsageError::new("--rows × --cols is too large"))?;
        if !self.coupling.is_finite() {
            return Err(UsageError::new("--coupling must be a finite number").into());
        }
        if n_vars > MAX_EXACT_VARS {
            return Err(UsageError::new(format!(
                "gen ising samples exactly from the table of all 2^n states: --rows × --cols \
                 must be at most {MAX_EXACT_VARS}, found {rows} × {cols} = {n_vars}"
            ))
            .into());
        }
        self.out.check(n_vars, true)?;
        let seed = self.common.init()?;
        let mut rng = rng_from_seed(seed);

        let grid = IsingGrid::new(rows, cols, self.coupling);
        progress.stage("sampling", None);
        let dist: Distribution = grid.distribution().context("building the Ising model")?;
        let data = dist
            .sample(to_usize(self.out.samples, "--samples")?, &mut rng)
            .context("sampling the Ising model")?;
        progress.finish();

        let mut summary = Outcome::new("gen ising", Some(seed));
        summary
            .set("rows", rows)
            .set("cols", cols)
            .set("coupling", self.coupling);
        self.out.write(&data, Some(&dist), n_vars, &mut summary)?;
        Ok(summary)
    }
}

impl<C: Common> BnArgs<C> {
    fn run(self, progress: &dyn Progress) -> anyhow::Result<Outcome> {
        let n_vars = to_usize(self.vars, "--vars")?;
        let parents = to_usize(self.parents, "--parents")?;
        if parents > MAX_PARENTS {
            return Err(UsageError::new(format!(
                "--parents must be at most {MAX_PARENTS}, found {parents}"
            ))
            .into());
        }
        self.out.check(n_vars, false)?;
        let seed = self.common.init()?;
        let mut rng = rng_from_seed(seed);

        progress.stage("sampling", None);
        let net =
            BayesNet::random(n_vars, parents, &mut rng).context("drawing the Bayesian network")?;
        let data = net
            .sample(to_usize(self.out.samples, "--samples")?, &mut rng)
            .context("sampling the Bayesian network")?;
        let dist = match self.out.truth {
            Some(_) => Some(
                net.distribution()
                    .context("computing the exact distribution")?,
            ),
            None => None,
        };
        progress.finish();

        let mut summary = Outcome::new("gen bn", Some(seed));
        summary.set("parents", parents).set("edges", net.n_edges());
        self.out.write(&data, dist.as_ref(), n_vars, &mut summary)?;
        Ok(summary)
    }
}

#[doc(hidden)]
#[derive(Debug, Args)]
pub struct FvbmGenArgs<C: Common> {
    /// Number of units d
    #[arg(long, value_name = "D", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..))]
    vars: u64,

    /// Number of samples
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    samples: u64,

    /// Variance σ² of the random parameters
    #[arg(long, value_name = "σ²", default_value_t = 0.5)]
    variance: f64,

    /// Convention of the model
    #[arg(long, default_value = "spin", value_parser = convention_parser())]
    convention: Convention,

    /// Output data file (.npy, .csv, .tsv or .amat, each optionally followed by .gz)
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,

    /// Also write the truth: the parameters (.safetensors) or the exact distribution over all
    /// 2^d states (.npy, d ≤ 28)
    #[arg(long, value_name = "FILE")]
    truth: Option<PathBuf>,

    #[command(flatten)]
    common: C,
}

impl<C: Common> FvbmGenArgs<C> {
    fn run(self, progress: &dyn Progress) -> anyhow::Result<Outcome> {
        let d = to_usize(self.vars, "--vars")?;
        let n = to_usize(self.samples, "--samples")?;
        if !(self.variance.is_finite() && self.variance >= 0.0) {
            return Err(UsageError::new(format!(
                "--variance must be a finite number ≥ 0, got {}",
                self.variance
            ))
            .into());
        }
        if !DATA_EXTENSIONS.contains(&data_extension(&self.output).as_str()) {
            return Err(UsageError::new(format!(
                "-o {}: unknown data format; use .npy, .csv, .tsv or .amat (optionally .gz)",
                self.output.display()
            ))
            .into());
        }
        let truth_is_model = match &self.truth {
            Some(t) if extension(t) == "safetensors" => true,
            Some(t) if extension(t) == "npy" => {
                if d > MAX_TABLE_UNITS {
                    return Err(UsageError::new(format!(
                        "--truth {}: the probability table needs at most {MAX_TABLE_UNITS} \
                         variables, found {d}; write the parameters (.safetensors) instead",
                        t.display()
                    ))
                    .into());
                }
                false
            }
            Some(t) => {
                return Err(UsageError::new(format!(
                    "--truth {}: use .safetensors (parameters) or .npy (probability table)",
                    t.display()
                ))
                .into())
            }
            None => false,
        };
        guard::files(&[], &[Some(&self.output), self.truth.as_deref()])?;
        let table = if d <= exact::MAX_EXACT_UNITS {
            table_memory(&vec![2; d])
        } else {
            0
        };
        guard::memory(
            &format!("gen fvbm --samples {}", self.samples),
            table
                .saturating_add(Fvbm::memory_estimate(d as u64))
                .saturating_add(sample_states_memory(d as u64, self.samples)),
        )?;
        let seed = self.common.init()?;
        let mut rng = rng_from_seed(seed);
        let conv = self.convention;
        let model = Fvbm::random(d, self.variance, conv, &mut rng)?;
        progress.stage("sampling", None);
        let method = Sampling::Auto.resolve(model.exact_affordable(ExactTask::Sampling));
        let data = model.sample(n, &Sampling::Auto, &mut rng)?;
        progress.finish();
        write_dataset(&self.output, &data).context("cannot write the samples")?;
        let mut summary = Outcome::new("gen fvbm", Some(seed));
        summary
            .set("vars", d)
            .set("samples", n)
            .set("variance", self.variance)
            .set("convention", conv.name())
            .set("method", method.name())
            .set("output", self.output.display().to_string())
            .set("output_sha256", boltzkit::io::sha256_file(&self.output)?);
        match &self.truth {
            Some(path) if truth_is_model => {
                let mut meta = BTreeMap::new();
                meta.insert("generator".into(), "gen fvbm".into());
                meta.insert("seed".into(), seed.to_string());
                meta.insert("variance".into(), self.variance.to_string());
                model
                    .save(path, &meta)
                    .context("cannot write the parameters")?;
                summary.set("truth", path.display().to_string());
            }
            Some(path) => {
                let p: Vec<f64> = exact::log_probabilities(&model)?
                    .into_iter()
                    .map(f64::exp)
                    .collect();
                write_npy_f64(path, &[p.len()], &p)
                    .context("cannot write the exact distribution")?;
                summary.set("truth", path.display().to_string());
            }
            None => {
                summary.set("truth", serde_json::Value::Null);
            }
        }
        Ok(summary)
    }
}

impl OutputArgs {
    /// Usage checks made before any work: known extensions, `--truth` size limit, distinct
    /// files, and the memory of the samples plus the 2^n table when `table` (the generator
    /// builds it) or `--truth` asks for it.
    fn check(&self, n_vars: usize, table: bool) -> anyhow::Result<()> {
        guard::files(&[], &[Some(&self.output), self.truth.as_deref()])?;
        let table = if table || self.truth.is_some() {
            table_memory(&vec![2; n_vars.min(64)])
        } else {
            0
        };
        guard::memory(
            &format!("--samples {}", self.samples),
            table.saturating_add(sample_states_memory(n_vars as u64, self.samples)),
        )?;
        if !DATA_EXTENSIONS.contains(&data_extension(&self.output).as_str()) {
            return Err(UsageError::new(format!(
                "-o {}: unknown data format; use .npy, .csv, .tsv or .amat (optionally .gz)",
                self.output.display()
            ))
            .into());
        }
        if let Some(truth) = &self.truth {
            if extension(truth) != "npy" {
                return Err(UsageError::new(format!(
                    "--truth {}: the exact distribution is written as .npy",
                    truth.display()
                ))
                .into());
            }
            if n_vars > MAX_TRUTH_VARS {
                return Err(UsageError::new(format!(
                    "--truth needs at most {MAX_TRUTH_VARS} variables (2^n probabilities); \
                     this model has {n_vars}"
                ))
                .into());
            }
        }
        Ok(())
    }

    /// Writes the samples and the truth, recording both in `summary`.
    fn write(
        &self,
        data: &Dataset,
        dist: Option<&Distribution>,
        n_vars: usize,
        summary: &mut Outcome,
    ) -> anyhow::Result<()> {
        write_dataset(&self.output, data).context("cannot write the samples")?;
        let sha = boltzkit::io::sha256_file(&self.output)?;
        summary
            .set("vars", n_vars)
            .set("samples", data.n_samples())
            .set("output", self.output.display().to_string())
            .set("output_sha256", sha);
        match (&self.truth, dist) {
            (Some(path), Some(dist)) => {
                let probs = dist.probs();
                write_npy_f64(path, &[probs.len()], probs)
                    .context("cannot write the exact distribution")?;
                summary.set("truth", path.display().to_string());
            }
            _ => {
                summary.set("truth", serde_json::Value::Null);
            }
        }
        Ok(())
    }
}

fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// The extension that names the data format, below an optional `.gz`.
fn data_extension(path: &Path) -> String {
    match path.extension() {
        Some(e) if e.eq_ignore_ascii_case("gz") => extension(&path.with_extension("")),
        _ => extension(path),
    }
}

/// `--convention`: spin or binary, each with its help line.
fn convention_parser() -> impl TypedValueParser<Value = Convention> {
    PossibleValuesParser::new([
        PossibleValue::new("spin").help("Units take ±1 (the data's 0 maps to −1)"),
        PossibleValue::new("binary").help("Units take 0/1"),
    ])
    .map(|s| match s.as_str() {
        "binary" => Convention::Binary,
        _ => Convention::Spin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(output: &str, truth: Option<&str>) -> OutputArgs {
        OutputArgs {
            samples: 10,
            output: output.into(),
            truth: truth.map(PathBuf::from),
        }
    }

    #[test]
    fn checks_extensions_and_truth_size() {
        assert!(out("a.npy", Some("p.npy")).check(28, false).is_ok());
        assert!(out("a.CSV", None).check(100, false).is_ok());
        assert!(out("a.tsv.gz", None).check(100, false).is_ok());
        assert!(out("a.amat", None).check(100, false).is_ok());
        assert!(out("a.gz", None).check(100, false).is_err());
        let e = out("a.npy", Some("p.npy")).check(29, false).unwrap_err();
        assert!(e.to_string().contains("at most 28"), "{e}");
        assert!(e.is::<UsageError>());
        assert!(out("a.txt", None).check(3, false).is_err());
        assert!(out("a", None).check(3, false).is_err());
        assert!(out("a.npy", Some("p.csv")).check(3, false).is_err());
    }
}
