//! The basis functions of the FSLL model (Eqs. 3-5) and the index layout of the state space.
//!
//! A state `x = (x_0, …, x_{n-1})` and a basis index `y` are both stored as one mixed-radix
//! number with variable 0 the least significant digit. The global basis function is the
//! product of local ones, `Φ_y(x) = Π_i φ^i_{y_i}(x_i)` (Eq. 3), and every local function takes
//! the values ±1, so `Φ_y² ≡ 1`.

use crate::error::{Error, Result};

/// Largest state space the FSLL model accepts (2^32 states).
pub const MAX_STATES: usize = 1 << 32;

/// The local basis of one variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalBasis {
    /// Walsh-Hadamard rows (Eq. 4), used when the cardinality is a power of two:
    /// `φ_j(l) = (−1)^popcount(j & l)`.
    Hadamard,
    /// The basis of Eq. (5) for other cardinalities: `φ_0 ≡ 1`, `φ_j(l) = 1` if `j = l`, else −1.
    Indicator,
}

impl LocalBasis {
    /// The local basis the model uses for a variable of cardinality `k` (Eqs. 4-5).
    pub fn for_cardinality(k: u32) -> Self {
        if k.is_power_of_two() {
            LocalBasis::Hadamard
        } else {
            LocalBasis::Indicator
        }
    }

    /// `φ_j(l)`: the value (±1) of local basis function `j` at value `l`.
    pub fn phi(self, j: u32, l: u32) -> f64 {
        match self {
            LocalBasis::Hadamard => {
                if (j & l).count_ones().is_multiple_of(2) {
                    1.0
                } else {
                    -1.0
                }
            }
            LocalBasis::Indicator => {
                if j == 0 || j == l {
                    1.0
                } else {
                    -1.0
                }
            }
        }
    }

    /// The dense `k × k` matrix `A[j][l] = φ_j(l)` (Eq. 12), row-major.
    pub fn matrix(self, k: u32) -> Vec<f64> {
        let mut m = Vec::with_capacity((k * k) as usize);
        for j in 0..k {
            for l in 0..k {
                m.push(self.phi(j, l));
            }
        }
        m
    }
}

/// The state-space layout: cardinalities, strides, local bases and the total size `|X|`.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    cardinalities: Vec<u32>,
    strides: Vec<usize>,
    bases: Vec<LocalBasis>,
    n_states: usize,
}

impl Layout {
    /// The layout for these cardinalities; fails when a cardinality is below 2 or `|X|` is too
    /// large.
    pub fn new(cardinalities: &[u32]) -> Result<Self> {
        if cardinalities.is_empty() {
            return Err(Error::InvalidData(
                "the model needs at least one variable".into(),
            ));
        }
        let mut strides = Vec::with_capacity(cardinalities.len());
        let mut size: usize = 1;
        for (i, &k) in cardinalities.iter().enumerate() {
            if k < 2 {
                return Err(Error::param(
                    "cardinalities",
                    format!(
                        "variable {i} has cardinality {k}; every variable needs at least 2 values"
                    ),
                ));
            }
            strides.push(size);
            size = size
                .checked_mul(k as usize)
                .filter(|&s| s <= MAX_STATES)
                .ok_or_else(|| Error::TooLarge {
                    what: "the FSLL state space".into(),
                    needed: format!(
                        "{} states",
                        cardinalities.iter().map(|&k| k as f64).product::<f64>()
                    ),
                    limit: format!("{MAX_STATES} states"),
                })?;
        }
        Ok(Layout {
            cardinalities: cardinalities.to_vec(),
            strides,
            bases: cardinalities
                .iter()
                .map(|&k| LocalBasis::for_cardinality(k))
                .collect(),
            n_states: size,
        })
    }

    /// Number of variables `n`.
    pub fn n_vars(&self) -> usize {
        self.cardinalities.len()
    }

    /// Per-variable cardinalities.
    pub fn cardinalities(&self) -> &[u32] {
        &self.cardinalities
    }

    /// Stride of variable `i` in the mixed-radix index.
    pub fn stride(&self, i: usize) -> usize {
        self.strides[i]
    }

    /// The local basis of variable `i`.
    pub fn basis(&self, i: usize) -> LocalBasis {
        self.bases[i]
    }

    /// `|X|`, the number of states (and of basis functions).
    pub fn n_states(&self) -> usize {
        self.n_states
    }

    /// True when every cardinality is a power of two: then the index is a bit string, the
    /// whole basis is one Walsh-Hadamard matrix, and `Φ_y Φ_z = Φ_{y⊕z}`.
    pub fn is_power_of_two(&self) -> bool {
        self.cardinalities.iter().all(|k| k.is_power_of_two())
    }

    /// Digit `i` of a mixed-radix index.
    pub fn digit(&self, index: usize, i: usize) -> u32 {
        ((index / self.strides[i]) % self.cardinalities[i] as usize) as u32
    }

    /// The mixed-radix index of a state given by its digits.
    pub fn index_of<'a>(&self, digits: impl IntoIterator<Item = &'a u8>) -> usize {
        digits
            .into_iter()
            .zip(&self.strides)
            .map(|(&d, &s)| d as usize * s)
            .sum()
    }

    /// `Φ_y(x)` evaluated from the definition (Eq. 3): the slow, exact reference.
    pub fn phi(&self, y: usize, x: usize) -> f64 {
        (0..self.n_vars())
            .map(|i| self.bases[i].phi(self.digit(y, i), self.digit(x, i)))
            .product()
    }

    /// The variables on which `Φ_y` depends (the order of `y` is their count).
    pub fn support(&self, y: usize) -> Vec<usize> {
        (0..self.n_vars())
            .filter(|&i| self.digit(y, i) != 0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hadamard_matches_sylvester_recursion() {
        // H_1 = (1), H_{2k} = [[H, H], [H, -H]] (Eq. 4).
        let mut h = vec![1.0];
        let mut k = 1usize;
        while k < 8 {
            let mut next = vec![0.0; 4 * k * k];
            for r in 0..k {
                for c in 0..k {
                    let v = h[r * k + c];
                    next[r * 2 * k + c] = v;
                    next[r * 2 * k + c + k] = v;
                    next[(r + k) * 2 * k + c] = v;
                    next[(r + k) * 2 * k + c + k] = -v;
                }
            }
            h = next;
            k *= 2;
        }
        assert_eq!(h, LocalBasis::Hadamard.matrix(8));
    }

    #[test]
    fn indicator_basis_is_eq5_and_invertible() {
        let m = LocalBasis::Indicator.matrix(3);
        assert_eq!(m, vec![1.0, 1.0, 1.0, -1.0, 1.0, -1.0, -1.0, -1.0, 1.0]);
        // determinant of the 3x3 matrix is non-zero
        let det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6])
            + m[2] * (m[3] * m[7] - m[4] * m[6]);
        assert!(det.abs() > 0.5);
    }

    #[test]
    fn layout_indices_round_trip() {
        let l = Layout::new(&[2, 3, 4]).unwrap();
        assert_eq!(l.n_states(), 24);
        let idx = l.index_of(&[1, 2, 3]);
        assert_eq!(idx, 1 + 2 * 2 + 3 * 6);
        assert_eq!(
            (0..3).map(|i| l.digit(idx, i)).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        assert!(!l.is_power_of_two());
        assert!(Layout::new(&[2, 4, 8]).unwrap().is_power_of_two());
    }

    #[test]
    fn layout_rejects_bad_cardinalities() {
        assert!(Layout::new(&[2, 1]).is_err());
        assert!(Layout::new(&[]).is_err());
        assert!(Layout::new(&[256; 5]).is_err());
    }

    #[test]
    fn xor_product_rule_for_power_of_two_layouts() {
        let l = Layout::new(&[2, 4, 2]).unwrap();
        for y in 0..16 {
            for z in 0..16 {
                for x in 0..16 {
                    assert_eq!(l.phi(y, x) * l.phi(z, x), l.phi(y ^ z, x));
                }
            }
        }
    }
}
