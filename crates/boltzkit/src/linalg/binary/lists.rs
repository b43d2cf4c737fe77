//! The ones (or zeros) of a 0/1 matrix as index lists, by row or by column ([`IndexLists`]),
//! written by left-packing with AVX2 where the CPU has it.

use super::packing::LANES;
use rayon::prelude::*;

/// Lists of indices, one per output row: list `r` is `idx[offsets[r]..offsets[r + 1]]`.
/// Reused across calls (no allocation once warm).
#[derive(Debug, Clone, Default)]
pub struct IndexLists {
    pub(super) offsets: Vec<usize>,
    pub(super) idx: Vec<u32>,
    /// One more than the largest index a list may hold (the rows of the
    /// matching [`Packed`](super::Packed)).
    pub(super) bound: usize,
    /// Per list: whether it lists the zeros of its row (the sum is then the column totals
    /// minus the sum of the listed rows); empty when no list is complemented.
    pub(super) complement: Vec<bool>,
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
    /// its zeros ([`IndexLists::is_complement`]): [`sum_selected`](super::sum_selected) then gives the column
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
pub(super) fn budget(max_density: f64, total: usize) -> usize {
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
pub(super) fn push_ones(row: &[f32], idx: &mut Vec<u32>) -> bool {
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
pub(super) fn push_zeros(row: &[f32], idx: &mut Vec<u32>) {
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
pub(super) unsafe fn left_pack8_avx2(mask: u32, at: u32, dst: *mut u32) -> usize {
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
pub(super) unsafe fn push_selected_with(
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
pub(super) unsafe fn push_ones_with(
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
pub(super) unsafe fn emit_scalar(mut mask: u32, at: u32, dst: *mut u32) -> usize {
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
pub(super) fn masks8(ch: &[f32]) -> (u32, u32) {
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
pub(super) unsafe fn masks8_avx2(ch: &[f32]) -> (u32, u32) {
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
