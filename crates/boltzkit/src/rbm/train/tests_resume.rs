//! Resuming a run from its checkpoint ([`Trainer::resume`], [`load_checkpoint`]) ends with
//! the same bits as the uninterrupted run, for every built-in algorithm.

use super::*;
use crate::data::synth::BarsAndStripes;
use crate::data::Dataset;
use crate::error::Error;
use crate::fit::{Control, Interrupt};
use crate::io::MetricLog;
use crate::rbm::Rbm;
use crate::rng::{rng_from_seed, BkRng};
use rand::RngCore;
use std::collections::BTreeMap;
use std::path::Path;

const ALGORITHMS: [Algorithm; 8] = [
    Algorithm::Cd { k: 1 },
    Algorithm::Pcd { k: 2 },
    Algorithm::Cg { k: 1 },
    Algorithm::Sdcp { inner: 2, k: 2 },
    Algorithm::CsDcp { inner: 2, k: 1 },
    Algorithm::PopCd { k: 1, loo: false },
    Algorithm::PopCd { k: 2, loo: true },
    Algorithm::Pt { replicas: 3, k: 1 },
];

const EPOCHS: usize = 6;

fn data() -> Dataset {
    BarsAndStripes::new(3, false).unwrap().dataset().unwrap()
}

fn params(a: Algorithm, momentum: f32) -> TrainParams {
    TrainParams::new()
        .epochs(EPOCHS)
        .batch_size(4) // 14 rows: batches of 4, 4, 4, 2, so the shuffle matters
        .schedule(LearningRate::Linear {
            start: 0.2,
            end: 0.05,
        })
        .momentum(momentum)
        .algorithm(a)
        .seed(5)
}

use crate::testutil::on_threads as in_pool;

/// The run with an exact evaluation and a checkpoint every epoch; `stop_at` interrupts it
/// (as Ctrl-C would) once epoch `stop_at` has been observed, so it ends a few updates into
/// the next epoch with the checkpoint of epoch `stop_at` left behind.
fn run(
    rbm: Rbm,
    data: &Dataset,
    p: TrainParams,
    ckpt: &Path,
    stop_at: Option<usize>,
    resume: Option<TrainState>,
) -> TrainOutcome {
    let flag = Interrupt::new();
    let setter = flag.clone();
    let mut t = Trainer::new(rbm, data, p)
        .unwrap()
        .add_observer(ExactLogLikelihood::new("train_ll", data.clone()), 1)
        .add_observer(Checkpoint::new(ckpt, BTreeMap::new()), 1)
        .add_observer(
            move |pr: &mut Progress<'_>| {
                if Some(pr.epoch) == stop_at {
                    setter.set();
                }
                Ok(Control::Continue)
            },
            1,
        )
        .interrupt(flag);
    if let Some(s) = resume {
        t = t.resume(s);
    }
    t.run().unwrap()
}

/// Split at epoch 3 (1 thread), resumed from the checkpoint (2 threads), equal to the
/// uninterrupted run (2 threads) bit for bit: model, offsets, steps and every metric.
#[test]
fn a_resumed_run_ends_with_the_bits_of_the_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let data = data();
    let rbm0 = Rbm::init_from_data(&data, 5, 0.01, &mut rng_from_seed(1)).unwrap();
    for a in ALGORITHMS {
        for momentum in [0.0, 0.5] {
            let p = params(a, momentum);
            let ck_full = dir.path().join("full.safetensors");
            let ck = dir.path().join("split.safetensors");
            let full = in_pool(2, || run(rbm0.clone(), &data, p, &ck_full, None, None));
            assert_eq!(full.record.stop, StopReason::MaxEpochs);
            let first = in_pool(1, || run(rbm0.clone(), &data, p, &ck, Some(3), None));
            assert!(
                matches!(first.record.stop, StopReason::Interrupted { .. }),
                "{a}: {:?}",
                first.record.stop
            );
            let (file, state) = load_checkpoint(&ck).unwrap();
            let state = state.unwrap_or_else(|| panic!("{a}: no loop state"));
            assert_eq!((state.epoch, file.metadata["epoch"].as_str()), (3, "3"));
            assert!(!file.metadata.contains_key("stop_reason"), "{a}");
            let rest = in_pool(2, || {
                run(file.rbm.clone(), &data, p, &ck, None, Some(state.clone()))
            });
            let what = format!("{a}, momentum {momentum}");
            assert_eq!(rest.record.stop, StopReason::MaxEpochs, "{what}");
            assert_eq!(rest.model, full.model, "{what}");
            assert_eq!(rest.record.offsets, full.record.offsets, "{what}");
            assert_eq!(
                (rest.record.epochs, rest.record.steps),
                (full.record.epochs, full.record.steps),
                "{what}"
            );
            let strip = |h: &[crate::io::MetricRecord]| {
                h.iter()
                    .map(|r| (r.epoch, r.step, r.metrics.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                strip(&rest.record.history),
                strip(&full.record.history),
                "{what}"
            );
            // the finished run's final checkpoint holds no loop state
            assert!(load_checkpoint(&ck).unwrap().1.is_none(), "{what}");

            // the test can fail: the same model without the loop state (a warm start at
            // epoch 3 with fresh chains, shuffle and velocity) ends elsewhere
            let warm = Trainer::new(file.rbm.clone(), &data, p.epochs(EPOCHS - 3))
                .unwrap()
                .run()
                .unwrap();
            assert_ne!(warm.model, full.model, "{what}");
        }
    }
}

/// A resume under other settings, from a state past the last epoch, or with an estimator
/// that cannot restore a state is refused; a user's estimator without `save_state` leaves a
/// checkpoint without loop state.
#[test]
fn resume_refuses_what_it_cannot_continue() {
    let dir = tempfile::tempdir().unwrap();
    let data = data();
    let rbm0 = Rbm::init_from_data(&data, 4, 0.01, &mut rng_from_seed(1)).unwrap();
    let ck = dir.path().join("ck.safetensors");
    let p = params(Algorithm::Pcd { k: 1 }, 0.5);
    run(rbm0.clone(), &data, p, &ck, Some(2), None);
    let (file, state) = load_checkpoint(&ck).unwrap();
    let state = state.unwrap();
    let refused_state = |p: TrainParams, data: &Dataset, state: TrainState| match Trainer::new(
        file.rbm.clone(),
        data,
        p,
    )
    .unwrap()
    .resume(state)
    .run()
    {
        Err(Error::InvalidParam { field, reason }) => {
            assert_eq!(field, "resume");
            reason
        }
        other => panic!("expected a refusal, got {other:?}"),
    };
    let refused = |p: TrainParams, data: &Dataset| refused_state(p, data, state.clone());
    assert!(refused(p.seed(6), &data).contains("settings differ"));
    assert!(refused(p.epochs(9), &data).contains("settings differ"));
    let done = TrainState {
        epoch: EPOCHS,
        ..state.clone()
    };
    assert!(refused_state(p, &data, done).contains("nothing to resume"));
    let fewer = data.select(&(0..10).collect::<Vec<_>>()).unwrap();
    assert!(refused(p, &fewer).contains("10"));

    // a user's estimator: no state saved, and a restore is refused
    struct Mine(Cd);
    impl GradientEstimator for Mine {
        fn estimate(&mut self, rbm: &Rbm, v: &[f32], grad: &mut Gradient) -> crate::Result<()> {
            self.0.estimate(rbm, v, grad)
        }
    }
    Trainer::new(rbm0.clone(), &data, p)
        .unwrap()
        .update(Mine(Cd::new(1, 1).unwrap()))
        .add_observer(Checkpoint::new(&ck, BTreeMap::new()), 1)
        .run()
        .unwrap();
    assert!(load_checkpoint(&ck).unwrap().1.is_none());
    let e = Trainer::new(file.rbm.clone(), &data, p)
        .unwrap()
        .update(Mine(Cd::new(1, 1).unwrap()))
        .resume(state)
        .run()
        .unwrap_err();
    assert!(e.to_string().contains("cannot restore"), "{e}");
}

/// A generator restored from its serialized form continues the same stream.
#[test]
fn a_restored_generator_continues_its_stream() {
    let mut a = rng_from_seed(9);
    a.next_u64();
    let mut bytes = Vec::new();
    ciborium::into_writer(&a, &mut bytes).unwrap();
    let mut b: BkRng = ciborium::from_reader(bytes.as_slice()).unwrap();
    let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
    let ys: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
    assert_eq!(xs, ys);
}

/// The log of a resumed run drops the lines written after the checkpoint, and the
/// early-stopping rule continues its running minimum from the restored history.
#[test]
fn log_and_early_stop_continue_where_the_checkpoint_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("log.jsonl");
    let mut log = MetricLog::create(&log_path).unwrap();
    for e in 0..5u64 {
        log.record(e, e, [("x", e as f64)]).unwrap();
    }
    let resumed = JsonlLog::resume(&log_path, 2).unwrap();
    assert_eq!(
        resumed
            .records()
            .iter()
            .map(|r| r.epoch)
            .collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(MetricLog::read(&log_path).unwrap().len(), 3);

    // GapEarlyStop: a split run stops at the epoch the uninterrupted one stops at
    let all = data();
    let train = all.select(&(0..10).collect::<Vec<_>>()).unwrap();
    let valid = all.select(&[10, 11, 12, 13]).unwrap();
    let rbm0 = Rbm::init_from_data(&train, 6, 0.01, &mut rng_from_seed(3)).unwrap();
    let p = TrainParams::new()
        .epochs(200)
        .batch_size(2)
        .learning_rate(0.1)
        .seed(2);
    let ck = dir.path().join("gap.safetensors");
    let go = |rbm: Rbm, stop_at: Option<usize>, resume: Option<TrainState>| {
        let flag = Interrupt::new();
        let setter = flag.clone();
        let mut t = Trainer::new(rbm, &train, p)
            .unwrap()
            .add_observer(
                GapEarlyStop::new(train.clone(), valid.clone(), 0.5).unwrap(),
                5,
            )
            .add_observer(Checkpoint::new(&ck, BTreeMap::new()), 5)
            .add_observer(
                move |pr: &mut Progress<'_>| {
                    if Some(pr.epoch) == stop_at {
                        setter.set();
                    }
                    Ok(Control::Continue)
                },
                5,
            )
            .interrupt(flag);
        if let Some(s) = resume {
            t = t.resume(s);
        }
        t.run().unwrap()
    };
    let full = go(rbm0.clone(), None, None);
    let StopReason::EarlyStopped { after, .. } = &full.record.stop else {
        panic!("expected an early stop, got {:?}", full.record.stop);
    };
    // the minimum (0.361) was seen early: a resumed run that forgot it would not stop at
    // the first observation after the split
    let stopped_at = after.count;
    assert_eq!(stopped_at, 135);
    let split = stopped_at - 5;
    go(rbm0, Some(split), None);
    let (file, state) = load_checkpoint(&ck).unwrap();
    let rest = go(file.rbm, None, state);
    assert_eq!(rest.record.stop, full.record.stop);
    assert_eq!(rest.model, full.model);
}
