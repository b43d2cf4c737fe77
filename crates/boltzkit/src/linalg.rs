//! The one home of fast math shared by the models. This face declares the parts and re-exports
//! their items, so callers write `crate::linalg::sgemm`:
//!
//! | module | what it holds |
//! |---|---|
//! | `reduce` | deterministic parallel `f64` reductions: [`deterministic_sum`], [`log_sum_exp`], [`exp_normalize`] |
//! | `gemm` | dense products: [`sgemm`], [`sgemm_par`] (fixed blocks over threads), [`dgemm`] |
//! | `fast_math` | scalar branch-free `f32` `exp` / `ln` / `σ` / softplus and their `f64` references |
//! | `multiversion` | the `multiversion!` macro: a slice kernel compiled for AVX2 and the baseline |
//! | `elementwise` | maps over slices: [`sigmoid_inplace`], [`softplus_inplace`], [`add_row_bias`], [`prefetch`] |
//! | `lane_sums` | `f32` terms summed in fixed `f64` lanes: softplus sums, AIS increments, pop-CD weights, [`max_abs`] |
//! | [`binary`] | products with a sparse 0/1 matrix as sums of selected rows |
//! | [`pl_terms`] | the per-unit terms of a binary pseudo-likelihood in `f64` |

#[macro_use]
mod multiversion;

pub mod binary;
mod elementwise;
mod fast_math;
mod gemm;
mod lane_sums;
pub mod pl_terms;
mod reduce;

pub use elementwise::{add_row_bias, prefetch, sigmoid_inplace, softplus_inplace};
pub use fast_math::{
    fast_exp, fast_ln, fast_log1p_exp_neg, fast_sigmoid, fast_softplus, sigmoid_f64, softplus_f64,
};
pub use gemm::{dgemm, sgemm, sgemm_par, Op, GEMM_BLOCK};
pub use lane_sums::{
    linear_minus_bernoulli_log_prob, max_abs, scale_sum_log1p, sigmoid_with_softplus_gain,
    softplus_scaled_diff_sum, softplus_sum, softplus_sum_f64_fast, softplus_sum_given_sigmoid,
    SOFTPLUS_SERIES_MAX_STEP,
};
pub use reduce::{deterministic_sum, exp_normalize, log_sum_exp};
