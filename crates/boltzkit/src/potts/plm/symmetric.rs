//! The symmetric (joint) pseudo-likelihood objective and its gradient over all parameters
//! in the model's layout (fields by site, then one block per pair), as plmc minimizes it.

use super::data::PlmData;
use super::kernel::{site_term, SiteTables};
use crate::error::{Error, Result};
use crate::fit::Interrupt;
use rayon::prelude::*;

/// Group-L1 smoothing `ε` (plmc's `REGULARIZATION_GROUP_EPS`).
pub(crate) const GROUP_EPS: f64 = 0.001;

/// The penalties of the objective.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Penalty {
    pub(crate) lambda_h: f64,
    pub(crate) lambda_j: f64,
    pub(crate) lambda_group: f64,
}

/// The objective, with its work buffers (allocated once per fit).
pub(crate) struct Symmetric<'a> {
    data: &'a PlmData,
    tables: SiteTables,
    field_start: Vec<usize>,
    pair_start: Vec<usize>,
    /// Start of row `i`'s pair blocks (pairs `(i, j > i)`) in the couplings.
    row_start: Vec<usize>,
    n_h: usize,
    penalty: Penalty,
    w: Vec<f32>,
    gw: Vec<f32>,
    interrupt: Option<Interrupt>,
    /// `− Σ_s w_s Σ_i ln p(s_i | s_\i)` at the last evaluation.
    pub(crate) last_nlpl: f64,
}

impl<'a> Symmetric<'a> {
    pub(crate) fn new(data: &'a PlmData, penalty: Penalty, interrupt: Option<Interrupt>) -> Self {
        let q = data.states();
        let l = q.len();
        let tables = SiteTables::new(q);
        let mut field_start = Vec::with_capacity(l);
        let mut n_h = 0;
        for &k in q {
            field_start.push(n_h);
            n_h += k;
        }
        let mut pair_start = Vec::with_capacity(l * (l - 1) / 2);
        let mut row_start = Vec::with_capacity(l + 1);
        let mut off = 0;
        for i in 0..l {
            row_start.push(off);
            for j in i + 1..l {
                pair_start.push(off);
                off += q[i] * q[j];
            }
        }
        row_start.push(off);
        let size = tables.len();
        Symmetric {
            data,
            tables,
            field_start,
            pair_start,
            row_start,
            n_h,
            penalty,
            w: vec![0.0f32; size],
            gw: vec![0.0f32; size],
            interrupt,
            last_nlpl: f64::NAN,
        }
    }

    /// Number of parameters.
    pub(crate) fn len(&self) -> usize {
        self.n_h + self.row_start[self.data.n_sites()]
    }

    /// `f(x)`, with `∇f(x)` written into `g`. Fails with [`Error::Interrupted`] (within one
    /// site's work) once the interrupt is set.
    pub(crate) fn eval(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64> {
        let l = self.data.n_sites();
        let (xh, xj) = x.split_at(self.n_h);
        let (tables, pair_start) = (&self.tables, &self.pair_start);
        tables
            .split_mut(&mut self.w)
            .into_par_iter()
            .enumerate()
            .for_each(|(i, wi)| tables.gather_site(i, xj, pair_start, wi));
        let (gh, gj) = g.split_at_mut(self.n_h);
        let mut gh_sites = Vec::with_capacity(l);
        let mut rest = gh;
        for &k in &tables.q {
            let (a, b) = rest.split_at_mut(k);
            gh_sites.push(a);
            rest = b;
        }
        let w = &self.w;
        let (data, field_start, interrupt) = (self.data, &self.field_start, &self.interrupt);
        let terms: Vec<Option<f64>> = tables
            .split_mut(&mut self.gw)
            .into_par_iter()
            .zip(gh_sites)
            .enumerate()
            .map(|(i, (gwi, ghi))| {
                if interrupt.as_ref().is_some_and(Interrupt::is_set) {
                    return None;
                }
                let wi = &w[tables.start[i]..tables.start[i + 1]];
                let hi = &xh[field_start[i]..field_start[i] + tables.q[i]];
                Some(site_term(tables, i, data, hi, wi, ghi, gwi))
            })
            .collect();
        let mut nlpl = 0.0;
        for t in terms {
            nlpl += t.ok_or_else(|| Error::Interrupted {
                what: "the pseudo-likelihood gradient".into(),
            })?;
        }
        self.last_nlpl = nlpl;
        // The couplings' gradient, row by row of pairs.
        let mut rows = Vec::with_capacity(l);
        let mut rest = gj;
        for i in 0..l {
            let (a, b) = rest.split_at_mut(self.row_start[i + 1] - self.row_start[i]);
            rows.push(a);
            rest = b;
        }
        let gw = &self.gw;
        rows.into_par_iter()
            .enumerate()
            .for_each(|(i, out)| tables.fold_row(i, gw, out));
        Ok(nlpl + penalize(x, g, self.n_h, &self.pair_start, &tables.q, self.penalty))
    }
}

/// Adds the penalties' gradient to `g` and returns their value.
pub(crate) fn penalize(
    x: &[f64],
    g: &mut [f64],
    n_h: usize,
    pair_start: &[usize],
    q: &[usize],
    p: Penalty,
) -> f64 {
    let mut f = 0.0;
    for (gv, xv) in g[..n_h].iter_mut().zip(&x[..n_h]) {
        *gv += 2.0 * p.lambda_h * xv;
        f += p.lambda_h * xv * xv;
    }
    let (xj, gj) = (&x[n_h..], &mut g[n_h..]);
    let sq: f64 = gj
        .par_chunks_mut(1 << 14)
        .zip(xj.par_chunks(1 << 14))
        .map(|(gc, xc)| {
            let mut s = 0.0;
            for (gv, xv) in gc.iter_mut().zip(xc) {
                *gv += 2.0 * p.lambda_j * xv;
                s += xv * xv;
            }
            s
        })
        .collect::<Vec<f64>>()
        .iter()
        .sum();
    f += p.lambda_j * sq;
    if p.lambda_group > 0.0 {
        let l = q.len();
        let mut k = 0;
        for i in 0..l {
            for j in i + 1..l {
                let (o, len) = (pair_start[k], q[i] * q[j]);
                let norm = (GROUP_EPS + xj[o..o + len].iter().map(|v| v * v).sum::<f64>()).sqrt();
                f += p.lambda_group * norm;
                for (gv, xv) in gj[o..o + len].iter_mut().zip(&xj[o..o + len]) {
                    *gv += p.lambda_group * xv / norm;
                }
                k += 1;
            }
        }
    }
    f
}
