//! Index lists that carry a product `x·B` of a 0/1 row from one state of the row to the next:
//! by the entries that changed when there are fewer of them than a list of the new state
//! would hold. A chain of AIS near `β = 1` changes about 7% of its visible and 12% of its
//! hidden units per Gibbs step, against 17% and 29% of ones (a 784 × 500 MNIST RBM, issue
//! 19), so its products cost less than half the row additions this way.

use super::lists::{masks8, push_ones, push_zeros, IndexLists};
use super::packing::{Packed, LANES, STRIP};
use super::sums::Kernel;

/// Per row, the lists that take `out_r = x_r·B` (`x_r` the row's previous 0/1 state) to the
/// product with its new state: by its changes (`out_r += Σ_{i ∈ on} B_i − Σ_{i ∈ off} B_i`,
/// [`ChangeLists::is_delta`]) when they are fewer than the entries a list of the new state
/// holds and the row has been carried by changes fewer than `max_run` times in a row, else by
/// the new state's ones or zeros as [`IndexLists::rows_or_complements_of`] lists them
/// (`out_r = Σ_{i ∈ on} B_i`, the complement rule included; `off` empty). The runs bound the
/// rounding a row's product gathers between two full sums. Reused from step to step: the
/// rows keep their runs.
#[derive(Debug, Clone, Default)]
pub struct ChangeLists {
    on: IndexLists,
    off: IndexLists,
    delta: Vec<bool>,
    /// Per row: updates by changes since its last full list.
    run: Vec<u32>,
    max_run: u32,
    binary: bool,
}

impl ChangeLists {
    /// Starts the lists of a new state, rows of `width` entries, each carried by its changes
    /// at most `max_run` times in a row (0: every row by a full list).
    pub fn begin(&mut self, width: usize, max_run: u32) {
        for l in [&mut self.on, &mut self.off] {
            l.offsets.clear();
            l.offsets.push(0);
            l.idx.clear();
            l.complement.clear();
            l.bound = width;
        }
        self.delta.clear();
        self.max_run = max_run;
        self.binary = true;
    }

    /// Lists the next row's new state `new`, from its previous state `old` when the row's
    /// product is that of `old` (`None`: a full list). A row not all 0/1 marks the lists
    /// [`ChangeLists::binary`] false (they are then unspecified).
    pub fn push_row(&mut self, old: Option<&[f32]>, new: &[f32]) {
        let r = self.delta.len();
        if self.run.len() <= r {
            self.run.resize(r + 1, 0);
        }
        let k = new.len();
        let (on0, off0) = (self.on.idx.len(), self.off.idx.len());
        let mut delta = false;
        if let Some(old) = old.filter(|_| self.run[r] < self.max_run) {
            let (ones, bad) = push_changes(old, new, &mut self.on.idx, &mut self.off.idx);
            let changes = self.on.idx.len() - on0 + self.off.idx.len() - off0;
            delta = bad == 0 && changes < ones.min(k - ones);
            if !delta {
                self.on.idx.truncate(on0);
                self.off.idx.truncate(off0);
            }
        }
        let mut complement = false;
        if delta {
            self.run[r] += 1;
        } else {
            self.run[r] = 0;
            self.on.idx.reserve(k);
            if !push_ones(new, &mut self.on.idx) {
                self.binary = false;
            }
            if 2 * (self.on.idx.len() - on0) > k {
                self.on.idx.truncate(on0);
                push_zeros(new, &mut self.on.idx);
                complement = true;
            }
        }
        self.on.offsets.push(self.on.idx.len());
        self.off.offsets.push(self.off.idx.len());
        self.on.complement.push(complement);
        self.delta.push(delta);
    }

    /// Ends the rows of this state (the complement flags dropped when none is set, as
    /// [`IndexLists::rows_or_complements_of`] leaves them).
    pub fn finish(&mut self) {
        if !self.on.complement.contains(&true) {
            self.on.complement.clear();
        }
    }

    /// The lists added: the changes to one (delta rows) or the full lists.
    pub fn on(&self) -> &IndexLists {
        &self.on
    }

    /// The lists subtracted: the changes to zero (empty for full rows).
    pub fn off(&self) -> &IndexLists {
        &self.off
    }

    /// Whether row `r` is carried by its changes (else its `on` list is full).
    pub fn is_delta(&self, r: usize) -> bool {
        self.delta[r]
    }

    /// Whether every row pushed was all 0/1.
    pub fn binary(&self) -> bool {
        self.binary
    }

    /// Entries listed over both lists.
    pub fn listed(&self) -> usize {
        self.on.listed() + self.off.listed()
    }

    /// Whether any full list holds the zeros of its row.
    pub fn has_complements(&self) -> bool {
        self.on.has_complements()
    }
}

/// Carries the products `out` (`changes.on().len()` rows of `packed.cols()`) to the new
/// states: a row listed by its changes gains `Σ_{i ∈ on} B_i − Σ_{i ∈ off} B_i` (rows of
/// `packed`), any other becomes the sum of its full list (the column totals minus it for a
/// row listed by its zeros). On the calling thread; each element sums its `on` terms, then
/// subtracts its `off` terms, each list in order into four interleaved partial sums as
/// [`super::sum_selected`] sums one (a full row is the bits of that sum), added as
/// `(s₀ + s₁) + (s₂ + s₃)`: the same bits from the AVX2 kernel and its portable twin.
///
/// # Panics
/// When `out` is too short or a list indexes past the packed rows.
pub fn carry_products(changes: &ChangeLists, packed: &Packed, out: &mut [f32]) {
    let (m, n) = (changes.on.len(), packed.cols());
    assert!(out.len() >= m * n);
    assert!(changes.on.bound <= packed.rows() && changes.off.bound <= packed.rows());
    if m == 0 || n == 0 {
        return;
    }
    let totals = if changes.has_complements() {
        packed.totals()
    } else {
        &[]
    };
    // SAFETY: the kernel runs on this CPU (`best_kernel`); `out` holds `m × n` entries and the
    // lists' indices are below the packed rows (asserted); the totals are there when a row is
    // complemented
    unsafe { carry_by(best_kernel(packed.width), changes, packed, totals, out) }
}

/// The fastest carry kernel this CPU runs for strips of `width` columns.
fn best_kernel(width: usize) -> Kernel {
    [Kernel::Avx512, Kernel::Avx2]
        .into_iter()
        .find(|k| k.runs(width))
        .unwrap_or(Kernel::Portable)
}

/// [`carry_products`] by `kernel`.
///
/// # Safety
/// As [`carry_avx2`] for the vector kernels, and the CPU runs `kernel` for the packing's
/// strip width ([`Kernel::runs`]).
unsafe fn carry_by(
    kernel: Kernel,
    changes: &ChangeLists,
    packed: &Packed,
    totals: &[f32],
    out: &mut [f32],
) {
    match (kernel, packed.width) {
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx512, _) => carry_avx512(changes, packed, totals, out),
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx2, STRIP) => carry_avx2::<2>(changes, packed, totals, out),
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx2, _) => carry_avx2::<1>(changes, packed, totals, out),
        _ => carry_portable(changes, packed, totals, out),
    }
}

/// How row `r`'s sum `d` lands in its output: added (changes), as is, or subtracted from the
/// column totals (a full list of zeros).
#[derive(Clone, Copy, PartialEq)]
enum Land {
    Add,
    Set,
    FromTotals,
}

impl ChangeLists {
    fn land(&self, r: usize) -> Land {
        if self.delta[r] {
            Land::Add
        } else if self.on.is_complement(r) {
            Land::FromTotals
        } else {
            Land::Set
        }
    }
}

/// The portable twin of [`carry_avx2`].
fn carry_portable(changes: &ChangeLists, packed: &Packed, totals: &[f32], out: &mut [f32]) {
    let (n, sw) = (packed.cols(), packed.width);
    for s in 0..packed.strips() {
        let strip = packed.strip(s);
        let width = sw.min(n - s * sw);
        for r in 0..changes.on.len() {
            let mut acc = [[0f32; STRIP]; 4];
            for (list, add) in [(changes.on.get(r), true), (changes.off.get(r), false)] {
                let term = |a: &mut [f32; STRIP], i: u32| {
                    let row = &strip[i as usize * sw..][..sw];
                    for (x, &y) in a.iter_mut().zip(row) {
                        *x = if add { *x + y } else { *x - y };
                    }
                };
                let mut quads = list.chunks_exact(4);
                for q in &mut quads {
                    for (a, &i) in acc.iter_mut().zip(q) {
                        term(a, i);
                    }
                }
                for &i in quads.remainder() {
                    term(&mut acc[0], i);
                }
            }
            let land = changes.land(r);
            let dst = &mut out[r * n + s * sw..][..width];
            for (l, d) in dst.iter_mut().enumerate() {
                let sum = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l]);
                *d = match land {
                    Land::Add => *d + sum,
                    Land::Set => sum,
                    Land::FromTotals => totals[s * sw + l] - sum,
                };
            }
        }
    }
}

/// [`carry_products`] for strips of `R` registers (`R · LANES` columns), one strip (in L1 or
/// L2) per pass over the lists.
///
/// # Safety
/// The CPU has AVX2; the strip width is `R · LANES`; `out` holds `lists × cols` entries;
/// every list index is below the packed rows; `totals` covers every strip when a row is
/// complemented.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn carry_avx2<const R: usize>(
    changes: &ChangeLists,
    packed: &Packed,
    totals: &[f32],
    out: &mut [f32],
) {
    use std::arch::x86_64::*;
    let (n, sw) = (packed.cols(), R * LANES);
    debug_assert_eq!(sw, packed.width);
    let out = out.as_mut_ptr();
    for s in 0..packed.strips() {
        let p = packed.strip(s).as_ptr();
        let width = sw.min(n - s * sw);
        for r in 0..changes.on.len() {
            // partial sums k = 0..4 of the low and (R = 2) high 8 columns; term t to sum t mod 4
            let mut lo = [_mm256_setzero_ps(); 4];
            let mut hi = [_mm256_setzero_ps(); 4];
            add_list::<R, true>(p, sw, changes.on.get(r), &mut lo, &mut hi);
            add_list::<R, false>(p, sw, changes.off.get(r), &mut lo, &mut hi);
            let sums = [
                _mm256_add_ps(_mm256_add_ps(lo[0], lo[1]), _mm256_add_ps(lo[2], lo[3])),
                _mm256_add_ps(_mm256_add_ps(hi[0], hi[1]), _mm256_add_ps(hi[2], hi[3])),
            ];
            let land = changes.land(r);
            let dst = out.add(r * n + s * sw);
            // a last strip narrower than `sw` goes through a full-width copy
            let mut cur = [0f32; STRIP];
            let at = if width == sw {
                dst
            } else {
                std::ptr::copy_nonoverlapping(dst, cur.as_mut_ptr(), width);
                cur.as_mut_ptr()
            };
            for (g, &sum) in sums.iter().enumerate().take(R) {
                let x = match land {
                    Land::Add => _mm256_add_ps(_mm256_loadu_ps(at.add(g * LANES)), sum),
                    Land::Set => sum,
                    Land::FromTotals => _mm256_sub_ps(
                        _mm256_loadu_ps(totals.as_ptr().add(s * sw + g * LANES)),
                        sum,
                    ),
                };
                _mm256_storeu_ps(at.add(g * LANES), x);
            }
            if width != sw {
                std::ptr::copy_nonoverlapping(cur.as_ptr(), dst, width);
            }
        }
    }
}

/// [`carry_products`] for 16-column strips by AVX-512: a strip row is one register, so each
/// index costs one load and one addition instead of two of each. Lane by lane the same
/// partial sums, added the same way, as [`carry_avx2`]: the same bits.
///
/// # Safety
/// As [`carry_avx2`] with 16-column strips, and the CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn carry_avx512(changes: &ChangeLists, packed: &Packed, totals: &[f32], out: &mut [f32]) {
    use std::arch::x86_64::*;
    debug_assert_eq!(packed.width, STRIP);
    let n = packed.cols();
    let out = out.as_mut_ptr();
    for s in 0..packed.strips() {
        let p = packed.strip(s).as_ptr();
        let j = s * STRIP;
        let width = STRIP.min(n - j);
        let lanes = ((1u32 << width) - 1) as u16;
        for r in 0..changes.on.len() {
            let mut acc = [_mm512_setzero_ps(); 4];
            for (list, add) in [(changes.on.get(r), true), (changes.off.get(r), false)] {
                let mut quads = list.chunks_exact(4);
                for q in &mut quads {
                    for (k, &i) in q.iter().enumerate() {
                        let row = _mm512_loadu_ps(p.add(i as usize * STRIP));
                        acc[k] = if add {
                            _mm512_add_ps(acc[k], row)
                        } else {
                            _mm512_sub_ps(acc[k], row)
                        };
                    }
                }
                for &i in quads.remainder() {
                    let row = _mm512_loadu_ps(p.add(i as usize * STRIP));
                    acc[0] = if add {
                        _mm512_add_ps(acc[0], row)
                    } else {
                        _mm512_sub_ps(acc[0], row)
                    };
                }
            }
            let sum = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3]));
            let dst = out.add(r * n + j);
            let x = match changes.land(r) {
                Land::Add => _mm512_add_ps(_mm512_maskz_loadu_ps(lanes, dst), sum),
                Land::Set => sum,
                Land::FromTotals => _mm512_sub_ps(_mm512_loadu_ps(totals.as_ptr().add(j)), sum),
            };
            super::sums::store_strip_row_avx512(dst, x, width);
        }
    }
}

/// Adds (`ADD`) or subtracts the strip rows `list` selects (rows of `sw` floats from `p`)
/// into the partial sums: each four in turn to sums 0-3, a remainder to sum 0.
///
/// # Safety
/// As [`carry_avx2`], for the rows of `list`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn add_list<const R: usize, const ADD: bool>(
    p: *const f32,
    sw: usize,
    list: &[u32],
    lo: &mut [std::arch::x86_64::__m256; 4],
    hi: &mut [std::arch::x86_64::__m256; 4],
) {
    let mut quads = list.chunks_exact(4);
    for q in &mut quads {
        for k in 0..4 {
            let row = p.add(*q.get_unchecked(k) as usize * sw);
            add_row::<R, ADD>(row, &mut lo[k], &mut hi[k]);
        }
    }
    for &i in quads.remainder() {
        add_row::<R, ADD>(p.add(i as usize * sw), &mut lo[0], &mut hi[0]);
    }
}

/// One strip row (`R` registers from `row`) added to or subtracted from `lo` and `hi`.
///
/// # Safety
/// The CPU has AVX2; `row` holds `R · LANES` floats.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn add_row<const R: usize, const ADD: bool>(
    row: *const f32,
    lo: &mut std::arch::x86_64::__m256,
    hi: &mut std::arch::x86_64::__m256,
) {
    use std::arch::x86_64::*;
    let a = _mm256_loadu_ps(row);
    *lo = if ADD {
        _mm256_add_ps(*lo, a)
    } else {
        _mm256_sub_ps(*lo, a)
    };
    if R == 2 {
        let b = _mm256_loadu_ps(row.add(LANES));
        *hi = if ADD {
            _mm256_add_ps(*hi, b)
        } else {
            _mm256_sub_ps(*hi, b)
        };
    }
}

/// Appends the indices where `new` is 1 and `old` is 0 to `on`, those where `new` is 0 and
/// `old` is 1 to `off`; returns the ones of `new` and a nonzero value when an entry of `new`
/// is neither 0 nor 1. The AVX2 twin when the CPU has it.
fn push_changes(old: &[f32], new: &[f32], on: &mut Vec<u32>, off: &mut Vec<u32>) -> (usize, u32) {
    assert_eq!(old.len(), new.len());
    on.reserve(new.len());
    off.reserve(new.len());
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has(crate::cpu::Feature::Avx2Popcnt) {
        // SAFETY: AVX2 and POPCNT are available (checked); both lists have room for a whole
        // row (reserved)
        return unsafe { push_changes_avx2(old, new, on, off) };
    }
    // SAFETY: both lists have room for a whole row (reserved)
    unsafe {
        push_changes_with(old, new, on, off, masks8, |m, at, dst| {
            super::lists::emit_scalar(m, at, dst)
        })
    }
}

/// [`push_changes`] by AVX comparisons, left-packing and `popcnt` (without it the counts of
/// the masks' bits compiled to a dozen instructions each).
///
/// # Safety
/// The CPU has AVX2 and POPCNT; `on` and `off` have room for `new.len()` more entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn push_changes_avx2(
    old: &[f32],
    new: &[f32],
    on: &mut Vec<u32>,
    off: &mut Vec<u32>,
) -> (usize, u32) {
    push_changes_with(
        old,
        new,
        on,
        off,
        |ch| super::lists::masks8_avx2(ch),
        |mask, at, dst| super::lists::left_pack8_avx2(mask, at, dst),
    )
}

/// [`push_changes`] with a given 8-entry mask function ([`masks8`]) and writer of selected
/// indices (as in [`super::lists::push_selected_with`]).
///
/// # Safety
/// `on` and `off` have room for `new.len()` more entries.
#[inline(always)]
unsafe fn push_changes_with(
    old: &[f32],
    new: &[f32],
    on: &mut Vec<u32>,
    off: &mut Vec<u32>,
    masks: impl Fn(&[f32]) -> (u32, u32),
    emit: impl Fn(u32, u32, *mut u32) -> usize,
) -> (usize, u32) {
    let (mut n_on, mut n_off) = (on.len(), off.len());
    let (p_on, p_off) = (on.as_mut_ptr(), off.as_mut_ptr());
    let (mut ones, mut bad) = (0usize, 0u32);
    let mut at = 0u32;
    let mut new_chunks = new.chunks_exact(LANES);
    for (n8, o8) in (&mut new_chunks).zip(old.chunks_exact(LANES)) {
        let (mn, b) = masks(n8);
        let (mo, _) = masks(o8);
        bad |= b;
        ones += mn.count_ones() as usize;
        // each list grows by at most `at` entries before this chunk: 8 more stay within
        // the room of a whole row
        n_on += emit(mn & !mo, at, p_on.add(n_on));
        n_off += emit(mo & !mn, at, p_off.add(n_off));
        at += LANES as u32;
    }
    let rest = new_chunks.remainder().len();
    for (&n, &o) in new[new.len() - rest..].iter().zip(&old[old.len() - rest..]) {
        let (is_n, is_o) = (n != 0.0, o != 0.0);
        bad |= u32::from(is_n && n != 1.0);
        ones += usize::from(is_n);
        if is_n && !is_o {
            p_on.add(n_on).write(at);
            n_on += 1;
        } else if is_o && !is_n {
            p_off.add(n_off).write(at);
            n_off += 1;
        }
        at += 1;
    }
    // the entries up to the new lengths were written above
    on.set_len(n_on);
    off.set_len(n_off);
    (ones, bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use rand::Rng;

    /// The changes listed by the AVX2 and the portable kernels equal a plain filter, on
    /// widths with and without a tail.
    #[test]
    fn changes_equal_a_plain_filter() {
        let mut rng = rng_from_seed(5);
        for k in [1, 7, 8, 9, 31, 500, 784] {
            let old: Vec<f32> = (0..k).map(|_| f32::from(rng.random_bool(0.3))).collect();
            let new: Vec<f32> = (0..k).map(|_| f32::from(rng.random_bool(0.3))).collect();
            let want_on: Vec<u32> = (0..k as u32)
                .filter(|&i| new[i as usize] == 1.0 && old[i as usize] == 0.0)
                .collect();
            let want_off: Vec<u32> = (0..k as u32)
                .filter(|&i| new[i as usize] == 0.0 && old[i as usize] == 1.0)
                .collect();
            let ones = new.iter().filter(|&&x| x == 1.0).count();
            let (mut on, mut off) = (vec![7u32], vec![9u32]);
            assert_eq!(push_changes(&old, &new, &mut on, &mut off), (ones, 0));
            assert_eq!(
                (&on[1..], &off[1..]),
                (&want_on[..], &want_off[..]),
                "k={k}"
            );
            let (mut on, mut off) = (Vec::with_capacity(k), Vec::with_capacity(k));
            // SAFETY: room for a whole row each
            let got = unsafe {
                push_changes_with(&old, &new, &mut on, &mut off, masks8, |m, at, dst| {
                    super::super::lists::emit_scalar(m, at, dst)
                })
            };
            assert_eq!(got, (ones, 0));
            assert_eq!((on, off), (want_on, want_off), "portable, k={k}");
        }
        let (mut on, mut off) = (Vec::new(), Vec::new());
        assert_ne!(push_changes(&[0.0; 9], &[0.5; 9], &mut on, &mut off).1, 0);
    }

    /// Rows go by their changes only when fewer than a full list and within the run limit;
    /// the full lists are those of `rows_or_complements_of`; a non-0/1 row is flagged.
    #[test]
    fn rows_choose_changes_or_full_lists() {
        let k = 16;
        let row = |ones: &[usize]| {
            let mut r = vec![0f32; k];
            ones.iter().for_each(|&i| r[i] = 1.0);
            r
        };
        let a = row(&[1, 2, 3, 4, 5]);
        let b = row(&[1, 2, 3, 4, 6]); // two changes < 5 ones
        let c = row(&(0..12).collect::<Vec<_>>()); // 12 ones: full by its 4 zeros
        let mut cl = ChangeLists::default();
        cl.begin(k, 2);
        cl.push_row(None, &a);
        cl.push_row(Some(&a), &b);
        cl.push_row(Some(&a), &c);
        cl.finish();
        assert!(cl.binary());
        assert!(!cl.is_delta(0) && cl.is_delta(1) && !cl.is_delta(2));
        assert_eq!(cl.on().get(0), &[1, 2, 3, 4, 5]);
        assert_eq!(
            (cl.on().get(1), cl.off().get(1)),
            (&[6u32][..], &[5u32][..])
        );
        assert!(cl.on().is_complement(2) && cl.has_complements());
        assert_eq!(cl.on().get(2), &[12, 13, 14, 15]);
        assert!(cl.off().get(0).is_empty() && cl.off().get(2).is_empty());
        assert_eq!(cl.listed(), 5 + 2 + 4);
        // row 1 again: its second run by changes, then the limit (2) forces a full list
        for want_delta in [true, false, true] {
            cl.begin(k, 2);
            cl.push_row(None, &a);
            cl.push_row(Some(&a), &b);
            cl.finish();
            assert_eq!(cl.is_delta(1), want_delta);
        }
        cl.begin(k, 0);
        cl.push_row(Some(&a), &b);
        assert!(!cl.is_delta(0), "max_run 0: always full");
        cl.push_row(None, &[0.5; 16]);
        assert!(!cl.binary());
    }

    /// The carried products of the AVX2 kernel and its portable twin are the same bits, and
    /// equal the sums of their definitions (`f64`) within rounding: changes, full lists and
    /// complemented ones, 8- and 16-column strips, tails.
    #[test]
    fn carried_products_equal_their_definitions() {
        let mut rng = rng_from_seed(8);
        for (rows, cols) in [(13, 5), (40, 37), (784, 500), (3000, 20)] {
            let b: Vec<f32> = (0..rows * cols)
                .map(|_| rng.random::<f32>() - 0.5)
                .collect();
            let mut packed = Packed::default();
            packed.pack(&b, rows, cols);
            let m = 9;
            let state = |rng: &mut crate::rng::BkRng, p: f64| -> Vec<f32> {
                (0..m * rows)
                    .map(|_| f32::from(rng.random_bool(p)))
                    .collect()
            };
            let (old, new) = (state(&mut rng, 0.3), state(&mut rng, 0.3));
            let mut new = new;
            new[..rows].iter_mut().for_each(|x| *x = 1.0); // a row of ones: by its zeros
                                                           // rows close to their old state go by their changes
            for r in 1..4 {
                new[r * rows..(r + 1) * rows].copy_from_slice(&old[r * rows..(r + 1) * rows]);
                new[r * rows + r] = 1.0 - new[r * rows + r];
            }
            let product = |x: &[f32]| -> Vec<f64> {
                (0..m * cols)
                    .map(|e| {
                        let (r, j) = (e / cols, e % cols);
                        (0..rows)
                            .map(|i| f64::from(x[r * rows + i]) * f64::from(b[i * cols + j]))
                            .sum()
                    })
                    .collect()
            };
            let start: Vec<f32> = product(&old).iter().map(|&x| x as f32).collect();
            let want = product(&new);
            let mut cl = ChangeLists::default();
            cl.begin(rows, 5);
            for (o, n) in old.chunks_exact(rows).zip(new.chunks_exact(rows)) {
                cl.push_row(Some(o), n);
            }
            cl.finish();
            assert!(cl.is_delta(1) && !cl.is_delta(0) && cl.has_complements());
            let mut got = start.clone();
            carry_products(&cl, &packed, &mut got);
            let mut twin = start.clone();
            let totals = packed.totals();
            carry_portable(&cl, &packed, totals, &mut twin);
            assert_eq!(got, twin, "{rows}×{cols}");
            // every kernel this CPU runs, not only the fastest
            for kernel in [super::Kernel::Avx512, super::Kernel::Avx2] {
                if kernel.runs(packed.width) {
                    let mut k = start.clone();
                    // SAFETY: the CPU runs the kernel (checked); shapes as above
                    unsafe { carry_by(kernel, &cl, &packed, totals, &mut k) };
                    assert_eq!(k, twin, "{kernel:?} {rows}×{cols}");
                }
            }
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (f64::from(*g) - w).abs() < 1e-4 * (1.0 + w.abs()),
                    "{g} vs {w}"
                );
            }
        }
    }
}
