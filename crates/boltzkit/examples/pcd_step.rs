//! Where a PCD-1 update's time goes: the MNIST mini-batch step (60,000 × 784 → 500 hidden,
//! batch 100, `threshold:127`) split into its phases, per-phase medians over a few hundred
//! updates, on 1 and 2 threads, and the whole `Cd::estimate` + `Sgd::step`.
//! `cargo run --release -p boltzkit --example pcd_step -- MNIST_TRAIN_IDX [UPDATES]`.

use boltzkit::data::{read_dataset, Binarize, ReadOptions};
use boltzkit::rbm::train::{Cd, Gradient, GradientEstimator, SgdParams};
use boltzkit::rbm::{fill_batch, GibbsChains, Rbm};
use boltzkit::rng::rng_from_seed;
use std::path::Path;
use std::time::Instant;

fn median(mut x: Vec<f64>) -> f64 {
    x.sort_by(f64::total_cmp);
    x[x.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: pcd_step MNIST_TRAIN_IDX [UPDATES]");
    let updates: usize = args.get(2).map_or(300, |s| s.parse().unwrap());
    let opts = ReadOptions::default().with_binarize(Binarize::Threshold(127.0));
    let data = read_dataset(Path::new(path), &opts).unwrap();
    let (bs, nh) = (100, 500);
    let nv = data.n_vars();
    let batches: Vec<Vec<f32>> = (0..updates + 20)
        .map(|u| {
            let rows: Vec<usize> = (0..bs).map(|r| (u * bs + r) % data.n_samples()).collect();
            let mut v = vec![0f32; bs * nv];
            fill_batch(&data, &rows, &mut v).unwrap();
            v
        })
        .collect();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let rbm0 = Rbm::init_from_data(&data, nh, 0.01, &mut rng_from_seed(1)).unwrap();
            // phases, by the public pieces Cd::estimate is made of
            let mut rbm = rbm0.clone();
            let mut sgd = SgdParams::new().learning_rate(0.05).check().unwrap();
            let mut grad = Gradient::like(&rbm);
            let mut chains = GibbsChains::new(&rbm, &batches[0], 7).unwrap();
            let mut p_pos = vec![0f32; bs * nh];
            let names = [
                "V·W+σ (+pack W)",
                "h~ (Ṽ·W)",
                "v~ (H·Wᵀ, +pack Wᵀ)",
                "Ṽ′·W+σ",
                "stats",
                "sgd",
            ];
            let mut t: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
            for (u, v) in batches.iter().enumerate() {
                let mut ts = [0f64; 6];
                let mut clock = Instant::now();
                let mut lap = |i: usize, clock: &mut Instant| {
                    ts[i] = clock.elapsed().as_secs_f64();
                    *clock = Instant::now();
                };
                rbm.hidden_probs(v, &mut p_pos).unwrap();
                lap(0, &mut clock);
                chains.sample_hidden(&rbm).unwrap();
                lap(1, &mut clock);
                chains.sample_visible(&rbm).unwrap();
                lap(2, &mut clock);
                chains.update_hidden_probs(&rbm).unwrap();
                lap(3, &mut clock);
                grad.set_difference(&rbm, v, &p_pos, chains.visible(), chains.hidden_probs())
                    .unwrap();
                lap(4, &mut clock);
                sgd.step(&mut rbm, &grad).unwrap();
                lap(5, &mut clock);
                if u >= 20 {
                    t.iter_mut().zip(ts).for_each(|(t, x)| t.push(x));
                }
            }
            let meds: Vec<f64> = t.into_iter().map(median).collect();
            let line: Vec<String> = names
                .iter()
                .zip(&meds)
                .map(|(n, m)| format!("{n} {:.0}", m * 1e6))
                .collect();
            println!(
                "threads {threads}: phases (median µs) {}; sum {:.0}",
                line.join(", "),
                meds.iter().sum::<f64>() * 1e6
            );
            // the whole update as the trainer runs it
            let mut rbm = rbm0.clone();
            let mut sgd = SgdParams::new().learning_rate(0.05).check().unwrap();
            let mut cd = Cd::persistent(1, 7).unwrap();
            let mut whole = Vec::new();
            for (u, v) in batches.iter().enumerate() {
                let clock = Instant::now();
                cd.estimate(&rbm, v, &mut grad).unwrap();
                sgd.step(&mut rbm, &grad).unwrap();
                if u >= 20 {
                    whole.push(clock.elapsed().as_secs_f64());
                }
            }
            let min = whole.iter().copied().fold(f64::INFINITY, f64::min);
            println!(
                "threads {threads}: Cd::estimate + Sgd::step median {:.0} µs, min {:.0} µs",
                median(whole) * 1e6,
                min * 1e6
            );
        });
    }
}
