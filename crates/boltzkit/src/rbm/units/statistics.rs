//! The statistics a [`UnitRbm`]'s log-likelihood gradient is made of, and its exact gradient
//! on models small enough to enumerate.
//!
//! With `F(v) = U_v(v) − Γ_h(vᵀW)` and `ln p(v) = −F(v) − ln Z`, every derivative is a
//! difference of one statistic under the data and under the model:
//! `∂ ln p / ∂θ_v = ⟨∂U_v/∂θ_v⟩_model − ∂U_v(v)/∂θ_v`,
//! `∂ ln p / ∂θ_h = ⟨E[∂U_h/∂θ_h | I]⟩_model − E[∂U_h/∂θ_h | vᵀW]` (`∂Γ/∂θ = −E[∂U/∂θ | I]`),
//! `∂ ln p / ∂W = v E[h | v]ᵀ − ⟨v hᵀ⟩_model`. [`UnitStats`] holds the weighted sums of these
//! three over rows of either layer: clamping the visible rows (the data, or a sampler's visible
//! states) the hidden side enters through its conditional expectations, clamping hidden rows
//! (the enumeration of a discrete hidden layer) the visible side does, with the same
//! expectation either way.

use super::model::UnitRbm;
use super::sample_weights::normalized_weights;
use crate::error::{Error, Result};
use crate::linalg::{self, Op};

/// Weighted sums over rows of the derivatives of the energy: `w = Σ a v E[h]ᵀ` (or
/// `Σ a E[v] hᵀ`, `width_v × width_h`), `visible = Σ a ∂U_v/∂θ_v` and
/// `hidden = Σ a ∂U_h/∂θ_h`, each with its conditional expectation on the side not clamped;
/// also the shape of a gradient ([`UnitStats::gradient`]).
#[derive(Debug, Clone, PartialEq)]
pub struct UnitStats {
    /// `W`'s entries.
    pub w: Vec<f32>,
    /// The visible layer's trainable coordinates ([`super::Units::trainable`]).
    pub visible: Vec<f64>,
    /// The hidden layer's.
    pub hidden: Vec<f64>,
}

impl UnitStats {
    /// Zeros shaped like `model`'s parameters.
    pub fn zeros(model: &UnitRbm) -> Self {
        UnitStats {
            w: vec![0.0; model.w().len()],
            visible: vec![0.0; model.visible().trainable().len()],
            hidden: vec![0.0; model.hidden().trainable().len()],
        }
    }

    /// `self += other`.
    pub fn add(&mut self, other: &UnitStats) {
        self.w.iter_mut().zip(&other.w).for_each(|(a, b)| *a += b);
        for (a, b) in [
            (&mut self.visible, &other.visible),
            (&mut self.hidden, &other.hidden),
        ] {
            a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
        }
    }

    /// The gradient of the mean log-likelihood (ascent direction) from the statistics of
    /// the data and of the model (each summed with weights adding to 1).
    pub fn gradient(data: &UnitStats, model: &UnitStats) -> UnitStats {
        let diff = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(a, b)| a - b).collect();
        UnitStats {
            w: data.w.iter().zip(&model.w).map(|(d, m)| d - m).collect(),
            visible: diff(&model.visible, &data.visible),
            hidden: diff(&model.hidden, &data.hidden),
        }
    }
}

impl UnitRbm {
    /// `out ←` the [`UnitStats`] of `rows` of the visible layer (or with `hidden` of the
    /// hidden layer), row `r` weighted by `weights[r]`.
    pub fn statistics(
        &self,
        rows: &[f32],
        weights: &[f64],
        hidden: bool,
        out: &mut UnitStats,
    ) -> Result<()> {
        let (a, b) = if hidden {
            (self.hidden(), self.visible())
        } else {
            (self.visible(), self.hidden())
        };
        let (wa, wb) = (a.width(), b.width());
        if rows.len() != weights.len() * wa {
            return Err(Error::Shape {
                op: "UnitRbm::statistics".into(),
                expected: format!("{} rows of {wa} values (one per weight)", weights.len()),
                found: format!("{} values", rows.len()),
            });
        }
        let n = weights.len();
        let mut input = vec![0.0f32; n * wb];
        self.product(rows, &mut input, hidden);
        let mut mean = vec![0.0f32; n * wb];
        b.means(&input, &mut mean)?;
        let (own, other) = if hidden {
            (&mut out.hidden, &mut out.visible)
        } else {
            (&mut out.visible, &mut out.hidden)
        };
        own.fill(0.0);
        other.fill(0.0);
        a.add_energy_grads(rows, weights, false, own)?;
        b.add_energy_grads(&input, weights, true, other)?;
        for (row, &wt) in mean.chunks_exact_mut(wb).zip(weights) {
            row.iter_mut().for_each(|m| *m *= wt as f32);
        }
        let (wv, wh) = (self.visible().width(), self.hidden().width());
        if hidden {
            // Σ a E[v] hᵀ = (A·M_v)ᵀ H
            linalg::sgemm_par(Op::T, Op::N, wv, wh, n, 1.0, &mean, rows, 0.0, &mut out.w);
        } else {
            linalg::sgemm_par(Op::T, Op::N, wv, wh, n, 1.0, rows, &mean, 0.0, &mut out.w);
        }
        Ok(())
    }

    /// The model's [`UnitStats`] (weights `p`, adding to 1) and `ln Z`, exactly, by
    /// enumerating the discrete layer with fewer states (as
    /// [`UnitRbm::log_partition_exact`]).
    pub fn model_statistics_exact(&self) -> Result<(UnitStats, f64)> {
        let log_z = self.log_partition_exact()?;
        let (hidden, count) = self.enumerated_layer()?;
        let mut total = UnitStats::zeros(self);
        let mut part = UnitStats::zeros(self);
        self.for_each_state_chunk(hidden, count, |rows| {
            let p: Vec<f64> = self
                .neg_free_energies(rows, hidden)?
                .iter()
                .map(|lw| (lw - log_z).exp())
                .collect();
            self.statistics(rows, &p, hidden, &mut part)?;
            total.add(&part);
            Ok(())
        })?;
        Ok((total, log_z))
    }

    /// The exact weighted mean log-likelihood of visible rows `data` (`weights`: one per
    /// row, non-negative, any sum; `None`: equal) and its exact gradient.
    pub fn log_likelihood_exact(
        &self,
        data: &[f32],
        weights: Option<&[f64]>,
    ) -> Result<(f64, UnitStats)> {
        self.visible().check_states(data)?;
        let n = data.len() / self.visible().width();
        let a = normalized_weights(weights, n)?;
        let mut stats = UnitStats::zeros(self);
        self.statistics(data, &a, false, &mut stats)?;
        let (model, log_z) = self.model_statistics_exact()?;
        let neg_f = self.neg_free_energies(data, false)?;
        let ll = neg_f.iter().zip(&a).map(|(f, a)| a * f).sum::<f64>() - log_z;
        Ok((ll, UnitStats::gradient(&stats, &model)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::twins::layer_rows as rows;
    use super::super::{Bernoulli, Bounded, Categorical, DRelu, Gaussian, Relu, Units};
    use super::*;

    fn weights(n: usize, seed: u64) -> Vec<f32> {
        super::super::twins::normal_weights(n, 0.6, seed)
    }

    /// The exact gradient against central differences of the exact log-likelihood, in every
    /// coordinate: `W`, the visible layer's, the hidden layer's.
    fn gradient_matches_finite_differences(v: Units, h: Units, seed: u64) {
        let n = 7;
        let m = UnitRbm::new(v.clone(), h.clone(), weights(v.width() * h.width(), seed)).unwrap();
        let data = rows(&v, n, seed + 1);
        let sample_w: Vec<f64> = (0..n).map(|r| 0.5 + r as f64).collect();
        let (_, g) = m.log_likelihood_exact(&data, Some(&sample_w)).unwrap();
        let ll = |m: &UnitRbm| m.log_likelihood_exact(&data, Some(&sample_w)).unwrap().0;
        let eps = 1e-2;
        let check = |got: f64, plus: f64, minus: f64, what: String| {
            let fd = (plus - minus) / (2.0 * eps);
            assert!(
                (got - fd).abs() < 2e-3 + 1e-2 * fd.abs(),
                "{what}: {got} vs {fd}"
            );
        };
        for k in 0..m.w().len() {
            let at = |d: f32| {
                let mut w = m.w().to_vec();
                w[k] += d;
                ll(&UnitRbm::new(m.visible().clone(), m.hidden().clone(), w).unwrap())
            };
            check(
                f64::from(g.w[k]),
                at(eps as f32),
                at(-eps as f32),
                format!("W[{k}]"),
            );
        }
        for hidden in [false, true] {
            let layer = if hidden { m.hidden() } else { m.visible() };
            let theta = layer.trainable();
            for k in 0..theta.len() {
                let at = |d: f64| {
                    let mut l = layer.clone();
                    let mut t = theta.clone();
                    t[k] += d;
                    l.set_trainable(&t).unwrap();
                    let (v, h) = if hidden {
                        (m.visible().clone(), l)
                    } else {
                        (l, m.hidden().clone())
                    };
                    ll(&UnitRbm::new(v, h, m.w().to_vec()).unwrap())
                };
                let got = if hidden { g.hidden[k] } else { g.visible[k] };
                check(
                    got,
                    at(eps),
                    at(-eps),
                    format!(
                        "{} {} [{k}]",
                        if hidden { "hidden" } else { "visible" },
                        layer.kind()
                    ),
                );
            }
        }
    }

    #[test]
    fn exact_gradients_match_finite_differences_for_every_type() {
        let cat = Units::Categorical(Categorical::new(vec![3, 2], weights(5, 1)).unwrap());
        let ber = |n, s| Units::Bernoulli(Bernoulli::new(weights(n, s)).unwrap());
        let (lo, hi) = super::super::VARIANCE_BOUNDS;
        let gauss = Units::Gaussian(
            Gaussian::new(
                vec![0.2, -0.3],
                vec![0.7, 1.6],
                Bounded::new(lo, hi).unwrap(),
            )
            .unwrap(),
        );
        let relu = Units::Relu(Relu::new(vec![1.0, 1.5, 0.8], vec![0.1, -0.3, 0.4]).unwrap());
        let drelu = Units::DRelu(
            DRelu::new(
                vec![1.0, 1.4, 0.9],
                vec![1.2, 0.7, 1.1],
                vec![0.2, -0.1, 0.5],
                vec![-0.3, 0.4, 0.1],
            )
            .unwrap(),
        );
        gradient_matches_finite_differences(cat.clone(), drelu, 10);
        gradient_matches_finite_differences(cat, ber(3, 2), 20);
        gradient_matches_finite_differences(gauss, ber(3, 3), 30);
        gradient_matches_finite_differences(ber(3, 4), relu, 40);
    }

    #[test]
    fn weights_are_checked_and_normalized() {
        assert_eq!(normalized_weights(None, 4).unwrap(), vec![0.25; 4]);
        assert_eq!(
            normalized_weights(Some(&[1.0, 3.0]), 2).unwrap(),
            vec![0.25, 0.75]
        );
        assert!(normalized_weights(Some(&[1.0]), 2).is_err());
        assert!(normalized_weights(Some(&[1.0, -1.0]), 2).is_err());
        assert!(normalized_weights(Some(&[0.0, 0.0]), 2).is_err());
    }
}
