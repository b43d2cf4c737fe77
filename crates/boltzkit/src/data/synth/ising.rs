//! [`IsingGrid`]: the 2-D Ising model on a free-boundary grid, with its exact distribution.

use super::distribution::{Distribution, CHUNK};
use super::state::MAX_EXACT_VARS;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// A 2-D Ising model on a `rows × cols` grid with free boundary and 4-neighbour coupling:
/// `p(x) ∝ exp(J Σ_<ij> s_i s_j)`, `s = 2x − 1`, variable index `r * cols + c`.
///
/// The FSLL paper's Ising5x4 (Sec. 3.4) is [`IsingGrid::ising5x4`] (also the default):
/// 5 rows × 4 columns, `J = 0.5`.
///
/// ```
/// use boltzkit::data::synth::IsingGrid;
/// let p = IsingGrid::new(2, 2, 0.5).distribution()?;
/// assert_eq!(p.probs().len(), 16);
/// assert!((p.probs()[0] - p.probs()[15]).abs() < 1e-15); // global flip symmetry
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IsingGrid {
    /// Number of grid rows.
    pub rows: usize,
    /// Number of grid columns.
    pub cols: usize,
    /// The coupling `J` of every edge (positive: neighbours agree).
    pub coupling: f64,
}

impl Default for IsingGrid {
    fn default() -> Self {
        IsingGrid::ising5x4()
    }
}

impl IsingGrid {
    /// A grid with the given size and coupling.
    pub fn new(rows: usize, cols: usize, coupling: f64) -> Self {
        IsingGrid {
            rows,
            cols,
            coupling,
        }
    }

    /// Ising5x4 of the FSLL paper: 5 rows × 4 columns (20 variables), `J = 0.5`.
    pub fn ising5x4() -> Self {
        IsingGrid::new(5, 4, 0.5)
    }

    /// Number of variables, `rows * cols`.
    pub fn n_vars(&self) -> usize {
        self.rows * self.cols
    }

    /// The grid edges `(i, j)`, `i < j`: for each site in index order, its right then its
    /// lower neighbour.
    pub fn edges(&self) -> Vec<(usize, usize)> {
        let mut e = Vec::new();
        for r in 0..self.rows {
            for c in 0..self.cols {
                let i = r * self.cols + c;
                if c + 1 < self.cols {
                    e.push((i, i + 1));
                }
                if r + 1 < self.rows {
                    e.push((i, i + self.cols));
                }
            }
        }
        e
    }

    fn check(&self) -> Result<()> {
        if self.rows == 0 || self.cols == 0 {
            return Err(Error::param(
                "rows/cols",
                format!(
                    "an Ising grid needs at least one site, got {}×{}",
                    self.rows, self.cols
                ),
            ));
        }
        if !self.coupling.is_finite() {
            return Err(Error::param(
                "coupling",
                format!("must be finite, got {}", self.coupling),
            ));
        }
        let n = self.rows.saturating_mul(self.cols);
        if n > MAX_EXACT_VARS {
            return Err(Error::TooLarge {
                what: format!(
                    "the exact distribution of a {}×{} Ising grid",
                    self.rows, self.cols
                ),
                needed: format!("{n} variables"),
                limit: format!("{MAX_EXACT_VARS} variables"),
            });
        }
        Ok(())
    }

    /// The exact distribution over all `2^(rows·cols)` states (at most 28 variables).
    ///
    /// Each state's energy is computed with bit operations: the number `d` of disagreeing
    /// neighbour pairs gives `Σ s_i s_j = E − 2d` for `E` edges; weights are normalized by
    /// their maximum (log-sum-exp) and a deterministic compensated sum.
    pub fn distribution(&self) -> Result<Distribution> {
        self.check()?;
        let (rows, cols) = (self.rows, self.cols);
        let n = rows * cols;
        let n_edges = rows * (cols - 1) + (rows - 1) * cols;
        // Bit i of `hmask`: site i has a right neighbour; of `vmask`: a lower neighbour.
        let mut hmask = 0usize;
        let mut vmask = 0usize;
        for r in 0..rows {
            for c in 0..cols {
                let i = r * cols + c;
                if c + 1 < cols {
                    hmask |= 1 << i;
                }
                if r + 1 < rows {
                    vmask |= 1 << i;
                }
            }
        }
        let log_w: Vec<f64> = (0..=n_edges)
            .map(|d| self.coupling * (n_edges as f64 - 2.0 * d as f64))
            .collect();
        let max = log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = log_w.iter().map(|l| (l - max).exp()).collect();
        let mut weights = vec![0.0f64; 1 << n];
        weights
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(ci, chunk)| {
                for (k, p) in chunk.iter_mut().enumerate() {
                    let x = ci * CHUNK + k;
                    let d = ((x ^ (x >> 1)) & hmask).count_ones()
                        + ((x ^ (x >> cols)) & vmask).count_ones();
                    *p = w[d as usize];
                }
            });
        Distribution::from_weights(vec![2; n], weights)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synth::distribution::det_sum;

    /// Brute force over `edges`: p(x) ∝ exp(J Σ s_i s_j).
    fn brute(n: usize, edges: &[(usize, usize)], j: f64) -> Vec<f64> {
        let w: Vec<f64> = (0..1usize << n)
            .map(|x| {
                let s = |i: usize| if (x >> i) & 1 == 1 { 1.0 } else { -1.0 };
                (j * edges.iter().map(|&(a, b)| s(a) * s(b)).sum::<f64>()).exp()
            })
            .collect();
        let z: f64 = w.iter().sum();
        w.iter().map(|v| v / z).collect()
    }

    fn assert_close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= 1e-14 + 1e-12 * y.abs(),
                "state {i}: {x} vs {y}"
            );
        }
    }

    #[test]
    fn two_by_two_matches_hand_written_brute_force() {
        // Sites 0 1 / 2 3: edges 0-1, 2-3 (horizontal), 0-2, 1-3 (vertical).
        let j = 0.5f64;
        let mut w = [0.0f64; 16];
        for (x, wx) in w.iter_mut().enumerate() {
            let s: Vec<f64> = (0..4).map(|i| 2.0 * ((x >> i) & 1) as f64 - 1.0).collect();
            *wx = (j * (s[0] * s[1] + s[2] * s[3] + s[0] * s[2] + s[1] * s[3])).exp();
        }
        let z: f64 = w.iter().sum();
        let want: Vec<f64> = w.iter().map(|v| v / z).collect();
        let p = IsingGrid::new(2, 2, j).distribution().unwrap();
        assert_close(p.probs(), &want);
        // All-equal states: exp(2) each; checkerboards: exp(-2).
        assert!((p.probs()[0] / p.probs()[0b0110] - 4f64.exp()).abs() < 1e-9);
    }

    #[test]
    fn non_square_grid_edges_and_antiferromagnet() {
        // 3 rows × 2 cols: sites 0 1 / 2 3 / 4 5.
        let g = IsingGrid::new(3, 2, -0.3);
        let mut e = g.edges();
        e.sort_unstable();
        assert_eq!(
            e,
            vec![(0, 1), (0, 2), (1, 3), (2, 3), (2, 4), (3, 5), (4, 5)]
        );
        let want = brute(6, &e, -0.3);
        assert_close(g.distribution().unwrap().probs(), &want);
        let g = IsingGrid::new(2, 5, 0.8);
        assert_close(
            g.distribution().unwrap().probs(),
            &brute(10, &g.edges(), 0.8),
        );
    }

    #[test]
    fn ising5x4_is_normalized_and_flip_symmetric() {
        let g = IsingGrid::default();
        assert_eq!((g.rows, g.cols, g.coupling), (5, 4, 0.5));
        assert_eq!(g.edges().len(), 31);
        let p = g.distribution().unwrap();
        assert_eq!(p.cardinalities(), &[2; 20][..]);
        let probs = p.probs();
        let sum = det_sum(probs);
        assert!((sum - 1.0).abs() < 1e-12, "sum {sum}");
        let all = (1usize << 20) - 1;
        for x in 0..1usize << 20 {
            assert_eq!(probs[x], probs[all ^ x], "state {x}");
        }
        let best = probs.iter().copied().fold(0.0, f64::max);
        assert_eq!(best, probs[0]);
        assert_eq!(probs[0], probs[all]);
    }

    #[test]
    fn rejects_bad_grids() {
        assert!(matches!(
            IsingGrid::new(6, 5, 0.5).distribution(),
            Err(Error::TooLarge { .. })
        ));
        assert!(IsingGrid::new(0, 3, 0.5).distribution().is_err());
        assert!(IsingGrid::new(2, 2, f64::NAN).distribution().is_err());
        assert_eq!(
            IsingGrid::new(1, 1, 1.0).distribution().unwrap().probs(),
            &[0.5, 0.5]
        );
    }
}
