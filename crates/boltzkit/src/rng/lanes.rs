//! Four xoshiro256++ generators stepped side by side, and the Bernoulli draws of a row of
//! probabilities from them: eight draws per step of the four, by AVX2 where the CPU has it
//! (a portable twin gives the same bits). One generator step per draw is a serial chain of
//! about a dozen dependent instructions; four independent states in one register each take
//! a step in the time of one, and each 64-bit output gives two 24-bit uniforms (the
//! resolution of `rng.random::<f32>()`).

use rand::RngCore;

/// Four xoshiro256++ states (`s[word][lane]`): lane `k` is the generator
/// `Xoshiro256PlusPlus` with state `(s[0][k], s[1][k], s[2][k], s[3][k])`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xoshiro256PlusPlusX4 {
    s: [[u64; 4]; 4],
}

impl Xoshiro256PlusPlusX4 {
    /// Four lanes seeded from `rng`'s next sixteen outputs (lane by lane, four words each;
    /// an all-zero lane, which xoshiro cannot leave, takes a fixed nonzero state instead).
    pub fn from_rng<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut s = [[0u64; 4]; 4];
        for lane in 0..4 {
            for word in &mut s {
                word[lane] = rng.next_u64();
            }
            if s.iter().all(|w| w[lane] == 0) {
                s[0][lane] = super::seed::mix64(lane as u64 + 1);
            }
        }
        Xoshiro256PlusPlusX4 { s }
    }

    /// The next output of each lane (one xoshiro256++ step of all four).
    pub fn next4(&mut self) -> [u64; 4] {
        let s = &mut self.s;
        let mut out = [0u64; 4];
        for (k, o) in out.iter_mut().enumerate() {
            *o = s[0][k]
                .wrapping_add(s[3][k])
                .rotate_left(23)
                .wrapping_add(s[0][k]);
            let t = s[1][k] << 17;
            s[2][k] ^= s[0][k];
            s[3][k] ^= s[1][k];
            s[1][k] ^= s[2][k];
            s[0][k] ^= s[3][k];
            s[2][k] ^= t;
            s[3][k] = s[3][k].rotate_left(45);
        }
        out
    }
}

/// `2⁻²⁴`: a 24-bit integer times this is a uniform draw in `[0, 1)`.
const UNIT: f32 = 1.0 / (1u32 << 24) as f32;

/// `out_i ← 1` when a uniform draw `u_i ∈ [0, 1)` is below `p_i`, else `0`; `p = 0` never
/// fires, `p = 1` always does. Units go by groups of eight, one step of the four lanes each:
/// unit `8g + 2k` takes the top 24 bits of lane `k`'s output (`u = (x >> 40) · 2⁻²⁴`), unit
/// `8g + 2k + 1` the next 24 (`((x >> 16) mod 2²⁴) · 2⁻²⁴`); a last partial group takes one
/// more step and leaves the rest unused.
///
/// # Panics
/// When `out` is shorter than `p`.
pub fn sample_bernoulli_x4(p: &[f32], out: &mut [f32], gen: &mut Xoshiro256PlusPlusX4) {
    assert!(out.len() >= p.len());
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has(crate::cpu::Feature::Avx2) {
        // SAFETY: the CPU has AVX2; `out` is at least as long as `p` (asserted)
        unsafe { sample_avx2(p, out, gen) };
        return;
    }
    sample_portable(p, out, gen);
}

/// The 24-bit integers of one step's eight draws, in unit order.
fn draw_bits(x: [u64; 4]) -> [u32; 8] {
    let mut bits = [0u32; 8];
    for (k, &x) in x.iter().enumerate() {
        bits[2 * k] = (x >> 40) as u32;
        bits[2 * k + 1] = ((x >> 16) & 0xFF_FFFF) as u32;
    }
    bits
}

/// The portable twin of [`sample_avx2`].
fn sample_portable(p: &[f32], out: &mut [f32], gen: &mut Xoshiro256PlusPlusX4) {
    for (pg, og) in p.chunks(8).zip(out.chunks_mut(8)) {
        let bits = draw_bits(gen.next4());
        for ((o, &pi), &b) in og.iter_mut().zip(pg).zip(&bits) {
            *o = if (b as f32) * UNIT < pi { 1.0 } else { 0.0 };
        }
    }
}

/// [`sample_bernoulli_x4`] by AVX2: the four states in four registers, eight draws per step.
///
/// # Safety
/// The CPU has AVX2; `out` is at least as long as `p`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sample_avx2(p: &[f32], out: &mut [f32], gen: &mut Xoshiro256PlusPlusX4) {
    use std::arch::x86_64::*;
    let load = |w: &[u64; 4]| _mm256_loadu_si256(w.as_ptr().cast());
    let (mut s0, mut s1, mut s2, mut s3) = (
        load(&gen.s[0]),
        load(&gen.s[1]),
        load(&gen.s[2]),
        load(&gen.s[3]),
    );
    let mid_mask = _mm256_set1_epi64x(0x00FF_FFFF_0000_0000);
    let (unit, one) = (_mm256_set1_ps(UNIT), _mm256_set1_ps(1.0));
    let n = p.len();
    let mut i = 0;
    while i < n {
        // result = rotl(s0 + s3, 23) + s0, then the state step
        let sum = _mm256_add_epi64(s0, s3);
        let rot = _mm256_or_si256(_mm256_slli_epi64::<23>(sum), _mm256_srli_epi64::<41>(sum));
        let x = _mm256_add_epi64(rot, s0);
        let t = _mm256_slli_epi64::<17>(s1);
        s2 = _mm256_xor_si256(s2, s0);
        s3 = _mm256_xor_si256(s3, s1);
        s1 = _mm256_xor_si256(s1, s2);
        s0 = _mm256_xor_si256(s0, s3);
        s2 = _mm256_xor_si256(s2, t);
        s3 = _mm256_or_si256(_mm256_slli_epi64::<45>(s3), _mm256_srli_epi64::<19>(s3));
        // lane k's 32-bit halves: (x >> 40) low, ((x >> 16) mod 2²⁴) high
        let bits = _mm256_or_si256(
            _mm256_srli_epi64::<40>(x),
            _mm256_and_si256(_mm256_slli_epi64::<16>(x), mid_mask),
        );
        let u = _mm256_mul_ps(_mm256_cvtepi32_ps(bits), unit);
        if i + 8 <= n {
            let pv = _mm256_loadu_ps(p.as_ptr().add(i));
            let fire = _mm256_and_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(u, pv), one);
            _mm256_storeu_ps(out.as_mut_ptr().add(i), fire);
        } else {
            let mut us = [0f32; 8];
            _mm256_storeu_ps(us.as_mut_ptr(), u);
            for (k, &uk) in us.iter().enumerate().take(n - i) {
                out[i + k] = if uk < p[i + k] { 1.0 } else { 0.0 };
            }
        }
        i += 8;
    }
    let store = |w: &mut [u64; 4], v| _mm256_storeu_si256(w.as_mut_ptr().cast(), v);
    store(&mut gen.s[0], s0);
    store(&mut gen.s[1], s1);
    store(&mut gen.s[2], s2);
    store(&mut gen.s[3], s3);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{rng_from_seed, BkRng};
    use rand::{Rng, SeedableRng};

    /// Each lane is the crate's xoshiro256++ (`rand_xoshiro`) from the lane's state.
    #[test]
    fn lanes_are_xoshiro256plusplus() {
        let mut g = Xoshiro256PlusPlusX4::from_rng(&mut rng_from_seed(3));
        let mut singles: Vec<BkRng> = (0..4)
            .map(|k| {
                let mut seed = [0u8; 32];
                for (w, chunk) in seed.chunks_exact_mut(8).enumerate() {
                    chunk.copy_from_slice(&g.s[w][k].to_le_bytes());
                }
                BkRng::from_seed(seed)
            })
            .collect();
        for _ in 0..100 {
            let x = g.next4();
            for (k, r) in singles.iter_mut().enumerate() {
                assert_eq!(x[k], r.next_u64());
            }
        }
    }

    /// The AVX2 draws equal the portable twin's and the definition (unit `8g + 2k` from lane
    /// `k`'s top 24 bits, `8g + 2k + 1` from the next 24), for lengths with and without a
    /// partial last group; the generators end in the same state.
    #[test]
    fn draws_equal_their_definition_on_every_kernel() {
        let mut rng = rng_from_seed(11);
        for n in [1usize, 7, 8, 9, 500, 784] {
            let p: Vec<f32> = (0..n).map(|_| rng.random::<f32>()).collect();
            let g0 = Xoshiro256PlusPlusX4::from_rng(&mut rng);
            let mut twin = g0.clone();
            let want: Vec<f32> = (0..n.div_ceil(8))
                .flat_map(|_| draw_bits(twin.next4()))
                .zip(&p)
                .map(|(b, &pi)| f32::from(u8::from(f64::from(b) / 16_777_216.0 < f64::from(pi))))
                .collect();
            let (mut g, mut out) = (g0.clone(), vec![0.5; n]);
            sample_bernoulli_x4(&p, &mut out, &mut g);
            assert_eq!(out, want, "n = {n}");
            assert_eq!(g, twin, "n = {n}");
            let (mut g, mut out) = (g0.clone(), vec![0.5; n]);
            sample_portable(&p, &mut out, &mut g);
            assert_eq!(out, want, "portable, n = {n}");
            assert_eq!(g, twin, "portable, n = {n}");
        }
    }

    /// `p = 0` never fires and `p = 1` always does; every position of a group fires at rate
    /// `p`; the two draws of one lane output, and draws of different lanes, are independent.
    #[test]
    fn draws_have_the_right_rates_and_are_independent() {
        let mut g = Xoshiro256PlusPlusX4::from_rng(&mut rng_from_seed(4));
        let p = [0.0, 1.0, 0.3, 0.3, 0.5, 0.5, 0.5, 0.5, 0.7, 1.0];
        let mut out = [0.5f32; 10];
        let n = 40_000;
        let (mut on, mut pair, mut across) = ([0.0f64; 10], 0.0, 0.0);
        for _ in 0..n {
            sample_bernoulli_x4(&p, &mut out, &mut g);
            assert_eq!((out[0], out[1], out[9]), (0.0, 1.0, 1.0));
            on.iter_mut()
                .zip(&out)
                .for_each(|(a, &x)| *a += f64::from(x));
            pair += f64::from(out[4] * out[5]); // one output of lane 2
            across += f64::from(out[5] * out[6]); // lanes 2 and 3
        }
        for i in 2..9 {
            let rate = on[i] / n as f64;
            assert!((rate - f64::from(p[i])).abs() < 0.01, "unit {i}: {rate}");
        }
        // P(both) = 0.25 ± 4σ (σ ≈ 0.0022)
        for both in [pair, across] {
            assert!(
                (both / n as f64 - 0.25).abs() < 0.009,
                "{}",
                both / n as f64
            );
        }
    }
}
