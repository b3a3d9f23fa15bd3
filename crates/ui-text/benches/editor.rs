//! One keystroke in the allowlist editor over a large inventory: the key and the redraw the host
//! does after it. This is what a person waits for while typing a search or moving the cursor.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pcd_model::{parse_tool_entry, GroupKey, Scope, ScopedAllowlist, ToolKind};
use pcd_ui_text::{AllowlistEditor, Availability, EditorKind, Key, ToolRow};

/// 10,000 tools: 20 built-ins, 200 MCP servers and 100 extensions of 30 or 40 tools each (some
/// project-scoped), and 1,000 tools with no group; 500 saved names, 50 saved groups.
fn inventory() -> (Vec<ToolRow>, ScopedAllowlist) {
    let mut rows = Vec::with_capacity(10_000);
    let row = |name: String, kind, group: Option<GroupKey>, scope| ToolRow {
        label: group.as_ref().map(|g| g.as_str()[5..].to_owned()),
        name,
        kind,
        group,
        scope,
        definition_chars: 400,
        availability: Availability::Withheld,
        calls: 0,
    };
    for i in 0..20 {
        rows.push(row(
            format!("builtin_{i}"),
            ToolKind::Internal,
            None,
            Scope::Global,
        ));
    }
    for s in 0..200 {
        let key = GroupKey::for_mcp_server(&format!("server-{s}"));
        let scope = if s % 10 == 0 {
            Scope::Project
        } else {
            Scope::Global
        };
        for t in 0..30 {
            rows.push(row(
                format!("mcp__server_{s}__tool_{t}"),
                ToolKind::Mcp,
                Some(key.clone()),
                scope,
            ));
        }
    }
    for e in 0..100 {
        let key = GroupKey::for_extension(&format!("ext-{e}"));
        for t in 0..29 {
            rows.push(row(
                format!("ext_{e}_tool_{t}"),
                ToolKind::Extension,
                Some(key.clone()),
                Scope::Global,
            ));
        }
    }
    while rows.len() < 10_000 {
        let n = rows.len();
        rows.push(row(
            format!("loose_{n}"),
            ToolKind::Unfiltered,
            None,
            Scope::Global,
        ));
    }
    let saved = ScopedAllowlist {
        tools: (0..500)
            .map(|i| {
                parse_tool_entry(&format!("mcp__server_{}__tool_{}", i % 200, i % 30)).unwrap()
            })
            .collect(),
        groups: (0..50)
            .map(|i| GroupKey::for_extension(&format!("ext-{i}")))
            .collect(),
    };
    (rows, saved)
}

fn keystroke(c: &mut Criterion) {
    let (rows, saved) = inventory();
    assert_eq!(rows.len(), 10_000);
    c.bench_function("editor: open over 10,000 tools", |b| {
        b.iter(|| AllowlistEditor::new(EditorKind::Tools, Scope::Global, black_box(&rows), &saved))
    });
    let mut editor = AllowlistEditor::new(EditorKind::Tools, Scope::Global, &rows, &saved);
    c.bench_function("editor: Down + redraw (10,000 tools, 120x40)", |b| {
        b.iter(|| {
            editor.handle_key(Key::Down);
            black_box(editor.render(120, 40))
        })
    });
    c.bench_function(
        "editor: type a search character + redraw (10,000 tools)",
        |b| {
            b.iter(|| {
                editor.handle_key(Key::Char('7'));
                let lines = editor.render(120, 40);
                editor.handle_key(Key::Backspace);
                black_box(lines)
            })
        },
    );
    c.bench_function("editor: Space on a header + redraw (10,000 tools)", |b| {
        let mut editor = AllowlistEditor::new(EditorKind::Tools, Scope::Global, &rows, &saved);
        editor.handle_key(Key::Down);
        b.iter(|| {
            editor.handle_key(Key::Space);
            black_box(editor.render(120, 40))
        })
    });
}

criterion_group!(benches, keystroke);
criterion_main!(benches);
