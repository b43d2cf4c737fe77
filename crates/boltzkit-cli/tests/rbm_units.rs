//! End-to-end tests of unit-type RBMs: `boltzkit rbm fit --visible-units/--hidden-units`, and
//! `rbm eval` / `rbm sample` of their `boltzkit/rbm/v2` files.

mod common;

use boltzkit::rbm::units::load_unit_rbm;
use common::*;
use std::path::Path;

/// 60 rows of 4 sites with 3 states each, the sites mostly equal in a row.
fn codes(dir: &Path) -> String {
    let mut text = String::new();
    for r in 0..60u32 {
        let a = r % 3;
        let row: Vec<String> = (0..4u32)
            .map(|i| ((a + u32::from((r * 7 + i * 5) % 11 == 0)) % 3).to_string())
            .collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    let p = path(dir, "codes.csv");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn categorical_drelu_fit_eval_and_sample_agree() {
    let dir = tempfile::tempdir().unwrap();
    let data = codes(dir.path());
    let model = path(dir.path(), "m.safetensors");
    let fit = success_json(boltzkit().args([
        "rbm",
        "fit",
        "--data",
        &data,
        "--visible-units",
        "categorical",
        "--hidden-units",
        "drelu",
        "--hidden",
        "3",
        "--algo",
        "pcd-1",
        "--epochs",
        "20",
        "--lr",
        "0.05",
        "--batch-size",
        "20",
        "--l1-squared",
        "0.01",
        "--reweight",
        "0.8",
        "-o",
        &model,
        "--seed",
        "3",
        "--json",
        "-q",
    ]));
    assert_eq!(fit["visible_units"], "categorical");
    assert_eq!(fit["hidden_units"], "drelu");
    assert_eq!(fit["updates"], 60);
    let file = load_unit_rbm(Path::new(&model)).unwrap();
    assert!(file.metadata["settings"].contains("\"l1_squared\":0.01"));
    // the weighted average of eval is the fit's (the same sequence weights, the exact ln Z)
    let eval = success_json(boltzkit().args([
        "rbm",
        "eval",
        "--model",
        &model,
        "--data",
        &data,
        "--reweight",
        "0.8",
        "--json",
        "-q",
    ]));
    assert_eq!(eval["method"], "exact");
    assert_eq!(eval["avg_log_likelihood"], fit["avg_log_likelihood"]);
    let ll = eval["avg_log_likelihood"].as_f64().unwrap();
    assert!(ll < 0.0 && ll > 4.0 * -(3f64.ln()) - 1.0, "{ll}");
    let samples = path(dir.path(), "s.csv");
    success_json(boltzkit().args([
        "rbm",
        "sample",
        "--model",
        &model,
        "-n",
        "7",
        "--gibbs-steps",
        "5",
        "-o",
        &samples,
        "--seed",
        "1",
        "--json",
        "-q",
    ]));
    let text = std::fs::read_to_string(&samples).unwrap();
    assert_eq!(text.lines().count(), 7);
    assert!(text
        .lines()
        .all(|l| l.split(',').all(|c| ["0", "1", "2"].contains(&c))));
    // the effective couplings as plmc's couplings file, which potts contacts ranks
    let couplings = path(dir.path(), "rbm.couplings");
    let c = success_json(boltzkit().args([
        "rbm",
        "couplings",
        "--model",
        &model,
        "--data",
        &data,
        "--reweight",
        "0.8",
        "--bins",
        "0",
        "-o",
        &couplings,
        "--json",
        "-q",
    ]));
    assert_eq!(
        (c["sites"].as_u64(), c["bins"].as_u64()),
        (Some(4), Some(0))
    );
    let text = std::fs::read_to_string(&couplings).unwrap();
    assert_eq!(text.lines().count(), 6);
    assert!(text.lines().all(|l| l.split_whitespace().count() == 6));
    let distances = path(dir.path(), "d.txt");
    std::fs::write(&distances, "1 3 0 5.0\n1 4 0 12.0\n2 4 0 6.0\n").unwrap();
    let p = success_json(boltzkit().args([
        "potts",
        "contacts",
        "--couplings",
        &couplings,
        "--distances",
        &distances,
        "--min-separation",
        "2",
        "--json",
        "-q",
    ]));
    assert_eq!(p["pairs_ranked"], 3);
    bracket_ends_average_the_same_rows(dir.path(), &data);
}

/// `rbm eval --method bracket` of a unit-type model: both ends average over the rows RAISE
/// runs on. On data of two very different rows and `--raise-vectors 1`, the upper end is the
/// picked row's figure (forward AIS's ln Z is exact here to a few hundredths), not the average
/// over every row, and the bracket is narrow.
fn bracket_ends_average_the_same_rows(dir: &Path, data: &str) {
    let model = &path(dir, "sharp.safetensors");
    success_json(boltzkit().args([
        "rbm",
        "fit",
        "--data",
        data,
        "--visible-units",
        "categorical",
        "--hidden-units",
        "bernoulli",
        "--hidden",
        "3",
        "--algo",
        "pcd-1",
        "--epochs",
        "200",
        "--lr",
        "0.1",
        "--batch-size",
        "20",
        "-o",
        model,
        "--seed",
        "5",
        "--json",
        "-q",
    ]));
    let exact_of = |name: &str, row: &str| {
        let data = path(dir, name);
        std::fs::write(&data, format!("{row}\n")).unwrap();
        let e = success_json(
            boltzkit()
                .args(["rbm", "eval", "--model", model, "--data", &data])
                .args(["--json", "-q"]),
        );
        e["avg_log_likelihood"].as_f64().unwrap()
    };
    let (typical, odd) = (exact_of("t.csv", "1,1,1,1"), exact_of("o.csv", "0,1,2,0"));
    assert!(typical - odd > 1.0, "{typical} {odd}");
    let mixed = path(dir, "mixed.csv");
    std::fs::write(&mixed, "1,1,1,1\n0,1,2,0\n".repeat(10)).unwrap();
    let b = success_json(boltzkit().args([
        "rbm",
        "eval",
        "--model",
        model,
        "--data",
        &mixed,
        "--method",
        "bracket",
        "--raise-vectors",
        "1",
        "--ais-steps",
        "2000",
        "--seed",
        "4",
        "--json",
        "-q",
    ]));
    assert_eq!(b["raise_vectors"], 1);
    let (lower, upper) = (b["lower"].as_f64().unwrap(), b["upper"].as_f64().unwrap());
    let row = if (upper - typical).abs() < (upper - odd).abs() {
        typical
    } else {
        odd
    };
    assert!(
        (upper - row).abs() < 0.1,
        "upper {upper}, the row's exact {row}"
    );
    assert!((upper - lower).abs() < 0.2, "bracket [{lower}, {upper}]");
}

#[test]
fn gaussian_visible_reads_real_text_and_samples_npy() {
    let dir = tempfile::tempdir().unwrap();
    let data = path(dir.path(), "real.csv");
    let rows: Vec<String> = (0..40)
        .map(|r| {
            let z = f64::from(r % 7) / 3.0 - 1.0;
            format!("{z:.3},{:.3},{:.3}", -z, z * 0.5 + 0.1)
        })
        .collect();
    std::fs::write(&data, rows.join("\n")).unwrap();
    let model = path(dir.path(), "g.safetensors");
    let fit = success_json(boltzkit().args([
        "rbm",
        "fit",
        "--data",
        &data,
        "--visible",
        "gaussian",
        "--hidden",
        "2",
        "--epochs",
        "5",
        "--lr",
        "0.01",
        "--batch-size",
        "10",
        "-o",
        &model,
        "--seed",
        "1",
        "--json",
        "-q",
    ]));
    assert_eq!(fit["hidden_units"], "bernoulli");
    assert!(fit["avg_log_likelihood"].as_f64().unwrap().is_finite());
    let bad = boltzkit()
        .args([
            "rbm",
            "sample",
            "--model",
            &model,
            "-o",
            &path(dir.path(), "s.csv"),
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("written as .npy"));
    let out = path(dir.path(), "s.npy");
    success_json(boltzkit().args([
        "rbm",
        "sample",
        "--model",
        &model,
        "-n",
        "4",
        "--gibbs-steps",
        "3",
        "-o",
        &out,
        "--seed",
        "2",
        "--json",
        "-q",
    ]));
    let (shape, values) = boltzkit::data::read_npy_f64(Path::new(&out)).unwrap();
    assert_eq!(shape, [4, 3]);
    assert!(values.iter().all(|x| x.is_finite()));
}

#[test]
fn unit_flags_are_refused_where_they_would_be_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let data = codes(dir.path());
    let refused = |args: &[&str], says: &str| {
        let out = boltzkit().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    };
    let o = path(dir.path(), "x.safetensors");
    refused(
        &[
            "rbm",
            "fit",
            "--data",
            &data,
            "--hidden",
            "2",
            "--l1-squared",
            "0.1",
            "-o",
            &o,
        ],
        "--l1-squared applies to",
    );
    refused(
        &[
            "rbm",
            "fit",
            "--data",
            &data,
            "--visible-units",
            "drelu",
            "--hidden",
            "2",
            "-o",
            &o,
        ],
        "visible units are bernoulli, categorical[:Q] or gaussian",
    );
    refused(
        &[
            "rbm",
            "fit",
            "--data",
            &data,
            "--visible-units",
            "categorical",
            "--hidden",
            "2",
            "--valid",
            &data,
            "-o",
            &o,
        ],
        "--valid is not available",
    );
    assert!(!Path::new(&o).exists());
}

/// Gaussian data are standardized by default and the model written in the data's units, so
/// training on `10 x + 5` gives the same model up to the change of variables: the average
/// log-likelihood lower by exactly `3 ln 10` (issue 34); `--no-standardize` does not.
#[test]
fn gaussian_standardization_is_affine_invariant_and_clipping_runs() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, scale: f64, shift: f64| {
        let rows: Vec<String> = (0..40)
            .map(|r| {
                let z = f64::from(r % 7) / 3.0 - 1.0 + f64::from(r % 3) * 0.2;
                let x = [z, -z + 0.3 * f64::from(r % 2), z * 0.5 + 0.1];
                let x: Vec<String> = x.iter().map(|v| format!("{}", v * scale + shift)).collect();
                x.join(",")
            })
            .collect();
        let p = path(dir.path(), name);
        std::fs::write(&p, rows.join("\n")).unwrap();
        p
    };
    let (a, b) = (write("a.csv", 1.0, 0.0), write("b.csv", 10.0, 5.0));
    let fit = |data: &str, extra: &[&str]| {
        let o = path(dir.path(), "m.safetensors");
        let mut args = vec![
            "rbm",
            "fit",
            "--data",
            data,
            "--visible",
            "gaussian",
            "--hidden",
            "3",
            "--epochs",
            "4",
            "--lr",
            "0.05",
            "--batch-size",
            "10",
            "-o",
            &o,
            "--seed",
            "1",
            "--json",
            "-q",
        ];
        args.extend_from_slice(extra);
        let r = success_json(boltzkit().args(&args));
        r["avg_log_likelihood"].as_f64().unwrap()
    };
    let (la, lb) = (fit(&a, &[]), fit(&b, &[]));
    let want = la - 3.0 * 10f64.ln();
    assert!((lb - want).abs() < 2e-3, "{lb} vs {want}");
    // raw columns near 15 at this rate: the run diverges (exit 1, last good model kept)
    let raw = boltzkit()
        .args([
            "rbm",
            "fit",
            "--data",
            &b,
            "--visible",
            "gaussian",
            "--hidden",
            "3",
            "--epochs",
            "4",
            "--lr",
            "0.05",
            "--batch-size",
            "10",
            "--seed",
            "1",
            "--no-standardize",
            "-o",
            &path(dir.path(), "raw.safetensors"),
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(raw.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&raw.stderr).contains("diverged"));
    // clipping: a tiny norm slows training, the run still completes
    let clipped = fit(&a, &["--clip-norm", "1e-3"]);
    assert!(
        clipped.is_finite() && (clipped - la).abs() > 1e-4,
        "{clipped} vs {la}"
    );
    let out = boltzkit()
        .args([
            "rbm",
            "fit",
            "--data",
            &a,
            "--hidden",
            "2",
            "--clip-norm",
            "1",
            "-o",
            &path(dir.path(), "x.safetensors"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--clip-norm applies to"));
}
