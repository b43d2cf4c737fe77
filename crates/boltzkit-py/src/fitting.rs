//! Every fitting call of the binding, in one module: RBM trainers, Frank-Wolfe, the FVBM
//! solvers and the FSLL learner, each wired exactly as the CLI wires it (the same seeds
//! derived from the same `seed`, the same defaults), so that a Python fit and a CLI fit with
//! the same settings give the same bits.
//!
//! Every learner is the library's one fit shape: settings → `check()` → a
//! [`Learner`] whose `fit_with(data, Run)` returns `Fit { model, record }`; the binding adds
//! to the `Run` its Python callback (a [`boltzkit::fit::Observer`]) and the interrupt flag Ctrl-C sets.
//!
//! Each function runs the learner on a worker thread ([`run::interruptible`]) and returns
//! `(model, record_json, signal)`: the fitted (or, after Ctrl-C, the last good) model, the
//! learner's record as JSON, and the exception to raise once the model is kept (Ctrl-C, or an
//! exception raised by the `callback`).

use crate::convert::{self, Cards};
use crate::error::IntoPyResult;
use crate::model::NativeModel;
use crate::run;
use boltzkit::any_model::AnyModel;
use boltzkit::data::{Binarize, Dataset};
use boltzkit::fit::{Control, Count, Interrupt, Learner, Run, StopReason};
use boltzkit::fsll::{self, FsllParams};
use boltzkit::fvbm::{pcd, FvbmParams};
use boltzkit::provenance;
use boltzkit::rbm::eval_settings::EvalParams;
use boltzkit::rbm::frank_wolfe::{CheckedFwParams, FwParams, FwProgress};
use boltzkit::rbm::train::{
    AisLogLikelihood, CheckedRbmParams, ExactLogLikelihood, Progress, RbmParams,
};
use boltzkit::rbm::Rbm;
use boltzkit::rng::derive_seed;
use numpy::PyReadonlyArray2;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::json;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What a fit returns to Python: the model, its record as JSON, and the exception to raise
/// after keeping the model.
pub(crate) type FitResult = (NativeModel, String, Option<Py<PyAny>>);

/// A Frank-Wolfe fit: the grown model, the model of the selected size, the record, the
/// exception to raise.
type FwFitResult = (NativeModel, Option<NativeModel>, String, Option<Py<PyAny>>);

/// The first exception raised by a callback, kept for the calling thread.
#[derive(Clone, Default)]
pub(crate) struct Raised(Arc<Mutex<Option<PyErr>>>);

impl Raised {
    fn keep(&self, e: PyErr) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
    }

    fn take(&self) -> Option<PyErr> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Calls the user's `callback(info)` with the GIL taken on the worker thread. `False` from the
/// callback stops the run, an exception is kept (and stops it); the model observed is kept.
pub(crate) fn control(
    cb: &Py<PyAny>,
    raised: &Raised,
    after: Count,
    fill: impl FnOnce(&Bound<'_, PyDict>) -> PyResult<()>,
) -> Control {
    if call_back(cb, raised, fill) {
        Control::Continue
    } else {
        Control::Stop(StopReason::EarlyStopped {
            after,
            detail: "the callback asked to stop (or raised)".into(),
        })
    }
}

/// Calls `callback(info)`; whether the run should go on.
fn call_back(
    cb: &Py<PyAny>,
    raised: &Raised,
    fill: impl FnOnce(&Bound<'_, PyDict>) -> PyResult<()>,
) -> bool {
    Python::attach(|py| {
        let info = PyDict::new(py);
        let go_on = fill(&info).and_then(|_| cb.call1(py, (info,))).map(|r| {
            !r.bind(py)
                .is(pyo3::types::PyBool::new(py, false).to_owned())
        });
        match go_on {
            Ok(g) => g,
            Err(e) => {
                raised.keep(e);
                false
            }
        }
    })
}

/// The exception to raise after a fit: the callback's first, else the signal's.
pub(crate) fn pending(py: Python<'_>, raised: &Raised, signal: Option<PyErr>) -> Option<Py<PyAny>> {
    raised
        .take()
        .or(signal)
        .map(|e| e.into_value(py).into_any())
}

/// What a model file records as the starting model of a warm start from a model in memory
/// (a fitted estimator, a `NativeModel`), which has no path.
const IN_MEMORY: &str = "(a model in memory)";

/// A warm start's model and the model file it was read from (`fit(X, init=PATH)`), if any.
type Init<'py> = (PyRef<'py, NativeModel>, Option<PathBuf>);

/// The starting model a file records (`init_model`): from a model file, its path as given,
/// written as the CLI writes its `--model` path; from a model in memory, [`IN_MEMORY`];
/// `None` for a fresh model.
fn init_model(init: Option<&Init<'_>>) -> Option<String> {
    init.map(|(_, path)| {
        path.as_ref()
            .map_or_else(|| IN_MEMORY.to_string(), |p| p.display().to_string())
    })
}

/// The gap tolerance the CLI records for an RBM fit without early stopping (its
/// `--gap-tol` default): the Python RBM has no early stopping.
const CLI_GAP_TOL: f64 = 5.0;

/// The binarization Python applied before the fit (`binarize=T`), as the file records it.
fn binarization(threshold: Option<f64>) -> Binarize {
    threshold.map_or(Binarize::None, Binarize::Threshold)
}

/// The default settings object of a learner (`"rbm"`, `"rbm-units"`: an RBM with other unit
/// types, `"frank-wolfe"`, `"fsll"`, `"potts"`: the
/// DCA pipeline's fit; `"fvbm-ALGO"` for an FVBM solver, as `"fvbm-newton"`; `"contacts"`:
/// contact precision's; `"eval"`: a likelihood estimate's), as JSON: the estimators read their keyword arguments' defaults from it,
/// so each default is written once, in the library.
#[pyfunction]
pub fn default_settings(kind: &str) -> PyResult<String> {
    let value = if kind == "rbm" {
        boltzkit::settings::to_json(&RbmParams::default())
    } else if kind == "rbm-units" {
        boltzkit::settings::to_json(&boltzkit::rbm::units::UnitRbmParams::default())
    } else if kind == "fsll" {
        boltzkit::settings::to_json(&FsllParams::default())
    } else if kind == "frank-wolfe" {
        boltzkit::settings::to_json(&FwParams::default())
    } else if kind == "potts" {
        boltzkit::settings::to_json(&boltzkit::potts::dca::pipeline_params())
    } else if kind == "eval" {
        boltzkit::settings::to_json(&EvalParams::default())
    } else if kind == "contacts" {
        boltzkit::settings::to_json(&boltzkit::potts::contacts::ContactParams::default())
    } else if let Some(algo) = kind.strip_prefix("fvbm-") {
        FvbmParams::default_for(algo).and_then(|p| boltzkit::settings::to_json(&p))
    } else {
        return Err(PyValueError::new_err(format!(
            "no settings schema named {kind:?} (known: rbm, rbm-units, frank-wolfe, fsll, potts, contacts, \
             eval, fvbm-ALGO)"
        )));
    };
    Ok(value.py()?.to_string())
}

// ---------------------------------------------------------------------------------------------
// RBM trainers

/// The standard RBM a warm start begins from: `init`'s model (a standard Frank-Wolfe model is
/// one); any other kind is a `ValueError`.
fn start_rbm(init: &NativeModel) -> PyResult<Rbm> {
    match &init.model {
        AnyModel::Rbm(r) => Ok(r.clone()),
        AnyModel::FrankWolfe(f) => f.to_rbm().py(),
        other => Err(PyValueError::new_err(format!(
            "init must be an RBM, got {}",
            other.kind()
        ))),
    }
}

/// Trains an RBM as `boltzkit rbm fit` does, through `RbmParams` (a fresh model initialized
/// from `derive_seed(seed, 0)`, the loop seeded by `derive_seed(seed, 1)`, the AIS monitor by
/// `derive_seed(seed, 3)`); `init` (a model and the file it was read from, which the model
/// file records as the CLI records `--model`) continues from a model instead. `settings` is the learner's
/// settings object (JSON, [`boltzkit::settings`]): the estimator's keyword arguments under the
/// same names, checked by the library's `check()`. `monitor` is the log-likelihood monitor
/// (`"none"`, `"exact"`, `"ais"`) and the epochs between evaluations (the callback's too).
#[pyfunction]
#[pyo3(signature = (x, settings, init=None, monitor=("none".to_string(), 1), callback=None,
    threads=None, binarize=None))]
pub fn fit_rbm(
    x: PyReadonlyArray2<'_, u8>,
    settings: &str,
    init: Option<Init<'_>>,
    monitor: (String, usize),
    callback: Option<Py<PyAny>>,
    threads: Option<usize>,
    binarize: Option<f64>,
) -> PyResult<FitResult> {
    let py = x.py();
    let (monitor, eval_every) = (monitor.0.as_str(), monitor.1);
    let data = convert::dataset(&x, Cards::Binary)?;
    let mut params: RbmParams = boltzkit::settings::from_json("RBM", settings).py()?;
    params.train.check().py()?;
    if !matches!(monitor, "none" | "exact" | "ais") {
        return Err(PyValueError::new_err(format!(
            "monitor must be None, 'exact' or 'ais', got {monitor:?}"
        )));
    }
    let start = init.as_ref().map(|(m, _)| start_rbm(m)).transpose()?;
    if let Some(r) = &start {
        params.n_hidden = r.n_hidden();
    }
    let learner = params.check().py()?;
    let seed = params.train.seed;
    let flag = Interrupt::new();
    let raised = Raised::default();
    let work = || -> boltzkit::Result<_> {
        let rbm = match start {
            Some(r) => r,
            None => learner.init(&data)?,
        };
        let mut run: Run<'_, CheckedRbmParams> = Run::new().interrupt(flag.clone());
        match monitor {
            "exact" => {
                run = run.observe_every(
                    ExactLogLikelihood::new("train_ll", data.clone()),
                    eval_every,
                )
            }
            "ais" => {
                let eval = EvalParams::monitor(derive_seed(seed, 3));
                let obs = AisLogLikelihood::from_eval("train_ll", data.clone(), &eval)?;
                run = run.observe_every(obs, eval_every);
            }
            _ => {}
        }
        if let Some(cb) = &callback {
            let hook = |p: &mut Progress<'_>| {
                Ok(control(cb, &raised, Count::epochs(p.epoch), |d| {
                    d.set_item("epoch", p.epoch)?;
                    d.set_item("step", p.step)?;
                    d.set_item("wall_s", p.wall_s)?;
                    d.set_item("learning_rate", p.learning_rate)?;
                    d.set_item("metrics", p.metrics.clone())
                }))
            };
            run = run.observe_every(hook, eval_every.max(1));
        }
        learner.fit_from(rbm, &data, run)
    };
    let (outcome, signal) = run::interruptible(py, threads, &flag, work)?;
    let outcome = outcome.py()?;
    let rec = &outcome.record;
    let run = provenance::rbm_run_entries(
        None,
        false,
        CLI_GAP_TOL,
        &binarization(binarize),
        init_model(init.as_ref()),
    );
    let meta = provenance::rbm_fit(&params, &run, rec.epochs, &rec.stop, None).py()?;
    let mut record = serde_json::to_value(rec).unwrap_or_default();
    record["stop_reason"] = json!(rec.stop.to_string());
    let model = NativeModel::new(AnyModel::Rbm(outcome.model), outcome.record.offsets, meta);
    Ok((model, record.to_string(), pending(py, &raised, signal)))
}

// ---------------------------------------------------------------------------------------------
// Frank-Wolfe

/// Grows an RBM by Frank-Wolfe as `boltzkit rbm fit --algo frank-wolfe` does. `settings` is
/// the learner's settings object (JSON, [`FwParams`] by name, [`boltzkit::settings`]) with the
/// estimator's seed, from which the learner's is derived (`derive_seed(seed, 1)`). Returns the
/// grown model; the record's `selected` holds the model of the selected size as model-file
/// bytes when a validation set was given. `init` grows on from a model (and the file it was
/// read from, recorded as the CLI records `--model`).
#[pyfunction]
#[pyo3(signature = (x, settings, valid=None, init=None, callback=None, threads=None,
    binarize=None))]
pub fn fit_frank_wolfe(
    x: PyReadonlyArray2<'_, u8>,
    settings: &str,
    valid: Option<PyReadonlyArray2<'_, u8>>,
    init: Option<Init<'_>>,
    callback: Option<Py<PyAny>>,
    threads: Option<usize>,
    binarize: Option<f64>,
) -> PyResult<FwFitResult> {
    let py = x.py();
    let data = convert::dataset(&x, Cards::Binary)?;
    // `valid` (the numpy borrow) lives to the end of the call, as its dataset must
    let valid_data = valid
        .as_ref()
        .map(|v| convert::dataset(v, Cards::Binary))
        .transpose()?;
    let mut params: FwParams = boltzkit::settings::from_json("frank-wolfe", settings).py()?;
    let seed = params.seed;
    params.seed = derive_seed(seed, 1);
    let learner: CheckedFwParams = params.check().py()?;
    let start = init.as_ref().map(|(m, _)| start_rbm(m)).transpose()?;
    let flag = Interrupt::new();
    let raised = Raised::default();
    let work = || -> boltzkit::Result<_> {
        let mut run: Run<'_, CheckedFwParams> = Run::new().interrupt(flag.clone());
        if let Some(cb) = &callback {
            let hook = |p: &mut FwProgress<'_>| {
                Ok(control(cb, &raised, Count::units(p.iteration.units), |d| {
                    d.set_item("iteration", p.iteration.iteration)?;
                    d.set_item("units", p.iteration.units)?;
                    d.set_item("alpha", p.iteration.alpha)?;
                    d.set_item("wall_s", p.wall_s)?;
                    d.set_item("evaluation", p.evaluation)?;
                    d.set_item("metrics", p.metrics.clone())
                }))
            };
            run = run.observe(hook);
        }
        match &start {
            Some(rbm) => learner.fit_from(rbm, &data, valid_data.as_ref(), run),
            None => learner.fit_validated(&data, valid_data.as_ref(), run),
        }
    };
    let (fit, signal) = run::interruptible(py, threads, &flag, work)?;
    let fit = fit.py()?;
    let rec = &fit.record;
    let run_entries =
        provenance::fw_run_entries(&binarization(binarize), init_model(init.as_ref()));
    let meta = provenance::fw_fit(&params, &run_entries, seed, rec, None).py()?;
    let mut record = serde_json::to_value(rec).unwrap_or_default();
    record["stop_reason"] = json!(rec.stop.to_string());
    let selected = fit
        .record
        .selected
        .map(|m| NativeModel::new(AnyModel::FrankWolfe(m), None, meta.clone()));
    let model = NativeModel::new(AnyModel::FrankWolfe(fit.model), None, meta);
    Ok((
        model,
        selected,
        record.to_string(),
        pending(py, &raised, signal),
    ))
}

// ---------------------------------------------------------------------------------------------
// FVBM

/// Fits an FVBM as `boltzkit fvbm fit` does. `settings` is the fit's settings object (JSON,
/// [`FvbmParams`]): `algo` and the estimator's keyword arguments under the schema's names, put
/// over that solver's defaults and checked by the library (`bslm` stops at first-order
/// optimality, `ga` and `newton` at the paper's gain rule; `pcd` is seeded by `seed`). The
/// callback receives `{iteration, objective}` per sweep (MPLE, MLE) or `{update, mismatch}`
/// (PCD); Ctrl-C stops every solver after its current iteration.
#[pyfunction]
#[pyo3(signature = (x, settings, callback=None, threads=None))]
pub fn fit_fvbm(
    x: PyReadonlyArray2<'_, u8>,
    settings: &str,
    callback: Option<Py<PyAny>>,
    threads: Option<usize>,
) -> PyResult<FitResult> {
    let py = x.py();
    let data = convert::dataset(&x, Cards::Binary)?;
    let params = FvbmParams::from_json(settings).py()?;
    params.check().py()?;
    let raised = Raised::default();
    let flag = Interrupt::new();
    let work = || -> boltzkit::Result<(boltzkit::fvbm::Fvbm, serde_json::Value)> {
        let (cb, raised) = (callback.as_ref(), &raised);
        // a Run for the MPLE / MLE solvers (their progress: sweep and objective)
        macro_rules! solver_run {
            () => {{
                let mut run = Run::new().interrupt(flag.clone());
                if let Some(cb) = cb {
                    run = run.observe(move |p: &mut boltzkit::fvbm::Progress| {
                        Ok(control(cb, raised, Count::iterations(p.iteration), |d| {
                            d.set_item("iteration", p.iteration)?;
                            d.set_item("objective", p.objective)
                        }))
                    });
                }
                run
            }};
        }
        let with_exists = |fit: boltzkit::fvbm::FvbmFit| {
            let mut rec = serde_json::to_value(&fit.record).unwrap_or_default();
            rec["mple_exists"] = json!(fit.record.mple_exists());
            rec["stop_reason"] = json!(fit.record.stop.to_string());
            (fit.model, rec)
        };
        Ok(match &params {
            FvbmParams::Plm(p) => with_exists(p.check()?.fit_with(&data, solver_run!())?),
            FvbmParams::Bslm(p) => with_exists(p.check()?.fit_with(&data, solver_run!())?),
            FvbmParams::Ga(p) => with_exists(p.check()?.fit_with(&data, solver_run!())?),
            FvbmParams::Newton(p) => with_exists(p.check()?.fit_with(&data, solver_run!())?),
            FvbmParams::Mle(p) => {
                let fit = p.check()?.fit_with(&data, solver_run!())?;
                let mut rec = serde_json::to_value(&fit.record).unwrap_or_default();
                rec["stop_reason"] = json!(fit.record.stop.to_string());
                (fit.model, rec)
            }
            FvbmParams::Pcd(p) => {
                let mut run = Run::new().interrupt(flag.clone());
                if let Some(cb) = cb {
                    run = run.observe(move |p: &mut pcd::PcdProgress<'_>| {
                        Ok(control(cb, raised, Count::iterations(p.update), |d| {
                            d.set_item("update", p.update)?;
                            d.set_item("mismatch", p.mismatch)
                        }))
                    });
                }
                let fit = p.check()?.fit_with(&data, run)?;
                let mut rec = serde_json::to_value(&fit.record).unwrap_or_default();
                rec["stop_reason"] = json!(fit.record.stop.to_string());
                (fit.model, rec)
            }
        })
    };
    let (out, signal) = run::interruptible(py, threads, &flag, work)?;
    let (model, record) = out.py()?;
    let meta = provenance::fvbm_fit(&params, None).py()?;
    let model = NativeModel::new(AnyModel::Fvbm(model), None, meta);
    Ok((model, record.to_string(), pending(py, &raised, signal)))
}

// ---------------------------------------------------------------------------------------------
// FSLL

/// Fits an FSLL model by the greedy MDL learner as `boltzkit fsll fit` does. `settings` is
/// the learner's settings object (JSON, [`FsllParams`] by name, [`boltzkit::settings`]);
/// `cardinalities` is the data's, not a setting. The callback receives `{iteration, cost,
/// n_basis}` per iteration; Ctrl-C stops it after the current iteration.
#[pyfunction]
#[pyo3(signature = (x, settings, cardinalities=None, callback=None, threads=None))]
pub fn fit_fsll(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, u8>,
    settings: &str,
    cardinalities: Option<Vec<u32>>,
    callback: Option<Py<PyAny>>,
    threads: Option<usize>,
) -> PyResult<FitResult> {
    let data: Dataset = match cardinalities {
        Some(c) => convert::dataset(&x, Cards::Given(c))?,
        None => convert::dataset(&x, Cards::Inferred)?,
    };
    let params: FsllParams = boltzkit::settings::from_json("fsll", settings).py()?;
    let raised = Raised::default();
    let flag = Interrupt::new();
    let learner = params.check().py()?;
    let work = || {
        let mut run = Run::new().interrupt(flag.clone());
        if let Some(cb) = &callback {
            run = run.observe(|p: &mut fsll::Progress| {
                Ok(control(cb, &raised, Count::iterations(p.iteration), |d| {
                    d.set_item("iteration", p.iteration)?;
                    d.set_item("cost", p.cost)?;
                    d.set_item("n_basis", p.n_basis)
                }))
            });
        }
        learner.fit_with(&data, run)
    };
    let (fit, signal) = run::interruptible(py, threads, &flag, work)?;
    let fit = fit.py()?;
    let record = serde_json::to_value(&fit.record).unwrap_or_default();
    let meta = provenance::fsll_fit(&params, fit.record.path, record.to_string(), None).py()?;
    let model = NativeModel::new(AnyModel::Fsll(fit.model), None, meta);
    Ok((model, record.to_string(), pending(py, &raised, signal)))
}
