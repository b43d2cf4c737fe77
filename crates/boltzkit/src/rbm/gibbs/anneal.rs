//! The step of the annealing kernel of AIS, reverse AIS and RAISE ([`crate::rbm::ais`]) with
//! the chains split across threads: each task takes a block of chains through the product
//! `V·W`, the log-weight update, `h ~ p_β(h | v)` and the index lists of `h`, then (second
//! region) through `H·Wᵀ`, `v ~ p_β(v | h)` and the lists of `v`: two parallel regions per
//! step instead of a parallel product, a serial scan, a parallel bias pass and a parallel
//! sampling pass for each layer.
//!
//! The same bits as the layer-at-a-time step ([`AnnealChains::step_unfused`], the reference
//! of the tests) for any number of threads: the sparse products sum each element in the
//! order of [`binary::sum_selected`], the choice between the sparse and the dense product is
//! made from the whole batch's density as in [`Rbm::hidden_input`], the rest is per chain,
//! and chain `i` draws from its own stream.

use super::fused::{bounds, draw, hidden_product, n_blocks, split, visible_product, Scan};
use super::sample_bernoulli;
use crate::error::Result;
use crate::linalg;
use crate::linalg::binary::{self, IndexLists};
use crate::rbm::Rbm;
use crate::rng::BkRng;
use rayon::prelude::*;

/// AIS chains between steps: visible states, generators, log-weights, and the index lists of
/// the visible states (per block of chains) for the next step's product.
pub(crate) struct AnnealChains {
    nv: usize,
    nh: usize,
    v: Vec<f32>,
    rngs: Vec<BkRng>,
    x: Vec<f32>,
    h: Vec<f32>,
    pv: Vec<f32>,
    log_weights: Vec<f64>,
    /// `b − b_A`, the linear term of `ln p*_β(v)` per unit of `β`.
    db: Vec<f64>,
    base_b: Vec<f32>,
    bounds: Vec<usize>,
    lists: Vec<IndexLists>,
    /// What the lists of `v` hold.
    scan: Scan,
}

/// One block's chains.
struct Block<'a> {
    v: &'a mut [f32],
    x: &'a mut [f32],
    h: &'a mut [f32],
    pv: &'a mut [f32],
    rngs: &'a mut [BkRng],
    lw: &'a mut [f64],
    lists: &'a mut IndexLists,
}

impl AnnealChains {
    /// Chains at `v` (`rngs.len() × n_visible`), log-weights 0.
    pub(crate) fn new(rbm: &Rbm, base_b: &[f32], v: Vec<f32>, rngs: Vec<BkRng>) -> Result<Self> {
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let m = rngs.len();
        crate::rbm::model::check_len("anneal", "v", v.len(), m * nv)?;
        crate::rbm::model::check_len("anneal", "base_b", base_b.len(), nv)?;
        let db = rbm
            .b()
            .iter()
            .zip(base_b)
            .map(|(&b, &a)| f64::from(b) - f64::from(a))
            .collect();
        let nb = n_blocks(m);
        let mut chains = AnnealChains {
            nv,
            nh,
            v,
            rngs,
            x: vec![0f32; m * nh],
            h: vec![0f32; m * nh],
            pv: vec![0f32; m * nv],
            log_weights: vec![0f64; m],
            db,
            base_b: base_b.to_vec(),
            bounds: bounds(m, nb),
            lists: vec![IndexLists::default(); nb],
            scan: Scan::NONE,
        };
        chains.scan = chains.region(|b, nv, _| Scan::of(b.lists, b.v, nv));
        Ok(chains)
    }

    /// The log-weights.
    pub(crate) fn into_log_weights(self) -> Vec<f64> {
        self.log_weights
    }

    /// Runs `f` on every block of chains in parallel; the scans joined in block order.
    fn region(&mut self, f: impl Fn(&mut Block, usize, usize) -> Scan + Sync) -> Scan {
        let (nv, nh, bc) = (self.nv, self.nh, &self.bounds);
        let mut blocks: Vec<Block> = split(&mut self.v, bc, nv)
            .into_iter()
            .zip(split(&mut self.x, bc, nh))
            .zip(split(&mut self.h, bc, nh))
            .zip(split(&mut self.pv, bc, nv))
            .zip(split(&mut self.rngs, bc, 1))
            .zip(split(&mut self.log_weights, bc, 1))
            .zip(self.lists.iter_mut())
            .map(|((((((v, x), h), pv), rngs), lw), lists)| Block {
                v,
                x,
                h,
                pv,
                rngs,
                lw,
                lists,
            })
            .collect();
        let scans: Vec<Scan> = blocks.par_iter_mut().map(|b| f(b, nv, nh)).collect();
        scans.into_iter().fold(Scan::NONE, Scan::join)
    }

    /// One step from `β = b0` to `β' = b1`: the log-weights gain `ln p*_{β'}(v) − ln p*_β(v)`,
    /// then one Gibbs step at `β'` moves `v`.
    pub(crate) fn step(&mut self, rbm: &Rbm, b0: f64, b1: f64) {
        let bf = b1 as f32;
        let w = hidden_product(rbm, self.scan, &self.v, &mut self.x);
        let listed = self.scan.binary;
        let db = std::mem::take(&mut self.db);
        let s = self.region(|b, nv, nh| {
            if let Some(w) = w {
                binary::sum_selected_serial(b.lists, w, b.x);
            }
            for (r, (((vr, xr), rng), l)) in
                b.v.chunks_exact(nv)
                    .zip(b.x.chunks_exact_mut(nh))
                    .zip(b.rngs.iter_mut())
                    .zip(b.lw.iter_mut())
                    .enumerate()
            {
                linalg::add_row_bias(xr, rbm.c());
                // Σ over the ones of v of (b − b_A), in increasing order: from the list of
                // the row's ones when it has one (the same terms, the same order)
                let lin: f64 = if listed && !b.lists.is_complement(r) {
                    b.lists.get(r).iter().map(|&i| db[i as usize]).sum()
                } else {
                    linear_term(vr, &db)
                };
                *l += (b1 - b0) * lin + linalg::softplus_scaled_diff_sum(xr, b0, b1);
                xr.iter_mut().for_each(|a| *a *= bf);
                linalg::sigmoid_inplace(xr);
                sample_bernoulli(xr, &mut b.h[r * nh..(r + 1) * nh], rng);
            }
            Scan::of(b.lists, b.h, nh)
        });
        self.db = db;
        let wt = visible_product(rbm, s, &self.h, &mut self.pv);
        let base_b = std::mem::take(&mut self.base_b);
        self.scan = self.region(|b, nv, _| {
            if let Some(wt) = wt {
                binary::sum_selected_serial(b.lists, wt, b.pv);
            }
            for pr in b.pv.chunks_exact_mut(nv) {
                linalg::add_row_bias(pr, rbm.b());
                for (p, &a) in pr.iter_mut().zip(&base_b) {
                    *p = bf * *p + (1.0 - bf) * a;
                }
                linalg::sigmoid_inplace(pr);
            }
            draw(b.pv, b.v, b.rngs, nv);
            Scan::of(b.lists, b.v, nv)
        });
        self.base_b = base_b;
    }
}

/// `Σ_{i: v_i ≠ 0} db_i` in increasing `i`.
fn linear_term(v: &[f32], db: &[f64]) -> f64 {
    v.iter()
        .zip(db)
        .filter(|(&vi, _)| vi != 0.0)
        .map(|(_, &d)| d)
        .sum()
}

#[cfg(test)]
impl AnnealChains {
    /// The layer-at-a-time step (each product parallel on its own, the model's
    /// `hidden_input` / `visible_input`): the reference [`AnnealChains::step`] must equal bit
    /// for bit.
    pub(crate) fn step_unfused(&mut self, rbm: &Rbm, b0: f64, b1: f64) {
        let (nv, nh) = (self.nv, self.nh);
        let bf = b1 as f32;
        rbm.hidden_input(&self.v, &mut self.x).unwrap();
        for ((((vr, xr), hr), rng), l) in self
            .v
            .chunks_exact(nv)
            .zip(self.x.chunks_exact_mut(nh))
            .zip(self.h.chunks_exact_mut(nh))
            .zip(self.rngs.iter_mut())
            .zip(self.log_weights.iter_mut())
        {
            let lin = linear_term(vr, &self.db);
            *l += (b1 - b0) * lin + linalg::softplus_scaled_diff_sum(xr, b0, b1);
            xr.iter_mut().for_each(|a| *a *= bf);
            linalg::sigmoid_inplace(xr);
            sample_bernoulli(xr, hr, rng);
        }
        rbm.visible_input(&self.h, &mut self.pv).unwrap();
        for ((pr, vr), rng) in self
            .pv
            .chunks_exact_mut(nv)
            .zip(self.v.chunks_exact_mut(nv))
            .zip(self.rngs.iter_mut())
        {
            for (p, &a) in pr.iter_mut().zip(&self.base_b) {
                *p = bf * *p + (1.0 - bf) * a;
            }
            linalg::sigmoid_inplace(pr);
            sample_bernoulli(pr, vr, rng);
        }
        // the lists are the fused step's business: rebuild them for the state reached
        self.scan = self.region(|b, nv, _| Scan::of(b.lists, b.v, nv));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{derive_rng, rng_from_seed};
    use rand::Rng;

    /// The fused step equals the layer-at-a-time one bit for bit (states, log-weights), on
    /// sparse, complemented and dense products, for 1, 2 and 3 threads.
    #[test]
    fn fused_step_equals_layer_by_layer_reference() {
        for (nv, nh, sd, density) in [
            (41, 23, 1.5, 0.1),
            (300, 700, 0.05, 0.5),
            (19, 600, 0.8, 0.7),
        ] {
            let rbm = Rbm::random(nv, nh, sd, &mut rng_from_seed(nv as u64)).unwrap();
            let m = 29;
            let mut rng = rng_from_seed(3);
            let v0: Vec<f32> = (0..m * nv)
                .map(|_| f32::from(u8::from(rng.random::<f32>() < density)))
                .collect();
            let base: Vec<f32> = (0..nv).map(|i| (i % 5) as f32 * 0.3 - 0.6).collect();
            let rngs = || (0..m as u64).map(|i| derive_rng(9, i)).collect::<Vec<_>>();
            let betas = [0.0, 0.1, 0.5, 0.5, 0.9, 1.0];
            let mut want = AnnealChains::new(&rbm, &base, v0.clone(), rngs()).unwrap();
            for w in betas.windows(2) {
                want.step_unfused(&rbm, w[0], w[1]);
            }
            for threads in [1, 2, 3] {
                crate::testutil::on_threads(threads, || {
                    let mut got = AnnealChains::new(&rbm, &base, v0.clone(), rngs()).unwrap();
                    for w in betas.windows(2) {
                        got.step(&rbm, w[0], w[1]);
                    }
                    assert_eq!(got.v, want.v, "{nv}×{nh} t={threads}");
                    assert_eq!(got.h, want.h, "{nv}×{nh} t={threads}");
                    assert_eq!(got.log_weights, want.log_weights, "{nv}×{nh} t={threads}");
                });
            }
        }
    }
}
