//! Criterion benches of the mcp.json reader.
//!
//! Reading and validating a 64 KiB `mcp.json` with 1000 servers (target: at most 0.5 ms).

// criterion_group! makes an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use pcd_config_reader::{evaluate, read_mcp_origins, McpFileInput, PiVersion, MAX_MCP_FILE_BYTES};
use std::hint::black_box;

/// 1000 servers, alternating stdio and HTTP with the usual fields, padded to exactly 64 KiB.
fn config() -> String {
    let mut entries = Vec::new();
    for i in 0..1000 {
        entries.push(if i % 2 == 0 {
            format!(r#""s-{i}":{{"command":"npx","args":["-y"]}}"#)
        } else {
            format!(r#""s_{i}":{{"url":"https://h{i}.example/mcp","exposure":"direct"}}"#)
        });
    }
    let mut text = format!(r#"{{"mcpServers":{{{}}}}}"#, entries.join(","));
    assert!(text.len() as u64 <= MAX_MCP_FILE_BYTES, "{}", text.len());
    text.extend(std::iter::repeat_n(
        ' ',
        MAX_MCP_FILE_BYTES as usize - text.len(),
    ));
    text
}

fn bench(c: &mut Criterion) {
    let text = config();
    let check = evaluate(
        McpFileInput::Bytes(text.as_bytes()),
        None,
        PiVersion::NEWEST,
    );
    assert_eq!(check.servers().len(), 1000);
    assert!(check.warnings().is_empty());
    c.bench_function("mcp_json_64KiB_1000_servers_in_memory", |b| {
        b.iter(|| {
            evaluate(
                McpFileInput::Bytes(black_box(text.as_bytes())),
                None,
                PiVersion::NEWEST,
            )
        })
    });
    let dir = std::env::temp_dir().join(format!("pcd-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mcp.json"), &text).unwrap();
    let cwd = dir.join("no-project");
    c.bench_function("mcp_json_64KiB_1000_servers_from_file", |b| {
        b.iter(|| read_mcp_origins(black_box(&dir), &cwd, true, PiVersion::NEWEST))
    });
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
