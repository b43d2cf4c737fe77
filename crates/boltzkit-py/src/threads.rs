//! The thread limit set from outside the package: threadpoolctl's `threadpool_limits` (as
//! scikit-learn and joblib use it) calls [`boltzkit_set_num_threads`] through the controller
//! that `python/boltzkit/_threads.py` registers, and an estimator with `n_jobs=None` then
//! runs on that many threads (`_threads.inherited_threads`).
//!
//! The limit is one number for the process, read when a call starts its pool: 0 means none
//! set.

use pyo3::prelude::*;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The limit; 0 when none is set.
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// The thread limit set by [`boltzkit_set_num_threads`], 0 when none (threadpoolctl's
/// controller calls it through `ctypes`).
#[no_mangle]
pub extern "C" fn boltzkit_get_num_threads() -> c_int {
    c_int::try_from(LIMIT.load(Ordering::Relaxed)).unwrap_or(c_int::MAX)
}

/// Sets the thread limit of estimators with `n_jobs=None` (0 or less: none).
#[no_mangle]
pub extern "C" fn boltzkit_set_num_threads(n: c_int) {
    LIMIT.store(usize::try_from(n).unwrap_or(0), Ordering::Relaxed);
}

/// The thread limit set through threadpoolctl, or `None`.
#[pyfunction]
pub fn thread_limit() -> Option<usize> {
    Some(LIMIT.load(Ordering::Relaxed)).filter(|&n| n > 0)
}
