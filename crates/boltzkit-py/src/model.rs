//! `NativeModel`: any boltzkit model behind one Python class, answering through the
//! library's [`Model`] trait (and the RBM-only questions: `E[h|v]`, one Gibbs step, the
//! likelihood bracket). The Python estimators hold one as their fitted state.
//!
//! A model keeps the metadata it was read or fitted with (and an RBM its centering offsets),
//! so that `load` then `save` writes the same bytes, and pickling goes through exactly the
//! bytes of the model file.

use crate::convert::{self, Cards};
use crate::error::IntoPyResult;
use crate::run;
use boltzkit::any_model::AnyModel;
use boltzkit::data::Dataset;
use boltzkit::estimate::Method;
use boltzkit::fit::Interrupt;
use boltzkit::io::load_tensors;
use boltzkit::model::{AisOptions, ExactTask, LogPartition, Metadata, Model, Sampling};
use boltzkit::provenance::DataFile;
use boltzkit::rbm::eval_settings::EvalParams;
use boltzkit::rbm::file::{load_rbm, save_rbm, Offsets};
use boltzkit::rbm::frank_wolfe::file::{save_fw_exact, save_fw_model};
use boltzkit::rbm::gibbs::{sample_from_uniform, DEFAULT_SAMPLE_STEPS};
use boltzkit::rbm::loglik::{average_log_likelihood, Diagnosis, LogLikParams, LogLikelihood};
use boltzkit::rbm::{GibbsChains, Rbm};
use boltzkit::rng::rng_from_seed;
use boltzkit::settings::from_json;
use numpy::{PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::{Path, PathBuf};

/// Any boltzkit model (FSLL, FVBM, RBM, Frank-Wolfe) with its file metadata.
#[pyclass(name = "NativeModel", module = "boltzkit._native", frozen)]
pub struct NativeModel {
    /// The model.
    pub model: AnyModel,
    /// The centering offsets of an RBM trained by a centered algorithm (kept to resume).
    pub offsets: Option<Offsets>,
    /// The metadata written with the model.
    pub metadata: Metadata,
}

/// An average log-likelihood: its lower and upper ends and the `ln Z` estimate used.
type Likelihood<'py> = (
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Option<Bound<'py, PyDict>>,
);
/// `(W, b, c)` of an RBM.
type RbmParams<'py> = (
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray1<f32>>,
    Bound<'py, PyArray1<f32>>,
);
/// `(b, M, convention)` of an FVBM.
type FvbmParams<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray2<f64>>,
    &'static str,
);
/// `(basis, theta, cardinalities)` of an FSLL model.
type FsllParams<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    Vec<u32>,
);

/// How `ln Z` is estimated, from the Python arguments: `auto` is exact where `affordable`,
/// AIS with the settings object `s` otherwise.
pub fn log_partition_method(
    method: &str,
    affordable: bool,
    s: &EvalParams,
) -> PyResult<LogPartition> {
    let ais = || AisOptions::from_settings(s).map(LogPartition::Ais).py();
    match method {
        "exact" => Ok(LogPartition::Exact),
        "ais" => ais(),
        "auto" if affordable => Ok(LogPartition::Exact),
        "auto" => ais(),
        other => Err(PyValueError::new_err(format!(
            "method must be 'auto', 'exact' or 'ais', got {other:?}"
        ))),
    }
}

/// The estimator's settings object (`EvalParams`, JSON).
fn eval_settings(settings_json: &str) -> PyResult<EvalParams> {
    from_json("estimate", settings_json).py()
}

/// `how` with AIS stopped by `flag` (Ctrl-C); the other methods as they are.
fn stopped_by(how: &LogPartition, flag: &Interrupt) -> LogPartition {
    match how {
        LogPartition::Ais(o) => LogPartition::Ais(AisOptions {
            interrupt: Some(flag.clone()),
            ..o.clone()
        }),
        other => other.clone(),
    }
}

/// Dispatches a [`Model`] method over the variants of [`AnyModel`].
macro_rules! with_model {
    ($any:expr, $m:ident => $body:expr) => {
        match $any {
            AnyModel::Fsll($m) => $body,
            AnyModel::Fvbm($m) => $body,
            AnyModel::Rbm($m) => $body,
            AnyModel::FrankWolfe($m) => $body,
            AnyModel::Potts($m) => $body,
        }
    };
}

impl NativeModel {
    /// A model with its metadata.
    pub fn new(model: AnyModel, offsets: Option<Offsets>, metadata: Metadata) -> Self {
        NativeModel {
            model,
            offsets,
            metadata,
        }
    }

    /// Whether `ln Z` by enumeration is affordable for this model.
    fn affordable(&self) -> bool {
        with_model!(&self.model, m => Model::exact_affordable(m, ExactTask::LogPartition))
    }

    /// The model as an RBM (a Frank-Wolfe model in its standard form).
    fn rbm(&self) -> PyResult<Rbm> {
        match &self.model {
            AnyModel::Rbm(r) => Ok(r.clone()),
            AnyModel::FrankWolfe(f) => f.to_rbm().py(),
            other => Err(PyValueError::new_err(format!(
                "this needs an RBM, the model is {}",
                other.kind()
            ))),
        }
    }

    /// `x` as a dataset of this model's variables.
    fn data(&self, x: &PyReadonlyArray2<'_, u8>) -> PyResult<Dataset> {
        match &self.model {
            AnyModel::Fsll(m) => convert::dataset(x, Cards::Given(m.cardinalities().to_vec())),
            AnyModel::Potts(m) => convert::dataset(
                x,
                Cards::Given(m.states().iter().map(|&k| k as u32).collect()),
            ),
            _ => convert::dataset(x, Cards::Binary),
        }
    }

    /// Writes the model file.
    fn write(&self, path: &Path, metadata: &Metadata) -> boltzkit::Result<()> {
        match &self.model {
            AnyModel::Rbm(r) => save_rbm(path, r, self.offsets.as_ref(), metadata),
            AnyModel::FrankWolfe(f) => save_fw_model(path, f, metadata),
            AnyModel::Fsll(m) => Model::save(m, path, metadata),
            AnyModel::Fvbm(m) => Model::save(m, path, metadata),
            AnyModel::Potts(m) => Model::save(m, path, metadata),
        }
    }

    /// Reads any model file with its metadata (and an RBM's offsets).
    fn read(path: &Path) -> boltzkit::Result<Self> {
        let model = AnyModel::load(path)?;
        let (offsets, metadata) = match &model {
            AnyModel::Rbm(_) => {
                let f = load_rbm(path)?;
                (f.offsets, f.metadata)
            }
            _ => (None, load_tensors(path)?.metadata),
        };
        // the writer sets `format` itself
        let metadata = metadata
            .into_iter()
            .filter(|(k, _)| k != "format")
            .collect();
        Ok(NativeModel::new(model, offsets, metadata))
    }
}

#[pymethods]
impl NativeModel {
    /// `"fsll"`, `"fvbm"`, `"rbm"` or `"frank-wolfe"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.model.kind()
    }

    /// Number of (visible) variables.
    #[getter]
    fn n_variables(&self) -> usize {
        with_model!(&self.model, m => Model::n_variables(m))
    }

    /// The metadata of the model file (without `format`, which the writer sets).
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.metadata {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// `ln p̃(x)` of every row (up to `ln Z`).
    fn unnormalized_log_probs<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, u8>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let data = self.data(&x)?;
        let lp = run::released(
            py,
            threads,
            || with_model!(&self.model, m => Model::unnormalized_log_probs(m, &data)),
        )?
        .py()?;
        Ok(PyArray1::from_vec(py, lp))
    }

    /// `ln p(x)` of every row and the `ln Z` estimate used.
    /// `settings_json`: the estimate's settings object (`EvalParams`; `{}` for its defaults).
    #[pyo3(signature = (x, method="auto", settings_json="{}", threads=None))]
    fn log_probs<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, u8>,
        method: &str,
        settings_json: &str,
        threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyDict>)> {
        let data = self.data(&x)?;
        let s = eval_settings(settings_json)?;
        let how = log_partition_method(method, self.affordable(), &s)?;
        let (lp, est) = run::estimate(py, threads, |flag| {
            let how = stopped_by(&how, flag);
            with_model!(&self.model, m => Model::log_probs(m, &data, &how))
        })?;
        Ok((PyArray1::from_vec(py, lp), convert::estimate(py, &est)?))
    }

    /// `ln Z` by `method` (`auto`, `exact`, `ais`) with its standard error and interval.
    #[pyo3(signature = (method="auto", settings_json="{}", threads=None))]
    fn log_partition<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        settings_json: &str,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s = eval_settings(settings_json)?;
        let how = log_partition_method(method, self.affordable(), &s)?;
        let est = run::estimate(py, threads, |flag| {
            let how = stopped_by(&how, flag);
            with_model!(&self.model, m => Model::log_partition(m, &how))
        })?;
        convert::estimate(py, &est)
    }

    /// The average log-likelihood of `x` (nats per row) as `(lower, upper, log_z)`
    /// estimates: one figure twice for `exact` / `ais` / `raise`, the bracket [RAISE,
    /// forward AIS] for `bracket` (RBMs); `log_z` is `None` where the method has none.
    #[pyo3(signature = (x, method="auto", settings_json="{}", threads=None))]
    fn log_likelihood<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, u8>,
        method: &str,
        settings_json: &str,
        threads: Option<usize>,
    ) -> PyResult<Likelihood<'py>> {
        let data = self.data(&x)?;
        let s = eval_settings(settings_json)?;
        let rbm_method = matches!(method, "raise" | "bracket")
            || (method != "exact" && matches!(self.model, AnyModel::Rbm(_)));
        if rbm_method {
            let rbm = self.rbm()?;
            let m: Method = match method {
                "auto" => {
                    if rbm.exact_affordable(ExactTask::LogPartition) {
                        Method::Exact
                    } else {
                        Method::Ais
                    }
                }
                other => other.parse().py()?,
            };
            let params = LogLikParams::from_settings(m, &s).py()?;
            let ll = run::estimate(py, threads, |flag| {
                average_log_likelihood(&rbm, &data, &params.clone().interrupt(flag.clone()))
            })?;
            let log_z = ll.log_z().map(|e| convert::estimate(py, &e)).transpose()?;
            let upper = convert::estimate(py, &ll.upper())?;
            if let LogLikelihood::Bracket(b) = &ll {
                // the bracket's one-line diagnosis, which Python raises as a warning when the
                // interval is inverted or wide
                upper.set_item("inverted", b.diagnosis.is_inverted())?;
                upper.set_item(
                    "diagnosis",
                    (b.diagnosis != Diagnosis::Consistent).then(|| b.diagnosis.to_string()),
                )?;
            }
            return Ok((convert::estimate(py, &ll.lower())?, upper, log_z));
        }
        let how = log_partition_method(method, self.affordable(), &s)?;
        let ll = run::estimate(py, threads, |flag| {
            let how = stopped_by(&how, flag);
            with_model!(&self.model, m => Model::log_likelihood(m, &data, &how))
        })?;
        let e = convert::estimate(py, &ll)?;
        Ok((e.clone(), e, None))
    }

    /// `n` states from the model, seeded: RBMs by `gibbs_steps` block-Gibbs steps from
    /// uniform random states (as `boltzkit rbm sample`); the other models exactly where
    /// affordable, by Gibbs otherwise (as `boltzkit fvbm|fsll sample`).
    #[pyo3(signature = (n, seed, gibbs_steps=None, threads=None))]
    fn sample<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        seed: u64,
        gibbs_steps: Option<usize>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray2<u8>>> {
        if n == 0 {
            return Err(PyValueError::new_err("n_samples must be at least 1"));
        }
        let data = match &self.model {
            AnyModel::Rbm(rbm) => {
                let steps = gibbs_steps.unwrap_or(DEFAULT_SAMPLE_STEPS);
                let v = run::released(py, threads, || {
                    sample_from_uniform(rbm, n, steps, seed, &mut |_| {})
                })?
                .py()?;
                boltzkit::rbm::model::states_to_dataset(&v, rbm.n_visible()).py()?
            }
            other => {
                let sampling = match gibbs_steps {
                    Some(steps) => Sampling::Gibbs { steps },
                    None => Sampling::Auto,
                };
                run::released(py, threads, || {
                    with_model!(other, m => Model::sample(m, n, &sampling, &mut rng_from_seed(seed)))
                })?
                .py()?
            }
        };
        convert::dataset_array(py, &data)
    }

    /// `E[h | v]` of every row: `p(h_j = 1 | v)`, `rows × n_hidden` (RBMs).
    #[pyo3(signature = (x, threads=None))]
    fn hidden_probs<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, u8>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let rbm = self.rbm()?;
        let data = self.data(&x)?;
        let rows = data.n_samples();
        let nh = rbm.n_hidden();
        let out = run::released(py, threads, || -> boltzkit::Result<Vec<f32>> {
            let v: Vec<f32> = data.values().iter().map(|&b| f32::from(b)).collect();
            let mut out = vec![0f32; rows * nh];
            rbm.hidden_probs(&v, &mut out)?;
            Ok(out)
        })?
        .py()?;
        convert::matrix_f32(py, out, rows, nh)
    }

    /// One block-Gibbs step `h ~ p(h|v)`, `v ~ p(v|h)` from every row, seeded (RBMs).
    #[pyo3(signature = (x, seed, threads=None))]
    fn gibbs<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, u8>,
        seed: u64,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let rbm = self.rbm()?;
        let data = self.data(&x)?;
        let v = run::released(py, threads, || -> boltzkit::Result<Vec<f32>> {
            let v0: Vec<f32> = data.values().iter().map(|&b| f32::from(b)).collect();
            let mut chains = GibbsChains::new(&rbm, &v0, seed)?;
            chains.run(&rbm, 1)?;
            Ok(chains.visible().to_vec())
        })?
        .py()?;
        let d = boltzkit::rbm::model::states_to_dataset(&v, rbm.n_visible()).py()?;
        convert::dataset_array(py, &d)
    }

    /// `(W, b, c)`: weights `n_visible × n_hidden`, visible and hidden biases (RBMs; a
    /// Frank-Wolfe model in its standard form).
    fn rbm_params<'py>(&self, py: Python<'py>) -> PyResult<RbmParams<'py>> {
        let rbm = self.rbm()?;
        Ok((
            convert::matrix_f32(py, rbm.w().to_vec(), rbm.n_visible(), rbm.n_hidden())?,
            PyArray1::from_vec(py, rbm.b().to_vec()),
            PyArray1::from_vec(py, rbm.c().to_vec()),
        ))
    }

    /// `(b, M, convention)` of an FVBM: `P(x) ∝ exp(½ xᵀMx + bᵀx)`.
    fn fvbm_params<'py>(&self, py: Python<'py>) -> PyResult<FvbmParams<'py>> {
        match &self.model {
            AnyModel::Fvbm(m) => Ok((
                PyArray1::from_vec(py, m.b().to_vec()),
                convert::matrix_f64(py, m.m().to_vec(), m.d(), m.d())?,
                m.convention().name(),
            )),
            other => Err(PyValueError::new_err(format!(
                "this needs an FVBM, the model is {}",
                other.kind()
            ))),
        }
    }

    /// `(basis, theta, cardinalities)` of an FSLL model: each basis function's index `y` as a
    /// mixed-radix number (variable 0 least significant) and its parameter.
    fn fsll_params<'py>(&self, py: Python<'py>) -> PyResult<FsllParams<'py>> {
        match &self.model {
            AnyModel::Fsll(m) => Ok((
                PyArray1::from_vec(py, m.basis().iter().map(|&y| y as u64).collect()),
                PyArray1::from_vec(py, m.theta().to_vec()),
                m.cardinalities().to_vec(),
            )),
            other => Err(PyValueError::new_err(format!(
                "this needs an FSLL model, the model is {}",
                other.kind()
            ))),
        }
    }

    /// `(n_units, alpha, is_standard)` of a Frank-Wolfe model.
    fn fw_info(&self) -> PyResult<(usize, f64, bool)> {
        match &self.model {
            AnyModel::FrankWolfe(f) => Ok((f.n_units(), f.alpha(), f.is_standard())),
            other => Err(PyValueError::new_err(format!(
                "this needs a Frank-Wolfe model, the model is {}",
                other.kind()
            ))),
        }
    }

    /// Writes the model file (the CLI's format) with the model's metadata; `data_file`, the
    /// file the training data was read from, adds `data_file` and `data_sha256` as the CLI
    /// records them.
    #[pyo3(signature = (path, data_file=None))]
    fn save(&self, path: PathBuf, data_file: Option<PathBuf>) -> PyResult<()> {
        match data_file {
            None => self.write(&path, &self.metadata).py(),
            Some(d) => {
                let mut meta = self.metadata.clone();
                DataFile::of(&d).py()?.record(&mut meta);
                self.write(&path, &meta).py()
            }
        }
    }

    /// The bytes of the model as a file that reads back bit for bit (pickles): what `save`
    /// writes, but a Frank-Wolfe model in its own `f64` format even when it is standard
    /// (which `save` writes as the `f32` RBM it equals, the command line's file).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("model.safetensors");
        match &self.model {
            AnyModel::FrankWolfe(f) => save_fw_exact(&path, f, &self.metadata),
            _ => self.write(&path, &self.metadata),
        }
        .py()?;
        let bytes = std::fs::read(&path)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A model from the bytes of a model file.
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("model.safetensors");
        std::fs::write(&path, bytes)?;
        NativeModel::read(&path).py()
    }

    /// Reads any boltzkit model file.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        NativeModel::read(&path).py()
    }
}
