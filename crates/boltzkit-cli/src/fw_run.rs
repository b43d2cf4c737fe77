//! Frank-Wolfe runs with progress, an optional AIS test log-likelihood at every size
//! evaluation and an optional JSONL log (shared by `rbm fit --algo frank-wolfe` and
//! `repro frank-wolfe`).

use anyhow::Context;
use boltzkit::data::Dataset;
use boltzkit::estimate::Method;
use boltzkit::io::{MetricLog, MetricRecord};
use boltzkit::rbm::ais::AisSchedule;
use boltzkit::rbm::frank_wolfe::{FrankWolfe, FwFit, FwObserver, FwProgress};
use boltzkit::rbm::loglik::{average_log_likelihood, LogLikParams};
use boltzkit::rng::derive_seed;
use indicatif::ProgressBar;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// AIS settings for the test log-likelihood at each size evaluation.
#[derive(Debug, Clone)]
pub struct AisTest {
    /// The test data.
    pub data: Dataset,
    /// Chains.
    pub chains: usize,
    /// The schedule.
    pub schedule: AisSchedule,
    /// Seed; evaluation at `u` units uses `derive_seed(seed, u)`.
    pub seed: u64,
}

/// The AIS schedule of `steps` linear steps (0: the standard 14,500-step one).
pub fn ais_schedule(steps: usize) -> boltzkit::Result<AisSchedule> {
    if steps == 0 {
        Ok(AisSchedule::standard())
    } else {
        AisSchedule::linear(steps)
    }
}

impl AisTest {
    /// `(test LL, its standard error from ln Ẑ, ln Ẑ)` of a standard model, by forward AIS
    /// ([`average_log_likelihood`] with the base-rate model of the test data).
    pub fn evaluate(
        &self,
        rbm: &boltzkit::rbm::Rbm,
        seed_index: u64,
    ) -> boltzkit::Result<(f64, f64, f64)> {
        let params = LogLikParams::new(Method::Ais)
            .schedule(self.schedule.clone())
            .chains(self.chains)
            .seed(derive_seed(self.seed, seed_index));
        let est = average_log_likelihood(rbm, &self.data, &params)?;
        let log_z = est
            .log_z()
            .ok_or_else(|| boltzkit::Error::Internal("forward AIS gave no ln Z".into()))?;
        Ok((est.upper().value, log_z.stderr, log_z.value))
    }
}

struct AisObserver(AisTest);

impl FwObserver for AisObserver {
    fn observe(&mut self, p: &mut FwProgress<'_>) -> boltzkit::Result<()> {
        if !p.evaluation || !p.model.is_standard() {
            return Ok(());
        }
        let (ll, se, log_z) = self
            .0
            .evaluate(&p.model.to_rbm()?, p.model.n_units() as u64)?;
        p.metrics.insert("test_ll".into(), ll);
        p.metrics.insert("test_ll_se".into(), se);
        p.metrics.insert("test_log_z".into(), log_z);
        Ok(())
    }
}

struct BarObserver(ProgressBar);

impl FwObserver for BarObserver {
    fn observe(&mut self, p: &mut FwProgress<'_>) -> boltzkit::Result<()> {
        self.0.set_position(p.model.n_units() as u64);
        if p.evaluation {
            let mut msg = String::new();
            if let Some(g) = p.metrics.get("gap") {
                msg += &format!("gap {g:.2} ");
            }
            if let Some(ll) = p.metrics.get("test_ll") {
                msg += &format!("test {ll:.2}");
            }
            self.0.set_message(msg);
        }
        Ok(())
    }
}

/// One JSONL record per iteration: `step` = iteration, `epoch` = units, the time split and the
/// size-evaluation metrics when there are some.
struct LogObserver(MetricLog);

impl FwObserver for LogObserver {
    fn observe(&mut self, p: &mut FwProgress<'_>) -> boltzkit::Result<()> {
        let r = p.iteration;
        let mut metrics: BTreeMap<String, f64> = p.metrics.clone();
        for (k, v) in [
            ("alpha", r.alpha),
            ("subproblem_f", r.subproblem_f),
            ("lbfgs_iterations", r.lbfgs_iterations as f64),
            ("bias_steps", r.bias_steps as f64),
            ("bias_grad_rms", r.bias_grad_rms),
            ("sampling_s", r.sampling_s),
            ("subproblem_s", r.subproblem_s),
            ("bias_s", r.bias_s),
            ("other_s", r.other_s),
            ("removed", if r.removed.is_some() { 1.0 } else { 0.0 }),
        ] {
            metrics.insert(k.into(), v);
        }
        self.0.append(MetricRecord {
            step: r.iteration as u64,
            epoch: r.units as u64,
            wall_s: p.wall_s,
            metrics,
        })
    }
}

/// Runs `fw` with a progress bar over units (unless `quiet`), the AIS test evaluation and the
/// JSONL log when given.
pub fn run(
    fw: FrankWolfe<'_>,
    quiet: bool,
    ais: Option<AisTest>,
    log: Option<&PathBuf>,
) -> anyhow::Result<FwFit> {
    let bar = crate::progress::bar(fw.params().max_units as u64, "units", quiet);
    let mut fw = fw;
    if let Some(a) = ais {
        fw = fw.add_observer(AisObserver(a));
    }
    if let Some(path) = log {
        let l = MetricLog::create(path)
            .with_context(|| format!("creating the log {}", path.display()))?;
        fw = fw.add_observer(LogObserver(l));
    }
    fw = fw.add_observer(BarObserver(bar.clone()));
    let fit = fw.run()?;
    bar.finish_and_clear();
    Ok(fit)
}
