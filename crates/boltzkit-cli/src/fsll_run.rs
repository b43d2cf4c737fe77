//! FSLL work of `fsll fit`: fit with a progress spinner and measure the result against the
//! data and (optionally) the true distribution (the measures are `boltzkit_repro::fsll`'s).

use crate::progress;
use anyhow::Context;
use boltzkit::data::Dataset;
use boltzkit::fit::{Control, Learner, Run};
use boltzkit::fsll::{FsllFit, FsllParams, Progress};
pub use boltzkit_repro::fsll::{kl_to_truth, outcome};
use std::time::Instant;

/// Fits with a spinner showing iteration, cost and #basis; prints the learner's warnings.
pub fn fit_with_progress(
    data: &Dataset,
    params: &FsllParams,
    quiet: bool,
) -> anyhow::Result<FsllFit> {
    let spin = progress::spinner("learning FSLL", quiet);
    let start = Instant::now();
    let run = Run::new()
        .observe_every(
            |p: &mut Progress| {
                spin.set_message(format!(
                    "learning FSLL: iteration {}, cost {:.5}, {} basis functions",
                    p.iteration, p.cost, p.n_basis
                ));
                Ok(Control::Continue)
            },
            16,
        )
        .interrupt(crate::interrupt::flag());
    let fit = params
        .check()?
        .fit_with(data, run)
        .context("learning the FSLL model")?;
    spin.finish_and_clear();
    if !quiet {
        for w in fit.record.warnings() {
            eprintln!("warning: {w}");
        }
        eprintln!(
            "learned {} basis functions in {} iterations ({:.3} s)",
            fit.model.n_basis(),
            fit.record.iterations,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(fit)
}
