//! Reading Pi session files: bytes per second (target: at least 150 MB/s) and a 100,000-entry
//! file (target: under 250 ms), index, branch and fold of the ledger on it included.
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pcd_ledger::{encode_round, Basis, Boundary, Round, SessionFile, CUSTOM_TYPE};
use pcd_model::Mode;
use std::io::Write;
use std::path::PathBuf;

/// A session of `entries` entries, one branch, as a coding session writes them: user prompts,
/// assistant messages with tool calls, tool results of a few hundred bytes, a ledger round every
/// 50 entries, and one large tool result (2 MiB, an image) every 10,000 entries.
fn write_session(entries: usize) -> (PathBuf, u64) {
    let path = std::env::temp_dir().join(format!(
        "pcd-ledger-bench-{}-{entries}.jsonl",
        std::process::id()
    ));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(out, r#"{{"type":"session","version":3,"id":"019abc","timestamp":"2026-11-29T17:00:00.000Z","cwd":"/home/user/project"}}"#).unwrap();
    let text = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "
        .repeat(3);
    let image = "iVBORw0KGgo".repeat(190_000);
    let mut parent = String::from("null");
    for i in 0..entries {
        let id = format!("{i:08x}");
        let ts = "2026-11-29T17:13:20.686Z";
        match i % 50 {
            0 => {
                let mut round = Round::new(format!("r{i}"), Mode::Tools, Boundary::Prompt, Basis::Scored);
                round.tools = (0..20).map(|t| format!("mcp__kb__tool_{t}")).collect();
                round.considered = (0..60).map(|t| format!("mcp__kb__tool_{t}")).collect();
                let data = encode_round(&round).unwrap().remove(0);
                writeln!(out, r#"{{"type":"custom","customType":"{CUSTOM_TYPE}","data":{data},"id":"{id}","parentId":{parent},"timestamp":"{ts}"}}"#).unwrap();
            }
            1 => writeln!(out, r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"user","content":[{{"type":"text","text":"{text}"}}]}}}}"#).unwrap(),
            n if n % 2 == 0 => writeln!(out, r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"call_{i}","name":"read","arguments":{{"path":"src/lib.rs"}}}}],"provider":"p","model":"m","usage":{{"input":1200,"output":80}},"stopReason":"toolUse"}}}}"#).unwrap(),
            _ if i % 10_000 == 3 => writeln!(out, r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"toolResult","toolCallId":"call_{i}","content":[{{"type":"image","data":"{image}"}}]}}}}"#).unwrap(),
            _ => writeln!(out, r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"toolResult","toolCallId":"call_{i}","toolName":"read","content":[{{"type":"text","text":"{text}"}}],"isError":false}}}}"#).unwrap(),
        }
        parent = format!("\"{id}\"");
    }
    out.flush().unwrap();
    drop(out);
    let bytes = std::fs::metadata(&path).unwrap().len();
    (path, bytes)
}

fn bench(c: &mut Criterion) {
    let (path, bytes) = write_session(100_000);
    let mut group = c.benchmark_group("session");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(10);
    group.bench_function("100k_entries_index_branch_fold", |b| {
        b.iter(|| {
            let mut file = SessionFile::open(&path).unwrap();
            let branch = file.branch_for(None).unwrap();
            let replay = file.fold_branch(&branch).unwrap();
            assert_eq!(replay.entries, 100_000);
            assert!(replay.findings.is_empty());
            replay.state
        })
    });
    group.finish();
    let _ = std::fs::remove_file(&path);
}

criterion_group!(benches, bench);
criterion_main!(benches);
