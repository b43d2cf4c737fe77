//! [`Fvbm`]: the fully visible Boltzmann machine `P(x) ∝ exp(½ xᵀMx + bᵀx)` (Eq. 1.1 of
//! Nguyen & Wood; Eq. 1 of the FSLL paper), in either [`Convention`], and the one exact
//! conversion between the conventions ([`Fvbm::to_convention`]).
//!
//! The parameter vector `θ` holds `b` then the upper triangle of `M` in lexicographic order,
//! `(b_1, …, b_d, m_12, m_13, …, m_1d, m_23, …, m_{d−1,d})` (Sec. 1 of Nguyen & Wood); its
//! length is [`n_params`]`(d) = d(d+1)/2` and [`upper_index`] locates `m_jk` in it.

use super::convention::Convention;
use crate::data::Dataset;
use crate::error::{Error, Result};
use rand::Rng;
use rand_distr::{Distribution as _, Normal};

/// Number of free parameters of a `d`-unit FVBM: `d` biases plus `d(d−1)/2` couplings.
pub fn n_params(d: usize) -> usize {
    d * (d + 1) / 2
}

/// The position of `m_jk` (`j < k < d`, 0-based) in the parameter vector `θ`.
#[inline]
pub fn upper_index(d: usize, j: usize, k: usize) -> usize {
    debug_assert!(j < k && k < d);
    d + j * (2 * d - j - 1) / 2 + (k - j - 1)
}

/// A fully visible Boltzmann machine over `d` units.
///
/// Invariants (checked by [`Fvbm::new`]): `d ≥ 1`, `b` has `d` finite entries, `M` is a
/// `d × d` row-major matrix of finite entries, exactly symmetric, with a zero diagonal.
///
/// ```
/// use boltzkit::fvbm::{Convention, Fvbm};
/// use boltzkit::rng::rng_from_seed;
/// let spin = Fvbm::random(4, 0.5, Convention::Spin, &mut rng_from_seed(1))?;
/// let bin = spin.to_convention(Convention::Binary);
/// // The same distribution: log-potentials differ by one constant on every state.
/// let gap = |x: &[u8]| spin.log_potential(x) - bin.log_potential(x);
/// assert!((gap(&[0, 1, 1, 0]) - gap(&[1, 1, 0, 1])).abs() < 1e-12);
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Fvbm {
    b: Vec<f64>,
    m: Vec<f64>,
    convention: Convention,
}

impl Fvbm {
    /// Bytes of a `d`-unit model (f64 `b` and the dense `d × d` `M`), saturating.
    pub fn memory_estimate(d: u64) -> u64 {
        d.saturating_mul(d).saturating_add(d).saturating_mul(8)
    }

    /// A model from its biases `b` (length `d`) and coupling matrix `m` (`d × d`, row-major),
    /// checked: `M` must be exactly symmetric with a zero diagonal, every entry finite.
    pub fn new(b: Vec<f64>, m: Vec<f64>, convention: Convention) -> Result<Self> {
        let d = b.len();
        if d == 0 {
            return Err(Error::param("b", "an FVBM needs at least one unit"));
        }
        if m.len() != d * d {
            return Err(Error::Shape {
                op: "Fvbm::new".into(),
                expected: format!("M with {d}×{d} = {} entries", d * d),
                found: format!("{} entries", m.len()),
            });
        }
        if let Some(j) = b.iter().position(|v| !v.is_finite()) {
            return Err(Error::param(
                "b",
                format!("b[{j}] = {} is not finite", b[j]),
            ));
        }
        for j in 0..d {
            for k in 0..d {
                let v = m[j * d + k];
                if !v.is_finite() {
                    return Err(Error::param("M", format!("M[{j},{k}] = {v} is not finite")));
                }
                if j == k && v != 0.0 {
                    return Err(Error::param(
                        "M",
                        format!("the diagonal must be zero, found M[{j},{j}] = {v}"),
                    ));
                }
                if k > j && v != m[k * d + j] {
                    return Err(Error::param(
                        "M",
                        format!(
                            "must be symmetric, found M[{j},{k}] = {v} but M[{k},{j}] = {}",
                            m[k * d + j]
                        ),
                    ));
                }
            }
        }
        Ok(Fvbm { b, m, convention })
    }

    /// The model with all parameters zero (the uniform distribution).
    pub fn zeros(d: usize, convention: Convention) -> Result<Self> {
        Fvbm::new(vec![0.0; d], vec![0.0; d * d], convention)
    }

    /// A model from the parameter vector `θ = (b, upper M)` (see the module docs).
    pub fn from_theta(d: usize, theta: &[f64], convention: Convention) -> Result<Self> {
        if theta.len() != n_params(d) {
            return Err(Error::Shape {
                op: "Fvbm::from_theta".into(),
                expected: format!("{} parameters for d = {d}", n_params(d)),
                found: format!("{}", theta.len()),
            });
        }
        let mut m = vec![0.0; d * d];
        for j in 0..d {
            for k in j + 1..d {
                let v = theta[upper_index(d, j, k)];
                m[j * d + k] = v;
                m[k * d + j] = v;
            }
        }
        Fvbm::new(theta[..d].to_vec(), m, convention)
    }

    /// A model whose `b_j` and upper `m_jk` are i.i.d. `N(0, variance)` (the simulation design
    /// of Nguyen & Wood, Sec. 5, with variance 0.5).
    pub fn random<R: Rng + ?Sized>(
        d: usize,
        variance: f64,
        convention: Convention,
        rng: &mut R,
    ) -> Result<Self> {
        if !(variance.is_finite() && variance >= 0.0) {
            return Err(Error::param(
                "variance",
                format!("must be a finite number ≥ 0, got {variance}"),
            ));
        }
        let normal = Normal::new(0.0, variance.sqrt())
            .map_err(|e| Error::param("variance", e.to_string()))?;
        let theta: Vec<f64> = (0..n_params(d)).map(|_| normal.sample(rng)).collect();
        Fvbm::from_theta(d, &theta, convention)
    }

    /// Number of units `d`.
    pub fn d(&self) -> usize {
        self.b.len()
    }

    /// The biases `b`.
    pub fn b(&self) -> &[f64] {
        &self.b
    }

    /// The coupling matrix `M`, `d × d` row-major.
    pub fn m(&self) -> &[f64] {
        &self.m
    }

    /// Row `j` of `M` (equal to column `j`).
    pub fn m_row(&self, j: usize) -> &[f64] {
        let d = self.d();
        &self.m[j * d..(j + 1) * d]
    }

    /// The coupling `m_jk`.
    pub fn coupling(&self, j: usize, k: usize) -> f64 {
        self.m[j * self.d() + k]
    }

    /// The convention of the units.
    pub fn convention(&self) -> Convention {
        self.convention
    }

    /// The parameter vector `θ = (b, upper M)` in lexicographic order.
    pub fn theta(&self) -> Vec<f64> {
        let d = self.d();
        let mut t = Vec::with_capacity(n_params(d));
        t.extend_from_slice(&self.b);
        for j in 0..d {
            t.extend_from_slice(&self.m[j * d + j + 1..(j + 1) * d]);
        }
        t
    }

    /// The log-potential `½ xᵀMx + bᵀx` of the state given as bits (0/1, mapped to values by
    /// the convention: in spin, bit 0 is −1). `ln P(x) = log_potential(x) − ln Z`.
    pub fn log_potential(&self, bits: &[u8]) -> f64 {
        debug_assert_eq!(bits.len(), self.d());
        let x: Vec<f64> = bits.iter().map(|&v| self.convention.value(v)).collect();
        self.log_potential_values(&x)
    }

    /// The energy `−(½ xᵀMx + bᵀx)` of a state given as bits.
    pub fn energy(&self, bits: &[u8]) -> f64 {
        -self.log_potential(bits)
    }

    /// The log-potential of a state given by its values in the model's convention.
    pub fn log_potential_values(&self, x: &[f64]) -> f64 {
        let d = self.d();
        debug_assert_eq!(x.len(), d);
        let mut quad = 0.0;
        for j in 0..d {
            let row = &self.m[j * d..(j + 1) * d];
            quad += x[j] * row.iter().zip(x).map(|(a, b)| a * b).sum::<f64>();
        }
        0.5 * quad + self.b.iter().zip(x).map(|(a, b)| a * b).sum::<f64>()
    }

    /// The local field `h_j = b_j + m_jᵀx` of unit `j` at the state with values `x`.
    pub fn local_field(&self, j: usize, x: &[f64]) -> f64 {
        self.b[j] + self.m_row(j).iter().zip(x).map(|(a, b)| a * b).sum::<f64>()
    }

    /// The same distribution in the convention `to` (the one exact conversion).
    ///
    /// With `x_spin = 2 x_bin − 1`, `½ x_sᵀM_s x_s + b_sᵀx_s = ½ x_bᵀM_b x_b + b_bᵀx_b + c`
    /// for every state, where
    /// `M_b = 4 M_s`, `b_b = 2 b_s − 2 M_s 1` and `c = ½ 1ᵀM_s 1 − 1ᵀb_s`;
    /// conversely `M_s = M_b / 4`, `b_s = b_b / 2 + M_b 1 / 4`. The constant `c` moves into
    /// `ln Z`, so the probabilities are unchanged. Multiplications by 2, 4, ½ and ¼ are exact
    /// in floating point; only the row sums `M 1` round.
    pub fn to_convention(&self, to: Convention) -> Fvbm {
        if to == self.convention {
            return self.clone();
        }
        let d = self.d();
        let row_sums: Vec<f64> = (0..d).map(|j| self.m_row(j).iter().sum()).collect();
        let (b, m) = match to {
            Convention::Binary => (
                self.b
                    .iter()
                    .zip(&row_sums)
                    .map(|(b, r)| 2.0 * b - 2.0 * r)
                    .collect(),
                self.m.iter().map(|v| 4.0 * v).collect(),
            ),
            Convention::Spin => (
                self.b
                    .iter()
                    .zip(&row_sums)
                    .map(|(b, r)| 0.5 * b + 0.25 * r)
                    .collect(),
                self.m.iter().map(|v| 0.25 * v).collect(),
            ),
        };
        Fvbm {
            b,
            m,
            convention: to,
        }
    }
}

/// Checks that `data` can be modelled by a `d`-unit FVBM: `d` variables, every one binary.
pub(crate) fn check_data(d: usize, data: &Dataset, op: &str) -> Result<()> {
    if data.n_vars() != d {
        return Err(Error::Shape {
            op: op.into(),
            expected: format!("{d} variables (the model's units)"),
            found: format!("{} variables in the data", data.n_vars()),
        });
    }
    if let Some(i) = data.cardinalities().iter().position(|&k| k != 2) {
        return Err(Error::InvalidData(format!(
            "{op}: an FVBM needs binary (0/1) data, but variable {} has cardinality {}",
            i + 1,
            data.cardinalities()[i]
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;

    fn all_states(d: usize) -> impl Iterator<Item = Vec<u8>> {
        (0..1usize << d).map(move |s| (0..d).map(|j| ((s >> j) & 1) as u8).collect())
    }

    #[test]
    fn theta_layout_round_trips() {
        let d = 5;
        let theta: Vec<f64> = (0..n_params(d)).map(|i| i as f64 + 0.5).collect();
        let m = Fvbm::from_theta(d, &theta, Convention::Spin).unwrap();
        assert_eq!(m.theta(), theta);
        assert_eq!(m.coupling(0, 1), theta[d]);
        assert_eq!(m.coupling(1, 0), theta[d]);
        assert_eq!(m.coupling(3, 4), *theta.last().unwrap());
        let mut seen = vec![false; n_params(d)];
        for j in 0..d {
            for k in j + 1..d {
                let i = upper_index(d, j, k);
                assert_eq!(theta[i], m.coupling(j, k));
                assert!(!seen[i]);
                seen[i] = true;
            }
        }
        assert!(seen[d..].iter().all(|&s| s));
    }

    #[test]
    fn constructor_validates() {
        let c = Convention::Spin;
        assert!(Fvbm::new(vec![], vec![], c).is_err());
        assert!(matches!(
            Fvbm::new(vec![0.0; 2], vec![0.0; 3], c),
            Err(Error::Shape { .. })
        ));
        let e = Fvbm::new(vec![0.0; 2], vec![0.0, 1.0, 0.5, 0.0], c).unwrap_err();
        assert!(e.to_string().contains("symmetric"), "{e}");
        let e = Fvbm::new(vec![0.0; 2], vec![1.0, 0.0, 0.0, 0.0], c).unwrap_err();
        assert!(e.to_string().contains("diagonal"), "{e}");
        let e = Fvbm::new(vec![f64::NAN, 0.0], vec![0.0; 4], c).unwrap_err();
        assert!(e.to_string().contains("b[0]"), "{e}");
        let e = Fvbm::new(
            vec![0.0; 2],
            vec![0.0, f64::INFINITY, f64::INFINITY, 0.0],
            c,
        );
        assert!(e.is_err());
        assert!(Fvbm::from_theta(3, &[0.0; 5], c).is_err());
        assert!(Fvbm::random(3, -1.0, c, &mut rng_from_seed(0)).is_err());
    }

    #[test]
    fn log_potential_is_the_definition() {
        let model = Fvbm::random(4, 0.5, Convention::Spin, &mut rng_from_seed(3)).unwrap();
        let bits = [1u8, 0, 0, 1];
        let x = [1.0, -1.0, -1.0, 1.0];
        let mut want = 0.0;
        for j in 0..4 {
            want += model.b()[j] * x[j];
            for k in 0..4 {
                want += 0.5 * model.coupling(j, k) * x[j] * x[k];
            }
        }
        assert!((model.log_potential(&bits) - want).abs() < 1e-14);
        assert_eq!(model.energy(&bits), -model.log_potential(&bits));
        // Flipping unit j changes the potential by Δx_j · h_j.
        let h = model.local_field(1, &x);
        let flipped = [1u8, 1, 0, 1];
        let diff = model.log_potential(&flipped) - model.log_potential(&bits);
        assert!((diff - 2.0 * h).abs() < 1e-14);
    }

    /// The conversion preserves the distribution exactly: the log-potentials differ by the
    /// same constant on every state, in both directions, and the round trip is the identity.
    #[test]
    fn conversion_preserves_the_distribution() {
        for seed in 0..5 {
            for from in [Convention::Spin, Convention::Binary] {
                let d = 3 + seed as usize;
                let a = Fvbm::random(d, 0.8, from, &mut rng_from_seed(seed)).unwrap();
                let to = match from {
                    Convention::Spin => Convention::Binary,
                    Convention::Binary => Convention::Spin,
                };
                let b = a.to_convention(to);
                assert_eq!(b.convention(), to);
                // Still a valid model (symmetric, zero diagonal).
                Fvbm::new(b.b().to_vec(), b.m().to_vec(), to).unwrap();
                let gaps: Vec<f64> = all_states(d)
                    .map(|x| a.log_potential(&x) - b.log_potential(&x))
                    .collect();
                for g in &gaps {
                    assert!((g - gaps[0]).abs() < 1e-12, "{g} vs {}", gaps[0]);
                }
                let back = b.to_convention(from);
                for (u, v) in back.theta().iter().zip(a.theta()) {
                    assert!((u - v).abs() < 1e-14);
                }
                assert_eq!(a.to_convention(from), a);
            }
        }
    }

    #[test]
    fn check_data_rejects_mismatch() {
        use ndarray::array;
        let data = Dataset::binary(array![[0u8, 1], [1, 1]]).unwrap();
        assert!(check_data(2, &data, "t").is_ok());
        assert!(matches!(
            check_data(3, &data, "t"),
            Err(Error::Shape { .. })
        ));
        let tern = Dataset::with_inferred_cardinalities(array![[0u8, 2]]).unwrap();
        assert!(check_data(2, &tern, "t").is_err());
    }
}
