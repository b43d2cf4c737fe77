//! RBM hot paths at MNIST scale: the three GEMM shapes of training (batch 100, 784 × 500), one
//! PCD-1 update, exact ln Z of a 784 × 16 RBM (2^16 hidden states; 784 × 25 costs 512× more),
//! and 100 AIS chains × 100 linear steps on 784 × 500 (the standard schedule has 14,500).
//!
//! Run: `cargo bench -p boltzkit --bench rbm`. GEMM throughput is reported in FLOP/s.

use boltzkit::linalg::binary::{sum_selected, IndexLists, Packed};
use boltzkit::linalg::{sgemm, Op};
use boltzkit::rbm::ais::{ais_log_partition, AisSchedule};
use boltzkit::rbm::exact::{log_partition_with_precision, Precision};
use boltzkit::rbm::train::{Cd, Gradient, GradientEstimator, SgdParams};
use boltzkit::rbm::Rbm;
use boltzkit::rng::rng_from_seed;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::Rng;

fn random_batch(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    random_binary(rows, cols, 0.13, seed)
}

fn random_binary(rows: usize, cols: usize, density: f32, seed: u64) -> Vec<f32> {
    let mut rng = rng_from_seed(seed);
    (0..rows * cols)
        .map(|_| f32::from(u8::from(rng.random::<f32>() < density)))
        .collect()
}

/// The sparse 0/1 products (index lists + packed strips, the packing included) on `V·W` and
/// `Vᵀ·P` (batch 100, 784 × 500) at several densities of ones (where to switch:
/// `linalg::binary::SPARSE_MAX_DENSITY`; the dense GEMM is `rbm_gemm`).
fn binary_products(c: &mut Criterion) {
    let (bt, nv, nh) = (100, 784, 500);
    let w: Vec<f32> = random_binary(nv, nh, 0.5, 3)
        .iter()
        .map(|x| x - 0.5)
        .collect();
    let p = random_binary(bt, nh, 0.5, 4);
    let mut g = c.benchmark_group("rbm_binary");
    let (mut lists, mut packed) = (IndexLists::default(), Packed::default());
    for density in [0.13f32, 0.3, 0.5] {
        let v = random_binary(bt, nv, density, 1);
        let mut out = vec![0f32; bt * nh];
        packed.pack(&w, nv, nh);
        g.bench_function(format!("V*W_sparse_{density}"), |b| {
            b.iter(|| {
                lists.rows_of(&v, nv, 1.0).unwrap();
                sum_selected(&lists, &packed, &mut out)
            })
        });
        let mut stats = vec![0f32; nv * nh];
        g.bench_function(format!("Vt*P_sparse_{density}"), |b| {
            b.iter(|| {
                lists.columns_of(&[&v], nv, 1.0).unwrap();
                packed.pack(&p, bt, nh);
                sum_selected(&lists, &packed, &mut stats)
            })
        });
    }
    g.finish();
}

fn gemm_shapes(c: &mut Criterion) {
    let (bt, nv, nh) = (100, 784, 500);
    let v = random_batch(bt, nv, 1);
    let h = random_batch(bt, nh, 2);
    let w: Vec<f32> = random_batch(nv, nh, 3).iter().map(|x| x - 0.5).collect();
    type Case<'a> = (&'a str, Op, Op, usize, usize, usize, &'a [f32], &'a [f32]);
    let cases: [Case; 3] = [
        ("V*W_100x784x500", Op::N, Op::N, bt, nh, nv, &v, &w),
        ("H*Wt_100x500x784", Op::N, Op::T, bt, nv, nh, &h, &w),
        ("Vt*H_784x100x500", Op::T, Op::N, nv, nh, bt, &v, &h),
    ];
    let mut g = c.benchmark_group("rbm_gemm");
    for (name, oa, ob, m, n, k, a, b) in cases {
        let mut out = vec![0f32; m * n];
        g.throughput(Throughput::Elements(2 * (m * n * k) as u64));
        g.bench_function(name, |bench| {
            bench.iter(|| sgemm(oa, ob, m, n, k, 1.0, a, b, 0.0, &mut out))
        });
    }
    g.finish();
}

fn hot_paths(c: &mut Criterion) {
    let mut g = c.benchmark_group("rbm");
    g.sample_size(10);
    let (nv, nh, bt) = (784, 500, 100);
    let mut rbm = Rbm::random(nv, nh, 0.01, &mut rng_from_seed(1)).unwrap();
    let data = random_batch(bt, nv, 4);
    let mut pcd = Cd::persistent(1, 9).unwrap();
    let mut sgd = SgdParams::new().learning_rate(0.01).check().unwrap();
    let mut grad = Gradient::like(&rbm);
    g.bench_function("pcd1_update_784x500_batch100", |b| {
        b.iter(|| {
            pcd.estimate(&rbm, &data, &mut grad).unwrap();
            sgd.step(&mut rbm, &grad).unwrap();
        })
    });
    let small = Rbm::random(784, 16, 0.05, &mut rng_from_seed(2)).unwrap();
    g.bench_function("exact_log_z_784x16", |b| {
        b.iter(|| log_partition_with_precision(&small, Precision::F64).unwrap())
    });
    g.bench_function("exact_log_z_784x16_fast", |b| {
        b.iter(|| log_partition_with_precision(&small, Precision::Fast).unwrap())
    });
    let big = Rbm::random(784, 500, 0.01, &mut rng_from_seed(3)).unwrap();
    let schedule = AisSchedule::linear(100).unwrap();
    let base = vec![0.0; 784];
    g.bench_function("ais_784x500_100chains_100steps", |b| {
        b.iter(|| ais_log_partition(&big, &base, &schedule, 100, 1).unwrap())
    });
    g.finish();
}

criterion_group!(benches, gemm_shapes, binary_products, hot_paths);
criterion_main!(benches);
