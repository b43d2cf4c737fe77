//! Exact evaluation of an [`Rbm`] by enumerating its smaller layer: the log-partition function
//! `ln Z = f(θ)` of Eq. 3 of the S-DCP paper, the average log-likelihood `g − f` (Eq. 4), and
//! its exact gradient `∇g − ∇f` (Eq. 5: data term minus model expectations).
//!
//! With the hidden layer enumerated, `ln Z = ln Σ_h exp(cᵀh + Σ_i softplus(b_i + W_{i,:}h))`;
//! with the visible layer enumerated, `ln Z = ln Σ_v exp(−F(v))`. The enumerated layer's
//! `2^m` states (`m ≤ 30`) are split into fixed blocks by their top bits; each block walks its
//! low bits in Gray-code order, so one unit flips per state and the other layer's input is
//! updated in `O(n)`. Blocks run in parallel and are combined in order (f64 log-sum-exp), so
//! the results are the same bits for any number of threads.

use super::model::Rbm;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::linalg::{scale_sum_log1p, sigmoid_f64, softplus_f64};
use crate::model::{LogPartition, Model};
use rayon::prelude::*;

/// Largest enumerated layer: `2^30` states.
pub const MAX_ENUM_UNITS: usize = 30;

/// Blocks processed per parallel round (bounds the memory of per-block accumulators).
const BLOCKS_PER_ROUND: usize = 64;

/// The exact gradient of the average log-likelihood with respect to `(W, b, c)`, in `f64`,
/// laid out like the model (`w` is `n_visible × n_hidden` row-major):
/// `∂/∂W_ij = ⟨v_i p(h_j=1|v)⟩_data − ⟨v_i h_j⟩_model`, `∂/∂b_i = ⟨v_i⟩_data − ⟨v_i⟩_model`,
/// `∂/∂c_j = ⟨p(h_j=1|v)⟩_data − ⟨h_j⟩_model` (Eq. 5 of the S-DCP paper).
#[derive(Debug, Clone, PartialEq)]
pub struct ExactGradient {
    /// `∂ℓ/∂W`, `n_visible × n_hidden` row-major.
    pub w: Vec<f64>,
    /// `∂ℓ/∂b`.
    pub b: Vec<f64>,
    /// `∂ℓ/∂c`.
    pub c: Vec<f64>,
}

/// How the softplus terms `Σ_j ln(1 + e^{x_j})` of each enumerated state's log-weight are
/// computed; both are `f64` throughout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// One `softplus` per term with the standard library (the reference; slower).
    F64,
    /// `y_j = e^{x_j}` kept along the Gray code by one multiplication per term
    /// (`e^{±W}` tabulated), the sum as the logarithm of `Π (1 + y_j)`
    /// ([`scale_sum_log1p`]): agrees with `F64` to about `1e-12` relative and is many times
    /// faster. Used whenever every input is bounded by `|x_j| ≤ 700` (so `e^{x_j}` neither
    /// overflows nor underflows); otherwise the `F64` path runs.
    #[default]
    Fast,
}

/// The enumeration layout: `m` enumerated units with biases `a`, `n` other units with biases
/// `o`, couplings `wt[i·n + j]` between enumerated unit `i` and other unit `j`.
struct Layout {
    m: usize,
    n: usize,
    a: Vec<f64>,
    o: Vec<f64>,
    wt: Vec<f64>,
    hidden_enumerated: bool,
}

impl Layout {
    fn new(rbm: &Rbm) -> Result<Self> {
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let m = nv.min(nh);
        if m > MAX_ENUM_UNITS {
            return Err(Error::TooLarge {
                what: "exact RBM enumeration".into(),
                needed: format!("2^{m} states (smaller layer of {nv} × {nh})"),
                limit: format!("2^{MAX_ENUM_UNITS}"),
            });
        }
        let f = |x: &[f32]| -> Vec<f64> { x.iter().map(|&v| f64::from(v)).collect() };
        if nh <= nv {
            // enumerate h: wt is Wᵀ (nh × nv)
            let mut wt = vec![0.0; nh * nv];
            for i in 0..nv {
                for j in 0..nh {
                    wt[j * nv + i] = f64::from(rbm.w()[i * nh + j]);
                }
            }
            Ok(Layout {
                m: nh,
                n: nv,
                a: f(rbm.c()),
                o: f(rbm.b()),
                wt,
                hidden_enumerated: true,
            })
        } else {
            Ok(Layout {
                m: nv,
                n: nh,
                a: f(rbm.b()),
                o: f(rbm.c()),
                wt: f(rbm.w()),
                hidden_enumerated: false,
            })
        }
    }

    /// Unnormalized log-probability of an enumerated state from `aᵀs` and the other layer's
    /// input `x = o + Wᵀs`: `aᵀs + Σ_j softplus(x_j)`.
    #[inline]
    fn log_weight(lin: f64, x: &[f64]) -> f64 {
        lin + x.iter().map(|&v| softplus_f64(v)).sum::<f64>()
    }

    /// Calls `visit(acc, s, lin, x)` for every enumerated state `s` (unit `i` = bit `i`),
    /// block `k` of `2^top_bits` holding the states whose top bits equal `k`, each block in
    /// Gray-code order; `reduce` receives the block accumulators in block order.
    fn for_each_state<T: Send>(
        &self,
        top_bits: usize,
        init: impl Fn() -> T + Sync,
        visit: impl Fn(&mut T, u64, f64, &[f64]) + Sync,
        mut reduce: impl FnMut(T),
    ) {
        let top_bits = top_bits.min(self.m);
        let low = self.m - top_bits;
        let n_blocks = 1u64 << top_bits;
        let run_block = |blk: u64| -> T {
            let mut acc = init();
            let mut s = blk << low;
            let (mut lin, mut x) = self.block_start(s, low);
            visit(&mut acc, s, lin, &x);
            for bit in gray_flips(low) {
                s ^= 1 << bit;
                if (s >> bit) & 1 == 1 {
                    lin += self.a[bit];
                    x.iter_mut().zip(self.row(bit)).for_each(|(v, &w)| *v += w);
                } else {
                    lin -= self.a[bit];
                    x.iter_mut().zip(self.row(bit)).for_each(|(v, &w)| *v -= w);
                }
                visit(&mut acc, s, lin, &x);
            }
            acc
        };
        let mut start = 0u64;
        while start < n_blocks {
            let end = (start + BLOCKS_PER_ROUND as u64).min(n_blocks);
            let accs: Vec<T> = (start..end).into_par_iter().map(run_block).collect();
            accs.into_iter().for_each(&mut reduce);
            start = end;
        }
    }

    /// `(aᵀs, o + Wᵀs)` from scratch for the state `s` whose bits below `low` are zero.
    fn block_start(&self, s: u64, low: usize) -> (f64, Vec<f64>) {
        let mut x = self.o.clone();
        let mut lin = 0.0f64;
        for i in low..self.m {
            if (s >> i) & 1 == 1 {
                lin += self.a[i];
                x.iter_mut().zip(self.row(i)).for_each(|(v, &w)| *v += w);
            }
        }
        (lin, x)
    }

    fn row(&self, i: usize) -> &[f64] {
        &self.wt[i * self.n..(i + 1) * self.n]
    }
}

/// Top bits used to split `m` enumerated units into parallel blocks (a function of `m` only,
/// so results never depend on the machine): blocks of at least `2^14` states, at most `2^12`
/// blocks.
fn default_top_bits(m: usize) -> usize {
    m.saturating_sub(14).min(12)
}

/// Streaming log-sum-exp: `(max, Σ e^{x − max})`.
#[derive(Clone, Copy)]
struct Lse {
    max: f64,
    sum: f64,
}

impl Lse {
    const EMPTY: Lse = Lse {
        max: f64::NEG_INFINITY,
        sum: 0.0,
    };

    #[inline]
    fn push(&mut self, x: f64) {
        if x > self.max {
            self.sum = self.sum * (self.max - x).exp() + 1.0;
            self.max = x;
        } else {
            self.sum += (x - self.max).exp();
        }
    }

    fn merge(&mut self, o: Lse) {
        if o.max == f64::NEG_INFINITY {
            return;
        }
        if o.max > self.max {
            self.sum = self.sum * (self.max - o.max).exp() + o.sum;
            self.max = o.max;
        } else {
            self.sum += o.sum * (o.max - self.max).exp();
        }
    }

    fn value(self) -> f64 {
        self.max + self.sum.ln()
    }
}

fn log_partition_with(layout: &Layout, top_bits: usize) -> Result<f64> {
    log_partition_prec(layout, top_bits, Precision::F64)
}

/// Largest `|x_j|` the product walk accepts (`e^{±700}` is a normal `f64`).
const PRODUCT_BOUND: f64 = 700.0;

/// The [`Precision::Fast`] walk over one block: `y_j = e^{x_j}` for the block's first state,
/// then along the Gray code `y ← y ⊙ e^{±W_{bit,:}}`, each state's softplus sum by
/// [`scale_sum_log1p`]. `None` when some `|x_j|` could exceed [`PRODUCT_BOUND`].
struct ProductWalk {
    exp_w: Vec<f64>,
    exp_neg_w: Vec<f64>,
    group: usize,
}

impl ProductWalk {
    fn new(layout: &Layout) -> Option<Self> {
        let n = layout.n;
        let mut bound: Vec<f64> = layout.o.iter().map(|o| o.abs()).collect();
        for i in 0..layout.m {
            bound
                .iter_mut()
                .zip(layout.row(i))
                .for_each(|(b, w)| *b += w.abs());
        }
        let max = bound.iter().cloned().fold(0.0, f64::max);
        if max > PRODUCT_BOUND || n == 0 {
            return None;
        }
        // each lane multiplies `group` factors ≤ 1 + e^max before renormalizing
        let group = (1000.0 / (max + 1.0)).floor().max(1.0) as usize;
        Some(ProductWalk {
            exp_w: layout.wt.iter().map(|w| w.exp()).collect(),
            exp_neg_w: layout.wt.iter().map(|w| (-w).exp()).collect(),
            group,
        })
    }

    fn block(&self, layout: &Layout, blk: u64, low: usize) -> Lse {
        let n = layout.n;
        let (mut lin, x) = layout.block_start(blk << low, low);
        let mut y: Vec<f64> = x.iter().map(|v| v.exp()).collect();
        let mut acc = Lse::EMPTY;
        acc.push(lin + scale_sum_log1p(&mut y, &vec![1.0; n], self.group));
        let mut s = blk << low;
        for bit in gray_flips(low) {
            s ^= 1 << bit;
            let table = if (s >> bit) & 1 == 1 {
                lin += layout.a[bit];
                &self.exp_w
            } else {
                lin -= layout.a[bit];
                &self.exp_neg_w
            };
            let f = &table[bit * n..(bit + 1) * n];
            acc.push(lin + scale_sum_log1p(&mut y, f, self.group));
        }
        acc
    }
}

/// The unit flipped at each step `t = 1, …, 2^low − 1` of the binary-reflected Gray code.
fn gray_flips(low: usize) -> impl Iterator<Item = usize> {
    (1u64..(1u64 << low)).map(|t| t.trailing_zeros() as usize)
}

fn log_partition_prec(layout: &Layout, top_bits: usize, precision: Precision) -> Result<f64> {
    let mut total = Lse::EMPTY;
    let walk = match precision {
        Precision::Fast => ProductWalk::new(layout),
        Precision::F64 => None,
    };
    if let Some(walk) = walk {
        let top_bits = top_bits.min(layout.m);
        let low = layout.m - top_bits;
        let n_blocks = 1u64 << top_bits;
        let mut start = 0u64;
        while start < n_blocks {
            let end = (start + BLOCKS_PER_ROUND as u64).min(n_blocks);
            let accs: Vec<Lse> = (start..end)
                .into_par_iter()
                .map(|blk| walk.block(layout, blk, low))
                .collect();
            accs.into_iter().for_each(|b| total.merge(b));
            start = end;
        }
    } else {
        layout.for_each_state(
            top_bits,
            || Lse::EMPTY,
            |acc, _s, lin, x| acc.push(Layout::log_weight(lin, x)),
            |b| total.merge(b),
        );
    }
    let v = total.value();
    if !v.is_finite() {
        return Err(Error::Numerical {
            context: "rbm::exact::log_partition".into(),
            detail: format!("ln Z = {v}"),
        });
    }
    Ok(v)
}

/// The exact `ln Z = ln Σ_{v,h} e^{−E(v,h)}` (the `f(θ)` of Eq. 3 of the S-DCP paper) by
/// enumerating the smaller layer; an error when it has more than [`MAX_ENUM_UNITS`] units.
///
/// ```
/// use boltzkit::rbm::{exact, Rbm};
/// // all parameters zero: Z = 2^(n_visible + n_hidden)
/// let rbm = Rbm::zeros(7, 3)?;
/// assert!((exact::log_partition(&rbm)? - 10.0 * 2f64.ln()).abs() < 1e-12);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn log_partition(rbm: &Rbm) -> Result<f64> {
    log_partition_with_precision(rbm, Precision::default())
}

/// [`log_partition`] with the softplus terms computed at the given [`Precision`].
pub fn log_partition_with_precision(rbm: &Rbm, precision: Precision) -> Result<f64> {
    let layout = Layout::new(rbm)?;
    log_partition_prec(&layout, default_top_bits(layout.m), precision)
}

/// Fails unless `data` is non-empty, binary and has one column per visible unit (`op` names
/// the caller in the error).
pub(crate) fn check_data_for(rbm: &Rbm, data: &Dataset, op: &str) -> Result<()> {
    data.require_nonempty()?;
    if !data.is_binary() {
        return Err(Error::InvalidData("an RBM needs binary (0/1) data".into()));
    }
    if data.n_vars() != rbm.n_visible() {
        return Err(Error::Shape {
            op: op.into(),
            expected: format!("data with {} variables (visible units)", rbm.n_visible()),
            found: format!("{}", data.n_vars()),
        });
    }
    Ok(())
}

/// `−F(v)` of every sample of a non-empty binary dataset, in order, in parallel (`f64`).
pub fn neg_free_energies(rbm: &Rbm, data: &Dataset) -> Result<Vec<f64>> {
    check_data_for(rbm, data, "RBM free energies")?;
    (0..data.n_samples())
        .into_par_iter()
        .map(|s| {
            let v = data.sample(s);
            let v: Vec<u8> = v.iter().copied().collect();
            rbm.free_energy(&v).map(|f| -f)
        })
        .collect()
}

/// The exact average log-likelihood `(1/N) Σ_s ln p(v_s) = (1/N) Σ_s −F(v_s) − ln Z` of a
/// binary dataset (Eq. 4 of the S-DCP paper, averaged over the samples).
/// [`Model::log_likelihood`] by enumeration.
pub fn average_log_likelihood(rbm: &Rbm, data: &Dataset) -> Result<f64> {
    Ok(rbm.log_likelihood(data, &LogPartition::Exact)?.value)
}

/// Largest enumerated layer for [`sample`]: `2^20` states are tabulated.
pub const MAX_SAMPLE_UNITS: usize = 20;

/// `n` exact, independent draws of the visible layer (`n × n_visible`, 0/1 as `f32`): the
/// smaller layer's marginal is tabulated by enumeration (at most [`MAX_SAMPLE_UNITS`] units),
/// a state is drawn from it by inverse CDF, and when that layer is the hidden one, `v` is
/// then drawn from `p(v | h)`. Reference sampler for tests (e.g. the side on which reverse
/// AIS errs) and for tiny models.
pub fn sample<R: rand::Rng + ?Sized>(rbm: &Rbm, n: usize, rng: &mut R) -> Result<Vec<f32>> {
    let layout = Layout::new(rbm)?;
    if layout.m > MAX_SAMPLE_UNITS {
        return Err(Error::TooLarge {
            what: "exact RBM sampling".into(),
            needed: format!("2^{} states", layout.m),
            limit: format!("2^{MAX_SAMPLE_UNITS}"),
        });
    }
    let mut log_w = vec![0f64; 1 << layout.m];
    let mut blocks: Vec<Vec<(u64, f64)>> = Vec::new();
    layout.for_each_state(
        default_top_bits(layout.m),
        Vec::new,
        |acc: &mut Vec<(u64, f64)>, s, lin, x| acc.push((s, Layout::log_weight(lin, x))),
        |b| blocks.push(b),
    );
    for (s, lw) in blocks.into_iter().flatten() {
        log_w[s as usize] = lw;
    }
    let mx = log_w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let mut cdf = Vec::with_capacity(log_w.len());
    let mut total = 0.0;
    for &lw in &log_w {
        total += (lw - mx).exp();
        cdf.push(total);
    }
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    let mut out = vec![0f32; n * nv];
    let mut h = vec![0f32; nh];
    let mut pv = vec![0f32; nv];
    for row in out.chunks_exact_mut(nv) {
        let u: f64 = rng.random::<f64>() * total;
        let s = cdf.partition_point(|&c| c <= u).min(cdf.len() - 1);
        if layout.hidden_enumerated {
            h.iter_mut()
                .enumerate()
                .for_each(|(j, x)| *x = ((s >> j) & 1) as f32);
            rbm.visible_probs(&h, &mut pv)?;
            super::gibbs::sample_bernoulli(&pv, row, rng);
        } else {
            row.iter_mut()
                .enumerate()
                .for_each(|(i, x)| *x = ((s >> i) & 1) as f32);
        }
    }
    Ok(out)
}

/// Model expectations `(⟨v_i h_j⟩, ⟨v⟩, ⟨h⟩)` under the RBM, by the same enumeration.
struct Moments {
    vh: Vec<f64>,
    v: Vec<f64>,
    h: Vec<f64>,
}

/// Per-block accumulator of moments in the enumeration layout.
struct MomentAcc {
    s: Vec<f64>,
    o: Vec<f64>,
    cross: Vec<f64>,
    sig: Vec<f64>,
}

fn model_moments(layout: &Layout, top_bits: usize) -> Result<Moments> {
    let log_z = log_partition_with(layout, top_bits)?;
    let (m, n) = (layout.m, layout.n);
    let new_acc = || MomentAcc {
        s: vec![0.0; m],
        o: vec![0.0; n],
        cross: vec![0.0; m * n],
        sig: vec![0.0; n],
    };
    let mut total = new_acc();
    layout.for_each_state(
        top_bits,
        new_acc,
        |acc, s, lin, x| {
            let p = (Layout::log_weight(lin, x) - log_z).exp();
            for ((sg, o), &xj) in acc.sig.iter_mut().zip(acc.o.iter_mut()).zip(x) {
                *sg = p * sigmoid_f64(xj);
                *o += *sg;
            }
            let mut bits = s;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                acc.s[i] += p;
                let row = &mut acc.cross[i * n..(i + 1) * n];
                row.iter_mut().zip(&acc.sig).for_each(|(c, &g)| *c += g);
            }
        },
        |b| {
            let add = |t: &mut [f64], f: &[f64]| t.iter_mut().zip(f).for_each(|(a, &x)| *a += x);
            add(&mut total.s, &b.s);
            add(&mut total.o, &b.o);
            add(&mut total.cross, &b.cross);
        },
    );
    if layout.hidden_enumerated {
        // s = h (m = n_hidden), other = v (n = n_visible); cross[j·nv + i] = ⟨h_j v_i⟩
        let (nh, nv) = (m, n);
        let mut vh = vec![0.0; nv * nh];
        for j in 0..nh {
            for i in 0..nv {
                vh[i * nh + j] = total.cross[j * nv + i];
            }
        }
        Ok(Moments {
            vh,
            v: total.o,
            h: total.s,
        })
    } else {
        Ok(Moments {
            vh: total.cross,
            v: total.s,
            h: total.o,
        })
    }
}

/// The exact gradient of [`average_log_likelihood`] with respect to the parameters: data
/// expectations (with `p(h | v)` in closed form, `∇g` of Eq. 5) minus model expectations
/// (`∇f` of Eq. 5, by enumerating the smaller layer twice: once for `ln Z`, once for the
/// moments).
pub fn log_likelihood_gradient(rbm: &Rbm, data: &Dataset) -> Result<ExactGradient> {
    check_data_for(rbm, data, "RBM likelihood")?;
    let layout = Layout::new(rbm)?;
    let model = model_moments(&layout, default_top_bits(layout.m))?;
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    // data term, over fixed chunks of samples combined in order
    const CHUNK: usize = 256;
    let n_samples = data.n_samples();
    let partial: Vec<Moments> = (0..n_samples.div_ceil(CHUNK))
        .into_par_iter()
        .map(|k| {
            let mut acc = Moments {
                vh: vec![0.0; nv * nh],
                v: vec![0.0; nv],
                h: vec![0.0; nh],
            };
            let mut x = vec![0.0f64; nh];
            for s in k * CHUNK..((k + 1) * CHUNK).min(n_samples) {
                let v = data.sample(s);
                x.iter_mut()
                    .zip(rbm.c())
                    .for_each(|(a, &c)| *a = f64::from(c));
                for (i, &vi) in v.iter().enumerate() {
                    if vi != 0 {
                        let row = &rbm.w()[i * nh..(i + 1) * nh];
                        x.iter_mut().zip(row).for_each(|(a, &w)| *a += f64::from(w));
                    }
                }
                x.iter_mut().for_each(|a| *a = sigmoid_f64(*a));
                acc.h.iter_mut().zip(&x).for_each(|(a, &p)| *a += p);
                for (i, &vi) in v.iter().enumerate() {
                    if vi != 0 {
                        acc.v[i] += 1.0;
                        let row = &mut acc.vh[i * nh..(i + 1) * nh];
                        row.iter_mut().zip(&x).for_each(|(a, &p)| *a += p);
                    }
                }
            }
            acc
        })
        .collect();
    let mut d = Moments {
        vh: vec![0.0; nv * nh],
        v: vec![0.0; nv],
        h: vec![0.0; nh],
    };
    for p in partial {
        d.vh.iter_mut().zip(&p.vh).for_each(|(a, &x)| *a += x);
        d.v.iter_mut().zip(&p.v).for_each(|(a, &x)| *a += x);
        d.h.iter_mut().zip(&p.h).for_each(|(a, &x)| *a += x);
    }
    let inv = 1.0 / n_samples as f64;
    let diff = |dv: &[f64], mv: &[f64]| -> Vec<f64> {
        dv.iter().zip(mv).map(|(&a, &b)| a * inv - b).collect()
    };
    Ok(ExactGradient {
        w: diff(&d.vh, &model.vh),
        b: diff(&d.v, &model.v),
        c: diff(&d.h, &model.h),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::log_sum_exp;
    use crate::rbm::testutil::{all_states, brute_log_z};
    use crate::rng::rng_from_seed;
    use ndarray::Array2;
    use rand::Rng;

    fn random_data(n: usize, d: usize, seed: u64) -> Dataset {
        let mut rng = rng_from_seed(seed);
        let x = Array2::from_shape_fn((n, d), |_| u8::from(rng.random::<f64>() < 0.4));
        Dataset::binary(x).unwrap()
    }

    #[test]
    fn log_z_matches_brute_force_on_both_sides() {
        for (nv, nh, seed) in [(5, 4, 1), (4, 5, 2), (1, 1, 3), (6, 6, 4), (3, 7, 5)] {
            let rbm = Rbm::random(nv, nh, 1.0, &mut rng_from_seed(seed)).unwrap();
            let want = brute_log_z(&rbm);
            let got = log_partition(&rbm).unwrap();
            assert!((got - want).abs() < 1e-10, "{nv}×{nh}: {got} vs {want}");
            // every block split gives the same value
            let layout = Layout::new(&rbm).unwrap();
            for top in 0..=layout.m {
                assert!((log_partition_with(&layout, top).unwrap() - want).abs() < 1e-10);
            }
        }
    }

    /// 13 visible enumerated (fewer than 14 hidden), split into blocks, against a plain sum of
    /// free energies over all 2^13 visible states; bit-identical for 1 and 2 threads.
    #[test]
    fn gray_code_blocks_match_free_energy_sum() {
        let rbm = Rbm::random(13, 14, 0.4, &mut rng_from_seed(8)).unwrap();
        let nf: Vec<f64> = all_states(13)
            .iter()
            .map(|v| -rbm.free_energy(v).unwrap())
            .collect();
        let want = log_sum_exp(&nf);
        let layout = Layout::new(&rbm).unwrap();
        assert!(!layout.hidden_enumerated);
        for top in [0, 3, 5] {
            let got = log_partition_with(&layout, top).unwrap();
            assert!((got - want).abs() < 1e-9, "top {top}: {got} vs {want}");
        }
        let with =
            |t: usize| crate::testutil::on_threads(t, || log_partition_with(&layout, 4).unwrap());
        assert_eq!(with(1).to_bits(), with(2).to_bits());
    }

    #[test]
    fn average_log_likelihood_matches_brute_force() {
        let rbm = Rbm::random(5, 3, 0.8, &mut rng_from_seed(11)).unwrap();
        let data = random_data(9, 5, 12);
        let log_z = brute_log_z(&rbm);
        let want = (0..9)
            .map(|s| {
                let v: Vec<u8> = data.sample(s).iter().copied().collect();
                let hs = all_states(3);
                let t: Vec<f64> = hs.iter().map(|h| -rbm.energy(&v, h).unwrap()).collect();
                log_sum_exp(&t) - log_z
            })
            .sum::<f64>()
            / 9.0;
        let got = average_log_likelihood(&rbm, &data).unwrap();
        assert!((got - want).abs() < 1e-10, "{got} vs {want}");
        assert!(average_log_likelihood(&rbm, &random_data(3, 4, 1)).is_err());
    }

    /// Model moments against the enumerated joint, on both enumeration sides.
    #[test]
    fn model_moments_match_joint() {
        for (nv, nh) in [(4, 3), (3, 4)] {
            let rbm = Rbm::random(nv, nh, 1.0, &mut rng_from_seed(21)).unwrap();
            let log_z = brute_log_z(&rbm);
            let mut vh = vec![0.0; nv * nh];
            let mut ev = vec![0.0; nv];
            let mut eh = vec![0.0; nh];
            for v in all_states(nv) {
                for h in all_states(nh) {
                    let p = (-rbm.energy(&v, &h).unwrap() - log_z).exp();
                    for i in 0..nv {
                        ev[i] += p * f64::from(v[i]);
                        for j in 0..nh {
                            vh[i * nh + j] += p * f64::from(v[i] * h[j]);
                        }
                    }
                    for j in 0..nh {
                        eh[j] += p * f64::from(h[j]);
                    }
                }
            }
            let layout = Layout::new(&rbm).unwrap();
            let mm = model_moments(&layout, 1).unwrap();
            let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12);
            assert!(
                close(&mm.vh, &vh) && close(&mm.v, &ev) && close(&mm.h, &eh),
                "{nv}×{nh}"
            );
        }
    }

    /// The analytic gradient against central differences of the exact average log-likelihood.
    #[test]
    fn gradient_matches_finite_differences() {
        for (nv, nh, seed) in [(4, 3, 31), (3, 5, 32)] {
            let rbm = Rbm::random(nv, nh, 0.7, &mut rng_from_seed(seed)).unwrap();
            let data = random_data(7, nv, seed + 100);
            let g = log_likelihood_gradient(&rbm, &data).unwrap();
            let ll = |r: &Rbm| average_log_likelihood(r, &data).unwrap();
            let eps = 1e-2f32;
            // parameter blocks: 0 = W, 1 = b, 2 = c
            for (block, analytic) in [(0, &g.w), (1, &g.b), (2, &g.c)] {
                for (k, &a) in analytic.iter().enumerate() {
                    let shifted = |sign: f32| -> (Rbm, f64) {
                        let mut r = rbm.clone();
                        let (w, b, c) = r.params_mut();
                        let p = [w, b, c].into_iter().nth(block).unwrap();
                        let old = p[k];
                        p[k] = old + sign * eps;
                        let step = f64::from(p[k]) - f64::from(old);
                        (r, step)
                    };
                    let (rp, dp) = shifted(1.0);
                    let (rm, dm) = shifted(-1.0);
                    let fd = (ll(&rp) - ll(&rm)) / (dp - dm);
                    assert!(
                        (fd - a).abs() < 2e-4,
                        "{nv}×{nh} block {block} [{k}]: fd {fd} vs {a}"
                    );
                }
            }
        }
    }

    #[test]
    fn fast_precision_agrees_with_reference() {
        let prec = |rbm: &Rbm, p| log_partition_with_precision(rbm, p).unwrap();
        // hidden side enumerated, visible side enumerated, odd sizes, strong weights
        for (nv, nh, sd) in [(40, 9, 1.5), (203, 11, 0.8), (7, 12, 2.0), (35, 3, 20.0)] {
            let rbm = Rbm::random(nv, nh, sd, &mut rng_from_seed(41)).unwrap();
            let (reference, fast) = (prec(&rbm, Precision::F64), prec(&rbm, Precision::Fast));
            assert!(
                (reference - fast).abs() < 1e-11 * reference.abs().max(1.0),
                "{nv}×{nh}: {reference} vs {fast}"
            );
            assert_eq!(log_partition(&rbm).unwrap(), fast);
        }
        // inputs beyond ±700 cannot be exponentiated: the reference path runs
        let mut rbm = Rbm::random(6, 3, 1.0, &mut rng_from_seed(2)).unwrap();
        rbm.params_mut().0[0] = 800.0;
        assert_eq!(
            prec(&rbm, Precision::Fast).to_bits(),
            prec(&rbm, Precision::F64).to_bits()
        );
    }

    /// Exact draws match the exact visible marginal (both enumeration sides).
    #[test]
    fn exact_sampling_matches_marginal() {
        use crate::data::synth::chi_square;
        for (nv, nh) in [(4, 6), (5, 3)] {
            let rbm = Rbm::random(nv, nh, 1.0, &mut rng_from_seed(5)).unwrap();
            let log_z = log_partition(&rbm).unwrap();
            let n = 40_000;
            let draws = sample(&rbm, n, &mut rng_from_seed(6)).unwrap();
            let mut counts = vec![0usize; 1 << nv];
            for row in draws.chunks_exact(nv) {
                let s: usize = row
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| (x as usize) << i)
                    .sum();
                counts[s] += 1;
            }
            let probs: Vec<f64> = (0..1usize << nv)
                .map(|s| {
                    let v: Vec<u8> = (0..nv).map(|i| ((s >> i) & 1) as u8).collect();
                    (-rbm.free_energy(&v).unwrap() - log_z).exp()
                })
                .collect();
            let (stat, df) = chi_square(&counts, &probs);
            // mean df, sd sqrt(2 df): five standard deviations above the mean
            let limit = df as f64 + 5.0 * (2.0 * df as f64).sqrt();
            assert!(stat < limit, "{nv}×{nh}: chi2 {stat} df {df}");
        }
    }

    #[test]
    fn too_large_is_an_error() {
        let rbm = Rbm::zeros(31, 40).unwrap();
        assert!(matches!(log_partition(&rbm), Err(Error::TooLarge { .. })));
    }
}
