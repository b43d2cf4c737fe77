//! Gibbs sampling for FVBMs of any size: systematic scan over the units, each drawn from its
//! conditional law `P(x_j = hi | x_{−j}) = σ((hi − lo)·h_j)` with `h_j = b_j + m_jᵀx`.

use super::convention::sigmoid;
use super::model::Fvbm;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::rng::derive_rng;
use ndarray::Array2;
use rand::Rng;
use rayon::prelude::*;

/// Settings of [`sample`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct GibbsParams {
    /// Sweeps discarded at the start of each chain. Default 1,000.
    pub burn_in: usize,
    /// Sweeps between two recorded samples (1 = every sweep). Default 1.
    pub thin: usize,
    /// Independent chains, run in parallel, each from a uniformly random state; the samples
    /// are split evenly between them (chain 0 first). Default 1.
    pub n_chains: usize,
}

impl Default for GibbsParams {
    fn default() -> Self {
        GibbsParams {
            burn_in: 1000,
            thin: 1,
            n_chains: 1,
        }
    }
}

impl GibbsParams {
    /// Checks every setting; the error names the field at fault.
    pub fn check(&self) -> Result<()> {
        if self.thin == 0 {
            return Err(Error::param("thin", "must be at least 1"));
        }
        if self.n_chains == 0 {
            return Err(Error::param("n_chains", "must be at least 1"));
        }
        Ok(())
    }
}

/// One Markov chain: the current state of every unit, as values of the model's convention.
#[derive(Debug, Clone)]
pub struct GibbsChain<'a> {
    model: &'a Fvbm,
    x: Vec<f64>,
}

impl<'a> GibbsChain<'a> {
    /// A chain started at the given 0/1 state.
    pub fn new(model: &'a Fvbm, bits: &[u8]) -> Result<Self> {
        if bits.len() != model.d() {
            return Err(Error::Shape {
                op: "GibbsChain::new".into(),
                expected: format!("{} units", model.d()),
                found: format!("{}", bits.len()),
            });
        }
        if let Some(j) = bits.iter().position(|&v| v > 1) {
            return Err(Error::InvalidData(format!(
                "GibbsChain::new: unit {j} has value {}; expected 0 or 1",
                bits[j]
            )));
        }
        let conv = model.convention();
        Ok(GibbsChain {
            model,
            x: bits.iter().map(|&v| conv.value(v)).collect(),
        })
    }

    /// A chain started at a uniformly random state.
    pub fn random<R: Rng + ?Sized>(model: &'a Fvbm, rng: &mut R) -> Self {
        let conv = model.convention();
        GibbsChain {
            model,
            x: (0..model.d())
                .map(|_| conv.value(u8::from(rng.random::<bool>())))
                .collect(),
        }
    }

    /// One systematic-scan sweep: units `0, 1, …, d−1` in turn.
    pub fn sweep<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let conv = self.model.convention();
        let (lo, hi, gap) = (conv.value(0), conv.value(1), conv.gap());
        for j in 0..self.x.len() {
            let h = self.model.local_field(j, &self.x);
            let p_hi = sigmoid(gap * h);
            self.x[j] = if rng.random::<f64>() < p_hi { hi } else { lo };
        }
    }

    /// The current state as values of the convention.
    pub fn values(&self) -> &[f64] {
        &self.x
    }

    /// Writes the current state as 0/1 bits into `out` (one entry per unit).
    pub fn write_bits(&self, out: &mut [u8]) {
        let hi = self.model.convention().value(1);
        for (o, &v) in out.iter_mut().zip(&self.x) {
            *o = u8::from(v == hi);
        }
    }
}

/// `n` samples (0/1 rows) by Gibbs sampling: `params.n_chains` chains, each with generator
/// `derive_rng(seed, chain)` for one `seed` drawn from `rng`, so the result does not depend
/// on the number of threads.
///
/// ```
/// use boltzkit::fvbm::{gibbs, Convention, Fvbm};
/// use boltzkit::rng::rng_from_seed;
/// let m = Fvbm::random(40, 0.1, Convention::Spin, &mut rng_from_seed(0))?;
/// let params = gibbs::GibbsParams { burn_in: 100, ..Default::default() };
/// let data = gibbs::sample(&m, 50, &params, &mut rng_from_seed(1))?;
/// assert_eq!((data.n_samples(), data.n_vars()), (50, 40));
/// # Ok::<(), boltzkit::Error>(())
/// ```
pub fn sample<R: Rng + ?Sized>(
    model: &Fvbm,
    n: usize,
    params: &GibbsParams,
    rng: &mut R,
) -> Result<Dataset> {
    params.check()?;
    let d = model.d();
    let seed: u64 = rng.random();
    let chains = params.n_chains;
    let share = |c: usize| n / chains + usize::from(c < n % chains);
    let parts: Vec<Vec<u8>> = (0..chains)
        .into_par_iter()
        .map(|c| {
            let mut r = derive_rng(seed, c as u64);
            let mut chain = GibbsChain::random(model, &mut r);
            for _ in 0..params.burn_in {
                chain.sweep(&mut r);
            }
            let mut rows = vec![0u8; share(c) * d];
            for row in rows.chunks_exact_mut(d) {
                for _ in 0..params.thin {
                    chain.sweep(&mut r);
                }
                chain.write_bits(row);
            }
            rows
        })
        .collect();
    let flat: Vec<u8> = parts.concat();
    let values = Array2::from_shape_vec((n, d), flat).map_err(|e| Error::Shape {
        op: "gibbs::sample".into(),
        expected: format!("{n}×{d} values"),
        found: e.to_string(),
    })?;
    Dataset::binary(values)
}

#[cfg(test)]
mod tests {
    use super::super::exact;
    use super::super::testutil::{chi_square, state_counts};
    use super::super::Convention;
    use super::*;
    use crate::rng::rng_from_seed;

    /// Gibbs samples follow the exact distribution (chi-square over all 32 states).
    #[test]
    fn stationary_law_is_the_model() {
        for conv in [Convention::Spin, Convention::Binary] {
            let model = Fvbm::random(5, 0.5, conv, &mut rng_from_seed(21)).unwrap();
            let probs: Vec<f64> = exact::log_probabilities(&model)
                .unwrap()
                .iter()
                .map(|l| l.exp())
                .collect();
            let params = GibbsParams {
                burn_in: 200,
                thin: 3,
                n_chains: 4,
            };
            let data = sample(&model, 40_000, &params, &mut rng_from_seed(2)).unwrap();
            let counts = state_counts(&data, 32);
            let (stat, df) = chi_square(&counts, &probs);
            // Thinned samples are nearly independent; allow a generous margin.
            let limit = 2.0 * (df as f64 + 5.0 * (2.0 * df as f64).sqrt());
            assert!(stat < limit, "{conv}: chi2 {stat} df {df}");
        }
    }

    #[test]
    fn deterministic_whatever_the_thread_count() {
        let model = Fvbm::random(8, 0.5, Convention::Spin, &mut rng_from_seed(1)).unwrap();
        let params = GibbsParams {
            burn_in: 10,
            thin: 1,
            n_chains: 3,
        };
        let run = |threads| {
            crate::testutil::on_threads(threads, || {
                sample(&model, 101, &params, &mut rng_from_seed(5)).unwrap()
            })
        };
        let a = run(1);
        assert_eq!(a, run(2));
        assert_eq!(a.n_samples(), 101);
        assert_ne!(
            a,
            sample(&model, 101, &params, &mut rng_from_seed(6)).unwrap()
        );
    }

    #[test]
    fn chain_api_and_validation() {
        let model = Fvbm::from_theta(2, &[30.0, -30.0, 0.0], Convention::Binary).unwrap();
        let mut chain = GibbsChain::new(&model, &[0, 1]).unwrap();
        chain.sweep(&mut rng_from_seed(0));
        // Huge fields: the sweep sets unit 0 to 1 and unit 1 to 0 (almost surely).
        let mut bits = [9u8; 2];
        chain.write_bits(&mut bits);
        assert_eq!(bits, [1, 0]);
        assert_eq!(chain.values(), &[1.0, 0.0]);
        assert!(GibbsChain::new(&model, &[0]).is_err());
        assert!(GibbsChain::new(&model, &[0, 2]).is_err());
        let bad = GibbsParams {
            thin: 0,
            ..Default::default()
        };
        assert!(bad.check().unwrap_err().to_string().contains("thin"));
    }
}
