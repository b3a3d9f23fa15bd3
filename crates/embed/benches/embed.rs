//! The cost of the semantic signal: embedding one prompt at the longest bounded length
//! (`MAX_TOKENS`), as one text and as the three texts a prompt of several blocks gives (which
//! share the bound), a short one, and the encoder over 256 token ids (the earlier bound). Needs
//! the model (`cargo xtask fetch-model`, or `PCD_MODEL_DIR`).
//!
//! `cargo bench -p pcd-embed --bench embed`

#![allow(missing_docs, clippy::print_stderr)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pcd_embed::MiniLm;
use std::path::PathBuf;

fn model() -> Option<MiniLm> {
    let dir = std::env::var_os("PCD_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.cache/models/all-minilm-l6-v2")
        });
    MiniLm::load(&dir).ok()
}

fn embed(c: &mut Criterion) {
    if model().is_some() {
        c.bench_function("load and verify the model (once per process)", |b| {
            b.iter(|| model().unwrap())
        });
    }
    let Some(model) = model() else {
        eprintln!("no model installed: run `cargo xtask fetch-model`");
        return;
    };
    let long =
        "please look at the failing deploy and tell me why the health check times out ".repeat(30);
    assert!(model.token_ids(&long).unwrap().len() == pcd_embed::MAX_TOKENS);
    let bound = format!(
        "embed one prompt at the bound ({} tokens)",
        pcd_embed::MAX_TOKENS
    );
    c.bench_function(&bound, |b| {
        b.iter(|| model.embed(black_box(&long)).unwrap())
    });
    // The most a prompt gives: the prompt and two of its blocks (`prompt_texts`), each past
    // the share of the bound it is read within, encoded in one pass.
    let three = [long.as_str(), long.as_str(), long.as_str()];
    assert!(
        model
            .prompt_token_ids(&three)
            .unwrap()
            .iter()
            .map(Vec::len)
            .sum::<usize>()
            <= pcd_embed::MAX_TOKENS
    );
    c.bench_function("embed one prompt of three texts at the bound", |b| {
        b.iter(|| model.embed_prompt(black_box(&three)).unwrap())
    });
    // The encoder alone over 256 token ids, the bound before 96: the same work as the earlier
    // "embed one prompt of 256 tokens" but the tokenizer's (about 0.1 ms).
    let ids: Vec<u32> = std::iter::once(101)
        .chain(std::iter::repeat_n(2017, 254))
        .chain(std::iter::once(102))
        .collect();
    c.bench_function("encode 256 token ids (the earlier bound)", |b| {
        b.iter(|| model.embed_ids(black_box(&ids)).unwrap())
    });
    c.bench_function("embed one short prompt (9 tokens)", |b| {
        b.iter(|| {
            model
                .embed(black_box("Is it chilly outside in Porto?"))
                .unwrap()
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = embed
}
criterion_main!(benches);
