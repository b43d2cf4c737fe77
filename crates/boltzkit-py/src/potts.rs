//! Potts models and direct coupling analysis: alignments, sequence weights, the
//! pseudo-likelihood fit, coupling scores, pseudo-log-likelihoods, contact precision. Each
//! call is the library's (`boltzkit::potts`, the pipeline in `potts::dca` the CLI also runs);
//! settings arrive as one JSON object that the library's serde type and `check()` validate.

use crate::convert::{self, Cards};
use crate::error::IntoPyResult;
use crate::fitting::{control, pending, FitResult, Raised};
use crate::model::NativeModel;
use crate::run;
use boltzkit::any_model::AnyModel;
use boltzkit::fit::{Count, Interrupt, Run};
use boltzkit::potts::contacts::{
    contact_precision as precision, ranked_pairs, read_distances, ContactParams, Distances,
};
use boltzkit::potts::dca::{fit_codes, fit_metadata, pseudo_log_likelihoods};
use boltzkit::potts::moments::compare_moments;
use boltzkit::potts::plm::{PlmParams, PlmProgress};
use boltzkit::potts::scores::{model_scores, PairScore, ScoreParams};
use boltzkit::potts::weights::sequence_weights as weights_of;
use boltzkit::potts::{read_alignment as read, AlignmentParams, Alphabet, Potts};
use boltzkit::settings::from_json;
use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// Reads an alignment with `settings` (JSON of `AlignmentParams`): a dict of `codes`
/// (uint8, n × L), `names`, `rows` (file indices of the kept sequences), `columns` (0-based),
/// `positions` (plmc's), `alphabet`, `focus` (row or None), `n_read`. With `for_fit`, an
/// alignment no model can be fitted to (one sequence, a column of gaps only) is refused.
#[pyfunction]
pub fn read_alignment<'py>(
    py: Python<'py>,
    path: PathBuf,
    settings_json: &str,
    for_fit: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let params: AlignmentParams = from_json("alignment", settings_json).py()?;
    let ali = run::released(py, None, || {
        let ali = read(&path, &params)?;
        if for_fit {
            ali.check_fittable(&path)?;
        }
        Ok::<_, boltzkit::Error>(ali)
    })?
    .py()?;
    let d = PyDict::new(py);
    let (n, l) = ali.codes.dim();
    let codes: Vec<u8> = ali.codes.iter().copied().collect();
    d.set_item("codes", PyArray1::from_vec(py, codes).reshape([n, l])?)?;
    d.set_item("names", &ali.names)?;
    d.set_item("rows", &ali.rows)?;
    d.set_item("columns", &ali.columns)?;
    d.set_item("positions", &ali.positions)?;
    d.set_item("alphabet", ali.alphabet.letters())?;
    d.set_item("focus", ali.focus)?;
    d.set_item("n_read", ali.n_read)?;
    Ok(d)
}

/// Sequence weights `1 / (neighbours at identity ≥ identity)` of the rows of `x`.
#[pyfunction]
#[pyo3(signature = (x, identity, threads=None))]
pub fn sequence_weights<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, u8>,
    identity: f64,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let view = x.as_array();
    let w = run::released(py, threads, || weights_of(view, identity))?.py()?;
    Ok(PyArray1::from_vec(py, w))
}

/// Fits a Potts model by pseudo-likelihood (`settings_json`: `PlmParams`, the one settings
/// object `Potts` passes) to the rows of `x`, weighted by `weights`. `alphabet` names the
/// states and gives their number `q`; without it `q` is the largest code + 1. The callback
/// gets `{iteration, objective, grad_norm}`; Ctrl-C stops after the current iteration.
#[pyfunction]
#[pyo3(signature = (x, settings_json, weights=None, alphabet=None, callback=None, threads=None))]
pub fn fit_potts(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, u8>,
    settings_json: &str,
    weights: Option<PyReadonlyArray1<'_, f64>>,
    alphabet: Option<String>,
    callback: Option<Py<PyAny>>,
    threads: Option<usize>,
) -> PyResult<FitResult> {
    let params: PlmParams = from_json("Potts", settings_json).py()?;
    let learner = params.check().py()?;
    let alphabet = alphabet.as_deref().map(Alphabet::parse).transpose().py()?;
    let states = match &alphabet {
        Some(a) => a.len() as u32,
        None => x.as_array().iter().max().map_or(1, |&m| u32::from(m) + 1),
    };
    let data = convert::dataset(&x, Cards::Given(vec![states; x.shape()[1]]))?;
    let w: Option<Vec<f64>> = weights.map(|w| w.as_array().to_vec());
    let raised = Raised::default();
    let flag = Interrupt::new();
    let work = || {
        let mut run = Run::new().interrupt(flag.clone());
        if let Some(cb) = &callback {
            run = run.observe(|p: &mut PlmProgress| {
                Ok(control(cb, &raised, Count::iterations(p.iteration), |d| {
                    d.set_item("iteration", p.iteration)?;
                    d.set_item("objective", p.objective)?;
                    d.set_item("grad_norm", p.grad_norm)
                }))
            });
        }
        let fit = fit_codes(&data, w.as_deref(), alphabet.as_ref(), &learner, run)?;
        let meta = fit_metadata(&learner, &fit.record)?;
        Ok::<_, boltzkit::Error>((fit, meta))
    };
    let (out, signal) = run::interruptible(py, threads, &flag, work)?;
    let (fit, meta) = out.py()?;
    let mut record = serde_json::to_value(&fit.record).unwrap_or_default();
    record["stop_reason"] = serde_json::json!(fit.record.stop.to_string());
    let model = NativeModel::new(AnyModel::Potts(fit.model), None, meta);
    Ok((model, record.to_string(), pending(py, &raised, signal)))
}

/// Pearson correlations of the one-site frequencies, two-site frequencies and connected
/// correlations of `data` (weights `weights`) and `samples` (the library's
/// `potts::moments::compare_moments`), with the number of pairs.
#[pyfunction]
#[pyo3(signature = (data, weights, samples, states))]
pub fn potts_compare_moments<'py>(
    py: Python<'py>,
    data: PyReadonlyArray2<'_, u8>,
    weights: Option<PyReadonlyArray1<'_, f64>>,
    samples: PyReadonlyArray2<'_, u8>,
    states: Vec<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let a = convert::dataset(&data, Cards::Given(states.clone()))?;
    let b = convert::dataset(&samples, Cards::Given(states))?;
    let w: Option<Vec<f64>> = weights.map(|w| w.as_array().to_vec());
    let c = compare_moments(&a, w.as_deref(), &b, None).py()?;
    let d = PyDict::new(py);
    d.set_item("frequencies", c.frequencies)?;
    d.set_item("pair_frequencies", c.pair_frequencies)?;
    d.set_item("connected_correlations", c.connected_correlations)?;
    d.set_item("pairs", c.pairs)?;
    Ok(d)
}

fn potts(model: &NativeModel) -> PyResult<&Potts> {
    match &model.model {
        AnyModel::Potts(m) => Ok(m),
        other => Err(PyValueError::new_err(format!(
            "expected a Potts model, got {}",
            other.kind()
        ))),
    }
}

/// Fields (L × q) and couplings (L × L × q × q) of a Potts model, dense, with `states` and
/// `alphabet`.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn potts_params<'py>(
    py: Python<'py>,
    model: PyRef<'py, NativeModel>,
) -> PyResult<(
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<f64>>,
    Vec<usize>,
    Option<String>,
)> {
    let m = potts(&model)?;
    let (l, q) = (m.n_sites(), m.max_states());
    let h = convert::matrix_f64(py, m.fields_dense(), l, q)?;
    let j = PyArray1::from_vec(py, m.couplings_dense());
    Ok((h, j, m.states().to_vec(), m.alphabet()))
}

/// The L × L coupling scores (zero-sum gauge, Frobenius, APC when `apc`).
#[pyfunction]
#[pyo3(signature = (model, apc=true, exclude_gap=false, threads=None))]
pub fn potts_scores<'py>(
    py: Python<'py>,
    model: PyRef<'py, NativeModel>,
    apc: bool,
    exclude_gap: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let m = potts(&model)?;
    let params = ScoreParams { apc, exclude_gap };
    let s = run::released(py, threads, || model_scores(m, &params))?.py()?;
    let l = s.nrows();
    convert::matrix_f64(py, s.into_raw_vec_and_offset().0, l, l)
}

/// The pseudo-log-likelihood of every row of `x`.
#[pyfunction]
#[pyo3(signature = (model, x, threads=None))]
pub fn potts_pseudo_log_likelihood<'py>(
    py: Python<'py>,
    model: PyRef<'py, NativeModel>,
    x: PyReadonlyArray2<'py, u8>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let m = potts(&model)?;
    let states = m.states().iter().map(|&k| k as u32).collect();
    let data = convert::dataset(&x, Cards::Given(states))?;
    let v = run::released(py, threads, || pseudo_log_likelihoods(m, &data))?.py()?;
    Ok(PyArray1::from_vec(py, v))
}

/// Precision of the top L/5, L/2, L, 2L of the pairs `(i, j, score)` against `distances`
/// (a file path, or an array of rows `i, j, distance`), with `settings_json` (`ContactParams`):
/// a dict as the CLI's `--json`.
#[pyfunction]
#[pyo3(signature = (i, j, score, length, distances, settings_json))]
pub fn contact_precision<'py>(
    py: Python<'py>,
    i: Vec<i64>,
    j: Vec<i64>,
    score: Vec<f64>,
    length: usize,
    distances: &Bound<'py, PyAny>,
    settings_json: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let params: ContactParams = from_json("contact_precision", settings_json).py()?;
    if i.len() != j.len() || i.len() != score.len() {
        return Err(PyValueError::new_err(
            "i, j and score must have the same length",
        ));
    }
    let d: Distances = if let Ok(path) = distances.extract::<PathBuf>() {
        read_distances(&path).py()?
    } else {
        let rows: PyReadonlyArray2<'py, f64> = distances.extract().map_err(|_| {
            PyValueError::new_err(
                "distances must be a file path or an (n, 3) array of i, j, distance",
            )
        })?;
        let a = rows.as_array();
        if a.ncols() != 3 {
            return Err(PyValueError::new_err(format!(
                "distances must have 3 columns (i, j, distance), got {}",
                a.ncols()
            )));
        }
        Distances::from_pairs(a.outer_iter().map(|r| (r[0] as i64, r[1] as i64, r[2])))
    };
    let pairs: Vec<PairScore> = (0..i.len())
        .map(|k| PairScore::new(i[k].min(j[k]), i[k].max(j[k]), score[k]))
        .collect();
    let report = precision(&pairs, length, &d, &params).py()?;
    let (ranked, _) = ranked_pairs(&pairs, &d, &params).py()?;
    let json = serde_json::to_string(&report).unwrap_or_default();
    let parsed = py.import("json")?.call_method1("loads", (json,))?;
    let out = parsed.cast_into::<PyDict>()?;
    out.set_item("contact_pairs", d.contacts(&params))?;
    let ranked: Vec<(i64, i64, bool)> = ranked.iter().map(|(p, c)| (p.i, p.j, *c)).collect();
    out.set_item("ranked_pairs", ranked)?;
    Ok(out)
}
