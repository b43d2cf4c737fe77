//! FSLL work shared by `fsll fit`, `demo` and `repro fsll`: fit with a progress spinner and
//! measure the result against the data and (optionally) the true distribution.

use crate::progress;
use anyhow::Context;
use boltzkit::data::Dataset;
use boltzkit::estimate::kl_divergence;
use boltzkit::fsll::{fit_observed, FsllFit, FsllModel, FsllParams};
use serde::Serialize;
use std::time::Instant;

/// The figures of Table 1 for one fit.
#[derive(Debug, Clone, Serialize)]
pub struct FsllOutcome {
    /// `KL(p_d‖p_θ)` in nats.
    pub kl_data: f64,
    /// `KL(p*‖p_θ)` in nats, when the truth is known.
    pub kl_truth: Option<f64>,
    /// Basis functions in use.
    pub n_basis: usize,
    /// Final cost (Eq. 7).
    pub cost: f64,
    /// Iterations of Algorithm 1.
    pub iterations: usize,
    /// Wall seconds of learning alone.
    pub learn_s: f64,
}

/// Fits with a spinner showing iteration, cost and #basis; prints the learner's warnings.
pub fn fit_with_progress(
    data: &Dataset,
    params: &FsllParams,
    quiet: bool,
) -> anyhow::Result<FsllFit> {
    let spin = progress::spinner("learning FSLL", quiet);
    let start = Instant::now();
    let fit = fit_observed(data, params, |p| {
        if p.iteration % 16 == 0 {
            spin.set_message(format!(
                "learning FSLL: iteration {}, cost {:.5}, {} basis functions",
                p.iteration, p.cost, p.n_basis
            ));
        }
    })
    .context("learning the FSLL model")?;
    spin.finish_and_clear();
    if !quiet {
        for w in fit.record.warnings() {
            eprintln!("warning: {w}");
        }
        eprintln!(
            "learned {} basis functions in {} iterations ({:.3} s)",
            fit.model.n_basis(),
            fit.record.iterations,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(fit)
}

/// KL(p*‖p_θ) against an explicit true distribution over all states.
pub fn kl_to_truth(model: &FsllModel, truth: &[f64]) -> anyhow::Result<f64> {
    let n = model.layout().n_states();
    if truth.len() != n {
        anyhow::bail!(
            "the true distribution has {} states but the model has {n} (cardinalities {:?})",
            truth.len(),
            model.cardinalities()
        );
    }
    Ok(kl_divergence(truth, &model.log_probs())?)
}

/// The Table-1 figures of a finished fit.
pub fn outcome(fit: &FsllFit, truth: Option<&[f64]>) -> anyhow::Result<FsllOutcome> {
    Ok(FsllOutcome {
        kl_data: fit.record.kl_data,
        kl_truth: truth.map(|t| kl_to_truth(&fit.model, t)).transpose()?,
        n_basis: fit.model.n_basis(),
        cost: fit.record.final_cost,
        iterations: fit.record.iterations,
        learn_s: fit.record.seconds,
    })
}
