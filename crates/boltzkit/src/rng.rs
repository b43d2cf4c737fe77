//! Seeding: one named portable generator and deterministic seed derivation.
//!
//! boltzkit uses [`Xoshiro256PlusPlus`] everywhere: same seed, same bits, on every platform.
//! Parallel work never shares a generator; each chain or task derives its own stream from
//! `(seed, index)` with [`derive_rng`], so results do not depend on the number of threads.

pub use rand_xoshiro::Xoshiro256PlusPlus;

mod bernoulli;
mod lanes;
mod seed;
pub use bernoulli::{sample_bernoulli, LANE_DRAW_MIN_UNITS};
pub use lanes::{sample_bernoulli_x4, Xoshiro256PlusPlusX4};
pub use seed::{derive_rng, derive_seed, mix64, rng_from_seed, BkRng};
