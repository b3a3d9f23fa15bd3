//! Structure-aware: `Session` event sequences, driven the way the Pi binding drives them,
//! against an oracle.
//!
//! The input (`arbitrary`) is a start (settings, project allowlist, nonce) and up to 48 events:
//! prompts, completed tool rounds and reconciles, each with an inventory (a subset of
//! `examples/inventory.json` plus a tool whose name the ledger cannot record, or unreadable);
//! tool calls (resource calls with a `server` argument among them), answered on the spot when
//! the decision model outside the Session is asked; settings and project allowlist saves
//! (switch on or off, mode, cadence, provider, threshold, caps, minimum, fail mode, allowlists
//! in both scopes, unreadable files); answers to decision jobs (scores, failures, garbage);
//! branch moves (`/tree` to an earlier entry, or an unreadable branch); restarts (`/reload`);
//! entries Pi refuses to append; and hand edits of a ledger entry followed by a restart. The
//! host appends every entry the Session asks for to its branch, as Pi would.
//!
//! After every event:
//! - the Session's branch state grants exactly what the fold of the host's branch grants;
//! - availability only grows on a branch between branch moves, restarts, refusals and edits;
//! - the gate never allows an external tool that is neither available on the branch nor
//!   allowlisted in its scope (the only other ways through: a tool nobody has considered while
//!   nothing can be scored and something may be granted, and in `mcp` mode a tool with no
//!   group); a resource call only for a server available or allowlisted;
//! - internal tools by provenance always pass; an available tool always passes;
//! - off means off (no entry), and a branch whose ledger does not fold gets no entry.
#![no_main]

use arbitrary::Arbitrary;
use context_decisions::session::{
    Answer, BoundaryEvent, BoundaryKind, BranchRead, DecisionJob, Effect, InventoryRead,
    ModelError, Session, SettingsRead, StartEvent, StartReason, ToolCallEvent,
};
use libfuzzer_sys::fuzz_target;
use pcd_gate::ProjectRead;
use pcd_ledger::{fold, is_recordable_name, CUSTOM_TYPE};
use pcd_model::{
    parse_inventory, parse_tool_entry, Allowlists, Cadence, Classifier, DecisionProvider, FailMode,
    GroupKey, GroupScope, Mode, ScopedAllowlist, Settings, ToolInfo, ToolKind,
};
use pcd_picker::candidates::{candidates, Available};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::OnceLock;

const MAX_OPS: usize = 48;

const PROMPTS: [&str; 8] = [
    "Search the incidents of the checkout service and page the on-call engineer",
    "Render a bar chart of this CSV",
    "Query the development database schema and run a read-only SQL query",
    "Translate this paragraph into German",
    "What is the weather forecast in Lisbon tomorrow?",
    "deploy the preview and check the deploy status",
    "add a note and a to-do item",
    "",
];

const SERVERS: [&str; 6] = [
    "dev-radius",
    " docs ",
    "dev_radius",
    "ghost",
    "mcp__docs",
    "",
];

/// The universe: the example inventory, a tool the ledger cannot record, and an extension with
/// tools in both scopes (a mixed group).
fn universe() -> &'static [ToolInfo] {
    static TOOLS: OnceLock<Vec<ToolInfo>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let example: Value =
            serde_json::from_str(include_str!("../../../../examples/inventory.json")).unwrap();
        let mut items = example.as_array().unwrap().clone();
        items.push(json!({"name": "bad tool", "description": "A tool with a space in its name.",
            "sourceInfo": {"path": "/a/extensions/odd.ts", "source": "auto", "scope": "user", "origin": "top-level"}}));
        items.push(json!({"name": "mixed_user", "description": "Half of a mixed extension.",
            "sourceInfo": {"path": "/a/extensions/mixed.ts", "source": "auto", "scope": "user", "origin": "top-level"}}));
        items.push(json!({"name": "mixed_project", "description": "The other half.",
            "sourceInfo": {"path": "/w/.pi/extensions/mixed.ts", "source": "auto", "scope": "project", "origin": "top-level"}}));
        let inventory = parse_inventory(&Value::Array(items).to_string()).unwrap();
        assert!(inventory.tools.len() <= 64);
        inventory.tools
    })
}

fn group_keys() -> &'static [GroupKey] {
    static KEYS: OnceLock<Vec<GroupKey>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let (classes, _) = Classifier::default().classify_all(universe());
        let mut keys: Vec<GroupKey> = classes
            .into_iter()
            .filter_map(|c| c.group.map(|g| g.key))
            .collect();
        keys.sort();
        keys.dedup();
        keys.push(GroupKey::for_mcp_server("ghost"));
        keys
    })
}

#[derive(Debug, Arbitrary)]
struct Input {
    start: SettingsChoice,
    project: ProjectChoice,
    ops: Vec<Op>,
}

#[derive(Debug, Clone, Arbitrary)]
struct SettingsChoice {
    unreadable: bool,
    enabled: bool,
    mcp: bool,
    cadence: u8,
    provider: u8,
    threshold: u8,
    max_new: u8,
    minimum: u8,
    fail_open: bool,
    batch: u8,
    tools: u64,
    groups: u16,
}

#[derive(Debug, Clone, Arbitrary)]
struct ProjectChoice {
    kind: u8,
    tools: u64,
    groups: u16,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
struct InventoryChoice {
    /// Which tools of the universe are registered (built-in ones always are).
    registered: u64,
    unreadable: bool,
}

#[derive(Debug, Clone, Arbitrary)]
enum AnswerChoice {
    Scores(Vec<u16>),
    Unavailable,
    Cancelled,
    Configuration,
    Garbage,
    WrongCount,
}

#[derive(Debug, Clone, Arbitrary)]
enum Op {
    Prompt {
        text: u8,
        custom_message: bool,
        inventory: InventoryChoice,
        refuse: Option<u8>,
    },
    ToolRound {
        inventory: InventoryChoice,
        refuse: Option<u8>,
    },
    Reconcile {
        inventory: InventoryChoice,
    },
    Call {
        tool: u8,
        server: u8,
        answer: AnswerChoice,
        refuse: Option<u8>,
    },
    Answer {
        job: u8,
        answer: AnswerChoice,
        refuse: Option<u8>,
    },
    Save {
        settings: SettingsChoice,
        project: ProjectChoice,
    },
    Move {
        back: u8,
        unreadable: bool,
    },
    Restart {
        nonce: bool,
    },
    Tamper {
        entry: u8,
        how: u8,
    },
}

fn settings_of(c: &SettingsChoice) -> Settings {
    let mut s = Settings::default();
    s.tools.enabled = c.enabled;
    s.tools.mode = if c.mcp { Mode::Mcp } else { Mode::Tools };
    s.tools.cadence =
        [Cadence::Initial, Cadence::Prompt, Cadence::ToolRound][c.cadence as usize % 3];
    match c.provider % 4 {
        0 => s.decision.provider = DecisionProvider::None,
        1 => s.decision.provider = DecisionProvider::Embedded,
        2 => {
            s.decision.provider = DecisionProvider::Pi;
            s.decision.model = Some("faux/decider".into());
        }
        // An HTTP model without an endpoint: no usable model.
        _ => s.decision.provider = DecisionProvider::Http,
    }
    s.decision.threshold = [0.0, 0.3, 0.625, 0.9, 1.0][c.threshold as usize % 5];
    let cap = [0, 1, 2, 6][c.max_new as usize % 4];
    s.decision.max_new_tools = cap;
    s.decision.max_new_groups = cap;
    s.decision.minimum_candidates = [None, Some(0), Some(1), Some(3), Some(10), Some(100_000)]
        [c.minimum as usize % 6];
    s.decision.fail_mode = if c.fail_open {
        FailMode::Open
    } else {
        FailMode::Closed
    };
    s.decision.batch_size = [1, 2, 50][c.batch as usize % 3];
    s.tools.always_allowed_tools = tool_entries(c.tools);
    s.tools.always_allowed_groups = group_entries(c.groups);
    s
}

fn tool_entries(mask: u64) -> Vec<pcd_model::ToolName> {
    universe()
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .filter_map(|(_, t)| parse_tool_entry(&t.name).ok())
        .collect()
}

fn group_entries(mask: u16) -> Vec<GroupKey> {
    group_keys()
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, k)| k.clone())
        .collect()
}

fn project_of(c: &ProjectChoice) -> ProjectRead {
    match c.kind % 4 {
        0 => ProjectRead::Absent,
        1 => ProjectRead::Unreadable,
        _ => ProjectRead::Read(ScopedAllowlist {
            tools: tool_entries(c.tools),
            groups: group_entries(c.groups),
        }),
    }
}

/// What the oracle tracks of the files, as the Session should have them.
#[derive(Debug, Clone)]
struct Files {
    /// The last readable settings (the defaults before any).
    settings: Settings,
    settings_readable: bool,
    settings_ever_read: bool,
    /// The last good project allowlist.
    project: ScopedAllowlist,
}

impl Default for Files {
    fn default() -> Self {
        Files {
            settings: Settings::default(),
            settings_readable: true,
            settings_ever_read: false,
            project: ScopedAllowlist::default(),
        }
    }
}

impl Files {
    fn read(&mut self, settings: &SettingsRead, project: &ProjectRead) {
        match settings {
            SettingsRead::Read(s) => {
                self.settings = s.clone();
                self.settings_readable = true;
                self.settings_ever_read = true;
            }
            SettingsRead::Unreadable => self.settings_readable = false,
        }
        match project {
            ProjectRead::Absent => self.project = ScopedAllowlist::default(),
            ProjectRead::Read(list) => self.project = list.clone(),
            ProjectRead::Unreadable => {}
        }
    }

    fn allowlists(&self) -> Allowlists {
        Allowlists {
            global: self.settings.global_allowlist(),
            project: self.project.clone(),
        }
    }
}

struct Host {
    session: Session,
    branch: Vec<Value>,
    next_id: u32,
    registered: Vec<ToolInfo>,
    active: Vec<String>,
    jobs: Vec<DecisionJob>,
    files: Files,
    settings_read: SettingsRead,
    project_read: ProjectRead,
    /// Availability at the last check, reset by branch moves, restarts, refusals and edits.
    before: Option<(HashSet<String>, HashSet<String>)>,
    nonce: u32,
}

fn answer_texts(job: &DecisionJob, choice: &AnswerChoice) -> Vec<Answer> {
    match choice {
        AnswerChoice::Unavailable => job
            .requests
            .iter()
            .map(|_| Err(ModelError::Unavailable))
            .collect(),
        AnswerChoice::Cancelled => job
            .requests
            .iter()
            .map(|_| Err(ModelError::Cancelled))
            .collect(),
        AnswerChoice::Configuration => job
            .requests
            .iter()
            .map(|_| Err(ModelError::Configuration))
            .collect(),
        AnswerChoice::Garbage => job
            .requests
            .iter()
            .map(|_| Ok("{\"scores\": 7}".to_owned()))
            .collect(),
        AnswerChoice::WrongCount => vec![Ok("{\"scores\": []}".to_owned()); job.requests.len() + 1],
        AnswerChoice::Scores(scores) => {
            let mut k = 0;
            job.requests
                .iter()
                .map(|r| {
                    let body: Value = serde_json::from_str(r).expect("a request is JSON");
                    let items: Vec<Value> = body["candidates"]
                        .as_array()
                        .expect("a request lists candidates")
                        .iter()
                        .map(|c| {
                            let s = scores.get(k).copied().unwrap_or(0);
                            k += 1;
                            // Out of range now and then: the answer is checked strictly.
                            json!({"id": c["id"], "score": f64::from(s % 1100) / 1000.0})
                        })
                        .collect();
                    Ok(json!({ "scores": items }).to_string())
                })
                .collect()
        }
    }
}

impl Host {
    fn entry(&mut self, mut value: Value) {
        self.next_id += 1;
        value["id"] = json!(format!("{:08x}", self.next_id));
        value["parentId"] = self.branch.last().map_or(Value::Null, |e| e["id"].clone());
        value["timestamp"] = json!("2026-01-01T00:00:00.000Z");
        self.branch.push(value);
    }

    /// Carries out effects as the extension does; returns whether Pi refused an entry.
    fn apply(&mut self, effects: Vec<Effect>, refuse: Option<u8>) -> bool {
        let appends = effects
            .iter()
            .filter(|e| matches!(e, Effect::AppendEntry(_)))
            .count();
        let refuse_at = refuse
            .map(|k| k as usize % (appends + 1))
            .filter(|k| *k < appends);
        let mut failed = false;
        let mut n = 0;
        for effect in effects {
            match effect {
                Effect::SetActiveTools(names) => {
                    if !failed {
                        self.active = names;
                    }
                }
                Effect::AppendEntry(data) => {
                    if failed {
                        continue;
                    }
                    if refuse_at == Some(n) {
                        failed = true;
                    } else {
                        self.entry(
                            json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data}),
                        );
                    }
                    n += 1;
                }
                Effect::RecordScorer(data) => {
                    if !failed {
                        self.entry(json!({"type": "custom", "customType": pcd_ledger::SCORER_CUSTOM_TYPE, "data": data}));
                    }
                }
                Effect::Decide(job) => self.jobs.push(job),
                // No semantic job: the fuzzed sessions never turn the semantic signal on.
                Effect::Notice(_) | Effect::Warn(_) | Effect::Embed(_) => {}
            }
        }
        if failed {
            let effects = self
                .session
                .append_failed(BranchRead::Entries(self.branch.clone()));
            assert!(
                !effects
                    .iter()
                    .any(|e| matches!(e, Effect::AppendEntry(_) | Effect::Decide(_))),
                "a refusal appends nothing: {effects:?}"
            );
            self.apply(effects, None);
            self.before = None;
            self.boundary(BoundaryKind::Reconcile, None, None);
        }
        failed
    }

    fn inventory_read(&mut self, choice: Option<InventoryChoice>) -> InventoryRead {
        if !self.session.needs_inventory() {
            return InventoryRead::Unreadable;
        }
        if let Some(choice) = choice {
            if choice.unreadable {
                return InventoryRead::Unreadable;
            }
            let classifier = Classifier::default();
            let next: Vec<ToolInfo> = universe()
                .iter()
                .enumerate()
                .filter(|(i, t)| {
                    choice.registered & (1 << i) != 0 || classifier.classify(t).kind.is_internal()
                })
                .map(|(_, t)| t.clone())
                .collect();
            // Pi activates what registers (declared tools) and drops what leaves.
            let names: HashSet<&str> = next.iter().map(|t| t.name.as_str()).collect();
            let old: HashSet<String> = self.registered.iter().map(|t| t.name.clone()).collect();
            self.active.retain(|n| names.contains(n.as_str()));
            for t in &next {
                if !old.contains(&t.name)
                    && t.exposure.is_declared()
                    && !self.active.contains(&t.name)
                {
                    self.active.push(t.name.clone());
                }
            }
            self.registered = next;
        }
        InventoryRead::Tools(self.registered.clone())
    }

    fn boundary(
        &mut self,
        kind: BoundaryKind,
        inventory: Option<InventoryChoice>,
        refuse: Option<u8>,
    ) {
        let inventory = self.inventory_read(inventory);
        let prompt = match &kind {
            BoundaryKind::Prompt { text } => Some(text.clone()),
            _ => None,
        };
        let tool_round = kind == BoundaryKind::ToolRound;
        let effects = self.session.boundary(BoundaryEvent {
            kind,
            inventory,
            active: self.active.clone(),
        });
        self.checked_effects(&effects);
        self.apply(effects, refuse);
        // What Pi appends after the boundary: the user's message, the assistant's turn.
        match prompt {
            Some(Some(text)) => self.entry(json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}})),
            Some(None) => self.entry(json!({"type": "custom_message", "customType": "other", "content": "hello"})),
            None => {}
        }
        if tool_round {
            self.entry(json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "ran a tool"}]}}));
        }
    }

    /// Off means off, and an untrusted branch gets nothing.
    fn checked_effects(&self, effects: &[Effect]) {
        let appends = effects
            .iter()
            .any(|e| matches!(e, Effect::AppendEntry(_) | Effect::RecordScorer(_)));
        if appends {
            assert!(
                self.session.filtering_on(),
                "an entry while filtering is off: {effects:?}"
            );
            assert!(
                !self.session.branch_untrusted(),
                "an entry on an untrusted branch: {effects:?}"
            );
        }
    }

    fn restart(&mut self, nonce: bool) {
        if nonce {
            self.nonce += 1;
        }
        let (session, effects) = Session::start(StartEvent {
            reason: StartReason::Reload,
            nonce: format!("n{}", self.nonce),
            settings: self.settings_read.clone(),
            project: self.project_read.clone(),
            mcp_origins: vec![],
            branch: BranchRead::Entries(self.branch.clone()),
        });
        assert!(
            effects.iter().all(|e| matches!(e, Effect::Warn(_))),
            "{effects:?}"
        );
        // A new Session knows only what it reads now: the last good settings and project list
        // of the one before are gone (with unreadable settings, the branch says whether
        // filtering is on).
        self.files = Files::default();
        self.files.read(&self.settings_read, &self.project_read);
        self.session = session;
        self.jobs.clear();
        self.before = None;
        self.boundary(BoundaryKind::Reconcile, None, None);
    }

    fn call(
        &mut self,
        tool: &str,
        server: Option<Result<String, ()>>,
        answer: &AnswerChoice,
        refuse: Option<u8>,
    ) -> bool {
        let event = ToolCallEvent {
            tool: tool.to_owned(),
            server,
        };
        let mut outcome = self.session.tool_call(&event);
        if outcome.refresh_and_retry {
            let inventory = self.inventory_read(None);
            outcome = self.session.tool_call_with(&event, Some(inventory));
            assert!(!outcome.refresh_and_retry, "a refresh is asked for once");
        }
        self.checked_effects(&outcome.effects);
        let effects = std::mem::take(&mut outcome.effects);
        self.apply(effects, refuse);
        if let Some(job) = outcome.pending.take() {
            let answers = answer_texts(&job, answer);
            let active = self.active.clone();
            let effects = self.session.decided(job.id, answers, &active);
            self.checked_effects(&effects);
            self.apply(effects, refuse);
            outcome = self.session.tool_call(&event);
            self.apply(std::mem::take(&mut outcome.effects), None);
            if outcome.pending.is_some() {
                // Still pending (the host would wait again): not allowed yet.
                return false;
            }
        }
        outcome.block.is_none()
    }

    /// The checks after every event.
    fn check(&mut self, called: Option<(&str, Option<&Result<String, ()>>, bool)>) {
        let (state, findings) = fold(&self.branch);
        let avail: (HashSet<String>, HashSet<String>) = (
            state.available_tools().map(str::to_owned).collect(),
            state.available_groups().map(str::to_owned).collect(),
        );
        let readable = self.session.branch().is_some();
        if let Some(live) = self.session.branch() {
            let live_avail: (HashSet<String>, HashSet<String>) = (
                live.available_tools().map(str::to_owned).collect(),
                live.available_groups().map(str::to_owned).collect(),
            );
            assert_eq!(
                live_avail, avail,
                "the Session grants what the branch records"
            );
            assert_eq!(
                self.session.branch_untrusted(),
                findings.iter().any(|f| f.code.untrusts_branch()),
                "{findings:?}"
            );
        }
        if let Some((tools, groups)) = &self.before {
            assert!(
                tools.is_subset(&avail.0),
                "a tool became unavailable on the branch"
            );
            assert!(
                groups.is_subset(&avail.1),
                "a group became unavailable on the branch"
            );
        }
        self.before = Some(avail.clone());

        let on = self.session.filtering_on();
        if self.files.settings_ever_read {
            assert_eq!(on, self.files.settings.tools.enabled, "the switch in force");
        }
        let Some(snapshot) = self.session.inventory().map(<[ToolInfo]>::to_vec) else {
            if on {
                for t in universe() {
                    assert!(
                        !self.session.is_allowed(&t.name),
                        "no registry: {} allowed",
                        t.name
                    );
                }
            }
            return;
        };
        let settings = &self.files.settings;
        let mode = settings.tools.mode;
        let lists = self.files.allowlists();
        let classifier = Classifier::default();
        let (classes, scopes) = classifier.classify_all(&snapshot);
        let untrusted = findings.iter().any(|f| f.code.untrusts_branch());
        let can_grant = self.files.settings_readable && readable && !untrusted;
        let total = candidates(&snapshot, &classifier, mode, &lists, &Available::default())
            .candidates
            .len();
        let scoring =
            settings.decision.has_model()
                && total >= settings.decision.minimum_candidates_for(settings.tools.mode) as usize;
        let pinned_by_name =
            |t: &ToolInfo, c: &pcd_model::Classified| lists.for_scope(c.scope).has_tool(&t.name);
        let justified = |i: usize| -> bool {
            let (t, c) = (&snapshot[i], &classes[i]);
            if c.kind.is_internal() {
                return true;
            }
            if pinned_by_name(t, c) {
                return true;
            }
            if let Some(g) = &c.group {
                if lists.for_scope(c.scope).has_group(&g.key) {
                    return true;
                }
                let promoted = scopes.get(&g.key).is_some_and(|s| *s != GroupScope::Mixed)
                    && snapshot.iter().zip(&classes).any(|(u, uc)| {
                        uc.group.as_ref().is_some_and(|ug| ug.key == g.key) && pinned_by_name(u, uc)
                    });
                if mode == Mode::Mcp && promoted {
                    return true;
                }
            }
            if !is_recordable_name(&t.name) {
                return false;
            }
            if c.kind == ToolKind::Unfiltered && mode == Mode::Mcp {
                return true;
            }
            if !readable {
                return false;
            }
            if state.is_tool_available(&t.name)
                || c.group
                    .as_ref()
                    .is_some_and(|g| state.is_group_available(&g.key))
            {
                return true;
            }
            let considered = match (&c.group, mode) {
                (Some(g), Mode::Mcp) => state.was_group_considered(&g.key),
                _ => state.was_tool_considered(&t.name),
            };
            !considered && can_grant && !scoring
        };
        for (i, t) in snapshot.iter().enumerate() {
            let allowed = self.session.is_allowed(&t.name);
            let c = &classes[i];
            if !on {
                assert!(allowed, "off means off: {} blocked", t.name);
                continue;
            }
            if c.kind == ToolKind::Internal {
                assert!(allowed, "internal {} blocked", t.name);
            }
            if allowed {
                assert!(justified(i), "{} allowed without cause ({mode:?}, readable {readable}, can_grant {can_grant}, scoring {scoring})", t.name);
            }
            let available = state.is_tool_available(&t.name)
                || c.group
                    .as_ref()
                    .is_some_and(|g| state.is_group_available(&g.key));
            if readable && available && !c.kind.is_internal() && is_recordable_name(&t.name) {
                assert!(allowed, "{} is available on the branch but blocked", t.name);
            }
        }
        if on {
            assert!(!self.session.is_allowed("not_registered_anywhere"));
        }
        // The call just made.
        let Some((tool, server, allowed)) = called else {
            return;
        };
        if !on || !allowed {
            return;
        }
        let Some(i) = snapshot.iter().position(|t| t.name == tool) else {
            panic!("{tool} allowed though not in the registry snapshot");
        };
        if classes[i].kind == ToolKind::McpResource {
            let Some(Ok(server)) = server else {
                panic!("a resource call without a string server was allowed");
            };
            let key = GroupKey::for_mcp_server(server.trim());
            let members = || {
                snapshot
                    .iter()
                    .zip(&classes)
                    .filter(|(_, c)| c.group.as_ref().is_some_and(|g| g.key == key))
            };
            // With nothing scored, a server no round has considered yet stays available, as
            // its tools do (`justified`): in group mode its group, in tools mode any member.
            let unconsidered = members().next().is_some()
                && match mode {
                    Mode::Mcp => !state.was_group_considered(&key),
                    Mode::Tools => members().any(|(t, _)| !state.was_tool_considered(&t.name)),
                };
            let ok = (readable
                && (state.is_group_available(&key)
                    || members().any(|(t, _)| state.is_tool_available(&t.name))))
                || lists.global.has_group(&key)
                || lists.project.has_group(&key)
                || members().any(|(t, c)| pinned_by_name(t, c))
                || (unconsidered && can_grant && !scoring);
            assert!(ok, "a resource call for {server:?} allowed without cause");
        } else {
            assert!(justified(i), "the call to {tool} was allowed without cause");
        }
    }
}

fuzz_target!(|input: Input| {
    let settings = if input.start.unreadable {
        SettingsRead::Unreadable
    } else {
        SettingsRead::Read(settings_of(&input.start))
    };
    let project = project_of(&input.project);
    let mut files = Files::default();
    files.read(&settings, &project);
    let (session, effects) = Session::start(StartEvent {
        reason: StartReason::Startup,
        nonce: "n0".into(),
        settings: settings.clone(),
        project: project.clone(),
        mcp_origins: vec![],
        branch: BranchRead::Entries(Vec::new()),
    });
    assert!(
        effects.is_empty(),
        "a new session starts quietly: {effects:?}"
    );
    let mut host = Host {
        session,
        branch: Vec::new(),
        next_id: 0,
        registered: Vec::new(),
        active: Vec::new(),
        jobs: Vec::new(),
        files,
        settings_read: settings,
        project_read: project,
        before: None,
        nonce: 0,
    };
    let all = InventoryChoice {
        registered: u64::MAX,
        unreadable: false,
    };
    host.boundary(BoundaryKind::Reconcile, Some(all), None);
    host.check(None);
    for op in input.ops.into_iter().take(MAX_OPS) {
        let mut called = None;
        match op {
            Op::Prompt {
                text,
                custom_message,
                inventory,
                refuse,
            } => {
                let text =
                    (!custom_message).then(|| PROMPTS[text as usize % PROMPTS.len()].to_owned());
                host.boundary(BoundaryKind::Prompt { text }, Some(inventory), refuse);
            }
            Op::ToolRound { inventory, refuse } => {
                host.boundary(BoundaryKind::ToolRound, Some(inventory), refuse)
            }
            Op::Reconcile { inventory } => {
                host.boundary(BoundaryKind::Reconcile, Some(inventory), None)
            }
            Op::Call {
                tool,
                server,
                answer,
                refuse,
            } => {
                let names = universe();
                let name = if tool as usize % (names.len() + 1) == names.len() {
                    "not_registered_anywhere".to_owned()
                } else {
                    names[tool as usize % names.len()].name.clone()
                };
                let server = match server % 8 {
                    7 => None,
                    6 => Some(Err(())),
                    k => Some(Ok(SERVERS[k as usize % SERVERS.len()].to_owned())),
                };
                let allowed = host.call(&name, server.clone(), &answer, refuse);
                called = Some((name, server, allowed));
            }
            Op::Answer {
                job,
                answer,
                refuse,
            } => {
                if !host.jobs.is_empty() {
                    let job = host.jobs.remove(job as usize % host.jobs.len());
                    let answers = answer_texts(&job, &answer);
                    let active = host.active.clone();
                    let effects = host.session.decided(job.id, answers, &active);
                    host.checked_effects(&effects);
                    host.apply(effects, refuse);
                }
            }
            Op::Save { settings, project } => {
                let settings_read = if settings.unreadable {
                    SettingsRead::Unreadable
                } else {
                    SettingsRead::Read(settings_of(&settings))
                };
                let project_read = project_of(&project);
                host.files.read(&settings_read, &project_read);
                host.session
                    .settings_changed(settings_read.clone(), project_read.clone());
                host.settings_read = settings_read;
                host.project_read = project_read;
            }
            Op::Move { back, unreadable } => {
                if unreadable {
                    host.session.branch_moved(BranchRead::Unreadable);
                } else {
                    let keep = host.branch.len() - back as usize % (host.branch.len() + 1);
                    host.branch.truncate(keep);
                    host.session
                        .branch_moved(BranchRead::Entries(host.branch.clone()));
                }
                host.jobs.clear();
                host.before = None;
                host.boundary(BoundaryKind::Reconcile, None, None);
            }
            Op::Restart { nonce } => host.restart(nonce),
            Op::Tamper { entry, how } => {
                let ledger: Vec<usize> = (0..host.branch.len())
                    .filter(|i| host.branch[*i]["customType"] == CUSTOM_TYPE)
                    .collect();
                if ledger.is_empty() {
                    continue;
                }
                let i = ledger[entry as usize % ledger.len()];
                let data = &mut host.branch[i]["data"];
                match how % 4 {
                    0 => {
                        let d = data["digest"].as_str().unwrap().to_owned();
                        let flipped = if d.starts_with('0') { "1" } else { "0" };
                        data["digest"] = json!(format!("{flipped}{}", &d[1..]));
                    }
                    1 => data["v"] = json!(2),
                    2 => match data.get_mut("tools") {
                        Some(Value::Array(list)) => list.push(json!("web_search")),
                        _ => data["tools"] = json!(["web_search"]),
                    },
                    _ => data["extra"] = json!(1),
                }
                host.restart(false);
                assert!(
                    host.session.branch_untrusted(),
                    "an edited entry untrusts the branch"
                );
            }
        }
        let called = called
            .as_ref()
            .map(|(n, s, a)| (n.as_str(), s.as_ref(), *a));
        host.check(called);
    }
});
