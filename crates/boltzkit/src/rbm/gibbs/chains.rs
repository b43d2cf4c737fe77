//! [`GibbsChains`]: a mini-batch of block Gibbs chains, one generator per chain (the fused
//! CD/PCD step over them is `fused.rs`'s), and [`sample_from_uniform`].

use crate::error::{Error, Result};
use crate::rbm::model::{check_len, Rbm};
use crate::rng::{derive_rng, sample_bernoulli, BkRng};
use rayon::prelude::*;

/// Chains per parallel task. Every chain draws from its own stream, so the states do not
/// depend on the blocks (nor on the thread count); small blocks balance two threads on a
/// mini-batch of 100 chains (13 tasks, where blocks of 32 gave 4 of unequal size).
pub const CHAIN_BLOCK: usize = 8;

/// A mini-batch of Gibbs chains over an RBM with given layer sizes: the current visible and
/// hidden states, the last conditional probabilities, and one generator per chain.
///
/// ```
/// use boltzkit::rbm::{GibbsChains, Rbm};
/// use boltzkit::rng::rng_from_seed;
/// let rbm = Rbm::random(6, 3, 0.5, &mut rng_from_seed(1))?;
/// let mut chains = GibbsChains::new(&rbm, &[0.0; 4 * 6], 42)?; // 4 chains started at v = 0
/// chains.run(&rbm, 10)?; // 10 steps h|v, v|h
/// assert!(chains.visible().iter().all(|&x| x == 0.0 || x == 1.0));
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct GibbsChains {
    pub(super) n_visible: usize,
    pub(super) n_hidden: usize,
    pub(super) n_chains: usize,
    pub(super) v: Vec<f32>,
    pub(super) h: Vec<f32>,
    pub(super) pv: Vec<f32>,
    pub(super) ph: Vec<f32>,
    pub(super) rngs: Vec<BkRng>,
}

impl GibbsChains {
    /// Bytes of `n_chains` chains of an `n_visible × n_hidden` model: states and
    /// probabilities of both layers (f32) and one generator per chain, saturating.
    pub fn memory_estimate(n_chains: u64, n_visible: u64, n_hidden: u64) -> u64 {
        let per_chain = n_visible
            .saturating_add(n_hidden)
            .saturating_mul(2 * 4)
            .saturating_add(32);
        n_chains.saturating_mul(per_chain)
    }

    /// Chains started at the visible states `v0` (`n_chains × n_visible`, 0/1), chain `i`
    /// drawing from [`derive_rng`]`(seed, i)`; hidden states start at 0.
    pub fn new(rbm: &Rbm, v0: &[f32], seed: u64) -> Result<Self> {
        let nv = rbm.n_visible();
        let nh = rbm.n_hidden();
        let n_chains = rbm.batch_rows("GibbsChains::new", v0, nv)?;
        if n_chains == 0 {
            return Err(Error::param("chains", "at least one chain is needed"));
        }
        Ok(GibbsChains {
            n_visible: nv,
            n_hidden: nh,
            n_chains,
            v: v0.to_vec(),
            h: vec![0.0; n_chains * nh],
            pv: vec![0.0; n_chains * nv],
            ph: vec![0.0; n_chains * nh],
            rngs: (0..n_chains as u64).map(|i| derive_rng(seed, i)).collect(),
        })
    }

    /// Number of chains.
    pub fn n_chains(&self) -> usize {
        self.n_chains
    }

    /// The visible states (`n_chains × n_visible`).
    pub fn visible(&self) -> &[f32] {
        &self.v
    }

    /// The hidden states (`n_chains × n_hidden`).
    pub fn hidden(&self) -> &[f32] {
        &self.h
    }

    /// `p(v = 1 | h)` from the last visible update.
    pub fn visible_probs(&self) -> &[f32] {
        &self.pv
    }

    /// `p(h = 1 | v)` from the last hidden update (or [`GibbsChains::update_hidden_probs`]).
    pub fn hidden_probs(&self) -> &[f32] {
        &self.ph
    }

    /// Restarts the chains at `v` (same shape), keeping each chain's generator (CD restarts
    /// its chains at the data of every mini-batch).
    pub fn set_visible(&mut self, v: &[f32]) -> Result<()> {
        check_len("GibbsChains::set_visible", "v", v.len(), self.v.len())?;
        self.v.copy_from_slice(v);
        Ok(())
    }

    pub(super) fn check(&self, rbm: &Rbm) -> Result<()> {
        if rbm.n_visible() != self.n_visible || rbm.n_hidden() != self.n_hidden {
            return Err(Error::Shape {
                op: "GibbsChains".into(),
                expected: format!("an RBM with {} × {} units", self.n_visible, self.n_hidden),
                found: format!("{} × {}", rbm.n_visible(), rbm.n_hidden()),
            });
        }
        Ok(())
    }

    /// `p(h | v)` for the current `v`, without sampling (no random numbers drawn).
    pub fn update_hidden_probs(&mut self, rbm: &Rbm) -> Result<()> {
        self.check(rbm)?;
        rbm.hidden_probs(&self.v, &mut self.ph)
    }

    /// Restarts the chains at `v` whose hidden probabilities `ph = p(h | v)` are already known
    /// (CD's positive phase computes them), then draws `h ~ ph`: the same bits as
    /// [`GibbsChains::set_visible`] then [`GibbsChains::sample_hidden`], one GEMM fewer.
    pub fn restart_with_hidden_probs(&mut self, v: &[f32], ph: &[f32]) -> Result<()> {
        check_len(
            "GibbsChains::restart_with_hidden_probs",
            "ph",
            ph.len(),
            self.ph.len(),
        )?;
        self.set_visible(v)?;
        self.ph.copy_from_slice(ph);
        sample_blocks(&self.ph, &mut self.h, &mut self.rngs, self.n_hidden);
        Ok(())
    }

    /// One half-step `h ~ p(h | v)`: probabilities for the whole batch (parallel GEMM), then
    /// Bernoulli draws per chain from its own stream, in parallel over chain blocks.
    pub fn sample_hidden(&mut self, rbm: &Rbm) -> Result<()> {
        self.update_hidden_probs(rbm)?;
        sample_blocks(&self.ph, &mut self.h, &mut self.rngs, self.n_hidden);
        Ok(())
    }

    /// One half-step `v ~ p(v | h)`.
    pub fn sample_visible(&mut self, rbm: &Rbm) -> Result<()> {
        self.check(rbm)?;
        rbm.visible_probs(&self.h, &mut self.pv)?;
        sample_blocks(&self.pv, &mut self.v, &mut self.rngs, self.n_visible);
        Ok(())
    }

    /// `k` full steps, each `h ~ p(h | v)` then `v ~ p(v | h)`.
    pub fn run(&mut self, rbm: &Rbm, k: usize) -> Result<()> {
        for _ in 0..k {
            self.sample_hidden(rbm)?;
            self.sample_visible(rbm)?;
        }
        Ok(())
    }
}

/// Default block Gibbs steps of [`sample_from_uniform`] when sampling a model too large to
/// sample exactly.
pub const DEFAULT_SAMPLE_STEPS: usize = 1000;

/// Elementary operations of one block Gibbs step of one chain of an `n_visible × n_hidden`
/// model: both products (`2 · n_visible · n_hidden` multiply-adds) and a draw per unit; what
/// [`crate::budget::check_work`] weighs samplers and annealers by.
pub fn step_operations(n_visible: u64, n_hidden: u64) -> f64 {
    2.0 * n_visible as f64 * n_hidden as f64 + (n_visible + n_hidden) as f64
}

/// `n` samples of `rbm` by block Gibbs: `n` chains started from uniform random visible states
/// (drawn from `rng_from_seed(seed)`), chain `i` then drawing from
/// [`derive_rng`]`(derive_seed(seed, 1), i)`, each run `steps` steps; `on_step(t)` is called
/// after step `t` (for progress). Returns the visible states, `n × n_visible`.
///
/// Refused before any work, with the figures, when the chains cannot fit in the memory
/// available or the steps would take more than a year ([`crate::budget`]).
pub fn sample_from_uniform(
    rbm: &Rbm,
    n: usize,
    steps: usize,
    seed: u64,
    on_step: &mut dyn FnMut(usize),
) -> Result<Vec<f32>> {
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    let what = format!("sampling {n} chains × {steps} Gibbs steps");
    crate::budget::check_memory(
        &what,
        GibbsChains::memory_estimate(n as u64, nv as u64, nh as u64)
            .saturating_add((n as u64).saturating_mul(nv as u64).saturating_mul(8)),
    )?;
    crate::budget::check_work(
        &what,
        n as f64 * steps.max(1) as f64 * step_operations(nv as u64, nh as u64),
    )?;
    let mut v0 = crate::budget::try_vec(&what, n.saturating_mul(nv), 0f32)?;
    let half = crate::budget::try_vec(&what, n.saturating_mul(nv), 0.5f32)?;
    sample_bernoulli(&half, &mut v0, &mut crate::rng::rng_from_seed(seed));
    drop(half);
    let mut chains = GibbsChains::new(rbm, &v0, crate::rng::derive_seed(seed, 1))?;
    for t in 0..steps {
        chains.run(rbm, 1)?;
        on_step(t + 1);
    }
    Ok(chains.v)
}

/// Row `i` of `out` (width `width`) ← Bernoulli(row `i` of `p`) drawn from `rngs[i]`, in
/// parallel over fixed blocks of [`CHAIN_BLOCK`] rows.
pub(crate) fn sample_blocks(p: &[f32], out: &mut [f32], rngs: &mut [BkRng], width: usize) {
    p.par_chunks(CHAIN_BLOCK * width)
        .zip(out.par_chunks_mut(CHAIN_BLOCK * width))
        .zip(rngs.par_chunks_mut(CHAIN_BLOCK))
        .for_each(|((p, out), rngs)| {
            for ((pr, o), rng) in p
                .chunks_exact(width)
                .zip(out.chunks_exact_mut(width))
                .zip(rngs)
            {
                sample_bernoulli(pr, o, rng);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbm::testutil::all_states;
    use crate::rng::rng_from_seed;

    #[test]
    fn bernoulli_extremes_and_mean() {
        let mut rng = rng_from_seed(1);
        let p = vec![0.0, 1.0, 0.3];
        let mut out = vec![0.5; 3];
        let mut on = 0.0;
        for _ in 0..20_000 {
            sample_bernoulli(&p, &mut out, &mut rng);
            assert_eq!((out[0], out[1]), (0.0, 1.0));
            on += out[2];
        }
        assert!((on / 20_000.0 - 0.3).abs() < 0.015, "{}", on / 20_000.0);
    }

    /// After burn-in, the visible states of many chains follow the exact marginal p(v).
    #[test]
    fn chains_reach_the_exact_marginal() {
        let rbm = Rbm::random(3, 2, 1.0, &mut rng_from_seed(4)).unwrap();
        let states = all_states(3);
        let w: Vec<f64> = states
            .iter()
            .map(|v| (-rbm.free_energy(v).unwrap()).exp())
            .collect();
        let z: f64 = w.iter().sum();
        let n = 4000;
        let mut chains = GibbsChains::new(&rbm, &vec![0.0; n * 3], 7).unwrap();
        chains.run(&rbm, 20).unwrap();
        let mut counts = [0usize; 8];
        for _ in 0..5 {
            chains.run(&rbm, 3).unwrap();
            for row in chains.visible().chunks_exact(3) {
                let s = row
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| (x as usize) << i)
                    .sum::<usize>();
                counts[s] += 1;
            }
        }
        let total = (5 * n) as f64;
        let tv: f64 = counts
            .iter()
            .zip(&w)
            .map(|(&c, &wi)| (c as f64 / total - wi / z).abs())
            .sum::<f64>()
            / 2.0;
        assert!(tv < 0.03, "total variation {tv}");
    }

    /// Same seed, same bits, with one thread or two; different seeds differ.
    #[test]
    fn results_do_not_depend_on_thread_count() {
        let rbm = Rbm::random(10, 7, 0.7, &mut rng_from_seed(2)).unwrap();
        let n = 3 * CHAIN_BLOCK + 5;
        let run = |threads: usize, seed: u64| {
            crate::testutil::on_threads(threads, || {
                let mut c = GibbsChains::new(&rbm, &vec![1.0; n * 10], seed).unwrap();
                c.run(&rbm, 5).unwrap();
                (c.visible().to_vec(), c.hidden().to_vec())
            })
        };
        let a = run(1, 11);
        assert_eq!(a, run(2, 11));
        assert_eq!(a, run(3, 11));
        assert_ne!(a, run(1, 12));
        // chain i depends only on (seed, i): a batch of the first 5 chains matches them
        let mut small = GibbsChains::new(&rbm, &[1.0; 5 * 10], 11).unwrap();
        small.run(&rbm, 5).unwrap();
        assert_eq!(small.visible(), &a.0[..50]);
    }

    #[test]
    fn restart_with_known_probs_is_set_visible_then_sample_hidden() {
        let rbm = Rbm::random(7, 5, 0.9, &mut rng_from_seed(6)).unwrap();
        let v0 = vec![0.0; 3 * 7];
        let v: Vec<f32> = (0..21).map(|i| (i % 3 == 1) as u8 as f32).collect();
        let mut a = GibbsChains::new(&rbm, &v0, 4).unwrap();
        let mut b = a.clone();
        a.run(&rbm, 1).unwrap();
        b.run(&rbm, 1).unwrap();
        a.set_visible(&v).unwrap();
        a.sample_hidden(&rbm).unwrap();
        let mut ph = vec![0.0; 15];
        rbm.hidden_probs(&v, &mut ph).unwrap();
        b.restart_with_hidden_probs(&v, &ph).unwrap();
        assert_eq!(a.hidden(), b.hidden());
        assert_eq!(a.visible(), b.visible());
        assert!(b.restart_with_hidden_probs(&v, &ph[..3]).is_err());
    }

    #[test]
    fn shapes_are_checked() {
        let rbm = Rbm::random(4, 2, 0.5, &mut rng_from_seed(2)).unwrap();
        let other = Rbm::random(4, 3, 0.5, &mut rng_from_seed(2)).unwrap();
        assert!(GibbsChains::new(&rbm, &[0.0; 7], 1).is_err());
        assert!(GibbsChains::new(&rbm, &[], 1).is_err());
        let mut c = GibbsChains::new(&rbm, &[0.0; 8], 1).unwrap();
        assert!(c.run(&other, 1).is_err());
        assert!(c.set_visible(&[0.0; 4]).is_err());
        c.set_visible(&[1.0; 8]).unwrap();
        c.update_hidden_probs(&rbm).unwrap();
        let mut want = vec![0.0; 4];
        rbm.hidden_probs(&[1.0; 8], &mut want).unwrap();
        assert_eq!(c.hidden_probs(), &want[..]);
    }
}
