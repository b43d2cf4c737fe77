//! The sink every reader pushes values into, row-major: it validates each value, applies a
//! threshold at once, and keeps grayscale values for stochastic binarization at the end.

use super::options::Binarize;
use crate::rng::derive_rng;
use ndarray::Array2;
use rand::Rng;
use rayon::prelude::*;

/// What a value should have been (the `expected` of a parse error).
pub(super) type Rejection = &'static str;

pub(super) const NOT_FINITE: Rejection = "a finite number";
pub(super) const NEGATIVE: Rejection = "a nonnegative value";
pub(super) const ABOVE_255: Rejection = "a value at most 255";
pub(super) const NOT_INTEGER: Rejection =
    "an integer value (grayscale data needs a binarization: threshold or stochastic)";

/// Values read so far.
enum Store {
    /// Integers in `0..=255` (or, under a threshold, the binary results).
    Bytes(Vec<u8>),
    /// Grayscale values kept for stochastic binarization once a non-integer was seen.
    /// `f32` halves the memory; its 24-bit precision is far below the sampling noise.
    Reals(Vec<f32>),
}

/// Validating, binarizing value sink.
pub(super) struct Collector {
    binarize: Binarize,
    store: Store,
}

impl Collector {
    pub(super) fn new(binarize: Binarize) -> Self {
        Collector {
            binarize,
            store: Store::Bytes(Vec::new()),
        }
    }

    /// Reserves room for `n` more values.
    pub(super) fn reserve(&mut self, n: usize) {
        match &mut self.store {
            Store::Bytes(v) => v.reserve(n),
            Store::Reals(v) => v.reserve(n),
        }
    }

    /// Number of values pushed.
    pub(super) fn len(&self) -> usize {
        match &self.store {
            Store::Bytes(v) => v.len(),
            Store::Reals(v) => v.len(),
        }
    }

    /// Pushes an integer value in `0..=255` (always valid).
    #[inline]
    pub(super) fn push_u8(&mut self, v: u8) {
        match (&mut self.store, self.binarize) {
            (Store::Bytes(b), Binarize::Threshold(t)) => b.push(u8::from(f64::from(v) > t)),
            (Store::Bytes(b), _) => b.push(v),
            (Store::Reals(r), _) => r.push(f32::from(v)),
        }
    }

    /// Pushes many integer values at once.
    pub(super) fn extend_u8(&mut self, vs: &[u8]) {
        match (&mut self.store, self.binarize) {
            (Store::Bytes(b), Binarize::Threshold(t)) => {
                b.extend(vs.iter().map(|&v| u8::from(f64::from(v) > t)))
            }
            (Store::Bytes(b), _) => b.extend_from_slice(vs),
            (Store::Reals(r), _) => r.extend(vs.iter().map(|&v| f32::from(v))),
        }
    }

    /// Pushes an integer value; rejects one outside `0..=255`.
    #[inline]
    pub(super) fn push_int(&mut self, v: i128) -> Result<(), Rejection> {
        if v < 0 {
            Err(NEGATIVE)
        } else if v > 255 {
            Err(ABOVE_255)
        } else {
            self.push_u8(v as u8);
            Ok(())
        }
    }

    /// Pushes a real value; rejects NaN, infinities, values outside `[0, 255]` and, without a
    /// binarization, non-integers.
    #[inline]
    pub(super) fn push_f64(&mut self, v: f64) -> Result<(), Rejection> {
        if !v.is_finite() {
            return Err(NOT_FINITE);
        }
        if v < 0.0 {
            return Err(NEGATIVE);
        }
        if v > 255.0 {
            return Err(ABOVE_255);
        }
        let integral = v.fract() == 0.0;
        match self.binarize {
            Binarize::None if !integral => return Err(NOT_INTEGER),
            Binarize::Threshold(t) => {
                if let Store::Bytes(b) = &mut self.store {
                    b.push(u8::from(v > t));
                }
                return Ok(());
            }
            _ => {}
        }
        if integral {
            self.push_u8(v as u8);
            return Ok(());
        }
        // Stochastic with a non-integer value: keep grayscale from now on.
        if let Store::Bytes(b) = &self.store {
            let reals = b.iter().map(|&x| f32::from(x)).collect();
            self.store = Store::Reals(reals);
        }
        if let Store::Reals(r) = &mut self.store {
            r.push(v as f32);
        }
        Ok(())
    }

    /// The `rows × cols` table, binarized stochastically when asked.
    pub(super) fn finish(self, rows: usize, cols: usize) -> Array2<u8> {
        debug_assert_eq!(self.len(), rows * cols);
        let values = match (self.store, self.binarize) {
            (Store::Bytes(b), Binarize::Stochastic { seed }) => {
                let max = b.iter().copied().max().unwrap_or(0);
                let scale = if max > 1 { 255.0 } else { 1.0 };
                stochastic(&b, cols, seed, |v| f64::from(v) / scale)
            }
            (Store::Reals(r), Binarize::Stochastic { seed }) => {
                let max = r.iter().copied().fold(0.0f32, f32::max);
                let scale = if max > 1.0 { 255.0 } else { 1.0 };
                stochastic(&r, cols, seed, |v| f64::from(v) / scale)
            }
            (Store::Bytes(b), _) => b,
            // Reals only arise under a stochastic binarization.
            (Store::Reals(r), _) => r.iter().map(|&v| v as u8).collect(),
        };
        Array2::from_shape_vec((rows, cols), values).expect("collector length matches shape")
    }
}

/// One Bernoulli draw per value with probability `p(v)`; row `r` uses stream `(seed, r)`.
fn stochastic<T: Copy + Sync>(
    vals: &[T],
    cols: usize,
    seed: u64,
    p: impl Fn(T) -> f64 + Sync,
) -> Vec<u8> {
    let mut out = vec![0u8; vals.len()];
    if cols == 0 {
        return out;
    }
    out.par_chunks_mut(cols)
        .zip(vals.par_chunks(cols))
        .enumerate()
        .for_each(|(r, (o, v))| {
            let mut rng = derive_rng(seed, r as u64);
            for (o, &v) in o.iter_mut().zip(v) {
                *o = u8::from(rng.random::<f64>() < p(v));
            }
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_values() {
        let mut c = Collector::new(Binarize::None);
        assert_eq!(c.push_f64(f64::NAN), Err(NOT_FINITE));
        assert_eq!(c.push_f64(f64::INFINITY), Err(NOT_FINITE));
        assert_eq!(c.push_f64(-1.0), Err(NEGATIVE));
        assert_eq!(c.push_f64(256.0), Err(ABOVE_255));
        assert_eq!(c.push_f64(0.5), Err(NOT_INTEGER));
        assert_eq!(c.push_int(-3), Err(NEGATIVE));
        assert_eq!(c.push_int(256), Err(ABOVE_255));
        assert_eq!(c.len(), 0);
        c.push_f64(3.0).unwrap();
        c.push_int(255).unwrap();
        assert_eq!(c.finish(1, 2).into_raw_vec_and_offset().0, vec![3, 255]);
    }

    #[test]
    fn threshold_applies_on_push() {
        let mut c = Collector::new(Binarize::Threshold(0.5));
        for v in [0.0, 0.5, 0.51, 1.0] {
            c.push_f64(v).unwrap();
        }
        c.extend_u8(&[0, 1]);
        assert_eq!(
            c.finish(2, 3).into_raw_vec_and_offset().0,
            vec![0, 0, 1, 1, 0, 1]
        );
    }

    #[test]
    fn stochastic_promotes_to_reals() {
        let mut c = Collector::new(Binarize::Stochastic { seed: 1 });
        c.push_u8(1);
        c.push_f64(0.25).unwrap();
        c.push_f64(0.0).unwrap();
        assert!(matches!(c.store, Store::Reals(_)));
        assert_eq!(c.len(), 3);
        let out = c.finish(1, 3);
        assert_eq!(out[[0, 0]], 1, "probability 1 always gives 1");
        assert_eq!(out[[0, 2]], 0, "probability 0 always gives 0");
    }
}
