//! [`FwModel`]: the infinite RBM of Eq. 5 restricted to finitely many atoms,
//! `log p(v | q, ϑ) = α E_q[softplus(wᵀṽ)] + bᵀv − log Z(q, ϑ)` with `q = Σ_i q_i δ_{w_i}`,
//! where `ṽ = (v, 1)`: the hidden bias is the weight of a constant visible unit (Sec. 2).
//!
//! Mapping to a standard RBM (Prop. 3.1): when every coefficient `α q_i` is 1 the model is the
//! RBM with `W[:, i] = w_i[..n_visible]`, `c_i = w_i[n_visible]` (the constant unit's weight)
//! and the same `b`; [`FwModel::to_rbm`] builds it and model files store exactly that (W, b, c
//! of `boltzkit/rbm/v1`). Otherwise (a fractional RBM, Eq. 11) [`FwModel::proposal_rbm`] is
//! the standard RBM of Eq. 12 with `W[:, i] = c_i w_i[..n_visible]`, `c_i = c_i w_i[n_visible]`.

use crate::error::{Error, Result};
use crate::linalg::softplus_f64;
use crate::rbm::Rbm;

/// Coefficients `α q_i` within this distance of 1 count as a standard RBM.
pub const STANDARD_TOL: f64 = 1e-9;

/// A finite infinite-RBM: atoms `w_i ∈ ℝ^{n_visible + 1}` with weights `q_i` (a distribution),
/// the temperature `α > 0` and the visible bias `b`.
#[derive(Debug, Clone, PartialEq)]
pub struct FwModel {
    n_visible: usize,
    /// Atom-major: atom `i` is `w[i·(n_visible+1) .. (i+1)·(n_visible+1)]`, last entry the
    /// weight of the constant visible unit.
    w: Vec<f64>,
    q: Vec<f64>,
    alpha: f64,
    b: Vec<f64>,
}

impl FwModel {
    /// A model from its parts, checked: `w` holds `q.len()` atoms of `n_visible + 1` values,
    /// `q` is a distribution (nonnegative, sums to 1 within 1e-9), `α > 0`, everything finite.
    pub fn new(
        n_visible: usize,
        w: Vec<f64>,
        q: Vec<f64>,
        alpha: f64,
        b: Vec<f64>,
    ) -> Result<Self> {
        if n_visible == 0 {
            return Err(Error::param(
                "n_visible",
                "at least one visible unit is needed",
            ));
        }
        if q.is_empty() {
            return Err(Error::param(
                "q",
                "at least one atom (hidden unit) is needed",
            ));
        }
        if w.len() != q.len() * (n_visible + 1) || b.len() != n_visible {
            return Err(Error::Shape {
                op: "FwModel::new".into(),
                expected: format!(
                    "{} atom weights and {n_visible} visible biases",
                    q.len() * (n_visible + 1)
                ),
                found: format!("{} and {}", w.len(), b.len()),
            });
        }
        if w.iter().chain(&b).any(|x| !x.is_finite()) {
            return Err(Error::Numerical {
                context: "FwModel::new".into(),
                detail: "a weight or bias is not finite".into(),
            });
        }
        let sum: f64 = q.iter().sum();
        if q.iter().any(|x| x.is_nan() || *x < 0.0) || (sum - 1.0).abs() > 1e-9 {
            return Err(Error::param(
                "q",
                format!("must be a distribution (sum {sum})"),
            ));
        }
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(Error::param(
                "alpha",
                format!("must be finite and > 0, got {alpha}"),
            ));
        }
        Ok(FwModel {
            n_visible,
            w,
            q,
            alpha,
            b,
        })
    }

    /// The model of a standard RBM (Prop. 3.1): `q` uniform over its hidden units, `α = |h|`,
    /// atom `i` = `(W[:, i], c_i)`.
    pub fn from_rbm(rbm: &Rbm) -> Self {
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let mut w = Vec::with_capacity(nh * (nv + 1));
        for i in 0..nh {
            w.extend((0..nv).map(|j| f64::from(rbm.w()[j * nh + i])));
            w.push(f64::from(rbm.c()[i]));
        }
        FwModel {
            n_visible: nv,
            w,
            q: vec![1.0 / nh as f64; nh],
            alpha: nh as f64,
            b: rbm.b().iter().map(|&x| f64::from(x)).collect(),
        }
    }

    /// Number of visible units (the constant unit not counted).
    pub fn n_visible(&self) -> usize {
        self.n_visible
    }

    /// Number of atoms (hidden units).
    pub fn n_units(&self) -> usize {
        self.q.len()
    }

    /// Atom `i`: `n_visible` weights, then the constant unit's weight (the hidden bias).
    pub fn atom(&self, i: usize) -> &[f64] {
        let d = self.n_visible + 1;
        &self.w[i * d..(i + 1) * d]
    }

    /// The weights `q_i` of the atoms.
    pub fn q(&self) -> &[f64] {
        &self.q
    }

    /// The temperature `α`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The visible bias `b`.
    pub fn b(&self) -> &[f64] {
        &self.b
    }

    /// Mutable visible bias (the bias update, Eq. 10).
    pub fn b_mut(&mut self) -> &mut [f64] {
        &mut self.b
    }

    /// The coefficients `c_i = α q_i` of Eq. 11.
    pub fn coefficients(&self) -> Vec<f64> {
        self.q.iter().map(|&q| self.alpha * q).collect()
    }

    /// Whether every `α q_i` is 1 (within [`STANDARD_TOL`]): the model is a standard RBM.
    pub fn is_standard(&self) -> bool {
        self.q
            .iter()
            .all(|&q| (self.alpha * q - 1.0).abs() <= STANDARD_TOL)
    }

    /// The Frank-Wolfe step with `β = 1/t` (Eq. 7, Algorithm 1): `q ← (1 − β) q + β δ_{w*}`
    /// with `t` = the new number of atoms, and `α ← alpha`.
    pub fn insert(&mut self, atom: &[f64], alpha: f64) -> Result<()> {
        if atom.len() != self.n_visible + 1 {
            return Err(Error::Shape {
                op: "FwModel::insert".into(),
                expected: format!("an atom of {} values", self.n_visible + 1),
                found: format!("{}", atom.len()),
            });
        }
        let beta = 1.0 / (self.q.len() + 1) as f64;
        self.q.iter_mut().for_each(|q| *q *= 1.0 - beta);
        self.q.push(beta);
        self.w.extend_from_slice(atom);
        self.set_alpha(alpha)
    }

    /// The away step of Guélat & Marcotte taken to its end (a drop step): `q ← (1 + γ) q − γ
    /// δ_{w_i}` with `γ = q_i / (1 − q_i)`, removing atom `i`, and `α ← alpha`.
    pub fn remove(&mut self, i: usize, alpha: f64) -> Result<()> {
        if i >= self.q.len() || self.q.len() < 2 {
            return Err(Error::param(
                "atom",
                format!("cannot remove atom {i} of {}", self.q.len()),
            ));
        }
        let qi = self.q.remove(i);
        self.q.iter_mut().for_each(|q| *q /= 1.0 - qi);
        let d = self.n_visible + 1;
        self.w.drain(i * d..(i + 1) * d);
        self.set_alpha(alpha)
    }

    /// Sets `α > 0`.
    pub fn set_alpha(&mut self, alpha: f64) -> Result<()> {
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(Error::param(
                "alpha",
                format!("must be finite and > 0, got {alpha}"),
            ));
        }
        self.alpha = alpha;
        Ok(())
    }

    /// Replaces every atom by `atom` with `q = δ_{atom}` (Algorithm 1 at `t = 1`, where
    /// `q_1 = δ_{w*_1}`), `α ← alpha`.
    pub fn reset_to(&mut self, atom: &[f64], alpha: f64) -> Result<()> {
        self.w.clear();
        self.q.clear();
        self.w.extend_from_slice(atom);
        self.q.push(1.0);
        self.set_alpha(alpha)
    }

    /// The standard RBM of Eq. 12: `W[:, i] = c_i w_i[..n_visible]`, `c_i = c_i w_i[n_visible]`
    /// with `c_i = α q_i`. It is the model itself when [`FwModel::is_standard`], and the MH
    /// proposal of Sec. 3.3 otherwise.
    pub fn proposal_rbm(&self) -> Result<Rbm> {
        self.scaled_rbm(|i| self.alpha * self.q[i])
    }

    /// The atoms unscaled as an RBM (`W[:, i] = w_i[..n_visible]`, `c_i = w_i[n_visible]`,
    /// visible bias `b`): its hidden input is `a_i = w_iᵀṽ`.
    pub fn atoms_rbm(&self) -> Result<Rbm> {
        self.scaled_rbm(|_| 1.0)
    }

    fn scaled_rbm(&self, scale: impl Fn(usize) -> f64) -> Result<Rbm> {
        let (nv, nh) = (self.n_visible, self.q.len());
        let mut w = vec![0f32; nv * nh];
        let mut c = vec![0f32; nh];
        for i in 0..nh {
            let s = scale(i);
            let atom = self.atom(i);
            for j in 0..nv {
                w[j * nh + i] = (s * atom[j]) as f32;
            }
            c[i] = (s * atom[nv]) as f32;
        }
        Rbm::new(nv, nh, w, self.b.iter().map(|&x| x as f32).collect(), c)
    }

    /// The equivalent standard RBM (Prop. 3.1); an error unless [`FwModel::is_standard`].
    pub fn to_rbm(&self) -> Result<Rbm> {
        if !self.is_standard() {
            return Err(Error::param(
                "alpha",
                format!(
                    "a fractional RBM (α = {}, {} atoms, α q_i ≠ 1) is not a standard RBM",
                    self.alpha,
                    self.q.len()
                ),
            ));
        }
        self.proposal_rbm()
    }

    /// `log p(v) + log Z = α Σ_i q_i softplus(w_iᵀṽ) + bᵀv` of one 0/1 state (Eq. 5 / Eq. 11),
    /// in `f64` from the definition (the brute-force reference).
    pub fn unnormalized_log_prob(&self, v: &[u8]) -> Result<f64> {
        if v.len() != self.n_visible {
            return Err(Error::Shape {
                op: "FwModel::unnormalized_log_prob".into(),
                expected: format!("{} values", self.n_visible),
                found: format!("{}", v.len()),
            });
        }
        let nv = self.n_visible;
        let mut total: f64 = v
            .iter()
            .zip(&self.b)
            .filter(|(&x, _)| x != 0)
            .map(|(_, &b)| b)
            .sum();
        for (i, &q) in self.q.iter().enumerate() {
            let atom = self.atom(i);
            let a: f64 = atom[nv]
                + v.iter()
                    .zip(atom)
                    .filter(|(&x, _)| x != 0)
                    .map(|(_, &w)| w)
                    .sum::<f64>();
            total += self.alpha * q * softplus_f64(a);
        }
        Ok(total)
    }

    /// The penalty `E_q ‖w‖²` of Eq. 6 (the constant unit's weight included).
    pub fn mean_sq_norm(&self) -> f64 {
        self.q
            .iter()
            .enumerate()
            .map(|(i, &q)| q * self.atom(i).iter().map(|x| x * x).sum::<f64>())
            .sum()
    }
}
