//! [`read_binary`]: a data file of 0/1 values for a model of binary units (RBMs), read and
//! checked in one step.

use super::{read_dataset, Binarize, Dataset, ReadOptions};
use crate::error::{Error, Result};
use std::path::Path;

/// Reads `path` (after the binarization `binarize`, if any) and checks that every column holds
/// only 0/1 values and that there is at least one row. A column with other values is an
/// [`Error::Parse`] naming the file, the column and the largest value found.
///
/// ```
/// use boltzkit::data::{read_binary, Binarize};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("d.csv");
/// std::fs::write(&path, "0,1\n1,1\n")?;
/// assert_eq!(read_binary(&path, Binarize::None)?.n_vars(), 2);
/// std::fs::write(&path, "0,1\n2,1\n")?;
/// let e = read_binary(&path, Binarize::None).unwrap_err().to_string();
/// assert!(e.contains("column 1: expected 0/1 values"), "{e}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_binary(path: &Path, binarize: Binarize) -> Result<Dataset> {
    let data = read_dataset(path, &ReadOptions::default().with_binarize(binarize))?;
    if let Some(j) = data.cardinalities().iter().position(|&k| k != 2) {
        return Err(Error::Parse {
            path: path.to_path_buf(),
            row: None,
            column: Some(j + 1),
            expected: "0/1 values (an RBM needs binary data; see --binarize)".into(),
            found: format!("values up to {}", data.cardinalities()[j] - 1),
        });
    }
    data.require_nonempty()?;
    Ok(data)
}
