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
/// embedding is waited for and its cost grows faster than its length (BENCHMARKS.md, issue 16's
/// latency: about 17 ms on two cores at 96 tokens, 43 ms at 256), and what the eval sets'
/// prompts are given at the defaults is the same at 96 as at 256. The same bound applies to every
/// text, prompts and candidates alike, so their vectors are of the same kind;
/// [`MiniLm::vectors_key`] names it. A prompt read as several texts shares it between them
/// ([`MiniLm::embed_prompt`]).
pub const MAX_TOKENS: usize = 96;

/// The most characters of a text the tokenizer reads: a longer text is read from its first and
/// last halves of this (word pieces past the bound are dropped anyway; this bounds the
/// tokenizer's work).
const MAX_TEXT_CHARS: usize = 16_384;

/// What besides the weights decides a vector: this encoder's arithmetic and the bound. It is part
/// of [`MiniLm::vectors_key`], so cached vectors from another bound or another implementation are
/// never mixed with these. Change it whenever a vector could change.
const ENCODER: &str =
    "pcd-embed encoder 5 (fused f32 in two column blocks, at most 96 tokens: the first 47 and the last 47 word pieces; unit vectors rounded to f16)";

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
        // Each product runs on one thread: the encoder already runs its two halves side by side
        // ([`Dense::apply`]), and gemm splitting them again only adds waits (this process has no
        // other use for gemm).
        gemm::set_threading_threshold(usize::MAX);
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
        self.token_ids_within(text, MAX_TOKENS)
    }

    /// [`MiniLm::token_ids`] within `bound` tokens (at least 3, at most [`MAX_TOKENS`]): of a
    /// longer text, its first `(bound - 2) / 2` word pieces and its last ones.
    fn token_ids_within(&self, text: &str, bound: usize) -> Result<Vec<u32>, EmbedError> {
        let bound = bound.clamp(3, MAX_TOKENS);
        let text = within_chars(text);
        let encoding = self
            .tokenizer
            .encode(text.as_ref(), true)
            .map_err(|_| EmbedError::Tokenizer)?;
        let ids = encoding.get_ids();
        if ids.len() <= bound {
            return Ok(ids.to_vec());
        }
        let head = (bound - 2) / 2;
        let tail = bound - 2 - head;
        let mut bounded = Vec::with_capacity(bound);
        bounded.extend_from_slice(&ids[..1 + head]);
        bounded.extend_from_slice(&ids[ids.len() - 1 - tail..]);
        Ok(bounded)
    }

    /// The unit-length vector of `text`, encoded alone: its vector never depends on what else is
    /// embedded.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_ids(&self.token_ids(text)?)
    }

    /// The unit-length vectors of one prompt's texts (the prompt and the blocks read on their
    /// own), read within [`MAX_TOKENS`] tokens in all and encoded in one pass: each text within
    /// `MAX_TOKENS / texts.len()` tokens (its first and last word pieces, as
    /// [`MiniLm::token_ids`]), so a prompt of several texts costs what one text at the bound
    /// does. A prompt of one text is embedded as [`MiniLm::embed`] embeds it.
    pub fn embed_prompt(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let ids = self.prompt_token_ids(texts)?;
        let sequences: Vec<&[u32]> = ids.iter().map(Vec::as_slice).collect();
        self.encoder
            .embed_batch(&sequences)
            .map_err(|_| EmbedError::Inference)
    }

    /// The token ids [`MiniLm::embed_prompt`] reads for each of a prompt's `texts`: each within
    /// `MAX_TOKENS / texts.len()` tokens (at least 3), so at most [`MAX_TOKENS`] in all for up to
    /// 32 texts.
    pub fn prompt_token_ids(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let bound = (MAX_TOKENS / texts.len().max(1)).max(3);
        texts
            .iter()
            .map(|text| self.token_ids_within(text, bound))
            .collect()
    }

    /// The unit-length vector of a sequence of token ids as [`MiniLm::token_ids`] gives them
    /// (with `[CLS]` and `[SEP]`), of any length from 1 to the model's 512 positions: what
    /// [`MiniLm::embed`] runs after the tokenizer. Longer or empty sequences are an
    /// [`EmbedError::Inference`].
    pub fn embed_ids(&self, ids: &[u32]) -> Result<Vec<f32>, EmbedError> {
        self.encoder
            .embed_batch(&[ids])
            .map_err(|_| EmbedError::Inference)?
            .pop()
            .ok_or(EmbedError::Inference)
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
/// product. Each product is computed in two column blocks and the attention in two groups of six
/// heads, side by side on rayon's pool (each block on one thread: gemm's own threading gained
/// only a fifth on two cores at these shapes).
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

/// A dense layer: its weight transposed (`[in, out]`) in two contiguous column blocks, computed
/// side by side, and its bias.
struct Dense {
    blocks: [Tensor; 2],
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
    let weight = Tensor::cat(&weights, 0)?.t()?;
    let half = bias.len() / 2;
    let block = |start| weight.narrow(1, start, half)?.contiguous();
    Ok(Dense {
        blocks: [block(0)?, block(half)?],
        bias,
    })
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
    /// `f(x · W + b)` for each value of the rows of `x` (`[n, in]`), as rows `[n, out]`. The two
    /// column blocks are computed side by side on rayon's pool, each applying the bias and `f` to
    /// its own values; every value is computed the same way whatever the number of cores.
    fn apply(&self, x: &Tensor, f: impl Fn(f32) -> f32 + Sync) -> candle_core::Result<Vec<f32>> {
        let width = self.bias.len() / 2;
        let block = |b: usize| -> candle_core::Result<Vec<f32>> {
            let mut out = values(&x.matmul(&self.blocks[b])?)?;
            let bias = &self.bias[b * width..][..width];
            for row in out.chunks_exact_mut(width) {
                for (v, b) in row.iter_mut().zip(bias) {
                    *v = f(*v + b);
                }
            }
            Ok(out)
        };
        let (left, right) = rayon::join(|| block(0), || block(1));
        Ok(side_by_side(&left?, &right?, width))
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

    /// Sequences through the encoder in one pass, each mean-pooled and normalised: their rows go
    /// through each product together (the weights are read once for all of them), each attends
    /// only to its own (no padding, so no mask). Runs on rayon's pool, so the halves each layer
    /// splits into are handed between its threads without waking the caller each time.
    fn embed_batch(&self, sequences: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        rayon::scope(|_| self.encode(sequences))
    }

    /// [`Encoder::embed_batch`], on whichever thread calls it.
    fn encode(&self, sequences: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let lengths: Vec<usize> = sequences.iter().map(|ids| ids.len()).collect();
        if sequences.is_empty()
            || sequences.iter().any(|ids| {
                ids.is_empty()
                    || ids.len() > POSITIONS
                    || ids.iter().any(|&id| id as usize >= VOCAB)
            })
        {
            return Err(candle_core::Error::Msg(
                "not a sequence the model reads".into(),
            ));
        }
        let device = Device::Cpu;
        let all: Vec<u32> = sequences.concat();
        let words = values(
            &self
                .words
                .index_select(&Tensor::from_slice(&all, all.len(), &device)?, 0)?,
        )?;
        let longest = lengths.iter().copied().max().unwrap_or(0);
        let positions = values(&self.positions.narrow(0, 0, longest)?)?;
        let token_type = values(&self.token_types.narrow(0, 0, 1)?)?;
        let mut x = Vec::with_capacity(words.len());
        let mut rows = words.chunks_exact(HIDDEN);
        for &n in &lengths {
            for (w, p) in rows.by_ref().take(n).zip(positions.chunks_exact(HIDDEN)) {
                x.extend(
                    w.iter()
                        .zip(p)
                        .zip(&token_type)
                        .map(|((w, p), t)| w + p + t),
                );
            }
        }
        self.embeddings_norm.apply(&mut x);
        for layer in &self.layers {
            x = layer.forward(x, &lengths)?;
        }
        let mut rows = x.chunks_exact(HIDDEN);
        Ok(lengths
            .iter()
            .map(|&n| {
                let mut pooled = vec![0f32; HIDDEN];
                for row in rows.by_ref().take(n) {
                    for (p, v) in pooled.iter_mut().zip(row) {
                        *p += v;
                    }
                }
                for p in &mut pooled {
                    *p /= n as f32;
                }
                let length = pooled.iter().map(|p| p * p).sum::<f32>().sqrt().max(1e-12);
                // Rounded to half precision (a relative error under 5e-4 per component, cosines
                // move in the fourth decimal): what the vector cache keeps, so a vector read from
                // it is exactly the one computed, at half the bytes to read and authenticate.
                pooled
                    .into_iter()
                    .map(|p| half::f16::from_f32(p / length).to_f32())
                    .collect()
            })
            .collect())
    }
}

impl Layer {
    /// One layer over the rows of `x` (`[Σ lengths, HIDDEN]`): sequences of `lengths` rows, one
    /// after the other.
    fn forward(&self, x: Vec<f32>, lengths: &[usize]) -> candle_core::Result<Vec<f32>> {
        let n: usize = lengths.iter().sum();
        let device = Device::Cpu;
        let rows = |v: &[f32], width: usize| Tensor::from_slice(v, (n, width), &device);
        let qkv = self.qkv.apply(&rows(&x, HIDDEN)?, |v| v)?;
        let (left, right) = rayon::join(
            || attention(&qkv, lengths, 0..HEADS / 2),
            || attention(&qkv, lengths, HEADS / 2..HEADS),
        );
        let merged = side_by_side(&left?, &right?, HIDDEN / 2);
        let mut attended = self.attention_out.apply(&rows(&merged, HIDDEN)?, |v| v)?;
        add_residual(&mut attended, &x);
        self.attention_norm.apply(&mut attended);
        let inner = self.intermediate.apply(&rows(&attended, HIDDEN)?, gelu)?;
        let mut out = self.output.apply(&rows(&inner, INTERMEDIATE)?, |v| v)?;
        add_residual(&mut out, &attended);
        self.output_norm.apply(&mut out);
        Ok(out)
    }
}

/// The rows of `left` and `right` (each `width` wide) joined: row `i` is left's row `i`, then
/// right's.
fn side_by_side(left: &[f32], right: &[f32], width: usize) -> Vec<f32> {
    let mut rows = Vec::with_capacity(left.len() + right.len());
    for (l, r) in left.chunks_exact(width).zip(right.chunks_exact(width)) {
        rows.extend_from_slice(l);
        rows.extend_from_slice(r);
    }
    rows
}

/// The width of one attention head.
const HEAD: usize = HIDDEN / HEADS;

/// Self-attention for `heads`, each sequence of `lengths` rows of `qkv` (`[Σ lengths, 3 ×
/// HIDDEN]`: queries, keys and values, biases added) attending to its own rows: rows
/// `[Σ lengths, heads.len() × HEAD]`, the heads' contexts side by side.
fn attention(
    qkv: &[f32],
    lengths: &[usize],
    heads: std::ops::Range<usize>,
) -> candle_core::Result<Vec<f32>> {
    let width = heads.len() * HEAD;
    let mut out = vec![0f32; lengths.iter().sum::<usize>() * width];
    let mut start = 0;
    for &n in lengths {
        let context = sequence_attention(&qkv[start * 3 * HIDDEN..][..n * 3 * HIDDEN], n, &heads)?;
        // `[count, n, HEAD]` into rows `[n, width]`.
        for (g, head) in context.chunks_exact(n * HEAD).enumerate() {
            for (i, row) in head.chunks_exact(HEAD).enumerate() {
                out[(start + i) * width + g * HEAD..][..HEAD].copy_from_slice(row);
            }
        }
        start += n;
    }
    Ok(out)
}

/// Self-attention of one sequence of `n` rows for `heads`: each head's context `[n, HEAD]`, head
/// after head.
fn sequence_attention(
    qkv: &[f32],
    n: usize,
    heads: &std::ops::Range<usize>,
) -> candle_core::Result<Vec<f32>> {
    let device = Device::Cpu;
    let count = heads.len();
    // Split the heads: queries `[count, n, HEAD]` (scaled by 1/√HEAD), keys transposed
    // `[count, HEAD, n]`, values `[count, n, HEAD]`.
    let scale = 1.0 / (HEAD as f32).sqrt();
    let mut q = vec![0f32; count * n * HEAD];
    let mut k = vec![0f32; count * n * HEAD];
    let mut v = vec![0f32; count * n * HEAD];
    for (i, row) in qkv.chunks_exact(3 * HIDDEN).enumerate() {
        for (g, h) in heads.clone().enumerate() {
            for d in 0..HEAD {
                let c = h * HEAD + d;
                q[(g * n + i) * HEAD + d] = row[c] * scale;
                k[(g * HEAD + d) * n + i] = row[HIDDEN + c];
                v[(g * n + i) * HEAD + d] = row[2 * HIDDEN + c];
            }
        }
    }
    let q = Tensor::from_vec(q, (count, n, HEAD), &device)?;
    let k = Tensor::from_vec(k, (count, HEAD, n), &device)?;
    let v = Tensor::from_vec(v, (count, n, HEAD), &device)?;
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
    let weights = Tensor::from_vec(scores, (count, n, n), &device)?;
    values(&weights.matmul(&v)?)
}

/// Adds `residual` (`[n, HIDDEN]`) to `rows` (the same shape): the step before each layer norm.
fn add_residual(rows: &mut [f32], residual: &[f32]) {
    for (a, r) in rows.iter_mut().zip(residual) {
        *a += r;
    }
}
