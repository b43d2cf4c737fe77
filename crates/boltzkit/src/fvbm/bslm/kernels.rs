//! The row loops of a BSLM sweep over one block of distinct rows, each an AVX2+FMA kernel
//! with a portable twin that gives the same bits (the same operations in the same order, with
//! `mul_add` where the kernel fuses).
//!
//! A coordinate update moves a field by `δ·x`; the conditional mean follows by the addition
//! formula of [`Convention::shifted_mean`], written with the shift `s = x·c` (`c = tanh δ` for
//! spin, `c = e^δ − 1` for binary) as `e' = num/den` with `den = 1 + e·s` and `num = e + s`
//! (spin) or `num = e + e·s` (binary). A coupling `m_jk` moves two means, which share one
//! division: `r = 1/(den_j·den_k)`, `e_j' = num_j·(den_k·r)`, `e_k' = num_k·(den_j·r)`. The
//! product of the two denominators stays a normal number while `|δ| ≤` [`SHARED_DIVISION_MAX`];
//! beyond it [`shift_pair_exact`] divides twice.
//!
//! Every slice holds the same number of rows, a multiple of [`LANES`]; sums run over `LANES`
//! lanes (row `u` in lane `u mod LANES`) combined in a fixed order.
//!
//! [`Convention::shifted_mean`]: crate::fvbm::Convention::shifted_mean

use super::columns::{Next, Pair, LANES};
use crate::fvbm::Convention;

/// Largest `|δ|` for the shared division (the product of two denominators is at least
/// `e^{−4|δ|}` for spin and within `e^{±2|δ|}` for binary: far from under- and overflow).
pub(super) const SHARED_DIVISION_MAX: f64 = 64.0;

/// The shift constant `c` of a field change `δ`: `tanh δ` (spin) or `e^δ − 1` (binary).
pub(super) fn shift_constant(spin: bool, delta: f64) -> f64 {
    if spin {
        delta.tanh()
    } else {
        delta.exp_m1()
    }
}

/// The numerator of the shifted mean.
#[inline(always)]
fn numerator<const SPIN: bool>(e: f64, s: f64) -> f64 {
    if SPIN {
        e + s
    } else {
        e.mul_add(s, e)
    }
}

/// `(acc[0..4] + acc[4..8])`, then `(v0 + v1) + (v2 + v3)`: the fixed combination of lanes.
#[inline(always)]
fn combine(acc: &[f64; LANES]) -> f64 {
    let v: [f64; 4] = std::array::from_fn(|l| acc[l] + acc[l + 4]);
    (v[0] + v[1]) + (v[2] + v[3])
}

/// Whether the AVX2+FMA kernels can run here.
#[inline]
fn avx2_fma() -> bool {
    crate::cpu::has(crate::cpu::Feature::Avx2Fma)
}

/// Defines `fn $name` whose body is compiled twice: for AVX2+FMA, run when the CPU has them,
/// and portably otherwise. The same bits either way: the body fuses only where it calls
/// `mul_add`. (A body passed as a closure would not do: the closure is compiled on its own,
/// without the features, and its `mul_add`s become calls to the library's `fma`.)
macro_rules! dispatched {
    ($(#[$meta:meta])* $vis:vis fn $name:ident $(<const $g:ident: $gt:ty>)?
        ($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[$meta])*
        #[allow(clippy::too_many_arguments)]
        $vis fn $name$(<const $g: $gt>)?($($arg: $ty),*) -> $ret {
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            fn body$(<const $g: $gt>)?($($arg: $ty),*) -> $ret $body
            #[cfg(target_arch = "x86_64")]
            if avx2_fma() {
                #[target_feature(enable = "avx2,fma")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn fast$(<const $g: $gt>)?($($arg: $ty),*) -> $ret {
                    body$(::<$g>)?($($arg),*)
                }
                // SAFETY: the CPU has AVX2 and FMA (checked).
                return unsafe { fast$(::<$g>)?($($arg),*) };
            }
            body$(::<$g>)?($($arg),*)
        }
    };
}

/// Moves the means of units `j` and `k` by a coupling change with shift constant `c` (one
/// shared division per row); with `next`, returns `Σ_u (e'_uj·wx_un + e_un·wx_uj)`, the data
/// part of `∂P_n/∂m_jn` at the moved means (else 0).
pub(super) fn shift_pair(p: Pair<'_>, next: Option<Next<'_>>, c: f64, spin: bool) -> f64 {
    let rows = p.xj.len();
    assert!(
        rows.is_multiple_of(LANES)
            && p.xk.len() == rows
            && p.ej.len() == rows
            && p.ek.len() == rows,
        "shift_pair: columns of {rows} rows"
    );
    if let Some(q) = &next {
        assert!(q.wxj.len() == rows && q.wxn.len() == rows && q.en.len() == rows);
    }
    if avx2_fma() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX2 and FMA (checked); every column holds `rows` entries, a
        // multiple of LANES (asserted).
        return unsafe {
            match (spin, next) {
                (true, Some(q)) => avx2::shift_pair::<true, true>(p, Some(q), c),
                (true, None) => avx2::shift_pair::<true, false>(p, None, c),
                (false, Some(q)) => avx2::shift_pair::<false, true>(p, Some(q), c),
                (false, None) => avx2::shift_pair::<false, false>(p, None, c),
            }
        };
    }
    if spin {
        shift_pair_portable::<true>(p, next, c)
    } else {
        shift_pair_portable::<false>(p, next, c)
    }
}

/// The portable twin of [`shift_pair`].
pub(super) fn shift_pair_portable<const SPIN: bool>(
    p: Pair<'_>,
    next: Option<Next<'_>>,
    c: f64,
) -> f64 {
    let mut acc = [0.0f64; LANES];
    let rows = p.xj.len();
    for i in (0..rows).step_by(LANES) {
        for (l, a) in acc.iter_mut().enumerate() {
            let u = i + l;
            let sk = f64::from(p.xk[u]) * c;
            let sj = f64::from(p.xj[u]) * c;
            let (a0, b0) = (p.ej[u], p.ek[u]);
            let dj = a0.mul_add(sk, 1.0);
            let dk = b0.mul_add(sj, 1.0);
            let (nj, nk) = (numerator::<SPIN>(a0, sk), numerator::<SPIN>(b0, sj));
            let r = 1.0 / (dj * dk);
            let a1 = nj * (dk * r);
            p.ej[u] = a1;
            p.ek[u] = nk * (dj * r);
            if let Some(q) = &next {
                *a = a1.mul_add(f64::from(q.wxn[u]), *a);
                *a = q.en[u].mul_add(f64::from(q.wxj[u]), *a);
            }
        }
    }
    combine(&acc)
}

dispatched! {
    /// [`shift_pair`] without `next`, two divisions per row: for `|δ|` above
    /// [`SHARED_DIVISION_MAX`], where the shared denominator could leave the normal range.
    pub(super) fn shift_pair_exact(p: Pair<'_>, c: f64, spin: bool) -> () {
        let mean = |e: f64, s: f64| {
            let num = if spin { e + s } else { e.mul_add(s, e) };
            num / e.mul_add(s, 1.0)
        };
        for u in 0..p.xj.len() {
            let (sk, sj) = (f64::from(p.xk[u]) * c, f64::from(p.xj[u]) * c);
            p.ej[u] = mean(p.ej[u], sk);
            p.ek[u] = mean(p.ek[u], sj);
        }
    }
}

dispatched! {
    /// Moves the means of one unit by a bias change with shift constant `c` (every row's field
    /// moves by `δ`); with `next = (w, e_n)`, returns `Σ_u w_u e_un` (else 0).
    pub(super) fn shift_unit(e: &mut [f64], next: Option<(&[f32], &[f64])>, c: f64, spin: bool) -> f64 {
        let rows = e.len();
        assert!(rows.is_multiple_of(LANES), "shift_unit: {rows} rows");
        if let Some((w, en)) = next {
            assert!(w.len() == rows && en.len() == rows);
        }
        let mut acc = [0.0f64; LANES];
        for i in (0..rows).step_by(LANES) {
            for (l, a) in acc.iter_mut().enumerate() {
                let u = i + l;
                let v = e[u];
                let num = if spin { v + c } else { v.mul_add(c, v) };
                e[u] = num / v.mul_add(c, 1.0);
                if let Some((w, en)) = next {
                    *a = f64::from(w[u]).mul_add(en[u], *a);
                }
            }
        }
        combine(&acc)
    }
}

dispatched! {
    /// `Σ_u (e_uj·wx_uk + e_uk·wx_uj)`: the data part of `∂P_n/∂m_jk` (read only).
    pub(super) fn pair_sum(wxj: &[f32], wxk: &[f32], ej: &[f64], ek: &[f64]) -> f64 {
        let rows = ej.len();
        assert!(rows.is_multiple_of(LANES) && wxj.len() == rows && wxk.len() == rows && ek.len() == rows);
        // Two sets of lanes, so that no lane waits for its own previous sum.
        let (mut acc_j, mut acc_k) = ([0.0f64; LANES], [0.0f64; LANES]);
        for i in (0..rows).step_by(LANES) {
            for l in 0..LANES {
                let u = i + l;
                acc_j[l] = ej[u].mul_add(f64::from(wxk[u]), acc_j[l]);
                acc_k[l] = ek[u].mul_add(f64::from(wxj[u]), acc_k[l]);
            }
        }
        combine(&acc_j) + combine(&acc_k)
    }
}

dispatched! {
    /// `Σ_u w_u e_u`: the data part of `∂P_n/∂b_j` (read only).
    pub(super) fn weighted_sum(w: &[f32], e: &[f64]) -> f64 {
        let rows = e.len();
        assert!(rows.is_multiple_of(LANES) && w.len() == rows);
        let mut acc = [0.0f64; LANES];
        for i in (0..rows).step_by(LANES) {
            for (l, a) in acc.iter_mut().enumerate() {
                *a = f64::from(w[i + l]).mul_add(e[i + l], *a);
            }
        }
        combine(&acc)
    }
}

dispatched! {
    /// The weighted log-PL of one block of `rows` rows (unit `j` at `j·stride` in `x` and
    /// `e`), from fields `h_uj = b_j + Σ_k m_jk x_uk` computed afresh; with `refresh`, the
    /// means are first set to `E[x_j | h_uj]`. `ln P(x_uj | h_uj) = r_uj + ln f_uj`
    /// ([`Convention::log_prob_parts`]): the `r` parts summed, the `f` parts (in `[½, 2]`)
    /// multiplied across at most `product_units` units per row, one logarithm per row and
    /// group.
    pub(super) fn log_pl_block<const SPIN: bool>(
        refresh: bool,
        b: &[f64],
        m: &[f64],
        x: &[f32],
        e: &mut [f64],
        w: &[f32],
        rows: usize,
        stride: usize,
        product_units: usize,
    ) -> f64 {
        // The convention a constant, so that the row loops vectorize.
        let conv = if SPIN { Convention::Spin } else { Convention::Binary };
        let d = b.len();
        assert!(rows.is_multiple_of(LANES) && m.len() == d * d && w.len() >= rows);
        let span = d.saturating_sub(1) * stride + rows;
        assert!(d == 0 || (x.len() >= span && e.len() >= span));
        // Fields of UNITS units at a time, so that their sums over `k` run side by side.
        const UNITS: usize = 4;
        let mut total = 0.0;
        for t in (0..rows).step_by(LANES) {
            let mut r = [0.0f64; LANES];
            let mut f = [1.0f64; LANES];
            let mut ln_f = [0.0f64; LANES];
            for j0 in (0..d).step_by(UNITS) {
                // Units past the last repeat it; their fields are not used.
                let unit = |i: usize| (j0 + i).min(d - 1);
                let mut h: [[f64; LANES]; UNITS] = std::array::from_fn(|i| [b[unit(i)]; LANES]);
                for k in 0..d {
                    let xk = &x[k * stride + t..k * stride + t + LANES];
                    for (i, hi) in h.iter_mut().enumerate() {
                        let mjk = m[unit(i) * d + k];
                        for (hv, &xv) in hi.iter_mut().zip(xk) {
                            *hv = mjk.mul_add(f64::from(xv), *hv);
                        }
                    }
                }
                for (i, hj) in h.iter().enumerate().take(d - j0) {
                    let j = j0 + i;
                    let ej = &mut e[j * stride + t..j * stride + t + LANES];
                    if refresh {
                        for (ev, &hv) in ej.iter_mut().zip(hj) {
                            *ev = conv.mean(hv);
                        }
                    }
                    let xj = &x[j * stride + t..j * stride + t + LANES];
                    for l in 0..LANES {
                        let (rp, fp) = conv.log_prob_parts(f64::from(xj[l]), hj[l], ej[l]);
                        r[l] += rp;
                        f[l] *= fp;
                    }
                    if (j + 1) % product_units == 0 {
                        for (a, v) in ln_f.iter_mut().zip(f.iter_mut()) {
                            *a += v.ln();
                            *v = 1.0;
                        }
                    }
                }
            }
            for l in 0..LANES {
                total += f64::from(w[t + l]) * (r[l] + (ln_f[l] + f[l].ln()));
            }
        }
        total
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::super::columns::{Next, Pair, LANES};
    use std::arch::x86_64::*;

    /// Four `f32` at `p` as `f64`.
    #[inline(always)]
    unsafe fn load4(p: *const f32) -> __m256d {
        _mm256_cvtps_pd(_mm_loadu_ps(p))
    }

    /// [`super::combine`] of two accumulators (lanes 0-3 and 4-7).
    #[inline(always)]
    unsafe fn combine(acc: [__m256d; 2]) -> f64 {
        let mut v = [0.0f64; 4];
        _mm256_storeu_pd(v.as_mut_ptr(), _mm256_add_pd(acc[0], acc[1]));
        (v[0] + v[1]) + (v[2] + v[3])
    }

    /// [`super::shift_pair`] on AVX2+FMA; `NEXT` says whether `next` is given.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; every column holds the same number of rows, a multiple of
    /// [`LANES`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn shift_pair<const SPIN: bool, const NEXT: bool>(
        p: Pair<'_>,
        next: Option<Next<'_>>,
        c: f64,
    ) -> f64 {
        let rows = p.xj.len();
        let (xj, xk) = (p.xj.as_ptr(), p.xk.as_ptr());
        let (ej, ek) = (p.ej.as_mut_ptr(), p.ek.as_mut_ptr());
        let (wxj, wxn, en) = match &next {
            Some(q) => (q.wxj.as_ptr(), q.wxn.as_ptr(), q.en.as_ptr()),
            None => (xj, xj, ej as *const f64),
        };
        let cv = _mm256_set1_pd(c);
        let one = _mm256_set1_pd(1.0);
        let mut acc = [_mm256_setzero_pd(); 2];
        for i in (0..rows).step_by(LANES) {
            for (h, a) in acc.iter_mut().enumerate() {
                let u = i + 4 * h;
                let sk = _mm256_mul_pd(load4(xk.add(u)), cv);
                let sj = _mm256_mul_pd(load4(xj.add(u)), cv);
                let a0 = _mm256_loadu_pd(ej.add(u));
                let b0 = _mm256_loadu_pd(ek.add(u));
                let dj = _mm256_fmadd_pd(a0, sk, one);
                let dk = _mm256_fmadd_pd(b0, sj, one);
                let (nj, nk) = if SPIN {
                    (_mm256_add_pd(a0, sk), _mm256_add_pd(b0, sj))
                } else {
                    (_mm256_fmadd_pd(a0, sk, a0), _mm256_fmadd_pd(b0, sj, b0))
                };
                let r = _mm256_div_pd(one, _mm256_mul_pd(dj, dk));
                let a1 = _mm256_mul_pd(nj, _mm256_mul_pd(dk, r));
                let b1 = _mm256_mul_pd(nk, _mm256_mul_pd(dj, r));
                _mm256_storeu_pd(ej.add(u), a1);
                _mm256_storeu_pd(ek.add(u), b1);
                if NEXT {
                    *a = _mm256_fmadd_pd(a1, load4(wxn.add(u)), *a);
                    *a = _mm256_fmadd_pd(_mm256_loadu_pd(en.add(u)), load4(wxj.add(u)), *a);
                }
            }
        }
        combine(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(rows: usize, seed: u64, spin: bool) -> (Vec<f32>, Vec<f64>) {
        let mut s = seed;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let x: Vec<f32> = (0..rows)
            .map(|_| match (next() < 0.5, spin) {
                (true, true) => -1.0,
                (true, false) => 0.0,
                _ => 1.0,
            })
            .collect();
        let e = (0..rows)
            .map(|_| {
                let v = 0.999 * next();
                if spin {
                    2.0 * v - 1.0
                } else {
                    v
                }
            })
            .collect();
        (x, e)
    }

    /// The dispatched kernels (AVX2 where the CPU has it) give the portable twins' bits, and
    /// both give the addition formula's means to round-off.
    #[test]
    fn kernels_match_their_twins_and_the_addition_formula() {
        use crate::fvbm::Convention;
        let rows = 64;
        for spin in [true, false] {
            let conv = if spin {
                Convention::Spin
            } else {
                Convention::Binary
            };
            let (xj, ej0) = columns(rows, 1, spin);
            let (xk, ek0) = columns(rows, 2, spin);
            let (xn, en) = columns(rows, 3, spin);
            let w: Vec<f32> = (0..rows).map(|u| (1 + u % 5) as f32).collect();
            let wxj: Vec<f32> = w.iter().zip(&xj).map(|(a, b)| a * b).collect();
            let wxn: Vec<f32> = w.iter().zip(&xn).map(|(a, b)| a * b).collect();
            for delta in [-1.3, -0.02, 0.4] {
                let c = shift_constant(spin, delta);
                let run = |portable: bool, with_next: bool| {
                    let (mut ej, mut ek) = (ej0.clone(), ek0.clone());
                    let p = Pair {
                        xj: &xj,
                        xk: &xk,
                        ej: &mut ej,
                        ek: &mut ek,
                    };
                    let q = with_next.then(|| Next {
                        wxj: &wxj,
                        wxn: &wxn,
                        en: &en,
                    });
                    let g = match (portable, spin) {
                        (false, _) => shift_pair(p, q, c, spin),
                        (true, true) => shift_pair_portable::<true>(p, q, c),
                        (true, false) => shift_pair_portable::<false>(p, q, c),
                    };
                    (ej, ek, g)
                };
                let fast = run(false, true);
                assert_eq!(fast, run(true, true), "spin {spin} δ {delta}");
                let (ej, ek, g) = &fast;
                let (ej2, ek2, g2) = run(false, false);
                assert_eq!((ej, ek, 0.0), (&ej2, &ek2, g2));
                let t = conv.shift_constant(delta);
                let mut want_g = 0.0;
                for u in 0..rows {
                    let (a, b) = (f64::from(xj[u]), f64::from(xk[u]));
                    let wj = conv.shifted_mean(ej0[u], b, t);
                    let wk = conv.shifted_mean(ek0[u], a, t);
                    assert!((ej[u] - wj).abs() < 1e-15 && (ek[u] - wk).abs() < 1e-15);
                    want_g += wj * f64::from(wxn[u]) + en[u] * f64::from(wxj[u]);
                }
                assert!((g - want_g).abs() < 1e-12 * (1.0 + want_g.abs()));
                // Two divisions per row: the same means to round-off.
                let (mut ej3, mut ek3) = (ej0.clone(), ek0.clone());
                let p = Pair {
                    xj: &xj,
                    xk: &xk,
                    ej: &mut ej3,
                    ek: &mut ek3,
                };
                shift_pair_exact(p, c, spin);
                for u in 0..rows {
                    assert!((ej3[u] - ej[u]).abs() < 1e-15 && (ek3[u] - ek[u]).abs() < 1e-15);
                }
                // One unit: the addition formula with x = 1.
                let mut e1 = ej0.clone();
                let s1 = shift_unit(&mut e1, Some((&w, &en)), c, spin);
                for u in 0..rows {
                    assert!((e1[u] - conv.shifted_mean(ej0[u], 1.0, t)).abs() < 1e-15);
                }
                let want: f64 = w.iter().zip(&en).map(|(a, b)| f64::from(*a) * b).sum();
                assert!((s1 - want).abs() < 1e-12 * want.abs());
                assert!((weighted_sum(&w, &en) - want).abs() < 1e-12 * want.abs());
                let want: f64 = (0..rows)
                    .map(|u| ej0[u] * f64::from(wxn[u]) + en[u] * f64::from(wxj[u]))
                    .sum();
                let got = pair_sum(&wxj, &wxn, &ej0, &en);
                assert!((got - want).abs() < 1e-12 * (1.0 + want.abs()));
            }
        }
    }
}
