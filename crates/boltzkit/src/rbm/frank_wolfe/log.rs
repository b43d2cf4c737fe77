//! [`FwLog`]: the JSONL metric log of a Frank-Wolfe run, one record per iteration.

use super::record::FwProgress;
use crate::error::Result;
use crate::fit::{Control, Observer};
use crate::io::{MetricLog, MetricRecord};
use std::collections::BTreeMap;

/// One JSONL record per iteration: `step` = iteration, `epoch` = units, the time split and the
/// size-evaluation metrics when there are some.
pub struct FwLog(MetricLog);

impl FwLog {
    /// Appends to `log`.
    pub fn new(log: MetricLog) -> Self {
        FwLog(log)
    }
}

impl<'p> Observer<FwProgress<'p>> for FwLog {
    fn observe(&mut self, p: &mut FwProgress<'p>) -> Result<Control> {
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
        })?;
        Ok(Control::Continue)
    }
}
