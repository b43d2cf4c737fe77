//! `boltzkit data list|fetch|path` and `--data NAME[:split]`: data sets by name, fetched from
//! a mirror folder into a cache, verified; a corrupted cached copy fetched again; no source, one
//! line saying what to do.

mod common;

use common::{boltzkit, json, shared_data, success_json};

#[test]
fn list_names_every_data_set_and_one_set_with_urls_and_checksums() {
    let out = boltzkit().args(["data", "list"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "binarized_mnist",
        "mnist",
        "caltech101",
        "alphadigits",
        "nltcs",
        "pf00014",
    ] {
        assert!(text.lines().any(|l| l.starts_with(name)), "{name}: {text}");
    }
    let v = success_json(boltzkit().args(["data", "list", "nltcs", "--json"]));
    let files = v["dataset"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!(files[0]["sha256"].as_str().unwrap().len(), 64);
    assert!(files[0]["url"].as_str().unwrap().contains("DEBD"));
    let out = boltzkit().args(["data", "list", "nltcz"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn fetch_verifies_caches_and_replaces_a_corrupted_copy() {
    let Some(mirror) = shared_data() else {
        eprintln!("shared/data not found beside the repository: test not run");
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let fetch = || {
        let mut cmd = boltzkit();
        cmd.env("BOLTZKIT_DATA", cache.path())
            .args(["data", "fetch", "nltcs", "--mirror"])
            .arg(&mirror)
            .arg("--json");
        success_json(&mut cmd)
    };
    let origins = |v: &serde_json::Value| -> Vec<String> {
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["origin"].as_str().unwrap().to_string())
            .collect()
    };
    let first = fetch();
    assert_eq!(origins(&first).len(), 3);
    assert!(origins(&first)
        .iter()
        .all(|o| o.starts_with("copied from the mirror")));
    for f in first["files"].as_array().unwrap() {
        let rel = f["file"].as_str().unwrap();
        let got = std::fs::read(f["path"].as_str().unwrap()).unwrap();
        assert_eq!(got, std::fs::read(mirror.join(rel)).unwrap(), "{rel}");
    }
    assert!(origins(&fetch()).iter().all(|o| o == "already cached"));

    let test_file = cache.path().join("debd/nltcs/nltcs.test.data.gz");
    let mut bytes = std::fs::read(&test_file).unwrap();
    bytes[40] ^= 0x55;
    std::fs::write(&test_file, &bytes).unwrap();
    let fixed = origins(&fetch());
    assert_eq!(
        fixed
            .iter()
            .filter(|o| o.contains("replacing a corrupted copy") && o.contains("sha256"))
            .count(),
        1,
        "{fixed:?}"
    );
    assert_eq!(
        std::fs::read(&test_file).unwrap(),
        std::fs::read(mirror.join("debd/nltcs/nltcs.test.data.gz")).unwrap()
    );

    // `data path` prints the cached split, for scripts
    let out = boltzkit()
        .env("BOLTZKIT_DATA", cache.path())
        .args(["data", "path", "nltcs:test"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        test_file.display().to_string()
    );
}

#[test]
fn no_source_is_one_line_saying_what_to_do() {
    let cache = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let out = boltzkit()
        .env("BOLTZKIT_DATA", cache.path())
        .args(["data", "fetch", "nltcs", "--mirror"])
        .arg(empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("BOLTZKIT_DATA_MIRROR=DIR") && err.contains("BOLTZKIT_OFFLINE"),
        "{err}"
    );
    assert!(err.contains(&empty.path().display().to_string()), "{err}");

    // --data NAME with no source: the same line, exit 1, nothing written
    let dir = tempfile::tempdir().unwrap();
    let out = boltzkit()
        .env("BOLTZKIT_DATA", cache.path())
        .env("BOLTZKIT_DATA_MIRROR", empty.path())
        .args(["rbm", "fit", "--data", "nltcs", "--hidden", "2", "-o"])
        .arg(dir.path().join("m.safetensors"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: --data nltcs: data set nltcs"),
        "{err}"
    );
    assert!(err.contains("BOLTZKIT_DATA_MIRROR=DIR"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn every_data_flag_takes_a_name_and_a_split() {
    if shared_data().is_none() {
        eprintln!("shared/data not found beside the repository: test not run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.safetensors");
    // the mirror is found as shared/data beside the repository, the cache is the tests'
    let v = success_json(
        boltzkit()
            .args(["rbm", "fit", "--data", "nltcs", "--valid", "nltcs:valid"])
            .args([
                "--hidden", "4", "--epochs", "1", "--seed", "1", "--json", "-q", "-o",
            ])
            .arg(&model),
    );
    assert!(
        v["data"].as_str().unwrap().ends_with("nltcs.train.data.gz"),
        "{v}"
    );
    let v = success_json(
        boltzkit()
            .args(["rbm", "eval", "--data", "nltcs:test", "--method", "exact"])
            .args(["--json", "-q", "--model"])
            .arg(&model),
    );
    assert!(
        v["data"].as_str().unwrap().ends_with("nltcs.test.data.gz"),
        "{v}"
    );
    let v = success_json(
        boltzkit()
            .args(["fvbm", "fit", "--data", "nltcs:valid", "--algo", "newton"])
            .args(["--json", "-q"]),
    );
    assert_eq!(v["vars"], 16, "{v}");
    // an unknown split is a usage error naming the splits
    let out = boltzkit()
        .args(["rbm", "eval", "--data", "nltcs:tset", "--model"])
        .arg(&model)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("train, valid, test"), "{err}");
    // a path that exists is a path, even when it is also a name
    std::fs::write(dir.path().join("nltcs"), "0,1,1\n1,0,1\n1,1,0\n0,0,1\n").unwrap();
    // (a file without a known extension: the reader refuses it by its name)
    let out = boltzkit()
        .current_dir(dir.path())
        .args(["fvbm", "fit", "--data", "nltcs", "--json", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let msg = json(&out.stdout)["error"].as_str().unwrap().to_string();
    assert!(msg.starts_with("nltcs: unsupported format"), "{msg}");
}
