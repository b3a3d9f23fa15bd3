//! The fold: names per second over a branch of chunked rounds (target: at least 5,000,000).
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pcd_ledger::{encode_round, fold, Basis, Boundary, Round, Score, CUSTOM_TYPE};
use pcd_model::Mode;
use serde_json::{json, Value};

/// 40 rounds of 1,000 newly available tools, 2,500 considered and 500 scores each: 160,000 names
/// in 120 entries, as large inventories produce.
fn branch() -> (Vec<Value>, u64) {
    let mut entries = Vec::new();
    let mut names = 0;
    for r in 0..40 {
        let mut round = Round::new(
            format!("r{r}"),
            Mode::Tools,
            Boundary::Prompt,
            Basis::Scored,
        );
        round.tools = (0..1000)
            .map(|i| format!("mcp__server_{r}__tool_{i}"))
            .collect();
        round.considered = (0..2500)
            .map(|i| format!("mcp__server_{r}__tool_{i}"))
            .collect();
        round.scores = (0..500)
            .map(|i| {
                (
                    format!("mcp__server_{r}__tool_{i}"),
                    Score::from_thousandths(i as u16).unwrap(),
                )
            })
            .collect();
        names += round.name_count() as u64;
        for (p, data) in encode_round(&round).unwrap().into_iter().enumerate() {
            entries.push(
                json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data,
                                "id": format!("{:08x}", r * 10 + p), "parentId": null,
                                "timestamp": "2026-11-29T17:13:20.686Z"}),
            );
        }
        entries
            .push(json!({"type": "message", "id": format!("m{r}"), "message": {"role": "user"}}));
    }
    (entries, names)
}

fn bench(c: &mut Criterion) {
    let (entries, names) = branch();
    let mut group = c.benchmark_group("fold");
    group.throughput(Throughput::Elements(names));
    group.bench_function("160k_names_in_40_rounds", |b| {
        // The state is what the caller keeps: dropping it is not part of the fold.
        b.iter_with_large_drop(|| {
            let (state, findings) = fold(&entries);
            assert!(findings.is_empty());
            state
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
