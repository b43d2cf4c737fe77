//! A hook the Python test suite uses to check the binding's own machinery, not the library:
//! a panic on a rayon worker, raised through either path of [`crate::run`], must reach Python
//! as a `RuntimeError` (before, a panic under `interruptible` left the caller polling
//! forever). Not part of the package's API (the leading underscore).

use crate::run;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;

/// Runs a parallel loop over 64 items on `n_jobs` workers in which item 37 panics, through
/// `run::interruptible` (`path="fit"`, how fits run) or `run::released` (`path="released"`,
/// how scoring and sampling run). Always raises.
#[pyfunction]
#[pyo3(signature = (path, n_jobs=None))]
pub fn _panic_in_worker(py: Python<'_>, path: &str, n_jobs: Option<usize>) -> PyResult<u64> {
    let work = || -> u64 {
        (0..64u64)
            .into_par_iter()
            .map(|i| {
                assert!(i != 37, "test panic on item {i}");
                i
            })
            .sum()
    };
    match path {
        "fit" => {
            let flag = boltzkit::fit::Interrupt::new();
            run::interruptible(py, n_jobs, &flag, work).map(|(r, _)| r)
        }
        "released" => run::released(py, n_jobs, work),
        _ => Err(PyValueError::new_err(format!(
            "path must be 'fit' or 'released', not {path:?}"
        ))),
    }
}
