//! Products with a 0/1 matrix, computed as sums of selected rows instead of multiply-adds.
//!
//! RBM states are binary and usually sparse (binarized MNIST: about 13% ones), so `V·W` costs
//! `(ones of V) × n` additions instead of `rows × k × n` multiply-adds. The right-hand matrix
//! is [`Packed`] in strips of 16 columns ([`STRIP`]: one cache line per row) or, when such a
//! strip would not fit in L1, 8 ([`LANES`]); each strip is one contiguous block (`Wᵀ` of an
//! MNIST RBM with 500 hidden units: 500 × 16 floats = 31 KB; `W`: 784 × 8 floats = 25 KB) that
//! stays in L1 while every output row sums its selected rows of the strip. [`IndexLists`]
//! holds the ones of the 0/1 matrix, by row (for `A·B`, a row denser than half by its zeros)
//! or by column (for `Aᵀ·P`); [`sum_selected`] does the sums.
//!
//! Callers switch to these kernels when the density of ones is at most
//! [`SPARSE_MAX_DENSITY`] (measured on the RBM shapes, see BENCHMARKS.md). Every output
//! element sums its terms in a fixed order on one thread, so results do not depend on the
//! thread count.

use rayon::prelude::*;
use std::sync::OnceLock;

mod changes;
pub use changes::{carry_products, ChangeLists};

/// Above this fraction of ones the dense GEMM is faster than summing rows (strips that do
/// not fit in L1; see [`max_density`]).
pub const SPARSE_MAX_DENSITY: f64 = 0.3;

/// Above this fraction of ones the dense GEMM is faster than summing rows of a strip that
/// fits in L1 (measured on `H·Wᵀ`, 500 hidden units: 1.1× at 0.5).
pub const SPARSE_MAX_DENSITY_L1: f64 = 0.5;

/// Bytes of a strip that stays in the L1 data cache (32 KiB on this project's machines)
/// while the rows of a product are summed.
const L1_STRIP_BYTES: usize = 32 << 10;

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

/// Strips per parallel task of [`sum_selected`].
const STRIPS_PER_TASK: usize = 4;

/// Lists of indices, one per output row: list `r` is `idx[offsets[r]..offsets[r + 1]]`.
/// Reused across calls (no allocation once warm).
#[derive(Debug, Clone, Default)]
pub struct IndexLists {
    offsets: Vec<usize>,
    idx: Vec<u32>,
    /// One more than the largest index a list may hold (the rows of the matching [`Packed`]).
    bound: usize,
    /// Per list: whether it lists the zeros of its row (the sum is then the column totals
    /// minus the sum of the listed rows); empty when no list is complemented.
    complement: Vec<bool>,
    /// [`IndexLists::columns_of`]'s scratch: the ones by row, and the next free slot of
    /// each column's list.
    row_offsets: Vec<usize>,
    by_row: Vec<u32>,
    next: Vec<usize>,
}

impl IndexLists {
    /// Number of lists.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no lists.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// List `r`.
    pub fn get(&self, r: usize) -> &[u32] {
        &self.idx[self.offsets[r]..self.offsets[r + 1]]
    }

    /// Entries listed over all lists (the ones, or the zeros of complemented rows).
    pub fn listed(&self) -> usize {
        self.idx.len()
    }

    /// Whether any list holds the zeros of its row.
    pub fn has_complements(&self) -> bool {
        !self.complement.is_empty()
    }

    /// Whether list `r` holds the zeros of its row instead of the ones
    /// ([`IndexLists::rows_or_complements_of`]).
    pub fn is_complement(&self, r: usize) -> bool {
        self.complement.get(r).copied().unwrap_or(false)
    }

    /// For each row of the row-major `rows × k` matrix `a`, the columns holding a one. Returns
    /// the density of ones when every entry is exactly 0 or 1 and the density is at most
    /// `max_density`; `None` otherwise (the lists are then unspecified). Stops scanning as soon
    /// as the answer is `None`.
    pub fn rows_of(&mut self, a: &[f32], k: usize, max_density: f64) -> Option<f64> {
        self.complement.clear();
        let density = scan_rows(&[a], k, max_density, &mut self.offsets, &mut self.idx)?;
        self.bound = k;
        Some(density)
    }

    /// As [`IndexLists::rows_of`], except that a row with more ones than zeros is listed by
    /// its zeros ([`IndexLists::is_complement`]): [`sum_selected`] then gives the column
    /// totals of the packed matrix minus the sum of the rows listed, so a product never sums
    /// more than half of the rows. The density returned and checked is that of the entries
    /// listed (at most 0.5).
    pub fn rows_or_complements_of(&mut self, a: &[f32], k: usize, max_density: f64) -> Option<f64> {
        self.offsets.clear();
        self.idx.clear();
        self.complement.clear();
        if k == 0 || a.is_empty() || !a.len().is_multiple_of(k) {
            return None;
        }
        let budget = (max_density * a.len() as f64).floor() as usize;
        self.idx.reserve(budget + k);
        self.offsets.reserve(a.len() / k + 1);
        self.offsets.push(0);
        for row in a.chunks_exact(k) {
            let start = self.idx.len();
            if !push_ones(row, &mut self.idx) {
                return None;
            }
            let flip = 2 * (self.idx.len() - start) > k;
            if flip {
                self.idx.truncate(start);
                push_zeros(row, &mut self.idx);
            }
            self.complement.push(flip);
            if self.idx.len() > budget {
                return None;
            }
            self.offsets.push(self.idx.len());
        }
        if !self.complement.contains(&true) {
            self.complement.clear();
        }
        self.bound = k;
        Some(self.idx.len() as f64 / a.len() as f64)
    }

    /// For each column of the matrix that stacks `parts` vertically (each row-major with rows
    /// of `k`), the stacked rows holding a one, in increasing order. Density rule as
    /// [`IndexLists::rows_of`].
    pub fn columns_of(&mut self, parts: &[&[f32]], k: usize, max_density: f64) -> Option<f64> {
        let total = stacked_entries(parts, k)?;
        let ones = self.columns_in(parts, k, 0..k, budget(max_density, total))?;
        Some(ones as f64 / total as f64)
    }

    /// The lists of [`IndexLists::columns_of`] for the columns `cols` alone (list `j` for
    /// column `cols.start + j`): the number of ones listed, or `None` when an entry of those
    /// columns is neither 0 nor 1 or their ones exceed `budget`.
    fn columns_in(
        &mut self,
        parts: &[&[f32]],
        k: usize,
        cols: std::ops::Range<usize>,
        budget: usize,
    ) -> Option<usize> {
        // the ones by row, then a counting sort of them by column
        let width = cols.len();
        scan_rows_in(
            parts,
            k,
            cols,
            budget,
            &mut self.row_offsets,
            &mut self.by_row,
        )?;
        // (the scratch taken out while the lists are written)
        let (offsets, by_row) = (
            std::mem::take(&mut self.row_offsets),
            std::mem::take(&mut self.by_row),
        );
        let rows = offsets.windows(2).map(|w| &by_row[w[0]..w[1]]);
        self.sort_by_column(width, rows, by_row.len());
        let ones = by_row.len();
        (self.row_offsets, self.by_row) = (offsets, by_row);
        Some(ones)
    }
}

impl IndexLists {
    /// The lists of [`IndexLists::columns_of`] from the rows' own lists: for each of the `k`
    /// columns of the matrix that stacks the rows listed by `parts` (each part's lists in
    /// order, every list the ones of a row of `k` columns), the stacked rows holding a one, in
    /// increasing order; the density rule as [`IndexLists::columns_of`]. `None` also when a
    /// part lists the zeros of a row ([`IndexLists::is_complement`]) or was not built for
    /// rows of `k` columns: the caller then scans the matrix. A counting sort of the ones
    /// alone: a training step that listed its states' rows for the sampling gets the
    /// statistics' column lists without a second scan of every entry (issue 19).
    pub fn columns_of_lists(
        &mut self,
        parts: &[&IndexLists],
        k: usize,
        max_density: f64,
    ) -> Option<f64> {
        // (a part without lists may be of a block without rows: its width is not set)
        if parts
            .iter()
            .any(|p| !p.is_empty() && (p.bound != k || p.has_complements()))
        {
            return None;
        }
        let rows: usize = parts.iter().map(|p| p.len()).sum();
        let ones: usize = parts.iter().map(|p| p.listed()).sum();
        let total = rows * k;
        if total == 0 || ones > budget(max_density, total) {
            return None;
        }
        let rows = parts.iter().flat_map(|p| (0..p.len()).map(|r| p.get(r)));
        self.sort_by_column(k, rows, ones);
        Some(ones as f64 / total as f64)
    }

    /// Sets these lists to the columns' lists of the rows given as lists of their ones'
    /// columns (`entries` in all, every column below `k`): list `c` holds, in increasing
    /// order, the rows whose list holds `c`. A counting sort: the entries counted per column,
    /// then placed in row order.
    fn sort_by_column<'r>(
        &mut self,
        k: usize,
        rows: impl Iterator<Item = &'r [u32]> + Clone,
        entries: usize,
    ) {
        self.complement.clear();
        self.offsets.clear();
        self.offsets.resize(k + 1, 0);
        for &c in rows.clone().flatten() {
            self.offsets[c as usize + 1] += 1;
        }
        for i in 0..k {
            self.offsets[i + 1] += self.offsets[i];
        }
        self.idx.clear();
        self.idx.resize(entries, 0);
        self.next.clear();
        self.next.extend_from_slice(&self.offsets[..k]);
        let mut n = 0;
        for cols in rows {
            for &c in cols {
                self.idx[self.next[c as usize]] = n as u32;
                self.next[c as usize] += 1;
            }
            n += 1;
        }
        self.bound = n;
    }
}

/// [`IndexLists::columns_of`] split into `lists.len()` ranges of columns built in parallel:
/// `lists[t]` holds the lists of the columns [`column_range`]`(k, t, lists.len())`. The
/// lists, the density and the answer are those of one call (the ones are counted over all
/// ranges before the density rule is applied). The serial counting sort of one call left the
/// second thread idle for about 100 µs of every PCD-1 MNIST update (issue 19).
pub fn columns_of_split(
    lists: &mut [IndexLists],
    parts: &[&[f32]],
    k: usize,
    max_density: f64,
) -> Option<f64> {
    let total = stacked_entries(parts, k)?;
    let budget = budget(max_density, total);
    let n = lists.len();
    if let [only] = lists {
        let ones = only.columns_in(parts, k, 0..k, budget)?;
        return Some(ones as f64 / total as f64);
    }
    // the ones of every range, summed (no vector of counts per update)
    let ones = lists
        .par_iter_mut()
        .enumerate()
        .map(|(t, l)| l.columns_in(parts, k, column_range(k, t, n), budget))
        .try_reduce(|| 0, |a, b| Some(a + b))?;
    (ones <= budget).then(|| ones as f64 / total as f64)
}

/// Columns `k·t/n..k·(t+1)/n`: range `t` of `n` near-equal ranges of `k` columns.
pub fn column_range(k: usize, t: usize, n: usize) -> std::ops::Range<usize> {
    k * t / n..k * (t + 1) / n
}

/// The entries of the matrix stacking `parts` (rows of `k`); `None` when there are none or a
/// part is not whole rows.
fn stacked_entries(parts: &[&[f32]], k: usize) -> Option<usize> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    (k > 0 && total > 0 && parts.iter().all(|p| p.len() % k == 0)).then_some(total)
}

/// The most ones a sparse product may list: `max_density` of `total` entries.
fn budget(max_density: f64, total: usize) -> usize {
    (max_density * total as f64).floor() as usize
}

/// Lists the ones of each row of the matrix stacking `parts` (rows of `k`) into `offsets` /
/// `idx`; `None` when an entry is neither 0 nor 1 or the ones exceed `max_density` of all
/// entries (checked per row, so a dense matrix is rejected early).
fn scan_rows(
    parts: &[&[f32]],
    k: usize,
    max_density: f64,
    offsets: &mut Vec<usize>,
    idx: &mut Vec<u32>,
) -> Option<f64> {
    offsets.clear();
    idx.clear();
    let total = stacked_entries(parts, k)?;
    scan_rows_in(parts, k, 0..k, budget(max_density, total), offsets, idx)?;
    Some(idx.len() as f64 / total as f64)
}

/// [`scan_rows`] of the columns `cols` of every row (the indices relative to `cols.start`),
/// `None` past `budget` ones.
fn scan_rows_in(
    parts: &[&[f32]],
    k: usize,
    cols: std::ops::Range<usize>,
    budget: usize,
    offsets: &mut Vec<usize>,
    idx: &mut Vec<u32>,
) -> Option<()> {
    offsets.clear();
    idx.clear();
    let rows: usize = parts.iter().map(|p| p.len() / k).sum();
    // room for every one within the budget plus one whole row past it
    idx.reserve(budget.min(rows * cols.len()) + cols.len());
    offsets.reserve(rows + 1);
    offsets.push(0);
    for part in parts {
        for row in part.chunks_exact(k) {
            if !push_ones(&row[cols.clone()], idx) || idx.len() > budget {
                return None;
            }
            offsets.push(idx.len());
        }
    }
    Some(())
}

/// Appends `i` for every `row[i] == 1` to `idx`, which has room for `row.len()` more entries;
/// false when an entry is neither 0 nor 1. The AVX2 twin when the CPU has it.
fn push_ones(row: &[f32], idx: &mut Vec<u32>) -> bool {
    assert!(idx.capacity() - idx.len() >= row.len());
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has(crate::cpu::Feature::Avx2) {
        // SAFETY: AVX2 is available (checked); the capacity holds a whole row (asserted).
        return unsafe { push_ones_avx2(row, idx) };
    }
    // SAFETY: the capacity holds a whole row (asserted).
    unsafe { push_ones_with(row, idx, masks8) }
}

/// Appends `i` for every `row[i] == 0` to `idx` (a row already checked to be 0/1). The AVX2
/// twin when the CPU has it.
fn push_zeros(row: &[f32], idx: &mut Vec<u32>) {
    idx.reserve(row.len());
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has(crate::cpu::Feature::Avx2) {
        // SAFETY: AVX2 is available (checked); the capacity holds a whole row (reserved).
        unsafe { push_selected_avx2::<true>(row, idx) };
        return;
    }
    idx.extend(
        row.iter()
            .enumerate()
            .filter(|(_, &v)| v == 0.0)
            .map(|(i, _)| i as u32),
    );
}

/// For each 8-bit mask, the positions of its set bits in increasing order, padded with
/// zeros: the permutation that left-packs the lanes a mask selects.
static LEFT_PACK: [[u32; LANES]; 256] = {
    let mut t = [[0u32; LANES]; 256];
    let mut m = 0;
    while m < 256 {
        let (mut bit, mut n) = (0, 0);
        while bit < LANES {
            if m & (1 << bit) != 0 {
                t[m][n] = bit as u32;
                n += 1;
            }
            bit += 1;
        }
        m += 1;
    }
    t
};

/// [`push_ones_with`] without a branch per one: for each 8 entries, the indices of the ones
/// are left-packed by one table lookup and stored as a whole register (8 entries written,
/// the count of ones kept). The loop over the mask's bits mispredicted on every row of
/// random states (half ones): 9% of a one-thread PCD-1 MNIST epoch (issue 19).
///
/// # Safety
/// The CPU has AVX2; `idx` has room for `row.len()` more entries (each store of 8 ends
/// within the room of the entries scanned so far).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn push_ones_avx2(row: &[f32], idx: &mut Vec<u32>) -> bool {
    push_selected_avx2::<false>(row, idx)
}

/// The indices of the ones (`ZEROS = false`) or of the zeros (`ZEROS = true`) of `row`
/// appended to `idx` by left-packing; false when an entry is neither 0 nor 1.
///
/// # Safety
/// As [`push_ones_avx2`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn push_selected_avx2<const ZEROS: bool>(row: &[f32], idx: &mut Vec<u32>) -> bool {
    push_selected_with(
        row,
        idx,
        ZEROS,
        |ch| masks8_avx2(ch),
        |mask, at, dst| left_pack8_avx2(mask, at, dst),
    )
}

/// Writes the 8 indices `at + lane` of the lanes `mask` selects, left-packed, as one
/// register at `dst` (8 entries written); returns how many are kept (the mask's ones).
///
/// # Safety
/// The CPU has AVX2; `dst` has room for 8 entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn left_pack8_avx2(mask: u32, at: u32, dst: *mut u32) -> usize {
    use std::arch::x86_64::*;
    let lanes = _mm256_loadu_si256(LEFT_PACK[mask as usize].as_ptr().cast());
    let ids = _mm256_add_epi32(lanes, _mm256_set1_epi32(at as i32));
    _mm256_storeu_si256(dst.cast(), ids);
    mask.count_ones() as usize
}

/// Appends the indices of the ones (of the zeros, with `zeros`) of `row` to `idx`, 8 entries
/// at a time: `masks` gives each 8 entries' mask of ones and a nonzero value when one is
/// neither 0 nor 1; `emit` writes the selected lanes' indices at the end of the list (it
/// may write up to 8 entries, the room of the entries scanned) and returns how many it kept.
/// False when an entry is neither 0 nor 1.
///
/// # Safety
/// `idx` has room for `row.len()` more entries.
#[inline(always)]
unsafe fn push_selected_with(
    row: &[f32],
    idx: &mut Vec<u32>,
    zeros: bool,
    masks: impl Fn(&[f32]) -> (u32, u32),
    emit: impl Fn(u32, u32, *mut u32) -> usize,
) -> bool {
    let mut len = idx.len();
    let out = idx.as_mut_ptr();
    let mut bad = 0u32;
    let mut chunks = row.chunks_exact(LANES);
    let mut at = 0u32;
    for ch in &mut chunks {
        let (ones, b) = masks(ch);
        bad |= b;
        let mask = if zeros { !ones & 0xff } else { ones };
        // `len` ≤ old length + `at`: 8 entries from it stay within the room of `at + 8`
        len += emit(mask, at, out.add(len));
        at += LANES as u32;
    }
    let (len, tail_bad) = push_tail(chunks.remainder(), zeros, out, len, at);
    // the entries up to `len` were written above
    idx.set_len(len);
    (bad | tail_bad) == 0
}

/// The last entries of a row (fewer than 8, the first at column `at`) one by one: each one
/// (each zero, with `zeros`) written at `out[len]`, `len` advanced. Returns the new `len`
/// and a nonzero value when an entry is neither 0 nor 1.
///
/// # Safety
/// `out` has room for `rest.len()` more entries from `len`.
#[inline(always)]
unsafe fn push_tail(
    rest: &[f32],
    zeros: bool,
    out: *mut u32,
    mut len: usize,
    mut at: u32,
) -> (usize, u32) {
    let mut bad = 0u32;
    for &v in rest {
        if (v != 0.0) != zeros {
            out.add(len).write(at);
            len += 1;
        }
        bad |= u32::from(v != 0.0 && v != 1.0);
        at += 1;
    }
    (len, bad)
}

/// [`push_ones`] with a given 8-entry mask function, writing the selected indices one by
/// one (the portable twin of the left-pack).
///
/// # Safety
/// `idx` has room for `row.len()` more entries.
#[inline(always)]
unsafe fn push_ones_with(
    row: &[f32],
    idx: &mut Vec<u32>,
    masks: impl Fn(&[f32]) -> (u32, u32),
) -> bool {
    push_selected_with(row, idx, false, masks, |m, at, dst| emit_scalar(m, at, dst))
}

/// Writes the indices `at + lane` of the lanes `mask` selects at `dst`, one by one (the
/// portable twin of [`left_pack8_avx2`]); returns how many.
///
/// # Safety
/// `dst` has room for the mask's ones.
#[inline(always)]
unsafe fn emit_scalar(mut mask: u32, at: u32, dst: *mut u32) -> usize {
    let mut n = 0;
    while mask != 0 {
        dst.add(n).write(at + mask.trailing_zeros());
        n += 1;
        mask &= mask - 1;
    }
    n
}

/// For 8 entries: the bit mask of the nonzero ones, and a nonzero value when any entry is
/// neither 0 nor 1.
#[inline(always)]
fn masks8(ch: &[f32]) -> (u32, u32) {
    let mut mask = 0u32;
    let mut bad = 0u32;
    for (l, &v) in ch.iter().enumerate() {
        mask |= u32::from(v != 0.0) << l;
        bad |= u32::from(v != 0.0 && v != 1.0);
    }
    (mask, bad)
}

/// [`masks8`] by two AVX comparisons and two movemasks.
///
/// # Safety
/// The CPU has AVX2; `ch` holds at least 8 floats.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn masks8_avx2(ch: &[f32]) -> (u32, u32) {
    use std::arch::x86_64::*;
    debug_assert!(ch.len() >= LANES);
    let v = _mm256_loadu_ps(ch.as_ptr());
    let nonzero = _mm256_cmp_ps::<_CMP_NEQ_UQ>(v, _mm256_setzero_ps());
    let not_one = _mm256_cmp_ps::<_CMP_NEQ_UQ>(v, _mm256_set1_ps(1.0));
    let bad = _mm256_and_ps(nonzero, not_one);
    (
        _mm256_movemask_ps(nonzero) as u32,
        _mm256_movemask_ps(bad) as u32,
    )
}

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
    /// partial sums, as [`sum_selected`] sums a list of every row.
    totals: OnceLock<Vec<f32>>,
    rows: usize,
    cols: usize,
    width: usize,
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

    fn strips(&self) -> usize {
        self.cols.div_ceil(self.width)
    }

    fn strip(&self, s: usize) -> &[f32] {
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
    fn totals(&self) -> &[f32] {
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

/// `out ← Σ_{i ∈ lists[r]} row i of packed` for every list `r` (for a complemented list, the
/// column totals minus that sum): `out` is row-major `lists.len() × packed.cols()`. Parallel
/// over groups of strips; each output element sums its terms in list order in four
/// interleaved partial sums (term `t` goes to sum `t mod 4`, a remainder of fewer than four to
/// sum 0), added as `(s₀ + s₁) + (s₂ + s₃)`: the same bits for any thread count, any strip
/// width, and for the AVX2 kernels and their portable twin.
///
/// # Panics
/// When `out` is too short or the lists index past the packed rows.
pub fn sum_selected(lists: &IndexLists, packed: &Packed, out: &mut [f32]) {
    let Some(totals) = checked_totals(lists, packed, out) else {
        return;
    };
    let ptr = out.as_mut_ptr() as usize;
    let strips = packed.strips();
    (0..strips.div_ceil(STRIPS_PER_TASK))
        .into_par_iter()
        .for_each(|t| {
            let range = t * STRIPS_PER_TASK..strips.min((t + 1) * STRIPS_PER_TASK);
            // SAFETY: `out` holds `m × n` entries (asserted) and is borrowed mutably for the
            // whole call; tasks write disjoint column strips; every list index is below the
            // packed rows (asserted), so every packed read is in bounds; `totals` covers
            // every strip when a list is complemented.
            unsafe { sum_strips(lists, packed, totals, ptr as *mut f32, range) };
        });
}

/// The checks of [`sum_selected`] (panicking on a short `out` or lists past the packed
/// rows) and the column totals its complemented lists need (empty when none is); `None`
/// when there is nothing to sum.
fn checked_totals<'p>(lists: &IndexLists, packed: &'p Packed, out: &[f32]) -> Option<&'p [f32]> {
    let (m, n) = (lists.len(), packed.cols());
    assert!(out.len() >= m * n);
    // lists are built with every index below `bound` (`rows_of`, `columns_of`)
    assert!(
        lists.bound <= packed.rows(),
        "index lists exceed the packed rows"
    );
    if m == 0 || n == 0 {
        return None;
    }
    Some(if lists.complement.is_empty() {
        &[]
    } else {
        packed.totals()
    })
}

/// [`sum_selected`] on the calling thread alone, every strip in turn: the same bits (each
/// output element sums the same terms in the same order). For callers that split the rows of
/// a product across threads themselves (a whole AIS step per block of chains: split by
/// strips, [`sum_selected_by_strips`], its two more parallel regions per step cost more than
/// they balanced, 8.7-9.4 s against 8.2 s for 100 × 14,500 MNIST steps, issue 19); the column
/// totals of complemented lists should be ready ([`Packed::prepare_totals`]).
///
/// # Panics
/// As [`sum_selected`].
pub fn sum_selected_serial(lists: &IndexLists, packed: &Packed, out: &mut [f32]) {
    let Some(totals) = checked_totals(lists, packed, out) else {
        return;
    };
    // SAFETY: `out` holds `m × n` entries (asserted) and is borrowed mutably; every list
    // index is below the packed rows (asserted); `totals` covers every strip when a list is
    // complemented.
    unsafe { sum_strips(lists, packed, totals, out.as_mut_ptr(), 0..packed.strips()) };
}

/// Tasks per thread of [`sum_selected_by_strips`]: a thread that finishes its share first
/// takes over part of the other's.
const TASKS_PER_THREAD: usize = 4;

/// Several products with one packed matrix, `out_k ← Σ_{i ∈ lists_k[r]} row i of packed` for
/// each `(lists_k, out_k)` (as [`sum_selected`] of each), in one parallel pass split by
/// strips: each task takes a contiguous range of strips for every product, strip by strip
/// (each strip loaded into L1 once for all of them), then runs `finish(cols, segment)` on
/// each output row's `cols` (the task's strips' columns). Every strip costs the same, so the
/// tasks are balanced whatever the lists hold (split by rows, a block of denser rows kept
/// one thread busy while the other waited: issue 19). Each sum is the same bits as
/// [`sum_selected`]'s; with an elementwise `finish`, so is each output.
///
/// # Panics
/// As [`sum_selected`], for any product.
pub fn sum_selected_by_strips(
    products: &mut [(&IndexLists, &mut [f32])],
    packed: &Packed,
    finish: impl Fn(std::ops::Range<usize>, &mut [f32]) + Sync,
) {
    let (n, sw, strips) = (packed.cols(), packed.width, packed.strips());
    // (lists, output address, column totals) of each product with something to sum
    let jobs: Vec<(&IndexLists, usize, &[f32])> = products
        .iter_mut()
        .filter_map(|(lists, out)| {
            let totals = checked_totals(lists, packed, out)?;
            Some((&**lists, out.as_mut_ptr() as usize, totals))
        })
        .collect();
    if jobs.is_empty() {
        return;
    }
    let tasks = (TASKS_PER_THREAD * rayon::current_num_threads()).clamp(1, strips);
    let g = strips_per_pass(packed);
    (0..tasks).into_par_iter().for_each(|t| {
        let range = strips * t / tasks..strips * (t + 1) / tasks;
        for s in range.clone().step_by(g) {
            let pass = s..(s + g).min(range.end);
            for &(lists, out, totals) in &jobs {
                // SAFETY: each output holds `lists.len() × n` entries and is borrowed
                // mutably for the whole call; tasks write disjoint column strips; every list
                // index is below the packed rows and the totals cover every strip when a
                // list is complemented (`checked_totals`)
                unsafe { sum_strips(lists, packed, totals, out as *mut f32, pass.clone()) };
            }
        }
        let cols = range.start * sw..(range.end * sw).min(n);
        for &(lists, out, _) in &jobs {
            for r in 0..lists.len() {
                // SAFETY: row `r`'s `cols` lie inside the output (above), written by this
                // task alone
                let seg = unsafe {
                    std::slice::from_raw_parts_mut(
                        (out as *mut f32).add(r * n + cols.start),
                        cols.len(),
                    )
                };
                finish(cols.clone(), seg);
            }
        }
    });
}

/// The row-sum kernels, each the same bits ([`sum_strips_by`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    /// [`sum_strips_portable`].
    Portable,
    /// [`sum_strips_avx2`] and [`sum_strip_pair_avx2`].
    Avx2,
    /// [`sum_pass_avx512`] (16-column strips only).
    Avx512,
}

impl Kernel {
    /// Whether this CPU runs the kernel for strips of `width` columns.
    fn runs(self, width: usize) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => crate::cpu::has(crate::cpu::Feature::Avx2),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => width == STRIP && crate::cpu::has(crate::cpu::Feature::Avx512f),
            #[cfg(not(target_arch = "x86_64"))]
            _ => {
                let _ = width;
                false
            }
        }
    }

    /// The fastest kernel this CPU runs for strips of `width` columns: AVX-512 for 16-column
    /// strips (a strip's row in one register: one load and one addition per index instead of
    /// two), else AVX2, else portable.
    fn best(width: usize) -> Kernel {
        [Kernel::Avx512, Kernel::Avx2]
            .into_iter()
            .find(|k| k.runs(width))
            .unwrap_or(Kernel::Portable)
    }
}

/// [`sum_strips_by`] with the fastest kernel this CPU runs ([`Kernel::best`]).
///
/// # Safety
/// As [`sum_strips_portable`].
unsafe fn sum_strips(
    lists: &IndexLists,
    packed: &Packed,
    totals: &[f32],
    out: *mut f32,
    strips: std::ops::Range<usize>,
) {
    let kernel = Kernel::best(packed.width);
    sum_strips_by(kernel, lists, packed, totals, out, strips)
}

/// Strips `strips` of every output row by `kernel`, two strips per pass over the lists when
/// they fit in L1 ([`pairs_fit`]).
///
/// # Safety
/// As [`sum_strips_portable`], and the CPU runs `kernel` for the packing's strip width
/// ([`Kernel::runs`]).
unsafe fn sum_strips_by(
    kernel: Kernel,
    lists: &IndexLists,
    packed: &Packed,
    totals: &[f32],
    out: *mut f32,
    strips: std::ops::Range<usize>,
) {
    #[cfg(target_arch = "x86_64")]
    if kernel != Kernel::Portable {
        if packed.width != STRIP {
            return sum_strips_avx2::<1>(lists, packed, totals, out, strips);
        }
        let mut s = strips.start;
        if pairs_fit(packed.rows) {
            while s + 1 < strips.end {
                if kernel == Kernel::Avx512 {
                    sum_pass_avx512::<2>(lists, packed, s, totals, out);
                } else {
                    sum_strip_pair_avx2(lists, packed, totals, out, s);
                }
                s += 2;
            }
        }
        if kernel == Kernel::Avx512 {
            for s in s..strips.end {
                sum_pass_avx512::<1>(lists, packed, s, totals, out);
            }
            return;
        }
        return sum_strips_avx2::<2>(lists, packed, totals, out, s..strips.end);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = kernel;
    sum_strips_portable(lists, packed, totals, out, strips)
}

/// Whether two 16-column strips of `rows` rows fit in L1 together: [`sum_strips`] then sums
/// them in one pass over the lists ([`sum_strip_pair_avx2`]).
fn pairs_fit(rows: usize) -> bool {
    2 * rows * STRIP * std::mem::size_of::<f32>() <= L1_STRIP_BYTES
}

/// Strips per pass of [`sum_selected_by_strips`]'s tasks over their products: two when
/// [`pairs_fit`].
fn strips_per_pass(packed: &Packed) -> usize {
    if packed.width == STRIP && pairs_fit(packed.rows) {
        2
    } else {
        1
    }
}

/// The portable kernel: strips `strips` of every output row.
///
/// # Safety
/// `out` points to a `lists.len() × packed.cols()` row-major matrix nobody else writes in
/// these strips' columns; every list index is below `packed.rows()`; `totals` holds
/// `packed.strips() × width` entries when a list is complemented.
unsafe fn sum_strips_portable(
    lists: &IndexLists,
    packed: &Packed,
    totals: &[f32],
    out: *mut f32,
    strips: std::ops::Range<usize>,
) {
    let (n, sw) = (packed.cols(), packed.width);
    for s in strips {
        let strip = packed.strip(s);
        let width = sw.min(n - s * sw);
        for r in 0..lists.len() {
            let mut acc = [[0f32; STRIP]; 4];
            let idx = lists.get(r);
            let mut quads = idx.chunks_exact(4);
            for q in &mut quads {
                for (a, &i) in acc.iter_mut().zip(q) {
                    for (x, &y) in a.iter_mut().zip(&strip[i as usize * sw..][..sw]) {
                        *x += y;
                    }
                }
            }
            for &i in quads.remainder() {
                for (x, &y) in acc[0].iter_mut().zip(&strip[i as usize * sw..][..sw]) {
                    *x += y;
                }
            }
            let dst = std::slice::from_raw_parts_mut(out.add(r * n + s * sw), width);
            let complement = lists.is_complement(r);
            for (l, d) in dst.iter_mut().enumerate() {
                let sum = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l]);
                *d = if complement {
                    totals[s * sw + l] - sum
                } else {
                    sum
                };
            }
        }
    }
}

/// The AVX2 kernel for strips of `R` registers (`R · LANES` columns): one strip (in L1) per
/// pass over the index lists; per index, one row of the strip added into `R` registers, four
/// partial sums of each.
///
/// # Safety
/// As [`sum_strips_portable`], the strip width is `R · LANES`, and the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sum_strips_avx2<const R: usize>(
    lists: &IndexLists,
    packed: &Packed,
    totals: &[f32],
    out: *mut f32,
    strips: std::ops::Range<usize>,
) {
    use std::arch::x86_64::*;
    let (n, sw) = (packed.cols(), R * LANES);
    debug_assert_eq!(sw, packed.width);
    for s in strips {
        let p = packed.strip(s).as_ptr();
        let width = sw.min(n - s * sw);
        for r in 0..lists.len() {
            let idx = lists.get(r);
            // partial sums k = 0..4 of the low (`lo`) and, for R = 2, high (`hi`) 8 columns
            let mut lo = [_mm256_setzero_ps(); 4];
            let mut hi = [_mm256_setzero_ps(); 4];
            let mut quads = idx.chunks_exact(4);
            for q in &mut quads {
                for k in 0..4 {
                    let row = p.add(*q.get_unchecked(k) as usize * sw);
                    lo[k] = _mm256_add_ps(lo[k], _mm256_loadu_ps(row));
                    if R == 2 {
                        hi[k] = _mm256_add_ps(hi[k], _mm256_loadu_ps(row.add(LANES)));
                    }
                }
            }
            for &i in quads.remainder() {
                let row = p.add(i as usize * sw);
                lo[0] = _mm256_add_ps(lo[0], _mm256_loadu_ps(row));
                if R == 2 {
                    hi[0] = _mm256_add_ps(hi[0], _mm256_loadu_ps(row.add(LANES)));
                }
            }
            // (no closure here: closures do not inherit the AVX2 target feature)
            let mut sum_lo =
                _mm256_add_ps(_mm256_add_ps(lo[0], lo[1]), _mm256_add_ps(lo[2], lo[3]));
            let mut sum_hi =
                _mm256_add_ps(_mm256_add_ps(hi[0], hi[1]), _mm256_add_ps(hi[2], hi[3]));
            if lists.is_complement(r) {
                let total = totals.as_ptr().add(s * sw);
                sum_lo = _mm256_sub_ps(_mm256_loadu_ps(total), sum_lo);
                if R == 2 {
                    sum_hi = _mm256_sub_ps(_mm256_loadu_ps(total.add(LANES)), sum_hi);
                }
            }
            let dst = out.add(r * n + s * sw);
            if width == sw {
                _mm256_storeu_ps(dst, sum_lo);
                if R == 2 {
                    _mm256_storeu_ps(dst.add(LANES), sum_hi);
                }
            } else {
                let mut tmp = [0f32; STRIP];
                _mm256_storeu_ps(tmp.as_mut_ptr(), sum_lo);
                _mm256_storeu_ps(tmp.as_mut_ptr().add(LANES), sum_hi);
                std::ptr::copy_nonoverlapping(tmp.as_ptr(), dst, width);
            }
        }
    }
}

/// Strips `s` and `s + 1` (16 columns each, both in L1) of every output row in one pass over
/// the index lists: one index load feeds four 8-wide additions instead of two (the lists of
/// the gradient statistics are short, about 26 entries per visible unit on MNIST, so the
/// per-list work counts). Each column's terms go to the same four partial sums in the same
/// order as in [`sum_strips_avx2`], added the same way: the same bits.
///
/// # Safety
/// As [`sum_strips_portable`] for both strips, `s + 1 < packed.strips()`, the strip width
/// is [`STRIP`], and the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sum_strip_pair_avx2(
    lists: &IndexLists,
    packed: &Packed,
    totals: &[f32],
    out: *mut f32,
    s: usize,
) {
    use std::arch::x86_64::*;
    let (n, sw) = (packed.cols(), STRIP);
    debug_assert!(packed.width == STRIP && s + 1 < packed.strips());
    let (p0, p1) = (packed.strip(s).as_ptr(), packed.strip(s + 1).as_ptr());
    let width1 = sw.min(n - (s + 1) * sw);
    for r in 0..lists.len() {
        let idx = lists.get(r);
        // acc[k][g]: partial sum k of the 8 columns g (strip s low, high; strip s + 1 low,
        // high)
        let mut acc = [[_mm256_setzero_ps(); 4]; 4];
        let add_row = |a: &mut [__m256; 4], i: u32| {
            let i = i as usize * sw;
            a[0] = _mm256_add_ps(a[0], _mm256_loadu_ps(p0.add(i)));
            a[1] = _mm256_add_ps(a[1], _mm256_loadu_ps(p0.add(i + LANES)));
            a[2] = _mm256_add_ps(a[2], _mm256_loadu_ps(p1.add(i)));
            a[3] = _mm256_add_ps(a[3], _mm256_loadu_ps(p1.add(i + LANES)));
        };
        let mut quads = idx.chunks_exact(4);
        for q in &mut quads {
            for (a, &i) in acc.iter_mut().zip(q) {
                add_row(a, i);
            }
        }
        for &i in quads.remainder() {
            add_row(&mut acc[0], i);
        }
        let complement = lists.is_complement(r);
        let mut sums = [_mm256_setzero_ps(); 4];
        for (g, sum) in sums.iter_mut().enumerate() {
            let (a0, a1) = (
                _mm256_add_ps(acc[0][g], acc[1][g]),
                _mm256_add_ps(acc[2][g], acc[3][g]),
            );
            *sum = _mm256_add_ps(a0, a1);
            if complement {
                // the totals of strips s and s + 1 are contiguous
                let total = _mm256_loadu_ps(totals.as_ptr().add(s * sw + g * LANES));
                *sum = _mm256_sub_ps(total, *sum);
            }
        }
        let dst = out.add(r * n + s * sw);
        _mm256_storeu_ps(dst, sums[0]);
        _mm256_storeu_ps(dst.add(LANES), sums[1]);
        if width1 == sw {
            _mm256_storeu_ps(dst.add(sw), sums[2]);
            _mm256_storeu_ps(dst.add(sw + LANES), sums[3]);
        } else {
            let mut tmp = [0f32; STRIP];
            _mm256_storeu_ps(tmp.as_mut_ptr(), sums[2]);
            _mm256_storeu_ps(tmp.as_mut_ptr().add(LANES), sums[3]);
            std::ptr::copy_nonoverlapping(tmp.as_ptr(), dst.add(sw), width1);
        }
    }
}

/// Strips `first..first + G` (`G` = 1 or 2, 16 columns each, in L1 together when 2) of
/// every output row in one pass over the index lists, by AVX-512: a strip's row is one
/// 16-wide register, so each index costs one load and one addition per strip instead of the
/// AVX2 kernels' two of each. Lane by lane the same four partial sums, added the same way,
/// as [`sum_strips_avx2`] and [`sum_strip_pair_avx2`]: the same bits.
///
/// # Safety
/// As [`sum_strips_portable`] for strips `first..first + G` (all below `packed.strips()`),
/// the strip width is [`STRIP`], and the CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sum_pass_avx512<const G: usize>(
    lists: &IndexLists,
    packed: &Packed,
    first: usize,
    totals: &[f32],
    out: *mut f32,
) {
    use std::arch::x86_64::*;
    debug_assert!(packed.width == STRIP && first + G <= packed.strips());
    let n = packed.cols();
    let strips: [*const f32; G] = std::array::from_fn(|g| packed.strip(first + g).as_ptr());
    for r in 0..lists.len() {
        // acc[g][k]: partial sum k of strip first + g
        let mut acc = [[_mm512_setzero_ps(); 4]; G];
        let mut quads = lists.get(r).chunks_exact(4);
        for q in &mut quads {
            for (k, &i) in q.iter().enumerate() {
                for (a, p) in acc.iter_mut().zip(strips) {
                    a[k] = _mm512_add_ps(a[k], _mm512_loadu_ps(p.add(i as usize * STRIP)));
                }
            }
        }
        for &i in quads.remainder() {
            for (a, p) in acc.iter_mut().zip(strips) {
                a[0] = _mm512_add_ps(a[0], _mm512_loadu_ps(p.add(i as usize * STRIP)));
            }
        }
        for (g, a) in acc.iter().enumerate() {
            let j = (first + g) * STRIP;
            let mut sum = _mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3]));
            if lists.is_complement(r) {
                sum = _mm512_sub_ps(_mm512_loadu_ps(totals.as_ptr().add(j)), sum);
            }
            store_strip_row_avx512(out.add(r * n + j), sum, STRIP.min(n - j));
        }
    }
}

/// Stores the first `width` (at most 16) lanes of `x` at `dst`.
///
/// # Safety
/// `dst` has room for `width` floats; the CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn store_strip_row_avx512(dst: *mut f32, x: std::arch::x86_64::__m512, width: usize) {
    use std::arch::x86_64::*;
    if width == STRIP {
        _mm512_storeu_ps(dst, x);
    } else {
        _mm512_mask_storeu_ps(dst, ((1u32 << width) - 1) as u16, x);
    }
}

/// The fraction of ones of `x` when every entry is exactly 0 or 1; `None` otherwise (and for
/// an empty slice).
pub fn binary_density(x: &[f32]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    let mut ones = 0usize;
    let mut bad = false;
    for &v in x {
        ones += usize::from(v == 1.0);
        bad |= v != 0.0 && v != 1.0;
    }
    (!bad).then(|| ones as f64 / x.len() as f64)
}

/// Scratch reused by the sparse products of one thread: index lists and a packed matrix.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Index lists.
    pub lists: IndexLists,
    /// Index lists by ranges of columns ([`columns_of_split`]).
    pub column_lists: Vec<IndexLists>,
    /// A packed matrix.
    pub packed: Packed,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Box<Scratch>>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with this thread's [`Scratch`] (taken out while `f` runs, so a nested call on
/// the same thread gets a fresh one instead of a conflicting borrow).
pub fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    let mut s = SCRATCH.with(|c| c.take()).unwrap_or_default();
    let out = f(&mut s);
    SCRATCH.with(|c| c.set(Some(s)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{sgemm, Op};
    use crate::rng::rng_from_seed;
    use rand::Rng;

    fn random(len: usize, density: f32, seed: u64) -> Vec<f32> {
        let mut rng = rng_from_seed(seed);
        (0..len)
            .map(|_| f32::from(u8::from(rng.random::<f32>() < density)))
            .collect()
    }

    fn close(got: &[f32], want: &[f32], what: &str) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            // f32 sums of up to a few hundred terms: a tolerance relative to the magnitude
            assert!(
                (g - w).abs() < 1e-4 * w.abs().max(1.0),
                "{what}: {g} vs {w}"
            );
        }
    }

    #[test]
    fn density_and_lists() {
        assert_eq!(binary_density(&[0.0, 1.0, 1.0, 0.0]), Some(0.5));
        assert_eq!(binary_density(&[0.0, 0.5]), None);
        assert_eq!(binary_density(&[]), None);
        let mut l = IndexLists::default();
        let a = [0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        assert_eq!(l.rows_of(&a, 3, 0.5), Some(3.0 / 9.0));
        assert_eq!(
            (l.len(), l.get(0), l.get(1), l.get(2)),
            (3, &[1][..], &[0, 1][..], &[][..])
        );
        assert_eq!(l.rows_of(&a, 3, 0.2), None);
        assert_eq!(l.rows_of(&[0.0, 0.5], 2, 1.0), None);
        assert_eq!(l.columns_of(&[&a[..6], &a[6..]], 3, 0.5), Some(3.0 / 9.0));
        assert_eq!(
            (l.get(0), l.get(1), l.get(2)),
            (&[1][..], &[0, 1][..], &[][..])
        );
        assert_eq!(l.columns_of(&[&[1.0, 2.0]], 2, 1.0), None);
        // a long row: ones past the first chunk of LANES, in the remainder too
        let mut row = vec![0f32; 19];
        for i in [0, 7, 8, 15, 16, 18] {
            row[i] = 1.0;
        }
        l.rows_of(&row, 19, 1.0).unwrap();
        assert_eq!(l.get(0), &[0, 7, 8, 15, 16, 18]);
    }

    /// The column lists built by ranges in parallel equal one `columns_of`, list for list,
    /// for 1 to 5 ranges (ranges of one column, more ranges than threads), and give its
    /// answer at the density rule's edge (ones just within and just past the budget, spread
    /// over several ranges) and on a non-binary entry in any range.
    #[test]
    fn column_lists_by_ranges_equal_one_pass() {
        let k = 13;
        let parts = [random(7 * k, 0.3, 21), random(4 * k, 0.6, 22)];
        let parts: Vec<&[f32]> = parts.iter().map(|p| &p[..]).collect();
        let ones = parts.iter().flat_map(|p| p.iter()).filter(|&&x| x == 1.0);
        let total = 11 * k;
        // the budget exactly at the ones, then one short
        let at = ones.count() as f64 / total as f64;
        let short = at - 0.5 / total as f64;
        let mut whole = IndexLists::default();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                for n in 1..=5 {
                    let mut split = vec![IndexLists::default(); n];
                    for max in [1.0, at, short] {
                        let want = whole.columns_of(&parts, k, max);
                        assert_eq!(columns_of_split(&mut split, &parts, k, max), want);
                        if want.is_none() {
                            continue;
                        }
                        for (t, lists) in split.iter().enumerate() {
                            let cols = column_range(k, t, n);
                            assert_eq!(lists.len(), cols.len());
                            assert_eq!(lists.bound, whole.bound);
                            for (j, c) in cols.enumerate() {
                                assert_eq!(lists.get(j), whole.get(c), "{n} ranges, column {c}");
                            }
                        }
                    }
                    for c in [0, k / 2, k - 1] {
                        let mut bad = parts[1].to_vec();
                        bad[2 * k + c] = 0.5;
                        let bad = [parts[0], &bad[..]];
                        assert_eq!(columns_of_split(&mut split, &bad, k, 1.0), None);
                    }
                }
            });
        }
    }

    /// Column lists built from the rows' lists equal those of the scan of the stacked rows,
    /// the density rule included (at the ones, one short); a part that lists a row by its
    /// zeros, or was built for rows of another width, is refused.
    #[test]
    fn column_lists_from_row_lists_equal_the_scan() {
        let k = 37;
        let dense = [
            random(9 * k, 0.2, 31),
            random(5 * k, 0.35, 32),
            random(0, 0.1, 33),
        ];
        let dense: Vec<&[f32]> = dense.iter().map(|p| &p[..]).collect();
        let rows: Vec<IndexLists> = dense
            .iter()
            .map(|d| {
                let mut l = IndexLists::default();
                l.rows_of(d, k, 1.0);
                l
            })
            .collect();
        // the empty part is a block without rows (its width unset)
        assert_eq!((rows[2].len(), rows[2].bound), (0, 0));
        let parts: Vec<&IndexLists> = rows.iter().collect();
        let ones: usize = parts.iter().map(|p| p.listed()).sum();
        let total = 14 * k;
        let at = ones as f64 / total as f64;
        let short = at - 0.5 / total as f64;
        let (mut scan, mut by_lists) = (IndexLists::default(), IndexLists::default());
        for max in [1.0, 0.3, at, short] {
            let want = scan.columns_of(&dense, k, max);
            assert_eq!(by_lists.columns_of_lists(&parts, k, max), want, "max {max}");
            if want.is_some() {
                assert_eq!((by_lists.len(), by_lists.bound), (k, scan.bound));
                for c in 0..k {
                    assert_eq!(by_lists.get(c), scan.get(c), "column {c}");
                }
                assert!(!by_lists.has_complements());
            }
        }
        assert_eq!(by_lists.columns_of_lists(&parts, k + 1, 1.0), None);
        let mut flipped = IndexLists::default();
        let mut heavy = dense[0].to_vec();
        heavy[..k].fill(1.0);
        flipped.rows_or_complements_of(&heavy, k, 1.0).unwrap();
        assert!(flipped.has_complements());
        assert_eq!(by_lists.columns_of_lists(&[&flipped], k, 1.0), None);
    }

    /// `A·B` and `Aᵀ·P` (stacked, scaled) against the dense GEMM on odd shapes: strip tails,
    /// empty rows, lists shorter and longer than four.
    #[test]
    fn match_dense_products() {
        for (rows, k, n) in [
            (13, 37, 130),
            (1, 5, 64),
            (9, 1, 3),
            (20, 70, 65),
            (3, 9, 7),
            (5, 600, 20),
        ] {
            let a = random(rows * k, 0.2, 1);
            let b: Vec<f32> = random(k * n, 0.5, 2).iter().map(|x| x - 0.3).collect();
            let mut want = vec![0f32; rows * n];
            sgemm(Op::N, Op::N, rows, n, k, 1.0, &a, &b, 0.0, &mut want);
            let mut lists = IndexLists::default();
            let mut packed = Packed::default();
            lists.rows_of(&a, k, 1.0).unwrap();
            packed.pack(&b, k, n);
            let mut got = vec![f32::NAN; rows * n];
            sum_selected(&lists, &packed, &mut got);
            close(&got, &want, "A·B");

            // A·Bᵀ through the transposed packing (B is n × k here)
            let bt: Vec<f32> = random(n * k, 0.5, 5).iter().map(|x| x * 0.7).collect();
            sgemm(Op::N, Op::T, rows, n, k, 1.0, &a, &bt, 0.0, &mut want);
            packed.pack_transposed(&bt, n, k);
            sum_selected(&lists, &packed, &mut got);
            close(&got, &want, "A·Bᵀ");

            // rows denser than half listed by their zeros: the column totals minus their sum
            let dense_a = random(rows * k, 0.7, 8);
            sgemm(Op::N, Op::N, rows, n, k, 1.0, &dense_a, &b, 0.0, &mut want);
            lists.rows_or_complements_of(&dense_a, k, 0.5).unwrap();
            assert!(k < 4 || (0..rows).any(|r| lists.is_complement(r)));
            packed.pack(&b, k, n);
            sum_selected(&lists, &packed, &mut got);
            close(&got, &want, "A·B by complements");

            // 0.5·Aᵀ·P − 0.25·A2ᵀ·P2 by one stacked call
            let p: Vec<f32> = random(rows * n, 0.5, 3).iter().map(|x| x * 0.7).collect();
            let a2 = random(2 * k, 0.3, 6);
            let p2: Vec<f32> = random(2 * n, 0.5, 7).iter().map(|x| x - 0.1).collect();
            let mut want = vec![0f32; k * n];
            sgemm(Op::T, Op::N, k, n, rows, 0.5, &a, &p, 0.0, &mut want);
            sgemm(Op::T, Op::N, k, n, 2, -0.25, &a2, &p2, 1.0, &mut want);
            lists.columns_of(&[&a, &a2], k, 1.0).unwrap();
            packed.pack_stacked(&[(&p, 0.5), (&p2, -0.25)], n);
            let mut got = vec![f32::NAN; k * n];
            sum_selected(&lists, &packed, &mut got);
            close(&got, &want, "Aᵀ·P");
        }
    }

    /// The AVX2 and AVX-512 kernels (those this CPU runs) against their portable twins, bit
    /// for bit:
    /// 16-column strips (101 rows, and 784 rows: beyond L1) and 8-column strips (1,200
    /// rows), plain and complemented lists.
    #[test]
    fn simd_kernels_equal_portable_twins() {
        let rows = 37;
        // strips of 101, 256 rows summed in pairs (with a single strip left over at n = 40),
        // of 257 and 784 rows one at a time; 8 columns at 1,200 rows
        for (k, n) in [
            (101, 83),
            (101, 40),
            (256, 40),
            (257, 40),
            (784, 83),
            (1200, 83),
        ] {
            let a = random(rows * k, 0.3, 8);
            let b: Vec<f32> = random(k * n, 0.5, 9)
                .iter()
                .map(|x| x * 0.37 - 0.11)
                .collect();
            let mut lists = IndexLists::default();
            lists.rows_of(&a, k, 1.0).unwrap();
            let mut packed = Packed::default();
            packed.pack(&b, k, n);
            assert_eq!(packed.width, if k < 1200 { STRIP } else { LANES });
            let mut fast = vec![0f32; rows * n];
            sum_selected(&lists, &packed, &mut fast);
            let mut slow = vec![0f32; rows * n];
            let strips = 0..packed.strips();
            // SAFETY: `slow` is rows × n; the lists index below k = packed rows
            unsafe { sum_strips_portable(&lists, &packed, &[], slow.as_mut_ptr(), strips.clone()) };
            assert_eq!(fast, slow);
            // every kernel this CPU runs, not only the fastest
            let every_kernel = |lists: &IndexLists, totals: &[f32], want: &[f32]| {
                for kernel in [Kernel::Avx2, Kernel::Avx512] {
                    if kernel.runs(packed.width) {
                        let mut got = vec![0f32; rows * n];
                        let out = got.as_mut_ptr();
                        // SAFETY: as above (the totals cover every strip); the CPU runs it
                        unsafe {
                            sum_strips_by(kernel, lists, &packed, totals, out, strips.clone())
                        };
                        assert_eq!(got, want, "{kernel:?}, {k} × {n}");
                    }
                }
            };
            every_kernel(&lists, &[], &slow);
            // complemented lists (rows with 30% and 70% ones)
            let mixed: Vec<f32> = a
                .chunks_exact(k)
                .enumerate()
                .flat_map(|(r, row)| {
                    row.iter()
                        .map(move |&x| if r % 2 == 0 { x } else { 1.0 - x })
                })
                .collect();
            lists.rows_or_complements_of(&mixed, k, 1.0).unwrap();
            assert!(lists.is_complement(1) && !lists.is_complement(0));
            sum_selected(&lists, &packed, &mut fast);
            let totals = packed.totals();
            // SAFETY: as above; the totals cover every strip
            unsafe {
                sum_strips_portable(&lists, &packed, totals, slow.as_mut_ptr(), strips.clone())
            };
            assert_eq!(fast, slow);
            every_kernel(&lists, totals, &slow);
        }

        let k = 101;
        let a = random(37 * k, 0.3, 8);
        let mut row = a[..k].to_vec();
        row[17] = 0.5;
        for row in [&a[..k], &row[..]] {
            let mut want = Vec::with_capacity(k);
            let mut got = Vec::with_capacity(k);
            // SAFETY: both have room for a whole row
            let ok_want = unsafe { push_ones_with(row, &mut want, masks8) };
            let ok_got = push_ones(row, &mut got);
            assert_eq!((ok_got, got), (ok_want, want));
        }
    }

    /// The packings against their plain definitions: a transposed packing (8 × 8 register
    /// transposes where the CPU has AVX) equals the packing of the explicit transpose, and a
    /// scaled stacked packing the packing of the scaled stack, for widths of 8 and 16
    /// columns, partial last strips and columns that are not a multiple of 8.
    #[test]
    fn packings_equal_their_definitions() {
        for (rows, cols) in [
            (5, 3),
            (16, 37),
            (37, 16),
            (40, 64),
            (784, 20),
            (33, 785),
            (500, 784),
        ] {
            let b: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5 - 3.0).collect();
            let bt: Vec<f32> = (0..cols * rows)
                .map(|t| b[(t % rows) * cols + t / rows])
                .collect();
            let (mut got, mut want) = (Packed::default(), Packed::default());
            got.pack_transposed(&b, rows, cols);
            want.pack(&bt, cols, rows);
            assert_eq!(got, want, "transposed {rows} × {cols}");
            let half = rows / 2 * cols;
            got.pack_stacked(
                &[
                    (&b[..half], 1.0),
                    (&b[half..rows * cols - cols * (rows % 2)], -0.5),
                ],
                cols,
            );
            let stacked: Vec<f32> = b[..half]
                .iter()
                .copied()
                .chain(
                    b[half..rows * cols - cols * (rows % 2)]
                        .iter()
                        .map(|x| -0.5 * x),
                )
                .collect();
            want.pack(&stacked, stacked.len() / cols, cols);
            assert_eq!(got, want, "stacked {rows} × {cols}");
        }
    }

    /// The listing kernels (the AVX2 left-pack where the CPU has it) against a plain filter:
    /// every length 1-40 and 101 (whole chunks of 8 and remainders), densities from none to
    /// all ones, appended after entries already in the list.
    #[test]
    fn listed_ones_and_zeros_equal_a_plain_filter() {
        let mut seed = 20;
        for k in (1..=40).chain([101]) {
            for density in [0.0, 0.13, 0.5, 0.9, 1.0] {
                seed += 1;
                let row = random(k, density, seed);
                let plain = |one: bool| -> Vec<u32> {
                    let mut v = vec![7, 3];
                    v.extend((0..k as u32).filter(|&i| (row[i as usize] == 1.0) == one));
                    v
                };
                let mut ones = vec![7, 3];
                ones.reserve(k);
                assert!(push_ones(&row, &mut ones));
                assert_eq!(ones, plain(true), "ones, k {k}, density {density}");
                let mut zeros = vec![7, 3];
                push_zeros(&row, &mut zeros);
                assert_eq!(zeros, plain(false), "zeros, k {k}, density {density}");
            }
        }
    }

    /// A reused [`Packed`] (no clearing pass when the shape repeats) holds what a fresh one
    /// would: the padding of the last strip stays zero whatever was packed before.
    #[test]
    fn reused_packing_equals_fresh_packing() {
        let (k, n) = (37, 21);
        let b1: Vec<f32> = random(k * n, 0.5, 10).iter().map(|x| x + 1.0).collect();
        let b2: Vec<f32> = random(k * n, 0.5, 11).iter().map(|x| x - 2.0).collect();
        let mut reused = Packed::default();
        let mut fresh = Packed::default();
        reused.pack(&b1, k, n);
        reused.pack(&b2, k, n);
        fresh.pack(&b2, k, n);
        assert_eq!(reused, fresh);
        assert_eq!(reused.totals(), fresh.totals());
        // the transpose of an n × k matrix: the same packed shape (k rows of n)
        let bt: Vec<f32> = random(n * k, 0.5, 12).iter().map(|x| x * 3.0).collect();
        reused.pack_transposed(&bt, n, k);
        fresh = Packed::default();
        fresh.pack_transposed(&bt, n, k);
        assert_eq!(reused, fresh);
        // a stacked, scaled packing of another shape, then back
        reused.pack_stacked(&[(&b1[..2 * n], 0.5), (&b2[..n], -1.0)], n);
        reused.pack(&b2, k, n);
        fresh = Packed::default();
        fresh.pack(&b2, k, n);
        assert_eq!(reused, fresh);
    }

    #[test]
    fn denser_inputs_go_sparse_only_when_a_strip_fits_in_l1() {
        assert_eq!(max_density(500), SPARSE_MAX_DENSITY_L1);
        assert_eq!(max_density(784), SPARSE_MAX_DENSITY);
    }

    /// Several products by strips, with an elementwise epilogue, against one
    /// [`sum_selected`] per product followed by the epilogue on whole rows: the same bits,
    /// on 1, 2 and 3 threads, for plain and complemented lists, both strip widths (and a
    /// product without rows).
    #[test]
    fn products_by_strips_equal_one_product_at_a_time() {
        let epilogue = |bias: &[f32], cols: std::ops::Range<usize>, seg: &mut [f32]| {
            for (x, &b) in seg.iter_mut().zip(&bias[cols]) {
                *x = (*x + b).tanh();
            }
        };
        for (k, n) in [(101, 83), (600, 37), (9, 3)] {
            let b: Vec<f32> = random(k * n, 0.5, 9).iter().map(|x| x - 0.4).collect();
            let bias: Vec<f32> = random(n, 0.5, 4);
            let mut packed = Packed::default();
            packed.pack(&b, k, n);
            let mats = [(7, 0.2, 1), (0, 0.2, 2), (12, 0.8, 3), (5, 0.4, 4)];
            let lists: Vec<IndexLists> = mats
                .iter()
                .map(|&(rows, density, seed)| {
                    let mut l = IndexLists::default();
                    let x = random(rows * k, density, seed);
                    // (an empty matrix has no density: its lists are emptied all the same)
                    let listed = l.rows_or_complements_of(&x, k, 0.5);
                    assert!(rows == 0 || listed.is_some());
                    l
                })
                .collect();
            assert!(lists
                .iter()
                .any(|l| (0..l.len()).any(|r| l.is_complement(r))));
            let want: Vec<Vec<f32>> = lists
                .iter()
                .map(|l| {
                    let mut out = vec![0f32; l.len() * n];
                    sum_selected(l, &packed, &mut out);
                    out.chunks_exact_mut(n)
                        .for_each(|row| epilogue(&bias, 0..n, row));
                    out
                })
                .collect();
            for t in [1, 2, 3] {
                let got = crate::testutil::on_threads(t, || {
                    let mut outs: Vec<Vec<f32>> =
                        lists.iter().map(|l| vec![f32::NAN; l.len() * n]).collect();
                    let mut products: Vec<(&IndexLists, &mut [f32])> = lists
                        .iter()
                        .zip(outs.iter_mut().map(|o| &mut o[..]))
                        .collect();
                    sum_selected_by_strips(&mut products, &packed, |cols, seg| {
                        epilogue(&bias, cols, seg)
                    });
                    outs
                });
                for (g, w) in got.iter().zip(&want) {
                    assert!(
                        g.iter().zip(w).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{k} × {n} on {t} threads"
                    );
                }
            }
        }
    }

    #[test]
    fn same_bits_for_any_thread_count() {
        let (rows, k, n) = (100, 784, 500);
        let a = random(rows * k, 0.13, 5);
        let b: Vec<f32> = random(k * n, 0.5, 6).iter().map(|x| x - 0.5).collect();
        let run = |t: usize| {
            crate::testutil::on_threads(t, || {
                with_scratch(|s| {
                    s.lists.rows_of(&a, k, 1.0).unwrap();
                    s.packed.pack(&b, k, n);
                    let mut c = vec![0f32; rows * n];
                    sum_selected(&s.lists, &s.packed, &mut c);
                    c
                })
            })
        };
        assert_eq!(run(1), run(3));
    }
}
