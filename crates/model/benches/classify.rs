//! Classifying 10,000 tools of a realistic mix (built-ins, MCP servers, npm, git, loose and
//! inline extensions). Target: at most 5 ms.

#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use pcd_model::{Classifier, SourceInfo, SourceOrigin, SourceScope, ToolInfo, ToolNamespace};
use std::hint::black_box;

fn inventory(n: usize) -> Vec<ToolInfo> {
    (0..n)
        .map(|i| {
            let (path, source, origin, scope) = match i % 6 {
                0 => (
                    "builtin:read".to_owned(),
                    "builtin".to_owned(),
                    "top-level",
                    "temporary",
                ),
                1 | 2 => (
                    "builtin:mcp".to_owned(),
                    "builtin".to_owned(),
                    "top-level",
                    "temporary",
                ),
                3 => (
                    format!("/a/npm/node_modules/@acme/pi-web-{}/index.ts", i % 40),
                    format!("npm:@acme/pi-web-{}@2.0.0", i % 40),
                    "package",
                    "user",
                ),
                4 => (
                    format!("/a/git/github.com/me/pi-bar-{}/index.ts", i % 30),
                    format!("git:github.com/me/pi-bar-{}@v2", i % 30),
                    "package",
                    "project",
                ),
                _ => (
                    format!("/a/extensions/notes{}/index.ts", i % 50),
                    "auto".to_owned(),
                    "top-level",
                    "user",
                ),
            };
            let mut tool = ToolInfo::new(
                &format!("tool_{i}"),
                "Does something useful with the workspace.",
                Some(SourceInfo {
                    path,
                    source,
                    scope: Some(SourceScope::parse(scope)),
                    origin: Some(SourceOrigin::parse(origin)),
                    base_dir: None,
                }),
            );
            if i % 6 == 1 {
                let server = format!("server-{}", i % 100);
                tool.namespace = Some(ToolNamespace {
                    name: format!("mcp__{}", server.replace('-', "_")),
                    description: None,
                    aliases: vec![server],
                });
            }
            tool
        })
        .collect()
}

fn classify(c: &mut Criterion) {
    let tools = inventory(10_000);
    let classifier = Classifier::default();
    c.bench_function("classify_10000_tools", |b| {
        b.iter(|| {
            let (classes, scopes) = classifier.classify_all(black_box(&tools));
            black_box((classes.len(), scopes.len()))
        })
    });
}

criterion_group!(benches, classify);
criterion_main!(benches);
