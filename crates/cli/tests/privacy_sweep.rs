//! Privacy as a property: secrets planted in every input the program reads (`mcp.json` env,
//! headers, URLs, args and OAuth; tool schemas, annotations, namespace instructions and paths;
//! tool arguments and results and assistant text in a session file; the settings' values) never
//! appear in anything any subcommand prints, on stdout or stderr, logging at the most verbose
//! level included.

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

const SECRET: &str = "sk-live-PLANTED-9c1e";

/// Runs the program; `ok` when it exits 0, or 1 for a `gate` that blocked (a verdict, not an
/// error).
fn bin(args: &[&str], home: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_context-decisions"))
        .args(args)
        .env("PI_CODING_AGENT_DIR", home.join("agent"))
        .env("HOME", home)
        .output()
        .expect("the program runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let gate = args.contains(&"gate");
    let ok = out.status.code() == Some(0) || (gate && out.status.code() == Some(1));
    (ok, text)
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn planted_world() -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!("pcd-privacy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let agent = root.join("agent");
    let cwd = root.join("project");
    let secret_server = json!({
        "command": format!("/opt/{SECRET}/server"),
        "args": ["--token", SECRET],
        "env": {"TOKEN": SECRET},
        "cwd": format!("/home/{SECRET}"),
    });
    let secret_http = json!({
        "url": format!("https://{SECRET}.example/mcp?key={SECRET}"),
        "headers": {"Authorization": format!("Bearer {SECRET}")},
        "oauth": {"clientId": SECRET, "clientSecret": SECRET},
        "description": SECRET,
    });
    write(
        &agent.join("mcp.json"),
        &json!({"mcpServers": {"dev-radius": secret_server, "docs": secret_http, "bad name": {"command": SECRET}}}).to_string(),
    );
    write(
        &cwd.join(".pi/mcp.json"),
        &json!({"mcpServers": {"docs": {"url": format!("http://{SECRET}/x"), "auth": {"provider": SECRET}}}}).to_string(),
    );
    write(
        &agent.join("pi-context-decisions/settings.json"),
        &json!({
            "tools": {"enabled": true, "readMcpConfig": true, "mode": SECRET,
                      "alwaysAllowedTools": ["notes_add", format!("has space {SECRET}")],
                      "alwaysAllowedMcpServers": [format!("{SECRET}.bad")]},
            "decision": {"provider": "embedded", "apiKeyEnv": SECRET, "baseUrl": format!("ftp://{SECRET}")}
        })
        .to_string(),
    );
    write(
        &cwd.join(".pi/pi-context-decisions.json"),
        &json!({"alwaysAllowedTools": [format!("{SECRET} x")], "alwaysAllowed": [SECRET]})
            .to_string(),
    );
    let tools = json!([
        {"name": "read", "sourceInfo": {"path": "builtin:read", "source": "builtin", "scope": "temporary"}},
        {"name": "mcp__dev_radius__search", "description": "Search the incidents.",
         "parameters": {"type": "object", "properties": {"q": {"type": "string", "default": SECRET}}},
         "annotations": {"title": SECRET},
         "namespace": {"name": "mcp__dev_radius", "instructions": SECRET, "aliases": ["dev-radius"]},
         "sourceInfo": {"path": "builtin:mcp", "source": "builtin", "scope": "temporary"}},
        {"name": "notes_add", "description": "Add a note.",
         "sourceInfo": {"path": format!("/home/{SECRET}/extensions/notes.ts"), "source": "auto", "scope": "user",
                        "origin": "top-level", "baseDir": format!("/home/{SECRET}")}},
        {"name": "web_fetch", "description": "Fetch a web page.",
         "sourceInfo": {"path": format!("/x/{SECRET}/index.js"), "source": "npm:@acme/pi-web@2.0.0", "scope": "user",
                        "origin": "package", "baseDir": format!("/x/{SECRET}")}}
    ]);
    let tools_file = root.join("tools.json");
    write(&tools_file, &tools.to_string());
    let session = root.join("session.jsonl");
    let lines = [
        json!({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-11-29T10:00:00.000Z", "cwd": format!("/home/{SECRET}")}),
        json!({"type": "message", "id": "a0000001", "parentId": null, "timestamp": "2026-11-29T10:00:01.000Z",
               "message": {"role": "user", "content": [{"type": "text", "text": format!("use {SECRET}")}]}}),
        json!({"type": "message", "id": "a0000002", "parentId": "a0000001", "timestamp": "2026-11-29T10:00:02.000Z",
               "message": {"role": "assistant", "content": [{"type": "text", "text": SECRET},
                           {"type": "toolCall", "id": "t1", "name": "web_fetch", "arguments": {"url": SECRET}}]}}),
        json!({"type": "message", "id": "a0000003", "parentId": "a0000002", "timestamp": "2026-11-29T10:00:03.000Z",
               "message": {"role": "toolResult", "toolCallId": "t1", "content": [{"type": "text", "text": SECRET}]}}),
    ];
    write(
        &session,
        &lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    );
    let script = root.join("script.json");
    write(
        &script,
        &json!({
            "settings": {"tools": {"enabled": true}, "decision": {"provider": "embedded", "minimumCandidates": 1}},
            "tools": tools,
            "events": [
                {"type": "session_start"},
                {"type": "before_agent_start", "prompt": format!("search incidents {SECRET}")},
                {"type": "tool_call", "toolName": "web_fetch", "input": {"url": SECRET}},
                {"type": "tool_call", "toolName": "read_mcp_resource", "input": {"server": SECRET}}
            ]
        })
        .to_string(),
    );
    (root, cwd, tools_file, session)
}

#[test]
fn no_planted_secret_reaches_any_output() {
    let (root, cwd, tools, session) = planted_world();
    let (t, c, s) = (
        tools.to_str().unwrap(),
        cwd.to_str().unwrap(),
        session.to_str().unwrap(),
    );
    let agent = root.join("agent");
    let a = agent.to_str().unwrap();
    let script = root.join("script.json");
    let runs: Vec<Vec<&str>> = vec![
        vec!["groups", "--tools", t],
        vec!["groups", "--tools", t, "--json"],
        vec!["pick", "--tools", t, "--prompt", "search the incidents"],
        vec![
            "pick",
            "--tools",
            t,
            "--prompt",
            "search the incidents",
            "--json",
        ],
        // The settings and the project allowlist as `pick` reads them, with every candidate's
        // evidence.
        vec![
            "pick",
            "--tools",
            t,
            "--prompt",
            "search the incidents",
            "--agent-dir",
            a,
            "--cwd",
            c,
            "--mode",
            "mcp",
            "--json",
        ],
        vec![
            "mcp-origins",
            "--agent-dir",
            a,
            "--cwd",
            c,
            "--trusted",
            "yes",
        ],
        vec![
            "mcp-origins",
            "--agent-dir",
            a,
            "--cwd",
            c,
            "--trusted",
            "yes",
            "--json",
        ],
        vec![
            "list",
            "tools",
            "--tools",
            t,
            "--session",
            s,
            "--agent-dir",
            a,
            "--cwd",
            c,
            "--trusted",
            "yes",
        ],
        vec![
            "list",
            "mcp",
            "--tools",
            t,
            "--session",
            s,
            "--agent-dir",
            a,
            "--cwd",
            c,
            "--trusted",
            "yes",
        ],
        vec![
            "gate",
            "--tools",
            t,
            "--session",
            s,
            "--agent-dir",
            a,
            "--cwd",
            c,
            "--call",
            r#"{"toolName":"web_fetch","input":{"url":"x"}}"#,
        ],
        vec![
            "gate",
            "--tools",
            t,
            "--session",
            s,
            "--agent-dir",
            a,
            "--cwd",
            c,
            "--json",
            "--call",
            r#"{"toolName":"read_mcp_resource","input":{"server":"dev-radius"}}"#,
        ],
        vec!["simulate", script.to_str().unwrap()],
    ];
    // Each command also runs with the most verbose logging.
    let runs = runs.into_iter().flat_map(|args| {
        let mut verbose = args.clone();
        verbose.insert(0, "-vvv");
        [args, verbose]
    });
    for args in runs {
        let (ok, output) = bin(&args, &root);
        assert!(ok, "{args:?} failed: {output}");
        assert!(!output.is_empty(), "{args:?} printed nothing");
        assert!(
            !output.contains(SECRET),
            "{args:?} leaked a planted secret:\n{output}"
        );
        assert!(
            !output.contains("PLANTED"),
            "{args:?} leaked part of a planted secret"
        );
    }
    std::fs::remove_dir_all(&root).unwrap();
}
