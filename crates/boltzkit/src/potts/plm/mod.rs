//! The pseudo-likelihood engine for Potts models (binary FVBMs are `q = 2`): symmetric and
//! asymmetric PLM with L2 (plmc's, EVcouplings'/GREMLIN's and CCMpred's scalings), optional
//! group L1 and sequence weights, by L-BFGS over gradients from per-site kernels that use the
//! one-hot structure of the data (see `kernel`).
//!
//! ```
//! use boltzkit::data::Dataset;
//! use boltzkit::fit::Learner;
//! use boltzkit::potts::plm::PlmParams;
//! // 3 sites, 3 states; site 1 copies site 0.
//! let rows: Vec<u8> = (0..300u32).flat_map(|k| {
//!     let a = (k % 3) as u8;
//!     [a, a, ((k / 3) % 3) as u8]
//! }).collect();
//! let data = Dataset::from_flat(rows, 3, vec![3, 3, 3])?;
//! let fit = PlmParams { lambda_j: 0.01, ..PlmParams::default() }.check()?.fit(&data)?;
//! assert!(fit.record.stop.is_converged());
//! let m = fit.model.zero_sum_gauge();
//! let strong: f64 = m.coupling(0, 1).iter().map(|v| v * v).sum();
//! let weak: f64 = m.coupling(0, 2).iter().map(|v| v * v).sum();
//! assert!(strong > 100.0 * weak);
//! # Ok::<(), boltzkit::Error>(())
//! ```

mod asymmetric;
mod data;
mod kernel;
mod learner;
mod params;
mod precondition;
mod symmetric;
#[cfg(test)]
mod tests;

pub use data::PlmData;
/// The objective-window stop, shared with the binary L-BFGS solver ([`crate::fvbm::plm`]).
pub(crate) use learner::ObjectiveWindow;
pub use learner::{PlmProgress, PlmRecord};
pub use params::{CheckedPlmParams, LambdaScale, PlmMode, PlmParams};
