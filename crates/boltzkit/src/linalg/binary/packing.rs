//! The dense right-hand matrix in strips of columns ([`Packed`]) and the density rule that
//! picks the sparse path ([`max_density`]).

use rayon::prelude::*;
use std::sync::OnceLock;

/// Above this fraction of ones the dense GEMM is faster than summing rows (strips that do
/// not fit in L1; see [`max_density`]).
pub const SPARSE_MAX_DENSITY: f64 = 0.3;

/// Above this fraction of ones the dense GEMM is faster than summing rows of a strip that
/// fits in L1 (measured on `H·Wᵀ`, 500 hidden units: 1.1× at 0.5).
pub const SPARSE_MAX_DENSITY_L1: f64 = 0.5;

/// Bytes of a strip that stays in the L1 data cache (32 KiB on this project's machines)
/// while the rows of a product are summed.
pub(super) const L1_STRIP_BYTES: usize = 32 << 10;

/// The density of ones up to which a product with `rows` packed rows takes the sparse path:
/// [`SPARSE_MAX_DENSITY_L1`] when a 16-column strip of `rows` rows fits in L1, else
/// [`SPARSE_MAX_DENSITY`] (an MNIST `W` strip is 784 rows × 64 B = 49 KiB: from L2 the row
/// sums lose to GEMM above about 0.35; `Wᵀ` with 500 hidden units is 31 KiB).
pub fn max_density(rows: usize) -> f64 {
    if rows * STRIP * std::mem::size_of::<f32>() <= L1_STRIP_BYTES {
        SPARSE_MAX_DENSITY_L1
    } else {
        SPARSE_MAX_DENSITY
    }
}

/// `f32` lanes of one AVX register.
pub const LANES: usize = 8;

/// Columns per strip of a [`Packed`] matrix whose strips of that width fit in twice L1: two
/// AVX registers, so one index read serves two 8-wide additions from one 64-byte cache line
/// (with one register per index the kernel is bound by its loads: one index and one row per
/// addition). An MNIST `W` (784 rows, 49 KB strips) takes them too: its rows then come partly
/// from L2, and still the three `·W` products of a PCD-1 MNIST update ran 20-30% faster on
/// one thread than with 8-column strips that fit in L1 (25 KB), the same on two (issue 19,
/// BENCHMARKS.md). Taller matrices use strips of [`LANES`] columns.
pub const STRIP: usize = 2 * LANES;

/// The strip width of a packed matrix with `rows` rows: [`STRIP`] when such a strip fits in
/// twice L1, else [`LANES`].
fn strip_width(rows: usize) -> usize {
    if rows * STRIP * std::mem::size_of::<f32>() <= 2 * L1_STRIP_BYTES {
        STRIP
    } else {
        LANES
    }
}

/// A row-major matrix stored in strips of `width` ([`STRIP`] or [`LANES`]) columns: strip `s`
/// is a contiguous `rows × width` block holding columns `s·width..`, the last strip
/// zero-padded. Reused across calls (no allocation once warm).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Packed {
    /// The strips, in cache lines: every 16-column row starts a line (a row split over two
    /// lines costs two L1 accesses).
    data: Vec<Line>,
    /// Column totals (the sum of all rows, per column, padded to whole strips), built on the
    /// first product with complemented lists; each summed in row order in four interleaved
    /// partial sums, as [`sum_selected`](super::sum_selected) sums a list of every row.
    totals: OnceLock<Vec<f32>>,
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) width: usize,
}

/// One 64-byte cache line of floats.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C, align(64))]
struct Line([f32; STRIP]);

impl Packed {
    /// The packed floats.
    fn floats(&self) -> &[f32] {
        // SAFETY: `Line` is `repr(C)` over `[f32; STRIP]` with no padding (64 bytes, aligned
        // to 64), so the lines are a contiguous run of `STRIP ·len` floats.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast(), self.data.len() * STRIP) }
    }

    /// The packed floats, mutable.
    fn floats_mut(&mut self) -> &mut [f32] {
        // SAFETY: as `floats`, borrowed mutably.
        unsafe {
            std::slice::from_raw_parts_mut(self.data.as_mut_ptr().cast(), self.data.len() * STRIP)
        }
    }

    /// Rows of the packed matrix.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of the packed matrix.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Strips of the packed matrix.
    #[inline]
    pub(super) fn strips(&self) -> usize {
        self.cols.div_ceil(self.width)
    }

    /// Strip `s`: its `rows × width` floats.
    #[inline]
    pub(super) fn strip(&self, s: usize) -> &[f32] {
        let len = self.rows * self.width;
        &self.floats()[s * len..(s + 1) * len]
    }

    /// Sets the shape. The padding columns of the last strip are zero afterwards; the other
    /// entries are left for the caller to overwrite (no clearing pass when the shape is the
    /// same as before, as it is for every update of a training run).
    fn reset(&mut self, rows: usize, cols: usize) {
        let width = strip_width(rows);
        let lines = (cols.div_ceil(width) * rows * width).div_ceil(STRIP);
        if (rows, cols, width, self.data.len()) != (self.rows, self.cols, self.width, lines) {
            self.rows = rows;
            self.cols = cols;
            self.width = width;
            self.data.clear();
            self.data.resize(lines, Line::default());
        }
        self.totals = OnceLock::new();
    }

    /// The column totals, computed on first use after a packing.
    pub(super) fn totals(&self) -> &[f32] {
        self.totals.get_or_init(|| {
            let (rows, width) = (self.rows, self.width);
            let mut totals = vec![0f32; self.strips() * width];
            if rows == 0 {
                return totals;
            }
            totals
                .par_chunks_mut(width)
                .zip(self.floats().par_chunks(rows * width))
                .for_each(|(t, strip)| {
                    let mut acc = [[0f32; STRIP]; 4];
                    let mut quads = strip.chunks_exact(4 * width);
                    for q in &mut quads {
                        for (a, row) in acc.iter_mut().zip(q.chunks_exact(width)) {
                            a.iter_mut().zip(row).for_each(|(x, &y)| *x += y);
                        }
                    }
                    for row in quads.remainder().chunks_exact(width) {
                        acc[0].iter_mut().zip(row).for_each(|(x, &y)| *x += y);
                    }
                    for (l, t) in t.iter_mut().enumerate() {
                        *t = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l]);
                    }
                });
            totals
        })
    }

    /// Computes the column totals now (in parallel) if they are not yet known, so products
    /// with complemented lists that run inside other parallel tasks find them ready.
    pub fn prepare_totals(&self) {
        self.totals();
    }

    /// Packs the row-major `rows × cols` matrix `b`.
    ///
    /// # Panics
    /// When `b` is shorter than `rows × cols`.
    pub fn pack(&mut self, b: &[f32], rows: usize, cols: usize) {
        self.pack_stacked(&[(&b[..rows * cols], 1.0)], cols);
    }

    /// Packs the matrix that stacks `parts` vertically, each `(matrix, scale)` a row-major
    /// matrix with rows of `cols` multiplied by `scale`.
    ///
    /// # Panics
    /// When a part is not a whole number of rows.
    pub fn pack_stacked(&mut self, parts: &[(&[f32], f32)], cols: usize) {
        assert!(cols > 0 && parts.iter().all(|(p, _)| p.len() % cols == 0));
        let rows = parts.iter().map(|(p, _)| p.len() / cols).sum();
        self.reset(rows, cols);
        if rows == 0 {
            return;
        }
        let (sw, strips) = (self.width, self.strips());
        // `take`: the buffer is whole cache lines, so a last chunk of padding may follow the
        // strips (a shape such as 785 × 33 then indexed past its input)
        self.floats_mut()
            .par_chunks_mut(rows * sw)
            .take(strips)
            .enumerate()
            .for_each(|(s, strip)| {
                let j0 = s * sw;
                let width = sw.min(cols - j0);
                let mut out = strip.chunks_exact_mut(sw);
                for &(part, scale) in parts {
                    for (row, o) in part.chunks_exact(cols).zip(&mut out) {
                        copy_strip_row(o, &row[j0..j0 + width], scale);
                    }
                }
            });
    }

    /// Packs the transpose of the row-major `rows × cols` matrix `b` (a `cols × rows`
    /// matrix).
    ///
    /// # Panics
    /// When `b` is shorter than `rows × cols`.
    pub fn pack_transposed(&mut self, b: &[f32], rows: usize, cols: usize) {
        assert!(b.len() >= rows * cols);
        self.reset(cols, rows);
        if rows == 0 || cols == 0 {
            return;
        }
        let (sw, strips) = (self.width, self.strips());
        self.floats_mut()
            .par_chunks_mut(cols * sw)
            .take(strips)
            .enumerate()
            .for_each(|(s, strip)| {
                // strip s holds rows s·sw.. of b as its columns
                let i0 = s * sw;
                let n_rows = sw.min(rows - i0);
                write_transposed_strip(&b[i0 * cols..(i0 + n_rows) * cols], cols, sw, strip);
            });
    }

    /// Shapes this packing for the row-major `rows × cols` matrix `b` (or for `bᵀ` when
    /// `transposed`) and returns a writer that packs it from blocks of `b`'s rows, from
    /// several threads at once ([`BlockWriter`]): an optimizer packs `W` and `Wᵀ` in the
    /// pass that updates `W`, each block while it is in L1.
    pub(crate) fn block_writer(
        &mut self,
        rows: usize,
        cols: usize,
        transposed: bool,
    ) -> BlockWriter {
        if transposed {
            self.reset(cols, rows);
        } else {
            self.reset(rows, cols);
        }
        BlockWriter {
            base: self.floats_mut().as_mut_ptr(),
            rows,
            cols,
            width: self.width,
            transposed,
        }
    }
}

/// Packs a [`Packed`] matrix from blocks of rows of the row-major `rows × cols` matrix `b` it
/// holds (or holds transposed), written by any threads in any order: made by
/// [`Packed::block_writer`], which sets the shape. A raw view: the caller keeps the packing
/// alive, untouched otherwise, until every block is written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockWriter {
    base: *mut f32,
    rows: usize,
    cols: usize,
    width: usize,
    transposed: bool,
}

// SAFETY: a `BlockWriter` is an address and a shape; the contract of `write` (disjoint
// blocks, the packing alive and otherwise untouched) makes the writes from several threads
// data-race free.
unsafe impl Send for BlockWriter {}
// SAFETY: as for `Send`: shared by threads that write disjoint blocks only.
unsafe impl Sync for BlockWriter {}

impl BlockWriter {
    /// Rows of `b` per block that this writer needs: a transposed packing's strip width (a
    /// block fills one strip); a plain packing takes blocks of any size ([`STRIP`] here).
    pub(crate) fn block_rows(&self) -> usize {
        if self.transposed {
            self.width
        } else {
            STRIP
        }
    }

    /// Packs rows `first..first + n` of `b`, given as `block` (`n` whole rows). For a
    /// transposed packing `first` is a multiple of [`BlockWriter::block_rows`] and `n` that
    /// many rows (fewer at the end of `b`).
    ///
    /// # Safety
    /// The packing this writer was made from is alive and nobody else reads or writes it
    /// until the last row is written; no other call writes these rows at the same time.
    ///
    /// # Panics
    /// When the block is not whole rows inside `b`, or (transposed) not a whole strip's.
    pub(crate) unsafe fn write(&self, first: usize, block: &[f32]) {
        let (rows, cols, sw) = (self.rows, self.cols, self.width);
        assert!(block.len().is_multiple_of(cols) && first + block.len() / cols <= rows);
        if self.transposed {
            // strip `first / sw` holds the block's rows as its columns: `cols` rows of `sw`
            assert!(first.is_multiple_of(sw) && block.len() == sw.min(rows - first) * cols);
            let strip = std::slice::from_raw_parts_mut(self.base.add(first * cols), cols * sw);
            write_transposed_strip(block, cols, sw, strip);
            return;
        }
        for (s, j0) in (0..cols).step_by(sw).enumerate() {
            let width = sw.min(cols - j0);
            let dst = self.base.add(s * rows * sw + first * sw);
            for (i, row) in block.chunks_exact(cols).enumerate() {
                let o = std::slice::from_raw_parts_mut(dst.add(i * sw), sw);
                copy_strip_row(o, &row[j0..j0 + width], 1.0);
            }
        }
    }
}

/// `o[..x.len()] ← scale · x`, one row of a strip: whole strips of the two widths by
/// fixed-size copies (vector moves; with the width unknown to the compiler the copy ran one
/// float at a time: a tenth of a PCD-1 MNIST update went to packing, issue 19).
#[inline(always)]
fn copy_strip_row(o: &mut [f32], x: &[f32], scale: f32) {
    match x.len() {
        LANES => copy_scaled::<LANES>(o, x, scale),
        STRIP => copy_scaled::<STRIP>(o, x, scale),
        w => {
            for (o, &x) in o[..w].iter_mut().zip(x) {
                *o = scale * x;
            }
        }
    }
}

/// One strip of a transposed packing from its `sw` rows of `b` (fewer in the last strip):
/// by 8 × 8 register transposes when the strip is whole and the CPU has AVX.
fn write_transposed_strip(block: &[f32], cols: usize, sw: usize, strip: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if block.len() == sw * cols && crate::cpu::has(crate::cpu::Feature::Avx) {
        // SAFETY: AVX is available (checked); the strip holds `cols × sw` floats (its
        // packing's shape) and `block` the `sw` rows (checked)
        unsafe { transpose_strip_avx(block, cols, sw, strip) };
        return;
    }
    transpose_strip(block, cols, sw, strip);
}

/// `o ← scale · row[..W]` (a bare copy when `scale` is 1: the same bits).
#[inline(always)]
fn copy_scaled<const W: usize>(o: &mut [f32], row: &[f32], scale: f32) {
    let o: &mut [f32; W] = (&mut o[..W]).try_into().expect("a whole strip row");
    let x: &[f32; W] = row[..W].try_into().expect("a whole strip row");
    if scale == 1.0 {
        *o = *x;
    } else {
        for (o, &x) in o.iter_mut().zip(x) {
            *o = scale * x;
        }
    }
}

/// One strip of a transposed packing: `strip[j · sw + l] = rows[l][j]` for the rows of
/// `block` (each `cols` long, at most `sw` of them); the portable twin of
/// [`transpose_strip_avx`].
fn transpose_strip(block: &[f32], cols: usize, sw: usize, strip: &mut [f32]) {
    for (l, brow) in block.chunks_exact(cols).enumerate() {
        for (j, &x) in brow.iter().enumerate() {
            strip[j * sw + l] = x;
        }
    }
}

/// [`transpose_strip`] for a whole strip (`sw` rows, a multiple of 8) by 8 × 8 register
/// transposes: eight rows of eight loaded, transposed in registers and stored as eight runs
/// of eight (the scalar scatter wrote one float per cache line: 173 µs for MNIST's `Wᵀ`).
///
/// # Safety
/// The CPU has AVX; `block` holds `sw` rows of `cols`, `strip` `cols × sw` floats.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose_strip_avx(block: &[f32], cols: usize, sw: usize, strip: &mut [f32]) {
    use std::arch::x86_64::*;
    assert!(sw.is_multiple_of(LANES) && block.len() == sw * cols && strip.len() >= cols * sw);
    let (src, dst) = (block.as_ptr(), strip.as_mut_ptr());
    let full = cols - cols % LANES;
    for l0 in (0..sw).step_by(LANES) {
        for j0 in (0..full).step_by(LANES) {
            let r = |k: usize| _mm256_loadu_ps(src.add((l0 + k) * cols + j0));
            let (r0, r1, r2, r3, r4, r5, r6, r7) = (r(0), r(1), r(2), r(3), r(4), r(5), r(6), r(7));
            let t0 = _mm256_unpacklo_ps(r0, r1);
            let t1 = _mm256_unpackhi_ps(r0, r1);
            let t2 = _mm256_unpacklo_ps(r2, r3);
            let t3 = _mm256_unpackhi_ps(r2, r3);
            let t4 = _mm256_unpacklo_ps(r4, r5);
            let t5 = _mm256_unpackhi_ps(r4, r5);
            let t6 = _mm256_unpacklo_ps(r6, r7);
            let t7 = _mm256_unpackhi_ps(r6, r7);
            let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
            let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
            let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
            let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
            let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
            let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
            let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
            let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
            // column c of the 8 × 8 block: (r0[c], ..., r7[c])
            let cols8 = [
                _mm256_permute2f128_ps::<0x20>(u0, u4),
                _mm256_permute2f128_ps::<0x20>(u1, u5),
                _mm256_permute2f128_ps::<0x20>(u2, u6),
                _mm256_permute2f128_ps::<0x20>(u3, u7),
                _mm256_permute2f128_ps::<0x31>(u0, u4),
                _mm256_permute2f128_ps::<0x31>(u1, u5),
                _mm256_permute2f128_ps::<0x31>(u2, u6),
                _mm256_permute2f128_ps::<0x31>(u3, u7),
            ];
            for (c, v) in cols8.into_iter().enumerate() {
                _mm256_storeu_ps(dst.add((j0 + c) * sw + l0), v);
            }
        }
        for j in full..cols {
            for l in l0..l0 + LANES {
                *dst.add(j * sw + l) = *src.add(l * cols + j);
            }
        }
    }
}
