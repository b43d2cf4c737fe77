//! Ctrl-C during training: the run finishes its current update, writes the last good model to
//! `-o` (atomically) and its log, says so in one line, and exits 130.

mod common;

use common::boltzkit;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Generates the Artificial Modes data in `dir`, starts `boltzkit` with `args` (which must write
/// the JSONL log `log`), sends SIGINT once the log has three lines, and returns the output.
fn interrupt_once_logging(dir: &Path, args: &[&str], log: &Path) -> Output {
    let modes = dir.join("modes.npy").display().to_string();
    boltzkit()
        .args(["gen", "artificial-modes", "-o", &modes, "--seed", "1", "-q"])
        .assert()
        .success();
    let child = Command::new(assert_cmd::cargo::cargo_bin("boltzkit"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::fs::read_to_string(log).map_or(0, |s| s.lines().count()) < 3 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no progress in the log"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: kill(2) with the pid of a child this test spawned and still holds (not yet
    // waited for, so the pid is not reused); it touches no memory of this process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("wrote the last good model to"), "{stderr}");
    out
}

#[test]
fn sigint_during_rbm_fit_writes_the_last_good_model_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let args = [
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
    ];
    interrupt_once_logging(dir.path(), &args, &dir.path().join("fit.jsonl"));
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

#[test]
fn sigint_during_frank_wolfe_writes_the_grown_model_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let args = [
        "rbm",
        "fit",
        "--algo",
        "frank-wolfe",
        "--data",
        &p("modes.npy"),
        "--max-units",
        "100000",
        "--eval-every",
        "1",
        "--log",
        &p("fw.jsonl"),
        "-o",
        &p("fw.safetensors"),
        "--seed",
        "3",
    ];
    interrupt_once_logging(dir.path(), &args, &dir.path().join("fw.jsonl"));
    let bytes = std::fs::read(p("fw.safetensors")).unwrap();
    assert!(String::from_utf8_lossy(&bytes).contains("interrupted after"));
}

#[test]
fn sigint_during_fvbm_pcd_writes_the_last_good_model_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    boltzkit()
        .args([
            "gen",
            "ising",
            "--rows",
            "3",
            "--cols",
            "3",
            "--coupling",
            "0.5",
        ])
        .args(["--samples", "500", "--seed", "1", "-q", "-o", &p("x.npy")])
        .assert()
        .success();
    let child = Command::new(assert_cmd::cargo::cargo_bin("boltzkit"))
        .args(["fvbm", "fit", "--algo", "pcd", "--data", &p("x.npy")])
        .args([
            "--updates",
            "1000000000",
            "--seed",
            "2",
            "-o",
            &p("m.safetensors"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // the handler is installed before the first update; the run takes hours if not stopped
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) with the pid of a child this test spawned and still holds (not yet
    // waited for, so the pid is not reused); it touches no memory of this process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("wrote the last good model to"), "{stderr}");
    boltzkit()
        .args([
            "fvbm",
            "eval",
            "--model",
            &p("m.safetensors"),
            "--data",
            &p("x.npy"),
        ])
        .assert()
        .success();
}
