//! The cost of the semantic signal: embedding one prompt at the longest bounded length (256
//! tokens) and a short one. Needs the model (`cargo xtask fetch-model`, or `PCD_MODEL_DIR`).
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
    c.bench_function("embed one prompt of 256 tokens", |b| {
        b.iter(|| model.embed(black_box(&long)).unwrap())
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
