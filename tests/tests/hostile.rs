//! Hostile input gets a bounded, clear outcome: deeply nested JSON, names with control or bidi
//! characters or thousands of characters, and an inventory of 100,000 tools through a Session.

use context_decisions::session::{
    BoundaryEvent, BoundaryKind, BranchRead, Effect, InventoryRead, Session, SettingsRead,
    StartEvent, StartReason, ToolCallEvent,
};
use pcd_gate::ProjectRead;
use pcd_model::{parse_inventory, DecisionProvider, Settings, ToolProblem};
use serde_json::Value;

#[test]
fn deeply_nested_json_rejects_only_its_own_tool() {
    let deep_schema = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    let deep_namespace = format!("{}1{}", "{\"a\":".repeat(1_000), "}".repeat(1_000));
    let inventory = format!(
        r#"[{{"name":"before"}},{{"name":"deep_schema","parameters":{deep_schema}}},
            {{"name":"deep_namespace","namespace":{deep_namespace}}},{{"name":"after"}}]"#
    );
    let inv = parse_inventory(&inventory).unwrap();
    let names: Vec<&str> = inv.tools.iter().map(|t| t.name.as_str()).collect();
    // A schema is measured as raw text, never built, so its depth does not matter.
    assert_eq!(names, ["before", "deep_schema", "after"]);
    assert_eq!(inv.rejected.len(), 1);
    assert_eq!(inv.rejected[0].index, 2);
    assert_eq!(inv.rejected[0].problem, ToolProblem::NotAnObject);
    // An element nested 100,000 deep is one rejected entry; an object nested too deeply to read
    // is a clear error for the whole file. Neither crashes.
    let whole = format!("[{}{}]", "[".repeat(100_000), "]".repeat(100_000));
    let inv = parse_inventory(&whole).unwrap();
    assert_eq!((inv.tools.len(), inv.rejected.len()), (0, 1));
    let object = format!("{}{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    assert!(parse_inventory(&object).is_err());
}

#[test]
fn hostile_names_are_rejected_or_shown_safely() {
    let long = "n".repeat(5_000);
    let inventory = serde_json::json!([
        {"name": "bell\u{7}tool"},
        {"name": long},
        {"name": "rtl\u{202e}lmth.exe", "sourceInfo": {"path": "/a/extensions/\u{202e}evil.ts", "source": "auto", "scope": "user", "origin": "top-level"}},
    ])
    .to_string();
    let inv = parse_inventory(&inventory).unwrap();
    assert_eq!(
        inv.rejected.len(),
        2,
        "control characters and 5,000-character names are refused"
    );
    let (mut session, _) = Session::start(StartEvent {
        reason: StartReason::Startup,
        nonce: "h".into(),
        settings: SettingsRead::Read(Settings::default()),
        project: ProjectRead::Absent,
        mcp_origins: vec![],
        branch: BranchRead::Entries(vec![]),
    });
    session.refresh_inventory(InventoryRead::Tools(inv.tools));
    let text = pcd_ui_text::tools_list(&context_decisions::views::inventory_view(&session));
    assert!(
        !text.contains('\u{202e}'),
        "bidi overrides never reach the terminal"
    );
    assert!(text.contains("rtl?lmth.exe"));
}

#[test]
fn an_inventory_of_100000_tools_goes_through_a_session() {
    let tools: Vec<Value> = (0..100_000)
        .map(|i| {
            serde_json::json!({
                "name": format!("tool_{i}"),
                "description": format!("Does task number {i} of the {} pipeline.", ["chart", "fetch", "query", "deploy"][i % 4]),
                "sourceInfo": {"path": format!("/a/extensions/ext{}.ts", i % 300), "source": "auto", "scope": "user", "origin": "top-level"},
            })
        })
        .collect();
    let inv = parse_inventory(&Value::Array(tools).to_string()).unwrap();
    assert_eq!(inv.tools.len(), 100_000);
    let mut settings = Settings::default();
    settings.tools.enabled = true;
    settings.decision.provider = DecisionProvider::Embedded;
    let (mut session, _) = Session::start(StartEvent {
        reason: StartReason::Startup,
        nonce: "big".into(),
        settings: SettingsRead::Read(settings),
        project: ProjectRead::Absent,
        mcp_origins: vec![],
        branch: BranchRead::Entries(vec![]),
    });
    let active: Vec<String> = inv.tools.iter().map(|t| t.name.clone()).collect();
    let effects = session.boundary(BoundaryEvent {
        kind: BoundaryKind::Prompt {
            text: Some("deploy the chart pipeline".into()),
        },
        inventory: InventoryRead::Tools(inv.tools),
        active,
    });
    // The round considered 100,000 candidates and is recorded in chunks of at most 1000 names.
    let entries: Vec<Value> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::AppendEntry(data) => Some(data.clone()),
            _ => None,
        })
        .collect();
    assert!(entries.len() >= 100, "{} parts", entries.len());
    for data in &entries {
        for list in ["tools", "considered", "scores"] {
            assert!(data.get(list).and_then(Value::as_array).map_or(0, Vec::len) <= 1000);
        }
    }
    let branch: Vec<Value> = entries
        .iter()
        .enumerate()
        .map(|(i, data)| serde_json::json!({"type": "custom", "customType": pcd_ledger::CUSTOM_TYPE, "data": data, "id": format!("{i:08x}"), "parentId": null}))
        .collect();
    let (state, findings) = pcd_ledger::fold(&branch);
    assert!(findings.is_empty(), "{findings:?}");
    assert!(
        state.available_tools().count() <= 6,
        "the cap holds at any size"
    );
    let withheld = effects.iter().find_map(|e| match e {
        Effect::SetActiveTools(names) => Some(names.len()),
        _ => None,
    });
    assert!(withheld.unwrap() <= 6);
    let blocked = session.tool_call(&ToolCallEvent {
        tool: "tool_1".into(),
        server: None,
    });
    assert!(blocked.block.is_some() || state.is_tool_available("tool_1"));
}
