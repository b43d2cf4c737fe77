//! The engine against brute force: objective and gradient by enumeration of each site's
//! states through the model's own log-potential, finite differences, thread-count
//! determinism, and the synthetic 3-state chain whose only couplings are neighbours'.

use super::data::PlmData;

use super::learner::initial_fields;
use super::symmetric::{Penalty, Symmetric};
use super::*;
use crate::data::Dataset;
use crate::fit::Learner;
use crate::potts::Potts;
use crate::rng::rng_from_seed;
use crate::testutil::on_threads;
use rand::Rng;

/// `Σ h + Σ J` over the sites that are not missing (code ≥ q_i).
fn log_potential_with_missing(m: &Potts, s: &[u8]) -> f64 {
    let q = m.states();
    let l = q.len();
    let mut v = 0.0;
    for i in (0..l).filter(|&i| (s[i] as usize) < q[i]) {
        v += m.field(i)[s[i] as usize];
        for j in (i + 1..l).filter(|&j| (s[j] as usize) < q[j]) {
            v += m.coupling(i, j)[s[i] as usize * q[j] + s[j] as usize];
        }
    }
    v
}

/// The penalized objective by brute force: each conditional from log-potentials of the
/// sequence with site `i` set to every state.
fn brute_objective(m: &Potts, data: &PlmData, p: Penalty) -> f64 {
    let q = m.states();
    let mut f = 0.0;
    for s in 0..data.n_rows() {
        let row = data.row(s).to_vec();
        for i in 0..q.len() {
            if row[i] as usize >= q[i] {
                continue;
            }
            let mut t = row.clone();
            let lp: Vec<f64> = (0..q[i])
                .map(|a| {
                    t[i] = a as u8;
                    log_potential_with_missing(m, &t)
                })
                .collect();
            let lz = crate::linalg::log_sum_exp(&lp);
            f -= data.weights[s] * (lp[row[i] as usize] - lz);
        }
    }
    f += p.lambda_h * m.fields_flat().iter().map(|v| v * v).sum::<f64>();
    f += p.lambda_j * m.couplings_flat().iter().map(|v| v * v).sum::<f64>();
    let l = q.len();
    for i in 0..l {
        for j in i + 1..l {
            let n2: f64 = m.coupling(i, j).iter().map(|v| v * v).sum();
            f += p.lambda_group * (super::symmetric::GROUP_EPS + n2).sqrt();
        }
    }
    f
}

fn model_from(q: &[usize], x: &[f64]) -> Potts {
    let n_h: usize = q.iter().sum();
    Potts::new(q.to_vec(), x[..n_h].to_vec(), x[n_h..].to_vec()).unwrap()
}

/// Random data over `cards` with random weights.
fn random_data(cards: &[u32], n: usize, seed: u64) -> (Dataset, Vec<f64>) {
    let mut rng = rng_from_seed(seed);
    let vals: Vec<u8> = (0..n)
        .flat_map(|_| {
            cards
                .iter()
                .map(|&k| rng.random_range(0..k) as u8)
                .collect::<Vec<_>>()
        })
        .collect();
    let w: Vec<f64> = (0..n).map(|_| 0.2 + rng.random::<f64>()).collect();
    (
        Dataset::from_flat(vals, cards.len(), cards.to_vec()).unwrap(),
        w,
    )
}

fn random_x(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = rng_from_seed(seed);
    (0..len).map(|_| rng.random::<f64>() - 0.5).collect()
}

#[test]
fn objective_and_gradient_equal_brute_force_and_finite_differences() {
    let cases: [(&[u32], Option<u8>, f64); 6] = [
        (&[2, 2, 2, 2, 2], None, 0.0),
        (&[3, 3, 3, 3], None, 0.0),
        (&[4, 4, 4], None, 0.3),
        (&[2, 3, 4, 3], None, 0.0),
        (&[4, 4, 3, 4], Some(0), 0.2),
        (&[3, 4, 5], Some(2), 0.0),
    ];
    for (k, &(cards, gap, lambda_group)) in cases.iter().enumerate() {
        let (data, w) = random_data(cards, 40, k as u64);
        let coded = PlmData::new(&data, Some(&w), gap).unwrap();
        let q = coded.states().to_vec();
        let p = Penalty {
            lambda_h: 0.07,
            lambda_j: 0.3,
            lambda_group,
        };
        let mut obj = Symmetric::new(&coded, p, None);
        let x = random_x(obj.len(), 100 + k as u64);
        let mut g = vec![0.0; x.len()];
        let f = obj.eval(&x, &mut g).unwrap();
        let brute = brute_objective(&model_from(&q, &x), &coded, p);
        assert!(
            (f - brute).abs() < 1e-6 * brute.abs().max(1.0),
            "case {k}: {f} vs {brute}"
        );
        let eps = 1e-5;
        for c in 0..x.len() {
            let mut xp = x.clone();
            xp[c] += eps;
            let mut xm = x.clone();
            xm[c] -= eps;
            let fd = (brute_objective(&model_from(&q, &xp), &coded, p)
                - brute_objective(&model_from(&q, &xm), &coded, p))
                / (2.0 * eps);
            assert!(
                (g[c] - fd).abs() < 2e-5 * fd.abs().max(1.0),
                "case {k}, param {c}: {} vs {fd}",
                g[c]
            );
        }
    }
}

/// The preconditioner's curvatures `1 / d²` are the Hessian's diagonal at the start (plmc's
/// fields, zero couplings) by second differences of the brute-force objective, with and
/// without missing codes and group L1.
#[test]
fn preconditioner_curvatures_equal_the_brute_force_hessian_diagonal() {
    let cases: [(&[u32], Option<u8>, f64); 3] = [
        (&[3, 3, 2, 4], None, 0.0),
        (&[2, 2, 2, 2, 2], None, 0.2),
        (&[4, 4, 3, 4], Some(0), 0.0),
    ];
    for (k, &(cards, gap, lambda_group)) in cases.iter().enumerate() {
        let (data, w) = random_data(cards, 30, 40 + k as u64);
        let coded = PlmData::new(&data, Some(&w), gap).unwrap();
        let q = coded.states().to_vec();
        let p = Penalty {
            lambda_h: 0.05,
            lambda_j: 0.3,
            lambda_group,
        };
        let h0 = initial_fields(&coded);
        let n_h = h0.len();
        let d = super::precondition::diagonal_scale(&coded, &h0, p);
        let mut x = vec![0.0; Symmetric::new(&coded, p, None).len()];
        assert_eq!(d.len(), x.len());
        x[..n_h].copy_from_slice(&h0);
        // Small enough for the group term's curvature (its scale is √ε ≈ 0.03).
        let eps = 1e-4;
        let f = |x: &[f64]| brute_objective(&model_from(&q, x), &coded, p);
        let f0 = f(&x);
        for c in 0..x.len() {
            let (mut xp, mut xm) = (x.clone(), x.clone());
            xp[c] += eps;
            xm[c] -= eps;
            let second = (f(&xp) - 2.0 * f0 + f(&xm)) / (eps * eps);
            let ours = 1.0 / (d[c] * d[c]);
            assert!(
                (ours - second).abs() <= 1e-4 * second,
                "case {k}, param {c}: {ours} vs {second}"
            );
        }
    }
}

#[test]
fn gradient_and_fit_do_not_depend_on_the_thread_count() {
    let (data, w) = random_data(&[4, 3, 4, 4, 2, 4], 300, 9);
    let coded = PlmData::new(&data, Some(&w), None).unwrap();
    let p = Penalty {
        lambda_h: 0.01,
        lambda_j: 0.5,
        lambda_group: 0.1,
    };
    let run = |t| {
        on_threads(t, || {
            let mut obj = Symmetric::new(&coded, p, None);
            let x = random_x(obj.len(), 4);
            let mut g = vec![0.0; x.len()];
            let f = obj.eval(&x, &mut g).unwrap();
            (
                f.to_bits(),
                g.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            )
        })
    };
    assert_eq!(run(1), run(2));
    assert_eq!(run(1), run(3));
    for mode in [PlmMode::Symmetric, PlmMode::Asymmetric] {
        let params = PlmParams {
            mode,
            lambda_j: 0.5,
            ..PlmParams::default()
        };
        let fit = |t| {
            on_threads(t, || {
                params
                    .check()
                    .unwrap()
                    .fit_weighted(&data, Some(&w), crate::fit::Run::new())
                    .unwrap()
                    .model
            })
        };
        assert_eq!(fit(1), fit(3), "{mode:?}");
    }
}

#[test]
fn fits_reach_first_order_optimality() {
    let (data, w) = random_data(&[3, 4, 3, 2, 3], 200, 2);
    // Symmetric: the full gradient at the returned point is small.
    let params = PlmParams {
        lambda_j: 0.2,
        grad_tol: 1e-6,
        ..PlmParams::default()
    };
    let fit = params
        .check()
        .unwrap()
        .fit_weighted(&data, Some(&w), crate::fit::Run::new())
        .unwrap();
    assert!(fit.record.stop.is_converged(), "{:?}", fit.record.stop);
    let coded = PlmData::new(&data, Some(&w), None).unwrap();
    let p = Penalty {
        lambda_h: 0.01,
        lambda_j: 0.2,
        lambda_group: 0.0,
    };
    let m = &fit.model;
    let x: Vec<f64> = m
        .fields_flat()
        .iter()
        .chain(m.couplings_flat())
        .copied()
        .collect();
    let mut g = vec![0.0; x.len()];
    let f = Symmetric::new(&coded, p, None).eval(&x, &mut g).unwrap();
    // Optimal to the kernels' single precision: each component below 2e-5 per unit of
    // weight (the objective sums 200 rows of weight about 0.7 over 5 sites).
    let n_eff = coded.n_eff();
    assert!(g.iter().all(|v| v.abs() < 2e-5 * n_eff), "{g:?}");
    assert!((f - fit.record.objective).abs() < 1e-9 * f);
    let brute_nlpl = brute_objective(
        m,
        &coded,
        Penalty {
            lambda_h: 0.0,
            lambda_j: 0.0,
            lambda_group: 0.0,
        },
    );
    assert!((brute_nlpl - fit.record.neg_log_pseudo_likelihood).abs() < 1e-6 * brute_nlpl);
    // The starting fields are plmc's: centred logs of pseudo-counted frequencies.
    let h0 = initial_fields(&coded);
    assert!(h0[..3].iter().sum::<f64>().abs() < 1e-12);
    // Asymmetric: symmetric couplings in the zero-sum gauge, near the symmetric fit's.
    let asym = PlmParams {
        mode: PlmMode::Asymmetric,
        ..params
    }
    .check()
    .unwrap()
    .fit_weighted(&data, Some(&w), crate::fit::Run::new())
    .unwrap();
    assert!(asym.record.stop.is_converged(), "{:?}", asym.record.stop);
    let (a, s) = (asym.model.zero_sum_gauge(), m.zero_sum_gauge());
    for (u, v) in a.couplings_flat().iter().zip(s.couplings_flat()) {
        assert!((u - v).abs() < 0.15, "{u} vs {v}");
    }
}

#[test]
fn objective_window_stops_when_the_objective_settles() {
    use super::learner::ObjectiveWindow;
    // Off at tol 0; on, it waits for a full window and compares with the objective `window`
    // iterations back.
    let mut off = ObjectiveWindow::new(0.0, 2, 100.0);
    assert!(!(0..5).any(|_| off.settled(100.0)));
    let mut w = ObjectiveWindow::new(1e-2, 2, 100.0);
    assert!(!w.settled(90.0)); // window not full
    assert!(!w.settled(89.5)); // 100 → 89.5: fell 10.5 > 0.895
    assert!(w.settled(89.2)); // 90 → 89.2: fell 0.8 ≤ 0.892
                              // A fit with the window test on stops early as converged, at an objective within its
                              // tolerance of the fit run to the tight gradient test.
    let (data, w) = random_data(&[3, 4, 3, 2, 3], 200, 2);
    let tight = PlmParams {
        lambda_j: 0.2,
        grad_tol: 1e-7,
        ..PlmParams::default()
    };
    let fit = |p: &PlmParams| {
        p.check()
            .unwrap()
            .fit_weighted(&data, Some(&w), crate::fit::Run::new())
            .unwrap()
    };
    let a = fit(&tight);
    let b = fit(&PlmParams {
        objective_tol: 1e-6,
        objective_window: 3,
        ..tight.clone()
    });
    assert_eq!(b.record.stop, crate::fit::StopReason::FunctionTolerance);
    assert!(b.record.iterations < a.record.iterations);
    assert!(b.record.objective - a.record.objective < 1e-5 * a.record.objective);
    assert!(PlmParams {
        objective_window: 0,
        ..PlmParams::default()
    }
    .check()
    .is_err());
}

#[test]
fn settings_check_and_memory_refusal() {
    assert!(PlmParams {
        lambda_h: -1.0,
        ..PlmParams::default()
    }
    .check()
    .is_err());
    assert!(PlmParams {
        max_iterations: 0,
        ..PlmParams::default()
    }
    .check()
    .is_err());
    let (data, _) = random_data(&[4, 4, 4], 10, 1);
    let small = PlmParams {
        memory_limit: 1000,
        ..PlmParams::default()
    };
    let e = small.check().unwrap().fit(&data).unwrap_err().to_string();
    assert!(e.contains("GiB") && e.contains("memory_limit"), "{e}");
    // DHFR's size: 3,629 sequences, 159 sites of 20 states, well under the default limit.
    let dhfr = PlmParams::default().memory_estimate(3629, &[20; 159]);
    assert!(dhfr > 200 << 20 && dhfr < 2 << 30, "{dhfr}");
    let bad = Dataset::from_flat(vec![0, 1, 1, 0], 2, vec![2, 2]).unwrap();
    let gap = PlmParams {
        gap_state: Some(0),
        ..PlmParams::default()
    };
    assert!(gap
        .check()
        .unwrap()
        .fit(&bad)
        .unwrap_err()
        .to_string()
        .contains("gap_state"));
    assert!(PlmParams::default()
        .check()
        .unwrap()
        .fit_weighted(&bad, Some(&[1.0]), crate::fit::Run::new())
        .is_err());
}

#[test]
fn interrupt_keeps_the_last_good_model() {
    let (data, _) = random_data(&[4; 6], 200, 3);
    let flag = crate::fit::Interrupt::new();
    let learner = PlmParams::default().check().unwrap();
    let f2 = flag.clone();
    let run = learner
        .run()
        .interrupt(flag)
        .observe(move |p: &mut PlmProgress<'_>| {
            if p.iteration == 2 {
                f2.set();
            }
            Ok(crate::fit::Control::Continue)
        });
    let fit = learner.fit_with(&data, run).unwrap();
    assert!(
        matches!(fit.record.stop, crate::fit::StopReason::Interrupted { .. }),
        "{:?}",
        fit.record.stop
    );
    assert!(fit.record.iterations <= 3);
}

/// The sequences of a FASTA/A2M file over `alphabet` (a test reader for the simple files).
pub(crate) fn read_simple_a2m(path: &str, alphabet: &str) -> Dataset {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows: Vec<Vec<u8>> = Vec::new();
    for line in text.lines() {
        if line.starts_with('>') {
            rows.push(Vec::new());
        } else {
            let r = rows.last_mut().unwrap();
            r.extend(line.trim().chars().map(|c| alphabet.find(c).unwrap() as u8));
        }
    }
    let l = rows[0].len();
    let k = alphabet.chars().count() as u32;
    Dataset::from_flat(rows.concat(), l, vec![k; l]).unwrap()
}

/// APC-corrected Frobenius scores of the zero-sum-gauge couplings (pairs in row order).
fn apc_scores(m: &Potts) -> Vec<(f64, usize, usize)> {
    let g = m.zero_sum_gauge();
    let l = g.n_sites();
    let mut fro = vec![0.0; l * l];
    for i in 0..l {
        for j in i + 1..l {
            let v = g.coupling(i, j).iter().map(|x| x * x).sum::<f64>().sqrt();
            fro[i * l + j] = v;
            fro[j * l + i] = v;
        }
    }
    let row: Vec<f64> = (0..l)
        .map(|i| fro[i * l..(i + 1) * l].iter().sum::<f64>() / (l - 1) as f64)
        .collect();
    let all = row.iter().sum::<f64>() / l as f64;
    let mut out = Vec::new();
    for i in 0..l {
        for j in i + 1..l {
            out.push((fro[i * l + j] - row[i] * row[j] / all, i, j));
        }
    }
    out.sort_by(|a, b| b.0.total_cmp(&a.0));
    out
}

/// `shared/data/dca/NAME` in the nearest ancestor of the crate that has it (a checkout's
/// sibling `shared/`, or a worktree's), or `None` with a note.
pub(crate) fn dca_file(name: &str) -> Option<String> {
    let found = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/data/dca").join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("note: shared/data/dca/{name} not found above the checkout; skipping");
    }
    found.map(|p| p.display().to_string())
}

#[test]
fn potts3_chain_top_59_scores_are_the_neighbours() {
    let Some(path) = dca_file("potts3.a2m") else {
        return;
    };
    let data = read_simple_a2m(&path, "_*^");
    assert_eq!((data.n_samples(), data.n_vars()), (500, 60));
    for mode in [PlmMode::Symmetric, PlmMode::Asymmetric] {
        let fit = PlmParams {
            mode,
            ..PlmParams::default()
        }
        .check()
        .unwrap()
        .fit(&data)
        .unwrap();
        assert!(fit.record.stop.is_converged(), "{:?}", fit.record.stop);
        let scores = apc_scores(&fit.model);
        let top: Vec<_> = scores[..59].iter().filter(|s| s.2 == s.1 + 1).collect();
        assert_eq!(top.len(), 59, "{mode:?}: {:?}", &scores[..62]);
        assert!(scores[58].0 > 1.5 * scores[59].0, "{mode:?}: no clear gap");
    }
}
