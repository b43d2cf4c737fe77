//! State indices: a joint state as a mixed-radix number, variable 0 the least significant digit.

use crate::data::MAX_CARDINALITY;
use crate::error::{Error, Result};

/// Largest number of joint states an exact table may have (2^32).
pub const MAX_STATES: usize = 1 << 32;

/// Number of joint states `∏ cards[i]`; an error when a cardinality is outside `1..=256` or
/// the product exceeds 2^32 ([`MAX_STATES`]).
pub fn n_states(cards: &[u32]) -> Result<usize> {
    let mut n: u128 = 1;
    for (i, &k) in cards.iter().enumerate() {
        if k == 0 || k > MAX_CARDINALITY {
            return Err(Error::param(
                "cardinalities",
                format!("variable {i} has cardinality {k}; must be in 1..={MAX_CARDINALITY}"),
            ));
        }
        n = n.saturating_mul(u128::from(k));
    }
    if n > MAX_STATES as u128 {
        return Err(Error::TooLarge {
            what: format!("a table over all states of {} variables", cards.len()),
            needed: format!("{n} states"),
            limit: format!("{MAX_STATES} (2^32) states"),
        });
    }
    Ok(n as usize)
}

/// The index of state `x`: `x[0] + cards[0]·(x[1] + cards[1]·(x[2] + …))`.
///
/// `x` and `cards` must have the same length and `x[i] < cards[i]` (checked in debug builds
/// only; this is a hot path).
#[inline]
pub fn state_index(cards: &[u32], x: &[u8]) -> usize {
    debug_assert_eq!(cards.len(), x.len());
    cards.iter().zip(x).rev().fold(0usize, |idx, (&k, &v)| {
        debug_assert!(u32::from(v) < k);
        idx * k as usize + usize::from(v)
    })
}

/// Writes the state with index `index` into `out` (the inverse of [`state_index`]).
///
/// `out` must have one entry per variable (checked in debug builds only).
#[inline]
pub fn index_to_state(cards: &[u32], mut index: usize, out: &mut [u8]) {
    debug_assert_eq!(cards.len(), out.len());
    for (o, &k) in out.iter_mut().zip(cards) {
        let k = k as usize;
        *o = (index % k) as u8;
        index /= k;
    }
}

/// Most binary variables for which the generators build an exact table (2^28 states).
pub const MAX_EXACT_VARS: usize = 28;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_zero_is_least_significant() {
        let cards = [3, 2, 4];
        assert_eq!(state_index(&cards, &[1, 0, 0]), 1);
        assert_eq!(state_index(&cards, &[0, 1, 0]), 3);
        assert_eq!(state_index(&cards, &[0, 0, 1]), 6);
        assert_eq!(state_index(&cards, &[2, 1, 3]), 23);
    }

    #[test]
    fn index_round_trip_over_all_states() {
        let cards = [3, 2, 4, 1, 5];
        let n = n_states(&cards).unwrap();
        assert_eq!(n, 120);
        let mut x = [0u8; 5];
        for i in 0..n {
            index_to_state(&cards, i, &mut x);
            for (v, k) in x.iter().zip(cards) {
                assert!(u32::from(*v) < k);
            }
            assert_eq!(state_index(&cards, &x), i);
        }
    }

    #[test]
    fn n_states_limits() {
        assert_eq!(n_states(&[2; 32]).unwrap(), 1 << 32);
        assert!(matches!(n_states(&[2; 33]), Err(Error::TooLarge { .. })));
        assert!(matches!(n_states(&[256; 40]), Err(Error::TooLarge { .. })));
        assert!(n_states(&[2, 0]).is_err());
        assert!(n_states(&[257]).is_err());
        assert_eq!(n_states(&[]).unwrap(), 1);
    }
}
