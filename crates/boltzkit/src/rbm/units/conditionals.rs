//! The conditionals of a [`UnitRbm`] on mini-batches: each layer's input from the other
//! (`I_h = V·W`, `I_v = H·Wᵀ`, one product per batch), then the layer's type once per batch
//! for its means or draws ([`Units::means`](super::Units::means), [`Units::sample`](super::Units::sample)). Products with 0/1 rows
//! (Bernoulli states, categorical one-hot rows) sum the selected rows of the packed `W` / `Wᵀ`
//! ([`crate::linalg::binary`], as the binary [`crate::rbm::Rbm`] does); real-valued rows take
//! [`crate::linalg::sgemm_par`]. Either way the same bits for any thread count.

use super::model::UnitRbm;
use crate::error::{Error, Result};
use crate::rng::BkRng;

impl UnitRbm {
    /// Rows of a batch `x` of the visible (`to_visible = false`) or hidden layer's rows,
    /// checked against `out`, which takes the other layer's rows.
    fn batch(&self, op: &str, x: &[f32], out: &[f32], to_visible: bool) -> Result<usize> {
        let (a, b) = if to_visible {
            (&self.hidden, &self.visible)
        } else {
            (&self.visible, &self.hidden)
        };
        let (wa, wb) = (a.width(), b.width());
        if !x.len().is_multiple_of(wa) || out.len() != x.len() / wa * wb {
            return Err(Error::Shape {
                op: format!("UnitRbm::{op}"),
                expected: format!("rows of {wa} values in, as many rows of {wb} out"),
                found: format!("{} values in, {} out", x.len(), out.len()),
            });
        }
        Ok(x.len() / wa)
    }

    /// `out ← X·W` (`to_visible = false`) or `X·Wᵀ`, shapes checked by the caller.
    pub(super) fn product(&self, x: &[f32], out: &mut [f32], to_visible: bool) {
        let (wv, wh) = (self.visible.width(), self.hidden.width());
        self.packed.product(&self.w, wv, wh, x, out, to_visible);
    }

    /// The hidden layer's input `I = V·W` of a batch of visible rows `v`
    /// (`batch × width_v`) into `out` (`batch × width_h`).
    pub fn hidden_input(&self, v: &[f32], out: &mut [f32]) -> Result<()> {
        self.batch("hidden_input", v, out, false)?;
        self.product(v, out, false);
        Ok(())
    }

    /// The visible layer's input `I = H·Wᵀ` of a batch of hidden rows `h`
    /// (`batch × width_h`) into `out` (`batch × width_v`).
    pub fn visible_input(&self, h: &[f32], out: &mut [f32]) -> Result<()> {
        self.batch("visible_input", h, out, true)?;
        self.product(h, out, true);
        Ok(())
    }

    /// `E[h | v]` of a batch of visible rows into `out` (`batch × width_h`).
    pub fn hidden_means(&self, v: &[f32], out: &mut [f32]) -> Result<()> {
        self.hidden_input(v, out)?;
        let input = out.to_vec();
        self.hidden.means(&input, out)
    }

    /// `E[v | h]` of a batch of hidden rows into `out` (`batch × width_v`; for categorical
    /// visible units the states' probabilities).
    pub fn visible_means(&self, h: &[f32], out: &mut [f32]) -> Result<()> {
        self.visible_input(h, out)?;
        let input = out.to_vec();
        self.visible.means(&input, out)
    }

    /// One draw `h ~ p(h | v)` per visible row into `out`, row `r` from `rngs[r]`; `input`
    /// receives `V·W` (same shape as `out`).
    pub fn sample_hidden(
        &self,
        v: &[f32],
        input: &mut [f32],
        out: &mut [f32],
        rngs: &mut [BkRng],
    ) -> Result<()> {
        self.hidden_input(v, input)?;
        self.hidden.sample(input, out, rngs)
    }

    /// One draw `v ~ p(v | h)` per hidden row into `out`, row `r` from `rngs[r]`; `input`
    /// receives `H·Wᵀ` (same shape as `out`).
    pub fn sample_visible(
        &self,
        h: &[f32],
        input: &mut [f32],
        out: &mut [f32],
        rngs: &mut [BkRng],
    ) -> Result<()> {
        self.visible_input(h, input)?;
        self.visible.sample(input, out, rngs)
    }
}

#[cfg(test)]
mod tests {
    use super::super::twins::{all_states, layer_rows as rows};
    use super::super::{Bernoulli, Categorical, DRelu, Gaussian, Relu, Units};
    use super::*;

    fn weights(n: usize, seed: u64) -> Vec<f32> {
        super::super::twins::normal_weights(n, 0.7, seed)
    }

    #[test]
    fn inputs_sparse_and_dense_match_the_naive_products() {
        let cat = Units::Categorical(Categorical::new(vec![4, 2, 3, 5], weights(14, 1)).unwrap());
        let gauss = Units::Gaussian(Gaussian::standard(3).unwrap());
        let ber = Units::Bernoulli(Bernoulli::new(weights(6, 2)).unwrap());
        let drelu = Units::DRelu(
            DRelu::new(vec![1.0; 5], vec![2.0; 5], vec![0.1; 5], vec![0.3; 5]).unwrap(),
        );
        for (v, h) in [(cat.clone(), drelu), (gauss, ber.clone()), (cat, ber)] {
            let (wv, wh) = (v.width(), h.width());
            let m = UnitRbm::new(v.clone(), h.clone(), weights(wv * wh, 3)).unwrap();
            let n = 37;
            let (xv, xh) = (rows(&v, n, 4), rows(&h, n, 5));
            let (mut ih, mut iv) = (vec![0.0; n * wh], vec![0.0; n * wv]);
            m.hidden_input(&xv, &mut ih).unwrap();
            m.visible_input(&xh, &mut iv).unwrap();
            for r in 0..n {
                for j in 0..wh {
                    let want: f32 = (0..wv).map(|i| xv[r * wv + i] * m.w()[i * wh + j]).sum();
                    assert!((ih[r * wh + j] - want).abs() < 1e-5, "{:?}", v.kind());
                }
                for i in 0..wv {
                    let want: f32 = (0..wh).map(|j| xh[r * wh + j] * m.w()[i * wh + j]).sum();
                    assert!((iv[r * wv + i] - want).abs() < 1e-5, "{:?}", h.kind());
                }
            }
            assert!(m.hidden_input(&xv[1..], &mut ih).is_err());
            assert!(m.visible_input(&xh, &mut ih).is_err() || wv == wh);
        }
    }

    /// `E[x | other]` of one layer of a model with two discrete layers, by enumerating the
    /// joint states: `Σ_x x e^{−E(x, y)} / Σ_x e^{−E(x, y)}`.
    fn mean_by_enumeration(m: &UnitRbm, y: &[f32], hidden: bool, states: &[Vec<f32>]) -> Vec<f64> {
        let w: Vec<f64> = states
            .iter()
            .map(|x| {
                let e = if hidden {
                    m.energy(y, x)
                } else {
                    m.energy(x, y)
                };
                -e.unwrap()
            })
            .collect();
        let z = crate::linalg::log_sum_exp(&w);
        let mut mean = vec![0.0; states[0].len()];
        for (x, lw) in states.iter().zip(&w) {
            for (m, &xi) in mean.iter_mut().zip(x) {
                *m += (lw - z).exp() * f64::from(xi);
            }
        }
        mean
    }

    #[test]
    fn means_match_enumeration_of_the_joint() {
        let (q, nh) = (vec![3, 2], 3);
        let cat = Units::Categorical(Categorical::new(q.clone(), weights(5, 6)).unwrap());
        let ber = Units::Bernoulli(Bernoulli::new(weights(nh, 7)).unwrap());
        let m = UnitRbm::new(cat.clone(), ber.clone(), weights(5 * nh, 8)).unwrap();
        let blocks: Vec<_> = q
            .iter()
            .map(|&k| super::super::twins::one_hot_blocks(k))
            .collect();
        let vs = all_states(&blocks);
        let hs = all_states(&vec![vec![vec![0.0], vec![1.0]]; nh]);
        let v_batch: Vec<f32> = vs.concat();
        let h_batch: Vec<f32> = hs.concat();
        let mut mh = vec![0.0; vs.len() * nh];
        m.hidden_means(&v_batch, &mut mh).unwrap();
        for (r, v) in vs.iter().enumerate() {
            let want = mean_by_enumeration(&m, v, true, &hs);
            for (g, w) in mh[r * nh..(r + 1) * nh].iter().zip(&want) {
                assert!((f64::from(*g) - w).abs() < 1e-6, "{g} vs {w}");
            }
        }
        let mut mv = vec![0.0; hs.len() * 5];
        m.visible_means(&h_batch, &mut mv).unwrap();
        for (r, h) in hs.iter().enumerate() {
            let want = mean_by_enumeration(&m, h, false, &vs);
            for (g, w) in mv[r * 5..(r + 1) * 5].iter().zip(&want) {
                assert!((f64::from(*g) - w).abs() < 1e-6, "{g} vs {w}");
            }
        }
        // a continuous layer's mean is its type's mean at the product's input
        let relu = Units::Relu(Relu::new(vec![1.0, 2.0], vec![0.2, -0.5]).unwrap());
        let m = UnitRbm::new(cat, relu.clone(), weights(10, 9)).unwrap();
        let mut got = vec![0.0; vs.len() * 2];
        m.hidden_means(&v_batch, &mut got).unwrap();
        let mut input = vec![0.0; vs.len() * 2];
        m.hidden_input(&v_batch, &mut input).unwrap();
        let mut want = vec![0.0; vs.len() * 2];
        relu.means(&input, &mut want).unwrap();
        assert_eq!(got, want);
    }
}
