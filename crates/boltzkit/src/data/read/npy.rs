//! NumPy `.npy` files (format versions 1, 2 and 3): little-endian numeric dtypes, C or Fortran
//! order.

use super::collect::Collector;
use super::source::{load, parse_error, Table};
use crate::error::{Error, Result};
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";
const DTYPES: &str =
    "an npy dtype of bool, int8/16/32/64, uint8/16/32/64, float32 or float64 (little-endian)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Int,
    UInt,
    Float,
}

/// A supported element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dtype {
    kind: Kind,
    size: usize,
}

/// One decoded element.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Elem {
    Int(i128),
    Real(f64),
}

impl Elem {
    fn as_f64(self) -> f64 {
        match self {
            Elem::Int(v) => v as f64,
            Elem::Real(v) => v,
        }
    }

    fn show(self) -> String {
        match self {
            Elem::Int(v) => v.to_string(),
            Elem::Real(v) => v.to_string(),
        }
    }
}

impl Dtype {
    fn decode(self, b: &[u8]) -> Elem {
        let mut w = [0u8; 8];
        w[..self.size].copy_from_slice(&b[..self.size]);
        let u = u64::from_le_bytes(w);
        match (self.kind, self.size) {
            (Kind::Bool, _) => Elem::Int(i128::from(u != 0)),
            (Kind::UInt, _) => Elem::Int(i128::from(u)),
            (Kind::Int, 1) => Elem::Int(i128::from(u as u8 as i8)),
            (Kind::Int, 2) => Elem::Int(i128::from(u as u16 as i16)),
            (Kind::Int, 4) => Elem::Int(i128::from(u as u32 as i32)),
            (Kind::Int, _) => Elem::Int(i128::from(u as i64)),
            (Kind::Float, 4) => Elem::Real(f64::from(f32::from_bits(u as u32))),
            (Kind::Float, _) => Elem::Real(f64::from_bits(u)),
        }
    }
}

/// A parsed header and where the data starts.
#[derive(Debug)]
struct Header {
    dtype: Dtype,
    descr: String,
    fortran: bool,
    shape: Vec<usize>,
    data_start: usize,
}

/// A shape as numpy prints it: `(3,)`, `(2, 4)`.
pub(crate) fn shape_text(shape: &[usize]) -> String {
    match shape {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The text after `'key':` in the header dictionary.
fn value_of<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    ['\'', '"'].iter().find_map(|q| {
        let pat = format!("{q}{key}{q}");
        let i = header.find(&pat)?;
        header[i + pat.len()..]
            .trim_start()
            .strip_prefix(':')
            .map(str::trim_start)
    })
}

fn parse_dtype(path: &Path, descr: &str) -> Result<Dtype> {
    let bad = |what: &str| parse_error(path, None, None, DTYPES, format!("dtype '{descr}'{what}"));
    let (order, rest) = match descr.chars().next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (c, &descr[1..]),
        _ => ('|', descr),
    };
    let Some(kind_char) = rest.chars().next() else {
        return Err(bad(""));
    };
    // the header is any UTF-8 (found by fuzzing: `'|\u{fffd}~'` sliced inside a character)
    let size: Option<usize> = rest[kind_char.len_utf8()..].parse().ok();
    let kind = match kind_char {
        'b' => Kind::Bool,
        'i' => Kind::Int,
        'u' => Kind::UInt,
        'f' => Kind::Float,
        'c' => return Err(bad(" (complex)")),
        'U' => return Err(bad(" (unicode string)")),
        'S' | 'a' => return Err(bad(" (byte string)")),
        'O' => return Err(bad(" (Python object)")),
        'M' | 'm' => return Err(bad(" (date/time)")),
        'V' => return Err(bad(" (raw/structured)")),
        _ => return Err(bad("")),
    };
    let size = match (kind, size) {
        (Kind::Bool, Some(1)) => 1,
        (Kind::Int | Kind::UInt, Some(s @ (1 | 2 | 4 | 8))) => s,
        (Kind::Float, Some(s @ (4 | 8))) => s,
        (Kind::Float, Some(2)) => return Err(bad(" (float16)")),
        _ => return Err(bad("")),
    };
    if order == '>' && size > 1 {
        return Err(bad(" (big-endian)"));
    }
    Ok(Dtype { kind, size })
}

fn parse_header(path: &Path, bytes: &[u8]) -> Result<Header> {
    let err = |expected: &str, found: String| parse_error(path, None, None, expected, found);
    if bytes.len() < 10 || !bytes.starts_with(MAGIC) {
        let found = if bytes.is_empty() {
            "an empty file".to_string()
        } else if MAGIC.starts_with(&bytes[..bytes.len().min(MAGIC.len())]) {
            format!("{} bytes (truncated)", bytes.len())
        } else {
            "other bytes (not an npy file)".to_string()
        };
        return Err(err("the npy magic string \\x93NUMPY and a header", found));
    }
    let (len_bytes, start) = match bytes[6] {
        1 => (2, 10),
        2 | 3 => (4, 12),
        v => {
            return Err(Error::UnsupportedFormat {
                path: path.to_path_buf(),
                reason: format!("npy format version {v}.{} (known: 1, 2, 3)", bytes[7]),
            })
        }
    };
    if bytes.len() < start {
        return Err(err(
            "a complete npy header",
            format!("{} bytes (truncated)", bytes.len()),
        ));
    }
    let mut w = [0u8; 4];
    w[..len_bytes].copy_from_slice(&bytes[8..8 + len_bytes]);
    let header_len = u32::from_le_bytes(w) as usize;
    let Some(header) = bytes.get(start..start + header_len) else {
        return Err(err(
            "a complete npy header",
            format!(
                "{} bytes, header needs {} (truncated)",
                bytes.len(),
                start + header_len
            ),
        ));
    };
    let header = String::from_utf8_lossy(header);
    let bad_header = || {
        err(
            "an npy header dictionary with descr, fortran_order and shape",
            format!("{:?}", header.trim_end()),
        )
    };

    let descr_val = value_of(&header, "descr").ok_or_else(bad_header)?;
    let descr = match descr_val.chars().next() {
        Some(q @ ('\'' | '"')) => descr_val[1..]
            .split(q)
            .next()
            .ok_or_else(bad_header)?
            .to_string(),
        Some('[') => {
            return Err(err(DTYPES, "a structured dtype".to_string()));
        }
        _ => return Err(bad_header()),
    };
    let dtype = parse_dtype(path, &descr)?;
    let fortran_val = value_of(&header, "fortran_order").ok_or_else(bad_header)?;
    let fortran = if fortran_val.starts_with("True") {
        true
    } else if fortran_val.starts_with("False") {
        false
    } else {
        return Err(bad_header());
    };
    let shape_val = value_of(&header, "shape").ok_or_else(bad_header)?;
    let inner = shape_val
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or_else(bad_header)?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<usize>())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| bad_header())?;
    Ok(Header {
        dtype,
        descr,
        fortran,
        shape,
        data_start: start + header_len,
    })
}

/// The data bytes of `h`, checked against its shape and dtype.
fn data<'a>(path: &Path, bytes: &'a [u8], h: &Header) -> Result<&'a [u8]> {
    let need = h
        .shape
        .iter()
        .try_fold(h.dtype.size, |a, &d| a.checked_mul(d))
        .ok_or_else(|| {
            parse_error(
                path,
                None,
                None,
                "an npy shape of a sane size",
                shape_text(&h.shape),
            )
        })?;
    let data = &bytes[h.data_start.min(bytes.len())..];
    if data.len() != need {
        let what = if data.len() < need {
            "truncated"
        } else {
            "trailing bytes"
        };
        return Err(parse_error(
            path,
            None,
            None,
            format!(
                "{need} bytes of data for shape {} and dtype '{}'",
                shape_text(&h.shape),
                h.descr
            ),
            format!("{} bytes ({what})", data.len()),
        ));
    }
    Ok(data)
}

/// Parses a rank-2 npy array into `sink`.
pub(super) fn parse_dataset(path: &Path, bytes: &[u8], sink: &mut Collector) -> Result<Table> {
    let h = parse_header(path, bytes)?;
    let &[rows, cols] = h.shape.as_slice() else {
        let hint = match h.shape.len() {
            1 => "; reshape it to (n, 1) for one variable or (1, n) for one sample",
            _ => "",
        };
        return Err(parse_error(
            path,
            None,
            None,
            "a 2-D array (samples × variables)",
            format!(
                "a {}-D array of shape {}{hint}",
                h.shape.len(),
                shape_text(&h.shape)
            ),
        ));
    };
    let data = data(path, bytes, &h)?;
    if rows == 0 || cols == 0 {
        let what = if rows == 0 {
            "no samples"
        } else {
            "no variables"
        };
        return Err(parse_error(
            path,
            None,
            None,
            "at least one sample and one variable",
            format!("shape {} ({what})", shape_text(&h.shape)),
        ));
    }
    sink.reserve(rows * cols);
    let size = h.dtype.size;
    if size == 1 && h.dtype.kind == Kind::UInt && !h.fortran {
        sink.extend_u8(data);
    } else {
        for i in 0..rows {
            for j in 0..cols {
                let k = if h.fortran {
                    j * rows + i
                } else {
                    i * cols + j
                };
                let e = h.dtype.decode(&data[k * size..]);
                let res = match e {
                    Elem::Int(v) => sink.push_int(v),
                    Elem::Real(v) => sink.push_f64(v),
                };
                if let Err(expected) = res {
                    return Err(parse_error(
                        path,
                        Some(i + 1),
                        Some(j + 1),
                        expected,
                        e.show(),
                    ));
                }
            }
        }
    }
    Ok(Table {
        rows,
        cols,
        first_row: 1,
    })
}

/// Reads any numeric `.npy` file (optionally `.npy.gz`) of any rank as `f64`, e.g. a true
/// distribution over all states written by [`write_npy_f64`](crate::data::write_npy_f64).
///
/// Returns the shape and the values in C (row-major) order, whatever the file's order. Values
/// are not checked (NaN and infinities pass through).
pub fn read_npy_f64(path: &Path) -> Result<(Vec<usize>, Vec<f64>)> {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let bytes = load(path, name.ends_with(".gz"))?;
    let h = parse_header(path, &bytes)?;
    let data = data(path, &bytes, &h)?;
    let n: usize = h.shape.iter().product();
    let size = h.dtype.size;
    let mut out = Vec::with_capacity(n);
    if !h.fortran || h.shape.len() < 2 {
        out.extend(data.chunks_exact(size).map(|c| h.dtype.decode(c).as_f64()));
    } else {
        // Walk the C-order multi-index, tracking the Fortran offset.
        let rank = h.shape.len();
        let mut fstride = vec![1usize; rank];
        for a in 1..rank {
            fstride[a] = fstride[a - 1] * h.shape[a - 1];
        }
        let mut idx = vec![0usize; rank];
        let mut off = 0usize;
        for _ in 0..n {
            out.push(h.dtype.decode(&data[off * size..]).as_f64());
            for a in (0..rank).rev() {
                idx[a] += 1;
                off += fstride[a];
                if idx[a] < h.shape[a] {
                    break;
                }
                off -= fstride[a] * h.shape[a];
                idx[a] = 0;
            }
        }
    }
    Ok((h.shape, out))
}

/// An npy v1 file with the given descr, order, shape and little-endian payload.
#[cfg(test)]
pub(crate) fn npy_bytes(descr: &str, fortran: bool, shape: &[usize], payload: &[u8]) -> Vec<u8> {
    let f = if fortran { "True" } else { "False" };
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {f}, 'shape': {}, }}",
        shape_text(shape)
    );
    npy_raw(&dict, payload)
}

/// An npy v1 file with the given header dictionary text and payload.
#[cfg(test)]
pub(crate) fn npy_raw(dict: &str, payload: &[u8]) -> Vec<u8> {
    let mut h = dict.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut b = MAGIC.to_vec();
    b.extend_from_slice(&[1, 0]);
    b.extend_from_slice(&(h.len() as u16).to_le_bytes());
    b.extend_from_slice(h.as_bytes());
    b.extend_from_slice(payload);
    b
}

#[cfg(test)]
mod tests {
    use super::super::options::Binarize;
    use super::*;

    fn run(bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
        let mut sink = Collector::new(Binarize::None);
        let t = parse_dataset(Path::new("a.npy"), bytes, &mut sink)?;
        Ok(sink
            .finish(t.rows, t.cols)
            .outer_iter()
            .map(|r| r.to_vec())
            .collect())
    }

    fn le<T: Copy, const N: usize>(vals: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        vals.iter().flat_map(|&v| f(v)).collect()
    }

    #[test]
    fn every_dtype_reads() {
        let want = vec![vec![0, 1, 2], vec![3, 4, 5]];
        let ints = [0i64, 1, 2, 3, 4, 5];
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("|u1", ints.iter().map(|&v| v as u8).collect()),
            ("|i1", ints.iter().map(|&v| v as u8).collect()),
            ("<i2", le(&ints, |v| (v as i16).to_le_bytes())),
            ("<u2", le(&ints, |v| (v as u16).to_le_bytes())),
            ("<i4", le(&ints, |v| (v as i32).to_le_bytes())),
            ("<u4", le(&ints, |v| (v as u32).to_le_bytes())),
            ("<i8", le(&ints, |v| v.to_le_bytes())),
            ("<u8", le(&ints, |v| (v as u64).to_le_bytes())),
            ("<f4", le(&ints, |v| (v as f32).to_le_bytes())),
            ("<f8", le(&ints, |v| (v as f64).to_le_bytes())),
        ];
        for (descr, payload) in cases {
            let got = run(&npy_bytes(descr, false, &[2, 3], &payload));
            assert_eq!(got.unwrap(), want, "{descr}");
        }
        let b = run(&npy_bytes("|b1", false, &[1, 3], &[1, 0, 1])).unwrap();
        assert_eq!(b, vec![vec![1, 0, 1]]);
    }

    #[test]
    fn fortran_order() {
        // Column-major storage of [[0, 1, 2], [3, 4, 5]].
        let f = run(&npy_bytes("|u1", true, &[2, 3], &[0, 3, 1, 4, 2, 5])).unwrap();
        assert_eq!(f, vec![vec![0, 1, 2], vec![3, 4, 5]]);
        let p = le(&[0i32, 3, 1, 4, 2, 5], |v| v.to_le_bytes());
        let f = run(&npy_bytes("<i4", true, &[2, 3], &p)).unwrap();
        assert_eq!(f, vec![vec![0, 1, 2], vec![3, 4, 5]]);
    }

    #[test]
    fn version_2_header() {
        let mut b = npy_bytes("|u1", false, &[1, 2], &[1, 1]);
        // Rewrite as version 2: 4-byte header length.
        let hl = u16::from_le_bytes([b[8], b[9]]) as u32;
        b[6] = 2;
        let rest = b.split_off(8);
        b.extend_from_slice(&hl.to_le_bytes());
        b.extend_from_slice(&rest[2..]);
        assert_eq!(run(&b).unwrap(), vec![vec![1, 1]]);
    }

    #[test]
    fn rejects_bad_dtypes() {
        for (descr, what) in [
            ("<c16", "complex"),
            ("<U3", "unicode"),
            ("|O", "object"),
            ("|S2", "byte string"),
            (">i4", "big-endian"),
            ("<f2", "float16"),
            ("<M8[ns]", "date"),
        ] {
            let e = run(&npy_bytes(descr, false, &[1, 1], &[0; 16])).unwrap_err();
            let s = e.to_string();
            assert!(s.contains(descr) && s.contains(what), "{descr}: {s}");
            assert!(s.contains("expected an npy dtype"), "{s}");
        }
    }

    #[test]
    fn reads_any_rank_as_f64_in_c_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.npy");
        // shape (2, 3, 2), Fortran order: element (i, j, k) at i + 2j + 6k.
        let mut c = vec![0f64; 12];
        let mut f = vec![0f64; 12];
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..2 {
                    let v = (100 * i + 10 * j + k) as f64;
                    c[i * 6 + j * 2 + k] = v;
                    f[i + 2 * j + 6 * k] = v;
                }
            }
        }
        std::fs::write(
            &p,
            npy_bytes("<f8", true, &[2, 3, 2], &le(&f, |v| v.to_le_bytes())),
        )
        .unwrap();
        let (shape, vals) = read_npy_f64(&p).unwrap();
        assert_eq!(shape, vec![2, 3, 2]);
        assert_eq!(vals, c);
    }
}
