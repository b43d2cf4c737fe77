//! Synthetic data with exact truths: explicit distributions over all states, the 2-D Ising
//! model and random Bayesian networks of the FSLL paper (Sec. 3.4), the bars & stripes and
//! shifting bar sets of the S-DCP paper (Sec. 4.1), and the Artificial Modes of the pop-CD paper
//! (Sec. 4.1).
//!
//! A joint state is indexed as a mixed-radix number, variable 0 the least significant digit
//! ([`state_index`], [`index_to_state`]). Exact tables over all states are built for at most
//! [`MAX_EXACT_VARS`] binary variables.

mod bayes_net;
mod distribution;
mod ising;
mod modes;
mod patterns;
mod state;

pub use bayes_net::{BayesNet, MAX_PARENTS};
#[cfg(test)]
pub(crate) use distribution::tests::{chi_square, state_counts};
pub use distribution::{sample_states, sample_states_memory, table_memory, Distribution};
pub use ising::IsingGrid;
pub use modes::ArtificialModes;
pub use patterns::{BarsAndStripes, ShiftingBar, MAX_BARS_AND_STRIPES_D};
pub use state::{index_to_state, n_states, state_index, MAX_EXACT_VARS, MAX_STATES};
