//! What training a Gaussian visible layer needs beyond the seam (issue 34): standardized
//! data ([`Standardization`], on by default through [`StandardizeParams`]) and gradient-norm
//! clipping ([`clip_gradient`]; Liao et al. 2022, "Gaussian-Bernoulli RBMs without tears",
//! clip the gradient's norm).
//!
//! A model trained on standardized columns `z = (x − m)/s` is written back in the data's
//! units by an exact change of variables ([`Standardization::to_data_units`]): with the
//! energy `Σ z²/(2σ²) − b·z − zᵀWh + U_h(h)`, substituting `z` gives
//! `Σ x²/(2σ²s²) − (b/s + m/(σ²s²))·x − xᵀ(W/s)h + κ·h + U_h(h) + const`,
//! `κ_j = Σ_i m_i W_ij / s_i`: variances `σ²s²`, fields `b/s + m/(σ²s²)`, weights `W/s` and
//! the hidden layer's linear term shifted by `κ`. The constant falls into `ln Z`, so the new
//! model's density is `p_x(x) = p_z(z) / Π s_i` exactly: log-likelihoods, samples and free
//! energies of the written model are in the data's units.

use super::bounded::Bounded;
use super::layer::Units;
use super::model::UnitRbm;
use super::statistics::UnitStats;
use super::Gaussian;
use crate::error::{Error, Result};

/// How `rbm fit` (and any front end) treats the data of a Gaussian visible layer.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct StandardizeParams {
    /// Train a Gaussian visible layer on standardized columns `(x − mean)/sd` and write the
    /// model back in the data's units (exactly the same density; default true). Other
    /// visible types ignore it.
    pub standardize: bool,
    /// Each column's standard deviation is floored at this fraction of the largest column's,
    /// so near-constant columns (MNIST's border pixels) are not blown up (default 0.1).
    pub sd_floor: f64,
}

impl Default for StandardizeParams {
    fn default() -> Self {
        StandardizeParams {
            standardize: true,
            sd_floor: 0.1,
        }
    }
}

/// Per-column mean `m` and floored standard deviation `s` of real data rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Standardization {
    /// Column means.
    pub mean: Vec<f64>,
    /// Column standard deviations, floored (all > 0).
    pub sd: Vec<f64>,
}

impl Standardization {
    /// The columns' means and standard deviations of `rows` (`n` columns, unweighted), each
    /// deviation at least `sd_floor` times the largest (an error if all columns are constant
    /// or `sd_floor` is not in `(0, 1]`).
    pub fn of(rows: &[f32], n: usize, sd_floor: f64) -> Result<Self> {
        if !(sd_floor > 0.0 && sd_floor <= 1.0) {
            return Err(Error::param(
                "sd_floor",
                format!("{sd_floor} is not in (0, 1]"),
            ));
        }
        let (mean, var) = super::check::column_moments(rows, n)?;
        let largest = var.iter().fold(0.0f64, |a, &v| a.max(v)).sqrt();
        if !(largest > 0.0 && largest.is_finite()) {
            return Err(Error::param(
                "data",
                "every column is constant: nothing to standardize (turn standardization off)",
            ));
        }
        let sd = var
            .iter()
            .map(|v| v.sqrt().max(sd_floor * largest))
            .collect();
        Ok(Standardization { mean, sd })
    }

    /// `(x − m)/s` of every row of `rows`.
    pub fn apply(&self, rows: &[f32]) -> Vec<f32> {
        let n = self.mean.len();
        rows.chunks_exact(n)
            .flat_map(|row| {
                row.iter()
                    .zip(self.mean.iter().zip(&self.sd))
                    .map(|(&x, (m, s))| ((f64::from(x) - m) / s) as f32)
            })
            .collect()
    }

    /// `Σ ln s_i`: `ln p_x(x) = ln p_z(z) − Σ ln s_i`.
    pub fn log_jacobian(&self) -> f64 {
        self.sd.iter().map(|s| s.ln()).sum()
    }

    /// The model over `x` whose density is `model`'s over `z = (x − m)/s` (module doc): a
    /// Gaussian visible layer of this many units required; categorical hidden units refused.
    pub fn to_data_units(&self, model: &UnitRbm) -> Result<UnitRbm> {
        let Units::Gaussian(g) = model.visible() else {
            return Err(Error::param(
                "standardize",
                format!(
                    "needs Gaussian visible units, found {}",
                    model.visible().kind()
                ),
            ));
        };
        let n = self.mean.len();
        if g.bias().len() != n {
            return Err(Error::Shape {
                op: "Standardization::to_data_units".into(),
                expected: format!("{n} Gaussian visible units"),
                found: format!("{}", g.bias().len()),
            });
        }
        let wh = model.hidden().width();
        let (s_min, s_max) = self
            .sd
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &s| (a.min(s), b.max(s)));
        let b = g.bounds();
        let bounds = Bounded::new(b.lo * s_min * s_min, b.hi * s_max * s_max)?;
        let mut bias = Vec::with_capacity(n);
        let mut variance = Vec::with_capacity(n);
        let mut w = Vec::with_capacity(n * wh);
        let mut kappa = vec![0.0f64; wh];
        for i in 0..n {
            let (m, s, v) = (self.mean[i], self.sd[i], f64::from(g.variance()[i]));
            bias.push((f64::from(g.bias()[i]) / s + m / (v * s * s)) as f32);
            variance.push(((v * s * s) as f32).clamp(bounds.lo as f32, bounds.hi as f32));
            let row = &model.w()[i * wh..(i + 1) * wh];
            w.extend(row.iter().map(|&x| (f64::from(x) / s) as f32));
            kappa
                .iter_mut()
                .zip(row)
                .for_each(|(k, &x)| *k += m * f64::from(x) / s);
        }
        let visible = Units::Gaussian(Gaussian::new(bias, variance, bounds)?);
        let hidden = shift_linear_term(model.hidden(), &kappa)?;
        UnitRbm::new(visible, hidden, w)
    }
}

/// The layer with `κ·h` added to its energy (`κ` one value per unit): Bernoulli and Gaussian
/// fields `b − κ`, ReLU thresholds `θ + κ`, dReLU `θ₊ + κ`, `θ₋ − κ` (`h = h₊ − h₋`).
fn shift_linear_term(layer: &Units, kappa: &[f64]) -> Result<Units> {
    let n = layer.n_units();
    let mut theta = layer.trainable();
    let mut add = |from: usize, sign: f64| {
        theta[from..from + n]
            .iter_mut()
            .zip(kappa)
            .for_each(|(t, k)| *t += sign * k)
    };
    match layer {
        Units::Bernoulli(_) | Units::Gaussian(_) => add(0, -1.0),
        Units::Relu(_) => add(n, 1.0),
        Units::DRelu(_) => {
            add(2 * n, 1.0);
            add(3 * n, -1.0);
        }
        Units::Categorical(_) => {
            return Err(Error::param(
                "standardize",
                "categorical hidden units have no single linear term to shift",
            ))
        }
    }
    let mut out = layer.clone();
    out.set_trainable(&theta)?;
    Ok(out)
}

/// Scales the gradient `g` (all of `W` and both layers' coordinates) to Euclidean norm
/// `max_norm` when it is larger; `max_norm = 0` leaves it alone. Gives the norm before.
pub fn clip_gradient(g: &mut UnitStats, max_norm: f64) -> f64 {
    let sq: f64 =
        g.w.iter()
            .map(|&x| f64::from(x) * f64::from(x))
            .sum::<f64>()
            + g.visible
                .iter()
                .chain(&g.hidden)
                .map(|x| x * x)
                .sum::<f64>();
    let norm = sq.sqrt();
    if max_norm > 0.0 && norm > max_norm {
        let f = max_norm / norm;
        g.w.iter_mut().for_each(|x| *x = (f64::from(*x) * f) as f32);
        g.visible
            .iter_mut()
            .chain(g.hidden.iter_mut())
            .for_each(|x| *x *= f);
    }
    norm
}

#[cfg(test)]
mod tests {
    use super::super::twins::normal_weights;
    use super::super::{Bernoulli, DRelu, Relu};
    use super::*;

    fn model(hidden: Units) -> UnitRbm {
        let (lo, hi) = super::super::VARIANCE_BOUNDS;
        let g = Gaussian::new(
            vec![0.3, -0.2, 0.1],
            vec![0.5, 1.5, 0.8],
            Bounded::new(lo, hi).unwrap(),
        )
        .unwrap();
        let wh = hidden.width();
        UnitRbm::new(Units::Gaussian(g), hidden, normal_weights(3 * wh, 0.6, 11)).unwrap()
    }

    fn rows() -> Vec<f32> {
        vec![
            2.0, 10.0, -1.0, 3.5, 12.0, -1.1, 1.0, 9.0, -0.9, 2.5, 11.5, -1.0, 0.5, 8.0, -1.05,
        ]
    }

    #[test]
    fn data_units_model_is_the_same_density() {
        let x = rows();
        let st = Standardization::of(&x, 3, 0.1).unwrap();
        let z = st.apply(&x);
        // every column standardized (the third's sd 0.05 is floored at 0.1 of the largest)
        let again = Standardization::of(&z, 3, 1e-9).unwrap();
        for (j, (m, s)) in again.mean.iter().zip(&again.sd).enumerate() {
            assert!(m.abs() < 1e-6, "column {j} mean {m}");
            assert!(j == 2 || (s - 1.0).abs() < 1e-6, "column {j} sd {s}");
        }
        assert!(again.sd[2] < 0.5);
        // exact log-likelihoods: ln p_x(x) = ln p_z(z) − Σ ln s (hidden enumerated)
        let mz = model(Units::Bernoulli(Bernoulli::new(vec![0.2, -0.4]).unwrap()));
        let mx = st.to_data_units(&mz).unwrap();
        let (lz, _) = mz.log_likelihood_exact(&z, None).unwrap();
        let (lx, _) = mx.log_likelihood_exact(&x, None).unwrap();
        assert!(
            (lx - (lz - st.log_jacobian())).abs() < 1e-4,
            "{lx} vs {lz} − {}",
            st.log_jacobian()
        );
        // every hidden type: F_x(x) + Σ ln s − F_z(z) is one constant over the rows
        for hidden in [
            Units::Bernoulli(Bernoulli::new(vec![0.2, -0.4]).unwrap()),
            Units::Gaussian(Gaussian::standard(2).unwrap()),
            Units::Relu(Relu::new(vec![1.0, 2.0], vec![0.3, -0.2]).unwrap()),
            Units::DRelu(
                DRelu::new(
                    vec![1.0, 2.0],
                    vec![1.5, 0.7],
                    vec![0.3, -0.2],
                    vec![0.1, 0.4],
                )
                .unwrap(),
            ),
        ] {
            let kind = hidden.kind();
            let mz = model(hidden);
            let mx = st.to_data_units(&mz).unwrap();
            let fz = mz.neg_free_energies_of(&z).unwrap();
            let fx = mx.neg_free_energies_of(&x).unwrap();
            let c0 = fx[0] - fz[0];
            for (a, b) in fx.iter().zip(&fz) {
                assert!((a - b - c0).abs() < 1e-4, "{kind}: {} vs {c0}", a - b);
            }
        }
    }

    #[test]
    fn refusals_and_clipping() {
        let x = rows();
        assert!(Standardization::of(&x, 3, 0.0).is_err());
        assert!(Standardization::of(&[1.0, 1.0, 1.0, 1.0], 2, 0.1).is_err());
        let st = Standardization::of(&x, 3, 0.1).unwrap();
        let m = model(Units::Bernoulli(Bernoulli::new(vec![0.0; 2]).unwrap()));
        assert!(Standardization::of(&x[..4], 2, 0.1)
            .unwrap()
            .to_data_units(&m)
            .is_err());
        assert!(st.to_data_units(&m).is_ok());
        let mut g = UnitStats {
            w: vec![3.0, 0.0],
            visible: vec![4.0],
            hidden: vec![0.0],
        };
        let before = g.clone();
        assert_eq!(clip_gradient(&mut g, 0.0), 5.0);
        assert_eq!(g, before);
        assert_eq!(clip_gradient(&mut g, 10.0), 5.0);
        assert_eq!(g, before);
        assert_eq!(clip_gradient(&mut g, 1.0), 5.0);
        assert!((g.w[0] - 0.6).abs() < 1e-7 && (g.visible[0] - 0.8).abs() < 1e-12);
    }
}
