//! Products with a 0/1 matrix, computed as sums of selected rows instead of multiply-adds.
//!
//! RBM states are binary and usually sparse (binarized MNIST: about 13% ones), so `V·W` costs
//! `(ones of V) × n` additions instead of `rows × k × n` multiply-adds. The right-hand matrix
//! is [`Packed`] in strips of 16 columns ([`STRIP`]: one cache line per row) or, when such a
//! strip would not fit in L1, 8 ([`LANES`]); each strip is one contiguous block (`Wᵀ` of an
//! MNIST RBM with 500 hidden units: 500 × 16 floats = 31 KB; `W`: 784 × 8 floats = 25 KB) that
//! stays in L1 while every output row sums its selected rows of the strip. [`IndexLists`]
//! holds the ones of the 0/1 matrix, by row (for `A·B`, a row denser than half by its zeros)
//! or by column (for `Aᵀ·P`); [`sum_selected`] does the sums.
//!
//! Callers switch to these kernels when the density of ones is at most
//! [`SPARSE_MAX_DENSITY`] (measured on the RBM shapes, see BENCHMARKS.md). Every output
//! element sums its terms in a fixed order on one thread, so results do not depend on the
//! thread count.

mod changes;
mod lists;
mod packing;
mod sums;
#[cfg(test)]
mod tests;

pub use changes::{carry_products, ChangeLists};
pub use lists::{column_range, columns_of_split, IndexLists};
pub(crate) use packing::BlockWriter;
pub use packing::{max_density, Packed, LANES, SPARSE_MAX_DENSITY, SPARSE_MAX_DENSITY_L1, STRIP};
pub use sums::{sum_selected, sum_selected_by_strips, sum_selected_serial};

/// The fraction of ones of `x` when every entry is exactly 0 or 1; `None` otherwise (and for
/// an empty slice).
pub fn binary_density(x: &[f32]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    let mut ones = 0usize;
    let mut bad = false;
    for &v in x {
        ones += usize::from(v == 1.0);
        bad |= v != 0.0 && v != 1.0;
    }
    (!bad).then(|| ones as f64 / x.len() as f64)
}

/// Scratch reused by the sparse products of one thread: index lists and a packed matrix.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Index lists.
    pub lists: IndexLists,
    /// Index lists by ranges of columns ([`columns_of_split`]).
    pub column_lists: Vec<IndexLists>,
    /// A packed matrix.
    pub packed: Packed,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Box<Scratch>>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with this thread's [`Scratch`] (taken out while `f` runs, so a nested call on
/// the same thread gets a fresh one instead of a conflicting borrow).
pub fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    let mut s = SCRATCH.with(|c| c.take()).unwrap_or_default();
    let out = f(&mut s);
    SCRATCH.with(|c| c.set(Some(s)));
    out
}
