//! Candidate evaluation (Sec. 2.2.4): the exact change of cost of each candidate and the lower
//! bound (Eq. 21) that lets the scan skip most logarithms.

use super::penalty::Penalty;
use rayon::prelude::*;

/// Dual parameters are kept strictly inside (−1, 1) by this margin in every formula.
const T_MAX: f64 = 1.0 - 1e-12;
/// Elements per parallel work item. Fixed, so results do not depend on the thread count.
pub(crate) const PIECE: usize = 1 << 14;

#[inline(always)]
fn clamp_dual(t: f64) -> f64 {
    t.clamp(-T_MAX, T_MAX)
}

/// `KL(p_d‖p_θ')−KL(p_d‖p_θ)` when `θ̄_y` moves from `from` to `to` along the line `A_y` (Eq. 19).
#[inline(always)]
pub fn kl_change(d: f64, from: f64, to: f64) -> f64 {
    let (from, to) = (clamp_dual(from), clamp_dual(to));
    0.5 * ((1.0 + d) * ((1.0 + from) / (1.0 + to)).ln()
        + (1.0 - d) * ((1.0 - from) / (1.0 - to)).ln())
}

/// Δ of appending `θ_y` (Eq. 20): move `θ̄_y` from `t` to `d̄_y` and pay `r_y`.
#[inline(always)]
pub fn append_delta(t: f64, d: f64, r: f64) -> f64 {
    kl_change(d, t, d) + r
}

/// The lower bound of Eq. (21): `Δ ≥ r_y − (θ̄_y − d̄_y)² / (1 − θ̄_y²)`.
#[inline(always)]
pub fn append_lower_bound(t: f64, d: f64, r: f64) -> f64 {
    let t = clamp_dual(t);
    r - (t - d) * (t - d) / (1.0 - t * t)
}

/// True when Eq. (21) leaves room for an append candidate to beat `champion` (≤ 0);
/// the division is multiplied out because `1 − t² > 0` and `r − champion > 0`.
#[inline(always)]
fn may_beat(t: f64, d: f64, r: f64, champion: f64) -> bool {
    let t = clamp_dual(t);
    (r - champion) * (1.0 - t * t) < (t - d) * (t - d)
}

/// The best candidate found so far: the lowest Δ, ties going to the lowest index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Best {
    /// Change of cost (negative means an improvement).
    pub delta: f64,
    /// Basis index of the candidate.
    pub index: usize,
}

impl Best {
    /// No candidate: Δ = 0 (Algorithm 2, line 1).
    pub const NONE: Best = Best {
        delta: 0.0,
        index: usize::MAX,
    };

    /// The better of two results (deterministic tie-break by index).
    #[inline]
    pub fn merge(self, other: Best) -> Best {
        if other.delta < self.delta || (other.delta == self.delta && other.index < self.index) {
            other
        } else {
            self
        }
    }

    /// True when a candidate was found.
    pub fn found(&self) -> bool {
        self.index != usize::MAX
    }

    /// Offers the append candidate `z` (Algorithm 2, lines 4-6, with Eq. 21's pruning).
    #[inline(always)]
    pub fn offer_append(&mut self, z: usize, t: f64, d: f64, pen: &Penalty) {
        if z == 0 {
            return; // Φ_0 ≡ 1: θ_0 is fixed at 0
        }
        let r = pen.at(z);
        if may_beat(t, d, r, self.delta) {
            let delta = append_delta(t, d, r);
            if delta < self.delta {
                *self = Best { delta, index: z };
            }
        }
    }
}

/// The best append candidate over all indices, from the current `θ̄` and `d̄` (a plain scan).
pub fn scan_appends(theta_bar: &[f64], d_bar: &[f64], pen: &Penalty) -> Best {
    theta_bar
        .par_chunks(PIECE)
        .zip(d_bar.par_chunks(PIECE))
        .enumerate()
        .map(|(c, (tb, db))| {
            let base = c * PIECE;
            let mut best = Best::NONE;
            for (i, (&t, &d)) in tb.iter().zip(db).enumerate() {
                best.offer_append(base + i, t, d, pen);
            }
            best
        })
        .reduce(|| Best::NONE, Best::merge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Eq. (21): the lower bound never exceeds the exact Δ of Eq. (20).
        #[test]
        fn lower_bound_below_delta(t in -0.999f64..0.999, d in -0.999f64..0.999, r in 0.0f64..0.1) {
            let lb = append_lower_bound(t, d, r);
            let delta = append_delta(t, d, r);
            prop_assert!(lb <= delta + 1e-12, "lb {} > delta {}", lb, delta);
        }

        /// The pruning test agrees with the bound it multiplies out.
        #[test]
        fn pruning_agrees_with_bound(t in -0.99f64..0.99, d in -0.99f64..0.99, r in 1e-6f64..0.1, c in -0.5f64..0.0) {
            let lb = append_lower_bound(t, d, r);
            if (lb - c).abs() > 1e-9 {
                prop_assert_eq!(may_beat(t, d, r, c), lb < c);
            }
        }
    }

    #[test]
    fn merge_breaks_ties_by_index() {
        let a = Best {
            delta: -1.0,
            index: 5,
        };
        let b = Best {
            delta: -1.0,
            index: 3,
        };
        assert_eq!(a.merge(b).index, 3);
        assert_eq!(b.merge(a).index, 3);
        assert_eq!(Best::NONE.merge(a), a);
    }
}
