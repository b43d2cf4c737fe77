//! [`UnitType`]: what one layer's units provide to the model, the samplers and the estimators.
//!
//! A layer of `n` independent units of one type has the energy `Σ_i U_i(x_i)`; the model adds
//! the coupling `−xᵀ W y` between its two layers, so given the other layer a unit sees the
//! input `I_i` (its row of `W y`) and `p(x_i | I_i) ∝ e^{−U_i(x_i) + I_i x_i}`. A unit's state
//! is one value, or for a categorical unit with `q` states a one-hot block of `q` values, so
//! the layer's state row has [`UnitType::width`] values and `W` has one row per value.

use crate::error::Result;
use rand::Rng;

/// One layer's unit type: its energy, per-unit log-partition, conditional mean, sampler,
/// state check and base model for annealed importance sampling.
///
/// Rows are `f32` (as the RBM's mini-batches); every log-partition and energy is summed in
/// `f64`. The functions take one row; the batch versions in [`super::Units`] dispatch on the
/// type once per half-step and run these per row.
pub trait UnitType: Clone + std::fmt::Debug + PartialEq + Send + Sync + Sized {
    /// Number of units in the layer.
    fn n_units(&self) -> usize;

    /// Values in one state row (`Σ q_i` for categorical units, else `n_units`).
    fn width(&self) -> usize {
        self.n_units()
    }

    /// The layer's own energy `Σ_i U_i(x_i)` of one state row (no couplings).
    fn energy(&self, x: &[f32]) -> f64;

    /// `Σ_i Γ_i(I_i)` with `Γ_i(I) = ln Σ_x e^{−U_i(x) + I·x}` (an integral for continuous
    /// units): the layer's term in the free energy of the other layer,
    /// `F(y) = E_y(y) − Σ_i Γ_i((W y)_i)`, for one input row.
    fn log_partition(&self, input: &[f32]) -> f64;

    /// `E[x | I]`, the conditional mean of one state row given one input row
    /// (`= ∂Γ/∂I`; for categorical units the states' probabilities).
    fn mean(&self, input: &[f32], out: &mut [f32]);

    /// One draw `x ~ p(x | I)` of one state row.
    fn sample<R: Rng + ?Sized>(&self, input: &[f32], out: &mut [f32], rng: &mut R);

    /// `Ok` when `x` is a state of this layer (0/1, one-hot per site, finite, non-negative,
    /// as the type requires); else an error naming the first bad entry.
    fn check_state(&self, x: &[f32]) -> Result<()>;

    /// The independent layer that AIS anneals from: fitted to the data's moments for the
    /// visible types when `data` (state rows) is given, else a fixed reference of the type.
    fn ais_base(&self, data: Option<&[f32]>) -> Result<Self>;

    /// `out ← (1 − β)·base + β·self` on the energy's natural parameters, so that
    /// `U_out = (1 − β) U_base + β U_self`: the layer of AIS's intermediate model at `β`.
    /// `base` and `out` have `self`'s shape.
    fn interpolate(&self, base: &Self, beta: f64, out: &mut Self);

    /// The trainable coordinates `θ` of the layer, flat, in the type's order (its
    /// documentation says which; a Gaussian's variances as their free [`super::Bounded`]
    /// coordinate `ζ`).
    fn trainable(&self) -> Vec<f64>;

    /// Sets the trainable coordinates (as [`UnitType::trainable`] lays them out), kept inside the
    /// type's domain (a ReLU or dReLU precision at least [`GAMMA_MIN`]).
    fn set_trainable(&mut self, theta: &[f64]);

    /// `out += a · ∂U(x)/∂θ` of one state row (the layer's own energy's derivative).
    fn add_energy_grad(&self, x: &[f32], a: f64, out: &mut [f64]);

    /// `out += a · E[∂U/∂θ | I] = −a · ∂Γ(I)/∂θ` of one input row.
    fn add_mean_energy_grad(&self, input: &[f32], a: f64, out: &mut [f64]);
}

/// The smallest precision `γ` of a ReLU or dReLU unit a training step may leave (a precision
/// at 0 is an improper density).
pub const GAMMA_MIN: f64 = 0.05;
