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
//!   "answers": [ "{\"scores\": […]}", { "error": "unavailable" } ], /* or "timed-out" */  /* an HTTP or Pi model's */
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
//!
//! What the host reads from Pi can also be given per event, as a recording made inside Pi
//! ([`context_decisions::record`]) gives it:
//! - on any boundary (`session_start`, `before_agent_start`, `turn_end`, `session_tree`) and on
//!   `tool_call` (for its registry refresh): `"tools": [ … ]`, what `getAllTools()` returned
//!   (kept from then on), or `"tools": "unreadable"` (it threw, this once); `"active": [ … ]`,
//!   what `getActiveTools()` returned;
//! - on `session_start` (and `reload`): `"nonce"`, `"settings"`, `"project"`, `"mcpOrigins"` as
//!   at the top level, and `"branch": [ … ]` (the branch's entries, root first) or
//!   `"branch": "unreadable"`;
//! - on `session_tree`: `"branch": [ … ]` or `"unreadable"` instead of `leafIndex`, or
//!   `"branch": "same"` for a reconcile without a branch move;
//! - `"settings": "unreadable"` and `"project": "unreadable"` (top level, `session_start`,
//!   `settings_saved`): the file exists but cannot be read.
//!
//! With `"deferAnswers": true` a decision job is not answered when it is handed out: a
//! `{"type": "decided", "job": N, "answers": [ … ], "active"?: [ … ]}` event answers it later (so
//! a save or a branch move in between supersedes it), and a `tool_call` waiting for one prints
//! `"verdict": "pending"` with its `"job"`. `{"type": "decisions_test"}` and
//! `{"type": "test_decided", "job": N, "answers": [ … ]}` run `/decisions test`;
//! `{"type": "decisions_list", "tools"?: [ … ]}` is the registry read of `/decisions tools list`.
//!
//! A `session_start` or `reload` line also carries `warnings` when the start gave any (a branch
//! whose ledger does not fold, say so: the same sentence Pi shows).
//!
//! An event may carry `"expect"`: the fields its printed line should have (`effects`, `verdict`,
//! `reason`, `job`, `text`), as a recording writes them; [`check`] compares.

use context_decisions::session::{
    effects_json, Answer, BoundaryEvent, BoundaryKind, BranchRead, DecisionJob, Effect,
    InventoryRead, Session, SettingsRead, StartEvent, StartReason, ToolCallEvent,
};
use pcd_gate::ProjectRead;
use pcd_model::{inventory_from_value, ProjectAllowlistFile, Scope, Settings, ToolInfo};
use pcd_picker::request::ModelError;
use pcd_ui_text::ScriptProblem;
use serde_json::{json, Value};

/// Why a script cannot run: the event (its index) when the problem is in one, and what is
/// wrong. Names the event and the field, never a value; the sentence is ui-text's
/// ([`pcd_ui_text::script_error`]).
#[derive(Debug, thiserror::Error)]
#[error("{}", pcd_ui_text::script_error(*event, problem))]
pub struct ScriptError {
    /// The event's index, when the problem is in one.
    pub event: Option<usize>,
    /// What is wrong.
    pub problem: ScriptProblem,
}

impl ScriptError {
    /// The problem in the event at `index` (unless it already names one).
    fn in_event(self, index: usize) -> ScriptError {
        ScriptError {
            event: self.event.or(Some(index)),
            problem: self.problem,
        }
    }
}

/// A problem outside any event.
fn problem(problem: ScriptProblem) -> ScriptError {
    ScriptError {
        event: None,
        problem,
    }
}

/// A problem in the event at `index`.
fn in_event(index: usize, problem: ScriptProblem) -> ScriptError {
    ScriptError {
        event: Some(index),
        problem,
    }
}

/// The warnings among the effects of a session's start.
pub fn start_warnings(effects: &[context_decisions::session::Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            context_decisions::session::Effect::Warn(text) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// `field` is `tools`, or none for `register_tool`'s `tool`.
fn tools_from(value: &Value, field: Option<&'static str>) -> Result<Vec<ToolInfo>, ScriptError> {
    let inventory = inventory_from_value(value)
        .map_err(|error| problem(ScriptProblem::NotAnInventory { field, error }))?;
    if let Some(r) = inventory.rejected.first() {
        return Err(problem(ScriptProblem::BadTool {
            field,
            entry: r.index,
            problem: r.problem.clone(),
        }));
    }
    Ok(inventory.tools)
}

fn settings_from(value: Option<&Value>) -> SettingsRead {
    match value {
        Some(Value::String(s)) if s == "unreadable" => SettingsRead::Unreadable,
        v => SettingsRead::Read(v.map_or_else(Settings::default, |v| Settings::from_json(v).0)),
    }
}

fn project_from(value: Option<&Value>) -> ProjectRead {
    match value {
        None | Some(Value::Null) => ProjectRead::Absent,
        Some(Value::String(s)) if s == "unreadable" => ProjectRead::Unreadable,
        Some(v) => ProjectRead::Read(ProjectAllowlistFile::from_json(v).0),
    }
}

fn origins_from(list: &Value) -> Result<Vec<(String, Scope)>, ScriptError> {
    let mut origins = Vec::new();
    for (i, pair) in list.as_array().into_iter().flatten().enumerate() {
        let name = pair.get(0).and_then(Value::as_str);
        let scope = match pair.get(1).and_then(Value::as_str) {
            Some("project") => Some(Scope::Project),
            Some("global") => Some(Scope::Global),
            _ => None,
        };
        match (name, scope) {
            (Some(n), Some(s)) => origins.push((n.to_owned(), s)),
            _ => return Err(problem(ScriptProblem::McpOrigin(i))),
        }
    }
    Ok(origins)
}

fn names_from(value: &Value, field: &'static str) -> Result<Vec<String>, ScriptError> {
    let wrong = || problem(ScriptProblem::NotStrings(field));
    value
        .as_array()
        .ok_or_else(wrong)?
        .iter()
        .map(|n| n.as_str().map(str::to_owned).ok_or_else(wrong))
        .collect()
}

struct Sim {
    session: Session,
    entries: Vec<Value>,
    leaf: Option<usize>,
    tools: Vec<ToolInfo>,
    active: Vec<String>,
    origins: Vec<(String, Scope)>,
    settings: SettingsRead,
    project: Value,
    starts: u32,
    /// Scripted answers of an HTTP or Pi decision model, one per request, in order; when they run
    /// out, the model does not answer.
    answers: std::collections::VecDeque<Answer>,
    /// Jobs wait for `decided` events instead of taking the scripted answers.
    defer: bool,
    /// `getAllTools()` throws at the next read.
    registry_throws: bool,
}

impl Sim {
    /// The branch from the root to the leaf.
    fn branch(&self) -> Vec<Value> {
        let Some(leaf) = self.leaf else {
            return Vec::new();
        };
        let mut path = Vec::new();
        let mut id = self.entries[leaf]["id"].clone();
        // A hand-written branch may link in a cycle: never walk more entries than there are.
        while let Some(entry) = self
            .entries
            .iter()
            .find(|e| e["id"] == id)
            .filter(|_| path.len() < self.entries.len() && !id.is_null())
        {
            path.push(entry.clone());
            id = entry["parentId"].clone();
        }
        path.reverse();
        path
    }

    fn push(&mut self, mut entry: Value) {
        let mut n = self.entries.len() + 1;
        let mut id = format!("{n:08x}");
        while self.entries.iter().any(|e| e["id"] == id.as_str()) {
            n += 1;
            id = format!("{n:08x}");
        }
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
                Effect::RecordScorer(data) => self.push(json!({
                    "type": "custom",
                    "customType": pcd_ledger::SCORER_CUSTOM_TYPE,
                    "data": data,
                })),
                Effect::Notice(_) | Effect::Warn(_) | Effect::Decide(_) | Effect::Embed(_) => {}
            }
        }
    }

    /// A new `Session` over the branch; returns the warnings its start gives.
    fn start(&mut self, reason: StartReason, event: &Value) -> Result<Vec<String>, ScriptError> {
        self.starts += 1;
        if let Some(s) = event.get("settings") {
            self.settings = settings_from(Some(s));
        }
        if let Some(p) = event.get("project") {
            self.project = p.clone();
        }
        if let Some(o) = event.get("mcpOrigins") {
            self.origins = origins_from(o)?;
        }
        let branch = match event.get("branch") {
            Some(Value::String(s)) if s == "unreadable" => BranchRead::Unreadable,
            Some(entries) => {
                self.replace_branch(entries)?;
                BranchRead::Entries(self.branch())
            }
            None => BranchRead::Entries(self.branch()),
        };
        let nonce = match event.get("nonce").and_then(Value::as_str) {
            Some(n) => n.to_owned(),
            None => format!("sim{}", self.starts),
        };
        let (session, effects) = Session::start(StartEvent {
            reason,
            nonce,
            settings: self.settings.clone(),
            project: project_from(Some(&self.project)),
            mcp_origins: self.origins.clone(),
            branch,
        });
        self.session = session;
        Ok(start_warnings(&effects))
    }

    /// The branch given in full (a recording's): it becomes the simulator's, its last entry the
    /// leaf.
    fn replace_branch(&mut self, entries: &Value) -> Result<(), ScriptError> {
        let entries = entries
            .as_array()
            .ok_or_else(|| problem(ScriptProblem::Branch))?;
        self.entries = entries.clone();
        self.leaf = self.entries.len().checked_sub(1);
        Ok(())
    }

    /// What `getAllTools()` and `getActiveTools()` return from this event on, when it says.
    fn reads(&mut self, event: &Value, i: usize) -> Result<(), ScriptError> {
        match event.get("tools") {
            None => {}
            Some(Value::String(s)) if s == "unreadable" => self.registry_throws = true,
            Some(tools) => {
                self.tools = tools_from(tools, Some("tools")).map_err(|e| e.in_event(i))?
            }
        }
        if let Some(active) = event.get("active") {
            self.active = names_from(active, "active").map_err(|e| e.in_event(i))?;
        }
        Ok(())
    }

    /// `getAllTools()` now.
    fn read_tools(&mut self) -> InventoryRead {
        if std::mem::take(&mut self.registry_throws) {
            InventoryRead::Unreadable
        } else {
            InventoryRead::Tools(self.tools.clone())
        }
    }

    fn boundary(&mut self, kind: BoundaryKind) -> Vec<Effect> {
        let inventory = if self.session.needs_inventory() {
            self.read_tools()
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
                if !self.defer {
                    all.extend(self.answer(&job));
                }
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
/// "timed-out" | "configuration" | "cancelled"}`.
fn scripted_answers(
    value: Option<&Value>,
) -> Result<std::collections::VecDeque<Answer>, ScriptError> {
    let Some(value) = value else {
        return Ok(Default::default());
    };
    let items = value
        .as_array()
        .ok_or_else(|| problem(ScriptProblem::AnswersNotArray))?;
    items
        .iter()
        .enumerate()
        .map(|(i, a)| match a {
            Value::String(text) => Ok(Ok(text.clone())),
            other => match other.get("error").and_then(Value::as_str) {
                Some("unavailable") => Ok(Err(ModelError::Unavailable)),
                Some("timed-out") => Ok(Err(ModelError::TimedOut)),
                Some("configuration") => Ok(Err(ModelError::Configuration)),
                Some("cancelled") => Ok(Err(ModelError::Cancelled)),
                _ => Err(problem(ScriptProblem::Answer(i))),
            },
        })
        .collect()
}

/// Runs a script and returns one JSON value per event: `{"event", "effects", …}` (and, for a
/// `tool_call`, `"verdict": "allow"|"block"|"pending"` with the `"reason"` or the `"job"`).
pub fn run(script: &Value) -> Result<Vec<Value>, ScriptError> {
    let obj = script
        .as_object()
        .ok_or_else(|| problem(ScriptProblem::NotAnObject))?;
    let settings = settings_from(obj.get("settings"));
    let tools = match obj.get("tools") {
        Some(v) => tools_from(v, Some("tools"))?,
        None => Vec::new(),
    };
    let active = match obj.get("active") {
        Some(names) => names_from(names, "active")?,
        None => tools
            .iter()
            .filter(|t| t.exposure.is_declared())
            .map(|t| t.name.clone())
            .collect(),
    };
    let origins = match obj.get("mcpOrigins") {
        Some(list) => origins_from(list)?,
        None => Vec::new(),
    };
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
        defer: obj.get("deferAnswers").and_then(Value::as_bool) == Some(true),
        registry_throws: false,
    };
    let events = obj
        .get("events")
        .and_then(Value::as_array)
        .ok_or_else(|| problem(ScriptProblem::EventsNotArray))?;
    let mut out = Vec::with_capacity(events.len());
    for (i, event) in events.iter().enumerate() {
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| in_event(i, ScriptProblem::NoType))?;
        let mut line = json!({"index": i, "event": kind});
        sim.reads(event, i)?;
        let effects: Vec<Effect> = match kind {
            "session_start" => {
                let reason = match event.get("reason").and_then(Value::as_str) {
                    Some("resume") => StartReason::Resume,
                    Some("fork") => StartReason::Fork,
                    Some("new") => StartReason::New,
                    Some("reload") => StartReason::Reload,
                    _ => StartReason::Startup,
                };
                let warnings = sim.start(reason, event).map_err(|e| e.in_event(i))?;
                if !warnings.is_empty() {
                    line["warnings"] = json!(warnings);
                }
                sim.boundary(BoundaryKind::Reconcile)
            }
            "reload" => {
                let warnings = sim
                    .start(StartReason::Reload, event)
                    .map_err(|e| e.in_event(i))?;
                if !warnings.is_empty() {
                    line["warnings"] = json!(warnings);
                }
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
            "tool_call" => tool_call(&mut sim, event, i, &mut line)?,
            "decided" => {
                let job = event
                    .get("job")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| in_event(i, ScriptProblem::Job))?;
                let answers = scripted_answers(event.get("answers")).map_err(|e| e.in_event(i))?;
                let active = sim.active.clone();
                let effects = sim.session.decided(job, answers.into(), &active);
                sim.carry_out(&effects);
                effects
            }
            "decisions_test" => {
                match sim.session.decision_test() {
                    Ok(text) => line["text"] = json!(text),
                    Err(job) if sim.defer => line["job"] = json!(job.id),
                    Err(job) => {
                        let answers = job
                            .requests
                            .iter()
                            .map(|_| {
                                sim.answers
                                    .pop_front()
                                    .unwrap_or(Err(ModelError::Unavailable))
                            })
                            .collect();
                        line["text"] = json!(sim.session.test_decided(job.id, answers));
                    }
                }
                Vec::new()
            }
            "test_decided" => {
                let job = event
                    .get("job")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| in_event(i, ScriptProblem::Job))?;
                let answers = scripted_answers(event.get("answers")).map_err(|e| e.in_event(i))?;
                line["text"] = json!(sim.session.test_decided(job, answers.into()));
                Vec::new()
            }
            "decisions_list" => {
                let inventory = sim.read_tools();
                sim.session.refresh_inventory(inventory);
                Vec::new()
            }
            "register_tool" => {
                let tool = event
                    .get("tool")
                    .ok_or_else(|| in_event(i, ScriptProblem::NoTool))?;
                let mut new = tools_from(&json!([tool]), None).map_err(|e| e.in_event(i))?;
                let tool = new.remove(0);
                if tool.exposure.is_declared() && !sim.active.contains(&tool.name) {
                    sim.active.push(tool.name.clone());
                }
                sim.tools.retain(|t| t.name != tool.name);
                sim.tools.push(tool);
                Vec::new()
            }
            "set_active_tools" => {
                sim.active = names_from(event.get("names").unwrap_or(&Value::Null), "names")
                    .map_err(|e| e.in_event(i))?;
                Vec::new()
            }
            "settings_saved" => {
                if let Some(s) = event.get("settings") {
                    sim.settings = settings_from(Some(s));
                }
                if let Some(p) = event.get("project") {
                    sim.project = p.clone();
                }
                sim.session
                    .settings_changed(sim.settings.clone(), project_from(Some(&sim.project)));
                Vec::new()
            }
            "session_tree" => {
                match event.get("branch") {
                    Some(Value::String(s)) if s == "same" => {}
                    Some(Value::String(s)) if s == "unreadable" => {
                        sim.session.branch_moved(BranchRead::Unreadable)
                    }
                    Some(entries) => {
                        sim.replace_branch(entries).map_err(|e| e.in_event(i))?;
                        let branch = sim.branch();
                        sim.session.branch_moved(BranchRead::Entries(branch));
                    }
                    None => {
                        let index = event
                            .get("leafIndex")
                            .and_then(Value::as_u64)
                            .ok_or_else(|| in_event(i, ScriptProblem::LeafIndex))?
                            as usize;
                        if index >= sim.entries.len() {
                            return Err(in_event(i, ScriptProblem::LeafPastEnd));
                        }
                        sim.leaf = Some(index);
                        let branch = sim.branch();
                        sim.session.branch_moved(BranchRead::Entries(branch));
                    }
                }
                sim.boundary(BoundaryKind::Reconcile)
            }
            _ => return Err(in_event(i, ScriptProblem::UnknownType)),
        };
        // `"tools": "unreadable"` holds for this event's reads only.
        sim.registry_throws = false;
        line["effects"] = effects_json(&effects);
        line["active"] = json!(sim.active);
        out.push(line);
    }
    Ok(out)
}

/// One `tool_call`: the verdict (after a registry refresh when the Session asks for one, and,
/// unless answers are deferred, after answering the decision job a first call waits for).
fn tool_call(
    sim: &mut Sim,
    event: &Value,
    i: usize,
    line: &mut Value,
) -> Result<Vec<Effect>, ScriptError> {
    let tool = event
        .get("toolName")
        .and_then(Value::as_str)
        .ok_or_else(|| in_event(i, ScriptProblem::ToolName))?;
    let call = ToolCallEvent::from_input(tool, event.get("input"));
    let mut outcome = sim.session.tool_call(&call);
    if outcome.refresh_and_retry {
        let inventory = sim.read_tools();
        outcome = sim.session.tool_call_with(&call, Some(inventory));
    }
    sim.carry_out(&outcome.effects);
    if let Some(job) = outcome.pending.clone() {
        if sim.defer {
            line["verdict"] = json!("pending");
            line["job"] = json!(job.id);
            return Ok(outcome.effects);
        }
        let mut answered = sim.answer(&job);
        let mut again = sim.session.tool_call(&call);
        sim.carry_out(&again.effects);
        answered.append(&mut again.effects);
        outcome = context_decisions::session::CallOutcome {
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
    Ok(outcome.effects)
}

/// Compares each event's `expect` with its replayed line: how many events carried one, and the
/// indexes of those whose replay differs.
pub fn check(script: &Value, lines: &[Value]) -> (usize, Vec<usize>) {
    let events = script
        .get("events")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut checked = 0;
    let mut differing = Vec::new();
    for (i, (event, line)) in events.iter().zip(lines).enumerate() {
        let Some(expect) = event.get("expect").and_then(Value::as_object) else {
            continue;
        };
        checked += 1;
        if expect
            .iter()
            .any(|(key, value)| line.get(key).unwrap_or(&Value::Null) != value)
        {
            differing.push(i);
        }
    }
    (checked, differing)
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
        // A problem in what an event carries names the event.
        let err = run(&json!({"events": [{"type": "session_start", "branch": 5}]})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "event 0: `branch` must be an array of entries or \"unreadable\""
        );
        let err = run(&json!({"mcpOrigins": [["a", "sk-live-SECRET"]], "events": []})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`mcpOrigins` entry 0 must be [name, \"global\"|\"project\"]"
        );
    }
}

#[cfg(test)]
mod start_warning_tests {
    use super::*;

    /// A script whose branch holds an edited round: the start line says that the ledger does
    /// not fold, as Pi's session does, and the edit grants nothing.
    #[test]
    fn a_start_on_a_ledger_that_does_not_fold_prints_its_warning() {
        let mut round = pcd_ledger::Round::new(
            "r1",
            pcd_model::Mode::Tools,
            pcd_ledger::Boundary::InitialPrompt,
            pcd_ledger::Basis::Scored,
        );
        round.tools = vec!["web_fetch".into()];
        let mut data = pcd_ledger::encode_round(&round).unwrap().remove(0);
        data["tools"] = json!(["web_fetch", "web_search"]);
        let script = json!({
            "settings": {"tools": {"enabled": true}, "decision": {"provider": "embedded"}},
            "tools": [
                {"name": "web_search", "description": "Search the web.",
                 "sourceInfo": {"path": "/x/web.ts", "source": "auto", "scope": "user", "origin": "top-level"}},
            ],
            "events": [
                {"type": "session_start", "reason": "resume", "branch": [
                    {"type": "custom", "customType": pcd_ledger::CUSTOM_TYPE, "data": data,
                     "id": "00000001", "parentId": null},
                ]},
                {"type": "tool_call", "toolName": "web_search", "input": {}},
            ],
        });
        let lines = run(&script).unwrap();
        let warnings = lines[0]["warnings"].as_array().expect("the start warns");
        assert!(warnings[0]
            .as_str()
            .unwrap()
            .contains("could not be trusted"));
        assert_eq!(lines[1]["verdict"], "block", "{}", lines[1]);
    }
}
