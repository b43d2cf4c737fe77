//! End-to-end tests of `boltzkit rbm`.

mod common;

use boltzkit::rbm::file::load_rbm;
use common::*;
use std::path::Path;

fn fit(dir: &Path) -> (String, String, serde_json::Value) {
    let data = bars_and_stripes(dir);
    let model = path(dir, "m.safetensors");
    let out = boltzkit()
        .args([
            "rbm",
            "fit",
            "--data",
            &data,
            "--algo",
            "sdcp",
            "--hidden",
            "4",
            "--epochs",
            "200",
            "--lr",
            "0.1",
            "--batch-size",
            "0",
            "--k",
            "1",
            "--inner",
            "3",
            "--eval-every",
            "50",
            "-o",
            &model,
            "--seed",
            "7",
            "--json",
            "-q",
        ])
        .assert()
        .success();
    (data, model, json(&out.get_output().stdout))
}

#[test]
fn fit_writes_a_loadable_model_with_a_finite_log_likelihood() {
    let dir = tempfile::tempdir().unwrap();
    let (data, model, s) = fit(dir.path());
    assert_eq!(s["stop"], "all epochs done", "{s}");
    assert_eq!(s["epochs"], 200);
    let ll = s["avg_log_likelihood"]
        .as_f64()
        .expect("finite log-likelihood");
    // Better than the uniform distribution over 2^9 states.
    assert!(ll < 0.0 && ll > -9.0 * std::f64::consts::LN_2, "ll = {ll}");
    let file = load_rbm(Path::new(&model)).unwrap();
    assert_eq!(
        (file.rbm.n_visible(), file.rbm.n_hidden()),
        (9, 4),
        "{:?}",
        file.metadata
    );
    assert_eq!(file.metadata["algorithm"], "sdcp");
    assert_eq!(file.metadata["seed"], "7");
    assert_eq!(
        file.metadata["data_sha256"],
        boltzkit::io::sha256_file(Path::new(&data)).unwrap()
    );
}

#[test]
fn eval_exact_matches_fit_and_sample_writes_binary_data() {
    let dir = tempfile::tempdir().unwrap();
    let (data, model, f) = fit(dir.path());
    let out = boltzkit()
        .args([
            "rbm", "eval", "--model", &model, "--data", &data, "--method", "exact", "--json", "-q",
        ])
        .assert()
        .success();
    let e = json(&out.get_output().stdout);
    assert_eq!(e["method"], "exact");
    let (a, b) = (
        e["avg_log_likelihood"].as_f64().unwrap(),
        f["avg_log_likelihood"].as_f64().unwrap(),
    );
    assert!((a - b).abs() < 1e-6, "eval {a} vs fit {b}");
    assert!(e["log_z"].as_f64().unwrap().is_finite());

    let samples = path(dir.path(), "s.csv");
    boltzkit()
        .args([
            "rbm",
            "sample",
            "--model",
            &model,
            "-n",
            "20",
            "--gibbs-steps",
            "50",
            "-o",
            &samples,
            "--seed",
            "3",
            "-q",
        ])
        .assert()
        .success();
    let text = std::fs::read_to_string(&samples).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    assert!(rows.len() >= 20, "{text}");
    assert!(rows
        .iter()
        .rev()
        .take(20)
        .all(|r| r.split(',').count() == 9 && r.split(',').all(|x| x == "0" || x == "1")));
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let model = path(dir.path(), "m.safetensors");
    // No --hidden and no --model.
    boltzkit()
        .args([
            "rbm", "fit", "--data", &data, "-o", &model, "--seed", "1", "-q",
        ])
        .assert()
        .code(2);
    // --inner with an algorithm that has no inner steps.
    boltzkit()
        .args([
            "rbm", "fit", "--data", &data, "--hidden", "2", "--algo", "cd", "--inner", "2", "-o",
            &model, "-q",
        ])
        .assert()
        .code(2);
    // Zero epochs (an invalid training setting).
    boltzkit()
        .args([
            "rbm", "fit", "--data", &data, "--hidden", "2", "--epochs", "0", "-o", &model, "-q",
        ])
        .assert()
        .code(2);
    assert!(!Path::new(&model).exists());
}

/// `--method bracket --json`: the interval [RAISE, forward AIS] as two estimates near the
/// exact figure on this 9 × 4 model, the forward end equal to `--method ais` at the same seed,
/// the width and a diagnosis line; `--convergence` gives the bracket at each doubling of the
/// steps; `raise` is RAISE alone and the data-start estimator goes by its own name.
#[test]
fn eval_bracket_json() {
    let dir = tempfile::tempdir().unwrap();
    let (data, model, _) = fit(dir.path());
    let eval = |args: &[&str]| {
        let out = boltzkit()
            .args(["rbm", "eval", "--model", &model, "--data", &data])
            .args(args)
            .args(["--seed", "9", "--json", "-q"])
            .assert()
            .success();
        json(&out.get_output().stdout)
    };
    let exact = eval(&["--method", "exact"]);
    let truth = exact["avg_log_likelihood"].as_f64().unwrap();
    let steps = ["--chains", "64", "--steps", "2000"];
    let b = eval(&[&["--method", "bracket"][..], &steps].concat());
    assert_eq!(b["method"], "bracket", "{b}");
    let (r, a) = (&b["raise"], &b["ais"]);
    assert_eq!(
        (r["method"].as_str(), a["method"].as_str()),
        (Some("raise"), Some("ais"))
    );
    for e in [r, a] {
        let (v, se) = (e["value"].as_f64().unwrap(), e["stderr"].as_f64().unwrap());
        assert!((v - truth).abs() < 0.1 + 3.0 * se, "{e} vs exact {truth}");
        assert!(e["lower"].as_f64().unwrap() <= v && v <= e["upper"].as_f64().unwrap());
    }
    let width = a["value"].as_f64().unwrap() - r["value"].as_f64().unwrap();
    assert!((b["bracket_width"].as_f64().unwrap() - width).abs() < 1e-12);
    assert_eq!(b["raise_vectors"], b["samples"]);
    assert!(!b["diagnosis"].as_str().unwrap().is_empty());
    let ais = eval(&[&["--method", "ais"][..], &steps].concat());
    assert_eq!(ais["avg_log_likelihood"], a["value"]);
    assert_eq!(ais["log_z"], b["log_z"]);

    let conv = eval(&[
        "--method",
        "bracket",
        "--steps",
        "400",
        "--convergence",
        "100",
    ]);
    let levels: Vec<u64> = conv["convergence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["steps"].as_u64().unwrap())
        .collect();
    assert_eq!(levels, [100, 200, 400]);
    assert_eq!(conv["raise"], conv["convergence"][2]["raise"]);

    let raise = eval(&[
        "--method",
        "raise",
        "--steps",
        "300",
        "--raise-vectors",
        "5",
    ]);
    assert_eq!(
        (raise["method"].as_str(), raise["raise_vectors"].as_u64()),
        (Some("raise"), Some(5))
    );
    assert!(raise["avg_log_likelihood_se"].as_f64().unwrap() > 0.0);
    assert!(raise.get("log_z").is_none());
    let from = eval(&["--method", "reverse-ais-from-data", "--steps", "300"]);
    assert_eq!(from["method"], "reverse-ais-from-data");
    assert!(from["log_z"].as_f64().is_some() && from.get("raise").is_none());

    boltzkit()
        .args(["rbm", "eval", "--model", &model, "--data", &data])
        .args(["--method", "ais", "--convergence", "10", "-q"])
        .assert()
        .code(2);
}

/// `--monitors` logs the reconstruction error and the pseudo-log-likelihood, `--checkpoint`
/// writes a loadable model, and `rbm eval --monitors` reports the same two figures.
#[test]
fn monitors_and_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let (model, log, ckpt) = (
        path(dir.path(), "m.safetensors"),
        path(dir.path(), "log.jsonl"),
        path(dir.path(), "ckpt.safetensors"),
    );
    boltzkit()
        .args([
            "rbm", "fit", "--data", &data, "--hidden", "3", "--epochs", "20",
        ])
        .args([
            "--batch-size",
            "0",
            "--lr",
            "0.1",
            "--eval-every",
            "10",
            "--monitors",
        ])
        .args([
            "--checkpoint",
            &ckpt,
            "--log",
            &log,
            "-o",
            &model,
            "--seed",
            "2",
            "-q",
        ])
        .assert()
        .success();
    let records: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "{records:?}");
    for r in &records {
        let recon = r["train_recon_error"].as_f64().unwrap();
        let pl = r["train_pseudo_ll"].as_f64().unwrap();
        assert!(recon >= 0.0 && pl < 0.0, "{r}");
    }
    let saved = load_rbm(Path::new(&ckpt)).unwrap();
    assert_eq!(saved.rbm, load_rbm(Path::new(&model)).unwrap().rbm);

    let out = boltzkit()
        .args([
            "rbm",
            "eval",
            "--model",
            &model,
            "--data",
            &data,
            "--monitors",
        ])
        .args(["--json", "-q"])
        .assert()
        .success();
    let e = json(&out.get_output().stdout);
    let last = records.last().unwrap();
    let close = |a: &serde_json::Value, b: &serde_json::Value| {
        (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-9
    };
    assert!(
        close(&e["reconstruction_error"], &last["train_recon_error"]),
        "{e}"
    );
    assert!(
        close(&e["pseudo_log_likelihood"], &last["train_pseudo_ll"]),
        "{e}"
    );
}

/// `--valid` records the train − validation gap for any trainer; with `--early-stop` the run
/// ends when it grows (here: 12 patterns learnt by 16 units, 4 others held out), the stop is
/// reported and the model of that evaluation is written; `--early-stop` without `--valid` is a
/// usage error.
#[test]
fn valid_records_the_gap_and_early_stop_ends_training() {
    let dir = tempfile::tempdir().unwrap();
    let all = std::fs::read_to_string(bars_and_stripes(dir.path())).unwrap();
    let lines: Vec<&str> = all.lines().collect();
    let (train, valid) = (path(dir.path(), "train.csv"), path(dir.path(), "valid.csv"));
    std::fs::write(&train, lines[..12].join("\n") + "\n").unwrap();
    std::fs::write(&valid, lines[12..].join("\n") + "\n").unwrap();
    let (model, log) = (
        path(dir.path(), "m.safetensors"),
        path(dir.path(), "log.jsonl"),
    );
    let run = |epochs: &str, extra: &[&str]| {
        let mut cmd = boltzkit();
        cmd.args(["rbm", "fit", "--data", &train, "--valid", &valid])
            .args([
                "--hidden", "16", "--k", "5", "--lr", "0.5", "--epochs", epochs,
            ])
            .args(["--eval-every", "10", "--eval", "none", "--log", &log])
            .args(["-o", &model, "--seed", "3", "--json", "-q"])
            .args(extra);
        success_json(&mut cmd)
    };
    let v = run("3000", &["--early-stop", "--gap-tol", "1"]);
    let stop = v["stop"].as_str().unwrap();
    assert!(stop.starts_with("stopped early after epoch"), "{stop}");
    let epochs = v["epochs"].as_u64().unwrap();
    assert!(epochs < 3000 && epochs % 10 == 0, "{v}");
    let records: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len() as u64, epochs / 10 + 1);
    assert!(records.iter().all(|r| r["gap"].as_f64().is_some()));
    assert_eq!(load_rbm(Path::new(&model)).unwrap().rbm.n_hidden(), 16);
    // without --early-stop the gap is only recorded
    let v = run("50", &[]);
    assert_eq!(v["stop"], "all epochs done");
    boltzkit()
        .args([
            "rbm",
            "fit",
            "--data",
            &train,
            "--hidden",
            "2",
            "--early-stop",
        ])
        .args(["-o", &model, "-q"])
        .assert()
        .code(2);
}
