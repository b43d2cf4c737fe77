//! What the pseudo-likelihood engine reads: integer-coded sequences as sites see them, with
//! their weights.
//!
//! A data value `v` at site `i` becomes the model state `v` (or `v − 1` above an ignored gap
//! state); the ignored state itself and anything the model does not know become the code
//! `q_i` ("missing"), which indexes a row of zeros in the engine's per-site tables, so that a
//! missing neighbour contributes nothing and no branch is needed (plmc's `-g`).

use crate::data::Dataset;
use crate::error::{Error, Result};

/// Sequences coded for the engine (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct PlmData {
    /// States per site of the model being fitted.
    pub(crate) q: Vec<usize>,
    /// Row-major `n × L` codes, `q_i` meaning missing.
    pub(crate) codes: Vec<u8>,
    /// The same codes site by site (`L × n`), for the kernels' blocks of sequences.
    pub(crate) columns: Vec<u8>,
    /// One weight per row.
    pub(crate) weights: Vec<f64>,
}

impl PlmData {
    /// Codes `data` with optional per-row `weights` (finite, ≥ 0; default 1). With
    /// `gap = Some(g)`, state `g` of every site is missing and the model has one state fewer
    /// per site (every site must then have at least 3 states in the data's cardinalities).
    pub fn new(data: &Dataset, weights: Option<&[f64]>, gap: Option<u8>) -> Result<Self> {
        data.require_nonempty()?;
        let (n, l) = (data.n_samples(), data.n_vars());
        let weights = match weights {
            None => vec![1.0; n],
            Some(w) => {
                if w.len() != n {
                    return Err(Error::Shape {
                        op: "sequence weights".into(),
                        expected: format!("{n} weights (one per sequence)"),
                        found: format!("{}", w.len()),
                    });
                }
                if let Some(k) = w.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
                    return Err(Error::InvalidData(format!(
                        "sequence weight {k} is {}; weights must be finite and ≥ 0",
                        w[k]
                    )));
                }
                w.to_vec()
            }
        };
        let cards = data.cardinalities();
        let q: Vec<usize> = match gap {
            None => cards.iter().map(|&k| k as usize).collect(),
            Some(g) => cards
                .iter()
                .enumerate()
                .map(|(i, &k)| {
                    if (g as u32) < k && k >= 3 {
                        Ok(k as usize - 1)
                    } else {
                        Err(Error::param(
                            "gap_state",
                            format!(
                                "state {g} cannot be ignored at site {i}, which has {k} states \
                                 (at least 3 are needed, one of them the gap)"
                            ),
                        ))
                    }
                })
                .collect::<Result<_>>()?,
        };
        if let Some(i) = q
            .iter()
            .position(|&k| !(1..super::super::MAX_STATES).contains(&k))
        {
            return Err(Error::InvalidData(format!(
                "site {i} has {} states; the engine fits 1 to {}",
                q[i],
                super::super::MAX_STATES - 1
            )));
        }
        let mut codes = Vec::with_capacity(n * l);
        for row in data.values().outer_iter() {
            for (i, &v) in row.iter().enumerate() {
                codes.push(match gap {
                    None => v,
                    Some(g) if v == g => q[i] as u8,
                    Some(g) if v > g => v - 1,
                    Some(_) => v,
                });
            }
        }
        let mut columns = vec![0u8; n * l];
        for (s, row) in codes.chunks_exact(l).enumerate() {
            for (i, &c) in row.iter().enumerate() {
                columns[i * n + s] = c;
            }
        }
        Ok(PlmData {
            q,
            codes,
            columns,
            weights,
        })
    }

    /// Number of sequences.
    pub fn n_rows(&self) -> usize {
        self.weights.len()
    }

    /// Number of sites.
    pub fn n_sites(&self) -> usize {
        self.q.len()
    }

    /// States per site of the model.
    pub fn states(&self) -> &[usize] {
        &self.q
    }

    /// The sum of the weights (the effective number of sequences).
    pub fn n_eff(&self) -> f64 {
        self.weights.iter().sum()
    }

    /// The codes of site `i`, one per row.
    pub(crate) fn column(&self, i: usize) -> &[u8] {
        let n = self.weights.len();
        &self.columns[i * n..(i + 1) * n]
    }

    /// The codes of row `s`.
    pub(crate) fn row(&self, s: usize) -> &[u8] {
        let l = self.q.len();
        &self.codes[s * l..(s + 1) * l]
    }

    /// The weighted frequency of every state at every site among rows where it is not
    /// missing (uniform at a site missing everywhere), concatenated by site.
    pub fn site_frequencies(&self) -> Vec<f64> {
        let l = self.q.len();
        let mut f: Vec<Vec<f64>> = self.q.iter().map(|&k| vec![0.0; k]).collect();
        for s in 0..self.n_rows() {
            let w = self.weights[s];
            for (i, &c) in self.row(s).iter().enumerate() {
                if (c as usize) < self.q[i] {
                    f[i][c as usize] += w;
                }
            }
        }
        let mut out = Vec::with_capacity(self.q.iter().sum());
        for (i, fi) in f.iter_mut().enumerate() {
            let total: f64 = fi.iter().sum();
            if total > 0.0 {
                fi.iter_mut().for_each(|v| *v /= total);
            } else {
                fi.iter_mut().for_each(|v| *v = 1.0 / self.q[i] as f64);
            }
            out.extend_from_slice(fi);
        }
        debug_assert_eq!(f.len(), l);
        out
    }
}
