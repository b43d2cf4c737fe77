//! The pseudo-likelihood learner: [`CheckedPlmParams`] fits a [`Potts`] model to coded
//! sequences (optionally weighted), by the library's L-BFGS, with observers and an interrupt
//! that stops a fit of any size within one site's work (well under a second).

use super::asymmetric::{average_couplings, fit_sites};
use super::data::PlmData;
use super::kernel::SiteTables;
use super::params::{CheckedPlmParams, PlmMode};
use super::precondition::diagonal_scale;
use super::symmetric::{Penalty, Symmetric};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::fit::{Count, Fit, Learner, Run, StopReason};
use crate::optim::lbfgs::{minimize_with_state, LbfgsParams, LbfgsResult};
use crate::potts::Potts;
use serde::Serialize;
use std::cell::RefCell;
use std::time::Instant;

/// What observers of a symmetric fit see after every L-BFGS iteration (asymmetric fits are
/// observed at their start and end only).
#[derive(Debug)]
pub struct PlmProgress<'p> {
    /// Iterations done (0: the starting point).
    pub iteration: usize,
    /// Objective evaluations so far.
    pub evaluations: usize,
    /// The penalized objective `f` (see [`super::params`]).
    pub objective: f64,
    /// `‖∇f‖₂`.
    pub grad_norm: f64,
    /// `‖x‖₂` of all parameters.
    pub param_norm: f64,
    /// Seconds since the fit began.
    pub seconds: f64,
    /// The parameters, in the model's layout (fields, then one block per pair).
    pub params: &'p [f64],
}

/// The record of a pseudo-likelihood fit.
#[derive(Debug, Clone, Serialize)]
pub struct PlmRecord {
    /// Symmetric or asymmetric.
    pub mode: PlmMode,
    /// Why it stopped (asymmetric: the first site's reason that is not convergence, else
    /// convergence).
    pub stop: StopReason,
    /// L-BFGS iterations (asymmetric: summed over sites).
    pub iterations: usize,
    /// Objective evaluations (asymmetric: summed over sites).
    pub evaluations: usize,
    /// The penalized objective at the end (asymmetric: summed over sites).
    pub objective: f64,
    /// `− Σ_s w_s Σ_i ln p(s_i | s_\i)` at the end.
    pub neg_log_pseudo_likelihood: f64,
    /// The sum of the sequence weights.
    pub n_eff: f64,
    /// The effective `λ_J` after scaling.
    pub lambda_j: f64,
    /// The objective after every iteration (symmetric fits).
    pub trace: Vec<f64>,
    /// Wall seconds.
    pub seconds: f64,
}

impl CheckedPlmParams {
    /// Fits a model to `data` with per-row `weights` (default 1), observed by `run`.
    pub fn fit_weighted(
        &self,
        data: &Dataset,
        weights: Option<&[f64]>,
        mut run: Run<'_, Self>,
    ) -> Result<Fit<Potts, PlmRecord>> {
        let p = &self.0;
        let start = Instant::now();
        let q_data: Vec<usize> = data
            .cardinalities()
            .iter()
            .map(|&k| k as usize - usize::from(p.gap_state.is_some()))
            .collect();
        let need = p.memory_estimate(data.n_samples() as u64, &q_data);
        if need > p.memory_limit {
            return Err(Error::TooLarge {
                what: format!(
                    "a {:?} pseudo-likelihood fit of {} sequences × {} sites",
                    p.mode,
                    data.n_samples(),
                    data.n_vars()
                ),
                needed: format!("about {:.2} GiB", need as f64 / (1u64 << 30) as f64),
                limit: format!(
                    "memory_limit {:.2} GiB",
                    p.memory_limit as f64 / (1u64 << 30) as f64
                ),
            });
        }
        let coded = PlmData::new(data, weights, p.gap_state)?;
        let q = coded.states().to_vec();
        let l = q.len();
        let lambda_j = p.lambda_j_for(q.iter().copied().max().unwrap_or(1), l);
        let penalty = Penalty {
            lambda_h: p.lambda_h,
            lambda_j,
            lambda_group: p.lambda_group,
        };
        let h0 = initial_fields(&coded);
        let lbfgs = LbfgsParams {
            memory: p.lbfgs_memory,
            max_iterations: p.max_iterations,
            grad_tol: 0.0,
            grad_tol_relative: p.grad_tol,
            // The gradient is accurate to single precision; the pairs need no more.
            f32_pairs: true,
            ..LbfgsParams::default()
        };
        let mut model = Potts::zeros(q.clone())?;
        let n_h = h0.len();
        let record = match p.mode {
            PlmMode::Symmetric => {
                let mut obj = Symmetric::new(&coded, penalty, run.interrupt_flag().cloned());
                let mut x0 = vec![0.0; obj.len()];
                x0[..n_h].copy_from_slice(&h0);
                let (f0, converged0) = {
                    let mut g = vec![0.0; x0.len()];
                    let f0 = obj.eval(&x0, &mut g)?;
                    let mut progress = PlmProgress {
                        iteration: 0,
                        evaluations: 1,
                        objective: f0,
                        grad_norm: norm(&g),
                        param_norm: norm(&x0),
                        seconds: start.elapsed().as_secs_f64(),
                        params: &x0,
                    };
                    run.start(&mut progress)?;
                    if let Some(why) = run.observe_at(0, &mut progress)? {
                        return Err(Error::param(
                            "observer",
                            format!("stopped the fit before its first iteration ({why})"),
                        ));
                    }
                    let converged = progress.grad_norm <= p.grad_tol * progress.param_norm.max(1.0);
                    (f0, converged)
                };
                // L-BFGS on y with x = d ⊙ y (see `precondition`); the gradient test is
                // plmc's, on x and ∇f(x), so it is made here rather than by L-BFGS.
                let d = diagonal_scale(&coded, &h0, penalty);
                let y0: Vec<f64> = x0.iter().zip(&d).map(|(x, s)| x / s).collect();
                drop(x0);
                // x = d ⊙ y, shared by the evaluations and the observer (one at a time).
                let x_of_y = RefCell::new(vec![0.0; y0.len()]);
                let unscale = |y: &[f64]| {
                    let mut x = x_of_y.borrow_mut();
                    x.iter_mut()
                        .zip(y.iter().zip(&d))
                        .for_each(|(x, (y, s))| *x = y * s);
                    x
                };
                let lbfgs = LbfgsParams {
                    grad_tol_relative: 0.0,
                    ..lbfgs
                };
                let mut window = ObjectiveWindow::new(p.objective_tol, p.objective_window, f0);
                let mut eval = |y: &[f64], gy: &mut [f64]| -> Result<f64> {
                    let f = obj.eval(&unscale(y), gy)?;
                    gy.iter_mut().zip(&d).for_each(|(g, s)| *g *= s);
                    Ok(f)
                };
                let mut r = if converged0 {
                    LbfgsResult {
                        x: y0,
                        f: f0,
                        grad_max: f64::NAN,
                        iterations: 0,
                        evaluations: 1,
                        trace: vec![f0],
                        stop: StopReason::GradientTolerance,
                    }
                } else {
                    minimize_with_state(&mut eval, y0, &lbfgs, &mut |s| {
                        let x = unscale(s.x);
                        let grad_norm =
                            s.g.iter()
                                .zip(&d)
                                .map(|(g, s)| (g / s) * (g / s))
                                .sum::<f64>()
                                .sqrt();
                        let mut progress = PlmProgress {
                            iteration: s.iteration,
                            evaluations: s.evaluations,
                            objective: s.f,
                            grad_norm,
                            param_norm: norm(&x),
                            seconds: start.elapsed().as_secs_f64(),
                            params: &x,
                        };
                        if let Some(why) = run.observe_at(s.iteration, &mut progress)? {
                            return Ok(Some(why));
                        }
                        if run.interrupted() {
                            return Ok(Some(StopReason::Interrupted {
                                after: Count::iterations(s.iteration),
                            }));
                        }
                        if grad_norm <= p.grad_tol * progress.param_norm.max(1.0) {
                            return Ok(Some(StopReason::GradientTolerance));
                        }
                        Ok(window.settled(s.f).then_some(StopReason::FunctionTolerance))
                    })?
                };
                r.x.iter_mut().zip(&d).for_each(|(x, s)| *x *= s);
                // The pseudo-likelihood at the returned point (the last evaluation may have
                // been a rejected trial step).
                let mut g = vec![0.0; r.x.len()];
                let mut at_end = Symmetric::new(&coded, penalty, None);
                at_end.eval(&r.x, &mut g)?;
                let nlpl = at_end.last_nlpl;
                let (h, j) = model.parameters_mut();
                h.copy_from_slice(&r.x[..n_h]);
                j.copy_from_slice(&r.x[n_h..]);
                let mut progress = PlmProgress {
                    iteration: r.iterations,
                    evaluations: r.evaluations,
                    objective: r.f,
                    grad_norm: norm(&g),
                    param_norm: norm(&r.x),
                    seconds: start.elapsed().as_secs_f64(),
                    params: &r.x,
                };
                run.finish(&mut progress, &r.stop)?;
                PlmRecord {
                    mode: p.mode,
                    stop: r.stop,
                    iterations: r.iterations,
                    evaluations: r.evaluations,
                    objective: r.f,
                    neg_log_pseudo_likelihood: nlpl,
                    n_eff: coded.n_eff(),
                    lambda_j,
                    trace: r.trace,
                    seconds: start.elapsed().as_secs_f64(),
                }
            }
            PlmMode::Asymmetric => {
                let tables = SiteTables::new(&q);
                let fits = fit_sites(&coded, &tables, &h0, penalty, &lbfgs, run.interrupt_flag())?;
                let (h, j) = model.parameters_mut();
                let mut o = 0;
                for (fit, &k) in fits.iter().zip(&q) {
                    h[o..o + k].copy_from_slice(&fit.x[..k]);
                    o += k;
                }
                average_couplings(&tables, &fits, j);
                let stop = fits
                    .iter()
                    .map(|f| f.stop.clone())
                    .find(|s| !s.is_converged())
                    .unwrap_or(StopReason::Converged);
                let params: Vec<f64> = model
                    .fields_flat()
                    .iter()
                    .chain(model.couplings_flat())
                    .copied()
                    .collect();
                let objective = fits.iter().map(|f| f.f).sum();
                let mut progress = PlmProgress {
                    iteration: fits.iter().map(|f| f.iterations).max().unwrap_or(0),
                    evaluations: fits.iter().map(|f| f.evaluations).sum(),
                    objective,
                    grad_norm: f64::NAN,
                    param_norm: norm(&params),
                    seconds: start.elapsed().as_secs_f64(),
                    params: &params,
                };
                run.start(&mut progress)?;
                run.finish(&mut progress, &stop)?;
                PlmRecord {
                    mode: p.mode,
                    stop,
                    iterations: fits.iter().map(|f| f.iterations).sum(),
                    evaluations: fits.iter().map(|f| f.evaluations).sum(),
                    objective,
                    neg_log_pseudo_likelihood: fits.iter().map(|f| f.nlpl).sum(),
                    n_eff: coded.n_eff(),
                    lambda_j,
                    trace: Vec::new(),
                    seconds: start.elapsed().as_secs_f64(),
                }
            }
        };
        Ok(Fit { model, record })
    }
}

impl Learner for CheckedPlmParams {
    type Model = Potts;
    type Record = PlmRecord;
    type Progress<'p> = PlmProgress<'p>;

    /// Unweighted; see [`CheckedPlmParams::fit_weighted`].
    fn fit_with(&self, data: &Dataset, run: Run<'_, Self>) -> Result<Fit<Potts, PlmRecord>> {
        self.fit_weighted(data, None, run)
    }
}

/// [`PlmParams::objective_tol`]'s test: the objectives of the last `window + 1` iterates.
///
/// [`PlmParams::objective_tol`]: super::PlmParams::objective_tol
pub(crate) struct ObjectiveWindow {
    tol: f64,
    recent: std::collections::VecDeque<f64>,
    window: usize,
}

impl ObjectiveWindow {
    pub(crate) fn new(tol: f64, window: usize, f0: f64) -> Self {
        ObjectiveWindow {
            tol,
            recent: std::collections::VecDeque::from([f0]),
            window,
        }
    }

    /// Records the objective `f` after an iteration; true when it is at most
    /// `tol · |f|` below the objective `window` iterations earlier (never when `tol` is 0).
    pub(crate) fn settled(&mut self, f: f64) -> bool {
        self.recent.push_back(f);
        if self.recent.len() > self.window + 1 {
            self.recent.pop_front();
        }
        self.tol > 0.0
            && self.recent.len() == self.window + 1
            && self.recent[0] - f <= self.tol * f.abs()
    }
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The starting fields (plmc's): `h_i(a) = ln(f_i(a) N_eff + 1)`, centred to sum to zero,
/// `f_i` the weighted frequencies among rows where site `i` is not missing.
pub(crate) fn initial_fields(data: &PlmData) -> Vec<f64> {
    let n_eff = data.n_eff();
    let f = data.site_frequencies();
    let mut h: Vec<f64> = f.iter().map(|v| (v * n_eff + 1.0).ln()).collect();
    let mut o = 0;
    for &k in data.states() {
        let mean = h[o..o + k].iter().sum::<f64>() / k as f64;
        h[o..o + k].iter_mut().for_each(|v| *v -= mean);
        o += k;
    }
    h
}
