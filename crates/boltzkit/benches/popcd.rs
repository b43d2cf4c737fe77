//! Time per update of pop-CD-1 against CD-1 and of PT-10 against CD-10 on MNIST-sized RBMs
//! (784 × 500), the two sides of each ratio timed interleaved (A B B A …) in the same run so
//! that the load of a shared machine falls on both alike.
//!
//! Run: `cargo bench -p boltzkit --bench popcd` (env `ROUNDS`, default 40; `BATCHES`, default
//! `100,500`). Data: the first 5,000 rows of binarized MNIST (env `MNIST`, else
//! `shared/data/binarized_mnist/` three or four levels above the crate) when present, else
//! random 0/1 rows of MNIST's density (13% ones). An update is one estimate and
//! one SGD step (η = 0.01) on that side's own copy of the model. Each update is timed by the
//! wall clock and by the process's CPU clock (`CLOCK_PROCESS_CPUTIME_ID`): on a loaded machine
//! the CPU time is the steadier measure of the work (run with `RAYON_NUM_THREADS=1` so that no
//! worker spins).

use boltzkit::data::{read_dataset, ReadOptions};
use boltzkit::rbm::train::{Cd, Gradient, GradientEstimator, PopCd, Pt, SgdParams};
use boltzkit::rbm::{fill_batch, Rbm};
use boltzkit::rng::rng_from_seed;
use rand::Rng;
use std::time::Instant;

const MNIST: &str = "shared/data/binarized_mnist/binarized_mnist_train.amat.gz";

/// Rows of 784 binary pixels: MNIST when available.
fn rows(n: usize) -> (Vec<f32>, &'static str) {
    let candidates = std::env::var("MNIST")
        .into_iter()
        .chain(["../../../", "../../../../"].map(|up| format!("{up}{MNIST}")));
    if let Some(d) = candidates
        .filter_map(|p| read_dataset(std::path::Path::new(&p), &ReadOptions::default()).ok())
        .next()
    {
        let n = n.min(d.n_samples());
        let mut out = vec![0f32; n * d.n_vars()];
        fill_batch(&d, &(0..n).collect::<Vec<_>>(), &mut out).unwrap();
        return (out, "binarized MNIST");
    }
    let mut rng = rng_from_seed(1);
    let v = (0..n * 784)
        .map(|_| f32::from(u8::from(rng.random::<f32>() < 0.13)))
        .collect();
    (v, "random 0/1 rows (MNIST not found)")
}

struct Side {
    name: String,
    est: Box<dyn GradientEstimator>,
    rbm: Rbm,
    times: Vec<f64>,
    cpu: Vec<f64>,
}

/// Seconds of CPU time used by this process so far.
fn process_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The median of a bench's timings (never empty).
fn median(x: &[f64]) -> f64 {
    boltzkit::estimate::stats::median(x).expect("timings")
}

/// Times `rounds` updates of each side, interleaved A B B A, after 3 warm-up updates each.
fn compare(mut a: Side, mut b: Side, data: &[f32], batch: usize, rounds: usize) {
    let nv = 784;
    let n_batches = data.len() / (batch * nv);
    let mut sgd = SgdParams::new().learning_rate(0.01).check().unwrap();
    let mut g = Gradient::like(&a.rbm);
    let mut update = |s: &mut Side, i: usize, keep: bool| {
        let k = i % n_batches;
        let v = &data[k * batch * nv..(k + 1) * batch * nv];
        let (t, c) = (Instant::now(), process_cpu_s());
        s.est.estimate(&s.rbm, v, &mut g).unwrap();
        sgd.step(&mut s.rbm, &g).unwrap();
        if keep {
            s.times.push(t.elapsed().as_secs_f64());
            s.cpu.push(process_cpu_s() - c);
        }
    };
    for i in 0..3 {
        update(&mut a, i, false);
        update(&mut b, i, false);
    }
    let (mut ratios, mut cpu_ratios) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        let i = r + 3;
        if r % 2 == 0 {
            update(&mut a, i, true);
            update(&mut b, i, true);
        } else {
            update(&mut b, i, true);
            update(&mut a, i, true);
        }
        ratios.push(b.times[r] / a.times[r]);
        cpu_ratios.push(b.cpu[r] / a.cpu[r]);
    }
    let (ma, mb) = (median(&a.times), median(&b.times));
    let (ca, cb) = (median(&a.cpu), median(&b.cpu));
    println!(
        "batch {batch:>3}: wall {:<9} {:>8.2} ms  {:<9} {:>8.2} ms  ratio {:.3} (paired {:.3}) | \
         cpu {:>8.2} ms  {:>8.2} ms  ratio {:.3} (paired {:.3})  [{rounds} rounds]",
        a.name,
        ma * 1e3,
        b.name,
        mb * 1e3,
        mb / ma,
        median(&ratios),
        ca * 1e3,
        cb * 1e3,
        cb / ca,
        median(&cpu_ratios)
    );
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let batches: Vec<usize> = std::env::var("BATCHES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![100, 500]);
    let (data, source) = rows(5000);
    println!(
        "pop-CD / PT update cost, 784 × 500, data: {source}, threads: {}",
        rayon::current_num_threads()
    );
    let rbm = Rbm::random(784, 500, 0.01, &mut rng_from_seed(2)).unwrap();
    let side = |name: &str, est: Box<dyn GradientEstimator>| Side {
        name: name.into(),
        est,
        rbm: rbm.clone(),
        times: Vec::new(),
        cpu: Vec::new(),
    };
    for &batch in &batches {
        compare(
            side("CD-1", Box::new(Cd::new(1, 7).unwrap())),
            side("pop-CD-1", Box::new(PopCd::new(1, 7).unwrap())),
            &data,
            batch,
            rounds,
        );
    }
    for &batch in &batches {
        compare(
            side("CD-10", Box::new(Cd::new(10, 7).unwrap())),
            side("PT-10", Box::new(Pt::new(10, 1, 7).unwrap())),
            &data,
            batch,
            rounds.div_ceil(4),
        );
    }
}
