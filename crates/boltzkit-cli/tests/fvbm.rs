//! End-to-end tests of `boltzkit gen fvbm` and `boltzkit fvbm`.

mod common;

use boltzkit::fvbm::Fvbm;
use common::*;
use std::path::Path;

/// Generates FVBM data (d = 4, σ² = 0.3) and its parameters in `dir`.
fn generate(dir: &Path) -> (String, String) {
    let data = path(dir, "x.npy");
    let truth = path(dir, "t.safetensors");
    let out = boltzkit()
        .args([
            "gen",
            "fvbm",
            "--vars",
            "4",
            "--samples",
            "6000",
            "--variance",
            "0.3",
            "-o",
            &data,
            "--truth",
            &truth,
            "--seed",
            "5",
            "--json",
            "-q",
        ])
        .assert()
        .success();
    let s = json(&out.get_output().stdout);
    assert_eq!(s["method"], "exact");
    assert_eq!(s["vars"], 4);
    (data, truth)
}

fn fit(data: &str, algo: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "fvbm", "fit", "--data", data, "--algo", algo, "--json", "-q",
    ];
    args.extend_from_slice(extra);
    let out = boltzkit().args(&args).assert().success();
    json(&out.get_output().stdout)
}

#[test]
fn fit_eval_tests_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (data, truth) = generate(dir.path());
    let model = path(dir.path(), "m.safetensors");
    let f = fit(&data, "newton", &["--truth", &truth, "-o", &model]);
    assert_eq!(f["stop"], "converged");
    assert_eq!(f["mple_exists"], true, "{f}");
    assert_eq!(f["monotone"], true);
    let kl = f["kl_truth"].as_f64().unwrap();
    assert!(kl > 0.0 && kl < 0.01, "KL(p*||p) = {kl}");
    let mse = f["mse_theta"].as_f64().unwrap();
    assert!(mse < 0.01, "MSE {mse}");

    // BSLM reaches the same maximizer, monotonically.
    let b = fit(&data, "bslm", &["--tau", "1e-9"]);
    assert_eq!(b["monotone"], true);
    let (pl_b, pl_n) = (b["log_pl"].as_f64().unwrap(), f["log_pl"].as_f64().unwrap());
    assert!((pl_b - pl_n).abs() < 1e-5, "bslm {pl_b} vs newton {pl_n}");
    assert!(b["sweeps"].as_u64().unwrap() > f["sweeps"].as_u64().unwrap());

    let out = boltzkit()
        .args([
            "fvbm", "eval", "--model", &model, "--data", &data, "--truth", &truth, "--json",
        ])
        .assert()
        .success();
    let e = json(&out.get_output().stdout);
    assert!((e["log_pl"].as_f64().unwrap() - pl_n).abs() < 1e-9 * pl_n.abs());
    assert!((e["kl_truth"].as_f64().unwrap() - kl).abs() < 1e-12);
    let ll = e["avg_log_likelihood"].as_f64().unwrap();
    assert!(ll < 0.0 && ll > -4.0 * 2f64.ln());

    let out = boltzkit()
        .args([
            "fvbm", "tests", "--model", &model, "--data", &data, "--json",
        ])
        .assert()
        .success();
    let t = json(&out.get_output().stdout);
    let rows = t["parameters"].as_array().unwrap();
    assert_eq!(rows.len(), 10);
    let theta = Fvbm::load(Path::new(&model)).unwrap().theta();
    for (row, th) in rows.iter().zip(&theta) {
        let est = row["estimate"].as_f64().unwrap();
        let se = row["std_error"].as_f64().unwrap();
        assert!((est - th).abs() < 1e-12);
        assert!(se > 0.0 && se < 0.1, "{row}");
        assert!((row["z"].as_f64().unwrap() - est / se).abs() < 1e-9);
        let p = row["p_value"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p));
    }
    assert_eq!(rows[4]["name"], "m_1_2");

    // The human form prints the table on stdout.
    let out = boltzkit()
        .args(["fvbm", "tests", "--model", &model, "--data", &data, "-q"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.starts_with("parameter"), "{text}");
    assert_eq!(text.lines().count(), 11);

    // Sampling writes what was asked.
    let s = path(dir.path(), "s.csv");
    boltzkit()
        .args([
            "fvbm", "sample", "--model", &model, "-n", "25", "-o", &s, "--seed", "2", "-q",
        ])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&s).unwrap().lines().count(), 25);
}

/// When the separation LP finds a recession direction, `fvbm fit` says so in one sentence
/// pointing to `--l2`; with the penalty the fit is finite and nothing is said.
#[test]
fn fit_says_when_the_mple_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = generate(dir.path());
    let x = boltzkit::data::read_dataset(Path::new(&data), &Default::default()).unwrap();
    let mut v = x.into_values();
    for mut row in v.outer_iter_mut() {
        row[3] = row[1];
    }
    let copied = path(dir.path(), "copied.csv");
    boltzkit::data::write_dataset(
        Path::new(&copied),
        &boltzkit::data::Dataset::binary(v).unwrap(),
    )
    .unwrap();
    let out = boltzkit()
        .args([
            "fvbm", "fit", "--data", &copied, "--algo", "newton", "--json",
        ])
        .assert()
        .success();
    let f = json(&out.get_output().stdout);
    assert_eq!(f["mple_exists"], false, "{f}");
    assert!(f["separated_pairs"].as_u64().unwrap() > 0);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let warning: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warning.len(), 1, "{err}");
    assert!(
        warning[0].contains("does not exist") && warning[0].contains("--l2 λ"),
        "{err}"
    );
    let p = fit(&copied, "newton", &["--l2", "1e-3"]);
    assert!(p["mple_exists"].is_null() && p["warnings"].as_array().unwrap().is_empty());
    assert_eq!(p["stop"], "converged");
}

#[test]
fn mle_and_pcd_fit_and_pcd_is_seeded() {
    let dir = tempfile::tempdir().unwrap();
    let (data, truth) = generate(dir.path());
    let m = fit(&data, "mle", &["--truth", &truth, "--convention", "binary"]);
    assert!(m["kl_data"].as_f64().unwrap() < 0.01);
    assert!(m["kl_truth"].as_f64().unwrap() < 0.01);
    let args = [
        "--updates",
        "300",
        "--chains",
        "20",
        "--seed",
        "4",
        "--truth",
        &truth,
    ];
    let a = fit(&data, "pcd", &args);
    let b = fit(&data, "pcd", &args);
    assert_eq!(a["seed"], 4);
    assert_eq!(a["updates"], 300);
    assert_eq!(a["log_pl"], b["log_pl"]);
    assert!(a["kl_truth"].as_f64().unwrap() < 0.1, "{a}");
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = generate(dir.path());
    boltzkit()
        .args(["fvbm", "fit", "--data", &data, "--algo", "nope"])
        .assert()
        .code(2);
    boltzkit()
        .args(["fvbm", "fit", "--data", &data, "--tau=-1"])
        .assert()
        .code(2);
    boltzkit()
        .args([
            "fvbm", "fit", "--data", &data, "--algo", "pcd", "--chains", "0",
        ])
        .assert()
        .code(2);
    boltzkit()
        .args([
            "gen", "fvbm", "--vars", "30", "-o", "x.npy", "--truth", "p.npy",
        ])
        .assert()
        .code(2);
}

#[test]
fn bad_data_file_exits_1_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = path(dir.path(), "bad.csv");
    std::fs::write(&bad, "0,1,2\n1,0,1\n").unwrap();
    for file in [bad.as_str(), "/nonexistent/x.npy"] {
        let out = boltzkit()
            .args(["fvbm", "fit", "--data", file])
            .assert()
            .code(1);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: "), "{err}");
    }
}

#[test]
fn repro_bslm_writes_monotone_traces() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = path(dir.path(), "out");
    let out = boltzkit()
        .args([
            "repro",
            "bslm",
            "--reps",
            "2",
            "--dims",
            "4,3",
            "--samples",
            "2000",
            "-o",
            &out_dir,
            "--json",
            "-q",
        ])
        .assert()
        .success();
    let s = json(&out.get_output().stdout);
    assert_eq!(s["all_monotone"], true);
    assert_eq!(s["seed"], 2016);
    let rows = s["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["d"], 3);
    assert_eq!(rows[0]["runs"], 2);
    assert!(rows[1]["paper_mse"].is_null());
    for d in [3, 4] {
        for rep in [0, 1] {
            let csv =
                std::fs::read_to_string(dir.path().join(format!("out/bslm-d{d}-rep{rep}.csv")))
                    .unwrap();
            let vals: Vec<f64> = csv
                .lines()
                .skip(1)
                .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
                .collect();
            assert!(vals.len() > 2);
            assert!(vals.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
        }
    }
    assert!(dir.path().join("out/bslm.json").exists());
    boltzkit()
        .args(["repro", "bslm", "--dims", "1"])
        .assert()
        .code(2);
}

#[test]
fn repro_fsll_bm_rows() {
    let out = boltzkit()
        .args([
            "repro",
            "fsll",
            "--only",
            "Ising5x4L",
            "--trials",
            "1",
            "--bm",
            "di,pcd",
            "--json",
            "-q",
        ])
        .assert()
        .success();
    let s = json(&out.get_output().stdout);
    let bm = s["bm_results"].as_array().unwrap();
    assert_eq!(bm.len(), 2);
    assert_eq!(bm[0]["model"], "BM-DI");
    assert_eq!(bm[1]["model"], "BM-PCD");
    assert_eq!(bm[0]["paper"]["kl_truth"], 0.002);
    let di = bm[0]["median"]["kl_truth"].as_f64().unwrap();
    let pcd = bm[1]["median"]["kl_truth"].as_f64().unwrap();
    assert!(di <= 0.01, "BM-DI KL(p*||p) = {di}");
    assert!(pcd > di && pcd < 0.1, "BM-PCD KL(p*||p) = {pcd}");
    assert!(s["bm_markdown"]
        .as_str()
        .unwrap()
        .contains("| Ising5x4L | BM-PCD |"));
}

/// Writes `rows` pseudo-random 0/1 rows of `d` columns as a CSV file `wide{d}.csv` in `dir`
/// (one file per width: a later call must not overwrite an earlier one's data).
fn wide_csv(dir: &Path, d: usize, rows: usize) -> String {
    let file = path(dir, &format!("wide{d}.csv"));
    let mut state = 0x9e37_79b9_u64;
    let text: String = (0..rows)
        .map(|_| {
            let row: Vec<&str> = (0..d)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    if state >> 63 == 1 {
                        "1"
                    } else {
                        "0"
                    }
                })
                .collect();
            row.join(",") + "\n"
        })
        .collect();
    std::fs::write(&file, text).unwrap();
    file
}

/// `fvbm fit` on `data` with `args` and `memory` bytes available: exit 2, one line naming
/// the memory and time estimates, nothing written to `-o`.
fn refused(data: &str, args: &[&str], memory: &str, model: &str) -> String {
    let mut all = vec!["fvbm", "fit", "--data", data, "-o", model];
    all.extend_from_slice(args);
    let out = boltzkit()
        .env("BOLTZKIT_MEMORY_AVAILABLE", memory)
        .args(&all)
        .assert()
        .code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("of memory and about"), "{err}");
    assert!(err.contains("--algo plm"), "{err}");
    assert!(!Path::new(model).exists(), "{err}");
    err
}

#[test]
fn newton_refuses_up_front_what_would_not_fit_or_end() {
    let dir = tempfile::tempdir().unwrap();
    let model = path(dir.path(), "m.safetensors");
    // d = 200: Newton's 20,100 × 20,100 Hessian (6.5 GB) takes hours to factor 10 times
    let wide = wide_csv(dir.path(), 200, 20);
    let err = refused(&wide, &["--algo", "newton"], "1000000000000", &model);
    assert!(err.contains("Newton") && err.contains("hours"), "{err}");
    // d = 60 with 1 MB available: its Hessian (54 MB) does not fit
    let narrow = wide_csv(dir.path(), 60, 20);
    let err = refused(&narrow, &["--algo", "newton"], "1000000", &model);
    assert!(err.contains("Newton") && err.contains("MiB"), "{err}");
    // BSLM's dense existence check on 200 variables (6 GiB) with 1e9 bytes available (the
    // limit written as a number: it was once read as no limit, and BSLM started fitting)
    let err = refused(&wide, &["--algo", "bslm"], "1e9", &model);
    assert!(err.contains("existence check"), "{err}");
}
