//! The timings of `boltzkit bench`, the boltzkit side of the peer comparisons in
//! BENCHMARKS.md: whole RBM training epochs, forward AIS, the exact `ln Z`. Each repeats its
//! work and reports every run's seconds, the minimum and the median ([`Timings`]), so a busy
//! machine shows as a spread rather than a wrong figure. Results derive `Serialize`: the
//! command line's `--json` summary is the result.

use crate::Progress;
use boltzkit::data::Dataset;
use boltzkit::rbm::ais::{ais_log_partition, AisSchedule};
use boltzkit::rbm::exact;
use boltzkit::rbm::train::{TrainParams, Trainer};
use boltzkit::rbm::Rbm;
use boltzkit::rng::{derive_seed, rng_from_seed};
use serde::Serialize;
use std::time::Instant;

/// Seconds of the timed runs.
#[derive(Debug, Clone, Serialize)]
pub struct Timings {
    /// Number of timed runs.
    pub runs: usize,
    /// The fastest run.
    pub min_s: f64,
    /// The median run (the upper one of an even count).
    pub median_s: f64,
    /// Every run, in order.
    pub runs_s: Vec<f64>,
}

/// Runs `work(r)` for `r < repeats` (at least 1), noting each run's seconds on `progress`;
/// returns the timings and the last result.
pub fn time_runs<T>(
    repeats: usize,
    progress: &dyn Progress,
    mut work: impl FnMut(usize) -> anyhow::Result<T>,
) -> anyhow::Result<(Timings, T)> {
    if repeats == 0 {
        return Err(crate::UsageError::new("--repeats must be at least 1").into());
    }
    let mut times = Vec::with_capacity(repeats);
    let mut last = None;
    progress.stage("timed runs", Some(repeats as u64));
    for r in 0..repeats {
        let t = Instant::now();
        last = Some(work(r)?);
        times.push(t.elapsed().as_secs_f64());
        progress.note(&format!("run {}: {:.3} s", r + 1, times[r]));
        progress.advance(1);
    }
    progress.finish();
    let last = last.ok_or_else(|| anyhow::anyhow!("no timed run"))?;
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let timings = Timings {
        runs: times.len(),
        min_s: sorted[0],
        median_s: sorted[sorted.len() / 2],
        runs_s: times,
    };
    Ok((timings, last))
}

/// Times `repeats` trainings of a fresh RBM of `hidden` units (the Sec. 4.1 initialization,
/// as scikit-learn's `fit` includes it) on `data` with `params` (checked); run `r` is seeded
/// from `derive_seed(seed, 10 + r)`.
pub fn rbm_epochs(
    data: &Dataset,
    hidden: usize,
    params: TrainParams,
    repeats: usize,
    seed: u64,
    progress: &dyn Progress,
) -> anyhow::Result<Timings> {
    params.check()?;
    let (timings, _) = time_runs(repeats, progress, |r| {
        let run_seed = derive_seed(seed, 10 + r as u64);
        let rbm = Rbm::init_from_data(
            data,
            hidden,
            0.01,
            &mut rng_from_seed(derive_seed(run_seed, 0)),
        )?;
        let params = params.seed(derive_seed(run_seed, 1));
        Ok(Trainer::new(rbm, data, params)?.run()?.record.steps)
    })?;
    Ok(timings)
}

/// The estimate and timings of [`ais`].
#[derive(Debug, Clone, Serialize)]
pub struct AisBench {
    /// AIS chains.
    pub chains: usize,
    /// Steps of the schedule.
    pub steps: usize,
    /// The last run's `ln Ẑ`.
    pub log_z: f64,
    /// Its standard error.
    pub log_z_se: f64,
    /// The runs' seconds.
    #[serde(flatten)]
    pub timings: Timings,
}

/// Times `repeats` forward AIS estimates of `ln Z` of `rbm` from the base model of visible
/// biases `base`; run `r` is seeded from `derive_seed(seed, 1 + r)`.
pub fn ais(
    rbm: &Rbm,
    base: &[f32],
    schedule: &AisSchedule,
    chains: usize,
    repeats: usize,
    seed: u64,
    progress: &dyn Progress,
) -> anyhow::Result<AisBench> {
    let (timings, est) = time_runs(repeats, progress, |r| {
        let run_seed = derive_seed(seed, 1 + r as u64);
        Ok(ais_log_partition(rbm, base, schedule, chains, run_seed)?)
    })?;
    Ok(AisBench {
        chains,
        steps: schedule.betas().len() - 1,
        log_z: est.log_z,
        log_z_se: est.std_err,
        timings,
    })
}

/// Times `repeats` exact `ln Z` (enumeration of the smaller layer); returns it and the
/// timings.
pub fn exact_log_z(
    rbm: &Rbm,
    repeats: usize,
    progress: &dyn Progress,
) -> anyhow::Result<(f64, Timings)> {
    let (timings, log_z) = time_runs(repeats, progress, |_| Ok(exact::log_partition(rbm)?))?;
    Ok((log_z, timings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_have_min_median_and_every_run() {
        let (t, last) = time_runs(3, &crate::Silent, |r| Ok(r * 2)).unwrap();
        assert_eq!(last, 4);
        assert_eq!((t.runs, t.runs_s.len()), (3, 3));
        assert!(t.min_s <= t.median_s);
        assert!(time_runs(0, &crate::Silent, |_| Ok(())).is_err());
    }
}
