//! IDX files (MNIST): `0x00 0x00 <type> <ndims>`, then `ndims` big-endian u32 sizes, then the
//! values big-endian in row-major order. `n × d1 × … × dk` becomes `n × (d1⋯dk)`; a rank-1 file
//! (labels) becomes `n × 1`.

use super::collect::Collector;
use super::source::{parse_error, Table};
use crate::error::Result;
use std::path::Path;

/// Parses an IDX file into `sink`.
pub(super) fn parse(path: &Path, bytes: &[u8], sink: &mut Collector) -> Result<Table> {
    let err = |expected: &str, found: String| parse_error(path, None, None, expected, found);
    if bytes.len() < 4 {
        return Err(err(
            "an IDX header of at least 4 bytes",
            format!("a file of {} bytes (truncated)", bytes.len()),
        ));
    }
    if bytes[0] != 0 || bytes[1] != 0 {
        return Err(err(
            "an IDX magic number starting with two zero bytes",
            format!("{:02x} {:02x}", bytes[0], bytes[1]),
        ));
    }
    let (code, ndims) = (bytes[2], usize::from(bytes[3]));
    let (size, type_name) = match code {
        0x08 => (1, "unsigned byte"),
        0x09 => (1, "signed byte"),
        0x0B => (2, "short"),
        0x0C => (4, "int"),
        0x0D => (4, "float"),
        0x0E => (8, "double"),
        _ => {
            return Err(err(
                "an IDX data type code 0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E",
                format!("0x{code:02X}"),
            ))
        }
    };
    if ndims == 0 {
        return Err(err("an IDX array of rank at least 1", "rank 0".into()));
    }
    let head = 4 + 4 * ndims;
    if bytes.len() < head {
        return Err(err(
            "a complete IDX header",
            format!("{} bytes, header needs {head} (truncated)", bytes.len()),
        ));
    }
    let dims: Vec<usize> = bytes[4..head]
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize)
        .collect();
    let dims_text = dims
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(" × ");
    let rows = dims[0];
    let cols = dims[1..].iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let total = cols
        .and_then(|c| c.checked_mul(rows))
        .and_then(|n| n.checked_mul(size));
    let (Some(cols), Some(total)) = (cols, total) else {
        return Err(err("IDX dimensions of a sane size", dims_text));
    };
    let data = &bytes[head..];
    if data.len() != total {
        let what = if data.len() < total {
            "truncated"
        } else {
            "trailing bytes"
        };
        return Err(err(
            &format!("{total} bytes of {type_name} data for dimensions {dims_text}"),
            format!("{} bytes ({what})", data.len()),
        ));
    }
    if rows == 0 || cols == 0 {
        return Err(err(
            "at least one sample and one variable",
            format!("dimensions {dims_text}"),
        ));
    }
    sink.reserve(rows * cols);
    if code == 0x08 {
        sink.extend_u8(data);
    } else {
        for (k, c) in data.chunks_exact(size).enumerate() {
            let res = match code {
                0x09 => sink.push_int(i128::from(c[0] as i8)),
                0x0B => sink.push_int(i128::from(i16::from_be_bytes([c[0], c[1]]))),
                0x0C => sink.push_int(i128::from(i32::from_be_bytes([c[0], c[1], c[2], c[3]]))),
                0x0D => sink.push_f64(f64::from(f32::from_be_bytes([c[0], c[1], c[2], c[3]]))),
                _ => sink.push_f64(f64::from_be_bytes([
                    c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
                ])),
            };
            if let Err(expected) = res {
                let found = match code {
                    0x0D => f32::from_be_bytes([c[0], c[1], c[2], c[3]]).to_string(),
                    0x0E => f64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                        .to_string(),
                    0x09 => (c[0] as i8).to_string(),
                    0x0B => i16::from_be_bytes([c[0], c[1]]).to_string(),
                    _ => i32::from_be_bytes([c[0], c[1], c[2], c[3]]).to_string(),
                };
                return Err(parse_error(
                    path,
                    Some(k / cols + 1),
                    Some(k % cols + 1),
                    expected,
                    found,
                ));
            }
        }
    }
    Ok(Table {
        rows,
        cols,
        first_row: 1,
    })
}

/// The bytes of an IDX file with the given type code, dimensions and big-endian payload.
#[cfg(test)]
pub(crate) fn idx_bytes(code: u8, dims: &[u32], payload: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, code, dims.len() as u8];
    for d in dims {
        b.extend_from_slice(&d.to_be_bytes());
    }
    b.extend_from_slice(payload);
    b
}

#[cfg(test)]
mod tests {
    use super::super::options::Binarize;
    use super::*;
    use crate::Error;

    fn run(bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
        let mut sink = Collector::new(Binarize::None);
        let t = parse(Path::new("x-ubyte"), bytes, &mut sink)?;
        let a = sink.finish(t.rows, t.cols);
        Ok(a.outer_iter().map(|r| r.to_vec()).collect())
    }

    #[test]
    fn images_flatten_and_labels_become_one_column() {
        let img = idx_bytes(0x08, &[2, 2, 3], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        assert_eq!(
            run(&img).unwrap(),
            vec![vec![0, 1, 2, 3, 4, 5], vec![6, 7, 8, 9, 10, 11]]
        );
        let lab = idx_bytes(0x08, &[3], &[7, 0, 9]);
        assert_eq!(run(&lab).unwrap(), vec![vec![7], vec![0], vec![9]]);
    }

    #[test]
    fn wider_types_are_big_endian() {
        let mut p = Vec::new();
        for v in [1i32, 200] {
            p.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(
            run(&idx_bytes(0x0C, &[1, 2], &p)).unwrap(),
            vec![vec![1, 200]]
        );
        let mut p = Vec::new();
        for v in [3.0f64, -1.0] {
            p.extend_from_slice(&v.to_be_bytes());
        }
        match run(&idx_bytes(0x0E, &[2, 1], &p)).unwrap_err() {
            Error::Parse {
                row, column, found, ..
            } => {
                assert_eq!((row, column), (Some(2), Some(1)));
                assert_eq!(found, "-1");
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn bad_headers() {
        assert!(run(&[0, 0]).unwrap_err().to_string().contains("truncated"));
        assert!(run(&[1, 0, 8, 1, 0, 0, 0, 0]).is_err());
        let e = run(&idx_bytes(0x07, &[1], &[0])).unwrap_err();
        assert!(e.to_string().contains("0x07"), "{e}");
        let e = run(&idx_bytes(0x08, &[], &[])).unwrap_err();
        assert!(e.to_string().contains("rank 0"), "{e}");
        let mut cut = idx_bytes(0x08, &[2, 3], &[]);
        cut.truncate(9);
        assert!(run(&cut).unwrap_err().to_string().contains("header"));
    }
}
