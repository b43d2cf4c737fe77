//! [`FsllModel`]: `p_θ(x) = e^{l_θ(x)} / Z(θ)`, `l_θ(x) = Σ_y θ_y Φ_y(x)` with sparse `θ` (Eq. 3).

use super::basis::Layout;
use super::transform::backward;
use crate::data::synth::sample_states;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::estimate::Estimate;
use crate::linalg::exp_normalize;
use crate::model::{exact_only, ExactTask, LogPartition, Metadata, Model, Sampler, Sampling};
use crate::rng::BkRng;
use std::path::Path;

/// A full-span log-linear model: cardinalities plus the non-zero parameters `θ_y`.
///
/// `θ_0` is fixed at 0 (`Φ_0 ≡ 1` does not change the distribution), so index 0 is never part
/// of the basis.
#[derive(Debug, Clone, PartialEq)]
pub struct FsllModel {
    layout: Layout,
    /// Basis indices, strictly increasing.
    basis: Vec<usize>,
    /// `θ_y` for each basis index.
    theta: Vec<f64>,
}

impl FsllModel {
    /// The uniform model (no basis function used).
    pub fn uniform(cardinalities: &[u32]) -> Result<Self> {
        Self::new(cardinalities, Vec::new())
    }

    /// A model from `(y, θ_y)` pairs; zero parameters are dropped, indices must be distinct,
    /// non-zero and below `|X|`, and every `θ_y` finite.
    pub fn new(cardinalities: &[u32], mut terms: Vec<(usize, f64)>) -> Result<Self> {
        let layout = Layout::new(cardinalities)?;
        terms.retain(|&(_, t)| t != 0.0);
        terms.sort_by_key(|&(y, _)| y);
        for w in terms.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(Error::param(
                    "basis",
                    format!("index {} appears twice", w[0].0),
                ));
            }
        }
        for &(y, t) in &terms {
            if y == 0 || y >= layout.n_states() {
                return Err(Error::param(
                    "basis",
                    format!("index {y} must be in 1..{}", layout.n_states()),
                ));
            }
            if !t.is_finite() {
                return Err(Error::param("theta", format!("θ_{y} = {t} is not finite")));
            }
        }
        Ok(FsllModel {
            layout,
            basis: terms.iter().map(|t| t.0).collect(),
            theta: terms.iter().map(|t| t.1).collect(),
        })
    }

    /// The state-space layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Per-variable cardinalities.
    pub fn cardinalities(&self) -> &[u32] {
        self.layout.cardinalities()
    }

    /// Number of basis functions in use (`#basis` of Table 1).
    pub fn n_basis(&self) -> usize {
        self.basis.len()
    }

    /// Basis indices in increasing order.
    pub fn basis(&self) -> &[usize] {
        &self.basis
    }

    /// Parameters, aligned with [`FsllModel::basis`].
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// `l_θ(x)` for the state with mixed-radix index `x`, summed over the sparse basis.
    pub fn log_potential(&self, x: usize) -> f64 {
        if self.layout.is_power_of_two() {
            self.basis
                .iter()
                .zip(&self.theta)
                .map(|(&y, &t)| {
                    if (y & x).count_ones().is_multiple_of(2) {
                        t
                    } else {
                        -t
                    }
                })
                .sum()
        } else {
            self.basis
                .iter()
                .zip(&self.theta)
                .map(|(&y, &t)| t * self.layout.phi(y, x))
                .sum()
        }
    }

    /// Bytes of the |X|-sized f64 tables that [`FsllModel::probs`] and the KL and
    /// sampling paths build (two at a time), saturating.
    pub fn table_memory(&self) -> u64 {
        crate::data::synth::table_memory(self.cardinalities()).saturating_mul(2)
    }

    /// `l_θ(x)` for every state, by one fast transform of the dense `θ`.
    pub fn log_potentials(&self) -> Vec<f64> {
        let mut table = vec![0.0; self.layout.n_states()];
        for (&y, &t) in self.basis.iter().zip(&self.theta) {
            table[y] = t;
        }
        backward(&self.layout, &mut table);
        table
    }

    /// `p_θ(x)` for every state and `ln Z(θ)`.
    pub fn probs(&self) -> (Vec<f64>, f64) {
        let mut table = self.log_potentials();
        let log_z = exp_normalize(&mut table);
        (table, log_z)
    }

    /// `ln p_θ(x)` for every state.
    pub fn log_probs(&self) -> Vec<f64> {
        let mut table = self.log_potentials();
        let log_z = crate::linalg::log_sum_exp(&table);
        table.iter_mut().for_each(|v| *v -= log_z);
        table
    }

    /// `ln Z(θ)` by enumeration.
    pub fn log_z(&self) -> f64 {
        crate::linalg::log_sum_exp(&self.log_potentials())
    }

    /// Average log-likelihood `⟨ln p_θ⟩` of a dataset (nats per sample):
    /// [`Model::log_likelihood`], exact.
    pub fn avg_log_likelihood(&self, data: &Dataset) -> Result<f64> {
        Ok(self.log_likelihood(data, &LogPartition::Exact)?.value)
    }

    /// Fails unless the dataset's variables and cardinalities match the model's.
    pub fn check_data(&self, data: &Dataset) -> Result<()> {
        if data.cardinalities() != self.cardinalities() {
            return Err(Error::Shape {
                op: "FSLL model vs data".into(),
                expected: format!("cardinalities {:?}", self.cardinalities()),
                found: format!("{:?}", data.cardinalities()),
            });
        }
        Ok(())
    }
}

impl Model for FsllModel {
    fn n_variables(&self) -> usize {
        self.cardinalities().len()
    }

    /// Always: an FSLL model keeps tables over all of its states.
    fn exact_affordable(&self, _task: ExactTask) -> bool {
        true
    }

    fn unnormalized_log_probs(&self, data: &Dataset) -> Result<Vec<f64>> {
        self.check_data(data)?;
        Ok(data
            .values()
            .outer_iter()
            .map(|row| self.log_potential(self.layout().index_of(row.iter())))
            .collect())
    }

    fn log_partition(&self, method: &LogPartition) -> Result<Estimate> {
        exact_only(method, "FSLL")?;
        Ok(Estimate::exact(self.log_z()))
    }

    fn sample(&self, n: usize, sampling: &Sampling, rng: &mut BkRng) -> Result<Dataset> {
        if let Sampler::Gibbs(_) = sampling.resolve(true) {
            return Err(Error::param(
                "sampling",
                "FSLL models are sampled exactly (their state table is at hand)",
            ));
        }
        let (probs, _) = self.probs();
        sample_states(self.cardinalities(), &probs, n, rng)
    }

    fn save(&self, path: &Path, metadata: &Metadata) -> Result<()> {
        FsllModel::save(self, path, metadata)
    }

    fn load(path: &Path) -> Result<Self> {
        FsllModel::load(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_match_brute_force() {
        let cards = [2u32, 3, 4];
        let m = FsllModel::new(&cards, vec![(1, 0.3), (5, -0.7), (17, 1.1)]).unwrap();
        let (p, log_z) = m.probs();
        let l = m.layout();
        let pot: Vec<f64> = (0..l.n_states())
            .map(|x| 0.3 * l.phi(1, x) - 0.7 * l.phi(5, x) + 1.1 * l.phi(17, x))
            .collect();
        let z: f64 = pot.iter().map(|v| v.exp()).sum();
        assert!((log_z - z.ln()).abs() < 1e-12);
        for x in 0..l.n_states() {
            assert!((p[x] - pot[x].exp() / z).abs() < 1e-12);
            assert!((m.log_potential(x) - pot[x]).abs() < 1e-12);
        }
    }

    #[test]
    fn rejects_bad_terms() {
        assert!(FsllModel::new(&[2, 2], vec![(0, 1.0)]).is_err());
        assert!(FsllModel::new(&[2, 2], vec![(4, 1.0)]).is_err());
        assert!(FsllModel::new(&[2, 2], vec![(1, 1.0), (1, 2.0)]).is_err());
        assert!(FsllModel::new(&[2, 2], vec![(1, f64::NAN)]).is_err());
        assert_eq!(
            FsllModel::new(&[2, 2], vec![(1, 0.0)]).unwrap().n_basis(),
            0
        );
    }
}
