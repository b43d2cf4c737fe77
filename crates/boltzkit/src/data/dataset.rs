//! [`Dataset`]: samples × discrete variables, with per-variable cardinalities.
//!
//! A dataset owns its values ([`Dataset::new`] and every reader), or reads values that an
//! owner it keeps alive holds ([`Dataset::from_shared_view`]: a numpy array handed over by the
//! Python package without a copy). Either way the values are checked once, when the dataset
//! is built, and read through one [`ArrayView2`] ([`Dataset::values`]).

use crate::error::{Error, Result};
use ndarray::{Array2, ArrayView1, ArrayView2};
use std::sync::Arc;

/// Largest cardinality a variable may have (values are stored as `u8`).
pub const MAX_CARDINALITY: u32 = 256;

/// Who keeps a dataset's values alive.
enum Owner {
    /// The dataset's own table (its heap buffer never moves nor changes while it is held).
    Owned(Array2<u8>),
    /// An outside owner (shared by every clone) that keeps the viewed memory valid.
    Shared(Arc<dyn Send + Sync>),
}

/// A table of discrete observations: one row per sample, one column per variable.
///
/// Value `x[s, i]` lies in `0..cardinalities[i]`. Invariants (checked by every constructor):
/// at least one variable, every cardinality in `1..=256`, every value below its cardinality.
pub struct Dataset {
    /// The values. The `'static` lifetime is private: the memory is kept valid by `owner`,
    /// and [`Dataset::values`] hands the view out only for as long as `&self` lives.
    view: ArrayView2<'static, u8>,
    owner: Owner,
    cardinalities: Vec<u32>,
}

impl Clone for Dataset {
    fn clone(&self) -> Self {
        match &self.owner {
            Owner::Owned(a) => Dataset::owned_unchecked(a.clone(), self.cardinalities.clone()),
            Owner::Shared(owner) => Dataset {
                view: self.view,
                owner: Owner::Shared(Arc::clone(owner)),
                cardinalities: self.cardinalities.clone(),
            },
        }
    }
}

impl PartialEq for Dataset {
    fn eq(&self, other: &Self) -> bool {
        self.cardinalities == other.cardinalities && self.view == other.view
    }
}

impl std::fmt::Debug for Dataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dataset")
            .field("values", &self.view)
            .field("cardinalities", &self.cardinalities)
            .field("shared", &matches!(self.owner, Owner::Shared(_)))
            .finish()
    }
}

/// Fails unless `values` has a column, one cardinality per column, each in `1..=256`, and
/// every value below its column's cardinality (the error names the first sample and variable
/// at fault, 1-based). One pass over the rows, each compared with the per-column largest
/// allowed value, so the common (valid) case runs at memory speed.
fn check(values: ArrayView2<'_, u8>, cardinalities: &[u32]) -> Result<()> {
    if values.ncols() == 0 {
        return Err(Error::InvalidData(
            "a dataset needs at least one variable".into(),
        ));
    }
    if cardinalities.len() != values.ncols() {
        return Err(Error::Shape {
            op: "Dataset::new".into(),
            expected: format!("{} cardinalities (one per column)", values.ncols()),
            found: format!("{}", cardinalities.len()),
        });
    }
    for (i, &k) in cardinalities.iter().enumerate() {
        if k == 0 || k > MAX_CARDINALITY {
            return Err(Error::param(
                "cardinalities",
                format!("variable {i} has cardinality {k}; must be in 1..={MAX_CARDINALITY}"),
            ));
        }
    }
    // k in 1..=256, so k - 1 fits a byte
    let largest: Vec<u8> = cardinalities.iter().map(|&k| (k - 1) as u8).collect();
    let row_ok = |row: ArrayView1<'_, u8>| match row.as_slice() {
        // no early exit: the loop vectorizes
        Some(r) => r
            .iter()
            .zip(&largest)
            .fold(true, |ok, (&v, &m)| ok & (v <= m)),
        None => row.iter().zip(&largest).all(|(&v, &m)| v <= m),
    };
    if values.outer_iter().all(row_ok) {
        return Ok(());
    }
    for (s, row) in values.outer_iter().enumerate() {
        for (i, (&v, &k)) in row.iter().zip(cardinalities).enumerate() {
            if u32::from(v) >= k {
                return Err(Error::InvalidData(format!(
                    "sample {}, variable {}: value {v} is not below its cardinality {k}",
                    s + 1,
                    i + 1
                )));
            }
        }
    }
    Err(Error::Internal(
        "Dataset check: a row failed the fast check but no value is out of range".into(),
    ))
}

/// The cardinalities inferred from values: column maximum + 1, at least 2.
pub fn inferred_cardinalities(values: ArrayView2<'_, u8>) -> Vec<u32> {
    let mut card = vec![2u32; values.ncols()];
    for row in values.outer_iter() {
        for (c, &v) in card.iter_mut().zip(row.iter()) {
            *c = (*c).max(u32::from(v) + 1);
        }
    }
    card
}

impl Dataset {
    /// Bytes a dataset of `rows × vars` values holds (one byte per value), saturating: what a
    /// command that generates or samples that many rows needs for them.
    pub fn memory_estimate(rows: u64, vars: u64) -> u64 {
        rows.saturating_mul(vars)
    }

    /// A dataset owning `values`, whose invariants the caller has checked.
    fn owned_unchecked(values: Array2<u8>, cardinalities: Vec<u32>) -> Self {
        let view = values.view();
        // SAFETY: the view points into the heap buffer of `values`, which the dataset keeps
        // (as `Owner::Owned`) and never mutates; moving the dataset moves the array's header,
        // not its buffer. The 'static lifetime never leaves the dataset: `values()` shortens
        // it to the borrow of `self`.
        let view: ArrayView2<'static, u8> = unsafe { std::mem::transmute(view) };
        Dataset {
            view,
            owner: Owner::Owned(values),
            cardinalities,
        }
    }

    /// A dataset with the given cardinalities, checked against the values.
    pub fn new(values: Array2<u8>, cardinalities: Vec<u32>) -> Result<Self> {
        check(values.view(), &cardinalities)?;
        Ok(Dataset::owned_unchecked(values, cardinalities))
    }

    /// A dataset over values that `owner` holds, read in place (no copy) and checked like
    /// [`Dataset::new`]'s. Every clone shares `owner`, which is dropped with the last one.
    ///
    /// This is how the Python package reads a C-contiguous `uint8` numpy array: `owner` holds
    /// a reference to the array object, `values` views its buffer.
    ///
    /// # Safety
    ///
    /// For as long as `owner` lives (that is, as long as the dataset or any clone of it, or
    /// anything holding one, lives), the memory `values` views must stay valid for reads and
    /// must not be written to: `owner` must keep it allocated, and nothing may mutate it.
    pub unsafe fn from_shared_view(
        owner: Arc<dyn Send + Sync>,
        values: ArrayView2<'_, u8>,
        cardinalities: Vec<u32>,
    ) -> Result<Self> {
        check(values, &cardinalities)?;
        // SAFETY: the caller guarantees the memory outlives `owner`, which the dataset keeps;
        // the 'static lifetime never leaves the dataset (see `owned_unchecked`).
        let view: ArrayView2<'static, u8> = unsafe { std::mem::transmute(values) };
        Ok(Dataset {
            view,
            owner: Owner::Shared(owner),
            cardinalities,
        })
    }

    /// A dataset from row-major values (`n_vars` per sample) and cardinalities.
    pub fn from_flat(values: Vec<u8>, n_vars: usize, cardinalities: Vec<u32>) -> Result<Self> {
        if n_vars == 0 || !values.len().is_multiple_of(n_vars) {
            return Err(Error::Shape {
                op: "Dataset::from_flat".into(),
                expected: format!("a multiple of {n_vars} values (whole rows)"),
                found: format!("{} values", values.len()),
            });
        }
        let rows = values.len() / n_vars;
        let values = Array2::from_shape_vec((rows, n_vars), values).map_err(|e| Error::Shape {
            op: "Dataset::from_flat".into(),
            expected: format!("{rows} × {n_vars}"),
            found: e.to_string(),
        })?;
        Dataset::new(values, cardinalities)
    }

    /// A dataset whose cardinalities are inferred as (column maximum + 1), at least 2.
    pub fn with_inferred_cardinalities(values: Array2<u8>) -> Result<Self> {
        let card = inferred_cardinalities(values.view());
        Dataset::new(values, card)
    }

    /// A binary dataset (every cardinality 2); fails on a value above 1.
    pub fn binary(values: Array2<u8>) -> Result<Self> {
        let n = values.ncols();
        Dataset::new(values, vec![2; n])
    }

    /// Number of samples (rows).
    pub fn n_samples(&self) -> usize {
        self.view.nrows()
    }

    /// Number of variables (columns).
    pub fn n_vars(&self) -> usize {
        self.view.ncols()
    }

    /// Per-variable cardinalities.
    pub fn cardinalities(&self) -> &[u32] {
        &self.cardinalities
    }

    /// The value table, samples × variables (a view of the owned or shared values).
    pub fn values(&self) -> &ArrayView2<'_, u8> {
        let view: *const ArrayView2<'static, u8> = &self.view;
        // SAFETY: only the lifetime changes (same type, same layout): the view is handed out
        // for the borrow of `self`, during which its memory is valid (the dataset keeps its
        // owner). ndarray's views are invariant in their lifetime only because of an
        // associated type; a shared reference to a view allows no write that could store a
        // shorter-lived view in it, so shortening the lifetime is sound.
        unsafe { &*view.cast::<ArrayView2<'_, u8>>() }
    }

    /// Whether the values are read in place from an outside owner
    /// ([`Dataset::from_shared_view`]) rather than owned.
    pub fn is_shared(&self) -> bool {
        matches!(self.owner, Owner::Shared(_))
    }

    /// Sample `s` as a row view.
    pub fn sample(&self, s: usize) -> ArrayView1<'_, u8> {
        self.view.row(s)
    }

    /// True when every variable is binary.
    pub fn is_binary(&self) -> bool {
        self.cardinalities.iter().all(|&k| k == 2)
    }

    /// Fails with a clear error unless the dataset has at least one sample.
    pub fn require_nonempty(&self) -> Result<()> {
        if self.n_samples() == 0 {
            Err(Error::InvalidData("the dataset has no samples".into()))
        } else {
            Ok(())
        }
    }

    /// The same data with other cardinalities (each at least the observed maximum + 1).
    pub fn with_cardinalities(self, cardinalities: Vec<u32>) -> Result<Self> {
        check(self.view.view(), &cardinalities)?;
        Ok(Dataset {
            cardinalities,
            ..self
        })
    }

    /// The samples `rows` (in that order, repeats allowed) as a dataset with the same
    /// cardinalities; an error names a row past the end.
    pub fn select(&self, rows: &[usize]) -> Result<Self> {
        if let Some(&r) = rows.iter().find(|&&r| r >= self.n_samples()) {
            return Err(Error::param(
                "rows",
                format!("row {r} is past the {} samples", self.n_samples()),
            ));
        }
        Ok(Dataset::owned_unchecked(
            self.view.select(ndarray::Axis(0), rows),
            self.cardinalities.clone(),
        ))
    }

    /// Consumes the dataset, returning its value table (a copy when the values are shared).
    pub fn into_values(self) -> Array2<u8> {
        match self.owner {
            Owner::Owned(a) => a,
            Owner::Shared(_) => self.view.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn select_keeps_rows_and_cardinalities() {
        let d = super::Dataset::new(ndarray::array![[0u8, 1], [2, 0], [1, 1]], vec![3, 4]).unwrap();
        let s = d.select(&[2, 0, 2]).unwrap();
        assert_eq!(s.values(), &ndarray::array![[1u8, 1], [0, 1], [1, 1]]);
        assert_eq!(s.cardinalities(), &[3, 4]);
        assert!(d.select(&[3]).is_err());
    }

    use super::*;
    use ndarray::array;

    #[test]
    fn infers_cardinalities() {
        let d = Dataset::with_inferred_cardinalities(array![[0, 3], [1, 0]]).unwrap();
        assert_eq!(d.cardinalities(), &[2, 4]);
        assert_eq!(d.n_samples(), 2);
    }

    #[test]
    fn rejects_value_above_cardinality() {
        let e = Dataset::new(array![[0, 2]], vec![2, 2]).unwrap_err();
        assert!(e.to_string().contains("variable 2"), "{e}");
    }

    #[test]
    fn from_flat_builds_rows() {
        let d = Dataset::from_flat(vec![0, 1, 1, 0, 1, 1], 3, vec![2; 3]).unwrap();
        assert_eq!(d.values(), &array![[0, 1, 1], [0, 1, 1]]);
        assert!(Dataset::from_flat(vec![0, 1], 3, vec![2; 3]).is_err());
        assert!(Dataset::from_flat(vec![0, 2, 1], 3, vec![2; 3]).is_err());
    }

    #[test]
    fn shared_view_reads_in_place_and_checks_once() {
        let buf: Arc<Vec<u8>> = Arc::new(vec![0, 1, 1, 0, 1, 1]);
        let view = ndarray::ArrayView2::from_shape((2, 3), buf.as_slice()).unwrap();
        // SAFETY: `buf` is never written and the dataset keeps it alive
        let d = unsafe { Dataset::from_shared_view(buf.clone(), view, vec![2; 3]) }.unwrap();
        assert!(d.is_shared());
        assert_eq!(d.values().as_ptr(), buf.as_ptr(), "no copy");
        let c = d.clone();
        assert_eq!(c.values().as_ptr(), buf.as_ptr(), "clones share the values");
        assert_eq!(Arc::strong_count(&buf), 3);
        let owned = Dataset::from_flat(buf.to_vec(), 3, vec![2; 3]).unwrap();
        assert_eq!(d, owned);
        assert!(!owned.is_shared());
        let d = d.with_cardinalities(vec![2, 2, 3]).unwrap();
        assert_eq!(d.values().as_ptr(), buf.as_ptr());
        assert_eq!(d.into_values(), owned.clone().into_values());
        drop(c);
        assert_eq!(
            Arc::strong_count(&buf),
            1,
            "the last clone releases the owner"
        );
        // refused as `new` refuses, with the same message
        let bad = ndarray::ArrayView2::from_shape((2, 3), &[0u8, 1, 1, 0, 2, 1][..]).unwrap();
        // SAFETY: a static slice
        let e = unsafe { Dataset::from_shared_view(Arc::new(()), bad, vec![2; 3]) }.unwrap_err();
        let e_new = Dataset::new(bad.to_owned(), vec![2; 3]).unwrap_err();
        assert_eq!(e.to_string(), e_new.to_string());
        assert!(
            e.to_string().contains("sample 2, variable 2: value 2"),
            "{e}"
        );
    }

    #[test]
    fn check_finds_the_first_bad_value_in_any_layout() {
        // mixed cardinalities, a non-contiguous (transposed) table, a zero-row table
        let a = array![[0u8, 2, 0], [1, 0, 3], [0, 1, 1]];
        assert!(Dataset::new(a.clone(), vec![2, 3, 4]).is_ok());
        let e = Dataset::new(a.clone(), vec![2, 3, 3]).unwrap_err();
        assert!(
            e.to_string().contains("sample 2, variable 3: value 3"),
            "{e}"
        );
        let t = a.reversed_axes();
        let e = Dataset::new(t, vec![2, 3, 4]).unwrap_err();
        assert!(
            e.to_string().contains("sample 2, variable 1: value 2"),
            "{e}"
        );
        assert!(Dataset::new(Array2::zeros((0, 4)), vec![2; 4]).is_ok());
        let d = Dataset::new(array![[255u8, 0]], vec![256, 1]).unwrap();
        assert_eq!(d.clone(), d);
    }

    #[test]
    fn rejects_wrong_cardinality_count() {
        assert!(Dataset::new(array![[0, 1]], vec![2]).is_err());
    }
}
