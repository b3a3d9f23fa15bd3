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
//!
//! This file owns the state and what changes it outside a boundary: the start, settings saves,
//! branch moves, the inventory, the grants and commits. The rest, one responsibility a file:
//! `events` (what comes in and goes out), `boundaries` (what a boundary decides and records),
//! `jobs` (decision jobs and their answers, the decision test, ranking), `active` (reconciling
//! Pi's active set, restoring it, the notice), `ownership` (which tools this extension may take
//! out and put back, recomputed from the branch), `calls` (the verdict on each tool call and lazy
//! scores) and `rounds` (picker rounds to ledger rounds).

mod active;
mod boundaries;
mod calls;
mod embedding;
mod events;
mod jobs;
mod observer;
mod ownership;
mod rounds;

pub use embedding::{RoundScorer, SemanticJob, SCORER_FUSED, SCORER_LEXICAL};
pub use events::*;
pub use observer::{SessionObserver, SharedObserver};

use pcd_gate::{
    decide, BranchIndex, Call, GateContext, Grants, LazyScores, ProjectListCache, ProjectRead,
    Registry, ServerArg, Verdict,
};
use pcd_ledger::{fold, Basis, Boundary, BranchState, Round};
use pcd_model::{
    Allowlists, AuditFinding, Classifier, DecisionProvider, GroupKey, InventoryWarning,
    InventoryWarningCode, Mode, Scope, Settings, ToolInfo, ToolKind,
};
use pcd_picker::cadence::{self, Step};
use pcd_picker::candidates::{
    candidates, classified_candidates, Available, CandidateKey, CandidateSet,
};
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

/// The longest user text a decision is made from, in characters: of a longer prompt, its end
/// ([`bounded_text`]); the rest is detail that does not change which tools are relevant.
pub const MAX_TASK_TEXT_CHARS: usize = 4000;

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
    /// Whether the current task's own pick committed: set at each user prompt's pick, cleared
    /// by the next user prompt and by a refold. The `tool-round` top-up adds from cached scores
    /// only while it holds, so a task whose pick failed, was cancelled or was superseded never
    /// tops up from an earlier task's scores (fail closed).
    task_decided: bool,
    /// The outcome of the latest decision round of this session, for `/decisions`.
    last_round: Option<LastRound>,
    /// Whether a failed decision was already reported since the last prompt (once per prompt).
    failure_warned: bool,
    index: BranchIndex,
    /// Which tools of Pi's active set this extension withholds and may put back.
    ownership: ownership::Ownership,
    /// How many calls of each tool the gate let through in this session (a tool's count, in
    /// `/decisions tools list`, says the session used it). Names of registered tools only: an
    /// unknown tool's call is blocked and not counted.
    calls: HashMap<String, u32>,
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
    recorder: Option<SharedObserver>,
    embedding: embedding::Embedding,
    /// How many times the inventory changed: what [`rounds::LexicalIndex`] keys on.
    inventory_generation: u64,
    /// The embedded scorer's index over the candidates last scored.
    lexical: rounds::LexicalIndex,
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

/// The user text a decision is made from: its last [`MAX_TASK_TEXT_CHARS`] characters, since the
/// latest instruction is usually last (after a pasted log or stack trace), as a decision request
/// keeps it.
pub fn bounded_text(text: &str) -> String {
    let skip = text.chars().count().saturating_sub(MAX_TASK_TEXT_CHARS);
    text.chars().skip(skip).collect()
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
            task_decided: false,
            last_round: None,
            failure_warned: false,
            index: BranchIndex::default(),
            ownership: ownership::Ownership::default(),
            calls: HashMap::new(),
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
            embedding: embedding::Embedding::default(),
            inventory_generation: 0,
            lexical: rounds::LexicalIndex::default(),
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

    /// [`Session::start`], handing this session's events to `recorder` (an observer such as
    /// [`crate::record::Recorder`]) when given. It is called with data only and does its own
    /// writing.
    pub fn start_recording(
        event: StartEvent,
        recorder: Option<SharedObserver>,
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
    fn record(&self, f: impl FnOnce(&mut dyn SessionObserver)) -> bool {
        let Some(recorder) = &self.recorder else {
            return false;
        };
        let Ok(mut recorder) = recorder.lock() else {
            return false;
        };
        f(&mut *recorder);
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

    /// How many calls of `tool` the gate let through in this session.
    pub fn calls(&self, tool: &str) -> u32 {
        self.calls.get(tool).copied().unwrap_or(0)
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
        // Which task the branch's cached scores belong to is not known after a refold: no
        // top-up until the next prompt's pick commits.
        self.task_decided = false;
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
                // The task's prompt is the branch's last user message (Pi's session holds it):
                // after a resume or `/reload`, what is met first is scored against it.
                if let Some(last) = entries.iter().rev().find_map(user_text) {
                    self.task_text = Some(bounded_text(&last));
                }
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
        // The host reads the registry at every boundary and most calls; an unchanged one
        // changes nothing derived from it (the classifier and the server origins are the
        // session start's, and settings and branch changes rebuild what reads them).
        if self.registry.is_some() && self.inventory.as_deref() == Some(tools.as_slice()) {
            return;
        }
        self.inventory_generation += 1;
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
            self.total_candidates = classified_candidates(
                tools,
                (&self.classes, &self.group_scopes),
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

    /// How many candidates the inventory holds in the current mode (one per external tool, or
    /// one per group in `mcp` mode), as *Minimum candidates* counts them.
    pub fn candidate_count(&self) -> usize {
        self.total_candidates
    }

    /// Whether anything is scored: a decision model is selected, and the inventory has at least
    /// the minimum number of candidates.
    fn can_score(&self) -> bool {
        cadence::may_score(
            self.settings.decision.has_model(),
            self.total_candidates,
            self.settings
                .decision
                .minimum_candidates_for(self.settings.tools.mode) as usize,
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
