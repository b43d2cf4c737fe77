//! `boltzkit fvbm`: fit, evaluate, sample and test fully visible Boltzmann machines.

use crate::args::{BinarizeArgs, CommonArgs};
use crate::commands::fsll::{binarize_seed, load_data, load_truth};
use crate::exit::UsageError;
use crate::guard;
use crate::interrupt::interrupted_after;
use crate::progress;
use crate::report::{SampleSummary, Summary};
use anyhow::Context;
use boltzkit::data::synth::{sample_states_memory, table_memory};
use boltzkit::data::{write_dataset, Binarize, Dataset};
use boltzkit::fit::{Control, Learner, Run, StopReason};
use boltzkit::fvbm::exact::{self, MAX_EXACT_UNITS, MAX_TABLE_UNITS};
use boltzkit::fvbm::{
    inference, pcd, pseudo, Convention, Fvbm, FvbmParams, GaParams, MpleRecord, PcdParams,
};
use boltzkit::model::{ExactTask, Model, Sampling};
use boltzkit::provenance::{self, DataFile};
use boltzkit::rng::{derive_seed, rng_from_seed, BkRng};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// `n` samples of `model` by the library's one rule ([`Sampling::Auto`]: exact up to
/// [`MAX_EXACT_UNITS`] units, Gibbs beyond) and the sampler's name.
pub fn sample_model(
    model: &Fvbm,
    n: usize,
    rng: &mut BkRng,
) -> anyhow::Result<(Dataset, &'static str)> {
    let name = Sampling::Auto
        .resolve(model.exact_affordable(ExactTask::Sampling))
        .name();
    Ok((model.sample(n, &Sampling::Auto, rng)?, name))
}

/// `boltzkit fvbm <verb>`.
#[derive(Debug, Args)]
pub struct FvbmArgs {
    #[command(subcommand)]
    verb: FvbmVerb,
}

#[derive(Debug, Subcommand)]
enum FvbmVerb {
    /// Fit an FVBM to 0/1 data (MPLE by L-BFGS, BSLM, GA or Newton; exact ML; PCD)
    #[command(
        long_about = "Fit a fully visible Boltzmann machine P(x) ∝ exp(½ xᵀMx + bᵀx) \
        to 0/1 data. --algo plm|bslm|ga|newton maximize the pseudo-likelihood (Nguyen & Wood; \
        plm, the default, by L-BFGS on matrix products, for d in the thousands); \
        mle minimizes KL(p_d||p_θ) on exact moments (d ≤ 30, BM-DI); pcd is persistent \
        contrastive divergence (BM-PCD). With --convention spin the data's 0 maps to −1. Prints \
        the log-pseudo-likelihood (KL for mle), iterations, the stop reason, warnings (e.g. \
        when the MPLE does not exist) and the wall time.\n\n\
        Example:\n  boltzkit gen fvbm --vars 10 --samples 16000 -o x.npy --truth t.safetensors\n  \
        boltzkit fvbm fit --data x.npy --algo newton -o m.safetensors --truth t.safetensors"
    )]
    Fit(FitArgs),
    /// Log-pseudo-likelihood, exact log-likelihood and KL of a model
    #[command(
        long_about = "Evaluate a model on data: the log-pseudo-likelihood, the exact \
        average log-likelihood (d ≤ 30) and, with --truth, KL(p*||p_θ) (d ≤ 28).\n\n\
        Example:\n  boltzkit fvbm eval --model m.safetensors --data x.npy --truth t.safetensors"
    )]
    Eval(EvalArgs),
    /// Draw samples from a model (exact for d ≤ 30, Gibbs beyond)
    #[command(
        long_about = "Draw samples (0/1 rows) from a model: exact i.i.d. samples when \
        d ≤ 30, systematic-scan Gibbs sampling (1,000 burn-in sweeps) beyond.\n\n\
        Example:\n  boltzkit fvbm sample --model m.safetensors -n 1000 -o s.npy --seed 3"
    )]
    Sample(SampleArgs),
    /// Wald z-tests of every parameter (sandwich standard errors of the MPLE)
    #[command(
        long_about = "Standard errors of the MPLE from the sandwich covariance \
        (Hessian of the log-PL and the outer product of per-sample scores), and a Wald z-test \
        of θ_a = 0 for every parameter: a table of estimate, standard error, z and two-sided \
        p-value on stdout (--json: as JSON). With --l2 the standard errors are those of the \
        penalized estimate.\n\n\
        Example:\n  boltzkit fvbm tests --model m.safetensors --data x.npy"
    )]
    Tests(TestsArgs),
}

/// The learning algorithm of `fvbm fit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AlgoArg {
    /// MPLE by L-BFGS on matrix products, matrix-free existence check (scales to d = 1,000s)
    Plm,
    /// MPLE by block successive lower-bound maximization (the paper's)
    Bslm,
    /// MPLE by gradient ascent with step --mu
    Ga,
    /// MPLE by damped Newton (few iterations; a dense Hessian of d⁴/4 entries)
    Newton,
    /// Exact maximum likelihood on exact moments (BM-DI, d ≤ 30)
    Mle,
    /// Persistent contrastive divergence (BM-PCD)
    Pcd,
}

/// The FVBM convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConventionArg {
    /// Units take ±1 (the data's 0 maps to −1)
    Spin,
    /// Units take 0/1
    Binary,
}

impl From<ConventionArg> for Convention {
    fn from(c: ConventionArg) -> Self {
        match c {
            ConventionArg::Spin => Convention::Spin,
            ConventionArg::Binary => Convention::Binary,
        }
    }
}

/// The solver and its settings as flags: serialized under the schema's names ([`FvbmParams`])
/// and put over that solver's defaults ([`FvbmParams::from_value`]); a flag left out keeps
/// the solver's own default, and a default shown here is read from the library's struct. A
/// new setting of a solver with a flag is one field here.
#[derive(Debug, Args, Serialize)]
struct SolverFlags {
    /// Learning algorithm
    #[arg(long, value_enum, default_value_t = AlgoArg::Plm)]
    algo: AlgoArg,
    /// Convention of the fitted model [default: spin]
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    convention: Option<ConventionArg>,
    /// L2 penalty λ ≥ 0 per sample (the penalized maximizer always exists) [default: 0]
    #[arg(long, value_name = "λ")]
    #[serde(skip_serializing_if = "Option::is_none")]
    l2: Option<f64>,
    /// Skip the check that the MPLE exists (plm, bslm, ga, newton without --l2): Stiemke's
    /// certificate at the fit (plm: matrix-free), else a linear program that can take minutes
    /// beyond d ≈ 30 (plm: only up to 1,000 parameters); runaway parameters are still detected
    #[arg(long)]
    #[serde(
        rename = "check_existence",
        serialize_with = "negated",
        skip_serializing_if = "is_false"
    )]
    no_existence_check: bool,
    /// Stop when the objective gains less than this in an iteration (plm, bslm, ga, newton)
    /// [default: off for plm and bslm, which stop at --grad-tol; 1e-5, the paper's, for ga and
    /// newton]
    #[arg(long, value_name = "τ")]
    #[serde(skip_serializing_if = "Option::is_none")]
    tau: Option<f64>,
    /// Stop when every component of the gradient per sample is at most this (plm, bslm, ga,
    /// newton; mle: of the KL's gradient) [default: 1e-7 for plm and bslm (the MPLE);
    /// off for ga and newton; 1e-8 for mle]
    #[arg(long, value_name = "X")]
    #[serde(skip_serializing_if = "Option::is_none")]
    grad_tol: Option<f64>,
    /// plm: also stop when the last --objective-window iterations together gained at most this
    /// fraction of |log-PL| (scipy L-BFGS-B's relative-gain test over a window; 0 off)
    /// [default: 2.2e-8]
    #[arg(long, value_name = "X")]
    #[serde(skip_serializing_if = "Option::is_none")]
    objective_tol: Option<f64>,
    /// plm: iterations over which --objective-tol's gain is measured [default: 10]
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    objective_window: Option<usize>,
    /// Step μ of gradient ascent (μ ≤ 1 is monotone)
    #[arg(long, value_name = "μ", alias = "mu", default_value_t = GaParams::default().step)]
    step: f64,
    /// Most iterations (sweeps for bslm and ga, Newton steps, L-BFGS iterations for plm and mle)
    /// [default: 100,000; mle: 1,000]
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    max_iterations: Option<usize>,
    /// PCD learning rate
    #[arg(long, default_value_t = PcdParams::default().learning_rate)]
    learning_rate: f64,
    /// PCD persistent chains
    #[arg(long, value_name = "N", default_value_t = PcdParams::default().n_chains)]
    #[serde(rename = "n_chains")]
    chains: usize,
    /// PCD parameter updates
    #[arg(long, value_name = "N", default_value_t = PcdParams::default().n_updates)]
    #[serde(rename = "n_updates")]
    updates: usize,
}

/// `--no-existence-check` as the setting it turns off.
fn negated<S: serde::Serializer>(flag: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(!flag)
}

fn is_false(flag: &bool) -> bool {
    !flag
}

#[derive(Debug, Args)]
struct FitArgs {
    /// Training data of 0/1 values (.npy, .csv, .tsv, .amat; .gz read transparently)
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    #[command(flatten)]
    binarize: BinarizeArgs,
    #[command(flatten)]
    solver: SolverFlags,
    /// Where to write the model (safetensors)
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The truth: an FVBM (.safetensors, as written by `gen fvbm --truth`) or a probability
    /// table over all states (.npy); reports KL(p*||p_θ) and, for a model, the MSE of θ
    #[arg(long, value_name = "FILE")]
    truth: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Args)]
struct EvalArgs {
    /// The model file (safetensors, boltzkit/fvbm/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Data of 0/1 values
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,
    #[command(flatten)]
    binarize: BinarizeArgs,
    /// The truth: an FVBM (.safetensors) or a probability table (.npy)
    #[arg(long, value_name = "FILE")]
    truth: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Args)]
struct SampleArgs {
    /// The model file (safetensors, boltzkit/fvbm/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Number of samples
    #[arg(long, short = 'n', value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    samples: u64,
    /// Output data file (.npy, .csv, .tsv, .amat; optionally .gz)
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Args)]
struct TestsArgs {
    /// The fitted model file (safetensors, boltzkit/fvbm/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// The data the model was fitted to (0/1 values)
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    #[command(flatten)]
    binarize: BinarizeArgs,
    /// The L2 penalty λ the model was fitted with
    #[arg(long, value_name = "λ", default_value_t = 0.0)]
    l2: f64,
    #[command(flatten)]
    common: CommonArgs,
}

impl FvbmArgs {
    /// Runs the chosen verb.
    pub fn run(self) -> anyhow::Result<()> {
        match self.verb {
            FvbmVerb::Fit(a) => a.run(),
            FvbmVerb::Eval(a) => a.run(),
            FvbmVerb::Sample(a) => a.run(),
            FvbmVerb::Tests(a) => a.run(),
        }
    }
}

/// Reads a data file of 0/1 values for an FVBM (after the binarization, if any).
pub fn load_binary(path: &Path, binarize: Binarize) -> anyhow::Result<Dataset> {
    let data = load_data(path, None, binarize)?;
    if let Some(j) = data.cardinalities().iter().position(|&k| k != 2) {
        anyhow::bail!(
            "{}: an FVBM needs 0/1 data, but column {} holds values up to {}",
            path.display(),
            j + 1,
            data.cardinalities()[j] - 1
        );
    }
    data.require_nonempty()?;
    Ok(data)
}

/// A true distribution: a model (parameters known) or only its probability table.
pub enum Truth {
    /// An FVBM file.
    Model(Fvbm),
    /// A probability table over all `2^d` states.
    Table(Vec<f64>),
}

impl Truth {
    /// Reads `path`: `.safetensors` as an FVBM, anything else as a `.npy` probability table.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let is_model = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"));
        Ok(if is_model {
            Truth::Model(Fvbm::load(path)?)
        } else {
            Truth::Table(load_truth(path)?)
        })
    }

    /// KL(p*‖p_θ) to `model`, checked for size.
    pub fn kl(&self, model: &Fvbm) -> anyhow::Result<f64> {
        let d = model.d();
        if d > MAX_TABLE_UNITS {
            return Err(UsageError::new(format!(
                "--truth needs at most {MAX_TABLE_UNITS} variables, the model has {d}"
            ))
            .into());
        }
        let p = match self {
            Truth::Table(p) => p.clone(),
            Truth::Model(t) => {
                if t.d() != d {
                    anyhow::bail!("the truth has {} units, the model {d}", t.d());
                }
                exact::log_probabilities(t)?
                    .into_iter()
                    .map(f64::exp)
                    .collect()
            }
        };
        if p.len() != 1usize << d {
            anyhow::bail!(
                "the truth table has {} entries; a {d}-unit model needs 2^{d}",
                p.len()
            );
        }
        Ok(exact::kl_divergence(&p, model)?)
    }

    /// Mean squared error of `model`'s θ against the truth's (in the model's convention),
    /// when the truth is a model.
    pub fn mse(&self, model: &Fvbm) -> Option<f64> {
        match self {
            Truth::Model(t) if t.d() == model.d() => {
                let a = t.to_convention(model.convention()).theta();
                let b = model.theta();
                Some(a.iter().zip(&b).map(|(x, y)| (x - y).powi(2)).sum::<f64>() / a.len() as f64)
            }
            _ => None,
        }
    }
}

/// Prints each warning on stderr (unless quiet); returns them for the JSON summary (with
/// `--json` only).
fn warn(warnings: &[String], common: &CommonArgs) -> Option<Vec<String>> {
    if !common.quiet {
        for w in warnings {
            eprintln!("warning: {w}");
        }
    }
    common.json.then(|| warnings.to_vec())
}

/// What `fvbm fit` reports: the data, the solver's own figures, then the fitted model's (the
/// log-PL, the exact average log-likelihood when affordable, the distance to `--truth`).
#[derive(Serialize)]
struct FitSummary {
    data: String,
    samples: usize,
    vars: usize,
    algo: String,
    convention: &'static str,
    #[serde(flatten)]
    solver: SolverSummary,
    log_pl: f64,
    log_pl_per_sample: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_log_likelihood: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kl_truth: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mse_theta: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warnings: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<String>,
}

/// The solver's figures in [`FitSummary`], by family.
#[derive(Clone, Serialize)]
#[serde(untagged)]
enum SolverSummary {
    /// BSLM, GA and Newton (maximum pseudo-likelihood).
    Mple {
        sweeps: usize,
        stop: StopReason,
        monotone: bool,
        final_gradient: f64,
        mple_exists: Option<bool>,
        learn_s: f64,
        #[serde(flatten)]
        existence: Option<ExistenceSummary>,
    },
    /// Exact maximum likelihood.
    Mle {
        kl_data: f64,
        iterations: usize,
        stop: StopReason,
        final_gradient: f64,
        learn_s: f64,
    },
    /// Persistent contrastive divergence.
    Pcd {
        updates: usize,
        final_mismatch: f64,
        learn_s: f64,
    },
}

/// How the MPLE's existence was settled (when the separation LP ran).
#[derive(Clone, Serialize)]
struct ExistenceSummary {
    existence_s: f64,
    existence_by: &'static str,
    separated_pairs: usize,
}

/// What `fvbm fit` decided before fitting: the seed, the solver's checked settings, the data
/// and the true distribution.
struct FitPlan {
    seed: Option<u64>,
    params: FvbmParams,
    data: Dataset,
    truth: Option<Truth>,
}

/// A fit: the model, the solver's figures, the MPLE solvers' own final objective (log-PL minus
/// the penalty), why it stopped and the solver's warnings (for `--json`).
struct Solved {
    model: Fvbm,
    solver: SolverSummary,
    mple_objective: Option<f64>,
    stop: StopReason,
    warnings: Option<Vec<String>>,
}

impl SolverSummary {
    /// The figures of a maximum-pseudo-likelihood fit.
    fn mple(r: &MpleRecord) -> Self {
        SolverSummary::Mple {
            sweeps: r.iterations,
            stop: r.stop.clone(),
            monotone: r.is_monotone(),
            final_gradient: r.final_gradient,
            mple_exists: r.mple_exists(),
            learn_s: r.seconds,
            existence: r.existence.as_ref().map(|e| ExistenceSummary {
                existence_s: e.seconds,
                existence_by: if e.certificate { "certificate" } else { "lp" },
                separated_pairs: e.separation.as_ref().map_or(0, |s| s.separated_pairs),
            }),
        }
    }
}

impl FitArgs {
    /// Parse (clap) → plan → fit → report → write.
    fn run(self) -> anyhow::Result<()> {
        let plan = self.plan()?;
        let solved = self.solve(&plan)?;
        let stop = solved.stop.clone();
        let mut report = self.report(&plan, &solved)?;
        if let Some(path) = &self.output {
            let meta = provenance::fvbm_fit(&plan.params, Some(&DataFile::of(&self.data)?))?;
            solved
                .model
                .save(path, &meta)
                .with_context(|| format!("writing the model to {}", path.display()))?;
            report.output = Some(path.display().to_string());
        }
        interrupted_after(&stop, self.output.as_deref())?;
        Summary::new("fvbm fit", plan.seed)
            .extend(&report)?
            .emit(&self.common)
    }

    /// The seed, outputs checked, the settings from the flags (checked), the data read, the
    /// sizes refused up front, the truth read.
    fn plan(&self) -> anyhow::Result<FitPlan> {
        let algo = self.solver.algo;
        let seed = if algo == AlgoArg::Pcd || self.binarize.is_random() {
            Some(self.common.init()?)
        } else {
            self.common.init_threads()?;
            None
        };
        guard::model_files(
            &[Some(&self.data), self.truth.as_deref()],
            &[("-o", self.output.as_deref())],
            &[],
        )?;
        let mut params = FvbmParams::from_value(boltzkit::settings::to_json(&self.solver)?)?;
        if let FvbmParams::Pcd(p) = &mut params {
            p.seed = seed.unwrap_or(0);
        }
        params.check()?;
        let data = load_binary(
            &self.data,
            self.binarize.resolve(derive_seed(seed.unwrap_or(0), 2)),
        )?;
        let d = data.n_vars();
        // Newton and the dense existence check: memory and time, with the solver that scales
        params.check_size(d, data.n_samples())?;
        guard::memory(
            &format!("fvbm fit --algo {} on {d} variables", params.algo()),
            fit_memory(&params, d as u64, data.n_samples() as u64),
        )?;
        if algo == AlgoArg::Mle && d > MAX_EXACT_UNITS {
            return Err(UsageError::new(format!(
                "--algo mle enumerates all 2^d states: needs at most {MAX_EXACT_UNITS} \
                 variables, the data have {d}"
            ))
            .into());
        }
        if self.truth.is_some() && d > MAX_TABLE_UNITS {
            return Err(UsageError::new(format!(
                "--truth needs at most {MAX_TABLE_UNITS} variables, the data have {d}"
            ))
            .into());
        }
        let truth = self.truth.as_deref().map(Truth::load).transpose()?;
        Ok(FitPlan {
            seed,
            params,
            data,
            truth,
        })
    }

    /// The fit by the chosen solver, with its progress shown (Ctrl-C stops it).
    fn solve(&self, plan: &FitPlan) -> anyhow::Result<Solved> {
        let (params, data) = (&plan.params, &plan.data);
        let spin = progress::spinner("fitting", self.common.quiet);
        let interrupt = crate::interrupt::flag();
        let mut show = |p: &mut boltzkit::fvbm::Progress| {
            spin.set_message(format!("sweep {}  log-PL {:.6}", p.iteration, p.objective));
            Ok(Control::Continue)
        };
        // a Run for the fit (its type is the learner's)
        macro_rules! run {
            () => {
                Run::new().interrupt(interrupt.clone())
            };
        }
        let mple = |fit: boltzkit::fvbm::FvbmFit| {
            spin.finish_and_clear();
            Solved {
                solver: SolverSummary::mple(&fit.record),
                mple_objective: Some(fit.record.final_objective()),
                stop: fit.record.stop.clone(),
                warnings: warn(&fit.record.warnings, &self.common),
                model: fit.model,
            }
        };
        let solved = match params {
            FvbmParams::Plm(p) => mple(p.check()?.fit_with(data, run!().observe(&mut show))?),
            FvbmParams::Bslm(p) => mple(p.check()?.fit_with(data, run!().observe(&mut show))?),
            FvbmParams::Ga(p) => mple(p.check()?.fit_with(data, run!().observe(&mut show))?),
            FvbmParams::Newton(p) => mple(p.check()?.fit_with(data, run!().observe(&mut show))?),
            FvbmParams::Mle(p) => {
                let fit = p.check()?.fit_with(data, run!())?;
                let r = &fit.record;
                let solver = SolverSummary::Mle {
                    kl_data: r.kl_data,
                    iterations: r.iterations,
                    stop: r.stop.clone(),
                    final_gradient: r.final_gradient,
                    learn_s: r.seconds,
                };
                let stop = r.stop.clone();
                Solved {
                    model: fit.model,
                    solver,
                    mple_objective: None,
                    stop,
                    warnings: None,
                }
            }
            FvbmParams::Pcd(p) => {
                let learner = p.check()?;
                spin.finish_and_clear();
                let bar = progress::bar(p.n_updates as u64, "updates", self.common.quiet);
                let observed = run!().observe(|_: &mut pcd::PcdProgress<'_>| {
                    bar.inc(1);
                    Ok(Control::Continue)
                });
                let fit = learner.fit_with(data, observed)?;
                bar.finish_and_clear();
                let solver = SolverSummary::Pcd {
                    updates: fit.record.updates,
                    final_mismatch: fit.record.final_mismatch,
                    learn_s: fit.record.seconds,
                };
                Solved {
                    model: fit.model,
                    solver,
                    mple_objective: None,
                    stop: fit.record.stop,
                    warnings: None,
                }
            }
        };
        spin.finish_and_clear();
        Ok(solved)
    }

    /// The fitted model's figures: the log-PL, the exact average log-likelihood when
    /// affordable, the distance to the truth.
    fn report(&self, plan: &FitPlan, solved: &Solved) -> anyhow::Result<FitSummary> {
        let (params, data, model) = (&plan.params, &plan.data, &solved.model);
        let conv = params.convention();
        let d = data.n_vars();
        let log_pl = match solved.mple_objective {
            Some(objective) => objective,
            None => pseudo::log_pl(model, &pseudo::PlData::new(data, conv)?)?,
        };
        Ok(FitSummary {
            data: self.data.display().to_string(),
            samples: data.n_samples(),
            vars: d,
            algo: params.algo().to_string(),
            convention: conv.name(),
            solver: solved.solver.clone(),
            log_pl,
            log_pl_per_sample: log_pl / data.n_samples() as f64,
            avg_log_likelihood: (d <= MAX_EXACT_UNITS)
                .then(|| exact::average_log_likelihood(model, data))
                .transpose()?,
            kl_truth: plan.truth.as_ref().map(|t| t.kl(model)).transpose()?,
            mse_theta: plan.truth.as_ref().and_then(|t| t.mse(model)),
            warnings: solved.warnings.clone(),
            output: None,
        })
    }
}

impl EvalArgs {
    fn run(self) -> anyhow::Result<()> {
        let seed = binarize_seed(&self.common, self.binarize)?;
        if self.data.is_none() && self.truth.is_none() {
            return Err(UsageError::new("give --data, --truth or both").into());
        }
        let model = Fvbm::load(&self.model)?;
        let d = model.d();
        let spin = progress::spinner("evaluating", self.common.quiet);
        let mut report = EvalSummary {
            model: self.model.display().to_string(),
            vars: d,
            convention: model.convention().name(),
            data: None,
            truth: None,
        };
        if let Some(path) = &self.data {
            let data = load_binary(
                path,
                self.binarize.resolve(derive_seed(seed.unwrap_or(0), 2)),
            )?;
            if data.n_vars() != d {
                anyhow::bail!(
                    "{}: {} variables, the model has {d} units",
                    path.display(),
                    data.n_vars()
                );
            }
            let pl = pseudo::PlData::new(&data, model.convention())?;
            let log_pl = pseudo::log_pl(&model, &pl)?;
            report.data = Some(DataFigures {
                data: path.display().to_string(),
                samples: data.n_samples(),
                log_pl,
                log_pl_per_sample: log_pl / data.n_samples() as f64,
                avg_log_likelihood: (d <= MAX_EXACT_UNITS)
                    .then(|| exact::average_log_likelihood(&model, &data))
                    .transpose()?,
            });
        }
        if let Some(path) = &self.truth {
            let truth = Truth::load(path)?;
            report.truth = Some(TruthFigures {
                truth: path.display().to_string(),
                kl_truth: truth.kl(&model)?,
                mse_theta: truth.mse(&model),
            });
        }
        spin.finish_and_clear();
        Summary::new("fvbm eval", seed)
            .extend(&report)?
            .emit(&self.common)
    }
}

/// What `fvbm eval` reports: the model, then the figures of `--data` and of `--truth`.
#[derive(Serialize)]
struct EvalSummary {
    model: String,
    vars: usize,
    convention: &'static str,
    #[serde(flatten)]
    data: Option<DataFigures>,
    #[serde(flatten)]
    truth: Option<TruthFigures>,
}

/// The model on a data file: its log-PL and exact average log-likelihood (`null` beyond
/// enumeration).
#[derive(Serialize)]
struct DataFigures {
    data: String,
    samples: usize,
    log_pl: f64,
    log_pl_per_sample: f64,
    avg_log_likelihood: Option<f64>,
}

/// The model against the true distribution: KL, and θ's mean squared error when the truth
/// is a model.
#[derive(Serialize)]
struct TruthFigures {
    truth: String,
    kl_truth: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    mse_theta: Option<f64>,
}

impl SampleArgs {
    fn run(self) -> anyhow::Result<()> {
        let seed = self.common.init()?;
        guard::files(&[Some(&self.model)], &[Some(&self.output)])?;
        let model = Fvbm::load(&self.model)?;
        let d = model.d() as u64;
        let table = if model.d() <= MAX_EXACT_UNITS {
            table_memory(&vec![2; model.d()])
        } else {
            0
        };
        guard::memory(
            &format!("fvbm sample -n {}", self.samples),
            table.saturating_add(sample_states_memory(d, self.samples)),
        )?;
        let n =
            usize::try_from(self.samples).map_err(|_| UsageError::new("--samples is too large"))?;
        let mut rng = rng_from_seed(seed);
        let spin = progress::spinner("sampling", self.common.quiet);
        let (data, method) = sample_model(&model, n, &mut rng)?;
        spin.finish_and_clear();
        write_dataset(&self.output, &data).context("cannot write the samples")?;
        let mut report = SampleSummary::new(&self.model, n, &self.output);
        report.method = Some(method.to_string());
        Summary::new("fvbm sample", Some(seed))
            .extend(&report)?
            .emit(&self.common)
    }
}

impl TestsArgs {
    fn run(self) -> anyhow::Result<()> {
        let seed = binarize_seed(&self.common, self.binarize)?;
        let model = Fvbm::load(&self.model)?;
        guard::memory(
            &format!("fvbm tests on {} variables", model.d()),
            pseudo::hessian_memory(model.d() as u64),
        )?;
        let data = load_binary(
            &self.data,
            self.binarize.resolve(derive_seed(seed.unwrap_or(0), 2)),
        )?;
        if data.n_vars() != model.d() {
            anyhow::bail!(
                "--data {}: {} variables, but the model {} has {} units (tests need the data \
                 the model was fitted to)",
                self.data.display(),
                data.n_vars(),
                self.model.display(),
                model.d()
            );
        }
        let spin = progress::spinner("standard errors", self.common.quiet);
        let inf = inference::sandwich(&model, &data, self.l2).with_context(|| {
            format!(
                "standard errors of {} on {}",
                self.model.display(),
                self.data.display()
            )
        })?;
        spin.finish_and_clear();
        let parameters = self.common.json.then(|| {
            (0..inf.names.len())
                .map(|a| ParameterRow {
                    name: &inf.names[a],
                    estimate: inf.estimate[a],
                    std_error: inf.std_error[a],
                    z: inf.z[a],
                    p_value: inf.p_value[a],
                })
                .collect()
        });
        if !self.common.json {
            crate::report::print_stdout(&table(&inf)).context("writing the table")?;
        }
        Summary::new("fvbm tests", seed)
            .extend(&TestsSummary {
                model: self.model.display().to_string(),
                data: self.data.display().to_string(),
                samples: data.n_samples(),
                convention: model.convention().name(),
                l2: self.l2,
                parameters,
            })?
            .emit(&self.common)
    }
}

/// What `fvbm tests` reports; the Wald table itself is printed before it, or is
/// `parameters` with `--json`.
#[derive(Serialize)]
struct TestsSummary<'a> {
    model: String,
    data: String,
    samples: usize,
    convention: &'static str,
    l2: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<Vec<ParameterRow<'a>>>,
}

/// One parameter's Wald test (non-finite figures serialize as `null`).
#[derive(Serialize)]
struct ParameterRow<'a> {
    name: &'a str,
    estimate: f64,
    std_error: f64,
    z: f64,
    p_value: f64,
}

/// Bytes `fvbm fit` needs: the model and the distinct rows' pseudo-likelihood data, plus the
/// design and L-BFGS vectors (plm), the Hessian (Newton), the 2^d tables (mle) or the chains
/// (pcd).
fn fit_memory(params: &FvbmParams, d: u64, rows: u64) -> u64 {
    let base = Fvbm::memory_estimate(d)
        .saturating_mul(4)
        .saturating_add(Dataset::memory_estimate(rows, d).saturating_mul(24));
    let extra = match params {
        FvbmParams::Plm(p) => p.memory_estimate(d, rows),
        FvbmParams::Newton(_) => pseudo::hessian_memory(d),
        FvbmParams::Mle(_) => table_memory(&vec![2; d.min(64) as usize]).saturating_mul(2),
        FvbmParams::Pcd(p) => Dataset::memory_estimate(p.n_chains as u64, d).saturating_mul(16),
        FvbmParams::Bslm(_) | FvbmParams::Ga(_) => 0,
    };
    base.saturating_add(extra)
}

/// The Wald table: one row per parameter.
fn table(inf: &inference::Inference) -> String {
    let width = inf.names.iter().map(|n| n.len()).max().unwrap_or(4).max(9);
    let mut out = format!(
        "{:<width$} {:>12} {:>12} {:>10} {:>10}",
        "parameter", "estimate", "std_error", "z", "p_value"
    );
    for a in 0..inf.names.len() {
        out.push_str(&format!(
            "\n{:<width$} {:>12.6} {:>12.6} {:>10.3} {:>10.3e}",
            inf.names[a], inf.estimate[a], inf.std_error[a], inf.z[a], inf.p_value[a]
        ));
    }
    out
}
