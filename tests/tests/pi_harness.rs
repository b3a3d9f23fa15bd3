//! The headless Pi harness (`tests/pi-harness/run.mjs`) drives a real Pi, 1.3.0 and 1.6.0, with
//! the `gatekeeper` fixture extension, and these tests assert on what that Pi did: the tools it
//! handed the faux provider, the result of each tool call, the events an extension saw and the
//! session file it wrote.
//!
//! Node 22 and Pi come from the npm registry through `tests/support/install-pi.sh` (cached under
//! `.cache/pi/`); when installing fails the test fails, it never skips.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs the installer and returns the one path it prints, or panics with its stderr.
fn install(what: &str) -> PathBuf {
    let out = Command::new("bash")
        .arg(repo().join("tests/support/install-pi.sh"))
        .arg(what)
        .output()
        .expect("bash runs tests/support/install-pi.sh");
    assert!(
        out.status.success(),
        "tests/support/install-pi.sh {what} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let path = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert!(
        path.exists(),
        "the installer printed a missing path: {}",
        path.display()
    );
    path
}

/// Runs one scenario in a real Pi of `version` and returns the harness's JSON report.
fn run(version: &str, scenario: &str, via: &str) -> Value {
    run_with_env(version, scenario, via, &[])
}

/// As `run`, with extra environment for the fixtures (a scenario's own `env` wins).
fn run_with_env(version: &str, scenario: &str, via: &str, env: &[(&str, &str)]) -> Value {
    let node = install("node");
    let pi = install(version);
    let harness = repo().join("tests/pi-harness");
    let out = Command::new(node)
        .arg(harness.join("run.mjs"))
        .arg(harness.join("scenarios").join(scenario))
        .arg("--pi")
        .arg(&pi)
        .arg("--via")
        .arg(via)
        // The extension's lexical scorer, as the scenarios expect: a model folder without the
        // model, which is the only one looked in (not this checkout's `.cache`).
        .env("PCD_MODEL_DIR", pcd_tests::no_model_dir())
        .envs(env.iter().copied())
        .output()
        .expect("node runs the harness");
    assert!(
        out.status.success(),
        "the harness failed on Pi {version} ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the harness printed no JSON report ({e})"));
    assert_eq!(
        report["pi"]["version"], version,
        "the harness ran another Pi"
    );
    report
}

/// Removes the run's temporary root once a check passed (a failing check leaves it for a look).
fn cleanup(report: &Value) {
    let root = PathBuf::from(report["root"].as_str().expect("the report names its root"));
    let is_harness_dir = root.starts_with(std::env::temp_dir())
        && root
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("pi-harness-"));
    if is_harness_dir {
        let _ = std::fs::remove_dir_all(&root);
    }
}

fn names(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .expect("an array of names")
        .iter()
        .map(|v| v.as_str().expect("a name"))
        .collect()
}

fn calls<'a>(report: &'a Value, name: &str) -> Vec<&'a Value> {
    report["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == name)
        .collect()
}

fn events<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == kind)
        .collect()
}

/// The session file as Pi wrote it, read here rather than trusting the harness's summary.
fn session_lines(report: &Value) -> Vec<Value> {
    let file = report["sessionFile"]
        .as_str()
        .expect("Pi reported a session file");
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("Pi's session file cannot be read ({e}): {file}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("every session line is JSON"))
        .collect()
}

fn check_gatekeeper(report: &Value) {
    let version = report["pi"]["version"].as_str().unwrap();
    assert_eq!(
        report["loadErrors"],
        serde_json::json!([]),
        "Pi {version}: extensions failed to load"
    );
    assert_eq!(
        report["extensionErrors"],
        serde_json::json!([]),
        "Pi {version}"
    );
    let loaded = names(&report["loadedExtensions"][0]["paths"]);
    assert!(
        loaded
            .iter()
            .any(|p| p.ends_with("fixtures/gatekeeper/index.ts")),
        "Pi {version}: the gatekeeper is not among the loaded extensions {loaded:?}"
    );
    assert_eq!(
        report["errors"],
        serde_json::json!([]),
        "Pi {version} reported errors"
    );
    for step in report["steps"].as_array().unwrap() {
        assert!(
            step.get("error").is_none(),
            "Pi {version}: step failed: {step}"
        );
        assert_eq!(
            step["unusedResponses"], 0,
            "Pi {version}: the model was not asked as often as scripted"
        );
    }

    // Every request the faux provider got: four rounds of the first prompt, one of the second.
    let requests = report["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 5, "Pi {version}: requests {requests:?}");
    for request in requests {
        let tools = names(&request["tools"]);
        assert!(
            !tools.contains(&"write"),
            "Pi {version}: the removed tool was declared: {tools:?}"
        );
        for expected in [
            "read",
            "bash",
            "codemode",
            "mcp__dev_radius__search",
            "mcp__docs__fetch_page",
            "read_mcp_resource",
        ] {
            assert!(
                tools.contains(&expected),
                "Pi {version}: {expected} missing from {tools:?}"
            );
        }
        // `codemode` exposure (kb's default) is deferred: callable from scripts, never declared.
        assert!(
            !tools.contains(&"mcp__kb__lookup"),
            "Pi {version}: {tools:?}"
        );
    }
    // `write` is registered, so its absence is the gatekeeper's doing and not a missing tool.
    let inventories = events(report, "before_agent_start");
    assert_eq!(
        inventories.len(),
        2,
        "Pi {version}: one before_agent_start per prompt"
    );
    let registered: Vec<&str> = inventories[1]["inventory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        registered.contains(&"write"),
        "Pi {version}: {registered:?}"
    );

    // The hidden before_agent_start message reached the model, once per prompt.
    let first = names(&requests[0]["userTexts"]);
    assert_eq!(
        first,
        [
            "first prompt",
            "GATEKEEPER NOTICE: write is unavailable for this prompt."
        ],
        "Pi {version}: what the model saw"
    );

    // The removed tool: `Tool write not found`, and no tool_call event ever fired for it.
    let write = calls(report, "write");
    assert_eq!(write.len(), 1, "Pi {version}");
    assert_eq!(write[0]["result"], "Tool write not found");
    assert_eq!(write[0]["isError"], true);
    let tool_calls = events(report, "tool_call");
    assert!(
        tool_calls.iter().all(|e| e["toolName"] != "write"),
        "Pi {version}: a tool_call fired for the removed tool"
    );

    // The blocked top-level call carries the reason.
    let bash = calls(report, "bash");
    assert_eq!(bash.len(), 1, "Pi {version}");
    assert_eq!(
        bash[0]["result"],
        "Blocked by gatekeeper: bash is not allowed"
    );
    assert_eq!(bash[0]["isError"], true);

    // An allowed MCP call went through to the server.
    let direct = calls(report, "mcp__dev_radius__search");
    assert_eq!(
        direct.len(),
        2,
        "Pi {version}: one top-level and one nested call"
    );
    assert!(direct
        .iter()
        .all(|c| c["result"] == "dev-radius search result" && c["isError"] == false));

    // The nested codemode call is gated: its tool_call names the codemode call as parent, the
    // script got the reason as an error, and the kb server never saw a call.
    let codemode = calls(report, "codemode");
    assert_eq!(codemode.len(), 1, "Pi {version}");
    let parent = codemode[0]["id"].as_str().unwrap();
    let nested: Vec<_> = tool_calls
        .iter()
        .filter(|e| e["toolName"] == "mcp__kb__lookup")
        .collect();
    assert_eq!(nested.len(), 1, "Pi {version}");
    assert_eq!(nested[0]["parentToolCallId"], parent);
    assert!(nested[0]["toolCallId"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{parent}/")));
    let reason =
        format!("Blocked by gatekeeper: mcp__kb__lookup is not allowed (nested in {parent})");
    let kb = calls(report, "mcp__kb__lookup");
    assert_eq!(kb.len(), 1, "Pi {version}");
    assert_eq!(kb[0]["result"], reason.as_str());
    assert_eq!(kb[0]["isError"], true);
    let script_output = codemode[0]["result"].as_str().unwrap();
    assert!(
        script_output.contains(&format!("BLOCKED={reason}")),
        "Pi {version}: codemode output {script_output:?}"
    );
    let mcp_calls = report["mcpCalls"].as_array().unwrap();
    assert!(
        mcp_calls.iter().all(|c| c["server"] != "kb"),
        "Pi {version}: {mcp_calls:?}"
    );
    assert!(mcp_calls
        .iter()
        .any(|c| c["server"] == "dev-radius" && c["arguments"]["q"] == "nested"));

    // The resource tool routed to the docs server.
    let read = calls(report, "read_mcp_resource");
    assert_eq!(read.len(), 1, "Pi {version}");
    assert_eq!(read[0]["result"], "docs readme text");

    // MCP tools and resource tools with the provenance of contracts §2.
    let inventory = inventories[1]["inventory"].as_array().unwrap();
    let tool = |name: &str| {
        inventory
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("Pi {version}: {name} not registered"))
    };
    let builtin = |path: &str| serde_json::json!({"path": path, "source": "builtin", "scope": "temporary", "origin": "top-level"});
    for (name, exposure, namespace, alias) in [
        (
            "mcp__dev_radius__search",
            "direct",
            "mcp__dev_radius",
            "dev-radius",
        ),
        ("mcp__kb__lookup", "deferred", "mcp__kb", "kb"),
        ("mcp__docs__fetch_page", "direct", "mcp__docs", "docs"),
    ] {
        let t = tool(name);
        assert_eq!(t["source"], builtin("builtin:mcp"), "Pi {version}: {name}");
        assert_eq!(t["exposure"], exposure, "Pi {version}: {name}");
        assert_eq!(t["namespace"]["name"], namespace, "Pi {version}: {name}");
        assert_eq!(
            t["namespace"]["aliases"],
            serde_json::json!([alias]),
            "Pi {version}: {name}"
        );
    }
    for name in [
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
    ] {
        let t = tool(name);
        assert_eq!(t["source"], builtin("builtin:mcp"), "Pi {version}: {name}");
        assert_eq!(t["namespace"], Value::Null, "Pi {version}: {name}");
        assert_eq!(
            t["exposure"], "direct",
            "Pi {version}: {name} (docs is direct and has resources)"
        );
    }
    assert_eq!(tool("codemode")["source"], builtin("builtin:codemode"));
    assert_eq!(
        tool("tool_search")["source"],
        builtin("builtin:tool-search")
    );
    assert_eq!(tool("read")["source"], builtin("builtin:read"));

    // The session file Pi wrote: header, one custom entry per prompt, one hidden message per prompt.
    let lines = session_lines(report);
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 3);
    let custom: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "custom" && l["customType"] == "gatekeeper-state")
        .collect();
    assert_eq!(custom.len(), 2, "Pi {version}: custom entries");
    for (n, entry) in custom.iter().enumerate() {
        assert_eq!(entry["data"]["prompt"], n + 1);
        assert_eq!(entry["data"]["removed"], "write");
        assert!(entry["id"].as_str().is_some_and(|id| !id.is_empty()));
        assert!(
            lines.iter().any(|l| l["id"] == entry["parentId"]),
            "Pi {version}: orphan entry"
        );
    }
    let hidden: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "custom_message" && l["customType"] == "gatekeeper-notice")
        .collect();
    assert_eq!(hidden.len(), 2, "Pi {version}: hidden messages");
    assert!(hidden.iter().all(|l| l["display"] == false));
}

#[test]
fn gatekeeper_in_pi_1_3_0() {
    let report = run("1.3.0", "gatekeeper.json", "path");
    check_gatekeeper(&report);
    cleanup(&report);
}

#[test]
fn gatekeeper_in_pi_1_6_0() {
    let report = run("1.6.0", "gatekeeper.json", "path");
    check_gatekeeper(&report);
    cleanup(&report);
}

#[test]
fn gatekeeper_from_a_settings_package_in_pi_1_3_0() {
    let report = run("1.3.0", "gatekeeper.json", "package");
    check_gatekeeper(&report);
    cleanup(&report);
}

#[test]
fn gatekeeper_from_a_settings_package_in_pi_1_6_0() {
    let report = run("1.6.0", "gatekeeper.json", "package");
    check_gatekeeper(&report);
    cleanup(&report);
}

/// The facts `docs/pi-events.md` states, checked again on every run.
fn check_event_facts(report: &Value) {
    let version = report["pi"]["version"].as_str().unwrap();
    assert_eq!(report["loadErrors"], serde_json::json!([]), "Pi {version}");
    assert_eq!(report["errors"], serde_json::json!([]), "Pi {version}");
    assert_eq!(
        report["extensionErrors"],
        serde_json::json!([]),
        "Pi {version}"
    );
    let steps = report["steps"].as_array().unwrap();
    for step in steps {
        assert!(
            step.get("error").is_none(),
            "Pi {version}: step failed: {step}"
        );
    }
    let all = report["events"].as_array().unwrap();
    let probes = |what: &str| -> Vec<&Value> {
        all.iter()
            .filter(|e| e["type"] == "probe" && e["what"] == what)
            .collect()
    };

    // While the factory runs, the action methods throw; one factory run per session and reload.
    let factories = probes("factory");
    assert_eq!(
        factories.len(),
        4,
        "Pi {version}: startup, fork, resume, reload"
    );
    for f in &factories {
        for call in [
            "getAllTools",
            "getActiveTools",
            "setActiveTools",
            "appendEntry",
        ] {
            assert_eq!(f[call]["ok"], false, "Pi {version}: {call} in the factory");
            let error = f[call]["error"].as_str().unwrap();
            assert!(
                error.contains("cannot be called during extension loading"),
                "Pi {version}: {call}: {error}"
            );
        }
    }
    // From session_start on they work; the replaced instance's API throws as stale; the working
    // row setter exists without a UI and does not throw.
    let starts = probes("session_start");
    let reasons: Vec<&str> = starts
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        ["startup", "fork", "resume", "reload"],
        "Pi {version}"
    );
    for s in &starts {
        for call in [
            "getAllTools",
            "setActiveTools",
            "appendEntry",
            "setWorkingMessageCall",
        ] {
            assert_eq!(s[call]["ok"], true, "Pi {version}: {call} in session_start");
        }
        assert_eq!(s["hasUI"], false);
        assert_eq!(s["setWorkingMessage"], "function");
        if s["reason"] != "startup" {
            for call in ["getAllTools", "setActiveTools", "appendEntry"] {
                let old = &s["previousInstance"][call];
                assert_eq!(old["ok"], false, "Pi {version}: stale {call}");
                assert!(old["error"].as_str().unwrap().contains("stale"), "{old}");
            }
        }
    }

    // Session boundaries as the tracer saw them.
    let shutdowns: Vec<&str> = events(report, "session_shutdown")
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        shutdowns,
        ["fork", "resume", "reload", "quit"],
        "Pi {version}"
    );
    let traced = events(report, "session_start");
    // MCP servers connect in the background: no MCP tool is registered at any session_start.
    for start in &traced {
        assert_eq!(
            start["registeredMcpTools"], 0,
            "Pi {version}: {}",
            start["reason"]
        );
    }
    let files: Vec<&str> = steps
        .iter()
        .map(|s| s["sessionFile"].as_str().unwrap())
        .collect();
    let (original, forked) = (files[0], files[4]);
    assert_ne!(original, forked, "Pi {version}: fork writes a new file");
    assert_eq!(traced[1]["reason"], "fork");
    assert_eq!(traced[1]["previousSessionFile"], original);
    assert_eq!(traced[2]["reason"], "resume");
    assert_eq!(traced[2]["previousSessionFile"], forked);
    assert_eq!(
        files[6], original,
        "Pi {version}: resume reopens the first file"
    );
    // The fork replays the branch's active set: `write`, removed by the gatekeeper, stays out.
    let active = names(&traced[1]["active"]);
    assert!(
        !active.contains(&"write") && active.contains(&"read"),
        "Pi {version}: {active:?}"
    );
    let fork_header = &report["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["file"] == forked)
        .expect("the fork's file was read")["header"];
    assert_eq!(fork_header["parentSession"], original, "Pi {version}");

    // `/tree` moves the leaf in place: session_before_tree and session_tree, no session_start.
    let tree = events(report, "session_tree");
    assert_eq!(tree.len(), 1, "Pi {version}");
    assert_eq!(tree[0]["newLeafId"], steps[2]["leafId"]);
    assert_ne!(tree[0]["oldLeafId"], tree[0]["newLeafId"]);
    assert_eq!(events(report, "session_before_tree").len(), 1);
    let before_fork = events(report, "session_before_fork");
    assert_eq!(before_fork.len(), 1, "Pi {version}");
    assert_eq!(before_fork[0]["position"], "before");
    let switches: Vec<&Value> = events(report, "session_before_switch");
    assert_eq!(switches.len(), 1, "Pi {version}");
    assert_eq!(switches[0]["reason"], "resume");
    // Each `before` event comes before the old instance's shutdown.
    let seq = |e: &Value| e["seq"].as_u64().unwrap();
    let shutdown = events(report, "session_shutdown");
    assert!(seq(before_fork[0]) < seq(shutdown[0]) && seq(switches[0]) < seq(shutdown[1]));

    // Steering and follow-up queued while a run is active: `input` fires at once with
    // `streamingBehavior`; the text joins the same run at a later turn (message_end, context);
    // before_agent_start fires once per prompt only.
    let before = events(report, "before_agent_start");
    let prompts = steps.iter().filter(|s| s["action"] == "prompt").count();
    assert_eq!(
        before.len(),
        prompts,
        "Pi {version}: one before_agent_start per prompt"
    );
    assert!(before.iter().all(|e| e["messageType"] == "user"));
    for (text, source, behavior) in [
        ("PROBE STEER TEXT", "extension", "steer"),
        ("PROBE FOLLOW-UP TEXT", "extension", "followUp"),
        ("HOST STEER TEXT", "interactive", "steer"),
        ("HOST FOLLOW-UP TEXT", "interactive", "followUp"),
    ] {
        let input = all
            .iter()
            .find(|e| e["type"] == "input" && e["text"] == text)
            .unwrap_or_else(|| panic!("Pi {version}: no input event for {text}"));
        assert_eq!(input["source"], source, "Pi {version}: {text}");
        assert_eq!(input["streamingBehavior"], behavior, "Pi {version}: {text}");
        let seq = input["seq"].as_u64().unwrap();
        // The first message_end carrying the text, and everything between queueing and it.
        let delivered = all
            .iter()
            .find(|e| {
                e["type"] == "message_end"
                    && e["message"]["text"] == text
                    && e["seq"].as_u64().unwrap() > seq
            })
            .unwrap_or_else(|| panic!("Pi {version}: {text} never reached the transcript"));
        let between: Vec<&str> = all
            .iter()
            .filter(|e| {
                let s = e["seq"].as_u64().unwrap();
                s > seq && s < delivered["seq"].as_u64().unwrap()
            })
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert!(
            !between.contains(&"before_agent_start") && !between.contains(&"agent_end"),
            "Pi {version}: {text} did not join the running run: {between:?}"
        );
        assert!(between.contains(&"turn_start"), "Pi {version}: {between:?}");
    }
    // The first prompt's queued texts reached the model within that prompt's requests.
    let first: Vec<&Value> = report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["step"] == 0)
        .collect();
    assert!(!names(&first[0]["userTexts"]).contains(&"PROBE STEER TEXT"));
    assert!(first
        .iter()
        .any(|r| names(&r["userTexts"]).contains(&"PROBE STEER TEXT")));
    assert!(first
        .iter()
        .any(|r| names(&r["userTexts"]).contains(&"PROBE FOLLOW-UP TEXT")));
}

#[test]
fn event_facts_hold_in_pi_1_3_0() {
    let report = run("1.3.0", "events.json", "path");
    check_event_facts(&report);
    cleanup(&report);
}

#[test]
fn event_facts_hold_in_pi_1_6_0() {
    let report = run("1.6.0", "events.json", "path");
    check_event_facts(&report);
    cleanup(&report);
}

/// A direct MCP tool removed with `setActiveTools` in `before_agent_start`: on the first prompt
/// right after startup the built-in MCP extension registers and activates it after the file
/// extension's handler ran, so Pi declares and runs it anyway; once the servers are connected
/// (the second prompt, or a prompt after a fork and a short wait) the removal holds.
fn check_mcp_first_prompt(report: &Value) {
    let version = report["pi"]["version"].as_str().unwrap();
    assert_eq!(report["errors"], serde_json::json!([]), "Pi {version}");
    let tool = "mcp__dev_radius__search";
    let declared: Vec<(u64, bool)> = report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["step"].as_u64().unwrap(),
                names(&r["tools"]).contains(&tool),
            )
        })
        .collect();
    assert_eq!(
        declared,
        [
            (0, true),
            (0, true),
            (1, false),
            (1, false),
            (4, false),
            (4, false)
        ],
        "Pi {version}: (step, declared)"
    );
    let before = events(report, "before_agent_start");
    let registered = |e: &Value| {
        e["inventory"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == tool)
    };
    assert!(
        !registered(before[0]),
        "Pi {version}: registered before the first prompt's handler"
    );
    assert!(
        registered(before[1]) && registered(before[2]),
        "Pi {version}"
    );
    let results: Vec<(u64, &str)> = calls(report, tool)
        .iter()
        .map(|c| (c["step"].as_u64().unwrap(), c["result"].as_str().unwrap()))
        .collect();
    let missing = format!("Tool {tool} not found");
    assert_eq!(
        results,
        [
            (0, "dev-radius search result"),
            (1, missing.as_str()),
            (4, missing.as_str())
        ],
        "Pi {version}"
    );
}

#[test]
fn mcp_first_prompt_gap_in_pi_1_3_0() {
    let report = run("1.3.0", "mcp-first-prompt.json", "path");
    check_mcp_first_prompt(&report);
    cleanup(&report);
}

#[test]
fn mcp_first_prompt_gap_in_pi_1_6_0() {
    let report = run("1.6.0", "mcp-first-prompt.json", "path");
    check_mcp_first_prompt(&report);
    cleanup(&report);
}

/// `tool_search` re-widens the active set on its own (contracts §5): a deferred MCP tool the
/// gatekeeper withheld is declared from the request after the search and runs; at the next
/// prompt's `before_agent_start` the gatekeeper removes it again.
fn check_tool_search_reactivates(report: &Value) {
    let version = report["pi"]["version"].as_str().unwrap();
    assert_eq!(report["errors"], serde_json::json!([]), "Pi {version}");
    assert_eq!(report["loadErrors"], serde_json::json!([]), "Pi {version}");
    let tool = "mcp__kb__lookup";
    let declared: Vec<(u64, bool, bool)> = report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let tools = names(&r["tools"]);
            (
                r["step"].as_u64().unwrap(),
                tools.contains(&tool),
                tools.contains(&"tool_search"),
            )
        })
        .collect();
    assert_eq!(
        declared,
        [
            (1, false, true),
            (1, true, true),
            (1, true, true),
            (2, false, true),
            (2, false, true)
        ],
        "Pi {version}: (step, kb lookup declared, tool_search declared)"
    );
    let search = calls(report, "tool_search");
    assert_eq!(search.len(), 1, "Pi {version}");
    assert!(
        search[0]["result"].as_str().unwrap().contains(tool),
        "Pi {version}: {}",
        search[0]["result"]
    );
    let results: Vec<(u64, &str)> = calls(report, tool)
        .iter()
        .map(|c| (c["step"].as_u64().unwrap(), c["result"].as_str().unwrap()))
        .collect();
    let missing = format!("Tool {tool} not found");
    assert_eq!(
        results,
        [(1, "kb lookup result"), (2, missing.as_str())],
        "Pi {version}"
    );
}

#[test]
fn tool_search_reactivates_in_pi_1_3_0() {
    let report = run("1.3.0", "tool-search-reactivates.json", "path");
    check_tool_search_reactivates(&report);
    cleanup(&report);
}

#[test]
fn tool_search_reactivates_in_pi_1_6_0() {
    let report = run("1.6.0", "tool-search-reactivates.json", "path");
    check_tool_search_reactivates(&report);
    cleanup(&report);
}

/// Where a removal lands within a run, after `tool_search` re-activated the tool: from
/// `turn_end` it applies to the next request; from `turn_start` it is too late for that turn's
/// request (the tool is declared) but the call then fails with `Tool X not found`.
fn check_reapply(report: &Value, declared_after_search: bool) {
    let version = report["pi"]["version"].as_str().unwrap();
    assert_eq!(report["errors"], serde_json::json!([]), "Pi {version}");
    assert_eq!(
        report["extensionErrors"],
        serde_json::json!([]),
        "Pi {version}"
    );
    let tool = "mcp__kb__lookup";
    let declared: Vec<(u64, bool)> = report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["step"].as_u64().unwrap(),
                names(&r["tools"]).contains(&tool),
            )
        })
        .collect();
    assert_eq!(
        declared,
        [
            (1, false),
            (1, declared_after_search),
            (1, false),
            (2, false),
            (2, false)
        ],
        "Pi {version}: (step, declared)"
    );
    let missing = format!("Tool {tool} not found");
    let results: Vec<(u64, &str)> = calls(report, tool)
        .iter()
        .map(|c| (c["step"].as_u64().unwrap(), c["result"].as_str().unwrap()))
        .collect();
    assert_eq!(
        results,
        [(1, missing.as_str()), (2, missing.as_str())],
        "Pi {version}"
    );
    assert!(
        report["mcpCalls"].as_array().unwrap().is_empty(),
        "Pi {version}: the kb server was called"
    );
}

#[test]
fn removal_at_turn_end_applies_to_the_next_request() {
    for version in ["1.3.0", "1.6.0"] {
        let env = [("GATEKEEPER_REAPPLY", "turn_end")];
        let report = run_with_env(version, "tool-search-reactivates.json", "path", &env);
        check_reapply(&report, false);
        cleanup(&report);
    }
}

#[test]
fn removal_at_turn_start_is_too_late_for_that_request() {
    for version in ["1.3.0", "1.6.0"] {
        let env = [("GATEKEEPER_REAPPLY", "turn_start")];
        let report = run_with_env(version, "tool-search-reactivates.json", "path", &env);
        check_reapply(&report, true);
        cleanup(&report);
    }
}
