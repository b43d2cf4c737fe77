//! Cheap training monitors for an [`Rbm`], each deterministic and documented as what it is:
//! neither estimates the log-likelihood (use [`super::exact`] for that).
//!
//! - [`reconstruction_error`]: the squared error per sample of the
//!   [`mean_field_reconstruction`] `v → p(h|v) → σ(b + W·p(h|v))`.
//! - [`pseudo_log_likelihood`]: the average over samples of `Σ_i ln p(v_i | v_{−i})`, summed
//!   over *all* visible units (not one random unit scaled up), in `f64`.

use super::model::Rbm;
use crate::data::Dataset;
use crate::error::Result;
use crate::linalg::{sigmoid_f64, softplus_f64};
use rayon::prelude::*;

/// The hidden input `c + vᵀW` of one sample, in `f64`.
fn hidden_input(rbm: &Rbm, v: &[u8], x: &mut [f64]) {
    let nh = rbm.n_hidden();
    x.iter_mut()
        .zip(rbm.c())
        .for_each(|(a, &c)| *a = f64::from(c));
    for (i, &vi) in v.iter().enumerate() {
        if vi != 0 {
            let row = &rbm.w()[i * nh..(i + 1) * nh];
            x.iter_mut().zip(row).for_each(|(a, &w)| *a += f64::from(w));
        }
    }
}

/// Per-sample values in order, computed in parallel, summed in order (deterministic).
fn average(data: &Dataset, f: impl Fn(&[u8]) -> f64 + Sync) -> f64 {
    let vals: Vec<f64> = (0..data.n_samples())
        .into_par_iter()
        .map(|s| {
            let v: Vec<u8> = data.sample(s).iter().copied().collect();
            f(&v)
        })
        .collect();
    vals.iter().sum::<f64>() / vals.len() as f64
}

/// The mean-field reconstruction `r = σ(b + W·σ(c + Wᵀv))` of one binary row `v` (no
/// sampling: deterministic), in `f64`: what [`reconstruction_error`] measures and
/// `rbm plot --what reconstructions` draws.
pub fn mean_field_reconstruction(rbm: &Rbm, v: &[u8]) -> Vec<f64> {
    let nh = rbm.n_hidden();
    let mut ph = vec![0.0f64; nh];
    hidden_input(rbm, v, &mut ph);
    ph.iter_mut().for_each(|x| *x = sigmoid_f64(*x));
    (0..v.len())
        .map(|i| {
            let row = &rbm.w()[i * nh..(i + 1) * nh];
            let a = f64::from(rbm.b()[i])
                + row
                    .iter()
                    .zip(&ph)
                    .map(|(&w, &p)| f64::from(w) * p)
                    .sum::<f64>();
            sigmoid_f64(a)
        })
        .collect()
}

/// The mean over samples of `Σ_i (v_i − r_i)²` with the [`mean_field_reconstruction`] `r`.
pub fn reconstruction_error(rbm: &Rbm, data: &Dataset) -> Result<f64> {
    super::exact::check_data_for(rbm, data, "RBM monitor")?;
    Ok(average(data, |v| {
        mean_field_reconstruction(rbm, v)
            .iter()
            .zip(v)
            .map(|(r, &vi)| (f64::from(vi) - r).powi(2))
            .sum()
    }))
}

/// The average over samples of the full pseudo-log-likelihood
/// `Σ_i ln p(v_i | v_{−i}) = Σ_i ln σ(F(v^{(i)}) − F(v))`, `v^{(i)}` being `v` with unit `i`
/// flipped (Besag 1975), each flip's free energy updated from `v`'s hidden input in
/// `O(n_hidden)`; in `f64`.
pub fn pseudo_log_likelihood(rbm: &Rbm, data: &Dataset) -> Result<f64> {
    super::exact::check_data_for(rbm, data, "RBM monitor")?;
    let nh = rbm.n_hidden();
    Ok(average(data, |v| {
        let mut x = vec![0.0f64; nh];
        hidden_input(rbm, v, &mut x);
        let sp: f64 = x.iter().map(|&a| softplus_f64(a)).sum();
        let mut total = 0.0;
        for (i, &vi) in v.iter().enumerate() {
            let row = &rbm.w()[i * nh..(i + 1) * nh];
            let sign = if vi != 0 { -1.0 } else { 1.0 };
            let sp_flip: f64 = x
                .iter()
                .zip(row)
                .map(|(&a, &w)| softplus_f64(a + sign * f64::from(w)))
                .sum();
            // F(v) = −bᵀv − Σ softplus(x); flipping unit i changes bᵀv by sign·b_i
            let f_flip_minus_f = -(sign * f64::from(rbm.b()[i])) - (sp_flip - sp);
            // ln σ(t) = −softplus(−t)
            total -= softplus_f64(-f_flip_minus_f);
        }
        total
    }))
}

/// The mean conditional log-probability `ln p(v_i | v_{−i})` (nats) of the pairs `(row, unit)`
/// of the binary `data`: a pseudo-log-likelihood per unit on a fixed sample of its terms, cheap
/// enough to watch every epoch (one hidden input per row, shared by consecutive pairs of that
/// row, the sparse rows summed over their ones, and one softplus sum per pair). The same pairs give a deterministic figure, so its
/// changes are the model's. [`pseudo_log_likelihood`] with every unit of a row is `n_visible`
/// times this averaged over all of the row's pairs.
pub fn unit_pseudo_log_likelihood(
    rbm: &Rbm,
    data: &Dataset,
    pairs: &[(usize, usize)],
) -> Result<f64> {
    super::exact::check_data_for(rbm, data, "RBM monitor")?;
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    if let Some(&(r, i)) = pairs
        .iter()
        .find(|&&(r, i)| r >= data.n_samples() || i >= nv)
    {
        return Err(crate::error::Error::param(
            "pairs",
            format!(
                "({r}, {i}) is outside the data's {} rows × {nv} units",
                data.n_samples()
            ),
        ));
    }
    // consecutive pairs of one row share its hidden input (the watch asks 16 units per row)
    let runs: Vec<&[(usize, usize)]> = pairs.chunk_by(|a, b| a.0 == b.0).collect();
    let terms: Vec<Vec<f64>> = runs
        .par_iter()
        .map(|run| {
            let v: Vec<u8> = data.sample(run[0].0).iter().copied().collect();
            let mut x = vec![0.0f64; nh];
            hidden_input(rbm, &v, &mut x);
            let sp: f64 = x.iter().map(|&xj| softplus_f64(xj)).sum();
            run.iter()
                .map(|&(_, i)| {
                    let row = &rbm.w()[i * nh..(i + 1) * nh];
                    let sign = if v[i] != 0 { -1.0 } else { 1.0 };
                    let sp_flip: f64 = x
                        .iter()
                        .zip(row)
                        .map(|(&xj, &w)| softplus_f64(xj + sign * f64::from(w)))
                        .sum();
                    let f_flip_minus_f = -(sign * f64::from(rbm.b()[i])) - (sp_flip - sp);
                    -softplus_f64(-f_flip_minus_f)
                })
                .collect()
        })
        .collect();
    let terms: Vec<f64> = terms.into_iter().flatten().collect();
    Ok(terms.iter().sum::<f64>() / terms.len().max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use ndarray::Array2;
    use rand::Rng;

    fn data(n: usize, d: usize, seed: u64) -> Dataset {
        let mut rng = rng_from_seed(seed);
        Dataset::binary(Array2::from_shape_fn((n, d), |_| {
            u8::from(rng.random::<f64>() < 0.5)
        }))
        .unwrap()
    }

    /// Conditionals from the enumerated marginal p(v) ∝ e^{−F(v)}.
    #[test]
    fn pseudo_likelihood_matches_enumerated_conditionals() {
        let rbm = Rbm::random(5, 3, 0.9, &mut rng_from_seed(12)).unwrap();
        let d = data(6, 5, 13);
        let pv = |v: &[u8]| (-rbm.free_energy(v).unwrap()).exp();
        let mut want = 0.0;
        for s in 0..6 {
            let v: Vec<u8> = d.sample(s).iter().copied().collect();
            for i in 0..5 {
                let mut u = v.clone();
                u[i] = 1 - u[i];
                want += (pv(&v) / (pv(&v) + pv(&u))).ln();
            }
        }
        want /= 6.0;
        let got = pseudo_log_likelihood(&rbm, &d).unwrap();
        assert!((got - want).abs() < 1e-10, "{got} vs {want}");
    }

    /// Every pair of every row: the full pseudo-log-likelihood divided by the units.
    #[test]
    fn unit_pseudo_likelihood_is_the_full_one_per_unit() {
        let rbm = Rbm::random(5, 3, 0.9, &mut rng_from_seed(12)).unwrap();
        let d = data(6, 5, 13);
        let pairs: Vec<(usize, usize)> = (0..6).flat_map(|r| (0..5).map(move |i| (r, i))).collect();
        let full = pseudo_log_likelihood(&rbm, &d).unwrap();
        let per_unit = unit_pseudo_log_likelihood(&rbm, &d, &pairs).unwrap();
        assert!(
            (per_unit * 5.0 - full).abs() < 1e-10,
            "{per_unit} vs {full}"
        );
        // the same pairs interleaved (no row shares a hidden input): the same figure
        let interleaved: Vec<(usize, usize)> =
            (0..5).flat_map(|i| (0..6).map(move |r| (r, i))).collect();
        let apart = unit_pseudo_log_likelihood(&rbm, &d, &interleaved).unwrap();
        assert!((apart - per_unit).abs() < 1e-12, "{apart} vs {per_unit}");
        assert!(unit_pseudo_log_likelihood(&rbm, &d, &[(6, 0)]).is_err());
    }

    #[test]
    fn reconstruction_error_matches_formula() {
        let rbm = Rbm::random(4, 2, 0.7, &mut rng_from_seed(14)).unwrap();
        let d = data(5, 4, 15);
        let mut want = 0.0;
        for s in 0..5 {
            let v: Vec<f32> = d.sample(s).iter().map(|&x| f32::from(x)).collect();
            let mut ph = vec![0.0f32; 2];
            rbm.hidden_probs(&v, &mut ph).unwrap();
            let mut r = vec![0.0f32; 4];
            rbm.visible_probs(&ph, &mut r).unwrap();
            want += v
                .iter()
                .zip(&r)
                .map(|(&a, &b)| f64::from(a - b).powi(2))
                .sum::<f64>();
        }
        want /= 5.0;
        let got = reconstruction_error(&rbm, &d).unwrap();
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
        assert!(reconstruction_error(&rbm, &data(2, 3, 1)).is_err());
        assert!(pseudo_log_likelihood(&rbm, &data(2, 3, 1)).is_err());
    }
}
