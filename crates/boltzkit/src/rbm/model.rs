//! [`Rbm`]: the binary restricted Boltzmann machine with the standard energy
//! `E(v, h) = −vᵀWh − bᵀv − cᵀh` (Eq. 1 of Upadhya & Sastry, *S-DCP*), its free energy, both
//! conditionals on mini-batches, and the initialization of their Sec. 4.1.
//!
//! Mini-batches are row-major `f32` matrices, one sample per row (`batch × n_visible` for
//! visible states, `batch × n_hidden` for hidden ones), holding 0.0 / 1.0 for states and
//! values in `[0, 1]` for probabilities.

use super::packed::{PackedWeights, Repack};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::linalg;
use crate::linalg::binary::Packed;
use rand::Rng;
use rand_distr::{Distribution as _, Normal};
use rayon::prelude::*;

/// Rows per parallel task of the bias and `σ` pass of the conditionals.
const ROW_BLOCK: usize = 16;

/// Data means are clamped to `[EPS, 1 − EPS]` before the logit of the base-rate initialization,
/// so a unit that is always on or off in the data gets a large but finite bias.
pub const BASE_RATE_EPS: f64 = 1e-3;

/// A binary RBM with `n_visible` visible and `n_hidden` hidden 0/1 units.
///
/// Invariants (checked by [`Rbm::new`]): at least one unit in each layer, `W` is
/// `n_visible × n_hidden` row-major (`W[i·n_hidden + j]` couples `v_i` and `h_j`), `b` has
/// `n_visible` entries, `c` has `n_hidden`, all finite.
///
/// ```
/// use boltzkit::rbm::Rbm;
/// use boltzkit::rng::rng_from_seed;
/// let rbm = Rbm::random(6, 3, 0.5, &mut rng_from_seed(1))?;
/// // p(h = 1 | v) for a batch of two visible vectors
/// let v = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, /* second row */ 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
/// let mut ph = [0.0f32; 6];
/// rbm.hidden_probs(&v, &mut ph)?;
/// assert!(ph.iter().all(|&p| p > 0.0 && p < 1.0));
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Rbm {
    n_visible: usize,
    n_hidden: usize,
    w: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    /// Boxed: the cache is larger than the model's own fields, and enums holding an `Rbm`
    /// (`any_model::AnyModel`) stay small.
    packed: Box<PackedWeights>,
}

impl Rbm {
    /// Bytes of one `n_visible × n_hidden` model's parameters (f32 `W`, `b`, `c`), saturating.
    /// A trainer holds a few copies of this (gradient, velocity, packed transposes).
    pub fn memory_estimate(n_visible: u64, n_hidden: u64) -> u64 {
        n_visible
            .saturating_mul(n_hidden)
            .saturating_add(n_visible)
            .saturating_add(n_hidden)
            .saturating_mul(4)
    }

    /// A model from its parameters, checked (shapes, finiteness).
    pub fn new(
        n_visible: usize,
        n_hidden: usize,
        w: Vec<f32>,
        b: Vec<f32>,
        c: Vec<f32>,
    ) -> Result<Self> {
        if n_visible == 0 {
            return Err(Error::param(
                "n_visible",
                "an RBM needs at least one visible unit",
            ));
        }
        if n_hidden == 0 {
            return Err(Error::param(
                "n_hidden",
                "an RBM needs at least one hidden unit",
            ));
        }
        let check = |name: &str, v: &[f32], len: usize| -> Result<()> {
            if v.len() != len {
                return Err(Error::Shape {
                    op: "Rbm::new".into(),
                    expected: format!("{name} with {len} entries"),
                    found: format!("{}", v.len()),
                });
            }
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                return Err(Error::Numerical {
                    context: "Rbm::new".into(),
                    detail: format!("{name}[{i}] = {} is not finite", v[i]),
                });
            }
            Ok(())
        };
        check("W", &w, n_visible * n_hidden)?;
        check("b", &b, n_visible)?;
        check("c", &c, n_hidden)?;
        Ok(Rbm {
            n_visible,
            n_hidden,
            w,
            b,
            c,
            packed: Box::default(),
        })
    }

    /// Room for the weights of an `n_visible × n_hidden` model, checked against the memory
    /// available and allocated fallibly ([`crate::budget`]): `--hidden 10^9` is an error with
    /// its figures, never an abort.
    fn weight_buffer(n_visible: usize, n_hidden: usize) -> Result<Vec<f32>> {
        let what = format!("an RBM of {n_visible} × {n_hidden} units");
        crate::budget::check_memory(
            &what,
            Rbm::memory_estimate(n_visible as u64, n_hidden as u64),
        )?;
        crate::budget::try_with_capacity(&what, n_visible.saturating_mul(n_hidden))
    }

    /// The model with every parameter zero (the uniform distribution).
    pub fn zeros(n_visible: usize, n_hidden: usize) -> Result<Self> {
        let mut w = Rbm::weight_buffer(n_visible, n_hidden)?;
        w.resize(n_visible * n_hidden, 0.0);
        Rbm::new(
            n_visible,
            n_hidden,
            w,
            vec![0.0; n_visible],
            vec![0.0; n_hidden],
        )
    }

    /// Every parameter (`W`, `b`, `c`) drawn from `N(0, sigma²)`; for tests and examples.
    pub fn random<R: Rng + ?Sized>(
        n_visible: usize,
        n_hidden: usize,
        sigma: f32,
        rng: &mut R,
    ) -> Result<Self> {
        let normal = normal(sigma)?;
        let mut w = Rbm::weight_buffer(n_visible, n_hidden)?;
        w.extend((0..n_visible * n_hidden).map(|_| normal.sample(rng)));
        let mut draw = |n: usize| -> Vec<f32> { (0..n).map(|_| normal.sample(rng)).collect() };
        let b = draw(n_visible);
        let c = draw(n_hidden);
        Rbm::new(n_visible, n_hidden, w, b, c)
    }

    /// The initialization of Sec. 4.1 of the S-DCP paper: `W ~ N(0, sigma²)` (the paper uses
    /// `sigma = 0.01`), `c = 0`, and `b_i = logit(mean_i)`, the inverse sigmoid of the data
    /// mean of `v_i` clamped to `[BASE_RATE_EPS, 1 − BASE_RATE_EPS]` (base-rate
    /// initialization, Hinton 2010). The data must be binary and non-empty.
    pub fn init_from_data<R: Rng + ?Sized>(
        data: &Dataset,
        n_hidden: usize,
        sigma: f32,
        rng: &mut R,
    ) -> Result<Self> {
        let b = base_rate_biases(data)?;
        let n_visible = b.len();
        let normal = normal(sigma)?;
        let mut w = Rbm::weight_buffer(n_visible, n_hidden)?;
        w.extend((0..n_visible * n_hidden).map(|_| normal.sample(rng)));
        Rbm::new(n_visible, n_hidden, w, b, vec![0.0; n_hidden])
    }

    /// Number of visible units.
    pub fn n_visible(&self) -> usize {
        self.n_visible
    }

    /// Number of hidden units.
    pub fn n_hidden(&self) -> usize {
        self.n_hidden
    }

    /// The weights, `n_visible × n_hidden` row-major.
    pub fn w(&self) -> &[f32] {
        &self.w
    }

    /// The visible biases.
    pub fn b(&self) -> &[f32] {
        &self.b
    }

    /// The hidden biases.
    pub fn c(&self) -> &[f32] {
        &self.c
    }

    /// Mutable views of `(W, b, c)` for optimizer steps (shapes cannot change).
    pub fn params_mut(&mut self) -> (&mut [f32], &mut [f32], &mut [f32]) {
        self.packed.invalidate();
        (&mut self.w, &mut self.b, &mut self.c)
    }

    /// Which of `W` and `Wᵀ` are packed now (since the last change of the parameters).
    pub(crate) fn packings_held(&self) -> (bool, bool) {
        (
            self.packed.w.get().is_some(),
            self.packed.wt.get().is_some(),
        )
    }

    /// [`Rbm::params_mut`] for a step that rewrites `W` by blocks of rows, with a [`Repack`]
    /// that packs `W` and / or `Wᵀ` (as `(w, wt)` asks; `None` for neither) again from each
    /// block as it is written. With `(w, wt)` the model's [`Rbm::packings_held`] (or those of
    /// the model the new values are computed from) the packings the last products used are
    /// ready for the next without another two passes over `W` (issue 19).
    pub(crate) fn params_mut_repacking(
        &mut self,
        (w, wt): (bool, bool),
    ) -> (&mut [f32], &mut [f32], &mut [f32], Option<Repack<'_>>) {
        let (nv, nh) = (self.n_visible, self.n_hidden);
        let cache = &mut *self.packed;
        cache.invalidate();
        let repack = (w || wt).then(|| Repack::new(cache, nv, nh, w, wt));
        (&mut self.w, &mut self.b, &mut self.c, repack)
    }

    /// Whether every parameter is finite (the divergence guard's check).
    pub fn is_finite(&self) -> bool {
        self.w
            .iter()
            .chain(&self.b)
            .chain(&self.c)
            .all(|x| x.is_finite())
    }

    /// The energy `E(v, h) = −vᵀWh − bᵀv − cᵀh` of one joint state (0/1 entries), in `f64`.
    pub fn energy(&self, v: &[u8], h: &[u8]) -> Result<f64> {
        self.check_state("v", v, self.n_visible)?;
        self.check_state("h", h, self.n_hidden)?;
        let mut e = 0.0f64;
        for (i, &vi) in v.iter().enumerate() {
            if vi == 0 {
                continue;
            }
            e -= f64::from(self.b[i]);
            let row = &self.w[i * self.n_hidden..(i + 1) * self.n_hidden];
            e -= row
                .iter()
                .zip(h)
                .filter(|(_, &hj)| hj != 0)
                .map(|(&w, _)| f64::from(w))
                .sum::<f64>();
        }
        e -= self
            .c
            .iter()
            .zip(h)
            .filter(|(_, &hj)| hj != 0)
            .map(|(&c, _)| f64::from(c))
            .sum::<f64>();
        Ok(e)
    }

    /// The free energy `F(v) = −bᵀv − Σ_j softplus(c_j + vᵀW_{:,j})`, so that
    /// `p(v) = e^{−F(v)} / Z` (sum over `h` of `e^{−E(v,h)}`), computed in `f64` throughout.
    pub fn free_energy(&self, v: &[u8]) -> Result<f64> {
        self.check_state("v", v, self.n_visible)?;
        let mut x: Vec<f64> = self.c.iter().map(|&c| f64::from(c)).collect();
        let mut lin = 0.0f64;
        for (i, &vi) in v.iter().enumerate() {
            if vi != 0 {
                lin += f64::from(self.b[i]);
                let row = &self.w[i * self.n_hidden..(i + 1) * self.n_hidden];
                x.iter_mut().zip(row).for_each(|(a, &w)| *a += f64::from(w));
            }
        }
        Ok(-lin - x.iter().map(|&a| linalg::softplus_f64(a)).sum::<f64>())
    }

    /// Free energies of a mini-batch `v` (`batch × n_visible`, 0/1 as `f32`) into `out`
    /// (length `batch`): the hidden input by GEMM in `f32`, softplus terms summed in `f64`.
    /// `scratch` must hold `batch × n_hidden` values.
    pub fn free_energy_batch(&self, v: &[f32], out: &mut [f64], scratch: &mut [f32]) -> Result<()> {
        let batch = self.batch_rows("free_energy_batch", v, self.n_visible)?;
        check_len("free_energy_batch", "out", out.len(), batch)?;
        check_len(
            "free_energy_batch",
            "scratch",
            scratch.len(),
            batch * self.n_hidden,
        )?;
        self.hidden_input(v, scratch)?;
        for ((vr, xr), f) in v
            .chunks_exact(self.n_visible)
            .zip(scratch.chunks_exact(self.n_hidden))
            .zip(out.iter_mut())
        {
            let lin: f64 = vr
                .iter()
                .zip(&self.b)
                .map(|(&x, &b)| f64::from(x) * f64::from(b))
                .sum();
            *f = -lin - linalg::softplus_sum(xr);
        }
        Ok(())
    }

    /// The hidden input `V·W + c` of a mini-batch `v` (`batch × n_visible`) into `out`
    /// (`batch × n_hidden`). When `v` is 0/1 with at most [`binary::max_density`](crate::linalg::binary::max_density) ones, as RBM
    /// states and binary data usually are, the product sums the selected rows of `W`
    /// ([`binary::sum_selected`](crate::linalg::binary::sum_selected)); otherwise it is [`linalg::sgemm_par`]. Either way the
    /// same bits for any thread count.
    pub fn hidden_input(&self, v: &[f32], out: &mut [f32]) -> Result<()> {
        self.layer_input("hidden_input", v, out, false, false)
    }

    /// The visible input `H·Wᵀ + b` of a mini-batch `h` (`batch × n_hidden`) into `out`
    /// (`batch × n_visible`); sparse 0/1 `h` as in [`Rbm::hidden_input`].
    pub fn visible_input(&self, h: &[f32], out: &mut [f32]) -> Result<()> {
        self.layer_input("visible_input", h, out, true, false)
    }

    /// `X·W + c` (`to_visible = false`) or `X·Wᵀ + b` (`true`), sparse or dense, then `σ`
    /// of it when `sigmoid`; the bias and `σ` in one parallel pass over fixed blocks of rows
    /// (elementwise, so the same bits as two serial passes).
    fn layer_input(
        &self,
        op: &str,
        x: &[f32],
        out: &mut [f32],
        to_visible: bool,
        sigmoid: bool,
    ) -> Result<()> {
        let (n_in, n_out, bias) = if to_visible {
            (self.n_hidden, self.n_visible, &self.b)
        } else {
            (self.n_visible, self.n_hidden, &self.c)
        };
        let batch = self.batch_rows(op, x, n_in)?;
        check_len(op, "out", out.len(), batch * n_out)?;
        self.product(x, out, to_visible);
        out.par_chunks_mut(ROW_BLOCK * n_out).for_each(|rows| {
            for row in rows.chunks_exact_mut(n_out) {
                linalg::add_row_bias(row, bias);
                if sigmoid {
                    linalg::sigmoid_inplace(row);
                }
            }
        });
        Ok(())
    }

    /// `out ← X·W` (`to_visible = false`) or `X·Wᵀ`, shapes checked by the caller: the sums of
    /// selected rows of the packed `W` / `Wᵀ` when `X` is 0/1 (a row with more ones than
    /// zeros as the column totals minus its zeros' rows) and the entries listed are at most
    /// [`binary::max_density`](crate::linalg::binary::max_density) of all, else the dense GEMM.
    fn product(&self, x: &[f32], out: &mut [f32], to_visible: bool) {
        let (nv, nh) = (self.n_visible, self.n_hidden);
        self.packed.product(&self.w, nv, nh, x, out, to_visible);
    }

    /// `W` packed in strips, built on first use after a parameter change.
    pub(crate) fn packed_w(&self) -> &Packed {
        self.packed.packed_w(&self.w, self.n_visible, self.n_hidden)
    }

    /// The packings of `W` and `Wᵀ` the cache holds now, without building them (tests).
    #[cfg(test)]
    pub(crate) fn cached_packings(&self) -> (Option<&Packed>, Option<&Packed>) {
        (self.packed.w.get(), self.packed.wt.get())
    }

    /// `Wᵀ` packed in strips, built on first use after a parameter change.
    pub(crate) fn packed_wt(&self) -> &Packed {
        self.packed
            .packed_wt(&self.w, self.n_visible, self.n_hidden)
    }

    /// `p(h_j = 1 | v) = σ(c_j + vᵀW_{:,j})` for a mini-batch `v` into `out`
    /// (`batch × n_hidden`); the hidden units are independent given `v`.
    pub fn hidden_probs(&self, v: &[f32], out: &mut [f32]) -> Result<()> {
        self.layer_input("hidden_probs", v, out, false, true)
    }

    /// `p(v_i = 1 | h) = σ(b_i + W_{i,:}h)` for a mini-batch `h` into `out`
    /// (`batch × n_visible`); the visible units are independent given `h`.
    pub fn visible_probs(&self, h: &[f32], out: &mut [f32]) -> Result<()> {
        self.layer_input("visible_probs", h, out, true, true)
    }

    /// Number of rows of a batch with `width` columns; an error when `x` is not a whole
    /// number of rows.
    pub(crate) fn batch_rows(&self, op: &str, x: &[f32], width: usize) -> Result<usize> {
        if !x.len().is_multiple_of(width) {
            return Err(Error::Shape {
                op: format!("Rbm::{op}"),
                expected: format!("a batch with rows of {width} values"),
                found: format!("{} values", x.len()),
            });
        }
        Ok(x.len() / width)
    }

    fn check_state(&self, name: &str, x: &[u8], len: usize) -> Result<()> {
        check_len("Rbm state", name, x.len(), len)?;
        if let Some(i) = x.iter().position(|&u| u > 1) {
            return Err(Error::InvalidData(format!(
                "{name}[{i}] = {} is not 0 or 1",
                x[i]
            )));
        }
        Ok(())
    }
}

/// The base-rate visible biases `b_i = logit(mean_i)` of binary data, the means clamped to
/// `[BASE_RATE_EPS, 1 − BASE_RATE_EPS]`: the initialization of Sec. 4.1 of the S-DCP paper
/// and the base model of AIS (Salakhutdinov & Murray 2008).
pub fn base_rate_biases(data: &Dataset) -> Result<Vec<f32>> {
    Ok(visible_means(data)?
        .iter()
        .map(|&p| {
            let p = p.clamp(BASE_RATE_EPS, 1.0 - BASE_RATE_EPS);
            (p / (1.0 - p)).ln() as f32
        })
        .collect())
}

/// Fails with a clear error unless `data` is binary and non-empty (what an RBM is fitted to
/// or scored on): a check of the dataset's cardinalities, no pass over its values.
pub(crate) fn require_binary_data(data: &Dataset) -> Result<()> {
    data.require_nonempty()?;
    if !data.is_binary() {
        return Err(Error::InvalidData("an RBM needs binary (0/1) data".into()));
    }
    Ok(())
}

/// The mean of each variable of a binary, non-empty dataset, in `f64`.
pub fn visible_means(data: &Dataset) -> Result<Vec<f64>> {
    require_binary_data(data)?;
    // integer counts: exact in any order, so blocks of rows in parallel give the same
    // figures (serial, this pass was 3% of a one-epoch MNIST fit, which starts here)
    let d = data.n_vars();
    let sum = (0..data.n_samples().div_ceil(MEANS_BLOCK))
        .into_par_iter()
        .map(|blk| {
            let mut count = vec![0u32; d];
            let rows = blk * MEANS_BLOCK..data.n_samples().min((blk + 1) * MEANS_BLOCK);
            for r in rows {
                let row = data.sample(r);
                // a contiguous row as a slice: the count vectorizes (through the view's
                // iterator it did not: 50 ms for MNIST, 7% of a one-thread epoch, issue 19)
                match row.as_slice() {
                    Some(x) => add_counts(&mut count, x),
                    None => add_counts(&mut count, row.iter()),
                }
            }
            count
        })
        .fold(
            || vec![0u64; d],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(a, &b)| *a += u64::from(b));
                a
            },
        )
        .reduce(
            || vec![0u64; d],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(a, &b)| *a += b);
                a
            },
        );
    let n = data.n_samples() as f64;
    Ok(sum.iter().map(|&s| s as f64 / n).collect())
}

/// `count[i] += x[i]` for a row of 0/1 values.
#[inline(always)]
fn add_counts<'a>(count: &mut [u32], x: impl IntoIterator<Item = &'a u8>) {
    count
        .iter_mut()
        .zip(x)
        .for_each(|(s, &x)| *s += u32::from(x));
}

/// Rows per task of [`visible_means`]: counted in `u32` within a block (vectorizes), added
/// up in `u64`.
const MEANS_BLOCK: usize = 4096;

/// Rows per block of [`mean_neg_free_energy`].
const FREE_ENERGY_BLOCK: usize = 256;

/// The average `−F(v)` over the rows of a binary dataset (the data term of a log-likelihood
/// whose `ln Z` is estimated, e.g. by AIS): [`Rbm::free_energy_batch`] on blocks of rows,
/// summed in `f64` in row order (the same bits for any thread count). [`crate::rbm::exact`]
/// keeps an all-`f64` twin for its exact likelihoods.
pub fn mean_neg_free_energy(rbm: &Rbm, data: &Dataset) -> Result<f64> {
    let mut sum = 0f64;
    for_each_free_energy_block(rbm, data, "mean_neg_free_energy", |f| {
        sum -= f.iter().sum::<f64>()
    })?;
    Ok(sum / data.n_samples() as f64)
}

/// `−F(v)` of every row of a binary dataset: the per-row terms of [`mean_neg_free_energy`],
/// computed the same way.
pub fn neg_free_energies(rbm: &Rbm, data: &Dataset) -> Result<Vec<f64>> {
    let mut out = Vec::with_capacity(data.n_samples());
    for_each_free_energy_block(rbm, data, "neg_free_energies", |f| {
        out.extend(f.iter().map(|&x| -x))
    })?;
    Ok(out)
}

/// Free energies of the rows of a binary dataset, [`FREE_ENERGY_BLOCK`] rows at a time, in
/// row order, handed block by block to `f`.
fn for_each_free_energy_block(
    rbm: &Rbm,
    data: &Dataset,
    op: &str,
    mut each: impl FnMut(&[f64]),
) -> Result<()> {
    require_binary_data(data)?;
    let nv = rbm.n_visible();
    check_len(op, "data columns", data.n_vars(), nv)?;
    let n = data.n_samples();
    let block = FREE_ENERGY_BLOCK.min(n);
    let mut v = vec![0f32; block * nv];
    let mut f = vec![0f64; block];
    let mut scratch = vec![0f32; block * rbm.n_hidden()];
    let rows: Vec<usize> = (0..n).collect();
    for chunk in rows.chunks(block) {
        let m = chunk.len();
        fill_batch(data, chunk, &mut v[..m * nv])?;
        rbm.free_energy_batch(
            &v[..m * nv],
            &mut f[..m],
            &mut scratch[..m * rbm.n_hidden()],
        )?;
        each(&f[..m]);
    }
    Ok(())
}

/// 0/1 states (`n × n_visible`, as `f32`, as chains and samplers keep them) as a binary
/// [`Dataset`] (a value is 1 when above 0.5).
pub fn states_to_dataset(v: &[f32], n_visible: usize) -> Result<Dataset> {
    let bits = v.iter().map(|&x| u8::from(x > 0.5)).collect();
    Dataset::from_flat(bits, n_visible, vec![2; n_visible])
}

/// Copies the samples `rows` of a binary dataset into the mini-batch `out`
/// (`rows.len() × n_vars`, 0.0 / 1.0).
pub fn fill_batch(data: &Dataset, rows: &[usize], out: &mut [f32]) -> Result<()> {
    let d = data.n_vars();
    check_len("fill_batch", "out", out.len(), rows.len() * d)?;
    if let Some(&r) = rows.iter().find(|&&r| r >= data.n_samples()) {
        return Err(Error::param(
            "rows",
            format!("row {r} is past the {} samples", data.n_samples()),
        ));
    }
    // in parallel over blocks of rows: reading shuffled rows waits on memory (serial, 77 µs
    // of each PCD-1 MNIST update, while the other thread slept; issue 19). A contiguous
    // sample is converted from its slice (vectorized): through the view's element iterator
    // the copy of an MNIST mini-batch took 110-150 µs of each 2-thread update, 57-70 µs so,
    // and 32-39 µs with the block's rows prefetched first (their memory latencies overlap)
    rows.par_chunks(FILL_BLOCK)
        .zip(out.par_chunks_mut(FILL_BLOCK * d.max(1)))
        .for_each(|(rows, out)| {
            for &r in rows {
                if let Some(x) = data.sample(r).as_slice() {
                    crate::linalg::prefetch(x);
                }
            }
            for (&r, dst) in rows.iter().zip(out.chunks_exact_mut(d.max(1))) {
                let sample = data.sample(r);
                match sample.as_slice() {
                    Some(x) => dst.iter_mut().zip(x).for_each(|(o, &x)| *o = f32::from(x)),
                    None => dst
                        .iter_mut()
                        .zip(sample.iter())
                        .for_each(|(o, &x)| *o = f32::from(x)),
                }
            }
        });
    Ok(())
}

/// Rows per task of [`fill_batch`].
const FILL_BLOCK: usize = 32;

fn normal(sigma: f32) -> Result<Normal<f32>> {
    if !(sigma.is_finite() && sigma >= 0.0) {
        return Err(Error::param(
            "sigma",
            format!("must be finite and ≥ 0, got {sigma}"),
        ));
    }
    Normal::new(0.0, sigma).map_err(|e| Error::param("sigma", e.to_string()))
}

pub(crate) fn check_len(op: &str, name: &str, found: usize, expected: usize) -> Result<()> {
    if found != expected {
        return Err(Error::Shape {
            op: op.into(),
            expected: format!("{name} with {expected} entries"),
            found: format!("{found}"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbm::testutil::{all_states, brute_log_z};
    use crate::rng::rng_from_seed;
    use ndarray::Array2;

    /// `V·W + c` and `H·Wᵀ + b` by the sparse 0/1 path (density below the switch), the dense
    /// path (probabilities) and an `f64` reference agree; the packed-weight cache follows
    /// parameter changes.
    #[test]
    fn sparse_and_dense_products_agree_with_reference() {
        use rand::Rng;
        let (nv, nh, rows) = (53, 21, 7);
        let mut rbm = Rbm::random(nv, nh, 0.7, &mut rng_from_seed(4)).unwrap();
        let mut rng = rng_from_seed(5);
        let sparse_v: Vec<f32> = (0..rows * nv)
            .map(|_| f32::from(u8::from(rng.random::<f32>() < 0.1)))
            .collect();
        let sparse_h: Vec<f32> = (0..rows * nh)
            .map(|_| f32::from(u8::from(rng.random::<f32>() < 0.15)))
            .collect();
        let probs_v: Vec<f32> = (0..rows * nv).map(|_| rng.random::<f32>()).collect();
        let reference = |rbm: &Rbm, x: &[f32], visible_side: bool| -> Vec<f64> {
            let (nin, nout) = if visible_side { (nv, nh) } else { (nh, nv) };
            let mut out = vec![0f64; rows * nout];
            for r in 0..rows {
                for o in 0..nout {
                    let mut acc = if visible_side {
                        f64::from(rbm.c()[o])
                    } else {
                        f64::from(rbm.b()[o])
                    };
                    for i in 0..nin {
                        let w = if visible_side {
                            rbm.w()[i * nh + o]
                        } else {
                            rbm.w()[o * nh + i]
                        };
                        acc += f64::from(x[r * nin + i]) * f64::from(w);
                    }
                    out[r * nout + o] = acc;
                }
            }
            out
        };
        let check = |rbm: &Rbm| {
            for (x, visible_side) in [(&sparse_v, true), (&probs_v, true), (&sparse_h, false)] {
                let n_out = if visible_side { nh } else { nv };
                let mut got = vec![0f32; rows * n_out];
                if visible_side {
                    rbm.hidden_input(x, &mut got).unwrap();
                } else {
                    rbm.visible_input(x, &mut got).unwrap();
                }
                let want = reference(rbm, x, visible_side);
                for (g, w) in got.iter().zip(&want) {
                    assert!((f64::from(*g) - w).abs() < 1e-4, "{g} vs {w}");
                }
            }
        };
        check(&rbm);
        // a parameter change drops the packed copies: the next products use the new W
        rbm.params_mut().0.iter_mut().for_each(|w| *w = -*w * 0.5);
        check(&rbm);
        check(&rbm.clone());
    }

    #[test]
    fn new_checks_shapes_and_values() {
        assert!(Rbm::new(2, 2, vec![0.0; 3], vec![0.0; 2], vec![0.0; 2]).is_err());
        assert!(Rbm::new(2, 2, vec![0.0; 4], vec![0.0; 1], vec![0.0; 2]).is_err());
        assert!(Rbm::new(2, 2, vec![0.0; 4], vec![0.0; 2], vec![f32::NAN, 0.0]).is_err());
        assert!(Rbm::new(0, 2, vec![], vec![], vec![0.0; 2]).is_err());
        assert!(Rbm::zeros(3, 2).is_ok());
    }

    /// F(v) = −ln Σ_h e^{−E(v,h)}, enumerated over h.
    #[test]
    fn free_energy_matches_enumeration_over_h() {
        let rbm = Rbm::random(5, 4, 0.8, &mut rng_from_seed(3)).unwrap();
        let mut batch = Vec::new();
        let mut want = Vec::new();
        for v in all_states(5) {
            let terms: Vec<f64> = all_states(4)
                .iter()
                .map(|h| -rbm.energy(&v, h).unwrap())
                .collect();
            let f = -linalg::log_sum_exp(&terms);
            assert!((rbm.free_energy(&v).unwrap() - f).abs() < 1e-10);
            batch.extend(v.iter().map(|&x| f32::from(x)));
            want.push(f);
        }
        let mut out = vec![0.0; 32];
        let mut scratch = vec![0.0; 32 * 4];
        rbm.free_energy_batch(&batch, &mut out, &mut scratch)
            .unwrap();
        for (a, b) in out.iter().zip(&want) {
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
        // the brute-force joint and the free energies give the same ln Z
        let fz: Vec<f64> = want.iter().map(|f| -f).collect();
        assert!((linalg::log_sum_exp(&fz) - brute_log_z(&rbm)).abs() < 1e-10);
    }

    /// The conditionals add the bias and take `σ` in one parallel pass over blocks of rows:
    /// the same bits as the input followed by a serial `σ`, for sparse and dense inputs
    /// (densities either side of both thresholds) and any thread count.
    #[test]
    fn probs_are_sigmoid_of_input_bit_for_bit() {
        let (nv, nh, rows) = (70, 40, 37);
        let rbm = Rbm::random(nv, nh, 0.5, &mut rng_from_seed(3)).unwrap();
        let mut rng = rng_from_seed(4);
        for density in [0.1f32, 0.4, 0.9] {
            let v: Vec<f32> = (0..rows * nv)
                .map(|_| f32::from(u8::from(rng.random::<f32>() < density)))
                .collect();
            let h: Vec<f32> = (0..rows * nh)
                .map(|_| f32::from(u8::from(rng.random::<f32>() < density)))
                .collect();
            let mut want_h = vec![0f32; rows * nh];
            let mut want_v = vec![0f32; rows * nv];
            rbm.hidden_input(&v, &mut want_h).unwrap();
            rbm.visible_input(&h, &mut want_v).unwrap();
            linalg::sigmoid_inplace(&mut want_h);
            linalg::sigmoid_inplace(&mut want_v);
            for threads in [1, 3] {
                let (got_h, got_v) = crate::testutil::on_threads(threads, || {
                    let mut got_h = vec![0f32; rows * nh];
                    let mut got_v = vec![0f32; rows * nv];
                    rbm.hidden_probs(&v, &mut got_h).unwrap();
                    rbm.visible_probs(&h, &mut got_v).unwrap();
                    (got_h, got_v)
                });
                assert_eq!(got_h, want_h, "density {density}, {threads} threads");
                assert_eq!(got_v, want_v, "density {density}, {threads} threads");
            }
        }
    }

    /// Both conditionals against ratios of the enumerated joint.
    #[test]
    fn conditionals_match_joint() {
        let rbm = Rbm::random(4, 3, 1.0, &mut rng_from_seed(5)).unwrap();
        let vs = all_states(4);
        let hs = all_states(3);
        for v in &vs {
            let vf: Vec<f32> = v.iter().map(|&x| f32::from(x)).collect();
            let mut ph = vec![0.0; 3];
            rbm.hidden_probs(&vf, &mut ph).unwrap();
            let p: Vec<f64> = hs
                .iter()
                .map(|h| (-rbm.energy(v, h).unwrap()).exp())
                .collect();
            let z: f64 = p.iter().sum();
            for j in 0..3 {
                let on: f64 = hs
                    .iter()
                    .zip(&p)
                    .filter(|(h, _)| h[j] == 1)
                    .map(|(_, p)| p)
                    .sum();
                assert!((f64::from(ph[j]) - on / z).abs() < 1e-6);
            }
        }
        for h in &hs {
            let hf: Vec<f32> = h.iter().map(|&x| f32::from(x)).collect();
            let mut pv = vec![0.0; 4];
            rbm.visible_probs(&hf, &mut pv).unwrap();
            let p: Vec<f64> = vs
                .iter()
                .map(|v| (-rbm.energy(v, h).unwrap()).exp())
                .collect();
            let z: f64 = p.iter().sum();
            for i in 0..4 {
                let on: f64 = vs
                    .iter()
                    .zip(&p)
                    .filter(|(v, _)| v[i] == 1)
                    .map(|(_, p)| p)
                    .sum();
                assert!((f64::from(pv[i]) - on / z).abs() < 1e-6);
            }
        }
        // batches are rows: a two-row batch equals two one-row calls
        let v2 = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0];
        let mut both = vec![0.0; 6];
        rbm.hidden_probs(&v2, &mut both).unwrap();
        let mut second = vec![0.0; 3];
        rbm.hidden_probs(&v2[4..], &mut second).unwrap();
        assert_eq!(&both[3..], &second[..]);
        assert!(rbm.hidden_probs(&v2[..3], &mut second).is_err());
    }

    #[test]
    fn init_follows_section_4_1() {
        let x = Array2::from_shape_vec((4, 3), vec![1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1]).unwrap();
        let data = Dataset::binary(x).unwrap();
        let rbm = Rbm::init_from_data(&data, 2000, 0.01, &mut rng_from_seed(9)).unwrap();
        assert!(rbm.c().iter().all(|&c| c == 0.0));
        // b = logit(mean): means 0.75, 0 (clamped), 0.75
        assert!((f64::from(rbm.b()[0]) - 3f64.ln()).abs() < 1e-6);
        let eps = BASE_RATE_EPS;
        assert!((f64::from(rbm.b()[1]) - (eps / (1.0 - eps)).ln()).abs() < 1e-4);
        let n = rbm.w().len() as f64;
        let mean = rbm.w().iter().map(|&w| f64::from(w)).sum::<f64>() / n;
        let sd = (rbm
            .w()
            .iter()
            .map(|&w| (f64::from(w) - mean).powi(2))
            .sum::<f64>()
            / n)
            .sqrt();
        assert!(
            mean.abs() < 1e-3 && (sd - 0.01).abs() < 5e-4,
            "mean {mean} sd {sd}"
        );
        // seeded: same seed, same model
        let again = Rbm::init_from_data(&data, 2000, 0.01, &mut rng_from_seed(9)).unwrap();
        assert_eq!(rbm, again);
        let nonbin = Dataset::with_inferred_cardinalities(Array2::from_elem((2, 2), 2)).unwrap();
        assert!(Rbm::init_from_data(&nonbin, 2, 0.01, &mut rng_from_seed(9)).is_err());
    }

    #[test]
    fn fill_batch_copies_rows() {
        let x = Array2::from_shape_vec((3, 2), vec![1, 0, 0, 1, 1, 1]).unwrap();
        let data = Dataset::binary(x).unwrap();
        let mut out = vec![0.0; 4];
        fill_batch(&data, &[2, 0], &mut out).unwrap();
        assert_eq!(out, vec![1.0, 1.0, 1.0, 0.0]);
        assert!(fill_batch(&data, &[3, 0], &mut out).is_err());
    }
}
