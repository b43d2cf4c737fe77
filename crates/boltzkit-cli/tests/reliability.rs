//! Nothing lost, nothing aborted (issue 33): outputs checked before any work, never written
//! over a device or a FIFO, a closed or full stdout ending a command with exit 1 and one line,
//! and the readers' messages naming file, place and likely cause.

mod common;

use common::{bars_and_stripes, boltzkit, path};
use predicates::prelude::*;
use std::path::Path;
use std::process::{Command, Stdio};

/// The names in `dir`, sorted (to show that nothing, no temporary either, was left behind).
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Runs `args`, asserts exit status `code` and one line on stderr (`error: ...`) containing
/// every one of `says`; returns that line.
fn fails(args: &[&str], code: i32, says: &[&str]) -> String {
    let out = boltzkit().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert_eq!(errors.len(), 1, "one error line: {stderr}");
    for s in says {
        assert!(errors[0].contains(s), "{args:?}: `{s}` not in {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    errors[0].to_string()
}

/// The `&str`s of `v`.
fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// An FVBM fitted to `data` with `--l2 0.1`, written as `dir/f.safetensors`.
fn fvbm_fit(dir: &Path, data: &str) -> String {
    let fvbm = path(dir, "f.safetensors");
    boltzkit()
        .args([
            "fvbm", "fit", "--data", data, "--l2", "0.1", "-o", &fvbm, "-q",
        ])
        .assert()
        .success();
    fvbm
}

/// `mkfifo path`.
fn fifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A small tmpfs mounted at a fresh folder (root only), unmounted when dropped; `None` with
/// the reason printed when this process cannot mount one.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(options: &str) -> Option<Tmpfs> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: mounting a tmpfs needs root (this test runs as a user)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: `mount -t tmpfs` failed (no CAP_SYS_ADMIN in this container)");
            return None;
        }
        Some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Every output flag of the training, sampling and generating commands is checked before any
/// work: a missing folder, a name too long for the file system, a file where the folder should
/// be. Exit 1, one line naming the flag's file and the cause; nothing created.
#[test]
fn unwritable_outputs_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let nodir = |name: &str| path(dir.path(), &format!("nodir/{name}"));
    let model = path(dir.path(), "m.safetensors");
    boltzkit()
        .args([
            "rbm", "fit", "--data", &data, "--hidden", "3", "--epochs", "1",
        ])
        .args(["-o", &model, "-q"])
        .assert()
        .success();
    let before = names_in(dir.path());
    let fit = ["rbm", "fit", "--data", &data, "--hidden", "3"];
    let long = ["--epochs", "100000", "--seed", "1", "-q"];
    let m = nodir("m.safetensors");
    let says = ["nodir does not exist"];
    fails(&[&fit[..], &long, &["-o", &m]].concat(), 1, &says);
    let l = nodir("l.jsonl");
    let cases: Vec<Vec<&str>> = vec![
        [&fit[..], &long, &["-o", &model, "--log", &l]].concat(),
        [&fit[..], &long, &["-o", &model, "--checkpoint", &m]].concat(),
        vec![
            "rbm",
            "fit",
            "--data",
            &data,
            "--algo",
            "frank-wolfe",
            "--max-units",
            "50",
            "-o",
            &m,
            "-q",
        ],
        vec!["fsll", "fit", "--data", &data, "-o", &m, "-q"],
        vec!["fvbm", "fit", "--data", &data, "-o", &m, "-q"],
        vec![
            "fvbm", "fit", "--data", &data, "--algo", "mle", "-o", &m, "-q",
        ],
    ];
    for args in &cases {
        fails(args, 1, &says);
    }
    let s = nodir("s.npy");
    fails(&["rbm", "sample", "--model", &model, "-o", &s], 1, &says);
    fails(
        &[
            "rbm", "features", "--model", &model, "--data", &data, "-o", &s,
        ],
        1,
        &says,
    );
    fails(&["gen", "bars-stripes", "--size", "3", "-o", &s], 1, &says);
    // a name the file system cannot hold
    let too_long = path(dir.path(), &format!("{}.safetensors", "m".repeat(250)));
    fails(
        &[&fit[..], &long, &["-o", &too_long]].concat(),
        1,
        &["262 bytes long", "at most 255"],
    );
    // a file where a folder should be
    let under_file = format!("{data}/m.safetensors");
    fails(
        &[&fit[..], &long, &["-o", &under_file]].concat(),
        1,
        &["is not a directory"],
    );
    assert_eq!(names_in(dir.path()), before, "nothing created");
}

/// A valid 252-byte name is written: its temporary is kept within 255 bytes, and nothing is
/// left beside it.
#[test]
fn a_valid_long_name_is_written_with_no_temporary_left() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let name = format!("{}.safetensors", "m".repeat(240));
    assert_eq!(name.len(), 252);
    let log = format!("{}.jsonl", "l".repeat(246));
    boltzkit()
        .args([
            "rbm", "fit", "--data", &data, "--hidden", "3", "--epochs", "2",
        ])
        .args(["--eval-every", "1", "-q", "-o", &path(dir.path(), &name)])
        .args(["--log", &path(dir.path(), &log)])
        .assert()
        .success();
    assert_eq!(names_in(dir.path()), vec!["bas.csv".to_string(), log, name]);
}

/// Devices and FIFOs are never replaced: `--log` to a link to `/dev/null`, `-o` of `rbm sample`
/// to a FIFO named `*.npy`, `-o` of `gen` to a FIFO: refused before any work, exit 1, and each
/// stays what it was.
#[test]
fn devices_and_fifos_are_refused_and_stay_what_they_were() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let model = path(dir.path(), "m.safetensors");
    let null = dir.path().join("null.jsonl");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    let pipe = dir.path().join("pipe.npy");
    fifo(&pipe);
    let null = null.display().to_string();
    let pipe_s = pipe.display().to_string();
    let fit = |extra: &[&str]| {
        let mut v = vec![
            "rbm", "fit", "--data", &data, "--hidden", "3", "--epochs", "5",
        ];
        v.extend_from_slice(&["-q", "--seed", "1"]);
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    fails(
        &refs(&fit(&["-o", &model, "--log", &null])),
        1,
        &["is a character device", "not a regular file"],
    );
    assert!(
        !Path::new(&model).exists(),
        "no training before the refusal"
    );
    boltzkit().args(fit(&["-o", &model])).assert().success();
    let s = ["is a FIFO", "not a regular file"];
    fails(
        &["rbm", "sample", "--model", &model, "-n", "5", "-o", &pipe_s],
        1,
        &s,
    );
    fails(
        &["gen", "bars-stripes", "--size", "3", "-o", &pipe_s],
        1,
        &s,
    );
    assert!(std::fs::metadata(&pipe).unwrap().file_type().is_fifo());
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    assert!(std::fs::symlink_metadata(&null)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        names_in(dir.path()),
        vec!["bas.csv", "m.safetensors", "null.jsonl", "pipe.npy"]
    );
}

/// A read-only file system (a tmpfs mounted read-only) is found before the work, as root too.
#[test]
fn a_read_only_file_system_is_found_before_the_work() {
    let Some(ro) = Tmpfs::mount("ro,size=64k") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let m = path(ro.path(), "m.safetensors");
    fails(
        &[
            "rbm", "fit", "--data", &data, "--hidden", "3", "--epochs", "100000", "-o", &m,
        ],
        1,
        &["read-only file system"],
    );
    fails(
        &["fsll", "fit", "--data", &data, "-o", &m],
        1,
        &["read-only file system"],
    );
}

/// A folder the user may not write (as a user; root writes anywhere, so this part is skipped
/// as root, where the read-only test above covers the same refusal).
#[test]
fn a_folder_the_user_cannot_write_is_found_before_the_work() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("skipped: root may write into any folder");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let m = path(&locked, "m.safetensors");
    fails(
        &["rbm", "fit", "--data", &data, "--hidden", "3", "-o", &m],
        1,
        &["no permission to create files in"],
    );
}

/// Runs `args` with stdout closed before the command writes (the read end of its pipe dropped,
/// as `| true` does) or going to `/dev/full`: exit 1, one line on stderr, never a panic.
fn stdout_fails(args: &[&str], full: bool) -> String {
    let stdout = if full {
        Stdio::from(std::fs::File::create("/dev/full").unwrap())
    } else {
        Stdio::piped()
    };
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("boltzkit"))
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("cannot write to stdout"), "{stderr}");
    errors[0].to_string()
}

/// `--json | true` and `> /dev/full`: the summary, a table, a paper's tables (written from the
/// command's worker thread) and the JSON error object all fail cleanly; the model written before
/// the summary stays.
#[test]
fn a_closed_or_full_stdout_ends_the_command_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let model = path(dir.path(), "m.safetensors");
    let fit = [
        "rbm", "fit", "--data", &data, "--hidden", "3", "--epochs", "2", "-o", &model,
    ];
    for full in [false, true] {
        let line = stdout_fails(&[&fit[..], &["--json"]].concat(), full);
        let cause = if full {
            "device it goes to is full"
        } else {
            "it was closed"
        };
        assert!(line.contains(cause), "{line}");
        assert!(Path::new(&model).exists());
        stdout_fails(&fit, full);
        let fvbm = fvbm_fit(dir.path(), &data);
        stdout_fails(
            &[
                "fvbm", "tests", "--model", &fvbm, "--data", &data, "--l2", "0.1",
            ],
            full,
        );
        // a paper's tables are shown from the command's worker thread
        stdout_fails(
            &[
                "repro",
                "fsll",
                "--only",
                "Ising5x4S",
                "--trials",
                "1",
                "-q",
            ],
            full,
        );
    }
    // the error object of a failed --json run is not written either, but the line is
    let out = Command::new(assert_cmd::cargo::cargo_bin("boltzkit"))
        .args([
            "rbm",
            "eval",
            "--model",
            "none.safetensors",
            "--data",
            &data,
            "--json",
        ])
        .stdout(Stdio::from(std::fs::File::create("/dev/full").unwrap()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("none.safetensors") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

/// Text the readers used to misread: a UTF-8 byte-order mark, spaces in a .csv, classic Mac
/// line ends are read; UTF-16 and a file compressed twice are named, with the remedy.
#[test]
fn readers_read_or_name_what_they_found() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = path(dir.path(), name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let rows = |p: &str| {
        let out = common::success_json(
            boltzkit()
                .args([
                    "rbm", "fit", "--data", p, "--hidden", "2", "--epochs", "1", "--json", "-q",
                    "-o",
                ])
                .arg(path(dir.path(), "m.safetensors")),
        );
        (
            out["samples"].as_u64().unwrap(),
            out["visible"].as_u64().unwrap(),
        )
    };
    assert_eq!(
        rows(&write("bom.csv", b"\xef\xbb\xbf0,1,0\n1,0,1\n")),
        (2, 3)
    );
    assert_eq!(rows(&write("space.csv", b"0 1 0\n1 0 1\n")), (2, 3));
    assert_eq!(rows(&write("mac.csv", b"0,1,0\r1,0,1\r")), (2, 3));
    let utf16: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain("0,1,0\n1,0,1\n".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let u16p = write("u16.csv", &utf16);
    let fit = |p: &str| {
        vec!["rbm", "fit", "--data", p, "--hidden", "2", "-q", "-o"]
            .into_iter()
            .map(String::from)
            .chain([path(dir.path(), "x.safetensors")])
            .collect::<Vec<_>>()
    };
    fails(
        &refs(&fit(&u16p)),
        1,
        &["u16.csv", "UTF-16 little-endian", "save the file as UTF-8"],
    );
    let gz = |bytes: &[u8]| {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    };
    let twice = write("twice.csv.gz", &gz(&gz(b"0,1\n1,0\n")));
    fails(
        &refs(&fit(&twice)),
        1,
        &["twice.csv.gz", "compressed twice"],
    );
    let hidden_gz = write("plain.csv", &gz(b"0,1\n1,0\n"));
    fails(
        &refs(&fit(&hidden_gz)),
        1,
        &["plain.csv", "name the file", ".csv.gz"],
    );
    let mixed = write("mixed.csv", b"0,1\n1;0\n");
    fails(
        &refs(&fit(&mixed)),
        1,
        &["mixed.csv:2: column 1", "holds ';'", "separator is ','"],
    );
    assert!(!dir.path().join("x.safetensors").exists());
}

/// A whole-number flag given `2.5` or `1e3` says what it expects (not Rust's "invalid digit
/// found in string").
#[test]
fn whole_number_flags_say_what_they_expect() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let m = path(dir.path(), "m.safetensors");
    for (flag, value) in [("--hidden", "2.5"), ("--epochs", "1e3")] {
        let out = boltzkit()
            .args(["rbm", "fit", "--data", &data, "-o", &m, flag, value])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("expected a whole number written in digits"),
            "{stderr}"
        );
        assert!(!stderr.contains("invalid digit"), "{stderr}");
    }
}

/// The safetensors bytes of `tensors` (name, shape, f32 values) with `format` metadata.
fn safetensors(tensors: &[(&str, [usize; 2], usize)], format: &str) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    header.insert(
        "__metadata__".into(),
        serde_json::json!({ "format": format }),
    );
    let mut offset = 0;
    for (name, shape, n) in tensors {
        let shape: Vec<usize> = shape.iter().copied().filter(|&s| s > 0).collect();
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + 4 * n]}),
        );
        offset += 4 * n;
    }
    let mut text = serde_json::Value::Object(header).to_string();
    while !text.len().is_multiple_of(8) {
        text.push(' ');
    }
    let mut bytes = (text.len() as u64).to_le_bytes().to_vec();
    bytes.extend(text.as_bytes());
    bytes.extend(vec![0u8; offset]);
    bytes
}

/// A `W` stored as n_hidden × n_visible (PyTorch's layout) is named as transposed, not blamed
/// on `b`; `fvbm tests` on data of another width names both files.
#[test]
fn model_files_and_widths_name_the_file_at_fault() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let w = path(dir.path(), "wt.safetensors");
    std::fs::write(
        &w,
        safetensors(
            &[("W", [2, 9], 18), ("b", [9, 0], 9), ("c", [2, 0], 2)],
            "boltzkit/rbm/v1",
        ),
    )
    .unwrap();
    fails(
        &["rbm", "eval", "--model", &w, "--data", &data],
        1,
        &["wt.safetensors", "W is stored transposed"],
    );
    let fvbm = fvbm_fit(dir.path(), &data);
    let narrow = path(dir.path(), "narrow.csv");
    std::fs::write(&narrow, "0,1,0\n1,0,1\n").unwrap();
    fails(
        &["fvbm", "tests", "--model", &fvbm, "--data", &narrow],
        1,
        &["narrow.csv", "3 variables", "f.safetensors", "9 units"],
    );
}

/// A checkpoint carries a checksum: one flipped bit and `--resume` refuses it, naming it.
#[test]
fn a_corrupted_checkpoint_is_refused_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let ck = path(dir.path(), "ck.safetensors");
    let m = path(dir.path(), "m.safetensors");
    let fit = [
        "rbm",
        "fit",
        "--data",
        &data,
        "--hidden",
        "3",
        "--eval-every",
        "2",
        "--seed",
        "1",
        "-q",
        "-o",
        &m,
    ];
    boltzkit()
        .args(fit)
        .args(["--epochs", "4", "--checkpoint", &ck])
        .assert()
        .success();
    let mut bytes = std::fs::read(&ck).unwrap();
    let last = bytes.len() - 5;
    bytes[last] ^= 0x10;
    std::fs::write(&ck, &bytes).unwrap();
    fails(
        &[&fit[..], &["--epochs", "8", "--resume", &ck]].concat(),
        1,
        &["ck.safetensors", "no longer matches the checksum"],
    );
}

/// Fills the file system of `dir` (a small tmpfs) to the last byte, then frees `free_pages`
/// pages of 4 KiB; returns the filler's path.
fn fill(dir: &Path, free_pages: u64) -> std::path::PathBuf {
    use std::io::Write;
    let filler = dir.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let block = vec![7u8; 4096];
    while f.write_all(&block).is_ok() {}
    let _ = f.flush();
    let len = std::fs::metadata(&filler).unwrap().len();
    f.set_len(len.saturating_sub(4096 * free_pages)).unwrap();
    filler
}

/// A 64 KiB tmpfs to fill, and beside it a healthy folder with the bars-and-stripes data and
/// a model path; `None` (the test skipped, the reason printed) where no tmpfs can be mounted.
fn full_disk_case() -> Option<(Tmpfs, tempfile::TempDir, String, String)> {
    let small = Tmpfs::mount("size=64k")?;
    let dir = tempfile::tempdir().unwrap();
    let data = bars_and_stripes(dir.path());
    let m = path(dir.path(), "m.safetensors");
    Some((small, dir, data, m))
}

/// A log whose disk fills up (a 64 KiB tmpfs with one page free: its second write fails)
/// stops training at that evaluation; the model of that epoch is written to `-o` on a healthy
/// disk, the line says where, and no temporary is left on the full disk.
#[test]
fn a_full_disk_for_the_log_stops_training_and_keeps_the_model() {
    let Some((small, _dir, data, m)) = full_disk_case() else {
        return;
    };
    let log = path(small.path(), "l.jsonl");
    fill(small.path(), 1);
    let line = fails(
        &[
            "rbm",
            "fit",
            "--data",
            &data,
            "--hidden",
            "3",
            "--epochs",
            "50",
            "--eval-every",
            "2",
            "--seed",
            "1",
            "-q",
            "-o",
            &m,
            "--log",
            &log,
        ],
        1,
        &[
            "training stopped after epoch 2: writing the log",
            "l.jsonl failed",
            "the model of epoch 2 was written to",
        ],
    );
    assert!(
        line.contains("No space left on device") || line.contains("no space left"),
        "{line}"
    );
    let model = boltzkit::rbm::file::load_rbm(Path::new(&m)).unwrap();
    assert_eq!(model.metadata["epochs_done"], "2", "{:?}", model.metadata);
    assert_eq!(
        names_in(small.path()),
        vec!["filler", "l.jsonl"],
        "no temporary left"
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
}

/// A checkpoint on a full disk stops training at once; `-o` (healthy) still gets the model.
/// The model itself on the full disk: training runs, the write fails, and the line says the
/// model was NOT saved and where the last checkpoint is.
#[test]
fn a_full_disk_for_the_checkpoint_or_the_model_says_where_the_model_is() {
    let Some((small, dir, data, m)) = full_disk_case() else {
        return;
    };
    let ck = path(small.path(), "ck.safetensors");
    let filler = fill(small.path(), 0);
    let fit = [
        "rbm",
        "fit",
        "--data",
        &data,
        "--hidden",
        "3",
        "--epochs",
        "20",
        "--eval-every",
        "5",
        "--seed",
        "1",
        "-q",
    ];
    fails(
        &[&fit[..], &["-o", &m, "--checkpoint", &ck]].concat(),
        1,
        &[
            "training stopped after epoch 0: writing the checkpoint",
            "the model of epoch 0 was written to",
        ],
    );
    assert!(boltzkit::rbm::file::load_rbm(Path::new(&m)).is_ok());
    assert_eq!(
        names_in(small.path()),
        vec!["filler"],
        "no temporary, no half checkpoint"
    );
    // the model on the full disk, the checkpoint on a healthy one
    std::fs::remove_file(&filler).unwrap();
    let healthy_ck = path(dir.path(), "ck.safetensors");
    let lost = path(small.path(), "m.safetensors");
    fill(small.path(), 0);
    fails(
        &[&fit[..], &["-o", &lost, "--checkpoint", &healthy_ck]].concat(),
        1,
        &[
            "the model was NOT saved",
            "the last checkpoint, of epoch 20, is",
            "ck.safetensors",
        ],
    );
    assert_eq!(names_in(small.path()), vec!["filler"]);
}

/// A rate too large (PCD at `--lr 1` in batches of 4, the parameter guard out of the way):
/// it learns for 16 epochs, then the divergence watch (its default tolerance, 0.1) stops the
/// run with exit 1 and one line
/// saying which epoch's model was kept, and the model file holds that model bit for bit (the
/// same seeded run for that many epochs, the watch off).
#[test]
fn a_diverging_fit_exits_1_and_keeps_the_best_model() {
    use boltzkit::rbm::file::load_rbm;
    let dir = tempfile::tempdir().unwrap();
    let data = path(dir.path(), "bas.csv");
    let gen = ["gen", "bars-stripes", "--size", "3", "-o", &data];
    boltzkit().args(gen).assert().success();
    let out = path(dir.path(), "m.safetensors");
    let fit = |epochs: &str, tol: &str, o: &str| {
        let args = [
            "rbm",
            "fit",
            "--data",
            &data,
            "--algo",
            "pcd",
            "--hidden",
            "8",
            "--batch-size",
            "4",
            "--lr",
            "1",
            "--max-abs-param",
            "1e30",
            "--epochs",
            epochs,
            "--seed",
            "3",
            "--eval",
            "none",
            "--divergence-tol",
            tol,
            "-o",
            o,
        ];
        args.map(String::from)
    };
    let line = fails(
        &refs(&fit("300", "0.1", &out)),
        1,
        &["diverged", "kept the model of epoch", &out],
    );
    let kept: usize = line
        .split("kept the model of epoch ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(kept >= 1, "the run learned before it diverged: {line}");
    assert_eq!(names_in(dir.path()), ["bas.csv", "m.safetensors"]);
    let twin = path(dir.path(), "twin.safetensors");
    boltzkit()
        .args(fit(&kept.to_string(), "0", &twin))
        .assert()
        .success();
    let (a, b) = (
        load_rbm(out.as_ref()).unwrap(),
        load_rbm(twin.as_ref()).unwrap(),
    );
    assert_eq!(a.rbm, b.rbm);
    // the golden runs' healthy rate on the same data: all epochs, exit 0
    let healthy = [
        "rbm",
        "fit",
        "--data",
        &data,
        "--hidden",
        "4",
        "--batch-size",
        "0",
        "--lr",
        "0.2",
        "--epochs",
        "30",
        "--seed",
        "1",
        "-o",
        &twin,
    ];
    boltzkit()
        .args(healthy)
        .assert()
        .success()
        .stderr(predicate::str::contains("diverged").not());
}

/// `--max-abs-param inf` (the guard checks finiteness only): the run trains, the model
/// file's settings record the bound as `null` (JSON has no infinity) and read back as `∞`.
#[test]
fn an_infinite_parameter_bound_is_a_setting_like_any() {
    use boltzkit::rbm::file::load_rbm;
    use boltzkit::rbm::train::RbmParams;
    let dir = tempfile::tempdir().unwrap();
    let data = path(dir.path(), "bas.csv");
    let gen = ["gen", "bars-stripes", "--size", "3", "-o", &data];
    boltzkit().args(gen).assert().success();
    let out = path(dir.path(), "m.safetensors");
    let fit = [
        "rbm",
        "fit",
        "--data",
        &data,
        "--hidden",
        "4",
        "--epochs",
        "2",
        "--max-abs-param",
        "inf",
        "-o",
        &out,
        "-q",
    ];
    boltzkit().args(fit).assert().success();
    let file = load_rbm(out.as_ref()).unwrap();
    let settings = &file.metadata["settings"];
    assert!(settings.contains(r#""max_abs_param":null"#), "{settings}");
    let back: RbmParams = boltzkit::settings::from_json("rbm", settings).unwrap();
    assert_eq!(back.train.max_abs_param, f32::INFINITY);
}
