//! The whole runs both front ends make on a unit-type RBM (the CLI's `rbm fit / eval / sample
//! --visible-units`, Python's `RBM(visible=, hidden=)`), written once: the visible layer
//! shaped for a data set ([`visible_layer`]), integer codes as state rows and back
//! ([`Units::rows_from_codes`], [`Units::codes_from_rows`]), a fit from state rows
//! ([`fit_unit_rbm`]: standardization of Gaussian rows, the start model, training, the model
//! written back in the data's units; [`continue_unit_rbm`] from a model), the file's settings metadata ([`fit_metadata`]) and
//! forward AIS with a likelihood estimate's settings ([`ais_with`]).

use super::ais::ais_log_partition;
use super::chains::UnitChains;
use super::gaussian_fit::Standardization;
use super::init::UnitRbmParams;
use super::layer::{UnitKind, Units};
use super::model::UnitRbm;
use super::train::{train, UnitFit};
use super::{Bernoulli, Categorical, Gaussian};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::fit::Interrupt;
use crate::rbm::ais::AisEstimate;
use crate::rbm::eval_settings::EvalParams;
use crate::rng::{derive_rng, derive_seed};
use std::collections::BTreeMap;

/// A visible layer of `kind` over `n_vars` columns, parameters at 0 (a fit refits them):
/// categorical sites with `states[i]` states each (their cardinalities: required).
pub fn visible_layer(kind: UnitKind, n_vars: usize, states: Option<&[u32]>) -> Result<Units> {
    Ok(match kind {
        UnitKind::Bernoulli => Units::Bernoulli(Bernoulli::new(vec![0.0; n_vars])?),
        UnitKind::Categorical => {
            let states = states.ok_or_else(|| {
                Error::param("visible", "categorical units need the states of each site")
            })?;
            if states.len() != n_vars {
                return Err(Error::Shape {
                    op: "visible_layer".into(),
                    expected: format!("the states of each of {n_vars} sites"),
                    found: format!("{} numbers", states.len()),
                });
            }
            let q: Vec<usize> = states.iter().map(|&c| c as usize).collect();
            let width = q.iter().sum();
            Units::Categorical(Categorical::new(q, vec![0.0; width])?)
        }
        UnitKind::Gaussian => Units::Gaussian(Gaussian::standard(n_vars)?),
        UnitKind::Relu | UnitKind::Drelu => {
            return Err(Error::param(
                "visible",
                format!("visible units are bernoulli, categorical or gaussian, not {kind}"),
            ))
        }
    })
}

impl Units {
    /// The state rows of integer codes: 0/1 values of a Bernoulli layer, one-hot rows of a
    /// categorical layer (state `k` of a site as the code `k`), checked.
    pub fn rows_from_codes(&self, codes: &Dataset) -> Result<Vec<f32>> {
        let rows = match self {
            Units::Categorical(c) => c.one_hot(codes)?,
            Units::Bernoulli(_) => codes.values().iter().map(|&x| f32::from(x)).collect(),
            other => {
                return Err(Error::InvalidData(format!(
                    "{} units take real values, not integer codes",
                    other.kind()
                )))
            }
        };
        self.check_states(&rows)?;
        Ok(rows)
    }

    /// The integer codes of discrete state rows (a categorical site's state index, a
    /// Bernoulli unit's 0/1), as a dataset with the layer's cardinalities; `None` for a layer
    /// of real values.
    pub fn codes_from_rows(&self, rows: &[f32]) -> Result<Option<Dataset>> {
        let wv = self.width();
        Ok(Some(match self {
            Units::Categorical(c) => {
                let mut codes = Vec::with_capacity(rows.len() / wv * c.q().len());
                for row in rows.chunks_exact(wv) {
                    let mut at = 0;
                    for &q in c.q() {
                        let k = row[at..at + q].iter().position(|&x| x == 1.0).unwrap_or(0);
                        codes.push(k as u8);
                        at += q;
                    }
                }
                let card = c.q().iter().map(|&q| q as u32).collect();
                Dataset::from_flat(codes, c.q().len(), card)?
            }
            Units::Bernoulli(_) => {
                let codes = rows.iter().map(|&x| u8::from(x == 1.0)).collect();
                Dataset::from_flat(codes, wv, vec![2; wv])?
            }
            _ => return Ok(None),
        }))
    }
}

/// Fits a unit-type RBM to the visible state rows `rows` of `visible` (a layer of the data's
/// shape, [`visible_layer`]) with `params` (`params.train.train.seed` seeds everything): a
/// Gaussian layer's rows standardized when `params.scaling` asks (the default), the start
/// model [`UnitRbm::init_from_data`] (seed `derive_seed(seed, 3)`), [`train`] with sample
/// weights `weights`, `on_epoch` and `interrupt`, and the model written back in the data's
/// units.
pub fn fit_unit_rbm(
    params: &UnitRbmParams,
    visible: Units,
    rows: &[f32],
    weights: Option<&[f64]>,
    interrupt: Option<&Interrupt>,
    on_epoch: impl FnMut(usize, &UnitRbm) -> Result<bool>,
) -> Result<UnitFit> {
    if visible.kind() != params.visible {
        return Err(Error::param(
            "visible",
            format!(
                "the settings say {} units, the layer is {}",
                params.visible,
                visible.kind()
            ),
        ));
    }
    let scaling = if params.scaling.standardize && visible.kind() == UnitKind::Gaussian {
        Some(
            Standardization::of(rows, visible.n_units(), params.scaling.sd_floor).map_err(
                |e| Error::InvalidData(format!("standardizing the data (standardize false / --no-standardize turns it off): {e}")),
            )?,
        )
    } else {
        None
    };
    let z = scaling.as_ref().map(|s| s.apply(rows));
    let train_rows = z.as_deref().unwrap_or(rows);
    let model = UnitRbm::init_from_data(
        visible,
        params.hidden,
        params.n_hidden,
        train_rows,
        params.weight_sd,
        derive_seed(params.train.train.seed, 3),
    )?;
    let mut fitted = train(
        model,
        train_rows,
        weights,
        &params.train,
        interrupt,
        on_epoch,
    )?;
    if let Some(s) = &scaling {
        fitted.model = s.to_data_units(&fitted.model)?;
    }
    Ok(fitted)
}

/// Trains `start` further on the visible state rows `rows` with `params` (a warm start:
/// Python's `partial_fit`, `warm_start`, `fit(init=)`): [`train`] as it is, on the rows as
/// given (no standardization: the model is in the data's units), after checking that the
/// model's types and hidden units are the settings'.
pub fn continue_unit_rbm(
    params: &UnitRbmParams,
    start: UnitRbm,
    rows: &[f32],
    weights: Option<&[f64]>,
    interrupt: Option<&Interrupt>,
    on_epoch: impl FnMut(usize, &UnitRbm) -> Result<bool>,
) -> Result<UnitFit> {
    let found = (
        start.visible().kind(),
        start.hidden().kind(),
        start.hidden().n_units(),
    );
    if found != (params.visible, params.hidden, params.n_hidden) {
        return Err(Error::param(
            "init",
            format!(
                "the starting model has {} visible, {} {} hidden units; the settings say {} \
                 visible, {} {} hidden units",
                found.0, found.2, found.1, params.visible, params.n_hidden, params.hidden
            ),
        ));
    }
    train(start, rows, weights, &params.train, interrupt, on_epoch)
}

/// The metadata a fitted model's file records: `settings`, the run's settings object.
pub fn fit_metadata(params: &UnitRbmParams) -> Result<BTreeMap<String, String>> {
    let mut meta = BTreeMap::new();
    meta.insert(
        "settings".to_string(),
        crate::settings::to_json(params)?.to_string(),
    );
    Ok(meta)
}

/// Forward AIS of `model`'s `ln Z` with a likelihood estimate's settings `s` (chains, steps,
/// seed: the chains seeded by `derive_seed(s.seed, 1)`), the base visible layer fitted to
/// `rows` (the evaluated rows).
pub fn ais_with(
    model: &UnitRbm,
    rows: Option<&[f32]>,
    s: &EvalParams,
    interrupt: Option<&Interrupt>,
) -> Result<AisEstimate> {
    s.check()?;
    ais_log_partition(
        model,
        rows,
        &s.schedule()?,
        s.ais_chains,
        derive_seed(s.seed, 1),
        interrupt,
    )
}

/// `n` visible state rows drawn from the visible layer's own independent model (its
/// parameters, no input; row `i` by `derive_rng(derive_seed(seed, 1), i)`): where the
/// sampling chains start.
pub fn sample_start(model: &UnitRbm, n: usize, seed: u64) -> Result<Vec<f32>> {
    if n == 0 {
        return Err(Error::param("n_samples", "draw at least one sample"));
    }
    let visible = model.visible();
    let wv = visible.width();
    let mut v0 = vec![0.0f32; n * wv];
    let mut rngs: Vec<_> = (0..n as u64)
        .map(|i| derive_rng(derive_seed(seed, 1), i))
        .collect();
    visible.sample(&vec![0.0; n * wv], &mut v0, &mut rngs)?;
    Ok(v0)
}

/// `n` block Gibbs chains of `model` after `steps` steps (`on_step` called after each) from
/// [`sample_start`]'s rows, seeded by `derive_seed(seed, 2)` (as `boltzkit rbm sample`): the
/// samples of both layers, `chains.visible()` and `chains.hidden()`.
pub fn sample_chains(
    model: &UnitRbm,
    n: usize,
    steps: usize,
    seed: u64,
    interrupt: Option<&Interrupt>,
    mut on_step: impl FnMut(),
) -> Result<UnitChains> {
    let v0 = sample_start(model, n, seed)?;
    let mut chains = UnitChains::new(model, &v0, derive_seed(seed, 2))?;
    for _ in 0..steps {
        if interrupt.is_some_and(Interrupt::is_set) {
            return Err(Error::Interrupted {
                what: "Gibbs sampling".into(),
            });
        }
        chains.step(model)?;
        on_step();
    }
    Ok(chains)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_go_to_rows_and_back() {
        let d = Dataset::from_flat(vec![0, 2, 1, 1, 2, 0], 2, vec![3, 3]).unwrap();
        let layer = visible_layer(UnitKind::Categorical, 2, Some(&[3, 3])).unwrap();
        let rows = layer.rows_from_codes(&d).unwrap();
        assert_eq!(rows.len(), 3 * 6);
        assert_eq!(&rows[..6], &[1., 0., 0., 0., 0., 1.]);
        let back = layer.codes_from_rows(&rows).unwrap().unwrap();
        assert_eq!(back.values(), d.values());
        let bad = Dataset::from_flat(vec![0, 3], 2, vec![4, 4]).unwrap();
        assert!(layer.rows_from_codes(&bad).is_err());
        assert!(visible_layer(UnitKind::Categorical, 2, None).is_err());
        assert!(visible_layer(UnitKind::Drelu, 2, None).is_err());
        let g = visible_layer(UnitKind::Gaussian, 2, None).unwrap();
        assert!(g.rows_from_codes(&d).is_err());
        assert!(g.codes_from_rows(&[0.5, 1.5]).unwrap().is_none());
    }

    #[test]
    fn a_warm_start_continues_the_same_run() {
        // two fits of 1 + 1 epochs from the same start are the same as each other, and a
        // start of another shape is refused
        let params = UnitRbmParams {
            visible: UnitKind::Categorical,
            hidden: UnitKind::Drelu,
            n_hidden: 2,
            ..UnitRbmParams::default()
        };
        let mut p1 = params;
        p1.train.train.epochs = 1;
        p1.train.train.batch_size = Some(2);
        let d = Dataset::from_flat(vec![0, 2, 1, 1, 2, 0, 0, 0], 2, vec![3, 3]).unwrap();
        let layer = visible_layer(UnitKind::Categorical, 2, Some(&[3, 3])).unwrap();
        let rows = layer.rows_from_codes(&d).unwrap();
        let first = fit_unit_rbm(&p1, layer, &rows, None, None, |_, _| Ok(true)).unwrap();
        let go = |m: &UnitRbm| {
            continue_unit_rbm(&p1, m.clone(), &rows, None, None, |_, _| Ok(true))
                .unwrap()
                .model
        };
        let (a, b) = (go(&first.model), go(&first.model));
        assert_eq!(a, b);
        assert_ne!(a, first.model);
        let mut other = p1;
        other.n_hidden = 3;
        let err = continue_unit_rbm(&other, a, &rows, None, None, |_, _| Ok(true));
        assert!(err.unwrap_err().to_string().contains("starting model"));
    }

    #[test]
    fn a_fit_refuses_a_layer_of_another_type() {
        let params = UnitRbmParams {
            visible: UnitKind::Categorical,
            ..UnitRbmParams::default()
        };
        let layer = visible_layer(UnitKind::Bernoulli, 2, None).unwrap();
        let err = fit_unit_rbm(&params, layer, &[0., 1.], None, None, |_, _| Ok(true));
        assert!(err.unwrap_err().to_string().contains("visible"));
    }
}
