//! `NAME[:split]` to a local path: the one resolution behind `--data NAME[:split]` and
//! `boltzkit.datasets.path`.

use super::fetch::{fetch_file, Sources};
use super::sets::{find, parse_spec};
use crate::error::{Error, Result};
use std::path::PathBuf;

/// The local path of the file `NAME[:split]` names ([`DataSet::primary`]), fetched into the
/// cache by [`fetch_file`] when it is not there yet.
pub fn resolve(spec: &str, sources: &Sources) -> Result<PathBuf> {
    let (set, split) = parse_spec(spec).ok_or_else(|| {
        let name = spec.split(':').next().unwrap_or(spec);
        match find(name) {
            Err(e) => e,
            Ok(_) => Error::Internal(format!("`{spec}` names a data set but did not parse")),
        }
    })?;
    let file = set.primary(split)?;
    Ok(fetch_file(set, file, sources)?.path)
}
