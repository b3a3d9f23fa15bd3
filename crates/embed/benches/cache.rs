//! What the vector cache's trust checks cost a warm start with 1,000 tools (issue 32: under
//! 1 ms): the folder and file checks and one HMAC-SHA-256 per entry, beside the whole warm start
//! (opening a 1,000-vector cache of the model's dimension and reading every vector) and the same
//! reads once the entries are checked. Needs no model.
//!
//! What the checks add to a warm start is the warm start less the open and the reads of
//! entries already checked; and, as `pick` and the addon meet them (other work between opening
//! the cache and looking its entries up), the look-up of a fresh cache's entries less that of
//! entries already checked, both after the same other work.
//!
//! `cargo bench -p pcd-embed --bench cache`

#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use hmac::{Hmac, Mac};
use pcd_bounded_read::replace::{effective_uid, private_folder, replaceable};
use pcd_embed::cache::{CacheSecret, VectorCache};
use pcd_embed::DIMENSION;
use sha2::Sha256;

const TOOLS: usize = 1000;

fn text(i: usize) -> String {
    format!("tool_{i} send an email to a contact with a subject and a body, label mail")
}

fn vector(i: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..DIMENSION).map(|d| ((i * 31 + d) % 97) as f32).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn cache(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.bin");
    let secret = CacheSecret::from_bytes([7; 32]);
    let open = || VectorCache::open(&path, &secret, "model", DIMENSION, 64 << 20).0;
    let mut first = open();
    for i in 0..TOOLS {
        first.insert(&text(i), &vector(i));
    }
    first.save().unwrap();
    let texts: Vec<String> = (0..TOOLS).map(text).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();

    c.bench_function(
        "warm start: open a 1,000-vector cache and read every vector (checks included)",
        |b| {
            b.iter(|| {
                let mut cache = open();
                black_box(cache.get_all(&refs));
            })
        },
    );

    c.bench_function(
        "open a 1,000-vector cache (its folder and file checks included)",
        |b| b.iter(|| black_box(open())),
    );

    c.bench_function(
        "the checks: 1,000 entry HMACs checked together (VectorCache::check)",
        |b| {
            b.iter_batched(
                open,
                |mut cache| {
                    cache.check(&refs);
                    cache // dropped outside the measurement
                },
                BatchSize::LargeInput,
            )
        },
    );

    // As `pick` and the addon meet it: the cache is opened, then the model is loaded and the
    // prompt encoded (tens of MB read) before the candidates' entries are looked up, so their
    // vectors are no longer in the opening core's cache. Stood in for by reading 64 MB.
    let other_work: Vec<u64> = (0..(64 << 20) / 8).collect();
    let open_after_other_work = || {
        let cache = open();
        black_box(other_work.iter().sum::<u64>());
        cache
    };
    c.bench_function(
        "the checks after other work: 1,000 entry HMACs checked together (VectorCache::check)",
        |b| {
            b.iter_batched(
                open_after_other_work,
                |mut cache| {
                    cache.check(&refs);
                    cache // dropped outside the measurement
                },
                BatchSize::LargeInput,
            )
        },
    );

    c.bench_function(
        "look up 1,000 vectors after other work, checks included (get_all on a fresh open)",
        |b| {
            b.iter_batched(
                open_after_other_work,
                |mut cache| {
                    black_box(cache.get_all(&refs));
                    cache
                },
                BatchSize::LargeInput,
            )
        },
    );

    let mut checked = open();
    checked.check(&refs);
    c.bench_function(
        "look up 1,000 vectors after other work, already checked (no HMAC)",
        |b| {
            b.iter_batched(
                || black_box(other_work.iter().sum::<u64>()),
                |_| black_box(checked.get_all(&refs)),
                BatchSize::SmallInput,
            )
        },
    );
    c.bench_function("read 1,000 vectors already checked (no HMAC)", |b| {
        b.iter(|| black_box(checked.get_all(&refs)))
    });

    // The checks on one thread, as `get` makes them for an entry not checked yet, with the
    // folder and file checks of `open`.
    let keyed = <Hmac<Sha256> as Mac>::new_from_slice(&[7; 32]).unwrap();
    let entry = vec![0u8; 32 + 2 * DIMENSION];
    c.bench_function(
        "the checks on one thread: folder and file checks and 1,000 entry HMACs",
        |b| {
            b.iter(|| {
                let uid = effective_uid();
                let folder = std::fs::symlink_metadata(dir.path()).unwrap();
                black_box(private_folder(&folder, uid));
                let file = std::fs::symlink_metadata(&path).unwrap();
                black_box(replaceable(&file, uid));
                for _ in 0..TOOLS {
                    let mut mac = keyed.clone();
                    mac.update(&entry);
                    black_box(mac.finalize().into_bytes());
                }
            })
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = cache
}
criterion_main!(benches);
