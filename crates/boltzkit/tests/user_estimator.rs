//! A gradient estimator written outside the library trains with the library's loop: the
//! `Update` blanket impl makes any `GradientEstimator` trainable, and its diagnostics reach
//! the run's history.

use boltzkit::data::synth::BarsAndStripes;
use boltzkit::data::Dataset;
use boltzkit::model::{LogPartition, Model};
use boltzkit::rbm::exact;
use boltzkit::rbm::train::{
    ExactLogLikelihood, Gradient, GradientEstimator, StopReason, TrainParams, Trainer,
};
use boltzkit::rbm::Rbm;
use boltzkit::rng::rng_from_seed;
use std::collections::BTreeMap;

/// The exact gradient of the training set's average log-likelihood, whatever the mini-batch
/// (a deterministic "estimator"); it reports how many times it ran.
struct ExactGradientEstimator {
    data: Dataset,
    calls: usize,
}

impl GradientEstimator for ExactGradientEstimator {
    fn estimate(&mut self, rbm: &Rbm, _v: &[f32], grad: &mut Gradient) -> boltzkit::Result<()> {
        let g = exact::log_likelihood_gradient(rbm, &self.data)?;
        for (dst, src) in [
            (&mut grad.w, &g.w),
            (&mut grad.b, &g.b),
            (&mut grad.c, &g.c),
        ] {
            dst.iter_mut().zip(src).for_each(|(d, &s)| *d = s as f32);
        }
        self.calls += 1;
        Ok(())
    }

    fn report(&mut self, out: &mut BTreeMap<String, f64>) {
        out.insert("user_calls".into(), self.calls as f64);
    }
}

#[test]
fn a_user_estimator_trains_through_the_public_trainer() {
    let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
    let rbm = Rbm::init_from_data(&data, 4, 0.3, &mut rng_from_seed(1)).unwrap();
    let before = rbm
        .log_likelihood(&data, &LogPartition::Exact)
        .unwrap()
        .value;
    let params = TrainParams::new()
        .epochs(30)
        .full_batch()
        .learning_rate(1.0)
        .seed(3);
    let estimator = ExactGradientEstimator {
        data: data.clone(),
        calls: 0,
    };
    let out = Trainer::new(rbm, &data, params)
        .unwrap()
        .update(estimator)
        .add_observer(ExactLogLikelihood::new("train_ll", data.clone()), 10)
        .run()
        .unwrap();
    assert_eq!(out.record.stop, StopReason::MaxEpochs);
    assert_eq!(out.record.steps, 30);
    // Full-batch exact gradient ascent raises the exact likelihood, epoch after epoch.
    let lls: Vec<f64> = out
        .record
        .history
        .iter()
        .map(|r| r.metrics["train_ll"])
        .collect();
    assert!(lls.windows(2).all(|w| w[1] > w[0]), "{lls:?}");
    let after = out.model_ll(&data);
    assert!(after > before + 0.2, "{before} -> {after}");
    // The estimator's own diagnostics land in the history (one call per epoch, full batch).
    let calls: Vec<f64> = out
        .record
        .history
        .iter()
        .map(|r| r.metrics["user_calls"])
        .collect();
    assert_eq!(calls, vec![0.0, 10.0, 20.0, 30.0]);
}

trait ModelLl {
    fn model_ll(&self, data: &Dataset) -> f64;
}

impl ModelLl for boltzkit::rbm::train::TrainOutcome {
    fn model_ll(&self, data: &Dataset) -> f64 {
        self.model
            .log_likelihood(data, &LogPartition::Exact)
            .unwrap()
            .value
    }
}

/// The same estimator through the learner (`RbmParams` → `check` → `fit_update`), with an
/// observer given as a closure that ends the run early with a typed reason.
#[test]
fn a_user_estimator_trains_through_the_learner_and_a_closure_stops_it() {
    use boltzkit::fit::{Control, Count, Run};
    use boltzkit::rbm::train::{Progress, RbmParams};
    let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
    let learner = RbmParams::new(4)
        .weight_sd(0.3)
        .train(
            TrainParams::new()
                .epochs(30)
                .full_batch()
                .learning_rate(1.0)
                .seed(3),
        )
        .check()
        .unwrap();
    let rbm = learner.init(&data).unwrap();
    let estimator = ExactGradientEstimator {
        data: data.clone(),
        calls: 0,
    };
    let stop_at_12 = |p: &mut Progress<'_>| {
        Ok(if p.epoch == 12 {
            Control::Stop(StopReason::EarlyStopped {
                after: Count::epochs(p.epoch),
                detail: "enough".into(),
            })
        } else {
            Control::Continue
        })
    };
    let run = Run::new().observe_every(stop_at_12, 4);
    let out = learner.fit_update(rbm, &data, estimator, run).unwrap();
    assert_eq!(
        out.record.stop,
        StopReason::EarlyStopped {
            after: Count::epochs(12),
            detail: "enough".into()
        }
    );
    assert_eq!((out.record.epochs, out.record.steps), (12, 12));
    let calls: Vec<f64> = out
        .record
        .history
        .iter()
        .map(|r| r.metrics["user_calls"])
        .collect();
    assert_eq!(calls, vec![0.0, 4.0, 8.0, 12.0]);
}
