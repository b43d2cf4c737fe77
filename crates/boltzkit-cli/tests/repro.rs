//! End-to-end tests of what every `repro` command shares: the data folder found from anywhere
//! (and checked before any output is created), progress on stderr when it is not a terminal,
//! tables on stdout.

mod common;

use common::{boltzkit, bracket_of, json, shared_data, success_json};

#[test]
fn missing_data_is_named_before_any_output_is_created() {
    let cwd = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let runs: [&[&str]; 3] = [
        &["repro", "sdcp", "--mnist", "--epochs", "1", "-o", "out"],
        &["repro", "frank-wolfe", "--datasets", "caltech"],
        &["repro", "popcd", "--datasets", "mnist", "-o", "out"],
    ];
    for args in runs {
        let out = boltzkit()
            .current_dir(cwd.path())
            .env("BOLTZKIT_DATA_DIR", empty.path())
            .env("BOLTZKIT_DATA", cache.path())
            .args(args)
            .arg("-q")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&empty.path().display().to_string())
                && err.contains("BOLTZKIT_DATA_MIRROR=DIR")
                && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert_eq!(
            std::fs::read_dir(cwd.path()).unwrap().count(),
            0,
            "{args:?} left output behind"
        );
    }
    // an explicit --data-dir is named too
    let out = boltzkit()
        .current_dir(cwd.path())
        .env("BOLTZKIT_DATA", cache.path())
        .args(["repro", "sdcp", "--mnist", "-q", "--data-dir"])
        .arg(empty.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--data-dir"), "{err}");
}

#[test]
fn the_data_folder_is_found_from_another_working_directory() {
    if shared_data().is_none() {
        eprintln!("shared/data not found beside the repository: test not run");
        return;
    }
    let cwd = tempfile::tempdir().unwrap();
    let out = boltzkit()
        .current_dir(cwd.path())
        .env_remove("BOLTZKIT_DATA_DIR")
        .args([
            "repro",
            "popcd",
            "--part",
            "table1",
            "--datasets",
            "caltech",
        ])
        .args(["--table1-estimators", "cd-1", "--table1-estimates", "40"])
        .args(["--table1-train-iterations", "20", "--json", "-q"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = json(&out.stdout);
    assert_eq!(s["table1"][0]["dataset"], "caltech");
}

#[test]
fn progress_lines_when_stderr_is_not_a_terminal_and_tables_on_stdout() {
    let out = boltzkit()
        .env("BOLTZKIT_PROGRESS_SECS", "0.02")
        .args(["repro", "popcd", "--part", "curves", "--datasets", "bas"])
        .args(["--lrs", "0.1", "--algos", "cd-1,pcd-1", "--trials", "2"])
        .args(["--iterations", "2000"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines = err.lines().filter(|l| l.starts_with("runs:")).count();
    assert!(
        lines >= 2,
        "a line when the stage starts and while it runs:\n{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("| bas | 0.1 | cd-1 |"), "{stdout}");

    let out = boltzkit()
        .args([
            "repro", "sdcp", "--small", "--epochs", "20", "--trials", "1",
        ])
        .args(["--eval-every", "10", "--algos", "cd"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("| data | η | algorithm |"), "{stdout}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("| data | η |"),
        "the table goes to stdout only: {err}"
    );
}

/// `repro sdcp --mnist` on binarized MNIST from the data registry's mirror (one epoch): every
/// run's final figure is the bracket [RAISE, forward AIS] in the CSV, the Markdown table and
/// the JSON; --algos takes the library's notation.
#[test]
fn sdcp_mnist_reports_the_bracket_of_every_run() {
    let Some(mirror) = shared_data() else {
        eprintln!("shared/data not found beside the repository: test not run");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let v = success_json(
        boltzkit()
            .args(["repro", "sdcp", "--mnist", "--data-dir"])
            .arg(&mirror)
            .args(["--epochs", "1", "--trials", "1", "--eval-every", "1"])
            .args([
                "--algos",
                "cd-1,csdcp-2-1",
                "--ais-steps",
                "20",
                "--ais-chains",
                "6",
            ])
            .args(["--final-steps", "60", "--raise-vectors", "12", "-o"])
            .arg(&out_dir)
            .args(["--json", "-q"]),
    );
    let finals = v["mnist_final"].as_array().unwrap();
    assert_eq!(finals.len(), 2);
    for (f, algo) in finals.iter().zip(["cd-1", "csdcp-2-1"]) {
        assert_eq!(f["algo"], algo);
        let b = &f["bracket"];
        assert_eq!(
            (b["steps"].as_u64(), b["raise_vectors"].as_u64()),
            (Some(60), Some(12))
        );
        assert_eq!(b["ais"]["value"], f["test_ll_ais"]);
        assert!(f["diagnosis"]
            .as_str()
            .unwrap()
            .starts_with(b["diagnosis"]["verdict"].as_str().unwrap()));
    }
    let csv = std::fs::read_to_string(out_dir.join("sdcp-mnist-final.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for (line, f) in rows.iter().zip(finals) {
        let (raise, _, ais, _, verdict) = bracket_of(header, line);
        // the same number in both files; serde_json's parser (without `float_roundtrip`) may
        // land one unit in the last place away from the text's nearest double
        let same = |a: f64, b: f64| (a - b).abs() <= 1e-14 * a.abs().max(1.0);
        let json_raise = f["bracket"]["raise"]["value"].as_f64().unwrap();
        assert!(same(raise, json_raise), "{raise} vs {json_raise}");
        let json_ais = f["test_ll_ais"].as_f64().unwrap();
        assert!(same(ais, json_ais), "{ais} vs {json_ais}");
        assert_eq!(
            verdict,
            f["bracket"]["diagnosis"]["verdict"].as_str().unwrap()
        );
    }
    let md = std::fs::read_to_string(out_dir.join("sdcp-mnist-table.md")).unwrap();
    assert!(md.contains("| RAISE (± se) | forward AIS (± se) |"), "{md}");
    assert!(md.contains("| csdcp-2-1 | 0.01 | 1 | "), "{md}");
}

/// `repro sdcp --algos`: the library's notation and the family names (the paper's budget of
/// the experiment) name the same runs, bit for bit; an unknown name exits 2 naming the forms.
#[test]
fn sdcp_algos_take_the_library_notation() {
    let table = |algos: &str| {
        let out = boltzkit()
            .args([
                "repro", "sdcp", "--small", "--epochs", "20", "--trials", "1",
            ])
            .args(["--eval-every", "10", "--seed", "1", "--algos", algos])
            .assert()
            .success();
        // the table's lines (the summary after it carries the wall time)
        String::from_utf8_lossy(&out.get_output().stdout)
            .lines()
            .filter(|l| l.starts_with('|'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let by_family = table("cd,csdcp");
    assert_eq!(by_family, table("cd-12,csdcp-3-4"));
    assert!(
        by_family.contains("| bars-stripes-3x3 | 0.3 | csdcp |"),
        "{by_family}"
    );
    let other = table("cd-1,sdcp-2-4");
    assert!(
        other.contains("| shifting-bar-9-1 | 0.5 | sdcp-2-4 |"),
        "{other}"
    );
    for bad in ["cdx", "cd-0", "cd,bogus"] {
        let out = boltzkit()
            .args([
                "repro", "sdcp", "--small", "--epochs", "2", "--algos", bad, "-q",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--algos") && err.contains("sdcp-D-K"),
            "{bad}: {err}"
        );
    }
}
