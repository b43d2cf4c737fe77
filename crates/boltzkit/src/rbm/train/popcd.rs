//! Population contrastive divergence, pop-CD-k (Krause, Fischer & Igel, *Population-Contrastive-
//! Divergence*; Sec. 3, Eq. 8, Algorithm 1): CD-k's negative samples, importance-weighted.
//!
//! For each row `v_i` of a batch of `ℓ`, CD-k's chain draws `h′_i` (after `k − 1` full steps)
//! and `v′_i ~ p(v | h′_i)`. pop-CD weights `v′_i` by `ω_i = p̃(v′_i) / p(v′_i | h′_i)`, with
//! `p̃(v) = Σ_h e^{−E(v,h)} = e^{−F(v)}`, and replaces CD's negative mean by
//! `Σ_i ω_i E[∂E/∂θ | v′_i] / Σ_j ω_j` (Eq. 8), or by the leave-one-out form
//! `((ℓ−1)/ℓ) Σ_i ω_i E[∂E/∂θ | v′_i] / Σ_{j≠i} ω_j` (Eq. 9).
//!
//! The code is CD's: [`Cd::sample`] does the sampling, [`Gradient::set_weighted_difference`]
//! the statistics with relative weights `r_i` (mean one); with `r ≡ 1` ([`Weighting::Unit`], or
//! a batch of one) the result is CD-k's, bit for bit. The extra work per batch (Sec. 3.1) is
//! the log-weights: `ln ω_i = bᵀv′_i + Σ_j softplus(x_ij) − ln p(v′_i | h′_i)` with
//! `x_i = c + Wᵀv′_i`, the hidden input that `p(h | v′_i)` needs anyway (so `W v′` is reused,
//! and the softplus terms come from `p(h | v′)` itself), and `p(v′ | h′)` from the visible
//! probabilities the last half-step left; weights are kept as logarithms and normalized by
//! log-sum-exp (max-shifted).

use super::cd::Cd;
use super::gradient::{Gradient, GradientEstimator};
use super::update::{restore_json, save_json};
use crate::error::{Error, Result};
use crate::linalg;
use crate::rbm::model::check_len;
use crate::rbm::{GibbsChains, Rbm};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// How the negative samples are weighted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Weighting {
    /// Self-normalized importance weights `r_i = ℓ ω_i / Σ_j ω_j` (Eq. 8): pop-CD.
    #[default]
    SelfNormalized,
    /// Leave-one-out weights `r_i = (ℓ − 1) ω_i / Σ_{j≠i} ω_j` (Eq. 9); needs `ℓ ≥ 2`. Only the
    /// length of the negative term is then biased, but it varies much more (Sec. 3.2).
    LeaveOneOut,
    /// Every `ω_i = 1`: CD-k, through pop-CD's code (the paper's remark after Eq. 8).
    Unit,
}

/// pop-CD-k: a [`GradientEstimator`] that is CD-k with importance-weighted negative samples.
///
/// Chains are seeded as [`Cd`]'s (same seed, same samples as CD-k). [`GradientEstimator::report`]
/// gives the effective sample size `(Σ ω)² / Σ ω²` of the batches since the last report.
///
/// ```
/// use boltzkit::rbm::train::{Cd, Gradient, GradientEstimator, PopCd, Weighting};
/// use boltzkit::rbm::Rbm;
/// use boltzkit::rng::rng_from_seed;
/// let rbm = Rbm::random(4, 3, 0.5, &mut rng_from_seed(1))?;
/// let v = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]; // batch of 3
/// let mut pop = PopCd::new(1, 7)?;
/// let mut g = Gradient::like(&rbm);
/// pop.estimate(&rbm, &v, &mut g)?;
/// let ess = pop.last_ess();
/// assert!(ess >= 1.0 && ess <= 3.0);
/// // with unit weights it is CD-1, bit for bit
/// let mut unit = PopCd::new(1, 7)?.weighting(Weighting::Unit);
/// let mut cd = Cd::new(1, 7)?;
/// let (mut a, mut b) = (Gradient::like(&rbm), Gradient::like(&rbm));
/// unit.estimate(&rbm, &v, &mut a)?;
/// cd.estimate(&rbm, &v, &mut b)?;
/// assert_eq!(a, b);
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PopCd {
    cd: Cd,
    weighting: Weighting,
    #[serde(skip)] // scratch, overwritten by every estimate
    x: Vec<f32>,
    #[serde(skip)]
    p_neg: Vec<f32>,
    #[serde(skip)]
    log_w: Vec<f64>,
    #[serde(skip)]
    r: Vec<f32>,
    // diagnostics only (NaN / ∞ have no JSON form): a restored estimator starts a new period
    #[serde(skip, default = "nan")]
    last_ess: f64,
    #[serde(skip, default = "EssStats::empty")]
    ess: EssStats,
}

fn nan() -> f64 {
    f64::NAN
}

/// Effective sample sizes of the batches since the last report.
#[derive(Debug, Clone, Copy)]
struct EssStats {
    batches: u64,
    sum: f64,
    sum_frac: f64,
    min_frac: f64,
}

impl EssStats {
    const EMPTY: EssStats = EssStats {
        batches: 0,
        sum: 0.0,
        sum_frac: 0.0,
        min_frac: f64::INFINITY,
    };

    fn empty() -> Self {
        EssStats::EMPTY
    }
}

impl PopCd {
    /// pop-CD-k with self-normalized weights (Eq. 8), `k ≥ 1`, chains seeded as [`Cd::new`]`(k, seed)`.
    pub fn new(k: usize, seed: u64) -> Result<Self> {
        Ok(PopCd {
            cd: Cd::new(k, seed)?,
            weighting: Weighting::SelfNormalized,
            x: Vec::new(),
            p_neg: Vec::new(),
            log_w: Vec::new(),
            r: Vec::new(),
            last_ess: f64::NAN,
            ess: EssStats::EMPTY,
        })
    }

    /// Sets the weighting (default [`Weighting::SelfNormalized`]).
    pub fn weighting(mut self, w: Weighting) -> Self {
        self.weighting = w;
        self
    }

    /// The Gibbs steps per estimate.
    pub fn k(&self) -> usize {
        self.cd.k()
    }

    /// The chains after the last estimate: `v′` is their visible state, `h′` their hidden one.
    pub fn chains(&self) -> Option<&GibbsChains> {
        self.cd.chains()
    }

    /// `ln ω_i` of the last batch (empty before the first estimate, and with unit weights).
    pub fn log_weights(&self) -> &[f64] {
        &self.log_w
    }

    /// The effective sample size `(Σ ω)² / Σ ω²` of the last batch (`ℓ` with unit weights,
    /// NaN before the first estimate).
    pub fn last_ess(&self) -> f64 {
        self.last_ess
    }
}

impl GradientEstimator for PopCd {
    fn save_state(&self) -> Result<Option<serde_json::Value>> {
        save_json(self)
    }

    fn restore_state(&mut self, state: serde_json::Value) -> Result<()> {
        restore_json(self, state, "pop-CD")
    }

    fn estimate(&mut self, rbm: &Rbm, v: &[f32], grad: &mut Gradient) -> Result<()> {
        self.cd.sample(rbm, v)?;
        let Some(chains) = self.cd.chains() else {
            return Err(Error::Internal("no chains after sampling".into()));
        };
        let rows = chains.n_chains();
        let nh = rbm.n_hidden();
        self.x.resize(rows * nh, 0.0);
        self.p_neg.resize(rows * nh, 0.0);
        self.r.resize(rows, 1.0);
        // W v′ once: the hidden input gives both p(h | v′) (as Rbm::hidden_probs) and p̃(v′)
        rbm.hidden_input(chains.visible(), &mut self.x)?;
        self.p_neg.copy_from_slice(&self.x);
        linalg::sigmoid_inplace(&mut self.p_neg);
        let ess = if self.weighting == Weighting::Unit {
            self.log_w.clear();
            self.r.fill(1.0);
            rows as f64
        } else {
            self.log_w.resize(rows, 0.0);
            log_weights(
                rbm,
                chains.visible(),
                &self.x,
                &self.p_neg,
                chains.visible_probs(),
                &mut self.log_w,
            )?;
            relative_weights(&self.log_w, self.weighting, &mut self.r)?
        };
        self.last_ess = ess;
        self.ess.batches += 1;
        self.ess.sum += ess;
        self.ess.sum_frac += ess / rows as f64;
        self.ess.min_frac = self.ess.min_frac.min(ess / rows as f64);
        grad.set_weighted_difference(
            rbm,
            v,
            self.cd.positive_probs(),
            chains.visible(),
            &mut self.p_neg,
            &self.r,
        )
    }

    /// `popcd_ess` (mean effective sample size per batch), `popcd_ess_frac` (its mean
    /// fraction of the batch size) and `popcd_ess_frac_min`, over the batches since the last
    /// report.
    fn report(&mut self, out: &mut BTreeMap<String, f64>) {
        let s = std::mem::replace(&mut self.ess, EssStats::EMPTY);
        if s.batches == 0 {
            return;
        }
        let n = s.batches as f64;
        out.insert("popcd_ess".into(), s.sum / n);
        out.insert("popcd_ess_frac".into(), s.sum_frac / n);
        out.insert("popcd_ess_frac_min".into(), s.min_frac);
    }
}

/// The log importance weights of Eq. 8, `ln ω_i = ln p̃(v′_i) − ln p(v′_i | h′_i)`, for a batch
/// of negative samples `v_neg` (`ℓ × n_visible`, 0/1) into `out` (length `ℓ`):
/// `ln p̃(v′) = bᵀv′ + Σ_j softplus(x_j)` from the hidden input `x_neg = c + Wᵀv′`
/// ([`Rbm::hidden_input`], `ℓ × n_hidden`) and `ph_neg = σ(x_neg)` (`p(h = 1 | v′)`, which the
/// statistics need anyway), and `p(v′ | h′)` from `pv_neg = p(v = 1 | h′)` (`ℓ × n_visible`),
/// the probabilities `v′` was drawn with. Accurate to about `1e-6` per unit (`f32`
/// logarithms, `f64` sums).
pub fn log_weights(
    rbm: &Rbm,
    v_neg: &[f32],
    x_neg: &[f32],
    ph_neg: &[f32],
    pv_neg: &[f32],
    out: &mut [f64],
) -> Result<()> {
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    let rows = out.len();
    check_len("popcd::log_weights", "v_neg", v_neg.len(), rows * nv)?;
    check_len("popcd::log_weights", "pv_neg", pv_neg.len(), rows * nv)?;
    check_len("popcd::log_weights", "x_neg", x_neg.len(), rows * nh)?;
    check_len("popcd::log_weights", "ph_neg", ph_neg.len(), rows * nh)?;
    // rows are independent, so the parallel split does not change any result
    out.par_iter_mut()
        .zip(v_neg.par_chunks_exact(nv))
        .zip(pv_neg.par_chunks_exact(nv))
        .zip(x_neg.par_chunks_exact(nh))
        .zip(ph_neg.par_chunks_exact(nh))
        .with_min_len(16)
        .for_each(|((((o, v), p), x), ph)| {
            *o = linalg::linear_minus_bernoulli_log_prob(rbm.b(), p, v)
                + linalg::softplus_sum_given_sigmoid(x, ph);
        });
    Ok(())
}

/// Relative weights `r_i` (mean one over the batch) from log-weights `log_w`, by the rule of
/// `weighting` (max-shifted, so any finite log-weights work); returns the effective sample
/// size `(Σ ω)² / Σ ω²` of the batch (of the self-normalized weights, whatever the rule).
///
/// Leave-one-out (Eq. 9): `r_i = (ℓ − 1) ω_i / Σ_{j≠i} ω_j`, the sums over `j ≠ i` formed
/// without cancellation (shifted by the largest other weight). A sample that dominates the
/// others by more than `f32` range gives an infinite `r_i`: the estimator's variance made
/// visible (the training loop's divergence guard stops on it).
pub fn relative_weights(log_w: &[f64], weighting: Weighting, r: &mut [f32]) -> Result<f64> {
    let l = log_w.len();
    check_len("popcd::relative_weights", "r", r.len(), l)?;
    if l == 0 {
        return Err(Error::param("batch", "empty mini-batch"));
    }
    if let Some(i) = log_w.iter().position(|x| x.is_nan() || *x == f64::INFINITY) {
        return Err(Error::Numerical {
            context: "pop-CD importance weights".into(),
            detail: format!("ln ω[{i}] = {}", log_w[i]),
        });
    }
    // argmax and max; weights shifted by it lie in [0, 1], the largest exactly 1
    let (arg, m) =
        log_w.iter().enumerate().fold(
            (0, f64::NEG_INFINITY),
            |(a, m), (i, &x)| {
                if x > m {
                    (i, x)
                } else {
                    (a, m)
                }
            },
        );
    let (mut s, mut s2) = (0f64, 0f64);
    for &x in log_w {
        let e = (x - m).exp();
        s += e;
        s2 += e * e;
    }
    let ess = s * s / s2;
    match weighting {
        Weighting::Unit => r.fill(1.0),
        Weighting::SelfNormalized => {
            for (ri, &x) in r.iter_mut().zip(log_w) {
                *ri = (l as f64 * (x - m).exp() / s) as f32;
            }
        }
        Weighting::LeaveOneOut => {
            if l < 2 {
                return Err(Error::param(
                    "loo",
                    "the leave-one-out weights (Eq. 9) need a batch of at least 2",
                ));
            }
            let others = (l - 1) as f64;
            for (i, (ri, &x)) in r.iter_mut().zip(log_w).enumerate() {
                if i != arg {
                    // Σ_{j≠i} e_j = s − e_i ≥ 1 (the maximum stays in): no cancellation
                    let e = (x - m).exp();
                    *ri = (others * e / (s - e)) as f32;
                }
            }
            // the maximum's sum over the others, shifted by the second largest
            let m2 = log_w
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != arg)
                .fold(f64::NEG_INFINITY, |a, (_, &x)| a.max(x));
            let s_other: f64 = log_w
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != arg)
                .map(|(_, &x)| (x - m2).exp())
                .sum();
            r[arg] = (others * (m - m2).exp() / s_other) as f32;
        }
    }
    Ok(ess)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Dataset;
    use crate::linalg::{log_sum_exp, softplus_f64};
    use crate::rbm::exact;
    use crate::rbm::sample_bernoulli;
    use crate::rbm::testutil::{all_states, random_batches};
    use crate::rbm::train::SgdParams;
    use crate::rng::rng_from_seed;
    use rand::Rng;

    /// Unit weights through pop-CD's code give CD-k bit for bit at the same seed (estimates
    /// and a run of SGD updates); so does Eq. 8 with a batch of one. The importance weights do
    /// change the estimate otherwise.
    #[test]
    fn unit_weights_are_cd_bit_for_bit() {
        let rbm0 = Rbm::random(7, 5, 0.6, &mut rng_from_seed(4)).unwrap();
        for k in [1, 3] {
            let data = random_batches(6, 9, 7, 10 + k as u64);
            let sgd = SgdParams::new().learning_rate(0.3).momentum(0.5);
            let (mut a, mut b) = (rbm0.clone(), rbm0.clone());
            let (mut sa, mut sb) = (sgd.check().unwrap(), sgd.check().unwrap());
            let mut pop = PopCd::new(k, 21).unwrap().weighting(Weighting::Unit);
            let mut cd = Cd::new(k, 21).unwrap();
            let (mut ga, mut gb) = (Gradient::like(&a), Gradient::like(&b));
            for v in &data {
                pop.estimate(&a, v, &mut ga).unwrap();
                cd.estimate(&b, v, &mut gb).unwrap();
                assert_eq!(ga, gb);
                sa.step(&mut a, &ga).unwrap();
                sb.step(&mut b, &gb).unwrap();
            }
            assert_eq!(a, b);
            assert_eq!(pop.last_ess(), 9.0);

            // ℓ = 1: the self-normalized weight is 1
            let mut pop1 = PopCd::new(k, 5).unwrap();
            let mut cd1 = Cd::new(k, 5).unwrap();
            for v in &data {
                pop1.estimate(&rbm0, &v[..7], &mut ga).unwrap();
                cd1.estimate(&rbm0, &v[..7], &mut gb).unwrap();
                assert_eq!(ga, gb);
            }

            // the weights matter: Eq. 8 on a batch of 9 differs from CD
            let mut popw = PopCd::new(k, 21).unwrap();
            let mut cdw = Cd::new(k, 21).unwrap();
            popw.estimate(&rbm0, &data[0], &mut ga).unwrap();
            cdw.estimate(&rbm0, &data[0], &mut gb).unwrap();
            assert_ne!(ga, gb);
            assert_eq!(
                popw.chains().unwrap().visible(),
                cdw.chains().unwrap().visible()
            );
        }
    }

    /// ln ω = ln p̃(v′) − ln p(v′ | h′) against the enumerated joint of a tiny RBM, for the
    /// samples and hidden states the estimator's chains actually drew.
    #[test]
    fn importance_weights_match_brute_force() {
        let (nv, nh, rows) = (4, 3, 6);
        let rbm = Rbm::random(nv, nh, 1.2, &mut rng_from_seed(8)).unwrap();
        let v = &random_batches(1, rows, nv, 3)[0];
        for k in [1, 2, 5] {
            let mut pop = PopCd::new(k, 30 + k as u64).unwrap();
            let mut g = Gradient::like(&rbm);
            pop.estimate(&rbm, v, &mut g).unwrap();
            let chains = pop.chains().unwrap();
            let to_u8 = |x: &[f32]| x.iter().map(|&a| a as u8).collect::<Vec<u8>>();
            for i in 0..rows {
                let vp = to_u8(&chains.visible()[i * nv..(i + 1) * nv]);
                let hp = to_u8(&chains.hidden()[i * nh..(i + 1) * nh]);
                let ln_ptilde = log_sum_exp(
                    &all_states(nh)
                        .iter()
                        .map(|h| -rbm.energy(&vp, h).unwrap())
                        .collect::<Vec<_>>(),
                );
                let ln_norm = log_sum_exp(
                    &all_states(nv)
                        .iter()
                        .map(|x| -rbm.energy(x, &hp).unwrap())
                        .collect::<Vec<_>>(),
                );
                let ln_cond = -rbm.energy(&vp, &hp).unwrap() - ln_norm;
                let want = ln_ptilde - ln_cond;
                let got = pop.log_weights()[i];
                assert!((got - want).abs() < 1e-5, "k={k} row {i}: {got} vs {want}");
            }
            let w: Vec<f64> = pop.log_weights().iter().map(|x| x.exp()).collect();
            let ess = w.iter().sum::<f64>().powi(2) / w.iter().map(|x| x * x).sum::<f64>();
            assert!((pop.last_ess() - ess).abs() < 1e-9 * ess);
        }
    }

    /// Draws `n` hidden states exactly from the marginal p(h) of a tiny RBM, then
    /// `v′ ~ p(v | h′)`: returns (v′, p(v = 1 | h′)).
    fn exact_proposals(rbm: &Rbm, n: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let hs = all_states(nh);
        let log_p: Vec<f64> = hs
            .iter()
            .map(|h| {
                let lin: f64 = (0..nh)
                    .map(|j| f64::from(h[j]) * f64::from(rbm.c()[j]))
                    .sum();
                lin + (0..nv)
                    .map(|i| {
                        let a = f64::from(rbm.b()[i])
                            + (0..nh)
                                .map(|j| f64::from(h[j]) * f64::from(rbm.w()[i * nh + j]))
                                .sum::<f64>();
                        softplus_f64(a)
                    })
                    .sum::<f64>()
            })
            .collect();
        let lz = log_sum_exp(&log_p);
        let mut cdf = Vec::new();
        let mut acc = 0.0;
        for lp in &log_p {
            acc += (lp - lz).exp();
            cdf.push(acc);
        }
        let mut rng = rng_from_seed(seed);
        let mut h = vec![0f32; n * nh];
        for row in h.chunks_exact_mut(nh) {
            let u: f64 = rng.random::<f64>() * acc;
            let s = cdf.partition_point(|&c| c <= u).min(hs.len() - 1);
            row.iter_mut()
                .zip(&hs[s])
                .for_each(|(o, &b)| *o = f32::from(b));
        }
        let mut pv = vec![0f32; n * nv];
        rbm.visible_probs(&h, &mut pv).unwrap();
        let mut v = vec![0f32; n * nv];
        sample_bernoulli(&pv, &mut v, &mut rng);
        (v, pv)
    }

    /// With h′ drawn exactly from p(h) the estimator of Eq. 8 (and of Eq. 9) converges to the
    /// exact gradient as ℓ grows: the largest error over the parameters falls like 1/√ℓ
    /// (seeded run: 0.081, 0.031, 0.0085, 0.0031 at ℓ = 200, 2,000, 20,000, 200,000), and is
    /// required below 0.01 at ℓ = 200,000 (the exact gradient by enumeration).
    #[test]
    fn self_normalized_estimate_converges_to_the_exact_gradient() {
        let (nv, nh) = (5, 3);
        let rbm = Rbm::random(nv, nh, 1.0, &mut rng_from_seed(12)).unwrap();
        let pos = &random_batches(1, 8, nv, 2)[0];
        let data =
            Dataset::from_flat(pos.iter().map(|&x| x as u8).collect(), nv, vec![2; nv]).unwrap();
        let want = exact::log_likelihood_gradient(&rbm, &data).unwrap();
        let mut p_pos = vec![0f32; 8 * nh];
        rbm.hidden_probs(pos, &mut p_pos).unwrap();
        let max_err = |g: &Gradient| {
            g.w.iter()
                .zip(&want.w)
                .chain(g.b.iter().zip(&want.b))
                .chain(g.c.iter().zip(&want.c))
                .map(|(&a, &b)| (f64::from(a) - b).abs())
                .fold(0.0, f64::max)
        };
        let mut errs = Vec::new();
        for (t, &l) in [200usize, 2_000, 20_000, 200_000].iter().enumerate() {
            let (v, pv) = exact_proposals(&rbm, l, 40 + t as u64);
            let mut x = vec![0f32; l * nh];
            rbm.hidden_input(&v, &mut x).unwrap();
            let mut p_neg = x.clone();
            linalg::sigmoid_inplace(&mut p_neg);
            let mut lw = vec![0f64; l];
            log_weights(&rbm, &v, &x, &p_neg, &pv, &mut lw).unwrap();
            let mut g = Gradient::like(&rbm);
            let mut errs_here = Vec::new();
            for w in [Weighting::SelfNormalized, Weighting::LeaveOneOut] {
                let mut r = vec![0f32; l];
                relative_weights(&lw, w, &mut r).unwrap();
                let mut p = p_neg.clone();
                g.set_weighted_difference(&rbm, pos, &p_pos, &v, &mut p, &r)
                    .unwrap();
                errs_here.push(max_err(&g));
            }
            errs.push(errs_here);
        }
        let last = &errs[3];
        assert!(last[0] < 0.01 && last[1] < 0.01, "{errs:?}");
        assert!(errs[0][0] > 5.0 * last[0], "no convergence: {errs:?}");
        // unweighted samples of p(v | h′) with h′ ~ p(h) are exact draws too, but CD-1 from
        // the data is not: its error stays, pop-CD's goes (Sec. 3.2)
        let mut cd_err = 0.0;
        let mut cd = Cd::new(1, 3).unwrap();
        let big: Vec<f32> = pos.iter().cycle().take(8 * nv * 5_000).copied().collect();
        let mut g = Gradient::like(&rbm);
        cd.estimate(&rbm, &big, &mut g).unwrap();
        cd_err += max_err(&g);
        assert!(
            cd_err > 5.0 * last[0],
            "CD-1 {cd_err} vs pop-CD {}",
            last[0]
        );
    }

    #[test]
    fn relative_weight_rules() {
        let lw = [0.3, -1.2, 2.0, 0.0];
        let w: Vec<f64> = lw.iter().map(|x: &f64| x.exp()).collect();
        let s: f64 = w.iter().sum();
        let mut r = [0f32; 4];
        let ess = relative_weights(&lw, Weighting::SelfNormalized, &mut r).unwrap();
        for i in 0..4 {
            assert!((f64::from(r[i]) - 4.0 * w[i] / s).abs() < 1e-6);
        }
        assert!((ess - s * s / w.iter().map(|x| x * x).sum::<f64>()).abs() < 1e-12);
        relative_weights(&lw, Weighting::LeaveOneOut, &mut r).unwrap();
        for i in 0..4 {
            assert!(
                (f64::from(r[i]) - 3.0 * w[i] / (s - w[i])).abs() < 1e-5,
                "{i}"
            );
        }
        relative_weights(&lw, Weighting::Unit, &mut r).unwrap();
        assert_eq!(r, [1.0; 4]);
        // shift invariance: log-weights far outside exp's range
        let big = [1000.0, 1000.0 + 2f64.ln(), -1000.0];
        let mut r3 = [0f32; 3];
        let ess = relative_weights(&big, Weighting::SelfNormalized, &mut r3).unwrap();
        assert!((r3[0] - 1.0).abs() < 1e-6 && (r3[1] - 2.0).abs() < 1e-6 && r3[2] == 0.0);
        assert!((ess - 9.0 / 5.0).abs() < 1e-12);
        relative_weights(&big, Weighting::LeaveOneOut, &mut r3).unwrap();
        // r_1 = 2 · 2/1 = 4 (the maximum, over the second largest), r_0 = 2 · 1/2 = 1
        assert!((r3[1] - 4.0).abs() < 1e-5 && (r3[0] - 1.0).abs() < 1e-6 && r3[2] == 0.0);
        // errors: LOO on one sample, NaN, empty
        let mut r1 = [0f32; 1];
        assert!(relative_weights(&[0.5], Weighting::LeaveOneOut, &mut r1).is_err());
        assert_eq!(
            relative_weights(&[0.5], Weighting::SelfNormalized, &mut r1).unwrap(),
            1.0
        );
        assert!(relative_weights(&[f64::NAN], Weighting::SelfNormalized, &mut r1).is_err());
        assert!(relative_weights(&[], Weighting::SelfNormalized, &mut []).is_err());
        assert!(relative_weights(&lw, Weighting::SelfNormalized, &mut r1).is_err());
    }

    /// The effective sample sizes reach the log through `report`, which then starts afresh;
    /// same seed, same bits whatever the thread count.
    #[test]
    fn reports_ess_and_is_thread_independent() {
        let rbm = Rbm::random(9, 6, 0.8, &mut rng_from_seed(2)).unwrap();
        let data = random_batches(3, 40, 9, 6);
        let run = |threads: usize| {
            crate::testutil::on_threads(threads, || {
                let mut pop = PopCd::new(2, 8).unwrap().weighting(Weighting::LeaveOneOut);
                let mut g = Gradient::like(&rbm);
                let mut ess = Vec::new();
                for v in &data {
                    pop.estimate(&rbm, v, &mut g).unwrap();
                    ess.push(pop.last_ess());
                }
                let mut m = BTreeMap::new();
                pop.report(&mut m);
                let mut again = BTreeMap::new();
                pop.report(&mut again);
                (g, ess, m, again)
            })
        };
        let (g, ess, m, again) = run(1);
        assert_eq!((g.clone(), ess.clone()), {
            let r = run(2);
            (r.0, r.1)
        });
        let mean = ess.iter().sum::<f64>() / 3.0;
        assert!((m["popcd_ess"] - mean).abs() < 1e-9);
        assert!((m["popcd_ess_frac"] - mean / 40.0).abs() < 1e-9);
        assert!(m["popcd_ess_frac_min"] <= m["popcd_ess_frac"]);
        assert!(ess.iter().all(|&e| (1.0..=40.0).contains(&e)));
        assert!(again.is_empty());
        assert!(g.w.iter().all(|x| x.is_finite()));
    }
}
