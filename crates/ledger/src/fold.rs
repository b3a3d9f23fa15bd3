//! The fold: a branch's entries, root to leaf, to [`BranchState`]. It reads round entries through
//! the codec (`decode_part`, then `assemble` once a round's parts are all there).

use crate::codec::{
    assemble, decode_part, AssembleError, DecodeError, FirstPromptView, PartView, RoundView,
};
use crate::event::{Basis, Boundary, Round, Score};
use crate::CUSTOM_TYPE;
use pcd_model::{AuditFinding, AuditFindingCode, GroupKey, Mode};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

// Seeded per process (so not open to precomputed collisions) and several times faster than
// SipHash on short names: the gate asks on every tool call and the fold inserts every name.
type Hasher = foldhash::fast::RandomState;
type NameSet = HashSet<Arc<str>, Hasher>;
type ScoreMap = HashMap<Arc<str>, Score, Hasher>;

/// Where the first user prompt of the branch is, so that `initial` cadence can score late
/// arrivals against it after `/reload` without the ledger storing its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstPrompt {
    /// The round that picked from it.
    pub round: Arc<str>,
    /// The user message's entry id; `None` while it has not been appended yet (the round is
    /// written in `before_agent_start`, before the message).
    pub entry_id: Option<Arc<str>>,
}

/// A mode change on the branch: from this round on, rounds ran in `mode`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeChange {
    /// The first round in the new mode.
    pub round: Arc<str>,
    /// The mode.
    pub mode: Mode,
}

/// One valid round as the timeline shows it: what it added and why, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundSummary {
    /// The round id.
    pub id: Arc<str>,
    /// The entry id of its first part, when the entry had one.
    pub entry_id: Option<Arc<str>>,
    /// The `timestamp` of its first part (ISO 8601 as Pi writes it), when present and sane.
    pub timestamp: Option<Arc<str>>,
    /// The mode it ran in.
    pub mode: Mode,
    /// What triggered it.
    pub boundary: Boundary,
    /// Why its names became available.
    pub basis: Basis,
    /// The threshold, when anything was scored.
    pub threshold: Option<Score>,
    /// Tools that became available with this round (not available before), allowlisted ones
    /// included.
    pub new_tools: Vec<Arc<str>>,
    /// Groups that became available with this round, allowlisted ones included.
    pub new_groups: Vec<Arc<str>>,
    /// How many tool names and group keys the round granted through an allowlist.
    pub allowlisted: usize,
    /// How many candidates it considered.
    pub considered: usize,
    /// How many scores it recorded.
    pub scored: usize,
}

/// What a branch's ledger says: which tools and groups are available (additive), what was
/// considered, where the first prompt is, the mode history and the cached scores.
///
/// Lookups take `&str` and neither allocate nor scan: the gate asks on every tool call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BranchState {
    tools: NameSet,
    groups: NameSet,
    allowlisted_groups: NameSet,
    considered_tools: NameSet,
    considered_groups: NameSet,
    tool_scores: ScoreMap,
    group_scores: ScoreMap,
    first_prompt: Option<FirstPrompt>,
    awaiting_first_prompt: bool,
    modes: Vec<ModeChange>,
    last_inventory: Option<Arc<str>>,
    rounds: Vec<RoundSummary>,
}

impl BranchState {
    /// The state of a branch with no rounds: nothing available through the ledger.
    pub fn new() -> BranchState {
        BranchState::default()
    }

    /// Whether the tool `name` is available on this branch (made available by a round or
    /// granted by an allowlist entry at some point). Group availability is separate: see
    /// [`BranchState::is_group_available`].
    pub fn is_tool_available(&self, name: &str) -> bool {
        self.tools.contains(name)
    }

    /// Whether the group (MCP server or extension) is available on this branch.
    pub fn is_group_available(&self, key: &GroupKey) -> bool {
        self.groups.contains(key.as_str())
    }

    /// [`BranchState::is_group_available`] by canonical key text.
    pub fn is_group_key_available(&self, key: &str) -> bool {
        self.groups.contains(key)
    }

    /// Whether the group was granted by an allowlist entry (it is then also available).
    pub fn is_group_allowlist_granted(&self, key: &str) -> bool {
        self.allowlisted_groups.contains(key)
    }

    /// Whether a `tools`-mode round considered the tool `name` (so `initial` never re-picks it).
    pub fn was_tool_considered(&self, name: &str) -> bool {
        self.considered_tools.contains(name)
    }

    /// Whether an `mcp`-mode round considered the group.
    pub fn was_group_considered(&self, key: &GroupKey) -> bool {
        self.considered_groups.contains(key.as_str())
    }

    /// Every tool name a `tools`-mode round considered, in no particular order.
    pub fn considered_tools(&self) -> impl Iterator<Item = &str> + '_ {
        self.considered_tools.iter().map(|s| &**s)
    }

    /// Every group key an `mcp`-mode round considered, in no particular order.
    pub fn considered_groups(&self) -> impl Iterator<Item = &str> + '_ {
        self.considered_groups.iter().map(|s| &**s)
    }

    /// The cached score of a candidate for the current task (rounds since the last prompt
    /// boundary), for `tool-round` cadence: a tool name in `tools` mode, a group key in `mcp`.
    pub fn cached_score(&self, mode: Mode, candidate: &str) -> Option<Score> {
        match mode {
            Mode::Tools => self.tool_scores.get(candidate).copied(),
            Mode::Mcp => self.group_scores.get(candidate).copied(),
        }
    }

    /// Every cached score of the current task in `mode`, in no particular order.
    pub fn cached_scores(&self, mode: Mode) -> impl Iterator<Item = (&str, Score)> + '_ {
        let map = match mode {
            Mode::Tools => &self.tool_scores,
            Mode::Mcp => &self.group_scores,
        };
        map.iter().map(|(k, v)| (&**k, *v))
    }

    /// Where the branch's first user prompt is, once a round has picked from it.
    pub fn first_prompt(&self) -> Option<&FirstPrompt> {
        self.first_prompt.as_ref()
    }

    /// The mode history: one change per switch, the first round first.
    pub fn mode_history(&self) -> &[ModeChange] {
        &self.modes
    }

    /// The mode of the latest round.
    pub fn current_mode(&self) -> Option<Mode> {
        self.modes.last().map(|m| m.mode)
    }

    /// The inventory fingerprint of the latest round that recorded one.
    pub fn last_inventory(&self) -> Option<&str> {
        self.last_inventory.as_deref()
    }

    /// Every available tool name, in no particular order.
    pub fn available_tools(&self) -> impl Iterator<Item = &str> + '_ {
        self.tools.iter().map(|s| &**s)
    }

    /// Every available group key, in no particular order.
    pub fn available_groups(&self) -> impl Iterator<Item = &str> + '_ {
        self.groups.iter().map(|s| &**s)
    }

    /// The valid rounds, in branch order.
    pub fn rounds(&self) -> &[RoundSummary] {
        &self.rounds
    }

    /// Applies a round the host has just appended (the live path), as the fold would.
    /// `entry_id` and `timestamp` are those of its first entry, when known (kept only when they
    /// look like Pi's: a short id and an ISO 8601 time).
    pub fn apply_round(&mut self, round: &Round, entry_id: Option<&str>, timestamp: Option<&str>) {
        let entry_id = entry_id.filter(|id| crate::codec::is_entry_id(id));
        let timestamp = timestamp.filter(|t| is_timestamp(t));
        self.apply(&RoundView::of(round), entry_id, timestamp);
    }

    /// Notes a user message appended on the branch (the live path), resolving a pending
    /// first-prompt reference.
    pub fn observe_user_message(&mut self, entry_id: &str) {
        if self.awaiting_first_prompt {
            if let Some(first) = &mut self.first_prompt {
                first.entry_id = Some(entry_id.into());
            }
            self.awaiting_first_prompt = false;
        }
    }

    fn apply(&mut self, view: &RoundView<'_>, entry_id: Option<&str>, timestamp: Option<&str>) {
        let id: Arc<str> = view.id.into();
        self.tools
            .reserve(view.tools.len() + view.allowlisted_tools.len());
        let mut new_tools = Vec::new();
        for name in view.tools.iter().chain(&view.allowlisted_tools) {
            insert_new(&mut self.tools, name, &mut new_tools);
        }
        let mut new_groups = Vec::new();
        for key in view.groups.iter().chain(&view.allowlisted_groups) {
            insert_new(&mut self.groups, key, &mut new_groups);
        }
        for key in &view.allowlisted_groups {
            if !self.allowlisted_groups.contains(*key) {
                let shared = self
                    .groups
                    .get(*key)
                    .cloned()
                    .unwrap_or_else(|| (*key).into());
                self.allowlisted_groups.insert(shared);
            }
        }
        let considered = match view.mode {
            Mode::Tools => &mut self.considered_tools,
            Mode::Mcp => &mut self.considered_groups,
        };
        considered.reserve(view.considered.len());
        for name in &view.considered {
            if !considered.contains(*name) {
                considered.insert((*name).into());
            }
        }
        // Cached scores belong to one task: a new prompt starts a new one.
        if view.boundary.starts_task() {
            self.tool_scores.clear();
            self.group_scores.clear();
        }
        let scores = match view.mode {
            Mode::Tools => &mut self.tool_scores,
            Mode::Mcp => &mut self.group_scores,
        };
        for (name, score) in &view.scores {
            match scores.get_mut(*name) {
                Some(s) => *s = *score,
                None => {
                    scores.insert((*name).into(), *score);
                }
            }
        }
        if self.current_mode() != Some(view.mode) {
            self.modes.push(ModeChange {
                round: id.clone(),
                mode: view.mode,
            });
        }
        if let Some(f) = view.inventory {
            self.last_inventory = Some(f.into());
        }
        if self.first_prompt.is_none() {
            match view.first_prompt {
                None => {}
                Some(FirstPromptView::NextUserMessage) => {
                    self.first_prompt = Some(FirstPrompt {
                        round: id.clone(),
                        entry_id: None,
                    });
                    self.awaiting_first_prompt = true;
                }
                Some(FirstPromptView::Entry(e)) => {
                    self.first_prompt = Some(FirstPrompt {
                        round: id.clone(),
                        entry_id: Some(e.into()),
                    });
                }
            }
        }
        self.rounds.push(RoundSummary {
            id,
            entry_id: entry_id.map(Into::into),
            timestamp: timestamp.map(Into::into),
            mode: view.mode,
            boundary: view.boundary,
            basis: view.basis,
            threshold: view.threshold,
            new_tools,
            new_groups,
            allowlisted: view.allowlisted_tools.len() + view.allowlisted_groups.len(),
            considered: view.considered.len(),
            scored: view.scores.len(),
        });
    }
}

fn insert_new(set: &mut NameSet, name: &str, new: &mut Vec<Arc<str>>) {
    if !set.contains(name) {
        let shared: Arc<str> = name.into();
        set.insert(shared.clone());
        new.push(shared);
    }
}

/// What one branch entry is, for the fold.
enum EntryKind<'a> {
    Ledger(Option<&'a Value>),
    UserMessage,
    Other,
}

fn classify(entry: &Value) -> EntryKind<'_> {
    let Some(obj) = entry.as_object() else {
        return EntryKind::Other;
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("custom") if obj.get("customType").and_then(Value::as_str) == Some(CUSTOM_TYPE) => {
            EntryKind::Ledger(obj.get("data"))
        }
        Some("message") => {
            let role = obj
                .get("message")
                .and_then(|m| m.get("role"))
                .and_then(Value::as_str);
            if role == Some("user") {
                EntryKind::UserMessage
            } else {
                EntryKind::Other
            }
        }
        _ => EntryKind::Other,
    }
}

/// An entry id fit to be reported: Pi's ids are 8 hex digits; anything odd is left out.
fn entry_id(entry: &Value) -> Option<&str> {
    entry
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| crate::codec::is_entry_id(id))
}

fn timestamp(entry: &Value) -> Option<&str> {
    entry
        .get("timestamp")
        .and_then(Value::as_str)
        .filter(|t| is_timestamp(t))
}

fn is_timestamp(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 40
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'T' | b'Z' | b':' | b'.' | b'-' | b'+'))
}

struct Pending<'a> {
    part: PartView<'a>,
    entry_id: Option<&'a str>,
    timestamp: Option<&'a str>,
}

/// The fold, one entry at a time, for callers that walk a branch lazily (the session reader,
/// the SQLite mirror). [`fold`] is this over a slice.
pub struct Folder<'a> {
    state: BranchState,
    findings: Vec<AuditFinding>,
    pending: Vec<Pending<'a>>,
    /// Which part indices `pending` holds, one bit each: whether an incoming part continues the
    /// pending round is one lookup, not a scan of the pending parts (which made a round of many
    /// parts fold in quadratic time).
    seen: PartSet,
}

/// A set of part indices (below [`crate::MAX_PARTS`]) as a bitset that grows on demand and is
/// emptied by clearing only the bits that were set.
#[derive(Default)]
struct PartSet {
    words: Vec<u64>,
}

impl PartSet {
    fn contains(&self, part: u32) -> bool {
        self.words
            .get(part as usize / 64)
            .is_some_and(|w| w & (1 << (part % 64)) != 0)
    }

    fn insert(&mut self, part: u32) {
        let word = part as usize / 64;
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        self.words[word] |= 1 << (part % 64);
    }

    fn remove(&mut self, part: u32) {
        if let Some(w) = self.words.get_mut(part as usize / 64) {
            *w &= !(1 << (part % 64));
        }
    }
}

impl Default for Folder<'_> {
    fn default() -> Self {
        Folder::new()
    }
}

impl<'a> Folder<'a> {
    /// A fold from the empty state.
    pub fn new() -> Folder<'a> {
        Folder {
            state: BranchState::new(),
            findings: Vec::new(),
            pending: Vec::new(),
            seen: PartSet::default(),
        }
    }

    /// Feeds the next entry of the branch (root first). Entries of other types and other
    /// custom types are ignored, except that a user message resolves a pending first-prompt
    /// reference.
    pub fn push(&mut self, entry: &'a Value) {
        match classify(entry) {
            EntryKind::Other => {}
            EntryKind::UserMessage => self.push_user_message(entry_id(entry)),
            EntryKind::Ledger(data) => self.push_ledger(data, entry_id(entry), timestamp(entry)),
        }
    }

    /// Feeds a `context-decisions-tools` entry of the branch given by its parts, for readers
    /// that decode the envelope themselves (the session reader builds no JSON value for it):
    /// its `data` (`None` when absent), and its `id` and `timestamp` when they are strings.
    /// An id or a timestamp that does not look like Pi's is left out, as [`Folder::push`] does.
    pub fn push_ledger_entry(
        &mut self,
        data: Option<&'a Value>,
        id: Option<&'a str>,
        timestamp: Option<&'a str>,
    ) {
        let id = id.filter(|id| crate::codec::is_entry_id(id));
        let timestamp = timestamp.filter(|t| is_timestamp(t));
        self.push_ledger(data, id, timestamp);
    }

    /// Feeds a user message of the branch, by its `id` when it is a string: it resolves a
    /// pending first-prompt reference.
    pub fn push_user_message(&mut self, id: Option<&str>) {
        if let Some(id) = id.filter(|id| crate::codec::is_entry_id(id)) {
            self.state.observe_user_message(id);
        }
    }

    fn push_ledger(
        &mut self,
        data: Option<&'a Value>,
        id: Option<&'a str>,
        timestamp: Option<&'a str>,
    ) {
        let decoded = data.map_or(Err(DecodeError::NotAnObject), decode_part);
        let part = match decoded {
            Ok(part) => part,
            Err(error) => {
                let code = match error {
                    DecodeError::UnknownVersion => AuditFindingCode::UnknownVersion,
                    _ => AuditFindingCode::Undecodable,
                };
                let round = data
                    .and_then(|d| d.get("round"))
                    .and_then(Value::as_str)
                    .filter(|r| crate::codec::is_entry_id(r));
                self.finding(code, id, round);
                return;
            }
        };
        let continues = self
            .pending
            .first()
            .is_some_and(|p| p.part.round == part.round && !self.seen.contains(part.part));
        if !continues {
            self.flush();
        }
        let complete_at = part.parts as usize;
        self.seen.insert(part.part);
        self.pending.push(Pending {
            part,
            entry_id: id,
            timestamp,
        });
        if self.pending.len() >= complete_at {
            self.settle();
        }
    }

    /// Settles a complete set of parts: applies the round, or reports why it grants nothing.
    fn settle(&mut self) {
        let pending = self.take_pending();
        let first = pending
            .iter()
            .find(|p| p.part.part == 0)
            .unwrap_or(&pending[0]);
        let (entry_id, timestamp, round) = (first.entry_id, first.timestamp, first.part.round);
        // The parts move into the assembly: copying them cost as much as the rest of the fold.
        let parts: Vec<PartView<'a>> = pending.into_iter().map(|p| p.part).collect();
        match assemble(&parts) {
            Ok(view) => self.state.apply(&view, entry_id, timestamp),
            Err(AssembleError::Torn) => {
                self.finding(AuditFindingCode::TornRound, entry_id, Some(round))
            }
            Err(AssembleError::Mismatch) => {
                self.finding(AuditFindingCode::DigestMismatch, entry_id, Some(round))
            }
            Err(AssembleError::Undecodable) => {
                self.finding(AuditFindingCode::Undecodable, entry_id, Some(round))
            }
        }
    }

    /// Empties the pending round, and its part indices with it.
    fn take_pending(&mut self) -> Vec<Pending<'a>> {
        let pending = std::mem::take(&mut self.pending);
        for p in &pending {
            self.seen.remove(p.part.part);
        }
        pending
    }

    /// An incomplete round grants nothing. When its first parts are present in order and agree
    /// with each other, the rest were never written (a crash or a failed write while appending):
    /// interrupted. Parts that disagree on the digest or the part count were not written as one
    /// round (an edit): a digest mismatch, as for a whole round. Any other shape (a gap, parts
    /// out of order) means entries were removed or moved: torn.
    fn flush(&mut self) {
        if let Some(first) = self.pending.first() {
            let (id, round) = (first.entry_id, first.part.round);
            let agree = self
                .pending
                .iter()
                .all(|p| p.part.parts == first.part.parts && p.part.digest == first.part.digest);
            let prefix = self
                .pending
                .iter()
                .enumerate()
                .all(|(i, p)| p.part.part as usize == i);
            self.take_pending();
            let code = if !agree {
                AuditFindingCode::DigestMismatch
            } else if prefix {
                AuditFindingCode::InterruptedRound
            } else {
                AuditFindingCode::TornRound
            };
            self.finding(code, id, Some(round));
        }
    }

    fn finding(&mut self, code: AuditFindingCode, entry_id: Option<&str>, round: Option<&str>) {
        self.findings.push(AuditFinding {
            code,
            entry_id: entry_id.map(str::to_owned),
            round: round.map(str::to_owned),
        });
    }

    /// The state so far, with rounds still missing parts not yet counted.
    pub fn state(&self) -> &BranchState {
        &self.state
    }

    /// Ends the branch: a round still missing parts is torn.
    pub fn finish(mut self) -> (BranchState, Vec<AuditFinding>) {
        self.flush();
        (self.state, self.findings)
    }
}

/// Folds a branch's entries, root to leaf (as `getBranch()` returns them), to its state and the
/// audit findings: torn rounds, digest mismatches, undecodable entries and unknown versions. A
/// round counts only when all its parts are present and its digest matches.
pub fn fold<'a>(entries: impl IntoIterator<Item = &'a Value>) -> (BranchState, Vec<AuditFinding>) {
    let mut folder = Folder::new();
    for entry in entries {
        folder.push(entry);
    }
    folder.finish()
}
