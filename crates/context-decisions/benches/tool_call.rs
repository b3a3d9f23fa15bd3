//! `Session::tool_call`, the function the Node addon's `toolCall` calls for every tool call, with
//! 10,000 registered tools and 1,000 grants on the branch. Target: at most 100 ns median for a
//! verdict (the allow path allocates nothing).

#![allow(missing_docs)]

use context_decisions::session::{
    BranchRead, InventoryRead, Session, SettingsRead, StartEvent, StartReason, ToolCallEvent,
};
use criterion::{criterion_group, criterion_main, Criterion};
use pcd_gate::ProjectRead;
use pcd_ledger::{encode_round, Basis, Boundary, Round, CUSTOM_TYPE};
use pcd_model::{DecisionProvider, Mode, Settings};
use serde_json::json;
use std::hint::black_box;

fn session() -> Session {
    let mut round = Round::new("r1", Mode::Tools, Boundary::Prompt, Basis::Scored);
    round.tools = (0..10_000)
        .step_by(10)
        .map(|i| format!("tool_{:05}", i + 5))
        .collect();
    round.considered = (0..10_000).map(|i| format!("tool_{i:05}")).collect();
    let entries: Vec<_> = encode_round(&round)
        .unwrap()
        .into_iter()
        .enumerate()
        .map(|(i, data)| json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data, "id": format!("{i:08x}"), "parentId": null}))
        .collect();
    let mut settings = Settings::default();
    settings.tools.enabled = true;
    settings.decision.provider = DecisionProvider::Embedded;
    let (mut session, _) = Session::start(StartEvent {
        reason: StartReason::Startup,
        nonce: "bench".into(),
        settings: SettingsRead::Read(settings),
        project: ProjectRead::Absent,
        mcp_origins: vec![],
        branch: BranchRead::Entries(entries),
    });
    session.refresh_inventory(InventoryRead::Tools(pcd_gate::fixture::tools()));
    session
}

fn tool_call(c: &mut Criterion) {
    let mut session = session();
    for (label, name) in [
        ("allow_available", "tool_00015"),
        ("allow_internal", "tool_00020"),
        ("block_withheld", "tool_00016"),
    ] {
        let event = ToolCallEvent {
            tool: name.into(),
            server: None,
        };
        c.bench_function(&format!("session_tool_call_{label}_10000_tools"), |b| {
            b.iter(|| black_box(session.tool_call(black_box(&event))))
        });
    }
}

criterion_group!(benches, tool_call);
criterion_main!(benches);
