//! Minimum-of-N timings of the sparse 0/1 products against the dense GEMM on one thread, run
//! alternately so a busy machine slows both alike; sets `linalg::binary::SPARSE_MAX_DENSITY`.
//! `cargo run --release -p boltzkit --example binary_vs_gemm`.

use boltzkit::linalg::binary::{sum_selected, IndexLists, Packed};
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
    let (mut lists, mut packed_w, mut packed_wt, mut packed_p) = (
        IndexLists::default(),
        Packed::default(),
        Packed::default(),
        Packed::default(),
    );
    pool.install(|| {
        // packing W (per update in training) and Wᵀ, timed once
        let pack_w = min_time(20, || packed_w.pack(&w, nv, nh));
        let pack_wt = min_time(20, || packed_wt.pack_transposed(&w, nv, nh));
        println!(
            "pack W {:.0} µs, pack Wᵀ {:.0} µs",
            pack_w * 1e6,
            pack_wt * 1e6
        );
        for density in [0.05f32, 0.13, 0.2, 0.3, 0.4, 0.5] {
            let v = random_binary(bt * nv, density, 1);
            let h = random_binary(bt * nh, density, 2);
            let mut out = vec![0f32; bt * nh];
            let mut outv = vec![0f32; bt * nv];
            let mut stats = vec![0f32; nv * nh];
            let mut t = [f64::INFINITY; 6];
            for _ in 0..10 {
                let runs = [
                    min_time(3, || {
                        sgemm(Op::N, Op::N, bt, nh, nv, 1.0, &v, &w, 0.0, &mut out)
                    }),
                    min_time(3, || {
                        lists.rows_of(&v, nv, 1.0).unwrap();
                        sum_selected(&lists, &packed_w, &mut out)
                    }),
                    min_time(3, || {
                        sgemm(Op::N, Op::T, bt, nv, nh, 1.0, &h, &w, 0.0, &mut outv)
                    }),
                    min_time(3, || {
                        lists.rows_of(&h, nh, 1.0).unwrap();
                        sum_selected(&lists, &packed_wt, &mut outv)
                    }),
                    min_time(3, || {
                        sgemm(Op::T, Op::N, nv, nh, bt, 1.0, &v, &p, 0.0, &mut stats)
                    }),
                    min_time(3, || {
                        lists.columns_of(&[&v], nv, 1.0).unwrap();
                        packed_p.pack(&p, bt, nh);
                        sum_selected(&lists, &packed_p, &mut stats)
                    }),
                ];
                for (ti, r) in t.iter_mut().zip(runs) {
                    *ti = ti.min(r);
                }
            }
            let us = |x: f64| x * 1e6;
            println!(
                "density {density:.2}: V·W dense {:.0} sparse {:.0} µs ({:.1}x) | H·Wᵀ dense {:.0} \
                 sparse {:.0} µs ({:.1}x) | Vᵀ·P dense {:.0} sparse {:.0} µs ({:.1}x)",
                us(t[0]),
                us(t[1]),
                t[0] / t[1],
                us(t[2]),
                us(t[3]),
                t[2] / t[3],
                us(t[4]),
                us(t[5]),
                t[4] / t[5]
            );
        }
    });
}
