//! `rbm fit --algo frank-wolfe` as parse → plan → run → print: [`fit`] checks the flags,
//! outputs, data and memory ([`FwPlan::new`]), grows the model ([`FwPlan::run`]), then writes
//! it and the summary ([`FwPlan::print`]).

use super::fit::FitArgs;
use super::input::{check_widths, load_binary, load_optional};
use crate::args::renamed;
use crate::exit::UsageError;
use crate::fw_run;
use crate::guard;
use crate::report::Summary;
use anyhow::Context;
use boltzkit::data::{Binarize, Dataset};
use boltzkit::estimate::Method;
use boltzkit::provenance::{self, DataFile};
use boltzkit::rbm::ais::AisSchedule;
use boltzkit::rbm::exact;
use boltzkit::rbm::file::load_rbm;
use boltzkit::rbm::frank_wolfe::file::save_fw_model;
use boltzkit::rbm::frank_wolfe::TestLogLikelihood;
use boltzkit::rbm::frank_wolfe::{FrankWolfe, FwFit, FwParams};
use boltzkit::rbm::{GibbsChains, Rbm};
use boltzkit::rng::derive_seed;
use boltzkit::settings;
use serde::Serialize;

/// What `rbm fit --algo frank-wolfe` reports: the grown model, the size selected on
/// validation, the stop, the mean seconds per iteration by phase, the last evaluation.
#[derive(Serialize)]
struct FwSummary {
    data: String,
    samples: usize,
    visible: usize,
    algo: &'static str,
    start_units: usize,
    units: usize,
    alpha: f64,
    standard_rbm: bool,
    iterations: usize,
    removed_units: usize,
    selected_units: Option<usize>,
    stop: String,
    sampling_s_per_iter: f64,
    subproblem_s_per_iter: f64,
    bias_s_per_iter: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    mh_acceptance: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_gap: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_test_ll: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_log_likelihood: Option<f64>,
    learn_s: f64,
    output: String,
}

/// `rbm fit --algo frank-wolfe`: parse (clap) → plan → run → print.
pub(super) fn fit(a: FitArgs) -> anyhow::Result<()> {
    if a.resume.is_some() {
        return Err(UsageError::new("--resume does not apply to --algo frank-wolfe").into());
    }
    let mut plan = FwPlan::new(a)?;
    let (fit, start_units) = plan.run()?;
    plan.print(fit, start_units)
}

/// What `rbm fit --algo frank-wolfe` decided before growing the model.
struct FwPlan {
    a: FitArgs,
    seed: u64,
    /// Started at the plan: its clock covers the whole command.
    summary: Summary,
    params: FwParams,
    binarize: Binarize,
    data: Dataset,
    valid: Option<Dataset>,
    test: Option<Dataset>,
}

impl FwPlan {
    /// The flags checked into the learner's settings, the outputs checked, the data read, the
    /// memory estimate checked.
    fn new(a: FitArgs) -> anyhow::Result<Self> {
        let seed = a.common.init()?;
        let summary = Summary::new("rbm fit", Some(seed));
        if a.hidden.is_some() {
            return Err(UsageError::new(
                "--algo frank-wolfe grows the model: give --max-units T, not --hidden",
            )
            .into());
        }
        if a.early_stop && a.valid.is_none() {
            return Err(UsageError::new("--early-stop needs --valid FILE").into());
        }
        let f = &a.fw;
        let chains = renamed(f.chains, f.samples_alias, "chains", "samples")?;
        let params = Self::params(&a, chains, seed)?;
        params.check()?;
        let chains = params.samples;
        guard::model_files(
            &[
                Some(&a.data),
                a.valid.as_deref(),
                f.test.as_deref(),
                a.model.as_deref(),
            ],
            &[
                ("-o", Some(&a.output)),
                ("--selected-output", f.selected_output.as_deref()),
            ],
            &[a.log.as_deref()],
        )?;
        let binarize = a.binarize.resolve(derive_seed(seed, 2));
        let data = load_binary(&a.data, binarize)?;
        let valid = load_optional(a.valid.as_ref(), binarize)?;
        let test = load_optional(f.test.as_ref(), binarize)?;
        check_widths(
            &data,
            &[
                ("--valid", a.valid.as_ref(), valid.as_ref()),
                ("--test", f.test.as_ref(), test.as_ref()),
            ],
        )?;
        let (nv, units) = (data.n_vars() as u64, f.max_units as u64);
        guard::memory(
            &format!(
                "rbm fit --algo frank-wolfe --max-units {} --chains {chains}",
                f.max_units
            ),
            // f64 atoms (twice: the model and its RBM view), the chains at full size, the
            // data as index lists and f32 rows
            Rbm::memory_estimate(nv + 1, units)
                .saturating_mul(4)
                .saturating_add(GibbsChains::memory_estimate(chains as u64, nv, units))
                .saturating_add(
                    Dataset::memory_estimate(data.n_samples() as u64, nv).saturating_mul(12),
                ),
        )?;
        Ok(FwPlan {
            a,
            seed,
            summary,
            params,
            binarize,
            data,
            valid,
            test,
        })
    }

    /// The learner's settings: the Frank-Wolfe flags over the schema's defaults, then the
    /// flags `rbm fit` shares (`--k`, `--chains`, `--eval-every`, `--early-stop`, `--gap-tol`)
    /// and the learner's seed, `derive_seed(seed, 1)`.
    fn params(a: &FitArgs, chains: Option<usize>, seed: u64) -> anyhow::Result<FwParams> {
        let mut p = settings::overlay(&FwParams::default(), &*a.fw)?;
        p.samples = chains.unwrap_or(p.samples);
        p.gibbs_steps = a.k.unwrap_or(p.gibbs_steps);
        p.eval_every = a.eval_every;
        p.early_stop = a.early_stop;
        p.gap_tol = a.gap_tol;
        p.seed = derive_seed(seed, 1);
        Ok(p)
    }

    /// Grows the model (from `--model` when given) with the test log-likelihood at each size
    /// evaluation (`--test`), the log and a progress display; Ctrl-C ends it after the
    /// current iteration. Returns the fit and the units it started from.
    fn run(&mut self) -> anyhow::Result<(FwFit, usize)> {
        let (a, f) = (&self.a, &self.a.fw);
        let ais = match self.test.take() {
            Some(t) => Some(
                TestLogLikelihood::new(t, Method::Ais, derive_seed(self.seed, 3))?
                    .chains(f.ais_chains)
                    .schedule(AisSchedule::linear_or_standard(f.ais_steps)?),
            ),
            None => None,
        };
        let mut fw = match &a.model {
            Some(path) => {
                let rbm = load_rbm(path)?.rbm;
                FrankWolfe::from_rbm(&self.data, &rbm, self.params.clone())
                    .with_context(|| format!("starting from {}", path.display()))?
            }
            None => FrankWolfe::new(&self.data, self.params.clone())?,
        };
        if let Some(v) = &self.valid {
            fw = fw.validation(v)?;
        }
        fw = fw.interrupt(crate::interrupt::flag());
        let start_units = if a.model.is_some() {
            fw.model().n_units()
        } else {
            0
        };
        let fit = fw_run::run(fw, a.common.quiet, ais, a.log.as_ref())?;
        Ok((fit, start_units))
    }

    /// Writes the model (and the selected one), prints the summary, exits non-zero after an
    /// interrupt.
    fn print(self, fit: FwFit, start_units: usize) -> anyhow::Result<()> {
        let (a, f) = (&self.a, &self.a.fw);
        let rec = &fit.record;
        let init_model = a.model.as_ref().map(|p| p.display().to_string());
        let meta = provenance::fw_fit(
            &self.params,
            &provenance::fw_run_entries(&self.binarize, init_model),
            self.seed,
            rec,
            Some(&DataFile::of(&a.data)?),
        )?;
        save_fw_model(&a.output, &fit.model, &meta)
            .with_context(|| format!("writing the model to {}", a.output.display()))?;
        if let (Some(path), Some(sel)) = (&f.selected_output, &fit.record.selected) {
            save_fw_model(path, sel, &meta)
                .with_context(|| format!("writing the model to {}", path.display()))?;
        }
        let mut summary = self.summary;
        summary.extend(&FwSummary::of(&fit, start_units, a, &self.data)?)?;
        summary.emit(&a.common)?;
        if let boltzkit::fit::StopReason::Interrupted { .. } = rec.stop {
            return Err(crate::interrupt::Interrupted(format!(
                "interrupted at {} units; wrote the last good model to {}",
                fit.model.n_units(),
                a.output.display()
            ))
            .into());
        }
        Ok(())
    }
}

impl FwSummary {
    /// The summary of `fit` (grown from `start_units`) on `data`.
    fn of(fit: &FwFit, start_units: usize, a: &FitArgs, data: &Dataset) -> anyhow::Result<Self> {
        let rec = &fit.record;
        let n_iter = rec.iterations.len().max(1) as f64;
        let mean = |g: fn(&boltzkit::rbm::frank_wolfe::IterationRecord) -> f64| {
            rec.iterations.iter().map(g).sum::<f64>() / n_iter
        };
        let last = rec.evaluations.last();
        let small = fit.model.is_standard()
            && fit.model.n_visible().min(fit.model.n_units()) <= exact::MAX_ENUM_UNITS.min(20);
        Ok(FwSummary {
            data: a.data.display().to_string(),
            samples: data.n_samples(),
            visible: data.n_vars(),
            algo: "frank-wolfe",
            start_units,
            units: fit.model.n_units(),
            alpha: fit.model.alpha(),
            standard_rbm: fit.model.is_standard(),
            iterations: rec.iterations.len(),
            removed_units: rec.removed,
            selected_units: rec.selected_units,
            stop: rec.stop.to_string(),
            sampling_s_per_iter: mean(|r| r.sampling_s),
            subproblem_s_per_iter: mean(|r| r.subproblem_s),
            bias_s_per_iter: mean(|r| r.bias_s),
            mh_acceptance: rec.mh_acceptance,
            last_gap: last.and_then(|e| e.gap),
            last_test_ll: last.and_then(|e| e.metrics.get("test_ll").copied()),
            avg_log_likelihood: small
                .then(|| exact::average_log_likelihood(&fit.model.to_rbm()?, data))
                .transpose()?,
            learn_s: rec.wall_s,
            output: a.output.display().to_string(),
        })
    }
}
