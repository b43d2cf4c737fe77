//! End-to-end tests of pop-CD and parallel tempering: `gen artificial-modes`,
//! `gen bars-stripes`, `rbm fit --algo popcd|pt`, `lab gradient`, `repro popcd`.

use assert_cmd::Command;
use boltzkit::io::MetricLog;
use boltzkit::rbm::file::load_rbm;
use std::path::Path;

fn boltzkit() -> Command {
    Command::cargo_bin("boltzkit").unwrap()
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).expect("one JSON object on stdout")
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// Bars & stripes 3×3 (duplicated form, 16 rows) written by `gen bars-stripes`.
fn bars_stripes(dir: &Path) -> String {
    let p = path(dir, "bas3.csv");
    let out = boltzkit()
        .args([
            "gen",
            "bars-stripes",
            "--size",
            "3",
            "--duplicated",
            "-o",
            &p,
            "--json",
        ])
        .assert()
        .success();
    let s = json(&out.get_output().stdout);
    assert_eq!(s["samples"], 16);
    assert_eq!(s["form"], "duplicated");
    assert!(s["seed"].is_null());
    p
}

#[test]
fn gen_artificial_modes_and_bars_stripes() {
    let dir = tempfile::tempdir().unwrap();
    let data = path(dir.path(), "am.npy");
    let truth = path(dir.path(), "am-p.npy");
    let run = |seed: &str| {
        let out = boltzkit()
            .args([
                "gen",
                "artificial-modes",
                "--copies",
                "50",
                "-o",
                &data,
                "--truth",
                &truth,
                "--seed",
                seed,
                "--json",
            ])
            .assert()
            .success();
        json(&out.get_output().stdout)
    };
    let s = run("3");
    assert_eq!(
        (s["samples"].as_u64(), s["vars"].as_u64()),
        (Some(200), Some(16))
    );
    let d = boltzkit::data::read_dataset(Path::new(&data), &Default::default()).unwrap();
    assert_eq!((d.n_samples(), d.n_vars()), (200, 16));
    // mode 2's copies (rows 100..150) are mostly 8 zeros then 8 ones
    let row = d.sample(120).to_vec();
    let ones_right = row[8..].iter().filter(|&&b| b == 1).count();
    assert!(ones_right >= 7, "{row:?}");
    assert_eq!(s["output_sha256"], run("3")["output_sha256"]);
    assert_ne!(s["output_sha256"], run("4")["output_sha256"]);
    assert!(std::fs::metadata(&truth).unwrap().len() > 8 * 65536);

    let b = bars_stripes(dir.path());
    let d = boltzkit::data::read_dataset(Path::new(&b), &Default::default()).unwrap();
    assert_eq!((d.n_samples(), d.n_vars()), (16, 9));
    boltzkit()
        .args(["gen", "bars-stripes", "--size", "9", "-o", &b])
        .assert()
        .code(2);
    boltzkit()
        .args(["gen", "artificial-modes", "--flip", "0.7", "-o", &data])
        .assert()
        .code(2);
}

#[test]
fn rbm_fit_popcd_and_pt_log_their_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_stripes(dir.path());
    let fit = |algo: &[&str], log: &str, threads: &str| {
        let model = path(dir.path(), &format!("{log}.safetensors"));
        let log = path(dir.path(), log);
        let mut args = vec![
            "rbm",
            "fit",
            "--data",
            &data,
            "--hidden",
            "6",
            "--epochs",
            "40",
            "--lr",
            "0.1",
            "--batch-size",
            "8",
            "--eval-every",
            "10",
            "--log",
            &log,
            "-o",
            &model,
            "--seed",
            "5",
            "--threads",
            threads,
            "--json",
            "-q",
        ];
        args.extend_from_slice(algo);
        let out = boltzkit().args(&args).assert().success();
        (
            json(&out.get_output().stdout),
            MetricLog::read(Path::new(&log)).unwrap(),
            load_rbm(Path::new(&model)).unwrap().rbm,
        )
    };
    let (s, log, rbm) = fit(&["--algo", "popcd", "--k", "2"], "pop.jsonl", "1");
    assert_eq!(s["algo"], "popcd");
    assert_eq!(log.len(), 5);
    let ess = log[4].metrics["popcd_ess"];
    assert!((1.0..=8.0).contains(&ess), "{ess}");
    assert!(!log[0].metrics.contains_key("popcd_ess")); // nothing before training
    assert!(s["monitor_popcd_ess_frac"].as_f64().unwrap() <= 1.0);
    // same seed, same model bits, whatever the thread count
    assert_eq!(
        rbm,
        fit(&["--algo", "popcd", "--k", "2"], "pop2.jsonl", "2").2
    );

    let (s, log, _) = fit(&["--algo", "popcd", "--loo"], "loo.jsonl", "1");
    assert!(s["avg_log_likelihood"].as_f64().unwrap().is_finite());
    assert!(log[4].metrics.contains_key("popcd_ess"));

    let (s, log, _) = fit(&["--algo", "pt", "--replicas", "4"], "pt.jsonl", "1");
    assert_eq!(s["algo"], "pt");
    for key in [
        "pt_swap_rate_0",
        "pt_swap_rate_1",
        "pt_swap_rate_2",
        "pt_swap_rate_mean",
    ] {
        let r = log[4].metrics[key];
        assert!((0.0..=1.0).contains(&r), "{key} {r}");
    }

    // flags that do not fit the algorithm, and invalid settings: usage errors
    let model = path(dir.path(), "x.safetensors");
    for bad in [
        vec!["--algo", "cd", "--loo"],
        vec!["--algo", "popcd", "--replicas", "3"],
        vec!["--algo", "pt", "--replicas", "1"],
        vec!["--algo", "popcd", "--loo", "--batch-size", "1"],
    ] {
        let mut args = vec![
            "rbm", "fit", "--data", &data, "--hidden", "3", "-o", &model, "-q",
        ];
        args.extend_from_slice(&bad);
        let out = boltzkit().args(&args).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn lab_gradient_reports_bias_and_variance() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_stripes(dir.path());
    let out_json = path(dir.path(), "lab.json");
    let model = path(dir.path(), "ref.safetensors");
    let out = boltzkit()
        .args([
            "lab",
            "gradient",
            "--data",
            &data,
            "--hidden",
            "6",
            "--train-iterations",
            "300",
            "--estimators",
            "cd-1,popcd-1,pt-4",
            "--estimates",
            "400",
            "--burn-in",
            "20",
            "--save-model",
            &model,
            "-o",
            &out_json,
            "--seed",
            "2",
            "--json",
            "-q",
        ])
        .assert()
        .success();
    let s = json(&out.get_output().stdout);
    assert_eq!(s["trained_updates"], 300);
    let res = s["results"].as_array().unwrap();
    assert_eq!(res.len(), 3);
    assert_eq!(res[1]["estimator"], "popcd-1");
    for r in res {
        let v = r["variance"].as_f64().unwrap();
        let ci = r["variance_ci"].as_array().unwrap();
        assert!(
            ci[0].as_f64().unwrap() <= v && v <= ci[1].as_f64().unwrap(),
            "{r}"
        );
        assert_eq!(r["n_params"], 9 * 6 + 9 + 6);
    }
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out_json).unwrap()).unwrap();
    assert_eq!(file["results"], s["results"]);
    // everything but the timings
    let numbers = |v: &serde_json::Value| {
        let mut v = v.clone();
        for r in v.as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("wall_s");
        }
        v
    };
    // the saved model studied again from its file gives the same numbers (same seed), and an
    // estimator's numbers do not depend on the others listed
    let from_file = |estimators: &str| {
        let out = boltzkit()
            .args([
                "lab",
                "gradient",
                "--data",
                &data,
                "--model",
                &model,
                "--estimators",
                estimators,
                "--estimates",
                "400",
                "--burn-in",
                "20",
                "--seed",
                "2",
                "--json",
                "-q",
            ])
            .assert()
            .success();
        numbers(&json(&out.get_output().stdout)["results"])
    };
    assert_eq!(from_file("cd-1,popcd-1,pt-4"), numbers(&s["results"]));
    assert_eq!(from_file("popcd-1")[0], numbers(&s["results"])[1]);
    let bad = boltzkit()
        .args([
            "lab",
            "gradient",
            "--data",
            &data,
            "--estimators",
            "cd-0",
            "-q",
        ])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&bad.get_output().stderr).to_string();
    assert!(err.contains("cd-0"), "{err}");
}

#[test]
fn repro_popcd_short_run_writes_curves_and_table() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = path(dir.path(), "out");
    let out = boltzkit()
        .args([
            "repro",
            "popcd",
            "--datasets",
            "bas",
            "--lrs",
            "0.1",
            "--algos",
            "cd-1,popcd-1",
            "--trials",
            "2",
            "--iterations",
            "200",
            "--table1-estimates",
            "200",
            "--table1-train-iterations",
            "200",
            "-o",
            &out_dir,
            "--json",
            "-q",
        ])
        .assert()
        .success();
    let s = json(&out.get_output().stdout);
    assert_eq!(s["seed"], 2017);
    assert_eq!(s["curves"].as_array().unwrap().len(), 2);
    let csv = std::fs::read_to_string(Path::new(&out_dir).join("curves-bas-lr0.1.csv")).unwrap();
    assert!(csv.starts_with("iteration,cd-1_mean,cd-1_sd,popcd-1_mean,popcd-1_sd"));
    assert_eq!(csv.lines().count(), 4);
    let t = &s["table1"][0];
    assert_eq!(t["dataset"], "bas");
    assert_eq!(t["results"].as_array().unwrap().len(), 4);
    assert!(Path::new(&out_dir).join("popcd.json").exists());
    let png = std::fs::read(Path::new(&out_dir).join("popcd-curves.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    boltzkit()
        .args(["repro", "popcd", "--datasets", "letters", "-q"])
        .assert()
        .code(2);
}
