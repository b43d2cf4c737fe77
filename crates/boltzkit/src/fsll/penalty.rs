//! The MDL regularization term `r_y(N)` of Eq. (7), computed on the fly from the digits of `y`.
//!
//! `r_y(N) = (ln N / 2 + Σ_{i: y_i ≠ 0} ln(n (|X_i| − 1))) / N`. Storing it would cost one
//! more `|X|`-sized table; instead the index is split into a low and a high group of whole
//! variables and two small tables give each group's share, so `r_y` is two lookups.

use super::basis::Layout;

/// `r_y(N)` for every basis index `y` of a layout, by two table lookups.
#[derive(Debug, Clone)]
pub struct Penalty {
    base: f64,
    min_nonzero: f64,
    low: Vec<f64>,
    high: Vec<f64>,
    split: usize,
    shift: Option<u32>,
}

impl Penalty {
    /// The penalty for a layout and a training set of `n_samples` samples.
    pub fn new(layout: &Layout, n_samples: usize) -> Self {
        let n = n_samples.max(1) as f64;
        let weights: Vec<f64> = layout
            .cardinalities()
            .iter()
            .map(|&k| (layout.n_vars() as f64 * (k as f64 - 1.0)).ln() / n)
            .collect();
        // Choose the split (a prefix of variables) that minimizes the two tables' total size.
        let total = layout.n_states();
        let mut best = (usize::MAX, 0usize);
        let mut radix = 1usize;
        for v in 0..=layout.n_vars() {
            let size = radix + total / radix;
            if size < best.0 {
                best = (size, v);
            }
            if v < layout.n_vars() {
                radix *= layout.cardinalities()[v] as usize;
            }
        }
        let n_low = best.1;
        let cards = layout.cardinalities();
        let split: usize = cards[..n_low].iter().map(|&k| k as usize).product();
        let table = |vars: std::ops::Range<usize>| -> Vec<f64> {
            let size: usize = cards[vars.clone()].iter().map(|&k| k as usize).product();
            (0..size)
                .map(|mut idx| {
                    let mut acc = 0.0;
                    for i in vars.clone() {
                        let k = cards[i] as usize;
                        if idx % k != 0 {
                            acc += weights[i];
                        }
                        idx /= k;
                    }
                    acc
                })
                .collect()
        };
        let min_weight = weights.iter().cloned().fold(f64::INFINITY, f64::min);
        Penalty {
            base: n.ln() / (2.0 * n),
            min_nonzero: n.ln() / (2.0 * n) + min_weight,
            low: table(0..n_low),
            high: table(n_low..layout.n_vars()),
            split,
            shift: split.is_power_of_two().then(|| split.trailing_zeros()),
        }
    }

    /// `r_y(N)` (Eq. 7).
    #[inline(always)]
    pub fn at(&self, y: usize) -> f64 {
        match self.shift {
            Some(s) => self.base + self.low[y & (self.split - 1)] + self.high[y >> s],
            None => self.base + self.low[y % self.split] + self.high[y / self.split],
        }
    }

    /// A lower bound of `r_y` over every `y ≠ 0` (at least one digit is non-zero), used by the
    /// scan's cheap first test.
    pub fn min_nonzero(&self) -> f64 {
        self.min_nonzero
    }

    /// `r_y(N)` straight from Eq. (7), for tests.
    pub fn reference(layout: &Layout, n_samples: usize, y: usize) -> f64 {
        let n = n_samples.max(1) as f64;
        let nv = layout.n_vars() as f64;
        let sum: f64 = layout
            .support(y)
            .iter()
            .map(|&i| (nv * (layout.cardinalities()[i] as f64 - 1.0)).ln())
            .sum();
        (n.ln() / 2.0 + sum) / n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_match_eq7() {
        for cards in [vec![2u32; 9], vec![3, 2, 5, 4], vec![4, 4, 4], vec![7]] {
            let layout = Layout::new(&cards).unwrap();
            let pen = Penalty::new(&layout, 1000);
            for y in 0..layout.n_states() {
                let a = pen.at(y);
                let b = Penalty::reference(&layout, 1000, y);
                assert!((a - b).abs() < 1e-15, "{cards:?} y={y}: {a} vs {b}");
                if y > 0 {
                    assert!(pen.min_nonzero() <= a + 1e-18);
                }
            }
        }
    }
}
