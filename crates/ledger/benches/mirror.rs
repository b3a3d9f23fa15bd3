//! Mirroring to SQLite: names per second (target: at least 200,000), into a file database in
//! WAL mode, one transaction per file.
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use pcd_ledger::{encode_round, Basis, Boundary, Mirror, Round, Score, CUSTOM_TYPE};
use pcd_model::Mode;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A session with 20 rounds of 1,000 tools, 2,000 considered and 500 scores (70,000 names), and
/// a user message before each round.
fn write_session() -> (PathBuf, u64) {
    let path = std::env::temp_dir().join(format!(
        "pcd-ledger-mirror-bench-{}.jsonl",
        std::process::id()
    ));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(
        out,
        r#"{{"type":"session","version":3,"id":"bench","timestamp":"t","cwd":"/p"}}"#
    )
    .unwrap();
    let (mut n, mut names) = (0u32, 0u64);
    let mut parent = String::from("null");
    let mut line = |out: &mut std::io::BufWriter<std::fs::File>, body: String| {
        n += 1;
        let id = format!("{n:08x}");
        writeln!(
            out,
            r#"{{{body},"id":"{id}","parentId":{parent},"timestamp":"2026-11-29T17:13:20.686Z"}}"#
        )
        .unwrap();
        parent = format!("\"{id}\"");
    };
    for r in 0..20 {
        line(
            &mut out,
            r#""type":"message","message":{"role":"user","content":"hi"}"#.to_owned(),
        );
        let mut round = Round::new(
            format!("r{r}"),
            Mode::Tools,
            Boundary::Prompt,
            Basis::Scored,
        );
        round.tools = (0..1000).map(|i| format!("mcp__s{r}__tool_{i}")).collect();
        round.considered = (0..2000).map(|i| format!("mcp__s{r}__tool_{i}")).collect();
        round.scores = (0..500)
            .map(|i| {
                (
                    format!("mcp__s{r}__tool_{i}"),
                    Score::from_thousandths(i).unwrap(),
                )
            })
            .collect();
        names += round.name_count() as u64;
        for data in encode_round(&round).unwrap() {
            line(
                &mut out,
                format!(r#""type":"custom","customType":"{CUSTOM_TYPE}","data":{data}"#),
            );
        }
    }
    out.flush().unwrap();
    (path, names)
}

fn bench(c: &mut Criterion) {
    let (session, names) = write_session();
    let dir = std::env::temp_dir().join(format!("pcd-ledger-mirror-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let counter = AtomicUsize::new(0);
    let mut group = c.benchmark_group("mirror");
    group.throughput(Throughput::Elements(names));
    group.sample_size(10);
    group.bench_function("70k_names_to_a_fresh_wal_database", |b| {
        b.iter_batched(
            || {
                let db = dir.join(format!("m{}.db", counter.fetch_add(1, Ordering::Relaxed)));
                Mirror::open(&db).unwrap()
            },
            |mut mirror| {
                let report = mirror.mirror_file(&session).unwrap();
                assert_eq!(report.names, names);
                mirror
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&session);
}

criterion_group!(benches, bench);
criterion_main!(benches);
