//! Hidden features for downstream use: `E[h_j | v] = p(h_j = 1 | v) = σ(c_j + vᵀW_{:,j})` of
//! every row of a dataset (the features of Figure 2 of the Frank-Wolfe paper).
//!
//! ```
//! use boltzkit::data::synth::BarsAndStripes;
//! use boltzkit::rbm::{features::hidden_features, Rbm};
//! let data = BarsAndStripes::new(3, false)?.dataset()?;
//! let rbm = Rbm::zeros(9, 4)?;
//! let f = hidden_features(&rbm, &data)?;
//! assert_eq!(f.len(), data.n_samples() * 4);
//! assert!(f.iter().all(|&p| p == 0.5)); // σ(0)
//! # Ok::<(), boltzkit::Error>(())
//! ```

use super::exact::check_data_for;
use super::model::{fill_batch, Rbm};
use crate::data::Dataset;
use crate::error::Result;
use rayon::prelude::*;

/// Rows per parallel batch.
const BATCH: usize = 256;

/// `E[h | v]` for every row of `data` (binary, `n_visible` columns), row-major
/// `n_samples × n_hidden`, computed in fixed batches (same bits for any thread count).
pub fn hidden_features(rbm: &Rbm, data: &Dataset) -> Result<Vec<f32>> {
    check_data_for(rbm, data, "hidden_features")?;
    let (nv, nh, n) = (rbm.n_visible(), rbm.n_hidden(), data.n_samples());
    let mut out = vec![0f32; n * nh];
    out.par_chunks_mut(BATCH * nh)
        .enumerate()
        .try_for_each(|(k, dst)| -> Result<()> {
            let rows: Vec<usize> = (k * BATCH..(k * BATCH + dst.len() / nh)).collect();
            let mut v = vec![0f32; rows.len() * nv];
            fill_batch(data, &rows, &mut v)?;
            rbm.hidden_probs(&v, dst)
        })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::sigmoid_f64;
    use crate::rng::rng_from_seed;
    use ndarray::Array2;

    /// Against the definition, row by row.
    #[test]
    fn features_are_the_hidden_conditional_means() {
        let rbm = Rbm::random(5, 3, 1.0, &mut rng_from_seed(1)).unwrap();
        let x = Array2::from_shape_fn((300, 5), |(i, j)| ((i * 7 + j * 3) % 4 == 0) as u8);
        let data = Dataset::binary(x.clone()).unwrap();
        let f = hidden_features(&rbm, &data).unwrap();
        for (i, row) in x.outer_iter().enumerate() {
            for j in 0..3 {
                let a = f64::from(rbm.c()[j])
                    + (0..5)
                        .map(|k| f64::from(row[k]) * f64::from(rbm.w()[k * 3 + j]))
                        .sum::<f64>();
                assert!((f64::from(f[i * 3 + j]) - sigmoid_f64(a)).abs() < 1e-5);
            }
        }
        let wrong = Dataset::binary(Array2::zeros((2, 4))).unwrap();
        assert!(hidden_features(&rbm, &wrong).is_err());
    }
}
