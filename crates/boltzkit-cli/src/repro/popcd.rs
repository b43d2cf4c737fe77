//! `boltzkit repro popcd`: the first experiment set of the pop-CD paper (Sec. 4.1, Figs. 1-2:
//! mean exact log-likelihood curves of 16-hidden-unit RBMs trained by CD-1, CD-10, PCD-1,
//! pop-CD-1, pop-CD-10 and PT-10 at the paper's learning rates and iteration counts) and its
//! third set (Table 1: squared bias and variance of CD-k and pop-CD-k, here against the exact
//! gradient).
//!
//! Data: Bars & Stripes 4×4 in its duplicated form (all 32 outcomes of the generative process,
//! all-off and all-on twice: the paper's batch size 32 is this full set), Artificial Modes as
//! the paper (16 bits, 4 modes, 2,500 copies, p = 0.001), binarized MNIST (the 50,000 training
//! rows, batch 500). The paper's Letters set is not available; Caltech101 Silhouettes (4,100
//! training rows, batch 410) stands in with Letters' iteration counts. The curves are written
//! as CSV and drawn as one PNG ([`curves_figure`]).

use crate::commands::lab::{diagnostic_notes, lab_markdown, run_lab};
use crate::plot::{chart_panels, Chart, Series};
use boltzkit::data::synth::{ArtificialModes, BarsAndStripes};
use boltzkit::data::{read_dataset, Dataset, ReadOptions};
use boltzkit::rbm::exact;
use boltzkit::rbm::lab::{cd1_reference_model, BiasVariance, LabParams};
use boltzkit::rbm::train::{Algorithm, ExactLogLikelihood, StopReason, TrainParams, Trainer};
use boltzkit::rbm::Rbm;
use boltzkit::rng::{derive_rng, derive_seed};
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// Iterations between two exact log-likelihood evaluations (the paper's 100).
pub const EVAL_EVERY: usize = 100;

/// Hidden units of the first and third experiment sets.
pub const HIDDEN: usize = 16;

/// A dataset of the paper's experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PaperData {
    /// Bars & Stripes 4×4, duplicated form (32 rows), full batch.
    Bas,
    /// Artificial Modes (10,000 rows), batch 500.
    Modes,
    /// Binarized MNIST training set (50,000 rows), batch 500.
    Mnist,
    /// Caltech101 Silhouettes training set (4,100 rows), batch 410: the stand-in for Letters.
    Caltech,
}

impl PaperData {
    /// All, in the order of the paper.
    pub const ALL: [PaperData; 4] = [
        PaperData::Bas,
        PaperData::Modes,
        PaperData::Mnist,
        PaperData::Caltech,
    ];

    /// A fixed number per dataset (its place in [`PaperData::ALL`]), for seeds that do not
    /// depend on which datasets a run includes.
    pub fn id(self) -> u64 {
        PaperData::ALL.iter().position(|&d| d == self).unwrap_or(0) as u64
    }

    /// The name used by `--datasets` and in file names.
    pub fn name(self) -> &'static str {
        match self {
            PaperData::Bas => "bas",
            PaperData::Modes => "modes",
            PaperData::Mnist => "mnist",
            PaperData::Caltech => "caltech",
        }
    }

    /// Mini-batch rows (`None`: the full batch).
    pub fn batch_size(self) -> Option<usize> {
        match self {
            PaperData::Bas => None,
            PaperData::Modes | PaperData::Mnist => Some(500),
            PaperData::Caltech => Some(410),
        }
    }

    /// The paper's iteration count at learning rate `lr` (its rates are 0.1 and 0.01; any
    /// rate other than 0.1 gets the 0.01 count).
    pub fn iterations(self, lr: f32) -> usize {
        let big = (lr - 0.1).abs() < 1e-6;
        match (self, big) {
            (PaperData::Bas, _) => 50_000,
            (PaperData::Modes, _) => 10_000,
            (PaperData::Mnist, true) => 5_000,
            (PaperData::Mnist, false) => 20_000,
            (PaperData::Caltech, true) => 10_000,
            (PaperData::Caltech, false) => 30_000,
        }
    }

    /// CD-1 updates (at η = 0.1) of Table 1's reference model.
    pub fn lab_iterations(self) -> usize {
        match self {
            PaperData::Mnist => 5_000,
            _ => 10_000,
        }
    }

    /// Table 1 of the paper for this dataset: `(k, CD variance, CD bias, pop-CD variance,
    /// pop-CD bias)`, per parameter.
    pub fn paper_table1(self) -> &'static [(usize, f64, f64, f64, f64)] {
        match self {
            PaperData::Bas => &[
                (1, 5.34874e-05, 0.0242761, 0.000527033, 0.000156001),
                (10, 0.000238678, 0.0233395, 0.0011887, 0.000139806),
            ],
            PaperData::Modes => &[
                (1, 2.3712e-06, 0.177744, 0.000372144, 7.99706e-09),
                (10, 5.07146e-06, 0.176977, 0.000372545, 6.29318e-09),
            ],
            PaperData::Mnist => &[
                (1, 0.000143567, 0.0145665, 0.00377791, 0.000746869),
                (10, 0.000156719, 0.0136011, 0.00244656, 0.000694042),
            ],
            PaperData::Caltech => &[],
        }
    }

    /// The dataset: generated (bars & stripes; Artificial Modes from `seed`) or read.
    pub fn load(self, seed: u64, mnist: &Path, caltech: &Path) -> anyhow::Result<Dataset> {
        let read = |p: &Path, what: &str| -> anyhow::Result<Dataset> {
            read_dataset(p, &ReadOptions::default()).map_err(|e| {
                anyhow::anyhow!(
                    "{what}: {e} (give the file with --{what}, or leave {what} out of --datasets)"
                )
            })
        };
        Ok(match self {
            PaperData::Bas => BarsAndStripes::new(4, true)?.dataset()?,
            PaperData::Modes => ArtificialModes::paper().sample(&mut derive_rng(seed, 0))?,
            PaperData::Mnist => read(mnist, "mnist")?,
            PaperData::Caltech => read(caltech, "caltech")?,
        })
    }
}

impl std::str::FromStr for PaperData {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        PaperData::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown dataset `{s}`; expected bas, modes, mnist or caltech"))
    }
}

/// One training run of the curves.
#[derive(Debug, Clone)]
pub struct CurveRun {
    /// Index into the datasets.
    pub data: usize,
    /// Index into the learning rates.
    pub lr: usize,
    /// Index into the algorithms.
    pub algo: usize,
    /// Trial number.
    pub trial: usize,
    /// Exact average log-likelihood at iterations 0, 100, 200, … (NaN after a divergence).
    pub ll: Vec<f64>,
    /// Whether the divergence guard stopped it.
    pub diverged: bool,
    /// The estimator's diagnostics averaged over the evaluations (effective sample size,
    /// exchange rates).
    pub diagnostics: std::collections::BTreeMap<String, f64>,
    /// Seconds.
    pub wall_s: f64,
}

/// Settings of the curves.
#[derive(Debug, Clone)]
pub struct CurveSettings {
    /// The datasets and their data.
    pub data: Vec<(PaperData, Dataset)>,
    /// Learning rates.
    pub lrs: Vec<f32>,
    /// Algorithms.
    pub algos: Vec<Algorithm>,
    /// Trials per (dataset, rate, algorithm).
    pub trials: usize,
    /// Iterations instead of the paper's (to shorten).
    pub iterations: Option<usize>,
    /// The run's seed.
    pub seed: u64,
}

impl CurveSettings {
    /// Iterations of dataset `d` at rate index `l`, a multiple of [`EVAL_EVERY`].
    pub fn iterations(&self, d: usize, l: usize) -> usize {
        let it = self
            .iterations
            .unwrap_or_else(|| self.data[d].0.iterations(self.lrs[l]));
        it.div_ceil(EVAL_EVERY) * EVAL_EVERY
    }

    /// Updates per epoch of dataset `d`; they must divide [`EVAL_EVERY`].
    pub fn per_epoch(&self, d: usize) -> usize {
        let (pd, data) = &self.data[d];
        pd.batch_size().map_or(1, |b| data.n_samples().div_ceil(b))
    }
}

/// One run: the Sec. 4.1 initialization (the same for every algorithm and rate of a trial),
/// then training with the exact log-likelihood every [`EVAL_EVERY`] updates. Algorithms of a
/// trial share their chain and shuffle seeds (common random numbers). Seeds follow the
/// dataset, trial and rate, so a run of a subset reproduces that part of a larger run.
pub fn curve_run(
    s: &CurveSettings,
    d: usize,
    l: usize,
    a: usize,
    trial: usize,
) -> anyhow::Result<CurveRun> {
    let start = Instant::now();
    let (pd, data) = &s.data[d];
    let per_epoch = s.per_epoch(d);
    anyhow::ensure!(
        EVAL_EVERY.is_multiple_of(per_epoch),
        "{}: {per_epoch} updates per epoch do not divide {EVAL_EVERY}",
        pd.name()
    );
    let iterations = s.iterations(d, l);
    // seeds from the dataset, the trial and the rate's value, not their places in the lists:
    // a run on a subset reproduces the matching part of a full run
    let trial_seed = derive_seed(derive_seed(s.seed, 1 + pd.id()), trial as u64);
    let rbm = Rbm::init_from_data(data, HIDDEN, 0.01, &mut derive_rng(trial_seed, 0))?;
    let mut params = TrainParams::new()
        .epochs(iterations / per_epoch)
        .learning_rate(s.lrs[l])
        .algorithm(s.algos[a])
        .seed(derive_seed(trial_seed, 1 + u64::from(s.lrs[l].to_bits())));
    params.batch_size = pd.batch_size();
    let every = EVAL_EVERY / per_epoch;
    let out = Trainer::new(rbm, data, params)?
        .add_observer(ExactLogLikelihood::new("ll", data.clone()), every)
        .run()?;
    let points = iterations / EVAL_EVERY + 1;
    let mut ll = vec![f64::NAN; points];
    let mut diag: std::collections::BTreeMap<String, (f64, usize)> = Default::default();
    for r in &out.record.history {
        let i = r.epoch as usize / every;
        if let (Some(slot), Some(&v)) = (ll.get_mut(i), r.metrics.get("ll")) {
            *slot = v;
        }
        for (k, v) in r.metrics.iter().filter(|(k, _)| k.as_str() != "ll") {
            let e = diag.entry(k.clone()).or_insert((0.0, 0));
            e.0 += v;
            e.1 += 1;
        }
    }
    Ok(CurveRun {
        data: d,
        lr: l,
        algo: a,
        trial,
        ll,
        diverged: matches!(out.record.stop, StopReason::Diverged { .. }),
        diagnostics: diag
            .into_iter()
            .map(|(k, (s, n))| (k, s / n as f64))
            .collect(),
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// The mean curve of one (dataset, rate, algorithm) and its summary.
#[derive(Debug, Clone, Serialize)]
pub struct CurveSummary {
    /// Dataset name.
    pub dataset: String,
    /// Learning rate.
    pub lr: f32,
    /// Algorithm name.
    pub algo: String,
    /// Trials.
    pub trials: usize,
    /// Iterations of each evaluation point.
    pub iterations: Vec<usize>,
    /// Mean log-likelihood over the trials at each point (over the finite values).
    pub mean: Vec<f64>,
    /// Standard deviation over the trials at each point.
    pub sd: Vec<f64>,
    /// The last point's mean.
    pub final_mean: f64,
    /// The best mean and its iteration.
    pub best_mean: f64,
    /// Iteration of the best mean.
    pub best_iteration: usize,
    /// `best − final`: how far the mean curve fell from its maximum (divergence).
    pub drop: f64,
    /// Runs stopped by the divergence guard.
    pub guard_stops: usize,
    /// Mean seconds per run.
    pub mean_wall_s: f64,
    /// Diagnostics averaged over runs (effective sample size, exchange rates).
    pub diagnostics: std::collections::BTreeMap<String, f64>,
}

/// Mean curves per (dataset, rate, algorithm).
pub fn summarize(s: &CurveSettings, runs: &[CurveRun]) -> Vec<CurveSummary> {
    let mut out = Vec::new();
    for d in 0..s.data.len() {
        for l in 0..s.lrs.len() {
            let iters = s.iterations(d, l);
            let points: Vec<usize> = (0..=iters / EVAL_EVERY).map(|i| i * EVAL_EVERY).collect();
            for a in 0..s.algos.len() {
                let group: Vec<&CurveRun> = runs
                    .iter()
                    .filter(|r| (r.data, r.lr, r.algo) == (d, l, a))
                    .collect();
                if group.is_empty() {
                    continue;
                }
                let (mut mean, mut sd) = (Vec::new(), Vec::new());
                for i in 0..points.len() {
                    let xs: Vec<f64> = group
                        .iter()
                        .filter_map(|r| r.ll.get(i).copied())
                        .filter(|x| x.is_finite())
                        .collect();
                    let n = xs.len() as f64;
                    let m = xs.iter().sum::<f64>() / n;
                    let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
                    mean.push(m);
                    sd.push(v.sqrt());
                }
                let (best_i, best) = mean.iter().enumerate().filter(|(_, x)| x.is_finite()).fold(
                    (0, f64::NEG_INFINITY),
                    |(bi, b), (i, &x)| {
                        if x > b {
                            (i, x)
                        } else {
                            (bi, b)
                        }
                    },
                );
                let final_mean = *mean.last().unwrap_or(&f64::NAN);
                let mut diagnostics = std::collections::BTreeMap::new();
                for r in &group {
                    for (k, v) in &r.diagnostics {
                        *diagnostics.entry(k.clone()).or_insert(0.0) += v / group.len() as f64;
                    }
                }
                out.push(CurveSummary {
                    dataset: s.data[d].0.name().into(),
                    lr: s.lrs[l],
                    algo: s.algos[a].to_string(),
                    trials: group.len(),
                    iterations: points.clone(),
                    mean,
                    sd,
                    final_mean,
                    best_mean: best,
                    best_iteration: points[best_i],
                    drop: best - final_mean,
                    guard_stops: group.iter().filter(|r| r.diverged).count(),
                    mean_wall_s: group.iter().map(|r| r.wall_s).sum::<f64>() / group.len() as f64,
                    diagnostics,
                });
            }
        }
    }
    out
}

/// The mean curves of one (dataset, rate) as CSV: `iteration`, then `<algo>_mean`,
/// `<algo>_sd` per algorithm.
pub fn curves_csv(curves: &[&CurveSummary]) -> String {
    let mut out = String::from("iteration");
    for c in curves {
        out.push_str(&format!(",{0}_mean,{0}_sd", c.algo));
    }
    out.push('\n');
    let n = curves.first().map_or(0, |c| c.iterations.len());
    for i in 0..n {
        out.push_str(&curves[0].iterations[i].to_string());
        for c in curves {
            out.push_str(&format!(",{},{}", c.mean[i], c.sd[i]));
        }
        out.push('\n');
    }
    out
}

/// The mean curves as one PNG like the paper's Figs. 1-2: a panel per (dataset, rate), rates
/// across, datasets down, a line per algorithm (mean exact log-likelihood over the trials).
pub fn curves_figure(path: &Path, curves: &[CurveSummary], lrs: &[f32]) -> anyhow::Result<()> {
    let mut charts = Vec::new();
    let mut datasets: Vec<&str> = curves.iter().map(|c| c.dataset.as_str()).collect();
    datasets.dedup();
    for d in datasets {
        for &lr in lrs {
            let mut chart = Chart::new(format!("{d}, η = {lr}, {HIDDEN} hidden"))
                .x_label("iterations")
                .y_label("mean log-likelihood (nats)");
            for c in curves.iter().filter(|c| c.dataset == d && c.lr == lr) {
                let points: Vec<(f64, f64)> = c
                    .iterations
                    .iter()
                    .zip(&c.mean)
                    .filter(|(_, m)| m.is_finite())
                    .map(|(&i, &m)| (i as f64, m))
                    .collect();
                chart = chart.series(Series::new(c.algo.clone(), points));
            }
            charts.push(chart);
        }
    }
    chart_panels(path, &charts, lrs.len().max(1))
}

/// The curve summaries as a Markdown table.
pub fn curves_markdown(sums: &[CurveSummary]) -> String {
    let mut out = String::from(
        "| data | η | algorithm | trials | final mean LL | best mean LL (iteration) | drop from best | guard stops | notes |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for s in sums {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.4} | {:.4} ({}) | {:.4} | {} | {} |\n",
            s.dataset,
            s.lr,
            s.algo,
            s.trials,
            s.final_mean,
            s.best_mean,
            s.best_iteration,
            s.drop,
            s.guard_stops,
            diagnostic_notes(&s.diagnostics)
        ));
    }
    out
}

/// Table 1 for one dataset: the reference model's settings and the lab's results.
#[derive(Debug, Clone, Serialize)]
pub struct Table1Data {
    /// Dataset name.
    pub dataset: String,
    /// CD-1 updates of the reference model.
    pub train_updates: u64,
    /// Its exact average log-likelihood.
    pub model_avg_log_likelihood: f64,
    /// The lab's results.
    pub results: Vec<BiasVariance>,
    /// Seconds.
    pub wall_s: f64,
}

/// Trains Table 1's reference model by CD-1 (η = 0.1, 16 hidden, the dataset's batch size)
/// and runs the lab on it.
pub fn table1_for(
    pd: PaperData,
    data: &Dataset,
    specs: &[Algorithm],
    train_iterations: Option<usize>,
    estimates: usize,
    seed: u64,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Table1Data> {
    let start = Instant::now();
    let iters = train_iterations.unwrap_or_else(|| pd.lab_iterations());
    let (rbm, steps) = cd1_reference_model(
        data,
        HIDDEN,
        iters,
        0.1,
        pd.batch_size(),
        derive_seed(seed, 0),
    )?;
    let params = LabParams {
        estimates,
        batch_size: pd.batch_size(),
        seed: derive_seed(seed, 1),
        ..LabParams::default()
    };
    let results = run_lab(&rbm, data, specs, &params, bar)?;
    Ok(Table1Data {
        dataset: pd.name().into(),
        train_updates: steps,
        model_avg_log_likelihood: exact::average_log_likelihood(&rbm, data)?,
        results,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// Table 1 as Markdown: ours (with the intervals) beside the paper's CD-k / pop-CD-k values.
pub fn table1_markdown(pd: PaperData, t: &Table1Data) -> String {
    let mut out = format!(
        "{} (16 hidden, reference model: {} CD-1 updates, average LL {:.4})\n\n{}",
        pd.name(),
        t.train_updates,
        t.model_avg_log_likelihood,
        lab_markdown(&t.results)
    );
    let paper = pd.paper_table1();
    if !paper.is_empty() {
        out.push_str(
            "\n| k | CD variance | CD bias² | pop-CD variance | pop-CD bias² | paper CD variance | paper CD bias² | paper pop-CD variance | paper pop-CD bias² |\n\
             |---|---|---|---|---|---|---|---|---|\n",
        );
        let find = |name: String| t.results.iter().find(|r| r.estimator == name);
        for &(k, cv, cb, pv, pb) in paper {
            let (cd, pop) = (find(format!("cd-{k}")), find(format!("popcd-{k}")));
            let f = |r: Option<&BiasVariance>, bias: bool| {
                r.map_or("–".to_string(), |r| {
                    format!("{:.3e}", if bias { r.sq_bias } else { r.variance })
                })
            };
            out.push_str(&format!(
                "| {k} | {} | {} | {} | {} | {cv:.3e} | {cb:.3e} | {pv:.3e} | {pb:.3e} |\n",
                f(cd, false),
                f(cd, true),
                f(pop, false),
                f(pop, true)
            ));
        }
    }
    out
}

/// Runs every curve job in parallel (results do not depend on the thread count).
pub fn run_curves(
    s: &CurveSettings,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Vec<CurveRun>> {
    let mut jobs = Vec::new();
    for d in 0..s.data.len() {
        for l in 0..s.lrs.len() {
            for t in 0..s.trials {
                for a in 0..s.algos.len() {
                    jobs.push((d, l, a, t));
                }
            }
        }
    }
    jobs.par_iter()
        .map(|&(d, l, a, t)| {
            let r = curve_run(s, d, l, a, t).map_err(|e| {
                e.context(format!(
                    "{} at η = {}, {} trial {t}",
                    s.data[d].0.name(),
                    s.lrs[l],
                    s.algos[a]
                ))
            });
            bar.inc(1);
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shortened run end to end: curves have one point per 100 iterations, the first
    /// point is the initial model's exact log-likelihood, identical across algorithms of a
    /// trial, and the summary finds the best point.
    #[test]
    fn short_curves_on_bars_and_stripes() {
        let data = PaperData::Bas
            .load(1, Path::new("none"), Path::new("none"))
            .unwrap();
        assert_eq!((data.n_samples(), data.n_vars()), (32, 16));
        let s = CurveSettings {
            data: vec![(PaperData::Bas, data.clone())],
            lrs: vec![0.1],
            algos: vec!["cd-1".parse().unwrap(), "popcd-1".parse().unwrap()],
            trials: 2,
            iterations: Some(300),
            seed: 7,
        };
        let bar = indicatif::ProgressBar::hidden();
        let runs = run_curves(&s, &bar).unwrap();
        assert_eq!(runs.len(), 4);
        assert!(runs
            .iter()
            .all(|r| r.ll.len() == 4 && r.ll.iter().all(|x| x.is_finite())));
        let r0: Vec<&CurveRun> = runs.iter().filter(|r| r.trial == 0).collect();
        assert_eq!(r0[0].ll[0], r0[1].ll[0]);
        assert_ne!(r0[0].ll[3], r0[1].ll[3]);
        assert!(r0.iter().any(|r| r.diagnostics.contains_key("popcd_ess")));
        let sums = summarize(&s, &runs);
        assert_eq!(sums.len(), 2);
        assert_eq!(sums[0].iterations, vec![0, 100, 200, 300]);
        assert!(sums.iter().all(|c| c.best_mean >= c.final_mean));
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("fig.png");
        curves_figure(&png, &sums, &s.lrs).unwrap();
        assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
        let csv = curves_csv(&sums.iter().collect::<Vec<_>>());
        assert!(csv.starts_with("iteration,cd-1_mean,cd-1_sd,popcd-1_mean,popcd-1_sd\n0,"));
        assert_eq!(csv.lines().count(), 5);
        assert!(curves_markdown(&sums).contains("| bas | 0.1 | popcd-1 | 2 |"));
        // a subset (one algorithm, the first trial) reproduces its part of the larger run: seeds follow names, not list places
        let sub = CurveSettings {
            algos: vec!["popcd-1".parse().unwrap()],
            trials: 1,
            ..s.clone()
        };
        let alone = run_curves(&sub, &bar).unwrap();
        let in_full = runs.iter().find(|r| r.trial == 0 && r.algo == 1).unwrap();
        assert_eq!(alone[0].ll, in_full.ll);
        assert_eq!(PaperData::Mnist.iterations(0.1), 5000);
        assert_eq!(PaperData::Mnist.iterations(0.01), 20_000);
        assert!("letters".parse::<PaperData>().is_err());
    }
}
