//! The data registry for `boltzkit.datasets`: the registry itself, and fetching its files into
//! the cache (`boltzkit::data::registry`).

use crate::error::IntoPyResult;
use crate::run;
use boltzkit::data::registry::{self, fetch_file, DataFile, Sources};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;

/// The registry as JSON: a list of data sets (name, title, licence, citation, files with path,
/// kind, split, size, sha256, url, url_serves).
#[pyfunction]
pub fn data_registry() -> PyResult<String> {
    serde_json::to_string(registry::datasets())
        .map_err(|e| PyValueError::new_err(format!("the data registry: {e}")))
}

/// Fetches files of the data set `name` into the cache (every file, or those whose registry
/// paths are `paths`): `(registry path, local path, how it got there)` for each. `mirror` is a
/// mirror folder (default: the environment's); `offline` never uses the network.
#[pyfunction]
#[pyo3(signature = (name, paths=None, mirror=None, offline=false))]
pub fn data_fetch(
    py: Python<'_>,
    name: &str,
    paths: Option<Vec<String>>,
    mirror: Option<PathBuf>,
    offline: bool,
) -> PyResult<Vec<(String, String, String)>> {
    let set = registry::find(name).py()?;
    let files: Vec<&DataFile> = match &paths {
        None => set.files.iter().collect(),
        Some(paths) => paths
            .iter()
            .map(|p| {
                set.files.iter().find(|f| &f.path == p).ok_or_else(|| {
                    PyValueError::new_err(format!("data set {name} has no file {p}"))
                })
            })
            .collect::<PyResult<_>>()?,
    };
    let sources = sources(mirror, offline)?;
    let fetched = run::released(py, None, || {
        files
            .iter()
            .map(|f| fetch_file(set, f, &sources).map(|got| (f, got)))
            .collect::<boltzkit::Result<Vec<_>>>()
    })?
    .py()?;
    Ok(fetched
        .into_iter()
        .map(|(f, got)| {
            let how = got.to_string();
            (f.path.clone(), got.path.display().to_string(), how)
        })
        .collect())
}

/// The local path of `NAME[:split]`'s rows (the library's `registry::resolve`), fetched into
/// the cache first when needed.
#[pyfunction]
#[pyo3(signature = (spec, mirror=None, offline=false))]
pub fn data_path(
    py: Python<'_>,
    spec: &str,
    mirror: Option<PathBuf>,
    offline: bool,
) -> PyResult<String> {
    let sources = sources(mirror, offline)?;
    let path = run::released(py, None, || registry::resolve(spec, &sources))?.py()?;
    Ok(path.display().to_string())
}

/// The environment's sources, with `mirror` as the mirror folder when given and the network
/// off when `offline`.
fn sources(mirror: Option<PathBuf>, offline: bool) -> PyResult<Sources> {
    let sources = Sources::from_env(mirror.as_deref()).py()?;
    let network = sources.network && !offline;
    Ok(sources.with_network(network))
}
