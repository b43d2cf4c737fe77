//! `boltzkit rbm eval`: the average log-likelihood of data under a model, exact or as the
//! bracket [RAISE, forward AIS] (with its convergence in the number of steps).

use super::input::{check_vars, load_binary};
use crate::args::{AisFlags, BinarizeArgs, CommonArgs};
use crate::exit::UsageError;
use crate::guard;
use crate::progress;
use crate::report::Summary;
use boltzkit::data::Dataset;
use boltzkit::estimate::{Estimate, Method};
use boltzkit::rbm::ais::AisSchedule;
use boltzkit::rbm::eval_settings::EvalParams;
use boltzkit::rbm::exact::MAX_ENUM_UNITS;
use boltzkit::rbm::file::load_rbm;
use boltzkit::rbm::loglik::{
    average_log_likelihood, bracket_convergence, convergence_steps, Bracket, LogLikParams,
    LogLikelihood,
};
use boltzkit::rbm::{monitor, GibbsChains, Rbm};
use boltzkit::rng::derive_seed;
use boltzkit::settings;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::PathBuf;

/// How `rbm eval` estimates the average log-likelihood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum MethodArg {
    /// Enumeration of the smaller layer (≤ 30 units)
    Exact,
    /// Forward annealed importance sampling (optimistic in expectation)
    Ais,
    /// RAISE per test vector (conservative in expectation for the annealing model)
    Raise,
    /// The interval [RAISE, forward AIS] with a diagnosis
    Bracket,
    /// Reverse AIS from data rows pooled into one ln Z (neither a bound nor consistent)
    ReverseAisFromData,
}

impl MethodArg {
    fn method(self) -> Method {
        match self {
            MethodArg::Exact => Method::Exact,
            MethodArg::Ais => Method::Ais,
            MethodArg::Raise => Method::Raise,
            MethodArg::Bracket => Method::Bracket,
            MethodArg::ReverseAisFromData => Method::ReverseAisFromData,
        }
    }
}

#[derive(Debug, Args)]
pub(super) struct EvalArgs {
    /// The model file (safetensors, boltzkit/rbm/v1)
    #[arg(long, value_name = "FILE")]
    pub(super) model: PathBuf,
    /// Data of 0/1 values (a unit-type model's: codes, an alignment or real values)
    #[arg(long, value_name = "FILE")]
    pub(super) data: PathBuf,
    /// How to estimate it [default: exact when the smaller layer has ≤ 30 units, else bracket]
    #[arg(long, value_enum)]
    pub(super) method: Option<MethodArg>,
    #[command(flatten)]
    binarize: BinarizeArgs,
    #[command(flatten)]
    pub(super) ais: AisFlags,
    #[command(flatten)]
    pub(super) estimator: EstimatorFlags,
    /// Report the bracket at K, 2K, 4K, ... steps up to the schedule's (the standard schedule's
    /// shape, or linear with --ais-steps)
    #[arg(long, value_name = "K")]
    convergence: Option<usize>,
    /// Also report the mean-field reconstruction error and the full pseudo-log-likelihood
    /// (every unit) of the data: cheap, deterministic monitors, not log-likelihoods
    #[arg(long)]
    monitors: bool,
    #[command(flatten)]
    pub(super) units: super::units_flags::UnitEvalFlags,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

/// The estimator's flags besides `--ais-chains` / `--ais-steps`, serialized under the schema's
/// names ([`EvalParams`]) and put over its defaults (`settings::overlay`); each default is
/// read from the struct.
#[derive(Debug, Args, Serialize)]
pub(super) struct EstimatorFlags {
    /// RAISE chains per test vector
    #[arg(long, value_name = "M", default_value_t = EvalParams::default().raise_chains)]
    pub(super) raise_chains: usize,
    /// RAISE on a seeded random subset of N test vectors [default: all]
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) raise_vectors: Option<usize>,
    /// A bracket wider than this many nats is diagnosed as too wide
    #[arg(long, value_name = "X", default_value_t = EvalParams::default().max_width)]
    max_width: f64,
}

/// What `rbm eval` reports (its `--json` fields after `command` and `seed`, in order).
#[derive(Debug, Default, Serialize)]
struct EvalReport {
    model: String,
    data: String,
    samples: usize,
    visible: usize,
    hidden: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    reconstruction_error: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pseudo_log_likelihood: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<Method>,
    /// Forward AIS chains (or data-row starts).
    #[serde(skip_serializing_if = "Option::is_none")]
    chains: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    steps: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    raise_chains: Option<usize>,
    /// Test vectors RAISE scored.
    #[serde(skip_serializing_if = "Option::is_none")]
    raise_vectors: Option<usize>,
    /// The figure of exact, ais, raise and reverse-ais-from-data.
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_log_likelihood: Option<f64>,
    /// Its standard error (raise).
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_log_likelihood_se: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_z: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_z_se: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_z_lower: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_z_upper: Option<f64>,
    /// The bracket's conservative end.
    #[serde(skip_serializing_if = "Option::is_none")]
    raise: Option<Estimate>,
    /// The bracket's optimistic end.
    #[serde(skip_serializing_if = "Option::is_none")]
    ais: Option<Estimate>,
    /// Forward AIS − RAISE.
    #[serde(skip_serializing_if = "Option::is_none")]
    bracket_width: Option<f64>,
    /// The bracket's diagnosis, one plain line.
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnosis: Option<String>,
    /// The bracket at each level of --convergence.
    #[serde(skip_serializing_if = "Option::is_none")]
    convergence: Option<Vec<Bracket>>,
}

impl EvalReport {
    /// Fills the figures of `est`: method, the figure or the bracket's ends, ln Z.
    fn set_estimate(&mut self, est: &LogLikelihood) {
        self.method = Some(est.method());
        if let Some(z) = est.log_z() {
            self.log_z = Some(z.value);
            if !z.is_exact() {
                self.log_z_se = Some(z.stderr);
                self.log_z_lower = Some(z.lower);
                self.log_z_upper = Some(z.upper);
            }
        }
        match est {
            LogLikelihood::Bracket(b) => {
                self.raise_vectors = Some(b.raise_vectors);
                self.raise = Some(b.raise);
                self.ais = Some(b.ais);
                self.bracket_width = Some(b.width());
                self.diagnosis = Some(b.diagnosis.to_string());
            }
            LogLikelihood::Raise { ll, raise_vectors } => {
                self.raise_vectors = Some(*raise_vectors);
                self.avg_log_likelihood = Some(ll.value);
                self.avg_log_likelihood_se = Some(ll.stderr);
            }
            other => self.avg_log_likelihood = Some(other.lower().value),
        }
    }
}

impl EvalArgs {
    /// Parse (clap) → plan → run → print.
    pub(super) fn run(self) -> anyhow::Result<()> {
        let (summary, plan) = self.plan()?;
        let report = self.estimate(plan)?;
        self.print(summary, report)
    }

    /// The method, seed and estimator's settings, checked, with the model and data read.
    fn plan(&self) -> anyhow::Result<(Summary, EvalPlan)> {
        let (chains, steps) = self.ais.resolve()?;
        let rbm = load_rbm(&self.model)?.rbm;
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let small = nv.min(nh) <= MAX_ENUM_UNITS;
        let default = if small {
            MethodArg::Exact
        } else {
            MethodArg::Bracket
        };
        let method = self.method.unwrap_or(default).method();
        let seed = match method {
            Method::Exact if self.binarize.is_random() => Some(self.common.init()?),
            Method::Exact => {
                self.common.init_threads()?;
                None
            }
            _ => Some(self.common.init()?),
        };
        let summary = Summary::new("rbm eval", seed);
        if method == Method::Exact && !small {
            return Err(UsageError::new(format!(
                "--method exact needs a layer of at most {MAX_ENUM_UNITS} units, the model is \
                 {nv} × {nh} (use --method bracket)"
            ))
            .into());
        }
        if self.convergence.is_some() && method != Method::Bracket {
            return Err(UsageError::new("--convergence applies only to --method bracket").into());
        }
        if method != Method::Exact && chains == 0 {
            return Err(UsageError::new("--ais-chains must be at least 1").into());
        }
        if method != Method::Exact {
            guard::memory(
                &format!("rbm eval --ais-chains {chains}"),
                GibbsChains::memory_estimate(chains as u64, nv as u64, nh as u64).saturating_mul(2),
            )?;
        }
        let binarize = self.binarize.resolve(derive_seed(seed.unwrap_or(0), 2));
        let data = load_binary(&self.data, binarize)?;
        check_vars(&self.data, &data, &self.model, &rbm)?;
        let given = serde_json::json!({
            "ais_chains": chains,
            "ais_steps": steps,
            "seed": seed.unwrap_or(0),
        });
        let estimator = settings::overlay(&EvalParams::default(), &self.estimator)?;
        let estimator: EvalParams = settings::overlay(&estimator, &given)?;
        let schedule = estimator.schedule()?;
        let params = LogLikParams::from_settings(method, &estimator)?;
        let linear = steps.is_some();
        let plan = EvalPlan {
            rbm,
            data,
            method,
            chains,
            params,
            schedule,
            linear,
        };
        Ok((summary, plan))
    }

    /// The monitors (if asked for) and the estimate: one, or the bracket at each level of
    /// `--convergence`.
    fn estimate(&self, plan: EvalPlan) -> anyhow::Result<EvalReport> {
        let EvalPlan {
            rbm,
            data,
            method,
            chains,
            params,
            schedule,
            linear,
        } = plan;
        let mut report = EvalReport {
            model: self.model.display().to_string(),
            data: self.data.display().to_string(),
            samples: data.n_samples(),
            visible: rbm.n_visible(),
            hidden: rbm.n_hidden(),
            ..EvalReport::default()
        };
        if self.monitors {
            report.reconstruction_error = Some(monitor::reconstruction_error(&rbm, &data)?);
            report.pseudo_log_likelihood = Some(monitor::pseudo_log_likelihood(&rbm, &data)?);
        }
        if method != Method::Exact {
            report.steps = Some(schedule.steps());
        }
        if matches!(
            method,
            Method::Ais | Method::Bracket | Method::ReverseAisFromData
        ) {
            report.chains = Some(chains);
        }
        if matches!(method, Method::Raise | Method::Bracket) {
            report.raise_chains = Some(self.estimator.raise_chains);
        }
        let spin = progress::spinner(method.name(), self.common.quiet);
        if let Some(first) = self.convergence {
            // a level of K steps: linear with --ais-steps, else the standard schedule's shape
            let level = |k: usize| {
                if linear {
                    AisSchedule::linear(k)
                } else {
                    AisSchedule::standard_shaped(k)
                }
            };
            let levels = convergence_steps(first, schedule.steps())?
                .into_iter()
                .map(level)
                .collect::<boltzkit::Result<Vec<_>>>()?;
            let brackets = bracket_convergence(&rbm, &data, &params, &levels)?;
            if let Some(last) = brackets.last() {
                report.set_estimate(&LogLikelihood::Bracket(last.clone()));
            }
            report.convergence = Some(brackets);
        } else {
            report.set_estimate(&average_log_likelihood(&rbm, &data, &params)?);
        }
        spin.finish_and_clear();
        Ok(report)
    }

    /// The convergence levels on stderr (unless `--json` or `-q`) and the summary.
    fn print(&self, mut summary: Summary, report: EvalReport) -> anyhow::Result<()> {
        if !self.common.json && !self.common.quiet {
            for b in report.convergence.iter().flatten() {
                eprintln!(
                    "{:>6} steps: RAISE {:.4} ± {:.4}, AIS {:.4} ± {:.4}, width {:.4}",
                    b.steps,
                    b.raise.value,
                    b.raise.stderr,
                    b.ais.value,
                    b.ais.stderr,
                    b.width()
                );
            }
        }
        summary.extend(&report)?.emit(&self.common)
    }
}

/// What `rbm eval` decided before estimating: the model, the data, the estimator's checked
/// settings and its final schedule (linear when `--ais-steps` was given).
struct EvalPlan {
    rbm: Rbm,
    data: Dataset,
    method: Method,
    /// Forward AIS chains.
    chains: usize,
    params: LogLikParams,
    schedule: AisSchedule,
    linear: bool,
}
