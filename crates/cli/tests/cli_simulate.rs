//! `context-decisions simulate --check FILE` over a session recorded to a real file (the file
//! sink the Node addon uses for `PI_CONTEXT_DECISIONS_RECORD`).

use context_decisions::record::{FileSink, Recorder};
use context_decisions::session::{
    BoundaryEvent, BoundaryKind, BranchRead, InventoryRead, Session, SettingsRead, StartEvent,
    StartReason, ToolCallEvent,
};
use pcd_gate::ProjectRead;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn record(dir: &Path) -> PathBuf {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/inventory.json");
    let tools = context_decisions::inventory::read_inventory_file(&example)
        .unwrap()
        .tools;
    let file = dir.join("session.json");
    let recorder = Recorder::shared(Box::new(FileSink::create(&file).unwrap()));
    let settings = pcd_model::Settings::from_json(&json!({"tools": {"enabled": true},
        "decision": {"provider": "embedded", "minimumCandidates": 1}}))
    .0;
    let (mut session, _) = Session::start_recording(
        StartEvent {
            reason: StartReason::Startup,
            nonce: "cli".into(),
            settings: SettingsRead::Read(settings),
            project: ProjectRead::Absent,
            mcp_origins: Vec::new(),
            branch: BranchRead::Entries(Vec::new()),
        },
        Some(recorder),
    );
    let active: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    for kind in [
        BoundaryKind::Reconcile,
        BoundaryKind::Prompt {
            text: Some("Render a bar chart of this CSV".into()),
        },
    ] {
        session.boundary(BoundaryEvent {
            kind,
            inventory: InventoryRead::Tools(tools.clone()),
            active: active.clone(),
        });
    }
    for tool in ["bar_chart", "web_fetch"] {
        session.tool_call(&ToolCallEvent {
            tool: tool.into(),
            server: None,
        });
    }
    file
}

fn simulate(file: &Path) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_context-decisions"))
        .args(["simulate", "--check"])
        .arg(file)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_recorded_file_replays_and_checks_and_a_tampered_one_does_not() {
    let dir = std::env::temp_dir().join(format!("pcd-cli-simulate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = record(&dir);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "owner-only");
    }
    let (code, stdout, stderr) = simulate(&file);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stderr,
        "The replay matches the recording: 4 events checked.\n"
    );
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2]["verdict"], "allow");
    assert_eq!(lines[3]["verdict"], "block");
    // A recording whose expected verdict was changed no longer checks.
    let mut script: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    script["events"][3]["expect"]["verdict"] = json!("allow");
    let tampered = dir.join("tampered.json");
    std::fs::write(&tampered, script.to_string()).unwrap();
    let (code, _, stderr) = simulate(&tampered);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        "The replay differs from the recording at 1 of 4 checked events: event 3.\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 19: `simulate --check` on a script that expects nothing compared nothing, so it does not
/// pass: it says so and exits 1.
#[test]
fn a_check_that_compares_nothing_does_not_pass() {
    let dir = std::env::temp_dir().join(format!("pcd-cli-nothing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("script.json");
    std::fs::write(&script, r#"{"events": []}"#).unwrap();
    let (code, _, stderr) = simulate(&script);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.starts_with("Nothing to check"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 19: `-v` logs what `pick`, `eval` and `gate` did (counts and codes) on stderr.
#[test]
fn verbose_runs_log_what_they_did() {
    let inventory = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/inventory.json");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_context-decisions"))
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let tools = inventory.to_str().unwrap();
    let pick = run(&[
        "-v",
        "pick",
        "--tools",
        tools,
        "--prompt",
        "calculator",
        "--lexical",
    ]);
    assert!(
        pick.contains("pick: candidates formed") && pick.contains("pick: scored"),
        "{pick}"
    );
    let gate = run(&[
        "-v",
        "gate",
        "--tools",
        tools,
        "--call",
        r#"{"toolName":"web_fetch"}"#,
    ]);
    assert!(gate.contains("gate: verdict"), "{gate}");
    let quiet = run(&[
        "pick",
        "--tools",
        tools,
        "--prompt",
        "calculator",
        "--lexical",
    ]);
    assert!(!quiet.contains("pick:"), "{quiet}");
}

/// Issue 19: `mcp-origins` says which files it looked for when none defines a server, and names
/// the file a warning is about, as a sentence.
#[test]
fn mcp_origins_names_the_files_it_read_and_what_was_wrong() {
    let dir = std::env::temp_dir().join(format!("pcd-cli-origins-{}", std::process::id()));
    let (agent, project) = (dir.join("agent"), dir.join("project"));
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(project.join(".pi")).unwrap();
    let run = || {
        let out = Command::new(env!("CARGO_BIN_EXE_context-decisions"))
            .args(["mcp-origins", "--trusted", "yes", "--agent-dir"])
            .arg(&agent)
            .arg("--cwd")
            .arg(&project)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let none = run();
    assert!(none.starts_with("No MCP server is defined"), "{none}");
    assert!(
        none.contains(&agent.join("mcp.json").display().to_string()),
        "{none}"
    );
    std::fs::write(project.join(".pi/mcp.json"), r#"{"mcpServers": {"a": "#).unwrap();
    let broken = run();
    let file = project.join(".pi/mcp.json").display().to_string();
    assert!(
        broken.starts_with(&format!("{file}: The project MCP config")),
        "{broken}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 19: every key of the program's JSON output is snake_case (`minimum_candidates`, never a
/// mix with `scoredNow`).
#[test]
fn json_keys_are_snake_case_everywhere() {
    fn keys(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    out.push(k.clone());
                    keys(v, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
            _ => {}
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let inventory = root.join("examples/inventory.json");
    let tools = inventory.to_str().unwrap();
    let set = root.join("eval/everyday");
    let runs: [Vec<&str>; 6] = [
        vec![
            "pick",
            "--tools",
            tools,
            "--prompt",
            "calculator",
            "--lexical",
        ],
        vec!["list", "tools", "--tools", tools],
        vec![
            "gate",
            "--tools",
            tools,
            "--call",
            r#"{"toolName":"web_fetch"}"#,
        ],
        vec!["groups", "--tools", tools],
        vec!["mcp-origins"],
        vec![
            "eval",
            "--set",
            set.to_str().unwrap(),
            "--limit",
            "3",
            "--lexical",
        ],
    ];
    for args in runs {
        let out = Command::new(env!("CARGO_BIN_EXE_context-decisions"))
            .args(&args)
            .arg("--json")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut all = Vec::new();
        keys(&v, &mut all);
        let bad: Vec<&String> = all
            .iter()
            .filter(|k| k.chars().any(|c| c.is_ascii_uppercase()))
            .collect();
        assert!(bad.is_empty(), "{args:?}: {bad:?}");
    }
}

/// Issue 19: `--cwd` naming no folder is an error that names it, not a project without files.
#[test]
fn a_cwd_that_is_not_a_folder_is_refused() {
    let inventory = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/inventory.json");
    let out = Command::new(env!("CARGO_BIN_EXE_context-decisions"))
        .args([
            "pick",
            "--lexical",
            "--prompt",
            "x",
            "--cwd",
            "/nonexistent/project",
            "--tools",
        ])
        .arg(&inventory)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/nonexistent/project (--cwd) is not a folder"),
        "{stderr}"
    );
}
