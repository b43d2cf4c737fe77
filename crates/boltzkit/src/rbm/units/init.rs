//! A new [`UnitRbm`] from data, and the settings of a whole run ([`UnitRbmParams`]: the two
//! layers' types, the hidden units, the initial weights' spread, the trainer's settings), the
//! one schema the CLI's flags and Python's keywords fill.
//!
//! The visible layer starts as the independent model fitted to the (weighted) data's moments
//! — the AIS base model of its type ([`Units::ais_base`]): base-rate Bernoulli biases, smoothed
//! log-frequencies of each site's states (PGM's initialization of a Potts layer), per-column
//! Gaussian means and variances inside the bounds. The hidden layer starts at its type's
//! reference ([`default_layer`]) and `W ~ N(0, sd²)` (Sec. 4.1 of the S-DCP paper).

use super::gaussian_fit::StandardizeParams;
use super::layer::{UnitKind, Units};
use super::model::UnitRbm;
use super::train::UnitTrainParams;
use super::{Bernoulli, DRelu, Gaussian, Relu};
use crate::error::{Error, Result};
use crate::rng::derive_rng;
use rand_distr::{Distribution as _, Normal};

/// Settings of a unit-type RBM run: the layers' types, the hidden units, the initial
/// weights' spread and the trainer's settings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct UnitRbmParams {
    /// The visible units' type (default `bernoulli`; `categorical` reads integer codes or an
    /// alignment, `gaussian` real values).
    pub visible: UnitKind,
    /// The hidden units' type (default `bernoulli`; `relu`, `drelu`, `gaussian`).
    pub hidden: UnitKind,
    /// Hidden units (default 256), ≥ 1.
    pub n_hidden: usize,
    /// Standard deviation of the initial weights, `W ~ N(0, sd²)`. Default 0.01.
    pub weight_sd: f32,
    /// The trainer's settings (algorithm `cd-k` or `pcd-k`, L1², ...).
    #[serde(flatten)]
    pub train: UnitTrainParams,
    /// Standardized data for a Gaussian visible layer (on by default; the model is written
    /// in the data's units).
    #[serde(flatten)]
    pub scaling: StandardizeParams,
}

impl Default for UnitRbmParams {
    fn default() -> Self {
        UnitRbmParams {
            visible: UnitKind::Bernoulli,
            hidden: UnitKind::Bernoulli,
            n_hidden: 256,
            weight_sd: 0.01,
            train: UnitTrainParams::default(),
            scaling: StandardizeParams::default(),
        }
    }
}

/// A hidden layer of `n` units of `kind` at its reference: Bernoulli biases 0, ReLU and dReLU
/// precisions 1 and thresholds 0, Gaussian `N(0, 1)`; categorical hidden units are refused
/// (their number of states is not a setting).
pub fn default_layer(kind: UnitKind, n: usize) -> Result<Units> {
    if n == 0 {
        return Err(Error::param("n_hidden", "a layer needs at least one unit"));
    }
    Ok(match kind {
        UnitKind::Bernoulli => Units::Bernoulli(Bernoulli::new(vec![0.0; n])?),
        UnitKind::Gaussian => Units::Gaussian(Gaussian::standard(n)?),
        UnitKind::Relu => Units::Relu(Relu::new(vec![1.0; n], vec![0.0; n])?),
        UnitKind::Drelu => Units::DRelu(DRelu::new(
            vec![1.0; n],
            vec![1.0; n],
            vec![0.0; n],
            vec![0.0; n],
        )?),
        UnitKind::Categorical => return Err(Error::param(
            "hidden",
            "categorical hidden units are not supported; use bernoulli, relu, drelu or gaussian",
        )),
    })
}

impl UnitRbm {
    /// A model for the visible state rows `data`: `visible` (a layer of the data's shape, any
    /// parameters) refitted to the data's moments, `n_hidden` units of `hidden` at their
    /// reference, `W ~ N(0, weight_sd²)` drawn from [`derive_rng`]`(seed, 0)`.
    ///
    /// ```
    /// use boltzkit::rbm::units::{Categorical, UnitKind, UnitRbm, Units};
    /// let visible = Units::Categorical(Categorical::new(vec![3, 2], vec![0.0; 5])?);
    /// let data = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0];
    /// let m = UnitRbm::init_from_data(visible, UnitKind::Drelu, 4, &data, 0.01, 7)?;
    /// assert_eq!(m.w().len(), 5 * 4);
    /// # Ok::<(), boltzkit::Error>(())
    /// ```
    pub fn init_from_data(
        visible: Units,
        hidden: UnitKind,
        n_hidden: usize,
        data: &[f32],
        weight_sd: f32,
        seed: u64,
    ) -> Result<UnitRbm> {
        if !(weight_sd.is_finite() && weight_sd >= 0.0) {
            return Err(Error::param(
                "weight_sd",
                format!("{weight_sd} is not a finite value ≥ 0"),
            ));
        }
        visible.check_states(data)?;
        if data.is_empty() {
            return Err(Error::InvalidData("no training rows".into()));
        }
        let visible = visible.ais_base(Some(data))?;
        let hidden = default_layer(hidden, n_hidden)?;
        let n = visible.width() * hidden.width();
        let normal =
            Normal::new(0.0f32, weight_sd).map_err(|e| Error::param("weight_sd", e.to_string()))?;
        let mut rng = derive_rng(seed, 0);
        let w = (0..n).map(|_| normal.sample(&mut rng)).collect();
        UnitRbm::new(visible, hidden, w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbm::units::Categorical;

    #[test]
    fn the_visible_layer_starts_at_the_datas_frequencies() {
        let visible = Units::Categorical(Categorical::new(vec![2, 3], vec![0.0; 5]).unwrap());
        // site 0: state 0 three times of four; site 1: states 0, 1, 2, 2
        let rows = [
            [1., 0., 1., 0., 0.],
            [1., 0., 0., 1., 0.],
            [1., 0., 0., 0., 1.],
            [0., 1., 0., 0., 1.],
        ];
        let data: Vec<f32> = rows.concat();
        let m = UnitRbm::init_from_data(visible, UnitKind::Relu, 3, &data, 0.0, 1).unwrap();
        assert!(m.w().iter().all(|&w| w == 0.0));
        // with W = 0 the visible marginal is the independent model: p(site 0 = 0) ≈ 3/4
        let fields = m.visible().trainable();
        let p0 = fields[0].exp() / (fields[0].exp() + fields[1].exp());
        assert!((p0 - 0.75).abs() < 1e-3, "{p0}");
        let p12 = fields[4].exp() / (fields[2].exp() + fields[3].exp() + fields[4].exp());
        assert!((p12 - 0.5).abs() < 1e-3, "{p12}");
        assert!(default_layer(UnitKind::Categorical, 3).is_err());
        assert!(default_layer(UnitKind::Drelu, 0).is_err());
        let again =
            UnitRbm::init_from_data(m.visible().clone(), UnitKind::Bernoulli, 3, &data, 0.1, 9)
                .unwrap();
        assert!(again.w().iter().any(|&w| w != 0.0));
        // the batched log-likelihood is the gradient's enumeration's (weighted too)
        let w = [1.0, 2.0, 0.5, 3.0];
        for weights in [None, Some(&w[..])] {
            let (exact, _) = again.log_likelihood_exact(&data, weights).unwrap();
            let ll = again.log_likelihood(&data, weights, None).unwrap();
            assert!((ll - exact).abs() < 1e-12, "{ll} vs {exact}");
        }
        assert!(again.is_enumerable());
        let bad = UnitRbm::init_from_data(m.visible().clone(), UnitKind::Relu, 3, &data, -1.0, 9);
        assert!(bad.is_err());
    }
}
