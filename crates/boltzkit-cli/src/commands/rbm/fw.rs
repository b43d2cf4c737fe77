//! `rbm fit --algo frank-wolfe` and `rbm features`.

use super::{load_binary, load_optional, FitArgs};
use crate::args::{renamed, CommonArgs};
use crate::exit::UsageError;
use crate::fw_run::{self, ais_schedule, TestLogLikelihood};
use crate::guard;
use crate::report::Summary;
use anyhow::Context;
use boltzkit::data::{write_npy_f64, Binarize, Dataset};
use boltzkit::estimate::Method;
use boltzkit::provenance::{self, DataFile, FwFitSettings};
use boltzkit::rbm::exact;
use boltzkit::rbm::features::hidden_features;
use boltzkit::rbm::file::load_rbm;
use boltzkit::rbm::frank_wolfe::file::{load_fw_model, save_fw_model};
use boltzkit::rbm::frank_wolfe::{AlphaRule, FrankWolfe, FwParams};
use boltzkit::rbm::{GibbsChains, Rbm};
use boltzkit::rng::derive_seed;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// Flags of `--algo frank-wolfe`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Frank-Wolfe options (--algo frank-wolfe)")]
pub(super) struct FwFlags {
    /// T: the most hidden units (one is added per iteration)
    #[arg(long, value_name = "T", default_value_t = 100)]
    max_units: usize,
    /// λ of the penalty λ/2 E_q‖w‖² (Eqs. 6, 9)
    #[arg(long, value_name = "X", default_value_t = 0.1)]
    lambda: f64,
    /// η of the bias update (Eq. 10); --lr is not used by frank-wolfe
    #[arg(long, value_name = "X", default_value_t = 0.5)]
    bias_lr: f64,
    /// S: persistent chains, i.e. model samples per iteration [default: 2000]
    #[arg(long, value_name = "S")]
    chains: Option<usize>,
    /// The old name of --chains
    #[arg(long = "samples", value_name = "S", hide = true)]
    samples_alias: Option<usize>,
    /// L-BFGS iterations per subproblem (Eq. 9)
    #[arg(long, value_name = "N", default_value_t = 50)]
    lbfgs_iters: usize,
    /// L-BFGS gradient tolerance
    #[arg(long, value_name = "X", default_value_t = 1e-5)]
    lbfgs_tol: f64,
    /// Starts of each subproblem (Eq. 9 is not convex): one small random start, the others
    /// the ±1 templates of random data rows; the best is kept
    #[arg(long, value_name = "N", default_value_t = 1)]
    starts: usize,
    /// Most bias steps (Eq. 10) per iteration
    #[arg(long, value_name = "N", default_value_t = 20)]
    bias_steps: usize,
    /// Bias steps stop when the RMS bias gradient is below this
    #[arg(long, value_name = "X", default_value_t = 0.015)]
    bias_tol: f64,
    /// Away steps: remove a unit when that raises the objective (Guélat-Marcotte)
    #[arg(long)]
    away: bool,
    /// Fractional RBM: free α with this gradient step, sampled by Metropolis-Hastings (0: α = t)
    #[arg(long, value_name = "STEP")]
    free_alpha: Option<f64>,
    /// Test data: AIS test log-likelihood at every size evaluation
    #[arg(long, value_name = "FILE")]
    test: Option<PathBuf>,
    /// AIS chains for --test
    #[arg(long, value_name = "N", default_value_t = 100)]
    ais_chains: usize,
    /// AIS steps (linear schedule) for --test; 0: the standard 14,500-step schedule
    #[arg(long, value_name = "N", default_value_t = 1000)]
    ais_steps: usize,
    /// Also write the model at the selected size here
    #[arg(long, value_name = "FILE")]
    selected_output: Option<PathBuf>,
    /// Objective guard: while the exact training log-likelihood is cheap (at most 20 units),
    /// stop and keep the best model when it stays more than this many nats below its best for
    /// --fall-patience iterations in a row (inf: off)
    #[arg(long, value_name = "NATS", default_value_t = 5.0)]
    fall_tol: f64,
    /// Iterations in a row the guard's fall must last
    #[arg(long, value_name = "N", default_value_t = 4)]
    fall_patience: usize,
}

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

/// `rbm fit --algo frank-wolfe`.
pub(super) fn fit(a: FitArgs) -> anyhow::Result<()> {
    let seed = a.common.init()?;
    let mut summary = Summary::new("rbm fit", Some(seed)); // its clock covers the whole command
    let f = &a.fw;
    if a.hidden.is_some() {
        return Err(UsageError::new(
            "--algo frank-wolfe grows the model: give --max-units T, not --hidden",
        )
        .into());
    }
    if a.early_stop && a.valid.is_none() {
        return Err(UsageError::new("--early-stop needs --valid FILE").into());
    }
    let chains = renamed(f.chains, f.samples_alias, "chains", "samples")?.unwrap_or(2000);
    let k = a.k.unwrap_or(FwParams::default().gibbs_steps);
    let params = FwParams::new()
        .max_units(f.max_units)
        .lambda(f.lambda)
        .learning_rate(f.bias_lr)
        .samples(chains)
        .gibbs_steps(k)
        .lbfgs_iterations(f.lbfgs_iters)
        .lbfgs_grad_tol(f.lbfgs_tol)
        .subproblem_starts(f.starts)
        .bias_steps(f.bias_steps)
        .bias_tol(f.bias_tol)
        .away_steps(f.away)
        .alpha(match f.free_alpha {
            Some(step) => AlphaRule::Free { step },
            None => AlphaRule::Count,
        })
        .eval_every(a.eval_every)
        .early_stop(a.early_stop)
        .gap_tol(a.gap_tol)
        .fall_tol(f.fall_tol)
        .fall_patience(f.fall_patience)
        .seed(derive_seed(seed, 1));
    params.check()?;
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
    super::check_widths(
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
        // f64 atoms (twice: the model and its RBM view), the chains at full size, the data
        // as index lists and f32 rows
        Rbm::memory_estimate(nv + 1, units)
            .saturating_mul(4)
            .saturating_add(GibbsChains::memory_estimate(chains as u64, nv, units))
            .saturating_add(
                Dataset::memory_estimate(data.n_samples() as u64, nv).saturating_mul(12),
            ),
    )?;
    let ais = match test {
        Some(t) => Some(
            TestLogLikelihood::new(t, Method::Ais, derive_seed(seed, 3))?
                .chains(f.ais_chains)
                .schedule(ais_schedule(f.ais_steps)?),
        ),
        None => None,
    };
    let mut fw = match &a.model {
        Some(path) => {
            let rbm = load_rbm(path)?.rbm;
            FrankWolfe::from_rbm(&data, &rbm, params.clone())
                .with_context(|| format!("starting from {}", path.display()))?
        }
        None => FrankWolfe::new(&data, params.clone())?,
    };
    if let Some(v) = &valid {
        fw = fw.validation(v)?;
    }
    fw = fw.interrupt(crate::interrupt::flag());
    let start_units = if a.model.is_some() {
        fw.model().n_units()
    } else {
        0
    };
    let fit = fw_run::run(fw, a.common.quiet, ais, a.log.as_ref())?;
    let rec = &fit.record;

    let settings = FwFitSettings {
        max_units: f.max_units,
        lambda: f.lambda,
        bias_lr: f.bias_lr,
        chains,
        k,
        fall_tol: f.fall_tol,
        fall_patience: f.fall_patience,
        lbfgs_iters: f.lbfgs_iters,
        lbfgs_tol: f.lbfgs_tol,
        starts: f.starts,
        bias_steps: f.bias_steps,
        bias_tol: f.bias_tol,
        away: f.away,
        free_alpha: f.free_alpha,
        eval_every: a.eval_every,
        early_stop: a.early_stop,
        gap_tol: a.gap_tol,
        binarize,
        init_model: a.model.as_ref().map(|p| p.display().to_string()),
    };
    let meta = provenance::fw_fit(
        &settings,
        seed,
        &rec.stop,
        rec.removed,
        rec.selected_units,
        Some(&DataFile::of(&a.data)?),
    );
    save_fw_model(&a.output, &fit.model, &meta)
        .with_context(|| format!("writing the model to {}", a.output.display()))?;
    if let (Some(path), Some(sel)) = (&f.selected_output, &fit.record.selected) {
        save_fw_model(path, sel, &meta)
            .with_context(|| format!("writing the model to {}", path.display()))?;
    }

    let n_iter = rec.iterations.len().max(1) as f64;
    let mean = |g: fn(&boltzkit::rbm::frank_wolfe::IterationRecord) -> f64| {
        rec.iterations.iter().map(g).sum::<f64>() / n_iter
    };
    let last = rec.evaluations.last();
    let small = fit.model.is_standard()
        && fit.model.n_visible().min(fit.model.n_units()) <= exact::MAX_ENUM_UNITS.min(20);
    summary.extend(&FwSummary {
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
            .then(|| exact::average_log_likelihood(&fit.model.to_rbm()?, &data))
            .transpose()?,
        learn_s: rec.wall_s,
        output: a.output.display().to_string(),
    })?;
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
    pub(super) fn run(self) -> anyhow::Result<()> {
        let randomized = self.binarize.is_random();
        let seed = if randomized {
            Some(self.common.init()?)
        } else {
            self.common.init_threads()?;
            None
        };
        guard::distinct_files(
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
        super::check_vars(&self.data, &data, &rbm)?;
        guard::memory(
            &format!("rbm features of {} rows", data.n_samples()),
            // f32 features and their f64 copy
            Dataset::memory_estimate(data.n_samples() as u64, rbm.n_hidden() as u64)
                .saturating_mul(12),
        )?;
        let spin = crate::progress::spinner("features", self.common.quiet);
        let f = hidden_features(&rbm, &data)?;
        spin.finish_and_clear();
        let f64s: Vec<f64> = f.iter().map(|&x| f64::from(x)).collect();
        write_npy_f64(&self.output, &[data.n_samples(), rbm.n_hidden()], &f64s)
            .with_context(|| format!("writing the features to {}", self.output.display()))?;
        Summary::new("rbm features", seed)
            .extend(&FeaturesSummary {
                model: self.model.display().to_string(),
                data: self.data.display().to_string(),
                samples: data.n_samples(),
                hidden: rbm.n_hidden(),
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
