//! Small dense symmetric positive definite algebra (Cholesky factor, solve, inverse) for the
//! `d(d+1)/2`-parameter problems of the FVBM solvers: a few hundred unknowns at most.

use crate::budget::{available_memory, human_bytes, human_duration};
use crate::error::Error;
use crate::fit::Interrupt;

/// Multiply-adds per second of the dense kernels of this module and of the Hessian's Gram
/// sums ([`super::pseudo::hessian`]), for the time estimates of [`refuse_dense`]: scalar
/// loops, measured at `9e8` per CPU second on the 2-core AVX-512 test machine (a Newton fit
/// at d = 60, n = 20,000: 6 steps of `3.2e9` in 21 s of CPU), so a generous `2e9` on two
/// cores.
pub const DENSE_OPERATIONS_PER_SECOND: f64 = 2e9;

/// The longest dense job (the Newton solver, the dense existence check) [`refuse_dense`] lets
/// start: an hour.
pub const MAX_DENSE_SECONDS: f64 = 3600.0;

/// Refuses up front a dense job `what` that needs `bytes` of memory and `operations`
/// multiply-adds (`work` says of what) when it would not fit in the memory available or not
/// end within [`MAX_DENSE_SECONDS`] at [`DENSE_OPERATIONS_PER_SECOND`]: one
/// [`Error::TooLarge`] with both estimates and `instead`, the command that scales.
pub(crate) fn refuse_dense(
    what: &str,
    bytes: u64,
    operations: f64,
    work: &str,
    instead: &str,
) -> crate::error::Result<()> {
    let available = available_memory().unwrap_or(u64::MAX);
    let seconds = operations / DENSE_OPERATIONS_PER_SECOND;
    if bytes <= available && seconds <= MAX_DENSE_SECONDS {
        return Ok(());
    }
    Err(Error::TooLarge {
        what: what.to_string(),
        needed: format!(
            "{} of memory and about {} ({work}: {operations:.1e} multiply-adds at \
             {DENSE_OPERATIONS_PER_SECOND:.0e} per second)",
            human_bytes(bytes),
            human_duration(seconds)
        ),
        limit: format!(
            "{} available and {} of time; {instead}",
            human_bytes(available),
            human_duration(MAX_DENSE_SECONDS)
        ),
    })
}

/// Factors the symmetric positive definite `n × n` row-major matrix `a` in place as `L Lᵀ`
/// (the lower triangle of `a` becomes `L`; the strict upper triangle is left as is).
///
/// Fails with the index of the first pivot that is not positive (the matrix is not positive
/// definite to working precision).
pub(crate) fn cholesky(a: &mut [f64], n: usize) -> Result<(), usize> {
    cholesky_until(a, n, None).expect("without an interrupt the factorization runs to its end")
}

/// [`cholesky`], or `None` as soon as `interrupt` is set (polled before every column: at most
/// `n²` multiply-adds apart, a fraction of a second for the largest Hessian that fits in
/// memory); `a` is then partly factored.
pub(crate) fn cholesky_until(
    a: &mut [f64],
    n: usize,
    interrupt: Option<&Interrupt>,
) -> Option<Result<(), usize>> {
    debug_assert_eq!(a.len(), n * n);
    for j in 0..n {
        if interrupt.is_some_and(Interrupt::is_set) {
            return None;
        }
        let mut diag = a[j * n + j];
        for k in 0..j {
            diag -= a[j * n + k] * a[j * n + k];
        }
        if !(diag > 0.0 && diag.is_finite()) {
            return Some(Err(j));
        }
        let ljj = diag.sqrt();
        a[j * n + j] = ljj;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            let (ri, rj) = (&a[i * n..i * n + j], &a[j * n..j * n + j]);
            s -= ri.iter().zip(rj).map(|(x, y)| x * y).sum::<f64>();
            a[i * n + j] = s / ljj;
        }
    }
    Some(Ok(()))
}

/// Solves `L Lᵀ x = b` in place, given the factor from [`cholesky`].
pub(crate) fn cholesky_solve(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let s: f64 = (0..i).map(|k| l[i * n + k] * b[k]).sum();
        b[i] = (b[i] - s) / l[i * n + i];
    }
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|k| l[k * n + i] * b[k]).sum();
        b[i] = (b[i] - s) / l[i * n + i];
    }
}

/// The inverse of a symmetric positive definite matrix, or the index of the first failing
/// pivot.
#[cfg(test)]
pub(crate) fn spd_inverse(a: &[f64], n: usize) -> Result<Vec<f64>, usize> {
    let mut l = a.to_vec();
    cholesky(&mut l, n)?;
    let mut inv = vec![0.0; n * n];
    let mut e = vec![0.0; n];
    for c in 0..n {
        e.iter_mut().for_each(|v| *v = 0.0);
        e[c] = 1.0;
        cholesky_solve(&l, n, &mut e);
        for r in 0..n {
            inv[r * n + c] = e[r];
        }
    }
    Ok(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_and_inverts() {
        // A = Bᵀ B + I, well conditioned.
        let n = 5;
        let bm: Vec<f64> = (0..n * n)
            .map(|i| ((i * 7 % 11) as f64 - 5.0) / 3.0)
            .collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n).map(|k| bm[k * n + i] * bm[k * n + j]).sum::<f64>()
                    + if i == j { 1.0 } else { 0.0 };
            }
        }
        let x: Vec<f64> = (0..n).map(|i| i as f64 - 1.5).collect();
        let mut b: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|j| a[i * n + j] * x[j]).sum())
            .collect();
        let mut l = a.clone();
        cholesky(&mut l, n).unwrap();
        cholesky_solve(&l, n, &mut b);
        for (u, v) in b.iter().zip(&x) {
            assert!((u - v).abs() < 1e-12);
        }
        let inv = spd_inverse(&a, n).unwrap();
        for i in 0..n {
            for j in 0..n {
                let p: f64 = (0..n).map(|k| a[i * n + k] * inv[k * n + j]).sum();
                assert!((p - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
        // Not positive definite: fails at the offending pivot.
        let mut m = vec![1.0, 2.0, 2.0, 1.0];
        assert_eq!(cholesky(&mut m, 2), Err(1));
    }
}
