//! End-to-end tests of the `boltzkit` binary.

mod common;

use boltzkit::data::{read_dataset, read_npy_f64, ReadOptions};
use common::*;
use predicates::prelude::*;
use std::path::Path;

/// Runs `gen ising` (5×4 grid, 200 samples) into `dir`, returning stdout.
fn gen_ising(dir: &Path, name: &str, extra: &[&str]) -> String {
    let out = boltzkit()
        .args([
            "gen",
            "ising",
            "--rows",
            "5",
            "--cols",
            "4",
            "--coupling",
            "0.5",
        ])
        .args(["--samples", "200", "-o"])
        .arg(dir.join(name))
        .args(extra)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn help_lists_commands_and_examples() {
    boltzkit()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("gen"))
        .stdout(predicate::str::contains("Examples:"));
    boltzkit()
        .args(["gen", "ising", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--coupling"))
        .stdout(predicate::str::contains("--seed"))
        .stdout(predicate::str::contains("Example:"));
    boltzkit()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("boltzkit "));
}

#[test]
fn usage_errors_exit_2() {
    boltzkit()
        .args(["gen", "ising", "-o", "x.npy", "--no-such-flag"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--no-such-flag"));
    boltzkit().args(["frobnicate"]).assert().code(2);
    boltzkit()
        .args(["gen", "ising", "-o", "x.npy", "--threads", "0"])
        .assert()
        .code(2);
    boltzkit()
        .args(["gen", "ising", "-o", "x.npy", "--samples", "0"])
        .assert()
        .code(2);
}

#[test]
fn gen_ising_writes_data_of_right_shape_and_a_normalized_truth() {
    let dir = tempfile::tempdir().unwrap();
    let truth = dir.path().join("p.npy");
    gen_ising(
        dir.path(),
        "d.npy",
        &["--seed", "3", "-q", "--truth", truth.to_str().unwrap()],
    );
    let d = read_dataset(&dir.path().join("d.npy"), &ReadOptions::default()).unwrap();
    assert_eq!((d.n_samples(), d.n_vars()), (200, 20));
    assert!(d.values().iter().all(|&v| v <= 1));
    let (shape, p) = read_npy_f64(&truth).unwrap();
    assert_eq!(shape, vec![1 << 20]);
    let total: f64 = p.iter().sum();
    assert!((total - 1.0).abs() < 1e-9, "truth sums to {total}");
    assert!(p.iter().all(|&x| x >= 0.0));
    // Ferromagnetic coupling: the two aligned states are the most likely ones.
    let max = p.iter().cloned().fold(0.0, f64::max);
    assert_eq!(p[0], max);
    assert!((p[(1 << 20) - 1] - max).abs() < 1e-12);
}

#[test]
fn csv_output_follows_the_extension() {
    let dir = tempfile::tempdir().unwrap();
    gen_ising(dir.path(), "d.csv", &["--seed", "1", "-q"]);
    let text = std::fs::read_to_string(dir.path().join("d.csv")).unwrap();
    assert_eq!(text.lines().count(), 200);
    assert_eq!(text.lines().next().unwrap().split(',').count(), 20);
}

#[test]
fn same_seed_same_bytes_whatever_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    gen_ising(
        dir.path(),
        "a.npy",
        &["--seed", "11", "-q", "--threads", "1"],
    );
    gen_ising(
        dir.path(),
        "b.npy",
        &["--seed", "11", "-q", "--threads", "2"],
    );
    gen_ising(dir.path(), "c.npy", &["--seed", "12", "-q"]);
    let read = |n: &str| std::fs::read(dir.path().join(n)).unwrap();
    assert_eq!(read("a.npy"), read("b.npy"));
    assert_ne!(read("a.npy"), read("c.npy"));

    for name in ["a.csv", "b.csv"] {
        boltzkit()
            .args([
                "gen",
                "bn",
                "--vars",
                "12",
                "--parents",
                "3",
                "--samples",
                "100",
            ])
            .args(["--seed", "5", "-q", "-o"])
            .arg(dir.path().join(name))
            .assert()
            .success();
    }
    assert_eq!(read("a.csv"), read("b.csv"));
}

#[test]
fn json_prints_one_object_with_the_seed() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = gen_ising(dir.path(), "d.npy", &["--seed", "42", "--json"]);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["seed"], 42);
    assert_eq!(v["command"], "gen ising");
    assert_eq!(v["samples"], 200);
    assert_eq!(v["vars"], 20);
    assert_eq!(v["output_sha256"].as_str().unwrap().len(), 64);
    assert!(v["wall_s"].as_f64().is_some());

    // Without --seed, a seed is picked, printed on stderr and recorded.
    let out = boltzkit()
        .args([
            "gen",
            "ising",
            "--rows",
            "2",
            "--cols",
            "2",
            "--samples",
            "5",
            "--json",
            "-o",
        ])
        .arg(dir.path().join("e.npy"))
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let seed = v["seed"].as_u64().expect("seed recorded");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(stderr.contains(&format!("seed: {seed}")), "{stderr}");
}

#[test]
fn human_summary_on_stdout_seed_on_stderr_and_quiet_silences_both() {
    let dir = tempfile::tempdir().unwrap();
    boltzkit()
        .args([
            "gen",
            "bn",
            "--vars",
            "8",
            "--samples",
            "10",
            "--seed",
            "9",
            "-o",
        ])
        .arg(dir.path().join("d.tsv"))
        .assert()
        .success()
        .stdout(predicate::str::contains("gen bn: done in"))
        .stdout(predicate::str::contains("edges"))
        .stderr("seed: 9\n");
    boltzkit()
        .args(["gen", "bn", "--vars", "8", "--samples", "10", "-q", "-o"])
        .arg(dir.path().join("d.tsv"))
        .assert()
        .success()
        .stdout("")
        .stderr("");
}

#[test]
fn bn_json_records_edges_and_truth_sums_to_one() {
    let dir = tempfile::tempdir().unwrap();
    let truth = dir.path().join("p.npy");
    let out = boltzkit()
        .args([
            "gen",
            "bn",
            "--vars",
            "10",
            "--parents",
            "2",
            "--samples",
            "50",
        ])
        .args(["--seed", "4", "--json", "-q", "-o"])
        .arg(dir.path().join("d.npy"))
        .arg("--truth")
        .arg(&truth)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let edges = v["edges"].as_u64().unwrap();
    assert!(edges <= 2 * 10, "at most 2 parents each: {edges}");
    let (shape, p) = read_npy_f64(&truth).unwrap();
    assert_eq!(shape, vec![1024]);
    assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
}

#[test]
fn truth_for_more_than_28_variables_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    boltzkit()
        .args(["gen", "bn", "--vars", "29", "--samples", "5", "-o"])
        .arg(dir.path().join("d.npy"))
        .arg("--truth")
        .arg(dir.path().join("p.npy"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("28"));
    assert!(!dir.path().join("d.npy").exists(), "nothing written");
}

#[test]
fn unknown_output_extension_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    boltzkit()
        .args(["gen", "ising", "--samples", "5", "-o"])
        .arg(dir.path().join("d.xlsx"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("d.xlsx"));
}

#[test]
fn unwritable_output_exits_1_with_one_line_naming_the_path() {
    let out = boltzkit()
        .args([
            "gen",
            "ising",
            "--rows",
            "2",
            "--cols",
            "2",
            "--samples",
            "5",
            "-q",
        ])
        .args(["-o", "/nonexistent-boltzkit-dir/d.npy"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(
        stderr.contains("/nonexistent-boltzkit-dir/d.npy"),
        "{stderr}"
    );
}
