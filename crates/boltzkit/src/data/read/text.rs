//! Text tables: comma/tab-separated (`.csv`, `.tsv`, `.data`) and whitespace-separated
//! (`.amat`, `.txt`). Rows are reported by their 1-based line number.

use super::collect::{Collector, ABOVE_255};
use super::source::{parse_error, Table};
use crate::error::Result;
use std::path::Path;

/// How fields are separated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Delim {
    /// A comma or a tab, whichever the first non-blank line uses; a header row is allowed.
    Detect,
    /// Runs of ASCII whitespace; no header.
    Whitespace,
}

/// The field separator actually in use.
#[derive(Debug, Clone, Copy)]
enum Sep {
    Byte(u8),
    Whitespace,
}

/// A parsed numeric token.
enum Num {
    Int(u64),
    Real(f64),
}

fn parse_num(tok: &[u8]) -> Option<Num> {
    if !tok.is_empty() && tok.len() <= 18 && tok.iter().all(u8::is_ascii_digit) {
        let v = tok
            .iter()
            .fold(0u64, |acc, &b| acc * 10 + u64::from(b - b'0'));
        return Some(Num::Int(v));
    }
    std::str::from_utf8(tok)
        .ok()?
        .parse::<f64>()
        .ok()
        .map(Num::Real)
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

fn trim(mut tok: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = tok {
        if first.is_ascii_whitespace() {
            tok = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = tok {
        if last.is_ascii_whitespace() {
            tok = rest;
        } else {
            break;
        }
    }
    tok
}

/// The fields of `line`, trimmed.
fn fields(line: &[u8], sep: Sep) -> Box<dyn Iterator<Item = &[u8]> + '_> {
    match sep {
        Sep::Byte(b) => Box::new(line.split(move |&c| c == b).map(trim)),
        Sep::Whitespace => Box::new(
            line.split(u8::is_ascii_whitespace)
                .filter(|f| !f.is_empty()),
        ),
    }
}

fn show(tok: &[u8]) -> String {
    if tok.is_empty() {
        "an empty field".into()
    } else {
        format!("'{}'", String::from_utf8_lossy(tok))
    }
}

/// The UTF-8 byte-order mark some editors (Excel's "CSV UTF-8") put first; it is skipped.
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Refuses text that is not ASCII or UTF-8 (UTF-16 or UTF-32, with or without a byte-order
/// mark), naming the encoding, and returns the text without a UTF-8 byte-order mark.
fn decoded<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a [u8]> {
    let utf16 = |order: &str, how: &str| {
        parse_error(
            path,
            None,
            None,
            "text in UTF-8 or ASCII",
            format!(
                "UTF-16 {order} text ({how}); save the file as UTF-8 (in Excel: \"CSV UTF-8\"; \
                 or `iconv -f UTF-16 -t UTF-8`)"
            ),
        )
    };
    if bytes.starts_with(b"\xff\xfe") {
        return Err(utf16("little-endian", "its byte-order mark is FF FE"));
    }
    if bytes.starts_with(b"\xfe\xff") {
        return Err(utf16("big-endian", "its byte-order mark is FE FF"));
    }
    let head = &bytes[..bytes.len().min(4096)];
    if let Some(at) = head.iter().position(|&b| b == 0) {
        let order = if at % 2 == 1 {
            "little-endian"
        } else {
            "big-endian"
        };
        return Err(utf16(
            order,
            &format!("a zero byte at offset {at}, as between UTF-16 characters"),
        ));
    }
    Ok(bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes))
}

/// The lines of `text`: split at `\n` (a `\r` before it is dropped), or at `\r` when the
/// text has no `\n` at all (the line ends of classic Mac OS).
fn lines(text: &[u8]) -> Box<dyn Iterator<Item = &[u8]> + '_> {
    if !text.contains(&b'\n') && text.contains(&b'\r') {
        return Box::new(text.split(|&b| b == b'\r'));
    }
    Box::new(
        text.split(|&b| b == b'\n')
            .map(|raw| raw.strip_suffix(b"\r").unwrap_or(raw)),
    )
}

/// The separator of a delimited file, guessed from its first non-blank line: a comma, else a
/// tab, else a semicolon, else runs of spaces when the line has several fields, else a comma
/// (one column).
fn guess_separator(line: &[u8]) -> Sep {
    for b in [b',', b'\t', b';'] {
        if line.contains(&b) {
            return Sep::Byte(b);
        }
    }
    if trim(line).iter().any(u8::is_ascii_whitespace) {
        return Sep::Whitespace;
    }
    Sep::Byte(b',')
}

/// A field that is not a number, shown with the likely cause when it holds a separator other
/// than the file's (`'0;1'` in a comma-separated file).
fn show_field(tok: &[u8], sep: Sep, sep_line: usize) -> String {
    let shown = show(tok);
    let other = [b',', b'\t', b';', b' ']
        .into_iter()
        .filter(|b| !matches!(sep, Sep::Byte(s) if s == *b))
        .filter(|b| !(matches!(sep, Sep::Whitespace) && b.is_ascii_whitespace()))
        .find(|b| tok.contains(b));
    let name = |b: u8| match b {
        b'\t' => "a tab".to_string(),
        b' ' => "a space".to_string(),
        b => format!("'{}'", b as char),
    };
    let used = match sep {
        Sep::Byte(b) => name(b),
        Sep::Whitespace => "whitespace".to_string(),
    };
    match other {
        Some(b) => format!(
            "{shown}, which holds {}: the separator is {used} (guessed from line {sep_line}); \
             use one separator throughout the file",
            name(b)
        ),
        None => shown,
    }
}

/// Parses a text table into `sink`.
pub(super) fn parse(
    path: &Path,
    bytes: &[u8],
    delim: Delim,
    sink: &mut Collector,
) -> Result<Table> {
    let bytes = decoded(path, bytes)?;
    let mut sep_line = 0;
    let mut sep = match delim {
        Delim::Detect => None,
        Delim::Whitespace => Some(Sep::Whitespace),
    };
    let mut header_line: Option<usize> = None;
    let mut seen_content = false;
    let mut blank_after_data: Option<usize> = None;
    let mut cols: Option<usize> = None;
    let mut first_row = 0;
    let mut rows = 0;

    for (i, line) in lines(bytes).enumerate() {
        let line_no = i + 1;
        if is_blank(line) {
            if seen_content && blank_after_data.is_none() {
                blank_after_data = Some(line_no);
            }
            continue;
        }
        if let Some(b) = blank_after_data {
            return Err(parse_error(
                path,
                Some(b),
                None,
                "a data row (blank lines are allowed only at the end)",
                format!("a blank line followed by more data on line {line_no}"),
            ));
        }
        let s = *sep.get_or_insert_with(|| {
            sep_line = line_no;
            guess_separator(line)
        });
        if !seen_content {
            seen_content = true;
            if delim == Delim::Detect
                && fields(line, s).all(|f| !f.is_empty() && parse_num(f).is_none())
            {
                header_line = Some(line_no);
                continue;
            }
        }
        if cols.is_none() {
            first_row = line_no;
        }
        let mut c = 0;
        for tok in fields(line, s) {
            c += 1;
            if let Some(d) = cols {
                if c > d {
                    return Err(ragged(path, line_no, d, first_row, fields(line, s).count()));
                }
            }
            let res = match parse_num(tok) {
                Some(Num::Int(v)) if v <= 255 => {
                    sink.push_u8(v as u8);
                    Ok(())
                }
                Some(Num::Int(_)) => Err(ABOVE_255),
                Some(Num::Real(v)) => sink.push_f64(v),
                None => Err("a number"),
            };
            if let Err(expected) = res {
                return Err(parse_error(
                    path,
                    Some(line_no),
                    Some(c),
                    expected,
                    show_field(tok, s, sep_line),
                ));
            }
        }
        match cols {
            None => {
                cols = Some(c);
                // Whole-file size hint: about as many rows as lines of this length.
                sink.reserve(bytes.len() / (line.len() + 1) * c);
            }
            Some(d) if d != c => return Err(ragged(path, line_no, d, first_row, c)),
            Some(_) => {}
        }
        rows += 1;
    }
    if rows == 0 {
        let found = match header_line {
            Some(h) => format!("only a header (line {h}) and no data rows"),
            None if bytes.is_empty() => "an empty file".to_string(),
            None => "only blank lines".to_string(),
        };
        return Err(parse_error(
            path,
            None,
            None,
            "at least one data row",
            found,
        ));
    }
    Ok(Table {
        rows,
        cols: cols.unwrap_or(0),
        first_row,
    })
}

fn ragged(path: &Path, line: usize, want: usize, first: usize, got: usize) -> crate::Error {
    parse_error(
        path,
        Some(line),
        None,
        format!("{want} values per row (as on line {first})"),
        format!("{got} values"),
    )
}

#[cfg(test)]
mod tests {
    use super::super::options::Binarize;
    use super::*;
    use crate::Error;

    fn run(text: &str, delim: Delim) -> Result<(Table, Vec<u8>)> {
        let mut sink = Collector::new(Binarize::None);
        let t = parse(Path::new("t.csv"), text.as_bytes(), delim, &mut sink)?;
        Ok((t, sink.finish(t.rows, t.cols).into_raw_vec_and_offset().0))
    }

    #[test]
    fn detects_separator_and_header() {
        let (t, v) = run("a,b\n1,0\n2,3\n", Delim::Detect).unwrap();
        assert_eq!((t.rows, t.cols, t.first_row), (2, 2, 2));
        assert_eq!(v, vec![1, 0, 2, 3]);
        let (t, v) = run("1\t0\r\n0\t1\r\n\r\n\n", Delim::Detect).unwrap();
        assert_eq!((t.rows, t.cols, t.first_row), (2, 2, 1));
        assert_eq!(v, vec![1, 0, 0, 1]);
        let (t, _) = run("\n\n7\n8\n", Delim::Detect).unwrap();
        assert_eq!((t.rows, t.cols, t.first_row), (2, 1, 3));
    }

    #[test]
    fn whitespace_rows() {
        let (t, v) = run(" 0.0  1.0\t1\n1 0 2.0\n", Delim::Whitespace).unwrap();
        assert_eq!((t.rows, t.cols, t.first_row), (2, 3, 1));
        assert_eq!(v, vec![0, 1, 1, 1, 0, 2]);
        // No header in whitespace files: a name is an error.
        assert!(run("a b\n0 1\n", Delim::Whitespace).is_err());
    }

    #[test]
    fn a_mixed_first_line_is_data_not_header() {
        match run("0,x\n1,1\n", Delim::Detect).unwrap_err() {
            Error::Parse {
                row, column, found, ..
            } => {
                assert_eq!((row, column), (Some(1), Some(2)));
                assert_eq!(found, "'x'");
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn blank_line_inside_data_is_an_error() {
        match run("0,1\n\n1,1\n", Delim::Detect).unwrap_err() {
            Error::Parse { row, .. } => assert_eq!(row, Some(2)),
            e => panic!("{e}"),
        }
    }

    #[test]
    fn empty_field_is_an_error() {
        let e = run("0,,1\n", Delim::Detect).unwrap_err();
        assert!(e.to_string().contains("empty field"), "{e}");
        assert!(e.to_string().contains(":1: column 2"), "{e}");
    }

    /// A UTF-8 byte-order mark is skipped; UTF-16 (with or without its mark) is named.
    #[test]
    fn byte_order_marks_and_encodings() {
        let (t, v) = run("\u{feff}0,1\n1,0\n", Delim::Detect).unwrap();
        assert_eq!((t.rows, t.cols, t.first_row), (2, 2, 1));
        assert_eq!(v, vec![0, 1, 1, 0]);
        let (_, v) = run("\u{feff}a,b\n1,0\n", Delim::Detect).unwrap();
        assert_eq!(v, vec![1, 0]);
        let le: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain("0,1\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let mut sink = Collector::new(Binarize::None);
        let e = parse(Path::new("t.csv"), &le, Delim::Detect, &mut sink).unwrap_err();
        assert!(e.to_string().contains("UTF-16 little-endian"), "{e}");
        let be: Vec<u8> = "0,1\n".encode_utf16().flat_map(u16::to_be_bytes).collect();
        let e = parse(Path::new("t.csv"), &be, Delim::Detect, &mut sink).unwrap_err();
        assert!(e.to_string().contains("UTF-16 big-endian"), "{e}");
        assert!(
            e.to_string().starts_with("t.csv: expected text in UTF-8"),
            "{e}"
        );
    }

    /// Classic Mac OS line ends (a lone CR) are line ends.
    #[test]
    fn carriage_return_line_ends() {
        let (t, v) = run("0,1,0\r1,0,1\r", Delim::Detect).unwrap();
        assert_eq!((t.rows, t.cols), (2, 3));
        assert_eq!(v, vec![0, 1, 0, 1, 0, 1]);
    }

    /// Spaces or semicolons in a .csv are guessed as its separator; a second separator in a
    /// later line is named.
    #[test]
    fn separators_are_guessed_and_a_mix_is_named() {
        let (t, v) = run("0 1  0\n1 0 1\n", Delim::Detect).unwrap();
        assert_eq!((t.rows, t.cols), (2, 3));
        assert_eq!(v, vec![0, 1, 0, 1, 0, 1]);
        let (t, _) = run("a b c\n0 1 0\n", Delim::Detect).unwrap();
        assert_eq!((t.rows, t.first_row), (1, 2));
        let (t, v) = run("0;1\n1;1\n", Delim::Detect).unwrap();
        assert_eq!((t.cols, v), (2, vec![0, 1, 1, 1]));
        let e = run("0,1\n1;1\n", Delim::Detect).unwrap_err().to_string();
        assert!(
            e.contains(":2: column 1") && e.contains("holds ';': the separator is ','"),
            "{e}"
        );
    }

    #[test]
    fn too_many_fields_reported_with_count() {
        let e = run("0,1\n0,1,1\n", Delim::Detect).unwrap_err();
        assert!(e.to_string().contains("found 3 values"), "{e}");
    }
}
