//! (tests) The brute-force twins every unit type is checked against: enumeration of a
//! discrete layer's states, sample moments against the conditional mean, the ends of the AIS
//! interpolation.

use super::layer::Units;
use super::unit_type::UnitType;
use crate::rng::{derive_rng, rng_from_seed};
use rand_distr::{Distribution as _, Normal};

/// Each unit's states as blocks of values (`[[0], [1]]` for a 0/1 unit, the `q` one-hot
/// vectors for a categorical one): the layer's states are their Cartesian product.
pub fn one_hot_blocks(q: usize) -> Vec<Vec<f32>> {
    (0..q)
        .map(|k| (0..q).map(|j| if j == k { 1.0 } else { 0.0 }).collect())
        .collect()
}

/// Every state row of a layer whose unit `i` takes the blocks `blocks[i]`.
pub fn all_states(blocks: &[Vec<Vec<f32>>]) -> Vec<Vec<f32>> {
    let mut rows = vec![Vec::new()];
    for unit in blocks {
        rows = rows
            .iter()
            .flat_map(|r| {
                unit.iter().map(move |b| {
                    let mut r = r.clone();
                    r.extend_from_slice(b);
                    r
                })
            })
            .collect();
    }
    rows
}

/// `Γ(I) = ln Σ_x e^{−E(x) + I·x}` and `E[x | I]` of a discrete layer, by enumerating its
/// states (with `blocks` as in [`all_states`]), against the type's own.
pub fn discrete_matches_enumeration<U: UnitType>(u: &U, input: &[f32], blocks: &[Vec<Vec<f32>>]) {
    let states = all_states(blocks);
    let logw: Vec<f64> = states
        .iter()
        .map(|x| {
            assert!(u.check_state(x).is_ok());
            -u.energy(x) + super::bernoulli::dot(input, x)
        })
        .collect();
    let log_z = crate::linalg::log_sum_exp(&logw);
    let got = u.log_partition(input);
    assert!(
        (got - log_z).abs() < 1e-12 * log_z.abs().max(1.0),
        "{got} vs {log_z}"
    );
    let mut mean = vec![0.0f64; u.width()];
    for (x, lw) in states.iter().zip(&logw) {
        let p = (lw - log_z).exp();
        mean.iter_mut()
            .zip(x)
            .for_each(|(m, &v)| *m += p * f64::from(v));
    }
    let mut got = vec![0.0f32; u.width()];
    u.mean(input, &mut got);
    for (g, m) in got.iter().zip(&mean) {
        assert!((f64::from(*g) - m).abs() < 1e-6, "{got:?} vs {mean:?}");
    }
}

/// The mean of `n` draws of `x ~ p(x | I)` within 5 standard errors of `E[x | I]`, every
/// draw a valid state.
pub fn sampler_matches_mean<U: UnitType>(u: &U, input: &[f32], n: usize, seed: u64) {
    let w = u.width();
    let mut rng = rng_from_seed(seed);
    let (mut sum, mut sq) = (vec![0.0f64; w], vec![0.0f64; w]);
    let mut x = vec![0.0f32; w];
    for _ in 0..n {
        u.sample(input, &mut x, &mut rng);
        u.check_state(&x).unwrap();
        for ((s, q), &v) in sum.iter_mut().zip(&mut sq).zip(&x) {
            *s += f64::from(v);
            *q += f64::from(v) * f64::from(v);
        }
    }
    let mut mean = vec![0.0f32; w];
    u.mean(input, &mut mean);
    for j in 0..w {
        let m = sum[j] / n as f64;
        let sd = (sq[j] / n as f64 - m * m).max(0.0).sqrt();
        let se = sd / (n as f64).sqrt();
        let want = f64::from(mean[j]);
        assert!(
            (m - want).abs() <= 5.0 * se + 1e-6 * want.abs(),
            "coordinate {j}: sample mean {m} vs {want} (se {se})"
        );
    }
}

/// `interpolate` at `β = 1` is the layer itself and at `β = 0` the base, by their energies
/// of `x`; halfway, the energy is halfway.
pub fn interpolation_ends<U: UnitType>(u: &U, base: &U, x: &[f32]) {
    let mut out = u.clone();
    u.interpolate(base, 1.0, &mut out);
    assert!((out.energy(x) - u.energy(x)).abs() < 1e-9 * u.energy(x).abs().max(1.0));
    u.interpolate(base, 0.0, &mut out);
    assert!((out.energy(x) - base.energy(x)).abs() < 1e-9 * base.energy(x).abs().max(1.0));
    u.interpolate(base, 0.5, &mut out);
    let half = 0.5 * (u.energy(x) + base.energy(x));
    assert!((out.energy(x) - half).abs() < 1e-6 * half.abs().max(1.0));
}

/// `n` draws of `N(0, sd²)` from `seed` (test weights).
pub fn normal_weights(n: usize, sd: f32, seed: u64) -> Vec<f32> {
    let normal = Normal::new(0.0f32, sd).expect("a positive sd");
    let mut rng = rng_from_seed(seed);
    (0..n).map(|_| normal.sample(&mut rng)).collect()
}

/// `n` rows of a layer drawn from its own sampler at random inputs.
pub fn layer_rows(layer: &Units, n: usize, seed: u64) -> Vec<f32> {
    let input = normal_weights(n * layer.width(), 0.7, seed);
    let mut out = vec![0.0; input.len()];
    let mut rngs: Vec<_> = (0..n as u64).map(|r| derive_rng(seed, r)).collect();
    layer.sample(&input, &mut out, &mut rngs).expect("rows");
    out
}
