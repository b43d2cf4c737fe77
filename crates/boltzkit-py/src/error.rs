//! The one place a library error becomes a Python exception.
//!
//! Invalid settings, invalid data, wrong shapes and models too large for an exact method are
//! the caller's to fix: `ValueError`. A job needing more memory than the machine has is
//! `MemoryError`. File trouble, and a data set no source gave, is `OSError`. A numerical
//! failure or an internal error is `RuntimeError`. The message is the library's one line.

use boltzkit::Error;
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::PyErr;

/// The Python exception for a library error.
pub fn to_py(err: Error) -> PyErr {
    let msg = err.to_string();
    match err {
        Error::InvalidParam { .. }
        | Error::InvalidData(_)
        | Error::Shape { .. }
        | Error::TooLarge { .. }
        | Error::Parse { .. }
        | Error::UnsupportedFormat { .. }
        | Error::Model { .. } => PyValueError::new_err(msg),
        Error::Io { .. } | Error::DataSet { .. } => PyOSError::new_err(msg),
        Error::Memory { .. } => PyMemoryError::new_err(msg),
        _ => PyRuntimeError::new_err(msg),
    }
}

/// `Result<T, boltzkit::Error>` into a `PyResult<T>`.
pub trait IntoPyResult<T> {
    /// Maps the error with [`to_py`].
    fn py(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPyResult<T> for boltzkit::Result<T> {
    fn py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
