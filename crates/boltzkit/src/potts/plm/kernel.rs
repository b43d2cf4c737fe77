//! The engine's kernels: per-site coupling tables, one site's conditional term with its
//! gradient, and the moves between the model's layout (one block per pair) and the tables.
//!
//! Site `i`'s table holds, for every neighbour `j ≠ i`, `q_j + 1` rows of `q_i` numbers padded
//! to a multiple of `LANES`: row `b` is the vector `J_ij(·, b)`, and row `q_j` is zeros (the
//! missing code). The energies of site `i`'s conditional given a sequence are then
//! `h_i + Σ_{j≠i} row(j, s_j)`: one contiguous vector per neighbour (one-hot data never
//! multiplies), and the gradient adds the same residual vector back into the same rows. Rows
//! are taken `ROWS` at a time and neighbour by neighbour, so that the few rows of one
//! neighbour's block serve the whole batch from L1.
//!
//! Precision: tables, energies and the softmax are `f32` (AVX2 when the CPU has it, the same
//! bits without: only adds and multiplies, never fused); each sequence's log-probability is
//! taken in `f64`, and the gradient rows (the fields' too) are accumulated in `f32` over
//! blocks of `BLOCK` sequences and then added into `f64` sums, so the gradient's error does not grow
//! with the number of sequences. A site's tables (about 1 MiB for protein families of 160
//! columns) stay in a core's L2 cache while the sequences stream by; each site is one task,
//! so no gradient is reduced across threads and the bits do not depend on the thread count.

use super::data::PlmData;
use crate::linalg::fast_exp;

/// Table rows are padded to a multiple of this many `f32` (one AVX2 register).
pub(crate) const LANES: usize = 8;

/// Sequences whose gradient rows are summed in `f32` before joining the `f64` sums.
pub(crate) const BLOCK: usize = 512;

/// Rows whose energies and residuals a site's kernel holds at once: their `f32` vectors
/// (24 KiB at `q = 21`) fit in a 48 KiB L1 beside one neighbour's rows, and each pass over a
/// site's tables (1 MiB each for DHFR's 159 columns: L2-sized, so reloaded under load) serves
/// this many sequences.
const ROWS: usize = 256;

/// `q` rounded up to a multiple of `LANES`.
pub(crate) fn padded(q: usize) -> usize {
    q.div_ceil(LANES) * LANES
}

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
                    off += (q[j] + 1) * padded(q[i]);
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
    /// order at `pair_start`), padding and zero rows zero.
    pub(crate) fn gather_site(
        &self,
        i: usize,
        j_flat: &[f64],
        pair_start: &[usize],
        out: &mut [f32],
    ) {
        let (l, qi) = (self.q.len(), self.q[i]);
        let qp = padded(qi);
        out.iter_mut().for_each(|v| *v = 0.0);
        for j in (0..l).filter(|&j| j != i) {
            let qj = self.q[j];
            let dst = &mut out[self.block[i * l + j]..][..qj * qp];
            if i < j {
                // J_ij is q_i × q_j: row b of the table is column b of the block.
                let src = &j_flat[pair_start[super::super::pair_index(l, i, j)]..][..qi * qj];
                for b in 0..qj {
                    for a in 0..qi {
                        dst[b * qp + a] = src[a * qj + b] as f32;
                    }
                }
            } else {
                // J_ji is q_j × q_i: row b of the table is row b of the block.
                let src = &j_flat[pair_start[super::super::pair_index(l, j, i)]..][..qj * qi];
                for b in 0..qj {
                    for a in 0..qi {
                        dst[b * qp + a] = src[b * qi + a] as f32;
                    }
                }
            }
        }
    }

    /// The model-layout gradient of the couplings of pairs `(i, j > i)` (the consecutive
    /// blocks of row `i`): site `i`'s table gradient transposed plus site `j`'s as is.
    pub(crate) fn fold_row(&self, i: usize, gw: &[f32], out: &mut [f64]) {
        let (l, qi) = (self.q.len(), self.q[i]);
        let gi = &gw[self.start[i]..self.start[i + 1]];
        let mut off = 0;
        for j in i + 1..l {
            let qj = self.q[j];
            let (pi, pj) = (padded(qi), padded(qj));
            let from_i = &gi[self.block[i * l + j]..];
            let from_j = &gw[self.start[j] + self.block[j * l + i]..];
            let dst = &mut out[off..off + qi * qj];
            for a in 0..qi {
                for b in 0..qj {
                    dst[a * qj + b] = f64::from(from_i[b * pi + a]) + f64::from(from_j[a * pj + b]);
                }
            }
            off += qi * qj;
        }
    }

    /// Site `i`'s table in the packed layout of the asymmetric fit (`q_j` rows of `q_i` per
    /// neighbour, no padding, no zero row) from the padded one, or back.
    pub(crate) fn pack_site(&self, i: usize, padded_table: &[f32], packed: &mut [f64]) {
        self.each_row(i, |p, k, qi| {
            for a in 0..qi {
                packed[k + a] = f64::from(padded_table[p + a]);
            }
        });
    }

    /// The inverse of [`SiteTables::pack_site`] (padding and zero rows set to zero).
    pub(crate) fn unpack_site(&self, i: usize, packed: &[f64], padded_table: &mut [f32]) {
        padded_table.iter_mut().for_each(|v| *v = 0.0);
        self.each_row(i, |p, k, qi| {
            for a in 0..qi {
                padded_table[p + a] = packed[k + a] as f32;
            }
        });
    }

    /// `f(padded offset, packed offset, q_i)` for every real row of site `i`'s table.
    fn each_row(&self, i: usize, mut f: impl FnMut(usize, usize, usize)) {
        let (l, qi) = (self.q.len(), self.q[i]);
        let qp = padded(qi);
        let mut k = 0;
        for j in (0..l).filter(|&j| j != i) {
            for b in 0..self.q[j] {
                f(self.block[i * l + j] + b * qp, k, qi);
                k += qi;
            }
        }
    }

    /// Length of site `i`'s packed table: `q_i Σ_{j≠i} q_j`.
    pub(crate) fn packed_len(&self, i: usize) -> usize {
        self.q[i] * (self.q.iter().sum::<usize>() - self.q[i])
    }
}

/// Site `i`'s term `− Σ_s w_s ln p(s_i | s_\i)` of the negative log-pseudo-likelihood, with
/// its gradient with respect to `h_i` (written into `gh`) and to site `i`'s table (written
/// into `gw`, missing rows included: callers ignore them).
pub(crate) fn site_term(
    tables: &SiteTables,
    i: usize,
    data: &PlmData,
    h: &[f64],
    w: &[f32],
    gh: &mut [f64],
    gw: &mut [f32],
) -> f64 {
    let x = SiteInput {
        tables,
        i,
        data,
        h,
        w,
    };
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2")]
        unsafe fn avx2(x: &SiteInput<'_>, gh: &mut [f64], gw: &mut [f32]) -> f64 {
            site_term_generic(x, gh, gw)
        }
        if crate::cpu::has(crate::cpu::Feature::Avx2) {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { avx2(&x, gh, gw) };
        }
    }
    site_term_generic(&x, gh, gw)
}

/// The inputs of one site's kernel: the tables' layout, the site, the data, the site's fields
/// and its table.
#[derive(Clone, Copy)]
struct SiteInput<'a> {
    tables: &'a SiteTables,
    i: usize,
    data: &'a PlmData,
    h: &'a [f64],
    w: &'a [f32],
}

/// `dst += src` over whole `LANES`-wide chunks. Each chunk is loaded into registers before it
/// is stored, so the compiler needs no proof that `dst` and `src` do not overlap to use
/// vector loads and adds (without the copies it emitted one scalar add per lane for the
/// gradient's scatter, half of the kernel's time).
#[inline(always)]
fn add_rows(dst: &mut [f32], src: &[f32]) {
    for (d, s) in dst.chunks_exact_mut(LANES).zip(src.chunks_exact(LANES)) {
        let mut a = [0.0f32; LANES];
        let mut b = [0.0f32; LANES];
        a.copy_from_slice(d);
        b.copy_from_slice(s);
        for k in 0..LANES {
            a[k] += b[k];
        }
        d.copy_from_slice(&a);
    }
}

/// A `LANES`-long chunk as an array.
#[inline(always)]
fn lanes(c: &[f32]) -> &[f32; LANES] {
    c.try_into().expect("chunks_exact(LANES)")
}

/// The softmax of one row's energies `e` (`q_p` lanes, the first `q_i` real, `mask` 1 on
/// them and 0 on the padding) in place, lane-parallel: returns `(max, Σ exp(e − max))` and
/// leaves `exp(e − max)` in the real lanes and 0 in the padding. The lane sums are added in a
/// fixed order, so the bits do not depend on the instruction set.
#[inline(always)]
fn softmax_row(e: &mut [f32], mask: &[f32]) -> (f32, f32) {
    // Chunks as arrays: lengths the compiler knows, so the lane loops need no bounds checks
    // and become vector instructions.
    let mut mx = [f32::NEG_INFINITY; LANES];
    for (c, w) in e.chunks_exact(LANES).zip(mask.chunks_exact(LANES)) {
        let (c, w) = (lanes(c), lanes(w));
        for k in 0..LANES {
            // Padding lanes count as −∞.
            let v = if w[k] > 0.0 { c[k] } else { f32::NEG_INFINITY };
            mx[k] = if v > mx[k] { v } else { mx[k] };
        }
    }
    let m = mx.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut z = [0.0f32; LANES];
    for (c, w) in e.chunks_exact_mut(LANES).zip(mask.chunks_exact(LANES)) {
        let (c, w): (&mut [f32; LANES], _) = (c.try_into().expect("LANES"), lanes(w));
        for k in 0..LANES {
            c[k] = fast_exp(c[k] - m) * w[k];
            z[k] += c[k];
        }
    }
    (m, z.iter().sum())
}

/// [`site_term`]'s body, compiled once portable and once with AVX2 enabled.
#[inline(always)]
fn site_term_generic(x: &SiteInput<'_>, gh: &mut [f64], gw: &mut [f32]) -> f64 {
    let SiteInput {
        tables,
        i,
        data,
        h,
        w,
    } = *x;
    let (l, n, qi) = (tables.q.len(), data.n_rows(), tables.q[i]);
    let qp = padded(qi);
    let block = &tables.block[i * l..(i + 1) * l];
    let js: Vec<usize> = (0..l).filter(|&j| j != i).collect();
    gh.iter_mut().for_each(|v| *v = 0.0);
    let mut sum64 = vec![0.0f64; gw.len()];
    gw.iter_mut().for_each(|v| *v = 0.0);
    // The fields' gradient, summed in f32 by block as the table's is.
    let mut gh32 = vec![0.0f32; qp];
    let mut gh64 = vec![0.0f64; qp];
    let mut h32 = vec![0.0f32; qp];
    h32.iter_mut().zip(h).for_each(|(d, s)| *d = *s as f32);
    let mask: Vec<f32> = (0..qp).map(|a| if a < qi { 1.0 } else { 0.0 }).collect();
    // Energies, then residuals, of a block of rows.
    let mut e = vec![0.0f32; ROWS * qp];
    let own = data.column(i);
    let mut f = 0.0;
    let mut since_flush = 0;
    for s0 in (0..n).step_by(ROWS) {
        let s1 = (s0 + ROWS).min(n);
        let e = &mut e[..(s1 - s0) * qp];
        for eb in e.chunks_exact_mut(qp) {
            eb.copy_from_slice(&h32);
        }
        // Neighbour by neighbour: its q_j + 1 rows stay in L1 while the block's rows pass.
        for &j in &js {
            let rows = &w[block[j]..block[j] + (tables.q[j] + 1) * qp];
            for (eb, &c) in e.chunks_exact_mut(qp).zip(&data.column(j)[s0..s1]) {
                let o = c as usize * qp;
                add_rows(eb, &rows[o..o + qp]);
            }
        }
        for (k, eb) in e.chunks_exact_mut(qp).enumerate() {
            let s = s0 + k;
            let (ws, si) = (data.weights[s], own[s] as usize);
            if si >= qi || ws == 0.0 {
                eb.iter_mut().for_each(|v| *v = 0.0);
                continue;
            }
            let top = eb[si];
            let (m, z) = softmax_row(eb, &mask);
            f -= ws * (f64::from(top - m) - f64::from(z).ln());
            let scale = (ws as f32) / z;
            eb.iter_mut().for_each(|v| *v *= scale);
            eb[si] -= ws as f32;
            add_rows(&mut gh32, eb);
        }
        for &j in &js {
            let rows = &mut gw[block[j]..block[j] + (tables.q[j] + 1) * qp];
            for (eb, &c) in e.chunks_exact(qp).zip(&data.column(j)[s0..s1]) {
                let o = c as usize * qp;
                add_rows(&mut rows[o..o + qp], eb);
            }
        }
        since_flush += s1 - s0;
        if since_flush >= BLOCK {
            flush(gw, &mut sum64);
            flush(&mut gh32, &mut gh64);
            since_flush = 0;
        }
    }
    flush(gw, &mut sum64);
    flush(&mut gh32, &mut gh64);
    gw.iter_mut().zip(&sum64).for_each(|(d, s)| *d = *s as f32);
    gh.iter_mut().zip(&gh64).for_each(|(d, s)| *d = *s);
    f
}

/// `sum += part; part = 0`.
#[inline(always)]
fn flush(part: &mut [f32], sum: &mut [f64]) {
    for (s, p) in sum.iter_mut().zip(part.iter_mut()) {
        *s += f64::from(*p);
        *p = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Dataset;
    use crate::rng::rng_from_seed;
    use rand::Rng;

    /// A site kernel's signature.
    type SiteTerm = fn(&SiteTables, usize, &PlmData, &[f64], &[f32], &mut [f64], &mut [f32]) -> f64;

    /// The dispatched kernel (AVX2 where the CPU has it) gives the portable kernel's bits.
    #[test]
    fn dispatched_kernel_equals_the_portable_one_bit_for_bit() {
        let mut rng = rng_from_seed(11);
        let cards = [3u32, 21, 4, 9];
        let n = 150;
        let vals: Vec<u8> = (0..n * cards.len())
            .map(|k| rng.random_range(0..cards[k % cards.len()]) as u8)
            .collect();
        let w: Vec<f64> = (0..n).map(|_| 0.1 + rng.random::<f64>()).collect();
        let data = Dataset::from_flat(vals, cards.len(), cards.to_vec()).unwrap();
        let coded = PlmData::new(&data, Some(&w), Some(0)).unwrap();
        let tables = SiteTables::new(coded.states());
        let mut table: Vec<f32> = (0..tables.start[cards.len()])
            .map(|_| rng.random::<f32>() - 0.5)
            .collect();
        for i in 0..cards.len() {
            let qi = tables.q[i];
            let h: Vec<f64> = (0..qi).map(|_| rng.random::<f64>() - 0.5).collect();
            let wi = &mut table[tables.start[i]..tables.start[i + 1]];
            // Keep the zero rows and padding zero, as gather_site does.
            let packed: Vec<f64> = {
                let mut p = vec![0.0; tables.packed_len(i)];
                tables.pack_site(i, wi, &mut p);
                p
            };
            tables.unpack_site(i, &packed, wi);
            let run = |f: SiteTerm| {
                let mut gh = vec![0.0; qi];
                let mut gw = vec![0.0f32; wi.len()];
                let v = f(&tables, i, &coded, &h, wi, &mut gh, &mut gw);
                (v.to_bits(), gh, gw)
            };
            let portable: SiteTerm = |tables, i, data, h, w, gh, gw| {
                let x = SiteInput {
                    tables,
                    i,
                    data,
                    h,
                    w,
                };
                site_term_generic(&x, gh, gw)
            };
            let (a, b) = (run(site_term), run(portable));
            assert_eq!(a.0, b.0, "site {i}: objective");
            assert!(a
                .1
                .iter()
                .zip(&b.1)
                .all(|(x, y)| x.to_bits() == y.to_bits()));
            assert!(a
                .2
                .iter()
                .zip(&b.2)
                .all(|(x, y)| x.to_bits() == y.to_bits()));
        }
    }
}
