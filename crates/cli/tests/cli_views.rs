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
    assert_eq!((code, text.as_str()), (Some(0), "allow: built-in\n"));
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

/// A session whose one round made `web_fetch` available and withheld `web_search`.
fn session_withholding_web_search(dir: &std::path::Path) -> PathBuf {
    session_with_rounds(dir, &[])
}

/// A session whose rounds are `before` (each granting `read_later`) and then one round that made
/// `web_fetch` available and withheld `web_search`.
fn session_with_rounds(dir: &std::path::Path, before: &[pcd_ledger::Basis]) -> PathBuf {
    use pcd_ledger::{encode_round, Basis, Boundary, Round, CUSTOM_TYPE};
    let mut lines = vec![
        serde_json::json!({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-11-30T00:00:00.000Z", "cwd": "/w"}),
    ];
    let mut parent = serde_json::Value::Null;
    for (i, basis) in before.iter().enumerate() {
        let mut round = Round::new(
            format!("b{i}"),
            pcd_model::Mode::Tools,
            Boundary::InitialPrompt,
            *basis,
        );
        round.tools = vec!["read_later".into()];
        let id = format!("0000010{i}");
        let data = encode_round(&round).unwrap().remove(0);
        lines.push(serde_json::json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data, "id": id, "parentId": parent, "timestamp": "2026-11-30T00:00:01.000Z"}));
        parent = serde_json::json!(id);
    }
    let mut round = Round::new(
        "r1",
        pcd_model::Mode::Tools,
        Boundary::InitialPrompt,
        Basis::Scored,
    );
    round.tools = vec!["web_fetch".into()];
    round.considered = vec!["web_fetch".into(), "web_search".into()];
    let data = encode_round(&round).unwrap().remove(0);
    lines.push(serde_json::json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data, "id": "00000001", "parentId": parent, "timestamp": "2026-11-30T00:00:01.000Z"}));
    let path = dir.join(format!("withheld-{}.jsonl", before.len()));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn gate_always_gives_its_reason_and_says_when_no_settings_file_was_found() {
    // No settings file: filtering is off (its default), though the branch withheld web_search.
    let dir = std::env::temp_dir().join(format!("pcd-cli-views-{}-nosettings", std::process::id()));
    std::fs::create_dir_all(dir.join("agent")).unwrap();
    std::fs::create_dir_all(dir.join("project")).unwrap();
    let session = session_withholding_web_search(&dir);
    let session = session.to_str().unwrap();
    let call = r#"{"toolName":"web_search","input":{}}"#;
    let (code, text) = run(&dir, &["gate", "--session", session, "--call", call]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.starts_with("allow: filtering is off\n"), "{text}");
    assert!(
        text.contains("no settings file (pi-context-decisions/settings.json) was found in the agent folder, so tool filtering is off"),
        "{text}"
    );
    let (_, json) = run(
        &dir,
        &["gate", "--json", "--session", session, "--call", call],
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["reason"], "filtering is off", "{v}");
    assert_eq!(v["availability"]["reason"], "filtering_off", "{v}");
    let (_, text) = run(&dir, &["list", "tools", "--session", session]);
    assert!(
        text.contains("no settings file (pi-context-decisions/settings.json)"),
        "{text}"
    );
    // With the settings on, the same call is blocked, and an allowed one names its round.
    let on = agent_with(
        r#"{"tools":{"enabled":true},"decision":{"provider":"embedded"},"reason-test":1}"#,
    );
    let session = session_withholding_web_search(&on);
    let session = session.to_str().unwrap();
    let (code, _) = run(&on, &["gate", "--session", session, "--call", call]);
    assert_eq!(code, Some(1));
    let fetch = r#"{"toolName":"web_fetch","input":{}}"#;
    let (code, text) = run(&on, &["gate", "--session", session, "--call", fetch]);
    assert_eq!(
        (code, text.as_str()),
        (Some(0), "allow: round 1, at a prompt\n")
    );
}

#[test]
fn rounds_the_user_did_not_start_are_not_counted() {
    let dir = agent_with(
        r#"{"tools":{"enabled":true},"decision":{"provider":"embedded"},"round-number-test":1}"#,
    );
    use pcd_ledger::Basis;
    let session = session_with_rounds(&dir, &[Basis::Baseline, Basis::Allowlist]);
    let fetch = r#"{"toolName":"web_fetch","input":{}}"#;
    let (code, text) = run(
        &dir,
        &[
            "gate",
            "--session",
            session.to_str().unwrap(),
            "--call",
            fetch,
        ],
    );
    assert_eq!(
        (code, text.as_str()),
        (Some(0), "allow: round 1, at a prompt\n")
    );
}

#[test]
fn not_scored_names_its_cause() {
    // Group mode with fewer groups (11 in the example) than Minimum candidates.
    let dir = agent_with(
        r#"{"tools":{"enabled":true,"mode":"mcp"},"decision":{"provider":"embedded","minimumCandidates":12}}"#,
    );
    let (_, text) = run(&dir, &["list", "mcp"]);
    assert!(
        text.contains("available: not scored: 11 groups, fewer than Minimum candidates (12; lower it in Advanced)"),
        "{text}"
    );
    // No decision model selected.
    let dir = agent_with(r#"{"tools":{"enabled":true},"no-model-test":1}"#);
    let (_, text) = run(&dir, &["list", "tools"]);
    assert!(
        text.contains("available: not scored, no decision model is selected"),
        "{text}"
    );
}
