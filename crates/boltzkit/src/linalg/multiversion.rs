//! The `multiversion!` macro: a slice kernel compiled twice, for AVX2 and for the baseline
//! target, dispatched at run time by [`crate::cpu::has`].

/// Defines a slice kernel `$name` that runs its body compiled for AVX2 when the CPU has it
/// (detected once, at run time) and for the baseline target otherwise. Rust never fuses
/// multiply-adds on its own, so both versions give the same bits.
macro_rules! multiversion {
    ($(#[$doc:meta])* pub fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        $(#[$doc])*
        pub fn $name($($arg: $ty),*) -> $ret {
            #[inline(always)]
            fn generic($($arg: $ty),*) -> $ret $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) -> $ret {
                    generic($($arg),*)
                }
                if $crate::cpu::has($crate::cpu::Feature::Avx2) {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    return unsafe { avx2($($arg),*) };
                }
            }
            generic($($arg),*)
        }
    };
}
