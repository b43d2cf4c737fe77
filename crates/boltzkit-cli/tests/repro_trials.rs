//! `repro popcd --trials A..B` and `--merge`: a protocol's trials split into ranges run as
//! separate processes, then merged, give the tables of one process running every trial, bit
//! for bit (the curves' CSV and Markdown).

mod common;

use assert_cmd::Command;
use common::{boltzkit, success_json};
use std::path::Path;

/// `repro popcd`'s curves on bars & stripes, two algorithms, 200 iterations.
fn popcd_command() -> Command {
    let mut cmd = boltzkit();
    cmd.args(["repro", "popcd", "--part", "curves", "--datasets", "bas"])
        .args([
            "--lrs",
            "0.1",
            "--algos",
            "cd-1,popcd-1",
            "--iterations",
            "200",
        ]);
    cmd
}

fn popcd(out: &Path, extra: &[&str]) -> serde_json::Value {
    success_json(
        popcd_command()
            .args(["--json", "-q", "-o"])
            .arg(out)
            .args(extra),
    )
}

#[test]
fn trial_ranges_run_apart_merge_into_the_tables_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let whole = popcd(&at("whole"), &["--trials", "3"]);
    popcd(&at("a"), &["--trials", "0..2"]);
    popcd(&at("b"), &["--trials", "2..3"]);
    let parts = format!("{},{}", at("b").display(), at("a").display());
    let merged = popcd(&at("merged"), &["--trials", "3", "--merge", &parts]);
    assert_eq!(merged["trials"], 3);
    assert_eq!(whole["curves"], merged["curves"]);
    let csv = "curves-bas-lr0.1.csv";
    let read = |d: &str, f: &str| std::fs::read(at(d).join(f)).unwrap();
    assert_eq!(read("whole", csv), read("merged", csv));
    let md = |d: &str| {
        let v: serde_json::Value = serde_json::from_slice(&read(d, "popcd.json")).unwrap();
        v["curves_markdown"].as_str().unwrap().to_string()
    };
    assert_eq!(md("whole"), md("merged"));
    assert!(
        md("whole").contains("| bas | 0.1 | popcd-1 | 3 |"),
        "{}",
        md("whole")
    );

    // a range that leaves a trial out is refused, naming what is missing
    let out = popcd_command()
        .args(["--trials", "4", "--merge", &parts, "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cover trials 0..3") && err.contains("0..4"),
        "{err}"
    );
    let out = boltzkit()
        .args(["repro", "popcd", "--trials", "3..3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
