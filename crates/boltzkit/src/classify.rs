//! Multinomial logistic regression, the linear readout used to score learned features (the
//! classification error of Figure 2 of the Frank-Wolfe paper): `p(y = k | x) ∝ exp(xᵀW_k +
//! a_k)`, fitted by minimizing the mean cross-entropy plus `l2/2 ‖W‖²` (biases not penalized)
//! with [`crate::optim::lbfgs`]. Products are `f32` GEMMs; losses and the parameters are `f64`.
//!
//! ```
//! use boltzkit::classify::{LogisticParams, LogisticRegression};
//! // two features, three classes, separable
//! let x = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.1, 0.0, 0.9, 0.1, 0.0, 0.9];
//! let y = [0, 1, 2, 0, 1, 2];
//! let m = LogisticRegression::fit(&x, 2, &y, &LogisticParams::default())?;
//! assert_eq!(m.predict(&x)?, y.to_vec());
//! assert_eq!(m.error_rate(&x, &y)?, 0.0);
//! # Ok::<(), boltzkit::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::linalg::{sgemm, Op};
use crate::optim::lbfgs::{minimize, LbfgsParams, LbfgsStop};

/// Settings of [`LogisticRegression::fit`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LogisticParams {
    /// L2 penalty on the weights (default 1e-4), ≥ 0.
    pub l2: f64,
    /// Most L-BFGS iterations (default 300).
    pub max_iterations: usize,
    /// Stop when `max |∇| ≤` this (default 1e-5).
    pub grad_tol: f64,
}

impl Default for LogisticParams {
    fn default() -> Self {
        LogisticParams {
            l2: 1e-4,
            max_iterations: 300,
            grad_tol: 1e-5,
        }
    }
}

/// A fitted multinomial logistic regression.
#[derive(Debug, Clone, PartialEq)]
pub struct LogisticRegression {
    n_features: usize,
    n_classes: usize,
    /// `n_features × n_classes`, row-major.
    w: Vec<f32>,
    /// `n_classes` biases.
    a: Vec<f32>,
    /// The final training objective.
    pub loss: f64,
    /// L-BFGS iterations used.
    pub iterations: usize,
    /// Why L-BFGS stopped.
    pub stop: LbfgsStop,
}

fn check_rows(x: &[f32], n_features: usize, n_labels: usize) -> Result<usize> {
    if n_features == 0 || !x.len().is_multiple_of(n_features) || x.len() / n_features != n_labels {
        return Err(Error::Shape {
            op: "logistic regression".into(),
            expected: format!("{n_labels} rows of {n_features} features"),
            found: format!("{} values", x.len()),
        });
    }
    if n_labels == 0 {
        return Err(Error::InvalidData("no samples to classify".into()));
    }
    Ok(n_labels)
}

/// Row-wise softmax of `logits` (`n × k`) in place; returns `Σ_rows −ln p(y_row)`.
fn softmax_nll(logits: &mut [f32], y: &[u32], k: usize) -> f64 {
    let mut nll = 0.0;
    for (row, &yi) in logits.chunks_exact_mut(k).zip(y) {
        let m = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let mut s = 0.0f64;
        for v in row.iter_mut() {
            let e = f64::from(*v - m).exp();
            s += e;
            *v = e as f32;
        }
        let ly = f64::from(row[yi as usize]).ln() - s.ln();
        nll -= ly;
        let inv = (1.0 / s) as f32;
        row.iter_mut().for_each(|v| *v *= inv);
    }
    nll
}

impl LogisticRegression {
    /// Fits on rows `x` (`n × n_features`, row-major) with labels `y` in `0..K` (`K` = the
    /// largest label + 1).
    pub fn fit(x: &[f32], n_features: usize, y: &[u32], params: &LogisticParams) -> Result<Self> {
        let n = check_rows(x, n_features, y.len())?;
        if !(params.l2.is_finite() && params.l2 >= 0.0) {
            return Err(Error::param(
                "l2",
                format!("must be finite and ≥ 0, got {}", params.l2),
            ));
        }
        let k = y.iter().copied().max().unwrap_or(0) as usize + 1;
        let (f, nw) = (n_features, n_features * k);
        let mut w32 = vec![0f32; nw];
        let mut logits = vec![0f32; n * k];
        let mut g32 = vec![0f32; nw];
        let inv_n = 1.0 / n as f64;
        let eval = |theta: &[f64], grad: &mut [f64]| -> Result<f64> {
            w32.iter_mut().zip(theta).for_each(|(o, &t)| *o = t as f32);
            sgemm(Op::N, Op::N, n, k, f, 1.0, x, &w32, 0.0, &mut logits);
            for row in logits.chunks_exact_mut(k) {
                row.iter_mut()
                    .zip(&theta[nw..])
                    .for_each(|(v, &a)| *v += a as f32);
            }
            let nll = softmax_nll(&mut logits, y, k);
            // residual P − Y, then ∇W = Xᵀ(P − Y)/n
            for (row, &yi) in logits.chunks_exact_mut(k).zip(y) {
                row[yi as usize] -= 1.0;
            }
            sgemm(Op::T, Op::N, f, k, n, 1.0, x, &logits, 0.0, &mut g32);
            let mut loss = nll * inv_n;
            for (i, (g, &gw)) in grad[..nw].iter_mut().zip(&g32).enumerate() {
                *g = f64::from(gw) * inv_n + params.l2 * theta[i];
                loss += 0.5 * params.l2 * theta[i] * theta[i];
            }
            for (j, g) in grad[nw..].iter_mut().enumerate() {
                *g = logits.chunks_exact(k).map(|r| f64::from(r[j])).sum::<f64>() * inv_n;
            }
            Ok(loss)
        };
        let lb = LbfgsParams {
            max_iterations: params.max_iterations.max(1),
            grad_tol: params.grad_tol,
            ..LbfgsParams::default()
        };
        let r = minimize(eval, vec![0.0; nw + k], &lb)?;
        Ok(LogisticRegression {
            n_features,
            n_classes: k,
            w: r.x[..nw].iter().map(|&t| t as f32).collect(),
            a: r.x[nw..].iter().map(|&t| t as f32).collect(),
            loss: r.f,
            iterations: r.iterations,
            stop: r.stop,
        })
    }

    /// Number of classes `K`.
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// The most probable class of every row of `x`.
    pub fn predict(&self, x: &[f32]) -> Result<Vec<u32>> {
        let (f, k) = (self.n_features, self.n_classes);
        if !x.len().is_multiple_of(f) {
            return Err(Error::Shape {
                op: "LogisticRegression::predict".into(),
                expected: format!("rows of {f} features"),
                found: format!("{} values", x.len()),
            });
        }
        let n = x.len() / f;
        let mut logits = vec![0f32; n * k];
        sgemm(Op::N, Op::N, n, k, f, 1.0, x, &self.w, 0.0, &mut logits);
        Ok(logits
            .chunks_exact(k)
            .map(|row| {
                let mut best = 0;
                for j in 1..k {
                    if row[j] + self.a[j] > row[best] + self.a[best] {
                        best = j;
                    }
                }
                best as u32
            })
            .collect())
    }

    /// The fraction of rows of `x` whose predicted class differs from `y`.
    pub fn error_rate(&self, x: &[f32], y: &[u32]) -> Result<f64> {
        check_rows(x, self.n_features, y.len())?;
        let p = self.predict(x)?;
        Ok(p.iter().zip(y).filter(|(a, b)| a != b).count() as f64 / y.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use rand::Rng;

    /// The fitted point is a stationary point of the objective written out in `f64`: its
    /// gradient, by central differences of the definition, is near zero.
    #[test]
    fn fit_reaches_a_stationary_point_of_the_definition() {
        let (n, f) = (60, 3);
        let mut rng = rng_from_seed(2);
        let x: Vec<f32> = (0..n * f).map(|_| rng.random::<f32>()).collect();
        let y: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
        let l2 = 0.05;
        let m = LogisticRegression::fit(
            &x,
            f,
            &y,
            &LogisticParams {
                l2,
                ..Default::default()
            },
        )
        .unwrap();
        let k = m.n_classes();
        let theta: Vec<f64> = m.w.iter().chain(&m.a).map(|&v| f64::from(v)).collect();
        let objective = |t: &[f64]| {
            let mut total = 0.0;
            for (row, &yi) in x.chunks_exact(f).zip(&y) {
                let logits: Vec<f64> = (0..k)
                    .map(|c| {
                        t[f * k + c]
                            + (0..f)
                                .map(|j| f64::from(row[j]) * t[j * k + c])
                                .sum::<f64>()
                    })
                    .collect();
                total -= logits[yi as usize] - crate::linalg::log_sum_exp(&logits);
            }
            total / n as f64 + 0.5 * l2 * t[..f * k].iter().map(|v| v * v).sum::<f64>()
        };
        let h = 1e-4;
        for i in 0..theta.len() {
            let mut p = theta.clone();
            p[i] += h;
            let mut q = theta.clone();
            q[i] -= h;
            let g = (objective(&p) - objective(&q)) / (2.0 * h);
            assert!(g.abs() < 1e-3, "∂/∂θ_{i} = {g}");
        }
        assert!((objective(&theta) - m.loss).abs() < 1e-5);
    }

    #[test]
    fn shapes_are_checked() {
        let p = LogisticParams::default();
        assert!(LogisticRegression::fit(&[0.0; 5], 2, &[0, 1], &p).is_err());
        assert!(LogisticRegression::fit(&[], 2, &[], &p).is_err());
        let m = LogisticRegression::fit(&[0.0, 1.0, 1.0, 0.0], 2, &[0, 1], &p).unwrap();
        assert!(m.predict(&[0.0; 3]).is_err());
        assert!(m.error_rate(&[0.0; 4], &[0]).is_err());
    }
}
