//! FVBM engines: exact moments (d = 20, 24), MPLE by BSLM and by Newton on the BSLM paper's
//! simulation design (d = 10, n = 16,000, truth and start from N(0, 0.5), τ = 1e-5), the
//! separation LP on the same data, 20 BSLM sweeps at d = 20 with nearly every one of the
//! 16,000 rows distinct (couplings from N(0, 0.01): the worst case for the per-sweep cost), and
//! exact maximum likelihood (BM-DI) on Ising5x4 data with 100,000 samples.
//!
//! Run: `cargo bench -p boltzkit --bench fvbm`. Sweeps per BSLM fit are printed once, so the
//! time per sweep is the fit time divided by them. The solver timings leave the existence
//! check (the separation LP) out; it is timed on its own.

use boltzkit::data::synth::IsingGrid;
use boltzkit::fit::Learner;
use boltzkit::fvbm::pseudo::PlData;
use boltzkit::fvbm::{exact, mle, newton, separation, Convention, Fvbm, MpleParams};
use boltzkit::rng::rng_from_seed;
use criterion::{criterion_group, criterion_main, Criterion};

fn fvbm(c: &mut Criterion) {
    let mut g = c.benchmark_group("fvbm");
    g.sample_size(10);
    for d in [20usize, 24] {
        let model = Fvbm::random(d, 0.5, Convention::Spin, &mut rng_from_seed(0)).unwrap();
        g.bench_function(format!("exact_moments_d{d}"), |b| {
            b.iter(|| exact::moments(&model).unwrap())
        });
    }
    let d = 10;
    let truth = Fvbm::random(d, 0.5, Convention::Spin, &mut rng_from_seed(10)).unwrap();
    let data = exact::sample(&truth, 16_000, &mut rng_from_seed(110)).unwrap();
    let init = Fvbm::random(d, 0.5, Convention::Spin, &mut rng_from_seed(210)).unwrap();
    let params = MpleParams {
        init: Some(init),
        check_existence: false,
        ..Default::default()
    };
    let sweeps = params
        .check()
        .unwrap()
        .fit(&data)
        .unwrap()
        .record
        .iterations;
    eprintln!("BSLM d = {d}: {sweeps} sweeps per fit");
    g.bench_function("bslm_fit_d10_n16000", |b| {
        b.iter(|| params.check().unwrap().fit(&data).unwrap())
    });
    let nparams = newton::NewtonParams {
        mple: params.clone(),
        ..Default::default()
    };
    g.bench_function("newton_fit_d10_n16000", |b| {
        b.iter(|| nparams.check().unwrap().fit(&data).unwrap())
    });
    let pl = PlData::new(&data, Convention::Spin).unwrap();
    g.bench_function("separation_lp_d10_n16000", |b| {
        b.iter(|| separation::check(&pl).unwrap())
    });
    let wide = Fvbm::random(20, 0.01, Convention::Spin, &mut rng_from_seed(20)).unwrap();
    let wide_data = exact::sample(&wide, 16_000, &mut rng_from_seed(120)).unwrap();
    let rows = PlData::new(&wide_data, Convention::Spin)
        .unwrap()
        .n_distinct();
    eprintln!("d = 20, N(0, 0.01): {rows} distinct rows of 16,000");
    let twenty = MpleParams {
        tau: 0.0,
        max_iterations: 20,
        check_existence: false,
        ..Default::default()
    };
    g.bench_function("bslm_20_sweeps_d20_n16000_distinct", |b| {
        b.iter(|| twenty.check().unwrap().fit(&wide_data).unwrap())
    });
    let grid = IsingGrid::ising5x4().distribution().unwrap();
    let ising = grid.sample(100_000, &mut rng_from_seed(1)).unwrap();
    g.bench_function("bm_di_ising5x4_n100000", |b| {
        b.iter(|| {
            mle::MleParams::default()
                .check()
                .unwrap()
                .fit(&ising)
                .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, fvbm);
criterion_main!(benches);
