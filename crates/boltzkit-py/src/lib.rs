//! The native half of the Python package `boltzkit` (`boltzkit._native`).
//!
//! A thin layer over the library: [`model::NativeModel`] wraps any model and answers through
//! the library's `Model` trait; [`fitting`] holds every call of a learner; [`functions`] the
//! free functions. The scikit-learn-style estimators, input validation and docstrings are
//! Python (`python/boltzkit/`). Nothing here computes what the library computes.

mod convert;
mod datasets;
mod error;
mod fitting;
mod functions;
mod model;
mod potts;
mod rbm_units;
mod run;
mod testing;
mod threads;

use pyo3::prelude::*;

/// The native module: `NativeModel`, the fitting functions and the free functions.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<model::NativeModel>()?;
    m.add_function(wrap_pyfunction!(fitting::default_settings, m)?)?;
    m.add_function(wrap_pyfunction!(fitting::fit_rbm, m)?)?;
    m.add_class::<rbm_units::NativeUnitModel>()?;
    m.add_function(wrap_pyfunction!(rbm_units::fit_unit_rbm_py, m)?)?;
    m.add_function(wrap_pyfunction!(rbm_units::is_unit_model_file, m)?)?;
    m.add_function(wrap_pyfunction!(fitting::fit_frank_wolfe, m)?)?;
    m.add_function(wrap_pyfunction!(fitting::fit_fvbm, m)?)?;
    m.add_function(wrap_pyfunction!(fitting::fit_fsll, m)?)?;
    m.add_function(wrap_pyfunction!(potts::read_alignment, m)?)?;
    m.add_function(wrap_pyfunction!(potts::sequence_weights, m)?)?;
    m.add_function(wrap_pyfunction!(potts::fit_potts, m)?)?;
    m.add_function(wrap_pyfunction!(potts::potts_params, m)?)?;
    m.add_function(wrap_pyfunction!(potts::potts_scores, m)?)?;
    m.add_function(wrap_pyfunction!(potts::potts_pseudo_log_likelihood, m)?)?;
    m.add_function(wrap_pyfunction!(potts::contact_precision, m)?)?;
    m.add_function(wrap_pyfunction!(potts::potts_compare_moments, m)?)?;
    m.add_function(wrap_pyfunction!(functions::read_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(datasets::data_registry, m)?)?;
    m.add_function(wrap_pyfunction!(datasets::data_fetch, m)?)?;
    m.add_function(wrap_pyfunction!(datasets::data_path, m)?)?;
    m.add_function(wrap_pyfunction!(functions::fvbm_inference, m)?)?;
    m.add_function(wrap_pyfunction!(functions::kl_divergence, m)?)?;
    m.add_function(wrap_pyfunction!(testing::_panic_in_worker, m)?)?;
    m.add_function(wrap_pyfunction!(threads::thread_limit, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
