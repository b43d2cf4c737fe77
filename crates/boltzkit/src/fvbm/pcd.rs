//! Persistent contrastive divergence (BM-PCD of the FSLL paper, Sec. 3.3): stochastic
//! gradient ascent on the average log-likelihood, with the model's moments estimated by
//! persistent Gibbs chains ([`super::gibbs`]) that are carried over from one update to the
//! next (Tieleman 2008).
//!
//! One update: every chain makes one systematic-scan Gibbs sweep under the current model,
//! then `θ ← θ + η·(E_d[T] − Ê_chains[T])` with the sufficient statistics
//! `T(x) = (x_j; x_j x_k, j < k)` in the layout of `θ`. The FSLL paper's settings are the
//! defaults: `η = 0.01`, 100 chains, 10,000 updates.

use super::convention::Convention;
use super::gibbs::GibbsChain;
use super::model::{check_data, n_params, Fvbm};
use crate::data::Dataset;
use crate::driver::{drive, Stepper};
use crate::error::{Error, Result};
use crate::fit::{Count, Fit, Learner, Run, StopReason};
use crate::rng::derive_rng;
use rand::Rng;
use std::time::Instant;

/// Settings of the PCD fit (`init` is the starting model, not a setting, and is not
/// serialized).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PcdParams {
    /// The convention of the fitted model. Default [`Convention::Spin`].
    pub convention: Convention,
    /// Learning rate `η > 0`. Default 0.01.
    pub learning_rate: f64,
    /// Number of persistent chains. Default 100.
    pub n_chains: usize,
    /// Number of parameter updates (one Gibbs sweep of every chain each). Default 10,000.
    pub n_updates: usize,
    /// L2 penalty `λ ≥ 0` (weight decay `−η·λ·θ` per update). Default 0.
    pub l2: f64,
    /// The starting point (`None`: `θ = 0`). Default `None`.
    #[serde(skip)]
    pub init: Option<Fvbm>,
    /// Seed of the chains' start and of the Gibbs draws: the result depends on it only.
    /// Default 0.
    pub seed: u64,
}

impl Default for PcdParams {
    fn default() -> Self {
        PcdParams {
            convention: Convention::Spin,
            learning_rate: 0.01,
            n_chains: 100,
            n_updates: 10_000,
            l2: 0.0,
            init: None,
            seed: 0,
        }
    }
}

/// [`PcdParams`] checked by [`PcdParams::check`]: the PCD learner.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedPcdParams(PcdParams);

impl CheckedPcdParams {
    /// The settings.
    pub fn get(&self) -> &PcdParams {
        &self.0
    }
}

impl PcdParams {
    /// Checks every setting (the error names the field at fault) and returns the learner.
    pub fn check(&self) -> Result<CheckedPcdParams> {
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(Error::param(
                "learning_rate",
                format!("must be a finite number > 0, got {}", self.learning_rate),
            ));
        }
        if self.n_chains == 0 {
            return Err(Error::param("n_chains", "must be at least 1"));
        }
        if self.n_updates == 0 {
            return Err(Error::param("n_updates", "must be at least 1"));
        }
        super::mple::nonneg("l2", self.l2)?;
        super::mple::check_init(self.init.as_ref(), self.convention)?;
        Ok(CheckedPcdParams(self.clone()))
    }
}

/// The record of a PCD fit.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PcdRecord {
    /// Updates done.
    pub updates: usize,
    /// Why it stopped: [`StopReason::MaxEpochs`] (all updates done), an observer's reason or
    /// [`StopReason::Interrupted`].
    pub stop: StopReason,
    /// `max_a |E_d[T_a] − Ê_chains[T_a]|` at the last update.
    pub final_mismatch: f64,
    /// Number of samples.
    pub n_samples: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// A model fitted by PCD and its record.
pub type PcdFit = Fit<Fvbm, PcdRecord>;

/// What an observer of a PCD fit sees after an update.
#[derive(Debug, Clone, Copy)]
pub struct PcdProgress<'p> {
    /// Updates done.
    pub update: usize,
    /// `max_a |E_d[T_a] − Ê_chains[T_a]|` of this update.
    pub mismatch: f64,
    /// The model after it.
    pub model: &'p Fvbm,
}

/// Adds the sufficient statistics `T(x)` of the state `x` (values) to `acc`.
fn add_stats(x: &[f64], acc: &mut [f64]) {
    let d = x.len();
    let mut a = d;
    for j in 0..d {
        acc[j] += x[j];
        for k in j + 1..d {
            acc[a] += x[j] * x[k];
            a += 1;
        }
    }
}

/// The data's mean sufficient statistics `E_d[T]` in the layout of `θ`.
pub fn data_stats(data: &Dataset, conv: Convention) -> Vec<f64> {
    let d = data.n_vars();
    let mut stats = vec![0.0; n_params(d)];
    let mut x = vec![0.0; d];
    for row in data.values().outer_iter() {
        for (xv, &b) in x.iter_mut().zip(row.iter()) {
            *xv = conv.value(b);
        }
        add_stats(&x, &mut stats);
    }
    let n = data.n_samples().max(1) as f64;
    stats.iter_mut().for_each(|s| *s /= n);
    stats
}

impl Learner for CheckedPcdParams {
    type Model = Fvbm;
    type Record = PcdRecord;
    type Progress<'p> = PcdProgress<'p>;

    /// Fits an FVBM by PCD; the chains start at uniformly random states drawn from
    /// [`PcdParams::seed`], and the result depends on it only. Observers see every update.
    ///
    /// ```
    /// use boltzkit::fit::Learner;
    /// use boltzkit::fvbm::{exact, pcd, Convention, Fvbm};
    /// use boltzkit::rng::rng_from_seed;
    /// let truth = Fvbm::random(4, 0.5, Convention::Spin, &mut rng_from_seed(0))?;
    /// let data = exact::sample(&truth, 2000, &mut rng_from_seed(1))?;
    /// let params = pcd::PcdParams { n_updates: 200, seed: 7, ..Default::default() };
    /// let fit = params.check()?.fit(&data)?;
    /// assert_eq!(fit.record.updates, 200);
    /// # Ok::<(), boltzkit::Error>(())
    /// ```
    fn fit_with(&self, data: &Dataset, mut run: Run<'_, Self>) -> Result<PcdFit> {
        fit(data, &self.0, &mut run)
    }
}

/// The PCD fit with checked `params`: its updates under [`drive`].
fn fit(data: &Dataset, params: &PcdParams, run: &mut Run<'_, CheckedPcdParams>) -> Result<PcdFit> {
    let start = Instant::now();
    let d = data.n_vars();
    check_data(d, data, "pcd::fit")?;
    data.require_nonempty()?;
    let conv = params.convention;
    let model = super::mple::starting_model(params.init.as_ref(), d, conv)?;
    let mut rng = derive_rng(params.seed, 0);
    let states: Vec<Vec<u8>> = (0..params.n_chains)
        .map(|_| (0..d).map(|_| u8::from(rng.random::<bool>())).collect())
        .collect();
    let mut chains = Chains {
        params,
        target: data_stats(data, conv),
        theta: model.theta(),
        model,
        rng,
        states,
        chain_stats: Vec::new(),
        mismatch: f64::INFINITY,
        updates: 0,
    };
    chains.chain_stats = vec![0.0; chains.theta.len()];
    let stop = drive(&mut chains, run)?.stop;
    let Chains {
        model,
        mismatch,
        updates,
        ..
    } = chains;
    run.finish(
        &mut PcdProgress {
            update: updates,
            mismatch,
            model: &model,
        },
        &stop,
    )?;
    Ok(Fit {
        model,
        record: PcdRecord {
            updates,
            stop,
            final_mismatch: mismatch,
            n_samples: data.n_samples(),
            seconds: start.elapsed().as_secs_f64(),
        },
    })
}

/// The persistent chains and the model between updates: one update per driver step.
struct Chains<'a> {
    params: &'a PcdParams,
    /// `E_d[T]`.
    target: Vec<f64>,
    theta: Vec<f64>,
    model: Fvbm,
    rng: crate::rng::BkRng,
    /// The chains' states (0/1).
    states: Vec<Vec<u8>>,
    /// Scratch: the chains' summed statistics.
    chain_stats: Vec<f64>,
    mismatch: f64,
    updates: usize,
}

impl Stepper for Chains<'_> {
    type Learner = CheckedPcdParams;

    fn limit(&self) -> Option<StopReason> {
        (self.updates >= self.params.n_updates).then_some(StopReason::MaxEpochs)
    }

    fn done(&self) -> Count {
        Count::iterations(self.updates)
    }

    /// One sweep of every chain under the current model, then the ascent step.
    fn step(&mut self) -> Result<Option<StopReason>> {
        let params = self.params;
        self.chain_stats.iter_mut().for_each(|s| *s = 0.0);
        for state in self.states.iter_mut() {
            let mut chain = GibbsChain::new(&self.model, state)?;
            chain.sweep(&mut self.rng);
            add_stats(chain.values(), &mut self.chain_stats);
            chain.write_bits(state);
        }
        let k = params.n_chains as f64;
        let eta = params.learning_rate;
        self.mismatch = 0.0;
        for ((t, &e_d), &e_c) in self
            .theta
            .iter_mut()
            .zip(&self.target)
            .zip(&self.chain_stats)
        {
            let g = e_d - e_c / k;
            self.mismatch = f64::max(self.mismatch, g.abs());
            *t += eta * (g - params.l2 * *t);
        }
        if self.theta.iter().any(|t| !t.is_finite()) {
            return Err(Error::InvalidData(format!(
                "pcd::fit: the parameters overflowed at update {}; lower the learning rate",
                self.updates + 1
            )));
        }
        self.model = Fvbm::from_theta(self.model.d(), &self.theta, params.convention)?;
        self.updates += 1;
        Ok(None)
    }

    fn at(&self) -> usize {
        self.updates
    }

    fn with_progress<R>(
        &mut self,
        f: impl for<'p> FnOnce(&mut PcdProgress<'p>) -> Result<R>,
    ) -> Result<R> {
        f(&mut PcdProgress {
            update: self.updates,
            mismatch: self.mismatch,
            model: &self.model,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil;
    use super::*;
    use crate::fvbm::exact;
    use crate::rng::rng_from_seed;

    fn max_gap(a: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn moves_the_model_moments_toward_the_data() {
        for conv in [Convention::Spin, Convention::Binary] {
            let truth = Fvbm::random(4, 0.5, conv, &mut rng_from_seed(3)).unwrap();
            let data = exact::sample(&truth, 4000, &mut rng_from_seed(4)).unwrap();
            let target = data_stats(&data, conv);
            let start = exact::moments(&Fvbm::zeros(4, conv).unwrap())
                .unwrap()
                .sufficient_stats();
            let params = PcdParams {
                convention: conv,
                learning_rate: 0.05,
                n_chains: 50,
                n_updates: 1500,
                ..Default::default()
            };
            let fit = testutil::pcd(&data, &params, 11).unwrap();
            let end = exact::moments(&fit.model).unwrap().sufficient_stats();
            let (before, after) = (max_gap(&start, &target), max_gap(&end, &target));
            assert!(
                after < 0.5 * before && after < 0.05,
                "{conv}: moment gap {before} -> {after}"
            );
        }
    }

    #[test]
    fn same_seed_same_fit_and_bad_settings_rejected() {
        let truth = Fvbm::random(3, 0.5, Convention::Spin, &mut rng_from_seed(0)).unwrap();
        let data = exact::sample(&truth, 300, &mut rng_from_seed(1)).unwrap();
        let params = PcdParams {
            n_updates: 50,
            n_chains: 10,
            ..Default::default()
        };
        let a = testutil::pcd(&data, &params, 5).unwrap();
        let b = testutil::pcd(&data, &params, 5).unwrap();
        assert_eq!(a.model, b.model);
        let bad = PcdParams {
            learning_rate: 0.0,
            ..params.clone()
        };
        assert!(matches!(
            testutil::pcd(&data, &bad, 5),
            Err(Error::InvalidParam { .. })
        ));
        let bad = PcdParams {
            n_chains: 0,
            ..params
        };
        assert!(testutil::pcd(&data, &bad, 5).is_err());
    }
}
