//! Tests of [`read_dataset`]: every format, every kind of bad input, and the shared real data.

use super::idx::idx_bytes;
use super::npy::{npy_bytes, npy_raw};
use super::*;
use crate::data::Dataset;
use crate::error::{Error, Result};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

/// A file `name` holding `bytes` in a fresh temporary directory.
fn file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    (dir, p)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn read(name: &str, bytes: &[u8], opts: &ReadOptions) -> Result<Dataset> {
    let (_dir, p) = file(name, bytes);
    read_dataset(&p, opts)
}

fn read_plain(name: &str, bytes: &[u8]) -> Result<Dataset> {
    read(name, bytes, &ReadOptions::default())
}

fn rows(d: &Dataset) -> Vec<Vec<u8>> {
    d.values().outer_iter().map(|r| r.to_vec()).collect()
}

/// The fields of a parse error, after checking that its message names the file.
fn parse_fields(e: Error, name: &str) -> (Option<usize>, Option<usize>, String, String) {
    let msg = e.to_string();
    assert!(msg.contains(name), "message does not name {name}: {msg}");
    match e {
        Error::Parse {
            row,
            column,
            expected,
            found,
            ..
        } => (row, column, expected, found),
        e => panic!("expected a parse error, got {e:?}"),
    }
}

fn f8(vals: &[f64]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
}

// ---------------------------------------------------------------- good input

#[test]
fn csv_with_header_crlf_and_trailing_blank_lines() {
    let d = read_plain("a.csv", b"x0,x1,x2\r\n0,1,2\r\n2, 0 ,1\r\n\r\n\n").unwrap();
    assert_eq!(rows(&d), vec![vec![0, 1, 2], vec![2, 0, 1]]);
    assert_eq!(d.cardinalities(), &[3, 2, 3]);
}

#[test]
fn tsv_and_debd_data_files() {
    let d = read_plain("a.tsv", b"1\t0\n0\t1\n").unwrap();
    assert_eq!(rows(&d), vec![vec![1, 0], vec![0, 1]]);
    let d = read_plain("nltcs.test.data", b"0,1,1\n1,0,0\n").unwrap();
    assert_eq!(rows(&d), vec![vec![0, 1, 1], vec![1, 0, 0]]);
    assert!(d.is_binary());
}

#[test]
fn amat_integers_and_integer_valued_floats() {
    let d = read_plain("a.amat", b"0 1 0\n1.0 0.0 1e0\n").unwrap();
    assert_eq!(rows(&d), vec![vec![0, 1, 0], vec![1, 0, 1]]);
}

#[test]
fn gzip_is_transparent_including_multi_member_streams() {
    let mut two = gzip(b"0,1\n");
    two.extend(gzip(b"1,1\n"));
    let d = read_plain("a.csv.gz", &two).unwrap();
    assert_eq!(rows(&d), vec![vec![0, 1], vec![1, 1]]);
    let npy = npy_bytes("|u1", false, &[1, 2], &[3, 4]);
    let d = read_plain("a.npy.GZ", &gzip(&npy)).unwrap();
    assert_eq!(rows(&d), vec![vec![3, 4]]);
}

#[test]
fn idx_files_by_name() {
    let img = idx_bytes(0x08, &[2, 2, 2], &[0, 10, 20, 30, 40, 50, 60, 70]);
    for name in [
        "t10k-images-idx3-ubyte.gz",
        "train-images.idx3-ubyte",
        "x.idx",
    ] {
        let bytes = if name.ends_with(".gz") {
            gzip(&img)
        } else {
            img.clone()
        };
        let d = read_plain(name, &bytes).unwrap();
        assert_eq!(
            rows(&d),
            vec![vec![0, 10, 20, 30], vec![40, 50, 60, 70]],
            "{name}"
        );
    }
    let lab = idx_bytes(0x08, &[4], &[3, 1, 4, 1]);
    let d = read_plain("t10k-labels-idx1-ubyte", &lab).unwrap();
    assert_eq!((d.n_samples(), d.n_vars()), (4, 1));
    assert_eq!(d.cardinalities(), &[5]);
}

#[test]
fn npy_rank_2_reads_with_inferred_cardinalities() {
    let d = read_plain(
        "a.npy",
        &npy_bytes("<f8", false, &[2, 2], &f8(&[0.0, 3.0, 1.0, 0.0])),
    )
    .unwrap();
    assert_eq!(rows(&d), vec![vec![0, 3], vec![1, 0]]);
    assert_eq!(d.cardinalities(), &[2, 4]);
}

#[test]
fn declared_cardinalities_are_kept() {
    let opts = ReadOptions::default().with_cardinalities(vec![4, 2]);
    let d = read("a.csv", b"0,1\n1,0\n", &opts).unwrap();
    assert_eq!(d.cardinalities(), &[4, 2]);
}

#[test]
fn threshold_binarization_in_the_data_scale() {
    let opts = ReadOptions::default().with_binarize(Binarize::Threshold(127.0));
    let d = read("g.csv", b"0,127,128,255\n", &opts).unwrap();
    assert_eq!(rows(&d), vec![vec![0, 0, 1, 1]]);
    let opts = ReadOptions::default().with_binarize(Binarize::Threshold(0.5));
    let d = read("g.amat", b"0.1 0.5 0.50001 1.0\n", &opts).unwrap();
    assert_eq!(rows(&d), vec![vec![0, 0, 1, 1]]);
    let img = idx_bytes(0x08, &[1, 1, 3], &[0, 200, 90]);
    let opts = ReadOptions::default().with_binarize(Binarize::Threshold(100.0));
    assert_eq!(
        rows(&read("i-ubyte", &img, &opts).unwrap()),
        vec![vec![0, 1, 0]]
    );
}

#[test]
fn stochastic_binarization_is_seeded_and_has_the_right_rates() {
    // 400 rows × 50 columns: column 0 always 0, column 1 always 255, the rest 64 (p = 64/255).
    let mut text = String::new();
    for _ in 0..400 {
        let mut cells = vec!["0".to_string(), "255".to_string()];
        cells.extend((2..50).map(|_| "64".to_string()));
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    let opts = |seed| ReadOptions::default().with_binarize(Binarize::Stochastic { seed });
    let a = read("g.csv", text.as_bytes(), &opts(5)).unwrap();
    let b = read("g.csv", text.as_bytes(), &opts(5)).unwrap();
    let c = read("g.csv", text.as_bytes(), &opts(6)).unwrap();
    assert_eq!(a, b, "same seed, same bits");
    assert_ne!(a, c, "another seed, other bits");
    assert!(a.is_binary());
    let v = a.values();
    assert!(v.column(0).iter().all(|&x| x == 0));
    assert!(v.column(1).iter().all(|&x| x == 1));
    let ones: usize = v.iter().map(|&x| usize::from(x)).sum::<usize>() - 400;
    let n = 400.0 * 48.0;
    let p = 64.0 / 255.0;
    let rate = ones as f64 / n;
    let sd = (p * (1.0 - p) / n).sqrt();
    assert!((rate - p).abs() < 5.0 * sd, "rate {rate}, want {p}");

    // Data in [0, 1] are probabilities as they are (no division by 255).
    let mut text = String::new();
    for _ in 0..2000 {
        text.push_str("0.25 1\n");
    }
    let d = read("g.amat", text.as_bytes(), &opts(1)).unwrap();
    let rate = d
        .values()
        .column(0)
        .iter()
        .map(|&x| f64::from(x))
        .sum::<f64>()
        / 2000.0;
    assert!((rate - 0.25).abs() < 0.05, "rate {rate}");
    assert!(d.values().column(1).iter().all(|&x| x == 1));
}

// ----------------------------------------------------------------- bad input

#[test]
fn err_unknown_extension() {
    for name in ["a.xyz", "noext", "a.mat.gz"] {
        let e = read_plain(name, b"0,1\n").unwrap_err();
        assert!(matches!(e, Error::UnsupportedFormat { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(name) && msg.contains(".npy"), "{msg}");
    }
}

#[test]
fn err_missing_file() {
    let e = read_dataset(Path::new("/nonexistent/a.csv"), &ReadOptions::default()).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e:?}");
    assert!(e.to_string().contains("/nonexistent/a.csv"));
}

#[test]
fn err_ragged_rows() {
    let e = read_plain("r.csv", b"0,1,0\n1,1,1\n1,0\n").unwrap_err();
    let (row, _, expected, found) = parse_fields(e, "r.csv");
    assert_eq!(row, Some(3));
    assert!(expected.contains("3 values per row"), "{expected}");
    assert_eq!(found, "2 values");
    let e = read_plain("r.amat", b"0 1\n1 1 1\n").unwrap_err();
    let (row, _, _, found) = parse_fields(e, "r.amat");
    assert_eq!((row, found.as_str()), (Some(2), "3 values"));
    // With a header the row is still the line number.
    let e = read_plain("h.csv", b"a,b\n0,1\n0\n").unwrap_err();
    assert_eq!(parse_fields(e, "h.csv").0, Some(3));
}

#[test]
fn err_non_integer_without_binarization() {
    let e = read_plain("f.csv", b"0,1\n1,0.5\n").unwrap_err();
    let (row, col, expected, found) = parse_fields(e, "f.csv");
    assert_eq!((row, col), (Some(2), Some(2)));
    assert!(
        expected.contains("integer") && expected.contains("binarization"),
        "{expected}"
    );
    assert_eq!(found, "'0.5'");
    let e = read_plain("f.amat", b"0.0 0.25\n").unwrap_err();
    assert_eq!(parse_fields(e, "f.amat").1, Some(2));
    let e = read_plain("f.npy", &npy_bytes("<f8", false, &[1, 2], &f8(&[1.0, 0.7]))).unwrap_err();
    let (row, col, _, found) = parse_fields(e, "f.npy");
    assert_eq!((row, col, found.as_str()), (Some(1), Some(2), "0.7"));
    let e = read_plain("w.csv", b"0,1\n1,abc\n").unwrap_err();
    let (_, _, expected, found) = parse_fields(e, "w.csv");
    assert_eq!((expected.as_str(), found.as_str()), ("a number", "'abc'"));
}

#[test]
fn err_negative_values() {
    let e = read_plain("n.csv", b"0,-1\n").unwrap_err();
    let (row, col, expected, found) = parse_fields(e, "n.csv");
    assert_eq!((row, col), (Some(1), Some(2)));
    assert!(expected.contains("nonnegative"), "{expected}");
    assert_eq!(found, "'-1'");
    let p: Vec<u8> = [0i32, 1, 1, -5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let e = read_plain("n.npy", &npy_bytes("<i4", false, &[2, 2], &p)).unwrap_err();
    let (row, col, _, found) = parse_fields(e, "n.npy");
    assert_eq!((row, col, found.as_str()), (Some(2), Some(2), "-5"));
    // Negative values are rejected under a binarization too.
    let opts = ReadOptions::default().with_binarize(Binarize::Threshold(0.5));
    assert!(read("n.amat", b"0.3 -0.1\n", &opts).is_err());
}

#[test]
fn err_values_above_255() {
    let e = read_plain("b.csv", b"0,300\n").unwrap_err();
    let (_, col, expected, found) = parse_fields(e, "b.csv");
    assert_eq!(col, Some(2));
    assert!(expected.contains("at most 255"), "{expected}");
    assert_eq!(found, "'300'");
    let e = read_plain("b.amat", b"255.5\n").unwrap_err();
    assert!(parse_fields(e, "b.amat").2.contains("at most 255"));
    let p: Vec<u8> = [1i64, 256].iter().flat_map(|v| v.to_le_bytes()).collect();
    let e = read_plain("b.npy", &npy_bytes("<i8", true, &[2, 1], &p)).unwrap_err();
    let (row, col, _, found) = parse_fields(e, "b.npy");
    assert_eq!((row, col, found.as_str()), (Some(2), Some(1), "256"));
    let e = read_plain("big.csv", b"99999999999999999999999\n").unwrap_err();
    assert!(parse_fields(e, "big.csv").2.contains("at most 255"));
}

#[test]
fn err_values_at_or_above_declared_cardinality() {
    let opts = ReadOptions::default().with_cardinalities(vec![2, 3]);
    let e = read("c.csv", b"h1,h2\n0,2\n1,3\n", &opts).unwrap_err();
    let msg = e.to_string();
    let (row, col, expected, found) = parse_fields(e, "c.csv");
    assert_eq!((row, col), (Some(3), Some(2)), "line 3 of the file: {msg}");
    assert!(expected.contains("cardinality 3"), "{expected}");
    assert_eq!(found, "3");
    let e = read("c.npy", &npy_bytes("|u1", false, &[1, 2], &[2, 0]), &opts).unwrap_err();
    let (row, col, _, _) = parse_fields(e, "c.npy");
    assert_eq!((row, col), (Some(1), Some(1)));
}

#[test]
fn err_cardinality_count_mismatch() {
    let opts = ReadOptions::default().with_cardinalities(vec![2, 2, 2]);
    let e = read("c.csv", b"0,1\n", &opts).unwrap_err();
    assert!(matches!(e, Error::InvalidParam { .. }), "{e:?}");
    assert!(e.to_string().contains("3 given") && e.to_string().contains("2 variables"));
}

#[test]
fn err_nan_and_infinity() {
    for (name, text) in [
        ("x.csv", "0,nan\n"),
        ("y.csv", "0,inf\n"),
        ("z.amat", "0 -inf\n"),
    ] {
        let e = read_plain(name, text.as_bytes()).unwrap_err();
        let (row, col, expected, _) = parse_fields(e, name);
        assert_eq!((row, col), (Some(1), Some(2)), "{name}");
        assert_eq!(expected, "a finite number");
    }
    let opts = ReadOptions::default().with_binarize(Binarize::Stochastic { seed: 0 });
    let e = read(
        "n.npy",
        &npy_bytes("<f8", false, &[1, 1], &f8(&[f64::NAN])),
        &opts,
    )
    .unwrap_err();
    let (_, _, expected, found) = parse_fields(e, "n.npy");
    assert_eq!(
        (expected.as_str(), found.as_str()),
        ("a finite number", "NaN")
    );
}

#[test]
fn err_empty_inputs() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("e.csv", vec![], "empty file"),
        ("e.amat", b"\n \n\n".to_vec(), "blank"),
        ("e.csv", b"a,b,c\n\n".to_vec(), "only a header"),
        ("e.csv.gz", gzip(b""), "empty file"),
        ("e.npy", npy_bytes("|u1", false, &[0, 3], &[]), "no samples"),
        (
            "e.npy",
            npy_bytes("|u1", false, &[3, 0], &[]),
            "no variables",
        ),
        ("e.npy", vec![], "empty file"),
        ("e-ubyte", idx_bytes(0x08, &[0, 28, 28], &[]), "0 × 28 × 28"),
    ];
    for (name, bytes, what) in cases {
        let e = read_plain(name, &bytes).unwrap_err();
        let (_, _, _, found) = parse_fields(e, name);
        assert!(found.contains(what), "{name}: {found}");
    }
}

#[test]
fn err_wrong_npy_dtype() {
    for descr in ["<c16", "<U1", "|O", "|V8"] {
        let e = read_plain("d.npy", &npy_bytes(descr, false, &[1, 1], &[0; 16])).unwrap_err();
        let (_, _, expected, found) = parse_fields(e, "d.npy");
        assert!(
            expected.contains("dtype") && found.contains(descr),
            "{found}"
        );
    }
    // A structured dtype (a list in the header).
    let b = npy_raw(
        "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1, 1), }",
        &[0; 4],
    );
    let e = read_plain("s.npy", &b).unwrap_err();
    assert!(parse_fields(e, "s.npy").3.contains("structured"));
}

#[test]
fn err_malformed_npy_header() {
    let b = npy_raw("{'descr': '|u1', 'shape': (1, 1), }", &[0]);
    let e = read_plain("h.npy", &b).unwrap_err();
    assert!(parse_fields(e, "h.npy").2.contains("fortran_order"));
    let b = npy_raw(
        "{'descr': '|u1', 'fortran_order': False, 'shape': (1, x), }",
        &[0],
    );
    assert!(read_plain("h.npy", &b).is_err());
    // a multi-byte character where the dtype's kind is (found by fuzzing: it panicked)
    let b = npy_raw(
        "{'descr': '|\u{fffd}~', 'fortran_order': False, 'shape': (1, 1), }",
        &[0],
    );
    let e = read_plain("u.npy", &b).unwrap_err();
    assert!(parse_fields(e, "u.npy").3.contains("dtype"));
    let mut b = npy_bytes("|u1", false, &[1, 1], &[0]);
    b[6] = 9;
    let e = read_plain("v.npy", &b).unwrap_err();
    assert!(matches!(e, Error::UnsupportedFormat { .. }), "{e:?}");
}

#[test]
fn err_wrong_npy_rank() {
    let e = read_plain("r1.npy", &npy_bytes("|u1", false, &[3], &[0, 1, 0])).unwrap_err();
    let (_, _, expected, found) = parse_fields(e, "r1.npy");
    assert!(expected.contains("2-D"), "{expected}");
    assert!(
        found.contains("1-D") && found.contains("(3,)") && found.contains("reshape"),
        "{found}"
    );
    let e = read_plain("r3.npy", &npy_bytes("|u1", false, &[1, 2, 2], &[0; 4])).unwrap_err();
    assert!(parse_fields(e, "r3.npy")
        .3
        .contains("3-D array of shape (1, 2, 2)"));
    let e = read_plain("r0.npy", &npy_bytes("|u1", false, &[], &[0])).unwrap_err();
    assert!(parse_fields(e, "r0.npy").3.contains("0-D"));
}

#[test]
fn err_truncated_npy() {
    let full = npy_bytes("<i4", false, &[2, 2], &[0; 16]);
    // Cut in the data.
    let e = read_plain("t.npy", &full[..full.len() - 3]).unwrap_err();
    let (_, _, expected, found) = parse_fields(e, "t.npy");
    assert!(
        expected.contains("16 bytes") && expected.contains("(2, 2)"),
        "{expected}"
    );
    assert!(
        found.contains("13 bytes") && found.contains("truncated"),
        "{found}"
    );
    // Cut in the header and in the magic.
    for cut in [30, 8] {
        let e = read_plain("t.npy", &full[..cut]).unwrap_err();
        assert!(
            parse_fields(e, "t.npy").3.contains("truncated"),
            "cut {cut}"
        );
    }
    let e = read_plain("t.npy", b"PK\x03\x04 not numpy").unwrap_err();
    assert!(parse_fields(e, "t.npy").3.contains("not an npy file"));
}

#[test]
fn err_truncated_idx() {
    let full = idx_bytes(0x08, &[2, 2, 2], &[0; 8]);
    let e = read_plain("t-ubyte", &full[..full.len() - 1]).unwrap_err();
    let (_, _, expected, found) = parse_fields(e, "t-ubyte");
    assert!(
        expected.contains("8 bytes") && expected.contains("2 × 2 × 2"),
        "{expected}"
    );
    assert!(found.contains("7 bytes (truncated)"), "{found}");
    let e = read_plain("t-ubyte", &full[..10]).unwrap_err();
    assert!(parse_fields(e, "t-ubyte").3.contains("truncated"));
}

#[test]
fn err_truncated_or_corrupt_gzip() {
    let text: String = (0..2000)
        .map(|i| format!("{},{}\n", i % 2, (i / 2) % 2))
        .collect();
    let gz = gzip(text.as_bytes());
    let e = read_plain("t.csv.gz", &gz[..gz.len() / 2]).unwrap_err();
    let (_, _, expected, found) = parse_fields(e, "t.csv.gz");
    assert!(expected.contains("gzip"), "{expected}");
    assert!(found.contains("truncated"), "{found}");
    let e = read_plain("t.csv.gz", b"0,1\n").unwrap_err();
    assert!(parse_fields(e, "t.csv.gz").1.is_none());
}

/// Compressed twice, or compressed under a name without `.gz`: the remedy is named.
#[test]
fn err_gzip_where_none_is_expected() {
    let e = read_plain("t.csv.gz", &gzip(&gzip(b"0,1\n"))).unwrap_err();
    let (_, _, _, found) = parse_fields(e, "t.csv.gz");
    assert!(found.contains("compressed twice"), "{found}");
    let e = read_plain("t.csv", &gzip(b"0,1\n")).unwrap_err();
    let (_, _, _, found) = parse_fields(e, "t.csv");
    assert!(
        found.contains("gzip-compressed") && found.contains("t.csv.gz"),
        "{found}"
    );
}

#[test]
fn err_threshold_must_be_finite() {
    let opts = ReadOptions::default().with_binarize(Binarize::Threshold(f64::NAN));
    let e = read("a.csv", b"0\n", &opts).unwrap_err();
    assert!(matches!(e, Error::InvalidParam { .. }), "{e:?}");
}

// ----------------------------------------------------------- shared real data

use crate::testutil::shared_data;

fn mean(d: &Dataset) -> f64 {
    d.values().iter().map(|&v| f64::from(v)).sum::<f64>() / d.values().len() as f64
}

#[test]
fn real_binarized_mnist_test() {
    let Some(dir) = shared_data() else { return };
    let p = dir.join("binarized_mnist/binarized_mnist_test.amat.gz");
    let d = read_dataset(&p, &ReadOptions::default()).unwrap();
    assert_eq!((d.n_samples(), d.n_vars()), (10000, 784));
    assert!(d.is_binary());
    // README: test pixel mean 0.1325.
    assert!((mean(&d) - 0.1325).abs() < 5e-4, "mean {}", mean(&d));
}

#[test]
fn real_mnist_idx_with_threshold() {
    let Some(dir) = shared_data() else { return };
    let opts = ReadOptions::default().with_binarize(Binarize::Threshold(127.0));
    let d = read_dataset(&dir.join("mnist/t10k-images-idx3-ubyte.gz"), &opts).unwrap();
    assert_eq!((d.n_samples(), d.n_vars()), (10000, 784));
    assert!(d.is_binary());
    let m = mean(&d);
    assert!((0.10..0.16).contains(&m), "mean {m}");
    let raw = read_dataset(
        &dir.join("mnist/t10k-images-idx3-ubyte.gz"),
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(raw.values().iter().max(), Some(&255));
    assert_eq!(
        d.values(),
        &raw.values().mapv(|v| u8::from(v > 127)),
        "threshold agrees with the raw grayscale"
    );
    let labels = read_dataset(
        &dir.join("mnist/t10k-labels-idx1-ubyte.gz"),
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!((labels.n_samples(), labels.n_vars()), (10000, 1));
    assert_eq!(labels.cardinalities(), &[10]);
}

#[test]
fn real_debd_nltcs_test() {
    let Some(dir) = shared_data() else { return };
    let d = read_dataset(
        &dir.join("debd/nltcs/nltcs.test.data.gz"),
        &ReadOptions::default(),
    )
    .unwrap();
    // debd/README.md: nltcs has 16 variables and 3236 test rows.
    assert_eq!((d.n_samples(), d.n_vars()), (3236, 16));
    assert!(d.is_binary());
}

#[test]
fn real_caltech101_split1_test() {
    let Some(dir) = shared_data() else { return };
    let p = dir.join("caltech101_silhouettes/caltech101_silhouettes_28_split1_test.amat.gz");
    let d = read_dataset(&p, &ReadOptions::default()).unwrap();
    assert_eq!((d.n_samples(), d.n_vars()), (2307, 784));
    assert!(d.is_binary());
    // README: test pixel mean 0.539 (1 = background).
    assert!((mean(&d) - 0.539).abs() < 1e-3, "mean {}", mean(&d));
}

#[test]
fn a_directory_is_named_as_one_not_as_a_missing_extension() {
    let dir = tempfile::tempdir().unwrap();
    let e = read_dataset(dir.path(), &ReadOptions::default()).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("a directory, not a data file"), "{text}");
    assert!(!text.contains("extension"), "{text}");
}
