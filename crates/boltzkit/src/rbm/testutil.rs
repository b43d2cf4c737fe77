//! Brute-force references for tests: enumeration of the full joint of tiny RBMs.

use super::Rbm;
use crate::linalg::log_sum_exp;
use crate::rng::rng_from_seed;
use rand::Rng;

/// `n` mini-batches of `rows × nv` random 0/1 values (each 1 with probability 0.4), seeded.
pub fn random_batches(n: usize, rows: usize, nv: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = rng_from_seed(seed);
    (0..n)
        .map(|_| {
            (0..rows * nv)
                .map(|_| f32::from(u8::from(rng.random::<f32>() < 0.4)))
                .collect()
        })
        .collect()
}

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
