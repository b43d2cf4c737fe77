//! `repro frank-wolfe`: Figures 1 and 2 of Ping, Liu & Ihler, *Learning Infinite RBMs with
//! Frank-Wolfe* (NIPS 2016) on Caltech101 Silhouettes and MNIST: Frank-Wolfe up to `T`
//! units with an AIS test log-likelihood every `eval_every` units and the train/validation gap
//! that selects the size; CD-k from random starts (best of `restarts` on validation) and CD-k
//! started from the FW model, at a list of sizes, each start trained at every rate of `--lrs`
//! and kept at the one best on validation (the paper's Sec. 4 protocol); the test error of a
//! logistic regression on `E[h | v]` of each.
//!
//! Plan → run → result: [`FwPlan`] → [`run`] → [`FwReport`]; [`write_dataset`] writes the
//! CSVs, the JSON and the figures of one dataset, [`draw_figures`] redraws them from the JSON.
//! [`run_fw`] runs a Frank-Wolfe fit (the library's `run_reported`: the test log-likelihood
//! ([`TestLogLikelihood`]) at every size evaluation and a JSONL log) reporting to a
//! [`Progress`].

use crate::data::{local_file, read_as_binary};
use crate::plot::{line_chart, Chart, Series};
use crate::Progress;
use anyhow::Context;
use boltzkit::classify::{LogisticParams, LogisticRegression};
use boltzkit::data::{read_dataset, Binarize, Dataset, ReadOptions};
use boltzkit::estimate::Method;
use boltzkit::fit::{Control, Observer};
use boltzkit::io::{write_atomic, MetricLog};
use boltzkit::rbm::ais::AisSchedule;
use boltzkit::rbm::features::hidden_features;
use boltzkit::rbm::frank_wolfe::{
    mean_log_unnormalized, run_reported, FrankWolfe, FwFit, FwParams, FwProgress, SizeEvaluation,
};
use boltzkit::rbm::loglik::{Bracket, Diagnosis, LogLikelihood};
use boltzkit::rbm::train::{Algorithm, GapEarlyStop, TrainParams, Trainer};
use boltzkit::rbm::Rbm;
use boltzkit::rng::{derive_rng, derive_seed};
use rand::seq::SliceRandom;
use serde::Serialize;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

/// The seed `repro frank-wolfe` uses unless told otherwise.
pub const SEED: u64 = 2016;

/// The data files of a dataset, relative to the data folder.
pub fn data_files(name: &str) -> Vec<String> {
    match name {
        "caltech" => [
            "train.amat.gz",
            "valid.amat.gz",
            "test.amat.gz",
            "train_labels.txt.gz",
            "test_labels.txt.gz",
        ]
        .iter()
        .map(|s| format!("caltech101_silhouettes/caltech101_silhouettes_28_split1_{s}"))
        .collect(),
        _ => [
            "train-images-idx3-ubyte.gz",
            "train-labels-idx1-ubyte.gz",
            "t10k-images-idx3-ubyte.gz",
            "t10k-labels-idx1-ubyte.gz",
        ]
        .iter()
        .map(|s| format!("mnist/{s}"))
        .collect(),
    }
}

/// Train / validation / test splits with labels.
struct Splits {
    train: Dataset,
    valid: Dataset,
    test: Dataset,
    train_labels: Vec<u32>,
    test_labels: Vec<u32>,
}

fn labels(path: &Path, offset: u32) -> anyhow::Result<Vec<u32>> {
    let d = read_dataset(path, &ReadOptions::default())?;
    anyhow::ensure!(
        d.n_vars() == 1,
        "{}: expected one label per row",
        path.display()
    );
    Ok(d.values()
        .iter()
        .map(|&x| u32::from(x).saturating_sub(offset))
        .collect())
}

/// Caltech101 Silhouettes split1 (4,100 / 2,264 / 2,307), labels 1..101 → 0..100. Pixel order
/// (column-major) and polarity (0 = object) are kept: the likelihood does not depend on them.
fn caltech(dir: &Path) -> anyhow::Result<Splits> {
    let f = |s: &str| {
        local_file(
            dir,
            &format!("caltech101_silhouettes/caltech101_silhouettes_28_split1_{s}"),
        )
    };
    Ok(Splits {
        train: read_as_binary(&f("train.amat.gz"), Binarize::None)?,
        valid: read_as_binary(&f("valid.amat.gz"), Binarize::None)?,
        test: read_as_binary(&f("test.amat.gz"), Binarize::None)?,
        train_labels: labels(&f("train_labels.txt.gz"), 1)?,
        test_labels: labels(&f("test_labels.txt.gz"), 1)?,
    })
}

/// MNIST binarized at 127; 10,000 training images drawn at random (seeded) for validation.
fn mnist(dir: &Path, seed: u64) -> anyhow::Result<Splits> {
    let f = |name: &str| local_file(dir, &format!("mnist/{name}"));
    let bin = Binarize::Threshold(127.0);
    let all = read_as_binary(&f("train-images-idx3-ubyte.gz"), bin)?;
    let all_labels = labels(&f("train-labels-idx1-ubyte.gz"), 0)?;
    let mut order: Vec<usize> = (0..all.n_samples()).collect();
    order.shuffle(&mut derive_rng(seed, 0));
    let (valid_rows, train_rows) = order.split_at(10_000.min(order.len() / 2));
    let mut train_rows = train_rows.to_vec();
    train_rows.sort_unstable();
    Ok(Splits {
        train: all.select(&train_rows)?,
        valid: all.select(valid_rows)?,
        test: read_as_binary(&f("t10k-images-idx3-ubyte.gz"), bin)?,
        train_labels: train_rows.iter().map(|&r| all_labels[r]).collect(),
        test_labels: labels(&f("t10k-labels-idx1-ubyte.gz"), 0)?,
    })
}

/// Keeps a copy of the FW model at the listed sizes.
struct Snapshots {
    sizes: Vec<usize>,
    models: Rc<RefCell<BTreeMap<usize, (Rbm, f64)>>>,
}

impl<'p> Observer<FwProgress<'p>> for Snapshots {
    fn observe(&mut self, p: &mut FwProgress<'p>) -> boltzkit::Result<Control> {
        let u = p.model.n_units();
        if self.sizes.contains(&u) && p.model.is_standard() {
            self.models
                .borrow_mut()
                .entry(u)
                .or_insert((p.model.to_rbm()?, p.wall_s));
        }
        Ok(Control::Continue)
    }
}

/// One point of Figure 1 / 2.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Point {
    /// `fw`, `cd_rand` (the best random start), `cd_fw` (CD from the FW model), `cd_rand_run`
    /// (every random start), `cd_rand_lr` / `cd_fw_lr` (every rate of every start).
    pub method: &'static str,
    /// Hidden units.
    pub units: usize,
    /// Random start (1-based; 0 for FW and CD from FW).
    pub run: usize,
    /// The CD learning rate kept on validation (0 for FW itself).
    pub lr: f64,
    /// Average test log-likelihood by forward AIS (the bracket's upper end).
    pub test_ll: f64,
    /// Its standard error from ln Ẑ.
    pub test_ll_se: f64,
    /// With `--eval bracket`: the test log-likelihood as [RAISE, forward AIS] (both ends with
    /// their standard errors, the steps, the vectors RAISE scored, the diagnosis).
    pub bracket: Option<Bracket>,
    /// The bracket's diagnosis in one plain line.
    pub diagnosis: Option<String>,
    /// Average validation log-likelihood (the same ln Ẑ).
    pub valid_ll: f64,
    /// Seconds of training.
    pub train_s: f64,
    /// CD epochs run (fewer than --epochs after an early stop; 0 for FW itself).
    pub epochs: usize,
    /// Test error of the logistic regression on `E[h | v]` (kept runs only).
    pub test_error: Option<f64>,
}

/// Keeps `(p, rbm)` in `best` when it is the first or has the higher validation log-likelihood.
fn keep_best_on_validation(best: &mut Option<(Point, Rbm)>, p: Point, rbm: Rbm) {
    if best.as_ref().is_none_or(|(b, _)| p.valid_ll > b.valid_ll) {
        *best = Some((p, rbm));
    }
}

/// The test log-likelihood at each size evaluation (forward AIS or the bracket): the
/// library's [`TestLogLikelihood`], which is also the observer [`run_fw`] adds.
pub use boltzkit::rbm::frank_wolfe::TestLogLikelihood;

pub use crate::bracket::{bracket_csv, bracket_markdown_cells, verdict, BRACKET_CSV_HEADER};

/// Runs `fw` (the library's [`run_reported`]) with the test log-likelihood evaluation and the
/// JSONL log when given, reporting units as the position of `progress` and each size
/// evaluation's gap and test log-likelihood as its message.
pub fn run_fw(
    fw: FrankWolfe<'_>,
    progress: &dyn Progress,
    test: Option<TestLogLikelihood>,
    log: Option<&Path>,
) -> anyhow::Result<FwFit> {
    progress.stage("units", Some(fw.params().max_units as u64));
    let log = log
        .map(|path| {
            MetricLog::create(path).with_context(|| format!("creating the log {}", path.display()))
        })
        .transpose()?;
    let fit = run_reported(fw, test, log, |units, status| {
        progress.set_position(units as u64);
        if let Some(s) = status {
            progress.message(s);
        }
    })?;
    progress.finish();
    Ok(fit)
}

/// What `repro frank-wolfe` runs, with the paper's settings (or shorter ones, said where) as
/// defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct FwPlan {
    /// Seed [default: [`SEED`]].
    pub seed: u64,
    /// Datasets: `caltech`, `mnist` [default: both].
    pub datasets: Vec<String>,
    /// The folder holding `caltech101_silhouettes/` and `mnist/` (see
    /// [`crate::data::find_data_dir`]).
    pub data_dir: PathBuf,
    /// T: Frank-Wolfe grows the model up to this many units [default: 700].
    pub max_units: usize,
    /// Sizes at which CD runs, each in 1..=T [default: 20, 50, 100, 200, ..., 700].
    pub sizes: Vec<usize>,
    /// CD epochs [default: 400 on Caltech, 200 on MNIST, as the paper].
    pub epochs: Option<usize>,
    /// Random initializations of CD per size, the best on validation kept [default: 5].
    pub restarts: usize,
    /// CD-k's k [default: 10].
    pub k: usize,
    /// CD learning rates; each start is trained at each, the best on validation kept
    /// [default: 0.05 alone, to keep runs short; the paper's grid is 0.05, 0.02, 0.01, 0.005].
    pub lrs: Vec<f64>,
    /// CD mini-batch size [default: 100].
    pub batch_size: usize,
    /// CD early stopping on the train − validation gap, in nats [default: off].
    pub cd_gap_tol: Option<f64>,
    /// Epochs between the gap checks [default: 5].
    pub cd_eval_every: usize,
    /// FW: the learner's settings.
    pub fw: FwSettings,
    /// FW: the gap tolerance (nats) of the size selection [default: 5].
    pub gap_tol: f64,
    /// FW: units between evaluations [default: 20].
    pub eval_every: usize,
    /// AIS chains [default: 100; the paper: 500].
    pub ais_chains: usize,
    /// AIS linear steps; 0: the standard 14,500-step schedule [default: 0]. RAISE walks the
    /// same schedule.
    pub ais_steps: usize,
    /// The test log-likelihood of every scored model and of the FW curve: `ais` (forward AIS)
    /// or `bracket` ([RAISE, forward AIS] with its diagnosis) [default: bracket].
    pub test_method: Method,
    /// RAISE chains per test vector [default: 1].
    pub raise_chains: usize,
    /// RAISE on a seeded random subset of this many test vectors (`None`: all)
    /// [default: 500].
    pub raise_vectors: Option<usize>,
    /// Run the classification (Figure 2) [default: true].
    pub classify: bool,
    /// Output folder: the JSONL log of each FW run is written there during the run.
    pub output: PathBuf,
}

impl Default for FwPlan {
    fn default() -> Self {
        FwPlan {
            seed: SEED,
            datasets: vec!["caltech".into(), "mnist".into()],
            data_dir: PathBuf::from("shared/data"),
            max_units: 700,
            sizes: vec![20, 50, 100, 200, 300, 400, 500, 600, 700],
            epochs: None,
            restarts: 5,
            k: 10,
            lrs: vec![0.05],
            batch_size: 100,
            cd_gap_tol: None,
            cd_eval_every: 5,
            fw: FwSettings::default(),
            gap_tol: 5.0,
            eval_every: 20,
            ais_chains: 100,
            ais_steps: 0,
            test_method: Method::Bracket,
            raise_chains: 1,
            raise_vectors: Some(500),
            classify: true,
            output: PathBuf::from("fw-repro"),
        }
    }
}

impl FwPlan {
    /// Checks the settings.
    pub fn check(&self) -> boltzkit::Result<()> {
        use boltzkit::Error;
        if self.restarts == 0 {
            return Err(Error::param("--restarts", "must be at least 1"));
        }
        if let Some(&lr) = self.lrs.iter().find(|&&lr| !(lr.is_finite() && lr > 0.0)) {
            return Err(Error::param(
                "--lrs",
                format!("{lr} is not a positive learning rate"),
            ));
        }
        if self.lrs.is_empty() {
            return Err(Error::param("--lrs", "give at least one rate"));
        }
        if !matches!(self.test_method, Method::Ais | Method::Bracket) {
            return Err(Error::param(
                "--eval",
                format!("ais or bracket, not {}", self.test_method),
            ));
        }
        if self.ais_chains == 0 || self.raise_chains == 0 || self.raise_vectors == Some(0) {
            return Err(Error::param(
                "--ais-chains/--raise-chains/--raise-vectors",
                "must be at least 1",
            ));
        }
        if let Some(&s) = self.sizes.iter().find(|&&s| s == 0 || s > self.max_units) {
            return Err(Error::param(
                "--sizes",
                format!("{s} is not in 1..=--max-units ({})", self.max_units),
            ));
        }
        if let Some(d) = self
            .datasets
            .iter()
            .find(|d| !["caltech", "mnist"].contains(&d.as_str()))
        {
            return Err(Error::param(
                "--datasets",
                format!("unknown dataset `{d}`; expected caltech or mnist"),
            ));
        }
        Ok(())
    }

    /// The data files of every dataset of the plan, relative to the data folder.
    pub fn data_files(&self) -> Vec<String> {
        self.datasets.iter().flat_map(|d| data_files(d)).collect()
    }

    fn test_ll(&self, data: &Dataset, seed: u64) -> anyhow::Result<TestLogLikelihood> {
        Ok(
            TestLogLikelihood::new(data.clone(), self.test_method, seed)?
                .chains(self.ais_chains)
                .schedule(AisSchedule::linear_or_standard(self.ais_steps)?)
                .raise_chains(self.raise_chains)
                .raise_vectors(self.raise_vectors),
        )
    }

    fn classify(&self, rbm: &Rbm, s: &Splits) -> anyhow::Result<Option<f64>> {
        if !self.classify {
            return Ok(None);
        }
        let ftrain = hidden_features(rbm, &s.train)?;
        let ftest = hidden_features(rbm, &s.test)?;
        let params = LogisticParams {
            max_iterations: 200,
            ..Default::default()
        };
        let m = LogisticRegression::fit(&ftrain, rbm.n_hidden(), &s.train_labels, &params)?;
        Ok(Some(m.error_rate(&ftest, &s.test_labels)?))
    }
}

/// The Frank-Wolfe learner's settings of the protocol (recorded with each result).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FwSettings {
    /// λ (Eqs. 6, 9) [default: 0.1].
    pub lambda: f64,
    /// η of the bias update (Eq. 10) [default: 0.5].
    pub bias_lr: f64,
    /// Persistent chains S [default: 2,000].
    pub samples: usize,
    /// Gibbs steps per draw [default: 3].
    pub gibbs_steps: usize,
    /// L-BFGS iterations per subproblem [default: 50].
    pub lbfgs_iters: usize,
    /// Starts per subproblem (one small random, the others data-row templates) [default: 1].
    pub starts: usize,
    /// Most bias steps per iteration [default: 20].
    pub bias_steps: usize,
}

impl Default for FwSettings {
    fn default() -> Self {
        FwSettings {
            lambda: 0.1,
            bias_lr: 0.5,
            samples: 2000,
            gibbs_steps: 3,
            lbfgs_iters: 50,
            starts: 1,
            bias_steps: 20,
        }
    }
}

/// The test log-likelihood settings recorded with a result.
#[derive(Debug, Clone, Serialize)]
pub struct AisSettings {
    /// Forward AIS chains.
    pub chains: usize,
    /// Steps of both ends (14,500 for the standard schedule).
    pub steps: usize,
    /// `ais` or `bracket`.
    pub method: Method,
    /// RAISE chains per test vector (bracket).
    pub raise_chains: usize,
    /// RAISE's random subset of test vectors (`None`: all; bracket).
    pub raise_vectors: Option<usize>,
}

/// At one size, FW-initialized CD against the best random start (on validation), by their
/// brackets.
#[derive(Debug, Clone, Serialize)]
pub struct SizeComparison {
    /// Hidden units.
    pub units: usize,
    /// `fw-init above`, `random above` or `undecided`.
    pub verdict: &'static str,
    /// Why, in one line, with both intervals.
    pub reason: String,
}

/// The order of FW-initialized CD (`fw`) and the best random start (`rand`) that their
/// brackets decide: one is above when its RAISE end less 3 standard errors lies above the
/// other's forward-AIS end plus 3 standard errors (disjoint brackets). Forward AIS is an upper
/// end whatever happens (`E[ln Ẑ] ≤ ln Z`), so the lower model's bracket may be inverted; the
/// upper model's may not: an inverted bracket means its RAISE end bounds an annealing model
/// still far from the RBM, so it is no lower end. Otherwise nothing is decided.
pub fn compare_brackets(units: usize, fw: &Bracket, rand: &Bracket) -> SizeComparison {
    let inverted = |b: &Bracket| matches!(b.diagnosis, Diagnosis::Inverted { .. });
    let interval = |b: &Bracket| {
        format!(
            "[{:.2} ± {:.2}, {:.2} ± {:.2}]{}",
            b.raise.value,
            b.raise.stderr,
            b.ais.value,
            b.ais.stderr,
            if inverted(b) { " (inverted)" } else { "" }
        )
    };
    let what = format!("FW-init {} vs best random {}", interval(fw), interval(rand));
    let apart = |a: &Bracket, b: &Bracket| {
        a.raise.value - 3.0 * a.raise.stderr > b.ais.value + 3.0 * b.ais.stderr
    };
    let (verdict, why) = if apart(fw, rand) && !inverted(fw) {
        ("fw-init above", "disjoint brackets")
    } else if apart(rand, fw) && !inverted(rand) {
        ("random above", "disjoint brackets")
    } else if apart(fw, rand) || apart(rand, fw) {
        (
            "undecided",
            "apart, but the upper one's bracket is inverted (its annealing chain has not reached the model)",
        )
    } else {
        (
            "undecided",
            "the brackets overlap (within 3 standard errors)",
        )
    };
    SizeComparison {
        units,
        verdict,
        reason: format!("{why}: {what}"),
    }
}

/// Mean seconds per FW iteration by part.
#[derive(Debug, Clone, Serialize)]
pub struct IterationSeconds {
    /// Sampling.
    pub sampling: f64,
    /// The subproblem (Eq. 9).
    pub subproblem: f64,
    /// The bias steps.
    pub bias: f64,
}

/// The results on one dataset (the JSON file `frank-wolfe-<name>.json`).
#[derive(Debug, Clone, Serialize)]
pub struct FwDatasetResult {
    /// Units FW reached.
    pub fw_units: usize,
    /// Seconds of FW.
    pub fw_wall_s: f64,
    /// The size selected by the gap.
    pub selected_units: Option<usize>,
    /// FW's size evaluations.
    pub evaluations: Vec<SizeEvaluation>,
    /// Every point of Figures 1 and 2.
    pub points: Vec<Point>,
    /// With `--eval bracket`: at each size, FW-initialized CD against the best random start.
    pub comparisons: Vec<SizeComparison>,
    /// CD epochs.
    pub epochs: usize,
    /// CD early-stopping tolerance.
    pub cd_gap_tol: Option<f64>,
    /// Epochs between its checks.
    pub cd_eval_every: usize,
    /// CD-k's k.
    pub k: usize,
    /// CD learning rates.
    pub lrs: Vec<f64>,
    /// CD mini-batch size.
    pub batch_size: usize,
    /// Random starts per size.
    pub restarts: usize,
    /// FW settings.
    pub fw: FwSettings,
    /// Test log-likelihood settings.
    pub ais: AisSettings,
    /// Mean seconds per FW iteration.
    pub mean_iteration_s: IterationSeconds,
}

/// Everything `repro frank-wolfe` found, by dataset name.
#[derive(Debug, Clone, Serialize)]
pub struct FwReport {
    /// The results per dataset (`caltech`, `mnist`).
    #[serde(flatten)]
    pub datasets: BTreeMap<String, FwDatasetResult>,
}

/// Runs every dataset of the plan and writes its files into `plan.output` as it goes
/// ([`write_dataset`]): a dataset's results are kept even when a later one fails.
pub fn run(plan: &FwPlan, progress: &dyn Progress) -> anyhow::Result<FwReport> {
    plan.check()?;
    let mut datasets = BTreeMap::new();
    for (di, name) in plan.datasets.iter().enumerate() {
        let dseed = derive_seed(plan.seed, di as u64);
        let splits = match name.as_str() {
            "caltech" => caltech(&plan.data_dir)?,
            _ => mnist(&plan.data_dir, dseed)?,
        };
        let epochs = plan
            .epochs
            .unwrap_or(if name == "caltech" { 400 } else { 200 });
        let result = run_dataset(plan, name, &splits, epochs, dseed, progress)?;
        write_dataset(&plan.output, name, &result)?;
        datasets.insert(name.clone(), result);
    }
    Ok(FwReport { datasets })
}

fn run_dataset(
    plan: &FwPlan,
    name: &str,
    s: &Splits,
    epochs: usize,
    seed: u64,
    progress: &dyn Progress,
) -> anyhow::Result<FwDatasetResult> {
    let say = |msg: String| progress.note(&msg);
    say(format!(
        "{name}: train {} / valid {} / test {} × {}",
        s.train.n_samples(),
        s.valid.n_samples(),
        s.test.n_samples(),
        s.train.n_vars()
    ));
    // 1. Frank-Wolfe up to T with the AIS test log-likelihood every eval_every units
    let params = FwParams::new()
        .max_units(plan.max_units)
        .lambda(plan.fw.lambda)
        .learning_rate(plan.fw.bias_lr)
        .samples(plan.fw.samples)
        .gibbs_steps(plan.fw.gibbs_steps)
        .lbfgs_iterations(plan.fw.lbfgs_iters)
        .subproblem_starts(plan.fw.starts)
        .bias_steps(plan.fw.bias_steps)
        .eval_every(plan.eval_every)
        .gap_tol(plan.gap_tol)
        .seed(derive_seed(seed, 1));
    let snaps = Rc::new(RefCell::new(BTreeMap::new()));
    let fw = FrankWolfe::new(&s.train, params)?
        .validation(&s.valid)?
        .add_observer(Snapshots {
            sizes: plan.sizes.clone(),
            models: snaps.clone(),
        });
    let log = plan.output.join(format!("fw-{name}.jsonl"));
    let scorer = plan.test_ll(&s.test, derive_seed(seed, 2))?;
    let fit = run_fw(fw, progress, Some(scorer.clone()), Some(&log))?;
    let rec = &fit.record;
    say(format!(
        "{name}: FW reached {} units in {:.1} s; selected size {:?}",
        fit.model.n_units(),
        rec.wall_s,
        rec.selected_units
    ));

    // 2. at each size: FW itself, CD from random starts (best on validation), CD from FW
    let mut points: Vec<Point> = Vec::new();
    let snaps = snaps.borrow();
    for &h in &plan.sizes {
        let Some((fw_rbm, fw_s)) = snaps.get(&h) else {
            say(format!("{name}: FW did not reach {h} units; skipped"));
            continue;
        };
        let eval = |rbm: &Rbm,
                    run: usize,
                    method: &'static str,
                    (train_s, epochs, lr): (f64, usize, f64)|
         -> anyhow::Result<Point> {
            // one forward-AIS ln Z gives both the validation and the test log-likelihood
            // (the selection on validation reads forward AIS; RAISE scores the test rows)
            let est = scorer.evaluate(rbm, derive_seed(h as u64, run as u64))?;
            let log_z = est.log_z().context("forward AIS gave no ln Z")?;
            let (test_ll, se) = (est.upper().value, log_z.stderr);
            let fwm = boltzkit::rbm::frank_wolfe::FwModel::from_rbm(rbm);
            let valid_ll = mean_log_unnormalized(&fwm, &s.valid)? - log_z.value;
            let bracket = match est {
                LogLikelihood::Bracket(b) => Some(b),
                _ => None,
            };
            Ok(Point {
                method,
                units: h,
                run,
                lr,
                test_ll,
                test_ll_se: se,
                diagnosis: bracket.as_ref().map(|b| b.diagnosis.to_string()),
                bracket,
                valid_ll,
                train_s,
                epochs,
                test_error: None,
            })
        };
        let mut p = eval(fw_rbm, 0, "fw", (*fw_s, 0, 0.0))?;
        p.test_error = plan.classify(fw_rbm, s)?;
        points.push(p);
        // CD-k from `start` at each of --lrs; the run best on validation is kept, and every
        // run goes to `trials` as `{method}_lr` when there is more than one rate
        let cd = |start: &Rbm,
                  run_seed: u64,
                  run: usize,
                  method: &'static str,
                  trials: &mut Vec<Point>|
         -> anyhow::Result<(Point, Rbm)> {
            let mut best: Option<(Point, Rbm)> = None;
            for &lr in &plan.lrs {
                let t = Instant::now();
                let params = TrainParams::new()
                    .epochs(epochs)
                    .batch_size(plan.batch_size)
                    .algorithm(Algorithm::Cd { k: plan.k })
                    .learning_rate(lr as f32)
                    .seed(run_seed);
                let mut trainer = Trainer::new(start.clone(), &s.train, params)?;
                if let Some(tol) = plan.cd_gap_tol {
                    let stop = GapEarlyStop::new(s.train.clone(), s.valid.clone(), tol)?;
                    trainer = trainer.add_observer(stop, plan.cd_eval_every);
                }
                let out = trainer.run()?;
                let secs = (t.elapsed().as_secs_f64(), out.record.epochs, lr);
                let p = eval(&out.model, run, method, secs)?;
                if plan.lrs.len() > 1 {
                    let mut trial = p.clone();
                    trial.method = if method == "cd_fw" {
                        "cd_fw_lr"
                    } else {
                        "cd_rand_lr"
                    };
                    trials.push(trial);
                }
                keep_best_on_validation(&mut best, p, out.model);
            }
            best.context("--lrs is empty")
        };
        let mut best: Option<(Point, Rbm)> = None;
        for r in 0..plan.restarts {
            progress.stage(
                &format!(
                    "{name}: CD-{} random init {} of {} at {h} units",
                    plan.k,
                    r + 1,
                    plan.restarts
                ),
                None,
            );
            let rs = derive_seed(derive_seed(seed, 3), (h * 100 + r) as u64);
            let init = Rbm::init_from_data(&s.train, h, 0.01, &mut derive_rng(rs, 0))?;
            let (p, rbm) = cd(&init, rs, r + 1, "cd_rand", &mut points)?;
            progress.finish();
            let mut all = p.clone();
            all.method = "cd_rand_run";
            points.push(all);
            keep_best_on_validation(&mut best, p, rbm);
        }
        if let Some((mut p, rbm)) = best {
            p.test_error = plan.classify(&rbm, s)?;
            points.push(p);
        }
        progress.stage(&format!("{name}: CD-{} from FW at {h} units", plan.k), None);
        let (mut p, rbm) = cd(
            fw_rbm,
            derive_seed(derive_seed(seed, 4), h as u64),
            0,
            "cd_fw",
            &mut points,
        )?;
        progress.finish();
        p.test_error = plan.classify(&rbm, s)?;
        say(format!(
            "{name} h={h}: test LL  FW {:.2}  CD(best of {}) {:.2}  CD(FW init) {:.2}",
            points
                .iter()
                .find(|q| q.method == "fw" && q.units == h)
                .map_or(f64::NAN, |q| q.test_ll),
            plan.restarts,
            points
                .iter()
                .find(|q| q.method == "cd_rand" && q.units == h)
                .map_or(f64::NAN, |q| q.test_ll),
            p.test_ll
        ));
        points.push(p);
    }
    let comparisons = plan
        .sizes
        .iter()
        .filter_map(|&h| {
            let bracket = |m: &str| {
                points
                    .iter()
                    .find(|q| q.method == m && q.units == h)
                    .and_then(|q| q.bracket.as_ref())
            };
            Some(compare_brackets(h, bracket("cd_fw")?, bracket("cd_rand")?))
        })
        .collect();
    let per_iteration = |f: &dyn Fn(&boltzkit::rbm::frank_wolfe::IterationRecord) -> f64| {
        rec.iterations.iter().map(f).sum::<f64>() / rec.iterations.len().max(1) as f64
    };
    Ok(FwDatasetResult {
        fw_units: fit.model.n_units(),
        fw_wall_s: rec.wall_s,
        selected_units: rec.selected_units,
        evaluations: rec.evaluations.clone(),
        points,
        epochs,
        cd_gap_tol: plan.cd_gap_tol,
        cd_eval_every: plan.cd_eval_every,
        k: plan.k,
        lrs: plan.lrs.clone(),
        batch_size: plan.batch_size,
        restarts: plan.restarts,
        fw: plan.fw.clone(),
        comparisons,
        ais: AisSettings {
            method: plan.test_method,
            raise_chains: plan.raise_chains,
            raise_vectors: plan.raise_vectors,
            chains: plan.ais_chains,
            steps: if plan.ais_steps == 0 {
                14_500
            } else {
                plan.ais_steps
            },
        },
        mean_iteration_s: IterationSeconds {
            sampling: per_iteration(&|r| r.sampling_s),
            subproblem: per_iteration(&|r| r.subproblem_s),
            bias: per_iteration(&|r| r.bias_s),
        },
    })
}

/// The kept models of each size as Markdown (FW, the best random start, FW-initialized CD:
/// forward AIS, and with the bracket RAISE and the diagnosis), then the comparisons.
pub fn markdown(name: &str, result: &FwDatasetResult) -> String {
    let mut s = format!(
        "{name}: average test log-likelihood, {} steps, {} forward chains\n\n\
         | units | model | lr | RAISE (± se) | forward AIS (± se) | steps | RAISE vectors | diagnosis |\n\
         |---|---|---|---|---|---|---|---|\n",
        result.ais.steps, result.ais.chains
    );
    for p in result
        .points
        .iter()
        .filter(|p| ["fw", "cd_rand", "cd_fw"].contains(&p.method))
    {
        let cells = p.bracket.as_ref().map_or_else(
            || {
                format!(
                    "– | {:.3} ± {:.3} | {} | – ",
                    p.test_ll, p.test_ll_se, result.ais.steps
                )
            },
            bracket_markdown_cells,
        );
        let _ = writeln!(
            s,
            "| {} | {} | {} | {cells} | {} |",
            p.units,
            p.method,
            p.lr,
            p.diagnosis.as_deref().unwrap_or("–")
        );
    }
    if !result.comparisons.is_empty() {
        s.push_str("\nFW-initialized CD against the best random start (on validation):\n\n");
        for c in &result.comparisons {
            let _ = writeln!(s, "- {} units: **{}**: {}", c.units, c.verdict, c.reason);
        }
    }
    s
}

/// Writes the files of one dataset into `dir`: `fw-<name>.csv` (FW's size evaluations),
/// `fig1-fig2-<name>.csv` (every point), `fig1-<name>.md` (the kept models and the
/// comparisons, [`markdown`]), `frank-wolfe-<name>.json` (the result) and the figures
/// ([`draw_figures`]).
pub fn write_dataset(dir: &Path, name: &str, result: &FwDatasetResult) -> anyhow::Result<()> {
    let mut fw_csv = String::from(
        "units,iteration,wall_s,gap,test_ll,test_ll_se,train_nfe,valid_nfe,test_raise,test_raise_se\n",
    );
    for e in &result.evaluations {
        let m = |k: &str| e.metrics.get(k).map_or(String::new(), |v| v.to_string());
        writeln!(
            fw_csv,
            "{},{},{:.3},{},{},{},{},{},{},{}",
            e.units,
            e.iteration,
            e.wall_s,
            e.gap.map_or(String::new(), |g| g.to_string()),
            m("test_ll"),
            m("test_ll_se"),
            e.train_nfe,
            e.valid_nfe.map_or(String::new(), |g| g.to_string()),
            m("test_raise"),
            m("test_raise_se")
        )?;
    }
    write_atomic(&dir.join(format!("fw-{name}.csv")), fw_csv.as_bytes())?;
    let mut csv = format!(
        "method,units,run,lr,test_ll,test_ll_se,valid_ll,train_s,epochs,test_error,{BRACKET_CSV_HEADER}\n"
    );
    for p in &result.points {
        writeln!(
            csv,
            "{},{},{},{},{},{},{},{:.3},{},{},{}",
            p.method,
            p.units,
            p.run,
            p.lr,
            p.test_ll,
            p.test_ll_se,
            p.valid_ll,
            p.train_s,
            p.epochs,
            p.test_error.map_or(String::new(), |e| e.to_string()),
            p.bracket
                .as_ref()
                .map_or_else(|| ",".repeat(6), bracket_csv)
        )?;
    }
    write_atomic(&dir.join(format!("fig1-fig2-{name}.csv")), csv.as_bytes())?;
    write_atomic(
        &dir.join(format!("fig1-{name}.md")),
        markdown(name, result).as_bytes(),
    )?;
    let json = serde_json::to_value(result)?;
    write_atomic(
        &dir.join(format!("frank-wolfe-{name}.json")),
        serde_json::to_string_pretty(&json)?.as_bytes(),
    )?;
    draw_figures(dir, name, &json, result.k, result.restarts)
}

/// Figures 1 and 2 as PNG (`fig1-<name>.png`, `fig2-<name>.png` when there are test errors)
/// in `dir`, from the JSON of a [`FwDatasetResult`]; `k` and `restarts` label the CD lines when
/// the JSON lacks them.
pub fn draw_figures(
    dir: &Path,
    name: &str,
    result: &serde_json::Value,
    k: usize,
    restarts: usize,
) -> anyhow::Result<()> {
    let num = |v: &serde_json::Value| v.as_f64();
    let empty = Vec::new();
    let points = result["points"].as_array().unwrap_or(&empty);
    let curve = |method: &str, key: &str, scale: f64| -> Vec<(f64, f64)> {
        points
            .iter()
            .filter(|p| p["method"] == method)
            .filter_map(|p| Some((num(&p["units"])?, scale * num(&p[key])?)))
            .collect()
    };
    let fw: Vec<(f64, f64, f64)> = result["evaluations"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(|e| {
            let m = &e["metrics"];
            Some((
                num(&e["units"])?,
                num(&m["test_ll"])?,
                3.0 * num(&m["test_ll_se"]).unwrap_or(0.0),
            ))
        })
        .collect();
    let k = result["k"].as_u64().unwrap_or(k as u64);
    let restarts = result["restarts"].as_u64().unwrap_or(restarts as u64);
    let rand = format!("CD-{k} (best of {restarts} random inits)");
    let fwi = format!("CD-{k} (FW init)");
    let mut fig1 = Chart::new(format!("{name}: average test log-likelihood (AIS)"))
        .x_label("hidden units")
        .y_label("avg. test log-likelihood (nats)")
        .series(
            Series::new("FW", fw.iter().map(|&(x, y, _)| (x, y)).collect())
                .band(fw.iter().map(|&(_, _, b)| b).collect()),
        )
        .series(Series::new(rand.clone(), curve("cd_rand", "test_ll", 1.0)))
        .series(Series::new(fwi.clone(), curve("cd_fw", "test_ll", 1.0)));
    if let Some(sel) = result["selected_units"].as_f64() {
        fig1 = fig1.v_line(sel, format!("size selected by the gap: {sel}"), Some(0));
    }
    line_chart(&dir.join(format!("fig1-{name}.png")), &fig1)?;
    let fig2 = Chart::new(format!("{name}: test error, logistic regression on E[h|v]"))
        .x_label("hidden units")
        .y_label("test error (%)")
        .series(Series::new("FW", curve("fw", "test_error", 100.0)))
        .series(Series::new(rand, curve("cd_rand", "test_error", 100.0)))
        .series(Series::new(fwi, curve("cd_fw", "test_error", 100.0)));
    if points.iter().any(|p| p["test_error"].is_number()) {
        line_chart(&dir.join(format!("fig2-{name}.png")), &fig2)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
