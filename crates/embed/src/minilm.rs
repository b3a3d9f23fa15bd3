//! all-MiniLM-L6-v2 on the CPU: the model's own WordPiece tokenizer (`tokenizer.json`, through the
//! `tokenizers` crate), a six-layer BERT encoder (candle), mean pooling over the real tokens and
//! L2 normalisation, as sentence-transformers runs it.

use crate::pinned::{PinnedFile, FILES, MODEL_SHA256};
use crate::EmbedError;
use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{embedding, layer_norm, linear, Embedding, LayerNorm, LayerNormConfig, Linear};
use candle_nn::{ops::softmax_last_dim, VarBuilder};
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

/// The longest input in tokens, as sentence-transformers runs this model (`max_seq_length`).
pub const MAX_TOKENS: usize = 256;

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
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
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

    /// The model's checksum (its weights' SHA-256), which keys cached vectors.
    pub fn checksum(&self) -> &'static str {
        MODEL_SHA256
    }

    /// The token ids the model reads for `text` (with `[CLS]` and `[SEP]`, truncated to
    /// [`MAX_TOKENS`]).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|_| EmbedError::Tokenizer)?;
        Ok(encoding.get_ids().to_vec())
    }

    /// The unit-length vector of `text`. Each text is encoded alone, so its vector never depends
    /// on what else is embedded with it.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let ids = self.token_ids(text)?;
        self.encoder
            .embed_ids(&ids)
            .map_err(|_| EmbedError::Inference)
    }
}

/// The BERT encoder with mean pooling.
struct Encoder {
    words: Embedding,
    positions: Embedding,
    token_types: Embedding,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
}

/// One transformer layer.
struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

fn norm(vb: VarBuilder) -> candle_core::Result<LayerNorm> {
    layer_norm(
        HIDDEN,
        LayerNormConfig {
            eps: LAYER_NORM_EPS,
            ..Default::default()
        },
        vb.pp("LayerNorm"),
    )
}

impl Encoder {
    fn load(vb: VarBuilder) -> candle_core::Result<Encoder> {
        let e = vb.pp("embeddings");
        let layers = (0..LAYERS)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                Ok(Layer {
                    query: linear(HIDDEN, HIDDEN, a.pp("self.query"))?,
                    key: linear(HIDDEN, HIDDEN, a.pp("self.key"))?,
                    value: linear(HIDDEN, HIDDEN, a.pp("self.value"))?,
                    attention_out: linear(HIDDEN, HIDDEN, a.pp("output.dense"))?,
                    attention_norm: norm(a.pp("output"))?,
                    intermediate: linear(HIDDEN, INTERMEDIATE, l.pp("intermediate.dense"))?,
                    output: linear(INTERMEDIATE, HIDDEN, l.pp("output.dense"))?,
                    output_norm: norm(l.pp("output"))?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Encoder {
            words: embedding(VOCAB, HIDDEN, e.pp("word_embeddings"))?,
            positions: embedding(POSITIONS, HIDDEN, e.pp("position_embeddings"))?,
            token_types: embedding(2, HIDDEN, e.pp("token_type_embeddings"))?,
            embeddings_norm: norm(e)?,
            layers,
        })
    }

    /// One sequence (no padding, so no mask) through the encoder, mean-pooled and normalised.
    fn embed_ids(&self, ids: &[u32]) -> candle_core::Result<Vec<f32>> {
        let n = ids.len();
        let device = Device::Cpu;
        let ids = Tensor::from_slice(ids, (1, n), &device)?;
        let positions = Tensor::arange(0u32, n as u32, &device)?.unsqueeze(0)?;
        let types = Tensor::zeros((1, n), DType::U32, &device)?;
        let x = (self.words.forward(&ids)?
            + self.positions.forward(&positions)?
            + self.token_types.forward(&types)?)?;
        let mut x = self.embeddings_norm.forward(&x)?;
        let head = HIDDEN / HEADS;
        let scale = 1.0 / (head as f64).sqrt();
        for layer in &self.layers {
            let split = |t: Tensor| -> candle_core::Result<Tensor> {
                t.reshape((1, n, HEADS, head))?
                    .transpose(1, 2)?
                    .contiguous()
            };
            let q = split(layer.query.forward(&x)?)?;
            let k = split(layer.key.forward(&x)?)?;
            let v = split(layer.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?;
            let weights = softmax_last_dim(&scores)?;
            let context = weights
                .matmul(&v)?
                .transpose(1, 2)?
                .contiguous()?
                .reshape((1, n, HIDDEN))?;
            let attended = layer
                .attention_norm
                .forward(&(layer.attention_out.forward(&context)? + &x)?)?;
            let inner = layer.intermediate.forward(&attended)?.gelu_erf()?;
            x = layer
                .output_norm
                .forward(&(layer.output.forward(&inner)? + &attended)?)?;
        }
        let pooled = x.mean(1)?.squeeze(0)?;
        let length = pooled.sqr()?.sum_all()?.sqrt()?.to_scalar::<f32>()?;
        let pooled = (pooled / f64::from(length.max(1e-12)))?;
        pooled.to_dtype(DType::F32)?.to_vec1::<f32>().and_then(|v| {
            if v.len() == DIMENSION {
                Ok(v)
            } else {
                Err(candle_core::Error::Msg("unexpected dimension".into()))
            }
        })
    }
}
