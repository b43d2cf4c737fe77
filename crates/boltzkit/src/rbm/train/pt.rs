//! Parallel-tempering gradient estimation (the PT trainer of the pop-CD paper, Sec. 4.1;
//! Desjardins et al. 2010): the negative statistics come from the `β = 1` replicas of
//! persistent [`TemperedChains`].

use super::gradient::{Gradient, GradientEstimator};
use super::update::{restore_json, save_json};
use crate::error::{Error, Result};
use crate::rbm::tempering::TemperedChains;
use crate::rbm::Rbm;
use crate::rng::derive_seed;
use std::collections::BTreeMap;

/// PT-M: `M` replicas per chain at `β` uniform in `[0, 1]`, one chain per row of the first
/// mini-batch (every replica started there), each estimate `k` rounds of a tempered Gibbs step
/// and one exchange round; the gradient is `⟨v p(h|v)ᵀ⟩_batch − ⟨v p(h|v)ᵀ⟩_cold` over the
/// `β = 1` replicas. [`GradientEstimator::report`] gives the exchange acceptance rates.
///
/// ```
/// use boltzkit::rbm::train::{Gradient, GradientEstimator, Pt};
/// use boltzkit::rbm::Rbm;
/// use boltzkit::rng::rng_from_seed;
/// let rbm = Rbm::random(4, 3, 0.5, &mut rng_from_seed(1))?;
/// let mut pt = Pt::new(10, 1, 7)?; // PT-10, one step per estimate
/// let mut g = Gradient::like(&rbm);
/// pt.estimate(&rbm, &[1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &mut g)?; // 2 chains
/// let mut log = std::collections::BTreeMap::new();
/// pt.report(&mut log);
/// assert!(log.contains_key("pt_swap_rate_mean"));
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Pt {
    replicas: usize,
    k: usize,
    seed: u64,
    chains: Option<TemperedChains>,
    #[serde(skip)] // scratch, overwritten by every estimate
    p_pos: Vec<f32>,
    #[serde(skip)]
    v_cold: Vec<f32>,
    #[serde(skip)]
    p_cold: Vec<f32>,
}

impl Pt {
    /// PT with `replicas ≥ 2` replicas and `k ≥ 1` steps per estimate; chains drawn from
    /// `derive_seed(seed, 0)` ([`TemperedChains`]).
    pub fn new(replicas: usize, k: usize, seed: u64) -> Result<Self> {
        crate::rbm::tempering::uniform_betas(replicas)?;
        if k == 0 {
            return Err(Error::param("k", "at least one Gibbs step is needed"));
        }
        Ok(Pt {
            replicas,
            k,
            seed,
            chains: None,
            p_pos: Vec::new(),
            v_cold: Vec::new(),
            p_cold: Vec::new(),
        })
    }

    /// The tempered chains (`None` before the first estimate).
    pub fn chains(&self) -> Option<&TemperedChains> {
        self.chains.as_ref()
    }
}

impl GradientEstimator for Pt {
    fn save_state(&self) -> Result<Option<serde_json::Value>> {
        save_json(self)
    }

    fn restore_state(&mut self, state: serde_json::Value) -> Result<()> {
        restore_json(self, state, "PT")
    }

    fn estimate(&mut self, rbm: &Rbm, v: &[f32], grad: &mut Gradient) -> Result<()> {
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let batch = rbm.batch_rows("Pt::estimate", v, nv)?;
        if batch == 0 {
            return Err(Error::param("batch", "empty mini-batch"));
        }
        self.p_pos.resize(batch * nh, 0.0);
        rbm.hidden_probs(v, &mut self.p_pos)?;
        if self.chains.is_none() {
            let seed = derive_seed(self.seed, 0);
            self.chains = Some(TemperedChains::new(rbm, v, self.replicas, seed)?);
        }
        let Some(chains) = self.chains.as_mut() else {
            return Err(Error::Internal("no chains after creating them".into()));
        };
        for _ in 0..self.k {
            chains.step(rbm)?;
        }
        let n = chains.n_chains();
        self.v_cold.resize(n * nv, 0.0);
        self.p_cold.resize(n * nh, 0.0);
        chains.cold_visible(&mut self.v_cold)?;
        rbm.hidden_probs(&self.v_cold, &mut self.p_cold)?;
        grad.set_difference(rbm, v, &self.p_pos, &self.v_cold, &self.p_cold)
    }

    /// `pt_swap_rate_t` (acceptance of exchanges between temperatures `t` and `t + 1`), and
    /// their mean and minimum, since the last report.
    fn report(&mut self, out: &mut BTreeMap<String, f64>) {
        let Some(chains) = self.chains.as_mut() else {
            return;
        };
        let rates: Vec<f64> = chains
            .swap_rates()
            .into_iter()
            .filter(|r| !r.is_nan())
            .collect();
        let all = chains.swap_rates();
        chains.reset_swap_stats();
        if rates.is_empty() {
            return;
        }
        for (t, r) in all.iter().enumerate().filter(|(_, r)| !r.is_nan()) {
            out.insert(format!("pt_swap_rate_{t}"), *r);
        }
        out.insert(
            "pt_swap_rate_mean".into(),
            rates.iter().sum::<f64>() / rates.len() as f64,
        );
        out.insert(
            "pt_swap_rate_min".into(),
            rates.iter().copied().fold(f64::INFINITY, f64::min),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Dataset;
    use crate::rbm::exact;
    use crate::rng::rng_from_seed;

    /// With a fixed model, PT's estimates average to the exact gradient (the persistent cold
    /// replicas sample the model): largest error < 0.02 over 400 estimates of 500 chains.
    #[test]
    fn pt_estimates_average_to_the_exact_gradient() {
        let (nv, nh) = (5, 3);
        let rbm = Rbm::random(nv, nh, 1.5, &mut rng_from_seed(6)).unwrap();
        let rows: Vec<u8> = (0..4 * nv).map(|i| ((i * 3 + 1) % 4 < 2) as u8).collect();
        let data = Dataset::from_flat(rows.clone(), nv, vec![2; nv]).unwrap();
        let want = exact::log_likelihood_gradient(&rbm, &data).unwrap();
        let v: Vec<f32> = rows.iter().map(|&x| f32::from(x)).collect();
        let big: Vec<f32> = v.iter().cycle().take(500 * nv).copied().collect();
        let mut pt = Pt::new(4, 1, 3).unwrap();
        let mut g = Gradient::like(&rbm);
        let mut pos = Gradient::like(&rbm);
        for _ in 0..50 {
            pt.estimate(&rbm, &big, &mut g).unwrap(); // burn-in
        }
        let n_est = 400;
        let mut mean = [vec![0f64; nv * nh], vec![0f64; nv], vec![0f64; nh]];
        for _ in 0..n_est {
            pt.estimate(&rbm, &big, &mut g).unwrap();
            for (m, x) in mean.iter_mut().zip([&g.w, &g.b, &g.c]) {
                m.iter_mut()
                    .zip(x.iter())
                    .for_each(|(a, &b)| *a += f64::from(b) / n_est as f64);
            }
        }
        let err = mean[0]
            .iter()
            .zip(&want.w)
            .chain(mean[1].iter().zip(&want.b))
            .chain(mean[2].iter().zip(&want.c))
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 0.02, "{err}");
        let mut log = BTreeMap::new();
        pt.report(&mut log);
        assert_eq!(
            log.keys().cloned().collect::<Vec<_>>(),
            [
                "pt_swap_rate_0",
                "pt_swap_rate_1",
                "pt_swap_rate_2",
                "pt_swap_rate_mean",
                "pt_swap_rate_min"
            ]
        );
        assert!(log.values().all(|r| (0.0..=1.0).contains(r)));
        // the chains stay at 500 (the first batch); a smaller batch still works
        pt.estimate(&rbm, &v, &mut pos).unwrap();
        assert_eq!(pt.chains().unwrap().n_chains(), 500);
        assert!(Pt::new(1, 1, 0).is_err() && Pt::new(3, 0, 0).is_err());
    }
}
