//! The pi-context-decisions extension inside a real Pi (1.3.0 and 1.6.0, installed from the npm
//! registry by `tests/support/install-pi.sh`), driven headless by `tests/pi-harness/run.mjs` with
//! Pi's faux model and in-memory MCP servers. Each scenario asserts on the tools Pi handed the
//! model for each request, on the result of each call, and on the session file Pi wrote.
//!
//! The addon is built by the test itself (`pcd_tests::addon` runs `cargo build -p pcd-node`).

use pcd_tests::{addon, install as installer, repo};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

const VERSIONS: [&str; 2] = ["1.3.0", "1.6.0"];

/// Runs one scenario in Pi `version` and returns the harness's report.
fn run(scenario: &str, version: &str) -> Value {
    run_file(
        &repo().join("tests/e2e/scenarios").join(scenario),
        version,
        &addon(),
    )
}

/// Runs the scenario file `path` in Pi `version`, the extension loading its addon from `addon`.
fn run_file(path: &Path, version: &str, addon: &Path) -> Value {
    run_file_with(path, version, addon, &[])
}

/// As `run_file`, with extra environment for Pi's process (the semantic model's folder).
fn run_file_with(path: &Path, version: &str, addon: &Path, env: &[(&str, &Path)]) -> Value {
    run_file_in(path, version, addon, env, None)
}

/// As `run_file_with`, in the agent folder `agent` when given (it must exist) instead of a new
/// one the harness makes.
fn run_file_in(
    path: &Path,
    version: &str,
    addon: &Path,
    env: &[(&str, &Path)],
    agent: Option<&Path>,
) -> Value {
    let scenario = path.display();
    let node = installer("node");
    let pi = installer(version);
    let mut command = Command::new(node);
    command
        .arg(repo().join("tests/pi-harness/run.mjs"))
        .arg(path)
        .arg("--pi")
        .arg(pi);
    if let Some(agent) = agent {
        command.arg("--agent-dir").arg(agent);
    }
    let out = command
        .env("PI_CONTEXT_DECISIONS_ADDON", addon)
        // The scenarios expect the lexical scorer unless they are given a model folder: a
        // folder without the model, which is the only one looked in (not this checkout's).
        .env("PCD_MODEL_DIR", pcd_tests::no_model_dir())
        .envs(env.iter().copied())
        .output()
        .expect("node runs the harness");
    assert!(
        out.status.success(),
        "{scenario} on Pi {version}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Node's JSON.stringify writes a lone surrogate (which a tool result may carry) as a `\udXXX`
    // escape that serde_json rejects: the report reads it as U+FFFD.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value =
        serde_json::from_str(&lone_surrogates_replaced(&stdout)).expect("the harness prints JSON");
    for key in ["errors", "extensionErrors", "loadErrors"] {
        let list = report[key].as_array().map_or(0, Vec::len);
        assert_eq!(
            list, 0,
            "{scenario} on Pi {version}: {key}: {}",
            report[key]
        );
    }
    report
}

/// `text` with every `\udXXX` escape (a surrogate; JSON.stringify escapes only lone ones)
/// written as `\ufffd`.
fn lone_surrogates_replaced(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\\ud") {
        let escape = rest.get(at..at + 6);
        let surrogate = escape.is_some_and(|e| {
            matches!(e.as_bytes()[3].to_ascii_lowercase(), b'8'..=b'9' | b'a'..=b'f')
                && e[4..].chars().all(|c| c.is_ascii_hexdigit())
        });
        out.push_str(&rest[..at]);
        out.push_str(if surrogate {
            "\\ufffd"
        } else {
            &rest[at..at + 4]
        });
        rest = &rest[at + if surrogate { 6 } else { 4 }..];
    }
    out.push_str(rest);
    out
}

/// Runs the scenario file `path` in Pi `version` with the semantic model: `PCD_MODEL_DIR` names
/// `model` (empty: not set), the vector cache is `dir/vectors.bin` and the agent folder
/// `dir/agent` (the cache's secret is kept there), and a round may wait for the model
/// (`PCD_SEMANTIC_WAIT_MS`), since the model loads at Pi's start while the first prompt is
/// already waiting.
fn run_with_model(path: &Path, version: &str, model: &Path, dir: &Path) -> Value {
    let cache = dir.join("vectors.bin");
    let agent = dir.join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    run_file_in(
        path,
        version,
        &addon(),
        &[
            ("PCD_MODEL_DIR", model),
            ("PCD_VECTOR_CACHE", cache.as_path()),
            ("PCD_SEMANTIC_WAIT_MS", Path::new("30000")),
        ],
        Some(&agent),
    )
}

fn requests(report: &Value, step: u64) -> Vec<Vec<String>> {
    report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["step"] == step)
        .map(|r| {
            r["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

/// The results of the calls to `tool` in `step`: (is error, result text).
fn calls(report: &Value, step: u64, tool: &str) -> Vec<(bool, String)> {
    report["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["step"] == step && c["name"] == tool)
        .map(|c| {
            (
                c["isError"] == true,
                c["result"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// Asserts that the model's calls to `tool` in `step` ran (at least one, none an error).
fn assert_ran(report: &Value, step: u64, tool: &str, version: &str) {
    let results = calls(report, step, tool);
    assert!(
        !results.is_empty() && results.iter().all(|(err, _)| !err),
        "{version}: {tool}: {results:?}"
    );
}

/// What the extension said through `ctx.ui.notify`, every step.
fn notifications(report: &Value) -> Vec<&str> {
    report["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["message"].as_str())
        .collect()
}

fn ledger_entries(report: &Value) -> Vec<Value> {
    report["customEntries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["customType"] == pcd_ledger::CUSTOM_TYPE)
        .cloned()
        .collect()
}

/// The branch of the session file Pi wrote, folded as `cargo xtask replay` folds it.
fn replay(report: &Value) -> pcd_ledger::BranchState {
    let path = report["sessionFile"]
        .as_str()
        .expect("a session file was written");
    let mut file = pcd_ledger::SessionFile::open(Path::new(path)).unwrap();
    let branch = file.branch_for(None).unwrap();
    let replay = file.fold_branch(&branch).unwrap();
    assert!(replay.findings.is_empty(), "{:?}", replay.findings);
    replay.state
}

#[test]
fn off_changes_nothing_and_writes_nothing() {
    for version in VERSIONS {
        let report = run("off.json", version);
        // Step 0 waits for the in-memory MCP server to connect.
        for tools in requests(&report, 1) {
            for tool in ["bar_chart", "web_fetch", "mcp__docs__search"] {
                assert!(
                    tools.contains(&tool.to_owned()),
                    "{version}: {tool} in {tools:?}"
                );
            }
        }
        for tool in ["bar_chart", "web_fetch", "mcp__docs__search"] {
            let results = calls(&report, 1, tool);
            assert!(
                !results.is_empty() && results.iter().all(|(err, _)| !err),
                "{version}: {tool}: {results:?}"
            );
        }
        assert!(
            ledger_entries(&report).is_empty(),
            "{version}: no entry while off"
        );
    }
}

#[test]
fn filtering_in_tools_mode_inside_pi() {
    for version in VERSIONS {
        let report = run("pick.json", version);
        // Step 1, the first prompt (after MCP servers connected): the relevant tool and the
        // allowlisted one are declared; irrelevant direct tools are not.
        let first = requests(&report, 1);
        assert!(!first.is_empty());
        for tools in &first {
            assert!(
                tools.contains(&"forecast_weather".to_owned()),
                "{version}: {tools:?}"
            );
            assert!(
                tools.contains(&"notes_add".to_owned()),
                "{version}: allowlisted"
            );
            for internal in ["read", "bash", "codemode", "read_mcp_resource"] {
                assert!(
                    tools.contains(&internal.to_owned()),
                    "{version}: {internal} is internal"
                );
            }
            for withheld in ["bar_chart", "web_fetch", "db_query", "mcp__docs__search"] {
                assert!(
                    !tools.contains(&withheld.to_owned()),
                    "{version}: {withheld} in {tools:?}"
                );
            }
        }
        assert_eq!(
            calls(&report, 1, "forecast_weather"),
            vec![(false, "forecast_weather ran".to_owned())]
        );
        assert_eq!(
            calls(&report, 1, "notes_add"),
            vec![(false, "notes_add ran".to_owned())]
        );
        // A withheld direct tool is not declared, so Pi refuses it before any tool_call.
        let bar = calls(&report, 1, "bar_chart");
        assert!(
            bar[0].0 && bar[0].1.contains("not found"),
            "{version}: {bar:?}"
        );
        // A nested codemode call to a withheld deferred tool is blocked by the gate, with the reason.
        let nested = calls(&report, 1, "codemode");
        assert!(
            nested[0]
                .1
                .contains("BLOCKED=Blocked: `mcp__kb__lookup` is not available for this task"),
            "{version}: {nested:?}"
        );
        // Resource tools: listing every server is blocked; reading a server that is not available
        // is blocked; the reasons name what would allow it.
        let list = calls(&report, 1, "list_mcp_resources");
        assert!(
            list[0].0 && list[0].1.contains("must name a `server`"),
            "{version}: {list:?}"
        );
        let read = calls(&report, 1, "read_mcp_resource");
        assert!(
            read[0].0 && read[0].1.contains("`mcp__docs`"),
            "{version}: {read:?}"
        );
        // tool_search re-activates a withheld tool; the next boundary removes it again.
        let lookups = calls(&report, 1, "mcp__kb__lookup");
        assert!(
            lookups.iter().all(|(err, _)| *err),
            "{version}: {lookups:?}"
        );
        // Step 2: a tool made available by a later prompt is declared and runs.
        let second = requests(&report, 2);
        assert!(
            second
                .iter()
                .all(|t| t.contains(&"convert_currency".to_owned())),
            "{version}: {second:?}"
        );
        assert_eq!(
            calls(&report, 2, "convert_currency"),
            vec![(false, "convert_currency ran".to_owned())]
        );
        // Step 4, after /reload: the ledger is replayed; what was available stays available.
        assert_eq!(
            calls(&report, 4, "forecast_weather"),
            vec![(false, "forecast_weather ran".to_owned())]
        );
        // The session file replays to exactly the availability the gate enforced.
        let state = replay(&report);
        for available in ["forecast_weather", "convert_currency", "notes_add"] {
            assert!(state.is_tool_available(available), "{version}: {available}");
        }
        for withheld in [
            "mcp__kb__lookup",
            "web_fetch",
            "db_query",
            "mcp__docs__search",
        ] {
            assert!(!state.is_tool_available(withheld), "{version}: {withheld}");
        }
        assert!(ledger_entries(&report).len() >= 3, "{version}");
    }
}

#[test]
fn group_mode_inside_pi() {
    for version in VERSIONS {
        let report = run("group.json", version);
        // The docs server is picked as a whole: its tools and its resources are reachable.
        for tools in requests(&report, 1) {
            assert!(
                tools.contains(&"mcp__docs__search".to_owned()),
                "{version}: {tools:?}"
            );
            assert!(
                tools.contains(&"mcp__docs__get_page".to_owned()),
                "{version}: {tools:?}"
            );
            assert!(
                !tools.contains(&"bar_chart".to_owned()),
                "{version}: the toolbox extension is withheld"
            );
        }
        assert_eq!(
            calls(&report, 1, "mcp__docs__search"),
            vec![(false, "docs result".to_owned())]
        );
        assert_eq!(
            calls(&report, 1, "read_mcp_resource"),
            vec![(false, "docs readme text".to_owned())]
        );
        // A nested call into a server that was not picked is blocked, naming the group key.
        let nested = calls(&report, 1, "codemode");
        assert!(
            nested[0]
                .1
                .contains("add `mcp__kb` to the global *MCP servers & extensions* list"),
            "{version}: {nested:?}"
        );
        let state = replay(&report);
        assert!(state.is_group_key_available("mcp__docs"), "{version}");
        assert!(!state.is_group_key_available("mcp__kb"), "{version}");
        assert!(!state.is_group_key_available("ext__toolbox"), "{version}");
    }
}

#[test]
fn steering_text_is_a_prompt_boundary_inside_pi() {
    for version in VERSIONS {
        let report = run("steer.json", version);
        let requests = requests(&report, 0);
        assert!(
            !requests[0].contains(&"convert_currency".to_owned()),
            "{version}: {requests:?}"
        );
        // The turn that delivers the steering text already has the tool it needs.
        assert!(
            requests[1].contains(&"convert_currency".to_owned()),
            "{version}: {requests:?}"
        );
        assert_eq!(
            calls(&report, 0, "convert_currency"),
            vec![(false, "convert_currency ran".to_owned())]
        );
    }
}

#[test]
fn tree_and_resume_follow_the_ledger_inside_pi() {
    for version in VERSIONS {
        let report = run("branches.json", version);
        let has = |step: u64, tool: &str| {
            requests(&report, step)
                .iter()
                .all(|t| t.contains(&tool.to_owned()))
        };
        assert!(
            has(1, "convert_currency"),
            "{version}: made available by the second prompt"
        );
        // `/tree` back to before that prompt: on this branch it was never made available.
        assert!(
            !has(3, "convert_currency") && has(3, "forecast_weather"),
            "{version}"
        );
        assert!(calls(&report, 3, "convert_currency")[0].0, "{version}");
        // Resume replays the file's leaf (the branch after the move).
        assert!(
            !has(5, "convert_currency") && has(5, "forecast_weather"),
            "{version}"
        );
        assert_eq!(
            calls(&report, 5, "forecast_weather"),
            vec![(false, "forecast_weather ran".to_owned())]
        );
        let state = replay(&report);
        assert!(
            state.is_tool_available("forecast_weather")
                && !state.is_tool_available("convert_currency"),
            "{version}"
        );
    }
}

/// Issue 17, item 1: after a reopen (resume), a `/reload` and a fork, a tool made available by a
/// decision, by a pin and by switching off is declared and callable, though the new process never
/// took it out itself (what this extension withholds is recomputed from the branch's ledger).
#[test]
fn availability_survives_reopen_reload_and_fork_inside_pi() {
    for version in VERSIONS {
        let report = run("reopen.json", version);
        let errors: Vec<&Value> = report["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| !s["error"].is_null())
            .collect();
        assert!(errors.is_empty(), "{version}: {errors:?}");
        let declared = |step: u64, tool: &str| {
            let all = requests(&report, step);
            !all.is_empty() && all.iter().all(|t| t.contains(&tool.to_owned()))
        };
        // The first prompt withholds the currency converter, the chart and the fetcher.
        assert!(declared(0, "forecast_weather"), "{version}");
        for tool in ["convert_currency", "bar_chart", "web_fetch"] {
            assert!(!declared(0, tool), "{version}: {tool}");
        }
        // Reopened: a decision makes the converter available, and Pi runs it.
        assert!(declared(2, "convert_currency"), "{version}");
        assert_eq!(
            calls(&report, 2, "convert_currency"),
            vec![(false, "convert_currency ran".to_owned())],
            "{version}"
        );
        // Reloaded, then pinned: the chart is declared and runs.
        assert!(declared(5, "bar_chart"), "{version}");
        assert_eq!(
            calls(&report, 5, "bar_chart"),
            vec![(false, "bar_chart ran".to_owned())],
            "{version}"
        );
        // Forked, then switched off: every tool the branch withheld is back.
        for tool in [
            "web_fetch",
            "bar_chart",
            "convert_currency",
            "forecast_weather",
        ] {
            assert!(declared(8, tool), "{version}: {tool}");
        }
    }
}

/// Issue 17: a first pick that failed before a restart (nothing recorded, every external tool
/// withheld) does not leave a decided tool inactive: after the reopen, what a decision makes
/// available is declared and runs, also once switched off.
#[test]
fn a_failed_first_pick_before_a_reopen_leaves_nothing_stuck_inside_pi() {
    for version in VERSIONS {
        let report = run("first-pick-failed.json", version);
        let declared = |step: u64, tool: &str| {
            let all = requests(&report, step);
            !all.is_empty() && all.iter().all(|t| t.contains(&tool.to_owned()))
        };
        for tool in ["forecast_weather", "convert_currency", "web_fetch"] {
            assert!(
                !declared(0, tool),
                "{version}: {tool} withheld by the failed pick"
            );
        }
        assert!(declared(3, "convert_currency"), "{version}");
        assert_eq!(
            calls(&report, 3, "convert_currency"),
            vec![(false, "convert_currency ran".to_owned())],
            "{version}"
        );
        // Switched off: what this process decided stays declared. (The tools the failed pick
        // withheld before the restart were never recorded, so which of Pi's inactive tools were
        // this extension's is unknown: Pi 1.6.0 declares them again by itself, Pi 1.3.0 keeps
        // the loadout it replayed.)
        assert!(declared(5, "convert_currency"), "{version}");
    }
}

#[test]
fn one_of_pis_own_models_decides_inside_pi() {
    for version in VERSIONS {
        let report = run("pi-model.json", version);
        let requests = report["requests"].as_array().unwrap();
        // The first request to the model is the decision: no tools, and a JSON document of
        // names, labels and descriptions as the user message.
        assert_eq!(
            requests[0]["tools"].as_array().unwrap().len(),
            0,
            "{version}"
        );
        let decision = requests[0]["userTexts"][0].as_str().unwrap();
        assert!(
            decision.starts_with("{\"prompt\":\"Render a bar chart of this CSV\",\"candidates\":["),
            "{version}: {decision}"
        );
        // Its answer picked the first candidate; the agent's requests declare it and nothing else
        // external.
        for tools in requests[1..].iter().map(|r| r["tools"].as_array().unwrap()) {
            assert!(
                tools.contains(&Value::from("bar_chart")),
                "{version}: {tools:?}"
            );
            assert!(
                !tools.contains(&Value::from("web_fetch")),
                "{version}: {tools:?}"
            );
        }
        assert_eq!(
            calls(&report, 0, "bar_chart"),
            vec![(false, "bar_chart ran".to_owned())]
        );
        assert!(calls(&report, 0, "web_fetch")[0].0, "{version}");
        let state = replay(&report);
        assert!(
            state.is_tool_available("bar_chart") && !state.is_tool_available("web_fetch"),
            "{version}"
        );
    }
}

#[test]
fn a_fork_enforces_exactly_what_its_session_file_replays_to() {
    for version in VERSIONS {
        let report = run("fork.json", version);
        let files: Vec<&str> = report["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["sessionFile"].as_str())
            .collect();
        assert_ne!(
            files.first(),
            files.last(),
            "{version}: the fork wrote a new session file"
        );
        let state = replay(&report);
        assert!(
            state.is_tool_available("forecast_weather"),
            "{version}: picked before the fork point"
        );
        for tool in ["forecast_weather", "convert_currency"] {
            let results = calls(&report, 3, tool);
            assert_eq!(results.len(), 1, "{version}: {tool}");
            assert_eq!(
                !results[0].0,
                state.is_tool_available(tool),
                "{version}: {tool}: {results:?}"
            );
        }
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The screens a `command` step's custom component drew: (the key pressed, the lines).
fn screens(report: &Value, step: usize) -> Vec<(Value, Option<Vec<String>>)> {
    report["steps"][step]["screens"]
        .as_array()
        .expect("the command opened a custom component")
        .iter()
        .map(|s| {
            let lines = s["lines"].as_array().map(|l| {
                l.iter()
                    .map(|x| x.as_str().unwrap().to_owned())
                    .collect::<Vec<_>>()
            });
            (s["key"].clone(), lines)
        })
        .collect()
}

/// A settings row of the dialog as Pi's components draw it (`→ Label   Value`, or two spaces
/// instead of the cursor glyph): whether the cursor is on it, and its value.
fn row(lines: &[String], label: &str) -> Option<(bool, String)> {
    lines.iter().find_map(|line| {
        let (selected, rest) = match line.strip_prefix("→ ") {
            Some(rest) => (true, rest),
            None => (false, line.strip_prefix("  ")?),
        };
        let value = rest.strip_prefix(label)?;
        value
            .starts_with("  ")
            .then(|| (selected, value.trim().to_owned()))
    })
}

/// `/decisions` in Pi's interactive mode (the harness binds a scripted UI context in `tui` mode
/// and drives the extension's `ctx.ui.custom` component with raw terminal input): the Tools
/// tab's editors are ranked against the latest prompt, a save writes exactly the expected
/// settings files, and the next prompt uses the new pin.
#[test]
fn the_tools_tab_edits_the_settings_files_and_the_next_prompt_uses_them() {
    for version in VERSIONS {
        let report = run("tools-tab.json", version);
        // Before the pin, the weather prompt withholds the chart tool.
        for tools in requests(&report, 0) {
            assert!(
                !tools.contains(&"bar_chart".to_owned()),
                "{version}: {tools:?}"
            );
        }
        let shown = screens(&report, 1);
        let first = shown[0].1.as_ref().unwrap();
        assert_eq!(first[0], "Decisions · Tools", "{version}");
        assert_eq!(
            row(first, "Tool filtering"),
            Some((true, "On".into())),
            "{version}"
        );
        let editor = shown[4].1.as_ref().unwrap();
        assert_eq!(editor[0], "Always allowed tools · Global", "{version}");
        assert!(
            editor.iter().any(|l| l.contains("gone_tool  (not loaded)")),
            "{version}: {editor:#?}"
        );
        // Expanded: the toolbox's tools ranked by the embedded scorer against the weather
        // prompt (alphabetically, bar_chart would be first).
        let expanded = shown[6].1.as_ref().unwrap();
        let members: Vec<&String> = expanded
            .iter()
            .filter(|l| l.starts_with("      [ ] "))
            .collect();
        assert_eq!(members.len(), 12, "{version}: {expanded:#?}");
        assert_eq!(members[0], "      [ ] forecast_weather", "{version}");
        // The save closed the editor and the tab shows two global entries.
        let saved = shown[18].1.as_ref().unwrap();
        assert_eq!(shown[18].0, "\u{1b}[115;5u");
        assert_eq!(
            row(saved, "Always allowed tools (global)"),
            Some((true, "2 entries".into())),
            "{version}: {saved:#?}"
        );
        assert!(report["steps"][1]["closedByComponent"] == true, "{version}");
        assert!(
            shown.last().unwrap().1.is_none(),
            "{version}: closed by Esc"
        );
        // Exactly what the files say now: the pin added, the name not loaded kept, the cadence
        // changed, every other key untouched; the project file (edited, then cancelled) as it was.
        let root = Path::new(report["root"].as_str().unwrap());
        assert_eq!(
            read_json(&root.join("agent/pi-context-decisions/settings.json")),
            serde_json::json!({
                "tools": {
                    "enabled": true,
                    "mode": "tools",
                    "cadence": "tool-round",
                    "alwaysAllowedTools": ["gone_tool", "bar_chart"]
                },
                "decision": {"provider": "embedded"},
                "keepMe": {"x": 1}
            }),
            "{version}"
        );
        assert_eq!(
            read_json(&root.join("project/.pi/pi-context-decisions.json")),
            serde_json::json!({
                "alwaysAllowed": ["some-skill"],
                "alwaysAllowedTools": ["gone_project_tool"]
            }),
            "{version}"
        );
        // The next prompt declares the pinned tool (not the unrelated one) and runs it.
        for tools in requests(&report, 2) {
            assert!(
                tools.contains(&"bar_chart".to_owned()),
                "{version}: {tools:?}"
            );
            assert!(
                !tools.contains(&"web_fetch".to_owned()),
                "{version}: {tools:?}"
            );
        }
        assert_eq!(
            calls(&report, 2, "bar_chart"),
            vec![(false, "bar_chart ran".to_owned())],
            "{version}"
        );
        assert!(calls(&report, 2, "web_fetch")[0].0, "{version}");
        assert!(replay(&report).is_tool_available("bar_chart"), "{version}");
    }
}

/// The `/decisions` Advanced tab in Pi's interactive mode: Tab switches to it, Enter cycles the
/// shared decision provider (each step written to the global settings file at once, every other
/// key kept), Right steps the threshold, Shift+Tab goes back; with the provider set to none the
/// next prompt selects no model and keeps every tool available.
#[test]
fn the_advanced_tab_sets_the_provider_to_none_and_the_next_prompt_keeps_every_tool() {
    for version in VERSIONS {
        let report = run("advanced-tab.json", version);
        // With the embedded scorer, the weather prompt withholds the chart tool.
        let before = requests(&report, 0);
        assert!(!before.is_empty(), "{version}");
        for tools in &before {
            assert!(
                !tools.contains(&"bar_chart".to_owned()),
                "{version}: {tools:?}"
            );
        }
        let shown = screens(&report, 1);
        let at = |i: usize| shown[i].1.clone().unwrap();
        let tools_tab = at(0);
        assert_eq!(tools_tab[0], "Decisions · Tools", "{version}");
        // Pi's key bindings spell the hints (pi-tui's, as Pi passes them), and they are whole.
        assert!(
            tools_tab.last().unwrap().contains("tab Advanced"),
            "{version}: {tools_tab:#?}"
        );
        assert!(
            tools_tab.iter().any(|l| l.trim() == "(1/7)"),
            "{version}: a counter"
        );
        assert_eq!(at(1)[0], "Decisions · Advanced", "{version}");
        assert_eq!(
            row(&at(1), "Decision model"),
            Some((true, "Built-in scorer".into())),
            "{version}"
        );
        assert_eq!(
            row(&at(2), "Decision model"),
            Some((true, "A Pi model".into())),
            "{version}"
        );
        // The Model row of a Pi provider lists Pi's registry (the faux model the harness
        // registered); Enter writes the one chosen.
        let picker = at(4);
        assert_eq!(
            picker[0], "Decisions · Advanced · Decision model",
            "{version}"
        );
        let listed: Vec<&String> = picker.iter().filter(|l| l.starts_with("→ faux/")).collect();
        assert_eq!(listed.len(), 1, "{version}: {picker:#?}");
        let chosen = listed[0]
            .trim_start_matches("→ ")
            .split_whitespace()
            .next()
            .unwrap()
            .to_owned();
        assert_eq!(
            row(&at(5), "Model"),
            Some((true, chosen.clone())),
            "{version}"
        );
        assert_eq!(
            row(&at(7), "Decision model"),
            Some((true, "An HTTP endpoint".into())),
            "{version}"
        );
        let none = at(8);
        assert_eq!(
            row(&none, "Decision model"),
            Some((true, "None".into())),
            "{version}"
        );
        assert!(
            none.iter()
                .any(|l| l.trim_start().starts_with("No decision model is selected")),
            "{version}: {none:#?}"
        );
        assert_eq!(
            row(&at(13), "Threshold"),
            Some((true, "0.65".into())),
            "{version}"
        );
        // Enter opens pi-tui's Input on the saved value; the typed value is written as typed.
        let input = at(14);
        assert_eq!(input[0], "Decisions · Advanced · Threshold", "{version}");
        assert!(
            input.iter().any(|l| l.contains("> 0.65")),
            "{version}: {input:#?}"
        );
        assert_eq!(
            row(&at(20), "Threshold"),
            Some((true, "0.613".into())),
            "{version}"
        );
        let back = at(21);
        assert_eq!(back[0], "Decisions · Tools", "{version}");
        assert!(
            back.iter().any(|l| l
                .trim_start()
                .starts_with("No decision model is selected, so every tool")),
            "{version}: {back:#?}"
        );
        assert!(
            shown.last().unwrap().1.is_none(),
            "{version}: closed by Esc"
        );
        let root = Path::new(report["root"].as_str().unwrap());
        assert_eq!(
            read_json(&root.join("agent/pi-context-decisions/settings.json")),
            serde_json::json!({
                "tools": {"enabled": true, "mode": "tools", "cadence": "prompt"},
                "decision": {"provider": null, "model": chosen, "threshold": 0.613},
                "keepMe": {"x": 1}
            }),
            "{version}"
        );
        // No model: the next prompt declares every tool, the ones withheld before included,
        // and the chart tool runs.
        let after = requests(&report, 2);
        assert!(!after.is_empty(), "{version}");
        for tools in &after {
            for earlier in &before {
                for name in earlier {
                    assert!(tools.contains(name), "{version}: {name} in {tools:?}");
                }
            }
            for name in ["bar_chart", "web_fetch", "forecast_weather"] {
                assert!(tools.contains(&name.to_owned()), "{version}: {tools:?}");
            }
        }
        assert_eq!(
            calls(&report, 2, "bar_chart"),
            vec![(false, "bar_chart ran".to_owned())],
            "{version}"
        );
    }
}

/// Issue 19: `/decisions export-inventory FILE` inside Pi writes Pi's own inventory to a new
/// file in the project folder, which `context-decisions pick` reads. Issue 30, item 10: the spec
/// gives `tools`/`mcp` no argument but `list`, so `/decisions tools export FILE` writes nothing
/// and says what `tools` takes.
#[test]
fn the_inventory_exports_from_inside_pi_for_the_program() {
    let dir = pcd_tests::temp_dir("export-e2e");
    let scenario = dir.join("scenario.json");
    let on =
        json!({"tools": {"enabled": true, "mode": "tools"}, "decision": {"provider": "embedded"}});
    std::fs::write(
        &scenario,
        json!({
            "description": "export the inventory",
            "files": {"agent/pi-context-decisions/settings.json": on},
            "extensions": [
                {"path": repo().join("tests/e2e/fixtures/toolbox/index.ts"), "via": "path"},
                {"path": repo().join("extension/index.ts"), "via": "path"}
            ],
            "steps": [
                {"command": "/decisions export-inventory exported.json"},
                {"command": "/decisions tools export old.json"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    for version in VERSIONS {
        let report = run_file(&scenario, version, &addon());
        let said = report["steps"][0]["stderr"].as_str().unwrap();
        assert!(said.starts_with("Wrote "), "{version}: {said}");
        let old = report["steps"][1]["stderr"].as_str().unwrap();
        assert!(old.contains("takes only `list`"), "{version}: {old}");
        let project = Path::new(report["root"].as_str().unwrap()).join("project");
        assert!(!project.join("old.json").exists(), "{version}");
        let file = project.join("exported.json");
        let inventory = context_decisions::inventory::read_inventory_file(&file).unwrap();
        assert!(
            inventory.tools.iter().any(|t| t.name == "forecast_weather"),
            "{version}"
        );
        let out = Command::new(pcd_tests::program())
            .args([
                "pick",
                "--lexical",
                "--prompt",
                "What is the weather forecast for Lisbon?",
                "--tools",
            ])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{version}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("forecast_weather"),
            "{version}"
        );
    }
}

/// `/decisions` where Pi has no UI (print and JSON modes): the settings and the four
/// allowlists are printed on stderr, with where to change them; nothing is written.
#[test]
fn without_a_terminal_decisions_prints_the_settings_and_the_lists() {
    for version in VERSIONS {
        let report = run("tools-tab-print.json", version);
        let text = report["steps"][0]["stderr"].as_str().unwrap();
        for line in [
            "Tool filtering: On · Decide: Each tool · When: Once, at the first prompt · Decision model: the built-in scorer",
            "Always allowed tools (global): `gone_tool`",
            "MCP servers & extensions (global): `ext__toolbox`",
            "Always allowed tools (project): `db_query`",
            "MCP servers & extensions (project): none",
        ] {
            assert!(text.contains(line), "{version}: {line} in {text}");
        }
        assert!(
            text.contains("`.pi/pi-context-decisions.json`"),
            "{version}"
        );
        assert!(report["steps"][0]["screens"].is_null(), "{version}");
        let list = report["steps"][1]["stderr"].as_str().unwrap();
        assert!(list.contains("ext__toolbox"), "{version}: {list}");
        let root = Path::new(report["root"].as_str().unwrap());
        assert_eq!(
            read_json(&root.join("project/.pi/pi-context-decisions.json")),
            serde_json::json!({"alwaysAllowedTools": ["db_query"]}),
            "{version}"
        );
    }
}

/// Pi refuses the extension's entries (its session manager throws, as on a full disk): nothing the
/// refused decisions would have allowed runs, the person is told, and the next prompt decides
/// again; the session file replays to exactly what the gate enforced.
#[test]
fn refused_entries_grant_nothing_inside_pi() {
    let blocked = "could not be written to the session";
    for version in VERSIONS {
        let report = run("refused-entry.json", version);
        assert_eq!(report["steps"][1]["refusedEntries"], 2, "{version}");
        // The pick's entry was refused, so the tool it chose stays unavailable; a nested call
        // scores it lazily, that entry is refused too, and the call is blocked with the reason.
        let lookups = calls(&report, 1, "mcp__kb__lookup");
        assert!(
            lookups.len() == 1 && lookups[0].0 && lookups[0].1.contains(blocked),
            "{version}: {lookups:?}"
        );
        let warnings: Vec<&str> = report["notifications"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["step"] == 1 && n["type"] == "warning")
            .filter_map(|n| n["message"].as_str())
            .collect();
        assert!(
            !warnings.is_empty()
                && warnings
                    .iter()
                    .all(|w| w.starts_with("A decision could not be written")),
            "{version}: {warnings:?}"
        );
        // The next prompt decides again (as the branch's first pick, since none was written),
        // and the call runs.
        assert_eq!(
            calls(&report, 2, "mcp__kb__lookup"),
            vec![(false, "kb result".to_owned())],
            "{version}"
        );
        // The hidden notice of the refused run does not speak of the refused pick; the next
        // run's does.
        let path = report["sessionFile"].as_str().unwrap();
        let notices: Vec<String> = std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["customType"] == "context-decisions-notice")
            .map(|e| e["content"].to_string())
            .collect();
        assert_eq!(notices.len(), 2, "{version}: {notices:?}");
        assert!(
            !notices[0].contains("mcp__kb__lookup"),
            "{version}: {notices:?}"
        );
        assert!(
            notices[1].contains("mcp__kb__lookup"),
            "{version}: {notices:?}"
        );
        let state = replay(&report);
        assert!(state.is_tool_available("mcp__kb__lookup"), "{version}");
        for withheld in ["bar_chart", "web_fetch", "db_query"] {
            assert!(!state.is_tool_available(withheld), "{version}: {withheld}");
        }
    }
}

/// Installed from a settings `packages` entry (the extension's folder, and the repository's root,
/// whose `package.json` names the extension in its `pi` manifest: what `pi install` of the
/// repository, by path or git, writes) rather than `-e`: it loads, picks, withholds and records
/// the same way.
#[test]
fn loads_from_a_settings_packages_entry() {
    let scenarios = repo().join("tests/e2e/scenarios");
    let mut from_root: Value =
        serde_json::from_str(&std::fs::read_to_string(scenarios.join("package.json")).unwrap())
            .unwrap();
    from_root["extensions"][0]["path"] = json!(repo().join("tests/e2e/fixtures/toolbox/index.ts"));
    from_root["extensions"][1]["path"] = json!(repo().canonicalize().unwrap());
    let root_scenario = pcd_tests::temp_dir("package-root").join("scenario.json");
    std::fs::write(&root_scenario, from_root.to_string()).unwrap();
    for (version, scenario) in VERSIONS.iter().flat_map(|v| {
        [
            (*v, scenarios.join("package.json")),
            (*v, root_scenario.clone()),
        ]
    }) {
        let report = run_file(&scenario, version, &addon());
        let loaded = report["loadedExtensions"].to_string();
        // The extension's folder loads its index.ts; the repository's root its own index.ts,
        // which Pi lists under the clone's name (issue 34, item 2) and which re-exports it.
        let entry = if scenario == root_scenario {
            format!("{}/index.ts", repo().canonicalize().unwrap().display())
        } else {
            "/extension/index.ts".to_owned()
        };
        assert!(loaded.contains(&entry), "{version}: {loaded}");
        for tools in requests(&report, 0) {
            assert!(
                tools.contains(&"forecast_weather".to_owned()),
                "{version}: {tools:?}"
            );
            assert!(
                !tools.contains(&"bar_chart".to_owned()),
                "{version}: {tools:?}"
            );
        }
        assert_eq!(
            calls(&report, 0, "forecast_weather"),
            vec![(false, "forecast_weather ran".to_owned())]
        );
        assert!(replay(&report).is_tool_available("forecast_weather"));
    }
}

/// The extension copied where no addon can be found, and pointed at a file that is not one: Pi
/// keeps running, the person is warned once, and with filtering on every external call is
/// blocked with the reason while internal tools run; with filtering off nothing is blocked.
/// Issue 17, item 11: when the switch cannot be read (the settings file is not valid JSON),
/// only tools the project allowlist's `alwaysAllowedTools` names pass (a project entry pins project-scope tools; the
/// toolbox is then a project package), and the warning names the settings file.
#[test]
fn without_its_addon_it_warns_once_and_fails_closed_only_while_on() {
    let dir = pcd_tests::temp_dir("no-addon");
    // Issue 34, item 2: two install forms. A clone (a checkout: Cargo.toml and bindings/node
    // beside extension/) and an npm package (the extension's files at its root, with
    // platform.cjs, and no platform package installed).
    let clone = dir.join("clone");
    let npm = dir.join("npm");
    std::fs::create_dir_all(clone.join("extension")).unwrap();
    std::fs::create_dir_all(clone.join("bindings/node")).unwrap();
    std::fs::write(clone.join("Cargo.toml"), "[workspace]\n").unwrap();
    std::fs::create_dir_all(&npm).unwrap();
    for file in ["index.ts", "dialog.ts", "package.json", "platform.cjs"] {
        std::fs::copy(
            repo().join("extension").join(file),
            clone.join("extension").join(file),
        )
        .unwrap();
        std::fs::copy(repo().join("extension").join(file), npm.join(file)).unwrap();
    }
    let platform = String::from_utf8(pcd_tests::node_eval(&format!(
        "process.stdout.write(require({:?}).platformPackage() ?? '')",
        repo().join("extension/platform.cjs")
    )))
    .unwrap();
    let not_an_addon = dir.join("broken.node");
    std::fs::write(&not_an_addon, "not a shared library").unwrap();
    let toolbox = repo().join("tests/e2e/fixtures/toolbox/index.ts");
    for switch in ["on", "off", "unreadable"] {
        let via = if switch == "unreadable" {
            "project-package"
        } else {
            "path"
        };
        let ext = if switch == "on" {
            clone.join("extension")
        } else {
            npm.clone()
        };
        let mut scenario = serde_json::json!({
            "description": "no addon",
            "ui": "tui",
            "extensions": [
                { "path": toolbox, "via": via },
                { "path": ext.join("index.ts"), "via": "path" }
            ],
            "mcpServers": {
                "docs": {
                    "config": { "command": "in-memory", "exposure": "direct" },
                    "tools": [{ "name": "search", "description": "Search the docs.", "result": "r" }],
                    "resources": [{ "uri": "docs://readme", "name": "readme", "text": "readme" }]
                }
            },
            // Step 0 lets the in-memory MCP server connect before the first prompt.
            "steps": [{
                "wait": 300
            }, {
                "prompt": "Render a bar chart of this CSV",
                "responses": [
                    { "toolCalls": [
                        { "name": "bar_chart", "arguments": { "text": "a,1" } },
                        { "name": "bash", "arguments": { "command": "echo internal-ran" } },
                        { "name": "list_mcp_resources", "arguments": {} },
                        { "name": "read_mcp_resource",
                          "arguments": { "server": "docs", "uri": "docs://readme" } }
                    ] },
                    { "text": "done" }
                ]
            }, {
                "prompt": "Again",
                "responses": [
                    { "toolCalls": [ { "name": "web_fetch", "arguments": { "text": "x" } } ] },
                    { "text": "done" }
                ]
            }, {
                // Issue 34, item 2: /decisions exists without the addon and says what to run.
                "command": "/decisions"
            }]
        });
        match switch {
            "on" => {
                scenario["files"] = serde_json::json!({
                    "agent/pi-context-decisions/settings.json": {
                        "tools": { "enabled": true }, "decision": { "provider": "embedded" }
                    }
                })
            }
            "unreadable" => {
                scenario["files"] = serde_json::json!({
                    "agent/pi-context-decisions/settings.json": "{ \"tools\": { \"enabled\": tru",
                    "project/.pi/pi-context-decisions.json": {
                        "alwaysAllowedTools": ["web_fetch"], "alwaysAllowed": ["bar_chart"]
                    }
                })
            }
            _ => {}
        }
        let path = dir.join(format!("scenario-{switch}.json"));
        std::fs::write(&path, scenario.to_string()).unwrap();
        for version in VERSIONS {
            let report = run_file(&path, version, &not_an_addon);
            let warnings: Vec<String> = report["notifications"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|n| n["message"].as_str())
                .filter(|m| m.contains("could not load its native addon"))
                .map(str::to_owned)
                .collect();
            // Once at startup, and once as /decisions' reply (never a prompt to the model).
            assert_eq!(
                warnings.len(),
                2,
                "{version} {switch}: warned once, and /decisions said it"
            );
            // What to run for this install form, and only that.
            let said = &warnings[1];
            if switch == "on" {
                assert!(
                    said.contains("path or git install of a clone")
                        && said.contains("bash bindings/node/build.sh")
                        && !said.contains("pi install npm:"),
                    "{version}: a clone is told to build: {said}"
                );
            } else if platform.is_empty() {
                assert!(said.contains("No prebuilt addon"), "{version}: {said}");
            } else {
                assert!(
                    said.contains("pi install npm:pi-context-decisions")
                        && said.contains(&format!("{platform}, is not installed"))
                        && !said.contains("build.sh"),
                    "{version}: an npm install is told to reinstall, naming {platform}: {said}"
                );
            }
            assert!(
                warnings[0].contains("pi-context-decisions/settings.json"),
                "{version}: names the settings file"
            );
            let bash = calls(&report, 1, "bash");
            assert!(
                !bash[0].0 && bash[0].1.contains("internal-ran"),
                "{version}: {bash:?}"
            );
            // The resource tools are routed by the server they name, which needs the addon: they
            // are blocked while filtering is on (or may be), like every external tool. A name
            // in the project file's `alwaysAllowed` (not a tool list) pins nothing.
            for (step, tool) in [
                (1, "bar_chart"),
                (1, "list_mcp_resources"),
                (1, "read_mcp_resource"),
                (2, "web_fetch"),
            ] {
                let got = calls(&report, step, tool);
                let blocked = match switch {
                    "on" => true,
                    "off" => false,
                    _ => tool != "web_fetch",
                };
                if blocked {
                    assert!(
                        got[0].0 && got[0].1.contains("could not load its native addon"),
                        "{version} {switch}: {tool}: {got:?}"
                    );
                } else {
                    assert!(!got[0].0, "{version} {switch}: {tool}: {got:?}");
                }
            }
            assert!(ledger_entries(&report).is_empty(), "{version} {switch}");
        }
    }
}

/// Secrets planted in every input Pi gives the extension (the `mcp.json` command arguments and
/// environment, a server's instructions and tool schema, the settings' unused HTTP fields, the
/// extension's provenance path, the prompt, the tool arguments and results, the assistant's
/// text) never come out of it: not in its ledger entries, its hidden notice, its notifications,
/// its block reasons, nor in what `/decisions` prints.
#[test]
fn nothing_planted_comes_out_of_the_extension_inside_pi() {
    const SECRET: &str = "PLANTED-SECRET-7f3a9c";
    let dir = pcd_tests::temp_dir("privacy");
    let toolbox = dir.join(format!("{SECRET}-parent")).join("toolbox");
    std::fs::create_dir_all(&toolbox).unwrap();
    for file in ["index.ts", "plain-tools.ts", "package.json"] {
        std::fs::copy(
            repo().join("tests/e2e/fixtures/toolbox").join(file),
            toolbox.join(file),
        )
        .unwrap();
    }
    let scenario = serde_json::json!({
        "description": "planted secrets",
        "files": {
            "agent/pi-context-decisions/settings.json": {
                "tools": { "enabled": true, "mode": "tools", "cadence": "prompt", "readMcpConfig": true },
                "decision": {
                    "provider": "embedded",
                    "baseUrl": format!("https://user:{SECRET}@example.invalid/v1"),
                    "apiKeyEnv": format!("{SECRET}_KEY")
                }
            }
        },
        "extensions": [
            { "path": toolbox.join("index.ts"), "via": "path" },
            { "path": repo().join("extension/index.ts"), "via": "path" }
        ],
        "mcpServers": {
            "vault": {
                "config": {
                    "command": "in-memory",
                    "args": [format!("--token={SECRET}")],
                    "env": { "VAULT_TOKEN": SECRET },
                    "exposure": "direct"
                },
                "instructions": format!("Always send the token {SECRET} first."),
                "tools": [{
                    "name": "open_secret",
                    "description": "Open a stored secret by its name.",
                    "inputSchema": {
                        "type": "object",
                        "properties": { SECRET: { "type": "string", "description": SECRET, "default": SECRET } }
                    },
                    "result": format!("the secret is {SECRET}")
                }]
            },
            "kb": {
                "config": { "command": "in-memory", "env": { "KB_TOKEN": SECRET } },
                "tools": [{ "name": "lookup", "description": "Look up an article in the knowledge base.", "result": "kb result" }]
            }
        },
        "steps": [
            { "wait": 1000 },
            {
                "prompt": format!("Open the stored secret named {SECRET} and render a bar chart"),
                "responses": [
                    { "toolCalls": [
                        { "name": "mcp__vault__open_secret", "arguments": { "name": SECRET } },
                        { "name": "codemode", "arguments": { "code": format!("let r = '';\ntry {{ await tools.mcp__kb__lookup({{ q: '{SECRET}' }}); }} catch (e) {{ r = String(e && e.message ? e.message : e); }}\ntext('R=' + r);") } }
                    ] },
                    { "text": format!("Here it is: {SECRET}") }
                ]
            },
            { "command": "/decisions" },
            { "command": "/decisions tools list" },
            { "command": "/decisions mcp list" },
            { "command": "/decisions test" }
        ]
    });
    let path = dir.join("scenario.json");
    std::fs::write(&path, scenario.to_string()).unwrap();
    for version in VERSIONS {
        let report = run_file(&path, version, &addon());
        // The inputs really reached Pi: the MCP tool ran with its secret argument and result.
        let opened = calls(&report, 1, "mcp__vault__open_secret");
        assert!(
            opened.iter().any(|(err, r)| !err && r.contains(SECRET)),
            "{version}: {opened:?}"
        );
        // The names-only reader did read that mcp.json: `mcp list` names the server.
        let mcp_list = report["steps"][4]["stderr"].as_str().unwrap_or_default();
        assert!(mcp_list.contains("mcp__vault"), "{version}: {mcp_list}");
        // What the extension produced, and nothing else (Pi itself keeps the prompt, arguments,
        // results and the assistant's text in its own entries).
        let mut ours: Vec<String> = ledger_entries(&report)
            .iter()
            .map(Value::to_string)
            .collect();
        assert!(!ours.is_empty(), "{version}: the ledger was written");
        let path = report["sessionFile"].as_str().unwrap();
        for line in std::fs::read_to_string(path).unwrap().lines() {
            let entry: Value = serde_json::from_str(line).unwrap();
            if entry["customType"] == "context-decisions-notice" {
                ours.push(line.to_owned());
            }
        }
        assert!(
            ours.iter().any(|e| e.contains("context-decisions-notice")),
            "{version}: the notice is in the session file"
        );
        for note in report["notifications"].as_array().unwrap() {
            ours.push(note.to_string());
        }
        for step in report["steps"].as_array().unwrap() {
            ours.push(step["stderr"].as_str().unwrap_or_default().to_owned());
        }
        let blocked = calls(&report, 1, "mcp__kb__lookup");
        assert!(
            blocked.iter().all(|(err, _)| *err) && !blocked.is_empty(),
            "{version}: {blocked:?}"
        );
        ours.extend(blocked.into_iter().map(|(_, r)| r));
        for text in &ours {
            assert!(!text.contains(SECRET), "{version}: {text}");
            assert!(!text.contains("7f3a9c"), "{version}: {text}");
        }
    }
}

/// `/decisions tools list` in Pi's RPC mode (a real `pi --mode rpc` process, no TUI): the list
/// reaches the client as a `notify` UI request, and the command is handled.
#[test]
fn decisions_prints_through_rpc_notifications() {
    use std::io::{BufRead, BufReader, Write};
    for version in VERSIONS {
        let dir = pcd_tests::temp_dir("rpc");
        let agent = dir.join("agent");
        let project = dir.join("project");
        std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            agent.join("pi-context-decisions/settings.json"),
            r#"{"tools": {"enabled": true}, "decision": {"provider": "embedded"}}"#,
        )
        .unwrap();
        let mut child = Command::new(installer("node"))
            .arg(installer(version).join("dist/bundle/cli.js"))
            .args(["--mode", "rpc", "-e"])
            .arg(repo().join("extension"))
            .arg("-e")
            .arg(repo().join("tests/e2e/fixtures/toolbox"))
            .current_dir(&project)
            .env("PI_CODING_AGENT_DIR", &agent)
            .env("PI_OFFLINE", "1")
            .env("PI_CONTEXT_DECISIONS_ADDON", addon())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("pi starts");
        let mut stdin = child.stdin.take().unwrap();
        writeln!(
            stdin,
            r#"{{"id": "1", "type": "prompt", "message": "/decisions tools list"}}"#
        )
        .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut notified = None;
        let mut handled = false;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !(handled && notified.is_some()) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let Ok(line) = rx.recv_timeout(left) else {
                break;
            };
            let Ok(event) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if event["type"] == "extension_ui_request" && event["method"] == "notify" {
                notified = event["message"].as_str().map(str::to_owned);
            }
            if event["type"] == "response" && event["id"] == "1" {
                handled = event["success"] == true;
            }
        }
        drop(stdin);
        child.kill().ok();
        child.wait().ok();
        assert!(handled, "{version}: the command was handled");
        let text = notified.unwrap_or_default();
        assert!(
            text.contains("tool filtering is on") && text.contains("bar_chart"),
            "{version}: {text}"
        );
        assert!(text.contains("withheld"), "{version}: {text}");
    }
}

/// Filtering on but no decision model selected: nothing is scored, every tool stays available
/// (recorded as unscored, so the session file replays to it) and every call runs.
#[test]
fn no_model_selected_keeps_everything_available_inside_pi() {
    for version in VERSIONS {
        let report = run("no-model.json", version);
        let tools = ["bar_chart", "web_fetch", "mcp__docs__search"];
        let requests = requests(&report, 1);
        assert!(!requests.is_empty(), "{version}");
        for declared in &requests {
            for tool in tools {
                assert!(
                    declared.contains(&tool.to_owned()),
                    "{version}: {tool} in {declared:?}"
                );
            }
        }
        for tool in tools {
            assert_ran(&report, 1, tool, version);
        }
        let entries = ledger_entries(&report);
        assert!(
            entries.iter().any(|e| e["data"]["basis"] == "unscored"),
            "{version}: {entries:?}"
        );
        let state = replay(&report);
        for tool in tools {
            assert!(state.is_tool_available(tool), "{version}: {tool}");
        }
    }
}

/// Another extension edits `systemPromptOptions.selectedTools` in `before_agent_start` (and Pi
/// applies the edit to its live loadout): the edit wins for that run, so a withheld tool it
/// adds is declared then, but a call to it is still blocked; the next run is restricted again
/// and declares what this extension made available.
#[test]
fn an_explicit_selected_tools_edit_wins_for_its_run_only_inside_pi() {
    for version in VERSIONS {
        let report = run("selected-tools.json", version);
        let first = requests(&report, 0);
        assert!(
            first[0].contains(&"web_fetch".to_owned()),
            "{version}: the edit wins for its run: {first:?}"
        );
        let fetch = calls(&report, 0, "web_fetch");
        assert!(
            fetch[0].0 && fetch[0].1.contains("not available"),
            "{version}: {fetch:?}"
        );
        for tools in requests(&report, 1) {
            assert!(
                tools.contains(&"bar_chart".to_owned()),
                "{version}: declared again: {tools:?}"
            );
            assert!(!tools.contains(&"web_fetch".to_owned()), "{version}");
        }
        assert_eq!(
            calls(&report, 1, "bar_chart"),
            vec![(false, "bar_chart ran".to_owned())]
        );
    }
}

/// Issue 17, item 9: a decision by one of Pi's models gets the `decision.timeoutMs` deadline, as
/// an HTTP one does. The faux model answers only after 4 s (ignoring the abort), the timeout is
/// 400 ms: the round fails (fail mode closed: nothing added, the failure said with the code
/// `timed-out`), it is not reported as cancelled, and the run goes on without the model's late answer.
#[test]
fn a_pi_model_decision_times_out_as_a_failed_round_inside_pi() {
    for version in VERSIONS {
        let started = std::time::Instant::now();
        let report = run("pi-model-timeout.json", version);
        let said = notifications(&report);
        assert!(
            !said.iter().any(|m| m.contains("was cancelled")),
            "{version}: {said:?}"
        );
        // Once per prompt, with its own reason code.
        let failed: Vec<&&str> = said
            .iter()
            .filter(|m| m.starts_with("Deciding tools took longer than the timeout"))
            .collect();
        assert_eq!(failed.len(), 1, "{version}: {said:?}");
        assert!(
            failed[0].ends_with("(reason: `timed-out`)"),
            "{version}: {said:?}"
        );
        // The late answer would have picked bar_chart: nothing was added.
        let result = calls(&report, 0, "bar_chart");
        assert!(result[0].0, "{version}: {result:?}");
        let state = replay(&report);
        assert!(!state.is_tool_available("bar_chart"), "{version}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{version}"
        );
    }
}

/// Issue 30, item 1: cadence `initial`, and the first prompt has no candidate (no external tool
/// is registered yet). It is still the first pick: a tool that registers at the end of the first
/// turn is scored against it at the tool round, so the model's call to it runs, and the ledger
/// marks the first prompt without copying its text.
#[test]
fn initial_cadence_scores_a_late_tool_against_a_first_prompt_without_candidates_inside_pi() {
    for version in VERSIONS {
        let report = run("initial-late-arrival.json", version);
        assert_eq!(
            calls(&report, 0, "forecast_weather"),
            vec![(false, "forecast_weather ran".to_owned())],
            "{version}"
        );
        let entries = ledger_entries(&report);
        assert!(
            entries
                .iter()
                .any(|e| e["data"]["boundary"] == "initial-prompt"
                    && e["data"]["firstPrompt"] == "next-user-message"),
            "{version}: {entries:?}"
        );
        assert!(
            !serde_json::to_string(&entries).unwrap().contains("Lisbon"),
            "{version}: no prompt text in the ledger"
        );
        assert!(
            replay(&report).is_tool_available("forecast_weather"),
            "{version}"
        );
    }
}

/// Issue 30, item 5: a Pi model Pi knows but has no credentials for (a missing key) is a
/// configuration error, so `failMode: open` does not apply: nothing is added, the warning says
/// the model is not set up, and the call to the tool the round would have granted is blocked.
#[test]
fn a_pi_model_without_a_key_fails_closed_even_with_fail_mode_open_inside_pi() {
    if std::env::var_os("OPENAI_API_KEY").is_some() {
        return;
    }
    for version in VERSIONS {
        let report = run("pi-model-missing-key.json", version);
        let said = notifications(&report);
        assert!(
            said.iter().any(|m| m.contains("not set up correctly")),
            "{version}: {said:?}"
        );
        assert!(
            !said.iter().any(|m| m.contains("fail mode is open")),
            "{version}: {said:?}"
        );
        let result = calls(&report, 0, "bar_chart");
        assert!(result[0].0, "{version}: {result:?}");
        assert!(!replay(&report).is_tool_available("bar_chart"), "{version}");
    }
}

/// Issue 30, item 8: tool filtering switched on from the `/decisions` dialog while a run is in
/// progress. The built-in `bash` runs, and `web_fetch`, registered before, stays available (the
/// branch's baseline, written at the first call) instead of being scored against a chart prompt
/// and withheld. (Pi's registry is read at that call when the Session has none: never while
/// filtering was off; `enable-mid-run.json` among the scripts shows that path.)
#[test]
fn enabling_mid_run_keeps_internal_and_registered_tools_callable_inside_pi() {
    for version in VERSIONS {
        let report = run("enable-mid-run.json", version);
        let during = &report["commandsDuringRuns"];
        assert_eq!(
            during.as_array().map(Vec::len),
            Some(1),
            "{version}: {during}"
        );
        let settings = read_json(
            &Path::new(report["root"].as_str().unwrap())
                .join("agent/pi-context-decisions/settings.json"),
        );
        assert_eq!(settings["tools"]["enabled"], true, "{version}: {settings}");
        for tool in ["bash", "web_fetch"] {
            assert_ran(&report, 0, tool, version);
        }
        let entries = ledger_entries(&report);
        assert!(
            entries.iter().any(|e| e["data"]["basis"] == "baseline"
                && e["data"]["tools"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t == "web_fetch"))),
            "{version}: {entries:?}"
        );
        assert!(replay(&report).is_tool_available("web_fetch"), "{version}");
    }
}

/// Issue 17, item 6: off means off. With filtering off, `/decisions tools list`, `/decisions mcp
/// list` and opening `/decisions` never call `getAllTools()`; the lists say filtering is off and
/// name the saved allowlists.
#[test]
fn off_lists_and_the_dialog_never_read_the_registry_inside_pi() {
    for version in VERSIONS {
        let report = run("off-lists.json", version);
        let reads: Vec<&Value> = report["registryReads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| (1..=3).contains(&r["step"].as_i64().unwrap_or(-1)))
            .collect();
        assert!(reads.is_empty(), "{version}: {reads:?}");
        let said = notifications(&report);
        assert!(
            said.iter().any(|m| m.starts_with("Tools: tool filtering is off")
                && m.contains("`web_fetch`")),
            "{version}: {said:?}"
        );
        assert!(
            said.iter().any(
                |m| m.starts_with("MCP servers & extensions: tool filtering is off")
                    && m.contains("`mcp__docs`")
            ),
            "{version}: {said:?}"
        );
        let dialog: Vec<String> = report["steps"][3]["screens"][0]["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            row(&dialog, "Tool filtering"),
            Some((true, "Off".into())),
            "{version}: {dialog:#?}"
        );
    }
}

/// What the extension put in Pi's footer, in order (its status key's texts).
fn footer_statuses(report: &Value) -> Vec<&str> {
    report["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["key"] == "context-decisions")
        .filter_map(|s| s["text"].as_str())
        .collect()
}

/// Issue 17, item 10: while one of Pi's models decides slowly (1.5 s) before the first request,
/// Pi's working row reads Deciding Context (Pi shows the row from the first turn only unless the
/// extension asks for it), and the footer status shows the available external tools before and
/// after the round.
#[test]
fn a_slow_pi_model_decision_shows_the_working_row_and_the_status_inside_pi() {
    for version in VERSIONS {
        let report = run("pi-model-slow.json", version);
        let rows = report["workingRow"].as_array().unwrap();
        let deciding = rows
            .iter()
            .position(|r| r["text"] == "Deciding Context")
            .unwrap_or_else(|| panic!("{version}: {rows:?}"));
        let next = rows
            .get(deciding + 1)
            .unwrap_or_else(|| panic!("{version}: {rows:?}"));
        let shown_ms = next["at"].as_i64().unwrap() - rows[deciding]["at"].as_i64().unwrap();
        assert!(shown_ms >= 1000, "{version}: shown {shown_ms} ms: {rows:?}");
        assert_ne!(next["text"], "Deciding Context", "{version}");
        let statuses = footer_statuses(&report);
        assert!(
            statuses.iter().all(|s| s.starts_with("tools ")),
            "{version}: {statuses:?}"
        );
        let first = statuses.first().copied().unwrap_or_default();
        let last = statuses.last().copied().unwrap_or_default();
        assert!(first.starts_with("tools 0/"), "{version}: {statuses:?}");
        // Issue 34, item 9: the footer says what the branch withholds, as an estimate.
        assert!(
            first.ends_with(" tokens withheld") && first.contains(" · ~"),
            "{version}: {statuses:?}"
        );
        assert!(last.starts_with("tools 1/"), "{version}: {statuses:?}");
    }
}

/// Issue 34, item 8, inside a real Pi: the footer counted the last round's snapshot, so a tool
/// that registered after it (a server connecting late) was missing from "tools A/N" until the
/// next round. Here a tool registers at the end of a turn that ran no tool (no round follows):
/// the footer counts it at once, withheld.
#[test]
fn the_footer_counts_a_late_tool_without_a_round_inside_pi() {
    for version in VERSIONS {
        let report = run("footer-late-tool.json", version);
        let statuses = footer_statuses(&report);
        assert!(
            statuses.first().is_some_and(|s| s.starts_with("tools 0/0")),
            "{version}: {statuses:?}"
        );
        assert!(
            statuses.last().is_some_and(|s| s.starts_with("tools 0/1 ")),
            "{version}: {statuses:?}"
        );
    }
}

/// Issue 16 inside a real Pi: with the semantic model installed (its folder in `PCD_MODEL_DIR`),
/// "Is the preview deployment finished?" makes `deploy_status` available through the semantic
/// signal (the lexical scorer alone withholds it: `node_addon.rs` shows it on the same texts),
/// the call runs, the ledger round records it, and `/decisions` says the semantic signal decided.
/// The bound is raised for the test (`PCD_SEMANTIC_WAIT_MS`), since the model loads at Pi's start
/// while the first prompt is already waiting.
#[test]
fn a_paraphrase_gets_its_tool_through_the_semantic_signal_inside_pi() {
    let Some(model) = pcd_tests::model_dir() else {
        return;
    };
    for version in VERSIONS {
        let dir = pcd_tests::temp_dir("e2e-semantic");
        let (cache, agent) = (dir.join("vectors.bin"), dir.join("agent"));
        let report = run_with_model(
            &repo().join("tests/e2e/scenarios/semantic.json"),
            version,
            &model,
            &dir,
        );
        let requests = requests(&report, 1);
        assert!(!requests.is_empty(), "{version}");
        // The round runs in before_agent_start: the first request already declares it, and
        // nothing the round withheld (the rest of the toolbox).
        assert!(
            requests[0].contains(&"deploy_status".to_owned())
                && !requests[0].contains(&"web_fetch".to_owned()),
            "{version}: {requests:?}"
        );
        let results = calls(&report, 1, "deploy_status");
        assert!(
            !results.is_empty() && results.iter().all(|(err, _)| !err),
            "{version}: {results:?}"
        );
        let entries = ledger_entries(&report);
        let round = entries
            .iter()
            .find(|e| {
                e["data"]["basis"] == "scored"
                    && e["data"]["tools"]
                        .as_array()
                        .is_some_and(|t| t.iter().any(|t| t == "deploy_status"))
            })
            .unwrap_or_else(|| panic!("{version}: {entries:?}"));
        // The scorer note beside the round says the semantic signal decided it.
        let notes: Vec<&Value> = report["customEntries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["customType"] == pcd_ledger::SCORER_CUSTOM_TYPE)
            .map(|e| &e["data"])
            .collect();
        assert!(
            notes
                .iter()
                .any(|n| n["round"] == round["data"]["round"] && n["scorer"] == "semantic+lexical"),
            "{version}: {notes:?}"
        );
        let said = report["steps"][2]["stderr"].as_str().unwrap();
        assert!(
            said.contains("Scored by: the built-in scorer with the semantic model, from the folder named by PCD_MODEL_DIR."),
            "{version}: {said}"
        );
        assert!(cache.is_file(), "{version}: the vectors are cached on disk");
        // The tools' texts are cached; the prompt's never is, not even as a vector.
        let loaded = pcd_embed::MiniLm::load(&model).unwrap();
        let secret = pcd_embed::cache::CacheSecret::load_or_create(
            &agent
                .join("pi-context-decisions")
                .join(pcd_embed::cache::SECRET_FILE),
        )
        .unwrap();
        let (mut cached, problem) = pcd_embed::cache::VectorCache::open(
            &cache,
            &secret,
            loaded.vectors_key(),
            pcd_embed::DIMENSION,
            u64::MAX,
        );
        assert_eq!(problem, None, "{version}");
        assert!(!cached.is_empty(), "{version}");
        assert!(
            cached.get("Is the preview deployment finished?").is_none(),
            "{version}: the prompt's vector is on disk"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Issue 31 inside a real Pi: with the semantic model, the issue's three prompts that share no
/// word with the tool they need ("How hot is it in Rome?", "Convert this sentence to French",
/// "what is 17% of 2340") each get it made available in their own round: the request after the
/// prompt declares it, its call runs, and a scored ledger round names it. Before the recall-first
/// policy none of the three got anything.
#[test]
fn prompts_in_other_words_get_their_tools_inside_pi() {
    let Some(model) = pcd_tests::model_dir() else {
        return;
    };
    // The scenario's external tools: the toolbox's, the assistant's and the deploy fixture's.
    const EXTERNAL: [&str; 16] = [
        "bar_chart",
        "bar_table",
        "web_fetch",
        "web_search",
        "db_query",
        "db_schema",
        "notes_add",
        "notes_search",
        "todo_add",
        "translate_text",
        "forecast_weather",
        "convert_currency",
        "weather_now",
        "calculator",
        "deploy_preview",
        "deploy_status",
    ];
    let needs = [(1, "weather_now"), (2, "translate_text"), (3, "calculator")];
    for version in VERSIONS {
        let dir = pcd_tests::temp_dir("e2e-other-words");
        let report = run_with_model(
            &repo().join("tests/e2e/scenarios/other-words.json"),
            version,
            &model,
            &dir,
        );
        let entries = ledger_entries(&report);
        for (step, tool) in needs {
            let requests = requests(&report, step);
            assert!(
                !requests.is_empty() && requests[0].iter().any(|t| t == tool),
                "{version}: step {step}: {tool} not declared: {requests:?}"
            );
            // Decided, not opened: each round adds at most the cap of 6 of the 16 external tools.
            let external = requests[0]
                .iter()
                .filter(|t| EXTERNAL.contains(&t.as_str()))
                .count();
            assert!(
                external <= 6 * step as usize,
                "{version}: step {step}: {external} external tools: {requests:?}"
            );
            let results = calls(&report, step, tool);
            assert!(
                !results.is_empty() && results.iter().all(|(err, _)| !err),
                "{version}: step {step}: {tool}: {results:?}"
            );
            assert!(
                entries.iter().any(|e| e["data"]["basis"] == "scored"
                    && e["data"]["tools"]
                        .as_array()
                        .is_some_and(|t| t.iter().any(|t| t == tool))),
                "{version}: no scored round names {tool}: {entries:?}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Issue 31 inside a real Pi: with the semantic model, a prompt gets the tool it needs, then a
/// turn that only carries on with the task ("ok, keep going") makes nothing new available: the
/// request after it declares exactly the tools of the first prompt's last request. The need
/// gate read such turns as requests for something outside the code, and each made up to the
/// cap of unrelated tools available. Not every such turn is read so yet: on these 16 tools
/// "thanks, that looks right" (the gate's logit -1.6, near a short request's) still makes six
/// available, tied at 0.66 (`BENCHMARKS.md`, "Issue 31: a turn that only continues the task").
#[test]
fn a_turn_that_only_continues_the_task_makes_nothing_new_available_inside_pi() {
    let Some(model) = pcd_tests::model_dir() else {
        return;
    };
    for version in VERSIONS {
        let dir = pcd_tests::temp_dir("e2e-follow-up");
        let report = run_with_model(
            &repo().join("tests/e2e/scenarios/follow-up.json"),
            version,
            &model,
            &dir,
        );
        let first = requests(&report, 1);
        assert!(
            first.iter().any(|r| r.iter().any(|t| t == "weather_now")),
            "{version}: weather_now not declared: {first:?}"
        );
        let mut before: Vec<String> = first.last().unwrap().clone();
        before.sort();
        let after = requests(&report, 2);
        assert!(!after.is_empty(), "{version}: no request after the turn");
        for mut declared in after {
            declared.sort();
            assert_eq!(declared, before, "{version}: after \"ok, keep going\"");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Issue 34, item 1 inside Pi: a path install of a checkout that ran `cargo xtask fetch-model`
/// (this repository, as `pi install ./clone` records it: a settings `packages` entry) uses the
/// model in the checkout's own `.cache/models`, with no `PCD_MODEL_DIR`, no model in the agent
/// folder and no npm model package: the paraphrase gets `deploy_status` through the semantic
/// signal, and `/decisions` names the checkout's folder. Before, the addon looked for "beside a
/// build" from Node's own binary and scored lexically.
#[test]
fn a_path_install_of_a_checkout_uses_its_model_inside_pi() {
    let folder = repo().join(".cache/models/all-minilm-l6-v2");
    if !folder.join("model.safetensors").is_file() {
        assert!(
            std::env::var_os("PCD_REQUIRE_MODEL").is_none(),
            "PCD_REQUIRE_MODEL is set but the checkout has no model: run `cargo xtask fetch-model`"
        );
        return;
    }
    let mut scenario: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("tests/e2e/scenarios/semantic.json")).unwrap(),
    )
    .unwrap();
    let fixtures = repo().join("tests/e2e/fixtures");
    scenario["extensions"] = json!([
        { "path": fixtures.join("toolbox/index.ts"), "via": "path" },
        { "path": fixtures.join("deploy/index.ts"), "via": "path" },
        { "path": repo(), "via": "package" }
    ]);
    // Item 9 inside Pi: the list says which tools this session called.
    scenario["steps"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "command": "/decisions tools list" }));
    for version in VERSIONS {
        let dir = pcd_tests::temp_dir("e2e-checkout-model");
        let path = dir.join("scenario.json");
        std::fs::write(&path, scenario.to_string()).unwrap();
        // No model folder named (the harness otherwise names one without a model): the
        // checkout's is found.
        let report = run_with_model(&path, version, Path::new(""), &dir);
        let requests = requests(&report, 1);
        assert!(
            requests
                .first()
                .is_some_and(|r| r.contains(&"deploy_status".to_owned())),
            "{version}: {requests:?}"
        );
        let said = report["steps"][2]["stderr"].as_str().unwrap();
        assert!(
            said.contains(
                "Scored by: the built-in scorer with the semantic model, from the checkout's \
                 .cache/models/all-minilm-l6-v2."
            ),
            "{version}: {said}"
        );
        let list = report["steps"][3]["stderr"].as_str().unwrap();
        assert!(
            list.contains("CALLS") && list.contains("Called this session: 1 tool (1 call)."),
            "{version}: {list}"
        );
        // Item 2: Pi's startup list (its own labelling) names the package after the clone's
        // folder, as it names any package installed by path, not "extension".
        let labels = &report["loadedExtensions"][0]["labels"];
        let root = repo().canonicalize().unwrap();
        let clone = root.file_name().unwrap().to_string_lossy().into_owned();
        let labels: Vec<&str> = labels
            .as_array()
            .unwrap_or_else(|| panic!("{version}: Pi labels its extensions: {labels}"))
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            labels.contains(&clone.as_str()) && !labels.contains(&"extension"),
            "{version}: {labels:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A tool result that carries a lone surrogate (an emoji cut in half) reaches Pi's branch, and
/// JSON text of the branch then holds `\ud83d` alone, which a strict decoder rejects. The addon
/// reads each entry on its own, so the branch stays readable when `/reload` reads it again:
/// what was made available before stays available, and the next round is recorded.
#[test]
fn a_lone_surrogate_in_a_tool_result_loses_no_availability_inside_pi() {
    let dir = pcd_tests::temp_dir("lone-surrogate");
    let toolbox = repo().join("tests/e2e/fixtures/toolbox/index.ts");
    let scenario = serde_json::json!({
        "description": "a lone surrogate on the branch",
        "files": {
            "agent/pi-context-decisions/settings.json": {
                "tools": { "enabled": true, "mode": "tools", "cadence": "prompt",
                           "alwaysAllowedTools": ["mcp__docs__search"] },
                "decision": { "provider": "embedded" }
            }
        },
        "extensions": [
            { "path": toolbox, "via": "path" },
            { "path": repo().join("extension/index.ts"), "via": "path" }
        ],
        "mcpServers": {
            "docs": {
                "config": { "command": "in-memory", "exposure": "direct" },
                "tools": [{ "name": "search", "description": "Search the docs.",
                            "result": "half an emoji: \u{FFFD}" }]
            }
        },
        // The in-memory MCP server connects while Pi starts: without the wait the first call
        // to its tool found it not registered yet about one run in three.
        "steps": [{
            "wait": 300
        }, {
            "prompt": "What's the weather forecast for Lisbon?",
            "responses": [
                { "toolCalls": [
                    { "name": "forecast_weather", "arguments": { "text": "Lisbon" } },
                    { "name": "mcp__docs__search", "arguments": { "text": "x" } }
                ] },
                { "text": "done" }
            ]
        }, {
            "reload": true
        }, {
            "prompt": "thanks",
            "responses": [
                { "toolCalls": [
                    { "name": "forecast_weather", "arguments": { "text": "Porto" } }
                ] },
                { "text": "done" }
            ]
        }]
    });
    // The harness reads the scenario with JSON.parse, which keeps `\ud83d` as a lone surrogate.
    let text = scenario.to_string().replace('\u{FFFD}', "\\ud83d");
    let path = dir.join("scenario.json");
    std::fs::write(&path, text).unwrap();
    for version in VERSIONS {
        let report = run_file(&path, version, &pcd_tests::addon());
        let search = calls(&report, 1, "mcp__docs__search");
        assert!(!search[0].0, "{version}: {search:?}");
        for step in [1, 3] {
            let forecast = calls(&report, step, "forecast_weather");
            assert!(!forecast[0].0, "{version}: step {step}: {forecast:?}");
        }
        // A round for each prompt: the second was read from a branch holding the surrogate.
        let rounds = ledger_entries(&report);
        assert!(rounds.len() >= 2, "{version}: {rounds:?}");
    }
}
