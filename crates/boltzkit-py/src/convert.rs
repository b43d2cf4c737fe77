//! numpy arrays in and out: data matrices become [`Dataset`]s, results become arrays.
//!
//! The Python layer (`boltzkit._validation`) has already turned any accepted input (bool,
//! uint8, int*, float32/64) into a C-contiguous `uint8` matrix and checked its values, naming
//! the row and column at fault; here the matrix is read as one slice (no per-element
//! conversion) and copied once into the library's owned [`Dataset`].

use crate::error::IntoPyResult;
use boltzkit::data::Dataset;
use boltzkit::estimate::Estimate;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// How the cardinalities of a dataset are set.
pub enum Cards {
    /// Every variable binary (RBM, FVBM).
    Binary,
    /// Inferred as column maximum + 1, at least 2 (FSLL).
    Inferred,
    /// Declared (FSLL `cardinalities=`).
    Given(Vec<u32>),
}

/// A dataset from a C-contiguous `uint8` matrix.
pub fn dataset(x: &PyReadonlyArray2<'_, u8>, cards: Cards) -> PyResult<Dataset> {
    let shape = x.shape();
    let (rows, cols) = (shape[0], shape[1]);
    let values = x.as_slice().map_err(|_| {
        PyValueError::new_err("X must be C-contiguous (internal: validation should ensure it)")
    })?;
    if cols == 0 {
        return Err(PyValueError::new_err("X has no columns"));
    }
    let values = values.to_vec();
    match cards {
        Cards::Binary => Dataset::from_flat(values, cols, vec![2; cols]).py(),
        Cards::Given(c) => Dataset::from_flat(values, cols, c).py(),
        Cards::Inferred => {
            let a = ndarray::Array2::from_shape_vec((rows, cols), values)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            Dataset::with_inferred_cardinalities(a).py()
        }
    }
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
