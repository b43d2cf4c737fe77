//! The fuzz smoke run: the seed corpus of every fuzz target (`fuzz/corpus/<target>/`), plus a
//! few thousand seeded mutations of it, through the reader or loader that target fuzzes. It
//! runs on stable with no fuzzing tool, in seconds; the long runs are `cargo fuzz` (see
//! `fuzz/README.md`). An `Err` is the expected answer to a bad file; a panic fails the test
//! and names the target, the seed file and the mutation.

use boltzkit::data::{read_dataset, Binarize, ReadOptions};
use boltzkit::rng::rng_from_seed;
use rand::Rng;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Mutations per seed file.
const MUTATIONS: usize = 250;

/// Each target: its corpus folder and the file name its inputs are read under.
const TARGETS: [(&str, &str); 6] = [
    ("read_npy", "in.npy"),
    ("read_csv", "in.csv"),
    ("read_idx", "in-idx1-ubyte"),
    ("read_amat", "in.amat"),
    ("read_gzip", "in.amat.gz"),
    ("load_model", "model.safetensors"),
];

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: empty corpus", dir.display());
    files
}

/// One random edit of `bytes`: flip a bit, set a byte to an interesting value, cut, repeat a
/// slice, or insert bytes.
fn mutate(bytes: &mut Vec<u8>, rng: &mut impl Rng) {
    const SPECIAL: [u8; 12] = [
        0, 1, 0x7f, 0x80, 0xff, b'-', b'9', b',', b'\t', b'\n', b'.', b'e',
    ];
    if bytes.is_empty() {
        bytes.push(SPECIAL[rng.random_range(0..SPECIAL.len())]);
        return;
    }
    let i = rng.random_range(0..bytes.len());
    match rng.random_range(0..5) {
        0 => bytes[i] ^= 1 << rng.random_range(0..8),
        1 => bytes[i] = SPECIAL[rng.random_range(0..SPECIAL.len())],
        2 => bytes.truncate(i),
        3 => {
            let end = (i + rng.random_range(1..=16)).min(bytes.len());
            let chunk = bytes[i..end].to_vec();
            let at = rng.random_range(0..=bytes.len());
            bytes.splice(at..at, chunk);
        }
        _ => {
            let n = rng.random_range(1..=8);
            let new: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            bytes.splice(i..i, new);
        }
    }
}

/// Feeds `bytes` to the target's reader or loaders; panics propagate.
fn feed(target: &str, path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
    if target == "load_model" {
        let _ = boltzkit::rbm::file::load_rbm(path);
        let _ = boltzkit::rbm::frank_wolfe::file::load_fw_model(path);
        let _ = boltzkit::fsll::FsllModel::load(path);
        let _ = boltzkit::fvbm::Fvbm::load(path);
    } else {
        let _ = read_dataset(path, &ReadOptions::default());
        let opts = ReadOptions::default().with_binarize(Binarize::Threshold(0.5));
        let _ = read_dataset(path, &opts);
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(bytes), &mut out).unwrap();
    out
}

#[test]
fn readers_and_loaders_survive_the_corpus_and_its_mutations() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = 0usize;
    for (t, (target, name)) in TARGETS.iter().enumerate() {
        let path: PathBuf = dir.path().join(name);
        let mut rng = rng_from_seed(0xF022 + t as u64);
        for (seed_name, seed) in corpus(target) {
            let run = |bytes: &[u8], what: &str| {
                let outcome = catch_unwind(AssertUnwindSafe(|| feed(target, &path, bytes)));
                assert!(
                    outcome.is_ok(),
                    "{target}: {seed_name} {what} panicked; input {bytes:?}"
                );
            };
            run(&seed, "as committed");
            // gzip inputs are mutated both as compressed bytes and under the compression
            let plain = (*target == "read_gzip").then(|| gunzip(&seed));
            for m in 0..MUTATIONS {
                let mut bytes = match &plain {
                    Some(p) if m % 2 == 0 => p.clone(),
                    _ => seed.clone(),
                };
                for _ in 0..rng.random_range(1..=4) {
                    mutate(&mut bytes, &mut rng);
                }
                if plain.is_some() && m % 2 == 0 {
                    bytes = gzip(&bytes);
                }
                run(&bytes, &format!("mutation {m}"));
                inputs += 1;
            }
        }
    }
    assert!(inputs >= 3000, "{inputs} inputs");
}

/// The inputs the long fuzz runs found (`fuzz/regressions/<target>/`), fixed since: each is
/// answered with an error, not a panic.
#[test]
fn fuzz_findings_stay_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let mut found = 0;
    for (target, name) in TARGETS {
        let Ok(entries) = std::fs::read_dir(root.join(target)) else {
            continue;
        };
        for entry in entries {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            let path = dir.path().join(name);
            feed(target, &path, &bytes);
            if target != "load_model" {
                assert!(read_dataset(&path, &ReadOptions::default()).is_err());
            }
            found += 1;
        }
    }
    assert!(found >= 1, "no regression inputs under {}", root.display());
}
