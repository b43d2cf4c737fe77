//! [`Distribution`]: an explicit probability table over all joint states, and exact i.i.d.
//! sampling from any such table ([`sample_states`]).

use super::state::{index_to_state, n_states};
use crate::data::Dataset;
use crate::error::{Error, Result};
use ndarray::Array2;
use rand::seq::SliceRandom;
use rand::Rng;
use rayon::prelude::*;

/// Chunk length of deterministic parallel reductions (fixed, so results do not depend on the
/// number of threads).
pub(crate) const CHUNK: usize = 1 << 15;

/// Kahan-compensated sum.
fn kahan(xs: &[f64]) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for &x in xs {
        let y = x - c;
        let t = s + y;
        c = (t - s) - y;
        s = t;
    }
    s
}

/// A sum that is accurate and identical whatever the thread count: Kahan sums over fixed
/// chunks (in parallel), then a Kahan sum of the chunk sums in order.
pub(crate) fn det_sum(xs: &[f64]) -> f64 {
    if xs.len() <= CHUNK {
        return kahan(xs);
    }
    let partial: Vec<f64> = xs.par_chunks(CHUNK).map(kahan).collect();
    kahan(&partial)
}

/// Checks a weight table: one finite nonnegative entry per state; returns the index of the
/// first offending entry.
fn check_weights(probs: &[f64]) -> std::result::Result<(), usize> {
    let bad = probs
        .par_chunks(CHUNK)
        .enumerate()
        .filter_map(|(c, ch)| {
            ch.iter()
                .position(|p| !(p.is_finite() && *p >= 0.0))
                .map(|i| c * CHUNK + i)
        })
        .min();
    bad.map_or(Ok(()), Err)
}

fn check_table(cards: &[u32], probs: &[f64], op: &str) -> Result<()> {
    if cards.is_empty() {
        return Err(Error::InvalidData(format!(
            "{op}: a distribution needs at least one variable"
        )));
    }
    let n = n_states(cards)?;
    if probs.len() != n {
        return Err(Error::Shape {
            op: op.into(),
            expected: format!("{n} probabilities (one per state of cardinalities {cards:?})"),
            found: format!("{}", probs.len()),
        });
    }
    if let Err(i) = check_weights(probs) {
        return Err(Error::InvalidData(format!(
            "{op}: probability of state {i} is {}; must be finite and nonnegative",
            probs[i]
        )));
    }
    Ok(())
}

/// An explicit distribution over all joint states of discrete variables.
///
/// `probs[i]` is the probability of the state with index `i` (see
/// [`state_index`](super::state_index): a mixed-radix number, variable 0 least significant).
///
/// ```
/// use boltzkit::data::synth::Distribution;
/// let d = Distribution::new(vec![2, 2], vec![0.1, 0.2, 0.3, 0.4])?;
/// let data = d.sample(5, &mut boltzkit::rng::rng_from_seed(0))?;
/// assert_eq!((data.n_samples(), data.n_vars()), (5, 2));
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Distribution {
    cardinalities: Vec<u32>,
    probs: Vec<f64>,
}

impl Distribution {
    /// A distribution from its table: one finite, nonnegative entry per state, summing to 1
    /// within a relative 1e-9 (the table is then renormalized exactly).
    pub fn new(cardinalities: Vec<u32>, probs: Vec<f64>) -> Result<Self> {
        check_table(&cardinalities, &probs, "Distribution::new")?;
        let sum = det_sum(&probs);
        let close_to_one = (sum - 1.0).abs() <= 1e-9;
        if !close_to_one {
            return Err(Error::InvalidData(format!(
                "Distribution::new: probabilities sum to {sum}, expected 1 (within 1e-9)"
            )));
        }
        Ok(Self::normalized(cardinalities, probs, sum))
    }

    /// A distribution proportional to `exp(log_weights[i])` (normalized by log-sum-exp).
    /// Entries may be `-inf` (probability 0); NaN and `+inf` are errors, as is a table whose
    /// entries are all `-inf`.
    pub fn from_log_weights(cardinalities: Vec<u32>, log_weights: &[f64]) -> Result<Self> {
        let op = "Distribution::from_log_weights";
        if let Some(i) = log_weights
            .iter()
            .position(|w| w.is_nan() || *w == f64::INFINITY)
        {
            return Err(Error::InvalidData(format!(
                "{op}: log-weight of state {i} is {}",
                log_weights[i]
            )));
        }
        let max = log_weights
            .par_chunks(CHUNK)
            .map(|c| c.iter().copied().fold(f64::NEG_INFINITY, f64::max))
            .reduce(|| f64::NEG_INFINITY, f64::max);
        if max == f64::NEG_INFINITY {
            return Err(Error::InvalidData(format!(
                "{op}: every state has weight 0"
            )));
        }
        let w: Vec<f64> = log_weights.par_iter().map(|l| (l - max).exp()).collect();
        Self::from_weights(cardinalities, w)
    }

    /// A distribution proportional to nonnegative finite weights (not all zero).
    pub(crate) fn from_weights(cardinalities: Vec<u32>, weights: Vec<f64>) -> Result<Self> {
        check_table(&cardinalities, &weights, "Distribution::from_weights")?;
        let sum = det_sum(&weights);
        if !(sum > 0.0 && sum.is_finite()) {
            return Err(Error::InvalidData(format!(
                "Distribution::from_weights: weights sum to {sum}"
            )));
        }
        Ok(Self::normalized(cardinalities, weights, sum))
    }

    fn normalized(cardinalities: Vec<u32>, mut probs: Vec<f64>, sum: f64) -> Self {
        if sum != 1.0 {
            let inv = 1.0 / sum;
            probs.par_iter_mut().for_each(|p| *p *= inv);
        }
        Distribution {
            cardinalities,
            probs,
        }
    }

    /// Per-variable cardinalities.
    pub fn cardinalities(&self) -> &[u32] {
        &self.cardinalities
    }

    /// Number of variables.
    pub fn n_vars(&self) -> usize {
        self.cardinalities.len()
    }

    /// The probability table, indexed by state index.
    pub fn probs(&self) -> &[f64] {
        &self.probs
    }

    /// Natural logarithms of the probabilities (`-inf` for probability 0).
    pub fn log_probs(&self) -> Vec<f64> {
        self.probs.par_iter().map(|p| p.ln()).collect()
    }

    /// Shannon entropy in nats.
    pub fn entropy(&self) -> f64 {
        let terms: Vec<f64> = self
            .probs
            .par_iter()
            .map(|&p| if p > 0.0 { -p * p.ln() } else { 0.0 })
            .collect();
        det_sum(&terms)
    }

    /// `n` exact i.i.d. samples (see [`sample_states`]).
    pub fn sample<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Result<Dataset> {
        sample_sweep(&self.cardinalities, &self.probs, n, rng)
    }
}

/// `n` exact i.i.d. samples from the distribution proportional to `probs` over the states of
/// `cards` (`probs` needs not sum exactly to 1; states of weight 0 are never drawn).
///
/// Uses no table besides `probs`: it draws `n` uniforms, sorts them, sweeps the cumulative sum
/// once (Kahan-compensated, stopping at the last sample), then shuffles the rows (Fisher–Yates)
/// so that their order is i.i.d. Cost `O(n log n + |X|)`, memory `O(n)`.
pub fn sample_states<R: Rng + ?Sized>(
    cards: &[u32],
    probs: &[f64],
    n: usize,
    rng: &mut R,
) -> Result<Dataset> {
    check_table(cards, probs, "sample_states")?;
    sample_sweep(cards, probs, n, rng)
}

/// Bytes [`sample_states`] needs for `n` samples of `n_vars` variables: the sorted uniforms
/// and state indices (8 bytes each) and the dataset, saturating. The table itself is the
/// caller's (see [`table_memory`]).
pub fn sample_states_memory(n_vars: u64, n: u64) -> u64 {
    n.saturating_mul(n_vars.saturating_add(16))
}

/// Bytes of one f64 table over every state of variables with these cardinalities, saturating
/// (the state count itself may be absurd: 2^40 states is 8 TiB).
pub fn table_memory(cards: &[u32]) -> u64 {
    cards
        .iter()
        .fold(8u64, |acc, &k| acc.saturating_mul(u64::from(k)))
}

/// [`sample_states`] on a table already checked.
fn sample_sweep<R: Rng + ?Sized>(
    cards: &[u32],
    probs: &[f64],
    n: usize,
    rng: &mut R,
) -> Result<Dataset> {
    let d = cards.len();
    let Some(last_nonzero) = probs.iter().rposition(|&p| p > 0.0) else {
        return Err(Error::InvalidData(
            "sample_states: every state has probability 0".into(),
        ));
    };
    let total = kahan(&probs[..=last_nonzero]);
    let mut u: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * total).collect();
    u.sort_unstable_by(f64::total_cmp);

    let mut states = Vec::with_capacity(n);
    let (mut cum, mut comp) = (0.0f64, 0.0f64);
    let mut s = 0usize;
    for &ui in &u {
        // Advance to the state whose interval [cum, cum + p) holds ui; never past the last
        // state of positive probability (guards against round-off at the top end).
        while s < last_nonzero {
            let p = probs[s];
            if p > 0.0 {
                let y = p - comp;
                let t = cum + y;
                if t > ui {
                    break;
                }
                comp = (t - cum) - y;
                cum = t;
            }
            s += 1;
        }
        states.push(s);
    }
    states.shuffle(rng);

    let mut values = Array2::<u8>::zeros((n, d));
    if let Some(flat) = values.as_slice_mut() {
        for (row, &s) in flat.chunks_exact_mut(d.max(1)).zip(&states) {
            index_to_state(cards, s, row);
        }
    }
    Dataset::new(values, cards.to_vec())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::state::state_index;
    use super::*;
    use crate::rng::rng_from_seed;

    /// Pearson's chi-square of `counts` against `probs` (states with expected count < 5 are
    /// pooled); returns (statistic, degrees of freedom).
    pub(crate) fn chi_square(counts: &[usize], probs: &[f64]) -> (f64, usize) {
        let n: usize = counts.iter().sum();
        let (mut stat, mut cells) = (0.0, 0usize);
        let (mut pool_obs, mut pool_exp) = (0.0, 0.0);
        for (&c, &p) in counts.iter().zip(probs) {
            let e = p * n as f64;
            if e >= 5.0 {
                stat += (c as f64 - e).powi(2) / e;
                cells += 1;
            } else {
                pool_obs += c as f64;
                pool_exp += e;
            }
        }
        if pool_exp > 0.0 {
            stat += (pool_obs - pool_exp).powi(2) / pool_exp;
            cells += 1;
        }
        (stat, cells.saturating_sub(1))
    }

    /// Counts of each state index among the rows of `data`.
    pub(crate) fn state_counts(data: &Dataset, n_states: usize) -> Vec<usize> {
        let mut counts = vec![0usize; n_states];
        for row in data.values().outer_iter() {
            counts[state_index(data.cardinalities(), row.as_slice().unwrap())] += 1;
        }
        counts
    }

    fn mixed() -> Distribution {
        // Cardinalities (2, 3, 2): 12 states, one of them impossible.
        let w = [3.0, 1.0, 0.5, 2.0, 0.0, 1.5, 4.0, 0.25, 1.0, 2.0, 0.75, 1.0];
        let sum: f64 = w.iter().sum();
        Distribution::new(vec![2, 3, 2], w.iter().map(|x| x / sum).collect()).unwrap()
    }

    #[test]
    fn sample_frequencies_match_probs() {
        let d = mixed();
        let data = d.sample(200_000, &mut rng_from_seed(11)).unwrap();
        assert_eq!(data.cardinalities(), &[2, 3, 2]);
        let counts = state_counts(&data, 12);
        assert_eq!(counts[4], 0, "a state of probability 0 is never drawn");
        let (stat, df) = chi_square(&counts, d.probs());
        // df = 10; P(chi2 > 35) < 2e-4.
        assert_eq!(df, 10);
        assert!(stat < 35.0, "chi-square {stat}");
    }

    #[test]
    fn same_seed_same_samples_and_rows_are_shuffled() {
        let d = mixed();
        let a = d.sample(1000, &mut rng_from_seed(3)).unwrap();
        let b = d.sample(1000, &mut rng_from_seed(3)).unwrap();
        let c = d.sample(1000, &mut rng_from_seed(4)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let idx: Vec<usize> = a
            .values()
            .outer_iter()
            .map(|r| state_index(&[2, 3, 2], r.as_slice().unwrap()))
            .collect();
        assert!(
            idx.windows(2).any(|w| w[0] > w[1]),
            "rows are not in sorted order"
        );
        // First and second halves have the same state mix (no sorting residue).
        let half = |s: &[usize]| s.iter().filter(|&&i| i < 6).count() as f64 / s.len() as f64;
        assert!((half(&idx[..500]) - half(&idx[500..])).abs() < 0.1);
    }

    #[test]
    fn extreme_tables() {
        // All mass on the last state; on the first state; zero samples.
        let mut p = vec![0.0; 8];
        p[7] = 1.0;
        let s = sample_states(&[2, 2, 2], &p, 50, &mut rng_from_seed(0)).unwrap();
        assert!(s.values().iter().all(|&v| v == 1));
        let mut p = vec![0.0; 8];
        p[0] = 2.5; // unnormalized weights are fine
        let s = sample_states(&[2, 2, 2], &p, 50, &mut rng_from_seed(0)).unwrap();
        assert!(s.values().iter().all(|&v| v == 0));
        let s = sample_states(&[2, 2, 2], &p, 0, &mut rng_from_seed(0)).unwrap();
        assert_eq!(s.n_samples(), 0);
    }

    #[test]
    fn unnormalized_weights_sample_proportionally() {
        let w = [1.0, 3.0, 0.0, 4.0];
        let s = sample_states(&[4], &w, 80_000, &mut rng_from_seed(9)).unwrap();
        let counts = state_counts(&s, 4);
        let (stat, df) = chi_square(&counts, &[0.125, 0.375, 0.0, 0.5]);
        assert_eq!(df, 2);
        assert!(stat < 20.0, "{stat}");
        assert_eq!(counts[2], 0);
    }

    #[test]
    fn rejects_bad_tables() {
        assert!(matches!(
            Distribution::new(vec![2, 2], vec![0.5, 0.5]),
            Err(Error::Shape { .. })
        ));
        assert!(Distribution::new(vec![2], vec![0.5, 0.6]).is_err());
        assert!(Distribution::new(vec![2], vec![1.5, -0.5]).is_err());
        assert!(Distribution::new(vec![2], vec![f64::NAN, 1.0]).is_err());
        assert!(Distribution::new(vec![], vec![1.0]).is_err());
        assert!(sample_states(&[2], &[0.0, 0.0], 1, &mut rng_from_seed(0)).is_err());
        assert!(sample_states(&[2], &[1.0, f64::INFINITY], 1, &mut rng_from_seed(0)).is_err());
        // Within tolerance: accepted and renormalized.
        let d = Distribution::new(vec![2], vec![0.5, 0.5 + 5e-10]).unwrap();
        assert!((d.probs().iter().sum::<f64>() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn log_weights_entropy_and_log_probs() {
        let d = Distribution::from_log_weights(vec![4], &[0.0, 0.0, f64::NEG_INFINITY, 1000.0])
            .unwrap();
        assert_eq!(d.probs()[2], 0.0);
        assert!((d.probs()[3] - 1.0).abs() < 1e-12);
        let u = Distribution::from_log_weights(vec![2, 2], &[5.0; 4]).unwrap();
        assert!((u.entropy() - 4f64.ln()).abs() < 1e-12);
        assert!(u.log_probs().iter().all(|l| (l + 4f64.ln()).abs() < 1e-12));
        assert!(Distribution::from_log_weights(vec![2], &[f64::NAN, 0.0]).is_err());
        assert!(Distribution::from_log_weights(vec![2], &[f64::NEG_INFINITY; 2]).is_err());
    }

    #[test]
    fn det_sum_is_accurate_on_large_tables() {
        let n = (1 << 20) + 17;
        let xs = vec![0.1f64; n];
        assert!((det_sum(&xs) - 0.1 * n as f64).abs() < 1e-8);
    }
}
