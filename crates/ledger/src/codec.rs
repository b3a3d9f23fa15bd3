//! The entry codec: a [`Round`] as the `data` of one or more `context-decisions-tools` custom
//! entries (chunks of at most 1000 names per list), and back, with the round's digest.
//!
//! The digest is SHA-256 over the round's canonical content (see [`RoundView::digest`]), which
//! does not depend on how the round was chunked. It detects torn and hand-edited rounds; it is no
//! MAC, so it does not stop another extension running in the same process from writing a valid
//! round, nor someone who edits a round and computes its digest again.
//!
//! Joining a chunked round's parts back into one (`assemble`, which checks the digest) is here
//! too: the fold calls it as it reads a branch, and `decode_single` for a lone entry. The codec
//! never uses the fold.

use crate::event::{
    Basis, Boundary, FirstPromptRef, Round, Score, MAX_ENTRY_ID_BYTES, MAX_FINGERPRINT_CHARS,
    MAX_NAME_CHARS, MAX_ROUND_ID_BYTES,
};
use pcd_model::{GroupKey, Mode};
use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};

/// The `customType` of every ledger entry.
pub const CUSTOM_TYPE: &str = "context-decisions-tools";
/// The `customType` of the note that says which scorer decided a round of the embedded scorer
/// (`{"v":1,"round":ID,"scorer":"semantic+lexical"|"lexical"}`), appended right after the round.
/// It is not part of the ledger: the fold never reads it, it grants nothing, and a reader that
/// does not know it skips it like any other custom entry, so the ledger's v1 stays as it is.
pub const SCORER_CUSTOM_TYPE: &str = "context-decisions-scorer";
/// The format version this crate writes and reads.
pub const FORMAT_VERSION: u64 = 1;
/// The most names one list of one entry holds.
pub const MAX_NAMES_PER_CHUNK: usize = 1000;
/// The most parts one round may span (a bound on hostile input, far above any real inventory).
pub const MAX_PARTS: u32 = 1_000_000;

/// Why a round cannot be encoded. Names the field and the rule, never the offending value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The round id is empty, longer than 64 bytes, or has a character outside `[A-Za-z0-9_-]`.
    #[error("the round id must be 1 to {MAX_ROUND_ID_BYTES} bytes of [A-Za-z0-9_-]")]
    RoundId,
    /// A name in a list is empty, too long, or contains whitespace or a control character.
    #[error("list `{list}` item {index}: a name is 1 to {MAX_NAME_CHARS} characters without whitespace or control characters")]
    Name {
        /// Which list.
        list: &'static str,
        /// The item's 0-based position.
        index: usize,
    },
    /// In `mcp` mode a considered candidate or a score is not a canonical group key.
    #[error("list `{list}` item {index}: in mcp mode candidates are canonical group keys")]
    NotAGroupKey {
        /// Which list.
        list: &'static str,
        /// The item's 0-based position.
        index: usize,
    },
    /// The inventory fingerprint is not 1 to 64 lowercase hex digits.
    #[error("the inventory fingerprint must be 1 to {MAX_FINGERPRINT_CHARS} lowercase hex digits")]
    Fingerprint,
    /// The first-prompt entry id is not 1 to 64 bytes of `[A-Za-z0-9_.-]`.
    #[error("the first-prompt entry id must be 1 to {MAX_ENTRY_ID_BYTES} bytes of [A-Za-z0-9_.-]")]
    EntryId,
    /// The chunk size is 0 or above 1000.
    #[error("the chunk size must be 1 to {MAX_NAMES_PER_CHUNK}")]
    ChunkSize,
    /// The round needs more than [`MAX_PARTS`] parts.
    #[error("the round needs more than {MAX_PARTS} parts")]
    TooManyParts,
}

/// Why one entry's `data` does not decode. Names the field, never the offending value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// `data` is not an object.
    #[error("data is not an object")]
    NotAnObject,
    /// `v` is a future version this reader does not know.
    #[error("unknown format version")]
    UnknownVersion,
    /// A field is missing, of the wrong type, or breaks its rule.
    #[error("field `{0}` is missing or invalid")]
    Field(&'static str),
    /// A field this version does not define.
    #[error("a field this version does not define")]
    UnknownField,
}

/// A round borrowed from either a [`Round`] or decoded entries: what the digest and the fold see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundView<'a> {
    pub(crate) id: &'a str,
    pub(crate) mode: Mode,
    pub(crate) boundary: Boundary,
    pub(crate) basis: Basis,
    pub(crate) threshold: Option<Score>,
    pub(crate) inventory: Option<&'a str>,
    pub(crate) first_prompt: Option<FirstPromptView<'a>>,
    pub(crate) tools: Vec<&'a str>,
    pub(crate) groups: Vec<&'a str>,
    pub(crate) allowlisted_tools: Vec<&'a str>,
    pub(crate) allowlisted_groups: Vec<&'a str>,
    pub(crate) considered: Vec<&'a str>,
    pub(crate) scores: Vec<(&'a str, Score)>,
}

/// [`FirstPromptRef`], borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstPromptView<'a> {
    NextUserMessage,
    Entry(&'a str),
}

/// The JSON names of the lists, in canonical order.
const LISTS: [&str; 6] = [
    "tools",
    "groups",
    "allowlistTools",
    "allowlistGroups",
    "considered",
    "scores",
];

impl<'a> RoundView<'a> {
    pub(crate) fn of(round: &'a Round) -> RoundView<'a> {
        RoundView {
            id: &round.id,
            mode: round.mode,
            boundary: round.boundary,
            basis: round.basis,
            threshold: round.threshold,
            inventory: round.inventory.as_deref(),
            first_prompt: round.first_prompt.as_ref().map(|f| match f {
                FirstPromptRef::NextUserMessage => FirstPromptView::NextUserMessage,
                FirstPromptRef::Entry(id) => FirstPromptView::Entry(id),
            }),
            tools: round.tools.iter().map(String::as_str).collect(),
            groups: round.groups.iter().map(GroupKey::as_str).collect(),
            allowlisted_tools: round.allowlisted_tools.iter().map(String::as_str).collect(),
            allowlisted_groups: round
                .allowlisted_groups
                .iter()
                .map(GroupKey::as_str)
                .collect(),
            considered: round.considered.iter().map(String::as_str).collect(),
            scores: round.scores.iter().map(|(n, s)| (n.as_str(), *s)).collect(),
        }
    }

    fn name_list(&self, index: usize) -> &[&'a str] {
        match index {
            0 => &self.tools,
            1 => &self.groups,
            2 => &self.allowlisted_tools,
            3 => &self.allowlisted_groups,
            _ => &self.considered,
        }
    }

    fn list_len(&self, index: usize) -> usize {
        if index == 5 {
            self.scores.len()
        } else {
            self.name_list(index).len()
        }
    }

    /// SHA-256 over the canonical content: a domain tag, then every field in a fixed order, each
    /// string as its byte length (u32, little endian) and bytes, each list as its length and
    /// items, scores as thousandths (u16, little endian). Chunking is not part of it.
    pub(crate) fn digest(&self) -> [u8; 32] {
        fn text(h: &mut Sha256, s: &str) {
            h.update((s.len() as u32).to_le_bytes());
            h.update(s.as_bytes());
        }
        let mut h = Sha256::new();
        h.update(b"pcd-ledger round v1\0");
        text(&mut h, self.id);
        text(&mut h, self.mode.as_str());
        text(&mut h, self.boundary.as_str());
        text(&mut h, self.basis.as_str());
        match self.threshold {
            None => h.update([0]),
            Some(t) => {
                h.update([1]);
                h.update(t.thousandths().to_le_bytes());
            }
        }
        match self.inventory {
            None => h.update([0]),
            Some(f) => {
                h.update([1]);
                text(&mut h, f);
            }
        }
        match self.first_prompt {
            None => h.update([0]),
            Some(FirstPromptView::NextUserMessage) => h.update([1]),
            Some(FirstPromptView::Entry(id)) => {
                h.update([2]);
                text(&mut h, id);
            }
        }
        for index in 0..5 {
            let list = self.name_list(index);
            h.update((list.len() as u32).to_le_bytes());
            for name in list {
                text(&mut h, name);
            }
        }
        h.update((self.scores.len() as u32).to_le_bytes());
        for (name, score) in &self.scores {
            text(&mut h, name);
            h.update(score.thousandths().to_le_bytes());
        }
        h.finalize().into()
    }

    /// Checks every rule [`decode_part`] checks, so that whatever is encoded decodes.
    fn validate(&self) -> Result<(), EncodeError> {
        if !is_round_id(self.id) {
            return Err(EncodeError::RoundId);
        }
        if let Some(f) = self.inventory {
            if !is_fingerprint(f) {
                return Err(EncodeError::Fingerprint);
            }
        }
        if let Some(FirstPromptView::Entry(id)) = self.first_prompt {
            if !is_entry_id(id) {
                return Err(EncodeError::EntryId);
            }
        }
        for (list_index, list) in LISTS.iter().enumerate().take(5) {
            for (index, name) in self.name_list(list_index).iter().enumerate() {
                check_name(self.mode, list_index, name)
                    .map_err(|group| name_error(group, list, index))?;
            }
        }
        for (index, (name, _)) in self.scores.iter().enumerate() {
            check_name(self.mode, 5, name).map_err(|group| name_error(group, "scores", index))?;
        }
        Ok(())
    }
}

fn name_error(group: bool, list: &'static str, index: usize) -> EncodeError {
    if group {
        EncodeError::NotAGroupKey { list, index }
    } else {
        EncodeError::Name { list, index }
    }
}

/// `Err(true)` when a group key was needed, `Err(false)` when the name itself is bad.
fn check_name(mode: Mode, list_index: usize, name: &str) -> Result<(), bool> {
    let wants_group = match list_index {
        1 | 3 => true,
        4 | 5 => mode == Mode::Mcp,
        _ => false,
    };
    if wants_group {
        return GroupKey::from_canonical(name).map(|_| ()).ok_or(true);
    }
    is_recordable_name(name).then_some(()).ok_or(false)
}

/// Whether `name` can be recorded as a tool name in a round: 1 to [`MAX_NAME_CHARS`] characters
/// with no whitespace and no control character. This is the rule the encoder enforces (a round
/// holding any other name is refused whole), kept here once: the picker, the gate and the facade
/// ask it to keep a tool the ledger cannot record out of every round.
///
/// ```
/// assert!(pcd_ledger::is_recordable_name("mcp__kb__search"));
/// assert!(!pcd_ledger::is_recordable_name("two words"));
/// ```
pub fn is_recordable_name(name: &str) -> bool {
    if name.is_ascii() {
        // The common case, without counting characters: printable ASCII, no space.
        return !name.is_empty()
            && name.len() <= MAX_NAME_CHARS
            && name.bytes().all(|b| b > b' ' && b != 0x7f);
    }
    name.chars().count() <= MAX_NAME_CHARS
        && !name.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn is_round_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ROUND_ID_BYTES
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether `id` is fit to be kept as an entry id (Pi's are 8 hex digits; anything odd is left
/// out of the fold's references).
pub fn is_entry_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ENTRY_ID_BYTES
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn is_fingerprint(f: &str) -> bool {
    !f.is_empty()
        && f.len() <= MAX_FINGERPRINT_CHARS
        && f.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The `data` of each custom entry that records `round`, in order: one entry per chunk of at
/// most 1000 names per list. Append them with `customType` [`CUSTOM_TYPE`], consecutively.
///
/// Fails when the round holds anything that is not a name (see [`EncodeError`]); nothing is
/// written in that case.
pub fn encode_round(round: &Round) -> Result<Vec<Value>, EncodeError> {
    encode_round_chunked(round, MAX_NAMES_PER_CHUNK)
}

/// [`encode_round`] with chunks of at most `chunk` names per list (1 to 1000). Any chunk size
/// folds to the same state; smaller chunks exist for tests and for hosts with small entries.
pub fn encode_round_chunked(round: &Round, chunk: usize) -> Result<Vec<Value>, EncodeError> {
    if chunk == 0 || chunk > MAX_NAMES_PER_CHUNK {
        return Err(EncodeError::ChunkSize);
    }
    let view = RoundView::of(round);
    view.validate()?;
    let longest = (0..LISTS.len())
        .map(|i| view.list_len(i))
        .max()
        .unwrap_or(0);
    let parts = longest.div_ceil(chunk).max(1);
    if parts > MAX_PARTS as usize {
        return Err(EncodeError::TooManyParts);
    }
    let digest = hex::encode(view.digest());
    let mut out = Vec::with_capacity(parts);
    for part in 0..parts {
        let mut data = Map::new();
        data.insert("v".into(), FORMAT_VERSION.into());
        data.insert("round".into(), view.id.into());
        data.insert("part".into(), part.into());
        data.insert("parts".into(), parts.into());
        data.insert("digest".into(), digest.clone().into());
        if part == 0 {
            data.insert("mode".into(), view.mode.as_str().into());
            data.insert("boundary".into(), view.boundary.as_str().into());
            data.insert("basis".into(), view.basis.as_str().into());
            if let Some(t) = view.threshold {
                data.insert("threshold".into(), score_value(t));
            }
            if let Some(f) = view.inventory {
                data.insert("inventory".into(), f.into());
            }
            match view.first_prompt {
                None => {}
                Some(FirstPromptView::NextUserMessage) => {
                    data.insert("firstPrompt".into(), "next-user-message".into());
                }
                Some(FirstPromptView::Entry(id)) => {
                    let mut o = Map::new();
                    o.insert("entry".into(), id.into());
                    data.insert("firstPrompt".into(), Value::Object(o));
                }
            }
        }
        let range = |len: usize| (part * chunk).min(len)..((part + 1) * chunk).min(len);
        for (index, list) in LISTS.iter().enumerate().take(5) {
            let names = view.name_list(index);
            let slice = &names[range(names.len())];
            if !slice.is_empty() {
                let items = slice.iter().map(|n| Value::from(*n)).collect();
                data.insert((*list).into(), Value::Array(items));
            }
        }
        let slice = &view.scores[range(view.scores.len())];
        if !slice.is_empty() {
            let items = slice
                .iter()
                .map(|(n, s)| Value::Array(vec![Value::from(*n), score_value(*s)]))
                .collect();
            data.insert("scores".into(), Value::Array(items));
        }
        out.push(Value::Object(data));
    }
    Ok(out)
}

fn score_value(score: Score) -> Value {
    Number::from_f64(score.as_f64()).map_or(Value::Null, Value::Number)
}

fn decode_score(value: &Value) -> Option<Score> {
    let x = value.as_f64()?;
    let thousandths = (x * 1000.0).round();
    // Only what the encoder writes: at most 3 decimals, in 0..=1.
    if (x * 1000.0 - thousandths).abs() > 1e-6 {
        return None;
    }
    Score::from_f64(x).filter(|s| f64::from(s.thousandths()) == thousandths)
}

/// One decoded part of a round, borrowing from the entry's `data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartView<'a> {
    pub(crate) round: &'a str,
    pub(crate) part: u32,
    pub(crate) parts: u32,
    pub(crate) digest: [u8; 32],
    /// Present on part 0 only.
    pub(crate) header: Option<Header<'a>>,
    pub(crate) lists: [Vec<&'a str>; 5],
    pub(crate) scores: Vec<(&'a str, Score)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header<'a> {
    pub(crate) mode: Mode,
    pub(crate) boundary: Boundary,
    pub(crate) basis: Basis,
    pub(crate) threshold: Option<Score>,
    pub(crate) inventory: Option<&'a str>,
    pub(crate) first_prompt: Option<FirstPromptView<'a>>,
}

/// Decodes one entry's `data`. Strict: every field is checked and a field version 1 does not
/// define makes the entry undecodable, so a hand edit cannot hide in an extra field.
pub(crate) fn decode_part(data: &Value) -> Result<PartView<'_>, DecodeError> {
    let obj = data.as_object().ok_or(DecodeError::NotAnObject)?;
    // A greater `v` is a future version; a smaller one never existed, so it is damage.
    match obj.get("v").and_then(Value::as_u64) {
        Some(FORMAT_VERSION) => {}
        Some(v) if v > FORMAT_VERSION => return Err(DecodeError::UnknownVersion),
        _ => return Err(DecodeError::Field("v")),
    }
    let str_field = |key: &'static str| obj.get(key).and_then(Value::as_str);
    let round = str_field("round")
        .filter(|r| is_round_id(r))
        .ok_or(DecodeError::Field("round"))?;
    let parts = obj
        .get("parts")
        .and_then(Value::as_u64)
        .filter(|p| (1..=u64::from(MAX_PARTS)).contains(p))
        .ok_or(DecodeError::Field("parts"))? as u32;
    let part = obj
        .get("part")
        .and_then(Value::as_u64)
        .filter(|p| *p < u64::from(parts))
        .ok_or(DecodeError::Field("part"))? as u32;
    let mut digest = [0u8; 32];
    str_field("digest")
        .filter(|d| d.len() == 64 && is_fingerprint(d))
        .and_then(|d| hex::decode_to_slice(d, &mut digest).ok())
        .ok_or(DecodeError::Field("digest"))?;

    let header = if part == 0 {
        let mode = str_field("mode")
            .and_then(Mode::parse)
            .ok_or(DecodeError::Field("mode"))?;
        let boundary = str_field("boundary")
            .and_then(Boundary::parse)
            .ok_or(DecodeError::Field("boundary"))?;
        let basis = str_field("basis")
            .and_then(Basis::parse)
            .ok_or(DecodeError::Field("basis"))?;
        let threshold = match obj.get("threshold") {
            None => None,
            Some(v) => Some(decode_score(v).ok_or(DecodeError::Field("threshold"))?),
        };
        let inventory = match obj.get("inventory") {
            None => None,
            Some(v) => Some(
                v.as_str()
                    .filter(|f| is_fingerprint(f))
                    .ok_or(DecodeError::Field("inventory"))?,
            ),
        };
        let first_prompt = match obj.get("firstPrompt") {
            None => None,
            Some(Value::String(s)) if s == "next-user-message" => {
                Some(FirstPromptView::NextUserMessage)
            }
            Some(Value::Object(o)) if o.len() == 1 => Some(FirstPromptView::Entry(
                o.get("entry")
                    .and_then(Value::as_str)
                    .filter(|id| is_entry_id(id))
                    .ok_or(DecodeError::Field("firstPrompt"))?,
            )),
            Some(_) => return Err(DecodeError::Field("firstPrompt")),
        };
        Some(Header {
            mode,
            boundary,
            basis,
            threshold,
            inventory,
            first_prompt,
        })
    } else {
        None
    };

    let mut known = 5;
    if header.is_some() {
        known += 3;
        for key in ["threshold", "inventory", "firstPrompt"] {
            known += usize::from(obj.contains_key(key));
        }
    }
    let mode = header.as_ref().map(|h| h.mode);
    let mut lists: [Vec<&str>; 5] = Default::default();
    for (index, key) in LISTS.iter().enumerate().take(5) {
        let Some(value) = obj.get(*key) else { continue };
        known += 1;
        let items = value
            .as_array()
            .filter(|a| !a.is_empty() && a.len() <= MAX_NAMES_PER_CHUNK)
            .ok_or(DecodeError::Field(key))?;
        let list = &mut lists[index];
        list.reserve_exact(items.len());
        for item in items {
            let name = item.as_str().ok_or(DecodeError::Field(key))?;
            // The mode is known on part 0 only; later parts are checked when the round is
            // assembled (see `assemble`).
            if !name_ok(mode, index, name) {
                return Err(DecodeError::Field(key));
            }
            list.push(name);
        }
    }
    let mut scores = Vec::new();
    if let Some(value) = obj.get("scores") {
        known += 1;
        let items = value
            .as_array()
            .filter(|a| !a.is_empty() && a.len() <= MAX_NAMES_PER_CHUNK)
            .ok_or(DecodeError::Field("scores"))?;
        scores.reserve_exact(items.len());
        for item in items {
            let pair = item
                .as_array()
                .filter(|p| p.len() == 2)
                .ok_or(DecodeError::Field("scores"))?;
            let name = pair[0]
                .as_str()
                .filter(|n| name_ok(mode, 5, n))
                .ok_or(DecodeError::Field("scores"))?;
            let score = decode_score(&pair[1]).ok_or(DecodeError::Field("scores"))?;
            scores.push((name, score));
        }
    }
    if known != obj.len() {
        return Err(DecodeError::UnknownField);
    }
    Ok(PartView {
        round,
        part,
        parts,
        digest,
        header,
        lists,
        scores,
    })
}

/// With the mode unknown (a later part), mode-dependent lists are checked as names here and as
/// group keys when the round is assembled.
fn name_ok(mode: Option<Mode>, list_index: usize, name: &str) -> bool {
    match (mode, list_index) {
        (None, 4 | 5) => is_recordable_name(name),
        (Some(mode), _) => check_name(mode, list_index, name).is_ok(),
        (None, _) => check_name(Mode::Tools, list_index, name).is_ok(),
    }
}

/// Whether `name` is acceptable in list `list_index` of a round in `mode` (for assembly).
fn name_fits(mode: Mode, list_index: usize, name: &str) -> bool {
    check_name(mode, list_index, name).is_ok()
}

pub(crate) enum AssembleError {
    Torn,
    Mismatch,
    Undecodable,
}

/// Joins a complete set of parts into one round and checks the digest.
pub(crate) fn assemble<'a>(parts: &[PartView<'a>]) -> Result<RoundView<'a>, AssembleError> {
    let first = parts.first().ok_or(AssembleError::Torn)?;
    let count = first.parts as usize;
    if parts
        .iter()
        .any(|p| p.parts != first.parts || p.digest != first.digest || p.round != first.round)
    {
        return Err(AssembleError::Mismatch);
    }
    let mut ordered: Vec<Option<&PartView<'a>>> = vec![None; count];
    for part in parts {
        let slot = &mut ordered[part.part as usize];
        if slot.is_some() {
            return Err(AssembleError::Torn);
        }
        *slot = Some(part);
    }
    let Some(ordered) = ordered.into_iter().collect::<Option<Vec<_>>>() else {
        return Err(AssembleError::Torn);
    };
    let header = ordered[0]
        .header
        .as_ref()
        .ok_or(AssembleError::Undecodable)?;
    let mut lists: [Vec<&'a str>; 5] = Default::default();
    for (index, list) in lists.iter_mut().enumerate() {
        list.reserve_exact(ordered.iter().map(|p| p.lists[index].len()).sum());
        for part in &ordered {
            list.extend_from_slice(&part.lists[index]);
        }
    }
    let mut scores = Vec::with_capacity(ordered.iter().map(|p| p.scores.len()).sum());
    for part in &ordered {
        scores.extend_from_slice(&part.scores);
    }
    // Later parts were decoded without knowing the mode.
    if header.mode == Mode::Mcp
        && (lists[4].iter().any(|n| !name_fits(Mode::Mcp, 4, n))
            || scores.iter().any(|(n, _)| !name_fits(Mode::Mcp, 5, n)))
    {
        return Err(AssembleError::Undecodable);
    }
    let [tools, groups, allowlisted_tools, allowlisted_groups, considered] = lists;
    let view = RoundView {
        id: first.round,
        mode: header.mode,
        boundary: header.boundary,
        basis: header.basis,
        threshold: header.threshold,
        inventory: header.inventory,
        first_prompt: header.first_prompt,
        tools,
        groups,
        allowlisted_tools,
        allowlisted_groups,
        considered,
        scores,
    };
    if view.digest() != first.digest {
        return Err(AssembleError::Mismatch);
    }
    Ok(view)
}

/// Decodes the `data` of a single-part round entry back into a [`Round`], checking its digest.
/// Rounds spanning several entries are assembled as the fold reads the branch; this is for
/// tools and tests that look at one entry.
pub fn decode_single(data: &Value) -> Result<Round, DecodeError> {
    let part = decode_part(data)?;
    if part.parts != 1 {
        return Err(DecodeError::Field("parts"));
    }
    let view = assemble(&[part]).map_err(|_| DecodeError::Field("digest"))?;
    Ok(view.to_round())
}

impl RoundView<'_> {
    /// An owned copy.
    pub(crate) fn to_round(&self) -> Round {
        let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let keys = |v: &[&str]| {
            v.iter()
                .filter_map(|s| GroupKey::from_canonical(s))
                .collect::<Vec<_>>()
        };
        Round {
            id: self.id.to_owned(),
            mode: self.mode,
            boundary: self.boundary,
            basis: self.basis,
            tools: own(&self.tools),
            groups: keys(&self.groups),
            allowlisted_tools: own(&self.allowlisted_tools),
            allowlisted_groups: keys(&self.allowlisted_groups),
            considered: own(&self.considered),
            scores: self
                .scores
                .iter()
                .map(|(n, s)| ((*n).to_owned(), *s))
                .collect(),
            threshold: self.threshold,
            inventory: self.inventory.map(str::to_owned),
            first_prompt: self.first_prompt.map(|f| match f {
                FirstPromptView::NextUserMessage => FirstPromptRef::NextUserMessage,
                FirstPromptView::Entry(id) => FirstPromptRef::Entry(id.to_owned()),
            }),
        }
    }
}
