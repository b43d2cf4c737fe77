//! Optimizers shared by the learners.
//!
//! | module | what it holds |
//! |---|---|
//! | [`lbfgs`] | L-BFGS with a weak-Wolfe line search ([`lbfgs::minimize`]) |

pub mod lbfgs;
