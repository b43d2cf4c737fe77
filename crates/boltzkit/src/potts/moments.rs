//! The generative checks a DCA user reads: one- and two-site frequencies and connected
//! correlations of two sets of sequences (a model's samples against the weighted alignment),
//! compared entry by entry by Pearson's correlation.
//!
//! With weights `w_s` (normalized to sum 1): `f_i(a) = Σ_s w_s [x_si = a]`,
//! `f_ij(a, b) = Σ_s w_s [x_si = a][x_sj = b]` and `C_ij(a, b) = f_ij(a, b) − f_i(a) f_j(b)`,
//! over every site, pair `i < j` and letter (gap included). The pair tables are never stored:
//! each pair's two `q_i × q_j` tables are built, compared and dropped, in parallel over `i`,
//! the partial sums added in site order (the result does not depend on the thread count).

use crate::data::Dataset;
use crate::error::{Error, Result};
use rayon::prelude::*;
use serde::Serialize;

/// Sums for Pearson's correlation of paired values `(x, y)`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Pearson {
    n: f64,
    x: f64,
    y: f64,
    xx: f64,
    yy: f64,
    xy: f64,
}

impl Pearson {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.x += x;
        self.y += y;
        self.xx += x * x;
        self.yy += y * y;
        self.xy += x * y;
    }

    fn merge(mut self, o: &Pearson) -> Pearson {
        self.n += o.n;
        self.x += o.x;
        self.y += o.y;
        self.xx += o.xx;
        self.yy += o.yy;
        self.xy += o.xy;
        self
    }

    /// The correlation (NaN when either side is constant).
    fn r(&self) -> f64 {
        let cov = self.xy - self.x * self.y / self.n;
        let vx = self.xx - self.x * self.x / self.n;
        let vy = self.yy - self.y * self.y / self.n;
        cov / (vx * vy).sqrt()
    }
}

/// Pearson's correlations between the statistics of two sets of sequences.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MomentComparison {
    /// One-site frequencies `f_i(a)`.
    pub frequencies: f64,
    /// Two-site frequencies `f_ij(a, b)`, `i < j`.
    pub pair_frequencies: f64,
    /// Connected correlations `C_ij(a, b)`, `i < j`.
    pub connected_correlations: f64,
    /// The number of pairs of sites compared.
    pub pairs: usize,
}

/// Weights normalized to sum 1 (uniform when `None`), checked against `n` rows.
fn normalized(weights: Option<&[f64]>, n: usize, what: &str) -> Result<Vec<f64>> {
    let w = match weights {
        None => return Ok(vec![1.0 / n as f64; n]),
        Some(w) => w,
    };
    if w.len() != n {
        return Err(Error::Shape {
            op: format!("weights of {what}"),
            expected: format!("{n} weights"),
            found: format!("{}", w.len()),
        });
    }
    if w.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return Err(Error::InvalidData(format!(
            "the weights of {what} must be finite and ≥ 0"
        )));
    }
    let total: f64 = w.iter().sum();
    if total <= 0.0 {
        return Err(Error::InvalidData(format!(
            "the weights of {what} sum to 0"
        )));
    }
    Ok(w.iter().map(|v| v / total).collect())
}

/// One-site frequencies `f_i(a)`, site-major (`offsets[i] + a`).
fn site_frequencies(data: &Dataset, w: &[f64], offsets: &[usize]) -> Vec<f64> {
    let mut f = vec![0.0; *offsets.last().unwrap_or(&0)];
    for (row, &ws) in data.values().outer_iter().zip(w) {
        for (i, &a) in row.iter().enumerate() {
            f[offsets[i] + a as usize] += ws;
        }
    }
    f
}

/// Compares the one- and two-site statistics of `a` (weights `wa`, e.g. the alignment's) and
/// `b` (weights `wb`, e.g. a model's samples): Pearson's correlation of each kind of entry.
pub fn compare_moments(
    a: &Dataset,
    wa: Option<&[f64]>,
    b: &Dataset,
    wb: Option<&[f64]>,
) -> Result<MomentComparison> {
    if a.cardinalities() != b.cardinalities() {
        return Err(Error::Shape {
            op: "compare_moments".into(),
            expected: format!("the states of the first set, {:?}", a.cardinalities()),
            found: format!("{:?}", b.cardinalities()),
        });
    }
    a.require_nonempty()?;
    b.require_nonempty()?;
    let wa = normalized(wa, a.n_samples(), "the first set")?;
    let wb = normalized(wb, b.n_samples(), "the second set")?;
    let q: Vec<usize> = a.cardinalities().iter().map(|&k| k as usize).collect();
    let l = q.len();
    let mut offsets = vec![0usize; l + 1];
    for i in 0..l {
        offsets[i + 1] = offsets[i] + q[i];
    }
    let (fa, fb) = (
        site_frequencies(a, &wa, &offsets),
        site_frequencies(b, &wb, &offsets),
    );
    let mut one = Pearson::default();
    for (x, y) in fa.iter().zip(&fb) {
        one.add(*x, *y);
    }
    let per_site: Vec<(Pearson, Pearson)> = (0..l)
        .into_par_iter()
        .map(|i| {
            let (mut pf, mut pc) = (Pearson::default(), Pearson::default());
            let mut ta = Vec::new();
            let mut tb = Vec::new();
            for j in i + 1..l {
                let size = q[i] * q[j];
                ta.clear();
                ta.resize(size, 0.0);
                tb.clear();
                tb.resize(size, 0.0);
                for (table, data, w) in [(&mut ta, a, &wa), (&mut tb, b, &wb)] {
                    for (row, &ws) in data.values().outer_iter().zip(w.iter()) {
                        table[row[i] as usize * q[j] + row[j] as usize] += ws;
                    }
                }
                for x in 0..q[i] {
                    for y in 0..q[j] {
                        let k = x * q[j] + y;
                        pf.add(ta[k], tb[k]);
                        let ca = ta[k] - fa[offsets[i] + x] * fa[offsets[j] + y];
                        let cb = tb[k] - fb[offsets[i] + x] * fb[offsets[j] + y];
                        pc.add(ca, cb);
                    }
                }
            }
            (pf, pc)
        })
        .collect();
    let (pf, pc) = per_site.iter().fold(
        (Pearson::default(), Pearson::default()),
        |(f, c), (pf, pc)| (f.merge(pf), c.merge(pc)),
    );
    Ok(MomentComparison {
        frequencies: one.r(),
        pair_frequencies: pf.r(),
        connected_correlations: pc.r(),
        pairs: l * (l - 1) / 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use ndarray::Array2;
    use rand::Rng;

    fn random_set(n: usize, l: usize, q: u8, seed: u64) -> Dataset {
        let mut rng = rng_from_seed(seed);
        let v = Array2::from_shape_fn((n, l), |_| rng.random_range(0..q));
        Dataset::new(v, vec![u32::from(q); l]).unwrap()
    }

    /// The slow twin: every table stored, Pearson by its two-pass definition.
    fn brute(a: &Dataset, wa: &[f64], b: &Dataset, wb: &[f64]) -> (f64, f64, f64) {
        let l = a.n_vars();
        let q = a.cardinalities()[0] as usize;
        let freq = |d: &Dataset, w: &[f64], i: usize, x: usize| -> f64 {
            let t: f64 = w.iter().sum();
            d.values()
                .outer_iter()
                .zip(w)
                .filter(|(r, _)| r[i] as usize == x)
                .map(|(_, w)| w / t)
                .sum()
        };
        let pair = |d: &Dataset, w: &[f64], i: usize, j: usize, x: usize, y: usize| -> f64 {
            let t: f64 = w.iter().sum();
            d.values()
                .outer_iter()
                .zip(w)
                .filter(|(r, _)| r[i] as usize == x && r[j] as usize == y)
                .map(|(_, w)| w / t)
                .sum()
        };
        let r = |v: &[(f64, f64)]| {
            let n = v.len() as f64;
            let mx = v.iter().map(|p| p.0).sum::<f64>() / n;
            let my = v.iter().map(|p| p.1).sum::<f64>() / n;
            let c: f64 = v.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
            let sx: f64 = v.iter().map(|p| (p.0 - mx).powi(2)).sum();
            let sy: f64 = v.iter().map(|p| (p.1 - my).powi(2)).sum();
            c / (sx * sy).sqrt()
        };
        let mut one = Vec::new();
        let (mut two, mut conn) = (Vec::new(), Vec::new());
        for i in 0..l {
            for x in 0..q {
                one.push((freq(a, wa, i, x), freq(b, wb, i, x)));
            }
            for j in i + 1..l {
                for x in 0..q {
                    for y in 0..q {
                        let (pa, pb) = (pair(a, wa, i, j, x, y), pair(b, wb, i, j, x, y));
                        two.push((pa, pb));
                        conn.push((
                            pa - freq(a, wa, i, x) * freq(a, wa, j, y),
                            pb - freq(b, wb, i, x) * freq(b, wb, j, y),
                        ));
                    }
                }
            }
        }
        (r(&one), r(&two), r(&conn))
    }

    #[test]
    fn pearson_of_moments_equals_the_slow_twin() {
        let a = random_set(60, 5, 3, 1);
        let b = random_set(45, 5, 3, 2);
        let wa: Vec<f64> = (0..60).map(|s| 1.0 + (s % 3) as f64).collect();
        let got = compare_moments(&a, Some(&wa), &b, None).unwrap();
        let want = brute(&a, &wa, &b, &[1.0; 45]);
        assert!((got.frequencies - want.0).abs() < 1e-12, "{got:?} {want:?}");
        assert!((got.pair_frequencies - want.1).abs() < 1e-12);
        assert!((got.connected_correlations - want.2).abs() < 1e-12);
        assert_eq!(got.pairs, 10);
        // A set against itself correlates perfectly.
        let same = compare_moments(&a, Some(&wa), &a, Some(&wa)).unwrap();
        assert!((same.connected_correlations - 1.0).abs() < 1e-12);
    }

    #[test]
    fn shapes_and_weights_are_checked() {
        let a = random_set(10, 4, 3, 1);
        let b = random_set(10, 5, 3, 2);
        assert!(matches!(
            compare_moments(&a, None, &b, None),
            Err(Error::Shape { .. })
        ));
        assert!(compare_moments(&a, Some(&[1.0; 3]), &a, None).is_err());
        assert!(compare_moments(&a, Some(&[0.0; 10]), &a, None).is_err());
    }
}
