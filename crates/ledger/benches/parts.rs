//! One round of many parts (issue 18, finding 3): 25,000, 100,000 and 400,000 parts of one name
//! each, folded from memory and, with `--features io`, replayed from a session file (index,
//! branch and fold). Targets: 100,000 parts replay in under a second, and four times the parts
//! cost at most five times the time.
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use pcd_ledger::{encode_round_chunked, fold, Basis, Boundary, Round, CUSTOM_TYPE};
use pcd_model::Mode;
use serde_json::{json, Value};

const SIZES: [usize; 3] = [25_000, 100_000, 400_000];

/// The `data` of each part of one round of `parts` names, one name a part.
fn parts_of(parts: usize) -> Vec<Value> {
    let mut round = Round::new("many", Mode::Tools, Boundary::Prompt, Basis::Unscored);
    round.tools = (0..parts).map(|i| format!("mcp__kb__tool_{i}")).collect();
    encode_round_chunked(&round, 1).unwrap()
}

/// Entries as `getBranch()` returns them.
fn branch(parts: usize) -> Vec<Value> {
    parts_of(parts)
        .into_iter()
        .enumerate()
        .map(|(i, data)| {
            json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data,
                   "id": format!("{i:08x}"), "parentId": null,
                   "timestamp": "2026-11-29T17:13:20.686Z"})
        })
        .collect()
}

/// The same round as a Pi session file (7.5 MB, 30 MB and 121 MB).
#[cfg(feature = "io")]
fn session_file(parts: usize) -> std::path::PathBuf {
    use std::io::Write;
    let path = std::env::temp_dir().join(format!(
        "pcd-ledger-bench-parts-{}-{parts}.jsonl",
        std::process::id()
    ));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(out, r#"{{"type":"session","version":3,"id":"019abc","timestamp":"2026-11-29T17:00:00.000Z","cwd":"/home/user/project"}}"#).unwrap();
    let mut parent = String::from("null");
    for (i, data) in parts_of(parts).into_iter().enumerate() {
        let id = format!("{i:08x}");
        writeln!(out, r#"{{"type":"custom","customType":"{CUSTOM_TYPE}","data":{data},"id":"{id}","parentId":{parent},"timestamp":"2026-11-29T17:13:20.686Z"}}"#).unwrap();
        parent = format!("\"{id}\"");
    }
    out.flush().unwrap();
    path
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("one_round_fold");
    group.sample_size(10);
    for parts in SIZES {
        let entries = branch(parts);
        group.throughput(Throughput::Elements(parts as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(parts),
            &entries,
            |b, entries| {
                b.iter_with_large_drop(|| {
                    let (state, findings) = fold(entries);
                    assert!(findings.is_empty());
                    assert_eq!(state.rounds().len(), 1);
                    state
                })
            },
        );
    }
    group.finish();
    #[cfg(feature = "io")]
    replay(c);
}

#[cfg(feature = "io")]
fn replay(c: &mut Criterion) {
    use pcd_ledger::SessionFile;
    let mut group = c.benchmark_group("one_round_replay");
    group.sample_size(10);
    for parts in SIZES {
        let path = session_file(parts);
        group.throughput(Throughput::Elements(parts as u64));
        group.bench_with_input(BenchmarkId::from_parameter(parts), &path, |b, path| {
            b.iter_with_large_drop(|| {
                let mut file = SessionFile::open(path).unwrap();
                let branch = file.branch_for(None).unwrap();
                let replay = file.fold_branch(&branch).unwrap();
                assert_eq!(replay.entries, parts);
                assert!(replay.findings.is_empty());
                replay
            })
        });
        let _ = std::fs::remove_file(&path);
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
