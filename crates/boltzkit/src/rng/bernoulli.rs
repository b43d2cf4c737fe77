//! Bernoulli draws of a row of probabilities: [`sample_bernoulli`], the one sampler of the
//! RBM's binary units (Gibbs chains, AIS, exact sampling), by four generator lanes for rows of
//! at least [`LANE_DRAW_MIN_UNITS`] units.

use super::lanes::{sample_bernoulli_x4, Xoshiro256PlusPlusX4};
use rand::Rng;

/// Units from which [`sample_bernoulli`] draws a row from four generator lanes.
pub const LANE_DRAW_MIN_UNITS: usize = 64;

/// `out_i ← 1` when a uniform draw `u_i ∈ [0, 1)` is below `p_i`, else `0`. `p = 0` never
/// fires, `p = 1` always does. A row of at least [`LANE_DRAW_MIN_UNITS`] units draws from
/// four xoshiro256++ lanes seeded from `rng`'s next 16 outputs
/// ([`sample_bernoulli_x4`]: eight draws per step of the four, where one step of
/// `rng` per unit is a serial chain of dependent instructions); a shorter row takes one
/// `rng.random::<f32>()` per unit, in order.
pub fn sample_bernoulli<R: Rng + ?Sized>(p: &[f32], out: &mut [f32], rng: &mut R) {
    if p.len() >= LANE_DRAW_MIN_UNITS {
        let mut lanes = Xoshiro256PlusPlusX4::from_rng(rng);
        sample_bernoulli_x4(p, out, &mut lanes);
        return;
    }
    for (o, &pi) in out.iter_mut().zip(p) {
        let u: f32 = rng.random();
        *o = if u < pi { 1.0 } else { 0.0 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;

    /// A row shorter than `LANE_DRAW_MIN_UNITS` takes one `random::<f32>()` per unit; a
    /// longer one draws from four lanes seeded from the generator's next 16 outputs, which is
    /// all it takes from the generator.
    #[test]
    fn rows_draw_per_unit_or_by_lanes_by_length() {
        use crate::rng::{sample_bernoulli_x4, Xoshiro256PlusPlusX4};
        use rand::RngCore;
        let mut rng = rng_from_seed(6);
        for n in [1, LANE_DRAW_MIN_UNITS - 1, LANE_DRAW_MIN_UNITS, 500] {
            let p: Vec<f32> = (0..n).map(|_| rng.random::<f32>()).collect();
            let mut twin = rng.clone();
            let want: Vec<f32> = if n < LANE_DRAW_MIN_UNITS {
                p.iter()
                    .map(|&pi| f32::from(u8::from(twin.random::<f32>() < pi)))
                    .collect()
            } else {
                let mut lanes = Xoshiro256PlusPlusX4::from_rng(&mut twin);
                let mut w = vec![0f32; n];
                sample_bernoulli_x4(&p, &mut w, &mut lanes);
                w
            };
            let mut out = vec![0.5; n];
            sample_bernoulli(&p, &mut out, &mut rng);
            assert_eq!(out, want, "n = {n}");
            assert_eq!(rng.next_u64(), twin.next_u64(), "n = {n}");
        }
    }
}
