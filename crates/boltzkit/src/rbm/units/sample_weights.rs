//! Sample weights of data rows, scaled to add to 1: one check shared by the model's exact
//! log-likelihood (`model.rs`), the gradient's statistics (`statistics.rs`) and the trainer.

use crate::error::{Error, Result};

/// Sample weights scaled to add to 1 (`None`: `1/n` each); an error for a negative or
/// non-finite weight, a count other than `n`, or weights adding to 0.
pub fn normalized_weights(weights: Option<&[f64]>, n: usize) -> Result<Vec<f64>> {
    let Some(w) = weights else {
        return Ok(vec![1.0 / n.max(1) as f64; n]);
    };
    if w.len() != n {
        return Err(Error::Shape {
            op: "sample weights".into(),
            expected: format!("one per row ({n})"),
            found: format!("{}", w.len()),
        });
    }
    if let Some(i) = w.iter().position(|x| !x.is_finite() || *x < 0.0) {
        return Err(Error::param(
            format!("weights[{i}]"),
            format!("{} is not a finite weight ≥ 0", w[i]),
        ));
    }
    let sum: f64 = w.iter().sum();
    if sum <= 0.0 {
        return Err(Error::param("weights", "the weights add to 0"));
    }
    Ok(w.iter().map(|x| x / sum).collect())
}
