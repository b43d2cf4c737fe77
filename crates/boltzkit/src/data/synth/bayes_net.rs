//! [`BayesNet`]: random binary Bayesian networks (FSLL paper Sec. 3.4), their exact
//! distribution and ancestral sampling.

use super::distribution::{Distribution, CHUNK};
use super::state::MAX_EXACT_VARS;
use crate::data::Dataset;
use crate::error::{Error, Result};
use ndarray::Array2;
use rand::Rng;
use rayon::prelude::*;

/// Most parents a variable may have (its table has `2^parents` entries).
pub const MAX_PARENTS: usize = 24;

/// A Bayesian network over binary variables in topological order.
///
/// Variable `i`'s parents all have indices below `i`. `cpt[i][c]` is `P(X_i = 1 | parents = c)`
/// where `c` reads the parents' values as a binary number, `parents[i][0]` the least
/// significant bit; `cpt[i]` has `2^{parents[i].len()}` entries.
///
/// ```
/// use boltzkit::data::synth::BayesNet;
/// use boltzkit::rng::rng_from_seed;
/// let net = BayesNet::random(20, 2, &mut rng_from_seed(1))?; // BN20-37 of the FSLL paper
/// assert_eq!(net.n_edges(), 37);
/// let data = net.sample(100, &mut rng_from_seed(2))?;
/// assert_eq!(data.n_vars(), 20);
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BayesNet {
    /// `parents[i]`: the distinct parents of variable `i`, each below `i`.
    pub parents: Vec<Vec<usize>>,
    /// `cpt[i][c]`: `P(X_i = 1 | parent configuration c)`, first parent least significant.
    pub cpt: Vec<Vec<f64>>,
}

/// The configuration index of `parents` in state `x` (bit `b` = value of `parents[b]`).
#[inline]
fn config(parents: &[usize], x: &[u8]) -> usize {
    parents
        .iter()
        .enumerate()
        .fold(0, |acc, (b, &p)| acc | (usize::from(x[p] & 1) << b))
}

impl BayesNet {
    /// A random network as in the FSLL paper (Sec. 3.4): `X_0` has no parent, `X_i` has
    /// `min(i, k)` distinct parents drawn uniformly among `X_0..X_{i-1}` (stored sorted), and
    /// every table entry is drawn from Uniform(0, 1). `(n, k) = (20, 2)` gives the paper's
    /// BN20-37 (37 edges); `(20, 3)` gives 54 edges.
    pub fn random<R: Rng + ?Sized>(n: usize, k: usize, rng: &mut R) -> Result<Self> {
        if n == 0 {
            return Err(Error::param("n", "a network needs at least one variable"));
        }
        if k.min(n - 1) > MAX_PARENTS {
            return Err(Error::param(
                "k",
                format!("at most {MAX_PARENTS} parents per variable, got {k}"),
            ));
        }
        let mut parents = Vec::with_capacity(n);
        let mut cpt = Vec::with_capacity(n);
        for i in 0..n {
            let m = i.min(k);
            let mut pa = rand::seq::index::sample(rng, i, m).into_vec();
            pa.sort_unstable();
            cpt.push((0..1usize << m).map(|_| rng.random::<f64>()).collect());
            parents.push(pa);
        }
        Ok(BayesNet { parents, cpt })
    }

    /// Number of variables.
    pub fn n_vars(&self) -> usize {
        self.parents.len()
    }

    /// Number of edges (parent links).
    pub fn n_edges(&self) -> usize {
        self.parents.iter().map(Vec::len).sum()
    }

    /// Checks the structure: at least one variable, one table per variable, distinct parents
    /// below each variable (at most [`MAX_PARENTS`]), `2^parents` table entries in `[0, 1]`.
    pub fn validate(&self) -> Result<()> {
        let n = self.parents.len();
        if n == 0 {
            return Err(Error::param(
                "parents",
                "a network needs at least one variable",
            ));
        }
        if self.cpt.len() != n {
            return Err(Error::param(
                "cpt",
                format!("{} tables for {n} variables", self.cpt.len()),
            ));
        }
        for (i, (pa, t)) in self.parents.iter().zip(&self.cpt).enumerate() {
            if pa.len() > MAX_PARENTS {
                return Err(Error::param(
                    "parents",
                    format!(
                        "variable {i} has {} parents; at most {MAX_PARENTS}",
                        pa.len()
                    ),
                ));
            }
            for (a, &p) in pa.iter().enumerate() {
                if p >= i {
                    return Err(Error::param(
                        "parents",
                        format!(
                            "variable {i} has parent {p}; parents must come before their child \
                             (topological order)"
                        ),
                    ));
                }
                if pa[..a].contains(&p) {
                    return Err(Error::param(
                        "parents",
                        format!("variable {i} lists parent {p} twice"),
                    ));
                }
            }
            if t.len() != 1 << pa.len() {
                return Err(Error::param(
                    "cpt",
                    format!(
                        "variable {i} has {} parents, so its table needs {} entries, found {}",
                        pa.len(),
                        1usize << pa.len(),
                        t.len()
                    ),
                ));
            }
            if let Some(c) = t.iter().position(|q| !(0.0..=1.0).contains(q)) {
                return Err(Error::param(
                    "cpt",
                    format!(
                        "variable {i}, configuration {c}: {} is not a probability",
                        t[c]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `ln p(x)` of one binary state (any number of variables).
    pub fn log_prob(&self, x: &[u8]) -> Result<f64> {
        self.validate()?;
        if x.len() != self.n_vars() || x.iter().any(|&v| v > 1) {
            return Err(Error::InvalidData(format!(
                "BayesNet::log_prob: expected {} binary values, found {x:?}",
                self.n_vars()
            )));
        }
        Ok(self
            .parents
            .iter()
            .zip(&self.cpt)
            .zip(x)
            .map(|((pa, t), &v)| {
                let q = t[config(pa, x)];
                if v == 1 {
                    q.ln()
                } else {
                    (1.0 - q).ln()
                }
            })
            .sum())
    }

    /// The exact distribution over all `2^n` states (at most 28 variables).
    ///
    /// Built by doubling: with the table over `X_0..X_{i-1}`, the states with `X_i = 1` occupy
    /// the upper half of the table over `X_0..X_i`, so each step multiplies in one conditional
    /// (`2^{n+1}` products in all, in parallel, deterministic).
    pub fn distribution(&self) -> Result<Distribution> {
        self.validate()?;
        let n = self.n_vars();
        if n > MAX_EXACT_VARS {
            return Err(Error::TooLarge {
                what: "the exact distribution of a Bayesian network".into(),
                needed: format!("{n} variables"),
                limit: format!("{MAX_EXACT_VARS} variables"),
            });
        }
        let mut t = vec![0.0f64; 1 << n];
        t[0] = 1.0;
        for (i, (pa, q)) in self.parents.iter().zip(&self.cpt).enumerate() {
            let half = 1usize << i;
            let (lo, hi) = t[..2 * half].split_at_mut(half);
            lo.par_chunks_mut(CHUNK)
                .zip(hi.par_chunks_mut(CHUNK))
                .enumerate()
                .for_each(|(ci, (l, h))| {
                    for (k, (a, b)) in l.iter_mut().zip(h.iter_mut()).enumerate() {
                        let j = ci * CHUNK + k;
                        let c = pa
                            .iter()
                            .enumerate()
                            .fold(0, |acc, (bit, &p)| acc | (((j >> p) & 1) << bit));
                        let q1 = q[c];
                        *b = *a * q1;
                        *a *= 1.0 - q1;
                    }
                });
        }
        Distribution::from_weights(vec![2; n], t)
    }

    /// `n_samples` i.i.d. samples by ancestral sampling (any number of variables).
    pub fn sample<R: Rng + ?Sized>(&self, n_samples: usize, rng: &mut R) -> Result<Dataset> {
        self.validate()?;
        let n = self.n_vars();
        let mut values = Array2::<u8>::zeros((n_samples, n));
        if let Some(flat) = values.as_slice_mut() {
            for row in flat.chunks_exact_mut(n) {
                for (i, (pa, q)) in self.parents.iter().zip(&self.cpt).enumerate() {
                    let p1 = q[config(pa, row)];
                    row[i] = u8::from(rng.random::<f64>() < p1);
                }
            }
        }
        Dataset::binary(values)
    }
}

#[cfg(test)]
mod tests {
    use super::super::distribution::tests::{chi_square, state_counts};
    use super::super::state::index_to_state;
    use super::*;
    use crate::data::synth::distribution::det_sum;
    use crate::rng::rng_from_seed;

    #[test]
    fn random_structure_matches_the_paper() {
        let net = BayesNet::random(20, 2, &mut rng_from_seed(1)).unwrap();
        assert_eq!(net.n_edges(), 37);
        assert!(net.parents[0].is_empty());
        assert_eq!(net.parents[1], vec![0]);
        for (i, (pa, t)) in net.parents.iter().zip(&net.cpt).enumerate() {
            assert_eq!(pa.len(), i.min(2));
            assert!(pa.windows(2).all(|w| w[0] < w[1]), "sorted, distinct");
            assert!(pa.iter().all(|&p| p < i));
            assert_eq!(t.len(), 1 << pa.len());
            assert!(t.iter().all(|q| (0.0..1.0).contains(q)));
        }
        net.validate().unwrap();
        assert_eq!(
            BayesNet::random(20, 3, &mut rng_from_seed(1))
                .unwrap()
                .n_edges(),
            54
        );
        assert_eq!(
            BayesNet::random(20, 2, &mut rng_from_seed(1)).unwrap(),
            net,
            "same seed, same network"
        );
        assert_ne!(BayesNet::random(20, 2, &mut rng_from_seed(2)).unwrap(), net);
        // Parents are spread over all earlier variables, not just the nearest.
        let big = BayesNet::random(200, 2, &mut rng_from_seed(3)).unwrap();
        let far = big
            .parents
            .iter()
            .enumerate()
            .filter(|(i, pa)| pa.iter().any(|&p| p + 20 < *i));
        assert!(far.count() > 100);
    }

    #[test]
    fn distribution_matches_product_of_conditionals() {
        let net = BayesNet::random(7, 3, &mut rng_from_seed(5)).unwrap();
        let p = net.distribution().unwrap();
        let mut x = [0u8; 7];
        let mut total = 0.0;
        for (s, &ps) in p.probs().iter().enumerate() {
            index_to_state(&[2; 7], s, &mut x);
            let want = net.log_prob(&x).unwrap().exp();
            assert!(
                (ps - want).abs() < 1e-15 + 1e-12 * want,
                "state {s}: {ps} vs {want}"
            );
            total += ps;
        }
        assert!((total - 1.0).abs() < 1e-12);
    }

    #[test]
    fn ancestral_sampling_agrees_with_exact_distribution() {
        let net = BayesNet::random(5, 2, &mut rng_from_seed(8)).unwrap();
        let p = net.distribution().unwrap();
        let data = net.sample(100_000, &mut rng_from_seed(9)).unwrap();
        assert!(data.is_binary());
        let counts = state_counts(&data, 32);
        let (stat, df) = chi_square(&counts, p.probs());
        // With df ≤ 31, P(chi2 > 70) < 1e-4.
        assert!(stat < 70.0, "chi-square {stat} (df {df})");
        assert_eq!(data, net.sample(100_000, &mut rng_from_seed(9)).unwrap());
    }

    #[test]
    fn bn20_exact_distribution_is_consistent() {
        let net = BayesNet::random(20, 3, &mut rng_from_seed(4)).unwrap();
        let p = net.distribution().unwrap();
        assert_eq!(p.probs().len(), 1 << 20);
        let sum = det_sum(p.probs());
        assert!((sum - 1.0).abs() < 1e-12);
        // P(X_0 = 1) is its table entry; P(X_1 = 1) marginalizes over X_0.
        let m0: f64 = p.probs().iter().skip(1).step_by(2).sum();
        assert!((m0 - net.cpt[0][0]).abs() < 1e-12);
        let m1: f64 = p
            .probs()
            .iter()
            .enumerate()
            .filter(|(s, _)| s & 2 != 0)
            .map(|(_, v)| v)
            .sum();
        let want = (1.0 - net.cpt[0][0]) * net.cpt[1][0] + net.cpt[0][0] * net.cpt[1][1];
        assert!((m1 - want).abs() < 1e-12);
        // Exact sampling from the table agrees with ancestral sampling on a marginal.
        let a = p.sample(20_000, &mut rng_from_seed(1)).unwrap();
        let b = net.sample(20_000, &mut rng_from_seed(2)).unwrap();
        let mean = |d: &Dataset| {
            d.values()
                .column(19)
                .iter()
                .map(|&v| f64::from(v))
                .sum::<f64>()
                / 20_000.0
        };
        assert!((mean(&a) - mean(&b)).abs() < 0.03);
    }

    #[test]
    fn rejects_bad_networks() {
        let ok = BayesNet {
            parents: vec![vec![], vec![0]],
            cpt: vec![vec![0.5], vec![0.1, 0.9]],
        };
        ok.validate().unwrap();
        let mut b = ok.clone();
        b.parents[0] = vec![1];
        assert!(b
            .validate()
            .unwrap_err()
            .to_string()
            .contains("topological"));
        let mut b = ok.clone();
        b.cpt[1] = vec![0.5];
        assert!(b.validate().is_err());
        let mut b = ok.clone();
        b.cpt[1][1] = 1.5;
        assert!(b.sample(1, &mut rng_from_seed(0)).is_err());
        let mut b = ok.clone();
        b.cpt[1][0] = f64::NAN;
        assert!(b.distribution().is_err());
        assert!(ok.log_prob(&[0, 2]).is_err());
        assert!(BayesNet::random(0, 2, &mut rng_from_seed(0)).is_err());
        let big = BayesNet::random(29, 1, &mut rng_from_seed(0)).unwrap();
        assert!(matches!(big.distribution(), Err(Error::TooLarge { .. })));
        assert_eq!(big.sample(3, &mut rng_from_seed(0)).unwrap().n_vars(), 29);
    }
}
