//! MPLE by block successive lower-bound maximization (BSLM, Sec. 2 of Nguyen & Wood).
//!
//! One sweep is the b-step, `b_j ← b_j + (1/n) ∂P_n/∂b_j` for `j = 1, …, d` (Eq. 2.4), then the
//! M-step, `m_jk ← m_jk + (1/2n) ∂P_n/∂m_jk` for the upper couplings in lexicographic order
//! `m_12, m_13, …, m_{d−1,d}` (Eq. 2.7), each derivative taken at the latest parameters. Each
//! update maximizes a quadratic minorizer of `P_n` in one coordinate (Eqs. 2.3 and 2.6, whose
//! curvatures `−n` and `−2n` bound `∂²P_n/∂b_j²` and `∂²P_n/∂m_jk²`), so `P_n` never
//! decreases (Theorem 1) and the iterates converge to the unique maximizer (Corollary 1).
//!
//! In general the curvature of coordinate `θ_a` is bounded by `c·Σ_i (∂h_ij/∂θ_a)²` over the
//! fields it enters, with `c` the convention's [`variance_bound`] (1 for spin: `n` and `2n`
//! exactly as in the paper; 1/4 for binary, where the bound for `m_jk` is
//! `(Σ_i x_ij² + Σ_i x_ik²)/4`). An L2 penalty `n·λ/2·θ_a²` adds `nλ` to every curvature and
//! `−nλθ_a` to every derivative; the minorizers stay valid, so the penalized objective never
//! decreases either. A step factor `μ` multiplies every update: [`super::ga`] is this same
//! sweep with `μ ≠ 1` (Eqs. 4.1-4.2).
//!
//! The local fields `h_ij = m_jᵀx_i + b_j` and conditional means `E[x_j | h_ij]` of every
//! distinct row are kept up to date, so one coordinate update costs `O(n)`, not `O(nd)`: a
//! change `δ` of `m_jk` moves `h_ij` by `δ·x_ik` and `h_ik` by `δ·x_ij`, and the means follow
//! by the exact addition formulas of [`Convention::shifted_mean`] (one division per row
//! instead of a `tanh`). Fields and means are recomputed from the parameters every
//! [`REFRESH_EVERY`] sweeps, so round-off cannot accumulate. The objective after a sweep
//! takes one logarithm per distinct row, not one per row and unit
//! ([`Convention::log_prob_parts`]).
//!
//! [`variance_bound`]: Convention::variance_bound

use super::convention::Convention;
use super::model::{n_params, Fvbm};
use super::mple::{drive, prepare, Algorithm, FvbmFit, MpleParams, Progress, Solver, Step};
use super::pseudo::{fields, for_each_chunk, map_indices, PlData};
use crate::data::Dataset;
use crate::error::Result;
use std::time::Instant;

/// Sweeps between two recomputations of the local fields from the parameters.
pub const REFRESH_EVERY: usize = 64;

/// Most units whose objective factors (in `[½, 2]`) are multiplied before a logarithm.
const PRODUCT_UNITS: usize = 512;

/// Fits an FVBM by BSLM (MPLE), from [`MpleParams::init`] (or `θ = 0`) until the objective
/// gains less than `τ` in a sweep.
///
/// ```
/// use boltzkit::fvbm::{bslm, exact, Convention, Fvbm, MpleParams};
/// use boltzkit::rng::rng_from_seed;
/// let truth = Fvbm::random(4, 0.5, Convention::Spin, &mut rng_from_seed(0))?;
/// let data = exact::sample(&truth, 2000, &mut rng_from_seed(1))?;
/// let fit = bslm::fit(&data, &MpleParams::default())?;
/// assert!(fit.record.is_monotone());
/// assert!(fit.record.final_objective() > fit.record.objective[0]);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn fit(data: &Dataset, params: &MpleParams) -> Result<FvbmFit> {
    fit_observed(data, params, |_| {})
}

/// [`fit`] with an observer called after every sweep.
pub fn fit_observed(
    data: &Dataset,
    params: &MpleParams,
    mut observer: impl FnMut(&Progress),
) -> Result<FvbmFit> {
    let start = Instant::now();
    let (pl, init) = prepare(data, params)?;
    fit_prepared(
        &pl,
        &init,
        params,
        1.0,
        Algorithm::Bslm,
        start,
        &mut observer,
    )
}

/// The sweep loop on prepared data, with step factor `step` (`μ`).
pub(crate) fn fit_prepared(
    pl: &PlData,
    init: &Fvbm,
    params: &MpleParams,
    step: f64,
    algorithm: Algorithm,
    start: Instant,
    observer: &mut dyn FnMut(&Progress),
) -> Result<FvbmFit> {
    let mut sweeper = Sweeper::new(pl, init, step, params.l2)?;
    drive(&mut sweeper, pl, params, algorithm, start, observer)
}

/// Two distinct columns `j < k` of a `d × rows` column-major table, both mutable.
fn two_columns(v: &mut [f64], rows: usize, j: usize, k: usize) -> (&mut [f64], &mut [f64]) {
    debug_assert!(j < k);
    let (a, b) = v.split_at_mut(k * rows);
    (&mut a[j * rows..(j + 1) * rows], &mut b[..rows])
}

/// `Σ_u w_u (x_u − e_u)`, in four interleaved partial sums (a fixed order, so the result is
/// reproducible, and independent chains the compiler can pipeline and vectorize).
fn residual_sum(w: &[f64], x: &[f64], e: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let n4 = w.len() / 4 * 4;
    for ((w4, x4), e4) in w[..n4]
        .chunks_exact(4)
        .zip(x.chunks_exact(4))
        .zip(e.chunks_exact(4))
    {
        for l in 0..4 {
            acc[l] += w4[l] * (x4[l] - e4[l]);
        }
    }
    let tail: f64 = (n4..w.len()).map(|u| w[u] * (x[u] - e[u])).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `Σ_u w_u ((x_uj − e_uj) x_uk + (x_uk − e_uk) x_uj)`, the derivative of Eq. 2.7, in four
/// interleaved partial sums.
fn cross_gradient(w: &[f64], xj: &[f64], ej: &[f64], xk: &[f64], ek: &[f64]) -> f64 {
    let term = |w: f64, xj: f64, ej: f64, xk: f64, ek: f64| w * ((xj - ej) * xk + (xk - ek) * xj);
    let mut acc = [0.0f64; 4];
    let n4 = w.len() / 4 * 4;
    for ((((w4, xj4), ej4), xk4), ek4) in w[..n4]
        .chunks_exact(4)
        .zip(xj.chunks_exact(4))
        .zip(ej.chunks_exact(4))
        .zip(xk.chunks_exact(4))
        .zip(ek.chunks_exact(4))
    {
        for l in 0..4 {
            acc[l] += term(w4[l], xj4[l], ej4[l], xk4[l], ek4[l]);
        }
    }
    let tail: f64 = (n4..w.len())
        .map(|u| term(w[u], xj[u], ej[u], xk[u], ek[u]))
        .sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Applies `f` to every mean of a column.
#[inline(always)]
fn shift_means(e: &mut [f64], f: impl Fn(f64) -> f64) {
    for v in e.iter_mut() {
        *v = f(*v);
    }
}

/// The columns a coupling update touches.
struct PairColumns<'c> {
    xj: &'c [f64],
    xk: &'c [f64],
    hj: &'c mut [f64],
    hk: &'c mut [f64],
    ej: &'c mut [f64],
    ek: &'c mut [f64],
}

impl PairColumns<'_> {
    /// Moves the fields by `δ·x` and the means by `f(mean, x)` (the addition formula).
    #[inline(always)]
    fn shift(self, delta: f64, f: impl Fn(f64, f64) -> f64) {
        let rows = self.xj.len();
        let (hj, hk, ej, ek) = (
            &mut self.hj[..rows],
            &mut self.hk[..rows],
            &mut self.ej[..rows],
            &mut self.ek[..rows],
        );
        let xk = &self.xk[..rows];
        for u in 0..rows {
            let (a, b) = (self.xj[u], xk[u]);
            hj[u] += delta * b;
            hk[u] += delta * a;
            ej[u] = f(ej[u], b);
            ek[u] = f(ek[u], a);
        }
    }
}

/// The BSLM state: parameters, and the fields and conditional means of every distinct row.
pub(crate) struct Sweeper<'a> {
    data: &'a PlData,
    conv: Convention,
    d: usize,
    rows: usize,
    b: Vec<f64>,
    m: Vec<f64>,
    /// `h[j·rows + u]`: the local field of unit `j` at distinct row `u`.
    h: Vec<f64>,
    /// `e[j·rows + u] = E[x_j | h_uj]`.
    e: Vec<f64>,
    /// `Σ_u w_u x_uj²` per unit.
    sq: Vec<f64>,
    n: f64,
    step: f64,
    /// `n·λ`.
    l2n: f64,
    objective: f64,
    sweeps: usize,
    /// Per-row products of the objective's `f` parts (scratch, `rows` long).
    product: Vec<f64>,
}

impl<'a> Sweeper<'a> {
    pub(crate) fn new(data: &'a PlData, init: &Fvbm, step: f64, l2: f64) -> Result<Self> {
        data.check_model(init)?;
        let (d, rows) = (data.d(), data.n_distinct());
        let n = data.n_samples() as f64;
        let sq = (0..d)
            .map(|j| {
                data.column(j)
                    .iter()
                    .zip(data.weights())
                    .map(|(x, w)| w * x * x)
                    .sum()
            })
            .collect();
        let mut s = Sweeper {
            data,
            conv: data.convention(),
            d,
            rows,
            b: init.b().to_vec(),
            m: init.m().to_vec(),
            h: fields(init, data),
            e: vec![0.0; d * rows],
            sq,
            n,
            step,
            l2n: n * l2,
            objective: 0.0,
            sweeps: 0,
            product: vec![1.0; rows],
        };
        s.update_objective(true);
        Ok(s)
    }

    /// The b-step for unit `j` (Eq. 2.4, with step factor and penalty).
    fn update_b(&mut self, j: usize) {
        let (rows, conv) = (self.rows, self.conv);
        let x = self.data.column(j);
        let e = &mut self.e[j * rows..(j + 1) * rows];
        let g = residual_sum(self.data.weights(), x, e) - self.l2n * self.b[j];
        let curvature = conv.variance_bound() * self.n + self.l2n;
        let delta = self.step * g / curvature;
        if delta == 0.0 || !delta.is_finite() {
            return;
        }
        self.b[j] += delta;
        let t = conv.shift_constant(delta);
        for hv in &mut self.h[j * rows..(j + 1) * rows] {
            *hv += delta;
        }
        match conv {
            Convention::Spin => shift_means(e, |v| Convention::Spin.shifted_mean(v, 1.0, t)),
            Convention::Binary => shift_means(e, |v| Convention::Binary.shifted_mean(v, 1.0, t)),
        }
    }

    /// The M-step for the coupling `m_jk`, `j < k` (Eq. 2.7, with step factor and penalty).
    fn update_m(&mut self, j: usize, k: usize) {
        let (d, rows, conv) = (self.d, self.rows, self.conv);
        let w = self.data.weights();
        let (xj, xk) = (self.data.column(j), self.data.column(k));
        let (ej, ek) = two_columns(&mut self.e, rows, j, k);
        let mjk = self.m[j * d + k];
        let g = cross_gradient(w, xj, ej, xk, ek) - self.l2n * mjk;
        let curvature = conv.variance_bound() * (self.sq[j] + self.sq[k]) + self.l2n;
        if curvature <= 0.0 {
            return; // both columns are all zero (binary): m_jk does not enter P_n
        }
        let delta = self.step * g / curvature;
        if delta == 0.0 || !delta.is_finite() {
            return;
        }
        self.m[j * d + k] = mjk + delta;
        self.m[k * d + j] = mjk + delta;
        let t = conv.shift_constant(delta);
        let (hj, hk) = two_columns(&mut self.h, rows, j, k);
        let cols = PairColumns {
            xj,
            xk,
            hj,
            hk,
            ej,
            ek,
        };
        match conv {
            Convention::Spin => cols.shift(delta, |v, x| Convention::Spin.shifted_mean(v, x, t)),
            Convention::Binary => {
                cols.shift(delta, |v, x| Convention::Binary.shifted_mean(v, x, t))
            }
        }
    }

    /// One sweep: the b-step, then the M-step in lexicographic order.
    pub(crate) fn sweep(&mut self) {
        for j in 0..self.d {
            self.update_b(j);
        }
        for j in 0..self.d {
            for k in j + 1..self.d {
                self.update_m(j, k);
            }
        }
        self.sweeps += 1;
        let refresh = self.sweeps.is_multiple_of(REFRESH_EVERY);
        if refresh {
            let model = Fvbm::new(self.b.clone(), self.m.clone(), self.conv)
                .expect("BSLM updates keep M symmetric with a zero diagonal");
            self.h = fields(&model, self.data);
        }
        self.update_objective(refresh);
    }

    /// Recomputes the objective (log-PL minus penalty) from the fields, and the means from
    /// the fields when `means` is set.
    fn update_objective(&mut self, means: bool) {
        let (rows, conv) = (self.rows, self.conv);
        let data = self.data;
        let w = data.weights();
        let h = &self.h;
        let work = 32 * h.len();
        if means {
            for_each_chunk(&mut self.e, rows, work, |j, ej| {
                for (ev, &hv) in ej.iter_mut().zip(&h[j * rows..(j + 1) * rows]) {
                    *ev = conv.mean(hv);
                }
            });
        }
        // ln P(x_uj | h_uj) = r_uj + ln f_uj (Convention::log_prob_parts): the r parts summed
        // per unit in unit order, the f parts multiplied across at most PRODUCT_UNITS units
        // per row (so the product neither overflows nor underflows), one logarithm per row.
        let e = &self.e;
        let sums = map_indices(self.d, work, |j| {
            let (hj, ej) = (&h[j * rows..(j + 1) * rows], &e[j * rows..(j + 1) * rows]);
            hj.iter()
                .zip(ej)
                .zip(data.column(j))
                .zip(w)
                .map(|(((&hv, &ev), &x), &wv)| wv * conv.log_prob_parts(x, hv, ev).0)
                .sum::<f64>()
        });
        let mut pl: f64 = sums.iter().sum();
        for group in (0..self.d).step_by(PRODUCT_UNITS) {
            self.product.iter_mut().for_each(|f| *f = 1.0);
            for j in group..(group + PRODUCT_UNITS).min(self.d) {
                let (hj, ej) = (&h[j * rows..(j + 1) * rows], &e[j * rows..(j + 1) * rows]);
                let xj = data.column(j);
                for (u, f) in self.product.iter_mut().enumerate() {
                    *f *= conv.log_prob_parts(xj[u], hj[u], ej[u]).1;
                }
            }
            pl += self
                .product
                .iter()
                .zip(w)
                .map(|(f, wv)| wv * f.ln())
                .sum::<f64>();
        }
        let sq: f64 = self.theta().iter().map(|t| t * t).sum();
        self.objective = pl - 0.5 * self.l2n * sq;
    }
}

impl Solver for Sweeper<'_> {
    fn objective(&self) -> f64 {
        self.objective
    }

    fn step(&mut self) -> Result<Step> {
        self.sweep();
        Ok(Step::Moved)
    }

    fn theta(&self) -> Vec<f64> {
        let d = self.d;
        let mut t = Vec::with_capacity(n_params(d));
        t.extend_from_slice(&self.b);
        for j in 0..d {
            t.extend_from_slice(&self.m[j * d + j + 1..(j + 1) * d]);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::super::exact;
    use super::super::mple::penalized_log_pl;
    use super::super::pseudo::{self, PlData};
    use super::super::StopReason;
    use super::*;
    use crate::rng::rng_from_seed;

    /// The paper's updates written out literally for the spin convention (Eqs. 2.4 and 2.7,
    /// derivatives from their definitions over the raw samples), one sweep.
    fn paper_sweep(model: &Fvbm, data: &Dataset) -> Fvbm {
        let d = model.d();
        let n = data.n_samples() as f64;
        let xs: Vec<Vec<f64>> = data
            .values()
            .outer_iter()
            .map(|r| r.iter().map(|&v| 2.0 * f64::from(v) - 1.0).collect())
            .collect();
        let mut b = model.b().to_vec();
        let mut m = model.m().to_vec();
        let field = |b: &[f64], m: &[f64], x: &[f64], j: usize| {
            b[j] + (0..d).map(|k| m[j * d + k] * x[k]).sum::<f64>()
        };
        for j in 0..d {
            let g: f64 = xs.iter().map(|x| x[j] - field(&b, &m, x, j).tanh()).sum();
            b[j] += g / n;
        }
        for j in 0..d {
            for k in j + 1..d {
                let g: f64 = xs
                    .iter()
                    .map(|x| {
                        2.0 * x[j] * x[k]
                            - x[k] * field(&b, &m, x, j).tanh()
                            - x[j] * field(&b, &m, x, k).tanh()
                    })
                    .sum();
                m[j * d + k] += g / (2.0 * n);
                m[k * d + j] = m[j * d + k];
            }
        }
        Fvbm::new(b, m, Convention::Spin).unwrap()
    }

    #[test]
    fn one_sweep_is_the_papers_update() {
        let truth = Fvbm::random(5, 0.5, Convention::Spin, &mut rng_from_seed(7)).unwrap();
        let data = exact::sample(&truth, 500, &mut rng_from_seed(8)).unwrap();
        let init = Fvbm::random(5, 0.5, Convention::Spin, &mut rng_from_seed(9)).unwrap();
        let pl = PlData::new(&data, Convention::Spin).unwrap();
        let mut s = Sweeper::new(&pl, &init, 1.0, 0.0).unwrap();
        let mut want = init.clone();
        for _ in 0..3 {
            s.sweep();
            want = paper_sweep(&want, &data);
            for (a, b) in s.theta().iter().zip(want.theta()) {
                assert!((a - b).abs() < 1e-12, "{a} vs {b}");
            }
            let model = Fvbm::from_theta(5, &s.theta(), Convention::Spin).unwrap();
            let exact_pl = pseudo::log_pl(&model, &pl).unwrap();
            assert!((s.objective() - exact_pl).abs() < 1e-9);
        }
    }

    /// Monotone on random problems, both conventions, with and without penalty, from the
    /// paper's random initialization; and the tracked objective is the exact one.
    #[test]
    fn log_pl_never_decreases_on_random_problems() {
        for seed in 0..6u64 {
            let conv = if seed % 2 == 0 {
                Convention::Spin
            } else {
                Convention::Binary
            };
            let d = 3 + seed as usize;
            let truth = Fvbm::random(d, 0.5, conv, &mut rng_from_seed(seed)).unwrap();
            let data = exact::sample(
                &truth,
                300 + 100 * seed as usize,
                &mut rng_from_seed(seed + 50),
            )
            .unwrap();
            let params = MpleParams {
                convention: conv,
                l2: if seed >= 4 { 0.01 } else { 0.0 },
                init: Some(Fvbm::random(d, 0.5, conv, &mut rng_from_seed(seed + 99)).unwrap()),
                max_iterations: 3000,
                ..Default::default()
            };
            let fit = fit(&data, &params).unwrap();
            let r = &fit.record;
            assert!(r.iterations >= 2, "seed {seed}: {} sweeps", r.iterations);
            for (s, w) in r.objective.windows(2).enumerate() {
                assert!(
                    w[1] >= w[0],
                    "seed {seed} sweep {}: {} → {}",
                    s + 1,
                    w[0],
                    w[1]
                );
            }
            assert_ne!(r.stop, StopReason::Decreased);
            let pl = PlData::new(&data, conv).unwrap();
            let exact_obj = penalized_log_pl(&fit.model, &pl, params.l2).unwrap();
            assert!((r.final_objective() - exact_obj).abs() < 1e-8 * exact_obj.abs());
        }
    }

    #[test]
    fn rejects_bad_settings() {
        let data = Dataset::binary(ndarray::array![[0u8, 1], [1, 1]]).unwrap();
        for (p, field) in [
            (
                MpleParams {
                    tau: -1.0,
                    ..Default::default()
                },
                "tau",
            ),
            (
                MpleParams {
                    l2: f64::NAN,
                    ..Default::default()
                },
                "l2",
            ),
            (
                MpleParams {
                    max_iterations: 0,
                    ..Default::default()
                },
                "max_iterations",
            ),
            (
                MpleParams {
                    init: Some(Fvbm::zeros(2, Convention::Binary).unwrap()),
                    ..Default::default()
                },
                "init",
            ),
            (
                MpleParams {
                    init: Some(Fvbm::zeros(3, Convention::Spin).unwrap()),
                    ..Default::default()
                },
                "init",
            ),
        ] {
            let e = fit(&data, &p).unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
    }
}
