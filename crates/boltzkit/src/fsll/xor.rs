//! The XOR update of the dual parameters, fused with the next candidate scan.
//!
//! When every cardinality is a power of two, `Φ_y Φ_z = Φ_{y⊕z}` and `e^{δΦ_y} = cosh δ + Φ_y
//! sinh δ`. So after `θ_y` changes by `δ`, with `τ = tanh δ`, for every `z`
//!
//! `θ̄'_z = (θ̄_z + τ θ̄_{z⊕y}) / (1 + τ θ̄_y)`,
//!
//! an O(|X|) pass in place over the pairs `(z, z⊕y)` that needs no `p_θ` table (it replaces
//! Algorithm 3 and the full transform of Sec. 2.2.2 that the paper runs every iteration). The
//! same pass evaluates every append candidate on the fresh values, so the table is read once
//! per iteration.

use super::penalty::Penalty;
use super::scan::{block_may_improve, Best, LANES, PIECE};
use rayon::prelude::*;

/// One pending change `θ_y += δ`, in the form the XOR pass needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct XorUpdate {
    /// The basis index that changed (non-zero).
    pub y: usize,
    /// `tanh δ`.
    pub tau: f64,
    /// `1 / (1 + τ θ̄_y)`, with `θ̄_y` taken before the change.
    pub inv: f64,
}

impl XorUpdate {
    /// The update for `θ_y += delta` when the dual parameter before the change is `theta_bar_y`.
    pub fn new(y: usize, delta: f64, theta_bar_y: f64) -> Self {
        let tau = delta.tanh();
        XorUpdate {
            y,
            tau,
            inv: 1.0 / (1.0 + tau * theta_bar_y),
        }
    }
}

/// Applies `update` to `θ̄` in place and returns the best append candidate on the new values.
pub fn update_and_scan(
    theta_bar: &mut [f64],
    d_bar: &[f64],
    pen: &Penalty,
    update: XorUpdate,
) -> Best {
    let n = theta_bar.len();
    let y = update.y;
    assert!(
        y != 0 && y < n && n.is_power_of_two(),
        "XOR update needs 0 < y < |X| = 2^k"
    );
    let half = 1usize << (usize::BITS - 1 - y.leading_zeros());
    let block = 2 * half;
    let y_in_half = y & (half - 1);

    if block <= PIECE {
        // Each piece holds whole blocks [lo | hi]; pairs never leave a block.
        theta_bar
            .par_chunks_mut(PIECE)
            .enumerate()
            .map(|(c, piece)| {
                let mut best = Best::NONE;
                for (b, blk) in piece.chunks_mut(block).enumerate() {
                    let lo_base = c * PIECE + b * block;
                    let (lo, hi) = blk.split_at_mut(half);
                    pair_kernel(
                        lo,
                        lo_base,
                        hi,
                        lo_base + half,
                        y_in_half,
                        d_bar,
                        pen,
                        update,
                        &mut best,
                    );
                }
                best
            })
            .reduce(|| Best::NONE, Best::merge)
    } else {
        // Halves are larger than a piece: piece j of a block's low half pairs with piece
        // j ^ (y_in_half / PIECE) of its high half.
        let piece_perm = y_in_half / PIECE;
        let y_in_piece = y_in_half % PIECE;
        let mut items = Vec::with_capacity(n / (2 * PIECE));
        for (b, blk) in theta_bar.chunks_mut(block).enumerate() {
            let (lo, hi) = blk.split_at_mut(half);
            let mut hi_pieces: Vec<Option<&mut [f64]>> = hi.chunks_mut(PIECE).map(Some).collect();
            for (j, lp) in lo.chunks_mut(PIECE).enumerate() {
                let jp = j ^ piece_perm;
                let hp = hi_pieces[jp]
                    .take()
                    .expect("piece permutation is a bijection");
                items.push((b * block + j * PIECE, lp, b * block + half + jp * PIECE, hp));
            }
        }
        items
            .into_par_iter()
            .map(|(lo_base, lo, hi_base, hi)| {
                let mut best = Best::NONE;
                pair_kernel(
                    lo, lo_base, hi, hi_base, y_in_piece, d_bar, pen, update, &mut best,
                );
                best
            })
            .reduce(|| Best::NONE, Best::merge)
    }
}

/// Updates the pairs `(lo[i], hi[i ^ y_low])` and offers both indices as append candidates.
///
/// Works in blocks of [`LANES`]: an aligned block of `lo` pairs with an aligned block of `hi`
/// (XOR by `y_low`'s high bits, permuted inside by its low bits), the update and the cheap
/// test of [`block_may_improve`] run branch-free, and only blocks that pass are scanned exactly.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn pair_kernel(
    lo: &mut [f64],
    lo_base: usize,
    hi: &mut [f64],
    hi_base: usize,
    y_low: usize,
    d_bar: &[f64],
    pen: &Penalty,
    u: XorUpdate,
    best: &mut Best,
) {
    debug_assert_eq!(lo.len(), hi.len());
    let len = lo.len();
    let d_lo = &d_bar[lo_base..lo_base + len];
    let d_hi = &d_bar[hi_base..hi_base + len];
    if len < LANES {
        for i in 0..len {
            let j = i ^ y_low;
            let (a, b) = (lo[i], hi[j]);
            lo[i] = (a + u.tau * b) * u.inv;
            hi[j] = (b + u.tau * a) * u.inv;
            best.offer_append(lo_base + i, lo[i], d_lo[i], pen);
            best.offer_append(hi_base + j, hi[j], d_hi[j], pen);
        }
        return;
    }
    let perm = y_low % LANES;
    let r_min = pen.min_nonzero();
    for i0 in (0..len).step_by(LANES) {
        let j0 = i0 ^ (y_low - perm);
        let mut a = [0.0; LANES];
        let mut b = [0.0; LANES];
        let mut da = [0.0; LANES];
        let mut db = [0.0; LANES];
        a.copy_from_slice(&lo[i0..i0 + LANES]);
        da.copy_from_slice(&d_lo[i0..i0 + LANES]);
        for k in 0..LANES {
            b[k] = hi[j0 + (k ^ perm)];
            db[k] = d_hi[j0 + (k ^ perm)];
        }
        let mut na = [0.0; LANES];
        let mut nb = [0.0; LANES];
        for k in 0..LANES {
            na[k] = (a[k] + u.tau * b[k]) * u.inv;
            nb[k] = (b[k] + u.tau * a[k]) * u.inv;
        }
        lo[i0..i0 + LANES].copy_from_slice(&na);
        for k in 0..LANES {
            hi[j0 + (k ^ perm)] = nb[k];
        }
        if block_may_improve(&na, &da, r_min, best.delta) {
            for k in 0..LANES {
                best.offer_append(lo_base + i0 + k, na[k], da[k], pen);
            }
        }
        if block_may_improve(&nb, &db, r_min, best.delta) {
            for k in 0..LANES {
                best.offer_append(hi_base + j0 + (k ^ perm), nb[k], db[k], pen);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fsll::basis::Layout;
    use crate::fsll::scan::scan_appends;
    use crate::fsll::transform::{backward, forward};
    use crate::rng::rng_from_seed;
    use rand::Rng;

    /// θ̄ from a dense θ by the full path: l = backward(θ), p ∝ e^l, θ̄ = forward(p).
    fn dual_from_theta(layout: &Layout, theta: &[f64]) -> Vec<f64> {
        let mut t = theta.to_vec();
        backward(layout, &mut t);
        let m = t.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mut s = 0.0;
        for v in t.iter_mut() {
            *v = (*v - m).exp();
            s += *v;
        }
        for v in t.iter_mut() {
            *v /= s;
        }
        forward(layout, &mut t);
        t
    }

    fn random_updates_match_recomputation(bits: usize, steps: usize, seed: u64) {
        let layout = Layout::new(&vec![2; bits]).unwrap();
        let n = layout.n_states();
        let mut rng = rng_from_seed(seed);
        let mut theta = vec![0.0; n];
        let mut tb = dual_from_theta(&layout, &theta);
        let d_bar: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 1.6 - 0.8).collect();
        let pen = Penalty::new(&layout, 500);
        for _ in 0..steps {
            let y = rng.random_range(1..n);
            let delta = rng.random::<f64>() * 1.2 - 0.6;
            let u = XorUpdate::new(y, delta, tb[y]);
            let best = update_and_scan(&mut tb, &d_bar, &pen, u);
            theta[y] += delta;
            // the fused scan sees exactly the freshly updated table
            assert_eq!(best, scan_appends(&tb, &d_bar, &pen));
        }
        let exact = dual_from_theta(&layout, &theta);
        let worst = tb
            .iter()
            .zip(&exact)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-10, "drift {worst} after {steps} XOR updates");
    }

    #[test]
    fn xor_updates_match_full_recomputation_small_blocks() {
        random_updates_match_recomputation(10, 300, 1);
    }

    #[test]
    fn xor_updates_match_full_recomputation_large_blocks() {
        // 2^17 states: halves larger than a piece exercise the piece permutation.
        random_updates_match_recomputation(17, 60, 2);
    }
}
