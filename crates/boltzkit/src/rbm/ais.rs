//! Annealed importance sampling (Neal 2001) of an RBM's log-partition function from a
//! base-rate visible model (Salakhutdinov & Murray 2008), as used for the large-model
//! evaluations of Sec. 4 of the S-DCP paper.
//!
//! The intermediate unnormalized marginals, for `0 = β_0 < … < β_K = 1`, are
//! `ln p*_k(v) = (1 − β_k) b_Aᵀv + β_k bᵀv + Σ_j softplus(β_k (c_j + vᵀW_{:,j}))`, so that
//! `Z_0 = 2^{n_hidden} Π_i (1 + e^{b_A,i})` and `Z_K = Z`. Each chain starts with an exact
//! draw from the base model and moves by one block-Gibbs step at each `β_k`; its log-weight is
//! `Σ_k [ln p*_k(v_{k−1}) − ln p*_{k−1}(v_{k−1})]`. Chain `i` draws from
//! `derive_rng(seed, i)`, GEMMs are split by shape only and elementwise work runs in fixed
//! blocks of chains, so the estimate is the same bits for any thread count.

use super::gibbs::sample_bernoulli;
use super::model::Rbm;
use crate::error::{Error, Result};
use crate::linalg::{self, softplus_f64, Op};
use crate::rng::derive_rng;
use rayon::prelude::*;

/// Chains per parallel task of the elementwise work (the GEMMs are split by
/// [`linalg::sgemm_par`]).
const AIS_BLOCK: usize = 16;

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
        Ok(AisSchedule {
            betas: (0..=k).map(|i| i as f64 / k as f64).collect(),
        })
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

    /// The inverse temperatures `β_0 = 0, …, β_K = 1`.
    pub fn betas(&self) -> &[f64] {
        &self.betas
    }
}

/// The result of an AIS run.
#[derive(Debug, Clone, PartialEq)]
pub struct AisEstimate {
    /// `ln Ẑ = ln Z_0 + ln mean(w)`.
    pub log_z: f64,
    /// Standard error of `ln Ẑ` by the delta method: `sd(w) / (√M · mean(w))`.
    pub std_err: f64,
    /// `ln(mean(w) − 3·se(w)) + ln Z_0` (`−∞` when the interval reaches 0).
    pub log_z_lower: f64,
    /// `ln(mean(w) + 3·se(w)) + ln Z_0`.
    pub log_z_upper: f64,
    /// The log-weight of every chain.
    pub log_weights: Vec<f64>,
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
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    super::model::check_len("ais_log_partition", "base_b", base_b.len(), nv)?;
    if n_chains == 0 {
        return Err(Error::param("chains", "AIS needs at least one chain"));
    }
    let betas = schedule.betas();
    let base_prob: Vec<f32> = base_b.iter().map(|&b| linalg::fast_sigmoid(b)).collect();
    let db: Vec<f64> = rbm
        .b()
        .iter()
        .zip(base_b)
        .map(|(&b, &a)| f64::from(b) - f64::from(a))
        .collect();
    let m = n_chains;
    let mut rngs: Vec<_> = (0..m).map(|i| derive_rng(seed, i as u64)).collect();
    let mut v = vec![0f32; m * nv];
    for (row, rng) in v.chunks_exact_mut(nv).zip(rngs.iter_mut()) {
        sample_bernoulli(&base_prob, row, rng);
    }
    let mut x = vec![0f32; m * nh];
    let mut h = vec![0f32; m * nh];
    let mut pv = vec![0f32; m * nv];
    let mut log_weights = vec![0f64; m];
    for k in 1..betas.len() {
        let (b0, b1) = (betas[k - 1], betas[k]);
        let bf = b1 as f32;
        // x = V·W + c for all chains (parallel GEMM, split by shape only)
        linalg::sgemm_par(Op::N, Op::N, m, nh, nv, 1.0, &v, rbm.w(), 0.0, &mut x);
        linalg::add_row_bias(&mut x, rbm.c());
        // weight update ln p*_k(v) − ln p*_{k−1}(v), then h ~ σ(β_k x), per block of chains
        v.par_chunks(AIS_BLOCK * nv)
            .zip(x.par_chunks_mut(AIS_BLOCK * nh))
            .zip(h.par_chunks_mut(AIS_BLOCK * nh))
            .zip(rngs.par_chunks_mut(AIS_BLOCK))
            .zip(log_weights.par_chunks_mut(AIS_BLOCK))
            .for_each(|((((v, x), h), rngs), lw)| {
                for ((((vr, xr), hr), rng), l) in v
                    .chunks_exact(nv)
                    .zip(x.chunks_exact_mut(nh))
                    .zip(h.chunks_exact_mut(nh))
                    .zip(rngs.iter_mut())
                    .zip(lw.iter_mut())
                {
                    let lin: f64 = vr.iter().zip(&db).map(|(&vi, &d)| f64::from(vi) * d).sum();
                    let sp: f64 = xr
                        .iter()
                        .map(|&a| {
                            let a = f64::from(a);
                            softplus_f64(b1 * a) - softplus_f64(b0 * a)
                        })
                        .sum();
                    *l += (b1 - b0) * lin + sp;
                    xr.iter_mut().for_each(|a| *a *= bf);
                    linalg::sigmoid_inplace(xr);
                    sample_bernoulli(xr, hr, rng);
                }
            });
        // v ~ σ((1 − β) b_A + β (b + W h))
        linalg::sgemm_par(Op::N, Op::T, m, nv, nh, bf, &h, rbm.w(), 0.0, &mut pv);
        pv.par_chunks_mut(AIS_BLOCK * nv)
            .zip(v.par_chunks_mut(AIS_BLOCK * nv))
            .zip(rngs.par_chunks_mut(AIS_BLOCK))
            .for_each(|((pv, v), rngs)| {
                for ((pr, vr), rng) in pv
                    .chunks_exact_mut(nv)
                    .zip(v.chunks_exact_mut(nv))
                    .zip(rngs.iter_mut())
                {
                    for ((p, &b), &a) in pr.iter_mut().zip(rbm.b()).zip(base_b) {
                        *p += (1.0 - bf) * a + bf * b;
                    }
                    linalg::sigmoid_inplace(pr);
                    sample_bernoulli(pr, vr, rng);
                }
            });
    }
    let log_z0 = nh as f64 * std::f64::consts::LN_2
        + base_b
            .iter()
            .map(|&a| softplus_f64(f64::from(a)))
            .sum::<f64>();
    summarize(log_weights, log_z0)
}

/// `ln Ẑ`, its delta-method standard error and the ±3σ interval from log-weights.
fn summarize(log_weights: Vec<f64>, log_z0: f64) -> Result<AisEstimate> {
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
    let log_z = log_z0 + mx + mean.ln();
    let lower = mean - 3.0 * se;
    Ok(AisEstimate {
        log_z,
        std_err: se / mean,
        log_z_lower: if lower > 0.0 {
            log_z0 + mx + lower.ln()
        } else {
            f64::NEG_INFINITY
        },
        log_z_upper: log_z0 + mx + (mean + 3.0 * se).ln(),
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
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap();
            pool.install(|| ais_log_partition(&rbm, &base, &schedule, 100, 11).unwrap())
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
}
