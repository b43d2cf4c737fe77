//! The one generator and the seed derivation: [`BkRng`] (xoshiro256++), [`derive_seed`] /
//! [`derive_rng`] of stream `(seed, index)` by the SplitMix64 mixer [`mix64`].

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator type used by boltzkit.
pub type BkRng = Xoshiro256PlusPlus;

/// A generator seeded from a 64-bit seed.
pub fn rng_from_seed(seed: u64) -> BkRng {
    BkRng::seed_from_u64(seed)
}

/// SplitMix64 finalizer: a bijective 64-bit mixer used to derive independent seeds.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of stream `index` derived from `seed` (for chains, tasks, trials).
pub fn derive_seed(seed: u64, index: u64) -> u64 {
    mix64(mix64(seed) ^ mix64(index.wrapping_add(0xD1B5_4A32_D192_ED03)))
}

/// A generator for stream `index` of `seed`.
pub fn derive_rng(seed: u64, index: u64) -> BkRng {
    rng_from_seed(derive_seed(seed, index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn same_seed_same_bits() {
        let a: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(rng_from_seed(7), |r, _: u64| Some(r.random()))
            .collect();
        let b: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(rng_from_seed(7), |r, _: u64| Some(r.random()))
            .collect();
        assert_eq!(a, b);
    }

    #[test]
    fn derived_streams_differ() {
        let mut a = derive_rng(1, 0);
        let mut b = derive_rng(1, 1);
        let x: u64 = a.random();
        let y: u64 = b.random();
        assert_ne!(x, y);
        assert_ne!(derive_seed(1, 0), derive_seed(2, 0));
    }

    /// Value stability: the stream of a seed is part of the public contract.
    #[test]
    fn value_stability() {
        let mut r = rng_from_seed(42);
        let first: u64 = r.random();
        // pinned: changing the generator or the derivation changes every recorded experiment
        assert_eq!(first, 15021278609987233951);
        assert_eq!(derive_seed(7, 3), 5181754403628600566);
    }
}
