//! Algorithm 1: the Frank-Wolfe learner, one hidden unit per iteration, with the bias update
//! of Eq. 10, optional away (drop) steps, optional free `α` (fractional RBMs) and model-size
//! selection by the train/validation gap.

use super::model::FwModel;
use super::params::{AlphaRule, CheckedFwParams, FwParams, GUARD_MAX_UNITS};
use super::record::{FwFit, FwProgress, FwRecord, IterationRecord, SizeEvaluation};
use super::sampler::FwSampler;
use super::stops::{ObjectiveGuard, SizeSelection};
use super::subproblem::{mean_softplus_of, BinaryRows, Subproblem};
use crate::data::Dataset;
use crate::driver::{drive, Stepper};
use crate::error::{Error, Result};
use crate::fit::{Count, Fit, Interrupt, Learner, Observer, Run, StopReason};
use crate::linalg::softplus_f64;
use crate::model::{ExactTask, LogPartition, Model};
use crate::optim::lbfgs::{minimize, LbfgsParams, LbfgsResult};
use crate::rbm::model::{require_binary_data, visible_means, BASE_RATE_EPS};
use crate::rbm::{exact, Rbm};
use crate::rng::{derive_rng, derive_seed};
use rand::Rng;
use rand_distr::{Distribution as _, Normal};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::time::Instant;

impl CheckedFwParams {
    /// Grows a model on `data`, selecting the size by the train/validation gap on `valid`.
    pub fn fit_validated<'d>(
        &self,
        data: &'d Dataset,
        valid: Option<&'d Dataset>,
        run: Run<'d, Self>,
    ) -> Result<FwFit> {
        let fw = FrankWolfe::new(data, self.0.clone())?;
        with_validation(fw, valid)?.with_run(run).run()
    }

    /// Grows a model on `data` from the standard RBM `rbm` (a warm start, Sec. 3.2).
    pub fn fit_from<'d>(
        &self,
        rbm: &Rbm,
        data: &'d Dataset,
        valid: Option<&'d Dataset>,
        run: Run<'d, Self>,
    ) -> Result<FwFit> {
        let fw = FrankWolfe::from_rbm(data, rbm, self.0.clone())?;
        with_validation(fw, valid)?.with_run(run).run()
    }
}

/// `fw` with the validation set `valid`, if any.
fn with_validation<'d>(fw: FrankWolfe<'d>, valid: Option<&'d Dataset>) -> Result<FrankWolfe<'d>> {
    match valid {
        Some(v) => fw.validation(v),
        None => Ok(fw),
    }
}

impl Learner for CheckedFwParams {
    type Model = FwModel;
    type Record = FwRecord;
    type Progress<'p> = FwProgress<'p>;

    /// Grows a model on `data` (Algorithm 1) with no validation data.
    fn fit_with(&self, data: &Dataset, run: Run<'_, Self>) -> Result<FwFit> {
        self.fit_validated(data, None, run)
    }
}

/// The Frank-Wolfe learner (Algorithm 1). Build it with [`FrankWolfe::new`] (from scratch) or
/// [`FrankWolfe::from_rbm`] (a warm start), then [`FrankWolfe::run`] it, or drive it one
/// phase at a time ([`FrankWolfe::insert_unit`], [`FrankWolfe::update_bias`],
/// [`FrankWolfe::away_step`]) as the tests do.
///
/// ```
/// use boltzkit::data::synth::BarsAndStripes;
/// use boltzkit::rbm::frank_wolfe::{FrankWolfe, FwParams};
/// use boltzkit::rbm::exact;
/// let data = BarsAndStripes::new(3, false)?.dataset()?;
/// let params = FwParams::new().max_units(8).samples(200).lambda(0.05).seed(3);
/// let fit = FrankWolfe::new(&data, params)?.run()?;
/// assert_eq!(fit.model.n_units(), 8);
/// // α = t: the model is a standard RBM with 8 hidden units
/// let rbm = fit.model.to_rbm()?;
/// let ll = exact::average_log_likelihood(&rbm, &data)?;
/// assert!(ll > -9.0 * 2f64.ln()); // better than the uniform distribution
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub struct FrankWolfe<'d> {
    params: FwParams,
    data: &'d Dataset,
    valid: Option<&'d Dataset>,
    data_mean: Vec<f64>,
    model: FwModel,
    /// Whether `model` still holds the random start `w′` of Algorithm 1 (`t = 0`).
    fresh: bool,
    iteration: usize,
    /// `mean_n softplus(w_iᵀṽ_n)` of every atom (fixed once the atom is).
    atom_data_sp: Vec<f64>,
    sub: Subproblem,
    sampler: FwSampler,
    run: Run<'d, CheckedFwParams>,
    model_mean: Vec<f64>,
    removed: usize,
}

impl std::fmt::Debug for FrankWolfe<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrankWolfe")
            .field("params", &self.params)
            .field("iteration", &self.iteration)
            .field("units", &self.model.n_units())
            .finish()
    }
}

/// Largest smaller layer for which the away step's `ln Z` ratio is computed exactly.
pub const EXACT_AWAY_UNITS: usize = 16;

impl<'d> FrankWolfe<'d> {
    /// A learner from scratch (Algorithm 1): `q_0 = δ_{w′}` with `w′ ~ N(0, init_sd²)`,
    /// `α_0 = 1`, and `b_0` the logit of the data means (base rate, clamped as
    /// [`Rbm::init_from_data`]; the paper starts from `b_0 = 0`).
    pub fn new(data: &'d Dataset, params: FwParams) -> Result<Self> {
        params.check()?;
        let mean = visible_means(data)?;
        let nv = data.n_vars();
        let normal =
            Normal::new(0.0, params.init_sd).map_err(|e| Error::param("init_sd", e.to_string()))?;
        let mut rng = derive_rng(params.seed, 0);
        let w: Vec<f64> = (0..=nv).map(|_| normal.sample(&mut rng)).collect();
        let b = mean
            .iter()
            .map(|&p| {
                let p = p.clamp(BASE_RATE_EPS, 1.0 - BASE_RATE_EPS);
                (p / (1.0 - p)).ln()
            })
            .collect();
        let model = FwModel::new(nv, w, vec![1.0], 1.0, b)?;
        Self::build(data, params, model, true)
    }

    /// A warm start from a standard RBM with `h` hidden units (Sec. 3.2, "Adding hidden
    /// units"): `q` uniform over its units, `α = h`, continuing at `t = h + 1`. Before the
    /// first step the model is the RBM's distribution.
    pub fn from_rbm(data: &'d Dataset, rbm: &Rbm, params: FwParams) -> Result<Self> {
        params.check()?;
        exact::check_data_for(rbm, data, "FrankWolfe::from_rbm")?;
        let model = FwModel::from_rbm(rbm);
        let mut fw = Self::build(data, params, model, false)?;
        fw.iteration = rbm.n_hidden();
        Ok(fw)
    }

    fn build(data: &'d Dataset, params: FwParams, model: FwModel, fresh: bool) -> Result<Self> {
        let data_mean = visible_means(data)?;
        let rows = BinaryRows::from_dataset(data);
        let atom_data_sp = if fresh {
            Vec::new()
        } else {
            (0..model.n_units())
                .map(|i| mean_softplus_of(&rows, model.atom(i)))
                .collect()
        };
        let sub = Subproblem::new(rows, params.lambda)?;
        // chains start at data rows drawn uniformly (seeded)
        let nv = data.n_vars();
        let mut rng = derive_rng(params.seed, 1);
        let mut v0 = vec![0f32; params.samples * nv];
        for row in v0.chunks_exact_mut(nv) {
            let r = rng.random_range(0..data.n_samples());
            row.iter_mut()
                .zip(data.sample(r).iter())
                .for_each(|(o, &x)| *o = f32::from(x));
        }
        let sampler = FwSampler::new(&model, &v0, derive_seed(params.seed, 2))?;
        Ok(FrankWolfe {
            data_mean,
            model,
            fresh,
            iteration: 0,
            atom_data_sp,
            sub,
            sampler,
            run: Run::new(),
            model_mean: vec![0.0; nv],
            removed: 0,
            params,
            data,
            valid: None,
        })
    }

    /// Stops the run when `flag` is set: after the current iteration, with
    /// [`StopReason::Interrupted`] and the model of that iteration.
    pub fn interrupt(mut self, flag: Interrupt) -> Self {
        self.run = self.run.interrupt(flag);
        self
    }

    /// Runs with the observers and interrupt of `run` (replacing those added so far).
    pub fn with_run(mut self, run: Run<'d, CheckedFwParams>) -> Self {
        self.run = run;
        self
    }

    /// Validation data for model-size selection (the train/validation gap).
    pub fn validation(mut self, valid: &'d Dataset) -> Result<Self> {
        require_binary_data(valid)?;
        if valid.n_vars() != self.data.n_vars() {
            return Err(Error::Shape {
                op: "FrankWolfe::validation".into(),
                expected: format!("{} variables", self.data.n_vars()),
                found: format!("{}", valid.n_vars()),
            });
        }
        self.valid = Some(valid);
        Ok(self)
    }

    /// Adds an observer called after every iteration.
    pub fn add_observer(mut self, obs: impl for<'p> Observer<FwProgress<'p>> + 'd) -> Self {
        self.run = self.run.observe(obs);
        self
    }

    /// The current model.
    pub fn model(&self) -> &FwModel {
        &self.model
    }

    /// The last iteration done (`h` right after a warm start from `h` units).
    pub fn iteration(&self) -> usize {
        self.iteration
    }

    /// The settings.
    pub fn params(&self) -> &FwParams {
        &self.params
    }

    /// `α` after inserting one atom.
    fn alpha_after_insert(&self) -> f64 {
        if self.fresh {
            1.0
        } else {
            match self.params.alpha {
                AlphaRule::Count => (self.model.n_units() + 1) as f64,
                AlphaRule::Free { .. } => self.model.alpha() + 1.0,
            }
        }
    }

    /// Draws the samples of the current model, solves Eq. 9 by L-BFGS and inserts `w*_t`
    /// with `q_t = (1 − 1/t) q_{t−1} + (1/t) δ_{w*_t}` (`q_1 = δ_{w*_1}` from scratch). Returns
    /// the partial iteration record (sampling and subproblem fields).
    pub fn insert_unit(&mut self) -> Result<IterationRecord> {
        self.iteration += 1;
        let t0 = Instant::now();
        self.sampler.step(self.params.gibbs_steps)?;
        self.sub.set_samples(self.sampler.visible())?;
        let sampling_s = t0.elapsed().as_secs_f64();

        let t1 = Instant::now();
        let dim = self.sub.dim();
        let normal = Normal::new(0.0, self.params.init_sd)
            .map_err(|e| Error::param("init_sd", e.to_string()))?;
        let mut rng = derive_rng(derive_seed(self.params.seed, 3), self.iteration as u64);
        let lb = LbfgsParams {
            max_iterations: self.params.lbfgs_iterations,
            grad_tol: self.params.lbfgs_grad_tol,
            ..LbfgsParams::default()
        };
        let scale = 1.0 / (dim as f64).sqrt();
        let mut best: Option<LbfgsResult> = None;
        let (mut iterations, mut evaluations) = (0, 0);
        for start in 0..self.params.subproblem_starts {
            let w0: Vec<f64> = if start == 0 {
                (0..dim).map(|_| normal.sample(&mut rng)).collect()
            } else {
                let row = self
                    .sub
                    .data()
                    .row(rng.random_range(0..self.data.n_samples()));
                let mut w = vec![-scale; dim];
                row.iter().for_each(|&j| w[j as usize] = scale);
                w
            };
            let sub = &mut self.sub;
            let r = minimize(|w, g| Ok(sub.eval(w, g)), w0, &lb)?;
            iterations += r.iterations;
            evaluations += r.evaluations;
            if best.as_ref().is_none_or(|b| r.f < b.f) {
                best = Some(r);
            }
        }
        let r = best.expect("at least one start");
        let subproblem_s = t1.elapsed().as_secs_f64();

        let alpha = self.alpha_after_insert();
        let d_sp = mean_softplus_of(self.sub.data(), &r.x);
        if self.fresh {
            self.model.reset_to(&r.x, alpha)?;
            self.atom_data_sp = vec![d_sp];
            self.fresh = false;
        } else {
            self.model.insert(&r.x, alpha)?;
            self.atom_data_sp.push(d_sp);
        }
        self.sampler.set_model(&self.model)?;
        Ok(IterationRecord {
            iteration: self.iteration,
            units: self.model.n_units(),
            alpha: self.model.alpha(),
            subproblem_f: r.f,
            lbfgs_iterations: iterations,
            lbfgs_evaluations: evaluations,
            bias_steps: 0,
            bias_grad_rms: f64::NAN,
            removed: None,
            train_ll: None,
            sampling_s,
            subproblem_s,
            bias_s: 0.0,
            other_s: 0.0,
        })
    }

    /// The RMS over visible units of `∇_b L = mean data − mean model` (Eq. 10), the model mean
    /// from the chains after `gibbs_steps` fresh transitions.
    fn bias_gradient_rms(&mut self) -> Result<f64> {
        self.sampler.step(self.params.gibbs_steps)?;
        self.sampler.visible_means(&mut self.model_mean);
        let nv = self.model_mean.len();
        let ss: f64 = self
            .data_mean
            .iter()
            .zip(self.model_mean.iter_mut())
            .map(|(&d, m)| {
                *m = d - *m; // now the gradient
                *m * *m
            })
            .sum();
        Ok((ss / nv as f64).sqrt())
    }

    /// The bias update of Algorithm 1 (Eq. 10): `b ← b + η ∇_b L` with fresh model samples
    /// for each step, until the RMS of `∇_b L` is below `bias_tol` or `bias_steps` steps were
    /// taken. Returns `(steps, last RMS)`.
    pub fn update_bias(&mut self) -> Result<(usize, f64)> {
        let mut rms = f64::NAN;
        let mut steps = 0;
        while steps < self.params.bias_steps {
            rms = self.bias_gradient_rms()?;
            if rms < self.params.bias_tol {
                break;
            }
            let eta = self.params.learning_rate;
            self.model
                .b_mut()
                .iter_mut()
                .zip(&self.model_mean)
                .for_each(|(b, &g)| *b += eta * g);
            self.sampler.set_bias(self.model.b());
            steps += 1;
        }
        Ok((steps, rms))
    }

    /// `mean_s softplus(w_iᵀṽ_s)` of every atom over the chains' current states, and the
    /// `ln E_p[·]` terms of the away test, from one GEMM.
    fn sample_softplus(&self) -> Result<(Vec<f64>, Vec<Vec<f64>>)> {
        let atoms = self.model.atoms_rbm()?;
        let v = self.sampler.visible();
        let n = self.sampler.n_chains();
        let nh = self.model.n_units();
        let mut act = vec![0f32; n * nh];
        atoms.hidden_input(v, &mut act)?;
        let mut mean = vec![0.0; nh];
        let mut per_chain = vec![vec![0.0; n]; nh];
        for (s, row) in act.chunks_exact(nh).enumerate() {
            for (i, &a) in row.iter().enumerate() {
                let sp = softplus_f64(f64::from(a));
                mean[i] += sp / n as f64;
                per_chain[i][s] = sp;
            }
        }
        Ok((mean, per_chain))
    }

    /// The change of `L` (Eq. 6) from removing atom `i` (its coefficient `c_i = α q_i`):
    /// `−c_i mean_n sp(w_iᵀṽ_n) − ln E_p[e^{−c_i sp(w_iᵀṽ)}] − λ/2 (E_{q′}‖w‖² − E_q‖w‖²)`,
    /// the `ln Z` ratio exact for standard models with a layer of at most
    /// [`EXACT_AWAY_UNITS`] units, else estimated from the chains' samples `sp_chain`.
    fn removal_gain(&self, i: usize, sp_chain: &[f64]) -> Result<f64> {
        let c = self.model.alpha() * self.model.q()[i];
        let mut dropped = self.model.clone();
        dropped.remove(i, self.model.alpha() - c)?;
        let small = self.model.is_standard()
            && self.model.n_visible().min(self.model.n_units()) <= EXACT_AWAY_UNITS;
        let log_ratio = if small {
            exact::log_partition(&dropped.to_rbm()?)? - exact::log_partition(&self.model.to_rbm()?)?
        } else {
            let terms: Vec<f64> = sp_chain.iter().map(|&sp| -c * sp).collect();
            crate::linalg::log_sum_exp(&terms) - (terms.len() as f64).ln()
        };
        let penalty =
            0.5 * self.params.lambda * (dropped.mean_sq_norm() - self.model.mean_sq_norm());
        Ok(-c * self.atom_data_sp[i] - log_ratio - penalty)
    }

    /// The away step (Guélat & Marcotte) taken to its end: the atom worst under the linear
    /// subproblem (largest Eq. 9 value with the current samples) is removed, `α` reduced by its
    /// `α q_i` (so a standard RBM stays standard), when that raises `L` (Eq. 6). Returns the
    /// index removed.
    pub fn away_step(&mut self) -> Result<Option<usize>> {
        if self.model.n_units() < 2 {
            return Ok(None);
        }
        let (mean_s, per_chain) = self.sample_softplus()?;
        let lambda = self.params.lambda;
        let score = |i: usize| {
            let sq: f64 = self.model.atom(i).iter().map(|x| x * x).sum();
            0.5 * lambda * sq + mean_s[i] - self.atom_data_sp[i]
        };
        let mut worst = 0;
        for i in 1..self.model.n_units() {
            if score(i) > score(worst) {
                worst = i;
            }
        }
        if self.removal_gain(worst, &per_chain[worst])? <= 0.0 {
            return Ok(None);
        }
        let c = self.model.alpha() * self.model.q()[worst];
        let alpha = self.model.alpha() - c;
        self.model.remove(worst, alpha)?;
        self.atom_data_sp.remove(worst);
        self.sampler.set_model(&self.model)?;
        self.removed += 1;
        Ok(Some(worst))
    }

    /// One gradient-ascent step on `α` (fractional runs): `∇_α L = E_q[mean_n sp] −
    /// E_q[mean_s sp]` (appendix), with the chains' samples.
    fn alpha_step(&mut self, step: f64) -> Result<()> {
        let (mean_s, _) = self.sample_softplus()?;
        let grad: f64 = self
            .model
            .q()
            .iter()
            .zip(&self.atom_data_sp)
            .zip(&mean_s)
            .map(|((&q, &d), &s)| q * (d - s))
            .sum();
        let alpha = (self.model.alpha() + step * grad).max(1e-3);
        self.model.set_alpha(alpha)?;
        self.sampler.set_model(&self.model)
    }

    /// One iteration of Algorithm 1: insert a unit, update the bias, then (by the settings)
    /// an `α` step and an away step.
    pub fn step(&mut self) -> Result<IterationRecord> {
        let mut rec = self.insert_unit()?;
        let t = Instant::now();
        let (steps, rms) = self.update_bias()?;
        rec.bias_steps = steps;
        rec.bias_grad_rms = rms;
        rec.bias_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        if let AlphaRule::Free { step } = self.params.alpha {
            if step > 0.0 {
                self.alpha_step(step)?;
            }
        }
        if self.params.away_steps {
            rec.removed = self.away_step()?;
        }
        rec.other_s = t.elapsed().as_secs_f64();
        rec.units = self.model.n_units();
        rec.alpha = self.model.alpha();
        Ok(rec)
    }

    /// The exact training log-likelihood when the objective guard computes it (on, and the
    /// smaller layer at most [`GUARD_MAX_UNITS`]).
    fn guarded_log_likelihood(&self) -> Result<Option<f64>> {
        let small = self.model.n_visible().min(self.model.n_units()) <= GUARD_MAX_UNITS;
        if !self.params.fall_tol.is_finite()
            || !small
            || !self.model.exact_affordable(ExactTask::LogPartition)
        {
            return Ok(None);
        }
        let ll = self.model.log_likelihood(self.data, &LogPartition::Exact)?;
        Ok(Some(ll.value))
    }

    /// Runs iterations until `T` units (or early stopping, or the objective guard), evaluating
    /// the size every `eval_every` units, driven by [`drive`] (as `Growth`). See [`FwRecord`].
    pub fn run(mut self) -> Result<FwFit> {
        let start = Instant::now();
        let p = self.params.clone();
        let mut run = std::mem::take(&mut self.run);
        let mut growth = Growth {
            record: FwRecord {
                iterations: Vec::new(),
                evaluations: Vec::new(),
                removed: 0,
                selected_units: None,
                mh_acceptance: None,
                stop: StopReason::MaxUnits,
                wall_s: 0.0,
                selected: None,
            },
            last_eval_units: if self.fresh { 0 } else { self.model.n_units() },
            selection: SizeSelection::new(&p),
            guard: ObjectiveGuard::new(&p),
            max_iter: self.iteration + 2 * p.max_units,
            start,
            pending: None,
            fw: &mut self,
        };
        let stop = drive(&mut growth, &mut run)?.stop;
        let mut record = growth.record;
        record.stop = stop;
        self.run = run;
        self.finish(record, start)
    }

    /// The size evaluation at `units`: the mean `ln p̃` of the training and validation rows
    /// and their gap (its time and metrics are filled in by the caller).
    fn evaluate(&self, units: usize) -> Result<SizeEvaluation> {
        let train_nfe = mean_log_unnormalized(&self.model, self.data)?;
        let valid_nfe = self
            .valid
            .map(|v| mean_log_unnormalized(&self.model, v))
            .transpose()?;
        Ok(SizeEvaluation {
            units,
            iteration: self.iteration,
            train_nfe,
            valid_nfe,
            gap: valid_nfe.map(|v| train_nfe - v),
            wall_s: 0.0,
            metrics: BTreeMap::new(),
        })
    }

    /// The record's totals (units removed, MH acceptance, time), the observers finished.
    fn finish(mut self, mut record: FwRecord, start: Instant) -> Result<FwFit> {
        record.removed = self.removed;
        if self.sampler.proposals() > 0 {
            record.mh_acceptance =
                Some(self.sampler.accepted() as f64 / self.sampler.proposals() as f64);
        }
        record.wall_s = start.elapsed().as_secs_f64();
        if let Some(rec) = record.iterations.last() {
            self.run.finish(
                &mut FwProgress {
                    model: &self.model,
                    iteration: rec,
                    evaluation: false,
                    wall_s: record.wall_s,
                    metrics: &mut BTreeMap::new(),
                },
                &record.stop,
            )?;
        }
        Ok(Fit {
            model: self.model,
            record,
        })
    }
}

/// One iteration's results, between its step and its observers.
struct Pending {
    rec: IterationRecord,
    eval: Option<SizeEvaluation>,
    metrics: BTreeMap<String, f64>,
    wall_s: f64,
}

/// A [`FrankWolfe::run`] in progress, one iteration per [`Stepper::step`]: the record so far
/// and the stopping rules ([`SizeSelection`], [`ObjectiveGuard`], the iteration cap).
struct Growth<'f, 'd> {
    fw: &'f mut FrankWolfe<'d>,
    record: FwRecord,
    last_eval_units: usize,
    selection: SizeSelection,
    guard: ObjectiveGuard,
    /// The iteration cap: `2 T` iterations past the start.
    max_iter: usize,
    start: Instant,
    pending: Option<Pending>,
}

impl Stepper for Growth<'_, '_> {
    type Learner = CheckedFwParams;

    /// `T` units (unless the random start is still to be replaced), then the iteration cap.
    fn limit(&self) -> Option<StopReason> {
        let fw = &*self.fw;
        if fw.model.n_units() >= fw.params.max_units && !fw.fresh {
            Some(StopReason::MaxUnits)
        } else if fw.iteration >= self.max_iter {
            Some(StopReason::MaxIterations)
        } else {
            None
        }
    }

    fn done(&self) -> Count {
        Count::units(self.fw.model.n_units())
    }

    /// One iteration, the guard's exact log-likelihood and, every `eval_every` units, the size
    /// evaluation.
    fn step(&mut self) -> Result<Option<StopReason>> {
        let fw = &mut *self.fw;
        let mut rec = fw.step()?;
        rec.train_ll = fw.guarded_log_likelihood()?;
        let units = fw.model.n_units();
        let mut metrics = BTreeMap::new();
        if let Some(ll) = rec.train_ll {
            metrics.insert("train_ll".to_string(), ll);
        }
        let every = fw.params.eval_every;
        let eval = if every > 0 && units.is_multiple_of(every) && units > self.last_eval_units {
            self.last_eval_units = units;
            let e = fw.evaluate(units)?;
            if let Some(g) = e.gap {
                metrics.insert("gap".to_string(), g);
            }
            Some(e)
        } else {
            None
        };
        let wall_s = self.start.elapsed().as_secs_f64();
        self.pending = Some(Pending {
            rec,
            eval,
            metrics,
            wall_s,
        });
        Ok(None)
    }

    fn at(&self) -> usize {
        self.pending.as_ref().map_or(0, |s| s.rec.iteration)
    }

    fn with_progress<R>(
        &mut self,
        f: impl for<'p> FnOnce(&mut FwProgress<'p>) -> Result<R>,
    ) -> Result<R> {
        let Some(s) = self.pending.as_mut() else {
            return Err(Error::Internal("Frank-Wolfe progress before a step".into()));
        };
        let mut progress = FwProgress {
            model: &self.fw.model,
            iteration: &s.rec,
            evaluation: s.eval.is_some(),
            wall_s: s.wall_s,
            metrics: &mut s.metrics,
        };
        f(&mut progress)
    }

    /// The iteration recorded; at a size evaluation, the size selection by the gap; then the
    /// objective guard (which puts back the best model it saw).
    fn after_observers(&mut self, _: Option<&StopReason>) -> Result<Option<StopReason>> {
        let Some(Pending {
            rec,
            eval,
            metrics,
            wall_s,
        }) = self.pending.take()
        else {
            return Err(Error::Internal("Frank-Wolfe iteration not recorded".into()));
        };
        let units = self.fw.model.n_units();
        let train_ll = rec.train_ll;
        self.record.iterations.push(rec);
        if let Some(mut e) = eval {
            e.wall_s = wall_s;
            e.metrics = metrics;
            let gap = e.gap;
            self.record.evaluations.push(e);
            let fw = &*self.fw;
            let stop = self
                .selection
                .after_evaluation(gap, units, &fw.model, &mut self.record);
            if stop.is_some() {
                return Ok(stop);
            }
        }
        if let Some((stop, best)) =
            train_ll.and_then(|ll| self.guard.observe(units, ll, &self.fw.model))
        {
            self.fw.model = best;
            return Ok(Some(stop));
        }
        Ok(None)
    }
}

/// Rows per parallel batch of [`mean_log_unnormalized`].
const EVAL_BATCH: usize = 256;

/// The mean over the rows of `data` of `ln p̃(v) = α Σ_i q_i softplus(w_iᵀṽ) + bᵀv` (the
/// log-likelihood plus `ln Z`): hidden inputs by GEMM in batches, sums in `f64`, batches
/// combined in order (same bits for any thread count).
pub fn mean_log_unnormalized(model: &FwModel, data: &Dataset) -> Result<f64> {
    let atoms = model.atoms_rbm()?;
    exact::check_data_for(&atoms, data, "mean_log_unnormalized")?;
    let coef = model.coefficients();
    let (nv, nh) = (model.n_visible(), model.n_units());
    let n = data.n_samples();
    let sums: Vec<Result<f64>> = (0..n.div_ceil(EVAL_BATCH))
        .into_par_iter()
        .map(|k| {
            let rows: Vec<usize> = (k * EVAL_BATCH..((k + 1) * EVAL_BATCH).min(n)).collect();
            let mut v = vec![0f32; rows.len() * nv];
            crate::rbm::fill_batch(data, &rows, &mut v)?;
            let mut act = vec![0f32; rows.len() * nh];
            atoms.hidden_input(&v, &mut act)?;
            let mut s = 0.0;
            for (vr, ar) in v.chunks_exact(nv).zip(act.chunks_exact(nh)) {
                s += vr
                    .iter()
                    .zip(model.b())
                    .filter(|(&x, _)| x > 0.5)
                    .map(|(_, &b)| b)
                    .sum::<f64>();
                s += ar
                    .iter()
                    .zip(&coef)
                    .map(|(&a, &c)| c * softplus_f64(f64::from(a)))
                    .sum::<f64>();
            }
            Ok(s)
        })
        .collect();
    let mut total = 0.0;
    for s in sums {
        total += s?;
    }
    Ok(total / n as f64)
}
