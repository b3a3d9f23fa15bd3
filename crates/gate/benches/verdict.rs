//! The verdict as the Node addon calls it, with 10,000 registered tools and 1,000 grants on the
//! branch. Target: at most 100 ns median.

#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use pcd_gate::{decide, fixture::fixture, Call, GateContext, LazyScores};
use pcd_model::Mode;
use std::hint::black_box;

fn verdict(c: &mut Criterion) {
    let f = fixture();
    let lazy = LazyScores::default();
    let mut ctx = GateContext::enabled(Mode::Tools, &f.registry, &f.grants, &lazy);
    ctx.branch = Some(&f.index);
    // Available on the branch (allow), internal (allow), considered but withheld (block).
    for (label, name) in [
        ("allow_available", "tool_00015"),
        ("allow_internal", "tool_00020"),
        ("block_withheld", "tool_00016"),
    ] {
        c.bench_function(&format!("verdict_{label}_10000_tools"), |b| {
            b.iter(|| decide(black_box(&ctx), black_box(&Call::tool(name))))
        });
    }
    let mut i = 0usize;
    c.bench_function("verdict_mixed_names_10000_tools", |b| {
        b.iter(|| {
            i = (i + 7919) % f.names.len();
            decide(black_box(&ctx), black_box(&Call::tool(&f.names[i])))
        })
    });
}

criterion_group!(benches, verdict);
criterion_main!(benches);
