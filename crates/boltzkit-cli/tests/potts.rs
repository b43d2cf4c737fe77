//! `boltzkit potts`: the DCA pipeline end to end, and every bad alignment refused with exit 2,
//! one line and nothing written.

mod common;

use common::{boltzkit, path, success_json};
use std::path::{Path, PathBuf};

/// The shared data folder (`BOLTZKIT_DATA_DIR`, else `shared/data` beside the checkout or
/// one of its parents), or `None`: the real-data tests then skip.
fn dca_data() -> Option<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::env::var_os("BOLTZKIT_DATA_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            here.ancestors()
                .skip(1)
                .take(4)
                .map(|a| a.join("shared/data")),
        )
        .map(|d| d.join("dca"))
        .find(|d| d.is_dir())
}

/// A bad alignment: file, bytes, flags, message, whether `potts weights` refuses it too.
type BadCase = (
    &'static str,
    &'static [u8],
    &'static [&'static str],
    &'static str,
    bool,
);

#[test]
fn every_bad_alignment_exits_2_with_one_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[BadCase] = &[
        (
            "ragged.fa",
            b">a\nACDE\n>b\nACD\n",
            &[],
            "expected 4 letters in every sequence",
            true,
        ),
        (
            "unknown.fa",
            b">a\nACDE\n>b\nACZE\n",
            &[],
            "found \"Z\" in sequence b",
            true,
        ),
        ("empty.fa", b"", &[], "expected at least one sequence", true),
        (
            "dup.fa",
            b">a\nACDE\n>a\nACDE\n",
            &[],
            "a second sequence named a",
            true,
        ),
        (
            "focus.fa",
            b">a\nACDE\n>b\nACDE\n",
            &["--focus", "zz"],
            "a sequence named zz",
            true,
        ),
        (
            "numbers.csv",
            b"0,1,0\n1,1,0\n",
            &[],
            "expected a FASTA header line starting with '>'",
            true,
        ),
        (
            "binary.fa",
            b">a\nAC\x00\x07\xff\n",
            &[],
            "found binary data (byte 0x00",
            true,
        ),
        (
            "corrupt.fa.gz",
            b"\x1f\x8b\x08\x00garbage",
            &[],
            "expected a complete gzip stream",
            true,
        ),
        (
            "one.fa",
            b">a\nACDE\n",
            &[],
            "expected at least 2 sequences to fit a model, found 1",
            false,
        ),
        (
            "gapcol.fa",
            b">a\nA-DE\n>b\nC-DE\n>c\nA--E\n",
            &[],
            "found column 2 (position 2) holding only gaps in all 3 sequences",
            false,
        ),
    ];
    refused_with_nothing_written(dir.path(), cases);
}

#[test]
fn bad_stockholm_and_a2m_alignments_exit_2_with_one_line_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    macro_rules! sto {
        ($body:literal) => {
            concat!("# STOCKHOLM 1.0\n", $body).as_bytes()
        };
    }
    let cases: &[BadCase] = &[
        (
            "ragged.sto",
            sto!("a ACDE\nb ACD\n//\n"),
            &[],
            "expected 4 letters in every sequence",
            true,
        ),
        (
            "unknown.sto",
            sto!("a ACDE\nb ACZE\n//\n"),
            &[],
            "found \"Z\" in sequence b",
            true,
        ),
        (
            "empty.sto",
            sto!("//\n"),
            &[],
            "expected at least one sequence",
            true,
        ),
        (
            "dup.sto",
            sto!("a ACDE\na ACDE\n//\n"),
            &[],
            "a second sequence named a",
            true,
        ),
        (
            "focus.sto",
            sto!("a ACDE\nb ACDE\n//\n"),
            &["--focus", "zz"],
            "a sequence named zz",
            true,
        ),
        (
            "truncated.sto",
            sto!("a ACDE\nb ACDE\n"),
            &[],
            "expected the end line '//'",
            true,
        ),
        (
            "ragged.a2m",
            b">a\nACDE\n>b\nACDEf\n",
            &[],
            "expected 4 letters in every sequence",
            true,
        ),
        (
            "unknown.a2m",
            b">a\nACDE\n>b\nAcZE\n",
            &[],
            "found \"Z\" in sequence b",
            true,
        ),
        (
            "empty.a2m",
            b"\n",
            &[],
            "expected at least one sequence",
            true,
        ),
        (
            "dup.a2m",
            b">a\nACDE\n>a\nAcDE\n",
            &[],
            "a second sequence named a",
            true,
        ),
        (
            "focus.a2m",
            b">a\nACDE\n>b\nAcDE\n",
            &["--focus", "zz"],
            "a sequence named zz",
            true,
        ),
        (
            "lowerfocus.a2m",
            b">a\nacde\n>b\nACDE\n",
            &["--focus", "a"],
            "the focus a has no uppercase letter",
            true,
        ),
    ];
    refused_with_nothing_written(dir.path(), cases);
}

/// Runs `potts fit` (and `potts weights` where the case says so) on each bad alignment:
/// exit 2, one line on stderr naming the file and holding the message, no output file.
fn refused_with_nothing_written(dir: &Path, cases: &[BadCase]) {
    for (name, text, extra, message, both) in cases {
        let data = path(dir, name);
        std::fs::write(&data, text).unwrap();
        let verbs: &[&str] = if *both { &["fit", "weights"] } else { &["fit"] };
        for verb in verbs {
            let out_name = if *verb == "fit" {
                format!("{name}.out.safetensors")
            } else {
                format!("{name}.out.txt")
            };
            let output = path(dir, &out_name);
            let mut cmd = boltzkit();
            cmd.args(["potts", verb, "--data", &data, "-o", &output]);
            if *verb == "fit" {
                cmd.args(["--couplings", &path(dir, &format!("{name}.c"))]);
            }
            let out = cmd.args(*extra).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{verb} {name}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{verb} {name}: {stderr}");
            assert!(stderr.starts_with("error: "), "{stderr}");
            assert!(
                stderr.contains(message) && stderr.contains(name),
                "{stderr}"
            );
            assert!(
                !Path::new(&output).exists(),
                "{verb} {name} wrote its output"
            );
        }
    }
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".out") || n.ends_with(".c"))
        .collect();
    assert!(names.is_empty(), "written: {names:?}");
}

#[test]
fn outputs_are_checked_before_work() {
    let dir = tempfile::tempdir().unwrap();
    let data = path(dir.path(), "a.fa");
    std::fs::write(&data, ">a\nACDE\n>b\nACDE\n").unwrap();
    let out = boltzkit()
        .args([
            "potts",
            "fit",
            "--data",
            &data,
            "-o",
            &path(dir.path(), "m.npy"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = boltzkit()
        .args(["potts", "fit", "--data", &data, "--couplings", &data])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is the input"));
    assert_eq!(
        std::fs::read_to_string(&data).unwrap(),
        ">a\nACDE\n>b\nACDE\n"
    );
    let out = boltzkit()
        .args(["potts", "fit", "--data", &data])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to write"));
}

#[test]
fn dhfr_weights_file_equals_plmc() {
    let Some(d) = dca_data() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "w.txt");
    let s = success_json(boltzkit().args([
        "potts",
        "weights",
        "--data",
        &d.join("DHFR.a2m").display().to_string(),
        "--focus",
        "DYR_ECOLI",
        "--skip-unknown",
        "-o",
        &out,
        "--json",
    ]));
    assert_eq!(
        (s["sequences"].as_u64(), s["kept"].as_u64()),
        (Some(3629), Some(3616))
    );
    let ours = std::fs::read(&out).unwrap();
    let plmc = std::fs::read(d.join("DHFR.plmc.weights.txt")).unwrap();
    assert!(ours == plmc, "weights differ from plmc's file");
}

/// potts3 (a 3-state chain of 60 sites whose couplings join neighbours): the two commands,
/// the scores verb, the samples' statistics and the energies.
#[test]
fn potts3_chain_from_alignment_to_precision_and_png() {
    let Some(d) = dca_data() else { return };
    let dir = tempfile::tempdir().unwrap();
    let aln = d.join("potts3.a2m").display().to_string();
    let (model, couplings) = (path(dir.path(), "m.safetensors"), path(dir.path(), "c.txt"));
    // plmc's example: -a _*^ -t -1 -le 1.0 -lh 1.0
    let fit = success_json(boltzkit().args([
        "potts",
        "fit",
        "--data",
        &aln,
        "--alphabet",
        "_*^",
        "--no-weights",
        "--lambda-j",
        "1",
        "--lambda-h",
        "1",
        "-o",
        &model,
        "--couplings",
        &couplings,
        "--json",
    ]));
    assert_eq!(
        (fit["sequences"].as_u64(), fit["sites"].as_u64()),
        (Some(500), Some(60))
    );
    // The true contacts of the chain: neighbours, at any separation of 1.
    let distances = path(dir.path(), "d.dat");
    let mut text = String::new();
    for i in 1..=60 {
        for j in i + 1..=60 {
            text.push_str(&format!(
                "{i} {j} {}\n",
                if j == i + 1 { 3.8 } else { 20.0 }
            ));
        }
    }
    std::fs::write(&distances, text).unwrap();
    let png = path(dir.path(), "map.png");
    let c = success_json(boltzkit().args([
        "potts",
        "contacts",
        "--couplings",
        &couplings,
        "--distances",
        &distances,
        "--min-separation",
        "1",
        "--png",
        &png,
        "--json",
    ]));
    let at_l = c["precision"][2]["precision"].as_f64().unwrap();
    assert_eq!(
        (c["length"].as_u64(), c["precision"][2]["k"].as_u64()),
        (Some(60), Some(60))
    );
    assert!(at_l > 0.95, "precision at L {at_l}");
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    // The scores verb writes what the fit wrote.
    let again = path(dir.path(), "c2.txt");
    boltzkit()
        .args(["potts", "scores", "--model", &model, "-o", &again, "-q"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&couplings).unwrap()
    );
    // Samples reproduce the data's connected correlations (the chain's couplings; λ_h = 1
    // shrinks the fields, so the one-site frequencies are not the check here).
    let s = success_json(boltzkit().args([
        "potts",
        "sample",
        "--model",
        &model,
        "-n",
        "500",
        "--burn-in",
        "50",
        "--thin",
        "2",
        "-o",
        &path(dir.path(), "s.fasta"),
        "--check",
        &aln,
        "--alphabet",
        "_*^",
        "--no-weights",
        "--seed",
        "1",
        "--json",
    ]));
    assert_eq!(s["sampler"], "gibbs");
    assert!(
        s["check"]["connected_correlations"].as_f64().unwrap() > 0.7,
        "{s}"
    );
    let fasta = std::fs::read_to_string(path(dir.path(), "s.fasta")).unwrap();
    assert_eq!(fasta.lines().count(), 1000);
    // Energies, one per sequence.
    let e = boltzkit()
        .args(["potts", "energy", "--model", &model, "--data", &aln])
        .output()
        .unwrap();
    assert!(e.status.success());
    assert_eq!(String::from_utf8_lossy(&e.stdout).lines().count(), 500);
}

/// A small protein family with known contacts, as the README's files: `N` sequences of 12
/// columns whose pairs (1, 7), (2, 9) and (4, 11) covary (the second letter follows the first
/// nine times in ten), gzipped FASTA; and its distances (5 Å for those pairs, 15 Å else).
fn synthetic_family(dir: &Path) {
    use std::io::Write;
    const LETTERS: &[u8] = b"ACDEFGHIKLMNPQRSTVWY";
    let mut state: u64 = 7;
    let mut next = |k: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % k
    };
    let mut text = String::new();
    for s in 0..300 {
        let mut row: Vec<usize> = (0..12).map(|_| next(20) as usize).collect();
        for (i, j) in [(0, 6), (1, 8), (3, 10)] {
            if next(10) < 9 {
                row[j] = (row[i] + 3) % 20;
            }
        }
        let letters: String = row.iter().map(|&k| LETTERS[k] as char).collect();
        text.push_str(&format!(">seq{s}\n{letters}\n"));
    }
    let file = std::fs::File::create(dir.join("PF00014_mgap6.fasta.gz")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap();
    let mut d = String::new();
    for i in 1..=12 {
        for j in i + 1..=12 {
            let near = [(1, 7), (2, 9), (4, 11)].contains(&(i, j));
            d.push_str(&format!("{i} {j} 0 {}\n", if near { 5.0 } else { 15.0 }));
        }
    }
    std::fs::write(dir.join("PF00014_struct.dat"), d).unwrap();
}

/// The README's two DCA commands, as written, on [`synthetic_family`] (in place of
/// `../shared/data/dca`): the precision table on stdout with the three contacts first, the
/// PNG and the model written.
#[test]
fn readme_dca_commands_run_as_written() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let section = &readme[readme.find("## Direct coupling analysis").unwrap()..];
    let open = section.find("```sh\n").unwrap() + 6;
    let block = &section[open..open + section[open..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    synthetic_family(&data);
    let mut ran = 0;
    let mut last = String::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(value) = line.strip_prefix("D=") {
            assert_eq!(value, "../shared/data/dca");
            continue;
        }
        let line = line.replace("$D", &data.display().to_string());
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], "boltzkit", "{line}");
        let out = boltzkit()
            .args(&words[1..])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{line}: {stderr}");
        last = String::from_utf8_lossy(&out.stdout).into_owned();
        ran += 1;
    }
    assert_eq!(ran, 2);
    let l5 = last.lines().find(|l| l.trim_start().starts_with("L/5"));
    assert_eq!(
        l5.map(|l| l.split_whitespace().collect::<Vec<_>>()),
        Some(vec!["L/5", "2", "2", "1.000"]),
        "{last}"
    );
    for written in ["pf14.safetensors", "pf14.couplings", "pf14.png"] {
        assert!(dir.path().join(written).is_file(), "{written}");
    }
}
