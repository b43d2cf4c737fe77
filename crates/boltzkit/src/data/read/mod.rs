//! Reading data files into a [`Dataset`] (see [`read_dataset`]).

mod collect;
mod idx;
pub(crate) mod npy;
mod text;

use crate::data::Dataset;
use crate::error::{Error, Result};
use flate2::read::MultiGzDecoder;
use ndarray::Array2;
use std::io::Read;
use std::path::Path;

pub use npy::read_npy_f64;

use collect::Collector;

/// How grayscale values become binary while reading.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Binarize {
    /// No conversion: values must already be integers in `0..=255`.
    #[default]
    None,
    /// A value `v > t` becomes 1, any other value 0. `t` is in the data's own scale
    /// (e.g. `127.0` for 0..255 grayscale, `0.5` for data in `[0, 1]`).
    Threshold(f64),
    /// Each value becomes 1 with probability `v` (or `v / 255` when the file's maximum exceeds
    /// 1), drawn from per-row streams [`crate::rng::derive_rng`]`(seed, row)`: deterministic
    /// for a seed, whatever the thread count.
    Stochastic {
        /// The seed of the draws.
        seed: u64,
    },
}

/// Settings of [`read_dataset`].
///
/// ```
/// use boltzkit::data::{Binarize, ReadOptions};
/// let opts = ReadOptions::default().with_binarize(Binarize::Threshold(127.0));
/// assert_eq!(opts.cardinalities, None);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReadOptions {
    /// Declared per-variable cardinalities; `None` infers them as (column maximum + 1), at
    /// least 2. When given, a value at or above its cardinality is an error.
    pub cardinalities: Option<Vec<u32>>,
    /// Conversion of grayscale values to binary (default: none).
    pub binarize: Binarize,
}

impl ReadOptions {
    /// The same options with declared cardinalities.
    pub fn with_cardinalities(mut self, cardinalities: Vec<u32>) -> Self {
        self.cardinalities = Some(cardinalities);
        self
    }

    /// The same options with a binarization.
    pub fn with_binarize(mut self, binarize: Binarize) -> Self {
        self.binarize = binarize;
        self
    }
}

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

/// The lower-cased file name of `path` without a trailing `.gz`, and whether it had one.
pub(crate) fn name_and_gz(path: &Path) -> (String, bool) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match name.strip_suffix(".gz") {
        Some(s) => (s.to_string(), true),
        None => (name, false),
    }
}

/// The format of `path` from its name, and whether it is gzipped.
fn detect(path: &Path) -> Result<(Format, bool)> {
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

/// A [`Error::Parse`] for `path`.
pub(crate) fn parse_error(
    path: &Path,
    row: Option<usize>,
    column: Option<usize>,
    expected: impl Into<String>,
    found: impl Into<String>,
) -> Error {
    Error::Parse {
        path: path.to_path_buf(),
        row,
        column,
        expected: expected.into(),
        found: found.into(),
    }
}

/// The first two bytes of every gzip stream.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The bytes of `path`, gunzipped when `gz` (also the alignment reader's, `potts::alignment`).
/// A gzip stream where none is expected (a name without `.gz`, or the content of a `.gz` file
/// compressed a second time) is refused with the remedy.
pub(crate) fn load(path: &Path, gz: bool) -> Result<Vec<u8>> {
    let raw = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    if !gz {
        if raw.starts_with(&GZIP_MAGIC) {
            return Err(parse_error(
                path,
                None,
                None,
                "uncompressed data (the name does not end in .gz)",
                format!(
                    "gzip-compressed data; name the file {}.gz (or decompress it)",
                    path.display()
                ),
            ));
        }
        return Ok(raw);
    }
    let mut out = Vec::with_capacity(raw.len().saturating_mul(4));
    MultiGzDecoder::new(raw.as_slice())
        .read_to_end(&mut out)
        .map_err(|e| {
            parse_error(
                path,
                None,
                None,
                "a complete gzip stream",
                format!("a corrupt or truncated one ({e})"),
            )
        })?;
    if out.starts_with(&GZIP_MAGIC) {
        return Err(parse_error(
            path,
            None,
            None,
            "data inside the gzip stream",
            "another gzip stream: the file is compressed twice; decompress it once \
             (`gunzip -c FILE > NAME.gz`) and read that",
        ));
    }
    Ok(out)
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

/// What a parser read: the table's shape and where its first sample is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Table {
    rows: usize,
    cols: usize,
    /// The 1-based row number reported for the first sample (its line in a text file).
    first_row: usize,
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

#[cfg(test)]
pub(crate) mod tests;
