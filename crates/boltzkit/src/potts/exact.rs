//! Exact computations by enumerating every state, for models with at most
//! [`MAX_EXACT_STATES`] states (`Π_i q_i`): the log-potential of each state, `ln Z`, and
//! exact i.i.d. samples. These are the brute-force twins the pseudo-likelihood engine and the
//! samplers are tested against.

use super::model::Potts;
use crate::data::synth::{index_to_state, Distribution};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::linalg::log_sum_exp;
use rand::Rng;
use rayon::prelude::*;

/// The most joint states enumerated (a table of this many `f64` is 32 MiB).
pub const MAX_EXACT_STATES: u64 = 1 << 22;

/// States enumerated per parallel task (fixed, so results do not depend on the thread count).
const CHUNK: usize = 1 << 12;

/// `Π_i q_i`, saturating at `u64::MAX`.
pub fn state_count(states: &[usize]) -> u64 {
    states
        .iter()
        .try_fold(1u64, |a, &k| a.checked_mul(k as u64))
        .unwrap_or(u64::MAX)
}

/// Whether the states of `model` can be enumerated ([`MAX_EXACT_STATES`]).
pub fn affordable(model: &Potts) -> bool {
    state_count(model.states()) <= MAX_EXACT_STATES
}

fn require_affordable(model: &Potts, task: &str) -> Result<()> {
    let n = state_count(model.states());
    if n > MAX_EXACT_STATES {
        return Err(Error::TooLarge {
            what: format!("{task} of a Potts model with states {:?}", model.states()),
            needed: if n == u64::MAX {
                "more than 2^64 states".into()
            } else {
                format!("{n} states")
            },
            limit: format!("{MAX_EXACT_STATES} states"),
        });
    }
    Ok(())
}

/// The cardinalities of `model` as a dataset spells them.
pub(crate) fn cardinalities(model: &Potts) -> Vec<u32> {
    model.states().iter().map(|&k| k as u32).collect()
}

/// The log-potential of every state, indexed as [`crate::data::synth::state_index`] does
/// (mixed radix, site 0 least significant).
pub fn log_potential_table(model: &Potts) -> Result<Vec<f64>> {
    require_affordable(model, "enumeration")?;
    let n = state_count(model.states()) as usize;
    let cards = cardinalities(model);
    let mut table = vec![0.0; n];
    table
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, out)| {
            let mut s = vec![0u8; cards.len()];
            for (k, v) in out.iter_mut().enumerate() {
                index_to_state(&cards, c * CHUNK + k, &mut s);
                *v = model.log_potential_unchecked(&s);
            }
        });
    Ok(table)
}

/// `ln Z = ln Σ_s exp(Σ_i h_i(s_i) + Σ_{i<j} J_ij(s_i, s_j))` by enumeration.
pub fn log_partition(model: &Potts) -> Result<f64> {
    let v = log_sum_exp(&log_potential_table(model)?);
    if v.is_finite() {
        Ok(v)
    } else {
        Err(Error::Numerical {
            context: "Potts exact ln Z".into(),
            detail: format!("the result is {v}"),
        })
    }
}

/// `n` exact i.i.d. samples drawn from the caller's generator.
pub fn sample<R: Rng + ?Sized>(model: &Potts, n: usize, rng: &mut R) -> Result<Dataset> {
    let table = log_potential_table(model)?;
    Distribution::from_log_weights(cardinalities(model), &table)?.sample(n, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;

    #[test]
    fn ln_z_of_independent_sites_and_sampling_frequencies() {
        // No couplings: Z factorizes into Π_i Σ_a exp(h_i(a)).
        let h = vec![0.3, -0.2, 1.0, 0.0, 0.5, -1.0, 0.2, 0.1, 0.0];
        let m = Potts::new(vec![3, 2, 4], h.clone(), vec![0.0; 6 + 12 + 8]).unwrap();
        let want: f64 = [&h[0..3], &h[3..5], &h[5..9]]
            .iter()
            .map(|f| f.iter().map(|x| x.exp()).sum::<f64>().ln())
            .sum();
        assert!((log_partition(&m).unwrap() - want).abs() < 1e-12);
        let x = sample(&m, 20_000, &mut rng_from_seed(1)).unwrap();
        let n0 = x.values().column(0).iter().filter(|&&a| a == 2).count() as f64 / 20_000.0;
        let p0 = h[2].exp() / h[0..3].iter().map(|x| x.exp()).sum::<f64>();
        assert!((n0 - p0).abs() < 0.015, "{n0} vs {p0}");
        assert_eq!(state_count(&[255; 9]), u64::MAX);
        let big = Potts::zeros(vec![21; 6]).unwrap();
        assert!(!affordable(&big));
        assert!(log_partition(&big)
            .unwrap_err()
            .to_string()
            .contains("states"));
    }
}
