//! `list` and `gate` over files, run as a user runs them: JSON shapes and exit codes.

use std::path::PathBuf;
use std::process::Command;

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/inventory.json")
}

fn agent_with(settings: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "pcd-cli-views-{}-{}",
        std::process::id(),
        settings.len()
    ));
    std::fs::create_dir_all(dir.join("agent/pi-context-decisions")).unwrap();
    std::fs::create_dir_all(dir.join("project")).unwrap();
    std::fs::write(
        dir.join("agent/pi-context-decisions/settings.json"),
        settings,
    )
    .unwrap();
    dir
}

fn run(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_context-decisions"))
        .args(args)
        .args(["--tools", example().to_str().unwrap()])
        .args(["--agent-dir", dir.join("agent").to_str().unwrap()])
        .args(["--cwd", dir.join("project").to_str().unwrap()])
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn gate_exits_1_when_it_blocks_and_0_when_it_allows() {
    let dir = agent_with(
        r#"{"tools":{"enabled":true,"alwaysAllowedTools":["notes_add"]},"decision":{"provider":"embedded"}}"#,
    );
    let call = |tool: &str| format!(r#"{{"toolName":"{tool}","input":{{}}}}"#);
    let (code, text) = run(&dir, &["gate", "--call", &call("read")]);
    assert_eq!((code, text.as_str()), (Some(0), "allow\n"));
    let (code, _) = run(&dir, &["gate", "--call", &call("notes_add")]);
    assert_eq!(code, Some(0), "allowlisted");
    let (code, text) = run(&dir, &["gate", "--call", &call("bar_chart")]);
    assert_eq!(code, Some(1));
    assert!(text.starts_with("block: Blocked: `bar_chart`"), "{text}");
    assert!(
        text.contains("add `bar_chart` to the global *Always allowed tools* list"),
        "{text}"
    );
    let (code, json) = run(&dir, &["gate", "--json", "--call", &call("bar_chart")]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["verdict"], "block");
    // Filtering off: every call is allowed.
    let off = agent_with("{}");
    assert_eq!(
        run(&off, &["gate", "--call", &call("bar_chart")]).0,
        Some(0)
    );
}

#[test]
fn list_json_has_a_stable_availability_code_per_row() {
    let dir = agent_with(
        r#"{"tools":{"enabled":true,"alwaysAllowedTools":["notes_add"],"alwaysAllowedMcpServers":["docs"]},"decision":{"provider":"embedded"}}"#,
    );
    let (code, json) = run(&dir, &["list", "tools", "--json"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["filtering"], "tools");
    let row = |name: &str| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        row("read")["availability"],
        serde_json::json!({"available": true, "reason": "internal"})
    );
    assert_eq!(
        row("notes_add")["availability"],
        serde_json::json!({"available": true, "reason": "allowlisted", "scope": "global", "list": "tools"})
    );
    assert_eq!(row("mcp__docs__search")["availability"]["list"], "groups");
    assert_eq!(row("bar_chart")["availability"]["available"], false);
    let (_, json) = run(&dir, &["list", "mcp", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let docs = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "mcp__docs")
        .unwrap();
    assert_eq!(
        (docs["tools"].as_u64(), docs["available"].as_u64()),
        (Some(2), Some(2))
    );
}

/// A session file whose only round was edited after it was written (its digest no longer
/// matches): the branch's ledger does not fold.
fn tampered_session(dir: &std::path::Path) -> PathBuf {
    use pcd_ledger::{encode_round, Basis, Boundary, Round, CUSTOM_TYPE};
    let mut round = Round::new(
        "r1",
        pcd_model::Mode::Tools,
        Boundary::InitialPrompt,
        Basis::Scored,
    );
    round.tools = vec!["web_fetch".into()];
    round.considered = vec!["web_fetch".into(), "web_search".into()];
    let mut data = encode_round(&round).unwrap().remove(0);
    data["tools"] = serde_json::json!(["web_fetch", "web_search"]);
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-11-30T00:00:00.000Z", "cwd": "/w"}),
        serde_json::json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data, "id": "00000001", "parentId": null, "timestamp": "2026-11-30T00:00:01.000Z"}),
        serde_json::json!({"type": "message", "message": {"role": "user", "content": "fetch it"}, "id": "00000002", "parentId": "00000001", "timestamp": "2026-11-30T00:00:02.000Z"}),
    ];
    let path = dir.join("tampered.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn list_and_gate_say_when_the_ledger_does_not_fold() {
    let dir = agent_with(
        r#"{"tools":{"enabled":true},"decision":{"provider":"embedded"},"ledger-warning-test":1}"#,
    );
    let session = tampered_session(&dir);
    let session = session.to_str().unwrap();
    let (code, json) = run(&dir, &["list", "tools", "--session", session, "--json"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("could not be trusted")),
        "{v}"
    );
    let call = r#"{"toolName":"web_search","input":{}}"#;
    let (code, text) = run(&dir, &["gate", "--session", session, "--call", call]);
    assert_eq!(code, Some(1), "the edited grant widens nothing: {text}");
    assert!(text.contains("could not be trusted"), "{text}");
}
