//! Fast transforms between a table over states and its coefficients over basis functions.
//!
//! `forward` computes `g[y] = Σ_x Φ_y(x) f[x]` (Eqs. 10-12): the dual parameters
//! `θ̄ = forward(p_θ)` (Eq. 8) and `d̄ = forward(p_d)`. `backward` computes
//! `f[x] = Σ_y Φ_y(x) g[y]`: the log-potential `l_θ = backward(θ)` of Eq. (3).
//!
//! Both run dimension by dimension (Sec. 2.2.2): one local `k × k` transform along each axis.
//! When every cardinality is a power of two the whole transform is one Walsh-Hadamard
//! transform over the bits of the index (Sec. 2.2.3), done here in groups of up to 8 bits so
//! each pass over memory does several butterfly stages on cache-resident tiles.
//! [`dense_forward`] is the slow brute-force twin the tests compare against.

use super::basis::{Layout, LocalBasis};
use rayon::prelude::*;

/// Bits handled per pass of the Walsh-Hadamard transform.
const GROUP_BITS: u32 = 8;
/// Columns (contiguous inner indices) per tile.
const TILE_COLS: usize = 16;

#[derive(Debug, Clone)]
enum LocalOp {
    /// In-place Walsh-Hadamard butterflies (`k` a power of two).
    Hadamard,
    /// A dense row-major `k × k` matrix.
    Dense(Vec<f64>),
}

#[derive(Debug, Clone)]
struct Axis {
    stride: usize,
    k: usize,
    op: LocalOp,
}

fn axes(layout: &Layout, transpose: bool) -> Vec<Axis> {
    if layout.is_power_of_two() {
        let total_bits = layout.n_states().trailing_zeros();
        let mut out = Vec::new();
        let mut bit = 0;
        while bit < total_bits {
            let g = GROUP_BITS.min(total_bits - bit);
            out.push(Axis {
                stride: 1 << bit,
                k: 1 << g,
                op: LocalOp::Hadamard,
            });
            bit += g;
        }
        return out;
    }
    (0..layout.n_vars())
        .map(|i| {
            let k = layout.cardinalities()[i] as usize;
            let op = match layout.basis(i) {
                LocalBasis::Hadamard => LocalOp::Hadamard,
                basis => {
                    let m = basis.matrix(k as u32);
                    LocalOp::Dense(if transpose { transposed(&m, k) } else { m })
                }
            };
            Axis {
                stride: layout.stride(i),
                k,
                op,
            }
        })
        .collect()
}

fn transposed(m: &[f64], k: usize) -> Vec<f64> {
    let mut t = vec![0.0; k * k];
    for r in 0..k {
        for c in 0..k {
            t[c * k + r] = m[r * k + c];
        }
    }
    t
}

/// In place: `table[y] ← Σ_x Φ_y(x) table[x]` (Eq. 10).
pub fn forward(layout: &Layout, table: &mut [f64]) {
    apply(layout, table, false);
}

/// In place: `table[x] ← Σ_y Φ_y(x) table[y]` (the transpose of [`forward`]).
pub fn backward(layout: &Layout, table: &mut [f64]) {
    apply(layout, table, true);
}

fn apply(layout: &Layout, table: &mut [f64], transpose: bool) {
    assert_eq!(table.len(), layout.n_states(), "table length must be |X|");
    for axis in axes(layout, transpose) {
        apply_axis(table, &axis);
    }
}

/// A raw pointer shared by tasks that touch disjoint elements.
#[derive(Clone, Copy)]
struct SharedMut(*mut f64);
// SAFETY: every task built in `apply_axis` reads and writes a disjoint set of elements.
unsafe impl Send for SharedMut {}
// SAFETY: as for `Send`: the tasks sharing it touch disjoint elements.
unsafe impl Sync for SharedMut {}

fn apply_axis(table: &mut [f64], axis: &Axis) {
    let (s, k) = (axis.stride, axis.k);
    let block = s * k;
    let n_blocks = table.len() / block;
    let width = TILE_COLS.min(s);
    let tiles_per_block = s.div_ceil(width);
    let n_tasks = n_blocks * tiles_per_block;
    let ptr = SharedMut(table.as_mut_ptr());
    let min_len = (4096 / (k * width)).max(1);
    (0..n_tasks)
        .into_par_iter()
        .with_min_len(min_len)
        .for_each_init(
            || vec![0.0f64; k * width],
            |scratch, task| {
                let b = task / tiles_per_block;
                let c0 = (task % tiles_per_block) * width;
                let w = width.min(s - c0);
                let base = b * block + c0;
                let p = ptr;
                // SAFETY: task (b, c0) owns exactly the elements base + j*s + c for
                // j < k, c < w; distinct tasks own disjoint sets, all inside `table`.
                unsafe {
                    match &axis.op {
                        LocalOp::Hadamard => hadamard_tile(p.0.add(base), s, k, w),
                        LocalOp::Dense(m) => dense_tile(p.0.add(base), s, k, w, m, scratch),
                    }
                }
            },
        );
}

/// Walsh-Hadamard butterflies on a tile of `k` rows (stride `s`) by `w` columns.
///
/// # Safety
/// `p + j*s + c` must be valid and exclusively owned for `j < k`, `c < w`.
#[inline]
unsafe fn hadamard_tile(p: *mut f64, s: usize, k: usize, w: usize) {
    let mut h = 1;
    while h < k {
        let mut j0 = 0;
        while j0 < k {
            for j in j0..j0 + h {
                let a = p.add(j * s);
                let b = p.add((j + h) * s);
                for c in 0..w {
                    let x = *a.add(c);
                    let y = *b.add(c);
                    *a.add(c) = x + y;
                    *b.add(c) = x - y;
                }
            }
            j0 += 2 * h;
        }
        h *= 2;
    }
}

/// Dense `k × k` matrix applied to a tile of `k` rows (stride `s`) by `w` columns.
///
/// # Safety
/// As [`hadamard_tile`].
#[inline]
unsafe fn dense_tile(p: *mut f64, s: usize, k: usize, w: usize, m: &[f64], scratch: &mut [f64]) {
    for j in 0..k {
        for c in 0..w {
            scratch[j * w + c] = *p.add(j * s + c);
        }
    }
    for r in 0..k {
        let row = &m[r * k..(r + 1) * k];
        for c in 0..w {
            let mut acc = 0.0;
            for (j, &mj) in row.iter().enumerate() {
                acc += mj * scratch[j * w + c];
            }
            *p.add(r * s + c) = acc;
        }
    }
}

/// `Σ_x Φ_y(x) f[x]` for every `y`, straight from the definition: O(|X|²), for tests.
pub fn dense_forward(layout: &Layout, f: &[f64]) -> Vec<f64> {
    (0..layout.n_states())
        .map(|y| {
            (0..layout.n_states())
                .map(|x| layout.phi(y, x) * f[x])
                .sum()
        })
        .collect()
}

/// `Σ_y Φ_y(x) g[y]` for every `x`, straight from the definition: O(|X|²), for tests.
pub fn dense_backward(layout: &Layout, g: &[f64]) -> Vec<f64> {
    (0..layout.n_states())
        .map(|x| {
            (0..layout.n_states())
                .map(|y| layout.phi(y, x) * g[y])
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use rand::Rng;

    fn random_table(n: usize, seed: u64) -> Vec<f64> {
        let mut r = rng_from_seed(seed);
        (0..n).map(|_| r.random::<f64>() - 0.3).collect()
    }

    fn check(cards: &[u32]) {
        let layout = Layout::new(cards).unwrap();
        let f = random_table(layout.n_states(), cards.len() as u64);
        let mut fast = f.clone();
        forward(&layout, &mut fast);
        let slow = dense_forward(&layout, &f);
        for (a, b) in fast.iter().zip(&slow) {
            assert!(
                (a - b).abs() < 1e-9 * (1.0 + b.abs()),
                "forward {cards:?}: {a} vs {b}"
            );
        }
        let mut back = f.clone();
        backward(&layout, &mut back);
        let slow = dense_backward(&layout, &f);
        for (a, b) in back.iter().zip(&slow) {
            assert!(
                (a - b).abs() < 1e-9 * (1.0 + b.abs()),
                "backward {cards:?}: {a} vs {b}"
            );
        }
    }

    #[test]
    fn binary_matches_dense_matrix() {
        check(&[2; 10]); // 10 bits: two groups, the second partial
        check(&[2]);
    }

    #[test]
    fn four_valued_matches_dense_matrix() {
        check(&[4, 4, 4, 4, 4]);
    }

    #[test]
    fn three_valued_matches_dense_matrix() {
        check(&[3, 3, 3, 3]);
    }

    #[test]
    fn mixed_cardinalities_match_dense_matrix() {
        check(&[2, 3, 4, 5, 2]);
        check(&[5, 2, 8]);
    }

    #[test]
    fn hadamard_transform_is_self_inverse_up_to_size() {
        let layout = Layout::new(&[2; 18]).unwrap();
        let f = random_table(layout.n_states(), 3);
        let mut g = f.clone();
        forward(&layout, &mut g);
        forward(&layout, &mut g);
        let n = layout.n_states() as f64;
        for (a, b) in g.iter().zip(&f) {
            assert!((a / n - b).abs() < 1e-12);
        }
    }
}
