//! The Frank-Wolfe learner's settings: [`FwParams`] (with [`AlphaRule`]) → [`FwParams::check`]
//! → [`CheckedFwParams`] (its fits, the [`Learner`](crate::fit::Learner), are `learner.rs`'s).
//! [`FwParams`] is the settings schema's `"frank-wolfe"` (serialized under the names its
//! fields' docs give; an entry left out takes its default).

use crate::error::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How `α` follows the number of atoms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AlphaRule {
    /// `α_t = t` (Algorithm 1): every `α q_i = 1`, the model is a standard RBM with `t` units.
    Count,
    /// A fractional RBM (Sec. 3.3): `α` grows by 1 with each inserted atom (and shrinks by the
    /// removed atom's `α q_i` on an away step), then takes one gradient-ascent step
    /// `α ← α + step · ∇_α L` (the appendix's `∇_α L`, estimated with the model samples) per
    /// iteration; with `step = 0`, `α` stays `t` and the model stays standard (Gibbs sampling);
    /// once `α ≠ t` the chains use Metropolis-Hastings (Sec. 3.3).
    Free {
        /// Step size of the `α` update, ≥ 0.
        step: f64,
    },
}

/// Unchecked settings of the Frank-Wolfe learner; [`FwParams::check`] validates them.
///
/// ```
/// use boltzkit::rbm::frank_wolfe::{AlphaRule, FwParams};
/// let p: FwParams = boltzkit::settings::from_json(
///     "frank-wolfe",
///     r#"{"bias_learning_rate": 0.2, "free_alpha": 0.5, "fall_tol": null}"#,
/// )?;
/// assert_eq!((p.learning_rate, p.alpha), (0.2, AlphaRule::Free { step: 0.5 }));
/// assert_eq!(p.fall_tol, f64::INFINITY); // null: the guard off
/// assert_eq!(p.max_units, FwParams::default().max_units);
/// assert_eq!(boltzkit::settings::to_json(&p)?["n_chains"], 2000);
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FwParams {
    /// `T`: the most hidden units (default 100), ≥ 1.
    pub max_units: usize,
    /// `λ` of Eqs. 6 and 9 (default 0.1), ≥ 0. Small values (≤ 0.03 on 28×28 images) give
    /// atoms of huge norm that the chains cannot follow.
    pub lambda: f64,
    /// `η`: step size of the bias update, Eq. 10 (default 0.5), > 0. Serialized
    /// `bias_learning_rate`.
    #[serde(rename = "bias_learning_rate")]
    pub learning_rate: f64,
    /// `S`: persistent chains, i.e. model samples per iteration (default 2000), ≥ 1. Keep it
    /// well above `n_visible`: the subproblem can otherwise separate the few samples from
    /// the data. Serialized `n_chains`.
    #[serde(rename = "n_chains")]
    pub samples: usize,
    /// Transitions of every chain before each draw of samples (default 3), ≥ 1.
    pub gibbs_steps: usize,
    /// L-BFGS iterations per subproblem (default 50), ≥ 1.
    pub lbfgs_iterations: usize,
    /// L-BFGS stops when `max |∇f| ≤` this (default 1e-5), ≥ 0. Serialized `lbfgs_tol`.
    #[serde(rename = "lbfgs_tol")]
    pub lbfgs_grad_tol: f64,
    /// Starts of the subproblem per iteration (default 1), ≥ 1; the best `f(w*)` is kept.
    /// The first start is `N(0, init_sd²)`; each further one is the template of a data row
    /// `n` drawn at random: `+1/√(n_visible + 1)` at the row's ones, `−1/√(n_visible + 1)`
    /// at its zeros and at the constant unit. Eq. 9 is not convex,
    /// and L-BFGS from near 0 (where `∇f ≈ 0` once the bias fits) can settle on a poor
    /// local optimum.
    pub subproblem_starts: usize,
    /// Most bias steps per iteration (default 20); 0 turns the bias update off.
    pub bias_steps: usize,
    /// The bias update stops when the RMS over visible units of `∇_b L` (Eq. 10) is below
    /// this (default 0.015, about the sampling noise of 2,000 chains), ≥ 0.
    pub bias_tol: f64,
    /// Standard deviation of the subproblem's random start `w⁰ ~ N(0, sd²)` and of the initial
    /// atom `w′` of Algorithm 1 (default 0.01), ≥ 0.
    pub init_sd: f64,
    /// Away steps (Guélat & Marcotte; default off): after each iteration the atom worst under
    /// Eq. 9 is removed when that raises the objective of Eq. 6.
    pub away_steps: bool,
    /// How `α` is set (default [`AlphaRule::Count`]). Serialized `free_alpha`: `null` for
    /// [`AlphaRule::Count`], the step of [`AlphaRule::Free`].
    #[serde(rename = "free_alpha", with = "alpha_as_step")]
    pub alpha: AlphaRule,
    /// Evaluate the train/validation gap (and call the observers' evaluations) every this
    /// many units (default 10, as `rbm fit`'s `--eval-every`); 0 never.
    pub eval_every: usize,
    /// Stop when the gap has grown past its minimum by more than `gap_tol` (default false:
    /// the size is selected and recorded, and learning goes on to `T`).
    pub early_stop: bool,
    /// How far (nats) the gap may rise above its minimum before it counts as grown (default
    /// 5; on Caltech101 the gap moved by about 2 nats from one evaluation to the next without
    /// any trend up to 200 units).
    pub gap_tol: f64,
    /// The objective guard: while the exact training log-likelihood is cheap (the smaller
    /// layer at most [`GUARD_MAX_UNITS`]), every iteration computes it, and when it stays more
    /// than this many nats below its best for [`FwParams::fall_patience`] iterations in a row
    /// the run stops ([`StopReason::EarlyStopped`]) and returns the best model (default 5;
    /// `∞` turns the guard off). Frank-Wolfe should raise the likelihood as it grows; a
    /// lasting fall means the chains no longer follow the model (too few `gibbs_steps`, too
    /// small `λ`). Measured on Caltech101 (seed 1, 20 units): with `gibbs_steps = 3` the
    /// likelihood dips by up to 25 nats for one or two units and recovers (−363 → −282); with
    /// 1 it falls for good (−350 at 5 units → −835 at 20), and the guard keeps the 5-unit
    /// model. Serialized as a number, `null` for `∞` (JSON has no infinity; `"inf"` reads
    /// as `∞` too).
    #[serde(with = "crate::settings::infinity_as_null")]
    pub fall_tol: f64,
    /// Iterations in a row the guard's fall must last (default 4), ≥ 1.
    pub fall_patience: usize,
    /// The seed (default 0).
    pub seed: u64,
}

/// Largest smaller layer for which the objective guard ([`FwParams::fall_tol`]) computes the
/// exact training log-likelihood at each size evaluation (`2^20` states).
pub const GUARD_MAX_UNITS: usize = 20;

impl Default for FwParams {
    fn default() -> Self {
        FwParams {
            max_units: 100,
            lambda: 0.1,
            learning_rate: 0.5,
            samples: 2000,
            gibbs_steps: 3,
            lbfgs_iterations: 50,
            lbfgs_grad_tol: 1e-5,
            subproblem_starts: 1,
            bias_steps: 20,
            bias_tol: 0.015,
            init_sd: 0.01,
            away_steps: false,
            alpha: AlphaRule::Count,
            eval_every: 10,
            early_stop: false,
            gap_tol: 5.0,
            fall_tol: 5.0,
            fall_patience: 4,
            seed: 0,
        }
    }
}

macro_rules! setter {
    ($(#[$doc:meta] $name:ident: $ty:ty),* $(,)?) => {
        $(#[$doc] pub fn $name(mut self, x: $ty) -> Self { self.$name = x; self })*
    };
}

impl FwParams {
    /// The defaults.
    pub fn new() -> Self {
        FwParams::default()
    }

    setter! {
        /// Sets `T`.
        max_units: usize,
        /// Sets `λ`.
        lambda: f64,
        /// Sets `η`.
        learning_rate: f64,
        /// Sets `S`.
        samples: usize,
        /// Sets the transitions per draw.
        gibbs_steps: usize,
        /// Sets the L-BFGS iteration budget.
        lbfgs_iterations: usize,
        /// Sets the L-BFGS gradient tolerance.
        lbfgs_grad_tol: f64,
        /// Sets the subproblem starts.
        subproblem_starts: usize,
        /// Sets the bias step budget.
        bias_steps: usize,
        /// Sets the bias-gradient tolerance.
        bias_tol: f64,
        /// Sets the initial standard deviation.
        init_sd: f64,
        /// Turns away steps on or off.
        away_steps: bool,
        /// Sets the `α` rule.
        alpha: AlphaRule,
        /// Sets the evaluation period in units.
        eval_every: usize,
        /// Turns early stopping on or off.
        early_stop: bool,
        /// Sets the gap tolerance.
        gap_tol: f64,
        /// Sets the objective guard's tolerance (`f64::INFINITY`: off).
        fall_tol: f64,
        /// Sets the objective guard's patience.
        fall_patience: usize,
        /// Sets the seed.
        seed: u64,
    }

    /// Validates the settings (the error names the setting at fault by its serialized name)
    /// and returns the learner.
    pub fn check(&self) -> Result<CheckedFwParams> {
        for (field, n) in [
            ("max_units", self.max_units),
            ("n_chains", self.samples),
            ("gibbs_steps", self.gibbs_steps),
            ("lbfgs_iterations", self.lbfgs_iterations),
            ("subproblem_starts", self.subproblem_starts),
            ("fall_patience", self.fall_patience),
        ] {
            if n == 0 {
                return Err(Error::param(field, "must be at least 1"));
            }
        }
        for (field, x) in [
            ("lambda", self.lambda),
            ("lbfgs_tol", self.lbfgs_grad_tol),
            ("bias_tol", self.bias_tol),
            ("init_sd", self.init_sd),
            ("gap_tol", self.gap_tol),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(Error::param(
                    field,
                    format!("must be finite and ≥ 0, got {x}"),
                ));
            }
        }
        if self.fall_tol.is_nan() || self.fall_tol < 0.0 {
            return Err(Error::param(
                "fall_tol",
                format!("must be ≥ 0 (∞ turns the guard off), got {}", self.fall_tol),
            ));
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(Error::param(
                "bias_learning_rate",
                format!("must be finite and > 0, got {}", self.learning_rate),
            ));
        }
        if let AlphaRule::Free { step } = self.alpha {
            if !(step.is_finite() && step >= 0.0) {
                return Err(Error::param(
                    "free_alpha",
                    format!("must be finite and ≥ 0, got {step}"),
                ));
            }
        }
        Ok(CheckedFwParams(self.clone()))
    }
}

/// [`FwParams::alpha`] as its serialized `free_alpha`: `null` ([`AlphaRule::Count`]) or the
/// step of [`AlphaRule::Free`].
mod alpha_as_step {
    use super::*;

    pub(super) fn serialize<S: Serializer>(
        alpha: &AlphaRule,
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        match alpha {
            AlphaRule::Count => s.serialize_none(),
            AlphaRule::Free { step } => s.serialize_some(step),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<AlphaRule, D::Error> {
        Ok(match Option::<f64>::deserialize(d)? {
            None => AlphaRule::Count,
            Some(step) => AlphaRule::Free { step },
        })
    }
}

/// [`FwParams`] checked by [`FwParams::check`]: the Frank-Wolfe learner. [`Learner::fit`]
/// grows a model from scratch without validation data; [`CheckedFwParams::fit_validated`]
/// adds the validation set of the size selection and [`CheckedFwParams::fit_from`] a warm
/// start. All run [`FrankWolfe`].
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedFwParams(pub(super) FwParams);

impl CheckedFwParams {
    /// The settings.
    pub fn get(&self) -> &FwParams {
        &self.0
    }
}
