//! `boltzkit repro frank-wolfe`: Figures 1 and 2 of Ping, Liu & Ihler, *Learning Infinite RBMs
//! with Frank-Wolfe* (NIPS 2016) on Caltech101 Silhouettes and MNIST: Frank-Wolfe up to `T`
//! units with an AIS test log-likelihood every `eval_every` units and the train/validation gap
//! that selects the size; CD-k from random starts (best of `restarts` on validation) and CD-k
//! started from the FW model, at a list of sizes, each start trained at every rate of `--lrs`
//! and kept at the one best on validation (the paper's Sec. 4 protocol); the test error of a
//! logistic regression on `E[h | v]` of each.

use crate::args::CommonArgs;
use crate::fw_run::{self, ais_schedule, AisTest};
use crate::plot::{line_chart, Chart, Series};
use crate::report::Summary;
use anyhow::Context;
use boltzkit::classify::{LogisticParams, LogisticRegression};
use boltzkit::data::{read_dataset, Binarize, Dataset, ReadOptions};
use boltzkit::io::write_atomic;
use boltzkit::rbm::features::hidden_features;
use boltzkit::rbm::frank_wolfe::{FrankWolfe, FwObserver, FwParams, FwProgress};
use boltzkit::rbm::train::{Algorithm, GapEarlyStop, TrainParams, Trainer};
use boltzkit::rbm::Rbm;
use boltzkit::rng::{derive_rng, derive_seed};
use clap::Args;
use rand::seq::SliceRandom;
use serde_json::json;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

/// The seed `repro frank-wolfe` uses unless `--seed` says otherwise.
pub const FW_REPRO_SEED: u64 = 2016;

/// `boltzkit repro frank-wolfe` flags.
#[derive(Debug, Args)]
pub struct FwReproArgs {
    /// Datasets, comma-separated: caltech, mnist
    #[arg(long, value_delimiter = ',', default_values_t = ["caltech".to_string(), "mnist".to_string()],
          value_parser = ["caltech", "mnist"])]
    datasets: Vec<String>,
    /// Directory holding caltech101_silhouettes/ and mnist/
    #[arg(long, value_name = "DIR", default_value = "../shared/data")]
    data_dir: PathBuf,
    /// T: Frank-Wolfe grows the model up to this many units
    #[arg(long, value_name = "T", default_value_t = 700)]
    max_units: usize,
    /// Sizes at which CD runs (random and FW-initialized), comma-separated (≤ --max-units)
    #[arg(long, value_delimiter = ',',
          default_values_t = [20usize, 50, 100, 200, 300, 400, 500, 600, 700])]
    sizes: Vec<usize>,
    /// CD epochs [default: 400 on Caltech, 200 on MNIST, as the paper]
    #[arg(long, value_name = "N")]
    epochs: Option<usize>,
    /// Random initializations of CD per size (the best on validation is kept)
    #[arg(long, value_name = "N", default_value_t = 5)]
    restarts: usize,
    /// CD-k's k
    #[arg(long, value_name = "N", default_value_t = 10)]
    k: usize,
    /// CD learning rates, comma-separated: every CD start (each random one and the FW one) is
    /// trained at each and the rate best on validation is kept, as the paper selects its fixed
    /// rate from {0.05, 0.02, 0.01, 0.005} [default: 0.05 alone, to keep runs short]
    #[arg(long = "lrs", alias = "lr", value_name = "X,..", value_delimiter = ',',
          default_values_t = [0.05])]
    lrs: Vec<f64>,
    /// CD mini-batch size
    #[arg(long, value_name = "N", default_value_t = 100)]
    batch_size: usize,
    /// CD early stopping, as the paper's protocol: every --cd-eval-every epochs the train −
    /// validation gap is taken and a CD run ends once it has grown this many nats above its
    /// minimum (off by default: every run takes --epochs)
    #[arg(long, value_name = "X")]
    cd_gap_tol: Option<f64>,
    /// Epochs between the gap checks of --cd-gap-tol
    #[arg(long, value_name = "N", default_value_t = 5)]
    cd_eval_every: usize,
    /// FW: λ (Eqs. 6, 9)
    #[arg(long, value_name = "X", default_value_t = 0.1)]
    lambda: f64,
    /// FW: η of the bias update (Eq. 10)
    #[arg(long, value_name = "X", default_value_t = 0.5)]
    bias_lr: f64,
    /// FW: persistent chains S
    #[arg(long, value_name = "S", default_value_t = 2000)]
    samples: usize,
    /// FW: Gibbs steps per draw
    #[arg(long, value_name = "N", default_value_t = 3)]
    gibbs_steps: usize,
    /// FW: L-BFGS iterations per subproblem
    #[arg(long, value_name = "N", default_value_t = 50)]
    lbfgs_iters: usize,
    /// FW: starts per subproblem (one small random, the others data-row templates)
    #[arg(long, value_name = "N", default_value_t = 1)]
    starts: usize,
    /// FW: most bias steps per iteration
    #[arg(long, value_name = "N", default_value_t = 20)]
    bias_steps: usize,
    /// FW: the gap tolerance (nats) of the size selection
    #[arg(long, value_name = "X", default_value_t = 5.0)]
    gap_tol: f64,
    /// FW: units between test log-likelihood / gap evaluations
    #[arg(long, value_name = "N", default_value_t = 20)]
    eval_every: usize,
    /// AIS chains (the paper: 500)
    #[arg(long, value_name = "N", default_value_t = 100)]
    ais_chains: usize,
    /// AIS steps, linear schedule; 0: the standard 14,500-step schedule (the paper's)
    #[arg(long, value_name = "N", default_value_t = 0)]
    ais_steps: usize,
    /// Skip the classification (Figure 2)
    #[arg(long)]
    no_classify: bool,
    /// Only redraw the PNGs from the JSON results already in -o DIR (no training)
    #[arg(long)]
    replot: bool,
    /// Output directory (CSV, JSON)
    #[arg(short, long, value_name = "DIR", default_value = "fw-repro")]
    output: PathBuf,
    #[command(flatten)]
    common: CommonArgs,
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

fn binary(path: &Path, binarize: Binarize) -> anyhow::Result<Dataset> {
    let d = read_dataset(path, &ReadOptions::default().with_binarize(binarize))
        .with_context(|| format!("reading {}", path.display()))?;
    let n = d.n_vars();
    Ok(d.with_cardinalities(vec![2; n])?)
}

/// Caltech101 Silhouettes split1 (4,100 / 2,264 / 2,307), labels 1..101 → 0..100. Pixel order
/// (column-major) and polarity (0 = object) are kept: the likelihood does not depend on them.
fn caltech(dir: &Path) -> anyhow::Result<Splits> {
    let d = dir.join("caltech101_silhouettes");
    let f = |s: &str| d.join(format!("caltech101_silhouettes_28_split1_{s}"));
    Ok(Splits {
        train: binary(&f("train.amat.gz"), Binarize::None)?,
        valid: binary(&f("valid.amat.gz"), Binarize::None)?,
        test: binary(&f("test.amat.gz"), Binarize::None)?,
        train_labels: labels(&f("train_labels.txt.gz"), 1)?,
        test_labels: labels(&f("test_labels.txt.gz"), 1)?,
    })
}

/// MNIST binarized at 127; 10,000 training images drawn at random (seeded) for validation.
fn mnist(dir: &Path, seed: u64) -> anyhow::Result<Splits> {
    let d = dir.join("mnist");
    let bin = Binarize::Threshold(127.0);
    let all = binary(&d.join("train-images-idx3-ubyte.gz"), bin)?;
    let all_labels = labels(&d.join("train-labels-idx1-ubyte.gz"), 0)?;
    let mut order: Vec<usize> = (0..all.n_samples()).collect();
    order.shuffle(&mut derive_rng(seed, 0));
    let (valid_rows, train_rows) = order.split_at(10_000.min(order.len() / 2));
    let mut train_rows = train_rows.to_vec();
    train_rows.sort_unstable();
    Ok(Splits {
        train: all.select(&train_rows)?,
        valid: all.select(valid_rows)?,
        test: binary(&d.join("t10k-images-idx3-ubyte.gz"), bin)?,
        train_labels: train_rows.iter().map(|&r| all_labels[r]).collect(),
        test_labels: labels(&d.join("t10k-labels-idx1-ubyte.gz"), 0)?,
    })
}

/// Keeps a copy of the FW model at the listed sizes.
struct Snapshots {
    sizes: Vec<usize>,
    models: Rc<RefCell<BTreeMap<usize, (Rbm, f64)>>>,
}

impl FwObserver for Snapshots {
    fn observe(&mut self, p: &mut FwProgress<'_>) -> boltzkit::Result<()> {
        let u = p.model.n_units();
        if self.sizes.contains(&u) && p.model.is_standard() {
            self.models
                .borrow_mut()
                .entry(u)
                .or_insert((p.model.to_rbm()?, p.wall_s));
        }
        Ok(())
    }
}

/// One point of Figure 1 / 2.
#[derive(Debug, Clone, serde::Serialize)]
struct Point {
    method: &'static str,
    units: usize,
    run: usize,
    /// The CD learning rate kept on validation (0 for FW itself).
    lr: f64,
    test_ll: f64,
    test_ll_se: f64,
    valid_ll: f64,
    train_s: f64,
    /// CD epochs run (fewer than --epochs after an early stop; 0 for FW itself).
    epochs: usize,
    test_error: Option<f64>,
}

/// Keeps `(p, rbm)` in `best` when it is the first or has the higher validation log-likelihood.
fn keep_best_on_validation(best: &mut Option<(Point, Rbm)>, p: Point, rbm: Rbm) {
    if best.as_ref().is_none_or(|(b, _)| p.valid_ll > b.valid_ll) {
        *best = Some((p, rbm));
    }
}

impl FwReproArgs {
    /// Runs the reproduction.
    pub fn run(self) -> anyhow::Result<()> {
        let common = CommonArgs {
            seed: Some(self.common.seed.unwrap_or(FW_REPRO_SEED)),
            ..self.common.clone()
        };
        let seed = common.init()?;
        anyhow::ensure!(self.restarts >= 1, "--restarts must be at least 1");
        if let Some(&lr) = self.lrs.iter().find(|&&lr| !(lr.is_finite() && lr > 0.0)) {
            return Err(crate::exit::UsageError::new(format!(
                "--lrs: {lr} is not a positive learning rate"
            ))
            .into());
        }
        if let Some(&s) = self.sizes.iter().find(|&&s| s == 0 || s > self.max_units) {
            return Err(crate::exit::UsageError::new(format!(
                "--sizes: {s} is not in 1..=--max-units ({})",
                self.max_units
            ))
            .into());
        }
        std::fs::create_dir_all(&self.output)
            .with_context(|| format!("creating {}", self.output.display()))?;
        let mut summary = Summary::new("repro frank-wolfe", Some(seed));
        if self.replot {
            for name in &self.datasets {
                let path = self.output.join(format!("frank-wolfe-{name}.json"));
                let text = std::fs::read_to_string(&path).with_context(|| {
                    format!("reading {} (run without --replot first)", path.display())
                })?;
                let result: serde_json::Value = serde_json::from_str(&text).with_context(|| {
                    format!("{}: not the JSON of repro frank-wolfe", path.display())
                })?;
                self.draw_figures(name, &result)?;
                summary.set(name.clone(), format!("fig1-{name}.png"));
            }
            summary.set("output", self.output.display().to_string());
            return summary.emit(&common);
        }
        for (di, name) in self.datasets.iter().enumerate() {
            let dseed = derive_seed(seed, di as u64);
            let splits = match name.as_str() {
                "caltech" => caltech(&self.data_dir)?,
                _ => mnist(&self.data_dir, dseed)?,
            };
            let epochs = self
                .epochs
                .unwrap_or(if name == "caltech" { 400 } else { 200 });
            let result = self.run_dataset(name, &splits, epochs, dseed, &common)?;
            summary.set(name.clone(), result);
        }
        summary.set("output", self.output.display().to_string());
        summary.emit(&common)
    }

    fn ais(&self, data: &Dataset, seed: u64) -> anyhow::Result<AisTest> {
        Ok(AisTest {
            data: data.clone(),
            chains: self.ais_chains,
            schedule: ais_schedule(self.ais_steps)?,
            seed,
        })
    }

    fn classify(&self, rbm: &Rbm, s: &Splits) -> anyhow::Result<Option<f64>> {
        if self.no_classify {
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

    /// Figures 1 and 2 as PNG (`fig1-{name}.png`, `fig2-{name}.png`) from the JSON result of
    /// [`FwReproArgs::run_dataset`].
    fn draw_figures(&self, name: &str, result: &serde_json::Value) -> anyhow::Result<()> {
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
        let k = result["k"].as_u64().unwrap_or(self.k as u64);
        let restarts = result["restarts"].as_u64().unwrap_or(self.restarts as u64);
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
        line_chart(&self.output.join(format!("fig1-{name}.png")), &fig1)?;
        let fig2 = Chart::new(format!("{name}: test error, logistic regression on E[h|v]"))
            .x_label("hidden units")
            .y_label("test error (%)")
            .series(Series::new("FW", curve("fw", "test_error", 100.0)))
            .series(Series::new(rand, curve("cd_rand", "test_error", 100.0)))
            .series(Series::new(fwi, curve("cd_fw", "test_error", 100.0)));
        if points.iter().any(|p| p["test_error"].is_number()) {
            line_chart(&self.output.join(format!("fig2-{name}.png")), &fig2)?;
        }
        Ok(())
    }

    fn run_dataset(
        &self,
        name: &str,
        s: &Splits,
        epochs: usize,
        seed: u64,
        common: &CommonArgs,
    ) -> anyhow::Result<serde_json::Value> {
        let say = |msg: String| {
            if !common.quiet {
                eprintln!("{msg}");
            }
        };
        say(format!(
            "{name}: train {} / valid {} / test {} × {}",
            s.train.n_samples(),
            s.valid.n_samples(),
            s.test.n_samples(),
            s.train.n_vars()
        ));
        // 1. Frank-Wolfe up to T with the AIS test log-likelihood every eval_every units
        let params = FwParams::new()
            .max_units(self.max_units)
            .lambda(self.lambda)
            .learning_rate(self.bias_lr)
            .samples(self.samples)
            .gibbs_steps(self.gibbs_steps)
            .lbfgs_iterations(self.lbfgs_iters)
            .subproblem_starts(self.starts)
            .bias_steps(self.bias_steps)
            .eval_every(self.eval_every)
            .gap_tol(self.gap_tol)
            .seed(derive_seed(seed, 1));
        let snaps = Rc::new(RefCell::new(BTreeMap::new()));
        let fw = FrankWolfe::new(&s.train, params)?
            .validation(&s.valid)?
            .add_observer(Snapshots {
                sizes: self.sizes.clone(),
                models: snaps.clone(),
            });
        let log = self.output.join(format!("fw-{name}.jsonl"));
        let ais_test = self.ais(&s.test, derive_seed(seed, 2))?;
        let fit = fw_run::run(fw, common.quiet, Some(ais_test.clone()), Some(&log))?;
        let rec = &fit.record;
        let mut fw_csv =
            String::from("units,iteration,wall_s,gap,test_ll,test_ll_se,train_nfe,valid_nfe\n");
        for e in &rec.evaluations {
            let m = |k: &str| e.metrics.get(k).map_or(String::new(), |v| v.to_string());
            writeln!(
                fw_csv,
                "{},{},{:.3},{},{},{},{},{}",
                e.units,
                e.iteration,
                e.wall_s,
                e.gap.map_or(String::new(), |g| g.to_string()),
                m("test_ll"),
                m("test_ll_se"),
                e.train_nfe,
                e.valid_nfe.map_or(String::new(), |g| g.to_string())
            )?;
        }
        write_atomic(
            &self.output.join(format!("fw-{name}.csv")),
            fw_csv.as_bytes(),
        )?;
        say(format!(
            "{name}: FW reached {} units in {:.1} s; selected size {:?}",
            fit.model.n_units(),
            rec.wall_s,
            rec.selected_units
        ));

        // 2. at each size: FW itself, CD from random starts (best on validation), CD from FW
        let ais_valid = self.ais(&s.valid, derive_seed(seed, 2))?;
        let mut points: Vec<Point> = Vec::new();
        let snaps = snaps.borrow();
        for &h in &self.sizes {
            let Some((fw_rbm, fw_s)) = snaps.get(&h) else {
                say(format!("{name}: FW did not reach {h} units; skipped"));
                continue;
            };
            let eval = |rbm: &Rbm,
                        run: usize,
                        method: &'static str,
                        (train_s, epochs, lr): (f64, usize, f64)|
             -> anyhow::Result<Point> {
                // one AIS ln Z gives both the validation and the test log-likelihood
                let (test_ll, se, log_z) =
                    ais_test.evaluate(rbm, derive_seed(h as u64, run as u64))?;
                let fwm = boltzkit::rbm::frank_wolfe::FwModel::from_rbm(rbm);
                let valid_ll =
                    boltzkit::rbm::frank_wolfe::mean_log_unnormalized(&fwm, &ais_valid.data)?
                        - log_z;
                Ok(Point {
                    method,
                    units: h,
                    run,
                    lr,
                    test_ll,
                    test_ll_se: se,
                    valid_ll,
                    train_s,
                    epochs,
                    test_error: None,
                })
            };
            let mut p = eval(fw_rbm, 0, "fw", (*fw_s, 0, 0.0))?;
            p.test_error = self.classify(fw_rbm, s)?;
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
                for &lr in &self.lrs {
                    let t = Instant::now();
                    let params = TrainParams::new()
                        .epochs(epochs)
                        .batch_size(self.batch_size)
                        .algorithm(Algorithm::Cd { k: self.k })
                        .learning_rate(lr as f32)
                        .seed(run_seed);
                    let mut trainer = Trainer::new(start.clone(), &s.train, params)?;
                    if let Some(tol) = self.cd_gap_tol {
                        let stop = GapEarlyStop::new(s.train.clone(), s.valid.clone(), tol)?;
                        trainer = trainer.add_observer(stop, self.cd_eval_every);
                    }
                    let out = trainer.run()?;
                    let secs = (t.elapsed().as_secs_f64(), out.record.epochs, lr);
                    let p = eval(&out.rbm, run, method, secs)?;
                    if self.lrs.len() > 1 {
                        let mut trial = p.clone();
                        trial.method = if method == "cd_fw" {
                            "cd_fw_lr"
                        } else {
                            "cd_rand_lr"
                        };
                        trials.push(trial);
                    }
                    keep_best_on_validation(&mut best, p, out.rbm);
                }
                best.context("--lrs is empty")
            };
            let mut best: Option<(Point, Rbm)> = None;
            for r in 0..self.restarts {
                let spin = crate::progress::spinner(
                    &format!(
                        "{name}: CD-{} random init {} of {} at {h} units",
                        self.k,
                        r + 1,
                        self.restarts
                    ),
                    common.quiet,
                );
                let rs = derive_seed(derive_seed(seed, 3), (h * 100 + r) as u64);
                let init = Rbm::init_from_data(&s.train, h, 0.01, &mut derive_rng(rs, 0))?;
                let (p, rbm) = cd(&init, rs, r + 1, "cd_rand", &mut points)?;
                spin.finish_and_clear();
                let mut all = p.clone();
                all.method = "cd_rand_run";
                points.push(all);
                keep_best_on_validation(&mut best, p, rbm);
            }
            if let Some((mut p, rbm)) = best {
                p.test_error = self.classify(&rbm, s)?;
                points.push(p);
            }
            let spin = crate::progress::spinner(
                &format!("{name}: CD-{} from FW at {h} units", self.k),
                common.quiet,
            );
            let (mut p, rbm) = cd(
                fw_rbm,
                derive_seed(derive_seed(seed, 4), h as u64),
                0,
                "cd_fw",
                &mut points,
            )?;
            spin.finish_and_clear();
            p.test_error = self.classify(&rbm, s)?;
            say(format!(
                "{name} h={h}: test LL  FW {:.2}  CD(best of {}) {:.2}  CD(FW init) {:.2}",
                points
                    .iter()
                    .find(|q| q.method == "fw" && q.units == h)
                    .map_or(f64::NAN, |q| q.test_ll),
                self.restarts,
                points
                    .iter()
                    .find(|q| q.method == "cd_rand" && q.units == h)
                    .map_or(f64::NAN, |q| q.test_ll),
                p.test_ll
            ));
            points.push(p);
        }
        let mut csv = String::from(
            "method,units,run,lr,test_ll,test_ll_se,valid_ll,train_s,epochs,test_error\n",
        );
        for p in &points {
            writeln!(
                csv,
                "{},{},{},{},{},{},{},{:.3},{},{}",
                p.method,
                p.units,
                p.run,
                p.lr,
                p.test_ll,
                p.test_ll_se,
                p.valid_ll,
                p.train_s,
                p.epochs,
                p.test_error.map_or(String::new(), |e| e.to_string())
            )?;
        }
        write_atomic(
            &self.output.join(format!("fig1-fig2-{name}.csv")),
            csv.as_bytes(),
        )?;
        let result = json!({
            "fw_units": fit.model.n_units(),
            "fw_wall_s": rec.wall_s,
            "selected_units": rec.selected_units,
            "evaluations": rec.evaluations,
            "points": points,
            "epochs": epochs,
            "cd_gap_tol": self.cd_gap_tol,
            "cd_eval_every": self.cd_eval_every,
            "k": self.k,
            "lrs": self.lrs,
            "batch_size": self.batch_size,
            "restarts": self.restarts,
            "fw": {
                "lambda": self.lambda, "bias_lr": self.bias_lr, "samples": self.samples,
                "gibbs_steps": self.gibbs_steps, "lbfgs_iters": self.lbfgs_iters,
                "starts": self.starts, "bias_steps": self.bias_steps,
            },
            "ais": {"chains": self.ais_chains, "steps": if self.ais_steps == 0 { 14_500 } else { self.ais_steps }},
            "mean_iteration_s": {
                "sampling": rec.iterations.iter().map(|r| r.sampling_s).sum::<f64>() / rec.iterations.len().max(1) as f64,
                "subproblem": rec.iterations.iter().map(|r| r.subproblem_s).sum::<f64>() / rec.iterations.len().max(1) as f64,
                "bias": rec.iterations.iter().map(|r| r.bias_s).sum::<f64>() / rec.iterations.len().max(1) as f64,
            },
        });
        write_atomic(
            &self.output.join(format!("frank-wolfe-{name}.json")),
            serde_json::to_string_pretty(&result)?.as_bytes(),
        )?;
        self.draw_figures(name, &result)?;
        Ok(result)
    }
}
