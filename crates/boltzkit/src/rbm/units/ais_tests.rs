//! Twins of AIS and RAISE over the seam: on models small enough to enumerate, forward AIS
//! within its error of the exact `ln Z` and RAISE's average below, and close to, the exact
//! average log-likelihood, for each type pair; seeded runs repeat.

use super::*;
use crate::rbm::units::twins::{layer_rows, normal_weights};
use crate::rbm::units::{Bernoulli, Bounded, Categorical, DRelu, Gaussian, Relu};

/// The pairs: (name, model).
fn models() -> Vec<(&'static str, UnitRbm)> {
    let w = |n, seed| normal_weights(n, 0.5, seed);
    let bern = |n: usize, seed| Units::Bernoulli(Bernoulli::new(w(n, seed)).unwrap());
    let cat = |q: Vec<usize>, seed| {
        let width = q.iter().sum();
        Units::Categorical(Categorical::new(q, w(width, seed)).unwrap())
    };
    let drelu = |n: usize| {
        Units::DRelu(DRelu::new(vec![1.0; n], vec![2.0; n], vec![0.3; n], vec![-0.2; n]).unwrap())
    };
    let gauss = |n: usize, seed| {
        let b = Bounded::new(1e-2, 1e2).unwrap();
        Units::Gaussian(Gaussian::new(w(n, seed), vec![0.5; n], b).unwrap())
    };
    let pair = |v: Units, h: Units, seed| {
        let n = v.width() * h.width();
        UnitRbm::new(v, h, w(n, seed)).unwrap()
    };
    vec![
        (
            "bernoulli-relu",
            pair(
                bern(6, 1),
                Units::Relu(Relu::new(vec![1.5; 2], vec![0.1, -0.3]).unwrap()),
                2,
            ),
        ),
        (
            "categorical-drelu",
            pair(cat(vec![3, 2, 3], 3), drelu(2), 4),
        ),
        (
            "categorical-bernoulli",
            pair(cat(vec![3, 3], 5), bern(3, 6), 7),
        ),
        ("gaussian-bernoulli", pair(gauss(2, 8), bern(4, 9), 10)),
        ("bernoulli-gaussian", pair(bern(5, 11), gauss(2, 12), 13)),
        ("bernoulli-drelu", pair(bern(5, 14), drelu(2), 15)),
    ]
}

#[test]
fn forward_ais_is_within_its_error_of_the_exact_log_partition() {
    let schedule = AisSchedule::linear(200).unwrap();
    for (name, m) in models() {
        let exact = m.log_partition_exact().unwrap();
        let data = layer_rows(m.visible(), 30, 21);
        for base in [None, Some(&data[..])] {
            let est = ais_log_partition(&m, base, &schedule, 100, 5, None).unwrap();
            let err = (est.log_z - exact).abs();
            assert!(
                err < 4.0 * est.std_err + 0.02,
                "{name} (base from data: {}): AIS {} ± {} vs exact {exact}",
                base.is_some(),
                est.log_z,
                est.std_err
            );
        }
        let short = AisSchedule::linear(10).unwrap();
        let again = ais_log_partition(&m, None, &short, 10, 5, None).unwrap();
        let once = ais_log_partition(&m, None, &short, 10, 5, None).unwrap();
        assert_eq!(again, once, "{name}: seeded AIS repeats");
    }
}

#[test]
fn raise_is_below_and_close_to_the_exact_log_likelihood() {
    let schedule = AisSchedule::linear(200).unwrap();
    for (name, m) in models() {
        let rows = layer_rows(m.visible(), 16, 31);
        let exact = m.log_likelihood(&rows, None, None).unwrap();
        let ll = raise_log_likelihoods(&m, Some(&rows), &schedule, &rows, 4, 9, None).unwrap();
        assert_eq!(ll.len(), 16);
        let n = ll.len() as f64;
        let mean = ll.iter().sum::<f64>() / n;
        let sd = (ll.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        // per row: RAISE's ln p̂ against the exact ln p(v) of the same row
        let neg_f = m.neg_free_energies_of(&rows).unwrap();
        let log_z = m.log_partition_exact().unwrap();
        let gaps: Vec<f64> = ll.iter().zip(&neg_f).map(|(l, f)| f - log_z - l).collect();
        let gap = gaps.iter().sum::<f64>() / n;
        let gap_sd = (gaps.iter().map(|g| (g - gap).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        assert!(
            gap > -3.0 * gap_sd / n.sqrt() - 1e-3 && gap < 0.05,
            "{name}: RAISE {mean} (sd {sd}) vs exact {exact}: gap {gap} ± {gap_sd}"
        );
    }
}

#[test]
fn an_interrupt_gives_no_estimate() {
    let (_, m) = models().remove(1);
    let flag = Interrupt::new();
    flag.set();
    let schedule = AisSchedule::linear(10).unwrap();
    let e = ais_log_partition(&m, None, &schedule, 4, 1, Some(&flag)).unwrap_err();
    assert!(matches!(e, Error::Interrupted { .. }), "{e}");
    let rows = layer_rows(m.visible(), 2, 1);
    let e = raise_log_likelihoods(&m, None, &schedule, &rows, 2, 1, Some(&flag)).unwrap_err();
    assert!(matches!(e, Error::Interrupted { .. }), "{e}");
    assert!(ais_log_partition(&m, None, &schedule, 0, 1, None).is_err());
}
