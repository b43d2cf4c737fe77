//! The exact engine for `d ≤ 30` units: `ln Z`, all first and second moments, the average
//! log-likelihood of data, `KL(p‖p_θ)` for an explicit `p`, the full probability table and
//! exact i.i.d. sampling.
//!
//! The `2^d` states are split on their top bits into a fixed layout of blocks (`Layout`:
//! variables `0..low` vary inside a block, the `high = d − low` top variables are fixed by
//! the block index). Inside a block the states are visited in Gray-code order: flipping unit
//! `t` by `Δx` changes the log-potential by `Δx·h_t` (its local field, `O(1)`) and every local
//! field `h_k` by `m_kt·Δx` (`O(low)`). Each block is scaled by its own maximum
//! (log-sum-exp), and its moments come from one in-place fold of the weight table: the mass
//! with bit `t` set gives `E[x_t]`, the top half's own fold gives every `E[x_j x_t]`, `j < t`,
//! and the two halves are then added, so all `d(d−1)/2` second moments cost `O(2^low)` per
//! block rather than `O(d²)` per state.
//!
//! Blocks run in parallel (rayon) on a layout that depends on `d` only, and their results are
//! combined in block order: the numbers do not depend on the number of threads.

use super::model::{check_data, Fvbm};
use super::Convention;
use crate::data::synth::{sample_states, state_index};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::linalg::deterministic_sum;
use crate::model::{LogPartition, Model};
use crate::rng::derive_rng;
use ndarray::Array2;
use rand::Rng;
use rayon::prelude::*;

/// Most units the exact engine enumerates (`2^30` states).
pub const MAX_EXACT_UNITS: usize = 30;

/// Most units for which [`log_probabilities`] builds the full table (`2^28` entries, 2 GiB).
pub const MAX_TABLE_UNITS: usize = 28;

/// Up to this many units, a single block holds every state.
const SINGLE_BLOCK_UNITS: usize = 12;
/// Beyond [`SINGLE_BLOCK_UNITS`], at least this many top bits index blocks (64 blocks).
const MIN_HIGH_BITS: usize = 6;
/// At most this many bits vary inside a block (a table of 8 MiB per worker).
const MAX_LOW_BITS: usize = 20;

/// How the state space of `d` units is cut into blocks: the low `low` bits vary inside a
/// block, the block index holds the top `d − low` bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    d: usize,
    low: usize,
}

impl Layout {
    /// The fixed layout for `d` units (`1 ≤ d ≤ 30`).
    pub(crate) fn for_units(d: usize) -> Result<Layout> {
        check_units(d, MAX_EXACT_UNITS, "exact enumeration")?;
        let low = if d <= SINGLE_BLOCK_UNITS {
            d
        } else {
            (d - MIN_HIGH_BITS).min(MAX_LOW_BITS)
        };
        Ok(Layout { d, low })
    }

    /// A layout with a chosen split (tests exercise many blocks on small models).
    #[cfg(test)]
    pub(crate) fn with_low_bits(d: usize, low: usize) -> Layout {
        assert!(low <= d && low >= 1);
        Layout { d, low }
    }

    fn high(&self) -> usize {
        self.d - self.low
    }

    fn n_blocks(&self) -> usize {
        1 << self.high()
    }

    fn block_len(&self) -> usize {
        1 << self.low
    }
}

fn check_units(d: usize, limit: usize, what: &str) -> Result<()> {
    if d > limit {
        return Err(Error::TooLarge {
            what: format!("{what} of an FVBM with {d} units"),
            needed: format!("2^{d} states"),
            limit: format!("{limit} units"),
        });
    }
    if d == 0 {
        return Err(Error::InvalidData(format!(
            "{what}: the model has no units"
        )));
    }
    Ok(())
}

/// Per-worker buffers, allocated once per worker and run.
struct Workspace {
    table: Vec<f64>,
    scratch: Vec<f64>,
    fields: Vec<f64>,
    x: Vec<f64>,
}

impl Workspace {
    fn new(layout: &Layout) -> Self {
        Workspace {
            table: vec![0.0; layout.block_len()],
            scratch: vec![0.0; layout.block_len() / 2],
            fields: vec![0.0; layout.low],
            x: vec![0.0; layout.d],
        }
    }
}

/// Fills `ws.table[l]` with the log-potential of the state whose low bits are `l` and whose
/// high bits are `block`, visiting the states in Gray-code order with incremental energies.
fn block_potentials(model: &Fvbm, layout: &Layout, block: usize, ws: &mut Workspace) {
    let (d, low) = (layout.d, layout.low);
    let conv = model.convention();
    let gap = conv.gap();
    for (j, x) in ws.x.iter_mut().enumerate() {
        *x = if j < low {
            conv.low()
        } else {
            conv.value(((block >> (j - low)) & 1) as u8)
        };
    }
    let mut phi = model.log_potential_values(&ws.x);
    for (k, f) in ws.fields.iter_mut().enumerate() {
        *f = model.local_field(k, &ws.x);
    }
    let m = model.m();
    let table = &mut ws.table;
    table[0] = phi;
    let mut g = 0usize;
    for i in 1..layout.block_len() {
        let t = i.trailing_zeros() as usize;
        g ^= 1 << t;
        let dx = if (g >> t) & 1 == 1 { gap } else { -gap };
        phi += dx * ws.fields[t];
        // m_tt = 0, so h_t itself is unchanged by its own flip.
        for (f, &mk) in ws.fields.iter_mut().zip(&m[t * d..t * d + low]) {
            *f += mk * dx;
        }
        table[g] = phi;
    }
}

/// Replaces the table by `exp(φ − shift)` and returns `shift = max φ`.
fn exponentiate(table: &mut [f64]) -> f64 {
    let shift = table.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    for w in table.iter_mut() {
        *w = (*w - shift).exp();
    }
    shift
}

/// Folds the weight table `w` (length `2^low`, destroyed) into its total mass, the masses
/// `first[t] = Σ_{l: bit t} w[l]` and `pair[j·d + t] = Σ_{l: bits j, t} w[l]` for
/// `j < t < low`, in `O(2^low)`.
fn fold_moments(
    w: &mut [f64],
    low: usize,
    d: usize,
    scratch: &mut [f64],
    first: &mut [f64],
    pair: &mut [f64],
) -> f64 {
    let mut len = w.len();
    for t in (0..low).rev() {
        let half = len / 2;
        let (lo, hi) = w[..len].split_at_mut(half);
        // The top half (bit t set), marginalized over bits above t: its own fold gives the
        // mass with bits j and t set, for every j < t.
        let s = &mut scratch[..half];
        s.copy_from_slice(hi);
        let mut slen = half;
        for j in (0..t).rev() {
            let q = slen / 2;
            let (a, b) = s[..slen].split_at_mut(q);
            pair[j * d + t] = b.iter().sum();
            for (x, y) in a.iter_mut().zip(b.iter()) {
                *x += *y;
            }
            slen = q;
        }
        first[t] = s[0];
        for (x, y) in lo.iter_mut().zip(hi.iter()) {
            *x += *y;
        }
        len = half;
    }
    w[0]
}

/// One block's scaled masses: everything is relative to `e^{shift}`.
struct BlockStats {
    shift: f64,
    total: f64,
    /// `Σ w·bit_j` (empty when only `ln Z` is wanted).
    first: Vec<f64>,
    /// `Σ w·bit_j·bit_k` at `j·d + k`, `j < k` (empty when only `ln Z` is wanted).
    pair: Vec<f64>,
}

fn block_stats(
    model: &Fvbm,
    layout: &Layout,
    block: usize,
    ws: &mut Workspace,
    moments: bool,
) -> BlockStats {
    block_potentials(model, layout, block, ws);
    let shift = exponentiate(&mut ws.table);
    if !moments {
        let total = ws.table.iter().sum();
        return BlockStats {
            shift,
            total,
            first: Vec::new(),
            pair: Vec::new(),
        };
    }
    let (d, low) = (layout.d, layout.low);
    let mut first = vec![0.0; d];
    let mut pair = vec![0.0; d * d];
    let total = fold_moments(
        &mut ws.table,
        low,
        d,
        &mut ws.scratch,
        &mut first,
        &mut pair,
    );
    let high_bit = |k: usize| (block >> (k - low)) & 1 == 1;
    for k in low..d {
        if !high_bit(k) {
            continue;
        }
        first[k] = total;
        for j in 0..low {
            pair[j * d + k] = first[j];
        }
        for j in low..k {
            if high_bit(j) {
                pair[j * d + k] = total;
            }
        }
    }
    BlockStats {
        shift,
        total,
        first,
        pair,
    }
}

/// Runs `f` on every block in parallel (one workspace per worker) and returns the results in
/// block order.
fn map_blocks<T: Send>(
    layout: &Layout,
    f: impl Fn(&mut Workspace, usize) -> T + Sync + Send,
) -> Vec<T> {
    (0..layout.n_blocks())
        .into_par_iter()
        .map_init(|| Workspace::new(layout), |ws, block| f(ws, block))
        .collect()
}

/// All first and second moments of a model, with `ln Z`, in the model's convention.
#[derive(Debug, Clone, PartialEq)]
pub struct Moments {
    /// The convention of the values `x`.
    pub convention: Convention,
    /// `ln Z`.
    pub log_z: f64,
    /// `E[x_j]`.
    pub mean: Vec<f64>,
    /// `E[x_j x_k]`, `d × d` row-major, symmetric; the diagonal holds `E[x_j²]`.
    pub second: Vec<f64>,
}

impl Moments {
    /// Number of units.
    pub fn d(&self) -> usize {
        self.mean.len()
    }

    /// `E[x_j x_k]`.
    pub fn second(&self, j: usize, k: usize) -> f64 {
        self.second[j * self.d() + k]
    }

    /// `Cov[x_j, x_k]`.
    pub fn covariance(&self, j: usize, k: usize) -> f64 {
        self.second(j, k) - self.mean[j] * self.mean[k]
    }

    /// The expected sufficient statistics in the layout of `θ`: `E[x_j]` for `b_j`, then
    /// `E[x_j x_k]` for each `m_jk`, `j < k`, in lexicographic order. This is the gradient of
    /// `ln Z(θ)`.
    pub fn sufficient_stats(&self) -> Vec<f64> {
        let d = self.d();
        let mut s = self.mean.clone();
        for j in 0..d {
            for k in j + 1..d {
                s.push(self.second(j, k));
            }
        }
        s
    }
}

/// `ln Z` of the model (at most [`MAX_EXACT_UNITS`] units).
///
/// ```
/// use boltzkit::fvbm::{exact, Convention, Fvbm};
/// // Independent spins with zero fields: Z = 2^d.
/// let m = Fvbm::zeros(5, Convention::Spin)?;
/// assert!((exact::log_partition(&m)? - 5.0 * 2f64.ln()).abs() < 1e-12);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn log_partition(model: &Fvbm) -> Result<f64> {
    let layout = Layout::for_units(model.d())?;
    log_partition_with(model, &layout)
}

pub(crate) fn log_partition_with(model: &Fvbm, layout: &Layout) -> Result<f64> {
    let stats = map_blocks(layout, |ws, b| block_stats(model, layout, b, ws, false));
    let shift = stats
        .iter()
        .map(|s| s.shift)
        .fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = stats
        .iter()
        .map(|s| s.total * (s.shift - shift).exp())
        .sum();
    finite(shift + total.ln(), "log_partition")
}

fn finite(v: f64, context: &str) -> Result<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(Error::Numerical {
            context: context.into(),
            detail: format!("the result is {v}"),
        })
    }
}

/// `ln Z`, `E[x]` and `E[x xᵀ]` of the model (at most [`MAX_EXACT_UNITS`] units).
///
/// ```
/// use boltzkit::fvbm::{exact, Convention, Fvbm};
/// let m = Fvbm::from_theta(2, &[0.0, 0.0, 0.8], Convention::Spin)?;
/// let mom = exact::moments(&m)?;
/// assert!(mom.mean[0].abs() < 1e-12);
/// assert!((mom.second(0, 1) - 0.8f64.tanh()).abs() < 1e-12);
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn moments(model: &Fvbm) -> Result<Moments> {
    let layout = Layout::for_units(model.d())?;
    moments_with(model, &layout)
}

pub(crate) fn moments_with(model: &Fvbm, layout: &Layout) -> Result<Moments> {
    let d = model.d();
    let stats = map_blocks(layout, |ws, b| block_stats(model, layout, b, ws, true));
    let shift = stats
        .iter()
        .map(|s| s.shift)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut total = 0.0;
    let mut first = vec![0.0; d];
    let mut pair = vec![0.0; d * d];
    for s in &stats {
        let scale = (s.shift - shift).exp();
        total += s.total * scale;
        for (a, v) in first.iter_mut().zip(&s.first) {
            *a += v * scale;
        }
        for (a, v) in pair.iter_mut().zip(&s.pair) {
            *a += v * scale;
        }
    }
    let log_z = finite(shift + total.ln(), "moments")?;
    // Bit moments P(bit_j = 1), P(bit_j = bit_k = 1) → moments of the convention's values.
    let p1: Vec<f64> = first.iter().map(|v| v / total).collect();
    let conv = model.convention();
    let mut second = vec![0.0; d * d];
    for j in 0..d {
        for k in j..d {
            let pjk = if j == k {
                p1[j]
            } else {
                pair[j * d + k] / total
            };
            let v = match conv {
                Convention::Binary => pjk,
                Convention::Spin if j == k => 1.0,
                Convention::Spin => 4.0 * pjk - 2.0 * p1[j] - 2.0 * p1[k] + 1.0,
            };
            second[j * d + k] = v;
            second[k * d + j] = v;
        }
    }
    let mean = p1
        .iter()
        .map(|&p| match conv {
            Convention::Binary => p,
            Convention::Spin => 2.0 * p - 1.0,
        })
        .collect();
    Ok(Moments {
        convention: conv,
        log_z,
        mean,
        second,
    })
}

/// The average log-likelihood `(1/n) Σ_i ln P(x_i)` of 0/1 data (in the spin convention bit 0
/// is −1), exact (at most [`MAX_EXACT_UNITS`] units).
/// [`Model::log_likelihood`] (exact).
pub fn average_log_likelihood(model: &Fvbm, data: &Dataset) -> Result<f64> {
    let ll = model.log_likelihood(data, &LogPartition::Exact)?;
    finite(ll.value, "average_log_likelihood")
}

/// The log-potential `½ xᵀMx + bᵀx` (the unnormalized log-probability) of every row of 0/1
/// data, computed in parallel over rows.
pub fn log_potentials(model: &Fvbm, data: &Dataset) -> Result<Vec<f64>> {
    check_data(model.d(), data, "log_potentials")?;
    Ok((0..data.n_samples())
        .into_par_iter()
        .map(|i| data.sample(i))
        .map(|row| match row.as_slice() {
            Some(bits) => model.log_potential(bits),
            None => model.log_potential(&row.to_vec()),
        })
        .collect())
}

/// `KL(p‖p_θ) = Σ_x p(x) ln(p(x)/p_θ(x))` in nats, for an explicit distribution `p` over all
/// `2^d` states (index `Σ_j bit_j 2^j`, variable 0 least significant) that sums to 1 within
/// 1e-9. The model's probabilities are never tabulated: each block is enumerated once.
pub fn kl_divergence(p: &[f64], model: &Fvbm) -> Result<f64> {
    let layout = Layout::for_units(model.d())?;
    kl_divergence_with(p, model, &layout)
}

pub(crate) fn kl_divergence_with(p: &[f64], model: &Fvbm, layout: &Layout) -> Result<f64> {
    let d = model.d();
    if p.len() != 1usize << d {
        return Err(Error::Shape {
            op: "kl_divergence".into(),
            expected: format!("2^{d} = {} probabilities (one per state)", 1usize << d),
            found: format!("{}", p.len()),
        });
    }
    if let Some(i) = p.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
        return Err(Error::InvalidData(format!(
            "kl_divergence: probability of state {i} is {}; must be finite and nonnegative",
            p[i]
        )));
    }
    let sum = deterministic_sum(p, |v| v);
    if (sum - 1.0).abs() > 1e-9 {
        return Err(Error::InvalidData(format!(
            "kl_divergence: probabilities sum to {sum}, expected 1 (within 1e-9)"
        )));
    }
    let log_z = log_partition_with(model, layout)?;
    let len = layout.block_len();
    // Σ_x p(x) (ln p(x) − φ(x)), block by block.
    let parts = map_blocks(layout, |ws, b| {
        let pb = &p[b * len..(b + 1) * len];
        if pb.iter().all(|&v| v == 0.0) {
            return 0.0;
        }
        block_potentials(model, layout, b, ws);
        pb.iter()
            .zip(&ws.table)
            .filter(|(&v, _)| v > 0.0)
            .map(|(&v, &phi)| v * (v.ln() - phi))
            .sum::<f64>()
    });
    let cross: f64 = parts.iter().sum();
    finite(cross / sum + log_z, "kl_divergence")
}

/// `ln P(x)` for every state (index `Σ_j bit_j 2^j`), for at most [`MAX_TABLE_UNITS`] units.
pub fn log_probabilities(model: &Fvbm) -> Result<Vec<f64>> {
    check_units(model.d(), MAX_TABLE_UNITS, "the probability table")?;
    let layout = Layout::for_units(model.d())?;
    let len = layout.block_len();
    let mut out = vec![0.0; 1usize << model.d()];
    out.par_chunks_mut(len).enumerate().for_each_init(
        || Workspace::new(&layout),
        |ws, (b, chunk)| {
            block_potentials(model, &layout, b, ws);
            chunk.copy_from_slice(&ws.table);
        },
    );
    let log_z = crate::linalg::log_sum_exp(&out);
    let log_z = finite(log_z, "log_probabilities")?;
    out.par_iter_mut().for_each(|v| *v -= log_z);
    Ok(out)
}

/// `n` exact i.i.d. samples (0/1 rows; in the spin convention bit 0 is −1), for at most
/// [`MAX_EXACT_UNITS`] units, without a table over all states.
///
/// Two stages, both by [`sample_states`]: the block (top bits) of each sample is drawn from
/// the block masses, then the low bits of the samples of each block from that block's own
/// weights, block by block in parallel with generators derived from one draw of `rng`. Memory
/// `O(n·d + 2^20)`; time two passes over the states at most.
///
/// ```
/// use boltzkit::fvbm::{exact, Convention, Fvbm};
/// use boltzkit::rng::rng_from_seed;
/// let m = Fvbm::random(6, 0.5, Convention::Spin, &mut rng_from_seed(0))?;
/// let data = exact::sample(&m, 100, &mut rng_from_seed(1))?;
/// assert_eq!((data.n_samples(), data.n_vars()), (100, 6));
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn sample<R: Rng + ?Sized>(model: &Fvbm, n: usize, rng: &mut R) -> Result<Dataset> {
    let layout = Layout::for_units(model.d())?;
    sample_with(model, n, rng, &layout)
}

pub(crate) fn sample_with<R: Rng + ?Sized>(
    model: &Fvbm,
    n: usize,
    rng: &mut R,
    layout: &Layout,
) -> Result<Dataset> {
    let (d, low, high) = (layout.d, layout.low, layout.high());
    // Stage 1: the block of every sample.
    let blocks: Vec<usize> = if high == 0 {
        vec![0; n]
    } else {
        let stats = map_blocks(layout, |ws, b| block_stats(model, layout, b, ws, false));
        let shift = stats
            .iter()
            .map(|s| s.shift)
            .fold(f64::NEG_INFINITY, f64::max);
        let masses: Vec<f64> = stats
            .iter()
            .map(|s| s.total * (s.shift - shift).exp())
            .collect();
        let cards = vec![2u32; high];
        let top = sample_states(&cards, &masses, n, rng)?;
        top.values()
            .outer_iter()
            .map(|r| state_index(&cards, &r.to_vec()))
            .collect()
    };
    let mut counts = vec![0usize; layout.n_blocks()];
    for &b in &blocks {
        counts[b] += 1;
    }
    // Stage 2: the low bits, block by block.
    let seed: u64 = rng.random();
    let low_cards = vec![2u32; low];
    let per_block: Vec<Option<Dataset>> = (0..layout.n_blocks())
        .into_par_iter()
        .map_init(
            || Workspace::new(layout),
            |ws, b| -> Result<Option<Dataset>> {
                if counts[b] == 0 {
                    return Ok(None);
                }
                block_potentials(model, layout, b, ws);
                exponentiate(&mut ws.table);
                let mut r = derive_rng(seed, b as u64);
                sample_states(&low_cards, &ws.table, counts[b], &mut r).map(Some)
            },
        )
        .collect::<Result<_>>()?;
    // Assemble: the i-th sample of block b goes to the i-th row drawn in block b.
    let mut next = vec![0usize; layout.n_blocks()];
    let mut values = Array2::<u8>::zeros((n, d));
    for (row, &b) in values.outer_iter_mut().zip(&blocks) {
        let lows = per_block[b]
            .as_ref()
            .expect("a block with samples has draws");
        let src = lows.sample(next[b]);
        next[b] += 1;
        let mut row = row;
        for j in 0..low {
            row[j] = src[j];
        }
        for j in low..d {
            row[j] = ((b >> (j - low)) & 1) as u8;
        }
    }
    Dataset::binary(values)
}

#[cfg(test)]
mod tests {
    use super::super::model::upper_index;
    use super::super::testutil::{chi_square, state_counts};
    use super::*;
    use crate::data::synth::index_to_state;
    use crate::rng::rng_from_seed;

    /// The brute-force twin: plain enumeration with the definition of the model.
    struct Brute {
        log_z: f64,
        log_p: Vec<f64>,
        mean: Vec<f64>,
        second: Vec<f64>,
    }

    fn brute(model: &Fvbm) -> Brute {
        let d = model.d();
        let n = 1usize << d;
        let cards = vec![2u32; d];
        let mut bits = vec![0u8; d];
        let phis: Vec<f64> = (0..n)
            .map(|s| {
                index_to_state(&cards, s, &mut bits);
                model.log_potential(&bits)
            })
            .collect();
        let max = phis.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let log_z = max + phis.iter().map(|p| (p - max).exp()).sum::<f64>().ln();
        let log_p: Vec<f64> = phis.iter().map(|p| p - log_z).collect();
        let mut mean = vec![0.0; d];
        let mut second = vec![0.0; d * d];
        for (s, lp) in log_p.iter().enumerate() {
            index_to_state(&cards, s, &mut bits);
            let x: Vec<f64> = bits.iter().map(|&v| model.convention().value(v)).collect();
            let p = lp.exp();
            for j in 0..d {
                mean[j] += p * x[j];
                for k in 0..d {
                    second[j * d + k] += p * x[j] * x[k];
                }
            }
        }
        Brute {
            log_z,
            log_p,
            mean,
            second,
        }
    }

    fn close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!((x - y).abs() <= tol, "entry {i}: {x} vs {y}");
        }
    }

    fn models() -> Vec<Fvbm> {
        let mut v = Vec::new();
        for (seed, d) in [(1u64, 1usize), (2, 2), (3, 5), (4, 8), (5, 10)] {
            for conv in [Convention::Spin, Convention::Binary] {
                v.push(Fvbm::random(d, 0.7, conv, &mut rng_from_seed(seed)).unwrap());
            }
        }
        v
    }

    #[test]
    fn moments_match_brute_force() {
        for model in models() {
            let b = brute(&model);
            let d = model.d();
            // The default layout and several multi-block layouts.
            let mut layouts = vec![Layout::for_units(d).unwrap()];
            for low in [1, d / 2, d - 1] {
                if low >= 1 && low <= d {
                    layouts.push(Layout::with_low_bits(d, low));
                }
            }
            for layout in layouts {
                let m = moments_with(&model, &layout).unwrap();
                assert!((m.log_z - b.log_z).abs() < 1e-11, "{layout:?}");
                assert!((log_partition_with(&model, &layout).unwrap() - b.log_z).abs() < 1e-11);
                close(&m.mean, &b.mean, 1e-12);
                close(&m.second, &b.second, 1e-12);
            }
        }
    }

    /// A multi-block default layout (d > 12) against brute force.
    #[test]
    fn default_block_layout_matches_brute_force() {
        for conv in [Convention::Spin, Convention::Binary] {
            let model = Fvbm::random(14, 0.3, conv, &mut rng_from_seed(9)).unwrap();
            let layout = Layout::for_units(14).unwrap();
            assert!(layout.n_blocks() > 1);
            let b = brute(&model);
            let m = moments(&model).unwrap();
            assert!((m.log_z - b.log_z).abs() < 1e-10);
            close(&m.mean, &b.mean, 1e-11);
            close(&m.second, &b.second, 1e-11);
            let lp = log_probabilities(&model).unwrap();
            close(&lp, &b.log_p, 1e-10);
        }
    }

    #[test]
    fn sufficient_stats_follow_theta_layout() {
        let model = Fvbm::random(4, 0.5, Convention::Spin, &mut rng_from_seed(2)).unwrap();
        let m = moments(&model).unwrap();
        let s = m.sufficient_stats();
        assert_eq!(s.len(), super::super::model::n_params(4));
        assert_eq!(s[upper_index(4, 1, 3)], m.second(1, 3));
        assert!((m.covariance(0, 0) - (1.0 - m.mean[0].powi(2))).abs() < 1e-15);
    }

    #[test]
    fn results_do_not_depend_on_thread_count() {
        let model = Fvbm::random(15, 0.4, Convention::Spin, &mut rng_from_seed(5)).unwrap();
        let run = |threads| {
            crate::testutil::on_threads(threads, || {
                let m = moments(&model).unwrap();
                let s = sample(&model, 500, &mut rng_from_seed(3)).unwrap();
                (m, s)
            })
        };
        assert_eq!(run(1), run(3));
    }

    #[test]
    fn likelihood_and_kl_match_brute_force() {
        for model in models().into_iter().filter(|m| m.d() >= 5) {
            let b = brute(&model);
            let data = sample(&model, 300, &mut rng_from_seed(4)).unwrap();
            let mut want = 0.0;
            for row in data.values().outer_iter() {
                want += b.log_p[state_index(&vec![2; model.d()], &row.to_vec())];
            }
            want /= 300.0;
            let got = average_log_likelihood(&model, &data).unwrap();
            assert!((got - want).abs() < 1e-11, "{got} vs {want}");

            // KL of a perturbed distribution (with zeros) to the model.
            let n = b.log_p.len();
            let mut p: Vec<f64> = (0..n)
                .map(|s| {
                    if s % 7 == 3 {
                        0.0
                    } else {
                        1.0 + (s % 5) as f64
                    }
                })
                .collect();
            let sum: f64 = p.iter().sum();
            p.iter_mut().for_each(|v| *v /= sum);
            let want: f64 = p
                .iter()
                .zip(&b.log_p)
                .filter(|(&v, _)| v > 0.0)
                .map(|(&v, &lq)| v * (v.ln() - lq))
                .sum();
            let d = model.d();
            for layout in [Layout::for_units(d).unwrap(), Layout::with_low_bits(d, 2)] {
                let got = kl_divergence_with(&p, &model, &layout).unwrap();
                assert!((got - want).abs() < 1e-11, "{got} vs {want}");
            }
            // KL of the model to itself is 0.
            let q: Vec<f64> = b.log_p.iter().map(|l| l.exp()).collect();
            assert!(kl_divergence(&q, &model).unwrap().abs() < 1e-11);
        }
    }

    #[test]
    fn kl_and_likelihood_reject_bad_input() {
        let model = Fvbm::zeros(3, Convention::Spin).unwrap();
        assert!(matches!(
            kl_divergence(&[0.5; 4], &model),
            Err(Error::Shape { .. })
        ));
        assert!(kl_divergence(&[0.5; 8], &model).is_err());
        let mut p = vec![0.125; 8];
        p[0] = -0.125;
        p[1] = 0.375;
        assert!(kl_divergence(&p, &model).is_err());
        let data = Dataset::binary(ndarray::array![[0u8, 1]]).unwrap();
        assert!(average_log_likelihood(&model, &data).is_err());
        let big = Fvbm::zeros(31, Convention::Spin).unwrap();
        assert!(matches!(log_partition(&big), Err(Error::TooLarge { .. })));
        assert!(matches!(
            sample(&big, 1, &mut rng_from_seed(0)),
            Err(Error::TooLarge { .. })
        ));
        let big = Fvbm::zeros(29, Convention::Spin).unwrap();
        assert!(matches!(
            log_probabilities(&big),
            Err(Error::TooLarge { .. })
        ));
    }

    /// Exact sampling: state frequencies against the exact probabilities (chi-square), with
    /// a multi-block layout so both stages are exercised.
    #[test]
    fn samples_follow_the_model() {
        for conv in [Convention::Spin, Convention::Binary] {
            let model = Fvbm::random(6, 0.5, conv, &mut rng_from_seed(12)).unwrap();
            let b = brute(&model);
            let probs: Vec<f64> = b.log_p.iter().map(|l| l.exp()).collect();
            for layout in [Layout::for_units(6).unwrap(), Layout::with_low_bits(6, 2)] {
                let data = sample_with(&model, 60_000, &mut rng_from_seed(8), &layout).unwrap();
                assert_eq!(data.n_vars(), 6);
                let counts = state_counts(&data, 64);
                let (stat, df) = chi_square(&counts, &probs);
                // P(chi2_df > df + 5 sqrt(2 df)) is below 1e-4 for these df.
                let limit = df as f64 + 5.0 * (2.0 * df as f64).sqrt();
                assert!(stat < limit, "{conv} {layout:?}: chi2 {stat} df {df}");
            }
        }
        let m = Fvbm::zeros(3, Convention::Spin).unwrap();
        assert_eq!(sample(&m, 0, &mut rng_from_seed(0)).unwrap().n_samples(), 0);
    }
}
