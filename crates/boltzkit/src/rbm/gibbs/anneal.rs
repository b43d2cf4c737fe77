//! The step of the annealing kernel of AIS, reverse AIS and RAISE ([`crate::rbm::ais`]) with
//! the chains split across threads: each task takes a block of chains through the product
//! `V·W`, the log-weight update, `h ~ p_β(h | v)` and the change lists of `h`, then (second
//! region) through `H·Wᵀ`, `v ~ p_β(v | h)` and the change lists of `v`: two parallel
//! regions per step instead of a parallel product, a serial scan, a parallel bias pass and
//! a parallel sampling pass for each layer.
//!
//! The products are kept from step to step and carried by each chain's changes
//! ([`ChangeLists`]): near `β = 1` an MNIST chain changes 7% of its visible and 12% of its
//! hidden units per step, against 17% and 29% of ones, so a step sums fewer than half the
//! rows a fresh product would (issue 19). A row goes back to a fresh sum when its changes
//! are not fewer than its ones (or zeros), and at least every [`MAX_DELTA_RUN`] + 1 steps,
//! which bounds the rounding a carried product gathers (a few `f32` ulps per step); a
//! product narrower than [`MIN_CARRY_COLS`] is always summed afresh. The hidden units' part
//! of the log-weight gain comes from the probabilities the step draws from, by a series
//! ([`linalg::sigmoid_with_softplus_gain`]) when the step in `β` is small. Each chain
//! draws its units from four generator lanes seeded from its own generator
//! ([`crate::rng::sample_bernoulli_x4`]: eight draws per step of the four lanes; in `perf`
//! one generator's draws took 13% of a one-thread MNIST run even at two draws per output,
//! these take 3.6%). The
//! results do not depend on the number of threads (every choice is per chain, and chain `i`
//! draws from its own stream); with `max_run = 0` every product is fresh and the step is the
//! bits of the layer-at-a-time step (`AnnealChains::step_unfused`, the tests' reference).

use super::fused::{bounds, hidden_product, n_blocks, split, visible_product, Scan};
use crate::error::Result;
use crate::linalg;
use crate::linalg::binary::{self, ChangeLists};
use crate::rbm::Rbm;
use crate::rng::{sample_bernoulli_x4, BkRng, Xoshiro256PlusPlusX4};
use rayon::prelude::*;

/// Steps a chain's product is carried by its changes before a fresh sum.
pub(crate) const MAX_DELTA_RUN: u32 = 63;

/// Fewest columns of a product carried by changes: listing a row's changes costs a pass over
/// the row's units, which fewer row additions pay back only on a wide enough product (a
/// 784 × 20 MNIST model's `V·W`, 20 columns, ran about 10% slower carried; `H·Wᵀ`, 784
/// columns, and both products of 784 × 500 gain).
const MIN_CARRY_COLS: usize = 64;

/// AIS chains between steps: visible states and their product `V·W`, hidden states and
/// their product `H·Wᵀ`, generators, log-weights, and the change lists of the visible
/// states (per block of chains) for the next step's product.
pub(crate) struct AnnealChains {
    nv: usize,
    nh: usize,
    v: Vec<f32>,
    /// Each chain's draws: four generator lanes seeded from the chain's generator.
    rngs: Vec<Xoshiro256PlusPlusX4>,
    /// `V·W` of the current visible states.
    xv: Vec<f32>,
    /// The hidden inputs, then probabilities, of the step.
    x: Vec<f32>,
    h: Vec<f32>,
    /// `H·Wᵀ` of the current hidden states (once a step has drawn them).
    xh: Vec<f32>,
    /// The visible probabilities of the step.
    pv: Vec<f32>,
    log_weights: Vec<f64>,
    /// `Σ_{i: v_i = 1} (b − b_A)_i` of each chain's current state.
    lin: Vec<f64>,
    /// `b − b_A`, the linear term of `ln p*_β(v)` per unit of `β`.
    db: Vec<f64>,
    base_b: Vec<f32>,
    /// `(1 − β′) b_A` of the current step, the base model's share of the visible inputs
    /// (a buffer reused from step to step).
    base_share: Vec<f32>,
    bounds: Vec<usize>,
    scratch: Vec<BlockScratch>,
    /// What the change lists of `v` hold.
    scan: Scan,
    /// Whether `xh` is the product of `h` (after the first step).
    hidden_known: bool,
    /// How many steps in a row `V·W` and `H·Wᵀ` are carried by changes: [`MAX_DELTA_RUN`],
    /// or 0 (fresh products at every step) for a product narrower than [`MIN_CARRY_COLS`]
    /// and for the tests' reference.
    max_run: (u32, u32),
}

/// A block's lists and buffers, reused from step to step.
#[derive(Debug, Default)]
struct BlockScratch {
    /// From each chain's previous visible state to its current one.
    v_changes: ChangeLists,
    /// From each chain's previous hidden state to its current one.
    h_changes: ChangeLists,
    /// A drawn row before it replaces the chain's state.
    row: Vec<f32>,
}

/// One block's chains.
struct Block<'a> {
    v: &'a mut [f32],
    xv: &'a mut [f32],
    x: &'a mut [f32],
    h: &'a mut [f32],
    xh: &'a mut [f32],
    pv: &'a mut [f32],
    rngs: &'a mut [Xoshiro256PlusPlusX4],
    lw: &'a mut [f64],
    lin: &'a mut [f64],
    s: &'a mut BlockScratch,
}

impl AnnealChains {
    /// Chains at `v` (`rngs.len() × n_visible`), log-weights 0.
    pub(crate) fn new(rbm: &Rbm, base_b: &[f32], v: Vec<f32>, rngs: Vec<BkRng>) -> Result<Self> {
        Self::with_max_run(rbm, base_b, v, rngs, MAX_DELTA_RUN)
    }

    /// [`AnnealChains::new`] carrying products by changes at most `max_run` steps in a row.
    fn with_max_run(
        rbm: &Rbm,
        base_b: &[f32],
        v: Vec<f32>,
        rngs: Vec<BkRng>,
        max_run: u32,
    ) -> Result<Self> {
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
            rngs: rngs
                .into_iter()
                .map(|mut r| Xoshiro256PlusPlusX4::from_rng(&mut r))
                .collect(),
            xv: vec![0f32; m * nh],
            x: vec![0f32; m * nh],
            h: vec![0f32; m * nh],
            xh: vec![0f32; m * nv],
            pv: vec![0f32; m * nv],
            log_weights: vec![0f64; m],
            lin: vec![0f64; m],
            db,
            base_b: base_b.to_vec(),
            base_share: vec![0f32; nv],
            bounds: bounds(m, nb),
            scratch: (0..nb).map(|_| BlockScratch::default()).collect(),
            scan: Scan::NONE,
            hidden_known: false,
            max_run: (
                if nh >= MIN_CARRY_COLS { max_run } else { 0 },
                if nv >= MIN_CARRY_COLS { max_run } else { 0 },
            ),
        };
        chains.list_visible_afresh();
        Ok(chains)
    }

    /// Full lists of the visible states: the next step sums its products afresh.
    fn list_visible_afresh(&mut self) {
        let max_run = self.max_run.0;
        self.scan = self.region(|b, nv, _| {
            b.s.v_changes.begin(nv, max_run);
            b.v.chunks_exact(nv)
                .for_each(|row| b.s.v_changes.push_row(None, row));
            b.s.v_changes.finish();
            Scan::of_changes(&b.s.v_changes, b.v.is_empty())
        });
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
            .zip(split(&mut self.xv, bc, nh))
            .zip(split(&mut self.x, bc, nh))
            .zip(split(&mut self.h, bc, nh))
            .zip(split(&mut self.xh, bc, nv))
            .zip(split(&mut self.pv, bc, nv))
            .zip(split(&mut self.rngs, bc, 1))
            .zip(split(&mut self.log_weights, bc, 1))
            .zip(split(&mut self.lin, bc, 1))
            .zip(self.scratch.iter_mut())
            .map(
                |(((((((((v, xv), x), h), xh), pv), rngs), lw), lin), s)| Block {
                    v,
                    xv,
                    x,
                    h,
                    xh,
                    pv,
                    rngs,
                    lw,
                    lin,
                    s,
                },
            )
            .collect();
        let scans: Vec<Scan> = blocks.par_iter_mut().map(|b| f(b, nv, nh)).collect();
        scans.into_iter().fold(Scan::NONE, Scan::join)
    }

    /// One step from `β = b0` to `β' = b1`: the log-weights gain `ln p*_{β'}(v) − ln p*_β(v)`,
    /// then one Gibbs step at `β'` moves `v`.
    pub(crate) fn step(&mut self, rbm: &Rbm, b0: f64, b1: f64) {
        let bf = b1 as f32;
        let ((run_v, run_h), hidden_known) = (self.max_run, self.hidden_known);
        let w = hidden_product(rbm, self.scan, &self.v, &mut self.xv);
        let db = std::mem::take(&mut self.db);
        let s = self.region(|b, nv, nh| {
            if let Some(w) = w {
                binary::carry_products(&b.s.v_changes, w, b.xv);
            }
            b.s.row.resize(nv.max(nh), 0.0);
            b.s.h_changes.begin(nh, run_h);
            for (r, (((((vr, xr), rng), l), lin), hr)) in
                b.v.chunks_exact(nv)
                    .zip(b.x.chunks_exact_mut(nh))
                    .zip(b.rngs.iter_mut())
                    .zip(b.lw.iter_mut())
                    .zip(b.lin.iter_mut())
                    .zip(b.h.chunks_exact_mut(nh))
                    .enumerate()
            {
                sum_into(xr, &b.xv[r * nh..(r + 1) * nh], rbm.c());
                *lin = linear_of(&b.s.v_changes, w.is_some(), r, vr, &db, *lin);
                *l += (b1 - b0) * *lin + hidden_gain(xr, b0, b1);
                let new = &mut b.s.row[..nh];
                sample_bernoulli_x4(xr, new, rng);
                b.s.h_changes.push_row(hidden_known.then_some(&*hr), new);
                hr.copy_from_slice(new);
            }
            b.s.h_changes.finish();
            Scan::of_changes(&b.s.h_changes, b.v.is_empty())
        });
        self.db = db;
        let wt = visible_product(rbm, s, &self.h, &mut self.xh);
        let mut base_share = std::mem::take(&mut self.base_share);
        for (s, &a) in base_share.iter_mut().zip(&self.base_b) {
            *s = (1.0 - bf) * a;
        }
        self.scan = self.region(|b, nv, _| {
            if let Some(wt) = wt {
                binary::carry_products(&b.s.h_changes, wt, b.xh);
            }
            b.s.v_changes.begin(nv, run_v);
            for (((pr, xr), vr), rng) in
                b.pv.chunks_exact_mut(nv)
                    .zip(b.xh.chunks_exact(nv))
                    .zip(b.v.chunks_exact_mut(nv))
                    .zip(b.rngs.iter_mut())
            {
                mix_into(pr, xr, rbm.b(), bf, &base_share);
                linalg::sigmoid_inplace(pr);
                let new = &mut b.s.row[..nv];
                sample_bernoulli_x4(pr, new, rng);
                b.s.v_changes.push_row(Some(&*vr), new);
                vr.copy_from_slice(new);
            }
            b.s.v_changes.finish();
            Scan::of_changes(&b.s.v_changes, b.v.is_empty())
        });
        self.base_share = base_share;
        self.hidden_known = true;
    }
}

/// `out ← x + c` (one pass: a copy and a bias addition).
fn sum_into(out: &mut [f32], x: &[f32], c: &[f32]) {
    for (o, (&a, &b)) in out.iter_mut().zip(x.iter().zip(c)) {
        *o = a + b;
    }
}

/// `out ← β′ (x + b) + (1 − β′) b_A`, the visible inputs at `β′` from `x = H·Wᵀ`, the
/// model's biases `b` and the base model's share `(1 − β′) b_A` (one pass).
fn mix_into(out: &mut [f32], x: &[f32], b: &[f32], beta: f32, base_share: &[f32]) {
    for (o, ((&a, &b), &s)) in out.iter_mut().zip(x.iter().zip(b).zip(base_share)) {
        *o = beta * (a + b) + s;
    }
}

/// `Σ_{i: v_i ≠ 0} db_i` of row `r` (state `v`) given its change lists (`listed`: the lists
/// describe this state, else a dense product was taken): carried from `lin` by the changes
/// (the added ones, then the removed ones, each in increasing order), else summed over the
/// row's ones in increasing order (from its full list unless that lists zeros).
fn linear_of(
    changes: &ChangeLists,
    listed: bool,
    r: usize,
    v: &[f32],
    db: &[f64],
    lin: f64,
) -> f64 {
    if !listed || !changes.binary() {
        return linear_term(v, db);
    }
    let sum = |idx: &[u32]| idx.iter().map(|&i| db[i as usize]).sum::<f64>();
    if changes.is_delta(r) {
        lin + (sum(changes.on().get(r)) - sum(changes.off().get(r)))
    } else if changes.on().is_complement(r) {
        linear_term(v, db)
    } else {
        sum(changes.on().get(r))
    }
}

/// `x ← p_{β₁}(h = 1 | v)` from the hidden inputs `x` (`σ(β₁ x)`), returning the hidden
/// units' part of the log-weight gain, `Σ_j [softplus(β₁ x_j) − softplus(β₀ x_j)]`: by the
/// series at `β₁ x_j` when every `|(β₁ − β₀) x_j|` is small enough
/// ([`linalg::sigmoid_with_softplus_gain`]: one exponential per unit; from the 500th step of
/// the standard 14,500-step schedule on an MNIST model), else as the difference of the two
/// softplus values ([`linalg::softplus_scaled_diff_sum`]).
fn hidden_gain(x: &mut [f32], b0: f64, b1: f64) -> f64 {
    if ((b1 - b0).abs() as f32) * linalg::max_abs(x) <= linalg::SOFTPLUS_SERIES_MAX_STEP {
        return linalg::sigmoid_with_softplus_gain(x, b0, b1);
    }
    let gain = linalg::softplus_scaled_diff_sum(x, b0, b1);
    let bf = b1 as f32;
    x.iter_mut().for_each(|a| *a *= bf);
    linalg::sigmoid_inplace(x);
    gain
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
            *l += (b1 - b0) * lin + hidden_gain(xr, b0, b1);
            sample_bernoulli_x4(xr, hr, rng);
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
            sample_bernoulli_x4(pr, vr, rng);
        }
        // the lists and kept products are the fused step's business: a fused step after
        // this one sums afresh
        self.list_visible_afresh();
        self.hidden_known = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{derive_rng, rng_from_seed};
    use rand::Rng;

    /// Chains of each shape: sparse, complemented and dense products.
    const SHAPES: [(usize, usize, f32, f64); 3] = [
        (41, 23, 1.5, 0.1),
        (300, 700, 0.05, 0.5),
        (19, 600, 0.8, 0.7),
    ];

    fn chains_of(rbm: &Rbm, nv: usize, density: f64, max_run: u32) -> AnnealChains {
        let m = 29;
        let mut rng = rng_from_seed(3);
        let v0: Vec<f32> = (0..m * nv)
            .map(|_| f32::from(u8::from(rng.random::<f32>() < density as f32)))
            .collect();
        let base: Vec<f32> = (0..nv).map(|i| (i % 5) as f32 * 0.3 - 0.6).collect();
        let rngs = (0..m as u64).map(|i| derive_rng(9, i)).collect();
        AnnealChains::with_max_run(rbm, &base, v0, rngs, max_run).unwrap()
    }

    const BETAS: [f64; 6] = [0.0, 0.1, 0.5, 0.5, 0.9, 1.0];

    /// With fresh products at every step the fused step equals the layer-at-a-time one bit
    /// for bit (states, log-weights), on sparse, complemented and dense products, for 1, 2
    /// and 3 threads.
    #[test]
    fn fused_step_equals_layer_by_layer_reference() {
        for (nv, nh, sd, density) in SHAPES {
            let rbm = Rbm::random(nv, nh, sd, &mut rng_from_seed(nv as u64)).unwrap();
            let mut want = chains_of(&rbm, nv, density, 0);
            for w in BETAS.windows(2) {
                want.step_unfused(&rbm, w[0], w[1]);
            }
            for threads in [1, 2, 3] {
                crate::testutil::on_threads(threads, || {
                    let mut got = chains_of(&rbm, nv, density, 0);
                    for w in BETAS.windows(2) {
                        got.step(&rbm, w[0], w[1]);
                    }
                    assert_eq!(got.v, want.v, "{nv}×{nh} t={threads}");
                    assert_eq!(got.h, want.h, "{nv}×{nh} t={threads}");
                    assert_eq!(got.log_weights, want.log_weights, "{nv}×{nh} t={threads}");
                });
            }
        }
    }

    /// Products carried by the changes stay within rounding of fresh ones over many steps
    /// (the kept `V·W`, `H·Wᵀ` and linear terms against their definitions), and the chains
    /// give the same bits on 1, 2 and 3 threads.
    #[test]
    fn carried_products_track_fresh_ones_on_any_thread_count() {
        for (nv, nh, sd, density) in SHAPES {
            let rbm = Rbm::random(nv, nh, sd, &mut rng_from_seed(nv as u64)).unwrap();
            let betas: Vec<f64> = (0..=300).map(|t| 0.7 + 0.3 * t as f64 / 300.0).collect();
            let mut runs = Vec::new();
            for threads in [1, 2, 3] {
                runs.push(crate::testutil::on_threads(threads, || {
                    let mut c = chains_of(&rbm, nv, density, MAX_DELTA_RUN);
                    let mut delta_rows = 0;
                    for (t, w) in betas.windows(2).enumerate() {
                        // a step carries `V·W` and the linear terms to the state it starts
                        // from, and `H·Wᵀ` to the hidden state it draws
                        let v = c.v.clone();
                        c.step(&rbm, w[0], w[1]);
                        for s in &c.scratch {
                            for l in [&s.v_changes, &s.h_changes] {
                                delta_rows += (0..l.on().len()).filter(|&r| l.is_delta(r)).count();
                            }
                        }
                        if t % 50 != 49 {
                            continue;
                        }
                        // the fresh products by the dense GEMM: `x·W` or `x·Wᵀ`
                        let dense = |x: &[f32], op: crate::linalg::Op, (k, n): (usize, usize)| {
                            let m = x.len() / k;
                            let mut out = vec![0f32; m * n];
                            let n_op = crate::linalg::Op::N;
                            crate::linalg::sgemm(n_op, op, m, n, k, 1.0, x, rbm.w(), 0.0, &mut out);
                            out
                        };
                        let xv = dense(&v, crate::linalg::Op::N, (nv, nh));
                        let xh = dense(&c.h, crate::linalg::Op::T, (nh, nv));
                        for (got, want) in [(&c.xv, &xv), (&c.xh, &xh)] {
                            for (g, w) in got.iter().zip(want) {
                                assert!(
                                    (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
                                    "{nv}×{nh}: {g} vs {w}"
                                );
                            }
                        }
                        for (r, &lin) in c.lin.iter().enumerate() {
                            let want = linear_term(&v[r * nv..(r + 1) * nv], &c.db);
                            assert!((lin - want).abs() <= 1e-9 * (1.0 + want.abs()));
                        }
                    }
                    // a product narrower than MIN_CARRY_COLS is never carried; a wider
                    // one is, on states that change less than they hold
                    let carried = nh >= MIN_CARRY_COLS || nv >= MIN_CARRY_COLS;
                    if !carried {
                        assert_eq!(delta_rows, 0, "{nv}×{nh}");
                    } else if density < 0.6 {
                        assert!(
                            delta_rows > 0,
                            "{nv}×{nh}: no row was carried by its changes"
                        );
                    }
                    (c.v, c.h, c.log_weights)
                }));
            }
            assert!(
                runs.windows(2).all(|w| w[0] == w[1]),
                "{nv}×{nh}: thread counts differ"
            );
        }
    }
}
