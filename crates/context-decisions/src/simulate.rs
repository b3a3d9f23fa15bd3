//! `context-decisions simulate SCRIPT`: a scripted Pi session run through a real [`Session`],
//! printing every effect. Scripts use Pi's own event names and payloads, so a bug seen in Pi can
//! be written down as a script and replayed here.
//!
//! A script is a JSON object:
//!
//! ```json
//! {
//!   "settings": { "tools": { "enabled": true }, "decision": { "provider": "embedded" } },
//!   "project": { "alwaysAllowedTools": [] },
//!   "mcpOrigins": [["docs", "project"]],
//!   "tools": [ /* getAllTools() at session start */ ],
//!   "answers": [ "{\"scores\": […]}", { "error": "unavailable" } ],  /* an HTTP or Pi model's */
//!   "active": [ /* getActiveTools() at session start; default: every direct and model-only tool */ ],
//!   "events": [
//!     { "type": "session_start", "reason": "startup" },
//!     { "type": "before_agent_start", "prompt": "…" },
//!     { "type": "tool_call", "toolName": "…", "input": { } },
//!     { "type": "turn_end", "toolResults": [ {} ] },
//!     { "type": "register_tool", "tool": { /* a ToolInfo */ } },
//!     { "type": "set_active_tools", "names": [ ] },
//!     { "type": "settings_saved", "settings": { }, "project": { } },
//!     { "type": "session_tree", "leafIndex": 3 },
//!     { "type": "reload" }
//!   ]
//! }
//! ```
//!
//! The simulator keeps the branch (ledger entries and user messages, with ids) and the active set
//! as Pi would, carries out `setActiveTools` and `appendEntry` effects, and prints one JSON line
//! per event.

use crate::session::{
    effects_json, Answer, BoundaryEvent, BoundaryKind, BranchRead, DecisionJob, Effect,
    InventoryRead, Session, SettingsRead, StartEvent, StartReason, ToolCallEvent,
};
use pcd_gate::ProjectRead;
use pcd_model::{inventory_from_value, ProjectAllowlistFile, Scope, Settings, ToolInfo};
use pcd_picker::request::ModelError;
use serde_json::{json, Value};

/// Why a script cannot run. Names the event and the field, never a value.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The script is not a JSON object.
    #[error("the script is not a JSON object")]
    NotAnObject,
    /// A field has the wrong shape.
    #[error("{0}")]
    Field(String),
}

fn field(message: impl Into<String>) -> ScriptError {
    ScriptError::Field(message.into())
}

fn tools_from(value: &Value, what: &str) -> Result<Vec<ToolInfo>, ScriptError> {
    let inventory = inventory_from_value(value).map_err(|e| field(format!("{what}: {e}")))?;
    if let Some(r) = inventory.rejected.first() {
        return Err(field(format!("{what}: entry {} {}", r.index, r.problem)));
    }
    Ok(inventory.tools)
}

fn settings_from(value: Option<&Value>) -> Settings {
    value.map_or_else(Settings::default, |v| Settings::from_json(v).0)
}

fn project_from(value: Option<&Value>) -> ProjectRead {
    match value {
        None | Some(Value::Null) => ProjectRead::Absent,
        Some(v) => ProjectRead::Read(ProjectAllowlistFile::from_json(v).0),
    }
}

struct Sim {
    session: Session,
    entries: Vec<Value>,
    leaf: Option<usize>,
    tools: Vec<ToolInfo>,
    active: Vec<String>,
    origins: Vec<(String, Scope)>,
    settings: Settings,
    project: Value,
    starts: u32,
    /// Scripted answers of an HTTP or Pi decision model, one per request, in order; when they run
    /// out, the model does not answer.
    answers: std::collections::VecDeque<Answer>,
}

impl Sim {
    /// The branch from the root to the leaf.
    fn branch(&self) -> Vec<Value> {
        let Some(leaf) = self.leaf else {
            return Vec::new();
        };
        let mut path = Vec::new();
        let mut id = self.entries[leaf]["id"].clone();
        while let Some(entry) = self.entries.iter().find(|e| e["id"] == id) {
            path.push(entry.clone());
            id = entry["parentId"].clone();
        }
        path.reverse();
        path
    }

    fn push(&mut self, mut entry: Value) {
        let id = format!("{:08x}", self.entries.len() + 1);
        entry["id"] = json!(id);
        entry["parentId"] = self
            .leaf
            .map_or(Value::Null, |l| self.entries[l]["id"].clone());
        self.entries.push(entry);
        self.leaf = Some(self.entries.len() - 1);
    }

    fn carry_out(&mut self, effects: &[Effect]) {
        for effect in effects {
            match effect {
                Effect::SetActiveTools(names) => self.active = names.clone(),
                Effect::AppendEntry(data) => self.push(json!({
                    "type": "custom",
                    "customType": pcd_ledger::CUSTOM_TYPE,
                    "data": data,
                })),
                Effect::Notice(_) | Effect::Warn(_) | Effect::Decide(_) => {}
            }
        }
    }

    fn start(&mut self, reason: StartReason) {
        self.starts += 1;
        let (session, _) = Session::start(StartEvent {
            reason,
            nonce: format!("sim{}", self.starts),
            settings: SettingsRead::Read(self.settings.clone()),
            project: project_from(Some(&self.project)),
            mcp_origins: self.origins.clone(),
            branch: BranchRead::Entries(self.branch()),
        });
        self.session = session;
    }

    fn boundary(&mut self, kind: BoundaryKind) -> Vec<Effect> {
        let inventory = if self.session.needs_inventory() {
            InventoryRead::Tools(self.tools.clone())
        } else {
            InventoryRead::Unreadable
        };
        let effects = self.session.boundary(BoundaryEvent {
            kind,
            inventory,
            active: self.active.clone(),
        });
        self.carry_out(&effects);
        let mut all = effects.clone();
        for effect in effects {
            if let Effect::Decide(job) = effect {
                all.extend(self.answer(&job));
            }
        }
        all
    }

    /// Answers a job with the scripted answers, as the host would with the model's.
    fn answer(&mut self, job: &DecisionJob) -> Vec<Effect> {
        let answers = job
            .requests
            .iter()
            .map(|_| {
                self.answers
                    .pop_front()
                    .unwrap_or(Err(ModelError::Unavailable))
            })
            .collect();
        let active = self.active.clone();
        let effects = self.session.decided(job.id, answers, &active);
        self.carry_out(&effects);
        effects
    }
}

/// `answers`: each a string (the model's answer text) or `{"error": "unavailable" |
/// "configuration" | "cancelled"}`.
fn scripted_answers(
    value: Option<&Value>,
) -> Result<std::collections::VecDeque<Answer>, ScriptError> {
    let Some(value) = value else {
        return Ok(Default::default());
    };
    let items = value
        .as_array()
        .ok_or_else(|| field("`answers` must be an array"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, a)| match a {
            Value::String(text) => Ok(Ok(text.clone())),
            other => match other.get("error").and_then(Value::as_str) {
                Some("unavailable") => Ok(Err(ModelError::Unavailable)),
                Some("configuration") => Ok(Err(ModelError::Configuration)),
                Some("cancelled") => Ok(Err(ModelError::Cancelled)),
                _ => Err(field(format!(
                    "`answers` entry {i} must be a string or {{\"error\": \"unavailable\"|\"configuration\"|\"cancelled\"}}"
                ))),
            },
        })
        .collect()
}

/// Runs a script and returns one JSON value per event: `{"event", "effects", …}` (and, for a
/// `tool_call`, `"verdict": "allow"|"block"` with the `"reason"`).
pub fn run(script: &Value) -> Result<Vec<Value>, ScriptError> {
    let obj = script.as_object().ok_or(ScriptError::NotAnObject)?;
    let settings = settings_from(obj.get("settings"));
    let tools = match obj.get("tools") {
        Some(v) => tools_from(v, "`tools`")?,
        None => Vec::new(),
    };
    let active = match obj.get("active") {
        Some(Value::Array(names)) => names
            .iter()
            .map(|n| {
                n.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| field("`active` must be an array of strings"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(field("`active` must be an array of strings")),
        None => tools
            .iter()
            .filter(|t| t.exposure.is_declared())
            .map(|t| t.name.clone())
            .collect(),
    };
    let mut origins = Vec::new();
    if let Some(list) = obj.get("mcpOrigins") {
        for (i, pair) in list.as_array().into_iter().flatten().enumerate() {
            let name = pair.get(0).and_then(Value::as_str);
            let scope = match pair.get(1).and_then(Value::as_str) {
                Some("project") => Some(Scope::Project),
                Some("global") => Some(Scope::Global),
                _ => None,
            };
            match (name, scope) {
                (Some(n), Some(s)) => origins.push((n.to_owned(), s)),
                _ => {
                    return Err(field(format!(
                        "`mcpOrigins` entry {i} must be [name, \"global\"|\"project\"]"
                    )))
                }
            }
        }
    }
    let (session, _) = Session::start(StartEvent {
        reason: StartReason::Startup,
        nonce: "sim0".into(),
        settings: SettingsRead::Read(Settings::default()),
        project: ProjectRead::Absent,
        mcp_origins: Vec::new(),
        branch: BranchRead::Entries(Vec::new()),
    });
    let mut sim = Sim {
        session,
        entries: Vec::new(),
        leaf: None,
        tools,
        active,
        origins,
        settings,
        project: obj.get("project").cloned().unwrap_or(Value::Null),
        starts: 0,
        answers: scripted_answers(obj.get("answers"))?,
    };
    let events = obj
        .get("events")
        .and_then(Value::as_array)
        .ok_or_else(|| field("`events` must be an array"))?;
    let mut out = Vec::with_capacity(events.len());
    for (i, event) in events.iter().enumerate() {
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| field(format!("event {i} has no `type`")))?;
        let mut line = json!({"index": i, "event": kind});
        let effects: Vec<Effect> = match kind {
            "session_start" => {
                let reason = match event.get("reason").and_then(Value::as_str) {
                    Some("resume") => StartReason::Resume,
                    Some("fork") => StartReason::Fork,
                    Some("new") => StartReason::New,
                    _ => StartReason::Startup,
                };
                sim.start(reason);
                sim.boundary(BoundaryKind::Reconcile)
            }
            "reload" => {
                sim.start(StartReason::Reload);
                sim.boundary(BoundaryKind::Reconcile)
            }
            "before_agent_start" => {
                let text = match event.get("messageType").and_then(Value::as_str) {
                    Some("custom") => None,
                    _ => event
                        .get("prompt")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                };
                let effects = sim.boundary(BoundaryKind::Prompt { text: text.clone() });
                if let Some(text) = text {
                    sim.push(
                        json!({"type": "message", "message": {"role": "user", "content": text}}),
                    );
                }
                effects
            }
            "turn_end" => {
                let had_tools = event
                    .get("toolResults")
                    .and_then(Value::as_array)
                    .is_some_and(|r| !r.is_empty());
                if had_tools {
                    sim.boundary(BoundaryKind::ToolRound)
                } else {
                    Vec::new()
                }
            }
            "tool_call" => {
                let tool = event
                    .get("toolName")
                    .and_then(Value::as_str)
                    .ok_or_else(|| field(format!("event {i}: `toolName` must be a string")))?;
                let server = match event.get("input").and_then(|input| input.get("server")) {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(Ok(s.clone())),
                    Some(_) => Some(Err(())),
                };
                let call = ToolCallEvent {
                    tool: tool.to_owned(),
                    server,
                };
                let mut outcome = sim.session.tool_call(&call);
                if outcome.refresh_and_retry {
                    outcome = sim
                        .session
                        .tool_call_with(&call, Some(InventoryRead::Tools(sim.tools.clone())));
                }
                sim.carry_out(&outcome.effects);
                if let Some(job) = outcome.pending.clone() {
                    let mut answered = sim.answer(&job);
                    let mut again = sim.session.tool_call(&call);
                    sim.carry_out(&again.effects);
                    answered.append(&mut again.effects);
                    outcome = crate::session::CallOutcome {
                        effects: answered,
                        ..again
                    };
                }
                match &outcome.block {
                    None => line["verdict"] = json!("allow"),
                    Some(reason) => {
                        line["verdict"] = json!("block");
                        line["reason"] = json!(reason);
                    }
                }
                outcome.effects
            }
            "register_tool" => {
                let tool = event
                    .get("tool")
                    .ok_or_else(|| field(format!("event {i}: `tool` is missing")))?;
                let mut new = tools_from(&json!([tool]), &format!("event {i}"))?;
                let tool = new.remove(0);
                if tool.exposure.is_declared() && !sim.active.contains(&tool.name) {
                    sim.active.push(tool.name.clone());
                }
                sim.tools.retain(|t| t.name != tool.name);
                sim.tools.push(tool);
                Vec::new()
            }
            "set_active_tools" => {
                sim.active = event
                    .get("names")
                    .and_then(Value::as_array)
                    .ok_or_else(|| field(format!("event {i}: `names` must be an array")))?
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect();
                Vec::new()
            }
            "settings_saved" => {
                if let Some(s) = event.get("settings") {
                    sim.settings = settings_from(Some(s));
                }
                if let Some(p) = event.get("project") {
                    sim.project = p.clone();
                }
                sim.session.settings_changed(
                    SettingsRead::Read(sim.settings.clone()),
                    project_from(Some(&sim.project)),
                );
                Vec::new()
            }
            "session_tree" => {
                let index = event
                    .get("leafIndex")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| {
                        field(format!("event {i}: `leafIndex` must be an entry index"))
                    })? as usize;
                if index >= sim.entries.len() {
                    return Err(field(format!(
                        "event {i}: `leafIndex` is past the last entry"
                    )));
                }
                sim.leaf = Some(index);
                let branch = sim.branch();
                sim.session.branch_moved(BranchRead::Entries(branch));
                sim.boundary(BoundaryKind::Reconcile)
            }
            _ => {
                return Err(field(format!(
                    "event {i}: unknown type (expected session_start, reload, before_agent_start, \
                     turn_end, tool_call, register_tool, set_active_tools, settings_saved or \
                     session_tree)"
                )))
            }
        };
        line["effects"] = effects_json(&effects);
        line["active"] = json!(sim.active);
        out.push(line);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_runs_through_a_real_session() {
        let tools = json!([
            {"name": "read", "sourceInfo": {"path": "builtin:read", "source": "builtin"}},
            {"name": "bar_chart", "description": "Render a bar chart from CSV data.",
             "sourceInfo": {"path": "/a/extensions/bar.ts", "source": "auto", "scope": "user"}},
            {"name": "forecast", "description": "Weather forecast for a city.",
             "sourceInfo": {"path": "/a/extensions/weather.ts", "source": "auto", "scope": "user"}}
        ]);
        let script = json!({
            "settings": {"tools": {"enabled": true}, "decision": {"provider": "embedded", "minimumCandidates": 1}},
            "tools": tools,
            "events": [
                {"type": "session_start"},
                {"type": "before_agent_start", "prompt": "What is the weather forecast for Lisbon?"},
                {"type": "tool_call", "toolName": "forecast", "input": {}},
                {"type": "tool_call", "toolName": "bar_chart", "input": {}},
                {"type": "reload"},
                {"type": "tool_call", "toolName": "bar_chart", "input": {}}
            ]
        });
        let lines = run(&script).unwrap();
        assert_eq!(lines[2]["verdict"], "allow");
        assert_eq!(lines[3]["verdict"], "block");
        assert_eq!(
            lines[5]["verdict"], "block",
            "the ledger is replayed after /reload"
        );
        assert!(lines[1]["effects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["type"] == "appendEntry"));
        assert!(!lines[1]["active"]
            .as_array()
            .unwrap()
            .contains(&json!("bar_chart")));
    }

    #[test]
    fn bad_scripts_name_the_event_and_field() {
        let err = run(&json!({"events": [{"type": "tool_call"}]})).unwrap_err();
        assert_eq!(err.to_string(), "event 0: `toolName` must be a string");
        let err = run(&json!({"events": [{"type": "sk-live-SECRET"}]})).unwrap_err();
        assert!(err.to_string().starts_with("event 0: unknown type"));
        assert!(!err.to_string().contains("SECRET"));
        assert!(run(&json!([])).is_err());
    }
}
