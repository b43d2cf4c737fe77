//! The README's tour, run as written in a temporary directory: every `boltzkit` line of its
//! code block but the `repro` ones, in order, shortened by flags only (fewer epochs, units,
//! AIS steps, estimates; see [`shorten`]). Lines reading `../shared/data` run when that data
//! is there (it is beside a checkout, and in CI) and are skipped otherwise, with the lines
//! that use their outputs.

mod common;

use common::boltzkit;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Flags whose value the test lowers to at most this (numbers only).
const CAPS: [(&str, u64); 9] = [
    ("--epochs", 3),
    ("--max-units", 3),
    ("--eval-every", 1),
    ("--ais-steps", 50),
    ("--ais-chains", 20),
    ("--estimates", 300),
    ("--samples", 5000),
    ("--hidden", 20),
    ("--chains", 50),
];

/// Flags the test adds (when absent) to commands starting with these words.
const EXTRA: [(&str, &[&str]); 7] = [
    ("rbm fit", &["--epochs", "2"]),
    ("rbm fit --algo frank-wolfe", &["--chains", "50"]),
    ("rbm eval", &["--ais-steps", "50", "--ais-chains", "20"]),
    ("lab gradient", &["--burn-in", "20"]),
    ("bench ais", &["--ais-steps", "50", "--repeats", "1"]),
    ("bench rbm-epoch", &["--hidden", "20", "--repeats", "1"]),
    ("fvbm fit", &["--max-iterations", "20000"]),
];

/// Flags naming files a command writes.
const OUTPUTS: [&str; 6] = [
    "-o",
    "--truth",
    "--log",
    "--selected-output",
    "--checkpoint",
    "--save-model",
];

/// The commands of the tour's code block, continuation lines joined, comments dropped,
/// `NAME=value` lines applied (with `../shared` made absolute).
fn tour_commands(readme: &str, shared: &Path) -> Vec<Vec<String>> {
    let start = readme
        .find("## A tour of the commands")
        .expect("the tour section");
    let block = &readme[start..];
    let open = block.find("```sh\n").expect("the tour's code block") + 6;
    let close = open + block[open..].find("```").expect("its end");
    let mut joined = Vec::new();
    let mut pending = String::new();
    for line in block[open..close].lines() {
        match line.strip_suffix('\\') {
            Some(head) => pending.push_str(head),
            None => {
                pending.push_str(line);
                joined.push(std::mem::take(&mut pending));
            }
        }
    }
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    let mut commands = Vec::new();
    for line in joined {
        let code = line.split(" #").next().unwrap_or("").trim();
        if code.is_empty() || code.starts_with('#') {
            continue;
        }
        if let Some((name, value)) = code.split_once('=').filter(|(n, _)| !n.contains(' ')) {
            let value = value.replace("../shared", &shared.display().to_string());
            vars.insert(name.to_string(), value);
            continue;
        }
        let mut code = code.to_string();
        for (name, value) in &vars {
            code = code.replace(&format!("${{{name}}}"), value);
        }
        let words: Vec<String> = code
            .replace("../shared", &shared.display().to_string())
            .split_whitespace()
            .map(str::to_string)
            .collect();
        assert_eq!(
            words[0], "boltzkit",
            "a tour line that is not a command: {line}"
        );
        commands.push(words[1..].to_vec());
    }
    commands
}

/// The command with its flags lowered to [`CAPS`] and [`EXTRA`] added.
fn shorten(mut args: Vec<String>) -> Vec<String> {
    for i in 1..args.len() {
        if let Some((_, cap)) = CAPS.iter().find(|(flag, _)| *flag == args[i - 1]) {
            if args[i].parse::<u64>().is_ok_and(|v| v > *cap) {
                args[i] = cap.to_string();
            }
        }
    }
    let line = args.join(" ");
    for (prefix, extra) in EXTRA {
        if line.starts_with(prefix) && !args.iter().any(|a| a == extra[0]) {
            args.extend(extra.iter().map(|s| s.to_string()));
        }
    }
    args
}

#[test]
fn the_readme_tour_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let shared = root.join("../shared");
    let shared = shared.canonicalize().unwrap_or(shared);
    let commands = tour_commands(&readme, &shared);
    assert!(commands.len() >= 30, "{} tour commands", commands.len());
    let dir = tempfile::tempdir().unwrap();
    let mut missing: BTreeSet<PathBuf> = BTreeSet::new();
    let (mut ran, mut skipped) = (0, 0);
    for args in commands {
        if args[0] == "repro" {
            continue;
        }
        let args = shorten(args);
        let reads_missing = args.iter().any(|a| {
            let p = dir.path().join(a);
            (a.starts_with(&shared.display().to_string()) && !Path::new(a).exists())
                || missing.contains(&p)
        });
        if reads_missing {
            for w in args.windows(2) {
                if OUTPUTS.contains(&w[0].as_str()) {
                    missing.insert(dir.path().join(&w[1]));
                }
            }
            skipped += 1;
            continue;
        }
        let out = boltzkit()
            .current_dir(dir.path())
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "boltzkit {} failed:\n{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    eprintln!("README tour: {ran} commands run, {skipped} skipped for missing shared data");
    assert!(ran >= 20, "only {ran} tour commands ran");
    for made in [
        "bas.csv",
        "train.csv",
        "valid.csv",
        "rbm.safetensors",
        "filters.png",
    ] {
        assert!(dir.path().join(made).exists(), "the tour made no {made}");
    }
}
