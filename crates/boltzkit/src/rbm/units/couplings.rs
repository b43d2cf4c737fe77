//! Effective couplings of an RBM with categorical (Potts) visible units, the pairwise part of
//! its marginal `ln p(v)` that Tubiana, Cocco & Monasson (eLife 2019, "Contact predictions")
//! score contacts by, as DCA scores a Potts model's couplings.
//!
//! With `ln p(v) = −U_v(v) + Σ_μ Γ_μ(I_μ(v)) − ln Z` and `I_μ(v) = Σ_i W_{i v_i μ}`, the
//! coupling of sites `i, j` at letters `(a, b)` is the mixed second difference of `ln p`
//! when `v_i, v_j` are set to `a, b` in a sequence `v`, averaged over the data:
//! `J_ij(a, b) = Σ_μ E_v[Γ_μ(I_μ^{∖ij}(v) + W_{iaμ} + W_{jbμ})]` in the zero-sum gauge
//! (`J − J(·, b) − J(a, ·) + J(·, ·)`, which removes every term of `a` or `b` alone, so the
//! visible fields drop out), with `I^{∖ij} = I − W_{i v_i} − W_{j v_j}` the input without the
//! two sites. A Gaussian hidden unit (quadratic `Γ`) gives exactly `W_{iaμ} W_{jbμ} σ²_μ` in
//! that gauge, the Hopfield-Potts couplings.
//!
//! The expectation runs over each hidden unit's restricted inputs `I_μ^{∖ij}` of the data rows
//! (weighted): exactly, or as PGM does, over a histogram of them in `bins` equal bins between
//! their least and largest value, each bin's weight at its centre. Pairs are independent and
//! computed in parallel; each adds its hidden units in order (the same bits on any thread
//! count). The scores are [`crate::potts::scores::coupling_scores`]' (Frobenius norm, APC).

use super::drelu;
use super::layer::Units;
use super::model::UnitRbm;
use super::sample_weights::normalized_weights;
use super::unit_type::UnitType;
use super::{Bernoulli, Gaussian, Relu};
use crate::error::{Error, Result};
use crate::potts::scores::{coupling_scores, ScoreParams};
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;

/// How the data expectation of the effective couplings is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CouplingParams {
    /// Bins of each hidden unit's restricted input over the data (PGM's `nbins`, default 10);
    /// 0 takes the expectation over every data row exactly (rows × q² terms per pair and
    /// hidden unit instead of bins × q²).
    pub bins: usize,
}

impl Default for CouplingParams {
    fn default() -> Self {
        CouplingParams { bins: 10 }
    }
}

/// The effective couplings of every pair of sites `i < j`, each a `q_i × q_j` block (rows the
/// letters of site `i`) in the zero-sum gauge.
#[derive(Debug, Clone, PartialEq)]
pub struct EffectiveCouplings {
    q: Vec<usize>,
    blocks: Vec<Vec<f64>>,
}

impl EffectiveCouplings {
    /// Number of sites `L`.
    pub fn n_sites(&self) -> usize {
        self.q.len()
    }

    /// States per site.
    pub fn q(&self) -> &[usize] {
        &self.q
    }

    /// The block of sites `i < j`, `q_i × q_j` row-major.
    pub fn block(&self, i: usize, j: usize) -> &[f64] {
        &self.blocks[pair_index(self.q.len(), i, j)]
    }

    /// The `L × L` score matrix ([`coupling_scores`]: Frobenius norms, APC by `params`); `gap`
    /// the gap's letter code when the alphabet has one (left out with `exclude_gap`).
    pub fn scores(&self, gap: Option<u8>, params: &ScoreParams) -> Result<Array2<f64>> {
        let block = |i: usize, j: usize| {
            ArrayView2::from_shape((self.q[i], self.q[j]), self.block(i, j))
                .expect("a block has q_i × q_j values")
        };
        coupling_scores(self.q.len(), block, gap, params)
    }
}

/// Index of pair `i < j` among the pairs of `l` sites in row order.
fn pair_index(l: usize, i: usize, j: usize) -> usize {
    i * l - i * (i + 1) / 2 + (j - i - 1)
}

/// One hidden unit's log-partition `Γ_μ` as a function of its input.
enum UnitGamma {
    /// dReLU's `[γ₊, γ₋, θ₊, θ₋]` ([`drelu::ln_partition`], in `f64`).
    DRelu([f64; 4]),
    /// The other scalar types as a layer of one unit (the input rounded to `f32`).
    Bernoulli(Bernoulli),
    Gaussian(Gaussian),
    Relu(Relu),
}

impl UnitGamma {
    fn at(&self, x: f64) -> f64 {
        let input = [x as f32];
        match self {
            UnitGamma::DRelu(p) => drelu::ln_partition(x, *p),
            UnitGamma::Bernoulli(u) => u.log_partition(&input),
            UnitGamma::Gaussian(u) => u.log_partition(&input),
            UnitGamma::Relu(u) => u.log_partition(&input),
        }
    }
}

/// Each hidden unit of `layer` on its own; an error for a categorical hidden layer (a unit's
/// input is a vector there).
fn unit_gammas(layer: &Units) -> Result<Vec<UnitGamma>> {
    let one = |v: &[f32], j: usize| vec![v[j]];
    (0..layer.n_units())
        .map(|j| {
            Ok(match layer {
                Units::DRelu(u) => UnitGamma::DRelu(u.params(j)),
                Units::Bernoulli(u) => UnitGamma::Bernoulli(Bernoulli::new(one(u.bias(), j))?),
                Units::Gaussian(u) => UnitGamma::Gaussian(Gaussian::new(
                    one(u.bias(), j),
                    one(u.variance(), j),
                    u.bounds(),
                )?),
                Units::Relu(u) => UnitGamma::Relu(Relu::new(one(u.gamma(), j), one(u.theta(), j))?),
                Units::Categorical(_) => {
                    return Err(Error::param(
                        "hidden units",
                        "effective couplings need scalar hidden units (bernoulli, gaussian, relu or drelu), not categorical",
                    ))
                }
            })
        })
        .collect()
}

/// The effective couplings of `model` (categorical visible units, scalar hidden units) over
/// the visible state rows `rows` (one-hot), weighted by `weights` (one per row; `None`: equal).
pub fn effective_couplings(
    model: &UnitRbm,
    rows: &[f32],
    weights: Option<&[f64]>,
    params: &CouplingParams,
) -> Result<EffectiveCouplings> {
    let Units::Categorical(visible) = model.visible() else {
        return Err(Error::param(
            "visible units",
            format!(
                "effective couplings need categorical visible units, not {}",
                model.visible().kind()
            ),
        ));
    };
    let gammas = unit_gammas(model.hidden())?;
    let q = visible.q().to_vec();
    let l = q.len();
    if l < 2 {
        return Err(Error::InvalidData(format!(
            "effective couplings need at least 2 sites, the model has {l}"
        )));
    }
    let wv = visible.width();
    if rows.is_empty() || !rows.len().is_multiple_of(wv) {
        return Err(Error::Shape {
            op: "effective_couplings".into(),
            expected: format!("at least one row of {wv} values"),
            found: format!("{} values", rows.len()),
        });
    }
    model.visible().check_states(rows)?;
    let n = rows.len() / wv;
    let a = normalized_weights(weights, n)?;
    let mut offsets = vec![0usize];
    for &k in &q {
        offsets.push(offsets[offsets.len() - 1] + k);
    }
    // the one-hot rows' value index per site
    let codes: Vec<usize> = rows
        .chunks_exact(wv)
        .flat_map(|row| {
            let offsets = &offsets;
            (0..l).map(move |i| {
                offsets[i]
                    + row[offsets[i]..offsets[i + 1]]
                        .iter()
                        .position(|&x| x == 1.0)
                        .unwrap_or(0)
            })
        })
        .collect();
    let m = gammas.len();
    let mut input = vec![0.0f32; n * m];
    model.hidden_input(rows, &mut input)?;
    let w = model.w();
    let pairs: Vec<(usize, usize)> = (0..l)
        .flat_map(|i| (i + 1..l).map(move |j| (i, j)))
        .collect();
    let blocks = pairs
        .par_iter()
        .map(|&(i, j)| {
            let (qi, qj) = (q[i], q[j]);
            let mut sum = vec![0.0f64; qi * qj];
            let mut restricted = vec![0.0f64; n];
            for (mu, gamma) in gammas.iter().enumerate() {
                let wt = |k: usize| f64::from(w[k * m + mu]);
                for (r, x) in restricted.iter_mut().enumerate() {
                    let c = &codes[r * l..(r + 1) * l];
                    *x = f64::from(input[r * m + mu]) - wt(c[i]) - wt(c[j]);
                }
                for (x, p) in points(&restricted, &a, params.bins) {
                    for s in 0..qi {
                        let xa = x + wt(offsets[i] + s);
                        for t in 0..qj {
                            sum[s * qj + t] += p * gamma.at(xa + wt(offsets[j] + t));
                        }
                    }
                }
            }
            zero_sum_gauge(&mut sum, qi, qj);
            sum
        })
        .collect();
    Ok(EffectiveCouplings { q, blocks })
}

/// The points and weights of the expectation over `x` weighted by `a`: every value
/// (`bins == 0`), or the centres of `bins` equal bins between the least and the largest
/// value with each bin's weight (the largest value in the last bin; empty bins left out).
fn points(x: &[f64], a: &[f64], bins: usize) -> Vec<(f64, f64)> {
    if bins == 0 {
        return x.iter().copied().zip(a.iter().copied()).collect();
    }
    let lo = x.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if hi <= lo {
        return vec![(lo, a.iter().sum())];
    }
    let width = (hi - lo) / bins as f64;
    let mut mass = vec![0.0f64; bins];
    for (&v, &p) in x.iter().zip(a) {
        let b = (((v - lo) / width) as usize).min(bins - 1);
        mass[b] += p;
    }
    mass.iter()
        .enumerate()
        .filter(|(_, &p)| p > 0.0)
        .map(|(b, &p)| (lo + (b as f64 + 0.5) * width, p))
        .collect()
}

/// `J(a, b) ← J(a, b) − J(·, b) − J(a, ·) + J(·, ·)` (means) of a `qi × qj` block.
fn zero_sum_gauge(block: &mut [f64], qi: usize, qj: usize) {
    let row: Vec<f64> = block
        .chunks_exact(qj)
        .map(|r| r.iter().sum::<f64>() / qj as f64)
        .collect();
    let col: Vec<f64> = (0..qj)
        .map(|t| (0..qi).map(|s| block[s * qj + t]).sum::<f64>() / qi as f64)
        .collect();
    let all = row.iter().sum::<f64>() / qi as f64;
    for s in 0..qi {
        for t in 0..qj {
            block[s * qj + t] += all - row[s] - col[t];
        }
    }
}

#[cfg(test)]
#[path = "couplings_tests.rs"]
mod tests;
