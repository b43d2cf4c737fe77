//! The row sums of a product: `out ← Σ_{i ∈ list} row i` of a [`Packed`] matrix for every
//! index list ([`sum_selected`]), its kernels and their portable twin.

use super::lists::IndexLists;
use super::packing::{Packed, L1_STRIP_BYTES, LANES, STRIP};
use rayon::prelude::*;

/// Strips per parallel task of [`sum_selected`].
const STRIPS_PER_TASK: usize = 4;

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
pub(super) enum Kernel {
    /// [`sum_strips_portable`].
    Portable,
    /// [`sum_strips_avx2`] and [`sum_strip_pair_avx2`].
    Avx2,
    /// [`sum_pass_avx512`] (16-column strips only).
    Avx512,
}

impl Kernel {
    /// Whether this CPU runs the kernel for strips of `width` columns.
    pub(super) fn runs(self, width: usize) -> bool {
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
pub(super) unsafe fn sum_strips_by(
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
pub(super) unsafe fn sum_strips_portable(
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
pub(super) unsafe fn store_strip_row_avx512(
    dst: *mut f32,
    x: std::arch::x86_64::__m512,
    width: usize,
) {
    use std::arch::x86_64::*;
    if width == STRIP {
        _mm512_storeu_ps(dst, x);
    } else {
        _mm512_mask_storeu_ps(dst, ((1u32 << width) - 1) as u16, x);
    }
}
