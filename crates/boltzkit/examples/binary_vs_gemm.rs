//! Minimum-of-N timings of the sparse 0/1 kernels against the dense GEMM on one thread, run
//! alternately so a busy machine slows both alike: `cargo run --release -p boltzkit --example
//! binary_vs_gemm`.

use boltzkit::linalg::binary::{binary_matmul, binary_t_matmul};
use boltzkit::linalg::{sgemm, Op};
use boltzkit::rng::rng_from_seed;
use rand::Rng;
use std::time::Instant;

fn random_binary(len: usize, density: f32, seed: u64) -> Vec<f32> {
    let mut rng = rng_from_seed(seed);
    (0..len)
        .map(|_| f32::from(u8::from(rng.random::<f32>() < density)))
        .collect()
}

fn min_time(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let (bt, nv, nh) = (100, 784, 500);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let w: Vec<f32> = random_binary(nv * nh, 0.5, 3)
        .iter()
        .map(|x| x - 0.5)
        .collect();
    let p = random_binary(bt * nh, 0.5, 4);
    pool.install(|| {
        for density in [0.05f32, 0.13, 0.2, 0.3, 0.5] {
            let v = random_binary(bt * nv, density, 1);
            let mut out = vec![0f32; bt * nh];
            let mut stats = vec![0f32; nv * nh];
            let (mut dense_f, mut sparse_f, mut dense_s, mut sparse_s) = (1e9f64, 1e9f64, 1e9f64, 1e9f64);
            for _ in 0..20 {
                dense_f = dense_f.min(min_time(3, || sgemm(Op::N, Op::N, bt, nh, nv, 1.0, &v, &w, 0.0, &mut out)));
                sparse_f = sparse_f.min(min_time(3, || binary_matmul(&v, &w, bt, nv, nh, &mut out)));
                dense_s = dense_s.min(min_time(3, || sgemm(Op::T, Op::N, nv, nh, bt, 1.0, &v, &p, 0.0, &mut stats)));
                sparse_s = sparse_s.min(min_time(3, || binary_t_matmul(&v, &p, bt, nv, nh, 1.0, 0.0, &mut stats)));
            }
            println!(
                "density {density:.2}: V·W dense {:.0} µs sparse {:.0} µs ({:.1}x) | Vᵀ·P dense {:.0} µs sparse {:.0} µs ({:.1}x)",
                dense_f * 1e6, sparse_f * 1e6, dense_f / sparse_f, dense_s * 1e6, sparse_s * 1e6, dense_s / sparse_s
            );
        }
    });
}
