//! The log-pseudo-likelihood of an FVBM (Eq. 2.1 of Nguyen & Wood), its gradient and its
//! Hessian with respect to `θ = (b, upper M)`.
//!
//! `P_n(θ) = Σ_i Σ_j [x_ij h_ij − A(h_ij)]` with the local field `h_ij = m_jᵀx_i + b_j` and
//! `A` the unit log-normalizer of the convention (`ln 2cosh` for spin, which is Eq. 2.1 with its
//! `− log 2`, and `ln(1 + e^h)` for binary). With the residual `r_ij = x_ij − E[x_j | h_ij]`
//! and the conditional variance `v_ij`:
//!
//! * `∂P_n/∂b_j = Σ_i r_ij` and `∂P_n/∂m_jk = Σ_i (r_ij x_ik + r_ik x_ij)` (the derivatives
//!   under Eqs. 2.4 and 2.7);
//! * `∂²P_n/∂θ_a∂θ_c = −Σ_i Σ_j v_ij (∂h_ij/∂θ_a)(∂h_ij/∂θ_c)`, where `∂h_ij/∂b_j = 1` and
//!   `∂h_ij/∂m_jk = x_ik`: a sum over units `j` of weighted Gram matrices.
//!
//! The data are held once as [`PlData`]: the distinct rows with their counts, column by
//! column, so every sum runs over distinct rows only.

use super::convention::Convention;
use super::model::{check_data, n_params, upper_index, Fvbm};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::fit::Interrupt;
use rayon::prelude::*;

/// Below this much work (multiply-adds), per-unit loops run on the calling thread: rayon's
/// dispatch would cost more than it saves. Results are identical either way.
const PAR_MIN_WORK: usize = 1 << 16;

/// `f(0), …, f(count − 1)` in order, in parallel when `work` is large enough.
pub(crate) fn map_indices<T: Send>(
    count: usize,
    work: usize,
    f: impl Fn(usize) -> T + Sync + Send,
) -> Vec<T> {
    if work < PAR_MIN_WORK {
        (0..count).map(f).collect()
    } else {
        (0..count).into_par_iter().map(f).collect()
    }
}

/// `f(j, chunk_j)` for every `chunk`-long piece of `v`, in parallel when `work` is large
/// enough.
pub(crate) fn for_each_chunk(
    v: &mut [f64],
    chunk: usize,
    work: usize,
    f: impl Fn(usize, &mut [f64]) + Sync + Send,
) {
    let chunk = chunk.max(1);
    if work < PAR_MIN_WORK {
        v.chunks_mut(chunk).enumerate().for_each(|(j, c)| f(j, c));
    } else {
        v.par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(j, c)| f(j, c));
    }
}

/// Data prepared for pseudo-likelihood work: the distinct rows of a 0/1 dataset, their counts,
/// and their values in a convention, stored column by column.
#[derive(Debug, Clone, PartialEq)]
pub struct PlData {
    convention: Convention,
    d: usize,
    n_samples: usize,
    rows: usize,
    weights: Vec<f64>,
    /// `x[j·rows + u]`: the value of unit `j` in distinct row `u`.
    x: Vec<f64>,
    /// The distinct rows as bits, row-major (`rows × d`), in increasing state index
    /// (variable 0 least significant).
    bits: Vec<u8>,
}

impl PlData {
    /// Prepares a nonempty 0/1 dataset (in the spin convention bit 0 becomes −1).
    pub fn new(data: &Dataset, convention: Convention) -> Result<Self> {
        let d = data.n_vars();
        check_data(d, data, "PlData::new")?;
        data.require_nonempty()?;
        let n = data.n_samples();
        // Each row packed into 64-bit words (variable 64q + r is bit r of word q), then rows
        // sorted by state index (the last word most significant) and counted.
        let words = d.div_ceil(64);
        let mut keys = vec![0u64; n * words];
        for (i, key) in keys.chunks_exact_mut(words).enumerate() {
            for (j, &v) in data.sample(i).iter().enumerate() {
                key[j / 64] |= u64::from(v) << (j % 64);
            }
        }
        let key = |i: usize| &keys[i * words..(i + 1) * words];
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_unstable_by(|&a, &b| key(a).iter().rev().cmp(key(b).iter().rev()));
        let mut bits: Vec<u8> = Vec::new();
        let mut weights: Vec<f64> = Vec::new();
        let mut last: Option<usize> = None;
        for &i in &order {
            if last.is_some_and(|l| key(l) == key(i)) {
                *weights.last_mut().expect("a previous row exists") += 1.0;
            } else {
                bits.extend((0..d).map(|j| ((key(i)[j / 64] >> (j % 64)) & 1) as u8));
                weights.push(1.0);
                last = Some(i);
            }
        }
        let rows = weights.len();
        let mut x = vec![0.0; d * rows];
        for u in 0..rows {
            for j in 0..d {
                x[j * rows + u] = convention.value(bits[u * d + j]);
            }
        }
        Ok(PlData {
            convention,
            d,
            n_samples: n,
            rows,
            weights,
            x,
            bits,
        })
    }

    /// The convention of the values.
    pub fn convention(&self) -> Convention {
        self.convention
    }

    /// Number of units `d`.
    pub fn d(&self) -> usize {
        self.d
    }

    /// Number of samples `n` (with repeats).
    pub fn n_samples(&self) -> usize {
        self.n_samples
    }

    /// Number of distinct rows.
    pub fn n_distinct(&self) -> usize {
        self.rows
    }

    /// How many samples each distinct row stands for.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The values of unit `j` over the distinct rows.
    pub fn column(&self, j: usize) -> &[f64] {
        &self.x[j * self.rows..(j + 1) * self.rows]
    }

    /// Distinct row `u` as bits.
    pub fn row_bits(&self, u: usize) -> &[u8] {
        &self.bits[u * self.d..(u + 1) * self.d]
    }

    /// Fails unless `model` has this data's units and convention.
    pub(crate) fn check_model(&self, model: &Fvbm) -> Result<()> {
        if model.d() != self.d {
            return Err(Error::Shape {
                op: "pseudo-likelihood".into(),
                expected: format!("a model with {} units (the data's variables)", self.d),
                found: format!("{} units", model.d()),
            });
        }
        if model.convention() != self.convention {
            return Err(Error::param(
                "convention",
                format!(
                    "the data were prepared in the {} convention but the model is {}",
                    self.convention,
                    model.convention()
                ),
            ));
        }
        Ok(())
    }
}

/// The local fields `h[j·rows + u] = b_j + m_jᵀx_u` of every unit at every distinct row.
pub(crate) fn fields(model: &Fvbm, data: &PlData) -> Vec<f64> {
    let (d, rows) = (data.d, data.rows);
    let mut h = vec![0.0; d * rows];
    for_each_chunk(&mut h, rows, d * d * rows, |j, hj| {
        hj.iter_mut().for_each(|v| *v = model.b()[j]);
        for (k, &mjk) in model.m_row(j).iter().enumerate() {
            if mjk != 0.0 {
                for (v, &xk) in hj.iter_mut().zip(data.column(k)) {
                    *v += mjk * xk;
                }
            }
        }
    });
    h
}

/// `P_n` from the fields: `Σ_j Σ_u w_u (x_uj h_uj − A(h_uj))`.
pub(crate) fn log_pl_from_fields(data: &PlData, h: &[f64]) -> f64 {
    let (d, rows, conv) = (data.d, data.rows, data.convention);
    let per_unit: Vec<f64> = map_indices(d, 32 * d * rows, |j| {
        let hj = &h[j * rows..(j + 1) * rows];
        data.column(j)
            .iter()
            .zip(hj)
            .zip(&data.weights)
            .map(|((&x, &hv), &w)| w * (x * hv - conv.log_norm(hv)))
            .sum::<f64>()
    });
    per_unit.iter().sum()
}

/// The log-pseudo-likelihood `P_n(θ)` of Eq. 2.1 (summed over samples, not averaged).
///
/// ```
/// use boltzkit::data::Dataset;
/// use boltzkit::fvbm::{pseudo, Convention, Fvbm};
/// let data = Dataset::binary(ndarray::array![[0u8, 1], [1, 1], [0, 0]])?;
/// let pl = pseudo::PlData::new(&data, Convention::Spin)?;
/// // At θ = 0 every conditional is a fair coin: P_n = −n·d·ln 2.
/// let zero = Fvbm::zeros(2, Convention::Spin)?;
/// assert!((pseudo::log_pl(&zero, &pl)? + 6.0 * 2f64.ln()).abs() < 1e-12);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn log_pl(model: &Fvbm, data: &PlData) -> Result<f64> {
    data.check_model(model)?;
    Ok(log_pl_from_fields(data, &fields(model, data)))
}

/// The residuals `r[j·rows + u] = x_uj − E[x_j | h_uj]`.
fn residuals(data: &PlData, h: &[f64]) -> Vec<f64> {
    let conv = data.convention;
    let mut r = vec![0.0; h.len()];
    for_each_chunk(&mut r, data.rows, 32 * h.len(), |j, rj| {
        let hj = &h[j * data.rows..(j + 1) * data.rows];
        for ((rv, &hv), &x) in rj.iter_mut().zip(hj).zip(data.column(j)) {
            *rv = x - conv.mean(hv);
        }
    });
    r
}

/// The gradient from the fields, in the layout of `θ`.
pub(crate) fn gradient_from_fields(data: &PlData, h: &[f64]) -> Vec<f64> {
    let (d, rows) = (data.d, data.rows);
    let r = residuals(data, h);
    let w = &data.weights;
    let col = |v: &[f64], j: usize| -> Vec<f64> { v[j * rows..(j + 1) * rows].to_vec() };
    // Weighted residuals w_u r_uj.
    let wr: Vec<Vec<f64>> = (0..d)
        .map(|j| col(&r, j).iter().zip(w).map(|(a, b)| a * b).collect())
        .collect();
    let mut g = vec![0.0; n_params(d)];
    for j in 0..d {
        g[j] = wr[j].iter().sum();
    }
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let pairs: Vec<(usize, usize)> = (0..d)
        .flat_map(|j| (j + 1..d).map(move |k| (j, k)))
        .collect();
    let vals: Vec<f64> = map_indices(pairs.len(), 2 * pairs.len() * rows, |i| {
        let (j, k) = pairs[i];
        dot(&wr[j], data.column(k)) + dot(&wr[k], data.column(j))
    });
    for (&(j, k), v) in pairs.iter().zip(vals) {
        g[upper_index(d, j, k)] = v;
    }
    g
}

/// `∇P_n(θ)` in the layout of `θ` (biases, then the upper couplings in lexicographic order).
pub fn gradient(model: &Fvbm, data: &PlData) -> Result<Vec<f64>> {
    data.check_model(model)?;
    Ok(gradient_from_fields(data, &fields(model, data)))
}

/// The position in `θ` of the parameter through which unit `k` enters the field of unit `j`:
/// `b_j` when `k = j`, `m_jk` otherwise.
#[inline]
pub(crate) fn partner_index(d: usize, j: usize, k: usize) -> usize {
    match j.cmp(&k) {
        std::cmp::Ordering::Equal => j,
        std::cmp::Ordering::Less => upper_index(d, j, k),
        std::cmp::Ordering::Greater => upper_index(d, k, j),
    }
}

/// The Hessian from the fields, `p × p` row-major (`p = d(d+1)/2`).
pub(crate) fn hessian_from_fields(data: &PlData, h: &[f64]) -> Vec<f64> {
    hessian_until(data, h, None).expect("without an interrupt the Hessian is always built")
}

/// [`hessian_from_fields`], or `None` as soon as `interrupt` is set (polled before every row
/// of every unit's Gram matrix: `O(d·rows)` work apart, well under a second).
pub(crate) fn hessian_until(
    data: &PlData,
    h: &[f64],
    interrupt: Option<&Interrupt>,
) -> Option<Vec<f64>> {
    let (d, rows, conv) = (data.d, data.rows, data.convention);
    let ones = vec![1.0; rows];
    let stop = || interrupt.is_some_and(Interrupt::is_set);
    // For each unit j: G_j[k][l] = Σ_u w_u v_uj z_k z_l with z = x_u, z_j replaced by 1.
    let grams: Vec<Vec<f64>> = map_indices(d, d * d * d * rows, |j| {
        let hj = &h[j * rows..(j + 1) * rows];
        let s: Vec<f64> = hj
            .iter()
            .zip(&data.weights)
            .map(|(&hv, &w)| w * conv.variance(hv))
            .collect();
        let z = |k: usize| if k == j { &ones[..] } else { data.column(k) };
        let mut g = vec![0.0; d * d];
        let mut t = vec![0.0; rows];
        for k in 0..d {
            if stop() {
                return Vec::new();
            }
            for ((tv, &sv), &zk) in t.iter_mut().zip(&s).zip(z(k)) {
                *tv = sv * zk;
            }
            for l in 0..=k {
                let v: f64 = t.iter().zip(z(l)).map(|(a, b)| a * b).sum();
                g[k * d + l] = v;
                g[l * d + k] = v;
            }
        }
        g
    });
    if stop() {
        return None;
    }
    let p = n_params(d);
    let mut hess = vec![0.0; p * p];
    for (j, g) in grams.iter().enumerate() {
        for k in 0..d {
            let a = partner_index(d, j, k);
            for l in 0..d {
                hess[a * p + partner_index(d, j, l)] -= g[k * d + l];
            }
        }
    }
    Some(hess)
}

/// Bytes the dense Hessian of a `d`-unit model needs (`p × p` f64 with `p = d(d+1)/2`, and
/// the negated copy Newton and the sandwich covariance factor), saturating: 2 GiB at d = 126.
pub fn hessian_memory(d: u64) -> u64 {
    let p = d.saturating_mul(d.saturating_add(1)) / 2;
    p.saturating_mul(p).saturating_mul(16)
}

/// `∇²P_n(θ)`, `p × p` row-major with `p = d(d+1)/2`, in the layout of `θ`. It is negative
/// definite whenever the data leave no parameter direction unidentified (strict concavity,
/// Sec. 3 of Nguyen & Wood).
pub fn hessian(model: &Fvbm, data: &PlData) -> Result<Vec<f64>> {
    data.check_model(model)?;
    Ok(hessian_from_fields(data, &fields(model, data)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fvbm::exact;
    use crate::rng::rng_from_seed;

    fn problem(d: usize, n: usize, conv: Convention, seed: u64) -> (Fvbm, PlData) {
        let truth = Fvbm::random(d, 0.5, conv, &mut rng_from_seed(seed)).unwrap();
        let data = exact::sample(&truth, n, &mut rng_from_seed(seed + 100)).unwrap();
        let at = Fvbm::random(d, 0.3, conv, &mut rng_from_seed(seed + 200)).unwrap();
        (at, PlData::new(&data, conv).unwrap())
    }

    /// The definition, sample by sample over the raw rows.
    fn log_pl_by_definition(model: &Fvbm, data: &Dataset) -> f64 {
        let conv = model.convention();
        let mut total = 0.0;
        for row in data.values().outer_iter() {
            let x: Vec<f64> = row.iter().map(|&v| conv.value(v)).collect();
            for j in 0..model.d() {
                let h = model.local_field(j, &x);
                // ln P(x_j | rest) from the two-state normalization.
                let lo = conv.value(0) * h;
                let hi = conv.value(1) * h;
                total += x[j] * h - (lo.exp() + hi.exp()).ln();
            }
        }
        total
    }

    #[test]
    fn distinct_rows_and_counts() {
        let data = Dataset::binary(ndarray::array![[1u8, 0], [0, 1], [1, 0], [0, 0]]).unwrap();
        let pl = PlData::new(&data, Convention::Spin).unwrap();
        assert_eq!(pl.n_samples(), 4);
        assert_eq!(pl.n_distinct(), 3);
        // Sorted by state index: [0,0] (0), [1,0] (1), [0,1] (2).
        assert_eq!(pl.weights(), &[1.0, 2.0, 1.0]);
        assert_eq!(pl.row_bits(1), &[1, 0]);
        assert_eq!(pl.column(0), &[-1.0, 1.0, -1.0]);
        // More than 64 variables: rows differing only in variable 69 stay apart.
        let mut v = ndarray::Array2::<u8>::zeros((5, 70));
        v[[1, 69]] = 1;
        v[[3, 69]] = 1;
        v[[4, 3]] = 1;
        let wide = PlData::new(&Dataset::binary(v).unwrap(), Convention::Binary).unwrap();
        assert_eq!(wide.weights(), &[2.0, 1.0, 2.0]);
        assert_eq!(wide.row_bits(1)[3], 1);
        assert_eq!(wide.row_bits(2)[69], 1);
        let empty = Dataset::binary(ndarray::Array2::zeros((0, 2))).unwrap();
        assert!(PlData::new(&empty, Convention::Spin).is_err());
    }

    #[test]
    fn value_matches_definition_in_both_conventions() {
        for conv in [Convention::Spin, Convention::Binary] {
            let truth = Fvbm::random(5, 0.5, conv, &mut rng_from_seed(1)).unwrap();
            let data = exact::sample(&truth, 400, &mut rng_from_seed(2)).unwrap();
            let pl = PlData::new(&data, conv).unwrap();
            let got = log_pl(&truth, &pl).unwrap();
            let want = log_pl_by_definition(&truth, &data);
            assert!((got - want).abs() < 1e-9 * want.abs(), "{got} vs {want}");
            // Pseudo-likelihood is a property of the distribution: the same in both
            // conventions after the exact conversion.
            let other = match conv {
                Convention::Spin => Convention::Binary,
                Convention::Binary => Convention::Spin,
            };
            let pl2 = PlData::new(&data, other).unwrap();
            let got2 = log_pl(&truth.to_convention(other), &pl2).unwrap();
            assert!((got2 - got).abs() < 1e-9 * got.abs());
            assert!(log_pl(&truth.to_convention(other), &pl).is_err());
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        for conv in [Convention::Spin, Convention::Binary] {
            let (at, pl) = problem(5, 300, conv, 3);
            let g = gradient(&at, &pl).unwrap();
            let theta = at.theta();
            let f = |t: &[f64]| log_pl(&Fvbm::from_theta(5, t, conv).unwrap(), &pl).unwrap();
            let eps = 1e-5;
            for a in 0..theta.len() {
                let mut tp = theta.clone();
                let mut tm = theta.clone();
                tp[a] += eps;
                tm[a] -= eps;
                let fd = (f(&tp) - f(&tm)) / (2.0 * eps);
                assert!(
                    (fd - g[a]).abs() < 1e-5 * (1.0 + g[a].abs()),
                    "{conv} θ_{a}: {fd} vs {}",
                    g[a]
                );
            }
        }
    }

    #[test]
    fn hessian_matches_finite_differences_and_is_negative_definite() {
        for conv in [Convention::Spin, Convention::Binary] {
            let (at, pl) = problem(4, 300, conv, 4);
            let h = hessian(&at, &pl).unwrap();
            let theta = at.theta();
            let p = theta.len();
            let grad = |t: &[f64]| gradient(&Fvbm::from_theta(4, t, conv).unwrap(), &pl).unwrap();
            let eps = 1e-6;
            for a in 0..p {
                let mut tp = theta.clone();
                let mut tm = theta.clone();
                tp[a] += eps;
                tm[a] -= eps;
                let (gp, gm) = (grad(&tp), grad(&tm));
                for c in 0..p {
                    let fd = (gp[c] - gm[c]) / (2.0 * eps);
                    let an = h[c * p + a];
                    assert!(
                        (fd - an).abs() < 1e-5 * (1.0 + an.abs()),
                        "{conv} H[{c},{a}]: {fd} vs {an}"
                    );
                    assert_eq!(h[c * p + a], h[a * p + c]);
                }
            }
            // Negative definite: −H has a Cholesky factor.
            let mut neg: Vec<f64> = h.iter().map(|v| -v).collect();
            assert!(crate::fvbm::dense::cholesky(&mut neg, p).is_ok());
        }
    }
}
