//! One [`Session`] per Pi session: Pi's events in, [`Effect`]s out, with no policy left to the
//! host.
//!
//! The host (the Node binding, or `simulate` in the command-line program) feeds events: the
//! session start, each boundary (a user prompt, a completed tool round, a branch move) with
//! Pi's tool inventory and active set, each `tool_call`, and every settings save. The session
//! answers with effects to carry out in order: set the active tools, append ledger entries, hand
//! the model the hidden availability notice, warn. State on the branch is always the ledger's
//! fold over the branch's entries; the session only adds rounds to it, never removes anything.
//!
//! What the host reads from disk (settings, the project allowlist, `mcp.json` origins) comes in
//! as data: see [`crate::load`] for the readers that go with it.

mod ownership;
mod rounds;

use pcd_gate::{
    decide, BranchIndex, Call, GateContext, Grants, LazyScores, ProjectListCache, ProjectRead,
    Registry, ServerArg, Verdict,
};
use pcd_ledger::{encode_round, fold, is_recordable_name, Basis, Boundary, BranchState, Round};
use pcd_model::{
    Allowlists, AuditFinding, Classifier, DecisionProvider, GroupKey, InventoryWarning,
    InventoryWarningCode, Mode, Scope, Settings, ToolInfo, ToolKind,
};
use pcd_picker::cadence::{self, Step};
use pcd_picker::candidates::{candidates, Available, CandidateKey, CandidateSet};
/// How a decision model outside the Session failed one request.
pub use pcd_picker::request::ModelError;
use pcd_picker::request::{build_requests, parse_answer, DecisionRequest, INSTRUCTIONS};
use pcd_picker::round::{NotCommitted, RoundFailure};
use pcd_ui_text::{
    availability_notice, blocked_reason, round_failed_warning, round_problem, AvailabilityNotice,
    LastRound, NoticeGroup, RoundProblem,
};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The longest user text a decision is made from, in characters; the rest of a long prompt is
/// detail that does not change which tools are relevant.
pub const MAX_TASK_TEXT_CHARS: usize = 4000;

/// Why Pi started (or restarted) the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartReason {
    /// A new process.
    Startup,
    /// `/reload`.
    Reload,
    /// `/new`.
    New,
    /// `/resume`.
    Resume,
    /// `/fork`.
    Fork,
}

/// The settings file as the host could read it.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingsRead {
    /// Absent (defaults) or read (bad fields already fell back to their defaults).
    Read(Settings),
    /// The file exists but could not be read: the branch keeps what it has, nothing is added.
    Unreadable,
}

/// The branch as the host could read it (`sessionManager.getBranch()`, root first).
#[derive(Debug, Clone, PartialEq)]
pub enum BranchRead {
    /// Every entry of the branch, root to leaf.
    Entries(Vec<Value>),
    /// The branch could not be read: only internal and allowlisted tools pass, nothing is
    /// written, granted or reconciled.
    Unreadable,
}

/// Pi's tool registry as the host could read it (`getAllTools()`).
#[derive(Debug, Clone, PartialEq)]
pub enum InventoryRead {
    /// The tools (rejected entries already dropped: they stay unknown, so they are blocked).
    Tools(Vec<ToolInfo>),
    /// `getAllTools()` threw: the last snapshot stays in force; with none, every call is blocked.
    Unreadable,
}

/// What starts a session.
#[derive(Debug, Clone, PartialEq)]
pub struct StartEvent {
    /// Why.
    pub reason: StartReason,
    /// A short token unique to this process and session, used in round ids (`[A-Za-z0-9]`).
    pub nonce: String,
    /// The global settings.
    pub settings: SettingsRead,
    /// The project allowlist file.
    pub project: ProjectRead,
    /// Built-in MCP server origins captured at session start from the `mcp.json` files, with the
    /// user's approval (raw server name and file scope); empty without approval.
    pub mcp_origins: Vec<(String, Scope)>,
    /// The branch.
    pub branch: BranchRead,
}

/// What kind of boundary this is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundaryKind {
    /// A run is starting (`before_agent_start`). `text` is the user's prompt, or queued steering
    /// or follow-up text; `None` for a run started by a custom message, which never supplies a
    /// prompt to pick from.
    Prompt {
        /// The user text.
        text: Option<String>,
    },
    /// A tool round completed.
    ToolRound,
    /// The session's own start, or a branch move (`/tree`), after [`Session::branch_moved`].
    Reconcile,
}

/// A boundary: the moment to decide, record and re-apply the restriction.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryEvent {
    /// Which boundary.
    pub kind: BoundaryKind,
    /// Pi's registry now.
    pub inventory: InventoryRead,
    /// Pi's active tool names now (`getActiveTools()`), in Pi's order.
    pub active: Vec<String>,
}

/// Something the host must do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// `pi.setActiveTools(names)`.
    SetActiveTools(Vec<String>),
    /// `pi.appendEntry("context-decisions-tools", data)`.
    AppendEntry(Value),
    /// The hidden names-only availability notice, as a `before_agent_start` message with
    /// `display: false`.
    Notice(String),
    /// A warning for the person (bounded, names and codes only).
    Warn(String),
    /// Ask the decision model (HTTP, or one of Pi's models) every request of this job, show the
    /// progress row (`Deciding Context`) until it settles, and hand the answers to
    /// [`Session::decided`].
    Decide(DecisionJob),
}

/// Decision requests the host answers with a model outside the Session. Each request is one
/// chat exchange: `instructions` as the system message, the request as the user message (a JSON
/// document of names, labels and bounded descriptions: data, never instructions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionJob {
    /// The job, for [`Session::decided`].
    pub id: u64,
    /// The system message.
    pub instructions: &'static str,
    /// The user messages, one per request, in order.
    pub requests: Vec<String>,
}

/// What an idle-time relevance ranking ([`Session::ranking`]) gives.
#[derive(Debug, Clone, PartialEq)]
pub enum Ranking {
    /// Scores at once (the embedded scorer), one per candidate that could be formed.
    Scores(Vec<(CandidateKey, f64)>),
    /// A job for a model outside the Session; its answers go to [`Session::ranking_decided`].
    Job(DecisionJob),
    /// No decision model is selected, or there is no prompt to rank against: keep the order.
    Unavailable,
}

/// What became of one request of a [`DecisionJob`].
pub type Answer = Result<String, ModelError>;

/// The verdict on one `tool_call`, with what to do first.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// `None` to let the call through; `Some(reason)` to block it with that reason.
    pub block: Option<String>,
    /// Effects to carry out (a lazily scored tool's round).
    pub effects: Vec<Effect>,
    /// The tool is not in the session's snapshot of the registry (it registered since the last
    /// boundary): read `getAllTools()` and ask again with [`Session::tool_call_with`]. Until then
    /// the verdict is a block (unknown tools are blocked).
    pub refresh_and_retry: bool,
    /// Nobody has scored the tool yet and the decision model answers outside the Session: obtain
    /// the job's answers, hand them to [`Session::decided`], and ask again. Parallel calls to the
    /// same tool get the same job.
    pub pending: Option<DecisionJob>,
}

/// A tool call as the gate needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallEvent {
    /// The tool's name.
    pub tool: String,
    /// A resource tool's `server` argument: `None` absent or null, `Some(Ok(text))` a string,
    /// `Some(Err(()))` any other JSON value.
    pub server: Option<Result<String, ()>>,
}

impl ToolCallEvent {
    /// The call as Pi reports it in `tool_call`: the tool's name and its `input`, of which only a
    /// resource tool's `server` argument is read (absent or null, a string, or anything else).
    pub fn from_input(tool: &str, input: Option<&Value>) -> ToolCallEvent {
        let server = match input.and_then(|i| i.get("server")) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(Ok(s.clone())),
            Some(_) => Some(Err(())),
        };
        ToolCallEvent {
            tool: tool.to_owned(),
            server,
        }
    }
}

/// One Pi session's state. See the module documentation.
#[derive(Debug)]
pub struct Session {
    nonce: String,
    settings: Settings,
    settings_readable: bool,
    settings_ever_read: bool,
    project: ProjectListCache,
    allowlists: Allowlists,
    classifier: Classifier,
    mcp_origins: Vec<(String, Scope)>,
    inventory: Option<Vec<ToolInfo>>,
    /// The inventory's classification and its groups' scopes, computed once per inventory.
    classes: Vec<pcd_model::Classified>,
    group_scopes: HashMap<GroupKey, pcd_model::GroupScope>,
    registry: Option<Registry>,
    grants: Grants,
    branch: Option<BranchState>,
    branch_has_messages: bool,
    first_prompt_text: Option<String>,
    task_text: Option<String>,
    /// The outcome of the latest decision round of this session, for `/decisions`.
    last_round: Option<LastRound>,
    /// Whether a failed decision was already reported since the last prompt (once per prompt).
    failure_warned: bool,
    index: BranchIndex,
    /// Which tools of Pi's active set this extension withholds and may put back.
    ownership: ownership::Ownership,
    generation: u64,
    lazy: LazyScores,
    rounds_made: u64,
    jobs: HashMap<u64, PendingJob>,
    tests: HashMap<u64, Vec<DecisionRequest>>,
    rankings: HashMap<u64, (Vec<DecisionRequest>, Vec<CandidateKey>)>,
    lazy_jobs: HashMap<String, u64>,
    next_job: u64,
    /// How many candidates the inventory has in the current mode, whatever is available: with
    /// fewer than the minimum, nothing is scored at any boundary.
    total_candidates: usize,
    filtering_seen_off: bool,
    findings: Vec<AuditFinding>,
    /// Tools whose names the ledger cannot record that a warning already named: each is
    /// reported once per session.
    unrecordable_reported: HashSet<String>,
    /// Where the events fed to this session are recorded, when recording is on.
    recorder: Option<crate::record::SharedRecorder>,
}

const PROBE_PROMPT: &str = "What will the weather be in Lisbon tomorrow?";

/// The two tools `/decisions test` asks about: the first is relevant to [`PROBE_PROMPT`].
fn probe_candidates() -> Vec<pcd_picker::candidates::Candidate> {
    [
        (
            "forecast_weather",
            "Get the weather forecast for a city for the next days.",
        ),
        ("render_chart", "Render a bar chart from CSV data."),
    ]
    .iter()
    .enumerate()
    .map(|(i, (name, description))| pcd_picker::candidates::Candidate::tool(name, description, i))
    .collect()
}

/// A round waiting for a decision model's answers.
#[derive(Debug)]
struct PendingJob {
    round_id: String,
    generation: u64,
    mode: Mode,
    boundary: Boundary,
    set: CandidateSet,
    requests: Vec<DecisionRequest>,
    first_prompt: Option<String>,
    lazy: Option<(String, pcd_gate::RequestId)>,
}

fn bounded_text(text: &str) -> String {
    text.chars().take(MAX_TASK_TEXT_CHARS).collect()
}

/// The text of a user message entry (`content` as a string or as text parts).
pub(crate) fn user_text(entry: &Value) -> Option<String> {
    let message = entry.get("message")?;
    if message.get("role").and_then(Value::as_str) != Some("user") {
        return None;
    }
    match message.get("content")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let text: Vec<&str> = parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!text.is_empty()).then(|| text.join("\n"))
        }
        _ => None,
    }
}

fn sanitize_nonce(nonce: &str) -> String {
    let clean: String = nonce
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(16)
        .collect();
    if clean.is_empty() {
        "s".to_owned()
    } else {
        clean
    }
}

impl Session {
    /// Starts a session: captures the settings, the project allowlist and the MCP origins (which
    /// stay until `/reload` or a new session), and folds the branch. The restriction is applied
    /// at the first boundary ([`Session::boundary`] with [`BoundaryKind::Reconcile`]).
    pub fn start(event: StartEvent) -> (Session, Vec<Effect>) {
        let mut session = Session {
            nonce: sanitize_nonce(&event.nonce),
            settings: Settings::default(),
            settings_readable: true,
            settings_ever_read: false,
            project: ProjectListCache::default(),
            allowlists: Allowlists::default(),
            classifier: Classifier::default(),
            mcp_origins: Vec::new(),
            inventory: None,
            classes: Vec::new(),
            group_scopes: HashMap::new(),
            registry: None,
            grants: Grants::default(),
            branch: None,
            branch_has_messages: false,
            first_prompt_text: None,
            task_text: None,
            last_round: None,
            failure_warned: false,
            index: BranchIndex::default(),
            ownership: ownership::Ownership::default(),
            generation: 0,
            lazy: LazyScores::default(),
            rounds_made: 0,
            jobs: HashMap::new(),
            tests: HashMap::new(),
            rankings: HashMap::new(),
            lazy_jobs: HashMap::new(),
            next_job: 0,
            total_candidates: 0,
            filtering_seen_off: false,
            findings: Vec::new(),
            unrecordable_reported: HashSet::new(),
            recorder: None,
        };
        session.classifier = Classifier::with_mcp_origins(
            event
                .mcp_origins
                .iter()
                .map(|(name, scope)| (GroupKey::for_mcp_server(name), *scope)),
        );
        session.mcp_origins = event.mcp_origins;
        session.apply_settings(event.settings, event.project);
        session.load_branch(event.branch);
        // Records that grant nothing (torn by a crash, altered, unreadable) are said once, when
        // the session starts on them; counts only.
        let effects = if session.findings.is_empty() {
            Vec::new()
        } else if session.branch_untrusted() {
            vec![Effect::Warn(pcd_ui_text::ledger_untrusted(
                session.findings.len(),
            ))]
        } else {
            vec![Effect::Warn(pcd_ui_text::ledger_findings(
                session.findings.len(),
            ))]
        };
        (session, effects)
    }

    /// [`Session::start`], recording this session's events to `recorder` (see [`crate::record`])
    /// when given. The recorder is called with data only; its sink does the writing.
    pub fn start_recording(
        event: StartEvent,
        recorder: Option<crate::record::SharedRecorder>,
    ) -> (Session, Vec<Effect>) {
        if let Some(r) = &recorder {
            if let Ok(mut r) = r.lock() {
                r.start(&event);
            }
        }
        let (mut session, effects) = Session::start(event);
        session.recorder = recorder;
        (session, effects)
    }

    /// Hands an event to the recorder, when recording; returns whether the recording just
    /// failed.
    fn record(&self, f: impl FnOnce(&mut crate::record::Recorder)) -> bool {
        let Some(recorder) = &self.recorder else {
            return false;
        };
        let Ok(mut recorder) = recorder.lock() else {
            return false;
        };
        f(&mut recorder);
        recorder.take_failure()
    }

    /// Whether tool filtering is on for this branch: the switch, or, while the settings cannot be
    /// read, whatever the last good settings said. When the switch was never read (the file is
    /// there but cannot be read), filtering counts as on and nothing is added: a branch with a
    /// ledger keeps enforcing it plus the allowlists; on one without, calls to external tools
    /// no allowlist names are blocked and Pi's active set is left as it is (see
    /// [`Session::switch_unknown`]).
    pub fn filtering_on(&self) -> bool {
        self.switch_unknown() || self.settings.tools.enabled
    }

    /// Whether the switch cannot be known: the global settings file exists but could not be
    /// read, and no read of it succeeded in this session.
    pub fn switch_unknown(&self) -> bool {
        !self.settings_readable && !self.settings_ever_read
    }

    /// Whether the branch holds any entry of this extension, valid or not: every ledger entry
    /// that does not fold leaves a finding, so a branch with rounds or findings had filtering
    /// active before, and was never "enabled mid-session".
    fn branch_has_ledger(&self) -> bool {
        !self.findings.is_empty() || self.branch.as_ref().is_some_and(|b| !b.rounds().is_empty())
    }

    /// Whether the branch's ledger does not fold (an edited, damaged or newer-version entry; an
    /// append interrupted at the end of a round is not such a finding): from then on nothing is
    /// granted automatically on it, and the gate enforces what folds plus the allowlists.
    pub fn branch_untrusted(&self) -> bool {
        self.findings.iter().any(|f| f.code.untrusts_branch())
    }

    /// Whether the host must read Pi's registry and active set for the next boundary. Off means
    /// off: while filtering is off and nothing the branch withheld needs restoring, the host
    /// calls neither `getAllTools` nor `getActiveTools` (a branch whose ledger withheld tools is
    /// read once after each fold, to put them back).
    pub fn needs_inventory(&self) -> bool {
        self.filtering_on() || self.ownership.needs_registry_while_off()
    }

    /// How many times this session changed Pi's active tool set.
    pub fn active_set_changes(&self) -> u64 {
        self.ownership.changes()
    }

    /// The current generation: bumped by every settings save and branch move, so that a round
    /// started before one commits nothing.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Audit findings of the last fold (torn or altered rounds grant nothing).
    pub fn findings(&self) -> &[AuditFinding] {
        &self.findings
    }

    /// The branch state, when the branch could be read.
    pub fn branch(&self) -> Option<&BranchState> {
        self.branch.as_ref()
    }

    /// A settings or allowlist save (or a read at a boundary): supersedes rounds in flight.
    pub fn settings_changed(&mut self, settings: SettingsRead, project: ProjectRead) {
        self.record(|r| r.settings_changed(&settings, &project));
        let before = (
            self.settings.clone(),
            self.allowlists.clone(),
            self.settings_readable,
        );
        self.apply_settings(settings, project);
        // The extension reads the files again at every prompt: only a real change supersedes
        // the rounds in flight.
        if before
            != (
                self.settings.clone(),
                self.allowlists.clone(),
                self.settings_readable,
            )
        {
            self.generation += 1;
        }
    }

    /// The host could not append a round's entries (Pi threw): the round must not grant
    /// anything, since availability is what the branch records. Refolds from `branch` (what was
    /// really written; a torn round grants nothing), supersedes rounds in flight, and returns the
    /// warning and the availability notice as it now stands (replacing the batch's). The host
    /// skips that batch's remaining entries and active-set change, and follows this with a
    /// [`BoundaryKind::Reconcile`] boundary.
    pub fn append_failed(&mut self, branch: BranchRead) -> Vec<Effect> {
        self.branch_moved(branch);
        let mut effects = vec![Effect::Warn(round_problem(RoundProblem::NotRecorded))];
        // The batch's notice spoke of what the refused round added: this one replaces it.
        if self.filtering_on() && self.inventory.is_some() && self.branch.is_some() {
            effects.push(Effect::Notice(self.notice()));
        }
        effects
    }

    /// A branch move (`/tree`, fork, resume): refolds from the branch's entries and supersedes
    /// rounds in flight. Follow it with a [`BoundaryKind::Reconcile`] boundary.
    pub fn branch_moved(&mut self, branch: BranchRead) {
        self.record(|r| r.branch_moved(&branch));
        self.generation += 1;
        self.load_branch(branch);
    }

    fn apply_settings(&mut self, settings: SettingsRead, project: ProjectRead) {
        let before = self.settings.tools.enabled;
        match settings {
            SettingsRead::Read(s) => {
                self.settings = s;
                self.settings_readable = true;
                self.settings_ever_read = true;
            }
            SettingsRead::Unreadable => self.settings_readable = false,
        }
        if before && !self.settings.tools.enabled {
            self.filtering_seen_off = true;
        }
        if !self.settings.tools.enabled {
            self.filtering_seen_off = true;
        }
        let project = self.project.update(project);
        self.allowlists = Allowlists {
            global: self.settings.global_allowlist(),
            project,
        };
        self.rebuild_grants();
    }

    fn load_branch(&mut self, branch: BranchRead) {
        self.lazy = LazyScores::default();
        match branch {
            BranchRead::Entries(entries) => {
                let (state, findings) = fold(&entries);
                self.branch_has_messages = entries
                    .iter()
                    .any(|e| e.get("type").and_then(Value::as_str) == Some("message"));
                self.first_prompt_text = state
                    .first_prompt()
                    .and_then(|fp| fp.entry_id.as_deref())
                    .and_then(|id| {
                        entries
                            .iter()
                            .find(|e| e.get("id").and_then(Value::as_str) == Some(id))
                    })
                    .and_then(user_text)
                    .map(|t| bounded_text(&t));
                self.findings = findings;
                self.ownership.folded(&state);
                self.branch = Some(state);
            }
            BranchRead::Unreadable => {
                self.branch = None;
            }
        }
        self.rebuild_index();
    }

    fn set_inventory(&mut self, tools: Vec<ToolInfo>) {
        self.registry = Some(Registry::build(
            &tools,
            &self.classifier,
            self.mcp_origins.iter().map(|(n, s)| (n.as_str(), *s)),
        ));
        let (classes, group_scopes) = self.classifier.classify_all(&tools);
        self.classes = classes;
        self.group_scopes = group_scopes;
        self.inventory = Some(tools);
        self.rebuild_grants();
    }

    fn rebuild_grants(&mut self) {
        if let Some(registry) = &self.registry {
            self.grants = Grants::compute(registry, &self.allowlists);
        }
        if let Some(tools) = &self.inventory {
            self.total_candidates = candidates(
                tools,
                &self.classifier,
                self.settings.tools.mode,
                &self.allowlists,
                &Available::default(),
            )
            .candidates
            .len();
        }
        self.rebuild_index();
    }

    fn rebuild_index(&mut self) {
        if let (Some(registry), Some(branch)) = (&self.registry, &self.branch) {
            self.index = BranchIndex::build(registry, branch);
        }
    }

    fn gate_context(&self) -> GateContext<'_> {
        GateContext {
            enabled: self.filtering_on(),
            mode: self.settings.tools.mode,
            registry: self.registry.as_ref(),
            grants: &self.grants,
            branch: self.branch.as_ref().map(|_| &self.index),
            scoring: self.can_score(),
            can_grant: self.settings_readable && self.branch.is_some() && !self.branch_untrusted(),
            lazy: &self.lazy,
        }
    }

    /// Whether anything is scored: a decision model is selected, and the inventory has at least
    /// the minimum number of candidates.
    fn can_score(&self) -> bool {
        cadence::may_score(
            self.settings.decision.has_model(),
            self.total_candidates,
            self.settings.decision.minimum_candidates as usize,
        )
    }

    fn next_round_id(&mut self) -> String {
        self.rounds_made += 1;
        let on_branch = self.branch.as_ref().map_or(0, |b| b.rounds().len());
        format!("{}-{}-{}", self.nonce, on_branch + 1, self.rounds_made)
    }

    /// Appends a round: its entries become effects, and the live branch state applies it as the
    /// fold will when the branch is read again. A tool name the ledger cannot record is left out
    /// of the round first (the candidates already leave it out; this keeps any other path, such
    /// as a baseline or an allowlist grant, from failing the whole round on it): it is granted
    /// nothing, which is fail-closed, and every other name is recorded as usual.
    /// A failed decision warns once per prompt, with its reason code; later failures of the
    /// same prompt (a lazy score, a tool round) are only kept for `/decisions`.
    fn warn_failure(&mut self, problem: RoundProblem, effects: &mut Vec<Effect>) {
        if !self.failure_warned {
            self.failure_warned = true;
            effects.push(Effect::Warn(round_failed_warning(problem)));
        }
    }

    /// The outcome of the latest decision round of this session, for `/decisions`.
    pub fn last_round(&self) -> Option<LastRound> {
        self.last_round
    }

    fn commit(&mut self, mut round: Round, effects: &mut Vec<Effect>) {
        let Some(branch) = self.branch.as_mut() else {
            return;
        };
        for list in [
            &mut round.tools,
            &mut round.allowlisted_tools,
            &mut round.considered,
        ] {
            list.retain(|name| is_recordable_name(name));
        }
        round.scores.retain(|(name, _)| is_recordable_name(name));
        match encode_round(&round) {
            Ok(parts) => {
                tracing::info!(
                    boundary = round.boundary.as_str(),
                    basis = round.basis.as_str(),
                    added = round.tools.len() + round.groups.len(),
                    allowlisted = round.allowlisted_tools.len() + round.allowlisted_groups.len(),
                    considered = round.considered.len(),
                    parts = parts.len(),
                    "round recorded"
                );
                if matches!(round.basis, Basis::Scored | Basis::FailOpen) {
                    self.last_round = Some(LastRound::Recorded {
                        added: round.tools.len() + round.groups.len(),
                        candidates: round.scores.len().max(round.considered.len()),
                    });
                }
                effects.extend(parts.into_iter().map(Effect::AppendEntry));
                branch.apply_round(&round, None, None);
                self.rebuild_index();
            }
            Err(_) => effects.push(Effect::Warn(round_problem(RoundProblem::Failed))),
        }
    }

    /// A boundary: decides (per the cadence), records, and re-applies the restriction to Pi's
    /// active set. Returns the effects to carry out, in order.
    pub fn boundary(&mut self, event: BoundaryEvent) -> Vec<Effect> {
        if self.recorder.is_none() {
            return self.boundary_inner(event);
        }
        let needed = self.needs_inventory();
        let copy = event.clone();
        let mut effects = self.boundary_inner(event);
        if self.record(|r| r.boundary(needed, &copy, &effects)) {
            effects.push(Effect::Warn(pcd_ui_text::recording_stopped()));
        }
        effects
    }

    fn boundary_inner(&mut self, event: BoundaryEvent) -> Vec<Effect> {
        let mut effects = Vec::new();
        self.lazy.clear_failures();
        if let InventoryRead::Tools(tools) = event.inventory {
            self.set_inventory(tools);
        }
        if let BoundaryKind::Prompt { text } = &event.kind {
            // A new prompt: its first failed decision is reported again.
            self.failure_warned = false;
            if let Some(text) = text {
                self.task_text = Some(bounded_text(text));
            }
        }
        if !self.filtering_on() {
            self.filtering_seen_off = true;
            self.restore_all(&event.active, &mut effects);
            self.note_conversation(&event.kind);
            return effects;
        }
        self.report_unrecordable(&mut effects);
        // An unreadable branch: no boundary writes, grants or reconciles anything.
        if self.branch.is_none() || self.inventory.is_none() {
            return effects;
        }
        // A branch whose ledger does not fold writes nothing: no baseline, no allowlist record,
        // no decision; it is only reconciled to what folds.
        if self.settings_readable && !self.branch_untrusted() {
            self.baseline(&mut effects);
            self.record_allowlist_grants(&mut effects);
            self.decide_round(&event.kind, &mut effects);
            if event.kind == BoundaryKind::ToolRound {
                self.late_arrivals_at_tool_round(&mut effects);
            }
        }
        self.filtering_seen_off = false;
        let new_run = matches!(event.kind, BoundaryKind::Prompt { .. });
        if self.switch_unknown() && !self.branch_has_ledger() {
            // The switch cannot be read on a branch that never filtered: calls are gated, but
            // Pi's active set is left as it is, so the model sees every tool it declares, and
            // switching filtering on later keeps them (as when it was off).
            self.note_conversation(&event.kind);
        } else {
            self.reconcile(&event.active, new_run, &mut effects);
        }
        if matches!(event.kind, BoundaryKind::Prompt { .. }) {
            effects.push(Effect::Notice(self.notice()));
        }
        // Filtering is on: the model sees only what the restriction leaves, so this prompt is no
        // reason for a baseline later (a first pick that failed is retried, not granted).
        effects
    }

    /// Names, once per session, the external tools whose names the ledger cannot record: they
    /// are left as Pi declared them (never decided, granted or withheld) and their calls are
    /// blocked unless allowlisted, while every other tool is decided as usual.
    fn report_unrecordable(&mut self, effects: &mut Vec<Effect>) {
        let Some(registry) = &self.registry else {
            return;
        };
        let tools: Vec<String> = self
            .inventory
            .iter()
            .flatten()
            .map(|t| &t.name)
            .filter(|name| registry.is_unrecordable(name))
            .filter(|name| !self.unrecordable_reported.contains(*name))
            .cloned()
            .collect();
        if tools.is_empty() {
            return;
        }
        tracing::warn!(
            code = InventoryWarningCode::UnrecordableNames.as_str(),
            tools = tools.len(),
            "tools left alone"
        );
        self.unrecordable_reported.extend(tools.iter().cloned());
        effects.push(Effect::Warn(pcd_ui_text::inventory_warning(
            &InventoryWarning {
                code: InventoryWarningCode::UnrecordableNames,
                tools,
            },
        )));
    }

    /// From a prompt or a tool round while filtering is off, the model has seen the branch's
    /// tools unfiltered: switching filtering on later keeps what it may have seen.
    fn note_conversation(&mut self, kind: &BoundaryKind) {
        if matches!(
            kind,
            BoundaryKind::Prompt { text: Some(_) } | BoundaryKind::ToolRound
        ) {
            self.branch_has_messages = true;
        }
    }

    /// Enabling mid-session keeps every tool already registered on the branch available: the
    /// model may have seen them. A branch with no messages yet has shown the model nothing, and
    /// records that as an empty baseline the first time filtering is on there: otherwise a
    /// branch whose first pick failed (or was never written) would later look like one where
    /// filtering was switched on mid-session, and a reload would grant it everything.
    fn baseline(&mut self, effects: &mut Vec<Effect>) {
        let (Some(branch), Some(tools)) = (&self.branch, &self.inventory) else {
            return;
        };
        let has_ledger = self.branch_has_ledger();
        let fresh_enable = !has_ledger || self.filtering_seen_off;
        if !fresh_enable {
            return;
        }
        let names: Vec<String> = if self.branch_has_messages {
            tools
                .iter()
                .zip(&self.classes)
                .filter(|(t, c)| !c.kind.is_internal() && !branch.is_tool_available(&t.name))
                .map(|(t, _)| t.name.clone())
                .collect()
        } else {
            Vec::new()
        };
        if names.is_empty() && has_ledger {
            return;
        }
        let mode = self.settings.tools.mode;
        let mut round = Round::new(
            self.next_round_id(),
            mode,
            Boundary::Prompt,
            Basis::Baseline,
        );
        round.tools = names;
        self.commit(round, effects);
    }

    /// Allowlisted tools and groups are recorded by name and canonical key, so removing the entry
    /// later never takes away availability the branch already had. So are the groups a pin
    /// promotes in `mcp` mode (a tool pinned by name, in a group whose members share one scope),
    /// and pinned MCP servers with no tool in the registry (resource-only or disconnected) in the
    /// scope of their file, or Global when their origin is unknown: all in the v1 field
    /// `allowlistGroups`, so ledgers written before and after fold alike.
    fn record_allowlist_grants(&mut self, effects: &mut Vec<Effect>) {
        let (Some(branch), Some(tools)) = (&self.branch, &self.inventory) else {
            return;
        };
        let (classes, scopes) = (&self.classes, &self.group_scopes);
        let promotes = self.settings.tools.mode == Mode::Mcp;
        let mut names = Vec::new();
        let mut groups: BTreeSet<GroupKey> = BTreeSet::new();
        let mut registered: HashSet<&GroupKey> = HashSet::new();
        for (tool, class) in tools.iter().zip(classes) {
            if class.kind.is_internal() {
                continue;
            }
            let list = self.allowlists.for_scope(class.scope);
            let pinned = list.has_tool(&tool.name);
            if pinned && !branch.is_tool_available(&tool.name) {
                names.push(tool.name.clone());
            }
            if let Some(g) = &class.group {
                registered.insert(&g.key);
                let single = scopes.get(&g.key).and_then(|s| s.single());
                let group_pinned =
                    single.is_some_and(|s| self.allowlists.for_scope(s).has_group(&g.key));
                let promoted = promotes && pinned && single.is_some();
                if (group_pinned || promoted) && !branch.is_group_available(&g.key) {
                    groups.insert(g.key.clone());
                }
            }
        }
        // Pinned MCP servers with no tool in the registry, admitted (as the gate admits them)
        // in the scope of their file, or Global when the origin is unknown.
        for (scope, list) in [
            (Scope::Global, &self.allowlists.global),
            (Scope::Project, &self.allowlists.project),
        ] {
            for key in &list.groups {
                if registered.contains(key) || key.mcp_server_part().is_none() {
                    continue;
                }
                let origin = self
                    .mcp_origins
                    .iter()
                    .find(|(name, _)| GroupKey::for_mcp_server(name) == *key)
                    .map_or(Scope::Global, |(_, s)| *s);
                if origin == scope && !branch.is_group_available(key) {
                    groups.insert(key.clone());
                }
            }
        }
        if names.is_empty() && groups.is_empty() {
            return;
        }
        let mut round = Round::new(
            self.next_round_id(),
            self.settings.tools.mode,
            Boundary::Allowlist,
            Basis::Allowlist,
        );
        round.allowlisted_tools = names;
        round.allowlisted_groups = groups.into_iter().collect();
        self.commit(round, effects);
    }

    fn candidate_set(&self) -> Option<CandidateSet> {
        let (branch, tools) = (self.branch.as_ref()?, self.inventory.as_ref()?);
        let available = Available {
            tools: branch.available_tools().map(str::to_owned).collect(),
            groups: branch
                .available_groups()
                .filter_map(GroupKey::from_canonical)
                .collect(),
        };
        Some(candidates(
            tools,
            &self.classifier,
            self.settings.tools.mode,
            &self.allowlists,
            &available,
        ))
    }

    fn decide_round(&mut self, kind: &BoundaryKind, effects: &mut Vec<Effect>) {
        // Custom-message runs and reconciles pick nothing (and need no candidates).
        let event = match kind {
            BoundaryKind::Prompt { text: Some(text) } => cadence::Event::UserPrompt(text),
            BoundaryKind::ToolRound => cadence::Event::ToolRoundCompleted,
            BoundaryKind::Prompt { text: None } | BoundaryKind::Reconcile => return,
        };
        let cadence = self.settings.tools.cadence;
        let Some(branch) = self.branch.as_ref() else {
            return;
        };
        let first_pick_done = branch.first_prompt().is_some();
        let first_prompt = self.first_prompt_text.clone();
        let step = cadence::step(cadence, event, first_pick_done, first_prompt.as_deref());
        if step == Step::Nothing {
            return;
        }
        let Some(mut set) = self.candidate_set() else {
            return;
        };
        let mode = self.settings.tools.mode;
        let decision = self.settings.decision.clone();
        let branch = self.branch.as_ref().expect("checked above");
        // What to score, against which text.
        let (boundary, text) = match step {
            Step::Pick {
                prompt,
                first: true,
            } => (Boundary::InitialPrompt, Some(bounded_text(prompt))),
            Step::Pick {
                prompt,
                first: false,
            } => (Boundary::Prompt, Some(bounded_text(prompt))),
            Step::LateArrivals { first_prompt } => {
                set.candidates.retain(|c| !considered(branch, mode, &c.key));
                (Boundary::Prompt, first_prompt.map(str::to_owned))
            }
            Step::TopUp => {
                let cap = rounds::cap(mode, decision.max_new_tools, decision.max_new_groups);
                let id = self.next_round_id();
                let branch = self.branch.as_ref().expect("checked above");
                if let Some(round) =
                    rounds::top_up_round(id, mode, branch, &set, decision.threshold, cap)
                {
                    self.commit(round, effects);
                }
                return;
            }
            Step::Nothing => return,
        };
        if set.candidates.is_empty() {
            return;
        }
        let id = self.next_round_id();
        if !self.can_score() {
            let mut round = rounds::unscored_round(id, mode, boundary, &set);
            if boundary == Boundary::InitialPrompt {
                rounds::mark_first_prompt(&mut round);
            }
            self.commit(round, effects);
            return;
        }
        let Some(text) = text else {
            // The first prompt cannot be found again: nothing is scored (fail closed); the tools
            // stay unconsidered and withheld, and are blocked when called.
            return;
        };
        let scores = match decision.provider {
            DecisionProvider::Embedded => {
                let tools = self.inventory.as_deref().unwrap_or_default();
                rounds::embedded_scores(tools, &set.candidates, &text)
            }
            _ => {
                // An HTTP or Pi model answers outside the Session: the host carries out the job
                // and hands the answers to `decided`.
                let first_prompt = (boundary == Boundary::InitialPrompt).then_some(text.clone());
                self.start_job(id, boundary, set, &text, first_prompt, None, effects);
                return;
            }
        };
        let cap = rounds::cap(mode, decision.max_new_tools, decision.max_new_groups);
        let generation = self.generation;
        let round = rounds::scored_round(
            id,
            mode,
            boundary,
            &set,
            Ok(scores.into_iter().map(Some).collect()),
            generation,
            self.generation,
            decision.threshold,
            cap,
            decision.fail_mode,
        );
        let Ok(mut round) = round else {
            effects.push(Effect::Warn(round_problem(RoundProblem::Superseded)));
            return;
        };
        if boundary == Boundary::InitialPrompt {
            rounds::mark_first_prompt(&mut round);
            self.first_prompt_text = Some(text);
        }
        self.commit(round, effects);
    }

    /// A completed tool round, in every cadence: candidates nobody has considered on the branch
    /// that Pi declares (a direct tool of an MCP server that connected during the run) are
    /// scored now, when first met, against the task's prompt (the first prompt in `initial`
    /// cadence), or recorded unscored (and so available) when nothing may be scored. Pi rejects a
    /// call to a tool missing from its active set before `tool_call`, so a lazy score could
    /// never rescue one that the reconcile takes out without an entry. Indirect tools stay for
    /// their first call. With no prompt to score against, nothing is scored (fail closed).
    fn late_arrivals_at_tool_round(&mut self, effects: &mut Vec<Effect>) {
        let (Some(mut set), Some(branch), Some(tools)) =
            (self.candidate_set(), &self.branch, &self.inventory)
        else {
            return;
        };
        let mode = self.settings.tools.mode;
        set.candidates.retain(|c| {
            !considered(branch, mode, &c.key)
                && !self.lazy_jobs.contains_key(c.key.as_str())
                && c.members
                    .iter()
                    .any(|&i| tools.get(i).is_some_and(|t| t.exposure.is_declared()))
        });
        if set.candidates.is_empty() {
            return;
        }
        let id = self.next_round_id();
        if !self.can_score() {
            let round = rounds::unscored_round(id, mode, Boundary::ToolRound, &set);
            self.commit(round, effects);
            return;
        }
        let Some(text) = cadence::lazy_prompt(
            self.settings.tools.cadence,
            self.first_prompt_text.as_deref(),
            self.task_text.as_deref(),
        )
        .map(str::to_owned) else {
            return;
        };
        let decision = self.settings.decision.clone();
        if decision.provider != DecisionProvider::Embedded {
            self.start_job(id, Boundary::ToolRound, set, &text, None, None, effects);
            return;
        }
        // Scored among every current candidate, so a score means what a prompt's would.
        let Some(all) = self.candidate_set() else {
            return;
        };
        let tools = self.inventory.as_deref().unwrap_or_default();
        let every = rounds::embedded_scores(tools, &all.candidates, &text);
        let scores = set
            .candidates
            .iter()
            .map(|c| {
                all.candidates
                    .iter()
                    .position(|a| a.key == c.key)
                    .map(|p| every[p])
            })
            .collect();
        let cap = rounds::cap(mode, decision.max_new_tools, decision.max_new_groups);
        let round = rounds::scored_round(
            id,
            mode,
            Boundary::ToolRound,
            &set,
            Ok(scores),
            self.generation,
            self.generation,
            decision.threshold,
            cap,
            decision.fail_mode,
        );
        if let Ok(round) = round {
            self.commit(round, effects);
        }
    }

    /// Hands a round to a decision model outside the Session: builds its bounded requests, keeps
    /// the round pending under the current generation, and asks the host for the answers.
    #[allow(clippy::too_many_arguments)]
    fn start_job(
        &mut self,
        round_id: String,
        boundary: Boundary,
        set: CandidateSet,
        text: &str,
        first_prompt: Option<String>,
        lazy: Option<(String, pcd_gate::RequestId)>,
        effects: &mut Vec<Effect>,
    ) -> DecisionJob {
        let requests = build_requests(
            text,
            &set.candidates,
            self.settings.decision.batch_size as usize,
        );
        self.next_job += 1;
        let job = DecisionJob {
            id: self.next_job,
            instructions: INSTRUCTIONS,
            requests: requests.iter().map(|r| r.body.clone()).collect(),
        };
        self.jobs.insert(
            job.id,
            PendingJob {
                round_id,
                generation: self.generation,
                mode: self.settings.tools.mode,
                boundary,
                set,
                requests,
                first_prompt,
                lazy,
            },
        );
        effects.push(Effect::Decide(job.clone()));
        job
    }

    /// The answers to a [`DecisionJob`], one per request in order: finishes its round. A round
    /// overtaken by a settings save, a disable, a mode change or a branch move commits nothing;
    /// a failed or cancelled one adds nothing (`failMode: open` adds the remaining candidates
    /// after a model failure, never after a configuration error or a cancellation). `active` is
    /// Pi's active set now: the restriction is re-applied, and for a prompt the notice is
    /// written again.
    pub fn decided(&mut self, job: u64, answers: Vec<Answer>, active: &[String]) -> Vec<Effect> {
        if self.recorder.is_none() {
            return self.decided_inner(job, answers, active);
        }
        let copy = answers.clone();
        let mut effects = self.decided_inner(job, answers, active);
        if self.record(|r| r.decided(job, &copy, active, &effects)) {
            effects.push(Effect::Warn(pcd_ui_text::recording_stopped()));
        }
        effects
    }

    fn decided_inner(&mut self, job: u64, answers: Vec<Answer>, active: &[String]) -> Vec<Effect> {
        let mut effects = Vec::new();
        let Some(pending) = self.jobs.remove(&job) else {
            return effects;
        };
        if let Some((candidate, _)) = &pending.lazy {
            self.lazy_jobs.remove(candidate);
        }
        let scores = collect_scores(&pending, answers);
        let decision = self.settings.decision.clone();
        let cap = rounds::cap(
            pending.mode,
            decision.max_new_tools,
            decision.max_new_groups,
        );
        let finished = if self.branch.is_some() && self.filtering_on() {
            rounds::scored_round(
                pending.round_id.clone(),
                pending.mode,
                pending.boundary,
                &pending.set,
                scores,
                pending.generation,
                self.generation,
                decision.threshold,
                cap,
                decision.fail_mode,
            )
        } else {
            Err(NotCommitted::Superseded {
                started: pending.generation,
                current: self.generation,
            })
        };
        match finished {
            Ok(mut round) => {
                if round.basis == pcd_ledger::Basis::FailOpen {
                    self.warn_failure(RoundProblem::FailedOpen, &mut effects);
                }
                if pending.boundary == Boundary::InitialPrompt {
                    rounds::mark_first_prompt(&mut round);
                    self.first_prompt_text = pending.first_prompt.clone();
                }
                self.commit(round, &mut effects);
                if let Some((_, id)) = pending.lazy {
                    self.lazy.committed(id);
                }
            }
            Err(not) => {
                let superseded = matches!(not, NotCommitted::Superseded { .. });
                let problem = match not {
                    NotCommitted::Superseded { .. } => RoundProblem::Superseded,
                    NotCommitted::Failed(RoundFailure::Cancelled) => RoundProblem::Cancelled,
                    NotCommitted::Failed(RoundFailure::Configuration) => {
                        RoundProblem::Configuration
                    }
                    NotCommitted::Failed(RoundFailure::Model) => RoundProblem::Failed,
                    NotCommitted::Failed(RoundFailure::TimedOut) => RoundProblem::TimedOut,
                };
                if superseded {
                    effects.push(Effect::Warn(round_problem(problem)));
                } else {
                    self.last_round = Some(LastRound::Problem(problem));
                    self.warn_failure(problem, &mut effects);
                }
                if let Some((_, id)) = pending.lazy {
                    self.lazy.failed(id);
                }
                // What overtook it (a save, a disable, a mode change, a branch move) is followed
                // by its own boundary, which reconciles from what the branch has then.
                if superseded {
                    return effects;
                }
            }
        }
        if self.inventory.is_some() && self.branch.is_some() && self.filtering_on() {
            let new_run = matches!(pending.boundary, Boundary::InitialPrompt | Boundary::Prompt);
            self.reconcile(active, new_run, &mut effects);
            if new_run {
                effects.push(Effect::Notice(self.notice()));
            }
        }
        effects
    }

    /// `/decisions test`: one small decision (a weather question, a forecast tool and a chart
    /// tool) asked of the selected model, and whether the settings in force (threshold and cap)
    /// would make the forecast tool available and withhold the chart tool. The embedded scorer
    /// (or no model) answers at once; an HTTP or Pi model gets a job whose answers go to
    /// [`Session::test_decided`]. Nothing is recorded or made available. The host reads the
    /// settings files again first ([`Session::settings_changed`]), so the test uses them as saved
    /// now.
    pub fn decision_test(&mut self) -> Result<String, DecisionJob> {
        let result = self.decision_test_inner();
        self.record(|r| r.decision_test(&result));
        result
    }

    fn decision_test_inner(&mut self) -> Result<String, DecisionJob> {
        let set = probe_candidates();
        match self.settings.decision.provider {
            DecisionProvider::None => Ok(pcd_ui_text::decision_test(
                pcd_ui_text::DecisionTest::NoModel,
            )),
            DecisionProvider::Embedded => {
                let scores = rounds::embedded_scores(&[], &set, PROBE_PROMPT);
                Ok(pcd_ui_text::decision_test(
                    pcd_ui_text::DecisionTest::Embedded(self.probe_scores(scores[0], scores[1])),
                ))
            }
            _ => {
                let requests = build_requests(PROBE_PROMPT, &set, 2);
                self.next_job += 1;
                let job = DecisionJob {
                    id: self.next_job,
                    instructions: INSTRUCTIONS,
                    requests: requests.iter().map(|r| r.body.clone()).collect(),
                };
                self.tests.insert(job.id, requests);
                Err(job)
            }
        }
    }

    /// What a round would make of the probe's two scores under the settings in force: the
    /// threshold, and the cap of the mode (each probe tool stands for a group in `mcp` mode).
    fn probe_scores(&self, relevant: f64, irrelevant: f64) -> pcd_ui_text::ProbeScores {
        let decision = &self.settings.decision;
        let cap = match self.settings.tools.mode {
            Mode::Tools => decision.max_new_tools,
            Mode::Mcp => decision.max_new_groups,
        };
        let outcomes = pcd_picker::round::select(
            &[Some(relevant), Some(irrelevant)],
            decision.threshold,
            cap as usize,
        );
        let added = |i: usize| matches!(outcomes[i], pcd_picker::round::Outcome::Added { .. });
        pcd_ui_text::ProbeScores {
            relevant,
            irrelevant,
            threshold: decision.threshold,
            cap: u64::from(cap),
            relevant_available: added(0),
            irrelevant_available: added(1),
        }
    }

    /// The answers to a `/decisions test` job: the sentence to report.
    pub fn test_decided(&mut self, job: u64, answers: Vec<Answer>) -> String {
        if self.recorder.is_none() {
            return self.test_decided_inner(job, answers);
        }
        let copy = answers.clone();
        let text = self.test_decided_inner(job, answers);
        self.record(|r| r.test_decided(job, &copy, &text));
        text
    }

    fn test_decided_inner(&mut self, job: u64, answers: Vec<Answer>) -> String {
        use pcd_ui_text::DecisionTest;
        let Some(requests) = self.tests.remove(&job) else {
            return pcd_ui_text::decision_test(DecisionTest::Cancelled);
        };
        let result = match answers.into_iter().next() {
            None | Some(Err(ModelError::Unavailable | ModelError::TimedOut)) => {
                DecisionTest::Unavailable
            }
            Some(Err(ModelError::Configuration)) => DecisionTest::Configuration,
            Some(Err(ModelError::Cancelled)) => DecisionTest::Cancelled,
            Some(Ok(text)) => match parse_answer(&requests[0], &text) {
                Ok(scores) if scores.len() == 2 => {
                    let score = |i| scores.iter().find(|(c, _)| *c == i).map_or(0.0, |s| s.1);
                    DecisionTest::Answered(self.probe_scores(score(0), score(1)))
                }
                _ => DecisionTest::Malformed,
            },
        };
        pcd_ui_text::decision_test(result)
    }

    /// The latest user text a boundary saw in this session (a prompt, or steering or follow-up
    /// text), bounded; `None` before the first.
    pub fn latest_task_text(&self) -> Option<&str> {
        self.task_text.as_deref()
    }

    /// An idle-time relevance ranking for the allowlist editors: scores `tools` (as in `tools`
    /// mode) and `groups` (as in `mcp` mode) of the inventory against `text` with the selected
    /// decision model, so the editor can show the most relevant first. It is a view only:
    /// nothing is recorded, made available or superseded, and no round's policy changes. Names
    /// that are not in the inventory (or are internal) are skipped.
    pub fn ranking(&mut self, text: &str, tools: &[String], groups: &[GroupKey]) -> Ranking {
        let provider = self.settings.decision.provider;
        let (Some(inventory), false) = (&self.inventory, provider == DecisionProvider::None) else {
            return Ranking::Unavailable;
        };
        if text.trim().is_empty() {
            return Ranking::Unavailable;
        }
        let text = bounded_text(text);
        let wanted_tools: HashSet<&str> = tools.iter().map(String::as_str).collect();
        let wanted_groups: HashSet<&GroupKey> = groups.iter().collect();
        let none = (Allowlists::default(), Available::default());
        let mut set: Vec<pcd_picker::candidates::Candidate> = Vec::new();
        if !wanted_tools.is_empty() {
            set.extend(
                candidates(inventory, &self.classifier, Mode::Tools, &none.0, &none.1)
                    .candidates
                    .into_iter()
                    .filter(|c| wanted_tools.contains(c.key.as_str())),
            );
        }
        if !wanted_groups.is_empty() {
            set.extend(
                candidates(inventory, &self.classifier, Mode::Mcp, &none.0, &none.1)
                    .candidates
                    .into_iter()
                    .filter(
                        |c| matches!(&c.key, CandidateKey::Group(k) if wanted_groups.contains(k)),
                    ),
            );
        }
        if set.is_empty() {
            return Ranking::Scores(Vec::new());
        }
        if provider == DecisionProvider::Embedded {
            let scores = rounds::embedded_scores(inventory, &set, &text);
            return Ranking::Scores(set.into_iter().map(|c| c.key).zip(scores).collect());
        }
        let requests = build_requests(&text, &set, self.settings.decision.batch_size as usize);
        self.next_job += 1;
        let job = DecisionJob {
            id: self.next_job,
            instructions: INSTRUCTIONS,
            requests: requests.iter().map(|r| r.body.clone()).collect(),
        };
        self.rankings
            .insert(job.id, (requests, set.into_iter().map(|c| c.key).collect()));
        Ranking::Job(job)
    }

    /// The answers to a ranking job: the scores (only valid ones, in `[0, 1]`), or `None` when
    /// the job is unknown or any request failed (the editor keeps its order).
    pub fn ranking_decided(
        &mut self,
        job: u64,
        answers: Vec<Answer>,
    ) -> Option<Vec<(CandidateKey, f64)>> {
        let (requests, keys) = self.rankings.remove(&job)?;
        if answers.len() != requests.len() {
            return None;
        }
        let mut out = Vec::new();
        for (request, answer) in requests.iter().zip(answers) {
            let text = answer.ok()?;
            if let Ok(valid) = parse_answer(request, &text) {
                out.extend(valid.into_iter().filter_map(|(i, score)| {
                    let ok = score.is_finite() && (0.0..=1.0).contains(&score);
                    Some((keys.get(i)?.clone(), score)).filter(|_| ok)
                }));
            }
        }
        Some(out)
    }

    /// Jobs handed out and not answered yet.
    pub fn pending_jobs(&self) -> usize {
        self.jobs.len()
    }

    /// Re-applies the restriction: takes out of Pi's active set every tool the gate would not
    /// allow, and puts back the tools this extension withholds that are allowed now (see
    /// [`ownership`]).
    fn reconcile(&mut self, active: &[String], new_run: bool, effects: &mut Vec<Effect>) {
        let mut ownership = std::mem::take(&mut self.ownership);
        let ctx = self.gate_context();
        let registry = self.registry.as_ref();
        // Internal tools (the resource tools, routed per call, included) stay declared, and so
        // do tools whose names the ledger cannot record: no entry could say why they were
        // withheld, so they are left as Pi declared them (their calls are blocked by the gate).
        let allowed = |name: &str| {
            registry.is_some_and(|r| r.is_internal(name) || r.is_unrecordable(name))
                || decide(&ctx, &Call::tool(name)) == Verdict::Allow
        };
        let tools = self.inventory.as_deref().unwrap_or_default();
        let next = ownership.reconcile(tools, &self.classes, active, new_run, allowed);
        self.ownership = ownership;
        if let Some(next) = next {
            effects.push(Effect::SetActiveTools(next));
        }
    }

    /// Filtering is off: every tool this extension withholds comes back, nothing else changes.
    fn restore_all(&mut self, active: &[String], effects: &mut Vec<Effect>) {
        if !self.ownership.needs_registry_while_off() {
            return;
        }
        let Some(tools) = self.inventory.as_deref() else {
            return;
        };
        if let Some(next) = self.ownership.release(tools, &self.classes, active) {
            effects.push(Effect::SetActiveTools(next));
        }
    }

    /// The hidden names-only notice: which indirect MCP servers, extensions and tools are
    /// available for this task.
    fn notice(&self) -> String {
        let mut notice = AvailabilityNotice::default();
        let Some(tools) = &self.inventory else {
            return availability_notice(&notice);
        };
        let ctx = self.gate_context();
        let mut groups_seen = HashSet::new();
        for (tool, class) in tools.iter().zip(&self.classes) {
            let indirect = tool.exposure.is_indirect();
            if !indirect || class.kind.is_internal() || class.kind == ToolKind::Unfiltered {
                continue;
            }
            if decide(&ctx, &Call::tool(&tool.name)) != Verdict::Allow {
                continue;
            }
            let branch = self.branch.as_ref();
            match &class.group {
                Some(g)
                    if branch.is_some_and(|b| b.is_group_available(&g.key))
                        || self.allowlists.for_scope(class.scope).has_group(&g.key) =>
                {
                    if groups_seen.insert(g.key.clone()) {
                        notice.groups.push(NoticeGroup {
                            key: g.key.clone(),
                            label: g.label.clone(),
                        });
                    }
                }
                _ => notice.tools.push(tool.name.clone()),
            }
        }
        availability_notice(&notice)
    }

    /// The verdict on one `tool_call` (top-level or nested in a codemode script). A tool nobody
    /// has scored yet is scored once, here, before the verdict.
    pub fn tool_call(&mut self, call: &ToolCallEvent) -> CallOutcome {
        self.tool_call_with(call, None)
    }

    /// [`Session::tool_call`] after refreshing the registry snapshot with `inventory` (when the
    /// first answer asked for it). Never asks for a refresh again.
    pub fn tool_call_with(
        &mut self,
        call: &ToolCallEvent,
        inventory: Option<InventoryRead>,
    ) -> CallOutcome {
        if self.recorder.is_none() {
            return self.tool_call_inner(call, inventory);
        }
        let copy = inventory.clone();
        let outcome = self.tool_call_inner(call, inventory);
        self.record(|r| r.tool_call(call, copy.as_ref(), &outcome));
        outcome
    }

    fn tool_call_inner(
        &mut self,
        call: &ToolCallEvent,
        inventory: Option<InventoryRead>,
    ) -> CallOutcome {
        let refreshed = inventory.is_some();
        if let InventoryRead::Tools(tools) = inventory.unwrap_or(InventoryRead::Unreadable) {
            self.set_inventory(tools);
        }
        let mut effects = Vec::new();
        let verdict = match self.verdict(call) {
            Verdict::Pending(candidate) => {
                tracing::debug!("scoring a tool on its first call");
                let key = match candidate {
                    pcd_gate::Candidate::Tool(name) => CandidateKey::Tool(name),
                    pcd_gate::Candidate::Group(key) => CandidateKey::Group(key),
                };
                if let Some(job) = self.lazy_score(&key, &mut effects) {
                    return CallOutcome {
                        block: None,
                        effects,
                        refresh_and_retry: false,
                        pending: Some(job),
                    };
                }
                match self.verdict(call) {
                    Verdict::Pending(candidate) => {
                        // Nothing could score it (no task text yet, or nothing committed): the
                        // candidate counts as failed until the next boundary, and the gate's
                        // block names the entry that would allow it.
                        if let Some((id, _)) = self.lazy.begin(candidate.as_str()) {
                            self.lazy.failed(id);
                        }
                        match self.verdict(call) {
                            Verdict::Pending(_) => Verdict::Block(pcd_model::BlockCode {
                                kind: pcd_model::BlockKind::ScoringFailed,
                                tool: call.tool.clone(),
                                server: None,
                                remedy: None,
                            }),
                            v => v,
                        }
                    }
                    v => v,
                }
            }
            v => v,
        };
        if let Verdict::Block(code) = &verdict {
            tracing::debug!(code = code.kind.as_str(), "call blocked");
        }
        let unknown = matches!(&verdict, Verdict::Block(code)
            if code.kind == pcd_model::BlockKind::UnknownTool);
        CallOutcome {
            block: match verdict {
                Verdict::Block(code) => Some(blocked_reason(&code)),
                _ => None,
            },
            effects,
            refresh_and_retry: unknown && !refreshed,
            pending: None,
        }
    }

    fn verdict(&self, call: &ToolCallEvent) -> Verdict {
        if !self.filtering_on() {
            return Verdict::Allow;
        }
        let server = match &call.server {
            None => ServerArg::Absent,
            Some(Ok(s)) => ServerArg::Str(s),
            Some(Err(())) => ServerArg::NotString,
        };
        decide(&self.gate_context(), &Call::resource(&call.tool, server))
    }

    /// Scores one candidate nobody has scored yet, against the task's text (the first prompt in
    /// `initial` cadence), and records the result as a first-call round.
    /// Returns the job when the decision model answers outside the Session.
    fn lazy_score(&mut self, key: &CandidateKey, effects: &mut Vec<Effect>) -> Option<DecisionJob> {
        let text = cadence::lazy_prompt(
            self.settings.tools.cadence,
            self.first_prompt_text.as_deref(),
            self.task_text.as_deref(),
        )
        .map(str::to_owned);
        let mut set = self.candidate_set()?;
        set.candidates.retain(|c| &c.key == key);
        if set.candidates.is_empty() {
            return None;
        }
        let decision = self.settings.decision.clone();
        let mode = self.settings.tools.mode;
        let text = text?;
        if decision.provider != DecisionProvider::Embedded {
            let candidate = key.as_str().to_owned();
            if let Some(&job) = self.lazy_jobs.get(&candidate) {
                let pending = &self.jobs[&job];
                return Some(DecisionJob {
                    id: job,
                    instructions: INSTRUCTIONS,
                    requests: pending.requests.iter().map(|r| r.body.clone()).collect(),
                });
            }
            let (request, _) = self.lazy.begin(&candidate)?;
            let id = self.next_round_id();
            let job = self.start_job(
                id,
                Boundary::FirstCall,
                set,
                &text,
                None,
                Some((candidate.clone(), request)),
                effects,
            );
            self.lazy_jobs.insert(candidate, job.id);
            // The job goes back in the call's outcome, not as an effect.
            effects.pop();
            return Some(job);
        }
        // Scored among the current candidates, so the score means what a boundary's would.
        let all = self.candidate_set().expect("read above");
        let position = all.candidates.iter().position(|c| &c.key == key);
        let tools = self.inventory.as_deref().unwrap_or_default();
        let scores = rounds::embedded_scores(tools, &all.candidates, &text);
        let score = position.map_or(0.0, |p| scores[p]);
        let cap = rounds::cap(mode, decision.max_new_tools, decision.max_new_groups);
        let id = self.next_round_id();
        let generation = self.generation;
        let round = rounds::scored_round(
            id,
            mode,
            Boundary::FirstCall,
            &set,
            Ok(vec![Some(score)]),
            generation,
            self.generation,
            decision.threshold,
            cap,
            decision.fail_mode,
        );
        let Ok(round) = round else {
            return None;
        };
        self.commit(round, effects);
        None
    }

    /// Replaces the registry snapshot without a boundary: no round, no entry, no active-set
    /// change (a read-only view, or a refresh before a verdict).
    pub fn refresh_inventory(&mut self, inventory: InventoryRead) {
        self.record(|r| r.refresh_inventory(&inventory));
        if let InventoryRead::Tools(tools) = inventory {
            self.set_inventory(tools);
        }
    }

    /// The tools as `/decisions tools list` shows them (for the views in [`crate::views`]).
    pub fn inventory(&self) -> Option<&[ToolInfo]> {
        self.inventory.as_deref()
    }

    /// Whether the gate would let `tool` through now (no server argument), for the views.
    pub fn is_allowed(&self, tool: &str) -> bool {
        matches!(
            self.verdict(&ToolCallEvent {
                tool: tool.to_owned(),
                server: None
            }),
            Verdict::Allow
        )
    }

    /// The allowlists in force.
    pub fn allowlists(&self) -> &Allowlists {
        &self.allowlists
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The classification of each tool of [`Session::inventory`], in the same order.
    pub fn classes(&self) -> &[pcd_model::Classified] {
        &self.classes
    }

    /// The classifier (with the captured MCP origins).
    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }
}

/// One score per candidate from the answers; any failed request fails the round (a malformed
/// answer only drops its own candidates).
fn collect_scores(
    pending: &PendingJob,
    answers: Vec<Answer>,
) -> Result<Vec<Option<f64>>, RoundFailure> {
    if answers.len() != pending.requests.len() {
        return Err(RoundFailure::Model);
    }
    let mut scores = vec![None; pending.set.candidates.len()];
    for (request, answer) in pending.requests.iter().zip(answers) {
        let text = answer.map_err(|e| match e {
            ModelError::Cancelled => RoundFailure::Cancelled,
            ModelError::Configuration => RoundFailure::Configuration,
            ModelError::Unavailable => RoundFailure::Model,
            ModelError::TimedOut => RoundFailure::TimedOut,
        })?;
        if let Ok(valid) = parse_answer(request, &text) {
            for (index, score) in valid {
                if let Some(slot) = scores.get_mut(index) {
                    *slot = Some(score);
                }
            }
        }
    }
    Ok(scores)
}

fn considered(branch: &BranchState, mode: Mode, key: &CandidateKey) -> bool {
    match (mode, key) {
        (_, CandidateKey::Tool(name)) => branch.was_tool_considered(name),
        (_, CandidateKey::Group(key)) => branch.was_group_considered(key),
    }
}

impl Effect {
    /// The effect as the JSON the Pi extension carries out:
    /// `{"type":"setActiveTools","names":[…]}`, `{"type":"appendEntry","customType":…,"data":…}`,
    /// `{"type":"notice","text":…}`, `{"type":"warn","text":…}`,
    /// `{"type":"decide","job":…,"instructions":…,"requests":[…]}`.
    pub fn to_json(&self) -> Value {
        match self {
            Effect::SetActiveTools(names) => {
                serde_json::json!({"type": "setActiveTools", "names": names})
            }
            Effect::AppendEntry(data) => serde_json::json!({
                "type": "appendEntry",
                "customType": pcd_ledger::CUSTOM_TYPE,
                "data": data,
            }),
            Effect::Notice(text) => serde_json::json!({"type": "notice", "text": text}),
            Effect::Warn(text) => serde_json::json!({"type": "warn", "text": text}),
            Effect::Decide(job) => serde_json::json!({
                "type": "decide",
                "job": job.id,
                "instructions": job.instructions,
                "requests": job.requests,
            }),
        }
    }
}

/// Effects as one JSON array.
pub fn effects_json(effects: &[Effect]) -> Value {
    Value::Array(effects.iter().map(Effect::to_json).collect())
}
