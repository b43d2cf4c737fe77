//! Coupling scores of a Potts model: the Frobenius norm of each pair's couplings in the
//! zero-sum gauge, with the average product correction (APC, Dunn et al. 2008), the scores DCA
//! ranks contacts by (Ekeberg et al. 2013; plmc's `OutputCouplingScores`).
//!
//! For a pair (i, j) with `q × q` couplings `J`, the zero-sum gauge is
//! `J'(a, b) = J(a, b) − J(·, b) − J(a, ·) + J(·, ·)` (means over the dotted letters); the
//! score is `F_ij = ‖J'‖_F`, over every letter or (`exclude_gap`, PlmDCA's choice) without
//! the gap's row and column after the gauge. APC: `F_ij − F_i· F_·j / F_··`, with `F_i·` the
//! mean of row i over j ≠ i and `F_··` the mean over pairs.
//!
//! Files: plmc's couplings file (`i A_i j A_j 0 score`, one line per pair i < j, `A` the
//! focus sequence's letters or `-`; EVcouplings reads it) and an `L × L` matrix (`.npy` or
//! text).

use super::model::Potts;
use crate::data::parse_error;
use crate::error::{Error, Result};
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The score of one pair of positions (`i < j`, in the positions the alignment reports).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairScore {
    /// The first position.
    pub i: i64,
    /// The second position.
    pub j: i64,
    /// The score.
    pub score: f64,
}

impl PairScore {
    /// A pair's score.
    pub fn new(i: i64, j: i64, score: f64) -> Self {
        PairScore { i, j, score }
    }
}

/// How scores are computed from couplings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScoreParams {
    /// Apply the average product correction. Default true.
    pub apc: bool,
    /// Leave the gap's row and column out of the norm (after the gauge). Default false
    /// (plmc's scores of a model with the gap, and of `-g` models, which have no gap state).
    pub exclude_gap: bool,
}

impl Default for ScoreParams {
    fn default() -> Self {
        ScoreParams {
            apc: true,
            exclude_gap: false,
        }
    }
}

/// The Frobenius norm of one `q_i × q_j` block (row-major), leaving out letter `skip`'s row
/// and column.
pub fn frobenius(block: ArrayView2<'_, f64>, skip: Option<usize>) -> f64 {
    let mut sum = 0.0;
    for (a, row) in block.outer_iter().enumerate() {
        if Some(a) == skip {
            continue;
        }
        for (b, &v) in row.iter().enumerate() {
            if Some(b) != skip {
                sum += v * v;
            }
        }
    }
    sum.sqrt()
}

/// The `L × L` matrix of Frobenius norms (zero diagonal) of the couplings `block(i, j)` of
/// every pair `i < j` (`q_i × q_j`, rows the letters of site i), which the caller has put in
/// the zero-sum gauge, with the gap (code `gap`) left out when `exclude_gap`; then APC when
/// `params.apc`.
pub fn coupling_scores<'a, F>(
    length: usize,
    block: F,
    gap: Option<u8>,
    params: &ScoreParams,
) -> Result<Array2<f64>>
where
    F: Fn(usize, usize) -> ArrayView2<'a, f64> + Sync,
{
    if length < 2 {
        return Err(Error::InvalidData(format!(
            "coupling scores need at least 2 sites, got {length}"
        )));
    }
    if params.exclude_gap && gap.is_none() {
        return Err(Error::param(
            "exclude_gap",
            "the model's alphabet has no gap to leave out",
        ));
    }
    let skip = if params.exclude_gap {
        gap.map(usize::from)
    } else {
        None
    };
    let rows: Vec<Vec<f64>> = (0..length)
        .into_par_iter()
        .map(|i| {
            (i + 1..length)
                .map(|j| frobenius(block(i, j), skip))
                .collect()
        })
        .collect();
    let mut f = Array2::<f64>::zeros((length, length));
    for (i, row) in rows.iter().enumerate() {
        for (k, &v) in row.iter().enumerate() {
            f[[i, i + 1 + k]] = v;
            f[[i + 1 + k, i]] = v;
        }
    }
    if let Some(bad) = f.iter().find(|v| !v.is_finite()) {
        return Err(Error::Numerical {
            context: "coupling scores".into(),
            detail: format!("a coupling norm is {bad}"),
        });
    }
    Ok(if params.apc { apc(&f) } else { f })
}

/// The scores of a model ([`coupling_scores`] of its zero-sum gauge,
/// [`Potts::zero_sum_gauge`]); the gap is code 0 when the model's alphabet starts with `-` or
/// `.`.
///
/// ```
/// use boltzkit::potts::{scores, Potts};
/// let mut m = Potts::zeros(vec![2, 2, 2])?;
/// m.coupling_mut(0, 2).copy_from_slice(&[1.0, -1.0, -1.0, 1.0]);
/// let f = scores::model_scores(&m, &scores::ScoreParams { apc: false, exclude_gap: false })?;
/// assert_eq!((f[[0, 2]], f[[0, 1]]), (2.0, 0.0));
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn model_scores(model: &Potts, params: &ScoreParams) -> Result<Array2<f64>> {
    let gauged = model.zero_sum_gauge();
    let q = gauged.states();
    let gap = model
        .alphabet()
        .and_then(|a| a.chars().next())
        .filter(|c| *c == '-' || *c == '.')
        .map(|_| 0u8);
    let block = |i: usize, j: usize| {
        ArrayView2::from_shape((q[i], q[j]), gauged.coupling(i, j))
            .expect("a coupling block has q_i × q_j values")
    };
    coupling_scores(model.n_sites(), block, gap, params)
}

/// The average product correction of a symmetric score matrix (diagonal ignored and left 0):
/// `F_ij − F_i· F_·j / F_··` (plmc's arithmetic: means over the other L − 1 sites and over the
/// L(L − 1)/2 pairs).
pub fn apc(f: &Array2<f64>) -> Array2<f64> {
    let l = f.nrows();
    let pairs = (l * (l - 1)) as f64 / 2.0;
    let mut mean = vec![0.0; l];
    let mut all = 0.0;
    for i in 0..l {
        for j in i + 1..l {
            let v = f[[i, j]];
            mean[i] += v / (l - 1) as f64;
            mean[j] += v / (l - 1) as f64;
            all += v / pairs;
        }
    }
    let mut out = Array2::<f64>::zeros((l, l));
    for i in 0..l {
        for j in i + 1..l {
            let v = if all != 0.0 {
                f[[i, j]] - mean[i] * mean[j] / all
            } else {
                f[[i, j]]
            };
            out[[i, j]] = v;
            out[[j, i]] = v;
        }
    }
    out
}

/// The pairs `i < j` of a score matrix, named by `positions` (one per site), in file order.
pub fn pair_scores(matrix: &Array2<f64>, positions: &[i64]) -> Result<Vec<PairScore>> {
    let l = matrix.nrows();
    if matrix.ncols() != l || positions.len() != l {
        return Err(Error::Shape {
            op: "pair_scores".into(),
            expected: format!("an L × L matrix and L positions, L = {l}"),
            found: format!("{:?} and {} positions", matrix.dim(), positions.len()),
        });
    }
    Ok((0..l)
        .flat_map(|i| (i + 1..l).map(move |j| (i, j)))
        .map(|(i, j)| PairScore::new(positions[i], positions[j], matrix[[i, j]]))
        .collect())
}

/// Writes plmc's couplings file: `i A_i j A_j 0 score` per pair (`%f`), `letters` the focus
/// sequence's letter per site (`-` without focus), atomically.
pub fn write_couplings(
    path: &Path,
    matrix: &Array2<f64>,
    positions: &[i64],
    letters: Option<&[char]>,
) -> Result<()> {
    let pairs = pair_scores(matrix, positions)?;
    let l = positions.len();
    let letter = |i: usize| letters.map_or('-', |s| s[i]);
    if letters.is_some_and(|s| s.len() != l) {
        return Err(Error::Shape {
            op: "write_couplings".into(),
            expected: format!("{l} focus letters"),
            found: format!("{}", letters.map_or(0, <[char]>::len)),
        });
    }
    let mut text = String::with_capacity(pairs.len() * 24);
    let index = (0..l).flat_map(|i| (i + 1..l).map(move |j| (i, j)));
    for ((a, b), p) in index.zip(&pairs) {
        text.push_str(&format!(
            "{} {} {} {} 0 {:.6}\n",
            p.i,
            letter(a),
            p.j,
            letter(b),
            p.score
        ));
    }
    crate::io::write_atomic(path, text.as_bytes())
}

/// Writes the score files asked for: plmc's couplings file at `couplings` (see
/// [`write_couplings`]) and the L × L matrix at `matrix_file` (see [`write_matrix`]). The one
/// writer of the CLI's `potts fit`, `potts scores` and `rbm couplings`.
pub fn write_score_files(
    matrix: &Array2<f64>,
    positions: &[i64],
    letters: Option<&[char]>,
    couplings: Option<&Path>,
    matrix_file: Option<&Path>,
) -> Result<()> {
    if let Some(path) = couplings {
        write_couplings(path, matrix, positions, letters)?;
    }
    if let Some(path) = matrix_file {
        write_matrix(path, matrix)?;
    }
    Ok(())
}

/// Reads a couplings file: plmc's / EVcouplings' `i A_i j A_j 0 score` lines, or `i j score`.
pub fn read_couplings(path: &Path) -> Result<Vec<PairScore>> {
    let text = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let text = String::from_utf8_lossy(&text);
    let mut out = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        let (i, j, s) = match f.len() {
            6 => (f[0], f[2], f[5]),
            3 => (f[0], f[1], f[2]),
            _ => {
                return Err(parse_error(
                    path,
                    Some(k + 1),
                    None,
                    "'i A_i j A_j 0 score' (6 columns) or 'i j score'",
                    format!("{} columns in {t:?}", f.len()),
                ))
            }
        };
        let parsed = (i.parse::<i64>(), j.parse::<i64>(), s.parse::<f64>());
        match parsed {
            (Ok(i), Ok(j), Ok(s)) if s.is_finite() && i != j => {
                out.push(PairScore::new(i.min(j), i.max(j), s))
            }
            _ => {
                return Err(parse_error(
                    path,
                    Some(k + 1),
                    None,
                    "two different integer positions and a finite score",
                    format!("{t:?}"),
                ))
            }
        }
    }
    if out.is_empty() {
        return Err(parse_error(path, None, None, "at least one pair", "none"));
    }
    Ok(out)
}

/// Writes a score matrix: `.npy` (f64) by name, else whitespace-separated text rows.
pub fn write_matrix(path: &Path, matrix: &Array2<f64>) -> Result<()> {
    let name = path.to_string_lossy().to_ascii_lowercase();
    if name.ends_with(".npy") {
        let (r, c) = matrix.dim();
        let data: Vec<f64> = matrix.iter().copied().collect();
        return crate::data::write_npy_f64(path, &[r, c], &data);
    }
    let mut text = String::new();
    for row in matrix.outer_iter() {
        let cells: Vec<String> = row.iter().map(|v| format!("{v:.6}")).collect();
        text.push_str(&cells.join(" "));
        text.push('\n');
    }
    crate::io::write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests;
