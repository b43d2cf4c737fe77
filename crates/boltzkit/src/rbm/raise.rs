//! RAISE, the reverse AIS estimator of Burda, Grosse & Salakhutdinov (AISTATS 2015,
//! "Accurate and conservative estimates of MRF log-likelihood using reverse annealing"): a
//! per-test-vector estimate of `ln p(v)` that errs low in expectation.
//!
//! # What is estimated
//!
//! Forward AIS ([`super::ais`]) defines a generative model, the *annealing model*: draw
//! `v_0` from the base-rate model `p_0`, then apply the Gibbs transitions `T_1, …, T_K` of the
//! intermediate distributions `p_k ∝ p*_k` (`T_k`: `h ~ p_k(h | v)`, `v ~ p_k(v | h)`, which
//! leaves `p_k` invariant and is reversible with respect to it). Its joint is
//! `p_fwd(v_0, …, v_K) = p_0(v_0) Π_{k=1..K} T_k(v_k | v_{k−1})` and its marginal
//! `p_ann(v) = p_fwd(v_K = v)` is the annealing model's probability of `v`.
//!
//! RAISE walks the same chain backwards from the test vector: `v_K = v`, then
//! `v_{k−1} ~ T_k(· | v_k)` for `k = K, …, 1` (the first step, at `β_K = 1`, starts with
//! `h ~ p(h | v)` under the model). The reversal `T̃_k = T_k` (reversibility) makes the
//! importance weight of the backward path against `p_fwd`
//!
//! `w(v) = p_fwd(v_0, …, v_K) / Π_k T_k(v_{k−1} | v_k)
//!       = p*_K(v) / Z_0 · Π_{k=0..K−1} p*_k(v_k) / p*_{k+1}(v_k)`
//!
//! (the RAISE weight of Burda et al.; the index placement here is derived from the chain
//! above, the placement Upadhya & Sastry 2015, Eq. 10, give), with `E[w(v)] = p_ann(v)`
//! exactly: the backward path is a proposal for the forward chain's path given its end. With the hidden units summed out (`p*_k` the visible marginals of
//! [`super::ais`]), `ln p̂(v) = ln p*(v) − ln Z_0 + Σ_{k=0..K−1} [ln p*_k(v_k) − ln p*_{k+1}(v_k)]`:
//! the unnormalized model log-probability minus the base model's log-partition plus the
//! log-weight the annealing kernel accumulates on the way down. With `M` chains per vector,
//! `ln p̂(v) = ln mean_m w_m(v)`.
//!
//! # The guarantee and its limits
//!
//! - By Jensen's inequality `E[ln p̂(v)] ≤ ln E[p̂(v)] = ln p_ann(v)`: for each vector, and for
//!   the average over a test set (the average of the per-vector logarithms, never the
//!   logarithm of a pooled mean), RAISE is a *stochastic lower bound on the log-likelihood of
//!   the annealing model*, not of the RBM. It is conservative for the RBM only to the extent
//!   that `p_ann(v) ≤ p(v)` on the test vectors, which holds when the annealing model is a
//!   worse model of the data than the RBM (the usual case: the paper finds RAISE below the
//!   truth in all its exact comparisons) and can fail when, say, the chain with few steps does
//!   not reach a spurious mode of the RBM and so puts more mass near the data than the RBM.
//! - `p_ann → p` as the number of steps grows (each `T_k` then keeps the chain at
//!   equilibrium of `p_k`, so `v_K ~ p_K = p`); the gap `ln p_ann(v) − ln p̂(v)` and the
//!   variance of `ln w` shrink with it. The bound is tight only in that limit.
//! - The weights are the ones of forward AIS's own chain, so [`super::ais::ais_log_partition`]
//!   with the same schedule and base estimates the `ln Z` of the same path; its
//!   log-likelihood is optimistic in expectation for the RBM itself (Jensen on an unbiased
//!   `Ẑ`). Together they give the bracket of [`super::loglik`].
//!
//! # The average over a test set
//!
//! [`RaiseRun::average`] reports `mean_{all N rows}(−F(v)) − ln Z_0 + mean_{scored rows}(ℓ_i)`
//! with `ℓ_i = ln mean_m w_m(v_i)`: the exact data term over the whole set plus the
//! sampled part over the scored rows (all rows, or a seeded random subset). Over a random
//! subset this is unbiased for the whole set's mean of `E[ln p̂(v)]`, so the bound holds for
//! the whole test set. Its standard error `sd(ℓ_i) / √n` counts the chains' noise and, with a
//! subset, the subsampling error (the spread of `ℓ_i` across vectors); with every row scored
//! it overstates the chains' noise by that spread, which is small when `p_ann ≈ p` (then
//! `ℓ_i ≈ ln Z_0 − ln Z` for every `v`).
//!
//! Chain `m` of row `r` draws from `derive_rng(derive_seed(seed, r), m)`: the same bits for
//! any thread count, any batching and any subset containing `r`.

use super::ais::{anneal, base_log_partition, AisSchedule};
use super::model::{check_len, fill_batch, Rbm};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::estimate::{Estimate, Method};
use crate::fit::Interrupt;
use crate::linalg::log_sum_exp;
use crate::rng::{derive_rng, derive_seed, rng_from_seed};

/// Chains annealed together in one call of the kernel (bounds the memory of a large test set).
const RAISE_BATCH: usize = 4096;

/// The per-vector results of a RAISE run.
#[derive(Debug, Clone, PartialEq)]
pub struct RaiseRun {
    /// The scored rows of the data set, increasing.
    pub rows: Vec<usize>,
    /// Chains per row `M`.
    pub chains: usize,
    /// `ln Z_0` of the base-rate model.
    pub log_z0: f64,
    /// `ln p*(v) = −F(v)` of each scored row.
    pub neg_free_energy: Vec<f64>,
    /// The kernel's log-weights `Σ_{k<K} [ln p*_k(v_k) − ln p*_{k+1}(v_k)]`, `rows × M`,
    /// row-major.
    pub log_weights: Vec<f64>,
}

impl RaiseRun {
    /// `ℓ_i = ln mean_m exp(log_weights[i, m])` of each scored row.
    pub fn log_mean_weights(&self) -> Vec<f64> {
        let ln_m = (self.chains as f64).ln();
        self.log_weights
            .chunks_exact(self.chains)
            .map(|w| log_sum_exp(w) - ln_m)
            .collect()
    }

    /// The per-vector estimates `ln p̂(v_i) = −F(v_i) − ln Z_0 + ℓ_i`, each below
    /// `ln p_ann(v_i)` in expectation.
    pub fn log_probs(&self) -> Vec<f64> {
        self.log_mean_weights()
            .iter()
            .zip(&self.neg_free_energy)
            .map(|(l, f)| f - self.log_z0 + l)
            .collect()
    }

    /// The average log-likelihood of the whole data set (module docs): `mean_all_neg_f` is the
    /// mean `−F(v)` over all its rows (e.g. [`super::mean_neg_free_energy`]); the interval is
    /// the estimate ± 3 standard errors. With one scored row the standard error is unknown
    /// (`+∞`).
    pub fn average(&self, mean_all_neg_f: f64) -> Estimate {
        let l = self.log_mean_weights();
        let n = l.len() as f64;
        let mean = l.iter().sum::<f64>() / n;
        let se = if l.len() > 1 {
            let var = l.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
            (var / n).sqrt()
        } else {
            f64::INFINITY
        };
        let value = mean_all_neg_f - self.log_z0 + mean;
        Estimate {
            value,
            stderr: se,
            lower: value - 3.0 * se,
            upper: value + 3.0 * se,
            method: Method::Raise,
        }
    }
}

/// The rows RAISE scores: all `n_rows` rows, or `subset` of them drawn without replacement
/// by the generator of `seed` (all of them when `subset ≥ n_rows`), increasing.
pub fn raise_rows(n_rows: usize, subset: Option<usize>, seed: u64) -> Result<Vec<usize>> {
    match subset {
        Some(0) => Err(Error::param(
            "raise_vectors",
            "RAISE needs at least one test vector",
        )),
        Some(n) if n < n_rows => {
            let mut rows = rand::seq::index::sample(&mut rng_from_seed(seed), n_rows, n).into_vec();
            rows.sort_unstable();
            Ok(rows)
        }
        _ => Ok((0..n_rows).collect()),
    }
}

/// RAISE (module docs) for the rows `rows` of the binary `data`: `chains ≥ 1` reverse chains
/// per row over `schedule`, from the base-rate model with visible biases `base_b`.
///
/// ```
/// use boltzkit::data::Dataset;
/// use boltzkit::rbm::ais::AisSchedule;
/// use boltzkit::rbm::raise::raise;
/// use boltzkit::rbm::{exact, mean_neg_free_energy, Rbm};
/// use boltzkit::rng::rng_from_seed;
/// let rbm = Rbm::random(12, 4, 0.3, &mut rng_from_seed(1))?;
/// let bits: Vec<u8> = exact::sample(&rbm, 50, &mut rng_from_seed(2))?
///     .iter().map(|&x| x as u8).collect();
/// let data = Dataset::from_flat(bits, 12, vec![2; 12])?;
/// let rows: Vec<usize> = (0..50).collect();
/// let run = raise(&rbm, &vec![0.0; 12], &AisSchedule::linear(200)?, &data, &rows, 4, 7)?;
/// let est = run.average(mean_neg_free_energy(&rbm, &data)?);
/// let truth = exact::average_log_likelihood(&rbm, &data)?;
/// assert!((est.value - truth).abs() < 0.05 + 3.0 * est.stderr);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn raise(
    rbm: &Rbm,
    base_b: &[f32],
    schedule: &AisSchedule,
    data: &Dataset,
    rows: &[usize],
    chains: usize,
    seed: u64,
) -> Result<RaiseRun> {
    raise_run(rbm, base_b, schedule, data, rows, chains, seed, None)
}

/// [`raise`] that stops, with [`Error::Interrupted`] and no estimate, at the next temperature
/// once `interrupt` is set (e.g. by Ctrl-C); the same bits as [`raise`] when it is not.
#[allow(clippy::too_many_arguments)]
pub fn raise_with_interrupt(
    rbm: &Rbm,
    base_b: &[f32],
    schedule: &AisSchedule,
    data: &Dataset,
    rows: &[usize],
    chains: usize,
    seed: u64,
    interrupt: &Interrupt,
) -> Result<RaiseRun> {
    raise_run(
        rbm,
        base_b,
        schedule,
        data,
        rows,
        chains,
        seed,
        Some(interrupt),
    )
}

/// RAISE, stopped by `interrupt` when given.
#[allow(clippy::too_many_arguments)]
pub(super) fn raise_run(
    rbm: &Rbm,
    base_b: &[f32],
    schedule: &AisSchedule,
    data: &Dataset,
    rows: &[usize],
    chains: usize,
    seed: u64,
    interrupt: Option<&Interrupt>,
) -> Result<RaiseRun> {
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    check_len("raise", "base_b", base_b.len(), nv)?;
    super::exact::check_data_for(rbm, data, "RAISE")?;
    if chains == 0 {
        return Err(Error::param(
            "raise_chains",
            "RAISE needs at least one chain per vector",
        ));
    }
    if rows.is_empty() {
        return Err(Error::param(
            "raise_vectors",
            "RAISE needs at least one test vector",
        ));
    }
    if let Some(&r) = rows.iter().find(|&&r| r >= data.n_samples()) {
        return Err(Error::param(
            "rows",
            format!("row {r} is past the {} rows of the data", data.n_samples()),
        ));
    }
    super::ais::check_annealing(
        "RAISE",
        rbm,
        schedule.steps(),
        rows.len().saturating_mul(chains),
    )?;
    // β = 1 twice, then down: the first step adds 0 and moves v by T_K (at β = 1), each later
    // step from β_{k+1} to β_k adds ln p*_k(v_k) − ln p*_{k+1}(v_k) and moves v by T_k; the
    // last move (at β_0) does not enter the weight.
    let betas: Vec<f64> = std::iter::once(1.0)
        .chain(schedule.betas().iter().rev().copied())
        .collect();
    let per_batch = (RAISE_BATCH / chains).max(1);
    let mut neg_free_energy = Vec::with_capacity(rows.len());
    let mut log_weights = Vec::with_capacity(rows.len() * chains);
    for batch in rows.chunks(per_batch) {
        let mut v = vec![0f32; batch.len() * nv];
        fill_batch(data, batch, &mut v)?;
        let mut f = vec![0f64; batch.len()];
        let mut scratch = vec![0f32; batch.len() * nh];
        rbm.free_energy_batch(&v, &mut f, &mut scratch)?;
        neg_free_energy.extend(f.iter().map(|x| -x));
        let starts: Vec<f32> = v
            .chunks_exact(nv)
            .flat_map(|row| std::iter::repeat_n(row, chains).flatten().copied())
            .collect();
        let rngs = batch
            .iter()
            .flat_map(|&r| {
                let s = derive_seed(seed, r as u64);
                (0..chains as u64).map(move |m| derive_rng(s, m))
            })
            .collect();
        log_weights.extend(anneal(rbm, base_b, &betas, starts, rngs, interrupt)?);
    }
    Ok(RaiseRun {
        rows: rows.to_vec(),
        chains,
        log_z0: base_log_partition(rbm, base_b),
        neg_free_energy,
        log_weights,
    })
}

#[cfg(test)]
mod tests;
