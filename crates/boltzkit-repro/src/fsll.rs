//! Table 1 of the FSLL paper (Takabatake & Akaho, Sec. 3.4, 3.6): the six artificial
//! datasets (Ising5x4S/L, BN20-37S/L, BN20-54S/L) generated from fixed, recorded seeds and
//! learned by FL, one sample seed per trial, medians next to the paper's values; optionally the
//! Boltzmann-machine baselines (BM-DI, BM-PCD) on the same samples and a scale run on an
//! N-variable Bayesian network.
//!
//! Plan → run → result: [`FsllPlan`] → [`run`] → [`FsllReport`]; [`markdown`] and
//! [`markdown_bm`] write the tables.

use crate::Progress;
use anyhow::Context;
use boltzkit::data::synth::{BayesNet, Distribution, IsingGrid};
use boltzkit::data::Dataset;
use boltzkit::estimate::kl_divergence;
use boltzkit::estimate::stats::median;
use boltzkit::fit::{Control, Learner, Run};
use boltzkit::fsll::{FsllFit, FsllModel, FsllParams, Progress as FsllProgress, TransformPath};
use boltzkit::fvbm::{exact, mle, n_params, pcd};
use boltzkit::rng::{derive_seed, rng_from_seed};
use serde::Serialize;
use std::time::Instant;

/// The seed `repro fsll` uses unless told otherwise.
pub const SEED: u64 = 20_211;

/// The figures of Table 1 for one fit.
#[derive(Debug, Clone, Serialize)]
pub struct FsllOutcome {
    /// `KL(p_d‖p_θ)` in nats.
    pub kl_data: f64,
    /// `KL(p*‖p_θ)` in nats, when the truth is known.
    pub kl_truth: Option<f64>,
    /// Basis functions in use.
    pub n_basis: usize,
    /// Final cost (Eq. 7).
    pub cost: f64,
    /// Iterations of Algorithm 1.
    pub iterations: usize,
    /// Wall seconds of learning alone.
    pub learn_s: f64,
}

/// KL(p*‖p_θ) against an explicit true distribution over all states.
pub fn kl_to_truth(model: &FsllModel, truth: &[f64]) -> anyhow::Result<f64> {
    let n = model.layout().n_states();
    if truth.len() != n {
        anyhow::bail!(
            "the true distribution has {} states but the model has {n} (cardinalities {:?})",
            truth.len(),
            model.cardinalities()
        );
    }
    Ok(kl_divergence(truth, &model.log_probs())?)
}

/// The Table-1 figures of a finished fit.
pub fn outcome(fit: &FsllFit, truth: Option<&[f64]>) -> anyhow::Result<FsllOutcome> {
    Ok(FsllOutcome {
        kl_data: fit.record.kl_data,
        kl_truth: truth.map(|t| kl_to_truth(&fit.model, t)).transpose()?,
        n_basis: fit.model.n_basis(),
        cost: fit.record.final_cost,
        iterations: fit.record.iterations,
        learn_s: fit.record.seconds,
    })
}

/// Fits `data`, reporting iteration, cost and basis size every 16 iterations as the message of
/// the current stage.
fn fit_reported(
    data: &Dataset,
    params: &FsllParams,
    progress: &dyn Progress,
) -> anyhow::Result<FsllFit> {
    let run = Run::new().observe_every(
        |p: &mut FsllProgress| {
            progress.message(&format!(
                "learning FSLL: iteration {}, cost {:.5}, {} basis functions",
                p.iteration, p.cost, p.n_basis
            ));
            Ok(Control::Continue)
        },
        16,
    );
    params
        .check()?
        .fit_with(data, run)
        .context("learning the FSLL model")
}

/// One of the six datasets of Sec. 3.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Table1Data {
    /// 5 × 4 Ising grid, J = 1/2.
    Ising5x4,
    /// 20-node Bayesian network, 2 parents each (37 edges).
    Bn20_37,
    /// 20-node Bayesian network, 3 parents each (54 edges).
    Bn20_54,
}

/// A dataset of Table 1 with its size: S = 1,000 samples, L = 100,000.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Table1Row {
    /// The data-generating model.
    pub data: Table1Data,
    /// True for L (100,000 samples), false for S (1,000).
    pub large: bool,
}

/// The paper's FL row of Table 1: KL(p_d‖p_θ), KL(p*‖p_θ), #basis, seconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PaperFigures {
    /// KL(p_d‖p_θ) in nats.
    pub kl_data: f64,
    /// KL(p*‖p_θ) in nats.
    pub kl_truth: f64,
    /// Basis functions.
    pub n_basis: usize,
    /// CPU seconds (Java 8, i7-6700K at 4 GHz, median of three).
    pub seconds: f64,
}

impl Table1Row {
    /// The six rows in the paper's order.
    pub const ALL: [Table1Row; 6] = [
        Table1Row {
            data: Table1Data::Ising5x4,
            large: false,
        },
        Table1Row {
            data: Table1Data::Ising5x4,
            large: true,
        },
        Table1Row {
            data: Table1Data::Bn20_37,
            large: false,
        },
        Table1Row {
            data: Table1Data::Bn20_37,
            large: true,
        },
        Table1Row {
            data: Table1Data::Bn20_54,
            large: false,
        },
        Table1Row {
            data: Table1Data::Bn20_54,
            large: true,
        },
    ];

    /// The paper's name, e.g. `Ising5x4S`.
    pub fn name(&self) -> String {
        let base = match self.data {
            Table1Data::Ising5x4 => "Ising5x4",
            Table1Data::Bn20_37 => "BN20-37",
            Table1Data::Bn20_54 => "BN20-54",
        };
        format!("{base}{}", if self.large { "L" } else { "S" })
    }

    /// Number of samples.
    pub fn n_samples(&self) -> usize {
        if self.large {
            100_000
        } else {
            1_000
        }
    }

    /// The FL figures the paper reports (Table 1).
    pub fn paper(&self) -> PaperFigures {
        let (kl_data, kl_truth, n_basis, seconds) = match (self.data, self.large) {
            (Table1Data::Ising5x4, false) => (2.501, 0.012, 31, 5.0),
            (Table1Data::Ising5x4, true) => (0.476, 0.004, 37, 9.0),
            (Table1Data::Bn20_37, false) => (4.355, 0.317, 39, 5.0),
            (Table1Data::Bn20_37, true) => (0.697, 0.026, 105, 12.0),
            (Table1Data::Bn20_54, false) => (3.288, 0.697, 41, 5.0),
            (Table1Data::Bn20_54, true) => (0.430, 0.057, 192, 23.0),
        };
        PaperFigures {
            kl_data,
            kl_truth,
            n_basis,
            seconds,
        }
    }

    /// The true distribution and a sample of it. The Bayesian network is drawn once per
    /// generator from `(seed, 1000 + parents)`, so S and L share it as in the paper; the
    /// sample of trial `t` comes from `(seed, 100·row + t)`.
    pub fn generate(&self, seed: u64, trial: u64) -> anyhow::Result<(Distribution, Dataset)> {
        let row = Table1Row::ALL
            .iter()
            .position(|r| r.data == self.data && r.large == self.large)
            .expect("a row of the table") as u64;
        let mut rng = rng_from_seed(derive_seed(seed, 100 * row + trial));
        let n = self.n_samples();
        match self.data {
            Table1Data::Ising5x4 => {
                let truth = IsingGrid::ising5x4().distribution()?;
                let data = truth.sample(n, &mut rng)?;
                Ok((truth, data))
            }
            Table1Data::Bn20_37 | Table1Data::Bn20_54 => {
                let k = if self.data == Table1Data::Bn20_37 {
                    2
                } else {
                    3
                };
                let mut net_rng = rng_from_seed(derive_seed(seed, 1000 + k as u64));
                let net = BayesNet::random(20, k, &mut net_rng)?;
                let data = net.sample(n, &mut rng)?;
                Ok((net.distribution()?, data))
            }
        }
    }
}

/// One learned dataset of the reproduction.
#[derive(Debug, Clone, Serialize)]
pub struct Table1Result {
    /// The paper's dataset name.
    pub name: String,
    /// Samples.
    pub samples: usize,
    /// Each trial's figures.
    pub trials: Vec<FsllOutcome>,
    /// Medians over trials.
    pub median: FsllOutcome,
    /// The paper's figures.
    pub paper: PaperFigures,
}

/// Learns `row` for `trials` sample seeds; one step of `progress` per trial, a note with its
/// figures.
pub fn run_row(
    row: Table1Row,
    seed: u64,
    trials: usize,
    params: &FsllParams,
    progress: &dyn Progress,
) -> anyhow::Result<Table1Result> {
    let mut outs = Vec::with_capacity(trials);
    for t in 0..trials {
        let (truth, data) = row.generate(seed, t as u64)?;
        progress.message(&format!("{} trial {t}", row.name()));
        let fit = params
            .check()?
            .fit(&data)
            .context("learning the FSLL model")
            .with_context(|| format!("learning {} (trial {t})", row.name()))?;
        let out = outcome(&fit, Some(truth.probs()))?;
        progress.advance(1);
        {
            progress.note(&format!(
                "{} trial {t}: KL(p_d||p) {:.4}, KL(p*||p) {:.4}, {} basis, {:.3} s",
                row.name(),
                out.kl_data,
                out.kl_truth.unwrap_or(f64::NAN),
                out.n_basis,
                out.learn_s
            ));
        }
        outs.push(out);
    }
    Ok(Table1Result {
        name: row.name(),
        samples: row.n_samples(),
        median: median_outcome(&outs),
        trials: outs,
        paper: row.paper(),
    })
}

/// The median over trials (NaN for none).
fn median_of<T>(outs: &[T], f: impl Fn(&T) -> f64) -> f64 {
    median(&outs.iter().map(f).collect::<Vec<_>>()).unwrap_or(f64::NAN)
}

fn median_outcome(outs: &[FsllOutcome]) -> FsllOutcome {
    let med = |f: &dyn Fn(&FsllOutcome) -> f64| median_of(outs, f);
    FsllOutcome {
        kl_data: med(&|o| o.kl_data),
        kl_truth: outs[0]
            .kl_truth
            .map(|_| med(&|o| o.kl_truth.unwrap_or(f64::NAN))),
        n_basis: med(&|o| o.n_basis as f64).round() as usize,
        cost: med(&|o| o.cost),
        iterations: med(&|o| o.iterations as f64).round() as usize,
        learn_s: med(&|o| o.learn_s),
    }
}

/// Table 1's FL columns as Markdown, ours (medians) next to the paper's.
pub fn markdown(results: &[Table1Result]) -> String {
    let mut s = String::from(
        "| Data | KL(p_d‖p_θ) | KL(p*‖p_θ) | #Basis | Time (s) | paper KL(p_d‖p_θ) | paper KL(p*‖p_θ) | paper #Basis | paper time (s) |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for r in results {
        s.push_str(&format!(
            "| {} | {:.3} | {:.3} | {} | {:.3} | {:.3} | {:.3} | {} | {} |\n",
            r.name,
            r.median.kl_data,
            r.median.kl_truth.unwrap_or(f64::NAN),
            r.median.n_basis,
            r.median.learn_s,
            r.paper.kl_data,
            r.paper.kl_truth,
            r.paper.n_basis,
            r.paper.seconds
        ));
    }
    s
}

/// A Boltzmann-machine baseline of Table 1 (Secs. 3.2-3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BmKind {
    /// Exact maximum likelihood on exact moments (no regularization).
    Di,
    /// Persistent contrastive divergence: learning rate 0.01, 100 chains, 10,000 updates.
    Pcd,
}

impl BmKind {
    /// The paper's name.
    pub fn name(self) -> &'static str {
        match self {
            BmKind::Di => "BM-DI",
            BmKind::Pcd => "BM-PCD",
        }
    }
}

impl Table1Row {
    /// The figures Table 1 reports for a Boltzmann-machine baseline (210 parameters each).
    pub fn paper_bm(&self, kind: BmKind) -> PaperFigures {
        let (kl_data, kl_truth, seconds) = match (kind, self.data, self.large) {
            (BmKind::Di, Table1Data::Ising5x4, false) => (2.424, 0.087, 13.0),
            (BmKind::Di, Table1Data::Ising5x4, true) => (0.473, 0.002, 12.0),
            (BmKind::Di, Table1Data::Bn20_37, false) => (4.746, 0.863, 17.0),
            (BmKind::Di, Table1Data::Bn20_37, true) => (1.422, 0.750, 19.0),
            (BmKind::Di, Table1Data::Bn20_54, false) => (3.743, 1.301, 23.0),
            (BmKind::Di, Table1Data::Bn20_54, true) => (1.545, 1.166, 21.0),
            (BmKind::Pcd, Table1Data::Ising5x4, false) => (2.504, 0.094, 3.0),
            (BmKind::Pcd, Table1Data::Ising5x4, true) => (0.528, 0.053, 3.0),
            (BmKind::Pcd, Table1Data::Bn20_37, false) => (4.803, 0.903, 3.0),
            (BmKind::Pcd, Table1Data::Bn20_37, true) => (1.477, 0.806, 3.0),
            (BmKind::Pcd, Table1Data::Bn20_54, false) => (3.826, 1.338, 3.0),
            (BmKind::Pcd, Table1Data::Bn20_54, true) => (1.620, 1.242, 3.0),
        };
        PaperFigures {
            kl_data,
            kl_truth,
            n_basis: 210,
            seconds,
        }
    }
}

/// One Boltzmann-machine fit of a Table-1 dataset.
#[derive(Debug, Clone, Serialize)]
pub struct BmOutcome {
    /// KL(p_d‖p_θ) in nats.
    pub kl_data: f64,
    /// KL(p*‖p_θ) in nats.
    pub kl_truth: f64,
    /// Parameters of the model (d(d+1)/2).
    pub n_params: usize,
    /// Iterations (L-BFGS iterations for BM-DI, updates for BM-PCD).
    pub iterations: usize,
    /// Seconds of the fit.
    pub learn_s: f64,
    /// Why the fit stopped (the L-BFGS stop reason for BM-DI, `updates` for BM-PCD).
    pub stop: String,
}

/// A Boltzmann-machine baseline on one dataset: every trial, medians, the paper's figures.
#[derive(Debug, Clone, Serialize)]
pub struct BmResult {
    /// The paper's dataset name.
    pub name: String,
    /// `BM-DI` or `BM-PCD`.
    pub model: &'static str,
    /// Samples.
    pub samples: usize,
    /// Each trial's figures.
    pub trials: Vec<BmOutcome>,
    /// Medians over trials.
    pub median: BmOutcome,
    /// The paper's figures.
    pub paper: PaperFigures,
}

/// The empirical distribution of binary `data` over all `2^d` states (variable 0 least
/// significant).
fn empirical(data: &Dataset) -> Vec<f64> {
    let d = data.n_vars();
    let mut p = vec![0.0; 1usize << d];
    let w = 1.0 / data.n_samples() as f64;
    for row in data.values().outer_iter() {
        let idx = row
            .iter()
            .enumerate()
            .fold(0usize, |acc, (j, &b)| acc | (usize::from(b) << j));
        p[idx] += w;
    }
    p
}

/// Fits the baseline `kind` to `row` for `trials` sample seeds (the same samples as FL's).
pub fn run_bm_row(
    row: Table1Row,
    kind: BmKind,
    seed: u64,
    trials: usize,
    progress: &dyn Progress,
) -> anyhow::Result<BmResult> {
    let mut outs = Vec::with_capacity(trials);
    for t in 0..trials {
        let (truth, data) = row.generate(seed, t as u64)?;
        let (model, iterations, learn_s, stop) = match kind {
            BmKind::Di => {
                let fit = mle::MleParams::default()
                    .check()
                    .and_then(|l| l.fit(&data))
                    .with_context(|| format!("BM-DI on {} (trial {t})", row.name()))?;
                (
                    fit.model,
                    fit.record.iterations,
                    fit.record.seconds,
                    serde_json::to_value(fit.record.stop)?
                        .as_str()
                        .unwrap_or("unknown")
                        .to_string(),
                )
            }
            BmKind::Pcd => {
                let pcd_seed = derive_seed(seed, 7000 + 100 * row_index(row) + t as u64);
                let params = pcd::PcdParams {
                    seed: pcd_seed,
                    ..Default::default()
                };
                let fit = params
                    .check()
                    .and_then(|l| l.fit(&data))
                    .with_context(|| format!("BM-PCD on {} (trial {t})", row.name()))?;
                (
                    fit.model,
                    fit.record.updates,
                    fit.record.seconds,
                    "updates".to_string(),
                )
            }
        };
        let out = BmOutcome {
            kl_data: exact::kl_divergence(&empirical(&data), &model)?,
            kl_truth: exact::kl_divergence(truth.probs(), &model)?,
            n_params: n_params(model.d()),
            iterations,
            learn_s,
            stop,
        };
        progress.advance(1);
        {
            progress.note(&format!(
                "{} {} trial {t}: KL(p_d||p) {:.4}, KL(p*||p) {:.4}, {} iterations ({}), {:.3} s",
                row.name(),
                kind.name(),
                out.kl_data,
                out.kl_truth,
                out.iterations,
                out.stop,
                out.learn_s
            ));
        }
        outs.push(out);
    }
    let med = |f: &dyn Fn(&BmOutcome) -> f64| median_of(&outs, f);
    let median_out = BmOutcome {
        kl_data: med(&|o| o.kl_data),
        kl_truth: med(&|o| o.kl_truth),
        n_params: outs[0].n_params,
        iterations: med(&|o| o.iterations as f64).round() as usize,
        learn_s: med(&|o| o.learn_s),
        stop: outs[0].stop.clone(),
    };
    Ok(BmResult {
        name: row.name(),
        model: kind.name(),
        samples: row.n_samples(),
        median: median_out,
        trials: outs,
        paper: row.paper_bm(kind),
    })
}

fn row_index(row: Table1Row) -> u64 {
    Table1Row::ALL
        .iter()
        .position(|r| r.data == row.data && r.large == row.large)
        .expect("a row of the table") as u64
}

/// The Boltzmann-machine rows of Table 1 as Markdown, ours (medians) next to the paper's.
pub fn markdown_bm(results: &[BmResult]) -> String {
    let mut s = String::from(
        "| Data | Model | KL(p_d‖p_θ) | KL(p*‖p_θ) | #Params | Time (s) | paper KL(p_d‖p_θ) | paper KL(p*‖p_θ) | paper #Basis | paper time (s) |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in results {
        s.push_str(&format!(
            "| {} | {} | {:.3} | {:.3} | {} | {:.3} | {:.3} | {:.3} | {} | {} |\n",
            r.name,
            r.model,
            r.median.kl_data,
            r.median.kl_truth,
            r.median.n_params,
            r.median.learn_s,
            r.paper.kl_data,
            r.paper.kl_truth,
            r.paper.n_basis,
            r.paper.seconds
        ));
    }
    s
}

/// What `repro fsll` runs: the rows of Table 1 (by name), the trials per row, the learner's
/// update path, the Boltzmann-machine baselines and the scale run.
#[derive(Debug, Clone, PartialEq)]
pub struct FsllPlan {
    /// Seed of the data and of BM-PCD's chains [default: [`SEED`]].
    pub seed: u64,
    /// Trials (sample seeds) per row; the tables show medians [default: 5].
    pub trials: usize,
    /// The learner's update path [default: auto, XOR for binary data].
    pub path: TransformPath,
    /// Rows by name (`Ising5x4S`, `BN20-37L`, ...; case-insensitive), `all` or `none`
    /// [default: all].
    pub only: Vec<String>,
    /// Boltzmann-machine baselines fitted to the same samples [default: none].
    pub bm: Vec<BmKind>,
    /// Also learn an N-variable random Bayesian network (3 parents, 100,000 samples)
    /// [default: none].
    pub scale_vars: Option<usize>,
}

impl Default for FsllPlan {
    fn default() -> Self {
        FsllPlan {
            seed: SEED,
            trials: 5,
            path: TransformPath::Auto,
            only: vec!["all".into()],
            bm: Vec::new(),
            scale_vars: None,
        }
    }
}

impl FsllPlan {
    /// Checks the settings: at least one trial, every name in `only` known.
    pub fn check(&self) -> boltzkit::Result<()> {
        if self.trials == 0 {
            return Err(boltzkit::Error::param("--trials", "must be at least 1"));
        }
        for o in &self.only {
            let known = ["all", "none"].contains(&o.to_ascii_lowercase().as_str())
                || Table1Row::ALL
                    .iter()
                    .any(|r| r.name().eq_ignore_ascii_case(o));
            if !known {
                return Err(boltzkit::Error::param(
                    "--only",
                    format!(
                        "unknown dataset `{o}`; expected names like Ising5x4S, BN20-37L, or all/none"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The rows of Table 1 the plan names, in the paper's order.
    pub fn rows(&self) -> Vec<Table1Row> {
        Table1Row::ALL
            .into_iter()
            .filter(|r| {
                self.only
                    .iter()
                    .any(|o| o.eq_ignore_ascii_case("all") || o.eq_ignore_ascii_case(&r.name()))
            })
            .collect()
    }

    /// The learner's settings.
    pub fn params(&self) -> FsllParams {
        FsllParams {
            path: self.path,
            ..FsllParams::default()
        }
    }
}

/// The scale run: an N-variable random Bayesian network learned from 100,000 samples.
#[derive(Debug, Clone, Serialize)]
pub struct ScaleRun {
    /// Variables.
    pub vars: usize,
    /// States (2^vars).
    pub states: usize,
    /// Samples.
    pub samples: usize,
    /// Edges of the network.
    pub edges: usize,
    /// Seconds of learning.
    pub learn_s: f64,
    /// Iterations of Algorithm 1.
    pub iterations: usize,
    /// Basis functions learned.
    pub n_basis: usize,
    /// KL(p_d‖p_θ) in nats.
    pub kl_data: f64,
    /// KL(p*‖p_θ) in nats (for at most 28 variables).
    pub kl_truth: Option<f64>,
    /// Peak resident memory after the fit, GiB (Linux `VmHWM`).
    pub peak_rss_gib_after_fit: Option<f64>,
    /// Peak resident memory at the end, GiB.
    pub peak_rss_gib_total: Option<f64>,
}

/// Everything `repro fsll` found.
#[derive(Debug, Clone, Serialize)]
pub struct FsllReport {
    /// Trials per row.
    pub trials: usize,
    /// The learner's update path.
    pub path: TransformPath,
    /// The FL rows (absent when none ran).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<Table1Result>,
    /// [`markdown`] of the FL rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
    /// The Boltzmann-machine rows (absent when none ran).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bm_results: Vec<BmResult>,
    /// [`markdown_bm`] of the Boltzmann-machine rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm_markdown: Option<String>,
    /// The scale run, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<ScaleRun>,
}

/// Runs the plan: the baselines of every row first, then FL on every row, then the scale run.
pub fn run(plan: &FsllPlan, progress: &dyn Progress) -> anyhow::Result<FsllReport> {
    plan.check()?;
    let params = plan.params();
    let rows = plan.rows();
    let fits = rows.len() * plan.trials * (1 + plan.bm.len());
    progress.stage("fits", Some(fits as u64));
    let mut bm_results = Vec::new();
    for &row in &rows {
        for &kind in &plan.bm {
            bm_results.push(run_bm_row(row, kind, plan.seed, plan.trials, progress)?);
        }
    }
    let mut results = Vec::new();
    for &row in &rows {
        results.push(run_row(row, plan.seed, plan.trials, &params, progress)?);
    }
    progress.finish();
    let scale = plan
        .scale_vars
        .map(|n| scale_run(n, plan.seed, &params, progress))
        .transpose()?;
    Ok(FsllReport {
        trials: plan.trials,
        path: plan.path,
        markdown: (!results.is_empty()).then(|| markdown(&results)),
        results,
        bm_markdown: (!bm_results.is_empty()).then(|| markdown_bm(&bm_results)),
        bm_results,
        scale,
    })
}

/// The JSON file of `repro fsll -o`: every trial, medians, the paper's values, the seed.
pub fn results_json(report: &FsllReport, seed: u64) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(&serde_json::json!({
        "seed": seed,
        "trials": report.trials,
        "path": report.path,
        "results": report.results,
        "bm_results": report.bm_results,
        "scale": report.scale,
    }))?)
}

/// Learns an `n`-variable random Bayesian network (3 parents, 100,000 samples); reports time,
/// size and peak memory (VmHWM), and KL(p*‖p_θ) when n ≤ 28.
fn scale_run(
    n: usize,
    seed: u64,
    params: &FsllParams,
    progress: &dyn Progress,
) -> anyhow::Result<ScaleRun> {
    let mut rng = rng_from_seed(derive_seed(seed, 5000 + n as u64));
    let net = BayesNet::random(n, 3, &mut rng)?;
    let data = net.sample(100_000, &mut rng)?;
    progress.stage(&format!("scale run: {n} variables"), None);
    let start = Instant::now();
    let fit = fit_reported(&data, params, progress)
        .with_context(|| format!("learning the {n}-variable network"))?;
    progress.finish();
    for w in fit.record.warnings() {
        progress.note(&format!("warning: {w}"));
    }
    progress.note(&format!(
        "learned {} basis functions in {} iterations ({:.3} s)",
        fit.model.n_basis(),
        fit.record.iterations,
        start.elapsed().as_secs_f64()
    ));
    let learn_s = start.elapsed().as_secs_f64();
    let peak_during_fit = peak_rss_gib();
    let kl_truth = if n <= 28 {
        let truth = net.distribution()?;
        Some(kl_to_truth(&fit.model, truth.probs())?)
    } else {
        None
    };
    let v = ScaleRun {
        vars: n,
        states: fit.model.layout().n_states(),
        samples: data.n_samples(),
        edges: net.n_edges(),
        learn_s,
        iterations: fit.record.iterations,
        n_basis: fit.model.n_basis(),
        kl_data: fit.record.kl_data,
        kl_truth,
        peak_rss_gib_after_fit: peak_during_fit,
        peak_rss_gib_total: peak_rss_gib(),
    };
    progress.note(&format!("scale run: {}", serde_json::to_string(&v)?));
    Ok(v)
}

/// Peak resident memory of this process in GiB (Linux `VmHWM`), when available.
fn peak_rss_gib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_have_the_papers_names_and_sizes() {
        let names: Vec<String> = Table1Row::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(
            names,
            [
                "Ising5x4S",
                "Ising5x4L",
                "BN20-37S",
                "BN20-37L",
                "BN20-54S",
                "BN20-54L"
            ]
        );
        assert_eq!(Table1Row::ALL[1].n_samples(), 100_000);
    }

    #[test]
    fn small_and_large_share_the_network() {
        let (a, _) = Table1Row::ALL[2].generate(5, 0).unwrap();
        let (b, _) = Table1Row::ALL[3].generate(5, 1).unwrap();
        assert_eq!(a.probs(), b.probs());
        let (_, d0) = Table1Row::ALL[2].generate(5, 0).unwrap();
        let (_, d1) = Table1Row::ALL[2].generate(5, 1).unwrap();
        assert_ne!(d0, d1, "trials draw different samples");
    }

    #[test]
    fn bm_rows_have_the_papers_figures_and_empirical_sums_to_one() {
        let r = Table1Row::ALL[1];
        assert_eq!(r.paper_bm(BmKind::Di).kl_truth, 0.002);
        assert_eq!(r.paper_bm(BmKind::Pcd).kl_data, 0.528);
        assert_eq!(Table1Row::ALL[5].paper_bm(BmKind::Di).seconds, 21.0);
        let (_, data) = Table1Row::ALL[0].generate(5, 0).unwrap();
        let p = empirical(&data);
        assert_eq!(p.len(), 1 << 20);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let first = data.values().row(0);
        let idx = (0..20).fold(0usize, |a, j| a | (usize::from(first[j]) << j));
        assert!(p[idx] >= 1e-3 - 1e-15);
    }

    #[test]
    fn plan_runs_one_small_row_and_checks_names() {
        let plan = FsllPlan {
            trials: 1,
            only: vec!["BN20-37S".into()],
            ..FsllPlan::default()
        };
        let report = run(&plan, &crate::Silent).unwrap();
        assert_eq!(report.results.len(), 1);
        assert_eq!(report.results[0].name, "BN20-37S");
        assert!(report.markdown.as_deref().unwrap().contains("| BN20-37S |"));
        let v = serde_json::to_value(&report).unwrap();
        assert!(v.get("bm_results").is_none() && v.get("scale").is_none());
        let bad = FsllPlan {
            only: vec!["nonsense".into()],
            ..FsllPlan::default()
        };
        assert!(bad.check().is_err());
    }
}
