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

/// Lanes of the branch-free first test.
pub(crate) const LANES: usize = 8;

/// Branch-free first test over a block: true when any of its append candidates may beat
/// `champion` by Eq. (21) with `r_y` replaced by its lower bound `r_min` (so a block it
/// rejects holds no winner; one it accepts is scanned exactly).
#[inline(always)]
pub(crate) fn block_may_improve(
    t: &[f64; LANES],
    d: &[f64; LANES],
    r_min: f64,
    champion: f64,
) -> bool {
    let slack = r_min - champion;
    let mut any = false;
    for k in 0..LANES {
        let tk = clamp_dual(t[k]);
        let gap = t[k] - d[k];
        any |= slack * (1.0 - tk * tk) < gap * gap;
    }
    any
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
            let r_min = pen.min_nonzero();
            let mut blocks_t = tb.chunks_exact(LANES);
            let mut blocks_d = db.chunks_exact(LANES);
            for (b, (bt, bd)) in (&mut blocks_t).zip(&mut blocks_d).enumerate() {
                let bt: &[f64; LANES] = bt.try_into().expect("exact chunk");
                let bd: &[f64; LANES] = bd.try_into().expect("exact chunk");
                if block_may_improve(bt, bd, r_min, best.delta) {
                    for k in 0..LANES {
                        best.offer_append(base + b * LANES + k, bt[k], bd[k], pen);
                    }
                }
            }
            let done = tb.len() - blocks_t.remainder().len();
            for (i, (&t, &d)) in blocks_t
                .remainder()
                .iter()
                .zip(blocks_d.remainder())
                .enumerate()
            {
                best.offer_append(base + done + i, t, d, pen);
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
