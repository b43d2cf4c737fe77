//! The paper protocols of boltzkit: each reproduced paper is one module shaped
//! plan → run → result → writers. The commands that run them (`boltzkit repro`, `gen`, `lab`,
//! `bench`: flags, progress display, refusals before any work) are the command line's
//! (`boltzkit-cli`); this crate has no flags and never prints.
//!
//! | module | paper | plan | result |
//! |---|---|---|---|
//! | [`fsll`] | Takabatake & Akaho, full-span log-linear models (Table 1) | [`fsll::FsllPlan`] | [`fsll::FsllReport`] |
//! | [`bslm`] | Nguyen & Wood, BSLM for the MPLE of FVBMs (Sec. 5, Fig. 1) | [`bslm::BslmPlan`] | [`bslm::BslmReport`] |
//! | [`sdcp`] | Upadhya & Sastry, S-DCP and CS-DCP (Sec. 4, Figs. 1-3) | [`sdcp::SdcpPlan`] | [`sdcp::SdcpReport`] |
//! | [`frank_wolfe`] | Ping, Liu & Ihler, infinite RBMs by Frank-Wolfe (Figs. 1-2) | [`frank_wolfe::FwPlan`] | [`frank_wolfe::FwReport`] |
//! | [`popcd`] | Krause, Fischer & Igel, population-CD (Figs. 1-2, Table 1) | [`popcd::PopcdPlan`] | [`popcd::PopcdReport`] |
//! | [`bench`](mod@bench) | the timings of `boltzkit bench` (BENCHMARKS.md): RBM epochs, AIS, exact ln Z | | [`bench::Timings`] |
//! | [`usage`] | [`UsageError`]: a setting refused after parsing (the command line exits 2) | | |
//! | [`lab`] | the gradient lab's parallel runner and tables (used by `popcd` and `boltzkit lab`) | | |
//! | [`plot`] | PNG line charts and image tiles (the figures, and `boltzkit rbm plot`) | | |
//! | [`data`] | where the real data sets are (`shared/data`), binary readers | | |
//!
//! A plan holds typed settings with the paper's values as defaults; `check()` validates it
//! (an invalid setting is a [`boltzkit::Error::InvalidParam`] naming the flag); `run(&plan,
//! progress)` returns a result that derives `Serialize` (the command line's `--json` summary
//! is that result), and the writers turn a result into CSV, Markdown and PNG files. Long runs
//! report through [`Progress`]; this crate never prints.
//!
//! ```
//! use boltzkit_repro::bslm::{self, BslmPlan};
//! let plan = BslmPlan { dims: vec![3], reps: 1, samples: 500, ..BslmPlan::default() };
//! let report = bslm::run(&plan, &boltzkit_repro::Silent)?;
//! assert!(report.all_monotone);
//! assert_eq!(report.rows[0].d, 3);
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! Errors are `anyhow::Error` with context naming the dataset, trial or file at fault: the
//! protocols are applications of the library, and their callers print the chain.

pub mod bench;
pub mod bracket;
pub mod bslm;
pub mod data;
pub mod demo;
pub mod frank_wolfe;
pub mod fsll;
pub mod lab;
pub mod plot;
pub mod popcd;
pub mod popcd_runs;
pub mod sdcp;
pub mod usage;

pub use usage::UsageError;

/// Where a long run is. The protocols call these hooks; the command line draws them as
/// progress bars on a terminal and as periodic lines otherwise. Every hook does nothing by
/// default, so [`Silent`] is an empty impl. Hooks may be called from several threads at once.
pub trait Progress: Sync {
    /// A stage of `len` steps begins (`None`: length unknown), replacing the previous one.
    fn stage(&self, label: &str, len: Option<u64>) {
        let _ = (label, len);
    }
    /// `n` more steps of the current stage are done.
    fn advance(&self, n: u64) {
        let _ = n;
    }
    /// The current stage is at step `pos` (for stages that can move back, e.g. units that
    /// Frank-Wolfe removes).
    fn set_position(&self, pos: u64) {
        let _ = pos;
    }
    /// What the current stage is doing now (e.g. `d=5 rep 2`).
    fn message(&self, text: &str) {
        let _ = text;
    }
    /// A line worth keeping in the log, e.g. the figures of a finished trial.
    fn note(&self, line: &str) {
        let _ = line;
    }
    /// The current stage is over.
    fn finish(&self) {}
}

/// Progress that goes nowhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {}
