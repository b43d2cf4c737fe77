//! `boltzkit rbm fit --visible-units TYPE --hidden-units TYPE`: RBMs whose units are not all
//! 0/1 (issue 34), trained by `boltzkit::rbm::units::train` (CD-k or PCD-k, sample weights,
//! L2 and L1²) and written as `boltzkit/rbm/v2`. The (bernoulli, bernoulli) pair stays the
//! binary RBM of `fit.rs` with every trainer: these flags only divert other pairs here.
//! `rbm eval` and `rbm sample` of such models: `units_eval.rs`.

use super::fit::FitArgs;
use super::units_data::{read_source, sample_weights, state_rows, visible_layer};
use crate::exit::UsageError;
use crate::guard;
use crate::progress;
use crate::report::Summary;
use anyhow::Context;
use boltzkit::fit::StopReason;
use boltzkit::rbm::units::{fit_metadata, fit_unit_rbm, save_unit_rbm, UnitKind, UnitRbmParams};
use serde::Serialize;

/// What `rbm fit` reports for a unit-type RBM.
#[derive(Serialize)]
struct UnitFitSummary {
    data: String,
    samples: usize,
    visible_units: UnitKind,
    hidden_units: UnitKind,
    visible: usize,
    hidden: usize,
    algo: String,
    epochs: usize,
    updates: u64,
    stop: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_log_likelihood: Option<f64>,
    learn_s: f64,
    output: String,
}

/// Refuses the binary trainer's flags that the unit-type trainer does not take.
fn refuse_binary_only(a: &FitArgs) -> anyhow::Result<()> {
    let given = [
        ("--valid", a.valid.is_some()),
        ("--early-stop", a.early_stop),
        ("--checkpoint", a.checkpoint.is_some()),
        ("--resume", a.resume.is_some()),
        ("--model", a.model.is_some()),
        ("--log", a.log.is_some()),
        ("--monitors", a.monitors),
        ("--eval", a.eval.is_some()),
        (
            "--binarize",
            a.binarize.resolve(0) != boltzkit::data::Binarize::None,
        ),
    ];
    match given.iter().find(|(_, g)| *g) {
        Some((flag, _)) => Err(UsageError::new(format!(
            "{flag} is not available for --visible-units/--hidden-units other than \
             bernoulli/bernoulli yet"
        ))
        .into()),
        None => Ok(()),
    }
}

/// `rbm fit` of a unit-type RBM: read, initialize from the data, train, write, report.
pub(super) fn fit(a: FitArgs) -> anyhow::Result<()> {
    refuse_binary_only(&a)?;
    let seed = a.common.init()?;
    let rbm_params = a.params(a.algorithm()?, seed)?;
    let (visible, hidden) = a.units.kinds();
    let params = UnitRbmParams {
        visible,
        hidden,
        n_hidden: a
            .hidden
            .ok_or_else(|| UsageError::new("--hidden N is required"))?,
        weight_sd: rbm_params.weight_sd,
        train: a.units.train_params(rbm_params.train),
        scaling: a.units.scaling(),
    };
    guard::model_files(
        &[Some(&a.data), a.units.weights.as_deref()],
        &[("-o", Some(&a.output))],
        &[],
    )?;
    let source = read_source(&a.data, visible)?;
    let q = a.units.visible_units.and_then(|v| v.q);
    let layer = visible_layer(visible, q, &source)?;
    let rows = state_rows(&a.data, &layer, &source)?;
    let weights = sample_weights(a.units.weights.as_deref(), a.units.reweight, &source)?;
    let bar = progress::bar(params.train.train.epochs as u64, "epochs", a.common.quiet);
    let started = crate::report::started();
    let fitted = fit_unit_rbm(
        &params,
        layer,
        &rows,
        weights.as_deref(),
        Some(&crate::interrupt::flag()),
        |_, _| {
            bar.inc(1);
            Ok(true)
        },
    )?;
    bar.finish_and_clear();
    let learn_s = started.elapsed().as_secs_f64();
    let mut meta = fit_metadata(&params)?;
    meta.insert("data_file".to_string(), a.data.display().to_string());
    save_unit_rbm(&a.output, &fitted.model, &meta)
        .with_context(|| format!("cannot write the model to {}", a.output.display()))?;
    let avg_log_likelihood = if fitted.model.is_enumerable() {
        Some(
            fitted
                .model
                .log_likelihood(&rows, weights.as_deref(), None)?,
        )
    } else {
        None
    };
    let report = UnitFitSummary {
        data: a.data.display().to_string(),
        samples: source.n_rows(),
        visible_units: visible,
        hidden_units: hidden,
        visible: fitted.model.visible().n_units(),
        hidden: fitted.model.hidden().n_units(),
        algo: params.train.train.algorithm.to_string(),
        epochs: fitted.epochs,
        updates: fitted.steps,
        stop: fitted.stop.to_string(),
        avg_log_likelihood,
        learn_s,
        output: a.output.display().to_string(),
    };
    Summary::new("rbm fit", Some(seed))
        .extend(&report)?
        .emit(&a.common)?;
    match fitted.stop {
        StopReason::Interrupted { .. } => Err(crate::interrupt::Interrupted(format!(
            "interrupted after {} updates ({} epochs); wrote the last good model to {}",
            fitted.steps,
            fitted.epochs,
            a.output.display()
        ))
        .into()),
        StopReason::Diverged { .. } => anyhow::bail!(
            "training {}; wrote the last good model to {}",
            fitted.stop,
            a.output.display()
        ),
        _ => Ok(()),
    }
}
