//! `boltzkit repro sdcp`: the experiments of Sec. 4 of Upadhya & Sastry (S-DCP and CS-DCP
//! against CD, PCD and the centered gradient).
//!
//! - `--small` (Figs. 1-2): bars & stripes 3×3 (the 14 distinct patterns) and shifting bar
//!   9/1 (9 patterns), 4 hidden units, full batch; CD-12, PCD-12, CG with K = 12, S-DCP and
//!   CS-DCP with d = 3, K′ = 4; η ∈ {0.3, 0.5}; 25 trials of 50,000 epochs. The ATLL (Eq. 9
//!   divided by the number of patterns: the average log-likelihood of the pattern set, whose
//!   bound is −ln 14 and −ln 9) is exact, every `--eval-every` epochs.
//! - `--mnist` (Fig. 3): binarized MNIST, 500 hidden units, batch 200; CD-24, CG with K = 24,
//!   S-DCP and CS-DCP with d = 6, K′ = 4; η = 0.01; the test ATLL by AIS (100 chains, 10,000
//!   linear steps, the paper's setting) every `--eval-every` epochs, and at the end the bracket
//!   [RAISE, forward AIS] of `boltzkit::rbm::loglik` on the standard 14,500-step schedule
//!   (RAISE on 1,000 random test vectors by default), with its diagnosis.
//!
//! `--algos` takes the library's notation (`cd-12`, `sdcp-3-4`, `csdcp-6-4`: [`Algorithm`]);
//! the family names of [`ALGORITHMS`] mean the paper's budget of each experiment. The paper's
//! algorithms keep their family names as labels (`cd` for CD-12 on the small problems), so a
//! run named either way gives the same bits.
//!
//! Every trial starts all algorithms and learning rates from the same initial model (Sec. 4.1:
//! W ~ N(0, 0.01²), c = 0, b = logit of the data means), seeded from (seed, dataset, trial).

//!
//! Plan → run → result: [`SdcpPlan`] → [`run`] → [`SdcpReport`]; [`curves_csv`],
//! [`final_table`] and [`curves_png`] write each experiment.

use crate::bracket::{bracket_csv, bracket_markdown_cells, BRACKET_CSV_HEADER};
use crate::data::{local_file, BINARIZED_MNIST_TEST, BINARIZED_MNIST_TRAIN};
use crate::plot::{chart_panels, Chart, Series};
use crate::Progress;
use boltzkit::data::synth::{BarsAndStripes, ShiftingBar};
use boltzkit::data::{read_binary, Binarize, Dataset};
use boltzkit::estimate::stats::mean_sd_by_position;
use boltzkit::estimate::Method;
use boltzkit::fit::Control;
use boltzkit::rbm::ais::AisSchedule;
use boltzkit::rbm::base_rate_biases;
use boltzkit::rbm::file::save_rbm;
use boltzkit::rbm::loglik::{average_log_likelihood, Bracket, LogLikParams, LogLikelihood};
use boltzkit::rbm::train::{
    AisLogLikelihood, Algorithm, ExactLogLikelihood, Observer, Progress as TrainProgress,
    TrainParams, Trainer,
};
use boltzkit::rbm::Rbm;
use boltzkit::rng::{derive_seed, rng_from_seed};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The seed `repro sdcp` uses unless told otherwise.
pub const SEED: u64 = 2019;

/// The family names `--algos` still takes, each meaning the paper's Gibbs budget of the
/// experiment (`cd`: CD-12 on the small problems, CD-24 on MNIST; `sdcp`: S-DCP with d = 3 or
/// 6, K′ = 4); any other algorithm is named in the library's notation
/// ([`Algorithm`]'s `FromStr`: `cd-12`, `sdcp-3-4`, `csdcp-6-4`, ...).
pub const ALGORITHMS: [&str; 5] = ["cd", "pcd", "cg", "sdcp", "csdcp"];

/// An algorithm of the comparison: the paper's are labelled by their family name (as the
/// paper's figures), any other by its notation; the label also seeds its chains.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Contender {
    name: String,
    #[serde(skip)]
    algorithm: Algorithm,
}

/// The five families at the experiment's budget: `k` for CD, PCD and CG, `(d, k′)` for S-DCP.
fn paper_algorithms(k: usize, d: usize, k_inner: usize) -> [(&'static str, Algorithm); 5] {
    [
        ("cd", Algorithm::Cd { k }),
        ("pcd", Algorithm::Pcd { k }),
        ("cg", Algorithm::Cg { k }),
        (
            "sdcp",
            Algorithm::Sdcp {
                inner: d,
                k: k_inner,
            },
        ),
        (
            "csdcp",
            Algorithm::CsDcp {
                inner: d,
                k: k_inner,
            },
        ),
    ]
}

/// The algorithm of one `--algos` name at the experiment's budget (`k`, `d`, `k′`): a family
/// name of [`ALGORITHMS`] or the library's notation; anything else is an error naming both.
fn contender(name: &str, k: usize, d: usize, k_inner: usize) -> boltzkit::Result<Contender> {
    let paper = paper_algorithms(k, d, k_inner);
    let name = name.trim().to_ascii_lowercase();
    let algorithm = match paper.iter().find(|(n, _)| *n == name) {
        Some(&(_, a)) => a,
        None => name.parse::<Algorithm>().map_err(|e| {
            let why = match e {
                boltzkit::Error::InvalidParam { reason, .. } => reason,
                other => other.to_string(),
            };
            boltzkit::Error::param(
                "--algos",
                format!(
                    "{why}; or a family name meaning the paper's budget: {}",
                    ALGORITHMS.join(", ")
                ),
            )
        })?,
    };
    let name = paper
        .iter()
        .find(|(_, a)| *a == algorithm)
        .map_or_else(|| algorithm.to_string(), |(n, _)| n.to_string());
    Ok(Contender { name, algorithm })
}

/// The contenders of `names` at the experiment's budget, in the order given; a name repeated
/// (or two names of the same algorithm) counts once.
fn contenders(
    names: &[String],
    k: usize,
    d: usize,
    k_inner: usize,
) -> boltzkit::Result<Vec<Contender>> {
    let mut out: Vec<Contender> = Vec::new();
    for n in names {
        let c = contender(n, k, d, k_inner)?;
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Ok(out)
}

/// Mean and standard deviation over trials of an ATLL curve, with the epoch at which the mean
/// first reaches 90% of its rise (see [`epoch_at_90`]) and its value at the last epoch.
#[derive(Debug, Clone, Serialize)]
pub struct CurveStats {
    /// Data set name.
    pub dataset: String,
    /// Learning rate.
    pub lr: f32,
    /// Algorithm name.
    pub algo: String,
    /// Trials averaged.
    pub trials: usize,
    /// Evaluated epochs.
    pub epochs: Vec<u64>,
    /// Mean ATLL per evaluated epoch.
    pub mean: Vec<f64>,
    /// Sample standard deviation per evaluated epoch (0 for one trial).
    pub sd: Vec<f64>,
    /// First evaluated epoch at which the mean reaches 90% of its rise.
    pub epoch_90: Option<u64>,
    /// Trials whose run diverged (their curves end early and are left out after that).
    pub diverged: usize,
}

impl CurveStats {
    /// Mean at the last evaluated epoch.
    pub fn final_mean(&self) -> f64 {
        self.mean.last().copied().unwrap_or(f64::NAN)
    }

    /// Standard deviation at the last evaluated epoch.
    pub fn final_sd(&self) -> f64 {
        self.sd.last().copied().unwrap_or(f64::NAN)
    }

    /// The mean at the last evaluated epoch not after `epoch`.
    pub fn mean_at(&self, epoch: u64) -> Option<f64> {
        self.epochs
            .iter()
            .zip(&self.mean)
            .rev()
            .find(|(&e, _)| e <= epoch)
            .map(|(_, &m)| m)
    }
}

/// Mean and sample standard deviation per position over curves of the same epochs; a curve
/// shorter than the others (a diverged run) counts only where it has values (NaN where none
/// has).
pub fn mean_sd(curves: &[Vec<f64>], len: usize) -> (Vec<f64>, Vec<f64>) {
    mean_sd_by_position(curves, len)
        .into_iter()
        .map(|ms| ms.unwrap_or((f64::NAN, f64::NAN)))
        .unzip()
}

/// The first epoch at which `mean` reaches `m₀ + 0.9 (max − m₀)`, `m₀` its first value: the
/// paper's "epoch at which the model achieves 90% of the maximum ATLL", read as 90% of the
/// rise since the ATLL is negative. `None` when the curve never rises.
pub fn epoch_at_90(epochs: &[u64], mean: &[f64]) -> Option<u64> {
    let first = *mean.first()?;
    let max = mean.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if max.is_nan() || max <= first {
        return None;
    }
    let target = first + 0.9 * (max - first);
    epochs
        .iter()
        .zip(mean)
        .find(|(_, &m)| m >= target)
        .map(|(&e, _)| e)
}

/// The curve of one metric in a run's history: (epochs, values).
fn curve(history: &[boltzkit::io::MetricRecord], key: &str) -> (Vec<u64>, Vec<f64>) {
    history
        .iter()
        .filter_map(|r| r.metrics.get(key).map(|&v| (r.epoch, v)))
        .unzip()
}

/// The ATLL curve of one trial.
#[derive(Debug, Clone)]
pub struct TrialCurve {
    epochs: Vec<u64>,
    atll: Vec<f64>,
    diverged: bool,
}

impl TrialCurve {
    /// The curve of metric `key` in a finished run.
    fn of(out: &boltzkit::rbm::train::TrainOutcome, key: &str) -> Self {
        let (epochs, atll) = curve(&out.record.history, key);
        TrialCurve {
            epochs,
            atll,
            diverged: !matches!(out.record.stop, boltzkit::rbm::train::StopReason::MaxEpochs),
        }
    }
}

/// Statistics of the runs of one (dataset, lr, algorithm) cell.
fn cell_stats(dataset: &str, lr: f32, algo: &str, runs: &[TrialCurve]) -> CurveStats {
    let longest = runs
        .iter()
        .max_by_key(|r| r.epochs.len())
        .map(|r| r.epochs.clone())
        .unwrap_or_default();
    let curves: Vec<Vec<f64>> = runs.iter().map(|r| r.atll.clone()).collect();
    let (mean, sd) = mean_sd(&curves, longest.len());
    CurveStats {
        dataset: dataset.into(),
        lr,
        algo: algo.into(),
        trials: runs.len(),
        epoch_90: epoch_at_90(&longest, &mean),
        epochs: longest,
        mean,
        sd,
        diverged: runs.iter().filter(|r| r.diverged).count(),
    }
}

/// Writes the curves as one long CSV: dataset, lr, algo, epoch, mean, sd, trials.
pub fn curves_csv(cells: &[CurveStats]) -> String {
    let mut s = String::from("dataset,lr,algo,epoch,mean_atll,sd_atll,trials\n");
    for c in cells {
        for ((e, m), sd) in c.epochs.iter().zip(&c.mean).zip(&c.sd) {
            let _ = writeln!(
                s,
                "{},{},{},{e},{m:.6},{sd:.6},{}",
                c.dataset, c.lr, c.algo, c.trials
            );
        }
    }
    s
}

/// The final-ATLL table as Markdown: one row per (dataset, lr, algorithm).
pub fn final_table(cells: &[CurveStats], check_epoch: Option<u64>) -> String {
    let mut s = String::from("| data | η | algorithm | final ATLL (mean ± sd) | epoch at 90% |");
    if let Some(e) = check_epoch {
        let _ = write!(s, " mean ATLL at epoch {e} |");
    }
    s.push_str(" diverged |\n|---|---|---|---|---|");
    if check_epoch.is_some() {
        s.push_str("---|");
    }
    s.push_str("---|\n");
    for c in cells {
        let _ = write!(
            s,
            "| {} | {} | {} | {:.4} ± {:.4} | {} |",
            c.dataset,
            c.lr,
            c.algo,
            c.final_mean(),
            c.final_sd(),
            c.epoch_90.map_or("-".into(), |e| e.to_string())
        );
        if let Some(e) = check_epoch {
            let _ = write!(
                s,
                " {} |",
                c.mean_at(e).map_or("-".into(), |m| format!("{m:.4}"))
            );
        }
        let _ = writeln!(s, " {}/{} |", c.diverged, c.trials);
    }
    s
}

/// One PNG panel per (dataset, lr): a line per algorithm with its ± sd band, the 90% epochs
/// as dashed verticals and the bound, when known, as a horizontal line.
pub fn curves_png(
    path: &Path,
    cells: &[CurveStats],
    bounds: &BTreeMap<String, f64>,
) -> anyhow::Result<()> {
    let mut keys: Vec<(String, f32)> = Vec::new();
    for c in cells {
        if !keys.iter().any(|(d, l)| *d == c.dataset && *l == c.lr) {
            keys.push((c.dataset.clone(), c.lr));
        }
    }
    let lrs = {
        let mut v: Vec<f32> = keys.iter().map(|k| k.1).collect();
        v.dedup();
        v.sort_by(f32::total_cmp);
        v.dedup();
        v.len().max(1)
    };
    let charts: Vec<Chart> = keys
        .iter()
        .map(|(data, lr)| {
            let mut chart = Chart::new(format!("{data}, η = {lr}"))
                .x_label("epoch")
                .y_label("ATLL (nats)");
            for (i, c) in cells
                .iter()
                .filter(|c| c.dataset == *data && c.lr == *lr)
                .enumerate()
            {
                let points = c
                    .epochs
                    .iter()
                    .map(|&e| e as f64)
                    .zip(c.mean.clone())
                    .collect();
                chart = chart.series(Series::new(c.algo.clone(), points).band(c.sd.clone()));
                if let Some(e) = c.epoch_90 {
                    chart = chart.v_line(e as f64, format!("{} 90%", c.algo), Some(i));
                }
            }
            if let Some(&b) = bounds.get(data) {
                chart = chart.h_line(b, format!("bound {b:.3}"));
            }
            chart
        })
        .collect();
    chart_panels(path, &charts, lrs)
}

/// The seed of a run's Gibbs chains: its own per (trial, algorithm, learning rate). Shared
/// streams would couple the algorithms: from a near-uniform start, chains of CD-12 and PCD-12
/// fed the same uniform draws coalesce and give the same bits, hiding every difference.
fn chain_seed(init_seed: u64, algo: &str, lr: f32) -> u64 {
    let tag = algo.bytes().fold(u64::from(lr.to_bits()), |h, b| {
        h.rotate_left(8) ^ u64::from(b)
    });
    derive_seed(derive_seed(init_seed, 1), tag)
}

/// The settings of one experiment, defaults from the paper filled in.
#[derive(Debug, Clone)]
struct Experiment {
    epochs: usize,
    trials: usize,
    lrs: Vec<f32>,
    algos: Vec<Contender>,
    eval_every: usize,
}

/// What `repro sdcp` runs: the small experiments (Figs. 1-2), the MNIST one (Fig. 3) or both.
/// Settings left `None` (or empty) take the paper's value for each experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct SdcpPlan {
    /// Seed of the initial models and chains [default: [`SEED`]].
    pub seed: u64,
    /// Run bars & stripes 3×3 and shifting bar 9/1.
    pub small: bool,
    /// Run binarized MNIST.
    pub mnist: bool,
    /// Epochs per run [default: 50,000 (small) or 200 (MNIST)].
    pub epochs: Option<usize>,
    /// Trials per setting [default: 25 (small) or 10 (MNIST)].
    pub trials: Option<usize>,
    /// Learning rates [default (empty): 0.3, 0.5 (small) or 0.01 (MNIST)].
    pub lrs: Vec<f32>,
    /// Algorithms: the library's notation (`cd-12`, `sdcp-3-4`, ...) or a family name of
    /// [`ALGORITHMS`] (the paper's budget of each experiment) [default (empty): all five
    /// (small) or cd, cg, sdcp, csdcp (MNIST)].
    pub algos: Vec<String>,
    /// ATLL every N epochs [default: 10].
    pub eval_every: Option<usize>,
    /// MNIST: the folder holding `binarized_mnist/` (see [`crate::data::find_data_dir`]).
    pub data_dir: Option<PathBuf>,
    /// MNIST: AIS chains of the monitor and of the final estimates [default: 100].
    pub ais_chains: usize,
    /// MNIST: linear AIS steps of the monitor [default: the paper's 10,000].
    pub ais_steps: usize,
    /// MNIST: steps of the final bracket, the standard schedule's shape (0: the standard
    /// 14,500-step schedule) [default: 0].
    pub final_steps: usize,
    /// MNIST: RAISE chains per test vector of the final bracket [default: 1].
    pub raise_chains: usize,
    /// MNIST: RAISE on a seeded random subset of this many test vectors (`None`: all 10,000)
    /// [default: 1,000].
    pub raise_vectors: Option<usize>,
    /// MNIST: save every trained model here (`sdcp-mnist-{algo}-lr{η}-t{trial}.safetensors`).
    pub models_dir: Option<PathBuf>,
}

impl Default for SdcpPlan {
    fn default() -> Self {
        SdcpPlan {
            seed: SEED,
            small: false,
            mnist: false,
            epochs: None,
            trials: None,
            lrs: Vec::new(),
            algos: Vec::new(),
            eval_every: None,
            data_dir: None,
            ais_chains: 100,
            ais_steps: 10_000,
            final_steps: 0,
            raise_chains: 1,
            raise_vectors: Some(1000),
            models_dir: None,
        }
    }
}

impl SdcpPlan {
    /// Checks the settings of every experiment the plan runs.
    pub fn check(&self) -> boltzkit::Result<()> {
        use boltzkit::Error;
        if !self.small && !self.mnist {
            return Err(Error::param(
                "--small/--mnist",
                "choose --small, --mnist or both",
            ));
        }
        if [self.epochs, self.trials, self.eval_every].contains(&Some(0)) {
            return Err(Error::param(
                "--epochs/--trials/--eval-every",
                "must be at least 1",
            ));
        }
        if let Some(lr) = self.lrs.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
            return Err(Error::param(
                "--lr",
                format!("{lr}: must be finite and > 0"),
            ));
        }
        // every name parses (the budget only changes what a family name means)
        contenders(&self.algos, 1, 1, 1)?;
        if self.mnist {
            if self.ais_chains == 0 || self.ais_steps == 0 {
                return Err(Error::param(
                    "--ais-chains/--ais-steps",
                    "must be at least 1",
                ));
            }
            if self.raise_chains == 0 || self.raise_vectors == Some(0) {
                return Err(Error::param(
                    "--raise-chains/--raise-vectors",
                    "must be at least 1",
                ));
            }
            self.final_schedule()?;
            if self.data_dir.is_none() {
                return Err(Error::param(
                    "--data-dir",
                    "the MNIST experiment needs the data folder",
                ));
            }
        }
        Ok(())
    }

    /// The settings of one experiment, the paper's where the plan leaves them open.
    #[allow(clippy::too_many_arguments)]
    fn experiment(
        &self,
        epochs: usize,
        trials: usize,
        lrs: &[f32],
        algos: &[&str],
        eval_every: usize,
        k: usize,
        d: usize,
        k_inner: usize,
    ) -> boltzkit::Result<Experiment> {
        let names: Vec<String> = if self.algos.is_empty() {
            algos.iter().map(|s| s.to_string()).collect()
        } else {
            self.algos.clone()
        };
        Ok(Experiment {
            epochs: self.epochs.unwrap_or(epochs),
            trials: self.trials.unwrap_or(trials),
            lrs: if self.lrs.is_empty() {
                lrs.to_vec()
            } else {
                self.lrs.clone()
            },
            algos: contenders(&names, k, d, k_inner)?,
            eval_every: self.eval_every.unwrap_or(eval_every),
        })
    }

    /// The schedule of the final bracket.
    fn final_schedule(&self) -> boltzkit::Result<AisSchedule> {
        if self.final_steps == 0 {
            Ok(AisSchedule::standard())
        } else {
            AisSchedule::standard_shaped(self.final_steps)
        }
    }

    /// The data files the plan reads, relative to the data folder.
    pub fn data_files(&self) -> Vec<&'static str> {
        if self.mnist {
            vec![BINARIZED_MNIST_TRAIN, BINARIZED_MNIST_TEST]
        } else {
            Vec::new()
        }
    }
}

/// The final ATLL of one (dataset, lr, algorithm) cell of the small experiments.
#[derive(Debug, Clone, Serialize)]
pub struct FinalAtll {
    /// Data set name.
    pub dataset: String,
    /// Learning rate.
    pub lr: f32,
    /// Algorithm name.
    pub algo: String,
    /// Mean over trials at the last evaluated epoch.
    pub mean: f64,
    /// Its standard deviation.
    pub sd: f64,
    /// First evaluated epoch at which the mean reaches 90% of its rise.
    pub epoch_90: Option<u64>,
    /// The mean at epoch 3,000 (or the last epoch, if earlier).
    pub mean_at_3000: Option<f64>,
    /// Trials that diverged.
    pub diverged: usize,
}

/// The final estimates of one MNIST run.
#[derive(Debug, Clone, Serialize)]
pub struct MnistFinal {
    /// Algorithm name.
    pub algo: String,
    /// Learning rate.
    pub lr: f32,
    /// Trial (0-based).
    pub trial: usize,
    /// Epochs run.
    pub epochs: usize,
    /// Seconds of training.
    pub train_s: f64,
    /// Why training stopped.
    pub stop: String,
    /// Test ATLL with ln Ẑ by forward AIS (the final schedule): the bracket's upper end.
    pub test_ll_ais: f64,
    /// Forward AIS ln Ẑ.
    pub log_z_ais: f64,
    /// Its standard error (also that of `test_ll_ais`).
    pub log_z_ais_se: f64,
    /// The whole bracket [RAISE, forward AIS] of the test ATLL ([`Bracket`]: both ends with
    /// their standard errors, the steps, the vectors RAISE scored, the diagnosis).
    pub bracket: Bracket,
    /// The bracket's diagnosis in one plain line.
    pub diagnosis: String,
}

/// The curves of one experiment: a cell per (dataset, lr, algorithm), the final table, and the
/// known bound per dataset.
#[derive(Debug, Clone)]
pub struct ExperimentCurves {
    /// Mean ± sd curves.
    pub cells: Vec<CurveStats>,
    /// [`final_table`] of the cells.
    pub table: String,
    /// `−ln(patterns)` per dataset, where known.
    pub bounds: BTreeMap<String, f64>,
}

/// Everything `repro sdcp` found; the fields of an experiment that did not run are absent.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SdcpReport {
    /// Small: epochs per run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub small_epochs: Option<usize>,
    /// Small: trials per setting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub small_trials: Option<usize>,
    /// Small: the final ATLL per cell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub small_final_atll: Option<Vec<FinalAtll>>,
    /// MNIST: epochs per run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mnist_epochs: Option<usize>,
    /// MNIST: trials per setting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mnist_trials: Option<usize>,
    /// MNIST: AIS chains.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mnist_ais_chains: Option<usize>,
    /// MNIST: linear AIS steps of the monitor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mnist_ais_monitor_steps: Option<usize>,
    /// MNIST: the final estimates of every run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mnist_final: Option<Vec<MnistFinal>>,
    /// Small: the curves.
    #[serde(skip)]
    pub small: Option<ExperimentCurves>,
    /// MNIST: the curves.
    #[serde(skip)]
    pub mnist: Option<ExperimentCurves>,
}

/// Runs the experiments of the plan (small first).
pub fn run(plan: &SdcpPlan, progress: &dyn Progress) -> anyhow::Result<SdcpReport> {
    plan.check()?;
    let mut report = SdcpReport::default();
    if plan.small {
        run_small(plan, progress, &mut report)?;
    }
    if plan.mnist {
        run_mnist(plan, progress, &mut report)?;
    }
    Ok(report)
}

fn run_small(
    plan: &SdcpPlan,
    progress: &dyn Progress,
    report: &mut SdcpReport,
) -> anyhow::Result<()> {
    let seed = plan.seed;
    let exp = plan.experiment(
        50_000,
        25,
        &[0.3, 0.5],
        &["cd", "pcd", "cg", "sdcp", "csdcp"],
        10,
        12,
        3,
        4,
    )?;
    let sets: Vec<(&str, Dataset, f64)> = vec![
        (
            "bars-stripes-3x3",
            BarsAndStripes::new(3, false)?.dataset()?,
            -(14f64.ln()),
        ),
        (
            "shifting-bar-9-1",
            ShiftingBar::paper().dataset()?,
            -(9f64.ln()),
        ),
    ];
    // every run: (set, lr, algo, trial)
    let mut jobs = Vec::new();
    for s in 0..sets.len() {
        for l in 0..exp.lrs.len() {
            for a in 0..exp.algos.len() {
                for t in 0..exp.trials {
                    jobs.push((s, l, a, t));
                }
            }
        }
    }
    progress.stage("runs", Some(jobs.len() as u64));
    let results: Vec<anyhow::Result<TrialCurve>> = jobs
        .par_iter()
        .map(|&(s, l, a, t)| {
            let (_, data, _) = &sets[s];
            let init_seed = derive_seed(derive_seed(seed, s as u64), t as u64);
            let rbm0 = Rbm::init_from_data(data, 4, 0.01, &mut rng_from_seed(init_seed))?;
            let params = TrainParams::new()
                .epochs(exp.epochs)
                .full_batch()
                .learning_rate(exp.lrs[l])
                .algorithm(exp.algos[a].algorithm)
                .seed(chain_seed(init_seed, &exp.algos[a].name, exp.lrs[l]))
                // the paper's curves run their budget: the large rates' fall is what they show
                .divergence_tol(0.0);
            let out = Trainer::new(rbm0, data, params)?
                .add_observer(
                    ExactLogLikelihood::new("atll", data.clone()),
                    exp.eval_every,
                )
                .run()?;
            progress.advance(1);
            Ok(TrialCurve::of(&out, "atll"))
        })
        .collect();
    progress.finish();
    let results = results.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
    let mut cells = Vec::new();
    let mut at = 0;
    for (name, _, _) in &sets {
        for &lr in &exp.lrs {
            for c in &exp.algos {
                cells.push(cell_stats(name, lr, &c.name, &results[at..at + exp.trials]));
                at += exp.trials;
            }
        }
    }
    let check_epoch = Some(3000.min(exp.epochs as u64));
    let table = final_table(&cells, check_epoch);
    let bounds: BTreeMap<String, f64> = sets.iter().map(|(n, _, b)| (n.to_string(), *b)).collect();
    report.small_epochs = Some(exp.epochs);
    report.small_trials = Some(exp.trials);
    report.small_final_atll = Some(
        cells
            .iter()
            .map(|c| FinalAtll {
                dataset: c.dataset.clone(),
                lr: c.lr,
                algo: c.algo.clone(),
                mean: c.final_mean(),
                sd: c.final_sd(),
                epoch_90: c.epoch_90,
                mean_at_3000: check_epoch.and_then(|e| c.mean_at(e)),
                diverged: c.diverged,
            })
            .collect(),
    );
    report.small = Some(ExperimentCurves {
        cells,
        table,
        bounds,
    });
    Ok(())
}

fn run_mnist(
    plan: &SdcpPlan,
    progress: &dyn Progress,
    report: &mut SdcpReport,
) -> anyhow::Result<()> {
    let seed = plan.seed;
    let exp = plan.experiment(
        200,
        10,
        &[0.01],
        &["cd", "cg", "sdcp", "csdcp"],
        10,
        24,
        6,
        4,
    )?;
    let data_dir = plan
        .data_dir
        .as_deref()
        .ok_or_else(|| boltzkit::Error::param("--data-dir", "the MNIST experiment needs it"))?;
    let train = read_binary(&local_file(data_dir, BINARIZED_MNIST_TRAIN), Binarize::None)?;
    let test = read_binary(&local_file(data_dir, BINARIZED_MNIST_TEST), Binarize::None)?;
    let base_b = base_rate_biases(&train)?;
    let mut cells = Vec::new();
    let mut finals = Vec::new();
    for &lr in &exp.lrs {
        for c in &exp.algos {
            let mut runs = Vec::new();
            for t in 0..exp.trials {
                let init_seed = derive_seed(derive_seed(seed, 100), t as u64);
                let rbm0 = Rbm::init_from_data(&train, 500, 0.01, &mut rng_from_seed(init_seed))?;
                let params = TrainParams::new()
                    .epochs(exp.epochs)
                    .batch_size(200)
                    .learning_rate(lr)
                    .algorithm(c.algorithm)
                    .seed(chain_seed(init_seed, &c.name, lr));
                let monitor = AisLogLikelihood::new(
                    "test_atll",
                    test.clone(),
                    AisSchedule::linear(plan.ais_steps)?,
                    plan.ais_chains,
                    derive_seed(init_seed, 2),
                )?;
                let label = format!("{} η={lr} trial {}", c.name, t + 1);
                progress.stage(&label, Some(exp.epochs as u64));
                let out = Trainer::new(rbm0, &train, params)?
                    .add_observer(monitor, exp.eval_every)
                    .add_observer(EpochTick(progress), 1)
                    .run()?;
                progress.finish();
                let trial = TrialCurve::of(&out, "test_atll");
                // the final bracket [RAISE, forward AIS] from the training data's base rates
                // (forward AIS: the chains of derive_seed(init_seed, 3), as before RAISE came)
                let params = LogLikParams::new(Method::Bracket)
                    .schedule(plan.final_schedule()?)
                    .chains(plan.ais_chains)
                    .raise_chains(plan.raise_chains)
                    .raise_vectors(plan.raise_vectors)
                    .base(base_b.clone())
                    .seed(derive_seed(init_seed, 3));
                let LogLikelihood::Bracket(bracket) =
                    average_log_likelihood(&out.model, &test, &params)?
                else {
                    anyhow::bail!("the final estimate of {label} is not a bracket");
                };
                let fin = MnistFinal {
                    algo: c.name.clone(),
                    lr,
                    trial: t,
                    epochs: out.record.epochs,
                    train_s: out.record.wall_s,
                    stop: out.record.stop.to_string(),
                    test_ll_ais: bracket.ais.value,
                    log_z_ais: bracket.log_z.value,
                    log_z_ais_se: bracket.log_z.stderr,
                    diagnosis: bracket.diagnosis.to_string(),
                    bracket,
                };
                let fin_text = serde_json::to_value(&fin)?.to_string();
                progress.note(&format!("{label}: {fin_text}"));
                if let Some(out_dir) = &plan.models_dir {
                    let mut meta = BTreeMap::new();
                    meta.insert("algorithm".to_string(), c.name.to_string());
                    meta.insert("seed".into(), init_seed.to_string());
                    meta.insert("final".into(), fin_text);
                    save_rbm(
                        &out_dir.join(format!("sdcp-mnist-{}-lr{lr}-t{t}.safetensors", c.name)),
                        &out.model,
                        out.record.offsets.as_ref(),
                        &meta,
                    )?;
                }
                finals.push(fin);
                runs.push(trial);
            }
            cells.push(cell_stats("mnist", lr, &c.name, &runs));
        }
    }
    let table = format!(
        "{}\n{}",
        final_table(&cells, None),
        final_brackets_table(&finals)
    );
    report.mnist_epochs = Some(exp.epochs);
    report.mnist_trials = Some(exp.trials);
    report.mnist_ais_chains = Some(plan.ais_chains);
    report.mnist_ais_monitor_steps = Some(plan.ais_steps);
    report.mnist_final = Some(finals);
    report.mnist = Some(ExperimentCurves {
        cells,
        table,
        bounds: BTreeMap::new(),
    });
    Ok(())
}

/// The final brackets of the MNIST runs as Markdown: a row per run with both ends (± one
/// standard error), the steps, the vectors RAISE scored and the diagnosis.
pub fn final_brackets_table(finals: &[MnistFinal]) -> String {
    let mut s = String::from(
        "| algorithm | η | trial | RAISE (± se) | forward AIS (± se) | steps | RAISE vectors | diagnosis |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for f in finals {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            f.algo,
            f.lr,
            f.trial + 1,
            bracket_markdown_cells(&f.bracket),
            f.diagnosis
        );
    }
    s
}

/// The final brackets of the MNIST runs as CSV, a row per run.
pub fn final_brackets_csv(finals: &[MnistFinal]) -> String {
    let mut s = format!("algo,lr,trial,epochs,train_s,{BRACKET_CSV_HEADER}\n");
    for f in finals {
        let _ = writeln!(
            s,
            "{},{},{},{},{:.3},{}",
            f.algo,
            f.lr,
            f.trial + 1,
            f.epochs,
            f.train_s,
            bracket_csv(&f.bracket)
        );
    }
    s
}

/// The files of one experiment in `dir`: `sdcp-{name}-curves.csv`, `sdcp-{name}-table.md`,
/// `sdcp-{name}.png`; for the small experiments also `sdcp-small.json` (every cell), for
/// MNIST `sdcp-mnist-final.json` and `sdcp-mnist-final.csv` (the final brackets).
pub fn write_experiment(dir: &Path, report: &SdcpReport) -> anyhow::Result<()> {
    use boltzkit::io::write_atomic;
    if let Some(small) = &report.small {
        write_atomic(
            &dir.join("sdcp-small-curves.csv"),
            curves_csv(&small.cells).as_bytes(),
        )?;
        write_atomic(&dir.join("sdcp-small-table.md"), small.table.as_bytes())?;
        curves_png(&dir.join("sdcp-small.png"), &small.cells, &small.bounds)?;
        let json = serde_json::to_string(&small.cells)?;
        write_atomic(&dir.join("sdcp-small.json"), json.as_bytes())?;
    }
    if let Some(mnist) = &report.mnist {
        write_atomic(
            &dir.join("sdcp-mnist-curves.csv"),
            curves_csv(&mnist.cells).as_bytes(),
        )?;
        write_atomic(&dir.join("sdcp-mnist-table.md"), mnist.table.as_bytes())?;
        curves_png(&dir.join("sdcp-mnist.png"), &mnist.cells, &mnist.bounds)?;
        let finals = serde_json::to_value(report.mnist_final.as_deref().unwrap_or(&[]))?;
        write_atomic(
            &dir.join("sdcp-mnist-final.json"),
            serde_json::to_string(&finals)?.as_bytes(),
        )?;
        write_atomic(
            &dir.join("sdcp-mnist-final.csv"),
            final_brackets_csv(report.mnist_final.as_deref().unwrap_or(&[])).as_bytes(),
        )?;
    }
    Ok(())
}

/// Advances the progress once per epoch.
struct EpochTick<'p>(&'p dyn Progress);

impl<'p> Observer<TrainProgress<'p>> for EpochTick<'_> {
    fn observe(&mut self, p: &mut TrainProgress<'p>) -> boltzkit::Result<Control> {
        if p.epoch > 0 {
            self.0.advance(1);
        }
        Ok(Control::Continue)
    }
}

#[cfg(test)]
mod tests;
