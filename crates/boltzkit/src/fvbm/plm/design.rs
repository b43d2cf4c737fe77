//! The pseudo-likelihood by matrix products: the distinct rows as a row-major design
//! `X₁ = [X 1]` (`rows × (d+1)`), the parameters as `P = [M; bᵀ]` (`(d+1) × d`), so that all
//! local fields are one product `H = X₁·P` (`h_uj = m_jᵀx_u + b_j`, `M` symmetric with a zero
//! diagonal) and every derivative is one product back, `G = X₁ᵀ·R`:
//! `∂P_n/∂m_jk = G_kj + G_jk` (`j < k`) and `∂P_n/∂b_j = G_dj` for the weighted residuals
//! `R_uj = w_u (x_uj − E[x_j | h_uj])` (the gradient of Eq. 2.1 of Nguyen & Wood, as in
//! [`crate::fvbm::pseudo`], which stays the brute-force twin).
//!
//! The design is held in `f32` (its values −1, 0 and 1 are exact there): a pass in
//! [`Precision::Single`] runs both products in `sgemm` (twice the lanes of `dgemm`), with the
//! fields widened to `f64` for the per-unit terms ([`crate::linalg::pl_terms`]) and every sum
//! across blocks in `f64`; [`Precision::Double`] widens each block to `f64` first, for the
//! end of a fit and the existence certificate.
//!
//! The rows are taken in fixed blocks ([`Design::block`], set by the number of rows alone),
//! 16 blocks at a time in parallel, each block's `G` summed in block order: the result is the
//! same bits for any number of threads. The interrupt is polled before every block, so
//! Ctrl-C stops an evaluation within one block's two products.

use super::super::convention::Convention;
use super::super::model::{n_params, upper_index};
use super::super::pseudo::PlData;
use crate::error::{Error, Result};
use crate::fit::Interrupt;
use crate::linalg::{dgemm, pl_terms, sgemm, Op};
use rayon::prelude::*;

/// Blocks evaluated in parallel before their products are summed (in block order).
const GROUP: usize = 16;
/// Rows per block at most (bounds each block's memory and time: the interrupt's latency).
const MAX_BLOCK: usize = 2048;
/// Rows per block at least (below this the product's overheads dominate).
const MIN_BLOCK: usize = 64;

/// The arithmetic of a pass's two products.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Precision {
    /// `f32` products (fields accurate to about `1e-7` relative), `f64` terms and sums.
    Single,
    /// `f64` throughout.
    Double,
}

/// The data of a pseudo-likelihood fit as a dense design for matrix products.
pub(crate) struct Design {
    conv: Convention,
    d: usize,
    rows: usize,
    block: usize,
    /// `rows × (d+1)` row-major: the values of the units in the convention, then 1.
    x: Vec<f32>,
    /// How many samples each distinct row stands for.
    w: Vec<f64>,
}

/// `(A(h), E[x | h])` of one unit: the log-normalizer and the conditional mean, with one
/// exponential and one `ln_1p` (the two of [`Convention::log_norm`] and
/// [`Convention::mean`] fused).
#[inline(always)]
pub(crate) fn unit_terms(conv: Convention, h: f64) -> (f64, f64) {
    match conv {
        Convention::Spin => pl_terms::spin_terms(h),
        Convention::Binary => pl_terms::binary_terms(h),
    }
}

/// One block's design rows in both precisions.
struct Block<'a> {
    /// The first row.
    u0: usize,
    /// `mb × (d+1)` in `f32` (the stored rows).
    x32: &'a [f32],
    /// The same rows widened to `f64`.
    x64: Vec<f64>,
}

impl Design {
    /// The design of `data` (its distinct rows and counts).
    pub(crate) fn new(data: &PlData) -> Self {
        let (d, rows) = (data.d(), data.n_distinct());
        let mut x = vec![1.0f32; rows * (d + 1)];
        for j in 0..d {
            for (u, &v) in data.column(j).iter().enumerate() {
                x[u * (d + 1) + j] = v as f32;
            }
        }
        Design {
            conv: data.convention(),
            d,
            rows,
            block: Self::block(rows),
            x,
            w: data.weights().to_vec(),
        }
    }

    /// Rows per block for `rows` distinct rows.
    pub(crate) fn block(rows: usize) -> usize {
        rows.div_ceil(GROUP).clamp(MIN_BLOCK, MAX_BLOCK)
    }

    /// Bytes held during a fit on `rows` distinct rows of `d` units: the design (`f32`), the
    /// parameter and gradient matrices, and per block in flight its rows widened to `f64`,
    /// its fields in both precisions and its `G`.
    pub(crate) fn memory_estimate(d: u64, rows: u64) -> u64 {
        let b = Self::block(rows as usize) as u64;
        let g = (d + 1).saturating_mul(d).saturating_mul(8);
        rows.saturating_mul(d + 1)
            .saturating_mul(4)
            .saturating_add(g.saturating_mul(GROUP as u64 + 4))
            .saturating_add(b.saturating_mul(d + 1).saturating_mul(28 * GROUP as u64))
    }

    /// Multiply-adds of one pass (the two products).
    pub(crate) fn pass_work(d: u64, rows: u64) -> u64 {
        rows.saturating_mul(d + 1)
            .saturating_mul(d)
            .saturating_mul(2)
    }

    /// Number of units.
    pub(crate) fn d(&self) -> usize {
        self.d
    }

    /// `P = [M; bᵀ]` (`(d+1) × d`, row-major) from `θ = (b, upper M)`.
    pub(crate) fn params_matrix(&self, theta: &[f64]) -> Vec<f64> {
        let d = self.d;
        let mut p = vec![0.0; (d + 1) * d];
        p[d * d..].copy_from_slice(&theta[..d]);
        for j in 0..d {
            for k in j + 1..d {
                let v = theta[upper_index(d, j, k)];
                p[j * d + k] = v;
                p[k * d + j] = v;
            }
        }
        p
    }

    /// The derivatives in the layout of `θ` from `G = X₁ᵀ·R` (`(d+1) × d`).
    pub(crate) fn theta_gradient(&self, g: &[f64], out: &mut [f64]) {
        let d = self.d;
        debug_assert_eq!(out.len(), n_params(d));
        out[..d].copy_from_slice(&g[d * d..]);
        for j in 0..d {
            for k in j + 1..d {
                out[upper_index(d, j, k)] = g[k * d + j] + g[j * d + k];
            }
        }
    }

    /// The blocks `first..last`, in parallel, each as `f(block)`; the interrupt is polled
    /// before each (`what` names the work it stops).
    fn blocks<T: Send>(
        &self,
        range: std::ops::Range<usize>,
        interrupt: Option<&Interrupt>,
        what: &str,
        f: impl Fn(&Block<'_>) -> T + Sync,
    ) -> Result<Vec<T>> {
        let e = self.d + 1;
        range
            .into_par_iter()
            .map(|b| {
                if interrupt.is_some_and(Interrupt::is_set) {
                    return Err(Error::Interrupted { what: what.into() });
                }
                let u0 = b * self.block;
                let mb = self.block.min(self.rows - u0);
                let x32 = &self.x[u0 * e..(u0 + mb) * e];
                let x64 = x32.iter().map(|&v| f64::from(v)).collect();
                Ok(f(&Block { u0, x32, x64 }))
            })
            .collect()
    }

    /// `H = X_b·P` of one block (`mb × d`, `f64`) in `precision` (`p32` is `P` in `f32`).
    fn fields(&self, blk: &Block<'_>, p: &[f64], p32: &[f32], precision: Precision) -> Vec<f64> {
        let (d, e) = (self.d, self.d + 1);
        let mb = blk.x64.len() / e;
        match precision {
            Precision::Double => {
                let mut h = vec![0.0; mb * d];
                dgemm(Op::N, Op::N, mb, d, e, 1.0, &blk.x64, p, 0.0, &mut h);
                h
            }
            Precision::Single => {
                let mut h = vec![0.0f32; mb * d];
                sgemm(Op::N, Op::N, mb, d, e, 1.0, blk.x32, p32, 0.0, &mut h);
                h.into_iter().map(f64::from).collect()
            }
        }
    }

    /// One pass over the rows: per block, the fields `H = X₁·P`, then `elem(u0, x, w, h)` (the
    /// block's first row, design rows in `f64`, counts and fields; it turns `h` into the
    /// residuals and returns its share of a sum), then `G += X₁ᵀ·H`, both products in
    /// `precision`. Returns the sum and `G`.
    pub(crate) fn pass(
        &self,
        p: &[f64],
        precision: Precision,
        interrupt: Option<&Interrupt>,
        elem: impl Fn(usize, &[f64], &[f64], &mut [f64]) -> f64 + Sync,
    ) -> Result<(f64, Vec<f64>)> {
        let (d, e) = (self.d, self.d + 1);
        let p32: Vec<f32> = match precision {
            Precision::Single => p.iter().map(|&v| v as f32).collect(),
            Precision::Double => Vec::new(),
        };
        let blocks = self.rows.div_ceil(self.block);
        let mut total = 0.0;
        let mut g = vec![0.0; e * d];
        for first in (0..blocks).step_by(GROUP) {
            let last = (first + GROUP).min(blocks);
            let what = "the pseudo-likelihood evaluation";
            let parts = self.blocks(first..last, interrupt, what, |blk| {
                let mb = blk.x64.len() / e;
                let mut h = self.fields(blk, p, &p32, precision);
                let s = elem(blk.u0, &blk.x64, &self.w[blk.u0..blk.u0 + mb], &mut h);
                let gb = match precision {
                    Precision::Double => {
                        let mut gb = vec![0.0; e * d];
                        dgemm(Op::T, Op::N, e, d, mb, 1.0, &blk.x64, &h, 0.0, &mut gb);
                        gb
                    }
                    Precision::Single => {
                        let r: Vec<f32> = h.iter().map(|&v| v as f32).collect();
                        let mut gb = vec![0.0f32; e * d];
                        sgemm(Op::T, Op::N, e, d, mb, 1.0, blk.x32, &r, 0.0, &mut gb);
                        gb.into_iter().map(f64::from).collect()
                    }
                };
                (s, gb)
            })?;
            for (s, gb) in parts {
                total += s;
                g.iter_mut().zip(&gb).for_each(|(a, v)| *a += v);
            }
        }
        Ok((total, g))
    }

    /// `P_n(θ)` (Eq. 2.1) and its gradient in the layout of `θ` (written to `grad`), the
    /// products in `precision`.
    pub(crate) fn log_pl_gradient(
        &self,
        theta: &[f64],
        grad: &mut [f64],
        precision: Precision,
        interrupt: Option<&Interrupt>,
    ) -> Result<f64> {
        let (d, conv) = (self.d, self.conv);
        let p = self.params_matrix(theta);
        let (f, g) = self.pass(&p, precision, interrupt, |_, x, w, h| {
            let mut s = 0.0;
            for ((xu, hu), &wu) in x.chunks_exact(d + 1).zip(h.chunks_exact_mut(d)).zip(w) {
                let su = match conv {
                    Convention::Spin => pl_terms::spin_row_terms(&xu[..d], hu, wu),
                    Convention::Binary => pl_terms::binary_row_terms(&xu[..d], hu, wu),
                };
                s += wu * su;
            }
            s
        })?;
        self.theta_gradient(&g, grad);
        Ok(f)
    }

    /// `K·ν` for `K = Σ_u Σ_j c_uj (∂h_uj/∂θ)(∂h_uj/∂θ)ᵀ` (the Gram matrix of the Stiemke
    /// certificate, [`super::certificate`]), written to `out`, the products in `precision`.
    /// The pair weights `c_uj` are `pair[u·d + j]` (rows × d), or the counts `w_u` when `None`.
    pub(crate) fn gram_times(
        &self,
        nu: &[f64],
        pair: Option<&[f32]>,
        precision: Precision,
        out: &mut [f64],
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        let d = self.d;
        let p = self.params_matrix(nu);
        let (_, g) = self.pass(&p, precision, interrupt, |u0, _, w, h| {
            match pair {
                None => {
                    for (hu, &wu) in h.chunks_exact_mut(d).zip(w) {
                        hu.iter_mut().for_each(|v| *v *= wu);
                    }
                }
                Some(c) => {
                    let c = &c[u0 * d..u0 * d + h.len()];
                    h.iter_mut().zip(c).for_each(|(v, &cv)| *v *= f64::from(cv));
                }
            }
            0.0
        })?;
        self.theta_gradient(&g, out);
        Ok(())
    }

    /// A diagonal preconditioner of [`Design::gram_times`]'s `K` with the pair weights `pair`:
    /// `S_j = Σ_u c_uj` for `b_j`, `S_j q_k + S_k q_j` for `m_jk` with `q_k` the mean of
    /// `x_uk²` over the samples (exact in the spin convention, where `x² = 1`).
    pub(crate) fn pair_diagonal(&self, pair: &[f32]) -> Vec<f64> {
        let (d, e) = (self.d, self.d + 1);
        let mut col = vec![0.0; d];
        for cu in pair.chunks_exact(d) {
            col.iter_mut()
                .zip(cu)
                .for_each(|(s, &c)| *s += f64::from(c));
        }
        let mut q = vec![0.0; d];
        let mut n = 0.0;
        for (xu, &wu) in self.x.chunks_exact(e).zip(&self.w) {
            n += wu;
            q.iter_mut()
                .zip(xu)
                .for_each(|(s, &v)| *s += wu * f64::from(v * v));
        }
        q.iter_mut().for_each(|v| *v /= n);
        let mut diag = vec![0.0; n_params(d)];
        diag[..d].copy_from_slice(&col);
        for j in 0..d {
            for k in j + 1..d {
                diag[upper_index(d, j, k)] = col[j] * q[k] + col[k] * q[j];
            }
        }
        diag
    }

    /// `C₀ = X₁ᵀX₁` over the distinct rows, unweighted (`(d+1) × (d+1)`, row-major): exact,
    /// since its entries are integers and each block's sums stay below `2^24` in `sgemm`
    /// (`MAX_BLOCK` rows of values in `{−1, 0, 1}`); the blocks are summed in `f64`.
    pub(crate) fn second_moments(&self, interrupt: Option<&Interrupt>) -> Result<Vec<f64>> {
        let e = self.d + 1;
        let blocks = self.rows.div_ceil(self.block);
        let parts = self.blocks(0..blocks, interrupt, "the existence certificate", |blk| {
            let mb = blk.x32.len() / e;
            let mut c = vec![0.0f32; e * e];
            sgemm(Op::T, Op::N, e, e, mb, 1.0, blk.x32, blk.x32, 0.0, &mut c);
            c
        })?;
        let mut c = vec![0.0; e * e];
        for part in parts {
            c.iter_mut()
                .zip(&part)
                .for_each(|(a, &v)| *a += f64::from(v));
        }
        Ok(c)
    }

    /// Whether `test(j, C_j)` holds for every unit's weighted Gram matrix of the certificate's weighted
    /// bound ([`super::certificate`]): for unit `j`, `C_j = Σ_{u ∈ S_j} c_uj ãᵤ ãᵤᵀ` with `ãᵤ`
    /// the design row `x̃_u = (x_u, 1)` without its entry `j` (the derivative `∂h_uj/∂θ` on
    /// unit `j`'s parameters), `c_uj = pair[u·d + j] · (1 − 2⁻²⁰) / ‖x̃_u‖₂` (at most
    /// `y_q / ‖a_q‖₂`: the `f32` weight's rounding and `‖a_q‖ ≤ ‖x̃_u‖` on the safe side) and
    /// `S_j` the `m` rows of largest `c_uj` (all rows when fewer): `d × (e − 1)` matrices of
    /// `m` rows, `m·d·d²` multiply-adds in `f64`, units in parallel, the interrupt polled
    /// before each unit.
    pub(crate) fn unit_grams_pass(
        &self,
        pair: &[f32],
        m: usize,
        interrupt: Option<&Interrupt>,
        test: impl Fn(usize, &[f64]) -> Result<bool> + Sync,
    ) -> Result<bool> {
        let (d, e) = (self.d, self.d + 1);
        let m = m.min(self.rows);
        let scale = 1.0 - 2f64.powi(-20);
        let inv_norm: Vec<f64> = self
            .x
            .chunks_exact(e)
            .map(|xu| scale / xu.iter().map(|&v| f64::from(v * v)).sum::<f64>().sqrt())
            .collect();
        let verdicts = (0..d)
            .into_par_iter()
            .map(|j| -> Result<bool> {
                if interrupt.is_some_and(Interrupt::is_set) {
                    return Err(Error::Interrupted {
                        what: "the existence certificate".into(),
                    });
                }
                let mut c: Vec<(f64, usize)> = (0..self.rows)
                    .map(|u| (f64::from(pair[u * d + j]) * inv_norm[u], u))
                    .collect();
                if m < c.len() {
                    c.select_nth_unstable_by(m - 1, |a, b| b.0.total_cmp(&a.0));
                    c.truncate(m);
                }
                let mut a = Vec::with_capacity(m * d);
                let mut ca = Vec::with_capacity(m * d);
                for &(cu, u) in &c {
                    let xu = &self.x[u * e..(u + 1) * e];
                    for (k, &v) in xu.iter().enumerate() {
                        if k != j {
                            a.push(f64::from(v));
                            ca.push(cu * f64::from(v));
                        }
                    }
                }
                let mut gram = vec![0.0; d * d];
                dgemm(Op::T, Op::N, d, d, c.len(), 1.0, &a, &ca, 0.0, &mut gram);
                test(j, &gram)
            })
            .collect::<Result<Vec<bool>>>()?;
        Ok(verdicts.into_iter().all(|ok| ok))
    }

    /// The Stiemke weights `y⁰_q = w_u |x_uj − E[x_j | h_uj]|` at `theta` over the pairs
    /// (distinct row `u`, unit `j`; `rows × d`, row-major), rounded to `f32`: the pair weights
    /// of the certificate's Gram matrix ([`Design::gram_times`]).
    pub(crate) fn base_weights(
        &self,
        theta: &[f64],
        interrupt: Option<&Interrupt>,
    ) -> Result<Vec<f32>> {
        let (d, e, conv) = (self.d, self.d + 1, self.conv);
        let pt = self.params_matrix(theta);
        let blocks = self.rows.div_ceil(self.block);
        let parts = self.blocks(0..blocks, interrupt, "the existence certificate", |blk| {
            let h = self.fields(blk, &pt, &[], Precision::Double);
            let mut y = Vec::with_capacity(h.len());
            for (u, (xu, hu)) in blk.x64.chunks_exact(e).zip(h.chunks_exact(d)).enumerate() {
                let wu = self.w[blk.u0 + u];
                for (&xv, &hv) in xu.iter().zip(hu) {
                    y.push((wu * (xv - unit_terms(conv, hv).1).abs()) as f32);
                }
            }
            y
        })?;
        Ok(parts.concat())
    }

    /// The corrected Stiemke weights `y_q = w_u |x_uj − E[x_j | h_uj]| − c_q s_q Δh_uj` over
    /// the pairs (distinct row `u`, unit `j`), with `h` the fields at `theta`, `Δh` those of
    /// the direction `nu`, `c_q` the pair weights of [`Design::gram_times`] (`pair`, or `w_u`)
    /// and `s_q` the side of `x_uj` (+1 above the midpoint of the unit values, −1 below), so
    /// that `Aᵀy = ∇P_n(θ) − K·ν`: their minimum and, per unit, how many fall in each binary
    /// order of magnitude ([`Weights`]); `f64` products.
    pub(crate) fn stiemke_weights(
        &self,
        theta: &[f64],
        nu: &[f64],
        pair: Option<&[f32]>,
        interrupt: Option<&Interrupt>,
    ) -> Result<Weights> {
        let (d, e, conv) = (self.d, self.d + 1, self.conv);
        let (pt, pn) = (self.params_matrix(theta), self.params_matrix(nu));
        let mid = 0.5 * (conv.value(0) + conv.value(1));
        let blocks = self.rows.div_ceil(self.block);
        let what = "the existence certificate";
        let parts = self.blocks(0..blocks, interrupt, what, |blk| {
            let h = self.fields(blk, &pt, &[], Precision::Double);
            let dh = self.fields(blk, &pn, &[], Precision::Double);
            let mut part = Weights::new(d);
            for (u, xu) in blk.x64.chunks_exact(e).enumerate() {
                let wu = self.w[blk.u0 + u];
                for j in 0..d {
                    let (xv, hv, dv) = (xu[j], h[u * d + j], dh[u * d + j]);
                    let s = if xv > mid { dv } else { -dv };
                    let r = (xv - unit_terms(conv, hv).1).abs();
                    let c = pair.map_or(wu, |c| f64::from(c[(blk.u0 + u) * d + j]));
                    part.add(j, wu * r - c * s);
                }
            }
            part
        })?;
        let mut all = Weights::new(d);
        for part in parts {
            all.min = nan_min(all.min, part.min);
            all.counts
                .iter_mut()
                .zip(&part.counts)
                .for_each(|(a, b)| *a += b);
        }
        Ok(all)
    }

    /// [`crate::fvbm::separation::recession_violation`] by matrix products: `max_q −a_qᵀΔ /
    /// max_q |a_qᵀΔ|` over the pairs, `a_qᵀΔ = s_q Δh_uj` with `Δh` the fields of the
    /// direction; `+∞` for a direction that moves no field.
    pub(crate) fn recession_violation(
        &self,
        direction: &[f64],
        interrupt: Option<&Interrupt>,
    ) -> Result<f64> {
        let (d, e, conv) = (self.d, self.d + 1, self.conv);
        let pn = self.params_matrix(direction);
        let mid = 0.5 * (conv.value(0) + conv.value(1));
        let blocks = self.rows.div_ceil(self.block);
        let what = "the runaway check";
        let parts = self.blocks(0..blocks, interrupt, what, |blk| {
            let dh = self.fields(blk, &pn, &[], Precision::Double);
            let (mut worst, mut scale) = (f64::NEG_INFINITY, 0.0f64);
            for (xu, du) in blk.x64.chunks_exact(e).zip(dh.chunks_exact(d)) {
                for (&xv, &dv) in xu.iter().zip(du) {
                    let slack = if xv > mid { dv } else { -dv };
                    worst = worst.max(-slack);
                    scale = scale.max(slack.abs());
                }
            }
            (worst, scale)
        })?;
        let (worst, scale) = parts
            .into_iter()
            .fold((f64::NEG_INFINITY, 0.0f64), |(w, s), (a, b)| {
                (w.max(a), s.max(b))
            });
        Ok(if scale == 0.0 {
            f64::INFINITY
        } else {
            worst / scale
        })
    }
}

/// The smaller of `a` and `b`, NaN when either is.
fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// Binary orders of magnitude counted by [`Weights`].
pub(crate) const WEIGHT_BINS: usize = 64;

/// A profile of the corrected Stiemke weights ([`Design::stiemke_weights`]).
pub(crate) struct Weights {
    /// The smallest weight (NaN when one is NaN).
    pub(crate) min: f64,
    /// `counts[j · WEIGHT_BINS + b]`: weights of unit `j` in `[2^−b, 2^{1−b})` for
    /// `0 < b < WEIGHT_BINS − 1`; bin 0 holds those at least 1, the last bin those below
    /// `2^{2−WEIGHT_BINS}` (zero, negative and NaN included).
    pub(crate) counts: Vec<u64>,
}

impl Weights {
    fn new(d: usize) -> Self {
        Weights {
            min: f64::INFINITY,
            counts: vec![0; d * WEIGHT_BINS],
        }
    }

    fn add(&mut self, j: usize, y: f64) {
        self.min = nan_min(self.min, y);
        let bin = if y.is_normal() && y > 0.0 {
            let exponent = ((y.to_bits() >> 52) & 0x7ff) as i64 - 1023;
            (-exponent).clamp(0, WEIGHT_BINS as i64 - 1) as usize
        } else {
            WEIGHT_BINS - 1
        };
        self.counts[j * WEIGHT_BINS + bin] += 1;
    }

    /// `k_i = max_j #{weights of unit j below 2^−i}`, for `i = 0 .. WEIGHT_BINS − 1`.
    pub(crate) fn most_below(&self) -> Vec<u64> {
        let mut most = vec![0u64; WEIGHT_BINS - 1];
        for unit in self.counts.chunks_exact(WEIGHT_BINS) {
            let mut below = 0;
            for i in (0..WEIGHT_BINS - 1).rev() {
                below += unit[i + 1];
                most[i] = most[i].max(below);
            }
        }
        most
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{exact, pseudo, Fvbm};
    use super::*;
    use crate::rng::rng_from_seed;

    #[test]
    fn log_pl_and_gradient_equal_the_direct_formula() {
        for conv in [Convention::Spin, Convention::Binary] {
            // d = 9, 500 samples: several blocks of 64 distinct rows, some repeated (weights)
            let truth = Fvbm::random(9, 0.02, conv, &mut rng_from_seed(3)).unwrap();
            let data = exact::sample(&truth, 500, &mut rng_from_seed(4)).unwrap();
            let pl = PlData::new(&data, conv).unwrap();
            let rows = pl.n_distinct();
            assert!(rows > 2 * MIN_BLOCK && rows < pl.n_samples(), "{rows} rows");
            let design = Design::new(&pl);
            let at = Fvbm::random(9, 0.3, conv, &mut rng_from_seed(5)).unwrap();
            let f0 = pseudo::log_pl(&at, &pl).unwrap();
            let g0 = pseudo::gradient(&at, &pl).unwrap();
            // f32 products: fields to about 1e-7 relative
            for (precision, tol) in [(Precision::Double, 1e-10), (Precision::Single, 1e-6)] {
                let mut g = vec![0.0; n_params(9)];
                let f = design
                    .log_pl_gradient(&at.theta(), &mut g, precision, None)
                    .unwrap();
                assert!((f - f0).abs() < tol * f0.abs(), "{conv}: {f} vs {f0}");
                for (a, (x, y)) in g.iter().zip(&g0).enumerate() {
                    let err = (x - y).abs() / pl.n_samples() as f64;
                    assert!(err < tol, "{conv} {precision:?} θ_{a}: {err}");
                }
            }
        }
    }

    #[test]
    fn recession_violation_equals_the_separation_module() {
        use super::super::super::separation;
        for conv in [Convention::Spin, Convention::Binary] {
            let truth = Fvbm::random(5, 0.4, conv, &mut rng_from_seed(12)).unwrap();
            let data = exact::sample(&truth, 300, &mut rng_from_seed(13)).unwrap();
            let pl = PlData::new(&data, conv).unwrap();
            let design = Design::new(&pl);
            for seed in 0..4u64 {
                let dir = Fvbm::random(5, 0.5, conv, &mut rng_from_seed(20 + seed)).unwrap();
                let a = design.recession_violation(&dir.theta(), None).unwrap();
                let b = separation::recession_violation(&pl, &dir.theta()).unwrap();
                assert!((a - b).abs() < 1e-12, "{conv}: {a} vs {b}");
            }
            let zero = vec![0.0; n_params(5)];
            assert_eq!(
                design.recession_violation(&zero, None).unwrap(),
                f64::INFINITY
            );
        }
    }

    #[test]
    fn second_moments_are_the_direct_sums() {
        for conv in [Convention::Spin, Convention::Binary] {
            let truth = Fvbm::random(6, 0.3, conv, &mut rng_from_seed(10)).unwrap();
            let data = exact::sample(&truth, 400, &mut rng_from_seed(11)).unwrap();
            let pl = PlData::new(&data, conv).unwrap();
            let c = Design::new(&pl).second_moments(None).unwrap();
            let value = |u: usize, j: usize| if j == 6 { 1.0 } else { pl.column(j)[u] };
            for j in 0..7 {
                for k in 0..7 {
                    let direct: f64 = (0..pl.n_distinct())
                        .map(|u| value(u, j) * value(u, k))
                        .sum();
                    assert_eq!(c[j * 7 + k], direct, "{conv} ({j}, {k})");
                }
            }
        }
    }

    #[test]
    fn unit_grams_are_the_direct_sums_over_the_heaviest_rows() {
        use std::sync::Mutex;
        for conv in [Convention::Spin, Convention::Binary] {
            let (d, e) = (5, 6);
            let truth = Fvbm::random(d, 0.4, conv, &mut rng_from_seed(30)).unwrap();
            let data = exact::sample(&truth, 300, &mut rng_from_seed(31)).unwrap();
            let pl = PlData::new(&data, conv).unwrap();
            let design = Design::new(&pl);
            let rows = pl.n_distinct();
            // distinct weights, so that the heaviest rows are one set
            let pair: Vec<f32> = (0..rows * d)
                .map(|q| 1.0 + ((q * 7919) % 1009) as f32 / 1009.0)
                .collect();
            let value = |u: usize, k: usize| if k == d { 1.0 } else { pl.column(k)[u] };
            for m in [7, rows] {
                let seen = Mutex::new(vec![None; d]);
                let all = design
                    .unit_grams_pass(&pair, m, None, |j, c| {
                        seen.lock().unwrap()[j] = Some(c.to_vec());
                        Ok(j != 3)
                    })
                    .unwrap();
                assert!(!all, "unit 3 failed its test");
                for (j, c) in seen.into_inner().unwrap().into_iter().enumerate() {
                    let c = c.expect("every unit tested");
                    let weight = |u: usize| {
                        let norm = (0..e).map(|k| value(u, k).powi(2)).sum::<f64>().sqrt();
                        f64::from(pair[u * d + j]) * (1.0 - 2f64.powi(-20)) / norm
                    };
                    let mut order: Vec<usize> = (0..rows).collect();
                    order.sort_by(|&a, &b| weight(b).total_cmp(&weight(a)));
                    let keep: Vec<usize> = (0..e).filter(|&k| k != j).collect();
                    for (a, &k) in keep.iter().enumerate() {
                        for (b, &l) in keep.iter().enumerate() {
                            let direct: f64 = order[..m]
                                .iter()
                                .map(|&u| weight(u) * value(u, k) * value(u, l))
                                .sum();
                            let got = c[a * d + b];
                            assert!((got - direct).abs() < 1e-9 * direct.abs().max(1.0));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn gram_product_equals_the_dense_matrix() {
        // K = −∇²P_n(0) / Var(x | h = 0): the Hessian at θ = 0 scaled by the convention
        for conv in [Convention::Spin, Convention::Binary] {
            let truth = Fvbm::random(5, 0.4, conv, &mut rng_from_seed(6)).unwrap();
            let data = exact::sample(&truth, 300, &mut rng_from_seed(7)).unwrap();
            let pl = PlData::new(&data, conv).unwrap();
            let design = Design::new(&pl);
            let p = n_params(5);
            let zero = Fvbm::zeros(5, conv).unwrap();
            let hess = pseudo::hessian(&zero, &pl).unwrap();
            let scale = conv.variance_bound();
            let nu: Vec<f64> = (0..p).map(|a| (a as f64 * 0.37).sin()).collect();
            // the counts as pair weights give the same K
            let counts: Vec<f32> = (0..pl.n_distinct())
                .flat_map(|u| std::iter::repeat_n(pl.weights()[u] as f32, 5))
                .collect();
            let diag = design.pair_diagonal(&counts);
            let cases = [
                (None, Precision::Double, 1e-9),
                (Some(counts.as_slice()), Precision::Double, 1e-9),
                (Some(counts.as_slice()), Precision::Single, 1e-5),
            ];
            for (pair, precision, tol) in cases {
                let mut out = vec![0.0; p];
                design
                    .gram_times(&nu, pair, precision, &mut out, None)
                    .unwrap();
                for a in 0..p {
                    let direct: f64 = (0..p).map(|c| -hess[a * p + c] / scale * nu[c]).sum();
                    assert!(
                        (out[a] - direct).abs() < tol * pl.n_samples() as f64,
                        "{conv} {precision:?}"
                    );
                    assert!((diag[a] + hess[a * p + a] / scale).abs() < 1e-9, "{conv}");
                }
            }
        }
    }

    #[test]
    fn an_interrupt_stops_a_pass() {
        let truth = Fvbm::random(4, 0.4, Convention::Spin, &mut rng_from_seed(8)).unwrap();
        let data = exact::sample(&truth, 50, &mut rng_from_seed(9)).unwrap();
        let design = Design::new(&PlData::new(&data, Convention::Spin).unwrap());
        let stop = Interrupt::new();
        stop.set();
        let mut g = vec![0.0; n_params(4)];
        let err = design
            .log_pl_gradient(&truth.theta(), &mut g, Precision::Single, Some(&stop))
            .unwrap_err();
        assert!(matches!(err, Error::Interrupted { .. }), "{err}");
    }
}
