//! [`UnitChains`]: a mini-batch of block Gibbs chains over a [`UnitRbm`] of any unit types,
//! one generator per chain (chain `i` draws from [`derive_rng`]`(seed, i)`), so the states do
//! not depend on the thread count. A step draws `h ~ p(h | v)` then `v ~ p(v | h)`, each
//! layer's input one product per batch ([`UnitRbm::sample_hidden`],
//! [`UnitRbm::sample_visible`]).

use super::model::UnitRbm;
use crate::error::{Error, Result};
use crate::rng::{derive_rng, BkRng};

/// A mini-batch of Gibbs chains: the current visible and hidden rows, the last inputs, one
/// generator per chain.
///
/// ```
/// use boltzkit::rbm::units::{Categorical, DRelu, UnitChains, UnitRbm, Units};
/// let visible = Units::Categorical(Categorical::new(vec![3, 2], vec![0.0; 5])?);
/// let hidden = Units::DRelu(DRelu::new(vec![1.0], vec![1.0], vec![0.0], vec![0.0])?);
/// let m = UnitRbm::new(visible, hidden, vec![0.5, -0.5, 0.0, 1.0, -1.0])?;
/// let v0 = [1.0, 0.0, 0.0, 0.0, 1.0, /* chain 2 */ 0.0, 1.0, 0.0, 1.0, 0.0];
/// let mut chains = UnitChains::new(&m, &v0, 42)?;
/// chains.run(&m, 10)?;
/// m.visible().check_states(chains.visible())?; // still one-hot per site
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct UnitChains {
    n_chains: usize,
    seed: u64,
    v: Vec<f32>,
    h: Vec<f32>,
    input_v: Vec<f32>,
    input_h: Vec<f32>,
    rngs: Vec<BkRng>,
}

impl UnitChains {
    /// Chains started at the visible rows `v0` (`n_chains × width_v`, states of the visible
    /// layer), chain `i` drawing from [`derive_rng`]`(seed, i)`; hidden rows start at 0.
    pub fn new(model: &UnitRbm, v0: &[f32], seed: u64) -> Result<Self> {
        let (wv, wh) = (model.visible().width(), model.hidden().width());
        if v0.is_empty() || !v0.len().is_multiple_of(wv) {
            return Err(Error::Shape {
                op: "UnitChains::new".into(),
                expected: format!("at least one start row of {wv} values"),
                found: format!("{} values", v0.len()),
            });
        }
        model.visible().check_states(v0)?;
        let n_chains = v0.len() / wv;
        Ok(UnitChains {
            n_chains,
            seed,
            v: v0.to_vec(),
            h: vec![0.0; n_chains * wh],
            input_v: vec![0.0; n_chains * wv],
            input_h: vec![0.0; n_chains * wh],
            rngs: (0..n_chains as u64).map(|i| derive_rng(seed, i)).collect(),
        })
    }

    /// Number of chains.
    pub fn n_chains(&self) -> usize {
        self.n_chains
    }

    /// The visible rows (`n_chains × width_v`).
    pub fn visible(&self) -> &[f32] {
        &self.v
    }

    /// The hidden rows (`n_chains × width_h`), drawn from `p(h | v)` of the visible rows
    /// before the last step's visible draw.
    pub fn hidden(&self) -> &[f32] {
        &self.h
    }

    /// One step: `h ~ p(h | v)`, then `v ~ p(v | h)`. An error when the model's layer widths
    /// are not the chains'.
    pub fn step(&mut self, model: &UnitRbm) -> Result<()> {
        let rngs = &mut self.rngs[..self.n_chains];
        model.sample_hidden(&self.v, &mut self.input_h, &mut self.h, rngs)?;
        model.sample_visible(&self.h, &mut self.input_v, &mut self.v, rngs)
    }

    /// Puts the chains at the visible rows `v` (states of the visible layer: CD's restart at
    /// the mini-batch), one chain per row: fewer chains than before keep their first
    /// generators, more draw from [`derive_rng`]`(seed, i)` as [`UnitChains::new`]'s.
    pub fn restart(&mut self, v: &[f32]) -> Result<()> {
        let wv = self.input_v.len() / self.n_chains;
        let wh = self.h.len() / self.n_chains;
        if v.is_empty() || !v.len().is_multiple_of(wv) {
            return Err(Error::Shape {
                op: "UnitChains::restart".into(),
                expected: format!("at least one row of {wv} values"),
                found: format!("{} values", v.len()),
            });
        }
        let n = v.len() / wv;
        self.n_chains = n;
        self.v.clear();
        self.v.extend_from_slice(v);
        self.h.resize(n * wh, 0.0);
        self.input_v.resize(n * wv, 0.0);
        self.input_h.resize(n * wh, 0.0);
        let have = self.rngs.len() as u64;
        self.rngs
            .extend((have..n as u64).map(|i| derive_rng(self.seed, i)));
        Ok(())
    }

    /// `k` steps.
    pub fn run(&mut self, model: &UnitRbm, k: usize) -> Result<()> {
        for _ in 0..k {
            self.step(model)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::twins::{all_states, one_hot_blocks};
    use super::super::{Bernoulli, Categorical, DRelu, Gaussian, Units};
    use super::*;
    use crate::testutil::on_threads;

    fn weights(n: usize, seed: u64) -> Vec<f32> {
        super::super::twins::normal_weights(n, 0.7, seed)
    }

    /// The frequencies of `states` among the rows of `x` against the probabilities
    /// `e^{log_w}` (normalized): each within 5 standard errors of `n` independent draws.
    fn frequencies_match(x: &[f32], states: &[Vec<f32>], log_w: &[f64]) {
        let z = crate::linalg::log_sum_exp(log_w);
        let w = states[0].len();
        let n = x.len() / w;
        let mut count = vec![0usize; states.len()];
        for row in x.chunks_exact(w) {
            let k = states.iter().position(|s| s[..] == *row).expect("a state");
            count[k] += 1;
        }
        for (c, lw) in count.iter().zip(log_w) {
            let p = (lw - z).exp();
            let f = *c as f64 / n as f64;
            let se = (p * (1.0 - p) / n as f64).sqrt();
            assert!((f - p).abs() < 5.0 * se + 1e-3, "{f} vs {p} ({count:?})");
        }
    }

    #[test]
    fn chains_reach_the_exact_marginal_of_the_discrete_layer() {
        let n = 3000;
        // categorical visible, dReLU hidden: p(v) ∝ e^{−F(v)} over the 6 visible states
        let q = [3usize, 2];
        let cat = Units::Categorical(Categorical::new(q.to_vec(), weights(5, 1)).unwrap());
        let drelu = Units::DRelu(
            DRelu::new(
                vec![1.0, 2.0],
                vec![1.5, 0.8],
                vec![0.2, -0.4],
                vec![0.1, 0.6],
            )
            .unwrap(),
        );
        let m = UnitRbm::new(cat, drelu, weights(10, 2)).unwrap();
        let vs = all_states(&q.map(one_hot_blocks));
        let mut chains = UnitChains::new(&m, &vs[0].repeat(n), 3).unwrap();
        chains.run(&m, 30).unwrap();
        let log_w: Vec<f64> = vs.iter().map(|v| -m.free_energy(v).unwrap()).collect();
        frequencies_match(chains.visible(), &vs, &log_w);
        // Gaussian visible, Bernoulli hidden: p(h) ∝ e^{−U(h) + Γ_v(W h)} over the 4 states
        let (lo, hi) = super::super::VARIANCE_BOUNDS;
        let g = Gaussian::new(
            vec![0.3, -0.2],
            vec![0.5, 2.0],
            super::super::Bounded::new(lo, hi).unwrap(),
        )
        .unwrap();
        let ber = Bernoulli::new(vec![-0.3, 0.4]).unwrap();
        let m = UnitRbm::new(
            Units::Gaussian(g.clone()),
            Units::Bernoulli(ber),
            weights(4, 4),
        )
        .unwrap();
        let hs = all_states(&vec![vec![vec![0.0], vec![1.0]]; 2]);
        let mut chains = UnitChains::new(&m, &[0.0, 0.0].repeat(n), 5).unwrap();
        chains.run(&m, 30).unwrap();
        let log_w: Vec<f64> = hs
            .iter()
            .map(|h| {
                let mut input = [0.0f32; 2];
                m.visible_input(h, &mut input).unwrap();
                let mut e = [0.0f64; 2];
                m.hidden().energies(h, &mut e[..1]).unwrap();
                m.visible().log_partitions(&input, &mut e[1..]).unwrap();
                e[1] - e[0]
            })
            .collect();
        frequencies_match(chains.hidden(), &hs, &log_w);
    }

    #[test]
    fn the_same_bits_on_any_thread_count() {
        let cat = Units::Categorical(Categorical::new(vec![4; 6], weights(24, 6)).unwrap());
        let ber = Units::Bernoulli(Bernoulli::new(weights(40, 7)).unwrap());
        let m = UnitRbm::new(cat, ber, weights(24 * 40, 8)).unwrap();
        let v0 = [1.0, 0.0, 0.0, 0.0].repeat(6 * 50);
        let run = || {
            let mut c = UnitChains::new(&m, &v0, 9).unwrap();
            c.run(&m, 5).unwrap();
            c
        };
        let (a, b) = (on_threads(1, run), on_threads(3, run));
        assert_eq!((a.visible(), a.hidden()), (b.visible(), b.hidden()));
        assert!(UnitChains::new(&m, &v0[1..], 9).is_err());
        assert!(UnitChains::new(&m, &[0.0; 24], 9).is_err());
        // a restart at fewer rows, then more: the first chains keep their generators
        let mut c = UnitChains::new(&m, &v0, 9).unwrap();
        c.restart(&v0[..24 * 3]).unwrap();
        c.run(&m, 2).unwrap();
        c.restart(&v0).unwrap();
        assert_eq!(c.n_chains(), 50);
        assert!(c.restart(&v0[1..]).is_err());
    }
}
