//! Exact maximum likelihood (BM-DI of the FSLL paper, Sec. 3.2): minimize `KL(p_d‖p_θ)`
//! with L-BFGS on exact moments ("direct integration", no Monte Carlo).
//!
//! With the sufficient statistics `T(x) = (x_j; x_j x_k, j < k)` in the layout of `θ`,
//! `KL(p_d‖p_θ) = ln Z(θ) − θᵀ E_d[T] − H(p_d)` and its gradient is
//! `E_θ[T] − E_d[T]` (Eq. 2 of the FSLL paper): the fit stops when the model's moments match
//! the data's. An optional L2 penalty `λ/2·‖θ‖²` keeps the minimizer finite when the data's
//! moments lie on the boundary (a constant column, say). Each evaluation enumerates the
//! `2^d` states once ([`exact::moments`]), so `d ≤ 30`.

use super::convention::Convention;
use super::exact;
use super::lbfgs::{minimize_observed, LbfgsParams, LbfgsStop};
use super::model::{check_data, n_params, Fvbm};
use super::mple::Progress;
use crate::data::Dataset;
use crate::error::Result;
use crate::fit::{Count, Fit, Learner, Run, StopReason};
use std::time::Instant;

/// Settings of the exact maximum-likelihood fit (serialized flat: the optimizer's settings
/// beside its own; `init` is the starting model, not a setting, and is not serialized).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MleParams {
    /// The convention of the fitted model (the fitted distribution is the same in both).
    /// Default [`Convention::Spin`].
    pub convention: Convention,
    /// L2 penalty `λ ≥ 0`: minimize `KL + λ/2·‖θ‖²`. Default 0 (plain BM-DI).
    pub l2: f64,
    /// The starting point (`None`: `θ = 0`). Default `None`.
    #[serde(skip)]
    pub init: Option<Fvbm>,
    /// The optimizer's settings (its `grad_tol` bounds the largest moment mismatch; default
    /// 1e-8).
    #[serde(flatten)]
    pub lbfgs: LbfgsParams,
}

impl Default for MleParams {
    fn default() -> Self {
        MleParams {
            convention: Convention::Spin,
            l2: 0.0,
            init: None,
            lbfgs: LbfgsParams::default(),
        }
    }
}

/// [`MleParams`] checked by [`MleParams::check`]: the exact maximum-likelihood learner.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedMleParams(MleParams);

impl CheckedMleParams {
    /// The settings.
    pub fn get(&self) -> &MleParams {
        &self.0
    }
}

impl MleParams {
    /// Checks every setting (the error names the field at fault) and returns the learner.
    pub fn check(&self) -> Result<CheckedMleParams> {
        super::mple::nonneg("l2", self.l2)?;
        super::mple::check_init(self.init.as_ref(), self.convention)?;
        self.lbfgs.check()?;
        Ok(CheckedMleParams(self.clone()))
    }
}

/// The record of an exact maximum-likelihood fit.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MleRecord {
    /// L-BFGS iterations.
    pub iterations: usize,
    /// Exact evaluations of `ln Z` and the moments.
    pub evaluations: usize,
    /// The objective `KL(p_d‖p_θ) (+ λ/2‖θ‖²)` at the start and after every iteration, nats.
    pub objective: Vec<f64>,
    /// `KL(p_d‖p_θ)` of the fitted model, nats.
    pub kl_data: f64,
    /// The largest moment mismatch `max_a |E_θ[T_a] − E_d[T_a] + λθ_a|` at the end.
    pub final_gradient: f64,
    /// Why the optimizer stopped.
    pub stop: LbfgsStop,
    /// Number of samples.
    pub n_samples: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// A model fitted by exact maximum likelihood and its record.
pub type MleFit = Fit<Fvbm, MleRecord>;

/// The data's mean sufficient statistics `E_d[T]` in the layout of `θ`, and its entropy
/// `H(p_d)` (nats).
fn data_statistics(data: &Dataset, conv: Convention) -> (Vec<f64>, f64) {
    let d = data.n_vars();
    let n = data.n_samples() as f64;
    let mut stats = vec![0.0; n_params(d)];
    let mut rows: Vec<Vec<u8>> = data.values().outer_iter().map(|r| r.to_vec()).collect();
    let mut x = vec![0.0; d];
    for row in &rows {
        for (xv, &b) in x.iter_mut().zip(row) {
            *xv = conv.value(b);
        }
        let mut a = d;
        for j in 0..d {
            stats[j] += x[j];
            for k in j + 1..d {
                stats[a] += x[j] * x[k];
                a += 1;
            }
        }
    }
    stats.iter_mut().for_each(|s| *s /= n);
    rows.sort_unstable();
    let mut entropy = 0.0;
    let mut i = 0;
    while i < rows.len() {
        let mut j = i + 1;
        while j < rows.len() && rows[j] == rows[i] {
            j += 1;
        }
        let p = (j - i) as f64 / n;
        entropy -= p * p.ln();
        i = j;
    }
    (stats, entropy)
}

impl Learner for CheckedMleParams {
    type Model = Fvbm;
    type Record = MleRecord;
    type Progress<'p> = Progress;

    /// Fits an FVBM by exact maximum likelihood (BM-DI).
    ///
    /// ```
    /// use boltzkit::fit::Learner;
    /// use boltzkit::fvbm::{exact, mle, Convention, Fvbm};
    /// use boltzkit::rng::rng_from_seed;
    /// let truth = Fvbm::random(5, 0.5, Convention::Binary, &mut rng_from_seed(0))?;
    /// let data = exact::sample(&truth, 3000, &mut rng_from_seed(1))?;
    /// let fit = mle::MleParams::default().check()?.fit(&data)?;
    /// assert!(fit.record.final_gradient < 1e-8);
    /// # Ok::<(), boltzkit::Error>(())
    /// ```
    /// Observers see every L-BFGS iteration (`objective` is the penalized KL, minimized).
    fn fit_with(&self, data: &Dataset, mut run: Run<'_, Self>) -> Result<MleFit> {
        fit(data, &self.0, &mut run)
    }
}

/// The exact ML fit with checked `params`.
fn fit(data: &Dataset, params: &MleParams, run: &mut Run<'_, CheckedMleParams>) -> Result<MleFit> {
    let start = Instant::now();
    let d = data.n_vars();
    check_data(d, data, "mle::fit")?;
    data.require_nonempty()?;
    let conv = params.convention;
    let init = super::mple::starting_model(params.init.as_ref(), d, conv)?;
    let (target, entropy) = data_statistics(data, conv);
    let l2 = params.l2;
    let objective = |theta: &[f64], grad: &mut [f64]| -> Result<f64> {
        let model = Fvbm::from_theta(d, theta, conv)?;
        let mom = exact::moments(&model)?;
        let expected = mom.sufficient_stats();
        let mut f = mom.log_z - entropy;
        for a in 0..theta.len() {
            f += -theta[a] * target[a] + 0.5 * l2 * theta[a] * theta[a];
            grad[a] = expected[a] - target[a] + l2 * theta[a];
        }
        Ok(f)
    };
    let mut previous = None;
    let mut observe = |iteration: usize, f: f64| -> Result<Option<StopReason>> {
        let mut progress = Progress {
            iteration,
            objective: f,
            gain: previous.map_or(0.0, |p: f64| p - f),
        };
        previous = Some(f);
        if iteration == 1 {
            run.start(&mut progress)?;
        }
        if let Some(why) = run.observe_at(iteration, &mut progress)? {
            return Ok(Some(why));
        }
        Ok(run.interrupted().then_some(StopReason::Interrupted {
            after: Count::iterations(iteration),
        }))
    };
    let r = minimize_observed(objective, init.theta(), &params.lbfgs, &mut observe)?;
    let model = Fvbm::from_theta(d, &r.x, conv)?;
    let penalty: f64 = 0.5 * l2 * r.x.iter().map(|t| t * t).sum::<f64>();
    run.finish(
        &mut Progress {
            iteration: r.iterations,
            objective: r.f,
            gain: 0.0,
        },
        &r.stop,
    )?;
    Ok(Fit {
        model,
        record: MleRecord {
            iterations: r.iterations,
            evaluations: r.evaluations,
            objective: r.trace,
            kl_data: r.f - penalty,
            final_gradient: r.grad_max,
            stop: r.stop,
            n_samples: data.n_samples(),
            seconds: start.elapsed().as_secs_f64(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::super::testutil;
    use super::*;
    use crate::data::synth::state_index;
    use crate::rng::rng_from_seed;

    /// The fitted model matches the data's moments (the likelihood equations), its KL is the
    /// exact KL of the empirical distribution, and the fit does not depend on the convention.
    #[test]
    fn fit_matches_moments_and_kl() {
        let truth = Fvbm::random(5, 0.5, Convention::Spin, &mut rng_from_seed(4)).unwrap();
        let data = exact::sample(&truth, 2000, &mut rng_from_seed(5)).unwrap();
        let mut fits = Vec::new();
        for conv in [Convention::Spin, Convention::Binary] {
            let params = MleParams {
                convention: conv,
                lbfgs: LbfgsParams {
                    grad_tol: 1e-10,
                    ..Default::default()
                },
                ..Default::default()
            };
            let fit = testutil::mle(&data, &params).unwrap();
            assert_eq!(fit.record.stop, LbfgsStop::GradientTolerance);
            // Moment matching, against moments computed here from the raw rows.
            let mom = exact::moments(&fit.model).unwrap();
            for j in 0..5 {
                let emp: f64 = data
                    .values()
                    .column(j)
                    .iter()
                    .map(|&b| conv.value(b))
                    .sum::<f64>()
                    / 2000.0;
                assert!((mom.mean[j] - emp).abs() < 1e-9, "{conv} E[x_{j}]");
                for k in j + 1..5 {
                    let emp: f64 = data
                        .values()
                        .outer_iter()
                        .map(|r| conv.value(r[j]) * conv.value(r[k]))
                        .sum::<f64>()
                        / 2000.0;
                    assert!(
                        (mom.second(j, k) - emp).abs() < 1e-9,
                        "{conv} E[x_{j} x_{k}]"
                    );
                }
            }
            // KL against the explicit empirical distribution.
            let mut p = vec![0.0; 32];
            for r in data.values().outer_iter() {
                p[state_index(&[2; 5], &r.to_vec())] += 1.0 / 2000.0;
            }
            let kl = exact::kl_divergence(&p, &fit.model).unwrap();
            assert!(
                (kl - fit.record.kl_data).abs() < 1e-9,
                "{kl} vs {}",
                fit.record.kl_data
            );
            assert!(fit
                .record
                .objective
                .windows(2)
                .all(|w| w[1] <= w[0] + 1e-13));
            fits.push(fit.model);
        }
        let lp0 = exact::log_probabilities(&fits[0]).unwrap();
        let lp1 = exact::log_probabilities(&fits[1]).unwrap();
        for (a, b) in lp0.iter().zip(&lp1) {
            assert!((a - b).abs() < 1e-7);
        }
    }

    /// A constant column has no finite MLE; the penalty makes the fit finite and its
    /// stationarity condition holds.
    #[test]
    fn penalty_and_validation() {
        let truth = Fvbm::random(4, 0.5, Convention::Spin, &mut rng_from_seed(6)).unwrap();
        let mut v = exact::sample(&truth, 500, &mut rng_from_seed(7))
            .unwrap()
            .into_values();
        v.column_mut(1).fill(1);
        let data = Dataset::binary(v).unwrap();
        let params = MleParams {
            l2: 0.01,
            ..Default::default()
        };
        let fit = testutil::mle(&data, &params).unwrap();
        assert!(fit.record.final_gradient < 1e-8);
        assert!(fit.model.b()[1] > 1.0 && fit.model.b()[1].is_finite());
        let bad = MleParams {
            l2: -1.0,
            ..Default::default()
        };
        assert!(testutil::mle(&data, &bad)
            .unwrap_err()
            .to_string()
            .contains("l2"));
        let wrong = MleParams {
            init: Some(Fvbm::zeros(3, Convention::Spin).unwrap()),
            ..Default::default()
        };
        assert!(testutil::mle(&data, &wrong)
            .unwrap_err()
            .to_string()
            .contains("init"));
    }
}
