//! Twins of the effective couplings: the mixed second differences of `−F` of every mutated
//! data row, by the model's own free energy; Gaussian hidden units in closed form.

use super::super::twins::{layer_rows, normal_weights};
use super::super::{Bernoulli, Categorical, DRelu, Gaussian, Relu, UnitRbm, Units};
use super::*;
use crate::testutil::on_threads;

const Q: [usize; 3] = [3, 2, 3];

fn visible() -> Units {
    Units::Categorical(Categorical::new(Q.to_vec(), normal_weights(8, 0.5, 1)).unwrap())
}

fn hidden_layers() -> Vec<Units> {
    let g = Gaussian::standard(2).unwrap().bounds();
    vec![
        Units::DRelu(
            DRelu::new(
                vec![1.2, 0.8],
                vec![0.7, 1.5],
                vec![0.3, -0.2],
                vec![0.1, 0.4],
            )
            .unwrap(),
        ),
        Units::Bernoulli(Bernoulli::new(vec![0.3, -0.6]).unwrap()),
        Units::Relu(Relu::new(vec![1.1, 0.6], vec![-0.2, 0.5]).unwrap()),
        Units::Gaussian(Gaussian::new(vec![0.2, -0.1], vec![0.8, 1.3], g).unwrap()),
    ]
}

fn model(hidden: Units, seed: u64) -> UnitRbm {
    UnitRbm::new(visible(), hidden, normal_weights(8 * 2, 0.9, seed)).unwrap()
}

/// `J_ij` by brute force: `−F` of each row with sites `i, j` set to every `(a, b)`, weighted,
/// averaged, in the zero-sum gauge.
fn brute_force(m: &UnitRbm, rows: &[f32], a: &[f64], i: usize, j: usize) -> Vec<f64> {
    let off = [0, 3, 5, 8];
    let mut sum = vec![0.0; Q[i] * Q[j]];
    for (row, &p) in rows.chunks_exact(8).zip(a) {
        for s in 0..Q[i] {
            for t in 0..Q[j] {
                let mut v = row.to_vec();
                v[off[i]..off[i + 1]].fill(0.0);
                v[off[j]..off[j + 1]].fill(0.0);
                v[off[i] + s] = 1.0;
                v[off[j] + t] = 1.0;
                sum[s * Q[j] + t] += p * -m.free_energy(&v).unwrap();
            }
        }
    }
    let mean = |f: &dyn Fn(usize, usize) -> bool| {
        let (mut s, mut c) = (0.0, 0.0);
        for a in 0..Q[i] {
            for b in 0..Q[j] {
                if f(a, b) {
                    s += sum[a * Q[j] + b];
                    c += 1.0;
                }
            }
        }
        s / c
    };
    let all = mean(&|_, _| true);
    (0..Q[i] * Q[j])
        .map(|k| {
            let (s, t) = (k / Q[j], k % Q[j]);
            sum[k] - mean(&|a, _| a == s) - mean(&|_, b| b == t) + all
        })
        .collect()
}

fn rows_and_weights() -> (Vec<f32>, Vec<f64>) {
    let rows = layer_rows(&visible(), 7, 3);
    let a: Vec<f64> = (0..7).map(|r| 0.5 + (r as f64 * 0.9).sin().abs()).collect();
    (rows, a)
}

#[test]
fn exact_couplings_match_second_differences_of_the_free_energy() {
    let (rows, a) = rows_and_weights();
    let total: f64 = a.iter().sum();
    let scaled: Vec<f64> = a.iter().map(|x| x / total).collect();
    for (k, hidden) in hidden_layers().into_iter().enumerate() {
        let m = model(hidden, 10 + k as u64);
        let exact = CouplingParams { bins: 0 };
        let got = effective_couplings(&m, &rows, Some(&a), &exact).unwrap();
        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
            let want = brute_force(&m, &rows, &scaled, i, j);
            let block = got.block(i, j);
            let scale = want.iter().fold(0.1f64, |s, x| s.max(x.abs()));
            for (g, w) in block.iter().zip(&want) {
                assert!(
                    (g - w).abs() < 2e-5 * scale,
                    "{} ({i}, {j}): {g} vs {w}",
                    m.hidden().kind()
                );
            }
        }
        // many bins: each row alone in a bin, its value within half a bin of the centre
        let fine =
            effective_couplings(&m, &rows, Some(&a), &CouplingParams { bins: 100_000 }).unwrap();
        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
            for (f, e) in fine.block(i, j).iter().zip(got.block(i, j)) {
                assert!((f - e).abs() < 1e-3 * e.abs().max(0.1), "{f} vs {e}");
            }
        }
    }
}

#[test]
fn gaussian_hidden_units_give_hopfield_potts_couplings_for_any_bins() {
    let (rows, _) = rows_and_weights();
    let m = model(hidden_layers().remove(3), 7);
    let Units::Gaussian(g) = m.hidden() else {
        unreachable!()
    };
    let off = [0, 3, 5, 8];
    for bins in [0, 1, 3] {
        let got = effective_couplings(&m, &rows, None, &CouplingParams { bins }).unwrap();
        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
            // W_ia σ² W_jb summed over the hidden units, then gauged
            let mut want: Vec<f64> = (0..Q[i] * Q[j])
                .map(|k| {
                    let (s, t) = (off[i] + k / Q[j], off[j] + k % Q[j]);
                    (0..2)
                        .map(|mu| {
                            f64::from(m.w()[s * 2 + mu])
                                * f64::from(m.w()[t * 2 + mu])
                                * f64::from(g.variance()[mu])
                        })
                        .sum()
                })
                .collect();
            zero_sum_gauge(&mut want, Q[i], Q[j]);
            for (x, y) in got.block(i, j).iter().zip(&want) {
                assert!((x - y).abs() < 1e-5, "bins {bins} ({i}, {j}): {x} vs {y}");
            }
        }
    }
}

#[test]
fn scores_name_the_coupled_pairs_and_threads_do_not_change_bits() {
    // site 1 carries no weight: its pairs have no coupling and a zero norm
    let mut w = normal_weights(16, 0.9, 4);
    w[6..10].fill(0.0);
    let m = UnitRbm::new(visible(), hidden_layers().remove(0), w).unwrap();
    let (rows, a) = rows_and_weights();
    let p = CouplingParams::default();
    let run = || effective_couplings(&m, &rows, Some(&a), &p).unwrap();
    let got = on_threads(1, run);
    assert_eq!(got, on_threads(3, run));
    let raw = ScoreParams {
        apc: false,
        exclude_gap: false,
    };
    let f = got.scores(None, &raw).unwrap();
    assert_eq!((f[[0, 1]], f[[1, 2]]), (0.0, 0.0));
    assert!(f[[0, 2]] > 0.0 && f[[0, 2]] == f[[2, 0]]);
    assert!(got
        .scores(
            Some(0),
            &ScoreParams {
                apc: true,
                exclude_gap: true
            }
        )
        .is_ok());
}

#[test]
fn refusals_say_what_is_wrong() {
    let (rows, a) = rows_and_weights();
    let p = CouplingParams::default();
    let bin = UnitRbm::new(
        Units::Bernoulli(Bernoulli::new(vec![0.0; 3]).unwrap()),
        hidden_layers().remove(0),
        vec![0.1; 6],
    )
    .unwrap();
    let e = effective_couplings(&bin, &[1.0, 0.0, 1.0], None, &p).unwrap_err();
    assert!(e.to_string().contains("categorical visible"), "{e}");
    let cat_hidden = UnitRbm::new(
        visible(),
        Units::Categorical(Categorical::new(vec![2], vec![0.0; 2]).unwrap()),
        vec![0.1; 16],
    )
    .unwrap();
    let e = effective_couplings(&cat_hidden, &rows, None, &p).unwrap_err();
    assert!(e.to_string().contains("scalar hidden"), "{e}");
    let m = model(hidden_layers().remove(0), 1);
    assert!(effective_couplings(&m, &rows[..5], None, &p).is_err());
    assert!(effective_couplings(&m, &rows, Some(&a[..3]), &p).is_err());
    let mut bad = rows.clone();
    bad[0] = 0.5;
    assert!(effective_couplings(&m, &bad, None, &p).is_err());
}
