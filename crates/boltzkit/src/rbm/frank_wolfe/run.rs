//! [`run_reported`]: a Frank-Wolfe run with its outputs, the one run of the command line's
//! `rbm fit --algo frank-wolfe` and of `repro frank-wolfe`: the test log-likelihood at every
//! size evaluation ([`TestLogLikelihood`]), the JSONL log ([`FwLog`]) and a report after every
//! iteration for a progress display.

use super::learner::FrankWolfe;
use super::log::FwLog;
use super::record::{FwFit, FwProgress};
use super::test_ll::TestLogLikelihood;
use crate::error::Result;
use crate::fit::{Control, Observer};
use crate::io::MetricLog;

/// Runs `fw` with the test log-likelihood (when given) and the JSONL log (when given); after
/// every iteration `report(units, status)` is called with the model's units and, at a size
/// evaluation, a status line of its figures (`gap 1.23 test -95.67`; [`evaluation_status`]).
pub fn run_reported(
    fw: FrankWolfe<'_>,
    test: Option<TestLogLikelihood>,
    log: Option<MetricLog>,
    report: impl FnMut(usize, Option<&str>),
) -> Result<FwFit> {
    let mut fw = fw;
    if let Some(t) = test {
        fw = fw.add_observer(t);
    }
    if let Some(l) = log {
        fw = fw.add_observer(FwLog::new(l));
    }
    fw.add_observer(Report(report)).run()
}

/// The figures of a size evaluation as one line: the train/validation gap and the test
/// log-likelihood, each when measured (`gap 1.23 test -95.67`).
pub fn evaluation_status(p: &FwProgress<'_>) -> String {
    let mut msg = String::new();
    if let Some(g) = p.metrics.get("gap") {
        msg += &format!("gap {g:.2} ");
    }
    if let Some(ll) = p.metrics.get("test_ll") {
        msg += &format!("test {ll:.2}");
    }
    msg
}

/// The observer of [`run_reported`]'s `report`.
struct Report<F>(F);

impl<'p, F: FnMut(usize, Option<&str>)> Observer<FwProgress<'p>> for Report<F> {
    fn observe(&mut self, p: &mut FwProgress<'p>) -> Result<Control> {
        let status = p.evaluation.then(|| evaluation_status(p));
        (self.0)(p.model.n_units(), status.as_deref());
        Ok(Control::Continue)
    }
}
