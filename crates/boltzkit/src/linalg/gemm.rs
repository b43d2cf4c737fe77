//! Dense matrix products: [`sgemm`] (`f32`), its thread-split twin [`sgemm_par`] and
//! [`dgemm`] (`f64`), over the `gemm` crate.

use rayon::prelude::*;

/// Whether a GEMM operand is used as stored or transposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// The matrix as stored.
    N,
    /// Its transpose.
    T,
}

/// `C ← α·op(A)·op(B) + β·C` for row-major, contiguous `f32` matrices; the one GEMM entry point.
///
/// `op(A)` is `m × k` and `op(B)` is `k × n`; `A` is stored `m × k` for [`Op::N`] and `k × m` for
/// [`Op::T`] (likewise `B`), and `C` is `m × n`. With `β = 0`, `C` is only written (NaNs in it
/// do not propagate). The backend is the `gemm` crate (pure Rust, SIMD kernels chosen at run
/// time; measured fastest of `gemm`, `faer` and `matrixmultiply` on the RBM shapes), run
/// single-threaded here; [`sgemm_par`] splits `C` over threads. RBM uses: `V·W` (hidden input),
/// `H·Wᵀ` (visible input), `Vᵀ·H` (statistics).
///
/// # Panics
/// When a slice is shorter than its stated shape (a programming error, not user input).
#[allow(clippy::too_many_arguments)]
pub fn sgemm(
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c: &mut [f32],
) {
    gemm_dispatch(op_a, op_b, m, n, k, alpha, a, b, beta, c, false);
}

/// [`sgemm`] with `C` split into fixed blocks of [`GEMM_BLOCK`] columns (when `n ≥ m`) or rows
/// computed in parallel on the current rayon pool. The split depends only on the shapes, so
/// the result is the same bits for any number of threads.
///
/// # Panics
/// When a slice is shorter than its stated shape (a programming error, not user input).
#[allow(clippy::too_many_arguments)]
pub fn sgemm_par(
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c: &mut [f32],
) {
    gemm_dispatch(op_a, op_b, m, n, k, alpha, a, b, beta, c, true);
}

/// [`sgemm`] in `f64` (the same backend, single-threaded): the FVBM pseudo-likelihood's
/// `X·P` and `Xᵀ·R` on blocks of rows, which the caller runs in parallel
/// ([`crate::fvbm::plm`]).
///
/// # Panics
/// When a slice is shorter than its stated shape (a programming error, not user input).
#[allow(clippy::too_many_arguments)]
pub fn dgemm(
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: f64,
    a: &[f64],
    b: &[f64],
    beta: f64,
    c: &mut [f64],
) {
    gemm_dispatch(op_a, op_b, m, n, k, alpha, a, b, beta, c, false);
}

/// The element types of the GEMM entry points.
trait GemmScalar: Copy + PartialEq + std::ops::MulAssign + Send + Sync + 'static {
    const ZERO: Self;
}

impl GemmScalar for f32 {
    const ZERO: Self = 0.0;
}

impl GemmScalar for f64 {
    const ZERO: Self = 0.0;
}

/// Rows or columns of `C` per parallel task in [`sgemm_par`].
pub const GEMM_BLOCK: usize = 128;

/// Products smaller than this many multiply-adds run on one thread in [`sgemm_par`].
const GEMM_PAR_MIN: usize = 1 << 20;

#[allow(clippy::too_many_arguments)]
fn gemm_dispatch<T: GemmScalar>(
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: &[T],
    b: &[T],
    beta: T,
    c: &mut [T],
    parallel: bool,
) {
    assert!(
        a.len() >= m * k,
        "sgemm: A has {} < {m}×{k} entries",
        a.len()
    );
    assert!(
        b.len() >= k * n,
        "sgemm: B has {} < {k}×{n} entries",
        b.len()
    );
    assert!(
        c.len() >= m * n,
        "sgemm: C has {} < {m}×{n} entries",
        c.len()
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        scale_or_zero(&mut c[..m * n], beta);
        return;
    }
    // (row stride, column stride) of op(A) and op(B) in their row-major storage
    let (rsa, csa) = match op_a {
        Op::N => (k, 1),
        Op::T => (1, m),
    };
    let (rsb, csb) = match op_b {
        Op::N => (n, 1),
        Op::T => (1, k),
    };
    let (pa, pb, pc) = (
        a.as_ptr() as usize,
        b.as_ptr() as usize,
        c.as_mut_ptr() as usize,
    );
    // One block: rows i0..i0+mb and columns j0..j0+nb of C.
    let block = |i0: usize, mb: usize, j0: usize, nb: usize| {
        // SAFETY: the asserts above guarantee every index the kernel touches is in bounds:
        // op(A) rows i0..i0+mb ⊆ 0..m and columns < k, with the strides of its m×k or k×m
        // storage; op(B) columns j0..j0+nb ⊆ 0..n likewise; C rows and columns in range.
        // Blocks write disjoint elements of C (borrowed mutably for this call), and C does not
        // alias A or B. `gemm` computes dst ← alpha·dst + beta·lhs·rhs, reading dst only when
        // asked to.
        unsafe {
            gemm::gemm(
                mb,
                nb,
                k,
                (pc as *mut T).add(i0 * n + j0),
                1,
                n as isize,
                beta != T::ZERO,
                (pa as *const T).add(i0 * rsa),
                csa as isize,
                rsa as isize,
                (pb as *const T).add(j0 * csb),
                csb as isize,
                rsb as isize,
                beta,
                alpha,
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
    };
    if !parallel || m * n * k < GEMM_PAR_MIN {
        block(0, m, 0, n);
    } else if n >= m {
        (0..n.div_ceil(GEMM_BLOCK)).into_par_iter().for_each(|t| {
            let j0 = t * GEMM_BLOCK;
            block(0, m, j0, GEMM_BLOCK.min(n - j0));
        });
    } else {
        (0..m.div_ceil(GEMM_BLOCK)).into_par_iter().for_each(|t| {
            let i0 = t * GEMM_BLOCK;
            block(i0, GEMM_BLOCK.min(m - i0), 0, n);
        });
    }
}

fn scale_or_zero<T: GemmScalar>(c: &mut [T], beta: T) {
    if beta == T::ZERO {
        c.fill(T::ZERO);
    } else {
        c.iter_mut().for_each(|x| *x *= beta);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(op_a: Op, op_b: Op, m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f64> {
        let at = |i: usize, l: usize| match op_a {
            Op::N => a[i * k + l],
            Op::T => a[l * m + i],
        };
        let bt = |l: usize, j: usize| match op_b {
            Op::N => b[l * n + j],
            Op::T => b[j * k + l],
        };
        let mut c = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k)
                    .map(|l| f64::from(at(i, l)) * f64::from(bt(l, j)))
                    .sum();
            }
        }
        c
    }

    #[test]
    fn sgemm_matches_naive_in_every_layout() {
        let (m, n, k) = (7, 5, 11);
        let a: Vec<f32> = (0..m * k)
            .map(|i| ((i * 37) % 19) as f32 / 19.0 - 0.4)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| ((i * 53) % 23) as f32 / 23.0 - 0.6)
            .collect();
        for op_a in [Op::N, Op::T] {
            for op_b in [Op::N, Op::T] {
                let want = naive(op_a, op_b, m, n, k, &a, &b);
                let mut c = vec![1f32; m * n];
                sgemm(op_a, op_b, m, n, k, 2.0, &a, &b, 0.5, &mut c);
                for (x, w) in c.iter().zip(&want) {
                    assert!(
                        (f64::from(*x) - (2.0 * w + 0.5)).abs() < 1e-5,
                        "{op_a:?}{op_b:?}"
                    );
                }
                let mut c = vec![f32::NAN; m * n];
                sgemm(op_a, op_b, m, n, k, 1.0, &a, &b, 0.0, &mut c);
                for (x, w) in c.iter().zip(&want) {
                    assert!((f64::from(*x) - w).abs() < 1e-5);
                }
            }
        }
        // the parallel split (both directions, ragged last block) gives the same bits
        for (m, n, k) in [(300, 70, 60), (70, 300, 60)] {
            let a: Vec<f32> = (0..m * k)
                .map(|i| ((i * 37) % 19) as f32 / 19.0 - 0.4)
                .collect();
            let b: Vec<f32> = (0..k * n)
                .map(|i| ((i * 53) % 23) as f32 / 23.0 - 0.6)
                .collect();
            for (op_a, op_b) in [
                (Op::N, Op::N),
                (Op::T, Op::N),
                (Op::N, Op::T),
                (Op::T, Op::T),
            ] {
                let mut c1 = vec![0.5f32; m * n];
                let mut c2 = c1.clone();
                sgemm(op_a, op_b, m, n, k, 1.5, &a, &b, -1.0, &mut c1);
                sgemm_par(op_a, op_b, m, n, k, 1.5, &a, &b, -1.0, &mut c2);
                assert_eq!(c1, c2, "{m}×{n}×{k} {op_a:?}{op_b:?}");
                let want = naive(op_a, op_b, m, n, k, &a, &b);
                for (x, w) in c2.iter().zip(&want) {
                    assert!((f64::from(*x) - (1.5 * w - 0.5)).abs() < 1e-4);
                }
            }
        }
        let mut c = vec![3f32; 4];
        sgemm(Op::N, Op::N, 2, 2, 0, 1.0, &[], &[], 0.0, &mut c);
        assert_eq!(c, vec![0.0; 4]);
    }
}
