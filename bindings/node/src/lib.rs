//! The napi-rs addon that exposes the pi-context-decisions facade `Session` to Node, for the Pi
//! extension.
//!
//! Built with cargo alone (`bindings/node/build.sh` runs `cargo build -p pcd-node` and copies the
//! library to `pcd_node.node`); nothing prebuilt is downloaded. It is a thin host: Pi's events in
//! (JSON text, or plain strings on the per-call path), effects out as JSON text; it makes no
//! policy decision and holds no user-visible sentence of its own. The `tool_call` path takes and
//! returns plain values and is synchronous.
//!
//! **Architecture invariant:** no policy decision and no user-facing text here; every verdict,
//! effect and sentence comes from the Rust crates below. Reading the settings and `mcp.json`
//! files happens in the facade's `load` module, called from here.

use context_decisions::binding::PiVersion;
use context_decisions::http_scorer::HttpScorer;
use context_decisions::load::{load_mcp_origins, load_settings};
use context_decisions::session::{
    effects_json, Answer, BoundaryEvent, BoundaryKind, BranchRead, Effect, InventoryRead,
    ModelError, Session, StartEvent, StartReason, ToolCallEvent,
};
use context_decisions::tools_tab::ToolsDialog;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;
use std::path::PathBuf;

mod semantic;

/// The reason to block with when checking a call failed inside the extension (fail closed).
#[napi]
pub fn check_failed_reason() -> String {
    context_decisions::binding::check_failed_reason()
}

/// The reason to block with when Pi refused the entry that would have allowed the call.
#[napi]
pub fn not_recorded_reason() -> String {
    context_decisions::binding::not_recorded_reason()
}

/// The semantic model's state in this process as JSON: `{"state": "loading" | "ready" | "off",
/// "reason"?, "loadMs"?, "warming"}` (`warming`: background embeddings running).
#[napi]
pub fn semantic_state() -> String {
    semantic::state_json()
}

/// The working row's text while a decision is in flight (`Deciding Context`).
#[napi]
pub fn deciding_label() -> String {
    context_decisions::binding::DECIDING_CONTEXT.to_owned()
}

/// The `/decisions` command's description in Pi's command list.
#[napi]
pub fn command_description() -> String {
    context_decisions::binding::DECISIONS_COMMAND_DESCRIPTION.to_owned()
}

/// What Pi offers on Tab after `/decisions `: `[{value, label, description}]` as JSON, for the
/// arguments that start with `prefix` (never file names).
#[napi]
pub fn decisions_completions(prefix: String) -> String {
    serde_json::Value::Array(
        context_decisions::binding::decisions_completions(&prefix)
            .into_iter()
            .map(|(value, description)| {
                serde_json::json!({"value": value, "label": value, "description": description})
            })
            .collect(),
    )
    .to_string()
}

/// The addon's version (the workspace version), so the extension can check what it loaded.
#[napi]
pub fn addon_version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// Classifies a `getAllTools()` JSON array (as text) and returns the `groups --json` rows as
/// JSON text. Invalid input throws an `Error` naming what is wrong (never a value from it).
#[napi]
pub fn classify_groups(tools_json: String) -> Result<String> {
    let inventory =
        context_decisions::inventory::parse_inventory_text(&tools_json, "getAllTools()")
            .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
    let rows = context_decisions::groups::rows(&inventory);
    Ok(context_decisions::groups::rows_json(&rows).to_string())
}

fn invalid(what: &str) -> Error {
    Error::new(Status::InvalidArg, format!("pi-context-decisions: {what}"))
}

fn parse_json(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|_| invalid(&format!("{what} is not valid JSON")))
}

/// `getAllTools()` as JSON text, or `None` when it threw. Entries that are not usable tools are
/// dropped (they stay unknown to the session, so calls to them are blocked).
fn inventory(tools_json: Option<String>) -> InventoryRead {
    match tools_json {
        None => InventoryRead::Unreadable,
        Some(text) => match context_decisions::binding::parse_inventory(&text) {
            Ok(inv) => InventoryRead::Tools(inv.tools),
            Err(_) => InventoryRead::Unreadable,
        },
    }
}

/// `getBranch()` as JSON text, each entry read on its own as the program reads a session file (a
/// lone surrogate a tool result carried read as U+FFFD; an entry that does not decode even so kept
/// as a stub of its kind), or unreadable when it threw or is not an array.
fn branch(entries_json: Option<String>) -> BranchRead {
    match entries_json.and_then(|t| context_decisions::binding::branch_entries(&t)) {
        Some(entries) => BranchRead::Entries(entries),
        None => BranchRead::Unreadable,
    }
}

/// What a `tool_call` verdict returns to the extension.
#[napi(object)]
pub struct CallResult {
    /// The reason to block with, or undefined to let the call through.
    pub block: Option<String>,
    /// Effects to carry out first (JSON array text), when any.
    pub effects: Option<String>,
    /// The tool registered since the last boundary: call `toolCallWith` with `getAllTools()`.
    pub refresh: bool,
    /// A decision job to answer first (JSON text, as a `decide` effect), then ask again.
    pub pending: Option<String>,
}

/// One Pi session (see `context_decisions::session::Session`).
#[napi]
pub struct PiSession {
    inner: Session,
    agent_dir: PathBuf,
    /// The folder of the model's npm package, when the extension found one.
    model_package: Option<PathBuf>,
    /// The checkout the extension was loaded from (a path or git install), if it is one.
    checkout: Option<PathBuf>,
    cwd: PathBuf,
    warnings: Vec<String>,
    /// Warnings already shown this session: a file that stays broken is said once, not at every
    /// prompt that reads it again; a read with no warning at all re-arms them.
    shown: std::collections::HashSet<String>,
    tab: Option<ToolsDialog>,
    /// Semantic jobs handed out and not answered yet (`semanticJob` takes the job's texts).
    semantic_jobs: std::collections::HashMap<u64, context_decisions::session::SemanticJob>,
    /// Semantic jobs whose answers `decided` has not had yet.
    semantic_ids: std::collections::HashSet<u64>,
    /// This process records its sessions: rounds stay lexical, so a recording replays as it ran.
    recording: bool,
}

/// The warning that the semantic model cannot be used is said once per process.
static SEMANTIC_WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn call_event(tool: String, server_kind: u32, server: Option<String>) -> ToolCallEvent {
    ToolCallEvent {
        tool,
        server: match server_kind {
            0 => None,
            1 => Some(Ok(server.unwrap_or_default())),
            _ => Some(Err(())),
        },
    }
}

fn call_result(outcome: context_decisions::session::CallOutcome) -> CallResult {
    CallResult {
        block: outcome.block,
        effects: (!outcome.effects.is_empty()).then(|| effects_json(&outcome.effects).to_string()),
        refresh: outcome.refresh_and_retry,
        pending: outcome
            .pending
            .map(|job| Effect::Decide(job).to_json().to_string()),
    }
}

/// Answers as the extension sends them: `[{"text": …} | {"error": "unavailable" | "timed-out" |
/// "configuration" | "cancelled"}]`. Anything else is a model that did not answer.
fn answers(json: &str) -> Vec<Answer> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(json) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|a| {
            match (
                a.get("text").and_then(Value::as_str),
                a.get("error").and_then(Value::as_str),
            ) {
                (Some(text), _) => Ok(text.to_owned()),
                (_, Some("configuration")) => Err(ModelError::Configuration),
                (_, Some("cancelled")) => Err(ModelError::Cancelled),
                (_, Some("timed-out")) => Err(ModelError::TimedOut),
                _ => Err(ModelError::Unavailable),
            }
        })
        .collect()
}

fn answers_json(answers: &[Answer]) -> String {
    Value::Array(
        answers
            .iter()
            .map(|a| match a {
                Ok(text) => serde_json::json!({"text": text}),
                Err(ModelError::Configuration) => serde_json::json!({"error": "configuration"}),
                Err(ModelError::Cancelled) => serde_json::json!({"error": "cancelled"}),
                Err(ModelError::Unavailable) => serde_json::json!({"error": "unavailable"}),
                Err(ModelError::TimedOut) => serde_json::json!({"error": "timed-out"}),
            })
            .collect(),
    )
    .to_string()
}

/// An HTTP decision job, answered on libuv's thread pool so Node's event loop never waits.
pub struct HttpJob {
    scorer: Option<HttpScorer>,
    requests: Vec<String>,
    concurrency: usize,
    deadline: std::time::Instant,
}

impl Task for HttpJob {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> Result<String> {
        let Some(scorer) = &self.scorer else {
            let failed: Vec<Answer> = self
                .requests
                .iter()
                .map(|_| Err(ModelError::Configuration))
                .collect();
            return Ok(answers_json(&failed));
        };
        let out = scorer.answer_job(&self.requests, self.concurrency, self.deadline);
        Ok(answers_json(&out))
    }

    fn resolve(&mut self, _env: Env, output: String) -> Result<String> {
        Ok(output)
    }
}

impl PiSession {
    /// One step of the open dialog (`go`), as the JSON `tabInput` and `tabAction` return:
    /// `{"close": bool, "job": decide effect | null}`; a closing step closes the dialog.
    fn tab_step(
        &mut self,
        go: impl FnOnce(
            &mut ToolsDialog,
            &mut Session,
            &mut Vec<String>,
        ) -> context_decisions::tools_tab::DialogStep,
    ) -> String {
        let Some(tab) = &mut self.tab else {
            return serde_json::json!({"close": true, "job": null}).to_string();
        };
        let step = go(tab, &mut self.inner, &mut self.warnings);
        if step.close {
            self.tab = None;
        }
        serde_json::json!({
            "close": step.close,
            "job": step.job.map(|job| Effect::Decide(job).to_json()),
        })
        .to_string()
    }
}

#[napi]
impl PiSession {
    /// Starts a session from `session_start`: `{reason, nonce, agentDirEnv, home, cwd, trusted,
    /// piVersion, modelDir, checkoutDir}` as JSON text (`agentDirEnv` is `PI_CODING_AGENT_DIR` as
    /// set, if at all; `modelDir` the model's npm package folder, if installed; `checkoutDir` the
    /// checkout the extension was loaded from, if it is one), and the branch's entries
    /// (`getBranch()`) as JSON text, or
    /// undefined when they could not be read. Reads the settings files and, with the user's
    /// approval, the names-only `mcp.json` origins.
    #[napi(factory)]
    pub fn start(event_json: String, entries_json: Option<String>) -> Result<PiSession> {
        context_decisions::warm_up_scorer();
        let event = parse_json(&event_json, "the start event")?;
        let text = |key: &str| event.get(key).and_then(Value::as_str);
        // Pi's rule: PI_CODING_AGENT_DIR (empty = unset, `~` expanded), else ~/.pi/agent.
        let home = PathBuf::from(text("home").ok_or_else(|| invalid("home is missing"))?);
        let agent_dir = context_decisions::mcp_origins::resolve_agent_dir(
            text("agentDirEnv").map(std::ffi::OsStr::new),
            Some(&home),
        )
        .map_err(|e| invalid(&e.to_string()))?;
        let cwd = PathBuf::from(text("cwd").ok_or_else(|| invalid("cwd is missing"))?);
        // The model's npm package, as the extension's resolution found it (absolute, or ignored).
        let model_package = text("modelDir")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        // The checkout the extension was loaded from (absolute, or ignored): its `.cache` holds
        // the model `cargo xtask fetch-model` installed.
        let checkout = text("checkoutDir")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        // An unavailable trust accessor means untrusted.
        let trusted = event
            .get("trusted")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let version = text("piVersion")
            .and_then(|v| PiVersion::parse(v).ok())
            .unwrap_or(PiVersion::NEWEST);
        let reason = match text("reason") {
            Some("reload") => StartReason::Reload,
            Some("new") => StartReason::New,
            Some("resume") => StartReason::Resume,
            Some("fork") => StartReason::Fork,
            _ => StartReason::Startup,
        };
        let branch = branch(entries_json);
        let branch_filters = matches!(&branch, BranchRead::Entries(e) if e.iter().any(|e| e.get("customType").and_then(Value::as_str) == Some(context_decisions::binding::CUSTOM_TYPE)));
        let files = load_settings(&agent_dir, &cwd, branch_filters);
        let approved = matches!(&files.settings, context_decisions::session::SettingsRead::Read(s) if s.tools.read_mcp_config);
        let (mcp_origins, origin_warnings) =
            load_mcp_origins(approved, &agent_dir, &cwd, trusted, version);
        let mut warnings = files.warnings;
        warnings.extend(origin_warnings);
        // PI_CONTEXT_DECISIONS_RECORD=<file>: record every session of this process.
        let recorder = context_decisions::record::process_recorder(&mut warnings);
        let recording = recorder.is_some();
        let (inner, started) = Session::start_recording(
            StartEvent {
                reason,
                nonce: text("nonce").unwrap_or("s").to_owned(),
                settings: files.settings,
                project: files.project,
                mcp_origins,
                branch,
            },
            recorder,
        );
        // A start's only effects are warnings (records on the branch that grant nothing).
        warnings.extend(started.into_iter().filter_map(|e| match e {
            Effect::Warn(text) => Some(text),
            _ => None,
        }));
        // Never waits: the model loads on its own thread, once per process, as soon as a
        // session uses the embedded scorer with filtering on; rounds before it is ready wait for
        // it only up to the semantic bound.
        if inner.wants_semantic() && !recording {
            semantic::start_loading(&agent_dir, model_package.as_deref(), checkout.as_deref());
        }
        Ok(PiSession {
            inner,
            agent_dir,
            model_package,
            checkout,
            cwd,
            warnings,
            shown: std::collections::HashSet::new(),
            tab: None,
            semantic_jobs: std::collections::HashMap::new(),
            semantic_ids: std::collections::HashSet::new(),
            recording,
        })
    }

    /// Warnings from the last read of the files (sentences), taken once.
    #[napi]
    pub fn take_warnings(&mut self) -> Vec<String> {
        let shown = &mut self.shown;
        std::mem::take(&mut self.warnings)
            .into_iter()
            .filter(|w| shown.insert(w.clone()))
            .collect()
    }

    /// Whether tool filtering is on.
    #[napi]
    pub fn filtering_on(&self) -> bool {
        self.inner.filtering_on()
    }

    /// Whether the next boundary needs `getAllTools()` and `getActiveTools()` (off means off).
    #[napi]
    pub fn needs_inventory(&self) -> bool {
        self.inner.needs_inventory()
    }

    /// A boundary. `kind_json`: `{"type":"prompt","text":…|null}`, `{"type":"toolRound"}` or
    /// `{"type":"reconcile"}`. `tools_json`: `getAllTools()` as JSON text, undefined when it
    /// threw. Returns the effects as JSON text.
    #[napi]
    pub fn boundary(
        &mut self,
        kind_json: String,
        tools_json: Option<String>,
        active: Vec<String>,
    ) -> Result<String> {
        let kind = parse_json(&kind_json, "the boundary kind")?;
        let kind = match kind.get("type").and_then(Value::as_str) {
            Some("prompt") => BoundaryKind::Prompt {
                text: kind.get("text").and_then(Value::as_str).map(str::to_owned),
            },
            Some("toolRound") => BoundaryKind::ToolRound,
            Some("reconcile") => BoundaryKind::Reconcile,
            _ => return Err(invalid("unknown boundary kind")),
        };
        self.sync_semantic();
        let reconcile = matches!(kind, BoundaryKind::Reconcile);
        let effects = self.inner.boundary(BoundaryEvent {
            kind,
            inventory: inventory(tools_json),
            active,
        });
        for effect in &effects {
            if let Effect::Embed(job) = effect {
                self.semantic_ids.insert(job.id);
                self.semantic_jobs.insert(job.id, job.clone());
            }
        }
        if reconcile {
            // The candidates' vectors are embedded ahead of the first prompt, off the event loop.
            semantic::warm(self.inner.candidate_texts());
        }
        Ok(effects_json(&effects).to_string())
    }

    /// Tells the session whether semantic jobs can be answered (the model is loaded or still
    /// loading, and this process is not recording), and warns once per process when a model
    /// folder is there but cannot be used.
    fn sync_semantic(&mut self) {
        if self.inner.wants_semantic() && !self.recording {
            semantic::start_loading(
                &self.agent_dir,
                self.model_package.as_deref(),
                self.checkout.as_deref(),
            );
        }
        let state = semantic::state();
        let can = match &state {
            _ if self.recording => Err(String::new()),
            Some(semantic::ModelState::Loading | semantic::ModelState::Ready(_)) => Ok(()),
            Some(semantic::ModelState::Off { reason, .. }) => Err(reason.clone()),
            None => Err(String::new()),
        };
        self.inner.set_semantic(can);
        if let Some(semantic::ModelState::Ready(model)) = &state {
            self.inner.set_model_folder(model.folder());
        }
        self.warnings.extend(semantic::take_notes());
        if let Some(semantic::ModelState::Off {
            reason,
            folder_found: true,
        }) = state
        {
            if !SEMANTIC_WARNED.swap(true, std::sync::atomic::Ordering::SeqCst) {
                self.warnings
                    .push(context_decisions::binding::semantic_off_warning(&reason));
            }
        }
    }

    /// The settings or an allowlist were saved (or may have changed): reads the files again.
    #[napi]
    pub fn settings_changed(&mut self) {
        let filters = self.inner.branch().is_some_and(|b| !b.rounds().is_empty());
        let files = load_settings(&self.agent_dir, &self.cwd, filters);
        if files.warnings.is_empty() {
            self.shown.clear();
        }
        self.warnings.extend(files.warnings);
        self.inner.settings_changed(files.settings, files.project);
    }

    /// The branch moved (`/tree`, fork, resume): its entries as JSON text, undefined when they
    /// could not be read. Follow with a `reconcile` boundary.
    #[napi]
    pub fn branch_moved(&mut self, entries_json: Option<String>) {
        self.inner.branch_moved(branch(entries_json));
    }

    /// Pi threw while appending a round's entries: refolds from the branch as Pi really has it
    /// (the round grants nothing) and returns the effects (the warning) as JSON. The host skips
    /// that batch's remaining entries and active-set change, then runs a reconcile boundary.
    #[napi]
    pub fn append_failed(&mut self, entries_json: Option<String>) -> String {
        effects_json(&self.inner.append_failed(branch(entries_json))).to_string()
    }

    /// The verdict on one `tool_call`. `server_kind`: 0 no `server` argument (absent or null),
    /// 1 a string (`server`), 2 any other value.
    #[napi]
    pub fn tool_call(
        &mut self,
        tool: String,
        server_kind: u32,
        server: Option<String>,
    ) -> CallResult {
        call_result(self.inner.tool_call(&call_event(tool, server_kind, server)))
    }

    /// [`PiSession::tool_call`] after refreshing the registry with `getAllTools()` (JSON text,
    /// undefined when it threw).
    #[napi]
    pub fn tool_call_with(
        &mut self,
        tool: String,
        server_kind: u32,
        server: Option<String>,
        tools_json: Option<String>,
    ) -> CallResult {
        let event = call_event(tool, server_kind, server);
        call_result(
            self.inner
                .tool_call_with(&event, Some(inventory(tools_json))),
        )
    }
}

#[napi]
impl PiSession {
    /// The answers to a decision job (`[{"text": …} | {"error": …}]`, one per request), with
    /// Pi's active set now. Returns the effects as JSON text.
    #[napi]
    pub fn decided(&mut self, job: u32, answers_json: String, active: Vec<String>) -> String {
        if self.semantic_ids.remove(&u64::from(job)) {
            self.semantic_jobs.remove(&u64::from(job));
            let answer: Value = serde_json::from_str(&answers_json).unwrap_or(Value::Null);
            let fused = match answer.get("scores").and_then(Value::as_array) {
                Some(scores) => Ok(scores.iter().filter_map(Value::as_f64).collect()),
                None => Err(answer
                    .get("lexical")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()),
            };
            let effects = self.inner.semantic_decided(u64::from(job), fused, &active);
            return effects_json(&effects).to_string();
        }
        let effects = self
            .inner
            .decided(u64::from(job), answers(&answers_json), &active);
        effects_json(&effects).to_string()
    }

    /// A semantic job (a `decide` effect with `"semantic": true`), taken from the session to be
    /// answered by [`SemanticAnswer::run`]. The job is answered on an object of its own because
    /// napi-rs keeps whatever a method borrowed, `this` included, until the task it returns
    /// settles: answered by a method of the session, every call Pi makes meanwhile (a tool call,
    /// a turn's end while the user steers) would fail to borrow the session.
    #[napi]
    pub fn semantic_job(&mut self, job: u32) -> SemanticAnswer {
        SemanticAnswer {
            task: Some(semantic::SemanticTask {
                job: self.semantic_jobs.remove(&u64::from(job)),
                started: std::time::Instant::now(),
                bound: semantic::wait_bound(),
            }),
        }
    }

    /// `/decisions test`: `{"text": …}` when it is answered at once, or `{"job": {…}}` (a
    /// `decide` effect) whose answers go to `testDecided`. Reads the files again first (and
    /// tells the session), so the test uses the settings as saved now.
    #[napi]
    pub fn decision_test(&mut self) -> String {
        self.settings_changed();
        match self.inner.decision_test() {
            Ok(text) => serde_json::json!({ "text": text }).to_string(),
            Err(job) => serde_json::json!({ "job": Effect::Decide(job).to_json() }).to_string(),
        }
    }

    /// The answers to a `/decisions test` job: the sentence to report.
    #[napi]
    pub fn test_decided(&mut self, job: u32, answers_json: String) -> String {
        self.inner
            .test_decided(u64::from(job), answers(&answers_json))
    }

    /// Which decision model answers jobs, and its deadline: `[provider, model, timeoutMs]` with
    /// `provider` `http`, `pi` (with `model` as `provider/model`), or `none` when jobs cannot
    /// arise, and `timeoutMs` (`decision.timeoutMs`, in decimal) the time a whole job may take,
    /// for HTTP and Pi models alike.
    #[napi]
    pub fn decision_model(&self) -> Vec<String> {
        let d = &self.inner.settings().decision;
        vec![
            d.provider.as_str().to_owned(),
            d.model.clone().unwrap_or_default(),
            d.timeout_ms.to_string(),
        ]
    }

    /// A decision job (its `requests`, JSON text) for the HTTP model of the settings, to be
    /// answered by [`HttpAnswer::run`] (on an object of its own, as [`PiSession::semantic_job`]
    /// says why). The API key is read from the variable `decision.apiKeyEnv` names, here and
    /// nowhere else; the job's deadline (`decision.timeoutMs`) runs from now.
    #[napi]
    pub fn http_job(&self, requests: Vec<String>) -> HttpAnswer {
        let decision = self.inner.settings().decision.clone();
        let scorer = HttpScorer::from_settings(&decision, |name| std::env::var(name).ok())
            .and_then(|built| built.ok());
        HttpAnswer {
            job: Some(HttpJob {
                scorer,
                requests,
                concurrency: decision.concurrency as usize,
                deadline: std::time::Instant::now()
                    + std::time::Duration::from_millis(decision.timeout_ms),
            }),
        }
    }

    /// `/decisions tools list` (`what` = `tools`) or `/decisions mcp list` (`mcp`): a local,
    /// names-only inventory with availability, no decision calls. Reads `getAllTools()` (JSON
    /// text) into the snapshot first when given.
    #[napi]
    pub fn list(&mut self, what: String, tools_json: Option<String>) -> String {
        if tools_json.is_some() && self.inner.filtering_on() {
            self.inner.refresh_inventory(inventory(tools_json));
        }
        let command = match what.as_str() {
            "mcp" => context_decisions::binding::ListCommand::Mcp,
            _ => context_decisions::binding::ListCommand::Tools,
        };
        context_decisions::views::list_text(&self.inner, command)
    }

    /// Whether `/decisions tools list`, `/decisions mcp list` and opening `/decisions` read
    /// `getAllTools()`: reads the settings files again and answers whether tool filtering is on.
    /// Off means off: while it is off the host does not read Pi's registry for them.
    #[napi]
    pub fn reads_registry(&mut self) -> bool {
        self.settings_changed();
        self.inner.filtering_on()
    }

    /// `/decisions export-inventory FILE`: writes `tools_json` (`getAllTools()` as JSON text) to
    /// `file` (absolute, a new file) and returns what to say; without a file, the usage.
    #[napi]
    pub fn export_tools(&self, tools_json: Option<String>, file: Option<String>) -> String {
        match (tools_json, file.filter(|f| !f.is_empty())) {
            // Off means off: the registry is not read, so nothing is written.
            (_, Some(file)) if !self.inner.filtering_on() => {
                context_decisions::binding::tools_export_failed(
                    &file,
                    context_decisions::binding::EXPORT_FILTERING_OFF,
                )
            }
            (Some(json), Some(file)) => {
                context_decisions::inventory::export_inventory(&json, std::path::Path::new(&file))
            }
            (None, Some(file)) => context_decisions::binding::tools_export_failed(
                &file,
                context_decisions::binding::EXPORT_REGISTRY_UNREADABLE,
            ),
            (_, None) => context_decisions::binding::EXPORT_USAGE.to_owned(),
        }
    }

    /// Pi's footer status (`ctx.ui.setStatus`): how many external tools are available now, or
    /// undefined while tool filtering is off (the status is then cleared).
    #[napi]
    pub fn footer(&self) -> Option<String> {
        context_decisions::views::footer_status(&self.inner)
    }

    /// [`PiSession::footer`] after reading the registry again (`getAllTools()` as JSON text,
    /// undefined when it threw or was not read), so the count follows tools registered or
    /// removed since the last round, as `/decisions tools list` does. Off means off: while
    /// filtering is off the host does not read the registry, and nothing is read here.
    #[napi]
    pub fn footer_with(&mut self, tools_json: Option<String>) -> Option<String> {
        if tools_json.is_some() && self.inner.filtering_on() {
            self.inner.refresh_inventory(inventory(tools_json));
        }
        context_decisions::views::footer_status(&self.inner)
    }

    /// The reply to `/decisions tools …` or `/decisions mcp …` with anything but `list`
    /// (`what` = `tools` or `mcp`), or to `/decisions` with anything else (`given`: the words,
    /// which it names as not a command).
    #[napi]
    pub fn usage(&self, what: String, given: Option<String>) -> String {
        if let Some(given) = given.filter(|g| !g.trim().is_empty()) {
            if what != "tools" && what != "mcp" {
                return context_decisions::binding::decisions_unknown(given.trim());
            }
        }
        match what.as_str() {
            "tools" => context_decisions::binding::list_command_usage(
                context_decisions::binding::ListCommand::Tools,
            ),
            "mcp" => context_decisions::binding::list_command_usage(
                context_decisions::binding::ListCommand::Mcp,
            ),
            _ => context_decisions::binding::decisions_usage(),
        }
    }
}

/// A semantic job taken from its session ([`PiSession::semantic_job`]).
#[napi]
pub struct SemanticAnswer {
    task: Option<semantic::SemanticTask>,
}

#[napi]
impl SemanticAnswer {
    /// Answers the job on libuv's thread pool: the prompt and the candidates' texts are embedded
    /// (or read from the vector cache) off Node's event loop, for at most the semantic bound
    /// (250 ms unless `PCD_SEMANTIC_WAIT_MS` says otherwise), counted from when the job was
    /// taken. Resolves to `{"scores": […]}` (fused) or `{"lexical": why}`, which goes to
    /// `decided` as the job's answers. A second run answers `{"lexical": ""}`.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn run(&mut self) -> AsyncTask<semantic::SemanticTask> {
        AsyncTask::new(self.task.take().unwrap_or(semantic::SemanticTask {
            job: None,
            started: std::time::Instant::now(),
            bound: semantic::wait_bound(),
        }))
    }
}

/// An HTTP decision job taken from its session ([`PiSession::http_job`]).
#[napi]
pub struct HttpAnswer {
    job: Option<HttpJob>,
}

#[napi]
impl HttpAnswer {
    /// Answers the job with the HTTP model on a worker thread; resolves to the answers JSON for
    /// [`PiSession::decided`]. A second run answers no request (`[]`).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn run(&mut self) -> AsyncTask<HttpJob> {
        AsyncTask::new(self.job.take().unwrap_or(HttpJob {
            scorer: None,
            requests: Vec::new(),
            concurrency: 1,
            deadline: std::time::Instant::now(),
        }))
    }
}

/// The lines the `/decisions` dialog draws when the terminal's height is unknown.
const DEFAULT_TAB_ROWS: u32 = 24;

#[napi]
impl PiSession {
    /// `/decisions` without a terminal: the Tools tab's settings and allowlists as text, and
    /// where to change them. Reads the files again first (and tells the session).
    #[napi]
    pub fn status(&mut self) -> String {
        self.settings_changed();
        let settings = self.inner.settings();
        let mut text = context_decisions::binding::decisions_status(
            &settings.tools,
            &settings.decision,
            &self.inner.allowlists().project,
            self.inner.last_round(),
        );
        if let Some((fused, detail)) = self.inner.last_scorer_shown() {
            text.push('\n');
            text.push_str(&context_decisions::binding::last_scorer_text(
                fused, &detail,
            ));
        }
        text
    }

    /// Opens the `/decisions` dialog on its Tools tab (Tab switches to Advanced): reads the files
    /// again (and tells the session), reads `getAllTools()` (JSON text) into the snapshot when
    /// given, and keeps the branch's latest user prompt (`getBranch()` as JSON text) for the
    /// editors' relevance ranking.
    #[napi]
    pub fn tab_open(&mut self, tools_json: Option<String>, entries_json: Option<String>) {
        if tools_json.is_some() && self.inner.filtering_on() {
            self.inner.refresh_inventory(inventory(tools_json));
        }
        let entries = match branch(entries_json) {
            BranchRead::Entries(entries) => Some(entries),
            BranchRead::Unreadable => None,
        };
        self.tab = Some(ToolsDialog::open(
            &mut self.inner,
            &self.agent_dir,
            &self.cwd,
            entries.as_deref(),
            &mut self.warnings,
        ));
    }

    /// Pi's inventory (`getAllTools()` as JSON text) for the open dialog, handed over once
    /// filtering was switched on inside it (at open it is read only while filtering is on), so
    /// its editors list the loaded tools. Ignored while filtering is off.
    #[napi]
    pub fn tab_tools(&mut self, tools_json: String) {
        if let Some(tab) = &mut self.tab {
            if self.inner.filtering_on() {
                self.inner.refresh_inventory(inventory(Some(tools_json)));
                tab.inventory_arrived(&self.inner);
            }
        }
    }

    /// The open dialog's lines for a terminal `width` columns wide and `rows` high (the tab
    /// uses all but a few rows, at least 8); empty when no tab is open.
    #[napi]
    pub fn tab_render(&self, width: u32, rows: Option<u32>) -> Vec<String> {
        let Some(tab) = &self.tab else {
            return Vec::new();
        };
        let height = rows
            .unwrap_or(DEFAULT_TAB_ROWS)
            .saturating_sub(6)
            .clamp(8, 40);
        tab.render(width.max(1) as usize, height as usize)
    }

    /// Raw terminal input for the open dialog (either tab). Returns JSON text: `{"close": bool,
    /// "job": decide effect | null}`; a job is a ranking to answer with the decision model (no working
    /// row), whose answers go to `tabRanked`. Settings and allowlists are written here, and the
    /// session re-reads them.
    #[napi]
    pub fn tab_input(&mut self, data: String) -> String {
        self.tab_step(|tab, session, warnings| tab.input(session, &data, warnings))
    }

    /// The open dialog as data for the extension to lay out with Pi's components (JSON text, see
    /// `context_decisions::tools_tab::view_json`); an open allowlist editor's lines are drawn to
    /// `width` cells and the terminal's `rows`. `null` when no dialog is open.
    #[napi]
    pub fn tab_view(&self, width: u32, rows: Option<u32>) -> String {
        let Some(tab) = &self.tab else {
            return "null".to_owned();
        };
        let height = rows
            .unwrap_or(DEFAULT_TAB_ROWS)
            .saturating_sub(6)
            .clamp(8, 40);
        context_decisions::tools_tab::view_json(&tab.view(width.max(1) as usize, height as usize))
            .to_string()
    }

    /// One action the extension matched with Pi's key bindings (`up`, `down`, `left`, `right`,
    /// `confirm`, `cancel`, `tab`, `backTab`, `space`, `save`, `backspace`). Returns what
    /// `tabInput` returns.
    #[napi]
    pub fn tab_action(&mut self, name: String) -> String {
        self.tab_step(|tab, session, warnings| tab.action(session, &name, warnings))
    }

    /// What the open prompt submitted: the threshold typed, or the model chosen from Pi's
    /// registry (`provider/model`). Written to the settings when valid; otherwise the prompt
    /// shows why, in one line.
    #[napi]
    pub fn tab_submit(&mut self, text: String) {
        if let Some(tab) = &mut self.tab {
            tab.submit(&mut self.inner, &text, &mut self.warnings);
        }
    }

    /// Closes the open prompt without writing.
    #[napi]
    pub fn tab_dismiss(&mut self) {
        if let Some(tab) = &mut self.tab {
            tab.dismiss();
        }
    }

    /// The answers to a ranking job (`[{"text": …} | {"error": …}]`): orders the editor it was
    /// started for, if it is still open.
    #[napi]
    pub fn tab_ranked(&mut self, job: u32, answers_json: String) {
        let answers = answers(&answers_json);
        match &mut self.tab {
            Some(tab) => tab.ranked(&mut self.inner, u64::from(job), answers),
            None => {
                self.inner.ranking_decided(u64::from(job), answers);
            }
        }
    }

    /// Closes the dialog (Pi closed it, or the session ends); nothing unsaved is written.
    #[napi]
    pub fn tab_close(&mut self) {
        self.tab = None;
    }
}
