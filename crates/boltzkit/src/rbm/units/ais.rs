//! Annealed importance sampling over the seam: forward AIS of `ln Z` ([`ais_log_partition`])
//! and RAISE per data row ([`raise_log_likelihoods`]), for a [`UnitRbm`] of any unit types.
//!
//! The path (see ARCHITECTURE.md, "RBM unit types"): at inverse temperature `β` each layer is
//! its type's [`Units::interpolate`] between the AIS base layer ([`Units::ais_base`]: visible
//! types fitted to the data's moments, a Bernoulli hidden layer uniform, ReLU and dReLU
//! keeping their own energy) and the model's, and the couplings are `β W`, so
//! `ln p*_β(v) = −U_v^β(v) + Σ_j Γ_j^β(β (vᵀW)_j)` and at `β = 0` the two layers are the
//! independent base layers with `ln Z_0 = Σ Γ_base(0)` of both. A step at `β` is a block Gibbs
//! transition of that model (`h ~ p_β(h | v)`, `v ~ p_β(v | h)`), which leaves `p_β` invariant.
//!
//! - Forward: chains start with exact draws of the base visible layer; chain weights
//!   `Σ_k [ln p*_k(v_k) − ln p*_{k−1}(v_k)]` have `E[w] = Z / Z_0` (Neal 2001), summarized as
//!   the binary RBM's ([`crate::rbm::ais::AisEstimate`]: `ln Ẑ`, the delta-method error).
//! - RAISE (Burda, Grosse & Salakhutdinov 2015, as [`crate::rbm::raise`]): from a data row
//!   `v_K = v` down to `β = 0`, `v_{k−1} ~ T_k(· | v_k)`, and
//!   `ln p̂(v) = ln p*_K(v) − ln Z_0 + Σ_{k<K} [ln p*_k(v_k) − ln p*_{k+1}(v_k)]`; with `M`
//!   chains per row `ln mean_m w_m`. In expectation it is below the annealing model's
//!   log-likelihood, while forward AIS's log-likelihood is above the model's: the bracket.
//!
//! Chain `i` draws from `derive_rng(seed, i)` (RAISE: `derive_rng(derive_seed(seed, r), m)`
//! for chain `m` of row `r`); the layers' batch operations run in fixed blocks of rows, so an
//! estimate is the same bits for any thread count.

use super::layer::Units;
use super::model::UnitRbm;
use crate::error::{Error, Result};
use crate::fit::Interrupt;
use crate::linalg::log_sum_exp;
use crate::rbm::ais::{summarize_log_weights, AisEstimate, AisSchedule};
use crate::rng::{derive_rng, derive_seed, BkRng};

/// The annealing path of a model: its base layers, `ln Z_0`, and scratch layers for `β`.
struct Path<'m> {
    model: &'m UnitRbm,
    base_v: Units,
    base_h: Units,
    log_z0: f64,
    v_at: Units,
    h_at: Units,
}

impl<'m> Path<'m> {
    /// The path from the base layers (the visible one fitted to `base_data` when given).
    fn new(model: &'m UnitRbm, base_data: Option<&[f32]>) -> Result<Self> {
        let base_v = model.visible().ais_base(base_data)?;
        let base_h = model.hidden().ais_base(None)?;
        let mut log_z0 = 0.0;
        for layer in [&base_v, &base_h] {
            let mut g = [0.0f64];
            layer.log_partitions(&vec![0.0; layer.width()], &mut g)?;
            log_z0 += g[0];
        }
        Ok(Path {
            model,
            v_at: base_v.clone(),
            h_at: base_h.clone(),
            base_v,
            base_h,
            log_z0,
        })
    }

    /// Sets the scratch layers to the model at `beta`.
    fn at(&mut self, beta: f64) -> Result<()> {
        self.model
            .visible()
            .interpolate(&self.base_v, beta, &mut self.v_at)?;
        self.model
            .hidden()
            .interpolate(&self.base_h, beta, &mut self.h_at)
    }

    /// `ln p*_β(v)` of each row of `v` whose hidden input `vᵀW` is `input` (the scratch
    /// layers set to `beta` first), into `out`.
    fn log_weights(&mut self, beta: f64, v: &[f32], input: &[f32], out: &mut [f64]) -> Result<()> {
        self.at(beta)?;
        let scaled: Vec<f32> = input
            .iter()
            .map(|&x| (beta * f64::from(x)) as f32)
            .collect();
        let n = out.len();
        let mut energy = vec![0.0f64; n];
        self.v_at.energies(v, &mut energy)?;
        self.h_at.log_partitions(&scaled, out)?;
        for (o, e) in out.iter_mut().zip(&energy) {
            *o -= e;
        }
        Ok(())
    }

    /// One block Gibbs step at `beta` of the chains `v`, whose hidden input is `input`.
    fn step(
        &mut self,
        beta: f64,
        v: &mut [f32],
        input: &[f32],
        h: &mut [f32],
        rngs: &mut [BkRng],
    ) -> Result<()> {
        self.at(beta)?;
        let scale = |x: &mut [f32]| {
            x.iter_mut()
                .for_each(|x| *x = (beta * f64::from(*x)) as f32)
        };
        let mut scaled = input.to_vec();
        scale(&mut scaled);
        self.h_at.sample(&scaled, h, rngs)?;
        let mut input_v = vec![0.0f32; v.len()];
        self.model.visible_input(h, &mut input_v)?;
        scale(&mut input_v);
        self.v_at.sample(&input_v, v, rngs)
    }
}

/// Refuses an empty schedule or no chains.
fn check(what: &str, chains: usize) -> Result<()> {
    if chains == 0 {
        return Err(Error::param(
            "chains",
            format!("{what} needs at least one chain"),
        ));
    }
    Ok(())
}

/// Forward AIS of `ln Z` of `model` with `n_chains` chains over `schedule`, the visible base
/// layer fitted to `base_data` (visible state rows; `None`: the type's fixed reference),
/// stopping with [`Error::Interrupted`] at the next temperature once `interrupt` is set.
///
/// ```
/// use boltzkit::rbm::ais::AisSchedule;
/// use boltzkit::rbm::units::{ais_log_partition, Categorical, DRelu, UnitRbm, Units};
/// let visible = Units::Categorical(Categorical::new(vec![3, 2], vec![0.2, 0.0, -0.1, 0.3, 0.0])?);
/// let hidden = Units::DRelu(DRelu::new(vec![1.0], vec![2.0], vec![0.5], vec![-0.5])?);
/// let m = UnitRbm::new(visible, hidden, vec![0.5, -0.5, 0.0, 1.0, -1.0])?;
/// let est = ais_log_partition(&m, None, &AisSchedule::linear(100)?, 200, 1, None)?;
/// assert!((est.log_z - m.log_partition_exact()?).abs() < 0.05);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn ais_log_partition(
    model: &UnitRbm,
    base_data: Option<&[f32]>,
    schedule: &AisSchedule,
    n_chains: usize,
    seed: u64,
    interrupt: Option<&Interrupt>,
) -> Result<AisEstimate> {
    check("AIS", n_chains)?;
    let mut path = Path::new(model, base_data)?;
    let (wv, wh) = (model.visible().width(), model.hidden().width());
    let mut rngs: Vec<BkRng> = (0..n_chains as u64).map(|i| derive_rng(seed, i)).collect();
    let mut v = vec![0.0f32; n_chains * wv];
    path.base_v
        .sample(&vec![0.0; n_chains * wv], &mut v, &mut rngs)?;
    let (mut h, mut input) = (vec![0.0f32; n_chains * wh], vec![0.0f32; n_chains * wh]);
    let (mut now, mut before) = (vec![0.0f64; n_chains], vec![0.0f64; n_chains]);
    let mut log_w = vec![0.0f64; n_chains];
    let betas = schedule.betas();
    for k in 1..betas.len() {
        if interrupt.is_some_and(Interrupt::is_set) {
            return Err(Error::Interrupted {
                what: "forward AIS".into(),
            });
        }
        model.hidden_input(&v, &mut input)?;
        path.log_weights(betas[k], &v, &input, &mut now)?;
        path.log_weights(betas[k - 1], &v, &input, &mut before)?;
        for ((w, a), b) in log_w.iter_mut().zip(&now).zip(&before) {
            *w += a - b;
        }
        if k + 1 < betas.len() {
            path.step(betas[k], &mut v, &input, &mut h, &mut rngs)?;
        }
    }
    summarize_log_weights(log_w, path.log_z0)
}

/// RAISE's `ln p̂(v)` of each visible state row of `rows` with `chains` chains per row over
/// `schedule` (the same path as [`ais_log_partition`] with the same `base_data`), stopping
/// with [`Error::Interrupted`] once `interrupt` is set.
pub fn raise_log_likelihoods(
    model: &UnitRbm,
    base_data: Option<&[f32]>,
    schedule: &AisSchedule,
    rows: &[f32],
    chains: usize,
    seed: u64,
    interrupt: Option<&Interrupt>,
) -> Result<Vec<f64>> {
    check("RAISE", chains)?;
    model.visible().check_states(rows)?;
    let mut path = Path::new(model, base_data)?;
    let (wv, wh) = (model.visible().width(), model.hidden().width());
    let n_rows = rows.len() / wv;
    let n = n_rows * chains;
    let mut rngs = Vec::with_capacity(n);
    let mut v = Vec::with_capacity(n * wv);
    for r in 0..n_rows {
        for m in 0..chains as u64 {
            rngs.push(derive_rng(derive_seed(seed, r as u64), m));
            v.extend_from_slice(&rows[r * wv..(r + 1) * wv]);
        }
    }
    let (mut h, mut input) = (vec![0.0f32; n * wh], vec![0.0f32; n * wh]);
    let (mut lo, mut hi) = (vec![0.0f64; n], vec![0.0f64; n]);
    let betas = schedule.betas();
    let k_last = betas.len() - 1;
    model.hidden_input(&v, &mut input)?;
    let mut log_w = vec![0.0f64; n];
    path.log_weights(1.0, &v, &input, &mut log_w)?;
    for k in (1..=k_last).rev() {
        if interrupt.is_some_and(Interrupt::is_set) {
            return Err(Error::Interrupted {
                what: "RAISE".into(),
            });
        }
        path.step(betas[k], &mut v, &input, &mut h, &mut rngs)?;
        model.hidden_input(&v, &mut input)?;
        path.log_weights(betas[k - 1], &v, &input, &mut lo)?;
        path.log_weights(betas[k], &v, &input, &mut hi)?;
        for ((w, a), b) in log_w.iter_mut().zip(&lo).zip(&hi) {
            *w += a - b;
        }
    }
    Ok(log_w
        .chunks_exact(chains)
        .map(|w| log_sum_exp(w) - (chains as f64).ln() - path.log_z0)
        .collect())
}

#[cfg(test)]
#[path = "ais_tests.rs"]
mod tests;
