//! Asymmetric pseudo-likelihood (PlmDCA's default; Ekeberg et al. 2014): each site's
//! conditional is fitted on its own, with its own copy of the couplings it touches, by one
//! single-threaded L-BFGS per site (sites run in parallel, so the bits do not depend on the
//! thread count); the two copies of each pair's block are then put in the zero-sum gauge and
//! averaged.

use super::data::PlmData;
use super::kernel::{site_term, SiteTables};
use super::symmetric::{Penalty, GROUP_EPS};
use crate::error::Result;
use crate::fit::{Count, Interrupt, StopReason};
use crate::optim::lbfgs::{minimize_with_state, LbfgsParams};
use rayon::prelude::*;

/// One site's fit.
pub(crate) struct SiteFit {
    /// `[h_i | site i's table]`.
    pub(crate) x: Vec<f64>,
    pub(crate) f: f64,
    pub(crate) nlpl: f64,
    pub(crate) iterations: usize,
    pub(crate) evaluations: usize,
    pub(crate) stop: StopReason,
}

/// Site `i`'s penalized objective on `x = [h_i | packed table]`, gradient into `g`;
/// `w`, `gw` are padded work tables.
#[allow(clippy::too_many_arguments)]
fn site_objective(
    tables: &SiteTables,
    i: usize,
    data: &PlmData,
    p: Penalty,
    x: &[f64],
    g: &mut [f64],
    w: &mut [f32],
    gw: &mut [f32],
) -> (f64, f64) {
    let l = tables.q.len();
    let qi = tables.q[i];
    let (h, packed) = x.split_at(qi);
    let (gh, gpacked) = g.split_at_mut(qi);
    tables.unpack_site(i, packed, w);
    let nlpl = site_term(tables, i, data, h, w, gh, gw);
    tables.pack_site(i, gw, gpacked);
    let mut f = nlpl;
    for (gv, xv) in gh.iter_mut().zip(h) {
        *gv += 2.0 * p.lambda_h * xv;
        f += p.lambda_h * xv * xv;
    }
    for (gv, xv) in gpacked.iter_mut().zip(packed) {
        *gv += 2.0 * p.lambda_j * xv;
        f += p.lambda_j * xv * xv;
    }
    if p.lambda_group > 0.0 {
        let mut o = 0;
        for j in (0..l).filter(|&j| j != i) {
            let len = tables.q[j] * qi;
            let norm = (GROUP_EPS + packed[o..o + len].iter().map(|v| v * v).sum::<f64>()).sqrt();
            f += p.lambda_group * norm;
            for (gv, xv) in gpacked[o..o + len].iter_mut().zip(&packed[o..o + len]) {
                *gv += p.lambda_group * xv / norm;
            }
            o += len;
        }
    }
    (f, nlpl)
}

/// Fits every site's conditional from the fields `h0` (concatenated by site) and zero
/// couplings. A set `interrupt` stops each site at its next iteration.
pub(crate) fn fit_sites(
    data: &PlmData,
    tables: &SiteTables,
    h0: &[f64],
    p: Penalty,
    lbfgs: &LbfgsParams,
    interrupt: Option<&Interrupt>,
) -> Result<Vec<SiteFit>> {
    let l = tables.q.len();
    let mut starts = Vec::with_capacity(l);
    let mut o = 0;
    for &k in &tables.q {
        starts.push(o);
        o += k;
    }
    (0..l)
        .into_par_iter()
        .map(|i| {
            let qi = tables.q[i];
            let mut x0 = vec![0.0; qi + tables.packed_len(i)];
            x0[..qi].copy_from_slice(&h0[starts[i]..starts[i] + qi]);
            let mut w = vec![0.0f32; tables.site_len(i)];
            let mut gw = vec![0.0f32; tables.site_len(i)];
            let r = minimize_with_state(
                |x, g| Ok(site_objective(tables, i, data, p, x, g, &mut w, &mut gw).0),
                x0,
                lbfgs,
                &mut |s| {
                    Ok(interrupt
                        .filter(|f| f.is_set())
                        .map(|_| StopReason::Interrupted {
                            after: Count::iterations(s.iteration),
                        }))
                },
            )?;
            // The value at the returned point (the last evaluation may be a rejected trial).
            let mut g = vec![0.0; r.x.len()];
            let (_, nlpl_at) = site_objective(tables, i, data, p, &r.x, &mut g, &mut w, &mut gw);
            Ok(SiteFit {
                f: r.f,
                nlpl: nlpl_at,
                iterations: r.iterations,
                evaluations: r.evaluations,
                stop: r.stop,
                x: r.x,
            })
        })
        .collect()
}

/// The model-layout couplings from the sites' packed tables: each copy double-centred
/// (zero-sum gauge), then the two averaged.
pub(crate) fn average_couplings(tables: &SiteTables, fits: &[SiteFit], out: &mut [f64]) {
    let (l, q) = (tables.q.len(), &tables.q);
    // Offset of neighbour j's rows in site i's packed table.
    let packed_offset = |i: usize, j: usize| -> usize {
        q[i] * (0..j).filter(|&k| k != i).map(|k| q[k]).sum::<usize>()
    };
    let mut off = 0;
    for i in 0..l {
        for j in i + 1..l {
            let (qi, qj) = (q[i], q[j]);
            // Copy from site i: row b is J_ij(·, b); from site j: row a is J_ij(a, ·).
            let ti = &fits[i].x[qi + packed_offset(i, j)..];
            let tj = &fits[j].x[qj + packed_offset(j, i)..];
            let mut a_i = vec![0.0; qi * qj];
            let mut a_j = vec![0.0; qi * qj];
            for a in 0..qi {
                for b in 0..qj {
                    a_i[a * qj + b] = ti[b * qi + a];
                    a_j[a * qj + b] = tj[a * qj + b];
                }
            }
            double_center(&mut a_i, qi, qj);
            double_center(&mut a_j, qi, qj);
            for (k, v) in out[off..off + qi * qj].iter_mut().enumerate() {
                *v = 0.5 * (a_i[k] + a_j[k]);
            }
            off += qi * qj;
        }
    }
}

/// Subtracts row and column means and adds back the grand mean of a `r × c` block.
fn double_center(m: &mut [f64], r: usize, c: usize) {
    let rows: Vec<f64> = (0..r)
        .map(|a| m[a * c..(a + 1) * c].iter().sum::<f64>() / c as f64)
        .collect();
    let cols: Vec<f64> = (0..c)
        .map(|b| (0..r).map(|a| m[a * c + b]).sum::<f64>() / r as f64)
        .collect();
    let all = rows.iter().sum::<f64>() / r as f64;
    for a in 0..r {
        for b in 0..c {
            m[a * c + b] += all - rows[a] - cols[b];
        }
    }
}
