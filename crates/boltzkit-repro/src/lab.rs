//! The gradient lab's runner and tables, shared by `boltzkit lab gradient` and [`crate::popcd`]'s
//! Table 1: every estimator against the exact gradient in parallel, seeded by its name.

use crate::Progress;
use anyhow::Context;
use boltzkit::data::Dataset;
use boltzkit::rbm::exact;
use boltzkit::rbm::lab::{gradient_bias_variance, BiasVariance, LabParams};
use boltzkit::rbm::train::Algorithm;
use boltzkit::rbm::Rbm;
use boltzkit::rng::derive_seed;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Estimator names in the one notation (`cd-1`, `popcd-1-loo`, ...); an unknown one is an
/// invalid setting (exit status 2 on the command line) under `flag`, e.g. `--estimators`.
pub fn parse_estimators(flag: &str, names: &[String]) -> anyhow::Result<Vec<Algorithm>> {
    names
        .iter()
        .map(|n| n.parse::<Algorithm>().with_context(|| flag.to_string()))
        .collect()
}

/// A stable 64-bit key of a name (FNV-1a), for seeds that follow names.
pub fn name_key(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Runs the lab for every estimator (in parallel; each seeded from `seed` and its name, so the
/// results depend neither on the thread count nor on the other estimators listed), advancing
/// `progress`.
pub fn run_lab(
    rbm: &Rbm,
    data: &Dataset,
    specs: &[Algorithm],
    params: &LabParams,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<BiasVariance>> {
    let truth = exact::log_likelihood_gradient(rbm, data)?;
    specs
        .par_iter()
        .map(|spec| {
            let p = LabParams {
                seed: derive_seed(params.seed, name_key(&spec.to_string())),
                ..*params
            };
            let r = gradient_bias_variance(rbm, data, &truth, spec, &p)
                .with_context(|| format!("estimator {spec}"));
            progress.advance(1);
            r
        })
        .collect()
}

/// The headline diagnostics of an estimator for a table cell: pop-CD's mean effective sample
/// size as a fraction of the batch, PT's mean exchange rate.
pub fn diagnostic_notes(d: &BTreeMap<String, f64>) -> String {
    d.iter()
        .filter(|(k, _)| k.as_str() == "popcd_ess_frac" || k.as_str() == "pt_swap_rate_mean")
        .map(|(k, v)| format!("{k} {v:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The results as a Markdown table (squared bias and variance per parameter, 95% intervals).
pub fn lab_markdown(results: &[BiasVariance]) -> String {
    let mut out = String::from(
        "| estimator | squared bias | 95% CI | variance | 95% CI | notes |\n\
         |---|---|---|---|---|---|\n",
    );
    for r in results {
        out.push_str(&format!(
            "| {} | {:.3e} | [{:.2e}, {:.2e}] | {:.3e} | [{:.2e}, {:.2e}] | {} |\n",
            r.estimator,
            r.sq_bias,
            r.sq_bias_ci[0],
            r.sq_bias_ci[1],
            r.variance,
            r.variance_ci[0],
            r.variance_ci[1],
            diagnostic_notes(&r.diagnostics)
        ));
    }
    out
}
