//! The gradient of the average log-likelihood and what estimates it: [`Gradient`] (laid out
//! like the model, filled by the sparse 0/1 statistics of [`crate::linalg::binary`]) and the
//! [`GradientEstimator`] trait that CD-k, PCD-k, pop-CD and PT implement.

use crate::error::Result;
use crate::linalg::binary::{self, SPARSE_MAX_DENSITY};
use crate::linalg::{self, Op};
use crate::rbm::model::{check_len, Rbm};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// An estimate of the gradient of the average log-likelihood (the ascent direction
/// `∇g − ∇f` of Eqs. 4-5 of the S-DCP paper), laid out like the model: `w` is
/// `n_visible × n_hidden` row-major.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Gradient {
    /// `∂ℓ/∂W`.
    pub w: Vec<f32>,
    /// `∂ℓ/∂b`.
    pub b: Vec<f32>,
    /// `∂ℓ/∂c`.
    pub c: Vec<f32>,
}

impl Gradient {
    /// A zero gradient for an RBM of the given shape.
    pub fn zeros(n_visible: usize, n_hidden: usize) -> Self {
        Gradient {
            w: vec![0.0; n_visible * n_hidden],
            b: vec![0.0; n_visible],
            c: vec![0.0; n_hidden],
        }
    }

    /// A zero gradient shaped like `rbm`.
    pub fn like(rbm: &Rbm) -> Self {
        Gradient::zeros(rbm.n_visible(), rbm.n_hidden())
    }

    /// Sets the gradient to `⟨v pᵀ⟩_pos − ⟨v pᵀ⟩_neg` (and the matching means for `b` and `c`)
    /// from a positive batch (`v_pos`, `p_pos = p(h | v_pos)`) and a negative batch (`v_neg`,
    /// `p_neg`), each averaged over its own rows: `W` statistics `Vᵀ·P` by the sparse 0/1
    /// kernel of [`crate::linalg::binary`] over the stacked batches (by two GEMMs when the
    /// states are not sparse 0/1), means accumulated in `f64`.
    pub fn set_difference(
        &mut self,
        rbm: &Rbm,
        v_pos: &[f32],
        p_pos: &[f32],
        v_neg: &[f32],
        p_neg: &[f32],
    ) -> Result<()> {
        self.difference(rbm, v_pos, p_pos, v_neg, p_neg, None, None)
    }

    /// [`Gradient::set_difference`] for states whose rows the sampler already listed:
    /// `row_lists` lists the ones of every row of `v_pos` and then of `v_neg`, in order (the
    /// index lists of [`crate::rbm::GibbsChains`]' fused step). The statistics' column lists
    /// are then sorted from those lists instead of scanned from the states, and the visible
    /// means counted from them: the same bits. Lists that cannot serve (a row listed by its
    /// zeros, another width) fall back to the scan.
    pub(crate) fn set_difference_listed(
        &mut self,
        rbm: &Rbm,
        (v_pos, p_pos): (&[f32], &[f32]),
        (v_neg, p_neg): (&[f32], &[f32]),
        row_lists: &[&binary::IndexLists],
    ) -> Result<()> {
        let lists = Some(row_lists);
        self.difference(rbm, v_pos, p_pos, v_neg, p_neg, None, lists)
    }

    /// The importance-weighted difference of pop-CD (Eq. 8 of the pop-CD paper): as
    /// [`Gradient::set_difference`], with negative row `i` weighted by `r_i / ℓ` instead of
    /// `1 / ℓ` (`r` = the relative weights `ℓ ω_i / Σ_j ω_j`, mean one; see
    /// [`super::popcd::relative_weights`]). `p_neg` is overwritten by its rows scaled by `r_i`.
    /// With every `r_i = 1` the operations are those of [`Gradient::set_difference`], so the
    /// result is the same bits: CD is pop-CD with unit weights.
    pub fn set_weighted_difference(
        &mut self,
        rbm: &Rbm,
        v_pos: &[f32],
        p_pos: &[f32],
        v_neg: &[f32],
        p_neg: &mut [f32],
        r: &[f32],
    ) -> Result<()> {
        let nh = rbm.n_hidden();
        check_len(
            "Gradient::set_weighted_difference",
            "p_neg",
            p_neg.len(),
            r.len() * nh,
        )?;
        for (row, &ri) in p_neg.chunks_exact_mut(nh).zip(r) {
            row.iter_mut().for_each(|p| *p *= ri);
        }
        self.difference(rbm, v_pos, p_pos, v_neg, p_neg, Some(r), None)
    }

    /// `W` and `c` statistics from `p_neg` as given; `b`'s negative mean weights row `i` of
    /// `v_neg` by `r_i` when `r` is given; the rows' lists when given (and unweighted), as
    /// [`Gradient::set_difference_listed`].
    #[allow(clippy::too_many_arguments)]
    fn difference(
        &mut self,
        rbm: &Rbm,
        v_pos: &[f32],
        p_pos: &[f32],
        v_neg: &[f32],
        p_neg: &[f32],
        r: Option<&[f32]>,
        row_lists: Option<&[&binary::IndexLists]>,
    ) -> Result<()> {
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        check_len("Gradient", "w", self.w.len(), nv * nh)?;
        check_len("Gradient", "b", self.b.len(), nv)?;
        check_len("Gradient", "c", self.c.len(), nh)?;
        let bp = rbm.batch_rows("Gradient::set_difference", v_pos, nv)?;
        let bn = rbm.batch_rows("Gradient::set_difference", v_neg, nv)?;
        check_len("Gradient::set_difference", "p_pos", p_pos.len(), bp * nh)?;
        check_len("Gradient::set_difference", "p_neg", p_neg.len(), bn * nh)?;
        if bp == 0 || bn == 0 {
            return Err(crate::Error::param("batch", "empty mini-batch"));
        }
        if let Some(r) = r {
            check_len("Gradient::set_weighted_difference", "r", r.len(), bn)?;
        }
        let (sp, sn) = (1.0 / bp as f32, 1.0 / bn as f32);
        let Gradient { w, b, c } = self;
        // sparse 0/1 states: one pass summing the rows of [sp·P_pos; −sn·P_neg] selected by
        // the ones of each column of [V_pos; V_neg]. The column lists are built while the
        // other threads pack P and take the hidden means: alone, one serial sort left the
        // second thread idle (issue 19). From the rows' lists when given (a counting sort of
        // the ones, the visible means counted from the lists); else by a scan of the states
        // (counting sorts, one per range of columns, in parallel) and the visible means by
        // rows. Each result is the same bits.
        let by_lists = row_lists.filter(|_| r.is_none());
        let sparse = binary::with_scratch(|s| {
            let binary::Scratch {
                column_lists,
                packed,
                ..
            } = s;
            let (listed, ()) = rayon::join(
                || {
                    if let Some(parts) = by_lists {
                        column_lists.resize_with(1, Default::default);
                        let lists = &mut column_lists[0];
                        if let Some(d) = lists.columns_of_lists(parts, nv, SPARSE_MAX_DENSITY) {
                            count_difference(b, lists, bp, bn);
                            return Some(d);
                        }
                    }
                    // one range (no parallel region) for small batches: the trials of the
                    // repro commands, many small models side by side, lost 10-20% to the split
                    let ranges = if (bp + bn) * nv >= SPLIT_LISTS_MIN_ENTRIES {
                        rayon::current_num_threads().clamp(1, nv)
                    } else {
                        1
                    };
                    column_lists.resize_with(ranges, Default::default);
                    rayon::join(
                        || {
                            let parts = [v_pos, v_neg];
                            binary::columns_of_split(column_lists, &parts, nv, SPARSE_MAX_DENSITY)
                        },
                        || mean_difference(b, v_pos, v_neg, r),
                    )
                    .0
                },
                || {
                    packed.pack_stacked(&[(p_pos, sp), (p_neg, -sn)], nh);
                    mean_difference(c, p_pos, p_neg, None);
                },
            );
            listed?;
            // the rows of W for each range of visible units
            let n = column_lists.len();
            let mut rest = &mut w[..];
            let mut products = Vec::with_capacity(n);
            for (t, lists) in column_lists.iter().enumerate() {
                let (rows, tail) = rest.split_at_mut(binary::column_range(nv, t, n).len() * nh);
                products.push((lists, rows));
                rest = tail;
            }
            binary::sum_selected_by_strips(&mut products, packed, |_, _| {});
            Some(())
        });
        if sparse.is_none() {
            // dense states (the means were taken above whatever the lists said)
            linalg::sgemm_par(Op::T, Op::N, nv, nh, bp, sp, v_pos, p_pos, 0.0, w);
            linalg::sgemm_par(Op::T, Op::N, nv, nh, bn, -sn, v_neg, p_neg, 1.0, w);
        }
        Ok(())
    }
}

/// `out_i = ones_pos_i / rows_pos − ones_neg_i / rows_neg` from the column lists of the
/// stacked `[V_pos; V_neg]` (`rows_pos` rows, then `rows_neg`; each list in increasing row
/// order): the bits of [`mean_difference`] on the 0/1 states, whose `f64` sums are these counts
/// exactly.
fn count_difference(
    out: &mut [f32],
    columns: &binary::IndexLists,
    rows_pos: usize,
    rows_neg: usize,
) {
    let (np, nn) = (rows_pos as f64, rows_neg as f64);
    for (i, o) in out.iter_mut().enumerate() {
        let rows = columns.get(i);
        let pos = rows.partition_point(|&row| (row as usize) < rows_pos);
        *o = (pos as f64 / np - (rows.len() - pos) as f64 / nn) as f32;
    }
}

/// Entries of `[V; Ṽ]` from which the statistics' column lists are built by ranges in
/// parallel (MNIST batches of 100: 156,800).
const SPLIT_LISTS_MIN_ENTRIES: usize = 1 << 15;

/// Columns per parallel task of [`mean_difference`].
const MEAN_COLUMNS: usize = 128;

/// `out_j = mean_rows(pos)_j − mean_rows(neg)_j`, accumulated in `f64`; with `r`, row `i` of
/// `neg` enters as `r_i · neg_i` (`r_i = 1` gives the same bits as no weights). Parallel over
/// fixed blocks of columns, each column summed in row order: the same bits for any thread
/// count.
fn mean_difference(out: &mut [f32], pos: &[f32], neg: &[f32], r: Option<&[f32]>) {
    let n = out.len();
    let (rows_p, rows_n) = ((pos.len() / n) as f64, (neg.len() / n) as f64);
    out.par_chunks_mut(MEAN_COLUMNS)
        .enumerate()
        .for_each(|(t, out)| {
            let j0 = t * MEAN_COLUMNS;
            let width = out.len();
            let column_sums = |x: &[f32], r: Option<&[f32]>| {
                let mut acc = [0f64; MEAN_COLUMNS];
                for (i, row) in x.chunks_exact(n).enumerate() {
                    let ri = r.map_or(1.0, |r| r[i]);
                    acc.iter_mut()
                        .zip(&row[j0..j0 + width])
                        .for_each(|(a, &x)| *a += f64::from(ri * x));
                }
                acc
            };
            let (sp, sn) = (column_sums(pos, None), column_sums(neg, r));
            for ((o, &p), &q) in out.iter_mut().zip(&sp).zip(&sn) {
                *o = (p / rows_p - q / rows_n) as f32;
            }
        });
}

/// A stochastic estimate of the log-likelihood gradient on a mini-batch; implementations
/// own their sampler state (chains, generators) between calls.
pub trait GradientEstimator {
    /// Fills `grad` with the estimate for the mini-batch `v` (`batch × n_visible`, 0/1).
    fn estimate(&mut self, rbm: &Rbm, v: &[f32], grad: &mut Gradient) -> Result<()>;

    /// Adds the estimator's diagnostics since the previous call to `out` (pop-CD: effective
    /// sample sizes; parallel tempering: swap acceptance rates) and starts a new period. The
    /// training loop calls it at each observation, so the metric log carries them. None by
    /// default.
    fn report(&mut self, _out: &mut BTreeMap<String, f64>) {}

    /// The estimator's state between mini-batches (chains and their generators), so a run
    /// can resume bit for bit ([`Update::save_state`]); `Ok(None)` by default: not resumable.
    fn save_state(&self) -> Result<Option<serde_json::Value>> {
        Ok(None)
    }

    /// Restores a state of [`GradientEstimator::save_state`]; refuses by default.
    fn restore_state(&mut self, _state: serde_json::Value) -> Result<()> {
        Err(crate::Error::param(
            "resume",
            "this estimator cannot restore a saved state (no restore_state)",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use rand::Rng;

    /// The parallel column means equal the serial row-order sums bit for bit (widths across
    /// several column blocks, weights, 1 and 3 threads).
    #[test]
    fn mean_difference_equals_serial_row_order_sums() {
        let mut rng = rng_from_seed(4);
        for n in [7, 300] {
            let pos: Vec<f32> = (0..11 * n).map(|_| rng.random::<f32>()).collect();
            let neg: Vec<f32> = (0..5 * n).map(|_| rng.random::<f32>()).collect();
            let r: Vec<f32> = (0..5).map(|_| 2.0 * rng.random::<f32>()).collect();
            for weights in [None, Some(&r[..])] {
                let sums = |x: &[f32], r: Option<&[f32]>| {
                    let mut acc = vec![0f64; n];
                    for (i, row) in x.chunks_exact(n).enumerate() {
                        let ri = r.map_or(1.0, |r| r[i]);
                        acc.iter_mut()
                            .zip(row)
                            .for_each(|(a, &x)| *a += f64::from(ri * x));
                    }
                    acc
                };
                let (sp, sn) = (sums(&pos, None), sums(&neg, weights));
                let want: Vec<f32> = sp
                    .iter()
                    .zip(&sn)
                    .map(|(&p, &q)| (p / 11.0 - q / 5.0) as f32)
                    .collect();
                for threads in [1, 3] {
                    let mut got = vec![0f32; n];
                    crate::testutil::on_threads(threads, || {
                        mean_difference(&mut got, &pos, &neg, weights)
                    });
                    assert_eq!(got, want, "n={n} threads={threads}");
                }
            }
        }
    }

    /// The gradient statistics by the sparse path (0/1 batches of density 0.1) and the dense
    /// one (density 0.6) against an `f64` reference.
    #[test]
    fn set_difference_matches_reference_sparse_and_dense() {
        let (nv, nh) = (41, 13);
        let rbm = Rbm::random(nv, nh, 0.5, &mut rng_from_seed(1)).unwrap();
        let mut rng = rng_from_seed(2);
        for density in [0.1f32, 0.6] {
            let (bp, bn) = (9, 6);
            let mut bits = |n: usize| -> Vec<f32> {
                (0..n)
                    .map(|_| f32::from(u8::from(rng.random::<f32>() < density)))
                    .collect()
            };
            let (vp, vn) = (bits(bp * nv), bits(bn * nv));
            let (mut pp, mut pn) = (vec![0f32; bp * nh], vec![0f32; bn * nh]);
            rbm.hidden_probs(&vp, &mut pp).unwrap();
            rbm.hidden_probs(&vn, &mut pn).unwrap();
            let mut g = Gradient::like(&rbm);
            g.set_difference(&rbm, &vp, &pp, &vn, &pn).unwrap();
            for i in 0..nv {
                for j in 0..nh {
                    let stat = |v: &[f32], p: &[f32], rows: usize| -> f64 {
                        (0..rows)
                            .map(|r| f64::from(v[r * nv + i]) * f64::from(p[r * nh + j]))
                            .sum::<f64>()
                            / rows as f64
                    };
                    let want = stat(&vp, &pp, bp) - stat(&vn, &pn, bn);
                    let got = f64::from(g.w[i * nh + j]);
                    assert!(
                        (got - want).abs() < 1e-5,
                        "{density} w[{i},{j}]: {got} vs {want}"
                    );
                }
            }
        }
    }

    /// The statistics from the rows' lists equal those from the scan of the states, bit for
    /// bit: sparse batches split into blocks of rows (one empty), on 1 and 2 threads; lists
    /// that cannot serve (a row listed by its zeros, a batch past the sparse switch) fall
    /// back to the scan.
    #[test]
    fn statistics_from_row_lists_equal_the_scan() {
        let (nv, nh) = (70, 40);
        let rbm = Rbm::random(nv, nh, 0.5, &mut rng_from_seed(3)).unwrap();
        let mut rng = rng_from_seed(4);
        let mut bits = |rows: usize, density: f32| -> Vec<f32> {
            (0..rows * nv)
                .map(|_| f32::from(u8::from(rng.random::<f32>() < density)))
                .collect()
        };
        let mut heavy = bits(6, 0.1);
        heavy[nv..2 * nv].fill(1.0);
        for (vp, vn) in [
            (bits(9, 0.1), bits(6, 0.15)),
            (bits(1, 0.2), bits(6, 0.1)),
            (bits(9, 0.1), heavy),
            (bits(9, 0.4), bits(6, 0.4)),
        ] {
            let (bp, bn) = (vp.len() / nv, vn.len() / nv);
            let (mut pp, mut pn) = (vec![0f32; bp * nh], vec![0f32; bn * nh]);
            rbm.hidden_probs(&vp, &mut pp).unwrap();
            rbm.hidden_probs(&vn, &mut pn).unwrap();
            let mut want = Gradient::like(&rbm);
            want.set_difference(&rbm, &vp, &pp, &vn, &pn).unwrap();
            // blocks as the fused step makes them: the batch in two, the chains in three
            // (the last without rows)
            let lists = |x: &[f32], cuts: &[usize]| -> Vec<binary::IndexLists> {
                cuts.windows(2)
                    .map(|w| {
                        let mut l = binary::IndexLists::default();
                        l.rows_or_complements_of(&x[w[0] * nv..w[1] * nv], nv, 1.0);
                        l
                    })
                    .collect()
            };
            let (lp, ln) = (lists(&vp, &[0, bp / 2, bp]), lists(&vn, &[0, 2, bn, bn]));
            let parts: Vec<&binary::IndexLists> = lp.iter().chain(&ln).collect();
            for threads in [1, 2] {
                let mut got = Gradient::like(&rbm);
                crate::testutil::on_threads(threads, || {
                    got.set_difference_listed(&rbm, (&vp, &pp), (&vn, &pn), &parts)
                        .unwrap()
                });
                assert_eq!(got, want, "{bp} + {bn} rows, {threads} threads");
            }
        }
    }
}
