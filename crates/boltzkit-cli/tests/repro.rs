//! End-to-end tests of what every `repro` command shares: the data folder found from anywhere
//! (and checked before any output is created), progress on stderr when it is not a terminal,
//! tables on stdout.

mod common;

use common::{boltzkit, json};
use std::path::Path;

/// `shared/data` beside the repository, when this checkout has one.
fn shared_data() -> Option<std::path::PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|a| a.join("shared/data"))
        .find(|p| p.join("caltech101_silhouettes").is_dir())
}

#[test]
fn missing_data_is_named_before_any_output_is_created() {
    let cwd = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let runs: [&[&str]; 3] = [
        &["repro", "sdcp", "--mnist", "--epochs", "1", "-o", "out"],
        &["repro", "frank-wolfe", "--datasets", "caltech"],
        &["repro", "popcd", "--datasets", "mnist", "-o", "out"],
    ];
    for args in runs {
        let out = boltzkit()
            .current_dir(cwd.path())
            .env("BOLTZKIT_DATA_DIR", empty.path())
            .args(args)
            .arg("-q")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&empty.path().display().to_string()) && err.contains("tried"),
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
