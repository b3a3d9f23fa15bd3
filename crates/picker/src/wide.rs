//! The two loops a prompt's adaptation spends its time in, each with a portable version and, on
//! x86-64, one for the vector units every x86-64 CPU of the last decade has (AVX2, and F16C to
//! read binary16), chosen at run time. The example requests' pass streams 7,383 vectors of 384
//! values per prompt text: at single precision that would be 11.3 MB, more than a core's L2 holds,
//! so the pass would wait on memory (1,382 of them took about 100 µs a prompt text); kept at half
//! precision and widened in registers it reads half the bytes.
//!
//! Every version runs the same multiplications and additions in the same order (no fused
//! multiply-add, each lane's sum over the dimensions in turn, binary16 widened exactly), so every
//! CPU gets the same bits, and the tests hold the versions to that.

/// How many vectors [`Blocks::sums`] sums at once: its sums stay in registers (four of AVX2's).
pub(crate) const BLOCK: usize = 32;

/// Unit vectors of one dimension laid out for [`Blocks::sums`]: in blocks of [`BLOCK`] vectors,
/// each block by dimension (the first dimension of its vectors, then the second, ...), the last
/// block padded with zeros, so a prompt's dot products with a block are one pass over the prompt.
#[derive(Debug)]
pub(crate) struct Blocks {
    dimensions: usize,
    count: usize,
    values: Values,
}

/// The values themselves: binary16 bits where the CPU can widen them in registers, single
/// precision where it cannot (the same numbers: widening binary16 is exact).
#[derive(Debug)]
enum Values {
    Single(Vec<f32>),
    Half(Vec<u16>),
}

impl Blocks {
    /// Lays out `vectors` (binary16 bits, `dimensions` values each, one vector after another)
    /// for this CPU. `None` when `dimensions` is 0 or the values are not whole vectors.
    pub(crate) fn new(vectors: &[u16], dimensions: usize) -> Option<Blocks> {
        Blocks::laid_out(vectors, dimensions, half_precision_is_fast())
    }

    /// As [`Blocks::new`], keeping binary16 bits when `half` is true and single precision when
    /// not (whatever the CPU).
    pub(crate) fn laid_out(vectors: &[u16], dimensions: usize, half: bool) -> Option<Blocks> {
        if dimensions == 0 || vectors.len() % dimensions != 0 {
            return None;
        }
        let count = vectors.len() / dimensions;
        let mut bits = vec![0u16; count.div_ceil(BLOCK) * BLOCK * dimensions];
        // Written in order, read from the block's vectors (a few kilobytes, so in cache).
        for (block, out) in vectors
            .chunks(BLOCK * dimensions)
            .zip(bits.chunks_exact_mut(BLOCK * dimensions))
        {
            for (dimension, lanes) in out.chunks_exact_mut(BLOCK).enumerate() {
                for (lane, vector) in lanes.iter_mut().zip(block.chunks_exact(dimensions)) {
                    *lane = vector[dimension];
                }
            }
        }
        let values = if half {
            Values::Half(bits)
        } else {
            Values::Single(widened(&bits))
        };
        Some(Blocks {
            dimensions,
            count,
            values,
        })
    }

    /// How many vectors there are.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// The `index`th vector, widened to single precision.
    #[cfg(test)]
    pub(crate) fn vector(&self, index: usize) -> Vec<f32> {
        let (block, lane) = (index / BLOCK, index % BLOCK);
        (0..self.dimensions)
            .map(|dimension| {
                let at = (block * self.dimensions + dimension) * BLOCK + lane;
                match &self.values {
                    Values::Single(v) => v[at],
                    Values::Half(v) => half::f16::from_bits(v[at]).to_f32(),
                }
            })
            .collect()
    }

    /// Each vector's dot product with `prompt`, in vector order; empty when `prompt` is not of
    /// the vectors' dimension.
    pub(crate) fn sums(&self, prompt: &[f32]) -> Vec<f32> {
        if prompt.len() != self.dimensions {
            return Vec::new();
        }
        let mut sums = match &self.values {
            Values::Single(v) => single_sums(prompt, v),
            Values::Half(v) => half_sums(prompt, v),
        };
        sums.truncate(self.count);
        sums
    }
}

/// Whether this CPU widens binary16 in its vector registers (x86-64 with AVX2 and F16C).
fn half_precision_is_fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Binary16 bits widened to single precision (exactly).
pub(crate) fn widened(bits: &[u16]) -> Vec<f32> {
    let mut out = vec![0.0f32; bits.len()];
    half::slice::HalfFloatSliceExt::convert_to_f32_slice(
        half::slice::HalfBitsSliceExt::reinterpret_cast::<half::f16>(bits),
        &mut out,
    );
    out
}

/// The portable pass over single-precision blocks (`prompt.len()` values a vector).
fn single_sums(prompt: &[f32], blocks: &[f32]) -> Vec<f32> {
    let mut sums = Vec::with_capacity(blocks.len() / prompt.len());
    for block in blocks.chunks_exact(prompt.len() * BLOCK) {
        let mut lanes_sums = [0.0f32; BLOCK];
        for (&x, lanes) in prompt.iter().zip(block.chunks_exact(BLOCK)) {
            for (s, &e) in lanes_sums.iter_mut().zip(lanes) {
                *s += x * e;
            }
        }
        sums.extend_from_slice(&lanes_sums);
    }
    sums
}

/// The pass over binary16 blocks; only ever built by [`Blocks::new`] where
/// [`half_precision_is_fast`], else (tests) widened a block at a time.
fn half_sums(prompt: &[f32], blocks: &[u16]) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if half_precision_is_fast() {
        // SAFETY: `half_sums_f16c` needs AVX2 and F16C, and the CPU has both (checked just
        // above).
        #[allow(unsafe_code)]
        return unsafe { half_sums_f16c(prompt, blocks) };
    }
    let mut sums = Vec::with_capacity(blocks.len() / prompt.len());
    for block in blocks.chunks_exact(prompt.len() * BLOCK) {
        sums.extend(single_sums(prompt, &widened(block)));
    }
    sums
}

/// [`single_sums`] on binary16 blocks, widening eight values at a time in registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
#[allow(unsafe_code)]
fn half_sums_f16c(prompt: &[f32], blocks: &[u16]) -> Vec<f32> {
    use std::arch::x86_64::{
        __m128i, _mm256_add_ps, _mm256_cvtph_ps, _mm256_mul_ps, _mm256_set1_ps, _mm256_setzero_ps,
        _mm256_storeu_ps, _mm_loadu_si128,
    };
    const WIDTH: usize = 8;
    let mut sums = vec![0.0f32; blocks.len() / prompt.len()];
    for (block, out) in blocks
        .chunks_exact(prompt.len() * BLOCK)
        .zip(sums.chunks_exact_mut(BLOCK))
    {
        let mut acc = [_mm256_setzero_ps(); BLOCK / WIDTH];
        for (&x, lanes) in prompt.iter().zip(block.chunks_exact(BLOCK)) {
            let x = _mm256_set1_ps(x);
            for (a, eight) in acc.iter_mut().zip(lanes.chunks_exact(WIDTH)) {
                // SAFETY: `eight` is 8 u16, the 16 bytes an unaligned 128-bit load reads.
                let h = unsafe { _mm_loadu_si128(eight.as_ptr().cast::<__m128i>()) };
                *a = _mm256_add_ps(*a, _mm256_mul_ps(x, _mm256_cvtph_ps(h)));
            }
        }
        for (a, eight) in acc.iter().zip(out.chunks_exact_mut(WIDTH)) {
            // SAFETY: `eight` is 8 f32, the 32 bytes an unaligned 256-bit store writes.
            unsafe { _mm256_storeu_ps(eight.as_mut_ptr(), *a) };
        }
    }
    sums
}

/// `out += prompt W`, `W` a square matrix of `out.len()` rows of `out.len()` values.
pub(crate) fn add_product(prompt: &[f32], w: &[f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `add_product_avx2` needs AVX2 and nothing else, and the CPU has it (checked
        // just above).
        #[allow(unsafe_code)]
        return unsafe { add_product_avx2(prompt, w, out) };
    }
    add_product_portable(prompt, w, out)
}

/// [`add_product_portable`] compiled for AVX2 (eight lanes a step instead of four).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_product_avx2(prompt: &[f32], w: &[f32], out: &mut [f32]) {
    add_product_portable(prompt, w, out)
}

/// Row by row: `W` is read in the order it lies in memory, which is what counts when it comes
/// from memory (as in a decision, after the model's weights went through the caches); a block of
/// columns at a time with their sums in registers was faster warm (the bench) and slower there.
#[inline(always)]
fn add_product_portable(prompt: &[f32], w: &[f32], out: &mut [f32]) {
    for (&p, row) in prompt.iter().zip(w.chunks_exact(out.len())) {
        for (o, &x) in out.iter_mut().zip(row) {
            *o += p * x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Binary16 bits of pseudo-random unit vectors (a fixed linear congruential sequence), some
    /// values subnormal at binary16.
    fn vectors(count: usize, dimensions: usize, seed: u64) -> Vec<u16> {
        let mut state = seed;
        let mut out = Vec::with_capacity(count * dimensions);
        for _ in 0..count {
            let v: Vec<f32> = (0..dimensions)
                .map(|i| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    let u = (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                    if i % 17 == 0 {
                        u * 1e-4
                    } else {
                        u
                    }
                })
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            out.extend(v.iter().map(|x| half::f16::from_f32(x / norm).to_bits()));
        }
        out
    }

    /// Both layouts, and on this CPU its own, give the same bits as a plain dot product of the
    /// widened vectors summed dimension by dimension; a ragged last block is padded, not read.
    #[test]
    fn every_layout_sums_the_same_bits() {
        let d = 384;
        for count in [1, BLOCK, BLOCK + 5, 3 * BLOCK - 1] {
            let bits = vectors(count, d, count as u64);
            let prompt = widened(&vectors(1, d, 7));
            let plain: Vec<f32> = widened(&bits)
                .chunks_exact(d)
                .map(|v| v.iter().zip(&prompt).fold(0.0f32, |s, (e, x)| s + x * e))
                .collect();
            for blocks in [
                Blocks::laid_out(&bits, d, false).unwrap(),
                Blocks::laid_out(&bits, d, true).unwrap(),
                Blocks::new(&bits, d).unwrap(),
            ] {
                assert_eq!(blocks.len(), count);
                let sums = blocks.sums(&prompt);
                assert_eq!(sums.len(), count);
                for (a, b) in sums.iter().zip(&plain) {
                    assert_eq!(a.to_bits(), b.to_bits(), "{a} {b}");
                }
                assert_eq!(blocks.vector(count - 1), widened(&bits[(count - 1) * d..]));
            }
        }
    }

    /// A prompt of another dimension gets no sums; vectors that are not whole are refused.
    #[test]
    fn mismatched_dimensions_are_refused() {
        let bits = vectors(3, 8, 1);
        let blocks = Blocks::new(&bits, 8).unwrap();
        assert!(blocks.sums(&[0.5; 7]).is_empty());
        assert!(Blocks::new(&bits[..23], 8).is_none());
        assert!(Blocks::new(&bits, 0).is_none());
    }

    /// The dispatched product adds the same bits as the plain one, row by row.
    #[test]
    fn the_product_is_the_same_on_every_path() {
        let d = 72;
        let w = widened(&vectors(d, d, 3));
        let prompt = widened(&vectors(1, d, 4));
        let mut fast = widened(&vectors(1, d, 5));
        let mut plain = fast.clone();
        add_product(&prompt, &w, &mut fast);
        for (&p, row) in prompt.iter().zip(w.chunks_exact(d)) {
            for (o, &x) in plain.iter_mut().zip(row) {
                *o += p * x;
            }
        }
        assert_eq!(fast, plain);
        assert!(fast.iter().any(|&x| x != 0.0));
    }
}
