//! What a round records: the one event of format version 1.

use pcd_model::{GroupKey, Mode};
use sha2::{Digest, Sha256};

/// The longest round id, in bytes (`[A-Za-z0-9_-]`).
pub const MAX_ROUND_ID_BYTES: usize = 64;
/// The longest entry id a first-prompt reference may name, in bytes (`[A-Za-z0-9_.-]`).
pub const MAX_ENTRY_ID_BYTES: usize = 64;
/// The longest inventory fingerprint, in hex digits.
pub const MAX_FINGERPRINT_CHARS: usize = 64;
/// The longest name in any list: Pi's longest tool name the model crate accepts.
pub const MAX_NAME_CHARS: usize = pcd_model::MAX_INVENTORY_TOOL_NAME_CHARS;

/// What triggered a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// The first user prompt after filtering became active on the branch.
    InitialPrompt,
    /// A later user prompt (queued steering and follow-up text included).
    Prompt,
    /// A completed tool round (`tool-round` cadence, from cached scores).
    ToolRound,
    /// The first call of a tool nobody had scored yet (a lazy score).
    FirstCall,
    /// An allowlist grant, recorded so that removing the entry never takes availability away.
    Allowlist,
}

impl Boundary {
    /// Every boundary, in documentation order.
    pub const ALL: [Boundary; 5] = [
        Boundary::InitialPrompt,
        Boundary::Prompt,
        Boundary::ToolRound,
        Boundary::FirstCall,
        Boundary::Allowlist,
    ];

    /// The spelling in entries: `initial-prompt`, `prompt`, `tool-round`, `first-call`,
    /// `allowlist`.
    pub fn as_str(self) -> &'static str {
        match self {
            Boundary::InitialPrompt => "initial-prompt",
            Boundary::Prompt => "prompt",
            Boundary::ToolRound => "tool-round",
            Boundary::FirstCall => "first-call",
            Boundary::Allowlist => "allowlist",
        }
    }

    /// Parses [`Boundary::as_str`]'s spelling.
    pub fn parse(text: &str) -> Option<Boundary> {
        Boundary::ALL.into_iter().find(|b| b.as_str() == text)
    }

    /// Whether this boundary starts a new task, so that cached scores from earlier rounds no
    /// longer apply.
    pub fn starts_task(self) -> bool {
        matches!(self, Boundary::InitialPrompt | Boundary::Prompt)
    }
}

/// Why the names of a round became available.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Basis {
    /// The decision model scored them at or above the threshold.
    Scored,
    /// Nothing was scored (no decision model, or fewer candidates than the minimum): the
    /// candidates stay available and are recorded.
    Unscored,
    /// The round failed and `failMode: open` added the remaining candidates.
    FailOpen,
    /// Filtering was enabled mid-session: what was already registered stays available.
    Baseline,
    /// Only allowlist grants.
    Allowlist,
}

impl Basis {
    /// Every basis, in documentation order.
    pub const ALL: [Basis; 5] = [
        Basis::Scored,
        Basis::Unscored,
        Basis::FailOpen,
        Basis::Baseline,
        Basis::Allowlist,
    ];

    /// The spelling in entries: `scored`, `unscored`, `fail-open`, `baseline`, `allowlist`.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Scored => "scored",
            Basis::Unscored => "unscored",
            Basis::FailOpen => "fail-open",
            Basis::Baseline => "baseline",
            Basis::Allowlist => "allowlist",
        }
    }

    /// Parses [`Basis::as_str`]'s spelling.
    pub fn parse(text: &str) -> Option<Basis> {
        Basis::ALL.into_iter().find(|b| b.as_str() == text)
    }
}

/// A relevance score rounded to 3 decimals, kept as thousandths (0 to 1000) so that the digest
/// and equality never depend on floating point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Score(u16);

impl Score {
    /// The score of `value`, rounded to 3 decimals; `None` unless it is finite and in `0..=1`.
    pub fn from_f64(value: f64) -> Option<Score> {
        (value.is_finite() && (0.0..=1.0).contains(&value))
            .then(|| Score((value * 1000.0).round() as u16))
    }

    /// The score of `thousandths` / 1000; `None` above 1000.
    pub fn from_thousandths(thousandths: u16) -> Option<Score> {
        (thousandths <= 1000).then_some(Score(thousandths))
    }

    /// The score in thousandths (0 to 1000).
    pub fn thousandths(self) -> u16 {
        self.0
    }

    /// The score as a number from 0 to 1 with at most 3 decimals.
    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / 1000.0
    }
}

/// How to find the first user prompt again (after `/reload`) without storing its text.
///
/// `before_agent_start` runs before the user message is appended, so the round that picks from
/// the first prompt cannot name that message's entry id: it says "the first user message after
/// my entries on the branch" instead, and the fold resolves it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FirstPromptRef {
    /// The first user message after this round's entries on the branch.
    NextUserMessage,
    /// A user message whose entry id is already known.
    Entry(String),
}

/// One committed round: the only event of format version 1.
///
/// A round records which tools or groups it made available and why, the candidates it considered
/// (so that `initial` never re-picks and late arrivals are recorded), the allowlist grants by
/// name or canonical key, scores rounded to 3 decimals, the threshold, a fingerprint of the
/// inventory and, for the first pick, how to find the first prompt again. It never holds a
/// description, schema, argument, result, path, URL or secret: every list is names only, and
/// [`crate::encode_round`] refuses anything that is not a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// The round's id, unique on the branch: 1 to 64 bytes of `[A-Za-z0-9_-]`.
    pub id: String,
    /// The mode the round ran in; it says whether `considered` and `scores` name tools or groups.
    pub mode: Mode,
    /// What triggered it.
    pub boundary: Boundary,
    /// Why its names became available.
    pub basis: Basis,
    /// Tool names made available.
    pub tools: Vec<String>,
    /// Groups made available (MCP servers and extensions), by canonical key.
    pub groups: Vec<GroupKey>,
    /// Tool names granted by an allowlist entry.
    pub allowlisted_tools: Vec<String>,
    /// Groups granted by an allowlist entry, by canonical key.
    pub allowlisted_groups: Vec<GroupKey>,
    /// The candidates considered: tool names in `tools` mode, group keys in `mcp` mode.
    pub considered: Vec<String>,
    /// Scores by candidate (tool name or group key, as in `considered`), rounded to 3 decimals.
    pub scores: Vec<(String, Score)>,
    /// The threshold the scores were compared with, when anything was scored.
    pub threshold: Option<Score>,
    /// A fingerprint of the inventory the round saw (see [`inventory_fingerprint`]).
    pub inventory: Option<String>,
    /// For the first pick: how to find the first prompt again.
    pub first_prompt: Option<FirstPromptRef>,
}

impl Round {
    /// A round with no names yet, to be filled in.
    pub fn new(id: impl Into<String>, mode: Mode, boundary: Boundary, basis: Basis) -> Round {
        Round {
            id: id.into(),
            mode,
            boundary,
            basis,
            tools: Vec::new(),
            groups: Vec::new(),
            allowlisted_tools: Vec::new(),
            allowlisted_groups: Vec::new(),
            considered: Vec::new(),
            scores: Vec::new(),
            threshold: None,
            inventory: None,
            first_prompt: None,
        }
    }

    /// How many names the round holds across all its lists (scores count once each).
    pub fn name_count(&self) -> usize {
        self.tools.len()
            + self.groups.len()
            + self.allowlisted_tools.len()
            + self.allowlisted_groups.len()
            + self.considered.len()
            + self.scores.len()
    }
}

/// A names-only fingerprint of an inventory: the first 16 hex digits of SHA-256 over the sorted,
/// deduplicated tool names, each followed by a NUL byte. The same set of names gives the same
/// fingerprint in any order.
pub fn inventory_fingerprint<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    names.dedup();
    let mut hasher = Sha256::new();
    for name in names {
        hasher.update(name.as_bytes());
        hasher.update([0]);
    }
    hex::encode(&hasher.finalize()[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_round_to_three_decimals_and_reject_out_of_range() {
        assert_eq!(Score::from_f64(0.7346).unwrap().thousandths(), 735);
        assert_eq!(Score::from_f64(1.0).unwrap().thousandths(), 1000);
        assert_eq!(Score::from_f64(0.0).unwrap().as_f64(), 0.0);
        assert!(Score::from_f64(f64::NAN).is_none());
        assert!(Score::from_f64(1.0001).is_none());
        assert!(Score::from_f64(-0.1).is_none());
        assert!(Score::from_thousandths(1001).is_none());
    }

    #[test]
    fn spellings_round_trip() {
        for b in Boundary::ALL {
            assert_eq!(Boundary::parse(b.as_str()), Some(b));
        }
        for b in Basis::ALL {
            assert_eq!(Basis::parse(b.as_str()), Some(b));
        }
        assert_eq!(Boundary::parse("Prompt"), None);
    }

    #[test]
    fn fingerprint_ignores_order_and_duplicates_but_not_names() {
        let a = inventory_fingerprint(["b", "a", "a"]);
        assert_eq!(a, inventory_fingerprint(["a", "b"]));
        assert_eq!(a.len(), 16);
        assert_ne!(a, inventory_fingerprint(["a", "c"]));
        // NUL separation: ["ab"] and ["a", "b"] differ.
        assert_ne!(inventory_fingerprint(["ab"]), a);
    }
}
