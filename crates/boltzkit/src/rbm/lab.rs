//! The gradient lab: squared bias and variance of stochastic gradient estimators against the
//! exact log-likelihood gradient (Table 1 of the pop-CD paper, Sec. 4.1, third set).
//!
//! The paper takes a long parallel-tempering run as the "true" gradient; with a smaller layer
//! of at most 30 units the exact gradient is computed here by enumeration
//! ([`exact::log_likelihood_gradient`]). For a fixed model, `T` estimates `g_t` are drawn (each on
//! a mini-batch drawn uniformly without replacement from the data, as in training) and, per
//! parameter (`P = n_v n_h + n_v + n_h` of them), reported:
//!
//! - variance: `(1/P) Σ_t ‖g_t − ḡ‖² / (T − 1)`, the expected squared distance of an estimate
//!   from the mean of the estimates (the paper's definition, unbiased form);
//! - squared bias: `‖E g − ∇ℓ‖² / P`, estimated from `‖ḡ − ∇ℓ‖² / P` (which is too large by
//!   `tr Cov(ḡ) / P`) by the jackknife over `K` consecutive groups of estimates, which removes
//!   that excess exactly for this quadratic and also holds for the autocorrelated estimates of
//!   persistent chains (PCD, PT). The raw value is kept beside it.
//!
//! 95% confidence intervals: Student-t over the `K` group variances, and the jackknife
//! standard error of the squared bias.

use super::exact::{self, ExactGradient};
use super::model::{fill_batch, Rbm};
use super::train::{
    Algorithm, Cd, Gradient, GradientEstimator, LearningRate, PopCd, Pt, Sdcp, Sgd, SgdParams,
    TrainParams, Trainer, Weighting,
};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::rng::{derive_rng, derive_seed};
use rand::Rng;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

/// The lab's gradient estimator for `algorithm` (named in the one notation of
/// [`Algorithm`]: `cd-K`, `pcd-K`, `popcd-K`, `popcd-K-loo`, `sdcp-D-K`, `pt-M`, `pt-M-K`), its
/// chains seeded from `seed`; S-DCP's direction is taken at learning rate `sdcp_lr`. The
/// centered algorithms (`cg-K`, `csdcp-D-K`) change the parametrization, not only the
/// estimate, and are refused.
pub fn estimator(
    algorithm: &Algorithm,
    seed: u64,
    sdcp_lr: f32,
) -> Result<Box<dyn GradientEstimator>> {
    Ok(match *algorithm {
        Algorithm::Cd { k } => Box::new(Cd::new(k, seed)?),
        Algorithm::Pcd { k } => Box::new(Cd::persistent(k, seed)?),
        Algorithm::PopCd { k, loo } => {
            let w = if loo {
                Weighting::LeaveOneOut
            } else {
                Weighting::SelfNormalized
            };
            Box::new(PopCd::new(k, seed)?.weighting(w))
        }
        Algorithm::Sdcp { inner, k } => Box::new(SdcpDirection {
            sdcp: Sdcp::new(inner, k, seed)?,
            inner,
            lr: sdcp_lr,
            sgd: SgdParams::new().learning_rate(sdcp_lr).check()?,
            work: None,
            scratch: None,
        }),
        Algorithm::Pt { replicas, k } => Box::new(Pt::new(replicas, k, seed)?),
        Algorithm::Cg { .. } | Algorithm::CsDcp { .. } => {
            return Err(Error::param(
                "estimator",
                format!(
                    "`{algorithm}`: the lab compares gradient estimators of the standard \
                     parametrization; centered algorithms are not among them"
                ),
            ))
        }
    })
}

/// S-DCP's ascent direction at a fixed model: one [`Sdcp::step`] on a copy of the model at
/// learning rate `lr`, then `(θ′ − θ) / (lr · d)` (in `f64` before rounding), the mean of the
/// `d` inner gradients.
struct SdcpDirection {
    sdcp: Sdcp,
    inner: usize,
    lr: f32,
    sgd: Sgd,
    work: Option<Rbm>,
    scratch: Option<Gradient>,
}

impl GradientEstimator for SdcpDirection {
    fn estimate(&mut self, rbm: &Rbm, v: &[f32], grad: &mut Gradient) -> Result<()> {
        let work = self.work.get_or_insert_with(|| rbm.clone());
        {
            let (w, b, c) = work.params_mut();
            w.copy_from_slice(rbm.w());
            b.copy_from_slice(rbm.b());
            c.copy_from_slice(rbm.c());
        }
        let scratch = self.scratch.get_or_insert_with(|| Gradient::like(rbm));
        self.sdcp.step(work, v, &mut self.sgd, scratch)?;
        let scale = 1.0 / (f64::from(self.lr) * self.inner as f64);
        let diff = |out: &mut [f32], after: &[f32], before: &[f32]| {
            for ((o, &a), &b) in out.iter_mut().zip(after).zip(before) {
                *o = ((f64::from(a) - f64::from(b)) * scale) as f32;
            }
        };
        diff(&mut grad.w, work.w(), rbm.w());
        diff(&mut grad.b, work.b(), rbm.b());
        diff(&mut grad.c, work.c(), rbm.c());
        Ok(())
    }
}

/// Settings of a lab run.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LabParams {
    /// Estimates `T` kept per estimator (default 10,000; the paper draws 50,000); rounded up
    /// to a multiple of `groups`.
    pub estimates: usize,
    /// Mini-batch rows per estimate (default `None`: the full data).
    pub batch_size: Option<usize>,
    /// Estimates drawn and discarded first (default 1,000), for the chains of persistent
    /// estimators to reach the model (applied to every estimator alike).
    pub burn_in: usize,
    /// Consecutive groups `K` for the confidence intervals (default 20), ≥ 2.
    pub groups: usize,
    /// S-DCP's learning rate `η` (default 0.01).
    pub sdcp_lr: f32,
    /// Seed of the estimators' chains and of the batch draws (default 0).
    pub seed: u64,
}

impl Default for LabParams {
    fn default() -> Self {
        LabParams {
            estimates: 10_000,
            batch_size: None,
            burn_in: 1_000,
            groups: 20,
            sdcp_lr: 0.01,
            seed: 0,
        }
    }
}

impl LabParams {
    fn check(&self, n_samples: usize) -> Result<()> {
        if self.groups < 2 {
            return Err(Error::param("groups", "at least 2 groups are needed"));
        }
        if self.estimates < 2 * self.groups {
            return Err(Error::param(
                "estimates",
                format!(
                    "need at least 2 per group ({} groups), got {}",
                    self.groups, self.estimates
                ),
            ));
        }
        if self.batch_size == Some(0) {
            return Err(Error::param("batch_size", "must be ≥ 1"));
        }
        if let Some(b) = self.batch_size.filter(|&b| b > n_samples) {
            return Err(Error::param(
                "batch_size",
                format!("{b} is more than the {n_samples} samples"),
            ));
        }
        if !(self.sdcp_lr.is_finite() && self.sdcp_lr > 0.0) {
            return Err(Error::param("sdcp_lr", "must be finite and > 0"));
        }
        Ok(())
    }
}

/// Squared bias and variance of one estimator, per parameter (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BiasVariance {
    /// The estimator (its [`Algorithm`] name).
    pub estimator: String,
    /// Parameters `P`.
    pub n_params: usize,
    /// Estimates `T` used.
    pub estimates: usize,
    /// Squared bias per parameter (jackknife-corrected; may fall slightly below 0 when the
    /// bias is negligible against the noise).
    pub sq_bias: f64,
    /// `‖ḡ − ∇ℓ‖² / P`, uncorrected.
    pub sq_bias_raw: f64,
    /// 95% interval of the squared bias.
    pub sq_bias_ci: [f64; 2],
    /// Variance per parameter.
    pub variance: f64,
    /// 95% interval of the variance.
    pub variance_ci: [f64; 2],
    /// The estimator's diagnostics over the run ([`GradientEstimator::report`]: pop-CD's
    /// effective sample size, PT's exchange rates).
    pub diagnostics: BTreeMap<String, f64>,
    /// Seconds spent (burn-in included).
    pub wall_s: f64,
}

pub use crate::estimate::stats::t95;

/// Elementary operations of [`gradient_bias_variance`] for `spec` on mini-batches of `rows`
/// rows of an `nv × nh` model (burn-in included): the chains' Gibbs steps, and per estimate
/// the batch copy and the sums over every parameter.
pub fn operations(spec: &Algorithm, params: &LabParams, rows: usize, nv: usize, nh: usize) -> f64 {
    let per_estimate = rows as f64
        * (spec.chain_steps() as f64 * crate::rbm::gibbs::step_operations(nv as u64, nh as u64)
            + nv as f64)
        + 2.0 * (nv * nh + nv + nh) as f64;
    params.estimates.saturating_add(params.burn_in) as f64 * per_estimate
}

/// Draws `T` estimates of `spec` at the fixed model `rbm` on mini-batches of `data` and
/// compares them with the exact gradient `truth` (of the average log-likelihood of `data`,
/// [`exact::log_likelihood_gradient`]).
///
/// ```
/// use boltzkit::data::synth::BarsAndStripes;
/// use boltzkit::rbm::lab::{gradient_bias_variance, LabParams};
/// use boltzkit::rbm::train::Algorithm;
/// use boltzkit::rbm::{exact, Rbm};
/// use boltzkit::rng::rng_from_seed;
/// let data = BarsAndStripes::new(3, false)?.dataset()?;
/// let rbm = Rbm::random(9, 4, 0.5, &mut rng_from_seed(1))?;
/// let truth = exact::log_likelihood_gradient(&rbm, &data)?;
/// let params = LabParams { estimates: 400, burn_in: 20, seed: 3, ..LabParams::default() };
/// let cd = gradient_bias_variance(&rbm, &data, &truth, &"cd-1".parse()?, &params)?;
/// let pop = gradient_bias_variance(&rbm, &data, &truth, &"popcd-1".parse()?, &params)?;
/// assert!(cd.variance > 0.0 && pop.variance > 0.0);
/// assert!(cd.sq_bias_ci[0] <= cd.sq_bias && cd.sq_bias <= cd.sq_bias_ci[1]);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn gradient_bias_variance(
    rbm: &Rbm,
    data: &Dataset,
    truth: &ExactGradient,
    spec: &Algorithm,
    params: &LabParams,
) -> Result<BiasVariance> {
    let start = Instant::now();
    exact::check_data_for(rbm, data, "gradient lab")?;
    params.check(data.n_samples())?;
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    let n_params = nv * nh + nv + nh;
    if truth.w.len() != nv * nh || truth.b.len() != nv || truth.c.len() != nh {
        return Err(Error::Shape {
            op: "gradient lab".into(),
            expected: format!("an exact gradient for {nv} × {nh} units"),
            found: format!(
                "w {}, b {}, c {}",
                truth.w.len(),
                truth.b.len(),
                truth.c.len()
            ),
        });
    }
    let n = data.n_samples();
    let bs = params.batch_size.unwrap_or(n);
    let k_groups = params.groups;
    let per_group = params.estimates.div_ceil(k_groups);
    let t_total = per_group * k_groups;
    crate::budget::check_work(
        &format!(
            "the gradient lab's {} estimates of {spec}",
            params.estimates.saturating_add(params.burn_in)
        ),
        operations(spec, params, bs, nv, nh),
    )?;
    let mut est = estimator(spec, derive_seed(params.seed, 0), params.sdcp_lr)?;
    let mut batch_rng = derive_rng(params.seed, 1);
    let mut order: Vec<usize> = (0..n).collect();
    let mut batch = vec![0f32; bs * nv];
    let mut g = Gradient::like(rbm);
    let mut draw = |est: &mut Box<dyn GradientEstimator>, g: &mut Gradient| -> Result<()> {
        if bs < n {
            // partial Fisher-Yates: the first bs entries become a uniform sample
            for i in 0..bs {
                let j = batch_rng.random_range(i..n);
                order.swap(i, j);
            }
        }
        fill_batch(data, &order[..bs], &mut batch)?;
        est.estimate(rbm, &batch, g)
    };
    for _ in 0..params.burn_in {
        draw(&mut est, &mut g)?;
    }
    est.report(&mut BTreeMap::new()); // diagnostics from here on
    let mut sums = vec![vec![0f64; n_params]; k_groups];
    let mut sumsq = vec![0f64; k_groups];
    for (sum, sq) in sums.iter_mut().zip(sumsq.iter_mut()) {
        for _ in 0..per_group {
            draw(&mut est, &mut g)?;
            for (s, &x) in sum.iter_mut().zip(g.w.iter().chain(&g.b).chain(&g.c)) {
                let x = f64::from(x);
                *s += x;
                *sq += x * x;
            }
        }
        if let Some(i) = sum.iter().position(|x| !x.is_finite()) {
            return Err(Error::Numerical {
                context: format!("gradient lab, estimator {spec}"),
                detail: format!("a non-finite estimate of parameter {i}"),
            });
        }
    }
    let mut diagnostics = BTreeMap::new();
    est.report(&mut diagnostics);

    let truth_flat: Vec<f64> = truth
        .w
        .iter()
        .chain(&truth.b)
        .chain(&truth.c)
        .copied()
        .collect();
    let p = n_params as f64;
    let total: Vec<f64> = (0..n_params)
        .map(|j| sums.iter().map(|s| s[j]).sum::<f64>())
        .collect();
    let sq_dist = |mean_scale: f64, sum: &[f64]| -> f64 {
        sum.iter()
            .zip(&truth_flat)
            .map(|(&s, &t)| (s * mean_scale - t).powi(2))
            .sum::<f64>()
            / p
    };
    let tt = t_total as f64;
    let sq_bias_raw = sq_dist(1.0 / tt, &total);
    // jackknife over groups: leave group g out
    let loo: Vec<f64> = sums
        .iter()
        .map(|sg| {
            let rest: Vec<f64> = total.iter().zip(sg).map(|(a, b)| a - b).collect();
            sq_dist(1.0 / (tt - per_group as f64), &rest)
        })
        .collect();
    let kf = k_groups as f64;
    let loo_mean = loo.iter().sum::<f64>() / kf;
    let sq_bias = kf * sq_bias_raw - (kf - 1.0) * loo_mean;
    let jack_se =
        ((kf - 1.0) / kf * loo.iter().map(|b| (b - loo_mean).powi(2)).sum::<f64>()).sqrt();
    let t = t95(k_groups - 1);
    // variance: overall (unbiased), and per group for the interval
    let mean_sq: f64 = total.iter().map(|s| (s / tt).powi(2)).sum();
    let variance = (sumsq.iter().sum::<f64>() - tt * mean_sq) / ((tt - 1.0) * p);
    let ng = per_group as f64;
    let group_var: Vec<f64> = sums
        .iter()
        .zip(&sumsq)
        .map(|(s, &q)| {
            let m2: f64 = s.iter().map(|x| (x / ng).powi(2)).sum();
            (q - ng * m2) / ((ng - 1.0) * p)
        })
        .collect();
    let gv_mean = group_var.iter().sum::<f64>() / kf;
    let gv_sd = (group_var.iter().map(|v| (v - gv_mean).powi(2)).sum::<f64>() / (kf - 1.0)).sqrt();
    let half = t * gv_sd / kf.sqrt();
    Ok(BiasVariance {
        estimator: spec.to_string(),
        n_params,
        estimates: t_total,
        sq_bias,
        sq_bias_raw,
        sq_bias_ci: [sq_bias - t * jack_se, sq_bias + t * jack_se],
        variance,
        variance_ci: [variance - half, variance + half],
        diagnostics,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// A model trained as the lab's reference (Sec. 4.1 of the pop-CD paper, third set): the
/// Sec. 4.1 initialization of the S-DCP paper ([`Rbm::init_from_data`], `σ = 0.01`), then
/// CD-1 at learning rate `lr` for `iterations` updates on mini-batches of `batch_size`
/// (`None`: the full batch), rounded up to whole epochs. Returns the model and the updates
/// done.
pub fn cd1_reference_model(
    data: &Dataset,
    n_hidden: usize,
    iterations: usize,
    lr: f32,
    batch_size: Option<usize>,
    seed: u64,
) -> Result<(Rbm, u64)> {
    let n = data.n_samples().max(1);
    let per_epoch = batch_size.map_or(1, |b| n.div_ceil(b.max(1)));
    let epochs = iterations.div_ceil(per_epoch).max(1);
    let rbm = Rbm::init_from_data(data, n_hidden, 0.01, &mut derive_rng(seed, 0))?;
    let mut params = TrainParams::new()
        .epochs(epochs)
        .schedule(LearningRate::Constant(lr))
        .seed(derive_seed(seed, 1));
    params.batch_size = batch_size;
    let out = Trainer::new(rbm, data, params)?.run()?;
    if let crate::rbm::train::StopReason::Diverged { detail, .. } = &out.record.stop {
        return Err(Error::Numerical {
            context: "training the lab's reference model by CD-1".into(),
            detail: detail.clone(),
        });
    }
    Ok((out.model, out.record.steps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synth::BarsAndStripes;
    use crate::linalg::sigmoid_f64;
    use crate::rng::rng_from_seed;

    #[test]
    fn centered_algorithms_are_not_lab_estimators() {
        for name in ["cg-1", "csdcp-3-4"] {
            let a: Algorithm = name.parse().unwrap();
            let e = estimator(&a, 1, 0.1).err().unwrap();
            assert!(matches!(e, Error::InvalidParam { .. }), "{name}: {e}");
        }
        for name in ["cd-1", "pcd-2", "popcd-1-loo", "sdcp-3-4", "pt-5-2"] {
            assert!(estimator(&name.parse().unwrap(), 1, 0.1).is_ok(), "{name}");
        }
    }

    #[test]
    fn t_quantiles() {
        assert!((t95(19) - 2.093).abs() < 2e-3);
        assert!((t95(4) - 2.776).abs() < 1e-2);
        assert!((t95(1000) - 1.962).abs() < 1e-3);
    }

    /// The lab's statistics against their definitions, on an estimator whose distribution is
    /// known in closed form: CD-1 on a model with `W = 0`, where `v′ ~ Π_i Bernoulli(σ(b_i))`
    /// is an exact model sample independent of the data, so CD-1 is unbiased and the variance
    /// of each entry is a binomial one.
    #[test]
    fn unbiased_estimator_has_no_bias_and_the_known_variance() {
        let (nv, nh) = (6, 3);
        let b: Vec<f32> = (0..nv).map(|i| 0.4 * i as f32 - 1.0).collect();
        let c = vec![0.3f32, -0.2, 0.1];
        let rbm = Rbm::new(nv, nh, vec![0.0; nv * nh], b.clone(), c.clone()).unwrap();
        let rows: Vec<u8> = (0..10 * nv).map(|i| ((i * 5 + 1) % 3 == 0) as u8).collect();
        let data = Dataset::from_flat(rows, nv, vec![2; nv]).unwrap();
        let truth = exact::log_likelihood_gradient(&rbm, &data).unwrap();
        let params = LabParams {
            estimates: 20_000,
            burn_in: 0,
            seed: 4,
            ..LabParams::default()
        };
        let r =
            gradient_bias_variance(&rbm, &data, &truth, &Algorithm::Cd { k: 1 }, &params).unwrap();
        assert_eq!(r.n_params, nv * nh + nv + nh);
        assert_eq!(r.estimates, 20_000);
        assert!(r.sq_bias_ci[0] <= 0.0 && 0.0 <= r.sq_bias_ci[1], "{r:?}");
        assert!(r.sq_bias.abs() < 1e-4, "{r:?}");
        // full batch of 10 rows, W = 0: positive phase fixed; v′_i ~ Bernoulli(σ(b_i)) and
        // the c-statistics p(h|v′) = σ(c) are constant. Var(∂b_i) = σ(1−σ)/10,
        // Var(∂W_ij) = σ(b_i)(1−σ(b_i)) σ(c_j)²/10, Var(∂c_j) = 0.
        let mut want = 0.0;
        for &bi in &b {
            let s = sigmoid_f64(f64::from(bi));
            let var_v = s * (1.0 - s) / 10.0;
            want += var_v;
            for &cj in &c {
                want += var_v * sigmoid_f64(f64::from(cj)).powi(2);
            }
        }
        want /= r.n_params as f64;
        assert!(
            r.variance_ci[0] <= want && want <= r.variance_ci[1],
            "{want} vs {r:?}"
        );
        assert!((r.variance - want).abs() < 0.03 * want, "{want} vs {r:?}");
    }

    /// The exact gradient used as the truth equals finite differences of the exact average
    /// log-likelihood (central differences in f64 through f32 parameters, step 1e-2).
    #[test]
    fn exact_gradient_matches_finite_differences() {
        let data = BarsAndStripes::new(3, true).unwrap().dataset().unwrap();
        let rbm = Rbm::random(9, 4, 0.7, &mut rng_from_seed(2)).unwrap();
        let g = exact::log_likelihood_gradient(&rbm, &data).unwrap();
        let h = 1e-2f32;
        let ll = |r: &Rbm| exact::average_log_likelihood(r, &data).unwrap();
        let mut checked = 0;
        for (which, idx) in [
            (0usize, 0usize),
            (0, 13),
            (0, 35),
            (1, 0),
            (1, 8),
            (2, 1),
            (2, 3),
        ] {
            let mut plus = rbm.clone();
            let mut minus = rbm.clone();
            let bump = |r: &mut Rbm, d: f32| {
                let (w, b, c) = r.params_mut();
                match which {
                    0 => w[idx] += d,
                    1 => b[idx] += d,
                    _ => c[idx] += d,
                }
            };
            bump(&mut plus, h);
            bump(&mut minus, -h);
            let fd = (ll(&plus) - ll(&minus)) / (2.0 * f64::from(h));
            let an = [&g.w, &g.b, &g.c][which][idx];
            // the central difference errs by O(h²) times the third derivative
            assert!((fd - an).abs() < 2e-4, "param {which}/{idx}: {fd} vs {an}");
            checked += 1;
        }
        assert_eq!(checked, 7);
    }

    /// On bars & stripes with a model trained by CD-1, pop-CD-1's squared bias is far below
    /// CD-1's and its variance above (the ordering of Table 1), PCD-1 and PT-5 (persistent,
    /// exact in the limit) have small bias, and S-DCP runs.
    #[test]
    fn table1_ordering_on_small_bars_and_stripes() {
        let data = BarsAndStripes::new(3, true).unwrap().dataset().unwrap();
        let (rbm, steps) = cd1_reference_model(&data, 9, 2000, 0.1, None, 5).unwrap();
        assert_eq!(steps, 2000);
        let truth = exact::log_likelihood_gradient(&rbm, &data).unwrap();
        let params = LabParams {
            estimates: 2000,
            burn_in: 200,
            seed: 8,
            ..LabParams::default()
        };
        let run = |s: &str| {
            gradient_bias_variance(&rbm, &data, &truth, &s.parse().unwrap(), &params).unwrap()
        };
        let cd = run("cd-1");
        let pop = run("popcd-1");
        assert!(pop.sq_bias < cd.sq_bias / 5.0, "{cd:?}\n{pop:?}");
        assert!(pop.sq_bias_ci[1] < cd.sq_bias_ci[0], "{cd:?}\n{pop:?}");
        assert!(pop.variance > cd.variance, "{cd:?}\n{pop:?}");
        assert!(pop.diagnostics["popcd_ess"] >= 1.0);
        let pt = run("pt-5");
        assert!(pt.sq_bias < cd.sq_bias / 5.0, "{pt:?}");
        assert!(pt.diagnostics.contains_key("pt_swap_rate_mean"));
        let sdcp = run("sdcp-3-4");
        assert!(sdcp.variance > 0.0 && sdcp.sq_bias.is_finite());
        let bad = LabParams {
            estimates: 3,
            ..params
        };
        assert!(
            gradient_bias_variance(&rbm, &data, &truth, &"cd-1".parse().unwrap(), &bad).is_err()
        );
    }
}
