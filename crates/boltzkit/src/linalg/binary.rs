//! Products with a 0/1 matrix, computed as sums of selected rows instead of multiply-adds.
//!
//! RBM states are binary and usually sparse (binarized MNIST: about 13% ones), so `V·W` costs
//! `(ones of V) × n` additions instead of `rows × k × n` multiply-adds; the model's callers
//! switch to these kernels when the density is below [`SPARSE_MAX_DENSITY`] (measured on the
//! RBM shapes, see BENCHMARKS.md). Each output element sums its terms in increasing index
//! order on one thread, so results do not depend on the thread count.

use rayon::prelude::*;

/// Above this fraction of ones the dense GEMM is faster than summing rows.
pub const SPARSE_MAX_DENSITY: f64 = 0.3;

/// Output columns per parallel task: a 64-column strip of the right-hand matrix stays in L2
/// while every output row sums its selected rows of the strip.
const TILE: usize = 64;

/// The fraction of ones of `x` when every entry is exactly 0 or 1; `None` otherwise (and for
/// an empty slice).
pub fn binary_density(x: &[f32]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    let mut ones = 0usize;
    for &v in x {
        if v == 1.0 {
            ones += 1;
        } else if v != 0.0 {
            return None;
        }
    }
    Some(ones as f64 / x.len() as f64)
}

/// `Some(density)` when `x` is binary with a density at most [`SPARSE_MAX_DENSITY`].
pub fn sparse_binary(x: &[f32]) -> Option<f64> {
    binary_density(x).filter(|&d| d <= SPARSE_MAX_DENSITY)
}

/// Compressed lists of indices: list `r` is `idx[offsets[r]..offsets[r + 1]]`.
struct Lists {
    offsets: Vec<usize>,
    idx: Vec<u32>,
}

impl Lists {
    fn get(&self, r: usize) -> &[u32] {
        &self.idx[self.offsets[r]..self.offsets[r + 1]]
    }

    /// For each row of the `rows × k` matrix `a`, the columns holding a nonzero.
    fn by_row(a: &[f32], rows: usize, k: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        let mut idx = Vec::new();
        offsets.push(0);
        for row in a[..rows * k].chunks_exact(k) {
            idx.extend(
                row.iter()
                    .enumerate()
                    .filter(|(_, &v)| v != 0.0)
                    .map(|(i, _)| i as u32),
            );
            offsets.push(idx.len());
        }
        Lists { offsets, idx }
    }

    /// For each column of the `rows × k` matrix `a`, the rows holding a nonzero (in order).
    fn by_column(a: &[f32], rows: usize, k: usize) -> Self {
        let mut counts = vec![0usize; k + 1];
        for row in a[..rows * k].chunks_exact(k) {
            for (i, &v) in row.iter().enumerate() {
                counts[i + 1] += usize::from(v != 0.0);
            }
        }
        for i in 0..k {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut idx = vec![0u32; counts[k]];
        for (r, row) in a[..rows * k].chunks_exact(k).enumerate() {
            for (i, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    idx[fill[i]] = r as u32;
                    fill[i] += 1;
                }
            }
        }
        Lists {
            offsets: counts,
            idx,
        }
    }
}

multiversion! {
    /// `acc_t = Σ_{i ∈ idx} b[i·n + j0 + t]` for `t < acc.len() ≤ 64` (a column strip of the
    /// row-major `b` with rows of `n`), terms added in the order of `idx`.
    pub fn sum_strip(b: &[f32], n: usize, j0: usize, idx: &[u32], acc: &mut [f32]) -> () {
        let width = acc.len();
        if width == TILE {
            let mut reg = [0f32; TILE];
            for &i in idx {
                let row = &b[i as usize * n + j0..][..TILE];
                for (a, &w) in reg.iter_mut().zip(row) {
                    *a += w;
                }
            }
            acc.copy_from_slice(&reg);
        } else {
            acc.fill(0.0);
            for &i in idx {
                let row = &b[i as usize * n + j0..][..width];
                acc.iter_mut().zip(row).for_each(|(a, &w)| *a += w);
            }
        }
    }
}

/// Runs `strip(j0, width)` for every 64-column strip of `0..n` in parallel; the task writes
/// columns `j0..j0 + width` of a row-major output with rows of `n` through `out`.
fn for_each_strip(
    n: usize,
    c: &mut [f32],
    strip: impl Fn(usize, &mut dyn FnMut(usize, &[f32])) + Sync,
) {
    let ptr = c.as_mut_ptr() as usize;
    let len = c.len();
    (0..n.div_ceil(TILE)).into_par_iter().for_each(|t| {
        let j0 = t * TILE;
        let width = TILE.min(n - j0);
        let mut write = |r: usize, vals: &[f32]| {
            assert!(vals.len() == width && r * n + j0 + width <= len);
            // SAFETY: in bounds (asserted); tasks write disjoint column strips of `c`, which is
            // borrowed mutably for the whole call.
            let dst =
                unsafe { std::slice::from_raw_parts_mut((ptr as *mut f32).add(r * n + j0), width) };
            dst.copy_from_slice(vals);
        };
        strip(j0, &mut write);
    });
}

/// `C = A·B` for a 0/1 matrix `A` (`rows × k`), `B` (`k × n`) and `C` (`rows × n`), all
/// row-major: row `r` of `C` is the sum of the rows of `B` selected by the ones of row `r` of
/// `A` (any nonzero entry of `A` counts as 1). Parallel over 64-column strips.
///
/// # Panics
/// When a slice is shorter than its stated shape.
pub fn binary_matmul(a: &[f32], b: &[f32], rows: usize, k: usize, n: usize, c: &mut [f32]) {
    assert!(a.len() >= rows * k && b.len() >= k * n && c.len() >= rows * n);
    if n == 0 || rows == 0 {
        return;
    }
    if k == 0 {
        c[..rows * n].fill(0.0);
        return;
    }
    let lists = Lists::by_row(a, rows, k);
    for_each_strip(n, &mut c[..rows * n], |j0, write| {
        let mut acc = vec![0f32; TILE.min(n - j0)];
        for r in 0..rows {
            sum_strip(b, n, j0, lists.get(r), &mut acc);
            write(r, &acc);
        }
    });
}

/// `C ← β·C + α·Aᵀ·P` for a 0/1 matrix `A` (`rows × k`), `P` (`rows × n`) and `C` (`k × n`):
/// row `i` of `C` gains `α` times the sum of the rows of `P` where column `i` of `A` is one
/// (with `β = 0`, `C` is only written). Parallel over 64-column strips.
///
/// # Panics
/// When a slice is shorter than its stated shape.
#[allow(clippy::too_many_arguments)]
pub fn binary_t_matmul(
    a: &[f32],
    p: &[f32],
    rows: usize,
    k: usize,
    n: usize,
    alpha: f32,
    beta: f32,
    c: &mut [f32],
) {
    assert!(a.len() >= rows * k && p.len() >= rows * n && c.len() >= k * n);
    if n == 0 || k == 0 {
        return;
    }
    let lists = Lists::by_column(a, rows, k);
    let old: &[f32] = &c[..k * n];
    let old = (beta != 0.0).then(|| old.to_vec());
    for_each_strip(n, &mut c[..k * n], |j0, write| {
        let mut acc = vec![0f32; TILE.min(n - j0)];
        for i in 0..k {
            sum_strip(p, n, j0, lists.get(i), &mut acc);
            match &old {
                None => acc.iter_mut().for_each(|s| *s *= alpha),
                Some(old) => acc
                    .iter_mut()
                    .zip(&old[i * n + j0..])
                    .for_each(|(s, &o)| *s = beta * o + alpha * *s),
            }
            write(i, &acc);
        }
    });
}

/// The `cols × rows` transpose of the row-major `rows × cols` matrix `a`.
pub fn transpose(a: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0f32; rows * cols];
    if cols > 0 {
        for (r, row) in a[..rows * cols].chunks_exact(cols).enumerate() {
            for (j, &v) in row.iter().enumerate() {
                t[j * rows + r] = v;
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{sgemm, Op};
    use crate::rng::rng_from_seed;
    use rand::Rng;

    fn random(len: usize, density: f32, seed: u64) -> Vec<f32> {
        let mut rng = rng_from_seed(seed);
        (0..len)
            .map(|_| f32::from(u8::from(rng.random::<f32>() < density)))
            .collect()
    }

    #[test]
    fn density() {
        assert_eq!(binary_density(&[0.0, 1.0, 1.0, 0.0]), Some(0.5));
        assert_eq!(binary_density(&[0.0, 0.5]), None);
        assert_eq!(binary_density(&[]), None);
        assert_eq!(sparse_binary(&[1.0, 1.0]), None);
        assert_eq!(sparse_binary(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
    }

    /// Both kernels against the dense GEMM on odd shapes (tiles and tails, empty rows).
    #[test]
    fn match_dense_products() {
        for (rows, k, n) in [(13, 37, 130), (1, 5, 64), (9, 1, 3), (20, 70, 65)] {
            let a = random(rows * k, 0.2, 1);
            let b: Vec<f32> = random(k * n, 0.5, 2).iter().map(|x| x - 0.3).collect();
            let mut want = vec![0f32; rows * n];
            sgemm(Op::N, Op::N, rows, n, k, 1.0, &a, &b, 0.0, &mut want);
            let mut got = vec![f32::NAN; rows * n];
            binary_matmul(&a, &b, rows, k, n, &mut got);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-5, "{rows}x{k}x{n}: {g} vs {w}");
            }
            let p: Vec<f32> = random(rows * n, 0.5, 3).iter().map(|x| x * 0.7).collect();
            let c0: Vec<f32> = random(k * n, 0.5, 4);
            let mut want = c0.clone();
            sgemm(Op::T, Op::N, k, n, rows, -0.5, &a, &p, 2.0, &mut want);
            let mut got = c0.clone();
            binary_t_matmul(&a, &p, rows, k, n, -0.5, 2.0, &mut got);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-5, "{rows}x{k}x{n}: {g} vs {w}");
            }
            let mut got = vec![f32::NAN; k * n];
            binary_t_matmul(&a, &p, rows, k, n, 1.0, 0.0, &mut got);
            assert!(got.iter().all(|x| x.is_finite()));
        }
    }

    #[test]
    fn same_bits_for_any_thread_count() {
        let (rows, k, n) = (100, 784, 500);
        let a = random(rows * k, 0.13, 5);
        let b: Vec<f32> = random(k * n, 0.5, 6).iter().map(|x| x - 0.5).collect();
        let run = |t: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap();
            pool.install(|| {
                let mut c = vec![0f32; rows * n];
                binary_matmul(&a, &b, rows, k, n, &mut c);
                let mut g = vec![0f32; k * n];
                binary_t_matmul(&a, &c, rows, k, n, 0.1, 0.0, &mut g);
                (c, g)
            })
        };
        assert_eq!(run(1), run(3));
    }
}
