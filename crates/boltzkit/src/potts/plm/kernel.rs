//! The engine's kernels: per-site coupling tables, one site's conditional term with its
//! gradient, and the moves between the model's layout (one block per pair) and the tables.
//!
//! Site `i`'s table holds, for every neighbour `j ≠ i`, `q_j + 1` rows of `q_i` numbers: row
//! `b` is the vector `J_ij(·, b)`, and row `q_j` is zeros (the missing code). The energies of
//! site `i`'s conditional given a sequence are then `h_i + Σ_{j≠i} row(j, s_j)`: one contiguous
//! `q_i`-vector per neighbour (one-hot data never multiplies), and the gradient adds the same
//! residual vector back into the same rows. A site's table and gradient (2 × 254 KiB for
//! protein families of 160 columns) stay in a core's L2 cache while the sequences stream by;
//! each site is one task, so no gradient is ever reduced across threads and the bits do not
//! depend on the thread count.

use super::data::PlmData;

/// Where every site's table lives in one buffer.
#[derive(Debug, Clone)]
pub(crate) struct SiteTables {
    pub(crate) q: Vec<usize>,
    /// Start of site `i`'s table; `start[L]` is the total size.
    pub(crate) start: Vec<usize>,
    /// `block[i·L + j]`: offset of neighbour `j`'s rows inside site `i`'s table.
    pub(crate) block: Vec<usize>,
}

impl SiteTables {
    pub(crate) fn new(q: &[usize]) -> Self {
        let l = q.len();
        let mut start = Vec::with_capacity(l + 1);
        let mut block = vec![0usize; l * l];
        let mut total = 0usize;
        for i in 0..l {
            start.push(total);
            let mut off = 0;
            for j in 0..l {
                if j != i {
                    block[i * l + j] = off;
                    off += (q[j] + 1) * q[i];
                }
            }
            total += off;
        }
        start.push(total);
        SiteTables {
            q: q.to_vec(),
            start,
            block,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.start[self.q.len()]
    }

    pub(crate) fn site_len(&self, i: usize) -> usize {
        self.start[i + 1] - self.start[i]
    }

    /// Splits a buffer of [`SiteTables::len`] values into the sites' tables.
    pub(crate) fn split_mut<'a, T>(&self, mut buf: &'a mut [T]) -> Vec<&'a mut [T]> {
        let mut out = Vec::with_capacity(self.q.len());
        for i in 0..self.q.len() {
            let (a, b) = buf.split_at_mut(self.site_len(i));
            out.push(a);
            buf = b;
        }
        out
    }

    /// Writes site `i`'s table from the model-layout couplings `j_flat` (pair blocks in row
    /// order at `pair_start`), leaving the zero rows zero.
    pub(crate) fn gather_site(
        &self,
        i: usize,
        j_flat: &[f64],
        pair_start: &[usize],
        out: &mut [f64],
    ) {
        let (l, qi) = (self.q.len(), self.q[i]);
        for j in 0..l {
            if j == i {
                continue;
            }
            let qj = self.q[j];
            let dst = &mut out[self.block[i * l + j]..self.block[i * l + j] + (qj + 1) * qi];
            if i < j {
                // J_ij is q_i × q_j: row b of the table is column b of the block.
                let src = &j_flat[pair_start[super::super::pair_index(l, i, j)]..][..qi * qj];
                for b in 0..qj {
                    for a in 0..qi {
                        dst[b * qi + a] = src[a * qj + b];
                    }
                }
            } else {
                // J_ji is q_j × q_i: row b of the table is row b of the block.
                let src = &j_flat[pair_start[super::super::pair_index(l, j, i)]..][..qj * qi];
                dst[..qj * qi].copy_from_slice(src);
            }
            dst[qj * qi..].iter_mut().for_each(|v| *v = 0.0);
        }
    }

    /// The model-layout gradient of the couplings of pairs `(i, j > i)` (the consecutive
    /// blocks of row `i`): site `i`'s table gradient transposed plus site `j`'s as is.
    pub(crate) fn fold_row(&self, i: usize, gw: &[f64], out: &mut [f64]) {
        let (l, qi) = (self.q.len(), self.q[i]);
        let gi = &gw[self.start[i]..self.start[i + 1]];
        let mut off = 0;
        for j in i + 1..l {
            let qj = self.q[j];
            let from_i = &gi[self.block[i * l + j]..];
            let from_j = &gw[self.start[j] + self.block[j * l + i]..];
            let dst = &mut out[off..off + qi * qj];
            for a in 0..qi {
                for b in 0..qj {
                    dst[a * qj + b] = from_i[b * qi + a] + from_j[a * qj + b];
                }
            }
            off += qi * qj;
        }
    }

    /// Zeroes the missing-code rows of site `i`'s table gradient.
    pub(crate) fn clear_missing_rows(&self, i: usize, gw_i: &mut [f64]) {
        let (l, qi) = (self.q.len(), self.q[i]);
        for j in (0..l).filter(|&j| j != i) {
            let o = self.block[i * l + j] + self.q[j] * qi;
            gw_i[o..o + qi].iter_mut().for_each(|v| *v = 0.0);
        }
    }
}

#[inline]
fn add_into(dst: &mut [f64], src: &[f64]) {
    dst.iter_mut().zip(src).for_each(|(d, s)| *d += s);
}

/// Site `i`'s term `− Σ_s w_s ln p(s_i | s_\i)` of the negative log-pseudo-likelihood, with
/// its gradient with respect to `h_i` (written into `gh`) and to site `i`'s table (written
/// into `gw`, missing rows included: callers ignore or clear them).
pub(crate) fn site_term(
    tables: &SiteTables,
    i: usize,
    data: &PlmData,
    h: &[f64],
    w: &[f64],
    gh: &mut [f64],
    gw: &mut [f64],
) -> f64 {
    let (l, qi) = (tables.q.len(), tables.q[i]);
    let block = &tables.block[i * l..(i + 1) * l];
    gh.iter_mut().for_each(|v| *v = 0.0);
    gw.iter_mut().for_each(|v| *v = 0.0);
    let mut e = vec![0.0; qi];
    let mut f = 0.0;
    for s in 0..data.n_rows() {
        let ws = data.weights[s];
        let row = data.row(s);
        let si = row[i] as usize;
        if si >= qi || ws == 0.0 {
            continue;
        }
        e.copy_from_slice(h);
        for j in (0..l).filter(|&j| j != i) {
            let o = block[j] + row[j] as usize * qi;
            add_into(&mut e, &w[o..o + qi]);
        }
        let m = e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let top = e[si] - m;
        let mut z = 0.0;
        for v in e.iter_mut() {
            *v = (*v - m).exp();
            z += *v;
        }
        f -= ws * (top - z.ln());
        let scale = ws / z;
        e.iter_mut().for_each(|v| *v *= scale);
        e[si] -= ws;
        add_into(gh, &e);
        for j in (0..l).filter(|&j| j != i) {
            let o = block[j] + row[j] as usize * qi;
            add_into(&mut gw[o..o + qi], &e);
        }
    }
    f
}
