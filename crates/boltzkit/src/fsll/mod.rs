//! The full-span log-linear model (Takabatake & Akaho): an n-th order Boltzmann machine over
//! finite discrete variables, learned greedily under an MDL cost.
//!
//! * [`basis`]: local and global basis functions (Eqs. 3-5) and the index layout;
//! * [`transform`]: fast forward/backward transforms (Secs. 2.2.2-2.2.3) and dense twins;
//! * [`penalty`]: the MDL term `r_y` of Eq. (7) by table lookups;
//! * [`scan`]: candidate Δ (Eqs. 19-20) and the lower bound (Eq. 21);
//! * [`xor`]: the in-place XOR update of `θ̄` fused with the scan;
//! * [`learn`]: Algorithm 1 with both update paths;
//! * [`model`]: [`FsllModel`] (probabilities, likelihood).

pub mod basis;
mod file;
pub mod learn;
pub mod model;
pub mod penalty;
pub mod scan;
pub mod transform;
pub mod xor;

pub use basis::{Layout, LocalBasis};
pub use file::FORMAT;
pub use learn::{
    fit_memory_estimate, CheckedFsllParams, FitRecord, FsllFit, FsllParams, Progress, Step,
    StepKind, StopReason, TransformPath,
};
pub use model::FsllModel;

#[cfg(test)]
mod tests;
