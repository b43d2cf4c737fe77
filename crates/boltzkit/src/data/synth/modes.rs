//! Artificial Modes (Desjardins et al. 2010; Brügge et al. 2013; Sec. 4.1 of the pop-CD paper,
//! Shark's `DistantModes`): a few far-apart binary prototypes, each copied many times with rare
//! bit flips, so that Gibbs sampling mixes badly between the modes.

use super::distribution::Distribution;
use super::state::MAX_EXACT_VARS;
use crate::data::Dataset;
use crate::error::{Error, Result};
use ndarray::Array2;
use rand::Rng;

/// Artificial Modes: `modes` prototypes of `dim` bits, `copies` noisy copies of each.
///
/// Prototype `m` has bit `i = (m mod 2) XOR (⌊i (⌊m/2⌋ + 1) / dim⌋ mod 2)`: for the paper's
/// 16 bits and 4 modes, all zeros, all ones, eight zeros then eight ones, and its complement.
/// Each bit of each copy is flipped independently with probability `flip` (the paper's control
/// parameter `p = 0.001`). Samples are ordered mode by mode (rows `m·copies .. (m+1)·copies`
/// are copies of prototype `m`). The exact distribution is the equal mixture of the `modes`
/// product distributions around the prototypes.
///
/// ```
/// use boltzkit::data::synth::ArtificialModes;
/// use boltzkit::rng::rng_from_seed;
/// let am = ArtificialModes::paper(); // 16 bits, 4 modes, 2,500 copies, p = 0.001
/// assert_eq!(am.prototype(2)?, [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
/// let data = am.sample(&mut rng_from_seed(1))?;
/// assert_eq!((data.n_samples(), data.n_vars()), (10_000, 16));
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArtificialModes {
    dim: usize,
    modes: usize,
    copies: usize,
    flip: f64,
}

impl ArtificialModes {
    /// `modes ≥ 1` prototypes of `dim ≥ 1` bits, `copies ≥ 1` copies each, flip probability
    /// `flip ∈ [0, 0.5]`.
    pub fn new(dim: usize, modes: usize, copies: usize, flip: f64) -> Result<Self> {
        if dim == 0 {
            return Err(Error::param("dim", "at least one bit is needed"));
        }
        if modes == 0 {
            return Err(Error::param("modes", "at least one mode is needed"));
        }
        if copies == 0 {
            return Err(Error::param(
                "copies",
                "at least one copy per mode is needed",
            ));
        }
        if !(0.0..=0.5).contains(&flip) {
            return Err(Error::param(
                "flip",
                format!("must be a probability in [0, 0.5], got {flip}"),
            ));
        }
        Ok(ArtificialModes {
            dim,
            modes,
            copies,
            flip,
        })
    }

    /// The paper's set-up: 16 bits, 4 modes, 2,500 copies each (10,000 samples), `p = 0.001`.
    pub fn paper() -> Self {
        ArtificialModes {
            dim: 16,
            modes: 4,
            copies: 2500,
            flip: 0.001,
        }
    }

    /// Bits per sample.
    pub fn n_vars(&self) -> usize {
        self.dim
    }

    /// Number of samples, `modes · copies`.
    pub fn n_samples(&self) -> usize {
        self.modes * self.copies
    }

    /// The prototype of mode `m < modes`.
    pub fn prototype(&self, m: usize) -> Result<Vec<u8>> {
        if m >= self.modes {
            return Err(Error::param(
                "mode",
                format!("mode {m} of {} modes", self.modes),
            ));
        }
        Ok((0..self.dim)
            .map(|i| ((m % 2) ^ ((i * (m / 2 + 1) / self.dim) % 2)) as u8)
            .collect())
    }

    /// The dataset: `copies` copies of each prototype, mode by mode, each bit flipped with
    /// probability `flip` (one uniform draw per bit, in row order).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<Dataset> {
        let mut flat = Vec::with_capacity(self.n_samples() * self.dim);
        for m in 0..self.modes {
            let proto = self.prototype(m)?;
            for _ in 0..self.copies {
                flat.extend(proto.iter().map(|&b| {
                    let u: f64 = rng.random();
                    b ^ u8::from(u < self.flip)
                }));
            }
        }
        let values = Array2::from_shape_vec((self.n_samples(), self.dim), flat).map_err(|e| {
            Error::Shape {
                op: "ArtificialModes::sample".into(),
                expected: format!("{} rows of {} bits", self.n_samples(), self.dim),
                found: e.to_string(),
            }
        })?;
        Dataset::binary(values)
    }

    /// The exact generating distribution over all `2^dim` states (`dim ≤ 28`):
    /// `p(x) = (1/M) Σ_m flip^{d_m(x)} (1 − flip)^{dim − d_m(x)}`, `d_m` the Hamming distance
    /// to prototype `m` (state index: bit 0 least significant).
    pub fn distribution(&self) -> Result<Distribution> {
        if self.dim > MAX_EXACT_VARS {
            return Err(Error::TooLarge {
                what: "the exact Artificial Modes distribution".into(),
                needed: format!("2^{} states", self.dim),
                limit: format!("2^{MAX_EXACT_VARS}"),
            });
        }
        let protos: Vec<u64> = (0..self.modes)
            .map(|m| {
                self.prototype(m)
                    .map(|p| p.iter().enumerate().map(|(i, &b)| u64::from(b) << i).sum())
            })
            .collect::<Result<_>>()?;
        let (lf, lk) = (self.flip.ln(), (1.0 - self.flip).ln());
        let dim = self.dim as u32;
        let weights: Vec<f64> = (0..1u64 << self.dim)
            .map(|s| {
                protos
                    .iter()
                    .map(|&p| {
                        let d = (s ^ p).count_ones();
                        let lp = if d == 0 {
                            f64::from(dim) * lk
                        } else {
                            f64::from(d) * lf + f64::from(dim - d) * lk
                        };
                        lp.exp()
                    })
                    .sum::<f64>()
                    / self.modes as f64
            })
            .collect();
        Distribution::from_weights(vec![2; self.dim], weights)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synth::state_index;
    use crate::rng::rng_from_seed;

    #[test]
    fn prototypes_follow_the_formula() {
        let am = ArtificialModes::paper();
        let ones = |m: usize| am.prototype(m).unwrap().iter().filter(|&&b| b == 1).count();
        assert_eq!(am.prototype(0).unwrap(), vec![0; 16]);
        assert_eq!(am.prototype(1).unwrap(), vec![1; 16]);
        let p2 = am.prototype(2).unwrap();
        assert_eq!(&p2[..8], &[0; 8]);
        assert_eq!(&p2[8..], &[1; 8]);
        let p3 = am.prototype(3).unwrap();
        assert!(p2.iter().zip(&p3).all(|(a, b)| a ^ b == 1));
        assert_eq!((ones(0), ones(1), ones(2), ones(3)), (0, 16, 8, 8));
        assert!(am.prototype(4).is_err());
        // six modes of 12 bits: mode 4 = ⌊3i/12⌋ mod 2 = blocks of four
        let six = ArtificialModes::new(12, 6, 1, 0.0).unwrap();
        assert_eq!(
            six.prototype(4).unwrap(),
            vec![0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0]
        );
        assert_eq!(
            six.prototype(5).unwrap(),
            vec![1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1]
        );
        assert!(ArtificialModes::new(0, 4, 1, 0.1).is_err());
        assert!(ArtificialModes::new(4, 0, 1, 0.1).is_err());
        assert!(ArtificialModes::new(4, 4, 0, 0.1).is_err());
        assert!(ArtificialModes::new(4, 4, 1, 0.6).is_err());
    }

    /// Copies sit mode by mode; bits flip at the set rate (160,000 bits at p = 0.001: 160
    /// expected, within 4 standard deviations); seeded.
    #[test]
    fn samples_flip_bits_at_the_set_rate() {
        let am = ArtificialModes::paper();
        let data = am.sample(&mut rng_from_seed(5)).unwrap();
        let mut flips = 0usize;
        for s in 0..data.n_samples() {
            let proto = am.prototype(s / 2500).unwrap();
            flips += data
                .sample(s)
                .iter()
                .zip(&proto)
                .filter(|(a, b)| a != b)
                .count();
        }
        let sd = (160_000.0f64 * 0.001 * 0.999).sqrt();
        assert!((flips as f64 - 160.0).abs() < 4.0 * sd, "{flips} flips");
        assert_eq!(data, am.sample(&mut rng_from_seed(5)).unwrap());
        let none = ArtificialModes::new(16, 4, 3, 0.0).unwrap();
        let d0 = none.sample(&mut rng_from_seed(1)).unwrap();
        assert_eq!(d0.sample(7).to_vec(), none.prototype(2).unwrap());
    }

    #[test]
    fn distribution_is_the_mixture() {
        let am = ArtificialModes::new(8, 4, 10, 0.05).unwrap();
        let p = am.distribution().unwrap();
        let cards = vec![2u32; 8];
        let total: f64 = p.probs().iter().sum();
        assert!((total - 1.0).abs() < 1e-12);
        // a prototype: its own mode (1 − p)^8, the others at Hamming distance 8 or 4
        let proto = am.prototype(2).unwrap();
        let q: f64 = 0.95f64;
        let want = (q.powi(8) + 2.0 * 0.05f64.powi(4) * q.powi(4) + 0.05f64.powi(8)) / 4.0;
        assert!((p.probs()[state_index(&cards, &proto)] - want).abs() < 1e-15);
        assert!(ArtificialModes::new(30, 4, 1, 0.1)
            .unwrap()
            .distribution()
            .is_err());
    }
}
