//! The small RBM benchmarks of Sec. 4.1 of the S-DCP paper: bars & stripes (MacKay 2003) and
//! shifting bar (Melchior et al. 2016), as datasets of their patterns and as exact
//! distributions.

use super::distribution::Distribution;
use super::state::state_index;
use super::state::MAX_EXACT_VARS;
use crate::data::Dataset;
use crate::error::{Error, Result};
use ndarray::Array2;

/// Bars & stripes on a `D × D` grid (pixel index `r·D + c`).
///
/// The generative process of Sec. 4.1 of the S-DCP paper: set each row of the grid to all-zero
/// or all-one with probability ½ each (a "stripes" pattern), then rotate by 90° with
/// probability ½ (a "bars" pattern: whole columns on). Of the `2 · 2^D` outcomes the all-off and
/// all-on grids arise both ways, so there are `2^(D+1) − 2` **distinct** patterns: 14 for
/// `D = 3`, the paper's set.
///
/// Two forms are offered, chosen explicitly:
/// - distinct ([`BarsAndStripes::new`], `duplicated = false`): each of the `2^(D+1) − 2`
///   patterns once; the distribution is uniform over them (the convention of the paper's 14
///   patterns and of its ATLL bound −ln 14 ≈ −2.64);
/// - duplicated (`duplicated = true`): all `2^(D+1)` outcomes of the process, all-off and
///   all-on twice each; the distribution is the process's own (those two have probability
///   `2 / 2^(D+1)`, the others `1 / 2^(D+1)`).
///
/// Pattern order: stripes first (row subset `s = 0 .. 2^D`, row `r` on when bit `r` of `s` is
/// set), then bars (column subset likewise), skipping in the distinct form the bars patterns
/// equal to a stripes one (the empty and the full subsets).
///
/// ```
/// use boltzkit::data::synth::BarsAndStripes;
/// let bs = BarsAndStripes::new(3, false)?;
/// let data = bs.dataset()?;
/// assert_eq!((data.n_samples(), data.n_vars()), (14, 9));
/// let p = bs.distribution()?;
/// assert!((p.probs().iter().filter(|&&x| x > 0.0).count()) == 14);
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarsAndStripes {
    d: usize,
    duplicated: bool,
}

/// Largest `D` for bars & stripes (`D · D ≤ 64` pixels, `2^(D+1)` patterns).
pub const MAX_BARS_AND_STRIPES_D: usize = 8;

impl BarsAndStripes {
    /// Bars & stripes of size `d × d`, `1 ≤ d ≤ 8` ([`MAX_BARS_AND_STRIPES_D`]); `duplicated`
    /// chooses the form (see the type's documentation).
    pub fn new(d: usize, duplicated: bool) -> Result<Self> {
        if d == 0 || d > MAX_BARS_AND_STRIPES_D {
            return Err(Error::param(
                "d",
                format!("bars & stripes needs 1 ≤ D ≤ {MAX_BARS_AND_STRIPES_D}, got {d}"),
            ));
        }
        Ok(BarsAndStripes { d, duplicated })
    }

    /// The side `D`.
    pub fn side(&self) -> usize {
        self.d
    }

    /// Number of pixels `D²`.
    pub fn n_vars(&self) -> usize {
        self.d * self.d
    }

    /// Number of patterns in the dataset: `2^(D+1) − 2` distinct, or `2^(D+1)` duplicated.
    pub fn n_patterns(&self) -> usize {
        let all = 2usize << self.d;
        if self.duplicated {
            all
        } else {
            all - 2
        }
    }

    /// The patterns, one row each (see the type's documentation for the order).
    pub fn patterns(&self) -> Vec<Vec<u8>> {
        let d = self.d;
        let mut out = Vec::with_capacity(self.n_patterns());
        for s in 0..1usize << d {
            out.push((0..d * d).map(|i| ((s >> (i / d)) & 1) as u8).collect());
        }
        for s in 0..1usize << d {
            if !self.duplicated && (s == 0 || s == (1 << d) - 1) {
                continue;
            }
            out.push((0..d * d).map(|i| ((s >> (i % d)) & 1) as u8).collect());
        }
        out
    }

    /// The patterns as a binary dataset (one sample per pattern).
    pub fn dataset(&self) -> Result<Dataset> {
        rows_to_dataset(self.patterns(), self.n_vars())
    }

    /// The exact distribution: the empirical distribution of [`BarsAndStripes::dataset`]
    /// (uniform over the distinct patterns, or the generative process when duplicated);
    /// `D ≤ 5` (at most [`MAX_EXACT_VARS`] pixels).
    pub fn distribution(&self) -> Result<Distribution> {
        empirical(&self.patterns(), self.n_vars(), "bars & stripes")
    }
}

/// Shifting bar (Melchior et al. 2016; Sec. 4.1 of the S-DCP paper): patterns of `N` pixels
/// in which `B` consecutive pixels, with cyclic boundary conditions, are on and the others
/// off. Pattern `k` (`k = 0 .. N`) has pixels `k, k+1, …, k+B−1 (mod N)` on; the `N` patterns
/// are distinct for `1 ≤ B < N`. The paper uses `N = 9`, `B = 1` (9 patterns, ATLL bound
/// `−ln 9 ≈ −2.197`).
///
/// ```
/// use boltzkit::data::synth::ShiftingBar;
/// let data = ShiftingBar::new(9, 1)?.dataset()?;
/// assert_eq!((data.n_samples(), data.n_vars()), (9, 9));
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShiftingBar {
    n: usize,
    b: usize,
}

impl ShiftingBar {
    /// Shifting bar with `n` pixels and a bar of `b` pixels, `1 ≤ b < n`, `n ≤ 4096`.
    pub fn new(n: usize, b: usize) -> Result<Self> {
        if !(2..=4096).contains(&n) {
            return Err(Error::param(
                "n",
                format!("shifting bar needs 2 ≤ N ≤ 4096 pixels, got {n}"),
            ));
        }
        if b == 0 || b >= n {
            return Err(Error::param(
                "b",
                format!("the bar length must satisfy 1 ≤ B < N = {n}, got {b}"),
            ));
        }
        Ok(ShiftingBar { n, b })
    }

    /// The paper's set: `N = 9`, `B = 1`.
    pub fn paper() -> Self {
        ShiftingBar { n: 9, b: 1 }
    }

    /// Number of pixels `N` (also the number of patterns).
    pub fn n_vars(&self) -> usize {
        self.n
    }

    /// The bar length `B`.
    pub fn bar(&self) -> usize {
        self.b
    }

    /// The `N` patterns, pattern `k` with the bar starting at pixel `k`.
    pub fn patterns(&self) -> Vec<Vec<u8>> {
        (0..self.n)
            .map(|k| {
                let mut p = vec![0u8; self.n];
                (0..self.b).for_each(|j| p[(k + j) % self.n] = 1);
                p
            })
            .collect()
    }

    /// The patterns as a binary dataset (one sample per pattern).
    pub fn dataset(&self) -> Result<Dataset> {
        rows_to_dataset(self.patterns(), self.n)
    }

    /// The exact distribution, uniform over the `N` patterns; `N ≤` [`MAX_EXACT_VARS`].
    pub fn distribution(&self) -> Result<Distribution> {
        empirical(&self.patterns(), self.n, "shifting bar")
    }
}

fn rows_to_dataset(rows: Vec<Vec<u8>>, width: usize) -> Result<Dataset> {
    let n = rows.len();
    let flat: Vec<u8> = rows.into_iter().flatten().collect();
    let values = Array2::from_shape_vec((n, width), flat).map_err(|e| Error::Shape {
        op: "synth patterns".into(),
        expected: format!("{n} rows of {width} pixels"),
        found: e.to_string(),
    })?;
    Dataset::binary(values)
}

/// The empirical distribution of `rows` over all `2^width` binary states.
fn empirical(rows: &[Vec<u8>], width: usize, what: &str) -> Result<Distribution> {
    if width > MAX_EXACT_VARS {
        return Err(Error::TooLarge {
            what: format!("the exact distribution of {what}"),
            needed: format!("2^{width} states"),
            limit: format!("2^{MAX_EXACT_VARS}"),
        });
    }
    let cards = vec![2u32; width];
    let mut probs = vec![0.0f64; 1 << width];
    let w = 1.0 / rows.len() as f64;
    for r in rows {
        probs[state_index(&cards, r)] += w;
    }
    Distribution::new(cards, probs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Brute-force twin: every `D × D` grid whose rows are each constant, or whose columns
    /// are each constant.
    fn brute_bars_and_stripes(d: usize) -> BTreeSet<Vec<u8>> {
        (0..1u64 << (d * d))
            .map(|s| {
                (0..d * d)
                    .map(|i| ((s >> i) & 1) as u8)
                    .collect::<Vec<u8>>()
            })
            .filter(|g| {
                let rows_const = (0..d).all(|r| (0..d).all(|c| g[r * d + c] == g[r * d]));
                let cols_const = (0..d).all(|c| (0..d).all(|r| g[r * d + c] == g[c]));
                rows_const || cols_const
            })
            .collect()
    }

    #[test]
    fn bars_and_stripes_counts_and_validity() {
        for d in 1..=4 {
            let want = brute_bars_and_stripes(d);
            let distinct = BarsAndStripes::new(d, false).unwrap();
            let pats = distinct.patterns();
            let set: BTreeSet<Vec<u8>> = pats.iter().cloned().collect();
            assert_eq!(pats.len(), (2 << d) - 2, "D = {d}");
            assert_eq!(
                set.len(),
                pats.len(),
                "distinct form has no repeats, D = {d}"
            );
            assert_eq!(set, want, "D = {d}");

            let dup = BarsAndStripes::new(d, true).unwrap();
            let pd = dup.patterns();
            assert_eq!(pd.len(), 2 << d);
            let set_d: BTreeSet<Vec<u8>> = pd.iter().cloned().collect();
            assert_eq!(set_d, want);
            for edge in [vec![0u8; d * d], vec![1u8; d * d]] {
                assert_eq!(pd.iter().filter(|p| **p == edge).count(), 2);
            }
        }
        let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        assert_eq!((data.n_samples(), data.n_vars()), (14, 9));
        assert!(data.is_binary());
        assert!(BarsAndStripes::new(0, false).is_err());
        assert!(BarsAndStripes::new(9, false).is_err());
    }

    #[test]
    fn bars_and_stripes_distributions() {
        let p = BarsAndStripes::new(3, false)
            .unwrap()
            .distribution()
            .unwrap();
        let cards = vec![2u32; 9];
        let support: Vec<f64> = p.probs().iter().copied().filter(|&x| x > 0.0).collect();
        assert_eq!(support.len(), 14);
        assert!(support.iter().all(|&x| (x - 1.0 / 14.0).abs() < 1e-15));
        let q = BarsAndStripes::new(3, true)
            .unwrap()
            .distribution()
            .unwrap();
        assert!((q.probs()[0] - 2.0 / 16.0).abs() < 1e-15);
        assert!((q.probs()[511] - 2.0 / 16.0).abs() < 1e-15);
        let row0 = [1u8, 1, 1, 0, 0, 0, 0, 0, 0];
        assert!((q.probs()[state_index(&cards, &row0)] - 1.0 / 16.0).abs() < 1e-15);
        assert!(BarsAndStripes::new(6, false)
            .unwrap()
            .distribution()
            .is_err());
    }

    #[test]
    fn shifting_bar_counts_and_validity() {
        for n in 2..=10 {
            for b in 1..n {
                let sb = ShiftingBar::new(n, b).unwrap();
                let pats = sb.patterns();
                let set: BTreeSet<Vec<u8>> = pats.iter().cloned().collect();
                assert_eq!(set.len(), n, "N = {n}, B = {b}");
                for p in &pats {
                    assert_eq!(p.iter().filter(|&&x| x == 1).count(), b);
                    // one cyclic run of ones: exactly one 0 → 1 transition around the ring
                    let rises = (0..n).filter(|&i| p[i] == 0 && p[(i + 1) % n] == 1).count();
                    assert_eq!(rises, 1, "{p:?}");
                }
            }
        }
        let sb = ShiftingBar::paper();
        assert_eq!(sb.patterns()[8], vec![0, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(
            ShiftingBar::new(5, 2).unwrap().patterns()[4],
            vec![1, 0, 0, 0, 1]
        );
        let p = sb.distribution().unwrap();
        assert_eq!(p.probs().iter().filter(|&&x| x > 0.0).count(), 9);
        assert!(p.probs()[1].abs() > 0.0 && (p.probs()[1] - 1.0 / 9.0).abs() < 1e-15);
        assert!(ShiftingBar::new(9, 0).is_err());
        assert!(ShiftingBar::new(9, 9).is_err());
        assert!(ShiftingBar::new(30, 1).unwrap().distribution().is_err());
    }
}
