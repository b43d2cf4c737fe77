//! [`Categorical`]: Potts units, site `i` with `q_i` states (`q_i` may differ by site), a state
//! as a one-hot block of `q_i` values, so the layer's row has `Σ q_i` values, each 0/1: the
//! sparse 0/1 products of [`crate::linalg::binary`] serve it as they serve Bernoulli rows
//! (one one per site). `U(x) = −Σ_i f_i(x_i)` with per-state fields `f`,
//! `Γ_i(I) = ln Σ_k e^{f_ik + I_ik}`, `E[x | I]` the per-site softmax.

use super::unit_type::UnitType;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::rbm::model::BASE_RATE_EPS;
use rand::Rng;

/// A layer of categorical units with per-state fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Categorical {
    /// `q_i` per site.
    q: Vec<usize>,
    /// Site `i`'s values are `offsets[i]..offsets[i + 1]` of a row.
    offsets: Vec<usize>,
    /// `f_ik` at `offsets[i] + k`.
    fields: Vec<f32>,
}

impl Categorical {
    /// The layer with `q[i]` states at site `i` (1 to 256) and fields `f_ik` at
    /// `Σ_{j<i} q_j + k` (all finite).
    pub fn new(q: Vec<usize>, fields: Vec<f32>) -> Result<Self> {
        if let Some(i) = q.iter().position(|&k| k == 0 || k > 256) {
            return Err(Error::param(
                format!("q[{i}]"),
                format!("{} states: need 1 to 256", q[i]),
            ));
        }
        let mut offsets = vec![0];
        for &k in &q {
            offsets.push(offsets.last().copied().unwrap_or(0) + k);
        }
        super::check::same_len(
            "Categorical::new",
            &[("fields", fields.len())],
            offsets[q.len()],
        )?;
        super::check::params("fields", &fields, None)?;
        Ok(Categorical { q, offsets, fields })
    }

    /// The states per site.
    pub fn q(&self) -> &[usize] {
        &self.q
    }

    /// The fields, site by site.
    pub fn fields(&self) -> &[f32] {
        &self.fields
    }

    /// Site `i`'s range of a row.
    fn site(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i]..self.offsets[i + 1]
    }

    /// The data source of mini-batches: a dataset's integer codes (state `k` of site `i` as
    /// the value `k`, as alignments are read) as one-hot rows of this layer, `rows × width`.
    pub fn one_hot(&self, data: &Dataset) -> Result<Vec<f32>> {
        if data.n_vars() != self.q.len() {
            return Err(Error::Shape {
                op: "Categorical::one_hot".into(),
                expected: format!("{} columns (sites)", self.q.len()),
                found: format!("{}", data.n_vars()),
            });
        }
        let width = self.width();
        let mut out = vec![0.0f32; data.n_samples() * width];
        for (r, (row, dst)) in data
            .values()
            .rows()
            .into_iter()
            .zip(out.chunks_exact_mut(width))
            .enumerate()
        {
            for (i, &k) in row.iter().enumerate() {
                if usize::from(k) >= self.q[i] {
                    return Err(Error::InvalidData(format!(
                        "row {r}, site {i}: state {k}, but the site has {} states",
                        self.q[i]
                    )));
                }
                dst[self.offsets[i] + usize::from(k)] = 1.0;
            }
        }
        Ok(out)
    }
}

impl UnitType for Categorical {
    fn n_units(&self) -> usize {
        self.q.len()
    }

    fn width(&self) -> usize {
        self.fields.len()
    }

    fn energy(&self, x: &[f32]) -> f64 {
        -super::bernoulli::dot(&self.fields, x)
    }

    fn log_partition(&self, input: &[f32]) -> f64 {
        (0..self.q.len())
            .map(|i| {
                let r = self.site(i);
                let a = |k: usize| f64::from(self.fields[k]) + f64::from(input[k]);
                let m = r.clone().map(a).fold(f64::NEG_INFINITY, f64::max);
                m + r.map(|k| (a(k) - m).exp()).sum::<f64>().ln()
            })
            .sum()
    }

    fn mean(&self, input: &[f32], out: &mut [f32]) {
        for i in 0..self.q.len() {
            let r = self.site(i);
            let a = |k: usize| f64::from(self.fields[k]) + f64::from(input[k]);
            let m = r.clone().map(a).fold(f64::NEG_INFINITY, f64::max);
            let z: f64 = r.clone().map(|k| (a(k) - m).exp()).sum();
            for k in r {
                out[k] = ((a(k) - m).exp() / z) as f32;
            }
        }
    }

    /// One uniform per site, its state by the inverse of the softmax's distribution function.
    fn sample<R: Rng + ?Sized>(&self, input: &[f32], out: &mut [f32], rng: &mut R) {
        for i in 0..self.q.len() {
            let r = self.site(i);
            let a = |k: usize| f64::from(self.fields[k]) + f64::from(input[k]);
            let m = r.clone().map(a).fold(f64::NEG_INFINITY, f64::max);
            let z: f64 = r.clone().map(|k| (a(k) - m).exp()).sum();
            let mut u = rng.random::<f64>() * z;
            let mut chosen = r.end - 1;
            for k in r.clone() {
                u -= (a(k) - m).exp();
                if u < 0.0 {
                    chosen = k;
                    break;
                }
            }
            out[r].fill(0.0);
            out[chosen] = 1.0;
        }
    }

    fn check_state(&self, x: &[f32]) -> Result<()> {
        super::check::width("categorical state", x, self.width())?;
        for i in 0..self.q.len() {
            let block = &x[self.site(i)];
            let ones = block.iter().filter(|&&v| v == 1.0).count();
            let zeros = block.iter().filter(|&&v| v == 0.0).count();
            if ones != 1 || zeros != block.len() - 1 {
                return Err(Error::InvalidData(format!(
                    "categorical site {i}: {block:?} is not one-hot"
                )));
            }
        }
        Ok(())
    }

    /// With data: fields `ln p_ik` of the per-site frequencies mixed with the uniform
    /// (`p = (1 − ε) freq + ε / q_i`, `ε = BASE_RATE_EPS`, so unseen states stay finite);
    /// without: zeros (uniform per site).
    fn ais_base(&self, data: Option<&[f32]>) -> Result<Self> {
        let Some(data) = data else {
            return Categorical::new(self.q.clone(), vec![0.0; self.fields.len()]);
        };
        let freq = super::check::column_means(data, self.width())?;
        let mut fields = vec![0.0f32; self.fields.len()];
        for (i, &q) in self.q.iter().enumerate() {
            for k in self.site(i) {
                let p = (1.0 - BASE_RATE_EPS) * freq[k] + BASE_RATE_EPS / q as f64;
                fields[k] = p.ln() as f32;
            }
        }
        Categorical::new(self.q.clone(), fields)
    }

    fn interpolate(&self, base: &Self, beta: f64, out: &mut Self) {
        super::check::lerp(&base.fields, &self.fields, beta, &mut out.fields);
    }

    /// `θ = f`, site by site.
    fn trainable(&self) -> Vec<f64> {
        self.fields.iter().map(|&f| f64::from(f)).collect()
    }

    fn set_trainable(&mut self, theta: &[f64]) {
        super::check::set(&mut self.fields, theta);
    }

    fn add_energy_grad(&self, x: &[f32], a: f64, out: &mut [f64]) {
        super::check::axpy(-a, x, out);
    }

    fn add_mean_energy_grad(&self, input: &[f32], a: f64, out: &mut [f64]) {
        let mut p = vec![0.0f32; self.fields.len()];
        self.mean(input, &mut p);
        super::check::axpy(-a, &p, out);
    }
}

#[cfg(test)]
mod tests {
    use super::super::twins;
    use super::*;

    fn layer() -> Categorical {
        Categorical::new(
            vec![3, 2, 4],
            vec![0.1, -0.4, 1.0, 0.0, 0.7, -1.0, 2.0, 0.5, -0.2],
        )
        .unwrap()
    }

    #[test]
    fn log_partition_and_mean_match_enumeration() {
        let u = layer();
        let input = [0.5f32, -0.25, 0.0, 1.0, -1.0, 0.3, -2.0, 0.0, 0.4];
        let blocks: Vec<_> = u.q().iter().map(|&q| twins::one_hot_blocks(q)).collect();
        twins::discrete_matches_enumeration(&u, &input, &blocks);
    }

    #[test]
    fn sampler_checks_and_interpolation() {
        let u = layer();
        let input = [0.5f32, -0.25, 0.0, 1.0, -1.0, 0.3, -2.0, 0.0, 0.4];
        twins::sampler_matches_mean(&u, &input, 4000, 5);
        let x = [0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        twins::interpolation_ends(&u, &u.ais_base(None).unwrap(), &x);
        assert!(u.check_state(&x).is_ok());
        let two_on = [1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        assert!(u.check_state(&two_on).is_err());
        let none_on = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        assert!(u.check_state(&none_on).is_err());
        assert!(Categorical::new(vec![2, 0], vec![0.0; 2]).is_err());
        assert!(Categorical::new(vec![2, 2], vec![0.0; 3]).is_err());
    }

    #[test]
    fn one_hot_rows_and_base_from_frequencies() {
        let u = Categorical::new(vec![3, 2], vec![0.0; 5]).unwrap();
        let data = Dataset::new(
            ndarray::Array2::from_shape_vec((2, 2), vec![2u8, 0, 2, 1]).unwrap(),
            vec![3, 2],
        )
        .unwrap();
        let rows = u.one_hot(&data).unwrap();
        assert_eq!(rows, vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0]);
        let base = u.ais_base(Some(&rows)).unwrap();
        let mut p = vec![0.0f32; 5];
        base.mean(&[0.0; 5], &mut p);
        let e = BASE_RATE_EPS as f32;
        let want = [e / 3.0, e / 3.0, 1.0 - e + e / 3.0, 0.5, 0.5];
        assert!(
            p.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6),
            "{p:?}"
        );
        let bad = Dataset::new(
            ndarray::Array2::from_shape_vec((1, 2), vec![0u8, 2]).unwrap(),
            vec![3, 3],
        )
        .unwrap();
        assert!(u.one_hot(&bad).is_err());
    }
}
