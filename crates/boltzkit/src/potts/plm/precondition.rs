//! A diagonal preconditioner for the symmetric fit: L-BFGS runs on `y` with `x = d ⊙ y`,
//! `d_k = 1 / sqrt(H_kk)` for an estimate `H_kk` of the objective's curvature in each
//! parameter at the starting point, so that fields and couplings (whose curvatures differ by
//! orders of magnitude: `N_eff p(1 − p)` for a common state's field, `2 λ_h = 0.02` for a field
//! whose state is never seen, `2 λ_J = 32` plus data for a coupling) move on one scale.
//! The objective is unchanged (`f̃(y) = f(d ⊙ y)`, `∇f̃ = d ⊙ ∇f`); only the path is.
//!
//! The estimate, at the starting point (couplings zero, so each conditional is the softmax
//! `p_i` of the fields), from the diagonal of the Hessian of Eq. 7's terms:
//!
//! ```text
//! H[h_i(a)]     = N_i p_i(a)(1 − p_i(a))                              + 2 λ_h
//! H[J_ij(a, b)] = n_ij(·, b) v_i(a)  +  n_ij(a, ·) v_j(b)               + 2 λ_J (+ λ_g / √ε)
//! ```
//!
//! with `v_i(a) = p_i(a)(1 − p_i(a))`, `N_i` the weight of the rows where site `i` is present
//! and `n_ij(·, b)` the weight of those holding state `b` at site `j` with site `i` present
//! (`n_ij(a, ·)` the same with the roles swapped): the exact diagonal there (one pass over
//! the columns of every pair, a fraction of one evaluation).

use super::data::PlmData;
use super::symmetric::{Penalty, GROUP_EPS};

/// The least curvature a scale is taken from (so no scale exceeds 1,000).
const CURVATURE_FLOOR: f64 = 1e-6;

/// The scale `d` (`x = d ⊙ y`) of every parameter in the model's layout (fields by site,
/// then one row-major `q_i × q_j` block per pair `i < j`), for fields `h0` and zero couplings.
pub(crate) fn diagonal_scale(data: &PlmData, h0: &[f64], penalty: Penalty) -> Vec<f64> {
    let q = data.states();
    let l = q.len();
    // Weighted counts per state, and of present rows, per site.
    let mut counts: Vec<Vec<f64>> = q.iter().map(|&k| vec![0.0; k]).collect();
    for (i, ci) in counts.iter_mut().enumerate() {
        for (&c, &w) in data.column(i).iter().zip(&data.weights) {
            if let Some(v) = ci.get_mut(c as usize) {
                *v += w;
            }
        }
    }
    let present: Vec<f64> = counts.iter().map(|c| c.iter().sum()).collect();
    // v_i(a) = p(1 − p) of the softmax of the starting fields.
    let mut var: Vec<Vec<f64>> = Vec::with_capacity(l);
    let mut o = 0;
    for &k in q {
        let h = &h0[o..o + k];
        let m = h.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = h.iter().map(|v| (v - m).exp()).collect();
        let z: f64 = e.iter().sum();
        var.push(e.iter().map(|v| (v / z) * (1.0 - v / z)).collect());
        o += k;
    }
    // A curvature floor keeps a parameter the data never touch (no penalty, one state, a
    // site missing everywhere) at a finite scale.
    let scale = |curvature: f64| 1.0 / curvature.max(CURVATURE_FLOOR).sqrt();
    let mut d = Vec::with_capacity(h0.len() + q.iter().sum::<usize>().pow(2) / 2);
    for i in 0..l {
        for &v in &var[i] {
            d.push(scale(present[i] * v + 2.0 * penalty.lambda_h));
        }
    }
    let reg = 2.0 * penalty.lambda_j + penalty.lambda_group / GROUP_EPS.sqrt();
    // n_ij(b): the weight of rows holding state b at site j with site i present.
    let mut n_ij = Vec::new();
    let mut n_ji = Vec::new();
    for i in 0..l {
        for j in i + 1..l {
            n_ij.clear();
            n_ij.resize(q[j], 0.0);
            n_ji.clear();
            n_ji.resize(q[i], 0.0);
            let (ci, cj) = (data.column(i), data.column(j));
            for ((&a, &b), &w) in ci.iter().zip(cj).zip(&data.weights) {
                let (a, b) = (a as usize, b as usize);
                if a < q[i] && b < q[j] {
                    n_ij[b] += w;
                    n_ji[a] += w;
                }
            }
            for a in 0..q[i] {
                for b in 0..q[j] {
                    d.push(scale(n_ij[b] * var[i][a] + n_ji[a] * var[j][b] + reg));
                }
            }
        }
    }
    d
}
