//! End-to-end tests of `rbm fit --algo frank-wolfe`, `rbm features` and `repro frank-wolfe`.

mod common;

use boltzkit::rbm::file::load_rbm;
use common::*;
use std::path::{Path, PathBuf};

fn fw_fit(dir: &Path, data: &str, units: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "rbm",
        "fit",
        "--algo",
        "frank-wolfe",
        "--data",
        data,
        "--max-units",
        units,
        "--samples",
        "200",
        "--lr",
        "0.05",
        "--k",
        "3",
        "--eval-every",
        "2",
        "--seed",
        "4",
        "--json",
        "-q",
    ];
    args.extend_from_slice(extra);
    success_json(boltzkit().current_dir(dir).args(&args))
}

#[test]
fn fit_grows_a_standard_rbm_logs_every_iteration_and_continues_from_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let model = path(dir.path(), "fw.safetensors");
    let log = path(dir.path(), "fw.jsonl");
    let v = fw_fit(
        dir.path(),
        &data,
        "6",
        &["-o", &model, "--log", &log, "--valid", &data],
    );
    assert_eq!(v["units"], 6);
    assert_eq!(v["standard_rbm"], true);
    assert_eq!(v["iterations"], 6);
    assert!(v["avg_log_likelihood"].as_f64().unwrap() > -9.0 * 2f64.ln());
    assert!(v["selected_units"].as_u64().is_some());
    // the summary's clock covers the whole command, learning included
    assert!(v["wall_s"].as_f64().unwrap() >= v["learn_s"].as_f64().unwrap());
    let f = load_rbm(Path::new(&model)).unwrap();
    assert_eq!(f.rbm.n_hidden(), 6);
    assert_eq!(f.metadata["algorithm"], "frank-wolfe");
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(lines.lines().count(), 6);
    assert!(lines.contains("subproblem_s") && lines.contains("gap"));

    // warm start: continues at t = 7 up to 9 units
    let more = path(dir.path(), "fw9.safetensors");
    let w = fw_fit(
        dir.path(),
        &data,
        "9",
        &["-o", &more, "--model", &model, "--starts", "3"],
    );
    assert_eq!(
        (w["start_units"].as_u64(), w["units"].as_u64()),
        (Some(6), Some(9))
    );
    assert_eq!(w["iterations"], 3);
    let settings = &load_rbm(Path::new(&more)).unwrap().metadata["settings"];
    assert!(settings.contains("\"subproblem_starts\":3"), "{settings}");

    // the FW model starts CD (FW-initialized CD)
    let cd = path(dir.path(), "cd.safetensors");
    let v = success_json(
        boltzkit()
            .args([
                "rbm",
                "fit",
                "--data",
                &data,
                "--model",
                &more,
                "--epochs",
                "5",
                "--batch-size",
                "0",
            ])
            .args(["--lr", "0.1", "-o", &cd, "--seed", "1", "--json", "-q"]),
    );
    assert_eq!(v["hidden"], 9);
}

#[test]
fn fractional_and_away_options_and_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let model = path(dir.path(), "frac.safetensors");
    let v = fw_fit(
        dir.path(),
        &data,
        "6",
        &["-o", &model, "--free-alpha", "0.5", "--away"],
    );
    assert_eq!(v["standard_rbm"], false);
    assert!(v["mh_acceptance"].as_f64().unwrap() > 0.0);
    assert!(v["removed_units"].as_u64().is_some());
    // a fractional model is not an RBM file: features refuse it in one line
    let out = boltzkit()
        .args([
            "rbm",
            "features",
            "--model",
            &model,
            "--data",
            &data,
            "-o",
            &path(dir.path(), "f.npy"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fractional"));
    // --hidden is not how FW is sized; --early-stop needs --valid
    for extra in [&["--hidden", "4"][..], &["--early-stop"][..]] {
        let out = boltzkit()
            .args([
                "rbm",
                "fit",
                "--algo",
                "frank-wolfe",
                "--data",
                &data,
                "-o",
                &model,
            ])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
    }
}

#[test]
fn features_are_written_as_npy() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let model = path(dir.path(), "fw.safetensors");
    fw_fit(dir.path(), &data, "6", &["-o", &model]);
    let out_path = path(dir.path(), "features.npy");
    let v = success_json(boltzkit().args([
        "rbm", "features", "--model", &model, "--data", &data, "-o", &out_path, "--json",
    ]));
    assert_eq!(
        (v["samples"].as_u64(), v["hidden"].as_u64()),
        (Some(16), Some(6))
    );
    let (shape, values) = boltzkit::data::read_npy_f64(Path::new(&out_path)).unwrap();
    assert_eq!(shape, vec![16, 6]);
    assert!(values.iter().all(|&p| p > 0.0 && p < 1.0));
}

/// The shared data directory (`shared/data` beside the repository), if present.
fn shared_data() -> Option<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        here.join("../../../shared/data"),
        here.join("../../../../shared/data"),
    ]
    .into_iter()
    .find(|p| p.join("caltech101_silhouettes").is_dir())
}

#[test]
fn repro_runs_end_to_end_on_caltech_when_shortened() {
    let Some(data_dir) = shared_data() else {
        eprintln!("shared/data not found beside the repository: repro test not run");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    // the shortened FW and AIS settings of every run here, then `extra`, output in `out`
    let fw_repro = |out: &Path, extra: &[&str]| {
        success_json(
            boltzkit()
                .args([
                    "repro",
                    "frank-wolfe",
                    "--datasets",
                    "caltech",
                    "--data-dir",
                ])
                .arg(&data_dir)
                .args(["--eval-every", "2", "--samples", "50", "--lbfgs-iters", "5"])
                .args(["--starts", "2", "--bias-steps", "2", "--ais-chains", "8"])
                .args(["--ais-steps", "20", "--k", "1", "--json", "-q", "-o"])
                .arg(out)
                .args(extra),
        )
    };
    let v = fw_repro(
        &out_dir,
        &[
            "--max-units",
            "4",
            "--sizes",
            "2,4",
            "--epochs",
            "2",
            "--restarts",
            "2",
            "--lrs",
            "0.05,0.01",
            "--cd-gap-tol",
            "0",
            "--cd-eval-every",
            "1",
            "--raise-vectors",
            "25",
        ],
    );
    assert_eq!(v["caltech"]["fw_units"], 4);
    assert_eq!(v["caltech"]["ais"]["method"], "bracket");
    assert_eq!(v["caltech"]["fw"]["starts"], 2);
    assert_eq!(v["caltech"]["lrs"], serde_json::json!([0.05, 0.01]));
    let csv = std::fs::read_to_string(out_dir.join("fig1-fig2-caltech.csv")).unwrap();
    for (method, rows) in [
        ("fw,", 2),
        ("cd_rand,", 2),
        ("cd_fw,", 2),
        ("cd_rand_run,", 4),
        ("cd_rand_lr,", 8),
        ("cd_fw_lr,", 4),
    ] {
        assert_eq!(
            csv.lines().filter(|l| l.starts_with(method)).count(),
            rows,
            "{method}\n{csv}"
        );
    }
    // every scored model has its bracket [RAISE, forward AIS]: forward AIS is test_ll, the
    // ends are ordered unless the verdict says inverted (bracket_of checks it)
    let header = csv.lines().next().unwrap();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (_, _, ais, ais_se, _) = bracket_of(header, line);
        assert_eq!(
            (ais, ais_se),
            (f[4].parse().unwrap(), f[5].parse().unwrap())
        );
        // steps and RAISE vectors: the two columns before the verdict
        assert_eq!(&f[f.len() - 3..f.len() - 1], &["20", "25"], "{line}");
    }
    let comparisons = v["caltech"]["comparisons"].as_array().unwrap();
    assert_eq!(comparisons.len(), 2);
    for c in comparisons {
        let verdict = c["verdict"].as_str().unwrap();
        assert!(
            ["fw-init above", "random above", "undecided"].contains(&verdict),
            "{c}"
        );
    }
    let md = std::fs::read_to_string(out_dir.join("fig1-caltech.md")).unwrap();
    assert!(
        md.contains("| 4 | cd_fw | ") && md.contains("- 4 units: **"),
        "{md}"
    );
    let fw_csv = std::fs::read_to_string(out_dir.join("fw-caltech.csv")).unwrap();
    for line in fw_csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (ll, raise): (f64, f64) = (f[4].parse().unwrap(), f[8].parse().unwrap());
        assert!(ll.is_finite() && raise.is_finite(), "{line}");
    }
    // each CD run kept is the trial of --lrs best on validation
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    for kept in rows
        .iter()
        .filter(|f| f[0] == "cd_rand_run" || f[0] == "cd_fw")
    {
        let trials = if kept[0] == "cd_fw" {
            "cd_fw_lr"
        } else {
            "cd_rand_lr"
        };
        let best = rows
            .iter()
            .filter(|f| f[0] == trials && f[1] == kept[1] && f[2] == kept[2])
            .map(|f| f[6].parse::<f64>().unwrap())
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(kept[6].parse::<f64>().unwrap(), best, "{kept:?}");
    }
    // the epochs column: 0 for FW itself, 1 or 2 for CD (an early stop may end it after 1);
    // the lr column: 0 for FW itself, the rate of --lrs kept on validation for CD
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let lr: f32 = f[3].parse().unwrap();
        let epochs: usize = f[8].parse().unwrap();
        if f[0] == "fw" {
            assert_eq!((epochs, lr), (0, 0.0), "{line}");
        } else {
            assert!((1..=2).contains(&epochs), "{line}");
            assert!(lr == 0.05 || lr == 0.01, "{line}");
        }
    }
    for png in ["fig1-caltech.png", "fig2-caltech.png"] {
        let bytes = std::fs::read(out_dir.join(png)).unwrap();
        assert_eq!(&bytes[1..4], b"PNG", "{png}");
    }
    // --replot redraws from the JSON alone
    std::fs::remove_file(out_dir.join("fig1-caltech.png")).unwrap();
    boltzkit()
        .args([
            "repro",
            "frank-wolfe",
            "--datasets",
            "caltech",
            "--replot",
            "-q",
            "-o",
        ])
        .arg(&out_dir)
        .assert()
        .success();
    assert!(out_dir.join("fig1-caltech.png").is_file());
    let fw_csv = std::fs::read_to_string(out_dir.join("fw-caltech.csv")).unwrap();
    assert_eq!(
        fw_csv.lines().count(),
        3,
        "header + evaluations at 2 and 4 units"
    );
    // test errors are fractions (on the kept runs; the others have none)
    for line in csv.lines().skip(1).filter(|l| {
        ["fw,", "cd_rand,", "cd_fw,"]
            .iter()
            .any(|m| l.starts_with(m))
    }) {
        let e: f64 = line.split(',').nth(9).unwrap().parse().unwrap();
        assert!((0.0..=1.0).contains(&e), "{line}");
    }
    // --eval ais: the same forward-AIS figures (same seeds), no RAISE
    let ais_dir = dir.path().join("ais");
    let v = fw_repro(
        &ais_dir,
        &[
            "--max-units",
            "2",
            "--sizes",
            "2",
            "--epochs",
            "1",
            "--restarts",
            "1",
            "--no-classify",
            "--eval",
            "ais",
        ],
    );
    assert_eq!(v["caltech"]["ais"]["method"], "ais");
    assert!(v["caltech"]["comparisons"].as_array().unwrap().is_empty());
    let ais_csv = std::fs::read_to_string(ais_dir.join("fig1-fig2-caltech.csv")).unwrap();
    let fw_row = |csv: &str| {
        let row = csv
            .lines()
            .find(|l| l.starts_with("fw,2,"))
            .unwrap()
            .to_string();
        row.split(',').skip(4).take(2).collect::<Vec<_>>().join(",")
    };
    assert_eq!(fw_row(&ais_csv), fw_row(&csv));
    assert!(
        ais_csv.lines().skip(1).all(|l| l.ends_with(",,,,,,")),
        "{ais_csv}"
    );
}

/// Defaults from measurements (issue 18 item 11): without `--k` Frank-Wolfe draws with K = 3
/// (K = 1 let the grown model collapse on Caltech101), and the objective guard stops a run
/// whose exact training likelihood keeps falling, keeps the best model and says so.
#[test]
fn frank_wolfe_defaults_to_k3_and_the_guard_keeps_the_best_model() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let model = path(dir.path(), "fw.safetensors");
    let fit = |extra: &[&str]| {
        let mut args = vec![
            "rbm",
            "fit",
            "--algo",
            "frank-wolfe",
            "--data",
            &data,
            "--eval-every",
            "0",
            "--seed",
            "4",
            "--json",
            "-q",
            "-o",
            &model,
        ];
        args.extend_from_slice(extra);
        success_json(boltzkit().current_dir(dir.path()).args(&args))
    };
    fit(&["--max-units", "2"]);
    let f = load_rbm(Path::new(&model)).unwrap();
    assert!(
        f.metadata["settings"].contains("\"gibbs_steps\":3"),
        "{}",
        f.metadata["settings"]
    );

    let v = fit(&[
        "--max-units",
        "30",
        "--k",
        "1",
        "--chains",
        "20",
        "--lambda",
        "0.01",
        "--fall-tol",
        "0",
        "--fall-patience",
        "1",
    ]);
    let stop = v["stop"].as_str().unwrap();
    assert!(stop.contains("kept the"), "{stop}");
    let kept = load_rbm(Path::new(&model)).unwrap().rbm.n_hidden();
    assert!(
        kept < 30 && stop.contains(&format!("kept the {kept}-unit model")),
        "{stop}"
    );
}
