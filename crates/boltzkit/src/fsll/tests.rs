//! Learner tests against brute force: candidate Δ vs the exact change of cost, monotone cost,
//! both update paths agreeing, degenerate data.

use super::basis::Layout;
use super::learn::{FsllFit, FsllParams, Progress, StepKind, TransformPath};
use crate::fit::{Control, Learner, Run};

use super::model::FsllModel;
use super::penalty::Penalty;
use super::scan::{append_delta, append_lower_bound, kl_change};
use super::transform::dense_forward;
use crate::data::Dataset;
use crate::rng::rng_from_seed;

/// Checks `params` and fits `data`.
fn fit(data: &Dataset, params: &FsllParams) -> crate::Result<FsllFit> {
    params.check()?.fit(data)
}
use ndarray::Array2;
use rand::Rng;

/// Samples `n` rows from a random positive distribution over the layout's states.
fn random_data(cards: &[u32], n: usize, seed: u64) -> Dataset {
    let layout = Layout::new(cards).unwrap();
    let mut rng = rng_from_seed(seed);
    // a sparse random model with strong low- and high-order terms
    let terms: Vec<(usize, f64)> = (0..8)
        .map(|_| {
            let t = 0.3 + 0.7 * rng.random::<f64>();
            let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
            (rng.random_range(1..layout.n_states()), sign * t)
        })
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_iter()
        .collect();
    let (w, _) = FsllModel::new(cards, terms).unwrap().probs();
    let total: f64 = w.iter().sum();
    let mut values = Array2::<u8>::zeros((n, cards.len()));
    for s in 0..n {
        let mut u = rng.random::<f64>() * total;
        let mut x = 0;
        while x + 1 < w.len() && u >= w[x] {
            u -= w[x];
            x += 1;
        }
        for i in 0..cards.len() {
            values[[s, i]] = layout.digit(x, i) as u8;
        }
    }
    Dataset::new(values, cards.to_vec()).unwrap()
}

/// Brute-force cost (Eq. 7) of a model on a dataset: KL from enumerated probabilities.
fn brute_cost(model: &FsllModel, data: &Dataset) -> f64 {
    let layout = model.layout();
    let n = data.n_samples() as f64;
    let mut pd = vec![0.0; layout.n_states()];
    for row in data.values().outer_iter() {
        pd[layout.index_of(row.iter())] += 1.0 / n;
    }
    let pot: Vec<f64> = (0..layout.n_states())
        .map(|x| {
            model
                .basis()
                .iter()
                .zip(model.theta())
                .map(|(&y, &t)| t * layout.phi(y, x))
                .sum()
        })
        .collect();
    let log_z = pot.iter().map(|v| v.exp()).sum::<f64>().ln();
    let kl: f64 = pd
        .iter()
        .zip(&pot)
        .filter(|(p, _)| **p > 0.0)
        .map(|(p, l)| p * (p.ln() - (l - log_z)))
        .sum();
    let r: f64 = model
        .basis()
        .iter()
        .map(|&y| Penalty::reference(layout, data.n_samples(), y))
        .sum();
    kl + r
}

fn duals(model: &FsllModel, data: &Dataset) -> (Vec<f64>, Vec<f64>) {
    let layout = model.layout();
    let (p, _) = model.probs();
    let n = data.n_samples() as f64;
    let mut pd = vec![0.0; layout.n_states()];
    for row in data.values().outer_iter() {
        pd[layout.index_of(row.iter())] += 1.0 / n;
    }
    (dense_forward(layout, &p), dense_forward(layout, &pd))
}

fn with_theta(model: &FsllModel, y: usize, value: f64) -> FsllModel {
    let mut terms: Vec<(usize, f64)> = model
        .basis()
        .iter()
        .cloned()
        .zip(model.theta().iter().cloned())
        .filter(|&(i, _)| i != y)
        .collect();
    terms.push((y, value));
    FsllModel::new(model.cardinalities(), terms).unwrap()
}

fn atanh(t: f64) -> f64 {
    0.5 * ((1.0 + t) / (1.0 - t)).ln()
}

/// Each candidate's Δ (Eqs. 19-20 and the removal formula) equals the brute-force change of
/// cost, and the lower bound (Eq. 21) never exceeds it.
fn check_candidate_deltas(cards: &[u32], seed: u64) {
    let data = random_data(cards, 300, seed);
    let layout = Layout::new(cards).unwrap();
    let mut rng = rng_from_seed(seed + 100);
    let terms: Vec<(usize, f64)> = (0..4)
        .map(|_| {
            (
                rng.random_range(1..layout.n_states()),
                rng.random::<f64>() - 0.5,
            )
        })
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_iter()
        .collect();
    let model = FsllModel::new(cards, terms).unwrap();
    let (tb, db) = duals(&model, &data);
    let pen = Penalty::new(&layout, data.n_samples());
    let base = brute_cost(&model, &data);
    for y in 1..layout.n_states() {
        let (t, d) = (tb[y], db[y]);
        match model.basis().iter().position(|&b| b == y) {
            None => {
                let new = atanh(d) - atanh(t);
                if new == 0.0 {
                    continue; // θ̄_y already at its target: nothing to append
                }
                let exact = brute_cost(&with_theta(&model, y, new), &data) - base;
                let delta = append_delta(t, d, pen.at(y));
                assert!(
                    (delta - exact).abs() < 1e-9,
                    "append y={y}: {delta} vs {exact}"
                );
                assert!(append_lower_bound(t, d, pen.at(y)) <= delta + 1e-12);
            }
            Some(k) => {
                let old = model.theta()[k];
                let new = old + atanh(d) - atanh(t);
                let exact = brute_cost(&with_theta(&model, y, new), &data) - base;
                assert!((kl_change(d, t, d) - exact).abs() < 1e-9, "adjust y={y}");
                let at_zero = (atanh(t) - old).tanh();
                let exact = brute_cost(&with_theta(&model, y, 0.0), &data) - base;
                let delta = kl_change(d, t, at_zero) - pen.at(y);
                assert!(
                    (delta - exact).abs() < 1e-9,
                    "remove y={y}: {delta} vs {exact}"
                );
            }
        }
    }
}

#[test]
fn candidate_deltas_match_brute_force_binary() {
    check_candidate_deltas(&[2; 6], 1);
}

#[test]
fn candidate_deltas_match_brute_force_mixed() {
    check_candidate_deltas(&[3, 2, 4], 2);
    check_candidate_deltas(&[5, 3], 3);
}

/// The cost decreases at every step, checked by brute force after each step.
fn check_monotone(cards: &[u32], path: TransformPath, seed: u64) {
    let data = random_data(cards, 400, seed);
    let params = FsllParams {
        path,
        refresh_every: 7,
        ..FsllParams::default()
    };
    let mut terms = std::collections::BTreeMap::new();
    let mut costs = vec![brute_cost(&FsllModel::uniform(cards).unwrap(), &data)];
    let run = Run::new().observe(|p: &mut Progress| {
        if p.step.kind == StepKind::Remove {
            terms.remove(&p.step.index);
        } else {
            terms.insert(p.step.index, p.step.theta);
        }
        let m = FsllModel::new(cards, terms.clone().into_iter().collect()).unwrap();
        costs.push(brute_cost(&m, &data));
        Ok(Control::Continue)
    });
    let fit = params.check().unwrap().fit_with(&data, run).unwrap();
    assert!(
        fit.record.iterations >= 3,
        "learned too little: {}",
        fit.record.iterations
    );
    for (i, w) in costs.windows(2).enumerate() {
        assert!(
            w[1] < w[0],
            "cost rose at step {}: {} -> {}",
            i + 1,
            w[0],
            w[1]
        );
    }
    for (s, w) in fit.record.steps.iter().zip(costs.windows(2)) {
        assert!(
            (s.delta - (w[1] - w[0])).abs() < 1e-8,
            "recorded Δ {} vs {}",
            s.delta,
            w[1] - w[0]
        );
    }
    let last = *costs.last().unwrap();
    assert!((fit.record.final_cost - last).abs() < 1e-9);
    assert!(fit.record.max_cost_drift < 1e-9);
}

#[test]
fn cost_decreases_monotonically_xor_path() {
    check_monotone(&[2; 7], TransformPath::Xor, 4);
    check_monotone(&[4, 2, 4], TransformPath::Xor, 5);
}

#[test]
fn cost_decreases_monotonically_full_path() {
    check_monotone(&[3, 2, 3, 2], TransformPath::Full, 6);
}

#[test]
fn xor_and_full_paths_learn_the_same_model() {
    let data = random_data(&[2; 12], 2000, 7);
    let a = fit(
        &data,
        &FsllParams {
            path: TransformPath::Xor,
            ..FsllParams::default()
        },
    )
    .unwrap();
    let b = fit(
        &data,
        &FsllParams {
            path: TransformPath::Full,
            ..FsllParams::default()
        },
    )
    .unwrap();
    assert_eq!(a.model.basis(), b.model.basis());
    for (x, y) in a.model.theta().iter().zip(b.model.theta()) {
        assert!((x - y).abs() < 1e-9);
    }
    assert!((a.record.final_cost - b.record.final_cost).abs() < 1e-10);
}

#[test]
fn results_do_not_depend_on_thread_count() {
    let data = random_data(&[2; 16], 3000, 8);
    let run = |threads| {
        crate::testutil::on_threads(threads, || fit(&data, &FsllParams::default()).unwrap())
    };
    let (a, b) = (run(1), run(3));
    assert_eq!(a.model, b.model);
    assert_eq!(a.record.final_cost, b.record.final_cost);
}

#[test]
fn constant_column_gives_finite_model_and_warning() {
    let mut data = random_data(&[2; 6], 200, 9).into_values();
    data.column_mut(2).fill(1);
    let data = Dataset::binary(data).unwrap();
    let fit = fit(&data, &FsllParams::default()).unwrap();
    assert!(fit.record.degenerate_duals > 0);
    assert!(!fit.record.warnings().is_empty());
    assert!(fit.model.theta().iter().all(|t| t.is_finite()));
    assert!(fit.record.kl_data.is_finite() && fit.record.final_cost.is_finite());
    let ll = fit.model.avg_log_likelihood(&data).unwrap();
    assert!(ll.is_finite());
}

#[test]
fn single_sample_gives_finite_model() {
    let data = Dataset::binary(ndarray::array![[1u8, 0, 1, 1]]).unwrap();
    let fit = fit(&data, &FsllParams::default()).unwrap();
    assert!(fit.model.theta().iter().all(|t| t.is_finite()));
    assert!(fit.record.final_cost.is_finite());
    assert!(fit.record.warnings().iter().any(|w| w.contains("constant")));
}

#[test]
fn empty_data_and_bad_settings_are_errors() {
    let empty = Dataset::binary(Array2::zeros((0, 3))).unwrap();
    assert!(fit(&empty, &FsllParams::default()).is_err());
    let data = random_data(&[2; 3], 10, 1);
    let bad = FsllParams {
        epsilon: f64::NAN,
        ..FsllParams::default()
    };
    assert!(fit(&data, &bad)
        .unwrap_err()
        .to_string()
        .contains("epsilon"));
    let three = random_data(&[3, 2], 10, 1);
    let xor = FsllParams {
        path: TransformPath::Xor,
        ..FsllParams::default()
    };
    assert!(fit(&three, &xor).is_err());
}
