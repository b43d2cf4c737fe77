//! The sampling of a whole CD-k / PCD-k mini-batch step in two parallel regions per
//! half-step: the sparse products of every row (data and chains), with their bias and
//! sigmoid, split across threads by strips of the packed weights (every strip costs the
//! same, so the threads finish together whatever the rows' densities); then the Bernoulli
//! draws and the index lists of the drawn states, split by blocks of rows (chain `i` draws
//! from its own stream). Instead of a parallel product, a serial scan, a parallel sigmoid and
//! parallel draws for each layer.
//!
//! The results are the bits of the unfused path ([`GibbsChains::run`] and
//! [`crate::rbm::Rbm::hidden_probs`]), whatever the number of threads or blocks: every
//! element of a sparse product is summed by [`binary::sum_selected_by_strips`] in the order
//! of [`binary::sum_selected`], bias and sigmoid are elementwise, and the choice between the
//! sparse and the dense (GEMM) product is made, as before, from the density of the whole
//! batch (the blocks' lists are counted first).

use super::chains::GibbsChains;
use crate::error::{Error, Result};
use crate::linalg::binary::{self, ChangeLists, IndexLists, Packed};
use crate::linalg::{self, Op};
use crate::rbm::Rbm;
use crate::rng::sample_bernoulli;
use crate::rng::BkRng;
use rayon::prelude::*;

/// The index lists of each block of rows, reused from step to step (no allocation once
/// warm). A cache, not state.
#[derive(Debug, Clone, Default)]
pub struct FusedScratch {
    blocks: Vec<BlockLists>,
    /// Whether the blocks' lists hold the ones of the mini-batch's rows and of the chains'
    /// visible states (after a step whose states all scanned as 0/1 and whose last draw was
    /// of the visible layer): [`FusedScratch::visible_lists`].
    visible_listed: bool,
}

impl FusedScratch {
    /// The lists of the rows of the last fused step's mini-batch and then of its chains'
    /// visible states, block by block (so in row order), when they hold them: for
    /// [`crate::rbm::train::Gradient::set_difference_listed`].
    pub(crate) fn visible_lists(&self) -> Option<Vec<&IndexLists>> {
        self.visible_listed.then(|| {
            let data = self.blocks.iter().map(|b| &b.data);
            data.chain(self.blocks.iter().map(|b| &b.chain)).collect()
        })
    }
}

#[derive(Debug, Clone, Default)]
struct BlockLists {
    /// The ones (or zeros) of the block's rows of the mini-batch.
    data: IndexLists,
    /// The ones (or zeros) of the block's chains' last drawn layer.
    chain: IndexLists,
}

/// Fewest rows per block when the rows are split across threads.
pub(super) const MIN_BLOCK_ROWS: usize = 8;

/// Blocks of rows for `rows` rows: one per thread, at least [`MIN_BLOCK_ROWS`] rows each.
/// A CD / PCD step's blocks draw states and list them (its products run by strips); an AIS
/// step's blocks also take their rows through the products, each block streaming all of `W`
/// through L1 once per product, so fewer blocks mean less
/// traffic: on the quiet 2-core machine a PCD-1 MNIST epoch took 1.00 s with one block per
/// thread against 1.04-1.09 s with two, 1.06-1.12 s with four (issue 19). The bits do not
/// depend on it.
pub(super) fn n_blocks(rows: usize) -> usize {
    let t = rayon::current_num_threads();
    t.min(rows.div_ceil(MIN_BLOCK_ROWS)).max(1)
}

/// What a block's lists hold after a stage: whether every entry was 0/1, the entries listed
/// and whether any row was listed by its zeros.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scan {
    pub(super) binary: bool,
    listed: usize,
    pub(super) complement: bool,
}

impl Scan {
    pub(super) const NONE: Scan = Scan {
        binary: true,
        listed: 0,
        complement: false,
    };

    pub(super) fn of(lists: &mut IndexLists, x: &[f32], width: usize) -> Scan {
        if x.is_empty() {
            // a block without rows (a batch smaller than the chains, e.g. PCD's last batch)
            // must hold no lists: stale ones from a larger batch would be summed into it
            let _ = lists.rows_or_complements_of(x, width, 1.0);
            return Scan::NONE;
        }
        match lists.rows_or_complements_of(x, width, 1.0) {
            Some(_) => Scan {
                binary: true,
                listed: lists.listed(),
                complement: lists.has_complements(),
            },
            None => Scan {
                binary: false,
                listed: 0,
                complement: false,
            },
        }
    }

    /// The scan of a block's change lists ([`ChangeLists`]; `empty`: a block without rows).
    pub(super) fn of_changes(c: &ChangeLists, empty: bool) -> Scan {
        if empty {
            return Scan::NONE;
        }
        Scan {
            binary: c.binary(),
            listed: if c.binary() { c.listed() } else { 0 },
            complement: c.binary() && c.has_complements(),
        }
    }

    pub(super) fn join(self, o: Scan) -> Scan {
        Scan {
            binary: self.binary && o.binary,
            listed: self.listed + o.listed,
            complement: self.complement || o.complement,
        }
    }

    /// Whether the product with the matrix of these lists (`entries` entries, rows of
    /// `width`) takes the sparse path: the rule of [`Rbm::hidden_probs`] (all entries 0/1,
    /// the entries listed at most [`binary::max_density`] of all).
    pub(super) fn sparse(self, entries: usize, width: usize) -> bool {
        let budget = (binary::max_density(width) * entries as f64).floor() as usize;
        self.binary && self.listed <= budget
    }
}

/// Where the chains' hidden probabilities of a hidden stage come from.
#[derive(Debug, Clone, Copy)]
enum Chain<'r> {
    /// `σ(Ṽ·W + c)`, by the packed `W` when given (else `ph` already holds `Ṽ·W`).
    Product(Option<&'r Packed>),
    /// CD's restart at the data: `ṽ ← v`, `p(h | ṽ) ← p(h | v)`.
    Restart,
}

/// One block's rows of everything a step touches.
struct Block<'a> {
    data: &'a [f32],
    p_pos: &'a mut [f32],
    v: &'a mut [f32],
    h: &'a mut [f32],
    pv: &'a mut [f32],
    ph: &'a mut [f32],
    rngs: &'a mut [BkRng],
    lists: &'a mut BlockLists,
}

/// Splits `x` into the blocks' rows (`bounds[b]..bounds[b + 1]` rows of `width`).
pub(super) fn split<'a, T>(mut x: &'a mut [T], bounds: &[usize], width: usize) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(bounds.len().saturating_sub(1));
    for w in bounds.windows(2) {
        let (head, tail) = std::mem::take(&mut x).split_at_mut((w[1] - w[0]) * width);
        out.push(head);
        x = tail;
    }
    out
}

/// Row bounds of `nb` blocks of `n` rows.
pub(super) fn bounds(n: usize, nb: usize) -> Vec<usize> {
    (0..=nb).map(|b| n * b / nb).collect()
}

/// `out ← σ(out + bias)` row by row (the epilogue of [`Rbm::hidden_probs`]).
fn bias_sigmoid(out: &mut [f32], bias: &[f32]) {
    for row in out.chunks_exact_mut(bias.len()) {
        linalg::add_row_bias(row, bias);
        linalg::sigmoid_inplace(row);
    }
}

/// [`bias_sigmoid`] of one row's columns `cols`, as [`binary::sum_selected_by_strips`]'s
/// epilogue (elementwise: the same bits as on whole rows).
fn bias_sigmoid_cols(bias: &[f32]) -> impl Fn(std::ops::Range<usize>, &mut [f32]) + Sync + '_ {
    move |cols, seg| {
        linalg::add_row_bias(seg, &bias[cols]);
        linalg::sigmoid_inplace(seg);
    }
}

/// The path of `X·W` for the 0/1 rows `x` whose lists scanned as `s`: the packed `W` for
/// the sparse path, or `None` after the dense GEMM into `out` (the rule of
/// [`Rbm::hidden_probs`]).
pub(super) fn hidden_product<'r>(
    rbm: &'r Rbm,
    s: Scan,
    x: &[f32],
    out: &mut [f32],
) -> Option<&'r Packed> {
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    if s.sparse(x.len(), nv) {
        return Some(rbm.packed_w());
    }
    let rows = x.len() / nv;
    linalg::sgemm_par(Op::N, Op::N, rows, nh, nv, 1.0, x, rbm.w(), 0.0, out);
    None
}

/// The path of `H·Wᵀ` likewise: the packed `Wᵀ` (its column totals ready when a row is
/// listed by its zeros), or `None` after the dense GEMM into `out`.
pub(super) fn visible_product<'r>(
    rbm: &'r Rbm,
    s: Scan,
    h: &[f32],
    out: &mut [f32],
) -> Option<&'r Packed> {
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    if s.sparse(h.len(), nh) {
        let p = rbm.packed_wt();
        if s.complement {
            p.prepare_totals();
        }
        return Some(p);
    }
    let rows = h.len() / nh;
    linalg::sgemm_par(Op::N, Op::T, rows, nv, nh, 1.0, h, rbm.w(), 0.0, out);
    None
}

/// `W` packed for the sparse `·W` products, then `Wᵀ` when the visible products will almost
/// surely be sparse too (a strip of `Wᵀ` fits in L1, where rows listed by their ones or zeros
/// never exceed the switch). One after the other, each parallel over its strips: side by side
/// (`rayon::join`) the transpose ran on one thread while the other, done with its copy,
/// waited (4-5% of a 2-thread PCD-1 MNIST update, issue 19).
fn prepare_packings(rbm: &Rbm) {
    if binary::max_density(rbm.n_hidden()) >= binary::SPARSE_MAX_DENSITY_L1 {
        rbm.packed_w();
        rbm.packed_wt();
    } else {
        rbm.packed_w();
    }
}

/// Row `i` of `out` ← Bernoulli(row `i` of `p`) from `rngs[i]`.
pub(super) fn draw(p: &[f32], out: &mut [f32], rngs: &mut [BkRng], width: usize) {
    for ((p, o), rng) in p
        .chunks_exact(width)
        .zip(out.chunks_exact_mut(width))
        .zip(rngs)
    {
        sample_bernoulli(p, o, rng);
    }
}

/// The sampling a CD-k / PCD-k step asks of its chains, by [`GibbsChains::fused_step`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepPlan {
    /// Gibbs steps.
    pub k: usize,
    /// CD: restart the chains at the mini-batch (chains and batch have the same rows).
    pub restart: bool,
    /// Compute `p(h | ṽ)` of the final states (the negative statistics).
    pub final_hidden: bool,
}

impl GibbsChains {
    /// A CD-k / PCD-k step's sampling in one pass per half-step over blocks of rows:
    /// `p_pos ← p(h | v)` of the mini-batch `v`; then (CD, `plan.restart`) the chains restart
    /// at `v` with `h ~ p_pos`, `v ~ p(v | h)` and `k − 1` more steps, or (PCD) `k` steps
    /// from where they are; then, with `plan.final_hidden`, `p(h | ṽ)` of the final states.
    /// The same bits as [`Rbm::hidden_probs`], [`GibbsChains::restart_with_hidden_probs`],
    /// [`GibbsChains::sample_visible`], [`GibbsChains::run`] and
    /// [`GibbsChains::update_hidden_probs`] in that order, for any number of threads.
    pub(crate) fn fused_step(
        &mut self,
        rbm: &Rbm,
        scratch: &mut FusedScratch,
        v: &[f32],
        p_pos: &mut [f32],
        plan: StepPlan,
    ) -> Result<()> {
        self.check(rbm)?;
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let nd = rbm.batch_rows("GibbsChains::fused_step", v, nv)?;
        let nc = self.n_chains;
        crate::rbm::model::check_len("GibbsChains::fused_step", "p_pos", p_pos.len(), nd * nh)?;
        if nd == 0 || plan.k == 0 || (plan.restart && nd != nc) {
            return Err(Error::param(
                "batch",
                "a fused step needs a non-empty batch, k ≥ 1 and, to restart, one chain per row",
            ));
        }
        let nb = n_blocks(nd.max(nc));
        let (bd, bc) = (bounds(nd, nb), bounds(nc, nb));
        if scratch.blocks.len() != nb {
            scratch.blocks.resize_with(nb, BlockLists::default);
        }
        scratch.visible_listed = false;

        // the lists of the batch (and of the chains' visible states, PCD), then p(h | ·)
        let (sd, sc) = self.stage(v, p_pos, scratch, (&bd, &bc), nv, nh, |b| {
            let d = Scan::of(&mut b.lists.data, b.data, nv);
            let c = if plan.restart {
                Scan::NONE
            } else {
                Scan::of(&mut b.lists.chain, b.v, nv)
            };
            (d, c)
        });
        if sd.sparse(nd * nv, nv) || (!plan.restart && sc.sparse(nc * nv, nv)) {
            prepare_packings(rbm);
        }
        let pos = hidden_product(rbm, sd, v, p_pos);
        let first = if plan.restart {
            Chain::Restart
        } else {
            Chain::Product(hidden_product(rbm, sc, &self.v, &mut self.ph))
        };
        let bounds = (&bd[..], &bc[..]);
        let mut s = self.hidden_stage(rbm, v, p_pos, scratch, bounds, Some(pos), first, true);
        for step in 0..plan.k {
            if step > 0 {
                let w = hidden_product(rbm, s, &self.v, &mut self.ph);
                s = self.hidden_stage(
                    rbm,
                    v,
                    p_pos,
                    scratch,
                    bounds,
                    None,
                    Chain::Product(w),
                    true,
                );
            }
            let wt = visible_product(rbm, s, &self.h, &mut self.pv);
            if let Some(wt) = wt {
                let pv = split(&mut self.pv, &bc, nv);
                let mut products: Vec<_> =
                    scratch.blocks.iter().map(|b| &b.chain).zip(pv).collect();
                binary::sum_selected_by_strips(&mut products, wt, bias_sigmoid_cols(rbm.b()));
            }
            s = self
                .stage(v, p_pos, scratch, bounds, nv, nh, |b| {
                    if wt.is_none() {
                        bias_sigmoid(b.pv, rbm.b());
                    }
                    draw(b.pv, b.v, b.rngs, nv);
                    (Scan::NONE, Scan::of(&mut b.lists.chain, b.v, nv))
                })
                .1;
        }
        // the chains' lists are of their visible states now (drawn last)
        scratch.visible_listed = sd.binary && s.binary;
        if plan.final_hidden {
            let w = hidden_product(rbm, s, &self.v, &mut self.ph);
            self.hidden_stage(
                rbm,
                v,
                p_pos,
                scratch,
                bounds,
                None,
                Chain::Product(w),
                false,
            );
        }
        Ok(())
    }

    /// A hidden stage: `p_pos ← σ(V·W + c)` when `pos` is given (by the packed `W` when
    /// `Some`, else `p_pos` already holds `V·W`), the chains' `ph` as `chain` says, then
    /// `h ~ ph` and its lists when `draw_h`. The sparse products (and their bias and sigmoid)
    /// run split by strips of `W` ([`binary::sum_selected_by_strips`]: balanced whatever the
    /// rows' densities), the rest split by blocks of rows. Returns the scan of the chains'
    /// lists ([`Scan::NONE`] without `draw_h`).
    #[allow(clippy::too_many_arguments)]
    fn hidden_stage(
        &mut self,
        rbm: &Rbm,
        v: &[f32],
        p_pos: &mut [f32],
        scratch: &mut FusedScratch,
        (bd, bc): (&[usize], &[usize]),
        pos: Option<Option<&Packed>>,
        chain: Chain,
        draw_h: bool,
    ) -> Scan {
        let nv = rbm.n_visible();
        let nh = rbm.n_hidden();
        let packed_pos = pos.flatten();
        let packed_chain = match chain {
            Chain::Product(w) => w,
            Chain::Restart => None,
        };
        // the sparse products by the packed W (the same for both when both are sparse):
        // one pass over its strips for all of them
        if let Some(w) = packed_pos.or(packed_chain) {
            let mut products = Vec::with_capacity(2 * scratch.blocks.len());
            if packed_pos.is_some() {
                let out = split(&mut *p_pos, bd, nh);
                products.extend(scratch.blocks.iter().map(|b| &b.data).zip(out));
            }
            if packed_chain.is_some() {
                let out = split(&mut self.ph, bc, nh);
                products.extend(scratch.blocks.iter().map(|b| &b.chain).zip(out));
            }
            binary::sum_selected_by_strips(&mut products, w, bias_sigmoid_cols(rbm.c()));
        }
        let dense_pos = matches!(pos, Some(None));
        let dense_chain = matches!(chain, Chain::Product(None));
        let restart = matches!(chain, Chain::Restart);
        if !(draw_h || dense_pos || dense_chain || restart) {
            return Scan::NONE;
        }
        self.stage(v, p_pos, scratch, (bd, bc), nv, nh, |b| {
            if dense_pos {
                bias_sigmoid(b.p_pos, rbm.c());
            }
            if dense_chain {
                bias_sigmoid(b.ph, rbm.c());
            }
            if restart {
                b.v.copy_from_slice(b.data);
                b.ph.copy_from_slice(b.p_pos);
            }
            if !draw_h {
                return (Scan::NONE, Scan::NONE);
            }
            draw(b.ph, b.h, b.rngs, nh);
            (Scan::NONE, Scan::of(&mut b.lists.chain, b.h, nh))
        })
        .1
    }

    /// Runs `f` on every block in parallel; the scans joined in block order.
    #[allow(clippy::too_many_arguments)]
    fn stage(
        &mut self,
        v: &[f32],
        p_pos: &mut [f32],
        scratch: &mut FusedScratch,
        (bd, bc): (&[usize], &[usize]),
        nv: usize,
        nh: usize,
        f: impl Fn(&mut Block) -> (Scan, Scan) + Sync,
    ) -> (Scan, Scan) {
        let data: Vec<&[f32]> = bd.windows(2).map(|w| &v[w[0] * nv..w[1] * nv]).collect();
        let mut blocks: Vec<Block> = data
            .into_iter()
            .zip(split(p_pos, bd, nh))
            .zip(split(&mut self.v, bc, nv))
            .zip(split(&mut self.h, bc, nh))
            .zip(split(&mut self.pv, bc, nv))
            .zip(split(&mut self.ph, bc, nh))
            .zip(split(&mut self.rngs, bc, 1))
            .zip(scratch.blocks.iter_mut())
            .map(
                |(((((((data, p_pos), v), h), pv), ph), rngs), lists)| Block {
                    data,
                    p_pos,
                    v,
                    h,
                    pv,
                    ph,
                    rngs,
                    lists,
                },
            )
            .collect();
        let scans: Vec<(Scan, Scan)> = blocks.par_iter_mut().map(&f).collect();
        scans
            .into_iter()
            .fold((Scan::NONE, Scan::NONE), |(a, b), (c, d)| {
                (a.join(c), b.join(d))
            })
    }
}
