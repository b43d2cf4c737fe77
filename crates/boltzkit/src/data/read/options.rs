//! The settings of [`read_dataset`](super::read_dataset): [`ReadOptions`] and its
//! [`Binarize`] choice (the readers' collector applies it).

/// How grayscale values become binary while reading.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Binarize {
    /// No conversion: values must already be integers in `0..=255`.
    #[default]
    None,
    /// A value `v > t` becomes 1, any other value 0. `t` is in the data's own scale
    /// (e.g. `127.0` for 0..255 grayscale, `0.5` for data in `[0, 1]`).
    Threshold(f64),
    /// Each value becomes 1 with probability `v` (or `v / 255` when the file's maximum exceeds
    /// 1), drawn from per-row streams [`crate::rng::derive_rng`]`(seed, row)`: deterministic
    /// for a seed, whatever the thread count.
    Stochastic {
        /// The seed of the draws.
        seed: u64,
    },
}

/// Settings of [`read_dataset`].
///
/// ```
/// use boltzkit::data::{Binarize, ReadOptions};
/// let opts = ReadOptions::default().with_binarize(Binarize::Threshold(127.0));
/// assert_eq!(opts.cardinalities, None);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReadOptions {
    /// Declared per-variable cardinalities; `None` infers them as (column maximum + 1), at
    /// least 2. When given, a value at or above its cardinality is an error.
    pub cardinalities: Option<Vec<u32>>,
    /// Conversion of grayscale values to binary (default: none).
    pub binarize: Binarize,
}

impl ReadOptions {
    /// The same options with declared cardinalities.
    pub fn with_cardinalities(mut self, cardinalities: Vec<u32>) -> Self {
        self.cardinalities = Some(cardinalities);
        self
    }

    /// The same options with a binarization.
    pub fn with_binarize(mut self, binarize: Binarize) -> Self {
        self.binarize = binarize;
        self
    }
}
