//! The one CPU-feature detection of the library: which of the instruction sets its SIMD
//! kernels are compiled for this CPU runs ([`has`]). Every kernel with a SIMD twin asks here
//! where it dispatches (each twin is pinned bit for bit to its portable form by a test); the
//! answers come from `std`'s cached detection, one atomic load each.

/// An instruction-set extension (or pair) a kernel is compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// AVX (the 8 × 8 register transposes of `linalg::binary`'s packings).
    Avx,
    /// AVX2 (row sums, index lists, the lanes of the generator, vectorized elementwise math).
    Avx2,
    /// AVX2 and FMA (the BSLM row loops).
    Avx2Fma,
    /// AVX2 and POPCNT (the change lists of the annealing chains).
    Avx2Popcnt,
    /// AVX-512F (16-wide row sums).
    Avx512f,
    /// AVX-512F and BW (64-byte compares of the sequence-identity kernel).
    Avx512bw,
}

/// Whether this CPU runs code compiled for `feature`; always false off x86-64.
#[inline]
pub fn has(feature: Feature) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match feature {
            Feature::Avx => std::arch::is_x86_feature_detected!("avx"),
            Feature::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            Feature::Avx2Fma => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            Feature::Avx2Popcnt => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("popcnt")
            }
            Feature::Avx512f => std::arch::is_x86_feature_detected!("avx512f"),
            Feature::Avx512bw => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = feature;
        false
    }
}
