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
//!
//! Plan → run → result: [`PopcdPlan`] → [`run`] → [`PopcdReport`]; [`write_outputs`] writes
//! the CSVs, the PNG, `popcd.json` and the runs themselves (`popcd-runs.cbor`,
//! [`crate::popcd_runs`]): a plan may run a range of the trials, and runs written by separate
//! processes merge ([`PopcdPlan::merge`]) into the same tables, bit for bit, as one process
//! running them all.

use crate::lab::{diagnostic_notes, lab_markdown, run_lab};
use crate::plot::{chart_panels, Chart, Series};
pub use crate::popcd_runs::CurveRun;
use crate::popcd_runs::{self as runs, Identity};
use crate::Progress;
use anyhow::Context;
use boltzkit::data::synth::{ArtificialModes, BarsAndStripes};
use boltzkit::data::{read_dataset, Dataset, ReadOptions};
use boltzkit::estimate::stats::mean_sd;
use boltzkit::io::write_atomic;
use boltzkit::rbm::exact;
use boltzkit::rbm::lab::{cd1_reference_model, BiasVariance, LabParams};
use boltzkit::rbm::train::{Algorithm, ExactLogLikelihood, StopReason, TrainParams, Trainer};
use boltzkit::rbm::Rbm;
use boltzkit::rng::{derive_rng, derive_seed};
use rayon::prelude::*;
use serde::Serialize;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The seed `repro popcd` uses unless told otherwise.
pub const SEED: u64 = 2017;

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

    /// The dataset: generated (bars & stripes; Artificial Modes from `seed`) or read from
    /// `mnist` / `caltech`.
    pub fn load(
        self,
        seed: u64,
        mnist: Option<&Path>,
        caltech: Option<&Path>,
    ) -> anyhow::Result<Dataset> {
        let read = |p: Option<&Path>, what: &str| -> anyhow::Result<Dataset> {
            let p = p.ok_or_else(|| anyhow::anyhow!("{what}: no file given (--{what})"))?;
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

/// Settings of the curves.
#[derive(Debug, Clone)]
pub struct CurveSettings {
    /// The datasets and their data.
    pub data: Vec<(PaperData, Dataset)>,
    /// Learning rates.
    pub lrs: Vec<f32>,
    /// Algorithms.
    pub algos: Vec<Algorithm>,
    /// The trials run per (dataset, rate, algorithm): `0..25` for the paper's 25, or a part
    /// of that range (the runs of the other parts merge with these, [`runs`]).
    pub trials: Range<usize>,
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
        .seed(derive_seed(trial_seed, 1 + u64::from(s.lrs[l].to_bits())))
        // the paper's curves run their budget: CD's divergence is what they show
        .divergence_tol(0.0);
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
                let (mut means, mut sd) = (Vec::new(), Vec::new());
                for i in 0..points.len() {
                    let xs: Vec<f64> = group
                        .iter()
                        .filter_map(|r| r.ll.get(i).copied())
                        .filter(|x| x.is_finite())
                        .collect();
                    // no finite value: a NaN mean and a zero spread
                    let (m, s) = mean_sd(&xs).unwrap_or((f64::NAN, 0.0));
                    means.push(m);
                    sd.push(s);
                }
                let (best_i, best) = means
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| x.is_finite())
                    .fold(
                        (0, f64::NEG_INFINITY),
                        |(bi, b), (i, &x)| {
                            if x > b {
                                (i, x)
                            } else {
                                (bi, b)
                            }
                        },
                    );
                let final_mean = *means.last().unwrap_or(&f64::NAN);
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
                    mean: means,
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
    progress: &dyn Progress,
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
    let results = run_lab(&rbm, data, specs, &params, progress)?;
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

/// What makes runs of `s` comparable with others ([`crate::popcd_runs::merge`]).
pub fn identity(s: &CurveSettings) -> Identity {
    Identity {
        seed: s.seed,
        datasets: s.data.iter().map(|(d, _)| d.name().to_string()).collect(),
        lrs: s.lrs.clone(),
        algos: s.algos.iter().map(ToString::to_string).collect(),
        iterations: s.iterations,
        trials: s.trials.clone(),
    }
}

/// Runs every curve job of the settings' trials in parallel (results do not depend on the
/// thread count), in the order [`runs::order`] sorts runs.
pub fn run_curves(s: &CurveSettings, progress: &dyn Progress) -> anyhow::Result<Vec<CurveRun>> {
    let mut jobs = Vec::new();
    for d in 0..s.data.len() {
        for l in 0..s.lrs.len() {
            for t in s.trials.clone() {
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
            progress.advance(1);
            r
        })
        .collect()
}

/// Which part of the paper to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PopcdPart {
    /// The log-likelihood curves (first experiment set).
    Curves,
    /// Table 1 (third experiment set).
    Table1,
    /// Both.
    All,
}

/// What `repro popcd` runs.
#[derive(Debug, Clone)]
pub struct PopcdPlan {
    /// Seed of the data, initial models and chains [default: [`SEED`]].
    pub seed: u64,
    /// Which part [default: all].
    pub part: PopcdPart,
    /// Datasets [default: bas, modes, mnist].
    pub datasets: Vec<PaperData>,
    /// Learning rates of the curves [default: 0.1, 0.01].
    pub lrs: Vec<f32>,
    /// Algorithms of the curves [default: cd-1, cd-10, pcd-1, popcd-1, popcd-10, pt-10].
    pub algos: Vec<Algorithm>,
    /// The trials of the curves per (dataset, rate, algorithm) [default: `0..25`, the paper's
    /// 25]; a part of the range runs that part, to be merged with the others.
    pub trials: Range<usize>,
    /// Folders holding `popcd-runs.cbor` of earlier runs whose trials together make
    /// `trials`: their runs are merged instead of run again.
    pub merge: Vec<PathBuf>,
    /// Iterations per run instead of the paper's [default: the paper's].
    pub iterations: Option<usize>,
    /// Table 1: estimates per estimator [default: the paper's 50,000].
    pub table1_estimates: usize,
    /// Table 1: estimators [default: cd-1, cd-10, popcd-1, popcd-10].
    pub table1_estimators: Vec<Algorithm>,
    /// Table 1: CD-1 updates of the reference model instead of the paper's.
    pub table1_train_iterations: Option<usize>,
    /// Binarized MNIST training rows (needed when `datasets` has mnist).
    pub mnist: Option<PathBuf>,
    /// Caltech101 Silhouettes training rows (needed when `datasets` has caltech).
    pub caltech: Option<PathBuf>,
}

impl Default for PopcdPlan {
    fn default() -> Self {
        let specs = |names: &[&str]| -> Vec<Algorithm> {
            names.iter().filter_map(|n| n.parse().ok()).collect()
        };
        PopcdPlan {
            seed: SEED,
            part: PopcdPart::All,
            datasets: vec![PaperData::Bas, PaperData::Modes, PaperData::Mnist],
            lrs: vec![0.1, 0.01],
            algos: specs(&["cd-1", "cd-10", "pcd-1", "popcd-1", "popcd-10", "pt-10"]),
            trials: 0..25,
            merge: Vec::new(),
            iterations: None,
            table1_estimates: 50_000,
            table1_estimators: specs(&["cd-1", "cd-10", "popcd-1", "popcd-10"]),
            table1_train_iterations: None,
            mnist: None,
            caltech: None,
        }
    }
}

impl PopcdPlan {
    /// Checks the settings (not yet whether the data files exist: [`PopcdPlan::data_files`]).
    pub fn check(&self) -> boltzkit::Result<()> {
        if let Some(lr) = self.lrs.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
            return Err(boltzkit::Error::param(
                "--lrs",
                format!("each rate must be finite and > 0, found {lr}"),
            ));
        }
        if self.trials.is_empty() || self.iterations == Some(0) {
            return Err(boltzkit::Error::param(
                "--trials/--iterations",
                "must be at least 1",
            ));
        }
        Ok(())
    }

    /// The datasets, consecutive repeats dropped.
    pub fn datasets(&self) -> Vec<PaperData> {
        let mut d = self.datasets.clone();
        d.dedup();
        d
    }

    /// The files the plan reads, with the flag that names each: (`mnist`, path) and
    /// (`caltech`, path) for the datasets it includes.
    pub fn data_files(&self) -> Vec<(&'static str, Option<&Path>)> {
        let ds = self.datasets();
        let mut out = Vec::new();
        if ds.contains(&PaperData::Mnist) {
            out.push(("mnist", self.mnist.as_deref()));
        }
        if ds.contains(&PaperData::Caltech) {
            out.push(("caltech", self.caltech.as_deref()));
        }
        out
    }
}

/// The summary of one mean curve.
#[derive(Debug, Clone, Serialize)]
pub struct CurveBrief {
    /// Dataset name.
    pub dataset: String,
    /// Learning rate.
    pub lr: f32,
    /// Algorithm name.
    pub algo: String,
    /// The last point's mean.
    pub final_mean: f64,
    /// The best mean.
    pub best_mean: f64,
    /// Its iteration.
    pub best_iteration: usize,
    /// `best − final`.
    pub drop: f64,
    /// Runs stopped by the divergence guard.
    pub guard_stops: usize,
    /// Diagnostics averaged over runs.
    pub diagnostics: std::collections::BTreeMap<String, f64>,
}

/// Everything `repro popcd` found.
#[derive(Debug, Clone, Serialize)]
pub struct PopcdReport {
    /// The part run.
    pub part: PopcdPart,
    /// Dataset names.
    pub datasets: Vec<&'static str>,
    /// Runs per (dataset, rate, algorithm).
    pub trials: usize,
    /// The first trial's number (0 unless a part of the trials ran).
    pub first_trial: usize,
    /// Iterations per run when not the paper's.
    pub iterations: Option<usize>,
    /// One line per mean curve.
    pub curves: Vec<CurveBrief>,
    /// Table 1, per dataset.
    pub table1: Vec<Table1Data>,
    /// The mean curves in full.
    #[serde(skip)]
    pub summaries: Vec<CurveSummary>,
    /// Every run.
    #[serde(skip)]
    pub runs: Vec<CurveRun>,
    /// The settings of the curves (datasets with their data, rates, algorithms).
    #[serde(skip)]
    pub settings: CurveSettings,
    /// [`curves_markdown`] (empty without curves).
    #[serde(skip)]
    pub curves_markdown: String,
    /// [`table1_markdown`] of every dataset.
    #[serde(skip)]
    pub table1_markdown: String,
}

/// Loads the data, runs the curves and Table 1 as the plan says.
pub fn run(plan: &PopcdPlan, progress: &dyn Progress) -> anyhow::Result<PopcdReport> {
    plan.check()?;
    let seed = plan.seed;
    let datasets = plan.datasets();
    progress.stage("loading data", None);
    let data = datasets
        .iter()
        .map(|&d| {
            Ok((
                d,
                d.load(
                    derive_seed(seed, 100),
                    plan.mnist.as_deref(),
                    plan.caltech.as_deref(),
                )?,
            ))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    progress.finish();
    let settings = CurveSettings {
        data,
        lrs: plan.lrs.clone(),
        algos: plan.algos.clone(),
        trials: plan.trials.clone(),
        iterations: plan.iterations,
        seed,
    };
    let do_curves = plan.part != PopcdPart::Table1;
    let do_table = plan.part != PopcdPart::Curves;
    let jobs = if do_curves {
        settings.data.len() * settings.lrs.len() * settings.trials.len() * settings.algos.len()
    } else {
        0
    } + if do_table {
        settings.data.len() * plan.table1_estimators.len()
    } else {
        0
    };
    progress.stage("runs", Some(jobs as u64));
    let mut summaries = Vec::new();
    let mut runs = Vec::new();
    if do_curves {
        runs = if plan.merge.is_empty() {
            run_curves(&settings, progress)?
        } else {
            runs::merge(&plan.merge, &identity(&settings))?
        };
        summaries = summarize(&settings, &runs);
    }
    let mut tables = Vec::new();
    let mut table_md = String::new();
    if do_table {
        for (pd, data) in &settings.data {
            progress.message(&format!("Table 1 on {}", pd.name()));
            let t = table1_for(
                *pd,
                data,
                &plan.table1_estimators,
                plan.table1_train_iterations,
                plan.table1_estimates,
                derive_seed(seed, 200 + pd.id()),
                progress,
            )
            .with_context(|| format!("Table 1 on {}", pd.name()))?;
            table_md.push_str(&table1_markdown(*pd, &t));
            table_md.push('\n');
            tables.push(t);
        }
    }
    progress.finish();
    let curves_md = if summaries.is_empty() {
        String::new()
    } else {
        curves_markdown(&summaries)
    };
    Ok(PopcdReport {
        part: plan.part,
        datasets: datasets.iter().map(|d| d.name()).collect(),
        trials: plan.trials.len(),
        first_trial: plan.trials.start,
        iterations: plan.iterations,
        curves: summaries
            .iter()
            .map(|c| CurveBrief {
                dataset: c.dataset.clone(),
                lr: c.lr,
                algo: c.algo.clone(),
                final_mean: c.final_mean,
                best_mean: c.best_mean,
                best_iteration: c.best_iteration,
                drop: c.drop,
                guard_stops: c.guard_stops,
                diagnostics: c.diagnostics.clone(),
            })
            .collect(),
        table1: tables,
        summaries,
        runs,
        settings,
        curves_markdown: curves_md,
        table1_markdown: table_md,
    })
}

/// Writes into `dir` the figure (`popcd-curves.png`) and a CSV per (dataset, rate)
/// (`curves-<data>-lr<η>.csv`) when the curves ran, and `popcd.json` with every number.
/// Returns the figure's path, if drawn.
pub fn write_outputs(
    dir: &Path,
    report: &PopcdReport,
    seed: u64,
) -> anyhow::Result<Option<PathBuf>> {
    let s = &report.settings;
    let mut figure = None;
    if report.part != PopcdPart::Table1 {
        runs::write(&dir.join(runs::FILE), &identity(s), &report.runs)?;
        let png = dir.join("popcd-curves.png");
        curves_figure(&png, &report.summaries, &s.lrs)?;
        figure = Some(png);
        for (pd, _) in &s.data {
            for &lr in &s.lrs {
                let group: Vec<_> = report
                    .summaries
                    .iter()
                    .filter(|c| c.dataset == pd.name() && c.lr == lr)
                    .collect();
                let path = dir.join(format!("curves-{}-lr{lr}.csv", pd.name()));
                write_atomic(&path, curves_csv(&group).as_bytes())?;
            }
        }
    }
    let body = serde_json::to_string_pretty(&serde_json::json!({
        "seed": seed, "trials": report.trials, "iterations": report.iterations,
        "lrs": s.lrs, "algos": s.algos.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        "curves": report.summaries, "table1": report.table1,
        "runs": report.runs.iter().map(|r| serde_json::json!({
            "dataset": s.data[r.data].0.name(), "lr": s.lrs[r.lr],
            "algo": s.algos[r.algo].to_string(), "trial": r.trial,
            "final_ll": r.ll.last(), "diverged": r.diverged, "wall_s": r.wall_s,
        })).collect::<Vec<_>>(),
        "curves_markdown": report.curves_markdown, "table1_markdown": report.table1_markdown,
    }))?;
    write_atomic(&dir.join("popcd.json"), body.as_bytes())?;
    Ok(figure)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shortened run end to end: curves have one point per 100 iterations, the first
    /// point is the initial model's exact log-likelihood, identical across algorithms of a
    /// trial, and the summary finds the best point.
    #[test]
    fn short_curves_on_bars_and_stripes() {
        let data = PaperData::Bas.load(1, None, None).unwrap();
        assert_eq!((data.n_samples(), data.n_vars()), (32, 16));
        let s = CurveSettings {
            data: vec![(PaperData::Bas, data.clone())],
            lrs: vec![0.1],
            algos: vec!["cd-1".parse().unwrap(), "popcd-1".parse().unwrap()],
            trials: 0..2,
            iterations: Some(300),
            seed: 7,
        };
        let bar = crate::Silent;
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
            trials: 0..1,
            ..s.clone()
        };
        let alone = run_curves(&sub, &bar).unwrap();
        let in_full = runs.iter().find(|r| r.trial == 0 && r.algo == 1).unwrap();
        assert_eq!(alone[0].ll, in_full.ll);
        assert_eq!(PaperData::Mnist.iterations(0.1), 5000);
        assert_eq!(PaperData::Mnist.iterations(0.01), 20_000);
        assert!("letters".parse::<PaperData>().is_err());
    }

    /// Two trial ranges run apart, written, read back and merged give the tables of one run
    /// of every trial, bit for bit; gaps, overlaps and other settings are refused.
    #[test]
    fn parts_merge_into_the_tables_of_one_run() {
        let data = PaperData::Bas.load(1, None, None).unwrap();
        let s = CurveSettings {
            data: vec![(PaperData::Bas, data)],
            lrs: vec![0.1],
            algos: vec!["cd-1".parse().unwrap(), "popcd-1".parse().unwrap()],
            trials: 0..3,
            iterations: Some(200),
            seed: 7,
        };
        let bar = crate::Silent;
        let whole = run_curves(&s, &bar).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut folders = Vec::new();
        for (i, trials) in [2..3, 0..2].into_iter().enumerate() {
            let part = CurveSettings {
                trials,
                ..s.clone()
            };
            let folder = dir.path().join(format!("part{i}"));
            std::fs::create_dir_all(&folder).unwrap();
            let part_runs = run_curves(&part, &bar).unwrap();
            runs::write(&folder.join(runs::FILE), &identity(&part), &part_runs).unwrap();
            folders.push(folder);
        }
        let merged = runs::merge(&folders, &identity(&s)).unwrap();
        let strip = |r: &[CurveRun]| -> Vec<CurveRun> {
            r.iter()
                .map(|r| CurveRun {
                    wall_s: 0.0,
                    ..r.clone()
                })
                .collect()
        };
        assert_eq!(strip(&merged), strip(&whole));
        let (a, b) = (summarize(&s, &whole), summarize(&s, &merged));
        assert_eq!(curves_markdown(&a), curves_markdown(&b));
        let all = |x: &[_]| curves_csv(&x.iter().collect::<Vec<_>>());
        assert_eq!(all(&a), all(&b));

        // a part missing, a part twice, other settings: refused with the file named
        let e = runs::merge(&folders[..1], &identity(&s))
            .unwrap_err()
            .to_string();
        assert!(e.contains("part0") && e.contains("trial 0"), "{e}");
        let twice = [folders[1].clone(), folders[1].clone(), folders[0].clone()];
        assert!(runs::merge(&twice, &identity(&s)).is_err());
        let other = Identity {
            seed: 8,
            ..identity(&s)
        };
        let e = runs::merge(&folders, &other).unwrap_err().to_string();
        assert!(e.contains("other settings"), "{e}");
    }
}
