//! The learner against brute force on small problems (issue 5, "Must show").

use super::*;
use crate::data::synth::BarsAndStripes;
use crate::data::Dataset;
use crate::fit::StopReason;
use crate::linalg::{log_sum_exp, sigmoid_f64, softplus_f64};
use crate::rbm::testutil::all_states;
use crate::rbm::{exact, Rbm};
use crate::rng::rng_from_seed;
use ndarray::Array2;
use rand::Rng;

fn bas() -> Dataset {
    BarsAndStripes::new(3, false).unwrap().dataset().unwrap()
}

/// `ln Z` of an [`FwModel`] by enumerating `v` with the definition of Eq. 5.
fn brute_log_z(m: &FwModel) -> f64 {
    let terms: Vec<f64> = all_states(m.n_visible())
        .iter()
        .map(|v| m.unnormalized_log_prob(v).unwrap())
        .collect();
    log_sum_exp(&terms)
}

/// `L(q, ϑ)` of Eq. 6, exactly.
fn objective(m: &FwModel, data: &Dataset, lambda: f64) -> f64 {
    mean_log_unnormalized(m, data).unwrap() - brute_log_z(m) - 0.5 * lambda * m.mean_sq_norm()
}

fn random_rows(n: usize, d: usize, p: f64, seed: u64) -> Vec<f32> {
    let mut rng = rng_from_seed(seed);
    (0..n * d)
        .map(|_| if rng.random::<f64>() < p { 1.0 } else { 0.0 })
        .collect()
}

/// Eq. 9 and its gradient: the sparse fast path against the definition in `f64`, and the
/// gradient against central finite differences.
#[test]
fn subproblem_objective_and_gradient_match_definition_and_finite_differences() {
    let (nv, n, s, lambda) = (7, 40, 25, 0.3);
    let x = random_rows(n, nv, 0.4, 1);
    let data = Dataset::from_flat(x.iter().map(|&v| v as u8).collect(), nv, vec![2; nv]).unwrap();
    let samples = random_rows(s, nv, 0.6, 2);
    let mut sub = Subproblem::new(BinaryRows::from_dataset(&data), lambda).unwrap();
    sub.set_samples(&samples).unwrap();
    let mut rng = rng_from_seed(3);
    let w: Vec<f64> = (0..=nv).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect();
    let mut g = vec![0.0; nv + 1];
    let f = sub.eval(&w, &mut g);
    // the definition, term by term
    let dot = |row: &[f32]| {
        w[nv]
            + row
                .iter()
                .zip(&w)
                .map(|(&x, &wj)| f64::from(x) * wj)
                .sum::<f64>()
    };
    let mut want_f = 0.5 * lambda * w.iter().map(|x| x * x).sum::<f64>();
    let mut want_g: Vec<f64> = w.iter().map(|x| lambda * x).collect();
    for (rows, m, sign) in [(&samples, s, 1.0), (&x, n, -1.0)] {
        for row in rows.chunks_exact(nv) {
            let a = dot(row);
            want_f += sign * softplus_f64(a) / m as f64;
            let c = sign * sigmoid_f64(a) / m as f64;
            for j in 0..nv {
                want_g[j] += c * f64::from(row[j]);
            }
            want_g[nv] += c;
        }
    }
    assert!((f - want_f).abs() < 1e-12, "{f} vs {want_f}");
    for (a, b) in g.iter().zip(&want_g) {
        assert!((a - b).abs() < 1e-12);
    }
    let h = 1e-5;
    let mut scratch = vec![0.0; nv + 1];
    for j in 0..=nv {
        let mut wp = w.clone();
        wp[j] += h;
        let mut wm = w.clone();
        wm[j] -= h;
        let fd = (sub.eval(&wp, &mut scratch) - sub.eval(&wm, &mut scratch)) / (2.0 * h);
        assert!(
            (fd - g[j]).abs() < 1e-7 * (1.0 + g[j].abs()),
            "{j}: {fd} vs {}",
            g[j]
        );
    }
}

/// After every Frank-Wolfe step (`α_t = t`) the model is the standard RBM with `t` units:
/// `ln Z` from the definition (Eq. 5) equals the RBM's exact `ln Z`.
#[test]
fn after_each_step_the_model_is_a_standard_rbm_with_t_units() {
    let data = bas();
    let params = FwParams::new().samples(200).lambda(0.05).seed(5);
    let mut fw = FrankWolfe::new(&data, params).unwrap();
    for t in 1..=6 {
        let rec = fw.step().unwrap();
        assert_eq!((rec.iteration, rec.units), (t, t));
        let m = fw.model();
        assert!(m.is_standard());
        assert!((m.alpha() - t as f64).abs() < 1e-12);
        let rbm = m.to_rbm().unwrap();
        assert_eq!(rbm.n_hidden(), t);
        let (a, b) = (brute_log_z(m), exact::log_partition(&rbm).unwrap());
        assert!(
            (a - b).abs() < 1e-4 * (1.0 + b.abs()),
            "t = {t}: {a} vs {b}"
        );
        let ll_fw = mean_log_unnormalized(m, &data).unwrap() - a;
        let ll_rbm = exact::average_log_likelihood(&rbm, &data).unwrap();
        assert!((ll_fw - ll_rbm).abs() < 1e-4, "{ll_fw} vs {ll_rbm}");
    }
}

/// More subproblem starts never give a worse `f(w*)`: the first start is the single-start
/// run's (same seed, same chains), and the best is kept.
#[test]
fn more_subproblem_starts_never_give_a_worse_unit() {
    let data = bas();
    let mut better = 0;
    for seed in 0..6 {
        let base = FwParams::new().samples(300).lambda(0.05).seed(seed);
        let mut one = FrankWolfe::new(&data, base.clone()).unwrap();
        let mut four = FrankWolfe::new(&data, base.subproblem_starts(4)).unwrap();
        let (a, b) = (one.insert_unit().unwrap(), four.insert_unit().unwrap());
        assert!(
            b.subproblem_f <= a.subproblem_f,
            "{} > {}",
            b.subproblem_f,
            a.subproblem_f
        );
        assert!(b.lbfgs_evaluations > a.lbfgs_evaluations);
        if b.subproblem_f < a.subproblem_f - 1e-9 {
            better += 1;
        }
    }
    assert!(better > 0, "the extra starts never found a better unit");
}

fn bias_grad_rms(rbm: &Rbm, data: &Dataset) -> f64 {
    let g = exact::log_likelihood_gradient(rbm, data).unwrap();
    (g.b.iter().map(|&x| x.powi(2)).sum::<f64>() / g.b.len() as f64).sqrt()
}

/// The bias update (Eq. 10) lowers the exact bias gradient.
#[test]
fn bias_update_reduces_the_bias_gradient() {
    let data = bas();
    let params = FwParams::new()
        .samples(2000)
        .lambda(0.05)
        .learning_rate(0.5)
        .bias_steps(30)
        .bias_tol(0.0)
        .seed(7);
    let mut fw = FrankWolfe::new(&data, params).unwrap();
    for _ in 0..3 {
        fw.insert_unit().unwrap();
        let before = bias_grad_rms(&fw.model().to_rbm().unwrap(), &data);
        let (steps, _) = fw.update_bias().unwrap();
        let after = bias_grad_rms(&fw.model().to_rbm().unwrap(), &data);
        assert_eq!(steps, 30);
        assert!(after < 0.5 * before, "{before} -> {after}");
    }
}

/// A warm start from an RBM with `h` units reproduces its distribution and continues at
/// `t = h + 1`.
#[test]
fn warm_start_reproduces_the_rbm_and_continues_at_h_plus_one() {
    let data = bas();
    let rbm = Rbm::random(9, 3, 0.5, &mut rng_from_seed(11)).unwrap();
    let params = FwParams::new().samples(200).seed(1);
    let mut fw = FrankWolfe::from_rbm(&data, &rbm, params).unwrap();
    assert_eq!(fw.iteration(), 3);
    let m = fw.model();
    assert!(m.is_standard() && (m.alpha() - 3.0).abs() < 1e-12);
    assert_eq!(m.to_rbm().unwrap(), rbm, "the same parameters, bit for bit");
    let z = exact::log_partition(&rbm).unwrap();
    assert!((brute_log_z(m) - z).abs() < 1e-9 * (1.0 + z.abs()));
    let ll = exact::average_log_likelihood(&rbm, &data).unwrap();
    assert!((mean_log_unnormalized(m, &data).unwrap() - brute_log_z(m) - ll).abs() < 1e-6);
    let rec = fw.step().unwrap();
    assert_eq!((rec.iteration, rec.units), (4, 4));
    assert!((fw.model().alpha() - 4.0).abs() < 1e-12);
}

/// The Metropolis-Hastings sampler of a fractional RBM (Sec. 3.3, Eq. 12 proposal) reaches
/// the exact distribution of Eq. 11 on a tiny model.
#[test]
fn mh_sampler_matches_the_exact_fractional_distribution() {
    let nv = 4;
    let mut rng = rng_from_seed(21);
    let w: Vec<f64> = (0..2 * (nv + 1))
        .map(|_| rng.random::<f64>() * 3.0 - 1.5)
        .collect();
    // coefficients α q = (0.4, 1.7)
    let m = FwModel::new(
        nv,
        w,
        vec![0.4 / 2.1, 1.7 / 2.1],
        2.1,
        vec![0.3, -0.2, 0.1, -0.4],
    )
    .unwrap();
    assert!(!m.is_standard());
    let states = all_states(nv);
    let lp: Vec<f64> = states
        .iter()
        .map(|v| m.unnormalized_log_prob(v).unwrap())
        .collect();
    let z = log_sum_exp(&lp);
    let n = 4000;
    let mut s = FwSampler::new(&m, &vec![0.0; n * nv], 3).unwrap();
    assert!(s.is_mh());
    s.step(30).unwrap();
    let mut counts = vec![0usize; 1 << nv];
    for _ in 0..5 {
        s.step(3).unwrap();
        for row in s.visible().chunks_exact(nv) {
            let k: usize = row
                .iter()
                .enumerate()
                .map(|(i, &x)| (x as usize) << i)
                .sum();
            counts[k] += 1;
        }
    }
    let total = (5 * n) as f64;
    let tv: f64 = counts
        .iter()
        .zip(&lp)
        .map(|(&c, &l)| (c as f64 / total - (l - z).exp()).abs())
        .sum::<f64>()
        / 2.0;
    assert!(tv < 0.03, "total variation {tv}");
    let rate = s.accepted() as f64 / s.proposals() as f64;
    assert!(rate > 0.2 && rate < 1.0, "acceptance {rate}");
    // the proposal alone (plain Gibbs on Eq. 12) is measurably off
    let prop = m.proposal_rbm().unwrap();
    let lq: Vec<f64> = states
        .iter()
        .map(|v| -prop.free_energy(v).unwrap())
        .collect();
    let zq = log_sum_exp(&lq);
    let tv_prop: f64 = lq
        .iter()
        .zip(&lp)
        .map(|(&a, &b)| ((a - zq).exp() - (b - z).exp()).abs())
        .sum::<f64>()
        / 2.0;
    assert!(tv_prop > 2.0 * tv, "proposal {tv_prop} vs MH {tv}");
}

/// Away steps never lower `L` (Eq. 6), checked exactly; on this seeded case a harmful unit
/// planted in the starting RBM is removed.
#[test]
fn away_steps_never_decrease_the_objective() {
    let data = bas();
    let lambda = 0.05;
    let mut rng = rng_from_seed(4);
    let mut rbm = Rbm::random(9, 3, 0.3, &mut rng).unwrap();
    {
        // unit 1: large weights that put mass far from the data
        let (w, _, c) = rbm.params_mut();
        for j in 0..9 {
            w[j * 3 + 1] = 4.0 * if j % 2 == 0 { 1.0 } else { -1.0 };
        }
        c[1] = 2.0;
    }
    let params = FwParams::new()
        .samples(500)
        .lambda(lambda)
        .away_steps(true)
        .seed(2);
    let mut fw = FrankWolfe::from_rbm(&data, &rbm, params).unwrap();
    let mut removed = 0;
    for it in 0..8 {
        if it > 0 {
            fw.insert_unit().unwrap();
            fw.update_bias().unwrap();
        }
        let before = objective(fw.model(), &data, lambda);
        let r = fw.away_step().unwrap();
        let after = objective(fw.model(), &data, lambda);
        assert!(
            after >= before - 1e-9,
            "iteration {it}: {before} -> {after}"
        );
        if r.is_some() {
            removed += 1;
            assert!(after > before);
        } else {
            assert_eq!(after, before);
        }
        assert!(fw.model().is_standard());
    }
    assert!(removed >= 1, "the planted unit should go");
}

/// Same seed, same model whatever the thread count; the record splits the time.
#[test]
fn results_do_not_depend_on_thread_count() {
    let data = bas();
    let run = |threads: usize| {
        crate::testutil::on_threads(threads, || {
            let params = FwParams::new()
                .max_units(4)
                .samples(100)
                .seed(9)
                .eval_every(2);
            FrankWolfe::new(&data, params).unwrap().run().unwrap()
        })
    };
    let a = run(1);
    let b = run(2);
    assert_eq!(a.model, b.model);
    assert_eq!(a.record.iterations.len(), 4);
    assert_eq!(a.record.evaluations.len(), 2);
    assert!(a
        .record
        .iterations
        .iter()
        .all(|r| r.subproblem_s >= 0.0 && r.lbfgs_evaluations > 0));
}

/// Size selection: with validation data the gap is recorded every `eval_every` units and a
/// size is chosen; early stopping ends the run when the gap grows.
#[test]
fn size_selection_records_the_gap_and_stops_when_it_grows() {
    let data = bas();
    // a validation set of half the patterns: the gap grows as the model fits the rest
    let x = data.values();
    let train = Dataset::binary(x.slice(ndarray::s![..7, ..]).to_owned()).unwrap();
    let valid = Dataset::binary(x.slice(ndarray::s![7.., ..]).to_owned()).unwrap();
    let params = FwParams::new()
        .max_units(12)
        .samples(200)
        .lambda(0.01)
        .eval_every(2)
        .gap_tol(0.5)
        .early_stop(true)
        .seed(3);
    let fit = FrankWolfe::new(&train, params)
        .unwrap()
        .validation(&valid)
        .unwrap()
        .run()
        .unwrap();
    let evals = &fit.record.evaluations;
    assert!(!evals.is_empty());
    for e in evals {
        let want = mean_log_unnormalized(&fit.model, &train).unwrap();
        let _ = want;
        assert_eq!(e.gap, Some(e.train_nfe - e.valid_nfe.unwrap()));
        assert_eq!(e.metrics.get("gap").copied(), e.gap);
    }
    let sel = fit.record.selected_units.expect("a size is selected");
    assert_eq!(fit.record.selected.as_ref().unwrap().n_units(), sel);
    let min_gap = evals
        .iter()
        .take_while(|e| e.units <= sel)
        .filter_map(|e| e.gap)
        .fold(f64::INFINITY, f64::min);
    if matches!(fit.record.stop, StopReason::EarlyStopped { .. }) {
        let last = evals.last().unwrap();
        assert!(last.gap.unwrap() > min_gap + 0.5);
        assert!(last.units > sel);
    } else {
        assert_eq!(fit.model.n_units(), 12);
    }
}

/// Free `α`: the model is fractional and sampled by Metropolis-Hastings; the file round-trip
/// keeps it.
#[test]
fn free_alpha_gives_a_fractional_model_sampled_by_mh() {
    let data = bas();
    let params = FwParams::new()
        .max_units(4)
        .samples(200)
        .alpha(AlphaRule::Free { step: 0.5 })
        .seed(6);
    let fit = FrankWolfe::new(&data, params).unwrap().run().unwrap();
    assert_eq!(fit.model.n_units(), 4);
    assert!(!fit.model.is_standard(), "alpha = {}", fit.model.alpha());
    let rate = fit.record.mh_acceptance.unwrap();
    assert!(rate > 0.0 && rate <= 1.0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.safetensors");
    file::save_fw_model(&path, &fit.model, &Default::default()).unwrap();
    let back = file::load_fw_model(&path).unwrap();
    assert!((back.alpha() - fit.model.alpha()).abs() < 1e-9);
    assert!((brute_log_z(&back) - brute_log_z(&fit.model)).abs() < 1e-9);
    assert!(
        crate::rbm::file::load_rbm(&path).is_err(),
        "RBM tools refuse it"
    );
}

#[test]
fn settings_are_checked() {
    let data = bas();
    for p in [
        FwParams::new().max_units(0),
        FwParams::new().samples(0),
        FwParams::new().subproblem_starts(0),
        FwParams::new().lambda(-1.0),
        FwParams::new().learning_rate(0.0),
        FwParams::new().alpha(AlphaRule::Free { step: f64::NAN }),
    ] {
        assert!(FrankWolfe::new(&data, p).is_err());
    }
    let other = Dataset::binary(Array2::zeros((3, 4))).unwrap();
    assert!(FrankWolfe::new(&data, FwParams::new())
        .unwrap()
        .validation(&other)
        .is_err());
}

/// The objective guard (`fall_tol`, `fall_patience`): with a zero tolerance and patience 1,
/// poor chains (one Gibbs step, few chains) make the exact training likelihood fall at some
/// iteration; the run stops there and returns the best model, whose exact likelihood is the
/// best one recorded. Off (`∞`), the same run grows to `T` and records no likelihood.
#[test]
fn objective_guard_stops_on_a_fall_and_keeps_the_best_model() {
    let data = bas();
    let params = FwParams::new()
        .max_units(30)
        .samples(20)
        .gibbs_steps(1)
        .lambda(0.01)
        .eval_every(0)
        .fall_tol(0.0)
        .fall_patience(1)
        .seed(4);
    let fit = FrankWolfe::new(&data, params.clone())
        .unwrap()
        .run()
        .unwrap();
    let lls: Vec<f64> = fit
        .record
        .iterations
        .iter()
        .map(|r| {
            r.train_ll
                .expect("9 visible units: the guard computes every LL")
        })
        .collect();
    let (best_at, best) =
        lls.iter().enumerate().fold(
            (0, f64::NEG_INFINITY),
            |(i, b), (j, &x)| if x > b { (j, x) } else { (i, b) },
        );
    assert!(
        matches!(fit.record.stop, StopReason::EarlyStopped { .. }),
        "{:?}: {lls:?}",
        fit.record.stop
    );
    assert!(*lls.last().unwrap() < best, "{lls:?}");
    assert_eq!(fit.model.n_units(), fit.record.iterations[best_at].units);
    let kept = exact::average_log_likelihood(&fit.model.to_rbm().unwrap(), &data).unwrap();
    assert!((kept - best).abs() < 1e-5, "{kept} vs {best}"); // f32 weights of to_rbm

    let off = FrankWolfe::new(&data, params.fall_tol(f64::INFINITY))
        .unwrap()
        .run()
        .unwrap();
    assert_eq!(off.record.stop, StopReason::MaxUnits);
    assert!(off.record.iterations.iter().all(|r| r.train_ll.is_none()));
}
