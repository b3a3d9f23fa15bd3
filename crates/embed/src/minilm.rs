//! all-MiniLM-L6-v2 on the CPU: the model's own WordPiece tokenizer (`tokenizer.json`, through the
//! `tokenizers` crate), a six-layer BERT encoder (candle), mean pooling over the real tokens and
//! L2 normalisation, as sentence-transformers runs it (the reference texts' vectors within 1e-6
//! per component).

use crate::pinned::{PinnedFile, FILES, MODEL_SHA256};
use crate::EmbedError;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use sha2::{Digest, Sha256};
use std::path::Path;

/// The model's dimensions (its `config.json`, which is pinned with the weights).
const HIDDEN: usize = 384;
const HEADS: usize = 12;
const LAYERS: usize = 6;
const INTERMEDIATE: usize = 1536;
const VOCAB: usize = 30522;
const POSITIONS: usize = 512;
const LAYER_NORM_EPS: f64 = 1e-12;

/// The longest input in tokens (with `[CLS]` and `[SEP]`): a longer text is embedded from its
/// first 47 and its last 47 word pieces (about 35 English words each), so a request before or
/// after a pasted log is read either way. all-MiniLM-L6-v2 was trained on sequences of 128 word
/// pieces and sentence-transformers runs it at up to 256 (`max_seq_length`), but a prompt's
/// embedding is waited for and its cost grows faster than its length: the encoder takes 17 ms on
/// two cores at 96 tokens, 23 ms at 128, 54 ms at 256 (BENCHMARKS.md, issue 16's latency), and
/// what the eval sets' prompts are given at the defaults is the same at 96 as at 256. The same
/// bound applies to every text, prompts and candidates alike, so their vectors are of the same
/// kind; [`MiniLm::vectors_key`] names it.
pub const MAX_TOKENS: usize = 96;

/// Of a text longer than [`MAX_TOKENS`], how many of its first word pieces are read (the rest
/// of the bound, less `[CLS]` and `[SEP]`, are its last ones).
const HEAD_TOKENS: usize = (MAX_TOKENS - 2) / 2;

/// The most characters of a text the tokenizer reads: a longer text is read from its first and
/// last halves of this (word pieces past the bound are dropped anyway; this bounds the
/// tokenizer's work).
const MAX_TEXT_CHARS: usize = 16_384;

/// What besides the weights decides a vector: this encoder's arithmetic and the bound. It is part
/// of [`MiniLm::vectors_key`], so cached vectors from another bound or another implementation are
/// never mixed with these. Change it whenever a vector could change.
const ENCODER: &str =
    "pcd-embed encoder 3 (fused f32, at most 96 tokens: the first 47 and the last 47 word pieces)";

/// [`MiniLm::vectors_key`], built once.
static VECTORS_KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The dimension of every vector.
pub const DIMENSION: usize = HIDDEN;

/// The loaded model: tokenizer and encoder. Loading reads and verifies every file; embedding is
/// pure computation.
pub struct MiniLm {
    tokenizer: tokenizers::Tokenizer,
    encoder: Encoder,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm").finish_non_exhaustive()
    }
}

/// Reads one pinned file from `dir`, bounded by its pinned size, and checks its checksum.
fn read_pinned(dir: &Path, file: &PinnedFile) -> Result<Vec<u8>, EmbedError> {
    let path = dir.join(file.name);
    let bytes =
        pcd_bounded_read::read_bounded(&path, file.bytes, pcd_bounded_read::Follow::Symlinks)
            .map_err(|problem| EmbedError::Unreadable {
                file: file.name,
                problem,
            })?;
    if bytes.len() as u64 != file.bytes {
        return Err(EmbedError::WrongSize {
            file: file.name,
            expected: file.bytes,
            found: bytes.len() as u64,
        });
    }
    let digest = hex::encode(Sha256::digest(&bytes));
    if digest != file.sha256 {
        return Err(EmbedError::WrongChecksum { file: file.name });
    }
    Ok(bytes)
}

impl MiniLm {
    /// Loads the model from the folder `cargo xtask fetch-model` installs, verifying each file's
    /// size and SHA-256 before it is used.
    pub fn load(dir: &Path) -> Result<MiniLm, EmbedError> {
        let weights = read_pinned(dir, &FILES[0])?;
        let tokenizer_json = read_pinned(dir, &FILES[1])?;
        read_pinned(dir, &FILES[2])?;
        let mut tokenizer = tokenizers::Tokenizer::from_bytes(&tokenizer_json).map_err(|_| {
            EmbedError::Malformed {
                file: FILES[1].name,
            }
        })?;
        tokenizer
            .with_truncation(None)
            .map_err(|_| EmbedError::Malformed {
                file: FILES[1].name,
            })?;
        tokenizer.with_padding(None);
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu).map_err(
            |_| EmbedError::Malformed {
                file: FILES[0].name,
            },
        )?;
        let encoder = Encoder::load(vb).map_err(|_| EmbedError::Malformed {
            file: FILES[0].name,
        })?;
        Ok(MiniLm { tokenizer, encoder })
    }

    /// What keys cached vectors: the weights' checksum and the encoder (its arithmetic and
    /// [`MAX_TOKENS`]). Two programs whose vectors of a text could differ have different keys.
    pub fn vectors_key(&self) -> &'static str {
        VECTORS_KEY.get_or_init(|| format!("{MODEL_SHA256} {ENCODER}"))
    }

    /// The token ids the model reads for `text` (with `[CLS]` and `[SEP]`): of a text longer
    /// than [`MAX_TOKENS`], its first and last word pieces.
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let text = within_chars(text);
        let encoding = self
            .tokenizer
            .encode(text.as_ref(), true)
            .map_err(|_| EmbedError::Tokenizer)?;
        let ids = encoding.get_ids();
        if ids.len() <= MAX_TOKENS {
            return Ok(ids.to_vec());
        }
        let tail = MAX_TOKENS - 2 - HEAD_TOKENS;
        let mut bounded = Vec::with_capacity(MAX_TOKENS);
        bounded.extend_from_slice(&ids[..1 + HEAD_TOKENS]);
        bounded.extend_from_slice(&ids[ids.len() - 1 - tail..]);
        Ok(bounded)
    }

    /// The unit-length vector of `text`. Each text is encoded alone, so its vector never depends
    /// on what else is embedded with it.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_ids(&self.token_ids(text)?)
    }

    /// The unit-length vector of a sequence of token ids as [`MiniLm::token_ids`] gives them
    /// (with `[CLS]` and `[SEP]`), of any length from 1 to the model's 512 positions: what
    /// [`MiniLm::embed`] runs after the tokenizer. Longer or empty sequences are an
    /// [`EmbedError::Inference`].
    pub fn embed_ids(&self, ids: &[u32]) -> Result<Vec<f32>, EmbedError> {
        self.encoder
            .embed_ids(ids)
            .map_err(|_| EmbedError::Inference)
    }
}

/// `text`, or of a text of more than [`MAX_TEXT_CHARS`] characters its first and last halves of
/// that, joined by a space.
fn within_chars(text: &str) -> std::borrow::Cow<'_, str> {
    let half = MAX_TEXT_CHARS / 2;
    let Some((head_end, _)) = text.char_indices().nth(half) else {
        return text.into();
    };
    match text.char_indices().rev().nth(half - 1) {
        Some((tail_start, _)) if tail_start > head_end => {
            format!("{} {}", &text[..head_end], &text[tail_start..]).into()
        }
        _ => text.into(),
    }
}

/// The BERT encoder with mean pooling.
///
/// The matrix products go through candle (gemm); everything between them (bias, GELU, softmax,
/// residual and layer norm, the heads' split and merge) is plain Rust over the products' slices,
/// fused into one pass each. Each weight matrix is stored transposed, `[in, out]` and contiguous,
/// the layout gemm reads fastest, and a layer's query, key and value are one `[384, 1152]`
/// product.
struct Encoder {
    words: Tensor,
    positions: Tensor,
    token_types: Tensor,
    embeddings_norm: Norm,
    layers: Vec<Layer>,
}

/// One transformer layer.
struct Layer {
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    output: Dense,
    output_norm: Norm,
}

/// A dense layer: its weight transposed (`[in, out]`, contiguous) and its bias.
struct Dense {
    weight: Tensor,
    bias: Vec<f32>,
}

/// A layer norm's scale and shift.
struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// The dense layers under `vbs` as one: their weights side by side (transposed) and their biases
/// one after the other.
fn dense(vbs: &[VarBuilder], inputs: usize, outputs: usize) -> candle_core::Result<Dense> {
    let mut weights = Vec::with_capacity(vbs.len());
    let mut bias = Vec::with_capacity(vbs.len() * outputs);
    for vb in vbs {
        weights.push(vb.get((outputs, inputs), "weight")?);
        bias.extend(vb.get(outputs, "bias")?.to_vec1::<f32>()?);
    }
    let weight = Tensor::cat(&weights, 0)?.t()?.contiguous()?;
    Ok(Dense { weight, bias })
}

/// The layer norm under `vb`.
fn norm(vb: VarBuilder) -> candle_core::Result<Norm> {
    let vb = vb.pp("LayerNorm");
    Ok(Norm {
        weight: vb.get(HIDDEN, "weight")?.to_vec1::<f32>()?,
        bias: vb.get(HIDDEN, "bias")?.to_vec1::<f32>()?,
    })
}

/// The values of an f32 tensor, in order (one copy, a small part of the time next to the
/// product that made them).
fn values(t: &Tensor) -> candle_core::Result<Vec<f32>> {
    t.flatten_all()?.to_vec1::<f32>()
}

impl Dense {
    /// `x · W` for the `n` rows of `x` (`[n, in]`), without the bias: the caller fuses it.
    fn product(&self, x: Vec<f32>, n: usize) -> candle_core::Result<Vec<f32>> {
        let inputs = x.len() / n;
        let x = Tensor::from_vec(x, (n, inputs), &Device::Cpu)?;
        values(&x.matmul(&self.weight)?)
    }
}

impl Norm {
    /// Normalises each row of `x` (rows of `HIDDEN`) in place.
    fn apply(&self, x: &mut [f32]) {
        for row in x.chunks_exact_mut(HIDDEN) {
            let mean = sum(row) / HIDDEN as f32;
            let mut deviations = [0f32; HIDDEN];
            for (d, v) in deviations.iter_mut().zip(row.iter()) {
                *d = (v - mean) * (v - mean);
            }
            let variance = sum(&deviations) / HIDDEN as f32;
            let inverse = 1.0 / (variance + LAYER_NORM_EPS as f32).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * inverse * w + b;
            }
        }
    }
}

/// `e^x`, to within a few units in the last place, in a form the compiler vectorises (no branch,
/// no call, no float-to-integer conversion): `x = k ln 2 + r`, a degree-7 polynomial for `e^r`
/// (Cephes), and `2^k` built from its bits. Inputs below -87 give about 1.6e-38, not 0.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5 * 2^23: adding it rounds to an integer.
    let x = if x < -87.0 { -87.0 } else { x };
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    // The integer k sits in the low bits of `shifted`.
    let k_bits = shifted.to_bits().wrapping_sub(ROUND.to_bits());
    let k = shifted - ROUND;
    // ln 2 in two parts (Cephes), so `r` keeps its low bits.
    let r = x - k * 0.693_359_4 + k * 2.121_944_4e-4;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_335e-3) * r + 4.166_579_6e-2) * r
        + 0.166_666_65)
        * r
        + 0.5;
    let p = p * r * r + r + 1.0;
    p * f32::from_bits(k_bits.wrapping_add(127).wrapping_shl(23))
}

/// The sum of `values` in eight running sums (so it vectorises; the order is fixed, so the
/// result is the same on every run).
#[inline(always)]
fn sum(values: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let chunks = values.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, v) in lanes.iter_mut().zip(chunk) {
            *lane += v;
        }
    }
    lanes.iter().sum::<f32>() + rest.iter().sum::<f32>()
}

/// The largest of `values`, in eight running maxima (so it vectorises).
#[inline(always)]
fn max(values: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let chunks = values.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, v) in lanes.iter_mut().zip(chunk) {
            *lane = if *v > *lane { *v } else { *lane };
        }
    }
    lanes
        .iter()
        .chain(rest)
        .fold(f32::NEG_INFINITY, |m, v| if *v > m { *v } else { m })
}

/// The exact (erf) GELU, `x/2 (1 + erf(x/√2))`, with erf as a rational function of `x`
/// clamped to [-4, 4] (Eigen's and XLA's float erf: within a few units in the last place),
/// branch-free so it vectorises.
#[inline(always)]
fn gelu(x: f32) -> f32 {
    let z = x * std::f32::consts::FRAC_1_SQRT_2;
    let z = z.clamp(-4.0, 4.0);
    let z2 = z * z;
    let p = (((((-2.726_142_3e-10 * z2 + 2.770_681_4e-8) * z2 - 2.101_024e-6) * z2
        - 5.692_506_5e-5)
        * z2
        - 7.349_906_3e-4)
        * z2
        - 2.954_600_1e-3)
        * z2
        - 1.609_603_3e-2;
    let q = (((-1.456_607_2e-5 * z2 - 2.133_740_6e-4) * z2 - 1.682_827e-3) * z2 - 7.373_329_3e-3)
        * z2
        - 1.426_474e-2;
    0.5 * x * (1.0 + z * p / q)
}

impl Encoder {
    fn load(vb: VarBuilder) -> candle_core::Result<Encoder> {
        let e = vb.pp("embeddings");
        let layers = (0..LAYERS)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                Ok(Layer {
                    qkv: dense(
                        &[a.pp("self.query"), a.pp("self.key"), a.pp("self.value")],
                        HIDDEN,
                        HIDDEN,
                    )?,
                    attention_out: dense(&[a.pp("output.dense")], HIDDEN, HIDDEN)?,
                    attention_norm: norm(a.pp("output"))?,
                    intermediate: dense(&[l.pp("intermediate.dense")], HIDDEN, INTERMEDIATE)?,
                    output: dense(&[l.pp("output.dense")], INTERMEDIATE, HIDDEN)?,
                    output_norm: norm(l.pp("output"))?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Encoder {
            words: e.get((VOCAB, HIDDEN), "word_embeddings.weight")?,
            positions: e.get((POSITIONS, HIDDEN), "position_embeddings.weight")?,
            token_types: e.get((2, HIDDEN), "token_type_embeddings.weight")?,
            embeddings_norm: norm(e)?,
            layers,
        })
    }

    /// One sequence (no padding, so no mask) through the encoder, mean-pooled and normalised.
    fn embed_ids(&self, ids: &[u32]) -> candle_core::Result<Vec<f32>> {
        let n = ids.len();
        if n == 0 || n > POSITIONS || ids.iter().any(|&id| id as usize >= VOCAB) {
            return Err(candle_core::Error::Msg(
                "not a sequence the model reads".into(),
            ));
        }
        let device = Device::Cpu;
        let words = values(
            &self
                .words
                .index_select(&Tensor::from_slice(ids, n, &device)?, 0)?,
        )?;
        let positions = values(&self.positions.narrow(0, 0, n)?)?;
        let token_type = values(&self.token_types.narrow(0, 0, 1)?)?;
        let mut x: Vec<f32> = words
            .chunks_exact(HIDDEN)
            .zip(positions.chunks_exact(HIDDEN))
            .flat_map(|(w, p)| {
                w.iter()
                    .zip(p)
                    .zip(&token_type)
                    .map(|((w, p), t)| w + p + t)
            })
            .collect();
        self.embeddings_norm.apply(&mut x);
        for layer in &self.layers {
            x = layer.forward(x, n)?;
        }
        let mut pooled = vec![0f32; HIDDEN];
        for row in x.chunks_exact(HIDDEN) {
            for (p, v) in pooled.iter_mut().zip(row) {
                *p += v;
            }
        }
        for p in &mut pooled {
            *p /= n as f32;
        }
        let length = pooled.iter().map(|p| p * p).sum::<f32>().sqrt().max(1e-12);
        Ok(pooled.into_iter().map(|p| p / length).collect())
    }
}

impl Layer {
    /// One layer over the `n` rows of `x` (`[n, HIDDEN]`).
    fn forward(&self, x: Vec<f32>, n: usize) -> candle_core::Result<Vec<f32>> {
        const HEAD: usize = HIDDEN / HEADS;
        let device = Device::Cpu;
        let qkv = self.qkv.product(x.clone(), n)?;
        // Split the heads: queries `[HEADS, n, HEAD]` (scaled by 1/√HEAD), keys transposed
        // `[HEADS, HEAD, n]`, values `[HEADS, n, HEAD]`, with the biases added.
        let scale = 1.0 / (HEAD as f32).sqrt();
        let mut q = vec![0f32; n * HIDDEN];
        let mut k = vec![0f32; n * HIDDEN];
        let mut v = vec![0f32; n * HIDDEN];
        for (i, row) in qkv.chunks_exact(3 * HIDDEN).enumerate() {
            for h in 0..HEADS {
                for d in 0..HEAD {
                    let c = h * HEAD + d;
                    q[(h * n + i) * HEAD + d] = (row[c] + self.qkv.bias[c]) * scale;
                    k[(h * HEAD + d) * n + i] = row[HIDDEN + c] + self.qkv.bias[HIDDEN + c];
                    v[(h * n + i) * HEAD + d] = row[2 * HIDDEN + c] + self.qkv.bias[2 * HIDDEN + c];
                }
            }
        }
        let q = Tensor::from_vec(q, (HEADS, n, HEAD), &device)?;
        let k = Tensor::from_vec(k, (HEADS, HEAD, n), &device)?;
        let v = Tensor::from_vec(v, (HEADS, n, HEAD), &device)?;
        let mut scores = values(&q.matmul(&k)?)?;
        for row in scores.chunks_exact_mut(n) {
            let max = max(row);
            for s in row.iter_mut() {
                *s = exp(*s - max);
            }
            let total = 1.0 / sum(row);
            for s in row.iter_mut() {
                *s *= total;
            }
        }
        let weights = Tensor::from_vec(scores, (HEADS, n, n), &device)?;
        let context = values(&weights.matmul(&v)?)?;
        // Merge the heads back into rows `[n, HIDDEN]`.
        let mut merged = vec![0f32; n * HIDDEN];
        for h in 0..HEADS {
            for i in 0..n {
                merged[i * HIDDEN + h * HEAD..][..HEAD]
                    .copy_from_slice(&context[(h * n + i) * HEAD..][..HEAD]);
            }
        }
        let mut attended = self.attention_out.product(merged, n)?;
        add_bias_and_residual(&mut attended, &self.attention_out.bias, &x);
        self.attention_norm.apply(&mut attended);
        let mut inner = self.intermediate.product(attended.clone(), n)?;
        for row in inner.chunks_exact_mut(INTERMEDIATE) {
            for (a, b) in row.iter_mut().zip(&self.intermediate.bias) {
                *a = gelu(*a + b);
            }
        }
        let mut out = self.output.product(inner, n)?;
        add_bias_and_residual(&mut out, &self.output.bias, &attended);
        self.output_norm.apply(&mut out);
        Ok(out)
    }
}

/// Adds `bias` to every row of `rows` (`[n, HIDDEN]`) and `residual` (the same shape) to it: the
/// step before each layer norm.
fn add_bias_and_residual(rows: &mut [f32], bias: &[f32], residual: &[f32]) {
    for (row, input) in rows
        .chunks_exact_mut(HIDDEN)
        .zip(residual.chunks_exact(HIDDEN))
    {
        for ((a, b), r) in row.iter_mut().zip(bias).zip(input) {
            *a += b + r;
        }
    }
}
