//! Free functions of the package: dataset reading, FVBM inference, KL divergence.

use crate::convert::{self, Cards};
use crate::error::IntoPyResult;
use crate::model::NativeModel;
use crate::run;
use boltzkit::any_model::AnyModel;
use boltzkit::data::{read_dataset as read, Binarize, ReadOptions};
use boltzkit::fvbm::inference;
use numpy::{PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// Reads a dataset file (`.npy`, `.csv`/`.tsv`, IDX, `.amat`, any of them `.gz`) with the
/// library's readers: `binarize` is `None`, `"threshold:T"` (a value above `T` becomes 1) or
/// `"stochastic"` (each value a Bernoulli draw, seeded by `seed`).
#[pyfunction]
#[pyo3(signature = (path, binarize=None, cardinalities=None, seed=0))]
pub fn read_dataset<'py>(
    py: Python<'py>,
    path: PathBuf,
    binarize: Option<&str>,
    cardinalities: Option<Vec<u32>>,
    seed: u64,
) -> PyResult<Bound<'py, PyArray2<u8>>> {
    let binarize = match binarize {
        None | Some("none") => Binarize::None,
        Some("stochastic") => Binarize::Stochastic { seed },
        Some(s) => match s.strip_prefix("threshold:").map(str::parse::<f64>) {
            Some(Ok(t)) => Binarize::Threshold(t),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "binarize must be None, 'threshold:T' (e.g. 'threshold:127') or \
                     'stochastic', got {s:?}"
                )))
            }
        },
    };
    let mut opts = ReadOptions::default().with_binarize(binarize);
    if let Some(c) = cardinalities {
        opts = opts.with_cardinalities(c);
    }
    let data = run::released(py, None, || read(&path, &opts))?.py()?;
    convert::dataset_array(py, &data)
}

/// Sandwich standard errors and Wald tests of every parameter of an FVBM fitted by MPLE on
/// `x` (penalized by `l2`): a dict of `names`, `estimate`, `std_error`, `z`, `p_value`,
/// `ci_lower`, `ci_upper` (the two-sided `level` interval) and `covariance`.
#[pyfunction]
#[pyo3(signature = (model, x, l2=0.0, level=0.95, threads=None))]
pub fn fvbm_inference<'py>(
    py: Python<'py>,
    model: PyRef<'py, NativeModel>,
    x: PyReadonlyArray2<'py, u8>,
    l2: f64,
    level: f64,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    if !(level > 0.0 && level < 1.0) {
        return Err(PyValueError::new_err(format!(
            "level must be in (0, 1), got {level}"
        )));
    }
    let AnyModel::Fvbm(m) = &model.model else {
        return Err(PyValueError::new_err("standard errors need an FVBM"));
    };
    let data = convert::dataset(&x, Cards::Binary)?;
    let inf = run::released(py, threads, || inference::sandwich(m, &data, l2))?.py()?;
    let p = inf.names.len();
    let (lower, upper): (Vec<f64>, Vec<f64>) = (0..p).map(|a| inf.interval(a, level)).unzip();
    let d = PyDict::new(py);
    d.set_item("names", inf.names)?;
    d.set_item("estimate", PyArray1::from_vec(py, inf.estimate))?;
    d.set_item("std_error", PyArray1::from_vec(py, inf.std_error))?;
    d.set_item("z", PyArray1::from_vec(py, inf.z))?;
    d.set_item("p_value", PyArray1::from_vec(py, inf.p_value))?;
    d.set_item("ci_lower", PyArray1::from_vec(py, lower))?;
    d.set_item("ci_upper", PyArray1::from_vec(py, upper))?;
    d.set_item("covariance", convert::matrix_f64(py, inf.covariance, p, p)?)?;
    Ok(d)
}

/// `KL(p ‖ q)` in nats from a probability table `p` and the log-probabilities `log_q` of the
/// same states.
#[pyfunction]
pub fn kl_divergence(
    p: PyReadonlyArray1<'_, f64>,
    log_q: PyReadonlyArray1<'_, f64>,
) -> PyResult<f64> {
    let p = p
        .as_slice()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let q = log_q
        .as_slice()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    boltzkit::estimate::metrics::kl_divergence(p, q).py()
}
