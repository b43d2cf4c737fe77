//! Helpers shared by the end-to-end tests (each test file includes this module with
//! `mod common;`; a file uses only some of them, hence the `dead_code` allowance).
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::Path;

/// The `boltzkit` binary under test, with the data registry's cache in the target folder (not
/// the user's cache directory) and the network off: data sets come from the mirror
/// (`shared/data` beside the repository, or the test's own `BOLTZKIT_DATA_MIRROR`).
pub fn boltzkit() -> Command {
    let mut cmd = Command::cargo_bin("boltzkit").unwrap();
    cmd.env(
        "BOLTZKIT_DATA",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/data-cache"),
    )
    .env("BOLTZKIT_OFFLINE", "1")
    .env_remove("BOLTZKIT_DATA_MIRROR")
    .env_remove("BOLTZKIT_DATA_DIR");
    cmd
}

/// `shared/data` beside the repository (the data registry's mirror here), when this checkout
/// has one.
pub fn shared_data() -> Option<std::path::PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|a| a.join("shared/data"))
        .find(|p| p.join("caltech101_silhouettes").is_dir())
}

/// The one JSON object a `--json` run prints on stdout.
pub fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).expect("one JSON object on stdout")
}

/// Runs `cmd`, asserts that it succeeded (showing its stderr if not) and returns the JSON
/// object it printed on stdout.
pub fn success_json(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out.stdout)
}

/// `dir/name` as a string argument.
pub fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// The 3×3 bars-and-stripes process written as `dir/bas.csv`: every bars and every stripes
/// pattern of the 8 row (column) subsets, 16 rows (the 14 distinct patterns, all-off and
/// all-on twice), 9 visible units.
pub fn bars_and_stripes(dir: &Path) -> String {
    let mut rows = Vec::new();
    for mask in 0u32..8 {
        let bits: Vec<u8> = (0..3).map(|i| ((mask >> i) & 1) as u8).collect();
        let bars: Vec<u8> = (0..9).map(|p| bits[p % 3]).collect();
        let stripes: Vec<u8> = (0..9).map(|p| bits[p / 3]).collect();
        for r in [bars, stripes] {
            let line: Vec<String> = r.iter().map(|x| x.to_string()).collect();
            rows.push(line.join(","));
        }
    }
    let p = path(dir, "bas.csv");
    std::fs::write(&p, rows.join("\n") + "\n").unwrap();
    p
}

/// The bracket columns of a CSV row: (RAISE, its se, forward AIS, its se, verdict), checked:
/// the ends are ordered within 3 standard errors of their difference unless the verdict says
/// the bracket is inverted.
pub fn bracket_of(header: &str, line: &str) -> (f64, f64, f64, f64, String) {
    let names: Vec<&str> = header.split(',').collect();
    let fields: Vec<&str> = line.split(',').collect();
    let get = |name: &str| fields[names.iter().position(|n| *n == name).unwrap()];
    let num = |name: &str| get(name).parse::<f64>().unwrap();
    let b = (
        num("raise"),
        num("raise_se"),
        num("ais"),
        num("ais_se"),
        get("verdict").to_string(),
    );
    let ordered = b.0 <= b.2 + 3.0 * b.1.hypot(b.3);
    assert!(
        ["consistent", "wide", "inverted"].contains(&b.4.as_str()),
        "{line}"
    );
    assert_eq!(ordered, b.4 != "inverted", "{line}");
    b
}
