//! Sequence weights of an alignment: each sequence weighs `1 / m`, where `m` counts the
//! sequences (itself included) that are identical to it at a fraction at least `θ` of the
//! sites (default 0.8), plmc's definition (`weights.c: MSAReweightSequences`, where
//! `θ = 1 − theta`). The effective number of sequences is the sum of the weights.
//!
//! [`neighbour_counts`] first collapses identical rows (a hash of each row; copies share one
//! count, each copy counting as a neighbour), then compares every pair of distinct rows once:
//! blocks of 64 rows stored site-major, four rows against a block at a time with the match
//! counters in vector registers (`weights/kernel.rs`: AVX-512BW, AVX2 or the baseline), a block dropped
//! as soon as none of its pairs can reach identity `θ`, one block of rows per parallel task.
//! Counts are integers, so the result does not depend on the thread count.
//!
//! Files: plmc's `--save-weights` / `-w` format, one weight per line (`%.16e`), one line per
//! sequence of the alignment file, `0.0` for the sequences it dropped
//! ([`write_weights`], [`read_weights`]).

use crate::data::parse_error;
use crate::error::{Error, Result};
use kernel::{Blocks, Totals, LANES, ROWS};
use ndarray::ArrayView2;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;

mod kernel;

/// The default identity threshold θ.
pub const DEFAULT_IDENTITY: f64 = 0.8;

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
    let distinct = Distinct::new(flat, n, sites);
    let counts = distinct_counts(&distinct, sites, min_identical(identity, sites));
    Ok(distinct
        .of_row
        .iter()
        .map(|&u| counts[u as usize])
        .collect())
}

/// The distinct rows of an alignment: their codes (row-major, in order of first appearance),
/// how many rows each stands for, and which one each row is.
struct Distinct {
    flat: Vec<u8>,
    copies: Vec<u32>,
    of_row: Vec<u32>,
}

impl Distinct {
    fn new(flat: &[u8], n: usize, sites: usize) -> Self {
        let mut index: HashMap<&[u8], u32> = HashMap::with_capacity(n);
        let mut out = Distinct {
            flat: Vec::new(),
            copies: Vec::new(),
            of_row: Vec::with_capacity(n),
        };
        for row in flat.chunks_exact(sites) {
            let next = out.copies.len() as u32;
            let u = *index.entry(row).or_insert(next);
            if u == next {
                out.flat.extend_from_slice(row);
                out.copies.push(0);
            }
            out.copies[u as usize] += 1;
            out.of_row.push(u);
        }
        out
    }
}

/// For each distinct row `u`, the rows (with their copies) that share at least `need` sites
/// with it, itself and its copies included: every pair of distinct rows once, by [`kernel`]
/// over pairs of blocks `a ≤ b` (one block of rows per parallel task).
fn distinct_counts(distinct: &Distinct, sites: usize, need: usize) -> Vec<u32> {
    let m = distinct.copies.len();
    let blocks = Blocks::new(&distinct.flat, m, sites);
    let count = kernel::kernel();
    let row = |i: usize| &distinct.flat[i.min(m - 1) * sites..(i.min(m - 1) + 1) * sites];
    let copies = &distinct.copies;
    let n_blocks = m.div_ceil(LANES);
    let mut counts = (0..n_blocks)
        .into_par_iter()
        .fold(
            || vec![0u32; m],
            |mut acc, a| {
                let mut totals: Totals = [[0; LANES]; ROWS];
                for b in a..n_blocks {
                    let block = blocks.block(b);
                    let lanes = (m - b * LANES).min(LANES);
                    for first in (a * LANES..((a + 1) * LANES).min(m)).step_by(ROWS) {
                        let group: [&[u8]; ROWS] = std::array::from_fn(|r| row(first + r));
                        if !count(&group, block, need, &mut totals) {
                            continue;
                        }
                        for (r, total) in totals.iter().enumerate() {
                            let i = first + r;
                            if i >= m || (a + 1) * LANES <= i {
                                break;
                            }
                            for (k, &t) in total[..lanes].iter().enumerate() {
                                let j = b * LANES + k;
                                if j > i && t as usize >= need {
                                    acc[i] += copies[j];
                                    acc[j] += copies[i];
                                }
                            }
                        }
                    }
                }
                acc
            },
        )
        .reduce(
            || vec![0u32; m],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );
    counts.iter_mut().zip(copies).for_each(|(c, &k)| *c += k);
    counts
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
