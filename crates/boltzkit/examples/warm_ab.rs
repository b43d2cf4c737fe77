//! What holding a [`boltzkit::warm::Warm`] buys a PCD-1 MNIST training loop: rounds of 200
//! updates (`Cd::estimate` + `Sgd::step`, 784 → 500 hidden, batch 100, `threshold:127`) on 2
//! threads without and with a `Warm`, then on 1 thread, interleaved so that a host whose speed
//! drifts affects all three alike; per-update minimum, quartile and median, and the median
//! round. `cargo run --release -p boltzkit --example warm_ab -- MNIST_TRAIN_IDX [ROUNDS]`.

use boltzkit::data::{read_dataset, Binarize, ReadOptions};
use boltzkit::rbm::train::{Cd, Gradient, GradientEstimator, SgdParams};
use boltzkit::rbm::{fill_batch, Rbm};
use boltzkit::rng::rng_from_seed;
use boltzkit::warm::Warm;
use std::path::Path;
use std::time::Instant;

/// The `q`-quantile (0 = minimum) of `x`.
fn quantile(mut x: Vec<f64>, q: f64) -> f64 {
    x.sort_by(f64::total_cmp);
    x[((x.len() - 1) as f64 * q) as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: warm_ab MNIST_TRAIN_IDX [ROUNDS]");
    let rounds: usize = args.get(2).map_or(8, |s| s.parse().unwrap());
    let opts = ReadOptions::default().with_binarize(Binarize::Threshold(127.0));
    let data = read_dataset(Path::new(path), &opts).unwrap();
    let (bs, nh, updates) = (100, 500, 200);
    let nv = data.n_vars();
    let batches: Vec<Vec<f32>> = (0..updates)
        .map(|u| {
            let rows: Vec<usize> = (0..bs).map(|r| (u * bs + r) % data.n_samples()).collect();
            let mut v = vec![0f32; bs * nv];
            fill_batch(&data, &rows, &mut v).unwrap();
            v
        })
        .collect();
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let (two, one) = (pool(2), pool(1));
    let rbm0 = Rbm::init_from_data(&data, nh, 0.01, &mut rng_from_seed(1)).unwrap();
    let modes = ["2 threads", "2 threads, Warm held", "1 thread"];
    let mut per_update: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut per_round: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    for round in 0..rounds {
        let mut line = Vec::new();
        for (m, name) in modes.iter().enumerate() {
            let p = if m == 2 { &one } else { &two };
            let total = p.install(|| {
                let mut rbm = rbm0.clone();
                let mut sgd = SgdParams::new().learning_rate(0.05).check().unwrap();
                let mut cd = Cd::persistent(1, 7).unwrap();
                let mut grad = Gradient::like(&rbm);
                let _warm = (m == 1).then(Warm::start);
                let all = Instant::now();
                for v in &batches {
                    let clock = Instant::now();
                    cd.estimate(&rbm, v, &mut grad).unwrap();
                    sgd.step(&mut rbm, &grad).unwrap();
                    per_update[m].push(clock.elapsed().as_secs_f64());
                }
                all.elapsed().as_secs_f64()
            });
            per_round[m].push(total);
            line.push(format!("{name} {:.1} ms", total * 1e3));
        }
        println!("round {round}: {updates} updates: {}", line.join(", "));
    }
    for (m, name) in modes.iter().enumerate() {
        let t = &per_update[m];
        println!(
            "{name}: per update min {:.0} µs, first quartile {:.0} µs, median {:.0} µs; median round {:.1} ms",
            quantile(t.clone(), 0.0) * 1e6,
            quantile(t.clone(), 0.25) * 1e6,
            quantile(t.clone(), 0.5) * 1e6,
            quantile(per_round[m].clone(), 0.5) * 1e3
        );
    }
}
