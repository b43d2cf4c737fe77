//! The pseudo-likelihood engine on a protein alignment with plmc's settings, for the side-by-
//! side timing against plmc (BENCHMARKS.md): reads the alignment with a focus sequence,
//! weights at identity 0.8, fits symmetric PLM with the gap ignored (`-le 16 -lh 0.01 -g`),
//! prints each iteration's time and objective (plmc's `fx`), the time to reach `TARGET` (the
//! objective plmc reaches at its iteration 100; the fit stops there unless `STOP_AT_TARGET=0`),
//! and writes plmc's couplings file.
//!
//! `cargo run --release -p boltzkit --example plm_vs_plmc -- ALIGNMENT FOCUS OUT [MAX_ITER]
//! [TARGET] [OBJECTIVE_TOL] [SNAPSHOTS]` (FOCUS `-` for none; OBJECTIVE_TOL sets
//! `PlmParams::objective_tol`, default 0; SNAPSHOTS, e.g. `50,100,200`, also writes the
//! couplings file of those iterations' parameters as `OUT.itN`).

use boltzkit::fit::{Control, Count, Run, StopReason};
use boltzkit::potts::plm::{PlmParams, PlmProgress};
use boltzkit::potts::scores::{coupling_scores, write_couplings, ScoreParams};
use boltzkit::potts::weights::sequence_weights;
use boltzkit::potts::{read_alignment, Alignment, AlignmentParams, Potts};
use ndarray::ArrayView2;
use std::path::Path;
use std::time::Instant;

fn main() -> boltzkit::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: plm_vs_plmc ALIGNMENT FOCUS OUT [MAX_ITER] [TARGET]");
        std::process::exit(2);
    }
    let max_iterations: usize = args.get(4).map_or(2000, |s| s.parse().unwrap());
    let target: f64 = args
        .get(5)
        .map_or(f64::NEG_INFINITY, |s| s.parse().unwrap());
    let objective_tol: f64 = args.get(6).map_or(0.0, |s| s.parse().unwrap());
    let snapshots: Vec<usize> = args.get(7).map_or(Vec::new(), |s| {
        s.split(',').map(|v| v.parse().unwrap()).collect()
    });
    // With a target, a run for time-to-objective ends there (STOP_AT_TARGET=0 goes on).
    let stop_at_target =
        target.is_finite() && std::env::var("STOP_AT_TARGET").as_deref() != Ok("0");
    let start = Instant::now();
    let read = AlignmentParams {
        focus: (args[2] != "-").then(|| args[2].clone()),
        skip_unknown: true,
        ..AlignmentParams::default()
    };
    let ali = read_alignment(Path::new(&args[1]), &read)?;
    let weights = sequence_weights(ali.codes.view(), 0.8)?;
    let data = ali.dataset()?;
    eprintln!(
        "{} sequences x {} sites, N_eff {:.1}, read + weights {:.2} s",
        ali.n_sequences(),
        ali.n_sites(),
        weights.iter().sum::<f64>(),
        start.elapsed().as_secs_f64()
    );
    let params = PlmParams {
        gap_state: ali.alphabet.gap(),
        max_iterations,
        objective_tol,
        ..PlmParams::default()
    };
    let learner = params.check()?;
    let states: Vec<usize> = data
        .cardinalities()
        .iter()
        .map(|&k| k as usize - usize::from(params.gap_state.is_some()))
        .collect();
    let mut reached: Option<(usize, f64)> = None;
    let run = Run::new().observe(|p: &mut PlmProgress<'_>| {
        let t = start.elapsed().as_secs_f64();
        eprintln!(
            "{}\t{t:.2}\t{:.4}\t{:.1}\t{}",
            p.iteration,
            p.grad_norm / p.param_norm.max(1.0),
            p.objective,
            p.evaluations
        );
        if reached.is_none() && p.objective <= target {
            reached = Some((p.iteration, t));
            if stop_at_target {
                return Ok(Control::Stop(StopReason::EarlyStopped {
                    after: Count::iterations(p.iteration),
                    detail: format!("reached the target objective {target}"),
                }));
            }
        }
        if snapshots.contains(&p.iteration) {
            let mut model = Potts::zeros(states.clone())?;
            let n_h = model.fields_flat().len();
            let (h, j) = model.parameters_mut();
            h.copy_from_slice(&p.params[..n_h]);
            j.copy_from_slice(&p.params[n_h..]);
            let out = format!("{}.it{}", args[3], p.iteration);
            write_scores(&model, &ali, Path::new(&out))?;
        }
        Ok(Control::Continue)
    });
    let fit = learner.fit_weighted(&data, Some(&weights), run)?;
    let fit_done = start.elapsed().as_secs_f64();
    write_scores(&fit.model, &ali, Path::new(&args[3]))?;
    println!(
        "{{\"stop\": \"{}\", \"iterations\": {}, \"evaluations\": {}, \"objective\": {}, \
         \"fit_seconds\": {:.3}, \"total_seconds\": {:.3}, \"target_iteration\": {}, \
         \"target_seconds\": {}}}",
        fit.record.stop,
        fit.record.iterations,
        fit.record.evaluations,
        fit.record.objective,
        fit_done,
        start.elapsed().as_secs_f64(),
        reached.map_or("null".into(), |r| r.0.to_string()),
        reached.map_or("null".into(), |r| format!("{:.3}", r.1)),
    );
    Ok(())
}

/// Writes plmc's couplings file of `model`'s APC-corrected Frobenius scores (zero-sum gauge).
fn write_scores(model: &Potts, ali: &Alignment, out: &Path) -> boltzkit::Result<()> {
    let model = model.zero_sum_gauge();
    let l = model.n_sites();
    let q = model.states()[0];
    let blocks: Vec<Vec<f64>> = (0..l)
        .flat_map(|i| (i + 1..l).map(move |j| (i, j)))
        .map(|(i, j)| model.coupling(i, j).to_vec())
        .collect();
    let index = |i: usize, j: usize| boltzkit::potts::pair_index(l, i, j);
    let scores = coupling_scores(
        l,
        |i, j| ArrayView2::from_shape((q, q), &blocks[index(i, j)]).unwrap(),
        None,
        &ScoreParams::default(),
    )?;
    let letters = ali.focus_letters();
    write_couplings(out, &scores, &ali.positions, letters.as_deref())
}
