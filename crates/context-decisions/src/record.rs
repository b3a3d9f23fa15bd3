//! Recording a live session as a `simulate` script, so that a bug seen inside Pi can be reported
//! and replayed with `context-decisions simulate FILE`.
//!
//! **Switching it on.** Set `PI_CONTEXT_DECISIONS_RECORD=<file>` in the environment Pi starts
//! in. The Node addon reads the variable once per process ([`process_recorder`]) and every
//! session of that process (`/reload`, `/new`, `/resume` and `/fork` included) is appended to the
//! same file. The file is created (or truncated) with owner-only permissions (`0600`), a symbolic
//! link is never followed, and it is a valid `simulate` script after every event, so a session
//! that ends abruptly still replays. If the file cannot be written, the session continues
//! without recording and says so once.
//!
//! **What a recording holds**: exactly what the [`Session`](crate::session::Session) itself may
//! see, in the `simulate` format (the program's `simulate` module, `crates/cli/src/simulate.rs`):
//! - tool names, descriptions bounded as a decision request bounds them
//!   ([`MAX_REQUEST_DESCRIPTION_CHARS`]), exposures, MCP namespace names, aliases (raw server
//!   names) and bounded namespace descriptions; provenance reduced to what classification needs:
//!   built-in provenance as Pi assigns it, otherwise the derived extension name (as a synthetic
//!   `<inline:NAME>` path) and the scope. Never parameter schemas, annotations, namespace
//!   instructions, provenance paths, package sources or base directories;
//! - **the user's prompts**, bounded to their last
//!   [`MAX_TASK_TEXT_CHARS`](crate::session::MAX_TASK_TEXT_CHARS) characters as the Session
//!   bounds the text it decides from: without them a pick cannot be reproduced. Anyone given a
//!   recording can read those prompts; review it before sharing;
//! - from the branch: ledger entries (names only), the ids and order of entries, which entries
//!   are user messages, and the text (bounded) of the one user message the ledger names as the
//!   first prompt; never assistant text, tool results or other extensions' entries;
//! - tool calls by name, with only the `server` argument of a call (what resource routing
//!   reads); never other arguments or results;
//! - the settings and allowlists as read (with `decision.baseUrl` replaced by a placeholder and
//!   `decision.apiKeyEnv` left out), the project allowlist, the MCP origins (server names and
//!   scopes);
//! - the decision model's answers to each job (bounded), and the effects the live session
//!   produced (`expect`), so that a replay can be checked against them.
//!
//! **Replaying.** `context-decisions simulate FILE` replays it and prints the same effects;
//! `--check` compares them with the recorded ones and exits with 1 on a difference. The
//! `/decisions tools list` views of a replay estimate withheld tokens from names and bounded
//! descriptions only, since schemas are not recorded.

use crate::session::{
    effects_json, Answer, BoundaryEvent, BoundaryKind, BranchRead, CallOutcome, DecisionJob,
    Effect, InventoryRead, ModelError, SessionObserver, SettingsRead, SharedObserver, StartEvent,
    StartReason, ToolCallEvent,
};
use pcd_gate::ProjectRead;
use pcd_model::{extension_name, Settings, SourceScope, ToolInfo};
use pcd_picker::candidates::MAX_REQUEST_DESCRIPTION_CHARS;
use pcd_picker::request::MAX_ANSWER_BYTES;
use pcd_picker::text::bounded;
use serde_json::{json, Map, Value};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// The environment variable that switches recording on: the file to record to.
pub const RECORD_ENV: &str = "PI_CONTEXT_DECISIONS_RECORD";

/// Where recorded events go: one JSON value per event, in order.
pub trait RecordSink: Send {
    /// Writes one event. An error stops the recording (the session goes on).
    fn event(&mut self, event: &Value) -> std::io::Result<()>;
}

/// Events kept in memory (for tests and embedders); [`MemorySink::script`] is the recording.
#[derive(Debug, Clone, Default)]
pub struct MemorySink(Arc<Mutex<Vec<Value>>>);

impl MemorySink {
    /// An empty sink.
    pub fn new() -> MemorySink {
        MemorySink::default()
    }

    /// The recording so far, as a `simulate` script.
    pub fn script(&self) -> Value {
        let events = self.0.lock().map(|e| e.clone()).unwrap_or_default();
        script_with(events)
    }
}

impl RecordSink for MemorySink {
    fn event(&mut self, event: &Value) -> std::io::Result<()> {
        if let Ok(mut events) = self.0.lock() {
            events.push(event.clone());
        }
        Ok(())
    }
}

/// The script's top level around its events.
fn script_head() -> Map<String, Value> {
    let mut head = Map::new();
    head.insert(
        "recording".into(),
        json!({
            "format": 1,
            "by": concat!("pi-context-decisions ", env!("CARGO_PKG_VERSION")),
            "contains": "user prompts (bounded), tool names, bounded descriptions, settings, ledger entries"
        }),
    );
    head.insert("deferAnswers".into(), Value::Bool(true));
    head
}

fn script_with(events: Vec<Value>) -> Value {
    let mut head = script_head();
    head.insert("events".into(), Value::Array(events));
    Value::Object(head)
}

/// A file that is a complete `simulate` script after every event: the closing `]}` is
/// rewritten after each one.
#[derive(Debug)]
pub struct FileSink {
    file: std::fs::File,
    events: usize,
}

const TAIL: &[u8] = b"\n]}\n";

impl FileSink {
    /// Creates (or truncates) `path` with owner-only permissions; refuses a symbolic link or
    /// anything but a regular file.
    pub fn create(path: &Path) -> std::io::Result<FileSink> {
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if !meta.file_type().is_file() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a regular file",
                ));
            }
        }
        // Not truncated on open: another Pi process may be recording to it (below).
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // O_NONBLOCK: a FIFO put there after the check above is refused (no reader) or
            // checked below, never waited on.
            options
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        let mut file = options.open(path)?;
        // Only a regular file this user owns is truncated and written: another account's file
        // (in a shared folder) is refused, as every file the program writes.
        let uid = pcd_bounded_read::replace::effective_uid();
        if pcd_bounded_read::replace::replaceable(&file.metadata()?, uid).is_some() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file of this user's",
            ));
        }
        #[cfg(unix)]
        {
            // One recorder a file: an exclusive lock, held while this process records (the
            // descriptor lives as long as the sink), so a second Pi process given the same path
            // records nothing instead of overwriting the first one's recording.
            if !try_lock_exclusive(&file) {
                return Err(std::io::Error::from(std::io::ErrorKind::WouldBlock));
            }
            // An existing file keeps its mode on open: narrow it.
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        file.set_len(0)?;
        let mut head = serde_json::to_vec(&Value::Object(script_head()))?;
        // `{…}` → `{…,"events":[` followed by the tail.
        head.pop();
        head.extend_from_slice(b",\"events\":[");
        file.write_all(&head)?;
        file.write_all(TAIL)?;
        file.flush()?;
        Ok(FileSink { file, events: 0 })
    }
}

impl RecordSink for FileSink {
    fn event(&mut self, event: &Value) -> std::io::Result<()> {
        let mut text = Vec::with_capacity(256);
        if self.events > 0 {
            text.push(b',');
        }
        text.push(b'\n');
        serde_json::to_writer(&mut text, event)?;
        text.extend_from_slice(TAIL);
        self.file.seek(SeekFrom::End(-(TAIL.len() as i64)))?;
        self.file.write_all(&text)?;
        self.file.flush()?;
        self.events += 1;
        Ok(())
    }
}

/// Takes an exclusive advisory lock (`flock`, not waiting) on `file`; `false` when another open
/// file description holds one. Released when the descriptor closes.
// The workspace denies unsafe code; this is the one FFI call the recorder needs (std's
// `File::try_lock` is newer than the workspace's minimum Rust).
#[cfg(unix)]
#[allow(unsafe_code)]
fn try_lock_exclusive(file: &std::fs::File) -> bool {
    use std::os::unix::io::AsRawFd;
    // SAFETY: `flock` on a descriptor `file` owns for the whole call; no memory is passed.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// A recorder shared by every session of a process.
pub type SharedRecorder = SharedObserver;

/// The process's recorder, from [`RECORD_ENV`], opened on first use. When the file cannot be
/// created, the first caller gets a warning sentence pushed to `warnings` and no recorder.
pub fn process_recorder(warnings: &mut Vec<String>) -> Option<SharedRecorder> {
    static RECORDER: OnceLock<Option<SharedRecorder>> = OnceLock::new();
    let mut failed = None;
    let recorder = RECORDER.get_or_init(|| {
        let path = std::env::var_os(RECORD_ENV).filter(|p| !p.is_empty())?;
        match FileSink::create(Path::new(&path)) {
            Ok(sink) => Some(Recorder::shared(Box::new(sink))),
            Err(e) => {
                failed = Some(e.kind());
                None
            }
        }
    });
    if let Some(kind) = failed {
        let problem = if kind == std::io::ErrorKind::WouldBlock {
            pcd_ui_text::RECORDING_IN_USE.to_owned()
        } else {
            kind.to_string()
        };
        warnings.push(pcd_ui_text::recording_failed(&problem));
    }
    recorder.clone()
}

/// Turns what a live session is fed into `simulate` events. It mirrors what the simulator keeps
/// (its registry and active set), so that each event carries only what changed.
pub struct Recorder {
    sink: Option<Box<dyn RecordSink>>,
    /// The simulator's registry: the recorded tools as last written.
    tools: Vec<Value>,
    /// The simulator's active set.
    active: Vec<String>,
    /// The settings and project allowlist as last written.
    settings: Option<(Value, Value)>,
    /// A `session_start` or `session_tree` waiting for its reconcile boundary, or a `tool_call`
    /// waiting for its registry refresh.
    pending: Option<Value>,
    /// Set when the sink failed: the session warns once.
    failed: bool,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("recording", &self.sink.is_some())
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder writing to `sink`, ready to share.
    pub fn shared(sink: Box<dyn RecordSink>) -> SharedRecorder {
        Arc::new(Mutex::new(Recorder {
            sink: Some(sink),
            tools: Vec::new(),
            active: Vec::new(),
            settings: None,
            pending: None,
            failed: false,
        }))
    }

    fn write(&mut self, event: Value) {
        if let Some(sink) = &mut self.sink {
            if let Err(e) = sink.event(&event) {
                tracing::warn!(error = %e.kind(), "recording stopped");
                self.sink = None;
                self.failed = true;
            }
        }
    }

    fn flush_pending(&mut self) {
        if let Some(event) = self.pending.take() {
            self.write(event);
        }
    }

    /// Mirrors the simulator carrying out effects.
    fn carry_out(&mut self, effects: &[Effect]) {
        for effect in effects {
            if let Effect::SetActiveTools(names) = effect {
                self.active = names.clone();
            }
        }
    }

    /// Adds `tools` to `event` when the registry read differs from the simulator's.
    fn note_inventory(&mut self, event: &mut Value, inventory: &InventoryRead) {
        match inventory {
            InventoryRead::Tools(tools) => {
                let recorded: Vec<Value> = tools.iter().map(recorded_tool).collect();
                if recorded != self.tools {
                    event["tools"] = Value::Array(recorded.clone());
                    self.tools = recorded;
                }
            }
            InventoryRead::Unreadable => event["tools"] = json!("unreadable"),
        }
    }

    fn note_active(&mut self, event: &mut Value, active: &[String]) {
        if active != self.active.as_slice() {
            event["active"] = json!(active);
            self.active = active.to_vec();
        }
    }

    fn note_settings(&mut self, event: &mut Value, settings: &SettingsRead, project: &ProjectRead) {
        let pair = (recorded_settings(settings), recorded_project(project));
        event["settings"] = pair.0.clone();
        event["project"] = pair.1.clone();
        self.settings = Some(pair);
    }
}

impl SessionObserver for Recorder {
    /// Whether the sink failed since the last call (and so the recording stopped).
    fn take_failure(&mut self) -> bool {
        std::mem::take(&mut self.failed)
    }

    /// A session starts: written with its reconcile boundary.
    fn start(&mut self, event: &StartEvent) {
        self.flush_pending();
        let reason = match event.reason {
            StartReason::Startup => "startup",
            StartReason::Reload => "reload",
            StartReason::New => "new",
            StartReason::Resume => "resume",
            StartReason::Fork => "fork",
        };
        let mut out = json!({"type": "session_start", "reason": reason, "nonce": event.nonce});
        self.note_settings(&mut out, &event.settings, &event.project);
        out["mcpOrigins"] = event
            .mcp_origins
            .iter()
            .map(|(name, scope)| json!([name, scope.as_str()]))
            .collect();
        out["branch"] = recorded_branch(&event.branch);
        self.pending = Some(out);
    }

    /// The branch moved: written with its reconcile boundary.
    fn branch_moved(&mut self, branch: &BranchRead) {
        self.flush_pending();
        self.pending = Some(json!({"type": "session_tree", "branch": recorded_branch(branch)}));
    }

    /// A boundary, with whether the session asked for the registry, and its effects.
    fn boundary(&mut self, needed: bool, event: &BoundaryEvent, effects: &[Effect]) {
        let pending = self.pending.take();
        let mut out = match (&event.kind, pending) {
            (BoundaryKind::Reconcile, Some(p))
                if matches!(p["type"].as_str(), Some("session_start" | "session_tree")) =>
            {
                p
            }
            (kind, pending) => {
                if let Some(p) = pending {
                    self.write(p);
                }
                match kind {
                    BoundaryKind::Prompt { text: Some(text) } => json!({
                        "type": "before_agent_start",
                        "prompt": crate::session::bounded_text(text),
                    }),
                    BoundaryKind::Prompt { text: None } => {
                        json!({"type": "before_agent_start", "messageType": "custom"})
                    }
                    BoundaryKind::ToolRound => json!({"type": "turn_end", "toolResults": [{}]}),
                    // A reconcile without a start or a branch move: a `/tree` with the same
                    // branch as far as the recording knows.
                    BoundaryKind::Reconcile => json!({"type": "session_tree", "branch": "same"}),
                }
            }
        };
        if needed {
            self.note_inventory(&mut out, &event.inventory);
            self.note_active(&mut out, &event.active);
        }
        out["expect"] = json!({"effects": effects_json(effects)});
        self.carry_out(effects);
        self.write(out);
    }

    /// A settings or allowlist save (or a read at a prompt): written only when something changed.
    fn settings_changed(&mut self, settings: &SettingsRead, project: &ProjectRead) {
        let pair = (recorded_settings(settings), recorded_project(project));
        if self.settings.as_ref() == Some(&pair) {
            return;
        }
        self.flush_pending();
        let mut out = json!({"type": "settings_saved"});
        self.note_settings(&mut out, settings, project);
        self.write(out);
    }

    /// A `tool_call` (with the registry read for its retry, if any) and its outcome.
    fn tool_call(
        &mut self,
        call: &ToolCallEvent,
        refresh: Option<&InventoryRead>,
        outcome: &CallOutcome,
    ) {
        let input = match &call.server {
            None => json!({}),
            Some(Ok(server)) => json!({ "server": server }),
            Some(Err(())) => json!({ "server": 0 }),
        };
        let fresh = json!({"type": "tool_call", "toolName": call.tool, "input": input});
        let mut out = match (refresh, self.pending.take()) {
            (Some(_), Some(p))
                if p["type"] == "tool_call" && p["toolName"] == fresh["toolName"] =>
            {
                p
            }
            (_, pending) => {
                if let Some(p) = pending {
                    self.write(p);
                }
                fresh
            }
        };
        if refresh.is_none() && outcome.refresh_and_retry {
            // The host reads the registry and asks again: written with that read.
            self.pending = Some(out);
            return;
        }
        if let Some(inventory) = refresh {
            self.note_inventory(&mut out, inventory);
        }
        let mut expect = json!({"effects": effects_json(&outcome.effects)});
        match (&outcome.pending, &outcome.block) {
            (Some(job), _) => {
                expect["verdict"] = json!("pending");
                expect["job"] = json!(job.id);
            }
            (None, None) => expect["verdict"] = json!("allow"),
            (None, Some(reason)) => {
                expect["verdict"] = json!("block");
                expect["reason"] = json!(reason);
            }
        }
        out["expect"] = expect;
        self.carry_out(&outcome.effects);
        self.write(out);
    }

    /// The answers to a decision job, with Pi's active set then, and the effects.
    fn decided(&mut self, job: u64, answers: &[Answer], active: &[String], effects: &[Effect]) {
        self.flush_pending();
        let mut out = json!({"type": "decided", "job": job, "answers": recorded_answers(answers)});
        self.note_active(&mut out, active);
        out["expect"] = json!({"effects": effects_json(effects)});
        self.carry_out(effects);
        self.write(out);
    }

    /// `/decisions test` and what it answered at once, or its job.
    fn decision_test(&mut self, result: &Result<String, DecisionJob>) {
        self.flush_pending();
        let expect = match result {
            Ok(text) => json!({"text": text}),
            Err(job) => json!({"job": job.id}),
        };
        self.write(json!({"type": "decisions_test", "expect": expect}));
    }

    /// The answers to a `/decisions test` job and the sentence reported.
    fn test_decided(&mut self, job: u64, answers: &[Answer], text: &str) {
        self.flush_pending();
        self.write(json!({
            "type": "test_decided",
            "job": job,
            "answers": recorded_answers(answers),
            "expect": {"text": text},
        }));
    }

    /// A registry read outside a boundary (`/decisions tools list`).
    fn refresh_inventory(&mut self, inventory: &InventoryRead) {
        self.flush_pending();
        let mut out = json!({"type": "decisions_list"});
        self.note_inventory(&mut out, inventory);
        self.write(out);
    }
}

/// One tool as the Session may see it (see the module documentation).
pub fn recorded_tool(tool: &ToolInfo) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), json!(tool.name));
    if !tool.description.is_empty() {
        out.insert(
            "description".into(),
            json!(bounded(&tool.description, MAX_REQUEST_DESCRIPTION_CHARS)),
        );
    }
    out.insert("exposure".into(), json!(tool.exposure.as_str()));
    if let Some(ns) = &tool.namespace {
        let mut n = Map::new();
        n.insert("name".into(), json!(ns.name));
        if let Some(d) = &ns.description {
            n.insert(
                "description".into(),
                json!(bounded(d, MAX_REQUEST_DESCRIPTION_CHARS)),
            );
        }
        let aliases: Vec<&String> = ns.aliases.iter().filter(|a| !a.is_empty()).collect();
        if !aliases.is_empty() {
            n.insert("aliases".into(), json!(aliases));
        }
        out.insert("namespace".into(), Value::Object(n));
    }
    if let Some(info) = &tool.source_info {
        let mut s = Map::new();
        if info.is_builtin() {
            // Pi-assigned (`builtin:read`, `builtin:mcp`): no path of the user's.
            s.insert("path".into(), json!(info.path));
            s.insert("source".into(), json!("builtin"));
        } else {
            match extension_name(info) {
                // A name of digits would read as an unnamed inline factory (`inline-N`).
                Some(name) if name.bytes().all(|b| b.is_ascii_digit()) => {
                    s.insert("path".into(), json!(format!("{name}.ts")));
                    s.insert("source".into(), json!("local"));
                    s.insert("origin".into(), json!("top-level"));
                }
                Some(name) => {
                    s.insert("path".into(), json!(format!("<inline:{name}>")));
                    s.insert("source".into(), json!("inline"));
                }
                None => {
                    s.insert("path".into(), json!("<sdk:>"));
                    s.insert("source".into(), json!("sdk"));
                }
            }
        }
        let scope = match info.scope {
            Some(SourceScope::User) => Some("user"),
            Some(SourceScope::Project) => Some("project"),
            Some(SourceScope::Temporary) => Some("temporary"),
            Some(SourceScope::Unknown) | None => None,
        };
        if let Some(scope) = scope {
            s.insert("scope".into(), json!(scope));
        }
        out.insert("sourceInfo".into(), Value::Object(s));
    }
    Value::Object(out)
}

/// The settings as recorded: the decision endpoint and its key variable are left out (a replay
/// never calls a model; its answers are recorded).
fn recorded_settings(settings: &SettingsRead) -> Value {
    match settings {
        SettingsRead::Unreadable => json!("unreadable"),
        SettingsRead::Read(s) => settings_json(s),
    }
}

/// [`Settings::to_json`] without `decision.baseUrl` (a placeholder keeps an `http` model
/// selected) and `decision.apiKeyEnv`.
pub fn settings_json(settings: &Settings) -> Value {
    let mut value = settings.to_json();
    if let Some(d) = value.get_mut("decision").and_then(Value::as_object_mut) {
        if d.get("baseUrl").is_some_and(|u| !u.is_null()) {
            d.insert("baseUrl".into(), json!("http://recorded.invalid/"));
        }
        d.remove("apiKeyEnv");
    }
    value
}

fn recorded_project(project: &ProjectRead) -> Value {
    match project {
        ProjectRead::Absent => Value::Null,
        ProjectRead::Unreadable => json!("unreadable"),
        ProjectRead::Read(list) => json!({
            "alwaysAllowedTools": list.tools.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
            "alwaysAllowedMcpServers": list.groups.iter().map(|g| g.as_str()).collect::<Vec<_>>(),
        }),
    }
}

fn recorded_answers(answers: &[Answer]) -> Value {
    answers
        .iter()
        .map(|a| match a {
            // Longer answers are rejected whole; one byte more keeps that so.
            Ok(text) => json!(cut_bytes(text, MAX_ANSWER_BYTES + 1)),
            Err(ModelError::Unavailable) => json!({"error": "unavailable"}),
            Err(ModelError::TimedOut) => json!({"error": "timed-out"}),
            Err(ModelError::Configuration) => json!({"error": "configuration"}),
            Err(ModelError::Cancelled) => json!({"error": "cancelled"}),
        })
        .collect()
}

/// `text` cut to at most `max` bytes... or, for a cut inside a character, to the next character
/// boundary after it (so that it stays longer than `max - 1`).
fn cut_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end += 1;
    }
    &text[..end]
}

/// The branch as recorded (see the module documentation): entries re-linked in order, ids kept
/// when the ledger would keep them (others get one it would not keep either), ledger entries whole, user messages without their text
/// except the first prompt's, everything else as a bare entry.
fn recorded_branch(branch: &BranchRead) -> Value {
    let BranchRead::Entries(entries) = branch else {
        return json!("unreadable");
    };
    let (state, _) = pcd_ledger::fold(entries);
    let first = state
        .first_prompt()
        .and_then(|fp| fp.entry_id.as_deref())
        .map(str::to_owned);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(entries.len());
    let mut parent = Value::Null;
    for (i, entry) in entries.iter().enumerate() {
        let id = entry
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| pcd_ledger::is_entry_id(id) && seen.insert(id.to_string()))
            .map_or_else(|| format!("entry {i}"), str::to_owned);
        let kind = entry.get("type").and_then(Value::as_str);
        let custom = entry.get("customType").and_then(Value::as_str);
        let mut e = match (kind, custom) {
            (Some("custom"), Some(pcd_ledger::CUSTOM_TYPE)) => {
                let mut e = json!({
                    "type": "custom",
                    "customType": pcd_ledger::CUSTOM_TYPE,
                    "data": entry.get("data").cloned().unwrap_or(Value::Null),
                });
                if let Some(t) = entry
                    .get("timestamp")
                    .and_then(Value::as_str)
                    .filter(|t| t.len() <= 64)
                {
                    e["timestamp"] = json!(t);
                }
                e
            }
            (Some("message"), _) => {
                let user = entry
                    .get("message")
                    .and_then(|m| m.get("role"))
                    .and_then(Value::as_str)
                    == Some("user");
                if user {
                    let text = if first.as_deref() == Some(id.as_str()) {
                        crate::session::user_text(entry)
                            .map(|t| crate::session::bounded_text(&t))
                            .unwrap_or_default()
                    } else {
                        String::new()
                    };
                    json!({"type": "message", "message": {"role": "user", "content": text}})
                } else {
                    json!({"type": "message", "message": {"role": "other"}})
                }
            }
            _ => json!({"type": "other"}),
        };
        e["id"] = json!(id);
        e["parentId"] = parent;
        parent = json!(id);
        out.push(e);
    }
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_model::{inventory_from_value, Classifier, Scope};

    #[test]
    fn a_recorded_tool_classifies_as_the_live_one() {
        let tools = json!([
            {"name": "read", "sourceInfo": {"path": "builtin:read", "source": "builtin", "scope": "temporary"}},
            {"name": "read_mcp_resource", "sourceInfo": {"path": "builtin:mcp", "source": "builtin"}},
            {"name": "web", "description": "Fetch", "sourceInfo": {"path": "/home/u/.pi/agent/npm/node_modules/@acme/pi-web/index.ts", "source": "npm:@acme/pi-web@2.0.0", "scope": "user", "origin": "package", "baseDir": "/home/u/secret"}},
            {"name": "bar", "sourceInfo": {"path": "/x/pi-bar/index.ts", "source": "git:github.com/me/pi-bar@v2", "scope": "project", "origin": "package"}},
            {"name": "notes", "sourceInfo": {"path": "/home/u/.pi/agent/extensions/notes/index.ts", "source": "auto", "scope": "user", "origin": "top-level"}},
            {"name": "num", "sourceInfo": {"path": "/p/123.ts", "source": "local", "scope": "user", "origin": "top-level"}},
            {"name": "dot", "sourceInfo": {"path": "/p/x/index.ts", "source": ".", "scope": "project", "origin": "package", "baseDir": "/p/my-pkg"}},
            {"name": "inl", "sourceInfo": {"path": "<inline:2>", "source": "inline", "scope": "temporary"}},
            {"name": "sdk", "sourceInfo": {"path": "<sdk:sdk>", "source": "sdk", "scope": "temporary"}},
            {"name": "odd", "sourceInfo": {"path": "/p/q.ts", "source": "local", "scope": "weird"}},
            {"name": "none"},
            {"name": "笔记", "sourceInfo": {"path": "/p/笔记.ts", "source": "auto", "scope": "user"}},
            {"name": "mcp__docs__search", "exposure": "deferred",
             "namespace": {"name": "mcp__docs", "description": "Docs", "aliases": ["docs"], "instructions": "sk-SECRET"},
             "sourceInfo": {"path": "builtin:mcp", "source": "builtin"}},
            {"name": "mcp__ext__q", "namespace": {"name": "mcp__ext"},
             "sourceInfo": {"path": "/p/e.ts", "source": "auto", "scope": "project"}}
        ]);
        let live = inventory_from_value(&tools).unwrap().tools;
        let recorded: Vec<Value> = live.iter().map(recorded_tool).collect();
        let replayed = inventory_from_value(&Value::Array(recorded.clone()))
            .unwrap()
            .tools;
        let classifier = Classifier::with_mcp_origins([(
            pcd_model::GroupKey::for_mcp_server("docs"),
            Scope::Project,
        )]);
        assert_eq!(
            classifier.classify_all(&live),
            classifier.classify_all(&replayed)
        );
        let text = Value::Array(recorded).to_string();
        for secret in ["/home/u", "secret", "SECRET", "baseDir", "/x/", "/p/"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }

    #[test]
    fn the_file_is_a_complete_script_after_every_event_and_owner_only() {
        let dir = std::env::temp_dir().join(format!("pcd-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("rec.json");
        std::fs::write(
            &path,
            "old content that is longer than the new one, much longer",
        )
        .unwrap();
        let mut sink = FileSink::create(&path).unwrap();
        let read = || serde_json::from_slice::<Value>(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(read()["events"], json!([]));
        sink.event(&json!({"type": "reload"})).unwrap();
        sink.event(&json!({"type": "turn_end"})).unwrap();
        assert_eq!(
            read()["events"],
            json!([{"type": "reload"}, {"type": "turn_end"}])
        );
        assert_eq!(read()["deferAnswers"], true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            let link = dir.join("link.json");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&path, &link).unwrap();
            assert!(FileSink::create(&link).is_err(), "a symlink is refused");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_answers_stay_too_long() {
        assert_eq!(cut_bytes("abc", 5), "abc");
        assert_eq!(cut_bytes("abcdef", 4), "abcd");
        assert_eq!(cut_bytes("aé", 2), "aé");
    }

    /// A FIFO as the recording file is refused at once, never waited on for a reader.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_as_the_recording_is_refused_without_waiting() {
        let dir = std::env::temp_dir().join(format!("pcd-record-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("recording.json");
        let _ = std::fs::remove_file(&fifo);
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let started = std::time::Instant::now();
        assert!(FileSink::create(&fifo).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Issue 32: another account's file at the recording's path is never truncated (root can
    /// make one; otherwise there is nothing to try).
    #[cfg(unix)]
    #[test]
    fn another_users_file_as_the_recording_is_refused_and_kept() {
        if pcd_bounded_read::replace::effective_uid() != 0 {
            return;
        }
        let dir = std::env::temp_dir().join(format!("pcd-record-owner-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let theirs = dir.join("recording.json");
        std::fs::write(&theirs, b"theirs").unwrap();
        std::os::unix::fs::chown(&theirs, Some(4242), Some(4242)).unwrap();
        assert!(FileSink::create(&theirs).is_err());
        assert_eq!(std::fs::read(&theirs).unwrap(), b"theirs");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_second_recorder_of_the_same_file_is_refused_and_the_first_recording_survives() {
        let dir = std::env::temp_dir().join(format!("pcd-record-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("recording.json");
        let mut first = FileSink::create(&path).unwrap();
        first
            .event(&serde_json::json!({"type": "session_start"}))
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        let second = FileSink::create(&path);
        assert_eq!(
            second.err().map(|e| e.kind()),
            Some(std::io::ErrorKind::WouldBlock)
        );
        assert_eq!(std::fs::read(&path).unwrap(), before, "not truncated");
        drop(first);
        // Once the first one is done, the file can be recorded again (from the start).
        let third = FileSink::create(&path).unwrap();
        drop(third);
        assert!(std::fs::read(&path).unwrap().len() < before.len());
        std::fs::remove_dir_all(&dir).ok();
    }
}
