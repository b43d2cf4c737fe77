//! Gibbs sampling of a Potts model of any size: systematic scan over the sites, site `i` drawn
//! from its conditional law `p(s_i = a | s_{−i}) ∝ exp(h_i(a) + Σ_{j≠i} J_ij(a, s_j))`.
//!
//! Each chain keeps the local fields `F_i(a) = h_i(a) + Σ_{j≠i} J_ij(a, s_j)` of its current
//! state and updates them when a site changes (`L · q` additions per change instead of `L² q`
//! per site), recomputing them from scratch every [`REFRESH`] sweeps so round-off cannot
//! build up. The settings are the FVBM sampler's ([`GibbsParams`]: burn-in, thinning,
//! chains); chain `c` draws from `derive_rng(seed, c)` for one `seed` taken from the caller's
//! generator, so the samples do not depend on the number of threads.

use super::model::Potts;
use crate::data::Dataset;
use crate::error::{Error, Result};
pub use crate::fvbm::gibbs::GibbsParams;
use crate::rng::derive_rng;
use ndarray::Array2;
use rand::Rng;
use rayon::prelude::*;

/// Sweeps between two recomputations of a chain's local fields from its state.
pub const REFRESH: usize = 64;

/// One Markov chain of a Potts model: its state and local fields.
#[derive(Debug, Clone)]
pub struct PottsChain<'a> {
    model: &'a Potts,
    state: Vec<u8>,
    /// `F_i(a)` at `offsets[i] + a`.
    fields: Vec<f64>,
    offsets: Vec<usize>,
    sweeps: usize,
    /// Scratch for one site's probabilities.
    p: Vec<f64>,
}

impl<'a> PottsChain<'a> {
    /// A chain started at `state` (codes, `state[i] < q_i`).
    pub fn new(model: &'a Potts, state: &[u8]) -> Result<Self> {
        model.log_potential(state)?;
        let mut offsets = Vec::with_capacity(model.n_sites() + 1);
        let mut total = 0;
        for &k in model.states() {
            offsets.push(total);
            total += k;
        }
        offsets.push(total);
        let mut chain = PottsChain {
            model,
            state: state.to_vec(),
            fields: vec![0.0; total],
            offsets,
            sweeps: 0,
            p: vec![0.0; model.max_states()],
        };
        chain.refresh();
        Ok(chain)
    }

    /// A chain started at a uniformly random state.
    pub fn random<R: Rng + ?Sized>(model: &'a Potts, rng: &mut R) -> Self {
        let state: Vec<u8> = model
            .states()
            .iter()
            .map(|&k| rng.random_range(0..k) as u8)
            .collect();
        Self::new(model, &state).expect("a random state is in range")
    }

    /// Recomputes every local field from the state.
    fn refresh(&mut self) {
        let m = self.model;
        let q = m.states();
        let l = q.len();
        for (i, &o) in self.offsets[..l].iter().enumerate() {
            self.fields[o..o + q[i]].copy_from_slice(m.field(i));
        }
        for i in 0..l {
            for j in i + 1..l {
                let block = m.coupling(i, j);
                let (a, b) = (self.state[i] as usize, self.state[j] as usize);
                let (oi, oj) = (self.offsets[i], self.offsets[j]);
                // J_ij(·, s_j) into F_i, J_ij(s_i, ·) into F_j.
                for x in 0..q[i] {
                    self.fields[oi + x] += block[x * q[j] + b];
                }
                for (y, v) in block[a * q[j]..(a + 1) * q[j]].iter().enumerate() {
                    self.fields[oj + y] += v;
                }
            }
        }
    }

    /// Site `j` changes from `from` to `to`: every other site's fields follow.
    fn moved(&mut self, j: usize, from: usize, to: usize) {
        let m = self.model;
        let q = m.states();
        for i in 0..q.len() {
            let o = self.offsets[i];
            let f = &mut self.fields[o..o + q[i]];
            if i < j {
                let block = m.coupling(i, j);
                for (x, v) in f.iter_mut().enumerate() {
                    *v += block[x * q[j] + to] - block[x * q[j] + from];
                }
            } else if i > j {
                let block = m.coupling(j, i);
                let (new, old) = (&block[to * q[i]..], &block[from * q[i]..]);
                for (x, v) in f.iter_mut().enumerate() {
                    *v += new[x] - old[x];
                }
            }
        }
    }

    /// One systematic-scan sweep: sites `0, 1, …, L − 1` in turn.
    pub fn sweep<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let q = self.model.states();
        for (i, &qi) in q.iter().enumerate() {
            let f = &self.fields[self.offsets[i]..self.offsets[i] + qi];
            let top = f.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let p = &mut self.p[..qi];
            let mut total = 0.0;
            for (pa, &fa) in p.iter_mut().zip(f) {
                *pa = (fa - top).exp();
                total += *pa;
            }
            let mut u = rng.random::<f64>() * total;
            let mut pick = qi - 1;
            for (a, &pa) in p.iter().enumerate() {
                if u < pa {
                    pick = a;
                    break;
                }
                u -= pa;
            }
            let from = self.state[i] as usize;
            if pick != from {
                self.state[i] = pick as u8;
                self.moved(i, from, pick);
            }
        }
        self.sweeps += 1;
        if self.sweeps.is_multiple_of(REFRESH) {
            self.refresh();
        }
    }

    /// The current state (codes).
    pub fn state(&self) -> &[u8] {
        &self.state
    }

    /// The local fields `F_i(·)` of site `i` in the current state.
    pub fn local_fields(&self, i: usize) -> &[f64] {
        &self.fields[self.offsets[i]..self.offsets[i + 1]]
    }
}

/// `n` sequences by Gibbs sampling: `params.n_chains` chains from uniformly random states,
/// `params.burn_in` sweeps discarded, then one sequence every `params.thin` sweeps; the
/// samples are split evenly between the chains (chain 0's first).
///
/// ```
/// use boltzkit::potts::{gibbs, Potts};
/// use boltzkit::rng::rng_from_seed;
/// let mut m = Potts::zeros(vec![3; 30])?;
/// m.coupling_mut(0, 1).copy_from_slice(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
/// let params = gibbs::GibbsParams { burn_in: 50, thin: 2, n_chains: 4 };
/// let x = gibbs::sample(&m, 100, &params, &mut rng_from_seed(1))?;
/// assert_eq!((x.n_samples(), x.n_vars()), (100, 30));
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn sample<R: Rng + ?Sized>(
    model: &Potts,
    n: usize,
    params: &GibbsParams,
    rng: &mut R,
) -> Result<Dataset> {
    params.check()?;
    let l = model.n_sites();
    let seed: u64 = rng.random();
    let chains = params.n_chains;
    let parts: Vec<Vec<u8>> = (0..chains)
        .into_par_iter()
        .map(|c| {
            let mut r = derive_rng(seed, c as u64);
            let mut chain = PottsChain::random(model, &mut r);
            (0..params.burn_in).for_each(|_| chain.sweep(&mut r));
            let rows = n / chains + usize::from(c < n % chains);
            let mut out = Vec::with_capacity(rows * l);
            for _ in 0..rows {
                (0..params.thin).for_each(|_| chain.sweep(&mut r));
                out.extend_from_slice(chain.state());
            }
            out
        })
        .collect();
    let values = Array2::from_shape_vec((n, l), parts.concat())
        .map_err(|e| Error::Internal(format!("Potts Gibbs samples: {e}")))?;
    let cards = model.states().iter().map(|&k| k as u32).collect();
    Dataset::new(values, cards)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synth::state_index;
    use crate::potts::exact;
    use crate::rng::rng_from_seed;
    use crate::testutil::on_threads;

    fn random_model(q: Vec<usize>, scale: f64, seed: u64) -> Potts {
        let mut m = Potts::zeros(q).unwrap();
        let mut rng = rng_from_seed(seed);
        let (h, j) = m.parameters_mut();
        for v in h.iter_mut().chain(j.iter_mut()) {
            *v = scale * (2.0 * rng.random::<f64>() - 1.0);
        }
        m
    }

    /// The slow twin of the local fields: every term summed from the state.
    fn brute_fields(m: &Potts, s: &[u8], i: usize) -> Vec<f64> {
        (0..m.states()[i])
            .map(|a| {
                m.field(i)[a]
                    + (0..m.n_sites())
                        .filter(|&j| j != i)
                        .map(|j| m.coupling_value(i, j, a, s[j] as usize))
                        .sum::<f64>()
            })
            .collect()
    }

    #[test]
    fn kept_fields_equal_fresh_sums() {
        let m = random_model(vec![3, 2, 4, 5, 3, 2], 1.0, 4);
        let mut rng = rng_from_seed(1);
        let mut chain = PottsChain::random(&m, &mut rng);
        for sweep in 0..(REFRESH + 5) {
            chain.sweep(&mut rng);
            for i in 0..m.n_sites() {
                let want = brute_fields(&m, chain.state(), i);
                for (x, y) in chain.local_fields(i).iter().zip(&want) {
                    assert!((x - y).abs() < 1e-12, "sweep {sweep} site {i}: {x} vs {y}");
                }
            }
        }
    }

    #[test]
    fn stationary_law_is_the_model() {
        let m = random_model(vec![3, 2, 3, 2], 0.8, 7);
        let probs: Vec<f64> = {
            let t = exact::log_potential_table(&m).unwrap();
            let z = crate::linalg::log_sum_exp(&t);
            t.iter().map(|v| (v - z).exp()).collect()
        };
        let params = GibbsParams {
            burn_in: 50,
            thin: 2,
            n_chains: 8,
        };
        let n = 60_000;
        let x = sample(&m, n, &params, &mut rng_from_seed(3)).unwrap();
        let cards = [3u32, 2, 3, 2];
        let mut counts = vec![0.0; probs.len()];
        for row in x.values().outer_iter() {
            counts[state_index(&cards, row.as_slice().unwrap())] += 1.0;
        }
        // Chi-square over the 36 states, with a margin for the chains' correlation.
        let chi2: f64 = counts
            .iter()
            .zip(&probs)
            .map(|(c, p)| (c - n as f64 * p).powi(2) / (n as f64 * p))
            .sum();
        let df = probs.len() as f64 - 1.0;
        assert!(chi2 < 2.0 * (df + 5.0 * (2.0 * df).sqrt()), "chi2 {chi2}");
    }

    #[test]
    fn deterministic_whatever_the_thread_count() {
        let m = random_model(vec![4; 12], 0.5, 2);
        let params = GibbsParams {
            burn_in: 20,
            thin: 1,
            n_chains: 5,
        };
        let run = || sample(&m, 37, &params, &mut rng_from_seed(9)).unwrap();
        let (one, three) = (on_threads(1, run), on_threads(3, run));
        assert_eq!(one, three);
        assert_eq!(one.cardinalities(), &[4; 12]);
        let bad = GibbsParams { thin: 0, ..params };
        assert!(sample(&m, 3, &bad, &mut rng_from_seed(1)).is_err());
        assert!(PottsChain::new(&m, &[4; 12]).is_err());
    }
}
