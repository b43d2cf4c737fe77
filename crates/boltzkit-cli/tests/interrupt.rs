//! Ctrl-C during training: the run finishes its current update, writes the last good model to
//! `-o` (atomically) and its log, says so in one line, and exits 130.

mod common;

use common::boltzkit;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sigint_during_rbm_fit_writes_the_last_good_model_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    boltzkit()
        .args([
            "gen",
            "artificial-modes",
            "-o",
            &p("modes.npy"),
            "--seed",
            "1",
            "-q",
        ])
        .assert()
        .success();
    let bin = assert_cmd::cargo::cargo_bin("boltzkit");
    let child = Command::new(bin)
        .args([
            "rbm",
            "fit",
            "--data",
            &p("modes.npy"),
            "--hidden",
            "16",
            "--epochs",
            "1000000",
            "--eval-every",
            "1",
            "--log",
            &p("fit.jsonl"),
            "-o",
            &p("m.safetensors"),
            "--seed",
            "3",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until training has logged a few epochs, then interrupt.
    let start = Instant::now();
    while std::fs::read_to_string(p("fit.jsonl")).map_or(0, |s| s.lines().count()) < 3 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no progress in the log"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("wrote the last good model to"), "{stderr}");
    // The model is complete and loads; its metadata records the interrupt.
    let out = boltzkit()
        .args([
            "rbm",
            "eval",
            "--model",
            &p("m.safetensors"),
            "--data",
            &p("modes.npy"),
        ])
        .args(["--method", "exact", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta = std::fs::read(p("m.safetensors")).unwrap();
    assert!(String::from_utf8_lossy(&meta).contains("interrupted after"));
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}
