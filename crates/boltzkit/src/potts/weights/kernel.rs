//! The identity kernel of [`super::neighbour_counts`]: the matches of [`ROWS`] sequences
//! against a block of [`LANES`] sequences stored site-major ([`Blocks`]), counted vertically:
//! for each site, one byte compare of a row's letter (broadcast) against the block's 64 letters
//! and one byte add, so the `ROWS × LANES` counters stay in vector registers (4 × 64 bytes: four
//! AVX-512 or eight AVX2 registers) and every load of the block serves four rows. Counters are
//! bytes for [`SPAN`] sites, then added to 32-bit totals; between spans the block stops early
//! when no pair can still reach the identity needed. The same safe body is compiled for
//! AVX-512BW, AVX2 and the baseline ([`kernel`] picks by `cpu::has`); a test pins each to the
//! baseline.

#[cfg(target_arch = "x86_64")]
use crate::cpu::{has, Feature};

/// Sequences per block (the columns of one vertical compare).
pub const LANES: usize = 64;
/// Rows compared against one block at once.
pub const ROWS: usize = 4;
/// Sites counted in byte counters between two tests of the early exit (≤ 255).
const SPAN: usize = 64;

/// Match totals of `ROWS` rows against the `LANES` sequences of a block.
pub type Totals = [[u32; LANES]; ROWS];

/// The rows of an alignment in blocks of [`LANES`] sequences, each block site-major
/// (`sites × LANES` bytes: site `s` of sequence `b·LANES + k` at `s·LANES + k`); the last block
/// is padded with copies of its first sequence.
pub struct Blocks {
    data: Vec<u8>,
    sites: usize,
}

impl Blocks {
    /// Transposes the row-major `n × sites` codes in `flat`.
    pub fn new(flat: &[u8], n: usize, sites: usize) -> Self {
        let blocks = n.div_ceil(LANES);
        let mut data = vec![0u8; blocks * sites * LANES];
        for (b, out) in data.chunks_exact_mut(sites * LANES).enumerate() {
            for k in 0..LANES {
                let r = if b * LANES + k < n {
                    b * LANES + k
                } else {
                    b * LANES
                };
                let row = &flat[r * sites..(r + 1) * sites];
                for (s, &c) in row.iter().enumerate() {
                    out[s * LANES + k] = c;
                }
            }
        }
        Blocks { data, sites }
    }

    /// Block `b` (`sites × LANES` bytes).
    pub fn block(&self, b: usize) -> &[u8] {
        let size = self.sites * LANES;
        &self.data[b * size..(b + 1) * size]
    }
}

/// Fills `totals[r][k]` with the sites where `rows[r]` equals sequence `k` of `block`, and
/// returns true; or returns false (totals partial) as soon as no pair can reach `need` matches.
pub type KernelFn = fn(&[&[u8]; ROWS], &[u8], usize, &mut Totals) -> bool;

#[inline(always)]
fn matches_body(rows: &[&[u8]; ROWS], block: &[u8], need: usize, totals: &mut Totals) -> bool {
    let sites = rows[0].len();
    assert!(rows.iter().all(|r| r.len() == sites) && block.len() == sites * LANES);
    *totals = [[0; LANES]; ROWS];
    let mut start = 0;
    while start < sites {
        let end = (start + SPAN).min(sites);
        let mut part = [[0u8; LANES]; ROWS];
        for s in start..end {
            let column: &[u8; LANES] = block[s * LANES..(s + 1) * LANES]
                .try_into()
                .expect("a block column holds LANES letters");
            for (count, row) in part.iter_mut().zip(rows) {
                let letter = row[s];
                for (c, &x) in count.iter_mut().zip(column) {
                    *c += u8::from(x == letter);
                }
            }
        }
        let mut best = 0u32;
        for (total, count) in totals.iter_mut().zip(&part) {
            for (t, &c) in total.iter_mut().zip(count) {
                *t += u32::from(c);
                best = best.max(*t);
            }
        }
        start = end;
        if (best as usize) + (sites - end) < need {
            return false;
        }
    }
    true
}

/// The baseline build (the reference the SIMD builds must equal).
pub fn matches_portable(rows: &[&[u8]; ROWS], block: &[u8], need: usize, t: &mut Totals) -> bool {
    matches_body(rows, block, need, t)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn matches_avx2_inner(rows: &[&[u8]; ROWS], block: &[u8], need: usize, t: &mut Totals) -> bool {
    matches_body(rows, block, need, t)
}

#[cfg(target_arch = "x86_64")]
fn matches_avx2(rows: &[&[u8]; ROWS], block: &[u8], need: usize, t: &mut Totals) -> bool {
    // SAFETY: handed out by `kernel` only where `has(Feature::Avx2)`; the body is safe code
    // compiled with AVX2 enabled.
    unsafe { matches_avx2_inner(rows, block, need, t) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn matches_avx512_inner(rows: &[&[u8]; ROWS], block: &[u8], need: usize, t: &mut Totals) -> bool {
    matches_body(rows, block, need, t)
}

#[cfg(target_arch = "x86_64")]
fn matches_avx512(rows: &[&[u8]; ROWS], block: &[u8], need: usize, t: &mut Totals) -> bool {
    // SAFETY: handed out by `kernel` only where `has(Feature::Avx512bw)`; the body is safe code
    // compiled with AVX-512F/BW enabled.
    unsafe { matches_avx512_inner(rows, block, need, t) }
}

/// Every build this CPU runs, fastest first (the last is the baseline).
pub fn kernels() -> Vec<KernelFn> {
    let mut out: Vec<KernelFn> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if has(Feature::Avx512bw) {
            out.push(matches_avx512);
        }
        if has(Feature::Avx2) {
            out.push(matches_avx2);
        }
    }
    out.push(matches_portable);
    out
}

/// The fastest build this CPU runs.
pub fn kernel() -> KernelFn {
    kernels()[0]
}
