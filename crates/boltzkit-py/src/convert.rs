//! numpy arrays in and out: data matrices become [`Dataset`]s, results become arrays.
//!
//! The Python layer (`boltzkit._validation`) has already turned any accepted input (bool,
//! int*, float32/64) into a C-contiguous `uint8` matrix; a C-contiguous `uint8` matrix is
//! passed as it is. Here the matrix becomes a [`Dataset`] read in place, without a copy
//! ([`Dataset::from_shared_view`]), whose constructor checks the values: the one check on
//! the way into a fit.

use crate::error::IntoPyResult;
use boltzkit::data::{inferred_cardinalities, Dataset};
use boltzkit::estimate::Estimate;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

/// How the cardinalities of a dataset are set.
pub enum Cards {
    /// Every variable binary (RBM, FVBM).
    Binary,
    /// Inferred as column maximum + 1, at least 2 (FSLL).
    Inferred,
    /// Declared (FSLL `cardinalities=`).
    Given(Vec<u32>),
}

/// A dataset reading a C-contiguous `uint8` matrix in place, its values checked by the
/// library.
///
/// The dataset holds a reference to the array object (so its buffer stays allocated) and
/// views its buffer. The caller keeps the dataset, and every clone of it, inside the call
/// that received `x`: during the call the numpy crate's shared borrow of `x` keeps Rust
/// code from writing the array, and no dataset outlives the call (none is stored in a
/// returned object), which is the contract of [`Dataset::from_shared_view`]. (Python code
/// of another thread writing the array while the GIL is released is outside any extension's
/// control, as for every numpy extension that releases the GIL.)
pub fn dataset(x: &PyReadonlyArray2<'_, u8>, cards: Cards) -> PyResult<Dataset> {
    if !x.is_c_contiguous() {
        return Err(PyValueError::new_err(
            "X must be C-contiguous (internal: validation should ensure it)",
        ));
    }
    if x.shape()[1] == 0 {
        return Err(PyValueError::new_err("X has no columns"));
    }
    let view = x.as_array();
    let cardinalities = match cards {
        Cards::Binary => vec![2; view.ncols()],
        Cards::Given(c) => c,
        Cards::Inferred => inferred_cardinalities(view.view()),
    };
    let owner: Arc<dyn Send + Sync> = Arc::new(x.as_unbound().clone_ref(x.py()));
    // SAFETY: `owner` keeps the array object, hence its buffer, alive; the buffer is not
    // written while the dataset lives (see above).
    unsafe { Dataset::from_shared_view(owner, view, cardinalities) }.py()
}

/// A `rows × cols` float64 array from row-major values.
pub fn matrix_f64<'py>(
    py: Python<'py>,
    v: Vec<f64>,
    rows: usize,
    cols: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    PyArray1::from_vec(py, v).reshape([rows, cols])
}

/// A `rows × cols` float32 array from row-major values.
pub fn matrix_f32<'py>(
    py: Python<'py>,
    v: Vec<f32>,
    rows: usize,
    cols: usize,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    PyArray1::from_vec(py, v).reshape([rows, cols])
}

/// The values of a dataset as a `uint8` array.
pub fn dataset_array<'py>(py: Python<'py>, d: &Dataset) -> PyResult<Bound<'py, PyArray2<u8>>> {
    let (rows, cols) = (d.n_samples(), d.n_vars());
    let flat: Vec<u8> = d.values().iter().copied().collect();
    PyArray1::from_vec(py, flat).reshape([rows, cols])
}

/// An [`Estimate`] as a dict: `value`, `stderr`, `lower`, `upper`, `method`.
pub fn estimate<'py>(py: Python<'py>, e: &Estimate) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("value", e.value)?;
    d.set_item("stderr", e.stderr)?;
    d.set_item("lower", e.lower)?;
    d.set_item("upper", e.upper)?;
    d.set_item("method", e.method.name())?;
    Ok(d)
}
