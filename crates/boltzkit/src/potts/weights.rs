//! Sequence weights of an alignment: each sequence weighs `1 / m`, where `m` counts the
//! sequences (itself included) that are identical to it at a fraction at least `θ` of the
//! sites (default 0.8), plmc's definition (`weights.c: MSAReweightSequences`, where
//! `θ = 1 − theta`). The effective number of sequences is the sum of the weights.
//!
//! [`neighbour_counts`] compares every pair once (`n(n − 1)/2` pairs): tiles of 256 × 256 rows
//! in parallel, each pair by 64-byte chunks of byte comparisons (AVX2 where the CPU has it, the
//! same code compiled without it otherwise) that stop as soon as the mismatches exceed what
//! identity `θ` allows: most pairs of a family differ early. Counts are integers, so the result
//! does not depend on the thread count.
//!
//! Files: plmc's `--save-weights` / `-w` format, one weight per line (`%.16e`), one line per
//! sequence of the alignment file, `0.0` for the sequences it dropped
//! ([`write_weights`], [`read_weights`]).

use crate::data::parse_error;
use crate::error::{Error, Result};
use ndarray::ArrayView2;
use rayon::prelude::*;
use std::path::Path;

/// The default identity threshold θ.
pub const DEFAULT_IDENTITY: f64 = 0.8;

/// Rows per side of a tile of pairs.
const TILE: usize = 256;
/// Bytes compared between two early-exit tests.
const CHUNK: usize = 64;

/// The fewest identical sites that make two sequences of `sites` sites neighbours at identity
/// `θ`: `⌈θ·L⌉`, with `θ·L` rounded at 1e-9 so that 0.8 × 60 counts as 48 (plmc compares
/// `id ≥ (1 − 0.2)·L` in doubles, which gives the same for θ = 0.8 and every L ≤ 2,000).
pub fn min_identical(identity: f64, sites: usize) -> usize {
    (identity * sites as f64 - 1e-9).ceil().max(0.0) as usize
}

fn check_identity(identity: f64) -> Result<()> {
    if identity > 0.0 && identity <= 1.0 {
        Ok(())
    } else {
        Err(Error::param(
            "identity",
            format!("must be in (0, 1], got {identity}"),
        ))
    }
}

/// For each sequence (row of `codes`), the number of sequences identical to it at a fraction
/// at least `identity` of the sites, itself included.
pub fn neighbour_counts(codes: ArrayView2<'_, u8>, identity: f64) -> Result<Vec<u32>> {
    check_identity(identity)?;
    let (n, sites) = codes.dim();
    if n == 0 || sites == 0 {
        return Err(Error::InvalidData(format!(
            "sequence weights need at least one sequence and one site, got {n} × {sites}"
        )));
    }
    let rows = codes.as_standard_layout();
    let flat = rows
        .as_slice()
        .ok_or_else(|| Error::Internal("a standard-layout array has a contiguous slice".into()))?;
    let limit = sites - min_identical(identity, sites);
    let count = mismatch_kernel();
    let blocks = n.div_ceil(TILE);
    let tiles: Vec<(usize, usize)> = (0..blocks)
        .flat_map(|a| (a..blocks).map(move |b| (a, b)))
        .collect();
    let row = |i: usize| &flat[i * sites..(i + 1) * sites];
    let counts = tiles
        .par_iter()
        .fold(
            || vec![0u32; n],
            |mut acc, &(a, b)| {
                for i in a * TILE..((a + 1) * TILE).min(n) {
                    let x = row(i);
                    let from = if a == b { i + 1 } else { b * TILE };
                    for j in from..((b + 1) * TILE).min(n) {
                        if count(x, row(j), limit) <= limit {
                            acc[i] += 1;
                            acc[j] += 1;
                        }
                    }
                }
                acc
            },
        )
        .reduce(
            || vec![0u32; n],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );
    Ok(counts.into_iter().map(|c| c + 1).collect())
}

/// Sequence weights `1 / m` ([`neighbour_counts`]), plmc's.
///
/// ```
/// use boltzkit::potts::weights::sequence_weights;
/// use ndarray::array;
/// // Rows 0 and 1 agree at 4 of 5 sites (0.8): neighbours; row 2 is alone.
/// let codes = array![[1u8, 2, 3, 4, 5], [1, 2, 3, 4, 0], [5, 4, 3, 2, 1]];
/// assert_eq!(sequence_weights(codes.view(), 0.8)?, [0.5, 0.5, 1.0]);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn sequence_weights(codes: ArrayView2<'_, u8>, identity: f64) -> Result<Vec<f64>> {
    Ok(neighbour_counts(codes, identity)?
        .into_iter()
        .map(|m| 1.0 / f64::from(m))
        .collect())
}

/// The mismatches of two rows, counted by [`CHUNK`]-byte chunks until they pass `limit`
/// (then the count returned is above `limit` but not necessarily the total).
type MismatchFn = fn(&[u8], &[u8], usize) -> usize;

#[inline(always)]
fn mismatches_body(a: &[u8], b: &[u8], limit: usize) -> usize {
    let mut miss = 0usize;
    for (x, y) in a.chunks(CHUNK).zip(b.chunks(CHUNK)) {
        miss += x.iter().zip(y).filter(|(p, q)| p != q).count();
        if miss > limit {
            break;
        }
    }
    miss
}

/// The portable kernel (the reference the AVX2 build must equal).
fn mismatches_portable(a: &[u8], b: &[u8], limit: usize) -> usize {
    mismatches_body(a, b, limit)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn mismatches_avx2_inner(a: &[u8], b: &[u8], limit: usize) -> usize {
    mismatches_body(a, b, limit)
}

#[cfg(target_arch = "x86_64")]
fn mismatches_avx2(a: &[u8], b: &[u8], limit: usize) -> usize {
    // SAFETY: only handed out by `mismatch_kernel` after `is_x86_feature_detected!("avx2")`;
    // the body is safe code compiled with AVX2 enabled.
    unsafe { mismatches_avx2_inner(a, b, limit) }
}

/// The fastest mismatch counter this CPU runs.
fn mismatch_kernel() -> MismatchFn {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return mismatches_avx2;
    }
    mismatches_portable
}

/// `w` as C's `%.16e` (plmc's weights format): `1.1111111111111112e-02`.
fn c_exp(w: f64) -> String {
    let s = format!("{w:.16e}");
    match s.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// Writes one weight per line in plmc's format (`%.16e`; a weight of 0, plmc's mark of a
/// sequence it dropped, as `0.0`), atomically.
pub fn write_weights(path: &Path, weights: &[f64]) -> Result<()> {
    let mut text = String::with_capacity(weights.len() * 24);
    for &w in weights {
        if w == 0.0 {
            text.push_str("0.0\n");
        } else {
            text.push_str(&c_exp(w));
            text.push('\n');
        }
    }
    crate::io::write_atomic(path, text.as_bytes())
}

/// Reads a weights file (one number ≥ 0 per line; blank lines skipped). With `expected`, the
/// count must be that (one per sequence of the alignment file).
pub fn read_weights(path: &Path, expected: Option<usize>) -> Result<Vec<f64>> {
    let text = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let text = String::from_utf8_lossy(&text);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        match t.parse::<f64>() {
            Ok(w) if w.is_finite() && w >= 0.0 => out.push(w),
            _ => {
                return Err(parse_error(
                    path,
                    Some(i + 1),
                    None,
                    "one weight (a finite number ≥ 0) per line",
                    format!("{t:?}"),
                ))
            }
        }
    }
    if let Some(n) = expected {
        if out.len() != n {
            return Err(parse_error(
                path,
                None,
                None,
                format!("{n} weights (one per sequence of the alignment file)"),
                format!("{}", out.len()),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
