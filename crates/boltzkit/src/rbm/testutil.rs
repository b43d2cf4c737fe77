//! Brute-force references for tests: enumeration of the full joint of tiny RBMs.

use super::Rbm;
use crate::linalg::log_sum_exp;

/// Every 0/1 vector of length `n`, unit 0 the least significant bit.
pub fn all_states(n: usize) -> Vec<Vec<u8>> {
    (0..1u32 << n)
        .map(|s| (0..n).map(|i| ((s >> i) & 1) as u8).collect())
        .collect()
}

/// `ln Z = ln Σ_{v,h} e^{−E(v,h)}` over the full joint.
pub fn brute_log_z(rbm: &Rbm) -> f64 {
    let hs = all_states(rbm.n_hidden());
    let terms: Vec<f64> = all_states(rbm.n_visible())
        .iter()
        .flat_map(|v| hs.iter().map(move |h| -rbm.energy(v, h).unwrap()))
        .collect();
    log_sum_exp(&terms)
}
