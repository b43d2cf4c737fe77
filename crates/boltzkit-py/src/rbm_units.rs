//! RBMs whose units are not all 0/1 (`RBM(visible=, hidden=)`, issue 34): the fit, the
//! estimates, the samples and the files of `boltzkit::rbm::units`, each the call the CLI's
//! `rbm fit / eval / sample --visible-units` makes (`boltzkit::rbm::units::pipeline`), so a
//! Python fit and a CLI fit with the same settings and seed give the same model file.
//! Settings arrive as one JSON object (`UnitRbmParams`, the estimate's `EvalParams`) that the
//! library's serde types and checks validate. Data arrive as integer codes (`uint8`, sites ×
//! states for categorical units, 0/1 for Bernoulli units) or as `float64` values (Gaussian).

use crate::convert::{self, Cards};
use crate::error::IntoPyResult;
use crate::fitting::{control, pending, Raised};
use crate::run;
use boltzkit::estimate::{Estimate, Method};
use boltzkit::fit::{Count, Interrupt};
use boltzkit::io::TensorData;
use boltzkit::rbm::eval_settings::EvalParams;
use boltzkit::rbm::units::{
    ais_with, continue_unit_rbm, fit_metadata, fit_unit_rbm, load_unit_rbm, sample_chains,
    save_unit_rbm, unit_rbm_tensors, visible_layer, UnitChains, UnitKind, UnitRbm, UnitRbmParams,
    Units,
};
use boltzkit::settings::from_json;
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A likelihood figure's `(lower, upper, log_z)` estimates, as `NativeModel.log_likelihood`.
type Likelihood<'py> = (
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Option<Bound<'py, PyDict>>,
);

/// What a fit returns: the model, its record as JSON, the exception to raise after keeping it.
type UnitFitResult = (NativeUnitModel, String, Option<Py<PyAny>>);

/// A fitted unit-type RBM with its file's metadata.
#[pyclass(module = "boltzkit._native", frozen)]
pub struct NativeUnitModel {
    model: UnitRbm,
    metadata: BTreeMap<String, String>,
}

/// The state rows of `x` for `layer`: `float64` values of a Gaussian layer, `uint8` codes of
/// a discrete one (`states`: each site's states; `None`: the layer's own).
fn rows_of(x: &Bound<'_, PyAny>, layer: &Units) -> PyResult<Vec<f32>> {
    if layer.kind() == UnitKind::Gaussian {
        let a: PyReadonlyArray2<'_, f64> = x
            .extract()
            .map_err(|_| PyValueError::new_err("X of gaussian units must be a float64 matrix"))?;
        let rows: Vec<f32> = a.as_array().iter().map(|&v| v as f32).collect();
        if a.shape()[1] != layer.n_units() {
            return Err(PyValueError::new_err(format!(
                "X has {} columns, the model has {} visible units",
                a.shape()[1],
                layer.n_units()
            )));
        }
        layer.check_states(&rows).py()?;
        return Ok(rows);
    }
    let a: PyReadonlyArray2<'_, u8> = x.extract().map_err(|_| {
        PyValueError::new_err(format!(
            "X of {} units must be a uint8 matrix of codes",
            layer.kind()
        ))
    })?;
    let cards: Vec<u32> = match layer {
        Units::Categorical(c) => c.q().iter().map(|&q| q as u32).collect(),
        _ => vec![2; layer.n_units()],
    };
    if a.shape()[1] != cards.len() {
        return Err(PyValueError::new_err(format!(
            "X has {} columns, the model has {} visible {} units",
            a.shape()[1],
            cards.len(),
            layer.kind()
        )));
    }
    let data = convert::dataset(&a, Cards::Given(cards))?;
    layer.rows_from_codes(&data).py()
}

/// Fits a unit-type RBM as `boltzkit rbm fit --visible-units V --hidden-units H` does
/// ([`fit_unit_rbm`]): `settings` is `UnitRbmParams` (JSON, the estimator's keyword
/// arguments under the schema's names, the seed included); `states` each categorical site's
/// states (`None`: each column's maximum + 1, at least 2, as the CLI reads codes); `weights`
/// the sample weights; `callback(info)` after every epoch (`False` stops); `init` a model to
/// train further ([`continue_unit_rbm`]: its layers, no standardization).
#[pyfunction]
#[pyo3(name = "fit_unit_rbm", signature = (x, settings, states=None, weights=None, callback=None,
    threads=None, init=None))]
pub fn fit_unit_rbm_py(
    x: &Bound<'_, PyAny>,
    settings: &str,
    states: Option<Vec<u32>>,
    weights: Option<PyReadonlyArray1<'_, f64>>,
    callback: Option<Py<PyAny>>,
    threads: Option<usize>,
    init: Option<PyRef<'_, NativeUnitModel>>,
) -> PyResult<UnitFitResult> {
    let py = x.py();
    let params: UnitRbmParams = from_json("RBM", settings).py()?;
    params.train.train.check().py()?;
    let n_vars = x
        .getattr("shape")?
        .extract::<(usize, usize)>()
        .map_err(|_| PyValueError::new_err("X must be a 2-D matrix"))?
        .1;
    let states = match (params.visible, states) {
        (UnitKind::Categorical, None) => {
            let a: PyReadonlyArray2<'_, u8> = x.extract().map_err(|_| {
                PyValueError::new_err("X of categorical units must be a uint8 matrix of codes")
            })?;
            Some(
                convert::dataset(&a, Cards::Inferred)?
                    .cardinalities()
                    .to_vec(),
            )
        }
        (_, s) => s,
    };
    let start = init.map(|m| m.model.clone());
    let layer = match &start {
        Some(m) => m.visible().clone(),
        None => visible_layer(params.visible, n_vars, states.as_deref()).py()?,
    };
    let rows = rows_of(x, &layer)?;
    let w: Option<Vec<f64>> = weights.map(|w| w.as_array().to_vec());
    let flag = Interrupt::new();
    let raised = Raised::default();
    let on_epoch = |epoch: usize, _: &UnitRbm| match &callback {
        Some(cb) => Ok(!matches!(
            control(cb, &raised, Count::epochs(epoch), |d| d
                .set_item("epoch", epoch)),
            boltzkit::fit::Control::Stop(_)
        )),
        None => Ok(true),
    };
    let work = || match start {
        Some(m) => continue_unit_rbm(&params, m, &rows, w.as_deref(), Some(&flag), on_epoch),
        None => fit_unit_rbm(&params, layer, &rows, w.as_deref(), Some(&flag), on_epoch),
    };
    let (outcome, signal) = run::interruptible(py, threads, &flag, work)?;
    let fit = outcome.py()?;
    let metadata = fit_metadata(&params).py()?;
    let record = serde_json::json!({
        "stop_reason": fit.stop.to_string(),
        "epochs": fit.epochs,
        "steps": fit.steps,
        "history": [],
    });
    let model = NativeUnitModel {
        model: fit.model,
        metadata,
    };
    Ok((model, record.to_string(), pending(py, &raised, signal)))
}

/// Whether the file at `path` is a unit-type RBM's model file (`boltzkit/rbm/v2`).
#[pyfunction]
pub fn is_unit_model_file(path: PathBuf) -> bool {
    boltzkit::rbm::units::is_unit_model_file(&path)
}

impl NativeUnitModel {
    /// `ln Z` by `method`: `exact` (enumerating the smaller discrete layer), `ais` (forward
    /// AIS with `s`, the base layer fitted to `rows`), `auto` exact where enumerable.
    fn log_z(
        &self,
        method: &str,
        rows: Option<&[f32]>,
        s: &EvalParams,
        flag: &Interrupt,
    ) -> boltzkit::Result<Estimate> {
        let exact = match method {
            "exact" => true,
            "ais" => false,
            "auto" => self.model.is_enumerable(),
            other => {
                return Err(boltzkit::Error::param(
                    "method",
                    format!("'auto', 'exact' or 'ais', got {other:?}"),
                ))
            }
        };
        if exact {
            return Ok(Estimate::exact(self.model.log_partition_exact()?));
        }
        Ok(ais_with(&self.model, rows, s, Some(flag))?.to_estimate(Method::Ais))
    }
}

/// The estimate's settings object (`EvalParams`, JSON).
fn eval_settings(settings_json: &str) -> PyResult<EvalParams> {
    from_json("estimate", settings_json).py()
}

#[pymethods]
impl NativeUnitModel {
    /// `"rbm-units"`: an RBM with unit types other than 0/1 (`boltzkit/rbm/v2` files).
    #[getter]
    fn kind(&self) -> &'static str {
        "rbm-units"
    }

    /// The visible units' type.
    #[getter]
    fn visible_units(&self) -> String {
        self.model.visible().kind().to_string()
    }

    /// The hidden units' type.
    #[getter]
    fn hidden_units(&self) -> String {
        self.model.hidden().kind().to_string()
    }

    /// Visible units (sites of a categorical layer).
    #[getter]
    fn n_variables(&self) -> usize {
        self.model.visible().n_units()
    }

    /// Hidden units.
    #[getter]
    fn n_hidden(&self) -> usize {
        self.model.hidden().n_units()
    }

    /// Each categorical site's states (`None` for other layers).
    #[getter]
    fn states(&self) -> Option<Vec<usize>> {
        match self.model.visible() {
            Units::Categorical(c) => Some(c.q().to_vec()),
            _ => None,
        }
    }

    /// The metadata of the model file (without the keys the writer sets).
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.metadata {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// The parameters by their names in the model file (`W`, `v.fields`, `h.gamma_plus`, …),
    /// as arrays of the file's shapes and types.
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for t in unit_rbm_tensors(&self.model).py()? {
            let a = match t.data {
                TensorData::F32(v) => PyArray1::from_vec(py, v).reshape(t.shape)?.into_any(),
                TensorData::F64(v) => PyArray1::from_vec(py, v).reshape(t.shape)?.into_any(),
                TensorData::U64(v) => PyArray1::from_vec(py, v).reshape(t.shape)?.into_any(),
            };
            d.set_item(t.name, a)?;
        }
        Ok(d)
    }

    /// `ln p(x)` of every row and the `ln Z` estimate used (`auto`: exact where a discrete
    /// layer can be enumerated, forward AIS otherwise, its base layer fitted to `x`, as
    /// `boltzkit rbm eval`).
    #[pyo3(signature = (x, method="auto", settings_json="{}", threads=None))]
    fn log_probs<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        method: &str,
        settings_json: &str,
        threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyDict>)> {
        let rows = rows_of(x, self.model.visible())?;
        let s = eval_settings(settings_json)?;
        let (lp, est) = run::estimate(py, threads, |flag| {
            let est = self.log_z(method, Some(&rows), &s, flag)?;
            let neg_f = self.model.neg_free_energies_of(&rows)?;
            Ok((neg_f.iter().map(|f| f - est.value).collect::<Vec<_>>(), est))
        })?;
        Ok((PyArray1::from_vec(py, lp), convert::estimate(py, &est)?))
    }

    /// The (weighted) average log-likelihood of `x` as `(lower, upper, log_z)` (one figure
    /// twice), with `ln Z` by `method` as [`NativeUnitModel::log_probs`]: the figure of
    /// `boltzkit rbm eval` with `--weights`.
    #[pyo3(signature = (x, method="auto", settings_json="{}", threads=None, weights=None))]
    fn log_likelihood<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        method: &str,
        settings_json: &str,
        threads: Option<usize>,
        weights: Option<PyReadonlyArray1<'py, f64>>,
    ) -> PyResult<Likelihood<'py>> {
        let rows = rows_of(x, self.model.visible())?;
        let w: Option<Vec<f64>> = weights.map(|w| w.as_array().to_vec());
        let s = eval_settings(settings_json)?;
        let (ll, log_z) = run::estimate(py, threads, |flag| {
            let log_z = self.log_z(method, Some(&rows), &s, flag)?;
            let ll = self
                .model
                .log_likelihood(&rows, w.as_deref(), Some(log_z.value))?;
            let e = Estimate {
                value: ll,
                lower: ll - (log_z.upper - log_z.value),
                upper: ll + (log_z.value - log_z.lower),
                ..log_z
            };
            Ok((e, log_z))
        })?;
        let e = convert::estimate(py, &ll)?;
        Ok((e.clone(), e, Some(convert::estimate(py, &log_z)?)))
    }

    /// `ln Z` by `method` (`auto`, `exact`, `ais`; AIS from the layers' reference models).
    #[pyo3(signature = (method="auto", settings_json="{}", threads=None))]
    fn log_partition<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        settings_json: &str,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s = eval_settings(settings_json)?;
        let est = run::estimate(py, threads, |flag| self.log_z(method, None, &s, flag))?;
        convert::estimate(py, &est)
    }

    /// `E[h | v]` of every row, `rows × n_hidden` (`float32`).
    #[pyo3(signature = (x, threads=None))]
    fn hidden_means<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let rows = rows_of(x, self.model.visible())?;
        let wh = self.model.hidden().width();
        let n = rows.len() / self.model.visible().width();
        let out = run::released(py, threads, || -> boltzkit::Result<Vec<f32>> {
            let mut out = vec![0f32; n * wh];
            self.model.hidden_means(&rows, &mut out)?;
            Ok(out)
        })?
        .py()?;
        Ok(convert::matrix_f32(py, out, n, wh)?.into_any())
    }

    /// `n` samples of both layers by `gibbs_steps` block-Gibbs steps from the visible layer's
    /// independent model, seeded (as `boltzkit rbm sample`): visible codes (`uint8`) or
    /// values (`float64`), hidden values (`float32`).
    #[pyo3(signature = (n, seed, gibbs_steps=1000, threads=None))]
    fn sample<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        seed: u64,
        gibbs_steps: usize,
        threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let chains = run::estimate(py, threads, |flag| {
            sample_chains(&self.model, n, gibbs_steps, seed, Some(flag), || {})
        })?;
        self.layers_out(py, &chains)
    }

    /// One block-Gibbs step `h ~ p(h|v)`, `v ~ p(v|h)` from every row of `x`, seeded: the
    /// new visible and hidden rows.
    #[pyo3(signature = (x, seed, threads=None))]
    fn gibbs<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        seed: u64,
        threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let rows = rows_of(x, self.model.visible())?;
        let chains = run::released(py, threads, || -> boltzkit::Result<UnitChains> {
            let mut c = UnitChains::new(&self.model, &rows, seed)?;
            c.step(&self.model)?;
            Ok(c)
        })?
        .py()?;
        self.layers_out(py, &chains)
    }

    /// Writes the model file, the bytes the CLI writes for the same fit (`data_file`: the
    /// file the data was read from, as the CLI records it).
    #[pyo3(signature = (path, data_file=None))]
    fn save(&self, path: PathBuf, data_file: Option<PathBuf>) -> PyResult<()> {
        let mut meta = self.metadata.clone();
        if let Some(d) = data_file {
            meta.insert("data_file".into(), d.display().to_string());
        }
        save_unit_rbm(&path, &self.model, &meta).py()
    }

    /// The bytes of the model file (pickles).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("model.safetensors");
        save_unit_rbm(&path, &self.model, &self.metadata).py()?;
        Ok(PyBytes::new(py, &std::fs::read(&path)?))
    }

    /// A model from the bytes of a model file.
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("model.safetensors");
        std::fs::write(&path, bytes)?;
        NativeUnitModel::load(path)
    }

    /// Reads a unit-type model file (`boltzkit/rbm/v2`).
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        let f = load_unit_rbm(&path).py()?;
        let metadata = f
            .metadata
            .into_iter()
            .filter(|(k, _)| !matches!(k.as_str(), "format" | "visible_units" | "hidden_units"))
            .collect();
        Ok(NativeUnitModel {
            model: f.model,
            metadata,
        })
    }
}

impl NativeUnitModel {
    /// Both layers of `chains` as arrays: visible codes or values, hidden values.
    fn layers_out<'py>(
        &self,
        py: Python<'py>,
        chains: &UnitChains,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let visible = self.model.visible();
        let n = chains.n_chains();
        let v = match visible.codes_from_rows(chains.visible()).py()? {
            Some(codes) => convert::dataset_array(py, &codes)?.into_any(),
            None => {
                let values: Vec<f64> = chains.visible().iter().map(|&x| f64::from(x)).collect();
                convert::matrix_f64(py, values, n, visible.width())?.into_any()
            }
        };
        let wh = self.model.hidden().width();
        let h = convert::matrix_f32(py, chains.hidden().to_vec(), n, wh)?.into_any();
        Ok((v, h))
    }
}
