//! Settings of the pseudo-likelihood engine ([`PlmParams`]), checked into the learner
//! ([`CheckedPlmParams`]) with a memory estimate made before anything is allocated.
//!
//! The objective (plmc's, Ekeberg et al. 2013 Eq. 7 with its Eq. 9 penalty, un-normalized by
//! the number of sequences) is, to minimize,
//!
//! ```text
//! f(h, J) = − Σ_s w_s Σ_i ln p(s_i | s_\i)  +  λ_h Σ_i ‖h_i‖²  +  λ_J Σ_{i<j} ‖J_ij‖²_F
//!           + λ_g Σ_{i<j} sqrt(ε + ‖J_ij‖²_F)          (optional group L1, ε = 0.001)
//! ```
//!
//! with `p(a | s_\i) ∝ exp(h_i(a) + Σ_{j≠i} J_ij(a, s_j))`. Symmetric PLM minimizes it jointly
//! (plmc); asymmetric PLM minimizes each site's term with its own copy of the couplings and
//! averages the two copies of each pair in the zero-sum gauge (PlmDCA's default).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Which pseudo-likelihood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PlmMode {
    /// One joint objective over all parameters (plmc, CCMpred, GREMLIN).
    #[default]
    Symmetric,
    /// Each site's conditional fitted on its own; the two estimates of each coupling block
    /// averaged in the zero-sum gauge (PlmDCA's asymmetric default).
    Asymmetric,
}

/// How the couplings' L2 weight `λ_J` scales with the model's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LambdaScale {
    /// `λ_J` as given (plmc's `-le`: 16 for DCA).
    #[default]
    Fixed,
    /// `λ_J · (q − 1)(L − 1)`, `q` the most states of any site (EVcouplings and GREMLIN,
    /// with `λ_J = 0.01`).
    StatesAndSites,
    /// `λ_J · (L − 1)` (CCMpred, with `λ_J = 0.2`).
    Sites,
}

/// Settings of the pseudo-likelihood engine. Defaults: symmetric PLM with plmc's DCA penalty
/// (`λ_J = 16`, `λ_h = 0.01`), stopping at plmc's L-BFGS test `‖∇f‖ ≤ 10⁻³ max(1, ‖x‖)`.
///
/// ```
/// use boltzkit::potts::plm::{LambdaScale, PlmParams};
/// let p = PlmParams::default();
/// assert_eq!((p.lambda_j, p.lambda_h), (16.0, 0.01));
/// assert_eq!(PlmParams::evcouplings().lambda_j_for(20, 100), 0.01 * 19.0 * 99.0);
/// let json = serde_json::to_string(&p).unwrap();
/// assert_eq!(serde_json::from_str::<PlmParams>(&json).unwrap(), p);
/// # let _ = LambdaScale::Fixed;
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlmParams {
    /// Symmetric (joint) or asymmetric (per-site) pseudo-likelihood.
    pub mode: PlmMode,
    /// L2 weight of the fields, `λ_h ≥ 0` (plmc's `-lh`).
    pub lambda_h: f64,
    /// L2 weight of the couplings, `λ_J ≥ 0`, before [`PlmParams::lambda_scale`].
    pub lambda_j: f64,
    /// How `λ_J` scales with the number of sites and states.
    pub lambda_scale: LambdaScale,
    /// Group-L1 weight `λ_g ≥ 0` of each pair's couplings (plmc's `-lg`); 0 is off.
    pub lambda_group: f64,
    /// A state treated as missing at every site (the gap, plmc's `-g`): the model has one
    /// state fewer per site and positions holding it neither are predicted nor predict.
    pub gap_state: Option<u8>,
    /// Most L-BFGS iterations (per site in asymmetric mode).
    pub max_iterations: usize,
    /// Stop when `‖∇f‖₂ ≤ grad_tol · max(1, ‖x‖₂)` (plmc's and liblbfgs' test, 10⁻³).
    pub grad_tol: f64,
    /// Also stop (converged) when the objective fell by at most `objective_tol · |f|` over the
    /// last [`PlmParams::objective_window`] iterations (liblbfgs' `delta`/`past` test, which
    /// plmc leaves off); 0 turns it off. The gradient test alone is slow to meet on protein
    /// families: the fields of states a column never shows have almost no curvature at
    /// plmc's `λ_h = 0.01` and keep `‖∇f‖` up long after the couplings (and so the scores)
    /// have settled. Symmetric fits only.
    pub objective_tol: f64,
    /// Iterations over which [`PlmParams::objective_tol`]'s decrease is measured.
    pub objective_window: usize,
    /// L-BFGS correction pairs kept (liblbfgs' default, plmc's, is 6).
    pub lbfgs_memory: usize,
    /// Refuse a fit whose estimated memory exceeds this many bytes (default 8 GiB).
    pub memory_limit: u64,
}

impl Default for PlmParams {
    fn default() -> Self {
        PlmParams {
            mode: PlmMode::Symmetric,
            lambda_h: 0.01,
            lambda_j: 16.0,
            lambda_scale: LambdaScale::Fixed,
            lambda_group: 0.0,
            gap_state: None,
            max_iterations: 2_000,
            grad_tol: 1e-3,
            objective_tol: 0.0,
            objective_window: 10,
            lbfgs_memory: 6,
            memory_limit: 8 << 30,
        }
    }
}

impl PlmParams {
    /// plmc's settings for DCA (`-le 16 -lh 0.01`), the default.
    pub fn plmc() -> Self {
        PlmParams::default()
    }

    /// EVcouplings' and GREMLIN's: `λ_J = 0.01 (q − 1)(L − 1)`, `λ_h = 0.01`.
    pub fn evcouplings() -> Self {
        PlmParams {
            lambda_j: 0.01,
            lambda_scale: LambdaScale::StatesAndSites,
            ..PlmParams::default()
        }
    }

    /// CCMpred's: `λ_J = 0.2 (L − 1)`, `λ_h = 0.01`.
    pub fn ccmpred() -> Self {
        PlmParams {
            lambda_j: 0.2,
            lambda_scale: LambdaScale::Sites,
            ..PlmParams::default()
        }
    }

    /// The effective `λ_J` for a model with at most `q` states per site and `l` sites.
    pub fn lambda_j_for(&self, q: usize, l: usize) -> f64 {
        let (q1, l1) = (q.saturating_sub(1) as f64, l.saturating_sub(1) as f64);
        match self.lambda_scale {
            LambdaScale::Fixed => self.lambda_j,
            LambdaScale::StatesAndSites => self.lambda_j * q1 * l1,
            LambdaScale::Sites => self.lambda_j * l1,
        }
    }

    /// Checks every setting (the error names the field) and returns the learner.
    pub fn check(&self) -> Result<CheckedPlmParams> {
        for (field, v) in [
            ("lambda_h", self.lambda_h),
            ("lambda_j", self.lambda_j),
            ("lambda_group", self.lambda_group),
            ("grad_tol", self.grad_tol),
            ("objective_tol", self.objective_tol),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::param(
                    field,
                    format!("must be a finite number ≥ 0, got {v}"),
                ));
            }
        }
        if self.max_iterations == 0 {
            return Err(Error::param("max_iterations", "must be at least 1"));
        }
        if self.objective_window == 0 {
            return Err(Error::param("objective_window", "must be at least 1"));
        }
        if self.lbfgs_memory == 0 {
            return Err(Error::param("lbfgs_memory", "must be at least 1"));
        }
        Ok(CheckedPlmParams(self.clone()))
    }

    /// Bytes a fit of `n` sequences over sites with `q` states each (after any gap is
    /// removed) needs at its peak: the coded data, the parameters, gradient and L-BFGS
    /// vectors, and the engine's per-site tables.
    pub fn memory_estimate(&self, n: u64, q: &[usize]) -> u64 {
        let (n_h, n_j) = super::super::parameter_count(q);
        let p = n_h + n_j;
        let l = q.len() as u64;
        let data = n * (l + 8);
        // Per-site tables: every ordered pair (i, j), rows padded, a zero row per j.
        let full: u64 = {
            let total_q1: u64 = q.iter().map(|&k| k as u64 + 1).sum();
            q.iter()
                .map(|&k| super::kernel::padded(k) as u64 * (total_q1 - (k as u64 + 1)))
                .sum()
        };
        let per_fit = match self.mode {
            // x, g and 4 work vectors in f64, the L-BFGS pairs in f32; the f32 tables W and
            // their gradient G.
            PlmMode::Symmetric => 8 * p * 6 + 4 * p * 2 * self.lbfgs_memory as u64 + 4 * 2 * full,
            // The model, every site's own copy of its couplings (2 n_J), and per running
            // site its L-BFGS vectors and two padded f32 tables.
            PlmMode::Asymmetric => {
                let threads = rayon::current_num_threads() as u64;
                let site = (2 * n_j + n_h) / l.max(1);
                8 * p
                    + 8 * 2 * n_j
                    + threads
                        * (8 * site * (2 * self.lbfgs_memory as u64 + 6) + 8 * full / l.max(1))
            }
        };
        data.saturating_add(per_fit)
    }
}

/// Checked [`PlmParams`]: the pseudo-likelihood learner ([`crate::fit::Learner`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedPlmParams(pub(crate) PlmParams);

impl CheckedPlmParams {
    /// The settings.
    pub fn params(&self) -> &PlmParams {
        &self.0
    }
}
