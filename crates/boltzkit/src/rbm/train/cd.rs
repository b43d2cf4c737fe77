//! Contrastive divergence CD-k (Hinton 2002; Alg. 1 of the S-DCP paper) and persistent CD
//! PCD-k (Tieleman 2008): the negative statistics come from chains that run `k` block-Gibbs
//! steps from the data (CD) or from where the previous mini-batch left them (PCD).

use super::gradient::{Gradient, GradientEstimator};
use super::update::{restore_json, save_json};
use crate::error::{Error, Result};
use crate::rbm::gibbs::{FusedScratch, StepPlan};
use crate::rbm::{GibbsChains, Rbm};
use crate::rng::derive_seed;

/// CD-k or PCD-k. The gradient for a batch `V` is
/// `⟨v p(h|v)ᵀ⟩_V − ⟨ṽ p(h|ṽ)ᵀ⟩_Ṽ` with `Ṽ` the chains' visible states after `k` steps
/// (the `f̂′` of Eq. 6 of the S-DCP paper; hidden statistics use probabilities).
///
/// Chain `i` of generation `g` draws from `derive_rng(derive_seed(seed, g), i)`; a new
/// generation starts when the batch size changes (CD), so no random stream is reused.
///
/// ```
/// use boltzkit::rbm::train::{Cd, Gradient, GradientEstimator};
/// use boltzkit::rbm::Rbm;
/// use boltzkit::rng::rng_from_seed;
/// let rbm = Rbm::random(4, 3, 0.3, &mut rng_from_seed(1))?;
/// let mut cd = Cd::new(1, 7)?;
/// let mut g = Gradient::like(&rbm);
/// cd.estimate(&rbm, &[1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &mut g)?; // batch of 2
/// assert!(g.w.iter().all(|x| x.is_finite()));
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Cd {
    k: usize,
    persistent: bool,
    seed: u64,
    generation: u64,
    chains: Option<GibbsChains>,
    #[serde(skip)] // scratch, overwritten by every batch's first estimate
    p_pos: Vec<f32>,
    #[serde(skip)] // index lists of the fused step, a cache
    fused: FusedScratch,
}

impl Cd {
    /// CD-k: chains restart at the data of each mini-batch. `k ≥ 1`.
    pub fn new(k: usize, seed: u64) -> Result<Self> {
        if k == 0 {
            return Err(Error::param("k", "at least one Gibbs step is needed"));
        }
        Ok(Cd {
            k,
            persistent: false,
            seed,
            generation: 0,
            chains: None,
            p_pos: Vec::new(),
            fused: FusedScratch::default(),
        })
    }

    /// PCD-k: one chain per row of the first mini-batch, started there and then carried from
    /// batch to batch.
    pub fn persistent(k: usize, seed: u64) -> Result<Self> {
        Ok(Cd {
            persistent: true,
            ..Cd::new(k, seed)?
        })
    }

    /// The Gibbs steps per estimate.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The chains after the last estimate (`None` before the first).
    pub fn chains(&self) -> Option<&GibbsChains> {
        self.chains.as_ref()
    }

    /// Prepares the chains for the batch `v`: restarted at `v` (CD), or created at the first
    /// batch and kept (PCD).
    fn prepare(&mut self, rbm: &Rbm, v: &[f32]) -> Result<()> {
        let n_rows = v.len() / rbm.n_visible().max(1);
        match &mut self.chains {
            Some(_) if self.persistent => {}
            Some(c) if c.n_chains() == n_rows => c.set_visible(v)?,
            _ => {
                let seed = derive_seed(self.seed, self.generation);
                self.generation += 1;
                self.chains = Some(GibbsChains::new(rbm, v, seed)?);
            }
        }
        Ok(())
    }
}

impl Cd {
    /// Continues the last estimate, as S-DCP's inner steps do (Alg. 3 of the S-DCP paper):
    /// the positive statistics of the last [`GradientEstimator::estimate`] (`∇g` at the outer
    /// parameters, for the same batch `v`) are kept, and the chains run `k` more steps from
    /// where they stopped, under the current `rbm`.
    pub fn estimate_continued(&mut self, rbm: &Rbm, v: &[f32], grad: &mut Gradient) -> Result<()> {
        let batch = rbm.batch_rows("Cd::estimate_continued", v, rbm.n_visible())?;
        if self.chains.is_none() || self.p_pos.len() != batch * rbm.n_hidden() {
            return Err(Error::param(
                "batch",
                "estimate_continued needs a first estimate on the same batch",
            ));
        }
        self.negative_phase(rbm, v, grad)
    }

    fn negative_phase(&mut self, rbm: &Rbm, v: &[f32], grad: &mut Gradient) -> Result<()> {
        let Some(chains) = self.chains.as_mut() else {
            return Err(Error::param("chains", "no chains: call estimate first"));
        };
        chains.run(rbm, self.k)?;
        chains.update_hidden_probs(rbm)?;
        grad.set_difference(rbm, v, &self.p_pos, chains.visible(), chains.hidden_probs())
    }
}

impl Cd {
    /// The sampling of CD-k for the mini-batch `v`, without the statistics: `p(h | v)` of the
    /// batch (kept: [`Cd::positive_probs`]) and `k` block-Gibbs steps of the chains from `v`,
    /// leaving `v^(k)` in [`Cd::chains`] (its `visible_probs` is `p(v | h^(k−1))`). PCD
    /// continues its chains instead. [`GradientEstimator::estimate`] is this followed by the
    /// statistics; pop-CD ([`super::PopCd`]) is this followed by weighted statistics.
    pub fn sample(&mut self, rbm: &Rbm, v: &[f32]) -> Result<()> {
        self.sample_then(rbm, v, false)
    }

    /// [`Cd::sample`], then `p(h | ṽ)` of the final states when `final_hidden`: one fused
    /// pass per half-step over blocks of rows ([`GibbsChains::fused_step`]), the bits of
    /// [`Cd::sample_unfused`] followed by [`GibbsChains::update_hidden_probs`].
    fn sample_then(&mut self, rbm: &Rbm, v: &[f32], final_hidden: bool) -> Result<()> {
        let batch = rbm.batch_rows("Cd::estimate", v, rbm.n_visible())?;
        if batch == 0 {
            return Err(Error::param("batch", "empty mini-batch"));
        }
        self.p_pos.resize(batch * rbm.n_hidden(), 0.0);
        self.prepare(rbm, v)?;
        let Some(chains) = self.chains.as_mut() else {
            return Err(Error::Internal("no chains after prepare".into()));
        };
        let plan = StepPlan {
            k: self.k,
            restart: !self.persistent,
            final_hidden,
        };
        chains.fused_step(rbm, &mut self.fused, v, &mut self.p_pos, plan)
    }

    /// [`Cd::sample`] by the layer-at-a-time pieces (each product parallel on its own): the
    /// reference the fused step must equal bit for bit (tests).
    #[cfg(test)]
    pub(crate) fn sample_unfused(&mut self, rbm: &Rbm, v: &[f32]) -> Result<()> {
        let batch = rbm.batch_rows("Cd::estimate", v, rbm.n_visible())?;
        if batch == 0 {
            return Err(Error::param("batch", "empty mini-batch"));
        }
        self.p_pos.resize(batch * rbm.n_hidden(), 0.0);
        rbm.hidden_probs(v, &mut self.p_pos)?;
        self.prepare(rbm, v)?;
        let Some(chains) = self.chains.as_mut() else {
            return Err(Error::Internal("no chains after prepare".into()));
        };
        if self.persistent {
            return chains.run(rbm, self.k);
        }
        // CD: the chains start at v, whose p(h | v) the positive phase just computed, so the
        // first half-step reuses it (same bits as a plain first step, one GEMM fewer)
        chains.restart_with_hidden_probs(v, &self.p_pos)?;
        chains.sample_visible(rbm)?;
        chains.run(rbm, self.k - 1)
    }

    /// `p(h = 1 | v)` of the last mini-batch given to [`Cd::sample`] (`batch × n_hidden`).
    pub fn positive_probs(&self) -> &[f32] {
        &self.p_pos
    }
}

impl GradientEstimator for Cd {
    fn save_state(&self) -> Result<Option<serde_json::Value>> {
        save_json(self)
    }

    fn restore_state(&mut self, state: serde_json::Value) -> Result<()> {
        restore_json(self, state, "CD")
    }

    fn estimate(&mut self, rbm: &Rbm, v: &[f32], grad: &mut Gradient) -> Result<()> {
        self.sample_then(rbm, v, true)?;
        let Some(chains) = self.chains.as_ref() else {
            return Err(Error::Internal("no chains after sampling".into()));
        };
        let (pos, neg) = (
            (v, &self.p_pos[..]),
            (chains.visible(), chains.hidden_probs()),
        );
        match self.fused.visible_lists() {
            Some(lists) => grad.set_difference_listed(rbm, pos, neg, &lists),
            None => grad.set_difference(rbm, pos.0, pos.1, neg.0, neg.1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::sigmoid_f64;
    use crate::rng::{derive_rng, rng_from_seed};
    use rand::Rng;

    fn p_hidden(rbm: &Rbm, v: &[f64]) -> Vec<f64> {
        let nh = rbm.n_hidden();
        (0..nh)
            .map(|j| {
                let x = f64::from(rbm.c()[j])
                    + (0..rbm.n_visible())
                        .map(|i| v[i] * f64::from(rbm.w()[i * nh + j]))
                        .sum::<f64>();
                sigmoid_f64(x)
            })
            .collect()
    }

    fn p_visible(rbm: &Rbm, h: &[f64]) -> Vec<f64> {
        let nh = rbm.n_hidden();
        (0..rbm.n_visible())
            .map(|i| {
                let x = f64::from(rbm.b()[i])
                    + (0..nh)
                        .map(|j| h[j] * f64::from(rbm.w()[i * nh + j]))
                        .sum::<f64>();
                sigmoid_f64(x)
            })
            .collect()
    }

    /// CD-1 by its definition, with the same uniform draws: per row `i`, stream
    /// `derive_rng(derive_seed(seed, 0), i)` draws `h ~ p(h|v)` then `ṽ ~ p(v|h)`.
    #[test]
    fn cd1_matches_its_definition() {
        let (nv, nh, batch, seed) = (5, 3, 4, 99);
        let rbm = Rbm::random(nv, nh, 0.8, &mut rng_from_seed(6)).unwrap();
        let data: Vec<f32> = (0..batch * nv)
            .map(|i| ((i * 7 + 3) % 5 < 2) as u8 as f32)
            .collect();
        let mut g = Gradient::like(&rbm);
        Cd::new(1, seed)
            .unwrap()
            .estimate(&rbm, &data, &mut g)
            .unwrap();

        let mut want_w = vec![0f64; nv * nh];
        let mut want_b = vec![0f64; nv];
        let mut want_c = vec![0f64; nh];
        let chain_seed = derive_seed(seed, 0);
        for r in 0..batch {
            let v: Vec<f64> = data[r * nv..(r + 1) * nv]
                .iter()
                .map(|&x| f64::from(x))
                .collect();
            let mut rng = derive_rng(chain_seed, r as u64);
            let ph = p_hidden(&rbm, &v);
            let h: Vec<f64> = ph
                .iter()
                .map(|&p| f64::from(u8::from(rng.random::<f32>() < p as f32)))
                .collect();
            let pv = p_visible(&rbm, &h);
            let v1: Vec<f64> = pv
                .iter()
                .map(|&p| f64::from(u8::from(rng.random::<f32>() < p as f32)))
                .collect();
            let ph1 = p_hidden(&rbm, &v1);
            for i in 0..nv {
                want_b[i] += (v[i] - v1[i]) / batch as f64;
                for j in 0..nh {
                    want_w[i * nh + j] += (v[i] * ph[j] - v1[i] * ph1[j]) / batch as f64;
                }
            }
            for j in 0..nh {
                want_c[j] += (ph[j] - ph1[j]) / batch as f64;
            }
        }
        let close = |a: &[f32], b: &[f64]| {
            a.iter()
                .zip(b)
                .all(|(&x, &y)| (f64::from(x) - y).abs() < 1e-5)
        };
        assert!(close(&g.w, &want_w), "{:?} vs {want_w:?}", g.w);
        assert!(close(&g.b, &want_b), "{:?} vs {want_b:?}", g.b);
        assert!(close(&g.c, &want_c), "{:?} vs {want_c:?}", g.c);
        // the test can fail: a different seed gives a different estimate
        let mut g2 = Gradient::like(&rbm);
        Cd::new(1, seed + 1)
            .unwrap()
            .estimate(&rbm, &data, &mut g2)
            .unwrap();
        assert_ne!(g.w, g2.w);
    }

    /// PCD carries its chains: the second estimate continues from the first one's states.
    #[test]
    fn pcd_carries_chains_and_cd_restarts_them() {
        let (nv, nh) = (6, 4);
        let rbm = Rbm::random(nv, nh, 0.6, &mut rng_from_seed(3)).unwrap();
        let b1: Vec<f32> = (0..3 * nv).map(|i| (i % 2) as f32).collect();
        let b2: Vec<f32> = (0..3 * nv).map(|i| (i % 3 == 0) as u8 as f32).collect();
        let mut pcd = Cd::persistent(2, 5).unwrap();
        let mut g = Gradient::like(&rbm);
        pcd.estimate(&rbm, &b1, &mut g).unwrap();
        pcd.estimate(&rbm, &b2, &mut g).unwrap();
        let mut reference = GibbsChains::new(&rbm, &b1, derive_seed(5, 0)).unwrap();
        reference.run(&rbm, 4).unwrap();
        assert_eq!(pcd.chains().unwrap().visible(), reference.visible());
        let mut ph2 = vec![0.0; 3 * nh];
        rbm.hidden_probs(&b2, &mut ph2).unwrap();
        reference.update_hidden_probs(&rbm).unwrap();
        let mut want = Gradient::like(&rbm);
        want.set_difference(
            &rbm,
            &b2,
            &ph2,
            reference.visible(),
            reference.hidden_probs(),
        )
        .unwrap();
        assert_eq!(g, want);

        // CD restarts at the data: its chains after batch 2 are 2 steps from b2
        let mut cd = Cd::new(2, 5).unwrap();
        cd.estimate(&rbm, &b1, &mut g).unwrap();
        cd.estimate(&rbm, &b2, &mut g).unwrap();
        let mut r = GibbsChains::new(&rbm, &b1, derive_seed(5, 0)).unwrap();
        r.run(&rbm, 2).unwrap();
        r.set_visible(&b2).unwrap();
        r.run(&rbm, 2).unwrap();
        assert_eq!(cd.chains().unwrap().visible(), r.visible());
        assert!(Cd::new(0, 1).is_err());
    }

    /// The fused step ([`GibbsChains::fused_step`]) equals the layer-at-a-time reference bit
    /// for bit: CD and PCD, k = 1 and 3, sparse, complemented and dense (non-binary data,
    /// hidden layers past the sparse switch) products, PCD batches of other sizes (down to one
    /// row), and 1, 2 or 3 threads.
    #[test]
    fn fused_step_equals_layer_by_layer_reference() {
        let mut rng = rng_from_seed(21);
        let mut bits = |n: usize, density: f32| -> Vec<f32> {
            (0..n)
                .map(|_| f32::from(u8::from(rng.random::<f32>() < density)))
                .collect()
        };
        // the last model's visible biases keep its chains' states sparse: the statistics
        // from the step's own lists ([`Gradient::set_difference_listed`])
        for (nv, nh, sd) in [
            (41, 23, 1.5),
            (300, 700, 0.05),
            (19, 600, 0.8),
            (120, 90, 0.3),
        ] {
            let mut rbm = Rbm::random(nv, nh, sd, &mut rng_from_seed(nv as u64)).unwrap();
            if nv == 120 {
                rbm.params_mut().1.fill(-3.0);
            }
            // a one-row batch after larger ones: PCD's blocks then hold no data rows (the
            // last batch of an epoch; stale lists there once broke the fused step)
            let mut batches = vec![
                bits(13 * nv, 0.1),
                bits(13 * nv, 0.65),
                bits(9 * nv, 0.2),
                bits(nv, 0.3),
            ];
            // probabilities, not states: the dense products
            batches.push(bits(13 * nv, 0.5).iter().map(|x| 0.25 + 0.5 * x).collect());
            for persistent in [true, false] {
                for k in [1, 3] {
                    let new = || {
                        if persistent {
                            Cd::persistent(k, 5).unwrap()
                        } else {
                            Cd::new(k, 5).unwrap()
                        }
                    };
                    let mut want = new();
                    let mut want_g = Vec::new();
                    for b in &batches {
                        let mut g = Gradient::like(&rbm);
                        want.sample_unfused(&rbm, b).unwrap();
                        let c = want.chains.as_mut().unwrap();
                        c.update_hidden_probs(&rbm).unwrap();
                        g.set_difference(&rbm, b, &want.p_pos, c.visible(), c.hidden_probs())
                            .unwrap();
                        want_g.push((g, want.clone()));
                    }
                    for threads in [1, 2, 3] {
                        crate::testutil::on_threads(threads, || {
                            let mut got = new();
                            for (b, (wg, w)) in batches.iter().zip(&want_g) {
                                let mut g = Gradient::like(&rbm);
                                got.estimate(&rbm, b, &mut g).unwrap();
                                let what = format!("{nv}×{nh} pcd={persistent} k={k} t={threads}");
                                assert_eq!(&g, wg, "{what}");
                                assert_eq!(got.p_pos, w.p_pos, "{what}");
                                let (a, z) = (got.chains().unwrap(), w.chains().unwrap());
                                assert_eq!(a.visible(), z.visible(), "{what}");
                                assert_eq!(a.hidden(), z.hidden(), "{what}");
                                assert_eq!(a.visible_probs(), z.visible_probs(), "{what}");
                                assert_eq!(a.hidden_probs(), z.hidden_probs(), "{what}");
                            }
                        });
                    }
                }
            }
        }
    }
}
