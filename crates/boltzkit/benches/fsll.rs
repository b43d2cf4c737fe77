//! FSLL per-iteration kernels at |X| = 2^20 and 2^24: the fused XOR update + scan against one
//! iteration of the full-transform path (Algorithm 3 + transform + scan).
//!
//! Run: `cargo bench -p boltzkit --bench fsll`. Throughput is reported in states per second;
//! nanoseconds per state per iteration = 1e9 / throughput.

use boltzkit::fsll::learn::multiply_by_exp_phi;
use boltzkit::fsll::penalty::Penalty;
use boltzkit::fsll::scan::scan_appends;
use boltzkit::fsll::transform::forward;
use boltzkit::fsll::xor::{update_and_scan, XorUpdate};
use boltzkit::fsll::Layout;
use boltzkit::rng::rng_from_seed;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::Rng;

fn tables(bits: usize) -> (Layout, Vec<f64>, Vec<f64>, Vec<f64>) {
    let layout = Layout::new(&vec![2; bits]).unwrap();
    let n = layout.n_states();
    let mut rng = rng_from_seed(1);
    // a positive distribution and its duals
    let mut p: Vec<f64> = (0..n).map(|_| 0.5 + rng.random::<f64>()).collect();
    let s: f64 = p.iter().sum();
    p.iter_mut().for_each(|v| *v /= s);
    let mut tb = p.clone();
    forward(&layout, &mut tb);
    let mut db: Vec<f64> = (0..n).map(|_| 0.5 + rng.random::<f64>()).collect();
    let s: f64 = db.iter().sum();
    db.iter_mut().for_each(|v| *v /= s);
    forward(&layout, &mut db);
    (layout, p, tb, db)
}

fn fsll_pass(c: &mut Criterion) {
    let mut g = c.benchmark_group("fsll_iteration");
    g.sample_size(10);
    for bits in [20usize, 24] {
        let (layout, p, mut tb, db) = tables(bits);
        let n = layout.n_states();
        let pen = Penalty::new(&layout, 100_000);
        g.throughput(Throughput::Elements(n as u64));
        let mut k = 0usize;
        g.bench_with_input(BenchmarkId::new("xor_fused", bits), &bits, |b, _| {
            b.iter(|| {
                // alternate low- and high-order updates, small steps so θ̄ stays in range
                k += 1;
                let y = if k.is_multiple_of(2) { 3 } else { (n >> 1) | 5 };
                let delta = if k % 4 < 2 { 1e-3 } else { -1e-3 };
                let u = XorUpdate::new(y, delta, tb[y]);
                update_and_scan(&mut tb, &db, &pen, u)
            })
        });
        let mut pt = p.clone();
        let mut tb2 = tb.clone();
        g.bench_with_input(BenchmarkId::new("full_transform", bits), &bits, |b, _| {
            b.iter(|| {
                k += 1;
                let delta = if k.is_multiple_of(2) { 1e-3 } else { -1e-3 };
                multiply_by_exp_phi(&layout, &mut pt, 3, delta);
                tb2.copy_from_slice(&pt);
                forward(&layout, &mut tb2);
                scan_appends(&tb2, &db, &pen)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, fsll_pass);
criterion_main!(benches);
