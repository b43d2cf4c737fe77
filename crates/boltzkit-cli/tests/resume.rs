//! `rbm fit --resume`: a run killed with SIGKILL mid-way and resumed from its checkpoint ends
//! with the model (tensors) of the uninterrupted run, and its log has each epoch once; a
//! checkpoint that cannot continue the run given is refused with exit 2.

mod common;

use boltzkit::rbm::file::load_rbm;
use common::boltzkit;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn gen_modes(dir: &Path) -> String {
    let modes = dir.join("modes.npy").display().to_string();
    boltzkit()
        .args(["gen", "artificial-modes", "-o", &modes, "--seed", "1", "-q"])
        .assert()
        .success();
    modes
}

/// `rbm fit` on `data` with `extra` settings, evaluating and checkpointing every epoch.
fn fit_args(data: &str, extra: &[&str], log: &str, out: &str) -> Vec<String> {
    let mut a: Vec<String> = [
        "rbm",
        "fit",
        "--data",
        data,
        "--hidden",
        "16",
        "--epochs",
        "100",
        "--eval-every",
        "1",
        "--lr",
        "0.05",
        "--lr-end",
        "0.01",
        "--seed",
        "3",
        "--log",
        log,
        "-o",
        out,
        "-q",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn log_epochs(path: &Path) -> Vec<u64> {
    boltzkit::io::MetricLog::read(path)
        .unwrap()
        .iter()
        .map(|r| r.epoch)
        .collect()
}

/// Starts the run with `--checkpoint ck`, kills it (SIGKILL) once the checkpoint exists and
/// the log has at least 3 lines, resumes it with `--resume ck`, and compares the final model
/// with an uninterrupted run's.
fn killed_and_resumed_equals_uninterrupted(extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let data = gen_modes(dir.path());
    let full = fit_args(&data, extra, &p("full.jsonl"), &p("full.safetensors"));
    boltzkit().args(&full).assert().success();

    let split = fit_args(&data, extra, &p("split.jsonl"), &p("split.safetensors"));
    let ck = p("ck.safetensors");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("boltzkit"))
        .args(&split)
        .args(["--checkpoint", &ck])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let log = dir.path().join("split.jsonl");
    while !(Path::new(&ck).exists()
        && std::fs::read_to_string(&log).map_or(0, |s| s.lines().count()) >= 3)
    {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no progress in the log"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let ck_file = load_rbm(Path::new(&ck)).unwrap();
    assert!(!ck_file.metadata.contains_key("stop_reason"), "{extra:?}");
    let at: u64 = ck_file.metadata["epoch"].parse().unwrap();
    assert!(at < 100, "{extra:?}: checkpoint at epoch {at}");

    boltzkit()
        .args(&split)
        .args(["--resume", &ck])
        .assert()
        .success();
    let (a, b) = (
        load_rbm(&dir.path().join("full.safetensors")).unwrap(),
        load_rbm(&dir.path().join("split.safetensors")).unwrap(),
    );
    assert_eq!(a.rbm, b.rbm, "{extra:?}: resumed at epoch {at}");
    assert_eq!(a.offsets, b.offsets, "{extra:?}");
    // the log: every epoch once (the lines after the checkpoint were dropped, then rewritten)
    assert_eq!(
        log_epochs(&log),
        (0..=100).collect::<Vec<u64>>(),
        "{extra:?}"
    );
    // the checkpoint went on being written there; it now records the finished run
    let ck_file = load_rbm(Path::new(&ck)).unwrap();
    assert_eq!(ck_file.metadata["stop_reason"], "all epochs done");
    assert_eq!(ck_file.rbm, a.rbm);
}

#[test]
fn pcd_with_momentum_on_two_threads_resumes_bit_for_bit_after_sigkill() {
    // The divergence watch is off here: this test is about resuming, and this run's
    // training log-likelihood really falls (artificial modes, the data on which Fischer &
    // Igel show sampling-based learners' likelihood diverging): from -2.41 at epoch 10 to
    // -7.2..-8.0 at epochs 27-31 and -17.4 at epoch 43, 6 nats below the independent-units
    // model it started from (-11.09); it ends at -9.9. No allowance smaller than that model's
    // whole figure lets it run: the default watch (the median of 3 records) stops it at epoch
    // 8 (median -4.49 against its best -3.07, allowance 1.1 nats).
    killed_and_resumed_equals_uninterrupted(&[
        "--algo",
        "pcd",
        "--momentum",
        "0.5",
        "--threads",
        "2",
        "--divergence-tol",
        "0",
    ]);
}

#[test]
fn csdcp_on_one_thread_resumes_bit_for_bit_after_sigkill() {
    killed_and_resumed_equals_uninterrupted(&["--algo", "csdcp-2-1", "--threads", "1"]);
}

/// Refusals, exit 2 with one line naming the cause: another seed, other settings, a
/// finished run, a model file without loop state, --resume with --model.
#[test]
fn resume_refuses_a_checkpoint_that_cannot_continue_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let data = gen_modes(dir.path());
    let ck = p("ck.safetensors");
    // a checkpoint of epoch 2 of a 4-epoch run: the end of an interrupted run's first part,
    // made by stopping at epoch 2 and taking the checkpoint written there
    let base = |epochs: &str, seed: &str| -> Vec<String> {
        [
            "rbm",
            "fit",
            "--data",
            &data,
            "--hidden",
            "4",
            "--epochs",
            epochs,
            "--eval-every",
            "1",
            "--seed",
            seed,
            "-o",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([p("m.safetensors"), "-q".into()])
        .collect()
    };
    boltzkit()
        .args(base("2", "3"))
        .args(["--checkpoint", &ck])
        .assert()
        .success();
    let refused = |args: Vec<String>, extra: &[&str], says: &str| {
        let out = boltzkit().args(args).args(extra).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(says), "{says}: {stderr}");
    };
    // the 2-epoch run finished
    refused(base("2", "3"), &["--resume", &ck], "already finished");
    // a plain model file (no loop state, no stop reason)
    let plain = p("plain.safetensors");
    let rbm = load_rbm(Path::new(&ck)).unwrap();
    boltzkit::rbm::file::save_rbm(Path::new(&plain), &rbm.rbm, None, &Default::default()).unwrap();
    refused(
        base("4", "3"),
        &["--resume", &plain],
        "not a checkpoint with loop state",
    );
    refused(
        base("4", "3"),
        &["--resume", &ck, "--model", &plain],
        "cannot be used with",
    );

    // a resumable checkpoint: the loop state of epoch 2 of a 4-epoch run, taken from a run
    // interrupted there (SIGINT keeps the last epoch's checkpoint)
    let ck4 = p("ck4.safetensors");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("boltzkit"))
        .args(base("1000000", "3"))
        .args(["--checkpoint", &ck4])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while load_rbm(Path::new(&ck4))
        .map(|f| f.metadata.get("epoch").map_or(0, |e| e.parse().unwrap()))
        .unwrap_or(0)
        < 1
    {
        assert!(start.elapsed() < Duration::from_secs(120), "no checkpoint");
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill(2) with the pid of a child this test spawned and still holds (not yet
    // waited for, so the pid is not reused); it touches no memory of this process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(!load_rbm(Path::new(&ck4))
        .unwrap()
        .metadata
        .contains_key("stop_reason"));
    refused(base("1000000", "4"), &["--resume", &ck4], "seed is 3");
    // no --seed at all: the line says so (not a random seed's number) and gives the remedy
    let unseeded: Vec<String> = base("1000000", "3")
        .into_iter()
        .filter(|a| a != "--seed" && a != "3")
        .collect();
    refused(
        unseeded,
        &["--resume", &ck4],
        "was given no --seed (a random one was drawn); add --seed 3",
    );
    refused(
        base("999", "3"),
        &["--resume", &ck4],
        "n_epochs (checkpoint 1000000, given 999)",
    );
    refused(
        base("1000000", "3"),
        &["--resume", &ck4, "--lr", "0.2"],
        "learning_rate (checkpoint",
    );
}
