//! `rbm eval` and `rbm sample` of a unit-type model file (`boltzkit/rbm/v2`): the (weighted)
//! average log-likelihood per sample and per visible unit with the exact `ln Z` (a discrete
//! layer of at most 2^22 states enumerated), forward AIS, RAISE or the bracket of both over
//! the seam (`boltzkit::rbm::units::ais`), and samples of the visible layer by block Gibbs
//! chains ([`UnitChains`]) started from the visible layer's own independent model
//! ([`sample_start`]), or for Gaussian visible units by Gibbs-Langevin chains
//! ([`GibbsLangevin`]).

use super::eval::{EvalArgs, MethodArg};
use super::sample::SampleArgs;
use super::units_data::{read_source, sample_weights, state_rows};
use crate::exit::UsageError;
use crate::guard;
use crate::progress;
use crate::report::{SampleSummary, Summary};
use anyhow::Context;
use boltzkit::data::{write_dataset, write_npy_f64};
use boltzkit::rbm::ais::AisSchedule;
use boltzkit::rbm::eval_settings::EvalParams;
use boltzkit::rbm::raise::raise_rows;
use boltzkit::rbm::units::{
    ais_with, load_unit_rbm, normalized_weights, raise_log_likelihoods, sample_start,
    GibbsLangevin, UnitChains, UnitKind, UnitRbm, Units,
};
use boltzkit::rng::derive_seed;
use serde::Serialize;
use std::path::Path;

/// What `rbm eval` reports for a unit-type model.
#[derive(Serialize, Default)]
struct UnitEvalReport {
    model: String,
    data: String,
    samples: usize,
    visible_units: Option<UnitKind>,
    hidden_units: Option<UnitKind>,
    visible: usize,
    hidden: usize,
    weighted: bool,
    method: &'static str,
    /// Forward AIS chains.
    #[serde(skip_serializing_if = "Option::is_none")]
    chains: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    steps: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    raise_chains: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    raise_vectors: Option<usize>,
    /// The exact or the AIS `ln Z`.
    #[serde(skip_serializing_if = "Option::is_none")]
    log_z: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_z_se: Option<f64>,
    /// exact, ais (optimistic in expectation) or raise (conservative) figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_log_likelihood: Option<f64>,
    /// The average divided by the visible units (nats per site).
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_log_likelihood_per_unit: Option<f64>,
    /// bracket: RAISE's average (the lower end) over the rows `--raise-vectors` picks.
    #[serde(skip_serializing_if = "Option::is_none")]
    lower: Option<f64>,
    /// bracket: forward AIS's average (the upper end) over the same rows as RAISE's.
    #[serde(skip_serializing_if = "Option::is_none")]
    upper: Option<f64>,
}

/// Reads a unit-type model file.
fn load(path: &Path) -> anyhow::Result<UnitRbm> {
    Ok(load_unit_rbm(path)?.model)
}

/// `rbm eval` of a unit-type model: exact (the default when a discrete layer has at most
/// 2^22 states), forward AIS, RAISE or the bracket [RAISE, AIS], weighted by the sample
/// weights when given. AIS's base visible layer is fitted to the evaluated rows.
pub(super) fn eval(a: EvalArgs) -> anyhow::Result<()> {
    let seed = match a.method {
        None | Some(MethodArg::Exact) => {
            a.common.init_threads()?;
            None
        }
        _ => Some(a.common.init()?),
    };
    let model = load(&a.model)?;
    let visible = model.visible();
    let source = read_source(&a.data, visible.kind())?;
    let rows = state_rows(&a.data, visible, &source)?;
    let weights = sample_weights(a.units.weights.as_deref(), a.units.reweight, &source)?;
    let mut r = UnitEvalReport {
        model: a.model.display().to_string(),
        data: a.data.display().to_string(),
        samples: source.n_rows(),
        visible_units: Some(visible.kind()),
        hidden_units: Some(model.hidden().kind()),
        visible: visible.n_units(),
        hidden: model.hidden().n_units(),
        weighted: weights.is_some(),
        ..UnitEvalReport::default()
    };
    let w = weights.as_deref();
    let method = match a.method {
        None if model.is_enumerable() => MethodArg::Exact,
        None => MethodArg::Bracket,
        Some(m) => m,
    };
    let (chains, steps) = a.ais.resolve()?;
    let schedule = match steps {
        Some(k) => AisSchedule::linear(k)?,
        None => AisSchedule::standard(),
    };
    let interrupt = crate::interrupt::flag();
    let seed = seed.unwrap_or(0);
    let mut ais = || -> anyhow::Result<f64> {
        let settings = EvalParams {
            ais_chains: chains,
            ais_steps: steps,
            seed,
            ..EvalParams::default()
        };
        let est = ais_with(&model, Some(&rows), &settings, Some(&interrupt))?;
        (r.log_z, r.log_z_se, r.chains, r.steps) = (
            Some(est.log_z),
            Some(est.std_err),
            Some(chains),
            Some(schedule.steps()),
        );
        Ok(est.log_z)
    };
    let figure = match method {
        MethodArg::Exact => {
            r.method = "exact";
            let log_z = model.log_partition_exact().with_context(|| {
                format!("{}: use --method ais, raise or bracket", a.model.display())
            })?;
            r.log_z = Some(log_z);
            model.log_likelihood(&rows, w, Some(log_z))?
        }
        MethodArg::Ais => {
            r.method = "ais";
            let log_z = ais()?;
            model.log_likelihood(&rows, w, Some(log_z))?
        }
        MethodArg::Raise | MethodArg::Bracket => {
            let log_z = if method == MethodArg::Bracket {
                Some(ais()?)
            } else {
                None
            };
            let raised = raise_lower(&model, &rows, w, &a, &schedule, seed, &interrupt)?;
            (r.raise_chains, r.raise_vectors, r.steps) = (
                Some(a.estimator.raise_chains),
                Some(raised.picked.len()),
                Some(schedule.steps()),
            );
            match log_z {
                Some(log_z) => {
                    // Both ends average over the same rows with the same weights: RAISE's
                    // picked rows (forward AIS's log Z serves every row).
                    let (sub, sub_w) = picked_rows(&model, &rows, w, &raised.picked);
                    let upper = model.log_likelihood(&sub, sub_w.as_deref(), Some(log_z))?;
                    let lower = raised.lower;
                    r.method = "bracket";
                    (r.lower, r.upper) = (Some(lower), Some(upper));
                    return Summary::new("rbm eval", Some(seed))
                        .extend(&r)?
                        .emit(&a.common);
                }
                None => {
                    r.method = "raise";
                    raised.lower
                }
            }
        }
        MethodArg::ReverseAisFromData => anyhow::bail!(
            "--method reverse-ais-from-data is for binary models; use ais, raise or bracket"
        ),
    };
    r.avg_log_likelihood = Some(figure);
    r.avg_log_likelihood_per_unit = Some(figure / visible.n_units() as f64);
    Summary::new("rbm eval", seed_shown(method, seed))
        .extend(&r)?
        .emit(&a.common)
}

/// RAISE's weighted average over the rows it ran on.
struct Raised {
    /// The weighted average log-likelihood (the bracket's lower end).
    lower: f64,
    /// The indices of the rows `--raise-vectors` picked.
    picked: Vec<usize>,
}

/// RAISE's weighted average log-likelihood (the bracket's lower end) over the rows that
/// `--raise-vectors` picks (seeds derived from the run's `seed`), and which rows it picked.
fn raise_lower(
    model: &UnitRbm,
    rows: &[f32],
    w: Option<&[f64]>,
    a: &EvalArgs,
    schedule: &AisSchedule,
    seed: u64,
    interrupt: &boltzkit::fit::Interrupt,
) -> anyhow::Result<Raised> {
    let wv = model.visible().width();
    let picked = raise_rows(
        rows.len() / wv,
        a.estimator.raise_vectors,
        derive_seed(seed, 2),
    )?;
    let (sub, sub_w) = picked_rows(model, rows, w, &picked);
    let ll = raise_log_likelihoods(
        model,
        Some(rows),
        schedule,
        &sub,
        a.estimator.raise_chains,
        derive_seed(seed, 3),
        Some(interrupt),
    )?;
    let a_r = normalized_weights(sub_w.as_deref(), ll.len())?;
    let lower = ll.iter().zip(&a_r).map(|(l, a)| l * a).sum::<f64>();
    Ok(Raised { lower, picked })
}

/// The rows at `picked` (and their weights) of the row-major `rows`.
fn picked_rows(
    model: &UnitRbm,
    rows: &[f32],
    w: Option<&[f64]>,
    picked: &[usize],
) -> (Vec<f32>, Option<Vec<f64>>) {
    let wv = model.visible().width();
    let sub = picked
        .iter()
        .flat_map(|&i| rows[i * wv..(i + 1) * wv].iter().copied())
        .collect();
    (sub, w.map(|w| picked.iter().map(|&i| w[i]).collect()))
}

/// The seed a summary shows: none for the exact figure, which draws nothing.
fn seed_shown(method: MethodArg, seed: u64) -> Option<u64> {
    (method != MethodArg::Exact).then_some(seed)
}

/// `rbm sample` of a unit-type model: `n` chains from the visible layer's own independent
/// model, `steps` block Gibbs steps; discrete rows written as codes (a categorical site's
/// state index), real rows as an f64 .npy.
pub(super) fn sample(a: SampleArgs) -> anyhow::Result<()> {
    let langevin = a.langevin()?;
    let seed = a.common.init()?;
    let model = load(&a.model)?;
    guard::files(&[Some(&a.model)], &[Some(&a.output)])?;
    let visible = model.visible();
    let real = !visible.kind().is_discrete();
    let is_npy = a
        .output
        .to_string_lossy()
        .to_ascii_lowercase()
        .ends_with(".npy");
    if real && !is_npy {
        return Err(UsageError::new(format!(
            "-o {}: samples of {} units are real values, written as .npy",
            a.output.display(),
            visible.kind()
        ))
        .into());
    }
    let n = usize::try_from(a.samples).map_err(|_| UsageError::new("--samples is too large"))?;
    let wv = visible.width();
    guard::memory(
        &format!("rbm sample -n {n}"),
        (n as u64)
            .saturating_mul((wv + model.hidden().width()) as u64)
            .saturating_mul(16),
    )?;
    let v0 = sample_start(&model, n, seed)?;
    let bar = progress::bar(a.gibbs_steps as u64, "gibbs steps", a.common.quiet);
    let mut report = SampleSummary::new(&a.model, n, &a.output);
    report.gibbs_steps = Some(a.gibbs_steps);
    let mut acceptance = None;
    let rows = match langevin {
        None => {
            let mut chains = UnitChains::new(&model, &v0, derive_seed(seed, 2))?;
            for _ in 0..a.gibbs_steps {
                chains.step(&model)?;
                bar.inc(1);
            }
            chains.visible().to_vec()
        }
        Some(params) => {
            let mut chains = GibbsLangevin::new(&model, &v0, derive_seed(seed, 2), params)?;
            for _ in 0..a.gibbs_steps {
                chains.run(&model, 1)?;
                bar.inc(1);
            }
            report.method = Some("gibbs-langevin".into());
            acceptance = Some(LangevinReport {
                langevin_acceptance: chains.acceptance(),
            });
            chains.visible().to_vec()
        }
    };
    bar.finish_and_clear();
    write_rows(&a.output, visible, &rows)
        .with_context(|| format!("cannot write the samples to {}", a.output.display()))?;
    let mut summary = Summary::new("rbm sample", Some(seed));
    summary.extend(&report)?;
    if let Some(acc) = &acceptance {
        summary.extend(acc)?;
    }
    summary.emit(&a.common)
}

/// The fraction of Langevin proposals accepted (`rbm sample --sampler gibbs-langevin`).
#[derive(Serialize)]
struct LangevinReport {
    langevin_acceptance: f64,
}

/// Writes visible state rows: codes for discrete layers, f64 values for real ones.
fn write_rows(path: &Path, layer: &Units, rows: &[f32]) -> anyhow::Result<()> {
    match layer.codes_from_rows(rows)? {
        Some(codes) => write_dataset(path, &codes)?,
        None => {
            let values: Vec<f64> = rows.iter().map(|&x| f64::from(x)).collect();
            write_npy_f64(path, &[rows.len() / layer.width(), layer.width()], &values)?;
        }
    }
    Ok(())
}
