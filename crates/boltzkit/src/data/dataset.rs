//! [`Dataset`]: samples × discrete variables, with per-variable cardinalities.

use crate::error::{Error, Result};
use ndarray::{Array2, ArrayView1};

/// Largest cardinality a variable may have (values are stored as `u8`).
pub const MAX_CARDINALITY: u32 = 256;

/// A table of discrete observations: one row per sample, one column per variable.
///
/// Value `x[s, i]` lies in `0..cardinalities[i]`. Invariants (checked by [`Dataset::new`]):
/// at least one variable, every cardinality in `1..=256`, every value below its cardinality.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    values: Array2<u8>,
    cardinalities: Vec<u32>,
}

impl Dataset {
    /// Bytes a dataset of `rows × vars` values holds (one byte per value), saturating: what a
    /// command that generates or samples that many rows needs for them.
    pub fn memory_estimate(rows: u64, vars: u64) -> u64 {
        rows.saturating_mul(vars)
    }

    /// A dataset with the given cardinalities, checked against the values.
    pub fn new(values: Array2<u8>, cardinalities: Vec<u32>) -> Result<Self> {
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
        for (s, row) in values.outer_iter().enumerate() {
            for (i, (&v, &k)) in row.iter().zip(&cardinalities).enumerate() {
                if u32::from(v) >= k {
                    return Err(Error::InvalidData(format!(
                        "sample {}, variable {}: value {v} is not below its cardinality {k}",
                        s + 1,
                        i + 1
                    )));
                }
            }
        }
        Ok(Dataset {
            values,
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
        let mut card = vec![2u32; values.ncols()];
        for row in values.outer_iter() {
            for (c, &v) in card.iter_mut().zip(row.iter()) {
                *c = (*c).max(u32::from(v) + 1);
            }
        }
        Dataset::new(values, card)
    }

    /// A binary dataset (every cardinality 2); fails on a value above 1.
    pub fn binary(values: Array2<u8>) -> Result<Self> {
        let n = values.ncols();
        Dataset::new(values, vec![2; n])
    }

    /// Number of samples (rows).
    pub fn n_samples(&self) -> usize {
        self.values.nrows()
    }

    /// Number of variables (columns).
    pub fn n_vars(&self) -> usize {
        self.values.ncols()
    }

    /// Per-variable cardinalities.
    pub fn cardinalities(&self) -> &[u32] {
        &self.cardinalities
    }

    /// The value table, samples × variables.
    pub fn values(&self) -> &Array2<u8> {
        &self.values
    }

    /// Sample `s` as a row view.
    pub fn sample(&self, s: usize) -> ArrayView1<'_, u8> {
        self.values.row(s)
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
        Dataset::new(self.values, cardinalities)
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
        Dataset::new(
            self.values.select(ndarray::Axis(0), rows),
            self.cardinalities.clone(),
        )
    }

    /// Consumes the dataset, returning its value table.
    pub fn into_values(self) -> Array2<u8> {
        self.values
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
    fn rejects_wrong_cardinality_count() {
        assert!(Dataset::new(array![[0, 1]], vec![2]).is_err());
    }
}
