//! The flags of `rbm fit --algo frank-wolfe` (flattened into `rbm fit`'s). The learner's are
//! serialized under the settings schema's names ([`FwParams`]) and put over its defaults
//! (`settings::overlay`), each default read from the struct; the rest (`--test`, AIS,
//! `--selected-output`, `--samples`) are the command's, not serialized.

use boltzkit::rbm::frank_wolfe::FwParams;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// Flags of `--algo frank-wolfe`.
#[derive(Debug, Args, Serialize)]
#[command(next_help_heading = "Frank-Wolfe options (--algo frank-wolfe)")]
pub(super) struct FwFlags {
    /// T: the most hidden units (one is added per iteration)
    #[arg(long, value_name = "T", default_value_t = FwParams::default().max_units)]
    pub(super) max_units: usize,
    /// λ of the penalty λ/2 E_q‖w‖² (Eqs. 6, 9)
    #[arg(long, value_name = "X", default_value_t = FwParams::default().lambda)]
    pub(super) lambda: f64,
    /// η of the bias update (Eq. 10); --lr is not used by frank-wolfe
    #[arg(long, value_name = "X", default_value_t = FwParams::default().learning_rate)]
    #[serde(rename = "bias_learning_rate")]
    pub(super) bias_lr: f64,
    /// S: persistent chains, i.e. model samples per iteration [default: the library's, 2000]
    #[arg(long, value_name = "S")]
    #[serde(skip)]
    pub(super) chains: Option<usize>,
    /// The old name of --chains
    #[arg(long = "samples", value_name = "S", hide = true)]
    #[serde(skip)]
    pub(super) samples_alias: Option<usize>,
    /// L-BFGS iterations per subproblem (Eq. 9)
    #[arg(long, value_name = "N", default_value_t = FwParams::default().lbfgs_iterations)]
    #[serde(rename = "lbfgs_iterations")]
    pub(super) lbfgs_iters: usize,
    /// L-BFGS gradient tolerance
    #[arg(long, value_name = "X", default_value_t = FwParams::default().lbfgs_grad_tol)]
    pub(super) lbfgs_tol: f64,
    /// Starts of each subproblem (Eq. 9 is not convex): one small random start, the others
    /// the ±1 templates of random data rows; the best is kept
    #[arg(long, value_name = "N", default_value_t = FwParams::default().subproblem_starts)]
    #[serde(rename = "subproblem_starts")]
    pub(super) starts: usize,
    /// Most bias steps (Eq. 10) per iteration
    #[arg(long, value_name = "N", default_value_t = FwParams::default().bias_steps)]
    pub(super) bias_steps: usize,
    /// Bias steps stop when the RMS bias gradient is below this
    #[arg(long, value_name = "X", default_value_t = FwParams::default().bias_tol)]
    pub(super) bias_tol: f64,
    /// Away steps: remove a unit when that raises the objective (Guélat-Marcotte)
    #[arg(long)]
    #[serde(rename = "away_steps")]
    pub(super) away: bool,
    /// Fractional RBM: free α with this gradient step, sampled by Metropolis-Hastings (0: α = t)
    #[arg(long, value_name = "STEP")]
    pub(super) free_alpha: Option<f64>,
    /// Test data: AIS test log-likelihood at every size evaluation
    #[arg(long, value_name = "FILE")]
    #[serde(skip)]
    pub(super) test: Option<PathBuf>,
    /// AIS chains for --test
    #[arg(long, value_name = "N", default_value_t = 100)]
    #[serde(skip)]
    pub(super) ais_chains: usize,
    /// AIS steps (linear schedule) for --test; 0: the standard 14,500-step schedule
    #[arg(long, value_name = "N", default_value_t = 1000)]
    #[serde(skip)]
    pub(super) ais_steps: usize,
    /// Also write the model at the selected size here
    #[arg(long, value_name = "FILE")]
    #[serde(skip)]
    pub(super) selected_output: Option<PathBuf>,
    /// Objective guard: while the exact training log-likelihood is cheap (at most 20 units),
    /// stop and keep the best model when it stays more than this many nats below its best for
    /// --fall-patience iterations in a row (inf: off)
    #[arg(long, value_name = "NATS", default_value_t = FwParams::default().fall_tol)]
    pub(super) fall_tol: f64,
    /// Iterations in a row the guard's fall must last
    #[arg(long, value_name = "N", default_value_t = FwParams::default().fall_patience)]
    pub(super) fall_patience: usize,
}
