//! The real model against the upstream runtime: the same token ids and the same vectors as
//! sentence-transformers gives for the pinned files (`tests/data/reference.json`, written by
//! `data/reference.py`), and a refusal of files that are not the pinned ones.
//!
//! The model folder is `PCD_MODEL_DIR`, or the one `cargo xtask fetch-model` installs in the
//! repository's `.cache`. Without it these tests say so and pass, unless `PCD_REQUIRE_MODEL` is
//! set (as `cargo xtask ci` sets it), when its absence fails them.

#![allow(clippy::print_stderr)] // says on stderr when the model is not installed

use pcd_embed::{EmbedError, MiniLm, DIMENSION, MAX_TOKENS};
use std::path::PathBuf;

fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PCD_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.cache/models/all-minilm-l6-v2")
        });
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("PCD_REQUIRE_MODEL").is_none(),
        "PCD_REQUIRE_MODEL is set but no model is installed at {}: run `cargo xtask fetch-model`",
        dir.display()
    );
    eprintln!(
        "note: no model at {}; run `cargo xtask fetch-model` to test it",
        dir.display()
    );
    None
}

#[derive(serde::Deserialize)]
struct Reference {
    texts: Vec<String>,
    ids: Vec<Vec<u32>>,
    vectors: Vec<Vec<f32>>,
}

#[test]
fn tokens_and_vectors_match_the_upstream_runtime() {
    let Some(dir) = model_dir() else { return };
    let model = MiniLm::load(&dir).expect("the pinned model loads");
    let reference: Reference =
        serde_json::from_str(include_str!("data/reference.json")).expect("reference parses");
    for ((text, ids), expected) in reference
        .texts
        .iter()
        .zip(&reference.ids)
        .zip(&reference.vectors)
    {
        // The reference runs at sentence-transformers' 256 tokens (every reference text fits);
        // past MAX_TOKENS the model reads the first 47 and the last 47 word pieces between
        // [CLS] and [SEP].
        let mut bounded = ids.clone();
        if bounded.len() > MAX_TOKENS {
            let head = (MAX_TOKENS - 2) / 2;
            bounded = ids[..1 + head].to_vec();
            bounded.extend_from_slice(&ids[ids.len() - (MAX_TOKENS - 1 - head)..]);
            assert_eq!(bounded.len(), MAX_TOKENS);
        }
        assert_eq!(
            model.token_ids(text).unwrap(),
            bounded,
            "token ids of {text:?}"
        );
        // The encoder against the reference at the reference's own length (up to 256).
        let vector = model.embed_ids(ids).unwrap();
        assert_eq!(vector.len(), DIMENSION);
        let worst = vector
            .iter()
            .zip(expected)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 2e-4, "vector of {text:?} differs by {worst}");
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
        if ids.len() <= MAX_TOKENS {
            assert_eq!(model.embed(text).unwrap(), vector, "{text:?}");
        }
    }
    assert!(
        reference.ids.iter().any(|ids| ids.len() > MAX_TOKENS),
        "a reference text is longer than the bound"
    );
}

#[test]
fn a_long_text_is_read_from_both_ends() {
    let Some(dir) = model_dir() else { return };
    let model = MiniLm::load(&dir).unwrap();
    let log = "    at Worker.process (src/queue.js:10:5)\n".repeat(40);
    let after = |request: &str| model.embed(&format!("{log}\n{request}")).unwrap();
    let before = |request: &str| model.embed(&format!("{request}\n\n{log}")).unwrap();
    assert_eq!(
        model.token_ids(&format!("{log}x")).unwrap().len(),
        MAX_TOKENS
    );
    // A request after the log, and one before it, both change what is read.
    assert_ne!(
        after("is it chilly in Porto"),
        after("restart the billing deployment")
    );
    assert_ne!(
        before("is it chilly in Porto"),
        before("restart the billing deployment")
    );
    // A text far past the tokenizer's bound is still read, from both ends.
    let huge = "word ".repeat(10_000);
    assert_ne!(
        model.embed(&format!("{huge}weather")).unwrap(),
        model.embed(&format!("{huge}deploy")).unwrap()
    );
}

#[test]
fn sequences_the_model_cannot_read_are_an_error() {
    let Some(dir) = model_dir() else { return };
    let model = MiniLm::load(&dir).unwrap();
    assert_eq!(model.embed_ids(&[]), Err(EmbedError::Inference));
    assert_eq!(model.embed_ids(&[101; 513]), Err(EmbedError::Inference));
    assert_eq!(
        model.embed_ids(&[101, 30522, 102]),
        Err(EmbedError::Inference)
    );
    assert!(model.embed_ids(&[101; 512]).is_ok());
}

#[test]
fn the_same_text_gives_the_same_vector_bit_for_bit() {
    let Some(dir) = model_dir() else { return };
    let model = MiniLm::load(&dir).unwrap();
    let a = model.embed("send an email to the release list").unwrap();
    let _ = model
        .embed("something else in between, much longer than the first text")
        .unwrap();
    let b = model.embed("send an email to the release list").unwrap();
    assert_eq!(
        a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        b.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
}

/// A copy of the model folder with one file replaced by `bytes`.
fn altered_copy(dir: &std::path::Path, name: &str, bytes: &[u8]) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for file in pcd_embed::pinned::FILES {
        let from = dir.join(file.name);
        if from.exists() {
            std::fs::copy(&from, copy.path().join(file.name)).unwrap();
        }
    }
    std::fs::write(copy.path().join(name), bytes).unwrap();
    copy
}

#[test]
fn weights_that_are_not_the_pinned_ones_are_refused() {
    let Some(dir) = model_dir() else { return };
    let weights = std::fs::read(dir.join("model.safetensors")).unwrap();
    // Truncated.
    let copy = altered_copy(&dir, "model.safetensors", &weights[..weights.len() / 2]);
    assert!(matches!(
        MiniLm::load(copy.path()),
        Err(EmbedError::WrongSize {
            file: "model.safetensors",
            ..
        })
    ));
    // One byte flipped, same size.
    let mut flipped = weights.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    let copy = altered_copy(&dir, "model.safetensors", &flipped);
    assert!(matches!(
        MiniLm::load(copy.path()),
        Err(EmbedError::WrongChecksum {
            file: "model.safetensors"
        })
    ));
    // A tokenizer that is not the pinned one.
    let copy = altered_copy(&dir, "tokenizer.json", b"{}");
    assert!(matches!(
        MiniLm::load(copy.path()),
        Err(EmbedError::WrongSize {
            file: "tokenizer.json",
            ..
        })
    ));
}

#[test]
fn a_missing_folder_is_a_clear_error() {
    let empty = tempfile::tempdir().unwrap();
    let error = MiniLm::load(empty.path()).unwrap_err();
    assert!(matches!(
        error,
        EmbedError::Unreadable {
            file: "model.safetensors",
            ..
        }
    ));
    assert_eq!(
        error.to_string(),
        "the model file model.safetensors does not exist"
    );
}

#[test]
fn a_prompts_texts_share_the_bound_and_are_read_in_one_pass() {
    let Some(dir) = model_dir() else { return };
    let model = MiniLm::load(&dir).unwrap();
    let log = "    at Worker.process (src/queue.js:10:5)\n".repeat(40);
    let request = "why does the billing worker crash? page the on-call engineer";
    let whole = format!("{request}\n\n{log}");
    // One text is read as `embed` reads it, bit for bit.
    assert_eq!(
        model.embed_prompt(&[&whole]).unwrap(),
        vec![model.embed(&whole).unwrap()]
    );
    assert_eq!(
        model.prompt_token_ids(&[&whole]).unwrap(),
        vec![model.token_ids(&whole).unwrap()]
    );
    // Several texts share MAX_TOKENS, each read from both ends.
    for texts in [vec![&*whole, &*log], vec![&*whole, request, &*log]] {
        let ids = model.prompt_token_ids(&texts).unwrap();
        assert!(
            ids.iter().map(Vec::len).sum::<usize>() <= MAX_TOKENS,
            "{ids:?}"
        );
        for (ids, text) in ids.iter().zip(&texts) {
            let alone = model.token_ids(text).unwrap();
            assert_eq!(ids.first(), Some(&101));
            assert_eq!(ids.last(), Some(&102));
            if ids.len() < alone.len() {
                let head = (ids.len() - 2) / 2;
                assert_eq!(ids[..=head], alone[..=head], "the text's first word pieces");
                let tail = ids.len() - 1 - head;
                assert_eq!(
                    ids[ids.len() - tail..],
                    alone[alone.len() - tail..],
                    "its last ones"
                );
            } else {
                assert_eq!(ids, &alone);
            }
        }
    }
    // Encoded together, each text's vector is its own: within rounding of the text encoded
    // alone at the same bound (the request fits in it whole), and the same on every run.
    let together = model.embed_prompt(&[&whole, request, &log]).unwrap();
    assert_eq!(together.len(), 3);
    let alone = model.embed(request).unwrap();
    let worst = together[1]
        .iter()
        .zip(&alone)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(worst < 1e-5, "the request's vector moved by {worst}");
    assert_eq!(
        together,
        model.embed_prompt(&[&whole, request, &log]).unwrap()
    );
    for (vector, ids) in together
        .iter()
        .zip(model.prompt_token_ids(&[&whole, request, &log]).unwrap())
    {
        let worst = vector
            .iter()
            .zip(model.embed_ids(&ids).unwrap())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst < 1e-5,
            "a text's vector depends on the others by {worst}"
        );
    }
    assert_eq!(model.embed_prompt(&[]).unwrap(), Vec::<Vec<f32>>::new());
}
