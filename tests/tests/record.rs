//! Recording a live session (`PI_CONTEXT_DECISIONS_RECORD`, `context_decisions::record`) and
//! replaying it with `simulate`: the replay prints the effects the live session produced, and the
//! recording holds nothing the Session may not see.
//!
//! The live host here is written independently of the simulator: it keeps Pi's registry as raw
//! `getAllTools()` JSON (schemas, annotations, instructions and paths included), Pi's active set
//! as Pi keeps it (`setActiveTools` drops unknown and hidden names), and a branch with Pi's
//! entries (random ids, assistant text, tool results, other extensions' entries).

use context_decisions::record::{MemorySink, Recorder};
use context_decisions::session::{
    effects_json, Answer, BoundaryEvent, BoundaryKind, BranchRead, DecisionJob, Effect,
    InventoryRead, ModelError, Session, SettingsRead, StartEvent, StartReason, ToolCallEvent,
};
use pcd_gate::ProjectRead;
use pcd_model::{ProjectAllowlistFile, Scope, Settings};
use serde_json::{json, Value};
use std::path::Path;

/// Secrets planted everywhere the recording must not look.
const SECRETS: [&str; 13] = [
    "SCHEMA-SECRET",
    "ANNOTATION-SECRET",
    "INSTRUCTION-SECRET",
    "PATH-SECRET",
    "BASEDIR-SECRET",
    "ARGUMENT-SECRET",
    "RESULT-SECRET",
    "ASSISTANT-SECRET",
    "OTHER-ENTRY-SECRET",
    "TOKEN-SECRET",
    "LONG-TAIL-SECRET",
    "LONG-HEAD-SECRET",
    "OLD-PROMPT-SECRET",
];

/// The example inventory with secrets planted in every field the Session must not keep.
fn inventory() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/inventory.json");
    let mut tools: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    for tool in tools.as_array_mut().unwrap() {
        tool["parameters"]["properties"]["q"] =
            json!({"type": "string", "description": "SCHEMA-SECRET", "default": "SCHEMA-SECRET"});
        tool["annotations"] = json!({"title": "ANNOTATION-SECRET", "readOnlyHint": true});
        if let Some(ns) = tool.get_mut("namespace").and_then(Value::as_object_mut) {
            ns.insert("instructions".into(), json!("INSTRUCTION-SECRET"));
        }
        let info = &mut tool["sourceInfo"];
        if info["source"] != "builtin" {
            let path = info["path"].as_str().unwrap_or_default().to_owned();
            info["path"] = json!(path.replace("/home/dev", "/home/PATH-SECRET"));
            info["baseDir"] = json!("/opt/BASEDIR-SECRET/pkg");
        }
        if tool["name"] == "bar_chart" {
            // A description longer than any request carries, with a secret past the bound.
            let long = format!("{} {}", "Chart rendering.".repeat(100), "LONG-TAIL-SECRET");
            tool["description"] = json!(long);
        }
        if tool["name"] == "jira_create_issue" {
            tool["sourceInfo"]["source"] =
                json!("git:https://bot:TOKEN-SECRET@github.com/acme/pi-jira@v1");
            tool["sourceInfo"]["origin"] = json!("package");
        }
    }
    tools
}

/// A tool that registers late (an MCP server connecting after the first prompt).
fn late_tool() -> Value {
    json!({"name": "mcp__kb__lookup", "description": "Look up an article in the knowledge base.",
           "parameters": {"type": "object", "properties": {"id": {"description": "SCHEMA-SECRET"}}},
           "exposure": "direct",
           "namespace": {"name": "mcp__kb", "description": "Knowledge base", "aliases": ["kb"],
                         "instructions": "INSTRUCTION-SECRET"},
           "sourceInfo": {"path": "builtin:mcp", "source": "builtin", "scope": "temporary"}})
}

fn settings(value: Value) -> Settings {
    Settings::from_json(&value).0
}

/// What Pi is and does, for the live session.
struct Live {
    session: Session,
    recorder: context_decisions::record::SharedRecorder,
    tools: Value,
    registry_throws: bool,
    active: Vec<String>,
    branch: Vec<Value>,
    settings: Settings,
    project: Value,
    next_id: u32,
    /// Every recorded step's outcome as the live session produced it: effects, and a call's
    /// verdict.
    log: Vec<Value>,
}

impl Live {
    fn new(settings: Settings, project: Value) -> Live {
        let tools = inventory();
        let active = tools
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["exposure"] == "direct")
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        let recorder = Recorder::shared(Box::new(MemorySink::new()));
        let (session, _) = Session::start(StartEvent {
            reason: StartReason::Startup,
            nonce: "unused".into(),
            settings: SettingsRead::Read(Settings::default()),
            project: ProjectRead::Absent,
            mcp_origins: Vec::new(),
            branch: BranchRead::Entries(Vec::new()),
        });
        Live {
            session,
            recorder,
            tools,
            registry_throws: false,
            active,
            branch: vec![
                json!({"type": "model_change", "id": "a0000001", "parentId": null, "provider": "p"}),
            ],
            settings,
            project,
            next_id: 0x5eed,
            log: Vec::new(),
        }
    }

    fn id(&mut self) -> String {
        self.next_id = self
            .next_id
            .wrapping_mul(2_654_435_761)
            .wrapping_add(12_345);
        format!("{:08x}", self.next_id)
    }

    fn append(&mut self, mut entry: Value) {
        entry["id"] = json!(self.id());
        entry["parentId"] = self.branch.last().map_or(Value::Null, |e| e["id"].clone());
        entry["timestamp"] = json!("2026-01-01T00:00:00.000Z");
        self.branch.push(entry);
    }

    fn project_read(&self) -> ProjectRead {
        match &self.project {
            Value::Null => ProjectRead::Absent,
            Value::String(_) => ProjectRead::Unreadable,
            v => ProjectRead::Read(ProjectAllowlistFile::from_json(v).0),
        }
    }

    /// Carries out effects as the extension does, with Pi's rules for `setActiveTools`.
    fn apply(&mut self, effects: &[Effect]) -> Vec<DecisionJob> {
        let mut jobs = Vec::new();
        for effect in effects {
            match effect {
                Effect::SetActiveTools(names) => {
                    let mut next: Vec<String> = Vec::new();
                    for name in names {
                        let known = self
                            .tools
                            .as_array()
                            .unwrap()
                            .iter()
                            .find(|t| t["name"] == name.as_str());
                        if known.is_some_and(|t| t["exposure"] != "hidden") && !next.contains(name)
                        {
                            next.push(name.clone());
                        }
                    }
                    self.active = next;
                }
                Effect::AppendEntry(data) => self.append(json!({
                    "type": "custom", "customType": pcd_ledger::CUSTOM_TYPE, "data": data})),
                Effect::RecordScorer(data) => self.append(json!({
                    "type": "custom", "customType": pcd_ledger::SCORER_CUSTOM_TYPE, "data": data})),
                Effect::Decide(job) => jobs.push(job.clone()),
                // No semantic job: nothing here turns the semantic signal on.
                Effect::Notice(_) | Effect::Warn(_) | Effect::Embed(_) => {}
            }
        }
        jobs
    }

    fn read_tools(&self) -> InventoryRead {
        if self.registry_throws {
            return InventoryRead::Unreadable;
        }
        let text = self.tools.to_string();
        InventoryRead::Tools(pcd_model::parse_inventory(&text).unwrap().tools)
    }

    fn boundary(&mut self, kind: BoundaryKind) -> Vec<DecisionJob> {
        let (inventory, active) = if self.session.needs_inventory() {
            (self.read_tools(), self.active.clone())
        } else {
            (InventoryRead::Unreadable, Vec::new())
        };
        let effects = self.session.boundary(BoundaryEvent {
            kind,
            inventory,
            active,
        });
        self.log.push(json!({"effects": effects_json(&effects)}));
        self.apply(&effects)
    }

    fn start(&mut self, reason: StartReason, origins: Vec<(String, Scope)>) -> Vec<DecisionJob> {
        let nonce = format!("n{}", self.id());
        let (session, _) = Session::start_recording(
            StartEvent {
                reason,
                nonce,
                settings: SettingsRead::Read(self.settings.clone()),
                project: self.project_read(),
                mcp_origins: origins,
                branch: BranchRead::Entries(self.branch.clone()),
            },
            Some(self.recorder.clone()),
        );
        self.session = session;
        self.boundary(BoundaryKind::Reconcile)
    }

    fn save(&mut self, settings: Settings, project: Value) {
        self.settings = settings;
        self.project = project;
        let read = self.project_read();
        self.session
            .settings_changed(SettingsRead::Read(self.settings.clone()), read);
    }

    fn prompt(&mut self, text: &str) -> Vec<DecisionJob> {
        // The extension reads the files again at every prompt.
        let read = self.project_read();
        self.session
            .settings_changed(SettingsRead::Read(self.settings.clone()), read);
        let jobs = self.boundary(BoundaryKind::Prompt {
            text: Some(text.to_owned()),
        });
        self.append(json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}));
        jobs
    }

    fn tool_round(&mut self) -> Vec<DecisionJob> {
        self.append(json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "ASSISTANT-SECRET"}]}}));
        self.append(json!({"type": "message", "message": {"role": "toolResult", "content": [{"type": "text", "text": "RESULT-SECRET"}]}}));
        self.append(json!({"type": "custom", "customType": "other-extension", "data": {"k": "OTHER-ENTRY-SECRET"}}));
        self.boundary(BoundaryKind::ToolRound)
    }

    /// A `tool_call` as the extension makes it; returns the verdict (`None` allows) or the job a
    /// first call waits for.
    fn call(&mut self, tool: &str, input: Value) -> Result<Option<String>, DecisionJob> {
        let call = ToolCallEvent::from_input(tool, Some(&input));
        let mut outcome = self.session.tool_call(&call);
        if outcome.refresh_and_retry {
            let tools = self.read_tools();
            outcome = self.session.tool_call_with(&call, Some(tools));
        }
        self.apply(&outcome.effects);
        let mut line = json!({"effects": effects_json(&outcome.effects)});
        let result = match (&outcome.pending, &outcome.block) {
            (Some(job), _) => {
                line["verdict"] = json!("pending");
                line["job"] = json!(job.id);
                Err(job.clone())
            }
            (None, None) => {
                line["verdict"] = json!("allow");
                Ok(None)
            }
            (None, Some(reason)) => {
                line["verdict"] = json!("block");
                line["reason"] = json!(reason);
                Ok(Some(reason.clone()))
            }
        };
        self.log.push(line);
        result
    }

    fn decided(&mut self, job: &DecisionJob, answers: Vec<Answer>) -> Vec<DecisionJob> {
        let active = self.active.clone();
        let effects = self.session.decided(job.id, answers, &active);
        self.log.push(json!({"effects": effects_json(&effects)}));
        self.apply(&effects)
    }

    fn tree(&mut self, keep: usize) -> Vec<DecisionJob> {
        self.branch.truncate(keep);
        self.session
            .branch_moved(BranchRead::Entries(self.branch.clone()));
        self.boundary(BoundaryKind::Reconcile)
    }

    fn register(&mut self, tool: Value) {
        if tool["exposure"] == "direct" {
            self.active.push(tool["name"].as_str().unwrap().to_owned());
        }
        self.tools.as_array_mut().unwrap().push(tool);
    }
}

/// A live session whose recorder writes to `sink`.
fn live(settings: Settings, project: Value, sink: &MemorySink) -> Live {
    let mut live = Live::new(settings, project);
    live.recorder = Recorder::shared(Box::new(sink.clone()));
    live
}

/// The answer a model would give: `score` for the candidates whose names contain `hit`.
fn answer(request: &str, hit: &str, score: f64) -> Answer {
    let body: Value = serde_json::from_str(request).unwrap();
    let scores: Vec<Value> = body["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| json!({"id": c["id"], "score": if c.to_string().contains(hit) { score } else { 0.0 }}))
        .collect();
    Ok(json!({ "scores": scores }).to_string())
}

fn answers(job: &DecisionJob, hit: &str) -> Vec<Answer> {
    job.requests.iter().map(|r| answer(r, hit, 0.9)).collect()
}

/// Replays `script` and checks it against the live log: the same effects (and verdicts) for
/// every recorded step, in order, and `simulate::check` agrees.
fn assert_replays(script: &Value, log: &[Value]) {
    let lines = pcd_cli::simulate::run(script).unwrap();
    let events = script["events"].as_array().unwrap();
    let replayed: Vec<Value> = events
        .iter()
        .zip(&lines)
        .filter(|(e, _)| e.get("expect").is_some() && e["type"] != "decisions_test")
        .map(|(_, line)| {
            let mut out = json!({"effects": line["effects"]});
            for key in ["verdict", "reason", "job"] {
                if let Some(v) = line.get(key) {
                    out[key] = v.clone();
                }
            }
            out
        })
        .collect();
    assert_eq!(
        replayed.len(),
        log.len(),
        "one recorded event per live step"
    );
    for (i, (r, l)) in replayed.iter().zip(log).enumerate() {
        assert_eq!(r, l, "step {i} replays differently");
    }
    let (checked, differing) = pcd_cli::simulate::check(script, &lines);
    assert_eq!(checked, log.len());
    assert!(differing.is_empty(), "{differing:?}");
}

fn assert_private(script: &Value) {
    let text = script.to_string();
    for secret in SECRETS {
        assert!(!text.contains(secret), "{secret} is in the recording");
    }
    for path in [
        "/home/",
        "/opt/",
        "node_modules",
        "baseDir",
        "apiKeyEnv",
        "parameters",
    ] {
        assert!(!text.contains(path), "{path} is in the recording");
    }
}

#[test]
fn a_recorded_session_with_a_model_outside_replays_the_same_effects() {
    let sink = MemorySink::new();
    let pi_model = json!({"tools": {"enabled": true, "alwaysAllowedTools": ["calculator"]},
        "decision": {"provider": "pi", "model": "faux/decider", "minimumCandidates": 2,
                     "baseUrl": "https://api.example.com/v1?key=TOKEN-SECRET",
                     "apiKeyEnv": "TOKEN_SECRET_VAR"}});
    let mut pi = live(
        settings(pi_model.clone()),
        json!({"alwaysAllowedTools": ["weather_now"]}),
        &sink,
    );
    let origins = vec![("docs".to_owned(), Scope::Project)];
    assert!(pi.start(StartReason::Startup, origins.clone()).is_empty());
    // First prompt: a job; answered after a tool call that waits on nothing.
    // Longer than a decision reads: its start (with a secret) is past the bound, the end kept.
    let mut long_prompt = String::from("LONG-HEAD-SECRET ");
    long_prompt.push_str(&"Render a bar chart of this CSV. ".repeat(200));
    let job = pi.prompt(&long_prompt).remove(0);
    assert_eq!(
        pi.call("read", json!({"path": "ARGUMENT-SECRET"})),
        Ok(None)
    );
    pi.decided(&job, answers(&job, "bar_chart"));
    assert_eq!(
        pi.call("bar_chart", json!({"csv": "ARGUMENT-SECRET"})),
        Ok(None)
    );
    assert!(pi
        .call("web_fetch", json!({"url": "ARGUMENT-SECRET"}))
        .unwrap()
        .is_some());
    // Resource routing by the server argument only.
    assert!(pi
        .call(
            "read_mcp_resource",
            json!({"server": "docs", "uri": "ARGUMENT-SECRET"})
        )
        .unwrap()
        .is_some());
    assert!(pi.call("list_mcp_resources", json!({})).unwrap().is_some());
    assert!(pi
        .call("read_mcp_resource", json!({"server": 7}))
        .unwrap()
        .is_some());
    // A late arrival, called before any boundary: a refresh, then a job it waits for.
    pi.register(late_tool());
    let job = pi
        .call("mcp__kb__lookup", json!({"id": "ARGUMENT-SECRET"}))
        .unwrap_err();
    pi.decided(&job, answers(&job, "lookup"));
    assert_eq!(pi.call("mcp__kb__lookup", json!({})), Ok(None));
    // A tool round, another extension re-activates a withheld tool meanwhile.
    pi.active.push("web_search".into());
    assert!(pi.tool_round().is_empty());
    // A job superseded by an allowlist save while the model answers.
    let job = pi.prompt("Search the web for the weather").remove(0);
    pi.save(
        settings(pi_model.clone()),
        json!({"alwaysAllowedTools": ["weather_now", "db_query"]}),
    );
    pi.decided(&job, answers(&job, "web_search"));
    // A failed job (fail closed).
    let job = pi.prompt("Query the database schema").remove(0);
    let failed = job
        .requests
        .iter()
        .map(|_| Err(ModelError::Unavailable))
        .collect();
    pi.decided(&job, failed);
    // The registry throws at a call to a tool it does not know.
    pi.registry_throws = true;
    assert!(pi.call("ghost", json!({})).unwrap().is_some());
    pi.registry_throws = false;
    // /tree back to before the second prompt, then /reload.
    let keep = pi.branch.len() - 6;
    pi.tree(keep);
    pi.start(StartReason::Reload, origins);
    assert!(pi.call("web_fetch", json!({})).unwrap().is_some());
    let script = sink.script();
    if let Some(path) = std::env::var_os("PCD_DUMP_RECORDING") {
        std::fs::write(path, serde_json::to_string_pretty(&script).unwrap()).unwrap();
    }
    assert_replays(&script, &pi.log);
    assert_private(&script);
    // The prompt is recorded, bounded as the Session bounds it.
    assert!(script
        .to_string()
        .contains("Render a bar chart of this CSV."));
}

#[test]
fn a_recorded_session_with_the_embedded_model_in_group_mode_replays_the_same_effects() {
    let sink = MemorySink::new();
    let embedded = json!({"tools": {"enabled": true, "mode": "mcp", "cadence": "tool-round"},
        "decision": {"provider": "embedded", "minimumCandidates": 1}});
    let mut pi = live(settings(embedded.clone()), Value::Null, &sink);
    // A resumed session: its branch holds an old prompt from an earlier process.
    pi.append(
        json!({"type": "message", "message": {"role": "user", "content": "OLD-PROMPT-SECRET"}}),
    );
    pi.append(json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "ASSISTANT-SECRET"}]}}));
    pi.start(StartReason::Resume, Vec::new());
    pi.prompt("Show me the open incidents on dev radius");
    assert_eq!(
        pi.call(
            "mcp__dev_radius__get_incident",
            json!({"id": "ARGUMENT-SECRET"})
        ),
        Ok(None)
    );
    pi.tool_round();
    // The settings become unreadable, then a mode change supersedes nothing in flight.
    pi.session
        .settings_changed(SettingsRead::Unreadable, ProjectRead::Unreadable);
    pi.prompt("Now translate the summary to French");
    let mut tools_mode = embedded.clone();
    tools_mode["tools"]["mode"] = json!("tools");
    pi.save(settings(tools_mode), Value::Null);
    pi.prompt("Translate it to German too");
    // Off: restores only what was withheld.
    let mut off = embedded;
    off["tools"]["enabled"] = json!(false);
    pi.save(settings(off), Value::Null);
    pi.prompt("Thanks");
    let script = sink.script();
    assert_replays(&script, &pi.log);
    assert_private(&script);
}
