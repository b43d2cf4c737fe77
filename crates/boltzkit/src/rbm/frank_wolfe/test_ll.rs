//! The test log-likelihood of a Frank-Wolfe run at every size evaluation: forward AIS, or the
//! bracket [RAISE, forward AIS] of [`crate::rbm::loglik`] (computed there, not here).
//!
//! [`TestLogLikelihood`] is both a scorer ([`TestLogLikelihood::evaluate`]: one model, one
//! seed index) and an [`Observer`] of [`FrankWolfe`](super::FrankWolfe): at every size
//! evaluation of a standard model it puts in the evaluation's metrics
//!
//! | metric | what |
//! |---|---|
//! | `test_ll` | forward AIS: `mean −F(v) − ln Ẑ` (optimistic in expectation) |
//! | `test_ll_se` | its standard error (that of `ln Ẑ`) |
//! | `test_log_z` | forward AIS's `ln Ẑ` |
//! | `test_raise`, `test_raise_se` | with [`Method::Bracket`]: RAISE's conservative end and its standard error |
//!
//! The evaluation at `u` units draws its chains from `derive_seed(seed, u)`. Fractional
//! models (free `α`) are skipped: AIS for them is not built.
//!
//! ```
//! use boltzkit::data::synth::BarsAndStripes;
//! use boltzkit::estimate::Method;
//! use boltzkit::rbm::ais::AisSchedule;
//! use boltzkit::rbm::frank_wolfe::{FrankWolfe, FwParams, TestLogLikelihood};
//! let data = BarsAndStripes::new(3, false)?.dataset()?;
//! let test = TestLogLikelihood::new(data.clone(), Method::Bracket, 7)?
//!     .schedule(AisSchedule::linear(100)?)
//!     .chains(20);
//! let params = FwParams::new().max_units(4).samples(100).eval_every(2).seed(3);
//! let fit = FrankWolfe::new(&data, params)?.add_observer(test).run()?;
//! let last = fit.record.evaluations.last().unwrap();
//! assert!(last.metrics["test_raise"] <= last.metrics["test_ll"] + 3.0);
//! # Ok::<(), boltzkit::Error>(())
//! ```

use super::record::FwProgress;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::estimate::Method;
use crate::fit::{Control, Observer};
use crate::rbm::ais::AisSchedule;
use crate::rbm::loglik::{average_log_likelihood, LogLikParams, LogLikelihood};
use crate::rbm::model::{base_rate_biases, Rbm};
use crate::rng::derive_seed;
use std::collections::BTreeMap;

/// A test log-likelihood by forward AIS or the bracket, at any seed index (module docs).
#[derive(Debug, Clone)]
pub struct TestLogLikelihood {
    data: Dataset,
    method: Method,
    params: LogLikParams,
    seed: u64,
}

impl TestLogLikelihood {
    /// The test log-likelihood of `data` (binary) by `method` (`ais` or `bracket`) with the
    /// defaults of [`LogLikParams::new`] (the standard 14,500-step schedule, 100 forward
    /// chains, one RAISE chain per vector on every vector) and the base-rate model of `data`.
    pub fn new(data: Dataset, method: Method, seed: u64) -> Result<Self> {
        if !matches!(method, Method::Ais | Method::Bracket) {
            return Err(Error::param(
                "method",
                format!("a Frank-Wolfe test log-likelihood is ais or bracket, not {method}"),
            ));
        }
        let params = LogLikParams::new(method).base(base_rate_biases(&data)?);
        Ok(TestLogLikelihood {
            data,
            method,
            params,
            seed,
        })
    }

    /// The annealing schedule of both ends.
    pub fn schedule(mut self, schedule: AisSchedule) -> Self {
        self.params = self.params.schedule(schedule);
        self
    }

    /// Forward AIS chains, ≥ 1.
    pub fn chains(mut self, n: usize) -> Self {
        self.params = self.params.chains(n);
        self
    }

    /// RAISE chains per test vector, ≥ 1 (bracket only).
    pub fn raise_chains(mut self, m: usize) -> Self {
        self.params = self.params.raise_chains(m);
        self
    }

    /// RAISE on a seeded random subset of `n` test vectors (`None`: all; bracket only).
    pub fn raise_vectors(mut self, n: Option<usize>) -> Self {
        self.params = self.params.raise_vectors(n);
        self
    }

    /// The width (nats) above which a bracket is diagnosed as wide.
    pub fn max_width(mut self, x: f64) -> Self {
        self.params = self.params.max_width(x);
        self
    }

    /// The test data.
    pub fn data(&self) -> &Dataset {
        &self.data
    }

    /// `ais` or `bracket`.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The settings handed to [`average_log_likelihood`] (before the per-evaluation seed).
    pub fn params(&self) -> &LogLikParams {
        &self.params
    }

    /// The estimate for `rbm` with the chains of `derive_seed(seed, index)`:
    /// [`LogLikelihood::Ais`] or [`LogLikelihood::Bracket`].
    pub fn evaluate(&self, rbm: &Rbm, index: u64) -> Result<LogLikelihood> {
        let params = self.params.clone().seed(derive_seed(self.seed, index));
        average_log_likelihood(rbm, &self.data, &params)
    }

    /// The metrics of the module docs for `est`, put into `metrics`.
    pub fn insert_metrics(est: &LogLikelihood, metrics: &mut BTreeMap<String, f64>) -> Result<()> {
        let log_z = est.log_z().ok_or_else(|| {
            Error::Internal(format!("a {} test estimate has no ln Ẑ", est.method()))
        })?;
        metrics.insert("test_ll".into(), est.upper().value);
        metrics.insert("test_ll_se".into(), log_z.stderr);
        metrics.insert("test_log_z".into(), log_z.value);
        if let LogLikelihood::Bracket(b) = est {
            metrics.insert("test_raise".into(), b.raise.value);
            metrics.insert("test_raise_se".into(), b.raise.stderr);
        }
        Ok(())
    }
}

impl<'p> Observer<FwProgress<'p>> for TestLogLikelihood {
    fn start(&mut self, p: &mut FwProgress<'p>) -> Result<()> {
        self.params.check()?;
        if self.data.n_vars() != p.model.n_visible() {
            return Err(Error::Shape {
                op: "TestLogLikelihood".into(),
                expected: format!("test data with {} variables", p.model.n_visible()),
                found: self.data.n_vars().to_string(),
            });
        }
        Ok(())
    }

    fn observe(&mut self, p: &mut FwProgress<'p>) -> Result<Control> {
        if p.evaluation && p.model.is_standard() {
            let est = self.evaluate(&p.model.to_rbm()?, p.model.n_units() as u64)?;
            Self::insert_metrics(&est, p.metrics)?;
        }
        Ok(Control::Continue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synth::BarsAndStripes;
    use crate::rbm::exact;
    use crate::rbm::frank_wolfe::{FrankWolfe, FwParams};

    fn bas() -> Dataset {
        BarsAndStripes::new(3, false).unwrap().dataset().unwrap()
    }

    /// The observer's figures are `rbm::loglik`'s at the seed of the evaluation's size, and
    /// both ends sit around the exact figure of the model FW grew.
    #[test]
    fn observer_reports_loglik_figures_at_each_size() {
        let data = bas();
        for method in [Method::Ais, Method::Bracket] {
            let test = TestLogLikelihood::new(data.clone(), method, 11)
                .unwrap()
                .schedule(AisSchedule::linear(400).unwrap())
                .chains(50)
                .raise_chains(3);
            let params = FwParams::new()
                .max_units(6)
                .samples(200)
                .eval_every(3)
                .seed(3);
            let fit = FrankWolfe::new(&data, params)
                .unwrap()
                .add_observer(test.clone())
                .run()
                .unwrap();
            let evals = &fit.record.evaluations;
            assert_eq!(evals.iter().map(|e| e.units).collect::<Vec<_>>(), [3, 6]);
            let last = evals.last().unwrap();
            let rbm = fit.model.to_rbm().unwrap();
            let want = average_log_likelihood(
                &rbm,
                &data,
                &test.params().clone().seed(derive_seed(11, 6)),
            )
            .unwrap();
            let mut metrics = BTreeMap::new();
            TestLogLikelihood::insert_metrics(&want, &mut metrics).unwrap();
            for (k, v) in &metrics {
                assert_eq!(last.metrics[k].to_bits(), v.to_bits(), "{method} {k}");
            }
            assert_eq!(
                metrics.contains_key("test_raise"),
                method == Method::Bracket
            );
            let truth = exact::average_log_likelihood(&rbm, &data).unwrap();
            let se = metrics["test_ll_se"];
            assert!(
                metrics["test_ll"] + 3.0 * se + 0.05 > truth,
                "{metrics:?} vs {truth}"
            );
            if method == Method::Bracket {
                let se = metrics["test_raise_se"];
                assert!(
                    metrics["test_raise"] - 3.0 * se - 0.05 < truth,
                    "{metrics:?}"
                );
            }
        }
    }

    #[test]
    fn refuses_other_methods_and_other_widths() {
        for m in [Method::Exact, Method::Raise, Method::ReverseAisFromData] {
            assert!(TestLogLikelihood::new(bas(), m, 0).is_err(), "{m}");
        }
        let narrow = Dataset::from_flat(vec![0, 1, 1, 0], 2, vec![2; 2]).unwrap();
        let test = TestLogLikelihood::new(narrow, Method::Ais, 0).unwrap();
        let params = FwParams::new()
            .max_units(2)
            .samples(20)
            .eval_every(1)
            .seed(3);
        let err = FrankWolfe::new(&bas(), params)
            .unwrap()
            .add_observer(test)
            .run()
            .unwrap_err();
        assert!(
            err.to_string().contains("test data with 9 variables"),
            "{err}"
        );
        let bad = TestLogLikelihood::new(bas(), Method::Ais, 0)
            .unwrap()
            .chains(0);
        let params = FwParams::new().max_units(2).samples(20).seed(3);
        assert!(FrankWolfe::new(&bas(), params)
            .unwrap()
            .add_observer(bad)
            .run()
            .is_err());
    }
}
