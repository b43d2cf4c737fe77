//! RAISE, forward AIS and the bracket against exact enumeration on small RBMs, including
//! models far from the test data (CD-1 at a large learning rate; a strong spurious mode).

use super::*;
use crate::data::Dataset;
use crate::linalg::sigmoid_f64;
use crate::rbm::ais::ais_log_partition;
use crate::rbm::exact;
use crate::rbm::loglik::{average_log_likelihood, Diagnosis, LogLikParams, LogLikelihood};
use crate::rbm::train::{Algorithm, TrainParams, Trainer};
use crate::rbm::{base_rate_biases, mean_neg_free_energy};
use crate::rng::rng_from_seed;
use rand::Rng;

/// `n` rows of `nv` bits near 4 random prototypes (each bit flipped with probability 0.05);
/// every `seed` draws new rows around the same prototypes.
fn modes_data(nv: usize, n: usize, seed: u64) -> Dataset {
    let mut rng = rng_from_seed(100);
    let protos: Vec<Vec<u8>> = (0..4)
        .map(|_| (0..nv).map(|_| u8::from(rng.random::<bool>())).collect())
        .collect();
    let mut rng = rng_from_seed(seed);
    let bits = (0..n)
        .flat_map(|i| {
            protos[i % 4]
                .iter()
                .map(|&b| b ^ u8::from(rng.random::<f64>() < 0.05))
                .collect::<Vec<_>>()
        })
        .collect();
    Dataset::from_flat(bits, nv, vec![2; nv]).unwrap()
}

/// CD-1 from the base-rate start on 400 training rows, `epochs` epochs of mini-batches of
/// 20 at learning rate `lr` (large rates leave the model far from the data).
fn cd1_model(nv: usize, nh: usize, lr: f32, epochs: usize) -> Rbm {
    let train = modes_data(nv, 400, 1);
    let rbm0 = Rbm::init_from_data(&train, nh, 0.01, &mut rng_from_seed(4)).unwrap();
    let params = TrainParams::new()
        .epochs(epochs)
        .batch_size(20)
        .learning_rate(lr)
        .algorithm(Algorithm::Cd { k: 1 })
        .seed(5);
    Trainer::new(rbm0, &train, params)
        .unwrap()
        .run()
        .unwrap()
        .model
}

/// `rbm` with its last hidden unit turned into a detector of a random pattern `s`:
/// `W[:, last] = a (2s − 1)`, `c_last = m − a |s|`, so `−F` gains about `m` at `v = s` and
/// `softplus(m − a d)` at `d` flips from it: a spurious mode.
fn with_spurious_mode(mut rbm: Rbm, a: f32, m: f32) -> Rbm {
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    let mut rng = rng_from_seed(77);
    let s: Vec<f32> = (0..nv)
        .map(|_| f32::from(u8::from(rng.random::<bool>())))
        .collect();
    let ones: f32 = s.iter().sum();
    let (w, _, c) = rbm.params_mut();
    for (i, &si) in s.iter().enumerate() {
        w[i * nh + nh - 1] = a * (2.0 * si - 1.0);
    }
    c[nh - 1] = m - a * ones;
    rbm
}

/// Bit `i` of state `s`.
fn bit(s: usize, i: usize) -> f64 {
    ((s >> i) & 1) as f64
}

/// The annealing model exactly: the distribution of `v_K` when `v_0` is drawn from the
/// base-rate model and `v_k` by one block-Gibbs transition at each `β_k` (what forward AIS
/// runs), over all `2^nv` states (state `s`: unit `i` is bit `i`).
fn exact_annealing_model(rbm: &Rbm, base_b: &[f32], betas: &[f64]) -> Vec<f64> {
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    let (w, b, c) = (rbm.w(), rbm.b(), rbm.c());
    let wij = |i: usize, j: usize| f64::from(w[i * nh + j]);
    let bern = |x: f64, p: f64| if x > 0.5 { p } else { 1.0 - p };
    let mut p: Vec<f64> = (0..1usize << nv)
        .map(|s| {
            (0..nv)
                .map(|i| bern(bit(s, i), sigmoid_f64(f64::from(base_b[i]))))
                .product()
        })
        .collect();
    for &beta in &betas[1..] {
        // hidden marginal, then the new visible marginal
        let mut ph = vec![0f64; 1 << nh];
        for (s, &ps) in p.iter().enumerate() {
            let probs: Vec<f64> = (0..nh)
                .map(|j| {
                    let x = f64::from(c[j]) + (0..nv).map(|i| bit(s, i) * wij(i, j)).sum::<f64>();
                    sigmoid_f64(beta * x)
                })
                .collect();
            for (t, q) in ph.iter_mut().enumerate() {
                *q += ps * (0..nh).map(|j| bern(bit(t, j), probs[j])).product::<f64>();
            }
        }
        let mut next = vec![0f64; 1 << nv];
        for (t, &qt) in ph.iter().enumerate() {
            let probs: Vec<f64> = (0..nv)
                .map(|i| {
                    let x = f64::from(b[i]) + (0..nh).map(|j| bit(t, j) * wij(i, j)).sum::<f64>();
                    sigmoid_f64((1.0 - beta) * f64::from(base_b[i]) + beta * x)
                })
                .collect();
            for (s, q) in next.iter_mut().enumerate() {
                *q += qt * (0..nv).map(|i| bern(bit(s, i), probs[i])).product::<f64>();
            }
        }
        p = next;
    }
    p
}

/// The state index of row `r` of `data`.
fn state_of(data: &Dataset, r: usize) -> usize {
    data.sample(r)
        .iter()
        .enumerate()
        .map(|(i, &x)| usize::from(x) << i)
        .sum()
}

/// Mean and standard error of the mean.
fn mean_sem(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|a| (a - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, (v / n).sqrt())
}

/// The derivation checked exactly: with many chains on one vector, the mean RAISE weight
/// `p̂(v)` is the annealing model's `p_ann(v)` (forward AIS's own chain), which differs from
/// the RBM's `p(v)` at 5 steps.
#[test]
fn raise_weight_is_unbiased_for_the_annealing_model() {
    let rbm = cd1_model(8, 4, 3.0, 3);
    let data = modes_data(8, 3, 2);
    let base = base_rate_biases(&modes_data(8, 400, 1)).unwrap();
    let schedule = AisSchedule::linear(5).unwrap();
    let p_ann = exact_annealing_model(&rbm, &base, schedule.betas());
    assert!((p_ann.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    let log_z = exact::log_partition(&rbm).unwrap();
    let chains = 20_000;
    let run = raise(&rbm, &base, &schedule, &data, &[0, 1, 2], chains, 9).unwrap();
    let mut separated = 0;
    for (i, lw) in run.log_weights.chunks_exact(chains).enumerate() {
        let s = state_of(&data, i);
        // p̂ per chain, relative to p_ann
        let offset = run.neg_free_energy[i] - run.log_z0;
        let ratio: Vec<f64> = lw.iter().map(|l| (offset + l).exp() / p_ann[s]).collect();
        let (m, se) = mean_sem(&ratio);
        assert!(
            (m - 1.0).abs() < 4.0 * se,
            "row {i}: E[p̂]/p_ann = {m} ± {se}"
        );
        let p = (run.neg_free_energy[i] - log_z).exp();
        if (p / p_ann[s] - 1.0).abs() > 10.0 * se {
            separated += 1;
        }
    }
    assert!(
        separated >= 2,
        "p_ann too close to p for the check to be sharp"
    );
}

/// Over `seeds` runs at `schedule`: the bracket's ends, the data-start reverse estimate, and
/// how many brackets were diagnosed inverted.
fn seeded_runs(
    rbm: &Rbm,
    test: &Dataset,
    schedule: &AisSchedule,
    seeds: u64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>, usize) {
    let (mut r, mut a, mut d) = (Vec::new(), Vec::new(), Vec::new());
    let mut inverted = 0;
    for seed in 0..seeds {
        let p = LogLikParams::new(Method::Bracket)
            .schedule(schedule.clone())
            .chains(20)
            .seed(seed);
        let LogLikelihood::Bracket(b) = average_log_likelihood(rbm, test, &p).unwrap() else {
            panic!("not a bracket")
        };
        r.push(b.raise.value);
        a.push(b.ais.value);
        if matches!(b.diagnosis, Diagnosis::Inverted { .. }) {
            inverted += 1;
        }
        let p = p.method(Method::ReverseAisFromData);
        d.push(average_log_likelihood(rbm, test, &p).unwrap().lower().value);
    }
    (r, a, d, inverted)
}

/// Root-mean-square distance of `x` from `target`.
fn rms_from(x: &[f64], target: f64) -> f64 {
    (x.iter().map(|v| (v - target).powi(2)).sum::<f64>() / x.len() as f64).sqrt()
}

/// What exactly is bounded, on small models far from their data (CD-1 at a large rate; a
/// strong spurious mode), over 100 seeds at 10 and 100 steps, against the exact annealing
/// model: the mean RAISE figure is at or below the annealing model's average log-likelihood
/// and the mean forward AIS figure at or above the RBM's, within 2 standard errors; RAISE
/// closes on the annealing model and AIS on the RBM as the steps grow. Where RAISE sits above
/// the RBM's figure, it is because the annealing model puts more mass on the test rows than
/// the RBM (few steps never reach the mass away from the data). The data-start estimator is
/// bounded by neither: it lies above the annealing model's figure.
#[test]
fn raise_bounds_the_annealing_model_ais_the_model_100_seeds() {
    let test = modes_data(10, 40, 2);
    let models = [
        ("cd1 lr 3", cd1_model(10, 6, 3.0, 3)),
        (
            "spurious",
            with_spurious_mode(cd1_model(10, 6, 0.1, 20), 3.0, 16.0),
        ),
    ];
    for (name, rbm) in &models {
        let truth = exact::average_log_likelihood(rbm, &test).unwrap();
        let base = base_rate_biases(&test).unwrap();
        let mut dist = Vec::new();
        for k in [10, 100] {
            let schedule = AisSchedule::linear(k).unwrap();
            let p_ann = exact_annealing_model(rbm, &base, schedule.betas());
            let ann: f64 = (0..test.n_samples())
                .map(|r| p_ann[state_of(&test, r)].ln())
                .sum::<f64>()
                / test.n_samples() as f64;
            let (r, a, d, inverted) = seeded_runs(rbm, &test, &schedule, 100);
            let (mr, sr) = mean_sem(&r);
            let (ma, sa) = mean_sem(&a);
            let (md, sd) = mean_sem(&d);
            eprintln!(
                "{name} K {k}: exact {truth:.4} annealing model {ann:.4} raise {mr:.4} ± {sr:.4} \
                 ais {ma:.4} ± {sa:.4} data-start {md:.4} ± {sd:.4} inverted {inverted}/100"
            );
            assert!(
                mr <= ann + 2.0 * sr,
                "{name} K {k}: RAISE {mr} ± {sr} vs p_ann {ann}"
            );
            assert!(
                ma >= truth - 2.0 * sa,
                "{name} K {k}: AIS {ma} ± {sa} vs exact {truth}"
            );
            if mr > truth + 3.0 * sr {
                // RAISE above the RBM's figure only because the annealing model is
                assert!(ann > truth, "{name} K {k}: above");
            }
            assert!(
                md > ann + 3.0 * sd,
                "{name} K {k}: data-start {md} ± {sd} vs p_ann {ann}"
            );
            dist.push(((mr - ann).abs(), rms_from(&a, truth)));
        }
        assert!(
            dist[1].0 < dist[0].0 && dist[1].1 < dist[0].1,
            "{name}: {dist:?}"
        );
    }
}

/// The brief's setting: 24 visible, 12 hidden units, a model trained a few CD-1 epochs at a
/// large rate, 50 seeds: the mean RAISE figure at or below the exact average log-likelihood,
/// the mean forward AIS figure at or above it (within 2 standard errors), both closer to it
/// (root-mean-square over the seeds) at 100 steps than at 10.
#[test]
fn bracket_contains_exact_24_visible_50_seeds() {
    let test = modes_data(24, 40, 2);
    let rbm = cd1_model(24, 12, 1.0, 3);
    let truth = exact::average_log_likelihood(&rbm, &test).unwrap();
    let mut rms = Vec::new();
    for k in [10, 100] {
        let (r, a, d, inverted) = seeded_runs(&rbm, &test, &AisSchedule::linear(k).unwrap(), 50);
        let (mr, sr) = mean_sem(&r);
        let (ma, sa) = mean_sem(&a);
        let (md, sd) = mean_sem(&d);
        eprintln!("24x12 K {k}: exact {truth:.4} raise {mr:.4} ± {sr:.4} ais {ma:.4} ± {sa:.4} data-start {md:.4} ± {sd:.4} inverted {inverted}/50");
        assert!(
            mr <= truth + 2.0 * sr,
            "K {k}: RAISE {mr} ± {sr} vs exact {truth}"
        );
        assert!(
            ma >= truth - 2.0 * sa,
            "K {k}: AIS {ma} ± {sa} vs exact {truth}"
        );
        rms.push((rms_from(&r, truth), rms_from(&a, truth)));
    }
    assert!(rms[1].0 < rms[0].0 && rms[1].1 < rms[0].1, "{rms:?}");
}

/// The same bits for 1 and 2 threads, and each row's chains the same whatever else is scored
/// with it (subset, batching); the subset average is the whole set's data term plus the
/// subset's sampled part.
#[test]
fn deterministic_across_threads_and_subsets() {
    let data = modes_data(24, 30, 2);
    let rbm = cd1_model(24, 12, 1.0, 3);
    let base = base_rate_biases(&data).unwrap();
    let schedule = AisSchedule::linear(20).unwrap();
    let all: Vec<usize> = (0..30).collect();
    let run = |t: usize, rows: &[usize]| {
        crate::testutil::on_threads(t, || {
            raise(&rbm, &base, &schedule, &data, rows, 3, 11).unwrap()
        })
    };
    let full = run(2, &all);
    assert_eq!(full, run(1, &all));
    let sub = raise_rows(30, Some(7), 5).unwrap();
    assert_eq!(sub.len(), 7);
    assert!(sub.windows(2).all(|w| w[0] < w[1]));
    let part = run(2, &sub);
    for (i, &r) in sub.iter().enumerate() {
        assert_eq!(
            part.log_weights[i * 3..(i + 1) * 3],
            full.log_weights[r * 3..(r + 1) * 3]
        );
        assert_eq!(part.neg_free_energy[i], full.neg_free_energy[r]);
    }
    let nfe = mean_neg_free_energy(&rbm, &data).unwrap();
    let avg = part.average(nfe);
    let l = part.log_mean_weights();
    let want = nfe - part.log_z0 + l.iter().sum::<f64>() / 7.0;
    assert!((avg.value - want).abs() < 1e-12 && avg.stderr > 0.0);
    assert_eq!(avg.method, Method::Raise);
    let probs = full.log_probs();
    let mean_probs = probs.iter().sum::<f64>() / 30.0;
    assert!((full.average(nfe).value - mean_probs).abs() < 1e-4);
    assert_eq!(raise_rows(30, Some(40), 5).unwrap(), all);
    assert_eq!(raise_rows(30, None, 5).unwrap(), all);
    assert!(raise_rows(30, Some(0), 5).is_err());
    assert!(raise(&rbm, &base, &schedule, &data, &[30], 1, 1).is_err());
    assert!(raise(&rbm, &base, &schedule, &data, &[0], 0, 1).is_err());
    assert!(raise(&rbm, &base, &schedule, &data, &[], 1, 1).is_err());
    assert!(raise(&rbm, &base[..3], &schedule, &data, &[0], 1, 1).is_err());
    // forward AIS through the one function is ais_log_partition with the seed as given
    let p = LogLikParams::new(Method::Ais)
        .schedule(schedule.clone())
        .chains(9)
        .seed(4);
    let LogLikelihood::Ais { ll, log_z } = average_log_likelihood(&rbm, &data, &p).unwrap() else {
        panic!("not ais")
    };
    let est = ais_log_partition(&rbm, &base, &schedule, 9, 4).unwrap();
    assert_eq!(log_z.value, est.log_z);
    assert_eq!(ll.value, nfe - est.log_z);
    assert_eq!(
        (ll.lower, ll.upper),
        (nfe - est.log_z_upper, nfe - est.log_z_lower)
    );
}
