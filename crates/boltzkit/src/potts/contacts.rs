//! Contact prediction checked against a structure: residue distances read from a text file
//! ([`read_distances`]), and the precision of the top-ranked coupling scores
//! ([`contact_precision`]) at depths L/5, L/2, L and 2L, the figures DCA papers report.
//!
//! A pair (i, j) is a true contact when its distance is below [`ContactParams::cutoff`]
//! (default 8 Å) and counts only when `|i − j| ≥` [`ContactParams::min_separation`] (default
//! 5, i.e. `|i − j| > 4`): neighbours along the chain are in contact trivially. Pairs the
//! distance file does not list (residues missing from the structure) are left out of the
//! ranking, and counted.

use super::scores::PairScore;
use crate::data::parse_error;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// Settings of [`contact_precision`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContactParams {
    /// A pair is a contact when its distance is below this (Å). Default 8.
    pub cutoff: f64,
    /// Only pairs with `|i − j|` at least this are ranked and counted. Default 5 (`|i − j| >
    /// 4`).
    pub min_separation: usize,
}

impl Default for ContactParams {
    fn default() -> Self {
        ContactParams {
            cutoff: 8.0,
            min_separation: 5,
        }
    }
}

impl ContactParams {
    /// Checks every setting ([`Error::InvalidParam`] naming the one at fault).
    pub fn check(&self) -> Result<()> {
        if !(self.cutoff.is_finite() && self.cutoff > 0.0) {
            return Err(Error::param(
                "cutoff",
                format!("must be a distance > 0, got {}", self.cutoff),
            ));
        }
        if self.min_separation == 0 {
            return Err(Error::param(
                "min_separation",
                "must be at least 1 (a site with itself is no pair)",
            ));
        }
        Ok(())
    }
}

/// Distances between residue pairs, keyed by position (`i < j`, 1-based as in the file).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Distances {
    map: HashMap<(i64, i64), f64>,
}

impl Distances {
    /// The distances of `(i, j, d)` triples (either order; the smallest of repeats kept).
    pub fn from_pairs(pairs: impl IntoIterator<Item = (i64, i64, f64)>) -> Self {
        let mut map = HashMap::new();
        for (i, j, d) in pairs {
            let key = (i.min(j), i.max(j));
            map.entry(key)
                .and_modify(|v: &mut f64| *v = v.min(d))
                .or_insert(d);
        }
        Distances { map }
    }

    /// The distance of `(i, j)` in either order, when listed.
    pub fn get(&self, i: i64, j: i64) -> Option<f64> {
        self.map.get(&(i.min(j), i.max(j))).copied()
    }

    /// Number of pairs listed.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no pair is listed.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every listed pair `(i, j, d)` with `i < j`, sorted by `(i, j)`.
    pub fn pairs(&self) -> Vec<(i64, i64, f64)> {
        let mut v: Vec<_> = self.map.iter().map(|(&(i, j), &d)| (i, j, d)).collect();
        v.sort_by_key(|&(i, j, _)| (i, j));
        v
    }

    /// The contacts `(i, j)` (`i < j`): pairs closer than `params.cutoff` at least
    /// `params.min_separation` apart, in order.
    pub fn contacts(&self, params: &ContactParams) -> Vec<(i64, i64)> {
        self.pairs()
            .into_iter()
            .filter(|&(i, j, d)| d < params.cutoff && i.abs_diff(j) >= params.min_separation as u64)
            .map(|(i, j, _)| (i, j))
            .collect()
    }
}

/// Reads a distance file: whitespace-separated columns `i j … distance` per line (the first
/// two are the positions, integers possibly written as floats such as `1.1e+01`; the last is
/// the distance in Å; columns between are ignored), `#` comments and blank lines skipped. A
/// pair listed twice keeps its smallest distance (e.g. one line per atom pair).
pub fn read_distances(path: &Path) -> Result<Distances> {
    let text = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let text = String::from_utf8_lossy(&text);
    let bad = |line: usize, column: Option<usize>, expected: &str, found: String| {
        parse_error(path, Some(line), column, expected.to_string(), found)
    };
    let mut pairs = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = t.split_whitespace().collect();
        if fields.len() < 3 {
            return Err(bad(
                k + 1,
                None,
                "columns 'i j … distance' (at least 3)",
                format!("{} in {t:?}", fields.len()),
            ));
        }
        let position = |c: usize| -> Result<i64> {
            match fields[c].parse::<f64>() {
                Ok(v) if v.fract() == 0.0 && v.abs() < 1e15 => Ok(v as i64),
                _ => Err(bad(
                    k + 1,
                    Some(c + 1),
                    "a residue position (an integer)",
                    format!("{:?}", fields[c]),
                )),
            }
        };
        let (i, j) = (position(0)?, position(1)?);
        let last = fields.len() - 1;
        let d = match fields[last].parse::<f64>() {
            Ok(d) if d.is_finite() && d >= 0.0 => d,
            _ => {
                return Err(bad(
                    k + 1,
                    Some(last + 1),
                    "a distance (a finite number ≥ 0) in the last column",
                    format!("{:?}", fields[last]),
                ))
            }
        };
        if i != j {
            pairs.push((i, j, d));
        }
    }
    if pairs.is_empty() {
        return Err(parse_error(
            path,
            None,
            None,
            "at least one line 'i j … distance' with i ≠ j",
            "none",
        ));
    }
    Ok(Distances::from_pairs(pairs))
}

/// The precision at one depth.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrecisionAt {
    /// The depth's name: `L/5`, `L/2`, `L`, `2L`.
    pub depth: String,
    /// The number of top pairs it asks for (at least 1).
    pub k: usize,
    /// The number ranked (fewer than `k` when fewer pairs have distances).
    pub ranked: usize,
    /// True contacts among them.
    pub true_contacts: usize,
    /// `true_contacts / ranked`.
    pub precision: f64,
}

/// What [`contact_precision`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContactReport {
    /// The length L the depths are fractions of (the model's sites).
    pub length: usize,
    /// The settings used.
    pub params: ContactParams,
    /// Pairs ranked: `|i − j| ≥ min_separation` and a distance listed.
    pub pairs_ranked: usize,
    /// Scored pairs at that separation left out for lack of a distance.
    pub pairs_without_distance: usize,
    /// True contacts among the ranked pairs.
    pub contacts: usize,
    /// Precision at L/5, L/2, L and 2L.
    pub precision: Vec<PrecisionAt>,
}

impl ContactReport {
    /// The precision at a depth by name (`"L"`, `"L/2"`, ...).
    pub fn at(&self, depth: &str) -> Option<f64> {
        self.precision
            .iter()
            .find(|p| p.depth == depth)
            .map(|p| p.precision)
    }
}

/// The pairs `scores` ranks as contacts, best first: `|i − j| ≥ min_separation`, with a
/// distance listed, by score (ties by position), each with whether it is a true contact.
pub fn ranked_pairs(
    scores: &[PairScore],
    distances: &Distances,
    params: &ContactParams,
) -> Result<(Vec<(PairScore, bool)>, usize)> {
    params.check()?;
    if let Some(p) = scores.iter().find(|p| !p.score.is_finite()) {
        return Err(Error::InvalidData(format!(
            "the score of pair ({}, {}) is {}, not a finite number",
            p.i, p.j, p.score
        )));
    }
    let far = |p: &&PairScore| p.i.abs_diff(p.j) >= params.min_separation as u64;
    let mut missing = 0;
    let mut ranked: Vec<(PairScore, bool)> = Vec::new();
    for p in scores.iter().filter(far) {
        match distances.get(p.i, p.j) {
            Some(d) => ranked.push((*p, d < params.cutoff)),
            None => missing += 1,
        }
    }
    ranked.sort_by(|(a, _), (b, _)| {
        b.score
            .total_cmp(&a.score)
            .then((a.i, a.j).cmp(&(b.i, b.j)))
    });
    Ok((ranked, missing))
}

/// Precision of the top L/5, L/2, L and 2L pairs of `scores` (L = `length`, the model's sites)
/// as contacts of the structure `distances`.
///
/// ```
/// use boltzkit::potts::contacts::{contact_precision, ContactParams, Distances};
/// use boltzkit::potts::scores::PairScore;
/// // (1, 3) is too close in sequence to count (|i − j| ≤ 4); (2, 9) is no contact (≥ 8 Å)
/// let d = Distances::from_pairs([(1, 7, 5.0), (3, 9, 6.0), (2, 9, 12.0), (1, 3, 4.0)]);
/// let s = [
///     PairScore::new(1, 7, 0.9),
///     PairScore::new(3, 9, 0.8),
///     PairScore::new(2, 9, 0.5),
///     PairScore::new(1, 3, 2.0),
/// ];
/// let r = contact_precision(&s, 10, &d, &ContactParams::default())?;
/// // top L/5 = 2 pairs: both contacts; top L/2 = 5: three pairs ranked, two contacts
/// assert_eq!(r.at("L/5"), Some(1.0));
/// assert!((r.at("L/2").unwrap() - 2.0 / 3.0).abs() < 1e-12);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn contact_precision(
    scores: &[PairScore],
    length: usize,
    distances: &Distances,
    params: &ContactParams,
) -> Result<ContactReport> {
    if length == 0 {
        return Err(Error::param("length", "must be at least 1"));
    }
    let (ranked, missing) = ranked_pairs(scores, distances, params)?;
    let depths = [
        ("L/5", length / 5),
        ("L/2", length / 2),
        ("L", length),
        ("2L", 2 * length),
    ];
    let precision = depths
        .iter()
        .map(|&(depth, k)| {
            let k = k.max(1);
            let top = &ranked[..k.min(ranked.len())];
            let hits = top.iter().filter(|(_, c)| *c).count();
            PrecisionAt {
                depth: depth.to_string(),
                k,
                ranked: top.len(),
                true_contacts: hits,
                precision: if top.is_empty() {
                    0.0
                } else {
                    hits as f64 / top.len() as f64
                },
            }
        })
        .collect();
    Ok(ContactReport {
        length,
        params: params.clone(),
        pairs_ranked: ranked.len(),
        pairs_without_distance: missing,
        contacts: ranked.iter().filter(|(_, c)| *c).count(),
        precision,
    })
}

#[cfg(test)]
mod tests;
