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

/// The example inventory with tools whose names the ledger cannot record (a space, a no-break
/// space) next to the others: an extension's and an MCP server's.
fn with_unrecordable() -> Vec<ToolInfo> {
    let extra = pcd_model::parse_inventory(
        r#"[
        {"name": "fetch page", "description": "Fetch a web page and return its text.",
         "sourceInfo": {"path": "/a/extensions/fetch.ts", "source": "auto", "scope": "user", "origin": "top-level"}},
        {"name": "mcp__dev_radius__page\u00a0oncall", "description": "Page whoever is on call.",
         "namespace": {"name": "mcp__dev_radius", "aliases": ["dev-radius"]},
         "sourceInfo": {"path": "builtin:mcp", "source": "builtin"}}
    ]"#,
    )
    .unwrap();
    assert!(
        extra.rejected.is_empty(),
        "the inventory reader accepts them"
    );
    let mut tools = example();
    tools.extend(extra.tools);
    tools
}

const UNRECORDABLE: [&str; 2] = ["fetch page", "mcp__dev_radius__page\u{a0}oncall"];

/// Issue 18, finding 4: a tool whose name the ledger cannot record made every round fail. It is
/// now never decided or granted, never removed from Pi's active set, reported once, blocked
/// when called, and every other tool is decided as usual.
#[test]
fn a_tool_the_ledger_cannot_record_is_left_alone_and_reported_once() {
    for mode in [pcd_model::Mode::Tools, pcd_model::Mode::Mcp] {
        let tools = with_unrecordable();
        let mut settings = settings();
        settings.tools.mode = mode;
        let (mut session, effects) = Session::start(StartEvent {
            reason: StartReason::Startup,
            nonce: "u1".into(),
            settings: SettingsRead::Read(settings),
            project: ProjectRead::Read(ScopedAllowlist::default()),
            mcp_origins: vec![],
            branch: BranchRead::Entries(Vec::new()),
        });
        let mut all = effects;
        let mut active: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        let prompts = [
            "find the open incidents",
            "fetch the status page and chart it",
            "page whoever is on call",
        ];
        let mut kinds = vec![BoundaryKind::Reconcile];
        for p in prompts {
            kinds.push(BoundaryKind::Prompt {
                text: Some(p.into()),
            });
            kinds.push(BoundaryKind::ToolRound);
        }
        for kind in kinds {
            let effects = session.boundary(BoundaryEvent {
                kind,
                inventory: InventoryRead::Tools(tools.clone()),
                active: active.clone(),
            });
            for e in &effects {
                if let Effect::SetActiveTools(next) = e {
                    active = next.clone();
                }
            }
            all.extend(effects);
        }
        let warnings: Vec<&String> = all
            .iter()
            .filter_map(|e| match e {
                Effect::Warn(w) => Some(w),
                _ => None,
            })
            .collect();
        assert_eq!(warnings.len(), 1, "{mode:?}: reported once: {warnings:?}");
        assert!(warnings[0].contains("`fetch page`"), "{}", warnings[0]);
        assert!(
            warnings[0].starts_with("2 tools have names"),
            "{}",
            warnings[0]
        );
        let entries: Vec<&serde_json::Value> = all
            .iter()
            .filter_map(|e| match e {
                Effect::AppendEntry(data) => Some(data),
                _ => None,
            })
            .collect();
        assert!(
            !entries.is_empty(),
            "{mode:?}: the other tools were decided"
        );
        for data in &entries {
            let text = data.to_string();
            for name in UNRECORDABLE {
                assert!(
                    !text.contains(name),
                    "{mode:?}: {name} was recorded: {text}"
                );
            }
        }
        for name in UNRECORDABLE {
            assert!(
                active.iter().any(|a| a == name),
                "{mode:?}: {name} stays in Pi's active set"
            );
            let outcome = session.tool_call(&ToolCallEvent::from_input(name, None));
            let reason = outcome.block.expect("its calls are blocked");
            assert!(reason.contains("cannot record"), "{reason}");
            assert!(outcome.effects.is_empty() && outcome.pending.is_none());
        }
        // The tools the extension decided against are still withheld: filtering works.
        assert!(active.len() < tools.len(), "{mode:?}: {active:?}");
    }
}
