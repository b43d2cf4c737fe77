//! The one shape of every model: [`Model`].
//!
//! [`FsllModel`](crate::fsll::FsllModel), [`Fvbm`](crate::fvbm::Fvbm), [`Rbm`](crate::rbm::Rbm)
//! and the Frank-Wolfe [`FwModel`](crate::rbm::frank_wolfe::FwModel) all answer the same
//! questions the same way (each family implements [`Model`] beside its type; this module
//! imports none of them):
//!
//! | question | method |
//! |---|---|
//! | how many variables | [`Model::n_variables`] |
//! | `ln p̃(x)` of each row (unnormalized) | [`Model::unnormalized_log_probs`] |
//! | `ln Z`, exact where affordable, AIS otherwise | [`Model::log_partition`] → [`Estimate`] |
//! | `ln p(x)` of each row | [`Model::log_probs`] |
//! | the average log-likelihood of a dataset | [`Model::log_likelihood`] → [`Estimate`] |
//! | `n` states, exact where affordable, Gibbs otherwise | [`Model::sample`] |
//! | files | [`Model::save`], [`Model::load`]; any model file: [`crate::any_model::AnyModel::load`] |
//!
//! The choice "exact if affordable, else sample / anneal" is written once, in
//! [`Sampling::resolve`] and [`LogPartition::resolve`]; each model only says what is
//! affordable for it ([`Model::exact_affordable`]).
//!
//! ```
//! use boltzkit::model::{LogPartition, Model, Sampling};
//! use boltzkit::rbm::Rbm;
//! use boltzkit::rng::rng_from_seed;
//! let rbm = Rbm::random(6, 3, 0.5, &mut rng_from_seed(1))?;
//! let x = rbm.sample(100, &Sampling::Auto, &mut rng_from_seed(7))?; // exact: 3 hidden units
//! let ll = rbm.log_likelihood(&x, &LogPartition::Auto)?;
//! assert!(ll.is_exact() && ll.value < 0.0);
//! let per_row = rbm.log_probs(&x, &LogPartition::Exact)?.0;
//! assert!((per_row.iter().sum::<f64>() / 100.0 - ll.value).abs() < 1e-9);
//! # Ok::<(), boltzkit::Error>(())
//! ```

use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::estimate::Estimate;
use crate::rbm::ais::AisSchedule;
use crate::rbm::eval_settings::EvalParams;
use crate::rng::BkRng;
use std::collections::BTreeMap;
use std::path::Path;

/// Metadata recorded in a model file beside the parameters (settings, seed, data hash, ...).
pub type Metadata = BTreeMap<String, String>;

/// Settings of an AIS estimate of `ln Z` (forward, from a base-rate model).
#[derive(Debug, Clone, PartialEq)]
pub struct AisOptions {
    /// The inverse temperatures (default: the standard 14,500-step schedule of Salakhutdinov
    /// & Murray 2008).
    pub schedule: AisSchedule,
    /// Independent chains (default 100).
    pub chains: usize,
    /// Seed of the chains (default 0).
    pub seed: u64,
    /// Visible biases of the base model; `None`: the base-rate biases of the data being
    /// scored, or uniform when there is none.
    pub base_b: Option<Vec<f32>>,
    /// A flag that stops the estimate at its next temperature once set (e.g. on Ctrl-C),
    /// failing with [`Error::Interrupted`] rather than returning a partial figure (default:
    /// none). The figures do not depend on it.
    pub interrupt: Option<crate::fit::Interrupt>,
}

impl Default for AisOptions {
    fn default() -> Self {
        let d = EvalParams::default();
        AisOptions {
            schedule: AisSchedule::standard(),
            chains: d.ais_chains,
            seed: d.seed,
            base_b: None,
            interrupt: None,
        }
    }
}

impl AisOptions {
    /// The AIS settings of the settings object `s` (checked): its schedule, chains and seed.
    pub fn from_settings(s: &EvalParams) -> Result<Self> {
        s.check()?;
        Ok(AisOptions {
            schedule: s.schedule()?,
            chains: s.ais_chains,
            seed: s.seed,
            ..AisOptions::default()
        })
    }
}

/// How to obtain `ln Z`.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LogPartition {
    /// Exact when [`Model::exact_affordable`], otherwise AIS with default [`AisOptions`].
    #[default]
    Auto,
    /// Exact enumeration; fails with [`Error::TooLarge`] when not affordable.
    Exact,
    /// Forward AIS (only models with an annealing path: RBMs).
    Ais(AisOptions),
}

impl LogPartition {
    /// The concrete method for a model where exact enumeration is (not) `affordable`:
    /// `Auto` becomes `Exact` or `Ais(default)`; the others stay.
    pub fn resolve(&self, affordable: bool) -> LogPartition {
        match self {
            LogPartition::Auto if affordable => LogPartition::Exact,
            LogPartition::Auto => LogPartition::Ais(AisOptions::default()),
            other => other.clone(),
        }
    }
}

/// How to draw states from a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sampling {
    /// Exact i.i.d. draws when [`Model::exact_affordable`], otherwise Gibbs chains with the
    /// model's default number of steps.
    #[default]
    Auto,
    /// Exact i.i.d. draws; fails with [`Error::TooLarge`] when not affordable.
    Exact,
    /// Gibbs sampling: `steps` transitions of each chain from its start.
    Gibbs {
        /// Transitions per chain (block Gibbs steps for RBMs, sweeps for FVBMs).
        steps: usize,
    },
}

/// A resolved [`Sampling`]: exact, or Gibbs with `Some(steps)` (`None`: the model's
/// default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampler {
    /// Exact i.i.d. draws.
    Exact,
    /// Gibbs chains, `None` meaning the model's default number of steps.
    Gibbs(Option<usize>),
}

impl Sampler {
    /// `exact` or `gibbs`, as summaries name the sampler used.
    pub fn name(self) -> &'static str {
        match self {
            Sampler::Exact => "exact",
            Sampler::Gibbs(_) => "gibbs",
        }
    }
}

impl Sampling {
    /// The sampler for a model where exact sampling is (not) `affordable`.
    pub fn resolve(&self, affordable: bool) -> Sampler {
        match self {
            Sampling::Auto if affordable => Sampler::Exact,
            Sampling::Auto => Sampler::Gibbs(None),
            Sampling::Exact => Sampler::Exact,
            Sampling::Gibbs { steps } => Sampler::Gibbs(Some(*steps)),
        }
    }
}

/// Which exact computation [`Model::exact_affordable`] is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExactTask {
    /// `ln Z` by enumeration.
    LogPartition,
    /// Exact i.i.d. sampling.
    Sampling,
}

/// The common interface of every boltzkit model (see the module docs).
pub trait Model: Sized {
    /// Number of (visible) variables.
    fn n_variables(&self) -> usize;

    /// Whether the exact version of `task` is affordable for this model.
    fn exact_affordable(&self, task: ExactTask) -> bool;

    /// `ln p̃(x)` of every row of `data`: the log-probability up to the model's `ln Z`.
    fn unnormalized_log_probs(&self, data: &Dataset) -> Result<Vec<f64>>;

    /// The mean of [`Model::unnormalized_log_probs`] over the rows, summed in row order.
    /// Fails on empty data.
    fn mean_unnormalized_log_prob(&self, data: &Dataset) -> Result<f64> {
        data.require_nonempty()?;
        let lp = self.unnormalized_log_probs(data)?;
        Ok(lp.iter().sum::<f64>() / lp.len() as f64)
    }

    /// `ln Z` by `method`, with its standard error and interval.
    fn log_partition(&self, method: &LogPartition) -> Result<Estimate>;

    /// `ln p(x)` of every row of `data` and the `ln Z` estimate used (for AIS the per-row
    /// figures share its error).
    fn log_probs(&self, data: &Dataset, method: &LogPartition) -> Result<(Vec<f64>, Estimate)> {
        let log_z = self.log_partition(&self.with_data_base(method, data)?)?;
        let lp = self.unnormalized_log_probs(data)?;
        Ok((lp.into_iter().map(|x| x - log_z.value).collect(), log_z))
    }

    /// The average log-likelihood `mean ln p̃(x) − ln Z` of `data` (nats per row): exact, or
    /// with the standard error and interval of the `ln Z` estimate (AIS: optimistic in
    /// expectation, by Jensen's inequality on an unbiased `Ẑ`).
    fn log_likelihood(&self, data: &Dataset, method: &LogPartition) -> Result<Estimate> {
        let mean = self.mean_unnormalized_log_prob(data)?;
        let log_z = self.log_partition(&self.with_data_base(method, data)?)?;
        Ok(log_z.negated().shifted(mean))
    }

    /// `method` with whatever the data being scored fixes (the AIS base model); the default
    /// returns it unchanged.
    fn with_data_base(&self, method: &LogPartition, _data: &Dataset) -> Result<LogPartition> {
        Ok(method.clone())
    }

    /// `n` states drawn by `sampling` from the caller's generator (the same bits for any
    /// thread count).
    fn sample(&self, n: usize, sampling: &Sampling, rng: &mut BkRng) -> Result<Dataset>;

    /// Writes the model atomically with `metadata`.
    fn save(&self, path: &Path, metadata: &Metadata) -> Result<()>;

    /// Reads a model file of this kind.
    fn load(path: &Path) -> Result<Self>;
}

/// A `TooLarge` error for an exact `task` the model cannot afford.
pub(crate) fn not_affordable(what: &str, task: ExactTask, size: String, limit: String) -> Error {
    let task = match task {
        ExactTask::LogPartition => "exact ln Z",
        ExactTask::Sampling => "exact sampling",
    };
    Error::TooLarge {
        what: format!("{task} of {what}"),
        needed: size,
        limit,
    }
}

/// Fails unless `method` (already resolved) is `Exact`: for models whose only `ln Z` is exact.
pub(crate) fn exact_only(method: &LogPartition, model: &str) -> Result<()> {
    match method {
        LogPartition::Exact | LogPartition::Auto => Ok(()),
        LogPartition::Ais(_) => Err(Error::param(
            "method",
            format!("{model}: ln Z is computed exactly; AIS applies to RBMs"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::any_model::AnyModel;
    use crate::estimate::Method;
    use crate::fsll::FsllModel;
    use crate::fvbm::{self, Fvbm};
    use crate::potts::Potts;
    use crate::rbm::frank_wolfe::FwModel;
    use crate::rbm::{exact as rbm_exact, Rbm};
    use crate::rng::rng_from_seed;

    /// Every 0/1 state of `d` variables as a dataset (variable 0 least significant).
    fn all_binary_states(d: usize) -> Dataset {
        let bits: Vec<u8> = (0..1usize << d)
            .flat_map(|x| (0..d).map(move |i| ((x >> i) & 1) as u8))
            .collect();
        Dataset::from_flat(bits, d, vec![2; d]).unwrap()
    }

    /// The brute-force twin of `log_probs`: `exp` of every state's log-probability sums to
    /// 1, and the average log-likelihood is the mean of the per-row figures.
    fn check_normalized<M: Model>(model: &M, d: usize) {
        let all = all_binary_states(d);
        let (lp, log_z) = model.log_probs(&all, &LogPartition::Exact).unwrap();
        assert!(log_z.is_exact());
        let total: f64 = lp.iter().map(|x| x.exp()).sum();
        assert!((total - 1.0).abs() < 1e-9, "total probability {total}");
        let ll = model.log_likelihood(&all, &LogPartition::Auto).unwrap();
        let mean = lp.iter().sum::<f64>() / lp.len() as f64;
        assert!((ll.value - mean).abs() < 1e-9, "{} vs {mean}", ll.value);
        assert_eq!((ll.lower, ll.upper, ll.stderr), (ll.value, ll.value, 0.0));
    }

    #[test]
    fn every_family_normalizes_over_all_states() {
        let mut rng = rng_from_seed(3);
        let fsll = FsllModel::new(&[2; 5], vec![(3, 0.7), (12, -0.4), (31, 0.2)]).unwrap();
        check_normalized(&fsll, 5);
        for conv in [fvbm::Convention::Spin, fvbm::Convention::Binary] {
            check_normalized(&Fvbm::random(6, 0.5, conv, &mut rng).unwrap(), 6);
        }
        check_normalized(&Rbm::random(7, 3, 0.8, &mut rng).unwrap(), 7);
        check_normalized(&Rbm::random(3, 6, 0.8, &mut rng).unwrap(), 3);
        let w: Vec<f64> = (0..3 * 6)
            .map(|i| ((i * 7 % 11) as f64 - 5.0) / 4.0)
            .collect();
        let fractional = FwModel::new(5, w, vec![0.2, 0.3, 0.5], 1.7, vec![0.1; 5]).unwrap();
        assert!(!fractional.is_standard());
        check_normalized(&fractional, 5);
    }

    #[test]
    fn potts_normalizes_over_all_states_and_samples_exactly() {
        let mut m = Potts::zeros(vec![3, 2, 4]).unwrap();
        let (h, j) = m.parameters_mut();
        h.iter_mut()
            .enumerate()
            .for_each(|(k, v)| *v = (k as f64 * 0.37).sin());
        j.iter_mut()
            .enumerate()
            .for_each(|(k, v)| *v = (k as f64 * 0.71).cos());
        let cards = vec![3u32, 2, 4];
        let mut all = Vec::new();
        for x in 0..24usize {
            let mut s = [0u8; 3];
            crate::data::synth::index_to_state(&cards, x, &mut s);
            all.extend_from_slice(&s);
        }
        let all = Dataset::from_flat(all, 3, cards).unwrap();
        let (lp, log_z) = m.log_probs(&all, &LogPartition::Auto).unwrap();
        assert!(log_z.is_exact());
        let total: f64 = lp.iter().map(|x| x.exp()).sum();
        assert!((total - 1.0).abs() < 1e-12, "{total}");
        let x = m.sample(5, &Sampling::Auto, &mut rng_from_seed(1)).unwrap();
        assert_eq!((x.n_samples(), x.n_vars()), (5, 3));
        let g = m
            .sample(5, &Sampling::Gibbs { steps: 3 }, &mut rng_from_seed(1))
            .unwrap();
        assert_eq!((g.n_samples(), g.cardinalities()), (5, &[3, 2, 4][..]));
    }

    #[test]
    fn rbm_ais_brackets_the_exact_figure_through_the_trait() {
        let rbm = Rbm::random(12, 5, 0.4, &mut rng_from_seed(1)).unwrap();
        let exact = rbm.log_partition(&LogPartition::Exact).unwrap();
        let opts = AisOptions {
            schedule: AisSchedule::linear(300).unwrap(),
            chains: 64,
            seed: 5,
            base_b: None,
            interrupt: None,
        };
        let ais = rbm.log_partition(&LogPartition::Ais(opts)).unwrap();
        assert_eq!(ais.method, Method::Ais);
        assert!(ais.lower <= ais.value && ais.value <= ais.upper);
        assert!((ais.value - exact.value).abs() < 5.0 * ais.stderr + 0.02);
        // Auto on a small model is exact.
        assert!(rbm.log_partition(&LogPartition::Auto).unwrap().is_exact());
    }

    #[test]
    fn sampling_rule_is_exact_when_affordable_and_matches_the_exact_samplers() {
        let m = Fvbm::random(6, 0.5, fvbm::Convention::Spin, &mut rng_from_seed(2)).unwrap();
        let a = m
            .sample(50, &Sampling::Auto, &mut rng_from_seed(9))
            .unwrap();
        let b = fvbm::exact::sample(&m, 50, &mut rng_from_seed(9)).unwrap();
        assert_eq!(a.values(), b.values());
        let g = m
            .sample(20, &Sampling::Gibbs { steps: 50 }, &mut rng_from_seed(9))
            .unwrap();
        assert_eq!((g.n_samples(), g.n_vars()), (20, 6));
        assert_eq!(Sampling::Auto.resolve(false), Sampler::Gibbs(None));

        let rbm = Rbm::random(8, 3, 0.5, &mut rng_from_seed(4)).unwrap();
        let a = rbm
            .sample(30, &Sampling::Auto, &mut rng_from_seed(1))
            .unwrap();
        let v = rbm_exact::sample(&rbm, 30, &mut rng_from_seed(1)).unwrap();
        let b = crate::rbm::model::states_to_dataset(&v, 8).unwrap();
        assert_eq!(a.values(), b.values());
    }

    #[test]
    fn fractional_fw_exact_samples_follow_its_probabilities() {
        let w: Vec<f64> = (0..2 * 4).map(|i| (i as f64 - 3.5) / 2.0).collect();
        let m = FwModel::new(3, w, vec![0.4, 0.6], 1.3, vec![0.2, -0.1, 0.0]).unwrap();
        let (lp, _) = m
            .log_probs(&all_binary_states(3), &LogPartition::Exact)
            .unwrap();
        let n = 40_000;
        let x = m.sample(n, &Sampling::Auto, &mut rng_from_seed(6)).unwrap();
        let mut counts = [0usize; 8];
        for row in x.values().outer_iter() {
            counts[row
                .iter()
                .enumerate()
                .map(|(i, &b)| (b as usize) << i)
                .sum::<usize>()] += 1;
        }
        for (c, l) in counts.iter().zip(&lp) {
            let p = l.exp();
            let se = (p * (1.0 - p) / n as f64).sqrt();
            assert!((*c as f64 / n as f64 - p).abs() < 5.0 * se + 1e-4);
        }
    }

    #[test]
    fn any_model_reads_every_format() {
        let dir = tempfile::tempdir().unwrap();
        let meta = Metadata::new();
        let mut rng = rng_from_seed(8);
        let fsll = FsllModel::new(&[2, 3], vec![(1, 0.5)]).unwrap();
        let fvbm = Fvbm::random(4, 0.5, fvbm::Convention::Binary, &mut rng).unwrap();
        let rbm = Rbm::random(5, 2, 0.5, &mut rng).unwrap();
        let fw = FwModel::new(
            2,
            vec![1.0, -1.0, 0.5, 0.0, 2.0, 0.1],
            vec![0.25, 0.75],
            1.5,
            vec![0.1, 0.2],
        )
        .unwrap();
        let p = |name: &str| dir.path().join(name);
        Model::save(&fsll, &p("a"), &meta).unwrap();
        Model::save(&fvbm, &p("b"), &meta).unwrap();
        Model::save(&rbm, &p("c"), &meta).unwrap();
        Model::save(&fw, &p("d"), &meta).unwrap();
        let potts = Potts::new(vec![2, 3], vec![0.1, 0.2, 0.3, 0.4, 0.5], vec![0.5; 6]).unwrap();
        Model::save(&potts, &p("e"), &meta).unwrap();
        let kinds: Vec<&str> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|f| AnyModel::load(&p(f)).unwrap().kind())
            .collect();
        assert_eq!(kinds, ["fsll", "fvbm", "rbm", "frank-wolfe", "potts"]);
        assert_eq!(<Rbm as Model>::load(&p("c")).unwrap(), rbm);
        assert!(AnyModel::load(&p("missing")).is_err());
    }
}
