//! What every reader shares: the bytes of a file (gunzipped when named so), its name without
//! `.gz`, the one parse-error shape, and the [`Table`] a parser reports.

use crate::error::{Error, Result};
use flate2::read::MultiGzDecoder;
use std::io::Read;
use std::path::Path;

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

/// What a parser read: the table's shape and where its first sample is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Table {
    pub(super) rows: usize,
    pub(super) cols: usize,
    /// The 1-based row number reported for the first sample (its line in a text file).
    pub(super) first_row: usize,
}
