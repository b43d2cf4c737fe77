//! The README's command blocks, run in a temporary directory: the command-line quick start and
//! the data commands as written, and the tour: every `boltzkit` line of its code block but the
//! `repro` ones, in order, shortened by flags only (fewer epochs, units, AIS steps, estimates;
//! see [`shorten`]). Data sets named by `--data NAME[:split]` come from the registry's mirror
//! (`shared/data` beside the checkout, and in CI) into the tests' cache; without the mirror the
//! lines naming a data set are skipped, with the lines that use their outputs.

mod common;

use boltzkit::data::registry;
use common::{boltzkit, shared_data};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Flags whose value the test lowers to at most this (numbers only).
const CAPS: [(&str, u64); 9] = [
    ("--epochs", 1),
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
    ("rbm fit", &["--epochs", "1"]),
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

/// The commands of the first `sh` code block after `heading`: continuation lines joined,
/// comments dropped, the leading `boltzkit` removed.
fn block_commands(readme: &str, heading: &str) -> Vec<Vec<String>> {
    let start = readme
        .find(heading)
        .unwrap_or_else(|| panic!("no section {heading}"));
    let block = &readme[start..];
    let open = block.find("```sh\n").expect("a code block") + 6;
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
    let mut commands = Vec::new();
    for line in joined {
        let code = line.split(" #").next().unwrap_or("").trim();
        if code.is_empty() || code.starts_with('#') {
            continue;
        }
        let words: Vec<String> = code.split_whitespace().map(str::to_string).collect();
        assert_eq!(words[0], "boltzkit", "a line that is not a command: {line}");
        commands.push(words[1..].to_vec());
    }
    commands
}

/// Whether `args` name a registry data set as a data file (`--data NAME[:split]`, `--test`,
/// `--valid`, or a data set argument of `data fetch` / `data path`) that is not a file in
/// `dir`.
fn names_a_data_set(args: &[String], dir: &Path) -> bool {
    let named = |v: &String| registry::parse_spec(v).is_some() && !dir.join(v).exists();
    let data_verb = args[0] == "data" && args.get(1).is_some_and(|v| v != "list");
    args.windows(2)
        .any(|w| ["--data", "--test", "--valid"].contains(&w[0].as_str()) && named(&w[1]))
        || (data_verb && args[2..].iter().any(named))
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

/// Runs `commands` in `dir` (shortened by [`shorten`] when `short`), skipping those that name
/// a data set when there is no mirror, and those reading an output of a skipped one; returns
/// how many ran and how many were skipped.
fn run_all(commands: Vec<Vec<String>>, dir: &Path, short: bool) -> (usize, usize) {
    let mirror = shared_data().is_some();
    let mut missing: BTreeSet<PathBuf> = BTreeSet::new();
    let (mut ran, mut skipped) = (0, 0);
    for args in commands {
        if args[0] == "repro" {
            continue;
        }
        let args = if short { shorten(args) } else { args };
        let reads_missing = (!mirror && names_a_data_set(&args, dir))
            || args.iter().any(|a| missing.contains(&dir.join(a)));
        if reads_missing {
            for w in args.windows(2) {
                if OUTPUTS.contains(&w[0].as_str()) {
                    missing.insert(dir.join(&w[1]));
                }
            }
            skipped += 1;
            continue;
        }
        let t0 = std::time::Instant::now();
        let out = boltzkit().current_dir(dir).args(&args).output().unwrap();
        eprintln!(
            "{:7.2} s  boltzkit {}",
            t0.elapsed().as_secs_f64(),
            args.join(" ")
        );
        assert!(
            out.status.success(),
            "boltzkit {} failed:\n{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    (ran, skipped)
}

fn readme() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join("README.md")).unwrap()
}

#[test]
fn the_readme_quick_start_and_data_commands_run_as_written() {
    let readme = readme();
    let dir = tempfile::tempdir().unwrap();
    let quick = block_commands(&readme, "### Command line quick start");
    assert_eq!(quick.len(), 5, "five lines: {quick:?}");
    let data = block_commands(&readme, "## Data by name");
    let (ran, skipped) = run_all(quick.into_iter().chain(data).collect(), dir.path(), false);
    eprintln!("README quick start and data commands: {ran} run, {skipped} skipped (no mirror)");
    if shared_data().is_some() {
        assert_eq!(skipped, 0);
        assert!(dir.path().join("nltcs-rbm.safetensors").exists());
    }
}

#[test]
fn the_readme_tour_runs_as_written() {
    let commands = block_commands(&readme(), "## A tour of the commands");
    assert!(commands.len() >= 30, "{} tour commands", commands.len());
    let dir = tempfile::tempdir().unwrap();
    let (ran, skipped) = run_all(commands, dir.path(), true);
    eprintln!("README tour: {ran} commands run, {skipped} skipped for missing shared data");
    assert!(ran >= 20, "only {ran} tour commands ran");
    if shared_data().is_some() {
        assert_eq!(skipped, 0);
    }
    for made in [
        "bas.csv",
        "train.csv",
        "valid.csv",
        "csdcp-bas.safetensors",
        "csdcp-bas-filters.png",
    ] {
        assert!(dir.path().join(made).exists(), "the tour made no {made}");
    }
}
