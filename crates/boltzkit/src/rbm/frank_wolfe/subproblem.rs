//! The linear subproblem of Frank-Wolfe (Eq. 9): for the samples `{v_s}` of the current
//! model and the data `{v_n}`,
//!
//! `f(w) = λ/2 ‖w‖² + (1/S) Σ_s softplus(wᵀṽ_s) − (1/N) Σ_n softplus(wᵀṽ_n)`,
//! `∇f(w) = λ w + (1/S) Σ_s σ(wᵀṽ_s) ṽ_s − (1/N) Σ_n σ(wᵀṽ_n) ṽ_n`,
//!
//! with `ṽ = (v, 1)`. Rows are 0/1, so they are kept as the lists of their nonzero columns
//! ([`BinaryRows`]) and every product is a sum over those, in `f64`. Rows are processed in
//! fixed chunks whose partial sums are combined in order: the value is the same bits for any
//! thread count, and no evaluation allocates.

use crate::error::{Error, Result};
use crate::linalg::{sigmoid_f64, softplus_f64};
use rayon::prelude::*;

/// Rows per parallel task.
const ROW_CHUNK: usize = 1024;

/// 0/1 rows stored as the column indices of their ones.
#[derive(Debug, Clone, Default)]
pub struct BinaryRows {
    n_cols: usize,
    start: Vec<usize>,
    idx: Vec<u32>,
}

impl BinaryRows {
    /// Empty storage for rows of `n_cols` columns.
    pub fn new(n_cols: usize) -> Self {
        BinaryRows {
            n_cols,
            start: vec![0],
            idx: Vec::new(),
        }
    }

    /// Rows from a row-major 0/1 matrix with `n_cols` columns (values above 0.5 are ones),
    /// reusing this storage.
    pub fn fill_from_f32(&mut self, x: &[f32], n_cols: usize) {
        self.n_cols = n_cols;
        self.start.clear();
        self.idx.clear();
        self.start.push(0);
        for row in x.chunks_exact(n_cols.max(1)) {
            self.idx.extend(
                row.iter()
                    .enumerate()
                    .filter(|(_, &v)| v > 0.5)
                    .map(|(j, _)| j as u32),
            );
            self.start.push(self.idx.len());
        }
    }

    /// Rows of a binary dataset.
    pub fn from_dataset(data: &crate::data::Dataset) -> Self {
        let mut r = BinaryRows::new(data.n_vars());
        for row in data.values().outer_iter() {
            r.idx.extend(
                row.iter()
                    .enumerate()
                    .filter(|(_, &v)| v != 0)
                    .map(|(j, _)| j as u32),
            );
            r.start.push(r.idx.len());
        }
        r
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.start.len() - 1
    }

    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// The columns holding a one in row `r`.
    pub fn row(&self, r: usize) -> &[u32] {
        &self.idx[self.start[r]..self.start[r + 1]]
    }

    /// `wᵀṽ_r = w[n_cols] + Σ_{j ∈ row r} w_j` (`w` has `n_cols + 1` entries).
    #[inline]
    pub fn dot(&self, r: usize, w: &[f64]) -> f64 {
        let mut a = w[self.n_cols];
        for &j in self.row(r) {
            a += w[j as usize];
        }
        a
    }
}

/// Partial sums of one chunk of rows: `Σ softplus`, and `Σ σ(·) ṽ` (`n_cols + 1` values).
#[derive(Debug, Clone)]
struct Partial {
    f: f64,
    g: Vec<f64>,
}

/// `(1/rows) Σ_r softplus(wᵀṽ_r)` and its gradient into `grad` (overwritten), over fixed chunks.
fn mean_softplus(rows: &BinaryRows, w: &[f64], parts: &mut [Partial], grad: &mut [f64]) -> f64 {
    let n = rows.n_rows();
    parts.par_iter_mut().enumerate().for_each(|(k, p)| {
        p.f = 0.0;
        p.g.iter_mut().for_each(|x| *x = 0.0);
        let d = p.g.len() - 1;
        for r in k * ROW_CHUNK..((k + 1) * ROW_CHUNK).min(n) {
            let a = rows.dot(r, w);
            p.f += softplus_f64(a);
            let s = sigmoid_f64(a);
            for &j in rows.row(r) {
                p.g[j as usize] += s;
            }
            p.g[d] += s;
        }
    });
    grad.iter_mut().for_each(|x| *x = 0.0);
    let mut f = 0.0;
    for p in parts.iter() {
        f += p.f;
        grad.iter_mut().zip(&p.g).for_each(|(a, &b)| *a += b);
    }
    let inv = 1.0 / n as f64;
    grad.iter_mut().for_each(|x| *x *= inv);
    f * inv
}

fn partials(n_rows: usize, dim: usize) -> Vec<Partial> {
    (0..n_rows.div_ceil(ROW_CHUNK))
        .map(|_| Partial {
            f: 0.0,
            g: vec![0.0; dim],
        })
        .collect()
}

/// The Eq. 9 objective over fixed data and a sample set that changes per iteration, with its
/// workspace.
#[derive(Debug, Clone)]
pub struct Subproblem {
    lambda: f64,
    data: BinaryRows,
    samples: BinaryRows,
    data_parts: Vec<Partial>,
    sample_parts: Vec<Partial>,
    g_data: Vec<f64>,
    g_samples: Vec<f64>,
}

impl Subproblem {
    /// The subproblem over `data` (binary rows) with penalty `λ ≥ 0`; samples are set by
    /// [`Subproblem::set_samples`].
    pub fn new(data: BinaryRows, lambda: f64) -> Result<Self> {
        if data.n_rows() == 0 {
            return Err(Error::InvalidData("the subproblem needs data rows".into()));
        }
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(Error::param(
                "lambda",
                format!("must be finite and ≥ 0, got {lambda}"),
            ));
        }
        let d = data.n_cols() + 1;
        Ok(Subproblem {
            lambda,
            data_parts: partials(data.n_rows(), d),
            samples: BinaryRows::new(data.n_cols()),
            data,
            sample_parts: Vec::new(),
            g_data: vec![0.0; d],
            g_samples: vec![0.0; d],
        })
    }

    /// Dimension of `w` (`n_visible + 1`).
    pub fn dim(&self) -> usize {
        self.data.n_cols() + 1
    }

    /// The data rows.
    pub fn data(&self) -> &BinaryRows {
        &self.data
    }

    /// The current sample rows.
    pub fn samples(&self) -> &BinaryRows {
        &self.samples
    }

    /// Takes the model samples `{v_s}` (row-major `S × n_visible`, 0/1).
    pub fn set_samples(&mut self, v: &[f32]) -> Result<()> {
        let nv = self.data.n_cols();
        if v.is_empty() || !v.len().is_multiple_of(nv) {
            return Err(Error::Shape {
                op: "Subproblem::set_samples".into(),
                expected: format!("a non-empty batch of rows of {nv} values"),
                found: format!("{} values", v.len()),
            });
        }
        self.samples.fill_from_f32(v, nv);
        let n = self.samples.n_rows().div_ceil(ROW_CHUNK);
        if self.sample_parts.len() != n {
            self.sample_parts = partials(self.samples.n_rows(), self.dim());
        }
        Ok(())
    }

    /// `f(w)` of Eq. 9, with `∇f(w)` written into `grad`.
    pub fn eval(&mut self, w: &[f64], grad: &mut [f64]) -> f64 {
        let fs = mean_softplus(
            &self.samples,
            w,
            &mut self.sample_parts,
            &mut self.g_samples,
        );
        let fd = mean_softplus(&self.data, w, &mut self.data_parts, &mut self.g_data);
        let mut f = fs - fd;
        for (((g, &x), &gs), &gd) in grad
            .iter_mut()
            .zip(w)
            .zip(&self.g_samples)
            .zip(&self.g_data)
        {
            f += 0.5 * self.lambda * x * x;
            *g = self.lambda * x + gs - gd;
        }
        f
    }
}

/// `(1/rows) Σ_r softplus(wᵀṽ_r)` for one atom `w` (`n_cols + 1` values), sequential.
pub fn mean_softplus_of(rows: &BinaryRows, w: &[f64]) -> f64 {
    let n = rows.n_rows();
    (0..n).map(|r| softplus_f64(rows.dot(r, w))).sum::<f64>() / n as f64
}
