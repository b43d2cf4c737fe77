//! [`read_dataset`]: a data file's format from its name, the reader it goes to, and the
//! cardinality check of what was read.

use super::collect::Collector;
use super::options::{Binarize, ReadOptions};
use super::source::{load, name_and_gz, parse_error};
use super::{idx, npy, text};
use crate::data::Dataset;
use crate::error::{Error, Result};
use ndarray::Array2;
use std::path::Path;

/// The formats [`read_dataset`] knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Npy,
    /// Comma- or tab-separated text with an optional header.
    Delimited,
    /// Whitespace-separated text rows.
    Whitespace,
    Idx,
}

const KNOWN: &str = ".npy, .csv, .tsv, .data, .amat, .txt or IDX (*-ubyte, *.idx), \
                     optionally gzipped (.gz)";

/// The format of `path` from its name, and whether it is gzipped.
fn detect(path: &Path) -> Result<(Format, bool)> {
    if path.is_dir() {
        return Err(Error::io(
            path,
            std::io::Error::other(format!("a directory, not a data file; expected {KNOWN}")),
        ));
    }
    let (stem, gz) = name_and_gz(path);
    let format = if stem.ends_with(".npy") {
        Format::Npy
    } else if stem.ends_with(".csv") || stem.ends_with(".tsv") || stem.ends_with(".data") {
        Format::Delimited
    } else if stem.ends_with(".amat") || stem.ends_with(".txt") {
        Format::Whitespace
    } else if stem.ends_with("ubyte") || stem.ends_with(".idx") {
        Format::Idx
    } else {
        let ext = Path::new(&stem)
            .extension()
            .map(|e| format!("extension '.{}'", e.to_string_lossy()))
            .unwrap_or_else(|| "no extension".into());
        return Err(Error::UnsupportedFormat {
            path: path.to_path_buf(),
            reason: format!("{ext}; expected {KNOWN}"),
        });
    };
    Ok((format, gz))
}

/// Reads a data file into a [`Dataset`].
///
/// The format comes from the file name, after stripping a trailing `.gz`
/// (gzip, single or multi-member, is decompressed transparently):
///
/// | name | format |
/// |---|---|
/// | `*.npy` | NumPy array, rank 2 (samples × variables), dtype bool, (u)int 8/16/32/64, float32/64 holding values; little-endian; C or Fortran order |
/// | `*.csv`, `*.tsv`, `*.data` | integers separated by commas or tabs (detected from the first line); an optional header row of names is skipped |
/// | `*.amat`, `*.txt` | whitespace-separated numbers, one sample per line (integers or floats such as `0.0`) |
/// | `*-ubyte`, `*.idx` | IDX (MNIST): `n × d1 × … × dk` becomes `n × (d1⋯dk)`; a label file `n` becomes `n × 1` |
///
/// Values must lie in `0..=255`. Grayscale data (in `[0, 1]` or `0..=255`) becomes binary only
/// by an explicit [`Binarize`] choice. Every malformed input gives one [`Error::Parse`] naming the
/// file, the 1-based row (the line number for text files, the sample number otherwise) and
/// column where applicable, what was expected and what was found.
///
/// Cardinalities are validated against `opts.cardinalities` when given, else inferred as
/// (column maximum + 1), at least 2.
///
/// ```no_run
/// use boltzkit::data::{read_dataset, Binarize, ReadOptions};
/// use std::path::Path;
/// let opts = ReadOptions::default().with_binarize(Binarize::Threshold(127.0));
/// let d = read_dataset(Path::new("t10k-images-idx3-ubyte.gz"), &opts)?;
/// assert_eq!(d.n_vars(), 784);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn read_dataset(path: &Path, opts: &ReadOptions) -> Result<Dataset> {
    let (format, gz) = detect(path)?;
    if let Binarize::Threshold(t) = opts.binarize {
        if !t.is_finite() {
            return Err(Error::param(
                "binarize",
                format!("the threshold must be a finite number, got {t}"),
            ));
        }
    }
    let bytes = load(path, gz)?;
    let mut sink = Collector::new(opts.binarize);
    let table = match format {
        Format::Npy => npy::parse_dataset(path, &bytes, &mut sink)?,
        Format::Delimited => text::parse(path, &bytes, text::Delim::Detect, &mut sink)?,
        Format::Whitespace => text::parse(path, &bytes, text::Delim::Whitespace, &mut sink)?,
        Format::Idx => idx::parse(path, &bytes, &mut sink)?,
    };
    drop(bytes);
    if table.rows == 0 {
        // Every parser reports its own empty input; this guards the invariant.
        return Err(parse_error(
            path,
            None,
            None,
            "at least one sample",
            "no samples",
        ));
    }
    let values = sink.finish(table.rows, table.cols);
    finish(path, values, table.first_row, opts.cardinalities.as_deref())
}

/// Checks the values against declared cardinalities (or infers them) and builds the dataset.
fn finish(
    path: &Path,
    values: Array2<u8>,
    first_row: usize,
    cards: Option<&[u32]>,
) -> Result<Dataset> {
    let Some(cards) = cards else {
        return Dataset::with_inferred_cardinalities(values);
    };
    if cards.len() != values.ncols() {
        return Err(Error::param(
            "cardinalities",
            format!(
                "{} given, but {} has {} variables",
                cards.len(),
                path.display(),
                values.ncols()
            ),
        ));
    }
    for (r, row) in values.outer_iter().enumerate() {
        for (c, (&v, &k)) in row.iter().zip(cards).enumerate() {
            if u32::from(v) >= k {
                return Err(parse_error(
                    path,
                    Some(first_row + r),
                    Some(c + 1),
                    format!("a value below the declared cardinality {k}"),
                    format!("{v}"),
                ));
            }
        }
    }
    Dataset::new(values, cards.to_vec())
}
