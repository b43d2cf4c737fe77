//! End-to-end tests of Gaussian visible units beyond fitting: `rbm sample --sampler
//! gibbs-langevin` (Liao et al. 2022) against the exact moments of an enumerable model.

mod common;

use boltzkit::rbm::units::VARIANCE_BOUNDS;
use boltzkit::rbm::units::{save_unit_rbm, Bernoulli, Bounded, Gaussian, UnitRbm, Units};
use common::*;
use std::collections::BTreeMap;
use std::path::Path;

const B: [f64; 2] = [0.5, -0.3];
const VAR: [f64; 2] = [0.4, 1.2];
const C: [f64; 3] = [-0.5, 0.3, 0.1];
/// `W[i][j]`, visible `i`, hidden `j`: the 3.0 separates two modes of `v_0`.
const W: [[f64; 3]; 2] = [[3.0, -1.0, 0.5], [0.8, 1.2, -1.5]];

/// Two Gaussian visible units, three Bernoulli hidden units, written to `dir/g.safetensors`.
fn model_file(dir: &Path) -> String {
    let (lo, hi) = VARIANCE_BOUNDS;
    let f = |x: &[f64]| x.iter().map(|&v| v as f32).collect::<Vec<f32>>();
    let g = Gaussian::new(f(&B), f(&VAR), Bounded::new(lo, hi).unwrap()).unwrap();
    let h = Bernoulli::new(f(&C)).unwrap();
    let w: Vec<f32> = W.iter().flatten().map(|&x| x as f32).collect();
    let m = UnitRbm::new(Units::Gaussian(g), Units::Bernoulli(h), w).unwrap();
    let p = path(dir, "g.safetensors");
    save_unit_rbm(Path::new(&p), &m, &BTreeMap::new()).unwrap();
    p
}

/// Exact `[E v_0, E v_1, E v_0², E v_1²]` by enumerating `h`, written out (not the library's):
/// `p(h) ∝ exp(c·h + Σ_i σ²_i (b_i + (Wh)_i)² / 2)`, `v | h ~ N(σ²(b + Wh), σ²)`.
fn exact_moments() -> [f64; 4] {
    let (mut z, mut mom) = (0.0, [0.0f64; 4]);
    for s in 0..8u32 {
        let h: Vec<f64> = (0..3).map(|j| f64::from((s >> j) & 1)).collect();
        let a: Vec<f64> = (0..2)
            .map(|i| B[i] + (0..3).map(|j| W[i][j] * h[j]).sum::<f64>())
            .collect();
        let logw = (0..3).map(|j| C[j] * h[j]).sum::<f64>()
            + (0..2).map(|i| VAR[i] * a[i] * a[i] / 2.0).sum::<f64>();
        let p = logw.exp();
        for i in 0..2 {
            let mu = VAR[i] * a[i];
            mom[i] += p * mu;
            mom[2 + i] += p * (VAR[i] + mu * mu);
        }
        z += p;
    }
    mom.map(|x| x / z)
}

/// `rbm sample` of the model with `extra` flags: its summary and the rows drawn.
fn sample(dir: &Path, model: &str, extra: &[&str]) -> (serde_json::Value, Vec<f64>) {
    let out = path(dir, "s.npy");
    let mut args = vec![
        "rbm",
        "sample",
        "--model",
        model,
        "-n",
        "4000",
        "--gibbs-steps",
        "30",
        "-o",
        &out,
        "--seed",
        "5",
        "--json",
        "-q",
    ];
    args.extend_from_slice(extra);
    let summary = success_json(boltzkit().args(&args));
    let (shape, values) = boltzkit::data::read_npy_f64(Path::new(&out)).unwrap();
    assert_eq!(shape, [4000, 2]);
    (summary, values)
}

/// The moments of sampled rows, as [`exact_moments`].
fn moments(rows: &[f64]) -> [f64; 4] {
    let mut mom = [0.0f64; 4];
    for r in rows.chunks_exact(2) {
        for i in 0..2 {
            mom[i] += r[i];
            mom[2 + i] += r[i] * r[i];
        }
    }
    mom.map(|x| x / (rows.len() / 2) as f64)
}

#[test]
fn gibbs_langevin_samples_match_the_exact_moments_and_is_refused_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let model = model_file(dir.path());
    let want = exact_moments();
    let (gibbs, plain) = sample(dir.path(), &model, &[]);
    assert!(gibbs.get("langevin_acceptance").is_none());
    let (s, rows) = sample(
        dir.path(),
        &model,
        &[
            "--sampler",
            "gibbs-langevin",
            "--langevin-steps",
            "4",
            "--langevin-step-size",
            "0.5",
        ],
    );
    assert_eq!(s["method"], "gibbs-langevin");
    let acc = s["langevin_acceptance"].as_f64().unwrap();
    assert!(acc > 0.2 && acc < 1.0, "acceptance {acc}");
    assert_ne!(rows, plain, "the Langevin steps moved the chains");
    eprintln!(
        "exact {want:.4?}, gibbs {:.4?}, gibbs-langevin {:.4?} (acceptance {acc:.3})",
        moments(&plain),
        moments(&rows)
    );
    // 4,000 chains: each moment's standard error is below 0.04 here
    for (got, label) in [(moments(&plain), "gibbs"), (moments(&rows), "langevin")] {
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 0.15, "{label}: {got:?} vs exact {want:?}");
        }
    }
    // the Langevin flags alone, and the sampler on a non-Gaussian model, are refused
    let refused = |args: &[&str], text: &str| {
        let out = boltzkit().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(text), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    };
    let o = path(dir.path(), "x.npy");
    refused(
        &[
            "rbm",
            "sample",
            "--model",
            &model,
            "--langevin-steps",
            "3",
            "-o",
            &o,
        ],
        "need --sampler gibbs-langevin",
    );
    let bin = path(dir.path(), "b.safetensors");
    success_json(boltzkit().args([
        "rbm",
        "fit",
        "--data",
        &bars_and_stripes(dir.path()),
        "--hidden",
        "2",
        "--epochs",
        "1",
        "-o",
        &bin,
        "--json",
        "-q",
    ]));
    refused(
        &[
            "rbm",
            "sample",
            "--model",
            &bin,
            "--sampler",
            "gibbs-langevin",
            "-o",
            &o,
        ],
        "needs Gaussian visible units",
    );
}
