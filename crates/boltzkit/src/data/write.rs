//! Writing datasets (`.npy`, `.csv`, `.tsv`, `.amat`, each optionally `.gz`) and `f64` arrays
//! (`.npy`). Every write is atomic ([`crate::io::write_atomic_with`]).

use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::io::write_atomic_with;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;
use std::path::Path;

/// The npy v1 header (magic, version, length, padded dictionary) for `descr` and C order.
fn npy_header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dims = super::read::npy::shape_text(shape);
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    // Pad with spaces so that magic + version + length + dict + '\n' is a multiple of 64.
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let (major, len_bytes) = if h.len() <= usize::from(u16::MAX) {
        (1u8, (h.len() as u16).to_le_bytes().to_vec())
    } else {
        // Version 2 has a 4-byte length (only for very high ranks; kept for completeness).
        while (12 + h.len()) % 64 != 0 {
            h.insert(h.len() - 1, ' ');
        }
        (2u8, (h.len() as u32).to_le_bytes().to_vec())
    };
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[major, 0]);
    out.extend_from_slice(&len_bytes);
    out.extend_from_slice(h.as_bytes());
    out
}

fn npy_body(w: &mut dyn Write, data: &Dataset) -> std::io::Result<()> {
    w.write_all(&npy_header("|u1", &[data.n_samples(), data.n_vars()]))?;
    let values = data.values();
    match values.as_slice() {
        Some(s) => w.write_all(s),
        None => {
            for row in values.outer_iter() {
                w.write_all(&row.to_vec())?;
            }
            Ok(())
        }
    }
}

fn text_body(w: &mut dyn Write, data: &Dataset, sep: u8) -> std::io::Result<()> {
    let mut line = Vec::with_capacity(data.n_vars() * 4);
    for row in data.values().outer_iter() {
        line.clear();
        for (j, &v) in row.iter().enumerate() {
            if j > 0 {
                line.push(sep);
            }
            if v >= 100 {
                line.push(b'0' + v / 100);
            }
            if v >= 10 {
                line.push(b'0' + (v / 10) % 10);
            }
            line.push(b'0' + v % 10);
        }
        line.push(b'\n');
        w.write_all(&line)?;
    }
    Ok(())
}

/// Writes `body` to `path` atomically, gzipped when `gz`.
fn write_with(
    path: &Path,
    gz: bool,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    write_atomic_with(path, |w| {
        if gz {
            let mut enc = GzEncoder::new(w, Compression::default());
            body(&mut enc)?;
            enc.finish()?;
            Ok(())
        } else {
            body(w)
        }
    })
}

/// Writes `data` as a rank-2 `uint8` `.npy` file (samples × variables, C order).
///
/// Cardinalities are not stored; reading infers them or takes them from the user.
pub fn write_npy(path: &Path, data: &Dataset) -> Result<()> {
    write_with(path, false, |w| npy_body(w, data))
}

/// Writes `data` as comma-separated integers, one sample per line, no header.
pub fn write_csv(path: &Path, data: &Dataset) -> Result<()> {
    write_with(path, false, |w| text_body(w, data, b','))
}

/// Writes `data` in the format named by `path`'s extension: `.npy`, `.csv` (commas), `.tsv`
/// (tabs) or `.amat` (spaces), each optionally followed by `.gz` (gzip).
///
/// ```
/// # use boltzkit::data::{read_dataset, write_dataset, Dataset, ReadOptions};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("d.csv.gz");
/// let d = Dataset::binary(ndarray::array![[0, 1], [1, 1]])?;
/// write_dataset(&path, &d)?;
/// assert_eq!(read_dataset(&path, &ReadOptions::default())?, d);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_dataset(path: &Path, data: &Dataset) -> Result<()> {
    let (stem, gz) = super::read::name_and_gz(path);
    let sep = if stem.ends_with(".npy") {
        None
    } else if stem.ends_with(".csv") {
        Some(b',')
    } else if stem.ends_with(".tsv") {
        Some(b'\t')
    } else if stem.ends_with(".amat") {
        Some(b' ')
    } else {
        return Err(Error::UnsupportedFormat {
            path: path.to_path_buf(),
            reason: "cannot write this extension; expected .npy, .csv, .tsv or .amat, \
                     optionally gzipped (.gz)"
                .into(),
        });
    };
    match sep {
        None => write_with(path, gz, |w| npy_body(w, data)),
        Some(s) => write_with(path, gz, |w| text_body(w, data, s)),
    }
}

/// Writes an `f64` array of the given shape (C order) as `.npy` (dtype `<f8`), e.g. a
/// distribution over all states (shape `[n_states]`).
pub fn write_npy_f64(path: &Path, shape: &[usize], data: &[f64]) -> Result<()> {
    let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if n != Some(data.len()) {
        return Err(Error::Shape {
            op: "write_npy_f64".into(),
            expected: format!(
                "{} values for shape {shape:?}",
                n.map_or("too many".into(), |n| n.to_string())
            ),
            found: format!("{}", data.len()),
        });
    }
    write_with(path, false, |w| {
        w.write_all(&npy_header("<f8", shape))?;
        let mut buf = Vec::with_capacity(8 * 4096);
        for chunk in data.chunks(4096) {
            buf.clear();
            for v in chunk {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            w.write_all(&buf)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{read_dataset, read_npy_f64, ReadOptions};
    use ndarray::{array, Array2, ShapeBuilder};

    fn sample() -> Dataset {
        Dataset::with_inferred_cardinalities(array![[0, 1, 255], [9, 10, 100], [1, 0, 0]]).unwrap()
    }

    #[test]
    fn round_trips_every_format() {
        let dir = tempfile::tempdir().unwrap();
        let d = sample();
        for name in [
            "a.npy",
            "a.csv",
            "a.tsv",
            "a.amat",
            "a.npy.gz",
            "a.csv.gz",
            "a.tsv.gz",
            "a.amat.gz",
        ] {
            let p = dir.path().join(name);
            write_dataset(&p, &d).unwrap();
            let back = read_dataset(&p, &ReadOptions::default()).unwrap();
            assert_eq!(back, d, "{name}");
        }
        let p = dir.path().join("b.npy");
        write_npy(&p, &d).unwrap();
        assert_eq!(read_dataset(&p, &ReadOptions::default()).unwrap(), d);
        let p = dir.path().join("b.csv");
        write_csv(&p, &d).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "0,1,255\n9,10,100\n1,0,0\n"
        );
    }

    #[test]
    fn npy_header_is_aligned_and_readable() {
        for shape in [vec![3usize], vec![2, 5], vec![1, 2, 3, 4]] {
            let h = npy_header("<f8", &shape);
            assert_eq!(h.len() % 64, 0, "{shape:?}");
            assert_eq!(*h.last().unwrap(), b'\n');
        }
    }

    #[test]
    fn fortran_layout_dataset_writes_in_c_order() {
        let mut v = Array2::<u8>::zeros((2, 3).f());
        v[[0, 1]] = 1;
        v[[1, 2]] = 2;
        let d = Dataset::with_inferred_cardinalities(v).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.npy");
        write_npy(&p, &d).unwrap();
        assert_eq!(read_dataset(&p, &ReadOptions::default()).unwrap(), d);
    }

    #[test]
    fn f64_round_trip_and_shape_check() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.npy");
        let probs = vec![0.125, 0.375, 0.5, 0.0, f64::MIN_POSITIVE, 1e-300];
        write_npy_f64(&p, &[6], &probs).unwrap();
        assert_eq!(read_npy_f64(&p).unwrap(), (vec![6], probs.clone()));
        write_npy_f64(&p, &[2, 3], &probs).unwrap();
        assert_eq!(read_npy_f64(&p).unwrap(), (vec![2, 3], probs.clone()));
        assert!(matches!(
            write_npy_f64(&p, &[4], &probs),
            Err(Error::Shape { .. })
        ));
    }

    #[test]
    fn unknown_write_extension() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_dataset(&dir.path().join("a.xlsx"), &sample()).unwrap_err();
        assert!(matches!(e, Error::UnsupportedFormat { .. }), "{e}");
    }
}
