//! The greedy MDL learner: Algorithms 1-3 with the cost of Eq. (7).
//!
//! Each iteration evaluates every candidate (append, adjust, remove; Algorithm 2) in O(1) from
//! the dual parameters `θ̄` and `d̄` (Eqs. 19-21), applies the best, and stops when the best
//! improvement is below `ε`. Two paths keep `θ̄` current:
//!
//! * [`TransformPath::Xor`] (power-of-two cardinalities): the in-place XOR update of
//!   [`super::xor`], fused with the next scan, with a periodic refresh from scratch that bounds
//!   round-off drift.
//! * [`TransformPath::Full`] (any cardinalities, and the reference): update `p_θ` by
//!   Algorithm 3 and recompute `θ̄` by the full transform (Sec. 2.2.2) every iteration.

use super::basis::Layout;
use super::model::FsllModel;
use super::penalty::Penalty;
use super::scan::{kl_change, scan_appends, Best};
use super::transform::{backward, forward};
use super::xor::{update_and_scan, XorUpdate};
use crate::data::Dataset;
use crate::driver::{drive, Stepper};
use crate::error::{Error, Result};
use crate::fit::{Count, Fit, Learner, Run};
use crate::linalg::exp_normalize;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::time::Instant;

/// Dual parameters within this distance of ±1 count as degenerate (`d̄_y = ±1`).
const DEGENERATE_EPS: f64 = 1e-12;

/// How the learner keeps the dual parameters `θ̄` up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransformPath {
    /// The XOR path when every cardinality is a power of two, the full path otherwise.
    Auto,
    /// The fused in-place XOR update (power-of-two cardinalities only).
    Xor,
    /// Algorithm 3 plus the full transform every iteration (any cardinalities).
    Full,
}

/// Settings of the FSLL learner, with the paper's defaults: the settings schema's `"fsll"`
/// (serialized under the field names; an entry left out takes its default).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct FsllParams {
    /// Stop when the best candidate improves the cost by less than this (Algorithm 1, line 8).
    /// Default 1e-4 (Sec. 3.1).
    pub epsilon: f64,
    /// Hard cap on iterations. Default 1,000,000.
    pub max_iterations: usize,
    /// Recompute `θ̄` from `θ` from scratch every this many iterations (bounds drift).
    /// Default 100.
    pub refresh_every: usize,
    /// Which update path to use (`"auto"`, `"xor"`, `"full"`). Default [`TransformPath::Auto`].
    pub path: TransformPath,
}

impl Default for FsllParams {
    fn default() -> Self {
        FsllParams {
            epsilon: 1e-4,
            max_iterations: 1_000_000,
            refresh_every: 100,
            path: TransformPath::Auto,
        }
    }
}

/// [`FsllParams`] checked by [`FsllParams::check`]: the FSLL learner ([`Learner`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedFsllParams(FsllParams);

impl CheckedFsllParams {
    /// The settings.
    pub fn get(&self) -> &FsllParams {
        &self.0
    }
}

impl FsllParams {
    /// Checks every setting (the error names the field at fault) and returns the learner.
    pub fn check(&self) -> Result<CheckedFsllParams> {
        if !(self.epsilon.is_finite() && self.epsilon >= 0.0) {
            return Err(Error::param(
                "epsilon",
                format!("must be a finite number ≥ 0, got {}", self.epsilon),
            ));
        }
        if self.max_iterations == 0 {
            return Err(Error::param("max_iterations", "must be at least 1"));
        }
        if self.refresh_every == 0 {
            return Err(Error::param("refresh_every", "must be at least 1"));
        }
        Ok(CheckedFsllParams(self.clone()))
    }
}

/// The kind of a candidate (Sec. 2.2, Algorithm 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// `θ_y` was 0 and becomes non-zero.
    Append,
    /// A non-zero `θ_y` moves to its line minimum.
    Adjust,
    /// A non-zero `θ_y` becomes 0.
    Remove,
}

/// One accepted step of the greedy search.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Step {
    /// What the step did.
    pub kind: StepKind,
    /// The basis index changed.
    pub index: usize,
    /// The change of cost (negative).
    pub delta: f64,
    /// The new value of `θ_y`.
    pub theta: f64,
}

/// Why the learner stopped: [`StopReason::Converged`] (the best improvement fell below `ε`),
/// [`StopReason::MaxIterations`], or, from a [`Run`], an observer's reason or
/// [`StopReason::Interrupted`].
pub use crate::fit::StopReason;

/// What happened during a fit.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FitRecord {
    /// Accepted steps (one per iteration).
    pub iterations: usize,
    /// Every accepted step, in order.
    pub steps: Vec<Step>,
    /// The cost (Eq. 7) before the first step, exact.
    pub initial_cost: f64,
    /// The cost (Eq. 7) after the last step, recomputed exactly.
    pub final_cost: f64,
    /// `KL(p_d‖p_θ)` of the final model, exact (nats).
    pub kl_data: f64,
    /// Why the search stopped.
    pub stop: StopReason,
    /// The path that kept `θ̄` current.
    pub path: TransformPath,
    /// Number of basis functions whose data dual `d̄_y` was ±1 (constant on the data); their
    /// targets were moved to ±(2N−1)/(2N+1), half a pseudo-count, so the model stays finite.
    pub degenerate_duals: usize,
    /// Largest gap between the incrementally tracked cost and its exact recomputation.
    pub max_cost_drift: f64,
    /// Number of training samples N.
    pub n_samples: usize,
    /// Wall-clock seconds of the fit.
    pub seconds: f64,
}

impl FitRecord {
    /// Warnings a user should see (empty when all went well).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.degenerate_duals > 0 {
            w.push(format!(
                "{} basis function(s) were constant on the data (d̄ = ±1, e.g. a constant column \
                 or too few samples); their targets were set to ±(2N−1)/(2N+1) so the model stays finite",
                self.degenerate_duals
            ));
        }
        if self.stop == StopReason::MaxIterations {
            w.push(format!(
                "stopped at the iteration limit ({}) before converging",
                self.iterations
            ));
        }
        w
    }
}

/// A fitted FSLL model and its record.
pub type FsllFit = Fit<FsllModel, FitRecord>;

/// What an observer sees after an iteration (FSLL observes after every `every`-th accepted
/// step; the uniform start, with no step, is not observed).
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Iterations done.
    pub iteration: usize,
    /// Current cost (incrementally tracked).
    pub cost: f64,
    /// Basis functions in use.
    pub n_basis: usize,
    /// The step just taken.
    pub step: Step,
}

impl Learner for CheckedFsllParams {
    type Model = FsllModel;
    type Record = FitRecord;
    type Progress<'p> = Progress;

    /// Learns an FSLL model from data (Algorithm 1).
    ///
    /// ```
    /// use boltzkit::data::Dataset;
    /// use boltzkit::fit::Learner;
    /// use boltzkit::fsll::FsllParams;
    /// use ndarray::array;
    /// // x1 copies x0: a second-order dependency the learner should find.
    /// let rows = array![[0u8, 0], [1, 1], [0, 0], [1, 1], [0, 0], [1, 1], [1, 1], [0, 0]];
    /// let data = Dataset::binary(rows).unwrap();
    /// let fit = FsllParams::default().check().unwrap().fit(&data).unwrap();
    /// assert!(fit.model.basis().contains(&0b11));
    /// assert!(fit.record.final_cost < fit.record.initial_cost);
    /// ```
    fn fit_with(&self, data: &Dataset, run: Run<'_, Self>) -> Result<FsllFit> {
        learn(data, &self.0, run)
    }
}

/// Bytes an FSLL fit needs on data with these cardinalities and `n_samples` rows: three f64
/// tables over all |X| states (θ̄, d̄ and a scratch table) plus the empirical counts,
/// saturating. 31 binary variables need 3 · 2^31 · 8 bytes = 48 GiB.
pub fn fit_memory_estimate(cardinalities: &[u32], n_samples: u64) -> u64 {
    crate::data::synth::table_memory(cardinalities)
        .saturating_mul(3)
        .saturating_add(n_samples.saturating_mul(16))
}

/// Algorithm 1 with checked `params`.
fn learn(
    data: &Dataset,
    params: &FsllParams,
    mut run: Run<'_, CheckedFsllParams>,
) -> Result<FsllFit> {
    data.require_nonempty()?;
    crate::budget::check_memory(
        &format!("an FSLL fit on {} variables", data.n_vars()),
        fit_memory_estimate(data.cardinalities(), data.n_samples() as u64),
    )?;
    let start = Instant::now();
    let layout = Layout::new(data.cardinalities())?;
    let path =
        match params.path {
            TransformPath::Auto if layout.is_power_of_two() => TransformPath::Xor,
            TransformPath::Auto => TransformPath::Full,
            TransformPath::Xor if !layout.is_power_of_two() => return Err(Error::param(
                "path",
                "the XOR path needs every cardinality to be a power of two; use `full` or `auto`",
            )),
            p => p,
        };
    let emp = Empirical::new(&layout, data);
    let n = layout.n_states();
    let pen = Penalty::new(&layout, emp.n);

    // d̄ = forward(p_d) (Sec. 2.2.2), degenerate entries moved off ±1.
    let mut d_bar = vec![0.0; n];
    for &(x, c) in &emp.counts {
        d_bar[x] = c as f64 / emp.n as f64;
    }
    forward(&layout, &mut d_bar);
    let target = (2.0 * emp.n as f64 - 1.0) / (2.0 * emp.n as f64 + 1.0);
    let degenerate_duals = d_bar[1..]
        .par_iter_mut()
        .map(|d| {
            if d.abs() > 1.0 - DEGENERATE_EPS {
                *d = d.signum() * target;
                1
            } else {
                0
            }
        })
        .sum();

    let theta: BTreeMap<usize, f64> = BTreeMap::new();
    let mut theta_bar = vec![0.0; n];
    let mut p_table = vec![0.0; n];
    let exact = refresh(&layout, &theta, &emp, &mut p_table, &mut theta_bar);
    let initial_cost = exact.cost(&emp, 0.0);
    let mut search = Search {
        params,
        layout: &layout,
        path,
        emp: &emp,
        pen: &pen,
        d_bar: &d_bar,
        theta,
        theta_bar,
        p_table,
        cost: initial_cost,
        max_cost_drift: 0.0,
        steps: Vec::new(),
        pending: None,
        since_refresh: 0,
    };
    let stop = drive(&mut search, &mut run)?.stop;
    let Search {
        theta,
        mut theta_bar,
        mut p_table,
        cost,
        mut max_cost_drift,
        steps,
        ..
    } = search;

    // Final exact figures.
    let exact = refresh(&layout, &theta, &emp, &mut p_table, &mut theta_bar);
    let penalty_sum: f64 = theta.keys().map(|&y| pen.at(y)).sum();
    let final_cost = exact.cost(&emp, penalty_sum);
    max_cost_drift = max_cost_drift.max((final_cost - cost).abs());
    let model = FsllModel::new(layout.cardinalities(), theta.into_iter().collect())?;
    let record = FitRecord {
        iterations: steps.len(),
        steps,
        initial_cost,
        final_cost,
        kl_data: final_cost - penalty_sum,
        stop,
        path,
        degenerate_duals,
        max_cost_drift,
        n_samples: emp.n,
        seconds: start.elapsed().as_secs_f64(),
    };
    if let Some(&step) = record.steps.last() {
        let mut last = Progress {
            iteration: record.iterations,
            cost: record.final_cost,
            n_basis: model.n_basis(),
            step,
        };
        run.finish(&mut last, &record.stop)?;
    }
    Ok(Fit { model, record })
}

/// Algorithm 1 between iterations: the model `θ`, its duals `θ̄` (and `p_θ` on the full
/// path), the tracked cost; one [`Stepper::step`] is one iteration, driven by [`drive`].
struct Search<'a> {
    params: &'a FsllParams,
    layout: &'a Layout,
    path: TransformPath,
    emp: &'a Empirical,
    pen: &'a Penalty,
    d_bar: &'a [f64],
    theta: BTreeMap<usize, f64>,
    theta_bar: Vec<f64>,
    p_table: Vec<f64>,
    cost: f64,
    max_cost_drift: f64,
    steps: Vec<Step>,
    /// The last step not yet carried into `θ̄`: (y, δ, θ̄_y before).
    pending: Option<(usize, f64, f64)>,
    since_refresh: usize,
}

impl Stepper for Search<'_> {
    type Learner = CheckedFsllParams;

    fn limit(&self) -> Option<StopReason> {
        (self.steps.len() >= self.params.max_iterations).then_some(StopReason::MaxIterations)
    }

    fn done(&self) -> Count {
        Count::iterations(self.steps.len())
    }

    /// One iteration: `θ̄` brought up to date, every candidate scanned, the best applied
    /// (Algorithm 1, line 10); converged when the best improves the cost by less than `ε`.
    fn step(&mut self) -> Result<Option<StopReason>> {
        let (layout, emp, pen, d_bar) = (self.layout, self.emp, self.pen, self.d_bar);
        // 1. bring θ̄ up to date and scan the append candidates
        let best_append = if self.since_refresh >= self.params.refresh_every {
            self.since_refresh = 0; // θ already holds the pending change
            let exact = refresh(
                layout,
                &self.theta,
                emp,
                &mut self.p_table,
                &mut self.theta_bar,
            );
            let penalty_sum: f64 = self.theta.keys().map(|&y| pen.at(y)).sum();
            let exact_cost = exact.cost(emp, penalty_sum);
            self.max_cost_drift = self.max_cost_drift.max((exact_cost - self.cost).abs());
            self.cost = exact_cost;
            scan_appends(&self.theta_bar, d_bar, pen)
        } else {
            match (self.path, self.pending.take()) {
                (TransformPath::Xor, Some((y, delta, tb_y))) => update_and_scan(
                    &mut self.theta_bar,
                    d_bar,
                    pen,
                    XorUpdate::new(y, delta, tb_y),
                ),
                (TransformPath::Full, Some((y, delta, _))) => {
                    multiply_by_exp_phi(layout, &mut self.p_table, y, delta);
                    self.theta_bar.copy_from_slice(&self.p_table);
                    forward(layout, &mut self.theta_bar);
                    scan_appends(&self.theta_bar, d_bar, pen)
                }
                _ => scan_appends(&self.theta_bar, d_bar, pen),
            }
        };

        // 2. the adjust and remove candidates of the basis in use
        let (kind, best) = best_candidate(best_append, &self.theta, &self.theta_bar, d_bar, pen);
        let improves = best.delta < -self.params.epsilon;
        if !improves {
            return Ok(Some(StopReason::Converged));
        }
        if !best.delta.is_finite() {
            return Err(Error::Numerical {
                context: "FSLL learner".into(),
                detail: format!("candidate {} has a non-finite change of cost", best.index),
            });
        }

        // 3. apply it (Algorithm 1, line 10)
        let y = best.index;
        let t0 = self.theta_bar[y];
        let old = self.theta.get(&y).copied().unwrap_or(0.0);
        let new = match kind {
            StepKind::Remove => 0.0,
            _ => old + atanh(d_bar[y]) - atanh(t0),
        };
        if new == 0.0 {
            self.theta.remove(&y);
        } else {
            self.theta.insert(y, new);
        }
        self.cost += best.delta;
        self.pending = Some((y, new - old, t0));
        self.since_refresh += 1;
        self.steps.push(Step {
            kind,
            index: y,
            delta: best.delta,
            theta: new,
        });
        Ok(None)
    }

    fn at(&self) -> usize {
        self.steps.len()
    }

    fn with_progress<R>(
        &mut self,
        f: impl for<'p> FnOnce(&mut Progress) -> Result<R>,
    ) -> Result<R> {
        let step = *self
            .steps
            .last()
            .ok_or_else(|| Error::Internal("FSLL progress before the first step".into()))?;
        let iteration = self.steps.len();
        let mut progress = Progress {
            iteration,
            cost: self.cost,
            n_basis: self.theta.len(),
            step,
        };
        f(&mut progress)
    }
}

fn atanh(t: f64) -> f64 {
    let t = t.clamp(-1.0 + 1e-15, 1.0 - 1e-15);
    0.5 * ((1.0 + t) / (1.0 - t)).ln()
}

/// The best of the scan's append candidate and every adjust/remove candidate of the basis.
fn best_candidate(
    best_append: Best,
    theta: &BTreeMap<usize, f64>,
    theta_bar: &[f64],
    d_bar: &[f64],
    pen: &Penalty,
) -> (StepKind, Best) {
    // An index already in the basis can only win the append scan if its adjust wins too
    // (adjust = append − r_y), so the scan's winner is an append only when it is not in use.
    let mut kind = StepKind::Append;
    let mut best = best_append;
    if best.found() && theta.contains_key(&best.index) {
        best = Best::NONE;
    }
    for (&y, &t) in theta {
        let (tb, d) = (theta_bar[y], d_bar[y]);
        let adjust = Best {
            delta: kl_change(d, tb, d),
            index: y,
        };
        if best.merge(adjust) == adjust {
            best = adjust;
            kind = StepKind::Adjust;
        }
        let at_zero = (atanh(tb) - t).tanh();
        let remove = Best {
            delta: kl_change(d, tb, at_zero) - pen.at(y),
            index: y,
        };
        if best.merge(remove) == remove && remove != adjust {
            best = remove;
            kind = StepKind::Remove;
        }
    }
    (kind, best)
}

/// The empirical distribution: distinct states with their counts.
struct Empirical {
    n: usize,
    counts: Vec<(usize, u64)>,
    /// `Σ_x p_d(x) ln p_d(x)`.
    neg_entropy: f64,
}

impl Empirical {
    fn new(layout: &Layout, data: &Dataset) -> Self {
        let mut idx: Vec<usize> = data
            .values()
            .outer_iter()
            .map(|row| layout.index_of(row.iter()))
            .collect();
        idx.sort_unstable();
        let mut counts: Vec<(usize, u64)> = Vec::new();
        for x in idx {
            match counts.last_mut() {
                Some((last, c)) if *last == x => *c += 1,
                _ => counts.push((x, 1)),
            }
        }
        let n = data.n_samples();
        let neg_entropy = counts
            .iter()
            .map(|&(_, c)| {
                let p = c as f64 / n as f64;
                p * p.ln()
            })
            .sum();
        Empirical {
            n,
            counts,
            neg_entropy,
        }
    }
}

/// Exact quantities of the current model.
struct Exact {
    log_z: f64,
    /// `⟨l_θ⟩_{p_d}`.
    mean_potential: f64,
}

impl Exact {
    /// `cost = KL(p_d‖p_θ) + Σ r_y` (Eq. 7), with `KL = Σ p_d ln p_d − ⟨l_θ⟩_{p_d} + ln Z`.
    fn cost(&self, emp: &Empirical, penalty_sum: f64) -> f64 {
        emp.neg_entropy - self.mean_potential + self.log_z + penalty_sum
    }
}

/// Recomputes `p_θ` (into `p_table`) and `θ̄` (into `theta_bar`) from `θ` from scratch.
fn refresh(
    layout: &Layout,
    theta: &BTreeMap<usize, f64>,
    emp: &Empirical,
    p_table: &mut [f64],
    theta_bar: &mut [f64],
) -> Exact {
    p_table.par_iter_mut().for_each(|v| *v = 0.0);
    for (&y, &t) in theta {
        p_table[y] = t;
    }
    backward(layout, p_table); // l_θ(x)
    let mean_potential = emp
        .counts
        .iter()
        .map(|&(x, c)| c as f64 * p_table[x])
        .sum::<f64>()
        / emp.n as f64;
    let log_z = exp_normalize(p_table);
    theta_bar.copy_from_slice(p_table);
    forward(layout, theta_bar);
    Exact {
        log_z,
        mean_potential,
    }
}

/// Algorithm 3: `p(x) ← p(x) e^{δ Φ_y(x)} / Σ`, using `c± = e^{±δ}` (no exponential per state).
pub fn multiply_by_exp_phi(layout: &Layout, p: &mut [f64], y: usize, delta: f64) {
    let (c_plus, c_minus) = (delta.exp(), (-delta).exp());
    let pow2 = layout.is_power_of_two();
    let support: Vec<(usize, u32, u32, super::basis::LocalBasis)> = layout
        .support(y)
        .into_iter()
        .map(|i| {
            (
                layout.stride(i),
                layout.cardinalities()[i],
                layout.digit(y, i),
                layout.basis(i),
            )
        })
        .collect();
    p.par_iter_mut().enumerate().for_each(|(x, v)| {
        let positive = if pow2 {
            (x & y).count_ones().is_multiple_of(2)
        } else {
            support
                .iter()
                .map(|&(s, k, yi, b)| b.phi(yi, ((x / s) % k as usize) as u32))
                .product::<f64>()
                > 0.0
        };
        *v *= if positive { c_plus } else { c_minus };
    });
    let sum = crate::linalg::deterministic_sum(p, |v| v);
    p.par_iter_mut().for_each(|v| *v /= sum);
}
