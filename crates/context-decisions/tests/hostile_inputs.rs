//! Hostile inputs through the facade `Session`, the way the binding drives it (issue 18): a
//! call's arguments never come back in any text or effect.

use context_decisions::session::{
    effects_json, BoundaryEvent, BoundaryKind, BranchRead, Effect, InventoryRead, Session,
    SettingsRead, StartEvent, StartReason, ToolCallEvent,
};
use pcd_gate::ProjectRead;
use pcd_model::{DecisionProvider, ScopedAllowlist, Settings, ToolInfo};
use std::path::Path;

fn example() -> Vec<ToolInfo> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/inventory.json");
    context_decisions::inventory::read_inventory_file(&path)
        .unwrap()
        .tools
}

fn settings() -> Settings {
    let mut s = Settings::default();
    s.tools.enabled = true;
    s.decision.provider = DecisionProvider::Embedded;
    s
}

/// A started session after its first prompt, with Pi's active set as the effects left it.
fn started(tools: Vec<ToolInfo>) -> (Session, Vec<String>, Vec<Effect>) {
    let (mut session, mut effects) = Session::start(StartEvent {
        reason: StartReason::Startup,
        nonce: "h1".into(),
        settings: SettingsRead::Read(settings()),
        project: ProjectRead::Read(ScopedAllowlist::default()),
        mcp_origins: vec![],
        branch: BranchRead::Entries(Vec::new()),
    });
    let mut active: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    for kind in [
        BoundaryKind::Reconcile,
        BoundaryKind::Prompt {
            text: Some("find the open incidents and page whoever is on call".into()),
        },
    ] {
        let more = session.boundary(BoundaryEvent {
            kind,
            inventory: InventoryRead::Tools(tools.clone()),
            active: active.clone(),
        });
        for e in &more {
            if let Effect::SetActiveTools(next) = e {
                active = next.clone();
            }
        }
        effects.extend(more);
    }
    (session, active, effects)
}

/// Issue 18, finding 6: a `server` argument holding a pasted secret appears nowhere in the
/// verdict, the reason or the effects; the reason names no value of it.
#[test]
fn a_planted_server_argument_appears_in_no_verdict_reason_or_effect() {
    let (mut session, _, _) = started(example());
    for planted in [
        "sk-live-PLANTED-7f3a",
        "  sk-live-PLANTED-7f3a ",
        "mcp__sk_live_PLANTED_7f3a",
    ] {
        for tool in ["read_mcp_resource", "list_mcp_resources"] {
            let call =
                ToolCallEvent::from_input(tool, Some(&serde_json::json!({"server": planted})));
            let outcome = session.tool_call(&call);
            let reason = outcome.block.clone().expect("an unknown server is refused");
            assert!(reason.starts_with("Blocked: "), "{reason}");
            let texts = [
                reason,
                format!("{outcome:?}"),
                effects_json(&outcome.effects).to_string(),
            ];
            for text in texts {
                assert!(
                    !text.to_lowercase().contains("planted"),
                    "{planted} came back: {text}"
                );
            }
        }
    }
    // A server the inventory knows is named by its canonical key.
    let call = ToolCallEvent::from_input(
        "read_mcp_resource",
        Some(&serde_json::json!({"server": " dev-radius "})),
    );
    let outcome = session.tool_call(&call);
    if let Some(reason) = outcome.block {
        assert!(!reason.contains(" dev-radius "), "{reason}");
    }
}
