//! The BSLM sweep as first written (the test twin of the blocked, vectorized sweep): fields
//! and means of every distinct row column by column, two passes per coordinate (the derivative,
//! then the update of the means by [`Convention::shifted_mean`], two divisions per row), the
//! objective from the tracked fields and means.

use super::super::convention::Convention;
use super::super::model::{n_params, Fvbm};
use super::super::pseudo::{fields, for_each_chunk, map_indices, PlData};
use super::{PRODUCT_UNITS, REFRESH_EVERY};
use crate::error::Result;

/// Two distinct columns `j < k` of a `d × rows` column-major table, both mutable.
fn two_columns(v: &mut [f64], rows: usize, j: usize, k: usize) -> (&mut [f64], &mut [f64]) {
    debug_assert!(j < k);
    let (a, b) = v.split_at_mut(k * rows);
    (&mut a[j * rows..(j + 1) * rows], &mut b[..rows])
}

/// `Σ_u w_u (x_u − e_u)`, in four interleaved partial sums (a fixed order, so the result is
/// reproducible, and independent chains the compiler can pipeline and vectorize).
fn residual_sum(w: &[f64], x: &[f64], e: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let n4 = w.len() / 4 * 4;
    for ((w4, x4), e4) in w[..n4]
        .chunks_exact(4)
        .zip(x.chunks_exact(4))
        .zip(e.chunks_exact(4))
    {
        for l in 0..4 {
            acc[l] += w4[l] * (x4[l] - e4[l]);
        }
    }
    let tail: f64 = (n4..w.len()).map(|u| w[u] * (x[u] - e[u])).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `Σ_u w_u ((x_uj − e_uj) x_uk + (x_uk − e_uk) x_uj)`, the derivative of Eq. 2.7, in four
/// interleaved partial sums.
fn cross_gradient(w: &[f64], xj: &[f64], ej: &[f64], xk: &[f64], ek: &[f64]) -> f64 {
    let term = |w: f64, xj: f64, ej: f64, xk: f64, ek: f64| w * ((xj - ej) * xk + (xk - ek) * xj);
    let mut acc = [0.0f64; 4];
    let n4 = w.len() / 4 * 4;
    for ((((w4, xj4), ej4), xk4), ek4) in w[..n4]
        .chunks_exact(4)
        .zip(xj.chunks_exact(4))
        .zip(ej.chunks_exact(4))
        .zip(xk.chunks_exact(4))
        .zip(ek.chunks_exact(4))
    {
        for l in 0..4 {
            acc[l] += term(w4[l], xj4[l], ej4[l], xk4[l], ek4[l]);
        }
    }
    let tail: f64 = (n4..w.len())
        .map(|u| term(w[u], xj[u], ej[u], xk[u], ek[u]))
        .sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Applies `f` to every mean of a column.
#[inline(always)]
fn shift_means(e: &mut [f64], f: impl Fn(f64) -> f64) {
    for v in e.iter_mut() {
        *v = f(*v);
    }
}

/// The columns a coupling update touches.
struct PairColumns<'c> {
    xj: &'c [f64],
    xk: &'c [f64],
    hj: &'c mut [f64],
    hk: &'c mut [f64],
    ej: &'c mut [f64],
    ek: &'c mut [f64],
}

impl PairColumns<'_> {
    /// Moves the fields by `δ·x` and the means by `f(mean, x)` (the addition formula).
    #[inline(always)]
    fn shift(self, delta: f64, f: impl Fn(f64, f64) -> f64) {
        let rows = self.xj.len();
        let (hj, hk, ej, ek) = (
            &mut self.hj[..rows],
            &mut self.hk[..rows],
            &mut self.ej[..rows],
            &mut self.ek[..rows],
        );
        let xk = &self.xk[..rows];
        for u in 0..rows {
            let (a, b) = (self.xj[u], xk[u]);
            hj[u] += delta * b;
            hk[u] += delta * a;
            ej[u] = f(ej[u], b);
            ek[u] = f(ek[u], a);
        }
    }
}

/// The BSLM state: parameters, and the fields and conditional means of every distinct row.
pub(super) struct Reference<'a> {
    data: &'a PlData,
    conv: Convention,
    d: usize,
    rows: usize,
    b: Vec<f64>,
    m: Vec<f64>,
    /// `h[j·rows + u]`: the local field of unit `j` at distinct row `u`.
    h: Vec<f64>,
    /// `e[j·rows + u] = E[x_j | h_uj]`.
    e: Vec<f64>,
    /// `Σ_u w_u x_uj²` per unit.
    sq: Vec<f64>,
    n: f64,
    step: f64,
    /// `n·λ`.
    l2n: f64,
    objective: f64,
    sweeps: usize,
    /// Per-row products of the objective's `f` parts (scratch, `rows` long).
    product: Vec<f64>,
}

impl<'a> Reference<'a> {
    pub(super) fn new(data: &'a PlData, init: &Fvbm, step: f64, l2: f64) -> Result<Self> {
        data.check_model(init)?;
        let (d, rows) = (data.d(), data.n_distinct());
        let n = data.n_samples() as f64;
        let sq = (0..d)
            .map(|j| {
                data.column(j)
                    .iter()
                    .zip(data.weights())
                    .map(|(x, w)| w * x * x)
                    .sum()
            })
            .collect();
        let mut s = Reference {
            data,
            conv: data.convention(),
            d,
            rows,
            b: init.b().to_vec(),
            m: init.m().to_vec(),
            h: fields(init, data),
            e: vec![0.0; d * rows],
            sq,
            n,
            step,
            l2n: n * l2,
            objective: 0.0,
            sweeps: 0,
            product: vec![1.0; rows],
        };
        s.update_objective(true);
        Ok(s)
    }

    /// The b-step for unit `j` (Eq. 2.4, with step factor and penalty).
    fn update_b(&mut self, j: usize) {
        let (rows, conv) = (self.rows, self.conv);
        let x = self.data.column(j);
        let e = &mut self.e[j * rows..(j + 1) * rows];
        let g = residual_sum(self.data.weights(), x, e) - self.l2n * self.b[j];
        let curvature = conv.variance_bound() * self.n + self.l2n;
        let delta = self.step * g / curvature;
        if delta == 0.0 || !delta.is_finite() {
            return;
        }
        self.b[j] += delta;
        let t = conv.shift_constant(delta);
        for hv in &mut self.h[j * rows..(j + 1) * rows] {
            *hv += delta;
        }
        match conv {
            Convention::Spin => shift_means(e, |v| Convention::Spin.shifted_mean(v, 1.0, t)),
            Convention::Binary => shift_means(e, |v| Convention::Binary.shifted_mean(v, 1.0, t)),
        }
    }

    /// The M-step for the coupling `m_jk`, `j < k` (Eq. 2.7, with step factor and penalty).
    fn update_m(&mut self, j: usize, k: usize) {
        let (d, rows, conv) = (self.d, self.rows, self.conv);
        let w = self.data.weights();
        let (xj, xk) = (self.data.column(j), self.data.column(k));
        let (ej, ek) = two_columns(&mut self.e, rows, j, k);
        let mjk = self.m[j * d + k];
        let g = cross_gradient(w, xj, ej, xk, ek) - self.l2n * mjk;
        let curvature = conv.variance_bound() * (self.sq[j] + self.sq[k]) + self.l2n;
        if curvature <= 0.0 {
            return; // both columns are all zero (binary): m_jk does not enter P_n
        }
        let delta = self.step * g / curvature;
        if delta == 0.0 || !delta.is_finite() {
            return;
        }
        self.m[j * d + k] = mjk + delta;
        self.m[k * d + j] = mjk + delta;
        let t = conv.shift_constant(delta);
        let (hj, hk) = two_columns(&mut self.h, rows, j, k);
        let cols = PairColumns {
            xj,
            xk,
            hj,
            hk,
            ej,
            ek,
        };
        match conv {
            Convention::Spin => cols.shift(delta, |v, x| Convention::Spin.shifted_mean(v, x, t)),
            Convention::Binary => {
                cols.shift(delta, |v, x| Convention::Binary.shifted_mean(v, x, t))
            }
        }
    }

    /// One sweep: the b-step, then the M-step in lexicographic order.
    pub(super) fn sweep(&mut self) {
        for j in 0..self.d {
            self.update_b(j);
        }
        for j in 0..self.d {
            for k in j + 1..self.d {
                self.update_m(j, k);
            }
        }
        self.sweeps += 1;
        let refresh = self.sweeps.is_multiple_of(REFRESH_EVERY);
        if refresh {
            let model = Fvbm::new(self.b.clone(), self.m.clone(), self.conv)
                .expect("BSLM updates keep M symmetric with a zero diagonal");
            self.h = fields(&model, self.data);
        }
        self.update_objective(refresh);
    }

    /// Recomputes the objective (log-PL minus penalty) from the fields, and the means from
    /// the fields when `means` is set.
    fn update_objective(&mut self, means: bool) {
        let (rows, conv) = (self.rows, self.conv);
        let data = self.data;
        let w = data.weights();
        let h = &self.h;
        let work = 32 * h.len();
        if means {
            for_each_chunk(&mut self.e, rows, work, |j, ej| {
                for (ev, &hv) in ej.iter_mut().zip(&h[j * rows..(j + 1) * rows]) {
                    *ev = conv.mean(hv);
                }
            });
        }
        // ln P(x_uj | h_uj) = r_uj + ln f_uj (Convention::log_prob_parts): the r parts summed
        // per unit in unit order, the f parts multiplied across at most PRODUCT_UNITS units
        // per row (so the product neither overflows nor underflows), one logarithm per row.
        let e = &self.e;
        let sums = map_indices(self.d, work, |j| {
            let (hj, ej) = (&h[j * rows..(j + 1) * rows], &e[j * rows..(j + 1) * rows]);
            hj.iter()
                .zip(ej)
                .zip(data.column(j))
                .zip(w)
                .map(|(((&hv, &ev), &x), &wv)| wv * conv.log_prob_parts(x, hv, ev).0)
                .sum::<f64>()
        });
        let mut pl: f64 = sums.iter().sum();
        for group in (0..self.d).step_by(PRODUCT_UNITS) {
            self.product.iter_mut().for_each(|f| *f = 1.0);
            for j in group..(group + PRODUCT_UNITS).min(self.d) {
                let (hj, ej) = (&h[j * rows..(j + 1) * rows], &e[j * rows..(j + 1) * rows]);
                let xj = data.column(j);
                for (u, f) in self.product.iter_mut().enumerate() {
                    *f *= conv.log_prob_parts(xj[u], hj[u], ej[u]).1;
                }
            }
            pl += self
                .product
                .iter()
                .zip(w)
                .map(|(f, wv)| wv * f.ln())
                .sum::<f64>();
        }
        let sq: f64 = self.theta().iter().map(|t| t * t).sum();
        self.objective = pl - 0.5 * self.l2n * sq;
    }
}

impl Reference<'_> {
    /// The objective after the last sweep.
    pub(super) fn objective(&self) -> f64 {
        self.objective
    }

    /// `θ = (b, upper M)`.
    pub(super) fn theta(&self) -> Vec<f64> {
        let d = self.d;
        let mut t = Vec::with_capacity(n_params(d));
        t.extend_from_slice(&self.b);
        for j in 0..d {
            t.extend_from_slice(&self.m[j * d + j + 1..(j + 1) * d]);
        }
        t
    }
}
