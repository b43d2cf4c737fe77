//! End-to-end tests of `boltzkit fsll`, `demo` and `repro fsll`.

mod common;

use boltzkit::data::{read_dataset, ReadOptions};
use boltzkit::fsll::FsllModel;
use common::*;
use std::path::Path;

/// Generates Ising5x4 data and its truth in `dir`.
fn ising(dir: &Path, samples: &str) -> (String, String) {
    let data = dir.join("ising.npy").display().to_string();
    let truth = dir.join("p.npy").display().to_string();
    boltzkit()
        .args([
            "gen",
            "ising",
            "--samples",
            samples,
            "-o",
            &data,
            "--truth",
            &truth,
            "--seed",
            "11",
            "-q",
        ])
        .assert()
        .success();
    (data, truth)
}

#[test]
fn fit_eval_sample_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (data, truth) = ising(dir.path(), "2000");
    let model = dir.path().join("m.safetensors").display().to_string();
    let out = boltzkit()
        .args([
            "fsll", "fit", "--data", &data, "--truth", &truth, "-o", &model, "--json", "-q",
        ])
        .assert()
        .success();
    let fit = json(&out.get_output().stdout);
    let kl_truth = fit["kl_truth"].as_f64().unwrap();
    assert!(kl_truth > 0.0 && kl_truth < 0.05, "KL(p*||p) = {kl_truth}");
    assert!(fit["n_basis"].as_u64().unwrap() >= 20);
    assert_eq!(fit["path"], "xor");

    let m = FsllModel::load(Path::new(&model)).unwrap();
    assert_eq!(m.n_basis() as u64, fit["n_basis"].as_u64().unwrap());

    let out = boltzkit()
        .args([
            "fsll", "eval", "--model", &model, "--data", &data, "--truth", &truth, "--json",
        ])
        .assert()
        .success();
    let ev = json(&out.get_output().stdout);
    assert!((ev["kl_truth"].as_f64().unwrap() - kl_truth).abs() < 1e-9);
    // average log-likelihood = −(KL(p_d||p_θ) + H(p_d))  ≤ −KL(p_d||p_θ)
    assert!(ev["avg_log_likelihood"].as_f64().unwrap() < -fit["kl_data"].as_f64().unwrap());

    let samples = dir.path().join("s.npy").display().to_string();
    boltzkit()
        .args([
            "fsll", "sample", "--model", &model, "-n", "300", "-o", &samples, "--seed", "5", "-q",
        ])
        .assert()
        .success();
    let s = read_dataset(Path::new(&samples), &ReadOptions::default()).unwrap();
    assert_eq!((s.n_samples(), s.n_vars()), (300, 20));
}

#[test]
fn full_path_reaches_the_same_cost() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = ising(dir.path(), "500");
    let run = |path: &str| {
        let out = boltzkit()
            .args([
                "fsll", "fit", "--data", &data, "--path", path, "--json", "-q",
            ])
            .assert()
            .success();
        json(&out.get_output().stdout)
    };
    let (a, b) = (run("xor"), run("full"));
    // Two different round-off histories: near the stopping threshold they may take a step
    // more or less, but they reach the same cost to a small tolerance.
    let (na, nb) = (
        a["n_basis"].as_i64().unwrap(),
        b["n_basis"].as_i64().unwrap(),
    );
    assert!((na - nb).abs() <= 2, "{na} vs {nb} basis functions");
    let (ca, cb) = (a["cost"].as_f64().unwrap(), b["cost"].as_f64().unwrap());
    assert!((ca - cb).abs() < 1e-3 * ca, "cost {ca} vs {cb}");
}

#[test]
fn bad_inputs_fail_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bad.csv");
    std::fs::write(&csv, "0,1\n1,2,0\n").unwrap();
    let out = boltzkit()
        .args(["fsll", "fit", "--data", csv.to_str().unwrap()])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("bad.csv") && err.lines().count() == 1, "{err}");

    // a truth of the wrong size
    let (data, _) = ising(dir.path(), "100");
    let small = dir.path().join("small.npy");
    boltzkit::data::write_npy_f64(&small, &[4], &[0.25; 4]).unwrap();
    boltzkit()
        .args([
            "fsll",
            "fit",
            "--data",
            &data,
            "--truth",
            small.to_str().unwrap(),
            "-q",
        ])
        .assert()
        .code(1);

    // impossible settings are usage errors
    boltzkit()
        .args(["fsll", "fit", "--data", &data, "--epsilon", "-1"])
        .assert()
        .code(2);
    // a model file that is not one
    boltzkit()
        .args(["fsll", "eval", "--model", &data, "--data", &data])
        .assert()
        .code(1);
}

#[test]
fn repro_fsll_one_dataset_writes_json() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("t1.json");
    boltzkit()
        .args([
            "repro",
            "fsll",
            "--only",
            "BN20-37S",
            "--trials",
            "2",
            "-o",
            out_file.to_str().unwrap(),
            "-q",
        ])
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(v["seed"], 20211);
    let r = &v["results"][0];
    assert_eq!(r["name"], "BN20-37S");
    assert_eq!(r["trials"].as_array().unwrap().len(), 2);
    assert_eq!(r["paper"]["n_basis"], 39);
    boltzkit()
        .args(["repro", "fsll", "--only", "nonsense"])
        .assert()
        .code(2);
}
