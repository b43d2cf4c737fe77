//! Multiple sequence alignments for Potts models: FASTA, A2M and Stockholm files (gzipped or
//! not) read into integer codes ([`read_alignment`] → [`Alignment`]).
//!
//! Which columns are kept (plmc's rules, `plm.c: MSARead`, with the insert convention of A2M):
//!
//! - with a focus sequence ([`AlignmentParams::focus`], plmc's `-f`): the columns where the
//!   focus has an uppercase letter that is not a gap;
//! - else, in A2M and Stockholm files, the match columns: those where no sequence has an insert
//!   (a lowercase letter or `.`);
//! - else (FASTA) every column, lowercase letters read as their uppercase letters and `.` as
//!   the gap.
//!
//! Then the optional gap filters: sequences with more than
//! [`AlignmentParams::max_sequence_gaps`] gaps (as a fraction of the kept columns) go, then
//! columns with more than [`AlignmentParams::max_column_gaps`] gaps among the kept sequences.
//!
//! Positions are reported as plmc reports them: 1-based column numbers, shifted by the start
//! of the focus sequence's region when its name ends in `/START-END` (plmc's offsets, the
//! numbers of its couplings file).
//!
//! Every fault is one [`Error::Parse`] naming the file, the line, the sequence and what was
//! expected: an empty file, ragged lengths, a letter outside the alphabet (unless
//! [`AlignmentParams::skip_unknown`], plmc's behaviour, drops such sequences), two sequences
//! of one name, a focus that is absent or ambiguous, binary data. A gzipped file is read
//! whatever its name ends in (by its magic bytes). [`Alignment::check_fittable`] refuses what
//! no model can be fitted to: fewer than two sequences, a column holding only gaps.

mod records;

use super::alphabet::{Alphabet, INSERT};
use crate::data::{load_bytes, Dataset};
use crate::error::{Error, Result};
use ndarray::{Array2, ArrayView2};
use records::{fault, shown, Record};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// An alignment file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlignmentFormat {
    /// `>name` lines, each followed by letters; lowercase read as uppercase.
    Fasta,
    /// FASTA whose lowercase letters and `.` mark insert columns.
    A2m,
    /// Stockholm 1.0 (`# STOCKHOLM 1.0` … `//`), inserts marked as in A2M.
    Stockholm,
}

impl AlignmentFormat {
    /// The format of `bytes` read from `path`: Stockholm when the first non-blank line starts
    /// with `# STOCKHOLM`, else A2M for names ending in `.a2m` (before `.gz`), else FASTA.
    pub fn detect(path: &Path, bytes: &[u8]) -> Self {
        let first = bytes
            .split(|&b| b == b'\n')
            .find(|l| !l.iter().all(u8::is_ascii_whitespace));
        if first.is_some_and(|l| l.starts_with(b"# STOCKHOLM")) {
            return AlignmentFormat::Stockholm;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with(".a2m") {
            AlignmentFormat::A2m
        } else {
            AlignmentFormat::Fasta
        }
    }
}

/// How an alignment is read. The defaults keep every column and sequence of a FASTA file over
/// the protein alphabet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AlignmentParams {
    /// The alphabet: `protein` (`-ACDEFGHIKLMNPQRSTVWY`, gap first as plmc), `rna`, `dna`,
    /// or the letters in code order (e.g. `_*^`). Default `protein`.
    pub alphabet: Alphabet,
    /// The file's format; `None` (the default) detects it ([`AlignmentFormat::detect`]).
    pub format: Option<AlignmentFormat>,
    /// The focus sequence (plmc's `-f`): its name, or the part of its name before `/`. Only
    /// its uppercase, non-gap columns are kept. Default `None`.
    pub focus: Option<String>,
    /// Drop sequences whose fraction of gaps in the kept columns is above this (in [0, 1]).
    /// Default 1 (keep all).
    pub max_sequence_gaps: f64,
    /// Then drop columns whose fraction of gaps among the kept sequences is above this (in
    /// [0, 1]). Default 1 (keep all).
    pub max_column_gaps: f64,
    /// Drop sequences holding letters outside the alphabet (plmc's behaviour) instead of
    /// refusing the file. Default false.
    pub skip_unknown: bool,
}

impl Default for AlignmentParams {
    fn default() -> Self {
        AlignmentParams {
            alphabet: Alphabet::default(),
            format: None,
            focus: None,
            max_sequence_gaps: 1.0,
            max_column_gaps: 1.0,
            skip_unknown: false,
        }
    }
}

impl AlignmentParams {
    /// Checks every setting ([`Error::InvalidParam`] naming the one at fault).
    pub fn check(&self) -> Result<()> {
        for (field, v) in [
            ("max_sequence_gaps", self.max_sequence_gaps),
            ("max_column_gaps", self.max_column_gaps),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::param(field, format!("must be in [0, 1], got {v}")));
            }
            if v < 1.0 && self.alphabet.gap().is_none() {
                return Err(Error::param(
                    field,
                    format!(
                        "{} has no gap (a first letter '-' or '.'), so there is nothing to filter",
                        self.alphabet
                    ),
                ));
            }
        }
        if self.focus.as_deref().is_some_and(str::is_empty) {
            return Err(Error::param("focus", "must be a sequence name, got \"\""));
        }
        Ok(())
    }
}

/// What the filters removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Removed {
    /// Sequences dropped for letters outside the alphabet ([`AlignmentParams::skip_unknown`]).
    pub unknown_sequences: usize,
    /// Sequences dropped by [`AlignmentParams::max_sequence_gaps`].
    pub gappy_sequences: usize,
    /// Columns not kept by the focus or insert rules.
    pub insert_columns: usize,
    /// Columns dropped by [`AlignmentParams::max_column_gaps`].
    pub gappy_columns: usize,
}

/// An alignment as integer codes: `n` sequences × `L` kept columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Alignment {
    /// The codes (`n × L`), each below `alphabet.len()`.
    pub codes: Array2<u8>,
    /// The names of the kept sequences.
    pub names: Vec<String>,
    /// The 0-based index in the file of each kept sequence.
    pub rows: Vec<usize>,
    /// The number of sequences in the file.
    pub n_read: usize,
    /// The 0-based column in the file of each kept column.
    pub columns: Vec<usize>,
    /// The 1-based position of each kept column as plmc reports it (see the module docs).
    pub positions: Vec<i64>,
    /// The row (in `codes`) of the focus sequence.
    pub focus: Option<usize>,
    /// The alphabet of the codes.
    pub alphabet: Alphabet,
    /// What the rules and filters removed.
    pub removed: Removed,
}

impl Alignment {
    /// Refuses an alignment no model can be fitted to ([`unfittable`]): one [`Error::Parse`]
    /// naming `path` (the file it was read from) and the column by its position.
    pub fn check_fittable(&self, path: &Path) -> Result<()> {
        let name = |c: usize| {
            format!(
                "column {} (position {})",
                self.columns[c] + 1,
                self.positions[c]
            )
        };
        match unfittable(self.codes.view(), self.alphabet.gap(), name) {
            Some((expected, found)) => Err(fault(path, None, None, expected, found)),
            None => Ok(()),
        }
    }

    /// Number of kept sequences.
    pub fn n_sequences(&self) -> usize {
        self.codes.nrows()
    }

    /// Number of kept columns (sites) `L`.
    pub fn n_sites(&self) -> usize {
        self.codes.ncols()
    }

    /// The codes as a [`Dataset`] with `q = alphabet.len()` states per site.
    pub fn dataset(&self) -> Result<Dataset> {
        let q = self.alphabet.len() as u32;
        Dataset::new(self.codes.clone(), vec![q; self.n_sites()])
    }

    /// The focus sequence's letter at each kept column (plmc's `A_i` column), if focused.
    pub fn focus_letters(&self) -> Option<Vec<char>> {
        let f = self.focus?;
        Some(
            self.codes
                .row(f)
                .iter()
                .map(|&c| self.alphabet.letter(c))
                .collect(),
        )
    }

    /// Per-sequence values (e.g. weights) of the kept rows spread over every sequence of the
    /// file, `fill` for the removed ones (plmc writes 0 for them in its weights file).
    pub fn spread(&self, kept: &[f64], fill: f64) -> Result<Vec<f64>> {
        if kept.len() != self.rows.len() {
            return Err(Error::Shape {
                op: "Alignment::spread".into(),
                expected: format!("{} values (one per kept sequence)", self.rows.len()),
                found: format!("{}", kept.len()),
            });
        }
        let mut all = vec![fill; self.n_read];
        for (&r, &v) in self.rows.iter().zip(kept) {
            all[r] = v;
        }
        Ok(all)
    }

    /// The values of the kept rows out of per-file values (one per sequence in the file).
    pub fn gather(&self, all: &[f64]) -> Result<Vec<f64>> {
        if all.len() != self.n_read {
            return Err(Error::Shape {
                op: "Alignment::gather".into(),
                expected: format!("{} values (one per sequence of the file)", self.n_read),
                found: format!("{}", all.len()),
            });
        }
        Ok(self.rows.iter().map(|&r| all[r]).collect())
    }
}

/// Reads an alignment file (gzipped when its name ends in `.gz`).
///
/// ```no_run
/// use boltzkit::potts::{read_alignment, AlignmentParams};
/// use std::path::Path;
/// let params = AlignmentParams { focus: Some("DYR_ECOLI".into()), skip_unknown: true,
///     ..AlignmentParams::default() };
/// let ali = read_alignment(Path::new("DHFR.a2m"), &params)?;
/// assert_eq!(ali.n_sites(), 159);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn read_alignment(path: &Path, params: &AlignmentParams) -> Result<Alignment> {
    params.check()?;
    let named_gz = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(".gz"));
    let bytes = load_bytes(path, named_gz || is_gzip(path)?)?;
    parse_alignment(path, &bytes, params)
}

/// Whether the file starts with gzip's magic bytes.
fn is_gzip(path: &Path) -> Result<bool> {
    use std::io::Read;
    let mut head = [0u8; 2];
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let n = file.read(&mut head).map_err(|e| Error::io(path, e))?;
    Ok(n == 2 && head == [0x1f, 0x8b])
}

/// Refuses binary data: the first control byte other than tab, line feed, form feed and
/// carriage return, with its line.
fn check_text(path: &Path, bytes: &[u8]) -> Result<()> {
    let Some(at) = bytes
        .iter()
        .position(|&b| (b < 0x20 && !b"\t\n\x0c\r".contains(&b)) || b == 0x7f)
    else {
        return Ok(());
    };
    let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
    Err(fault(
        path,
        Some(line),
        None,
        "a text alignment (FASTA, A2M or Stockholm)",
        format!("binary data (byte 0x{:02x} at offset {at})", bytes[at]),
    ))
}

/// Why no Potts model can be fitted to `codes` (sequences × columns), as (expected, found):
/// fewer than two sequences, or a column holding only the `gap` code. `name` names column
/// `c` in the message.
pub fn unfittable(
    codes: ArrayView2<u8>,
    gap: Option<u8>,
    name: impl Fn(usize) -> String,
) -> Option<(String, String)> {
    let n = codes.nrows();
    if n < 2 {
        return Some((
            "at least 2 sequences to fit a model".into(),
            format!("{n} after the filters"),
        ));
    }
    let g = gap?;
    let empty: Vec<usize> = (0..codes.ncols())
        .filter(|&c| codes.column(c).iter().all(|&v| v == g))
        .collect();
    let first = *empty.first()?;
    let more = match empty.len() {
        1 => String::new(),
        k => format!(" and {} more", k - 1),
    };
    Some((
        "columns holding at least one letter (a column gap filter below 1, --max-column-gaps \
         / max_column_gaps, drops all-gap columns)"
            .into(),
        format!(
            "{}{more} holding only gaps in all {n} sequences",
            name(first)
        ),
    ))
}

/// Reads an alignment from the bytes of a file (`path` names it in messages and, with
/// [`AlignmentParams::format`] unset, decides between FASTA and A2M).
pub fn parse_alignment(path: &Path, bytes: &[u8], params: &AlignmentParams) -> Result<Alignment> {
    params.check()?;
    check_text(path, bytes)?;
    let format = params
        .format
        .unwrap_or_else(|| AlignmentFormat::detect(path, bytes));
    let records = match format {
        AlignmentFormat::Stockholm => records::stockholm(path, bytes)?,
        _ => records::fasta(path, bytes)?,
    };
    let raw = encode(path, &records, &params.alphabet, params.skip_unknown)?;
    select(path, &records, raw, format, params)
}

/// The records' letters as codes (with [`INSERT`] flags), `n × width`, and whether each row
/// is valid (no letter outside the alphabet).
struct Raw {
    codes: Array2<u8>,
    valid: Vec<bool>,
}

fn encode(path: &Path, records: &[Record], alphabet: &Alphabet, skip: bool) -> Result<Raw> {
    let first = records.first().ok_or_else(|| {
        fault(
            path,
            None,
            None,
            "at least one sequence",
            "none (an empty alignment)",
        )
    })?;
    let width = first.letters.len();
    if width == 0 {
        return Err(fault(
            path,
            Some(first.line),
            None,
            "at least one letter in each sequence",
            format!("none in sequence {}", first.name),
        ));
    }
    let mut codes = Array2::<u8>::zeros((records.len(), width));
    let mut valid = vec![true; records.len()];
    for (s, r) in records.iter().enumerate() {
        if r.letters.len() != width {
            return Err(fault(
                path,
                Some(r.last_line()),
                None,
                format!(
                    "{width} letters in every sequence (as in {}, line {})",
                    first.name, first.line
                ),
                format!("{} in sequence {}", r.letters.len(), r.name),
            ));
        }
        let mut row = codes.row_mut(s);
        for (c, (&b, out)) in r.letters.iter().zip(row.iter_mut()).enumerate() {
            match alphabet.lookup(b) {
                Some(v) => *out = v,
                None if skip => {
                    valid[s] = false;
                    break;
                }
                None => {
                    return Err(fault(
                        path,
                        Some(r.line_of(c)),
                        Some(c + 1),
                        format!(
                            "a letter of {alphabet} (lowercase and '.' allowed; the setting \
                             skip-unknown drops such sequences, as plmc does)"
                        ),
                        format!("{:?} in sequence {}", shown(&[b]), r.name),
                    ));
                }
            }
        }
    }
    Ok(Raw { codes, valid })
}

/// The row of the focus sequence: its name, or the part before `/`, equals `id`.
fn find_focus(path: &Path, records: &[Record], id: &str) -> Result<usize> {
    let hits: Vec<usize> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.name == id || r.name.split('/').next() == Some(id))
        .map(|(i, _)| i)
        .collect();
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => Err(fault(
            path,
            None,
            None,
            format!("a sequence named {id} (the focus), or {id}/START-END"),
            format!("none among its {} sequences", records.len()),
        )),
        many => Err(fault(
            path,
            Some(records[many[1]].line),
            None,
            format!("one sequence named {id} (the focus)"),
            format!(
                "{} ({}); give the full name",
                many.len(),
                many.iter()
                    .take(4)
                    .map(|&i| records[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The start of the region in a name `ID/START-END` (1 when there is none).
fn region_start(name: &str) -> i64 {
    name.split_once('/')
        .and_then(|(_, r)| {
            let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<i64>().ok()
        })
        .unwrap_or(1)
}

fn select(
    path: &Path,
    records: &[Record],
    raw: Raw,
    format: AlignmentFormat,
    params: &AlignmentParams,
) -> Result<Alignment> {
    let Raw { codes, valid } = raw;
    let width = codes.ncols();
    let gap = params.alphabet.gap();
    let is_gap = |v: u8| gap == Some(v & !INSERT);
    let focus = match params.focus.as_deref() {
        Some(id) => {
            let f = find_focus(path, records, id)?;
            if !valid[f] {
                return Err(fault(
                    path,
                    Some(records[f].line),
                    None,
                    format!("a focus sequence of letters of {}", params.alphabet),
                    format!("letters outside it in {}", records[f].name),
                ));
            }
            Some(f)
        }
        None => None,
    };
    let mut removed = Removed::default();
    // Columns by the focus or insert rules.
    let mut columns: Vec<usize> = match (focus, format) {
        (Some(f), _) => (0..width)
            .filter(|&c| {
                let v = codes[[f, c]];
                v & INSERT == 0 && !is_gap(v)
            })
            .collect(),
        (None, AlignmentFormat::A2m | AlignmentFormat::Stockholm) => {
            let mut insert = vec![false; width];
            for (row, _) in codes.outer_iter().zip(&valid).filter(|(_, &ok)| ok) {
                for (flag, &v) in insert.iter_mut().zip(row.iter()) {
                    *flag |= v & INSERT != 0;
                }
            }
            (0..width).filter(|&c| !insert[c]).collect()
        }
        (None, AlignmentFormat::Fasta) => (0..width).collect(),
    };
    removed.insert_columns = width - columns.len();
    if columns.is_empty() {
        let why = match focus {
            Some(f) => format!(
                "none: the focus {} has no uppercase letter",
                records[f].name
            ),
            None => "none: every column holds an insert (lowercase or '.')".to_string(),
        };
        return Err(fault(path, None, None, "at least one column to model", why));
    }
    // Sequences: valid letters, then the gap filter over the kept columns.
    removed.unknown_sequences = valid.iter().filter(|&&ok| !ok).count();
    let max_gaps = (params.max_sequence_gaps * columns.len() as f64 + 1e-9).floor() as usize;
    let rows: Vec<usize> = (0..records.len())
        .filter(|&s| valid[s])
        .filter(|&s| {
            params.max_sequence_gaps >= 1.0
                || columns.iter().filter(|&&c| is_gap(codes[[s, c]])).count() <= max_gaps
        })
        .collect();
    removed.gappy_sequences = records.len() - removed.unknown_sequences - rows.len();
    if rows.is_empty() {
        return Err(fault(
            path,
            None,
            None,
            "at least one sequence after the filters",
            format!(
                "none of {} ({} with unknown letters, {} with more than {} gaps)",
                records.len(),
                removed.unknown_sequences,
                removed.gappy_sequences,
                params.max_sequence_gaps
            ),
        ));
    }
    // Columns: the gap filter over the kept sequences.
    if params.max_column_gaps < 1.0 {
        let max_gaps = (params.max_column_gaps * rows.len() as f64 + 1e-9).floor() as usize;
        let before = columns.len();
        columns.retain(|&c| rows.iter().filter(|&&s| is_gap(codes[[s, c]])).count() <= max_gaps);
        removed.gappy_columns = before - columns.len();
        if columns.is_empty() {
            return Err(fault(
                path,
                None,
                None,
                "at least one column after the filters",
                format!(
                    "none: every column has more than {} gaps",
                    params.max_column_gaps
                ),
            ));
        }
    }
    let mut out = Array2::<u8>::zeros((rows.len(), columns.len()));
    for (mut dst, &s) in out.outer_iter_mut().zip(&rows) {
        let src = codes.row(s);
        for (d, &c) in dst.iter_mut().zip(&columns) {
            *d = src[c] & !INSERT;
        }
    }
    let start = focus.map_or(1, |f| region_start(&records[f].name));

    let positions = columns.iter().map(|&c| c as i64 + start).collect();
    // The focus has no gap in its own columns, so the gap filter keeps it.
    let focus = focus
        .map(|f| {
            rows.iter()
                .position(|&s| s == f)
                .ok_or_else(|| Error::Internal("the focus sequence was filtered out".into()))
        })
        .transpose()?;
    Ok(Alignment {
        codes: out,
        names: rows.iter().map(|&s| records[s].name.clone()).collect(),
        focus,
        rows,
        n_read: records.len(),
        columns,
        positions,
        alphabet: params.alphabet.clone(),
        removed,
    })
}

#[cfg(test)]
mod tests;
