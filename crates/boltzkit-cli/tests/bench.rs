//! End-to-end tests of `boltzkit bench`: each verb runs, reports its timings and the figure
//! it computed, and rejects impossible settings.

mod common;

use common::*;

fn times_are_consistent(v: &serde_json::Value, runs: u64) {
    assert_eq!(v["runs"], runs);
    let (min, median) = (
        v["min_s"].as_f64().unwrap(),
        v["median_s"].as_f64().unwrap(),
    );
    assert!(min > 0.0 && min <= median, "{v}");
    assert_eq!(v["runs_s"].as_array().unwrap().len() as u64, runs);
}

#[test]
fn exact_logz_times_the_enumeration() {
    let v = success_json(
        boltzkit()
            .args(["bench", "exact-logz", "--visible", "12", "--hidden", "5"])
            .args(["--repeats", "2", "--seed", "3", "--json", "-q"]),
    );
    times_are_consistent(&v, 2);
    // ln Z of a 12 × 5 RBM lies between the log of its state count and that of the largest
    // term: at least (12 + 5) ln 2 − |energy| bounds, here simply finite and above 0
    assert!(v["log_z"].as_f64().unwrap() > 0.0, "{v}");
}

#[test]
fn ais_and_epoch_timings_run() {
    let v = success_json(
        boltzkit()
            .args([
                "bench",
                "ais",
                "--visible",
                "20",
                "--hidden",
                "6",
                "--chains",
                "8",
            ])
            .args(["--steps", "50", "--seed", "4", "--json", "-q"]),
    );
    times_are_consistent(&v, 1);
    assert_eq!(
        (v["chains"].as_u64(), v["steps"].as_u64()),
        (Some(8), Some(50))
    );

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("x.csv");
    let rows: Vec<String> = (0..40)
        .map(|i| {
            (0..10)
                .map(|j| if (i * 7 + j * 3) % 5 < 2 { "1" } else { "0" })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    std::fs::write(&data, rows.join("\n") + "\n").unwrap();
    let v = success_json(
        boltzkit()
            .args(["bench", "rbm-epoch", "--data", data.to_str().unwrap()])
            .args([
                "--hidden",
                "4",
                "--batch-size",
                "10",
                "--repeats",
                "2",
                "--seed",
                "5",
            ])
            .args(["--json", "-q"]),
    );
    times_are_consistent(&v, 2);
    assert_eq!(v["algo"], "pcd");

    boltzkit()
        .args([
            "bench",
            "exact-logz",
            "--visible",
            "4",
            "--hidden",
            "2",
            "--repeats",
            "0",
        ])
        .assert()
        .code(2);
}
