//! The napi-rs addon loads in Node 22 (the Node that Pi 1.3+ needs, installed from the npm
//! registry by `tests/support/install-pi.sh`) and answers as the Rust library does.
//!
//! The addon is built by the test itself (`pcd_tests::addon` runs `cargo build -p pcd-node`).

use pcd_tests::{addon, install, repo};
use std::process::Command;

#[test]
fn the_addon_classifies_as_the_library_does() {
    let addon = addon();
    let example = repo().join("examples/inventory.json");
    let script = format!(
        r#"const a = require({addon:?});
           const rows = JSON.parse(a.classifyGroups(require('fs').readFileSync({example:?}, 'utf8')));
           let error = null;
           try {{ a.classifyGroups('{{"tools":"sk-live-SECRET"}}'); }} catch (e) {{ error = e.message; }}
           process.stdout.write(JSON.stringify({{ version: a.addonVersion(), rows, error }}));"#,
    );
    let stdout = pcd_tests::node_eval(&script);
    let got: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(got["version"], env!("CARGO_PKG_VERSION"));
    let inventory = context_decisions::inventory::read_inventory_file(&example).unwrap();
    let expected =
        context_decisions::groups::rows_json(&context_decisions::groups::rows(&inventory));
    assert_eq!(got["rows"], expected);
    let error = got["error"].as_str().unwrap();
    assert!(error.contains("expected a JSON array of tools"), "{error}");
    assert!(!error.contains("SECRET"));
}

/// A real HTTP decision endpoint on loopback (OpenAI-compatible chat completions) answers the
/// addon's decision job on libuv's thread pool; the answers finish the Session's round.
#[test]
fn the_addon_answers_decision_jobs_over_http() {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        // One request per decision batch; the example inventory makes one batch.
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let user = request["messages"][1]["content"].as_str().unwrap();
        let document: serde_json::Value = serde_json::from_str(user).unwrap();
        let scores: Vec<serde_json::Value> = document["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| serde_json::json!({"id": c["id"], "score": if c["name"] == "bar_chart" { 0.9 } else { 0.0 }}))
            .collect();
        let content = serde_json::json!({"scores": scores}).to_string();
        let reply = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string();
        let mut stream = stream;
        write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}", reply.len()).unwrap();
        request["model"].as_str().unwrap().to_owned()
    });
    let dir = std::env::temp_dir().join(format!("pcd-addon-http-{}", std::process::id()));
    let agent = dir.join("agent");
    std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
    std::fs::write(
        agent.join("pi-context-decisions/settings.json"),
        serde_json::json!({
            "tools": {"enabled": true},
            "decision": {"provider": "http", "baseUrl": format!("http://127.0.0.1:{port}/v1"), "model": "local-model"}
        })
        .to_string(),
    )
    .unwrap();
    let script = format!(
        r#"(async () => {{
             const a = require({addon:?});
             const fs = require('fs');
             const tools = fs.readFileSync({example:?}, 'utf8');
             const names = JSON.parse(tools).filter(t => t.exposure !== 'deferred').map(t => t.name);
             const s = a.PiSession.start(JSON.stringify({{reason: 'startup', nonce: 'n', agentDirEnv: {agent:?}, home: {dir:?}, cwd: {dir:?}, trusted: false}}), '[]');
             const first = JSON.parse(s.boundary(JSON.stringify({{type: 'prompt', text: 'Render a bar chart of this CSV'}}), tools, names));
             const job = first.find(e => e.type === 'decide');
             const answers = await s.httpJob(job.requests).run();
             const after = JSON.parse(s.decided(job.job, answers, names));
             process.stdout.write(JSON.stringify({{ first, after }}));
           }})();"#,
        addon = addon(),
        example = repo().join("examples/inventory.json"),
        agent = agent,
        dir = dir,
    );
    let stdout = pcd_tests::node_eval(&script);
    assert_eq!(server.join().unwrap(), "local-model");
    let got: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert!(
        got["first"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["type"] != "appendEntry"
                || (e["data"]["basis"] == "baseline" && e["data"]["tools"].is_null())),
        "nothing but the empty baseline before the answers"
    );
    let round = got["after"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "appendEntry")
        .expect("the round is recorded");
    assert_eq!(round["data"]["tools"], serde_json::json!(["bar_chart"]));
    assert_eq!(round["data"]["basis"], "scored");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An HTTP decision endpoint that accepts the connection and never answers: the job fails at
/// the deadline (`decision.timeoutMs`), the round adds nothing (fail closed), and the person is
/// told why.
#[test]
fn a_decision_endpoint_that_never_answers_adds_nothing() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let (_stream, _) = listener.accept().unwrap();
        // Hold the connection open, silent, until the test is done.
        let _ = stop_rx.recv_timeout(std::time::Duration::from_secs(30));
    });
    let dir = std::env::temp_dir().join(format!("pcd-addon-silent-{}", std::process::id()));
    let agent = dir.join("agent");
    std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
    std::fs::write(
        agent.join("pi-context-decisions/settings.json"),
        serde_json::json!({
            "tools": {"enabled": true},
            "decision": {"provider": "http", "baseUrl": format!("http://127.0.0.1:{port}/v1"), "model": "m", "timeoutMs": 300}
        })
        .to_string(),
    )
    .unwrap();
    let script = format!(
        r#"(async () => {{
             const a = require({addon:?});
             const tools = require('fs').readFileSync({example:?}, 'utf8');
             const names = JSON.parse(tools).filter(t => t.exposure !== 'deferred').map(t => t.name);
             const s = a.PiSession.start(JSON.stringify({{reason: 'startup', nonce: 'n', agentDirEnv: {agent:?}, home: {dir:?}, cwd: {dir:?}}}), '[]');
             const first = JSON.parse(s.boundary(JSON.stringify({{type: 'prompt', text: 'Render a bar chart'}}), tools, names));
             const job = first.find(e => e.type === 'decide');
             const started = Date.now();
             const answers = await s.httpJob(job.requests).run();
             const waited = Date.now() - started;
             const after = JSON.parse(s.decided(job.job, answers, names));
             process.stdout.write(JSON.stringify({{ answers: JSON.parse(answers), after, waited }}));
           }})();"#,
        addon = addon(),
        example = repo().join("examples/inventory.json"),
        agent = agent,
        dir = dir,
    );
    let out = Command::new(install("node"))
        .arg("-e")
        .arg(script)
        .output()
        .unwrap();
    // The server stops whatever Node did, so a failure cannot leave its thread waiting.
    stop_tx.send(()).unwrap();
    server.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        got["answers"][0],
        serde_json::json!({"error": "timed-out"}),
        "a model that never answers timed out"
    );
    let waited = got["waited"].as_u64().unwrap();
    assert!(
        waited < 10_000,
        "the deadline bounds the wait ({waited} ms)"
    );
    let after = got["after"].as_array().unwrap();
    assert!(
        after.iter().all(|e| e["type"] != "appendEntry"),
        "nothing is recorded"
    );
    assert!(
        after.iter().any(|e| e["type"] == "warn"),
        "the person is told"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Tools tab through the addon in Node, as the extension's `ctx.ui.custom` component drives
/// it: raw terminal input in, lines out; a save writes exactly the expected JSON (names only,
/// names not loaded kept, unknown keys kept) and the session uses the new lists at once; a
/// ranking for a model outside the session shows `ranking…` until `tabRanked`.
#[test]
fn the_tools_tab_renders_takes_keys_and_saves_exactly_the_files() {
    let dir = std::env::temp_dir().join(format!("pcd-addon-tab-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let agent = dir.join("agent");
    let cwd = dir.join("cwd");
    std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
    std::fs::create_dir_all(cwd.join(".pi")).unwrap();
    let settings_path = agent.join("pi-context-decisions/settings.json");
    let project_path = cwd.join(".pi/pi-context-decisions.json");
    std::fs::write(
        &settings_path,
        serde_json::json!({
            "tools": {"enabled": true, "alwaysAllowedTools": ["gone_tool"], "alwaysAllowedMcpServers": ["dev-radius"]},
            "decision": {"provider": "pi", "model": "faux/model"},
            "other": [1, 2]
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        &project_path,
        r#"{"alwaysAllowed": ["skill"], "alwaysAllowedTools": ["gone_project_tool", "has space"]}"#,
    )
    .unwrap();
    let entries = serde_json::json!([
        {"type": "message", "id": "a1", "parentId": null, "message": {"role": "user", "content": "Query the development database schema"}}
    ])
    .to_string();
    let script = format!(
        r#"const a = require({addon:?});
           const fs = require('fs');
           const tools = fs.readFileSync({example:?}, 'utf8');
           const s = a.PiSession.start(JSON.stringify({{reason: 'startup', nonce: 'n', agentDirEnv: {agent:?}, home: {dir:?}, cwd: {cwd:?}, trusted: false}}), {entries:?});
           s.boundary(JSON.stringify({{type: 'reconcile'}}), tools, []);
           const out = {{ screens: [], steps: [] }};
           const key = (data) => {{ const step = JSON.parse(s.tabInput(data)); out.steps.push(step); out.screens.push(s.tabRender(100, 46)); return step; }};
           s.tabOpen(tools, {entries:?});
           out.screens.push(s.tabRender(100, 46));
           // The project tools editor: a ranking job for Pi's model.
           for (const k of ['\x1b[B', '\x1b[B', '\x1b[B', '\x1b[B', '\x1b[B']) key(k);
           const opened = key('\r');
           out.job = opened.job;
           // Answer it: the db_schema tool first.
           const answers = opened.job.requests.map(body => {{
             const doc = JSON.parse(body);
             return {{ text: JSON.stringify({{ scores: doc.candidates.map(c => ({{ id: c.id, score: c.name === 'db_schema' ? 0.9 : 0.2 }})) }}) }};
           }});
           s.tabRanked(opened.job.job, JSON.stringify(answers));
           out.ranked = s.tabRender(100, 46);
           // Expand the first group (pi-db), pick db_schema (ranked first), save.
           key('\x1b[B'); key('\r'); key('\x1b[B'); key(' '); key('\x13');
           out.projectAfterSave = fs.readFileSync({project:?}, 'utf8');
           // The global groups editor: clear the dev-radius pin, pin docs; save (kitty Ctrl+S).
           key('\x1b[A'); key('\r');
           out.groupsEditor = s.tabRender(100, 46);
           key(' '); key('\x1b[B'); key(' ');
           key('\x1b[115;5u');
           out.globalAfterSave = fs.readFileSync({settings:?}, 'utf8');
           out.list = s.list('mcp');
           out.close = key('\x1b');
           out.afterClose = s.tabRender(100, 46);
           out.warnings = s.takeWarnings();
           process.stdout.write(JSON.stringify(out));"#,
        addon = addon(),
        example = repo().join("examples/inventory.json"),
        agent = agent,
        dir = dir,
        cwd = cwd,
        entries = entries,
        project = project_path,
        settings = settings_path,
    );
    let stdout = pcd_tests::node_eval(&script);
    let got: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    let lines = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_owned())
            .collect()
    };
    let first = lines(&got["screens"][0]);
    assert_eq!(first[0], "Decisions · Tools");
    assert!(first.iter().all(|l| l.chars().count() <= 100));
    // Opening the project tools editor asked for a ranking and shows `ranking…`.
    let job = &got["job"];
    assert_eq!(job["type"], "decide");
    let requests = job["requests"].as_array().unwrap();
    let body = requests[0].as_str().unwrap();
    assert!(body.contains("Query the development database schema"));
    assert!(body.contains("db_schema") && body.contains("todo_add"));
    assert!(
        !body.contains("web_fetch"),
        "only this editor's (project) tools: {body}"
    );
    let opened = lines(&got["screens"][6]);
    assert_eq!(opened[0], "Always allowed tools · Project");
    assert!(opened[1].starts_with("ranking…"), "{opened:#?}");
    assert!(opened
        .iter()
        .any(|l| l.contains("gone_project_tool  (not loaded)")));
    let ranked = lines(&got["ranked"]);
    assert!(!ranked[1].contains("ranking…"));
    // The project file: db_schema added, the name not loaded kept, the invalid entry (never
    // read) and the older readers' list kept.
    let project: serde_json::Value =
        serde_json::from_str(got["projectAfterSave"].as_str().unwrap()).unwrap();
    assert_eq!(
        project,
        serde_json::json!({
            "alwaysAllowed": ["skill"],
            "alwaysAllowedTools": ["gone_project_tool", "has space", "db_schema"]
        })
    );
    let groups_editor = lines(&got["groupsEditor"]);
    assert_eq!(groups_editor[0], "MCP servers & extensions · Global");
    // The global file: the dev-radius pin removed (whatever its spelling), docs pinned by key,
    // the tool list and the other keys untouched.
    let global: serde_json::Value =
        serde_json::from_str(got["globalAfterSave"].as_str().unwrap()).unwrap();
    assert_eq!(
        global,
        serde_json::json!({
            "tools": {"enabled": true, "alwaysAllowedTools": ["gone_tool"], "alwaysAllowedMcpServers": ["mcp__docs"]},
            "decision": {"provider": "pi", "model": "faux/model"},
            "other": [1, 2]
        }),
        "{groups_editor:#?}"
    );
    // The session uses the new lists at once.
    let list = got["list"].as_str().unwrap();
    let docs = list.lines().find(|l| l.starts_with("mcp__docs")).unwrap();
    assert!(
        docs.contains("global MCP servers & extensions list"),
        "{list}"
    );
    let radius = list
        .lines()
        .find(|l| l.starts_with("mcp__dev_radius"))
        .unwrap();
    assert!(!radius.contains("list"), "{list}");
    assert_eq!(got["close"]["close"], true);
    assert!(got["afterClose"].as_array().unwrap().is_empty());
    // The one unreadable entry is reported (each time the files are read), never echoed.
    for warning in got["warnings"].as_array().unwrap() {
        let warning = warning.as_str().unwrap();
        assert!(warning.contains("entry 2 of the project"), "{warning}");
        assert!(!warning.contains("has space"), "{warning}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A settings file that stays broken is said once per session, not at every prompt that reads
/// it again; once it reads clean, breaking it again is said again.
#[test]
fn a_broken_settings_file_is_said_once_until_it_is_fixed() {
    let dir = std::env::temp_dir().join(format!("pcd-addon-warn-{}", std::process::id()));
    let agent = dir.join("agent");
    std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
    let file = agent.join("pi-context-decisions/settings.json");
    let broken = r#"{"tools": {"enabled": true, "mode": "sideways"}}"#;
    let clean = r#"{"tools": {"enabled": true, "mode": "tools"}}"#;
    std::fs::write(&file, broken).unwrap();
    let script = format!(
        r#"const a = require({addon:?});
           const fs = require('fs');
           const s = a.PiSession.start(JSON.stringify({{reason: 'startup', nonce: 'n', agentDirEnv: {agent:?}, home: {dir:?}, cwd: {dir:?}, trusted: false}}), '[]');
           const seen = [s.takeWarnings().length];
           s.settingsChanged(); seen.push(s.takeWarnings().length);
           s.settingsChanged(); seen.push(s.takeWarnings().length);
           fs.writeFileSync({file:?}, {clean:?});
           s.settingsChanged(); seen.push(s.takeWarnings().length);
           fs.writeFileSync({file:?}, {broken:?});
           s.settingsChanged(); seen.push(s.takeWarnings().length);
           process.stdout.write(JSON.stringify(seen));"#,
        addon = addon(),
    );
    let stdout = pcd_tests::node_eval(&script);
    let seen: Vec<u64> = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(seen, [1, 0, 0, 0, 1]);
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 19: `/decisions foo` names `foo` as not a command before the usage, and Tab after
/// `/decisions ` offers the command's own arguments (never file names).
#[test]
fn unknown_words_are_named_and_tab_offers_the_commands() {
    let dir = std::env::temp_dir().join(format!("pcd-addon-usage-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("agent")).unwrap();
    let agent = dir.join("agent");
    let script = format!(
        r#"const a = require({addon:?});
           const s = a.PiSession.start(JSON.stringify({{reason: 'startup', nonce: 'n', agentDirEnv: {agent:?}, home: {dir:?}, cwd: {dir:?}, trusted: false}}), '[]');
           process.stdout.write(JSON.stringify({{
             unknown: s.usage('', 'foo bar'),
             plain: s.usage(''),
             tools: s.usage('tools', 'tools x'),
             t: JSON.parse(a.decisionsCompletions('t')),
             none: JSON.parse(a.decisionsCompletions('./src')),
           }}));"#,
        addon = addon(),
    );
    let got: serde_json::Value = serde_json::from_slice(&pcd_tests::node_eval(&script)).unwrap();
    let unknown = got["unknown"].as_str().unwrap();
    assert!(
        unknown.starts_with("`/decisions foo bar` is not a /decisions command."),
        "{unknown}"
    );
    assert!(
        unknown.ends_with(got["plain"].as_str().unwrap()),
        "then the usage"
    );
    assert!(
        !got["tools"].as_str().unwrap().contains("is not a"),
        "tools' own usage"
    );
    let values: Vec<&str> = got["t"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["tools list", "test"]);
    assert_eq!(got["none"], serde_json::json!([]));
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 19 (issue 30 item 10 renamed it): `/decisions export-inventory FILE` writes the person's own inventory to a new file that
/// `context-decisions pick` reads; it never overwrites a file; without a file it says how; while
/// filtering is off (Pi's registry is not read then) it writes nothing and says why.
#[test]
fn the_inventory_exports_to_a_new_file_the_program_reads() {
    let dir = std::env::temp_dir().join(format!("pcd-addon-export-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("agent")).unwrap();
    let agent = dir.join("agent");
    let file = dir.join("tools.json");
    let off_file = dir.join("off.json");
    let settings = agent.join("pi-context-decisions/settings.json");
    let script = format!(
        r#"const a = require({addon:?});
           const fs = require('fs');
           const tools = fs.readFileSync({example:?}, 'utf8');
           const start = () => a.PiSession.start(JSON.stringify({{reason: 'startup', nonce: 'n', agentDirEnv: {agent:?}, home: {dir:?}, cwd: {dir:?}, trusted: false}}), '[]');
           const off = start().exportTools(tools, {off_file:?});
           fs.mkdirSync(require('path').dirname({settings:?}), {{recursive: true}});
           fs.writeFileSync({settings:?}, '{{"tools": {{"enabled": true}}}}');
           const s = start();
           process.stdout.write(JSON.stringify({{
             off,
             first: s.exportTools(tools, {file:?}),
             again: s.exportTools(tools, {file:?}),
             usage: s.exportTools(undefined, undefined),
           }}));"#,
        addon = addon(),
        example = repo().join("examples/inventory.json"),
    );
    let got: serde_json::Value = serde_json::from_slice(&pcd_tests::node_eval(&script)).unwrap();
    let off = got["off"].as_str().unwrap();
    assert!(off.contains("tool filtering is off"), "{off}");
    assert!(
        !off_file.exists(),
        "nothing is written while filtering is off"
    );
    let first = got["first"].as_str().unwrap();
    assert!(first.starts_with("Wrote 36 tools"), "{first}");
    assert!(
        got["again"].as_str().unwrap().contains("the file exists"),
        "{got}"
    );
    assert!(got["usage"]
        .as_str()
        .unwrap()
        .starts_with("`/decisions export-inventory FILE`"));
    let inventory = context_decisions::inventory::read_inventory_file(&file).unwrap();
    assert_eq!(inventory.tools.len(), 36);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "owner only");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The extension's install script (`npm install` runs it) builds the addon from source with cargo
/// when none is there, and puts it where the extension loads it; with one there it does nothing.
#[test]
fn the_install_script_builds_the_addon_from_source_with_cargo() {
    let built = repo().join("extension/pcd_node.node");
    let _ = std::fs::remove_file(&built);
    let target = pcd_tests::target_dir();
    let script = repo().join("extension/scripts/build-addon.mjs");
    let run = || {
        // The script runs cargo: without this test's crate variables, so it builds what
        // `cargo test` built instead of rebuilding it (`without_crate_env`).
        pcd_tests::without_crate_env(&mut Command::new(install("node")))
            .arg(&script)
            .env("CARGO_TARGET_DIR", &target)
            .env("PI_CONTEXT_DECISIONS_BUILD", "debug")
            .output()
            .unwrap()
    };
    let out = run();
    assert!(
        out.status.success() && built.exists(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Node loads what it built, and it is this version of the addon.
    let check = Command::new(install("node"))
        .arg("-e")
        .arg(format!(
            "process.stdout.write(require({built:?}).addonVersion())"
        ))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&check.stdout),
        env!("CARGO_PKG_VERSION")
    );
    // A second install finds it and builds nothing.
    let modified = std::fs::metadata(&built).unwrap().modified().unwrap();
    assert!(run().status.success());
    assert_eq!(
        std::fs::metadata(&built).unwrap().modified().unwrap(),
        modified
    );
    std::fs::remove_file(&built).unwrap();
}

/// An agent folder under `dir` whose settings switch tool filtering on with the built-in scorer.
fn embedded_agent(dir: &std::path::Path) -> std::path::PathBuf {
    let agent = dir.join("agent");
    std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
    std::fs::write(
        agent.join("pi-context-decisions/settings.json"),
        r#"{"tools": {"enabled": true}, "decision": {"provider": "embedded"}}"#,
    )
    .unwrap();
    agent
}

/// Runs `script` in Node with the semantic model in `model` and the vector cache at `cache`, and
/// returns what it printed as JSON. The semantic bound is 30 s: these tests are about what the
/// fused scores make available, not about the bound (embedding the prompt took over 250 ms once
/// with other test binaries on both cores, and the round then, rightly, stayed lexical; the
/// fallback past the bound is the session test's).
fn node_with_model(
    script: &str,
    model: &std::path::Path,
    cache: &std::path::Path,
) -> serde_json::Value {
    let out = Command::new(install("node"))
        .arg("-e")
        .arg(script)
        .env("PCD_MODEL_DIR", model)
        .env("PCD_VECTOR_CACHE", cache)
        .env("PCD_SEMANTIC_WAIT_MS", "30000")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs a prompt round of the embedded scorer through the addon in Node with the model folder
/// `model` (and a fresh vector cache): waits until the model is no longer loading and, when
/// `warm`, until a reconcile boundary's warm-up has embedded the candidates' vectors; then asks
/// "Is the preview deployment finished?" and a second prompt against `examples/inventory.json`.
/// Returns what Node saw, with whether the vector cache was on disk as each answer arrived. The
/// vector cache is `cache` when given (kept), else a fresh one in the run's folder.
fn semantic_round(
    model: &std::path::Path,
    name: &str,
    warm: bool,
    cache: Option<&std::path::Path>,
) -> serde_json::Value {
    let dir = pcd_tests::temp_dir(name);
    let cache = cache.map_or_else(|| dir.join("vectors.bin"), std::path::Path::to_path_buf);
    let agent = embedded_agent(&dir);
    let script = format!(
        r#"(async () => {{
             const a = require({addon:?});
             const tools = require('fs').readFileSync({example:?}, 'utf8');
             const names = JSON.parse(tools).filter(t => t.exposure !== 'deferred').map(t => t.name);
             const started = Date.now();
             const s = a.PiSession.start(JSON.stringify({{reason: 'startup', nonce: 'n', agentDirEnv: {agent:?}, home: {dir:?}, cwd: {dir:?}}}), '[]');
             const warm = {warm};
             if (warm) s.boundary(JSON.stringify({{type: 'reconcile'}}), tools, names);
             const startMs = Date.now() - started;
             let state;
             for (;;) {{
               state = JSON.parse(a.semanticState());
               if (state.state !== 'loading' && (!warm || state.warming === 0)) break;
               await new Promise(r => setTimeout(r, 20));
             }}
             const warnings = [];
             const rounds = [];
             for (const text of ['Is the preview deployment finished?', 'Translate this sentence into German']) {{
               let effects = JSON.parse(s.boundary(JSON.stringify({{type: 'prompt', text}}), tools, names));
               const job = effects.find(e => e.type === 'decide');
               let answer = null;
               let onDisk = null;
               if (job) {{
                 answer = JSON.parse(await s.semanticJob(job.job).run());
                 onDisk = require('fs').existsSync({cache:?});
                 effects = effects.concat(JSON.parse(s.decided(job.job, JSON.stringify(answer), names)));
               }}
               const added = effects.filter(e => e.type === 'appendEntry').flatMap(e => e.data.tools ?? []);
               rounds.push({{ job: job ?? null, answer, onDisk, added, status: s.status() }});
               warnings.push(...s.takeWarnings());
             }}
             process.stdout.write(JSON.stringify({{ state, startMs, rounds, warnings }}));
           }})();"#,
        addon = addon(),
        example = repo().join("examples/inventory.json"),
        agent = agent,
        dir = dir,
        cache = cache,
    );
    let got = node_with_model(&script, model, &cache);
    std::fs::remove_dir_all(&dir).unwrap();
    got
}

/// Whether a round of [`semantic_round`] made `tool` available.
fn made_available(round: &serde_json::Value, tool: &str) -> bool {
    round["added"]
        .as_array()
        .expect("a round lists what it made available")
        .iter()
        .any(|t| t == tool)
}

/// A round whose candidates were not warmed up embeds them itself, and its answer arrives only
/// once they are in the vector cache on disk: Pi may exit right after the round (the end-to-end
/// test found the cache missing once when the save came after the answer).
#[test]
fn a_round_ends_only_once_what_it_embedded_is_on_disk() {
    let Some(model) = pcd_tests::model_dir() else {
        return;
    };
    let cold = semantic_round(&model, "semantic-cold", false, None);
    assert_eq!(cold["state"]["state"], "ready", "{cold}");
    let first = &cold["rounds"][0];
    assert!(first["answer"]["scores"].is_array(), "{cold}");
    assert_eq!(first["onDisk"], true, "{cold}");
    assert!(made_available(first, "deploy_status"), "{cold}");
}

/// A vector cache whose every vector was scaled off the unit sphere (as a flipped exponent bit
/// does to one, or a planted file to all) widens nothing: its entries count as missing, the
/// tools' texts are embedded again, the rounds make available exactly what an honest cache
/// gives, and the cache is rewritten with the model's unit vectors.
#[test]
fn a_vector_cache_off_the_unit_sphere_widens_nothing_and_is_replaced() {
    let Some(model) = pcd_tests::model_dir() else {
        return;
    };
    let dir = pcd_tests::temp_dir("semantic-scaled-cache");
    let cache = dir.join("vectors.bin");
    let honest = semantic_round(&model, "semantic-honest-cache", true, Some(&cache));
    // Every vector scaled by ten, in place (the file is the magic, the dimension, then each
    // entry's 32-byte key, its little-endian f16s and its 32-byte HMAC). The scaled round runs
    // under another agent folder, so another secret: its entries fail their HMAC before their
    // length is looked at (`pcd-embed`'s cache tests check both on their own).
    let mut bytes = std::fs::read(&cache).unwrap();
    let entry = 32 + 2 * pcd_embed::DIMENSION + 32;
    let header = bytes.len() % entry;
    let vectors: Vec<std::ops::Range<usize>> = (header..bytes.len())
        .step_by(entry)
        .map(|start| start + 32..start + 32 + 2 * pcd_embed::DIMENSION)
        .collect();
    assert!(vectors.len() > 10, "{}", vectors.len());
    let half = |x: &[u8]| half::f16::from_le_bytes([x[0], x[1]]).to_f32();
    for range in &vectors {
        for x in bytes[range.clone()].chunks_exact_mut(2) {
            let v = half::f16::from_f32(half(x) * 10.0);
            x.copy_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::write(&cache, &bytes).unwrap();
    let loaded = pcd_embed::MiniLm::load(&model).unwrap();
    let (reread, _) = pcd_embed::cache::VectorCache::open(
        &cache,
        &pcd_embed::cache::CacheSecret::from_bytes([0; 32]),
        loaded.vectors_key(),
        pcd_embed::DIMENSION,
        u64::MAX,
    );
    assert_eq!(
        reread.len(),
        vectors.len(),
        "the scaled file still reads as a cache"
    );

    let scaled = semantic_round(&model, "semantic-scaled-round", true, Some(&cache));
    assert_eq!(scaled["state"]["state"], "ready", "{scaled}");
    for (h, s) in honest["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .zip(scaled["rounds"].as_array().unwrap())
    {
        assert!(s["answer"]["scores"].is_array(), "{s}");
        assert_eq!(s["added"], h["added"], "{s}\n{h}");
        assert_eq!(s["answer"], h["answer"], "the same scores");
    }
    // The warm-up embedded the texts again and saved the model's vectors over the scaled ones.
    let rewritten = std::fs::read(&cache).unwrap();
    assert_eq!(rewritten.len(), bytes.len());
    for (e, range) in vectors.into_iter().enumerate() {
        let squared: f32 = rewritten[range]
            .chunks_exact(2)
            .map(|x| half(x).powi(2))
            .sum();
        assert!(
            (squared - 1.0).abs() < 1e-3,
            "entry {e} is still off the unit sphere"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 16 inside Pi: with the model, a prompt's embedded round is a semantic job answered off
/// the event loop, the fused scores make available a tool the lexical scorer withholds
/// (`deploy_status` for a paraphrase), and `/decisions` says which scorer decided. With a
/// truncated `model.safetensors` every round is lexical, the person is told why once, and
/// nothing more is made available than the lexical scorer makes available.
#[test]
fn the_addon_fuses_the_semantic_signal_and_without_usable_weights_is_lexical() {
    let Some(model) = pcd_tests::model_dir() else {
        return;
    };
    let fused = semantic_round(&model, "semantic-fused", true, None);
    assert_eq!(fused["state"]["state"], "ready", "{fused}");
    assert!(fused["warnings"].as_array().unwrap().is_empty(), "{fused}");
    for round in fused["rounds"].as_array().unwrap() {
        assert_eq!(round["job"]["semantic"], true, "{round}");
        assert!(round["answer"]["scores"].is_array(), "{round}");
        let status = round["status"].as_str().unwrap();
        assert!(
            status.contains("Scored by: the built-in scorer with the semantic model, from the folder named by PCD_MODEL_DIR."),
            "{status}"
        );
    }
    assert!(
        made_available(&fused["rounds"][0], "deploy_status"),
        "the paraphrase gets deploy_status through the semantic signal: {fused}"
    );

    // A truncated copy of the weights.
    let broken = pcd_tests::temp_dir("semantic-truncated-model");
    for entry in std::fs::read_dir(&model).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, broken.join(path.file_name().unwrap())).unwrap();
    }
    let weights = std::fs::OpenOptions::new()
        .write(true)
        .open(broken.join("model.safetensors"))
        .unwrap();
    weights.set_len(1 << 20).unwrap();
    drop(weights);
    let lexical = semantic_round(&broken, "semantic-lexical", true, None);
    std::fs::remove_dir_all(&broken).unwrap();
    assert_eq!(lexical["state"]["state"], "off", "{lexical}");
    let warnings = lexical["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "said once: {lexical}");
    let warning = warnings[0].as_str().unwrap();
    assert!(
        warning.contains("semantic signal is off") && warning.contains("model.safetensors"),
        "{warning}"
    );
    for round in lexical["rounds"].as_array().unwrap() {
        assert!(round["job"].is_null(), "scored inline, lexically: {round}");
        let status = round["status"].as_str().unwrap();
        assert!(status.contains("lexical only"), "{status}");
        assert!(status.contains("model.safetensors"), "{status}");
    }
    // The first prompt, where the fused scores added deploy_status: lexically it is withheld.
    assert!(
        !made_available(&lexical["rounds"][0], "deploy_status"),
        "{lexical}"
    );
}

/// Issue 34, item 1: inside Pi the model of the checkout the extension was loaded from is used (a
/// path or git install of a clone that ran `cargo xtask fetch-model`): the extension names the
/// checkout (`checkoutDir`), and the addon finds `.cache/models/all-minilm-l6-v2` there, with no
/// PCD_MODEL_DIR, no model in the agent folder and no npm model package. Without `checkoutDir`
/// the same session has no model.
#[test]
fn the_addon_uses_the_model_of_the_checkout_it_was_loaded_from() {
    let Some(model) = pcd_tests::model_dir() else {
        return;
    };
    let dir = pcd_tests::temp_dir("checkout-model");
    let checkout = dir.join("clone");
    let folder = checkout.join(".cache/models/all-minilm-l6-v2");
    std::fs::create_dir_all(&folder).unwrap();
    for entry in std::fs::read_dir(&model).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), folder.join(entry.file_name())).unwrap();
        }
    }
    let agent = embedded_agent(&dir);
    let state = |checkout_dir: Option<&std::path::Path>| -> serde_json::Value {
        let script = format!(
            r#"(async () => {{
                 const a = require({addon:?});
                 a.PiSession.start(JSON.stringify({{reason: 'startup', nonce: 'n', agentDirEnv: {agent:?}, home: {dir:?}, cwd: {dir:?}, checkoutDir: {checkout}}}), '[]');
                 let state;
                 for (;;) {{
                   state = JSON.parse(a.semanticState());
                   if (state.state !== 'loading') break;
                   await new Promise(r => setTimeout(r, 20));
                 }}
                 process.stdout.write(JSON.stringify(state));
               }})();"#,
            addon = addon(),
            agent = agent,
            dir = dir,
            checkout = checkout_dir.map_or("undefined".to_owned(), |p| format!("{p:?}")),
        );
        // PCD_MODEL_DIR empty is not set: the checkout is looked in.
        let unset = [("PCD_MODEL_DIR", std::ffi::OsStr::new(""))];
        serde_json::from_slice(&pcd_tests::node_eval_with(&script, &unset)).unwrap()
    };
    let found = state(Some(&checkout));
    assert_eq!(found["state"], "ready", "{found}");
    assert_eq!(
        found["folder"], "the checkout's .cache/models/all-minilm-l6-v2",
        "{found}"
    );
    let without = state(None);
    assert_eq!(without["state"], "off", "{without}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// While a decision job is answered off the event loop (the semantic model embedding, an HTTP
/// model), Pi goes on: the user steers, a turn ends, the model calls a tool. Those calls reach the
/// same session while the answer is pending, and each must get its verdict, not napi's "cannot
/// be borrowed mutably while another borrow is active" (napi-rs keeps what a method borrowed,
/// `this` included, until the task it returned settles: found with the semantic model inside Pi,
/// at `turn_end` during a steered run).
#[test]
fn the_session_answers_calls_while_a_job_is_pending() {
    let Some(model) = pcd_tests::model_dir() else {
        return;
    };
    let dir = pcd_tests::temp_dir("pending-job");
    let agent = embedded_agent(&dir);
    let script = format!(
        r#"(async () => {{
             const a = require({addon:?});
             const tools = require('fs').readFileSync({example:?}, 'utf8');
             const names = JSON.parse(tools).filter(t => t.exposure !== 'deferred').map(t => t.name);
             const s = a.PiSession.start(JSON.stringify({{reason: 'startup', nonce: 'n', agentDirEnv: {agent:?}, home: {dir:?}, cwd: {dir:?}}}), '[]');
             while (JSON.parse(a.semanticState()).state === 'loading') await new Promise(r => setTimeout(r, 20));
             const effects = JSON.parse(s.boundary(JSON.stringify({{type: 'prompt', text: 'Is the preview deployment finished?'}}), tools, names));
             const job = effects.find(e => e.type === 'decide');
             const pending = s.semanticJob(job.job).run();
             const during = [];
             const attempt = (what, f) => {{ try {{ f(); during.push([what, 'ok']); }} catch (e) {{ during.push([what, String(e.message)]); }} }};
             attempt('toolCall', () => s.toolCall('weather_now', 0, null));
             attempt('boundary', () => s.boundary(JSON.stringify({{type: 'toolRound'}}), tools, names));
             attempt('footer', () => s.footer());
             const answer = await pending;
             attempt('decided', () => s.decided(job.job, answer, names));
             process.stdout.write(JSON.stringify({{ semantic: job.semantic === true, during, answer: JSON.parse(answer) }}));
           }})();"#,
        addon = addon(),
        example = repo().join("examples/inventory.json"),
        agent = agent,
        dir = dir,
    );
    let got = node_with_model(&script, &model, &dir.join("vectors.bin"));
    assert_eq!(got["semantic"], true, "{got}");
    for call in got["during"].as_array().unwrap() {
        assert_eq!(call[1], "ok", "{got}");
    }
    assert!(got["answer"]["scores"].is_array(), "{got}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 34, item 8: the footer counted the tools of the last round's snapshot ("tools 0/14"
/// while the list counted 20). `footerWith` reads the registry again, so a tool registered since
/// (a server that connected late) counts at once, withheld until a round decides it.
#[test]
fn the_footer_counts_tools_registered_since_the_last_round() {
    let dir = pcd_tests::temp_dir("footer-late-tool");
    let agent = embedded_agent(&dir);
    let script = format!(
        r#"const a = require({addon:?});
           const tools = require('fs').readFileSync({example:?}, 'utf8');
           const list = JSON.parse(tools);
           const names = list.filter(t => t.exposure !== 'deferred').map(t => t.name);
           const s = a.PiSession.start(JSON.stringify({{reason: 'startup', nonce: 'n', agentDirEnv: {agent:?}, home: {dir:?}, cwd: {dir:?}}}), '[]');
           s.boundary(JSON.stringify({{type: 'reconcile'}}), tools, names);
           s.boundary(JSON.stringify({{type: 'prompt', text: 'what is the weather in Lisbon tomorrow'}}), tools, names);
           const before = s.footer();
           const external = list.find(t => t.name === 'weather_now');
           const late = list.concat([Object.assign({{}}, external, {{name: 'weather_alerts'}})]);
           const after = s.footerWith(JSON.stringify(late));
           const unread = s.footerWith(undefined);
           process.stdout.write(JSON.stringify({{ before, after, unread }}));"#,
        addon = addon(),
        example = repo().join("examples/inventory.json"),
        agent = agent,
        dir = dir,
    );
    let got: serde_json::Value = serde_json::from_slice(&pcd_tests::node_eval(&script)).unwrap();
    let count = |field: &str| -> (u64, u64) {
        let text = got[field].as_str().unwrap_or_else(|| panic!("{got}"));
        let fraction = text
            .split_whitespace()
            .find(|w| w.contains('/'))
            .unwrap_or_else(|| panic!("{text}"));
        let (a, n) = fraction.split_once('/').unwrap();
        (a.parse().unwrap(), n.parse().unwrap())
    };
    let (available, external) = count("before");
    assert_eq!(count("after"), (available, external + 1), "{got}");
    // Nothing read: the snapshot read last stands.
    assert_eq!(count("unread"), (available, external + 1), "{got}");
    std::fs::remove_dir_all(&dir).unwrap();
}
