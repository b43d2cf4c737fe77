//! The unit trainer's update rules ([`super::train`]): SGD with momentum, and PGM's ADAM
//! (Tubiana, Cocco & Monasson, eLife 2019; PGM's `RBM.fit(optimizer='ADAM')`: no first moment
//! on `W` and the fields by default, `β₂ = 0.99`, `ε = 10⁻³` added to `√v̂`), PGM's learning-rate
//! decay (constant, then geometric to the last epoch's rate), PGM's gradient saturation, and
//! its zero-sum gauge of categorical visible layers.

use super::layer::Units;
use super::model::UnitRbm;
use super::statistics::UnitStats;
use crate::error::{Error, Result};
use crate::rbm::train::TrainParams;

/// The update rule of a unit-type RBM's training run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitOptimizer {
    /// `velocity ← momentum · velocity + lr · g`, every parameter `+= velocity`.
    #[default]
    Sgd,
    /// ADAM: `m ← β₁m + (1−β₁)g`, `v ← β₂v + (1−β₂)g²`, every parameter
    /// `+= lr · m̂ / (ε + √v̂)` with the bias-corrected `m̂ = m/(1−β₁ᵗ)`, `v̂ = v/(1−β₂ᵗ)`.
    Adam,
}

impl std::fmt::Display for UnitOptimizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UnitOptimizer::Sgd => "sgd",
            UnitOptimizer::Adam => "adam",
        })
    }
}

impl std::str::FromStr for UnitOptimizer {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "sgd" => Ok(UnitOptimizer::Sgd),
            "adam" => Ok(UnitOptimizer::Adam),
            _ => Err(Error::param(
                "optimizer",
                format!("{s:?} is not an optimizer: sgd or adam"),
            )),
        }
    }
}

/// The optimizer's settings, checked ([`OptimSettings::check`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct OptimSettings {
    pub(super) optimizer: UnitOptimizer,
    pub(super) momentum: f64,
    pub(super) beta1: f64,
    pub(super) beta2: f64,
    pub(super) epsilon: f64,
    pub(super) saturate: Option<f64>,
}

impl OptimSettings {
    /// An error naming the first setting out of its range.
    pub(super) fn check(self) -> Result<Self> {
        let unit = |name: &str, x: f64| {
            if (0.0..1.0).contains(&x) {
                Ok(())
            } else {
                Err(Error::param(name, format!("{x} is not in [0, 1)")))
            }
        };
        unit("adam_beta1", self.beta1)?;
        unit("adam_beta2", self.beta2)?;
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(Error::param(
                "adam_epsilon",
                format!("{} is not a finite value > 0", self.epsilon),
            ));
        }
        if let Some(c) = self.saturate {
            if !(c.is_finite() && c > 0.0) {
                return Err(Error::param(
                    "saturate",
                    format!("{c} is not a finite value > 0"),
                ));
            }
        }
        if self.optimizer == UnitOptimizer::Adam && self.momentum != 0.0 {
            return Err(Error::param(
                "momentum",
                format!(
                    "{} is for the sgd optimizer; adam's first moment is adam_beta1",
                    self.momentum
                ),
            ));
        }
        Ok(self)
    }
}

/// PGM's learning-rate decay: the rate of `epoch` (0-based) of `p.epochs`, constant for the
/// first `⌊epochs · after⌋` epochs, then multiplied each epoch by `γ` with
/// `γ^(epochs·(1−after)) = end / start` (`end`: `p.learning_rate_end`, default 1 % of the
/// start), as PGM's `lr_decay` with `decay_after`.
pub(super) fn decayed_rate(p: &TrainParams, after: f64, epoch: usize) -> Result<f64> {
    if !(0.0..1.0).contains(&after) {
        return Err(Error::param(
            "decay_after",
            format!("{after} is not in [0, 1)"),
        ));
    }
    let start = f64::from(p.learning_rate);
    let end = p.learning_rate_end.map_or(0.01 * start, f64::from);
    if !(end.is_finite() && end > 0.0) {
        return Err(Error::param(
            "learning_rate_end",
            format!("{end} is not a rate > 0 for a geometric decay"),
        ));
    }
    let n = p.epochs as f64;
    let gamma = (end / start).powf(1.0 / (n * (1.0 - after)));
    let first = (n * after).floor() as usize;
    let decays = (epoch + 1).saturating_sub(first);
    Ok(start * gamma.powi(decays as i32))
}

/// Each coordinate of `g` clipped to `[−c, c]` (PGM's `saturate`).
pub(super) fn saturate(g: &mut UnitStats, c: f64) {
    let c32 = c as f32;
    g.w.iter_mut().for_each(|x| *x = x.clamp(-c32, c32));
    for v in [&mut g.visible, &mut g.hidden] {
        v.iter_mut().for_each(|x| *x = x.clamp(-c, c));
    }
}

/// The optimizer's state over a run.
pub(super) struct Optimizer {
    s: OptimSettings,
    /// Updates done (ADAM's `t`).
    t: i32,
    /// SGD: the velocity; ADAM: the first moment `m`.
    first: UnitStats,
    /// ADAM: the second moment `v`.
    second: UnitStats,
}

impl Optimizer {
    /// A fresh state for `model`'s parameters.
    pub(super) fn new(model: &UnitRbm, s: OptimSettings) -> Self {
        Optimizer {
            s,
            t: 0,
            first: UnitStats::zeros(model),
            second: UnitStats::zeros(model),
        }
    }

    /// One update of `model` along the ascent direction `g` at rate `lr` (after `g`'s
    /// saturation when set).
    pub(super) fn step(&mut self, model: &mut UnitRbm, g: &mut UnitStats, lr: f64) -> Result<()> {
        if let Some(c) = self.s.saturate {
            saturate(g, c);
        }
        self.t = self.t.saturating_add(1);
        match self.s.optimizer {
            UnitOptimizer::Sgd => {
                sgd_velocity(&mut self.first, g, lr, self.s.momentum);
                apply(model, &self.first)
            }
            UnitOptimizer::Adam => {
                let delta = self.adam_delta(g, lr);
                apply(model, &delta)
            }
        }
    }

    /// ADAM's increments (moments updated in place).
    fn adam_delta(&mut self, g: &UnitStats, lr: f64) -> UnitStats {
        let OptimSettings {
            beta1: b1,
            beta2: b2,
            epsilon: eps,
            ..
        } = self.s;
        let (c1, c2) = (1.0 - b1.powi(self.t), 1.0 - b2.powi(self.t));
        let one = |m: &mut f64, v: &mut f64, g: f64| {
            *m = b1 * *m + (1.0 - b1) * g;
            *v = b2 * *v + (1.0 - b2) * g * g;
            lr * (*m / c1) / (eps + (*v / c2).sqrt())
        };
        let w = (self.first.w.iter_mut().zip(&mut self.second.w).zip(&g.w))
            .map(|((m, v), &g)| {
                let (mut m64, mut v64) = (f64::from(*m), f64::from(*v));
                let d = one(&mut m64, &mut v64, f64::from(g));
                (*m, *v) = (m64 as f32, v64 as f32);
                d as f32
            })
            .collect();
        let layer = |m: &mut [f64], v: &mut [f64], g: &[f64]| -> Vec<f64> {
            (m.iter_mut().zip(v.iter_mut()).zip(g))
                .map(|((m, v), &g)| one(m, v, g))
                .collect()
        };
        let visible = layer(
            &mut self.first.visible,
            &mut self.second.visible,
            &g.visible,
        );
        let hidden = layer(&mut self.first.hidden, &mut self.second.hidden, &g.hidden);
        UnitStats { w, visible, hidden }
    }
}

/// `velocity ← momentum · velocity + lr · g`.
fn sgd_velocity(velocity: &mut UnitStats, g: &UnitStats, lr: f64, momentum: f64) {
    let lr32 = lr as f32;
    let m32 = momentum as f32;
    velocity
        .w
        .iter_mut()
        .zip(&g.w)
        .for_each(|(v, &g)| *v = m32 * *v + lr32 * g);
    for (v, g) in [
        (&mut velocity.visible, &g.visible),
        (&mut velocity.hidden, &g.hidden),
    ] {
        v.iter_mut()
            .zip(g)
            .for_each(|(v, &g)| *v = momentum * *v + lr * g);
    }
}

/// Every parameter `+= delta`'s.
fn apply(model: &mut UnitRbm, delta: &UnitStats) -> Result<()> {
    model
        .w_mut()
        .iter_mut()
        .zip(&delta.w)
        .for_each(|(w, &d)| *w += d);
    let step = |layer: &mut Units, d: &[f64]| {
        let theta: Vec<f64> = layer
            .trainable()
            .iter()
            .zip(d)
            .map(|(t, d)| t + d)
            .collect();
        layer.set_trainable(&theta)
    };
    step(&mut model.visible, &delta.visible)?;
    step(&mut model.hidden, &delta.hidden)
}

/// PGM's zero-sum gauge of a categorical visible layer: each site's fields, and each hidden
/// unit's weights on a site's states, shifted to mean 0 over the site's states. The fields'
/// shift leaves the model unchanged; the weights' shift moves each hidden unit's input by a
/// constant, as PGM's `gauge_adjust_couplings` after every update. An error for other
/// visible layers.
pub(super) fn zero_sum_gauge(model: &mut UnitRbm) -> Result<()> {
    let q = match &model.visible {
        Units::Categorical(c) => c.q().to_vec(),
        other => {
            return Err(Error::param(
                "zero_sum_gauge",
                format!(
                    "applies to categorical visible units; these are {}",
                    other.kind()
                ),
            ))
        }
    };
    let wh = model.hidden().width();
    let mut fields = model.visible.trainable();
    let w = model.w_mut();
    let mut at = 0;
    for &qi in &q {
        let f = &mut fields[at..at + qi];
        let mean = f.iter().sum::<f64>() / qi as f64;
        f.iter_mut().for_each(|x| *x -= mean);
        let block = &mut w[at * wh..(at + qi) * wh];
        for j in 0..wh {
            let mean = (0..qi).map(|a| f64::from(block[a * wh + j])).sum::<f64>() / qi as f64;
            (0..qi).for_each(|a| block[a * wh + j] -= mean as f32);
        }
        at += qi;
    }
    model.visible.set_trainable(&fields)
}

impl UnitRbm {
    /// `W` for an optimizer step (the packed copies invalidated).
    pub(super) fn w_mut(&mut self) -> &mut [f32] {
        self.packed.invalidate();
        &mut self.w
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Categorical, DRelu};
    use super::*;

    fn model() -> UnitRbm {
        let w: Vec<f32> = (0..14).map(|i| (i as f32 * 0.37).sin()).collect();
        UnitRbm::new(
            Units::Categorical(Categorical::new(vec![3, 4], vec![0.1; 7]).unwrap()),
            Units::DRelu(
                DRelu::new(vec![1.0; 2], vec![1.5; 2], vec![0.2; 2], vec![-0.1; 2]).unwrap(),
            ),
            w,
        )
        .unwrap()
    }

    fn settings(optimizer: UnitOptimizer, beta1: f64) -> OptimSettings {
        OptimSettings {
            optimizer,
            momentum: 0.0,
            beta1,
            beta2: 0.99,
            epsilon: 1e-3,
            saturate: None,
        }
    }

    /// With a constant gradient `g` both moments' bias corrections are exact: every step
    /// moves each parameter by `lr · g / (ε + |g|)`, whatever `β₁` is.
    #[test]
    fn adam_steps_match_the_closed_form_on_a_constant_gradient() {
        for beta1 in [0.0, 0.9] {
            let m0 = model();
            let mut m = m0.clone();
            let mut g = UnitStats::zeros(&m);
            g.w.iter_mut()
                .enumerate()
                .for_each(|(i, x)| *x = 0.3 - 0.05 * i as f32);
            g.visible.iter_mut().for_each(|x| *x = -0.02);
            g.hidden.iter_mut().for_each(|x| *x = 0.4);
            let mut opt = Optimizer::new(&m, settings(UnitOptimizer::Adam, beta1).check().unwrap());
            let (lr, steps) = (0.01, 5);
            for _ in 0..steps {
                opt.step(&mut m, &mut g.clone(), lr).unwrap();
            }
            let want = |g: f64| steps as f64 * lr * g / (1e-3 + g.abs());
            for (i, (&a, &b)) in m.w().iter().zip(m0.w()).enumerate() {
                let d = f64::from(a) - f64::from(b);
                assert!((d - want(f64::from(g.w[i]))).abs() < 1e-6, "W[{i}]: {d}");
            }
            let th = m.hidden().trainable();
            let th0 = m0.hidden().trainable();
            for i in 0..th.len() {
                // the layer stores f32
                assert!((th[i] - th0[i] - want(0.4)).abs() < 1e-6, "hidden {i}");
            }
        }
    }

    #[test]
    fn sgd_saturation_and_refusals() {
        let m0 = model();
        let mut m = m0.clone();
        let mut g = UnitStats::zeros(&m);
        g.w[0] = 5.0;
        g.w[1] = -0.5;
        let mut s = settings(UnitOptimizer::Sgd, 0.0);
        s.saturate = Some(1.0);
        let mut opt = Optimizer::new(&m, s.check().unwrap());
        opt.step(&mut m, &mut g, 0.1).unwrap();
        assert!((m.w()[0] - m0.w()[0] - 0.1).abs() < 1e-6);
        assert!((m.w()[1] - m0.w()[1] + 0.05).abs() < 1e-6);
        let bad = |f: fn(&mut OptimSettings)| {
            let mut s = settings(UnitOptimizer::Adam, 0.0);
            f(&mut s);
            s.check().unwrap_err().to_string()
        };
        assert!(bad(|s| s.momentum = 0.9).contains("momentum"));
        assert!(bad(|s| s.beta2 = 1.0).contains("adam_beta2"));
        assert!(bad(|s| s.epsilon = 0.0).contains("adam_epsilon"));
        assert!(bad(|s| s.saturate = Some(-1.0)).contains("saturate"));
        assert_eq!(
            "ADAM".parse::<UnitOptimizer>().unwrap(),
            UnitOptimizer::Adam
        );
        assert!("rmsprop".parse::<UnitOptimizer>().is_err());
    }

    #[test]
    fn decay_is_constant_then_geometric_to_the_end_rate() {
        let p = TrainParams::new().epochs(10).learning_rate(0.005);
        let lr = f64::from(0.005f32);
        let r: Vec<f64> = (0..10).map(|e| decayed_rate(&p, 0.5, e).unwrap()).collect();
        assert!(r[..5].iter().all(|&x| x == lr), "{r:?}");
        assert!((r[9] - 0.01 * lr).abs() < 1e-15, "{r:?}");
        for e in 5..9 {
            assert!((r[e + 1] / r[e] - r[6] / r[5]).abs() < 1e-12);
        }
        let end = TrainParams {
            learning_rate_end: Some(0.001),
            ..p
        };
        let end_rate = decayed_rate(&end, 0.0, 9).unwrap();
        assert!((end_rate - f64::from(0.001f32)).abs() < 1e-15, "{end_rate}");
        assert!(decayed_rate(&p, 1.0, 0).is_err());
    }

    /// The gauge zeroes each site's sums and leaves every conditional `p(v | h)` unchanged
    /// (the fields' and each hidden unit's per-site shifts are constants within a site).
    #[test]
    fn zero_sum_gauge_zeroes_site_sums_and_keeps_visible_conditionals() {
        let m0 = model();
        let mut m = m0.clone();
        zero_sum_gauge(&mut m).unwrap();
        let f = m.visible().trainable();
        for (lo, hi) in [(0, 3), (3, 7)] {
            assert!(f[lo..hi].iter().sum::<f64>().abs() < 1e-12);
            for j in 0..2 {
                let s: f32 = (lo..hi).map(|r| m.w()[r * 2 + j]).sum();
                assert!(s.abs() < 1e-6, "site {lo}..{hi} unit {j}: {s}");
            }
        }
        // p(v_i = a | h) ∝ exp(f_ia + Σ_j W_iaj h_j): differences within a site unchanged
        let h = [0.7f64, -1.3];
        let logit = |m: &UnitRbm, r: usize| {
            m.visible().trainable()[r]
                + (0..2)
                    .map(|j| f64::from(m.w()[r * 2 + j]) * h[j])
                    .sum::<f64>()
        };
        for (a, b) in [(0, 1), (1, 2), (3, 6), (4, 5)] {
            let before = logit(&m0, a) - logit(&m0, b);
            let after = logit(&m, a) - logit(&m, b);
            assert!(
                (before - after).abs() < 1e-5,
                "{a},{b}: {before} vs {after}"
            );
        }
        let bern = UnitRbm::new(
            Units::Bernoulli(super::super::Bernoulli::new(vec![0.0; 2]).unwrap()),
            m0.hidden().clone(),
            vec![0.0; 4],
        )
        .unwrap();
        assert!(zero_sum_gauge(&mut bern.clone()).is_err());
    }
}
