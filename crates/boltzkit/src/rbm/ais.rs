//! Annealed importance sampling (Neal 2001) of an RBM's log-partition function from a
//! base-rate visible model (Salakhutdinov & Murray 2008), as used for the large-model
//! evaluations of Sec. 4 of the S-DCP paper, forward and reverse.
//!
//! The intermediate unnormalized marginals, for `0 = β_0 < … < β_K = 1`, are
//! `ln p*_k(v) = (1 − β_k) b_Aᵀv + β_k bᵀv + Σ_j softplus(β_k (c_j + vᵀW_{:,j}))`, so that
//! `Z_0 = 2^{n_hidden} Π_i (1 + e^{b_A,i})` and `Z_K = Z`.
//!
//! - Forward ([`ais_log_partition`]): each chain starts with an exact draw from the base model
//!   and moves by one block-Gibbs step at each `β_k`; its log-weight
//!   `Σ_k [ln p*_k(v_{k−1}) − ln p*_{k−1}(v_{k−1})]` has `E[w] = Z / Z_0`. By Jensen's
//!   inequality `ln Ẑ` underestimates `ln Z` on average, so the log-likelihood it gives is
//!   optimistic.
//! - Reverse ([`reverse_ais_log_partition`], with the weights of Upadhya & Sastry 2015,
//!   Eq. 10): the same steps walked from `β_K = 1` down to `β_0 = 0`, starting at given
//!   visible states; its log-weight `Σ_k [ln p*_{k−1}(v_k) − ln p*_k(v_k)]` (a Gibbs step at
//!   `β_{k−1}` after each term) has `E[w] = Z_0 / Z` when the starts are exact samples of the
//!   RBM, so `ln Ẑ = ln Z_0 − ln mean(w)` overestimates `ln Z` on average. Started at data
//!   rows ([`data_starts`], "reverse AIS from data", `Method::ReverseAisFromData`) the starts
//!   are not model samples and the pooled `ln Ẑ` is neither a bound nor consistent: on a model
//!   far from its data it can sit many nats on either side (see `rbm::raise`, whose tests
//!   show it). RAISE proper, a per-vector conservative estimate, is [`super::raise`]; it walks
//!   the same kernel.
//!
//! Chain `i` draws from `derive_rng(seed, i)`; products are split by shape or computed per
//! chain, and elementwise work runs in fixed blocks of chains, so an estimate is the same bits
//! for any thread count. Products with the 0/1 states are the model's
//! ([`Rbm::hidden_input`], [`Rbm::visible_input`]), sparse when few units are on.

use super::gibbs::{sample_bernoulli, AnnealChains};
use super::model::{fill_batch, require_binary_data, Rbm};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::estimate::{Estimate, Method};
use crate::fit::Interrupt;
use crate::linalg::{self, softplus_f64};
use crate::rng::{derive_rng, rng_from_seed, BkRng};
use rand::Rng;

/// An increasing sequence of inverse temperatures from 0 to 1.
#[derive(Debug, Clone, PartialEq)]
pub struct AisSchedule {
    betas: Vec<f64>,
}

impl AisSchedule {
    /// `K ≥ 1` equal steps: `β_k = k / K`.
    pub fn linear(k: usize) -> Result<Self> {
        if k == 0 {
            return Err(Error::param("steps", "AIS needs at least one step"));
        }
        let mut betas = schedule_buffer(k)?;
        betas.extend((0..=k).map(|i| i as f64 / k as f64));
        Ok(AisSchedule { betas })
    }

    /// `steps` equal steps ([`AisSchedule::linear`]), or the standard schedule
    /// ([`AisSchedule::standard`]) when `steps` is 0: the `--ais-steps` of the command line.
    pub fn linear_or_standard(steps: usize) -> Result<Self> {
        if steps == 0 {
            Ok(AisSchedule::standard())
        } else {
            AisSchedule::linear(steps)
        }
    }

    /// The standard piecewise schedule of Salakhutdinov & Murray (2008): 500 steps in
    /// `[0, 0.5]`, 4,000 in `[0.5, 0.9]` and 10,000 in `[0.9, 1]` (14,500 in all).
    pub fn standard() -> Self {
        let mut betas = Vec::with_capacity(14_501);
        for (lo, hi, n) in [(0.0, 0.5, 500), (0.5, 0.9, 4_000), (0.9, 1.0, 10_000)] {
            betas.extend((0..n).map(|i| lo + (hi - lo) * i as f64 / n as f64));
        }
        betas.push(1.0);
        AisSchedule { betas }
    }

    /// The shape of [`AisSchedule::standard`] with `k ≥ 29` steps in all: the three pieces get
    /// `k · 500 / 14,500`, `k · 4,000 / 14,500` and the rest (rounded, at least one each), so
    /// `standard_shaped(14_500)` is `standard()`. For convergence checks at K, 2K, 4K, … steps.
    pub fn standard_shaped(k: usize) -> Result<Self> {
        if k < 29 {
            return Err(Error::param(
                "steps",
                format!("the standard schedule's shape needs at least 29 steps, got {k}"),
            ));
        }
        let n1 = ((k * 500 + 7_250) / 14_500).max(1);
        let n2 = ((k * 4_000 + 7_250) / 14_500).max(1);
        let n3 = k - n1 - n2;
        let mut betas = schedule_buffer(k)?;
        for (lo, hi, n) in [(0.0, 0.5, n1), (0.5, 0.9, n2), (0.9, 1.0, n3)] {
            betas.extend((0..n).map(|i| lo + (hi - lo) * i as f64 / n as f64));
        }
        betas.push(1.0);
        Ok(AisSchedule { betas })
    }

    /// The inverse temperatures `β_0 = 0, …, β_K = 1`.
    pub fn betas(&self) -> &[f64] {
        &self.betas
    }

    /// The number of steps `K` (one Gibbs transition each).
    pub fn steps(&self) -> usize {
        self.betas.len() - 1
    }
}

/// Room for the `k + 1` temperatures of a `k`-step schedule, allocated fallibly: a schedule
/// of 10^12 steps is an error with its size, never an abort.
fn schedule_buffer(k: usize) -> Result<Vec<f64>> {
    crate::budget::try_with_capacity(
        &format!("an annealing schedule of {k} steps"),
        k.saturating_add(1),
    )
}

/// Refuses an annealing run (forward or reverse AIS, RAISE) of `chains` chains over `steps`
/// temperatures of `rbm` that cannot fit in memory (the chains and their scratch) or would
/// take more than a year ([`crate::budget`]); `what` names the estimator in the message.
pub fn check_annealing(what: &str, rbm: &Rbm, steps: usize, chains: usize) -> Result<()> {
    let (nv, nh) = (rbm.n_visible() as u64, rbm.n_hidden() as u64);
    let what = format!("{what} ({chains} chains × {steps} steps)");
    crate::budget::check_memory(
        &what,
        super::GibbsChains::memory_estimate(chains as u64, nv, nh).saturating_mul(2),
    )?;
    crate::budget::check_work(
        &what,
        steps as f64 * chains as f64 * super::gibbs::step_operations(nv, nh),
    )
}

/// The result of an AIS run.
#[derive(Debug, Clone, PartialEq)]
pub struct AisEstimate {
    /// `ln Ẑ = ln Z_0 + ln mean(w)` (forward) or `ln Z_0 − ln mean(w)` (reverse).
    pub log_z: f64,
    /// Standard error of `ln Ẑ` by the delta method: `sd(w) / (√M · mean(w))`.
    pub std_err: f64,
    /// Lower end of `ln Ẑ` over `mean(w) ± 3·se(w)` (forward: `−∞` when the interval
    /// reaches 0).
    pub log_z_lower: f64,
    /// Upper end of `ln Ẑ` over `mean(w) ± 3·se(w)` (reverse: `+∞` when the interval reaches
    /// 0).
    pub log_z_upper: f64,
    /// The log-weight of every chain.
    pub log_weights: Vec<f64>,
}

impl AisEstimate {
    /// `ln Ẑ` as an [`Estimate`] of `method`: value, standard error, the ±3σ interval.
    pub fn to_estimate(&self, method: Method) -> Estimate {
        Estimate {
            value: self.log_z,
            stderr: self.std_err,
            lower: self.log_z_lower,
            upper: self.log_z_upper,
            method,
        }
    }
}

/// Estimates `ln Z` of `rbm` with `n_chains` AIS chains over `schedule`, from the base-rate
/// model with visible biases `base_b` (e.g. the logits of the data means, as
/// [`Rbm::init_from_data`] sets `b`; zeros give the uniform base).
///
/// ```
/// use boltzkit::rbm::ais::{ais_log_partition, AisSchedule};
/// use boltzkit::rbm::{exact, Rbm};
/// use boltzkit::rng::rng_from_seed;
/// let rbm = Rbm::random(12, 4, 0.3, &mut rng_from_seed(1))?;
/// let est = ais_log_partition(&rbm, &vec![0.0; 12], &AisSchedule::linear(200)?, 64, 5)?;
/// let exact = exact::log_partition(&rbm)?;
/// assert!((est.log_z - exact).abs() < 0.05);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn ais_log_partition(
    rbm: &Rbm,
    base_b: &[f32],
    schedule: &AisSchedule,
    n_chains: usize,
    seed: u64,
) -> Result<AisEstimate> {
    forward_ais(rbm, base_b, schedule, n_chains, seed, None)
}

/// [`ais_log_partition`] that stops, with [`Error::Interrupted`] and no estimate, at the next
/// temperature once `interrupt` is set (e.g. by Ctrl-C); the same bits as
/// [`ais_log_partition`] when it is not.
pub fn ais_log_partition_with_interrupt(
    rbm: &Rbm,
    base_b: &[f32],
    schedule: &AisSchedule,
    n_chains: usize,
    seed: u64,
    interrupt: &Interrupt,
) -> Result<AisEstimate> {
    forward_ais(rbm, base_b, schedule, n_chains, seed, Some(interrupt))
}

/// Forward AIS, stopped by `interrupt` when given.
pub(super) fn forward_ais(
    rbm: &Rbm,
    base_b: &[f32],
    schedule: &AisSchedule,
    n_chains: usize,
    seed: u64,
    interrupt: Option<&Interrupt>,
) -> Result<AisEstimate> {
    let nv = rbm.n_visible();
    super::model::check_len("ais_log_partition", "base_b", base_b.len(), nv)?;
    if n_chains == 0 {
        return Err(Error::param("chains", "AIS needs at least one chain"));
    }
    check_annealing("forward AIS", rbm, schedule.steps(), n_chains)?;
    let base_prob: Vec<f32> = base_b.iter().map(|&b| linalg::fast_sigmoid(b)).collect();
    let mut rngs: Vec<_> = (0..n_chains).map(|i| derive_rng(seed, i as u64)).collect();
    let mut v = vec![0f32; n_chains * nv];
    for (row, rng) in v.chunks_exact_mut(nv).zip(rngs.iter_mut()) {
        sample_bernoulli(&base_prob, row, rng);
    }
    let log_weights = anneal(rbm, base_b, schedule.betas(), v, rngs, interrupt)?;
    summarize(log_weights, base_log_partition(rbm, base_b), 1.0)
}

/// Reverse AIS (see the module docs): `ln Z` of `rbm` from chains started at the visible
/// states `start` (`n_chains × n_visible`, 0/1; exact model samples for a conservative
/// estimate, or data rows "from the data side"), annealed from `β = 1` down to the base-rate
/// model with visible biases `base_b`.
///
/// ```
/// use boltzkit::rbm::ais::{reverse_ais_log_partition, AisSchedule};
/// use boltzkit::rbm::{exact, Rbm};
/// use boltzkit::rng::rng_from_seed;
/// let rbm = Rbm::random(12, 4, 0.3, &mut rng_from_seed(1))?;
/// let start: Vec<f32> = exact::sample(&rbm, 64, &mut rng_from_seed(2))?;
/// let est = reverse_ais_log_partition(&rbm, &vec![0.0; 12], &AisSchedule::linear(200)?, &start, 5)?;
/// assert!((est.log_z - exact::log_partition(&rbm)?).abs() < 0.05);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn reverse_ais_log_partition(
    rbm: &Rbm,
    base_b: &[f32],
    schedule: &AisSchedule,
    start: &[f32],
    seed: u64,
) -> Result<AisEstimate> {
    reverse_ais(rbm, base_b, schedule, start, seed, None)
}

/// [`reverse_ais_log_partition`] that stops, with [`Error::Interrupted`] and no estimate, at
/// the next temperature once `interrupt` is set; the same bits when it is not.
pub fn reverse_ais_log_partition_with_interrupt(
    rbm: &Rbm,
    base_b: &[f32],
    schedule: &AisSchedule,
    start: &[f32],
    seed: u64,
    interrupt: &Interrupt,
) -> Result<AisEstimate> {
    reverse_ais(rbm, base_b, schedule, start, seed, Some(interrupt))
}

/// Reverse AIS, stopped by `interrupt` when given.
pub(super) fn reverse_ais(
    rbm: &Rbm,
    base_b: &[f32],
    schedule: &AisSchedule,
    start: &[f32],
    seed: u64,
    interrupt: Option<&Interrupt>,
) -> Result<AisEstimate> {
    let nv = rbm.n_visible();
    super::model::check_len("reverse_ais_log_partition", "base_b", base_b.len(), nv)?;
    let n_chains = rbm.batch_rows("reverse_ais_log_partition", start, nv)?;
    if n_chains == 0 {
        return Err(Error::param(
            "chains",
            "reverse AIS needs at least one start state",
        ));
    }
    if linalg::binary::binary_density(start).is_none() {
        return Err(Error::InvalidData(
            "reverse AIS start states must be 0/1".into(),
        ));
    }
    check_annealing("reverse AIS", rbm, schedule.steps(), n_chains)?;
    let rngs: Vec<_> = (0..n_chains).map(|i| derive_rng(seed, i as u64)).collect();
    let betas: Vec<f64> = schedule.betas().iter().rev().copied().collect();
    let log_weights = anneal(rbm, base_b, &betas, start.to_vec(), rngs, interrupt)?;
    summarize(log_weights, base_log_partition(rbm, base_b), -1.0)
}

/// Start states for reverse AIS "from the data side": `n ≥ 1` rows of the binary `data`
/// (`n × n_visible`, 0/1 as `f32`), drawn without replacement when `n` is at most the number
/// of rows and with replacement otherwise, by the generator of `seed`.
pub fn data_starts(data: &Dataset, n: usize, seed: u64) -> Result<Vec<f32>> {
    require_binary_data(data)?;
    if n == 0 {
        return Err(Error::param(
            "chains",
            "reverse AIS needs at least one chain",
        ));
    }
    let rows = data.n_samples();
    let mut rng = rng_from_seed(seed);
    let picked: Vec<usize> = if n <= rows {
        rand::seq::index::sample(&mut rng, rows, n).into_vec()
    } else {
        (0..n).map(|_| rng.random_range(0..rows)).collect()
    };
    let mut out = vec![0f32; n * data.n_vars()];
    fill_batch(data, &picked, &mut out)?;
    Ok(out)
}

/// `ln Z_0 = n_hidden ln 2 + Σ_i softplus(b_A,i)` of the base-rate model.
pub(super) fn base_log_partition(rbm: &Rbm, base_b: &[f32]) -> f64 {
    rbm.n_hidden() as f64 * std::f64::consts::LN_2
        + base_b
            .iter()
            .map(|&a| softplus_f64(f64::from(a)))
            .sum::<f64>()
}

/// The one annealing kernel (forward AIS, reverse AIS and RAISE all walk it): walks the chains
/// `v` (`n_chains × n_visible`, one generator per chain in `rngs`) along `betas` (either
/// direction): at each step the log-weight gains `ln p*_{β'}(v) − ln p*_β(v)` for the step
/// from `β` to `β'`, then one Gibbs step at `β'` (`h ~ p_{β'}(h | v)`, `v ~ p_{β'}(v | h)`)
/// moves `v`. A step with `β' = β` adds exactly 0 and only moves `v`. Returns the log-weights,
/// or [`Error::Interrupted`] when `interrupt` is set before a step (looked at once a step: a
/// step of even 4,096 chains of a 784 × 500 model takes a fraction of a second).
pub(super) fn anneal(
    rbm: &Rbm,
    base_b: &[f32],
    betas: &[f64],
    v: Vec<f32>,
    rngs: Vec<BkRng>,
    interrupt: Option<&Interrupt>,
) -> Result<Vec<f64>> {
    // the step kernel: every chain block through both half-steps on one thread
    // (`rbm::gibbs::AnnealChains`: products carried by each chain's changes; the same bits on
    // any number of threads)
    let mut chains = AnnealChains::new(rbm, base_b, v, rngs)?;
    // the other workers poll through the steps' short parallel regions
    let _warm = crate::warm::Warm::for_weights(rbm.n_visible() * rbm.n_hidden());
    for k in 1..betas.len() {
        if interrupt.is_some_and(Interrupt::is_set) {
            return Err(Error::Interrupted {
                what: format!("annealing (at step {k} of {})", betas.len() - 1),
            });
        }
        chains.step(rbm, betas[k - 1], betas[k]);
    }
    Ok(chains.into_log_weights())
}

/// `ln Ẑ = ln Z_0 + sign · ln mean(w)` (`sign = 1` forward, `−1` reverse), its delta-method
/// standard error and the ±3σ interval from log-weights.
/// Forward AIS's summary of chain log-weights from `ln Z_0` (the unit-type RBMs' AIS,
/// `rbm::units::ais`, shares it).
pub(crate) fn summarize_log_weights(log_weights: Vec<f64>, log_z0: f64) -> Result<AisEstimate> {
    summarize(log_weights, log_z0, 1.0)
}

fn summarize(log_weights: Vec<f64>, log_z0: f64, sign: f64) -> Result<AisEstimate> {
    let mx = log_weights
        .iter()
        .cloned()
        .fold(f64::NEG_INFINITY, f64::max);
    if !mx.is_finite() {
        return Err(Error::Numerical {
            context: "AIS".into(),
            detail: format!("largest log-weight is {mx}"),
        });
    }
    let m = log_weights.len() as f64;
    let w: Vec<f64> = log_weights.iter().map(|&l| (l - mx).exp()).collect();
    let mean = w.iter().sum::<f64>() / m;
    let var = if w.len() > 1 {
        w.iter().map(|&x| (x - mean).powi(2)).sum::<f64>() / (m - 1.0)
    } else {
        0.0
    };
    let se = (var / m).sqrt();
    // ln of mean(w) and of its ±3σ bounds, in the log-weights' scale
    let ln_at = |x: f64| {
        if x > 0.0 {
            mx + x.ln()
        } else {
            f64::NEG_INFINITY
        }
    };
    let (lo, mid, hi) = (ln_at(mean - 3.0 * se), ln_at(mean), ln_at(mean + 3.0 * se));
    let (log_z_lower, log_z_upper) = if sign > 0.0 {
        (log_z0 + lo, log_z0 + hi)
    } else {
        (log_z0 - hi, log_z0 - lo)
    };
    Ok(AisEstimate {
        log_z: log_z0 + sign * mid,
        std_err: se / mean,
        log_z_lower,
        log_z_upper,
        log_weights,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbm::exact;
    use crate::rng::rng_from_seed;

    #[test]
    fn schedules() {
        let s = AisSchedule::standard();
        assert_eq!(s.betas().len(), 14_501);
        assert_eq!(
            (s.betas()[0], s.betas()[500], s.betas()[4500]),
            (0.0, 0.5, 0.9)
        );
        assert_eq!(*s.betas().last().unwrap(), 1.0);
        assert!(s.betas().windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            AisSchedule::linear(4).unwrap().betas(),
            &[0.0, 0.25, 0.5, 0.75, 1.0]
        );
        assert!(AisSchedule::linear(0).is_err());
    }

    /// With W = 0, c = 0 and the base equal to the target's visible biases, every `p*_k` is the
    /// same, every log-weight is 0, and the estimate is exact with zero error.
    #[test]
    fn exact_when_target_is_independent() {
        let mut rbm = Rbm::random(6, 3, 0.8, &mut rng_from_seed(3)).unwrap();
        {
            let (w, _, c) = rbm.params_mut();
            w.fill(0.0);
            c.fill(0.0);
        }
        let base = rbm.b().to_vec();
        let est = ais_log_partition(&rbm, &base, &AisSchedule::linear(10).unwrap(), 20, 1).unwrap();
        let want = exact::log_partition(&rbm).unwrap();
        assert!((est.log_z - want).abs() < 1e-9, "{} vs {want}", est.log_z);
        assert!(est.std_err < 1e-12);
    }

    /// AIS within 3σ of the exact ln Z on a 64 × 16 RBM (issue 3's check), and the same bits
    /// for 1 and 2 threads.
    #[test]
    fn agrees_with_exact_log_z_64x16() {
        let rbm = Rbm::random(64, 16, 0.15, &mut rng_from_seed(7)).unwrap();
        let exact = exact::log_partition(&rbm).unwrap();
        let base = vec![0.0f32; 64];
        let schedule = AisSchedule::linear(1000).unwrap();
        let run = |t: usize| {
            crate::testutil::on_threads(t, || {
                ais_log_partition(&rbm, &base, &schedule, 100, 11).unwrap()
            })
        };
        let est = run(2);
        assert!(
            (est.log_z - exact).abs() < 3.0 * est.std_err.max(1e-3),
            "AIS {} ± {} vs exact {exact}",
            est.log_z,
            est.std_err
        );
        assert!(est.log_z_lower <= exact + 1e-3 && exact - 1e-3 <= est.log_z_upper);
        assert_eq!(est, run(1));
    }

    /// Reverse AIS from exact model samples agrees with the exact `ln Z` on a 64 × 16 RBM,
    /// and is the same bits for 1 and 2 threads.
    #[test]
    fn reverse_agrees_with_exact_log_z_64x16() {
        let rbm = Rbm::random(64, 16, 0.15, &mut rng_from_seed(7)).unwrap();
        let exact = exact::log_partition(&rbm).unwrap();
        let start = exact::sample(&rbm, 100, &mut rng_from_seed(8)).unwrap();
        let schedule = AisSchedule::linear(1000).unwrap();
        let base = vec![0.0f32; 64];
        let run = |t: usize| {
            crate::testutil::on_threads(t, || {
                reverse_ais_log_partition(&rbm, &base, &schedule, &start, 3).unwrap()
            })
        };
        let est = run(2);
        assert!(
            (est.log_z - exact).abs() < 3.0 * est.std_err.max(1e-3),
            "reverse AIS {} ± {} vs exact {exact}",
            est.log_z,
            est.std_err
        );
        assert!(est.log_z_lower <= exact + 1e-3 && exact - 1e-3 <= est.log_z_upper);
        assert_eq!(est, run(1));
    }

    /// The sides theory predicts, with a schedule short enough to make both biases large:
    /// forward AIS underestimates `ln Z` on average, reverse AIS from exact samples
    /// overestimates it (each `E[w]` is exact, so Jensen's inequality puts `E[ln ŵ]` below
    /// the log of the ratio it estimates).
    #[test]
    fn forward_under_reverse_over_on_average() {
        let rbm = Rbm::random(24, 8, 0.9, &mut rng_from_seed(21)).unwrap();
        let exact = exact::log_partition(&rbm).unwrap();
        let schedule = AisSchedule::linear(10).unwrap();
        let base = vec![0.0f32; 24];
        let (runs, chains) = (40, 8);
        let mut fwd = Vec::new();
        let mut rev = Vec::new();
        for r in 0..runs {
            fwd.push(
                ais_log_partition(&rbm, &base, &schedule, chains, r)
                    .unwrap()
                    .log_z,
            );
            let start = exact::sample(&rbm, chains, &mut rng_from_seed(1000 + r)).unwrap();
            rev.push(
                reverse_ais_log_partition(&rbm, &base, &schedule, &start, r)
                    .unwrap()
                    .log_z,
            );
        }
        let mean_sem = |x: &[f64]| {
            let n = x.len() as f64;
            let m = x.iter().sum::<f64>() / n;
            let v = x.iter().map(|a| (a - m).powi(2)).sum::<f64>() / (n - 1.0);
            (m, (v / n).sqrt())
        };
        let (mf, sf) = mean_sem(&fwd);
        let (mr, sr) = mean_sem(&rev);
        assert!(
            mf + 2.0 * sf < exact,
            "forward {mf} ± {sf} vs exact {exact}"
        );
        assert!(
            mr - 2.0 * sr > exact,
            "reverse {mr} ± {sr} vs exact {exact}"
        );
    }

    #[test]
    fn reverse_rejects_bad_starts() {
        let rbm = Rbm::random(4, 2, 0.5, &mut rng_from_seed(1)).unwrap();
        let s = AisSchedule::linear(5).unwrap();
        let base = [0.0f32; 4];
        assert!(reverse_ais_log_partition(&rbm, &base, &s, &[0.0, 1.0, 0.5, 1.0], 1).is_err());
        assert!(reverse_ais_log_partition(&rbm, &base, &s, &[0.0, 1.0, 1.0], 1).is_err());
        assert!(reverse_ais_log_partition(&rbm, &base, &s, &[], 1).is_err());
    }
}
