//! What the session reader needs from one JSONL line without decoding it whole: the entry's
//! `type`, `id`, `parentId`, `customType` and, for messages, `message.role`.
//!
//! Lines up to [`MAX_DECODED_LINE_BYTES`] are parsed with serde_json, skipping every other value
//! (so a line JSON.parse would reject is rejected here too). Longer lines (tool results and
//! images make them common) go through [`LineScanner`], a byte-at-a-time state machine that
//! keeps only a few small strings, so the branch stays whole without holding the line.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// Lines longer than this are never decoded whole.
pub const MAX_DECODED_LINE_BYTES: usize = 1 << 20;
/// The longest id kept; longer ones are treated as missing (Pi's are 8 hex digits, 36 at most).
const MAX_ID_BYTES: usize = 128;
/// The deepest nesting the scanner follows; deeper lines are malformed.
const MAX_DEPTH: usize = 4096;

/// The `type` of a session entry, as far as the reader distinguishes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EntryType {
    /// The header (`session`).
    Session,
    /// `message`.
    Message,
    /// `custom` (extension state; never in the model's context).
    Custom,
    /// `custom_message`.
    CustomMessage,
    /// `compaction`.
    Compaction,
    /// `branch_summary`.
    BranchSummary,
    /// `label`.
    Label,
    /// `model_change`.
    ModelChange,
    /// `thinking_level_change`.
    ThinkingLevelChange,
    /// `session_info`.
    SessionInfo,
    /// `usage`.
    Usage,
    /// `context_edit`.
    ContextEdit,
    /// Any other string.
    Other,
    /// No string `type`.
    #[default]
    Missing,
}

impl EntryType {
    const KNOWN: [(&'static str, EntryType); 12] = [
        ("session", EntryType::Session),
        ("message", EntryType::Message),
        ("custom", EntryType::Custom),
        ("custom_message", EntryType::CustomMessage),
        ("compaction", EntryType::Compaction),
        ("branch_summary", EntryType::BranchSummary),
        ("label", EntryType::Label),
        ("model_change", EntryType::ModelChange),
        ("thinking_level_change", EntryType::ThinkingLevelChange),
        ("session_info", EntryType::SessionInfo),
        ("usage", EntryType::Usage),
        ("context_edit", EntryType::ContextEdit),
    ];

    fn parse(text: &str) -> EntryType {
        EntryType::KNOWN
            .iter()
            .find(|(s, _)| *s == text)
            .map_or(EntryType::Other, |(_, t)| *t)
    }

    /// Pi's spelling; `other` and `missing` for the rest.
    pub fn as_str(self) -> &'static str {
        EntryType::KNOWN.iter().find(|(_, t)| *t == self).map_or(
            if self == EntryType::Missing {
                "missing"
            } else {
                "other"
            },
            |(s, _)| s,
        )
    }

    pub(crate) fn code(self) -> u8 {
        EntryType::KNOWN
            .iter()
            .position(|(_, t)| *t == self)
            .map_or(if self == EntryType::Missing { 13 } else { 12 }, |p| {
                p as u8
            })
    }

    pub(crate) fn from_code(code: u8) -> EntryType {
        match code {
            13 => EntryType::Missing,
            c => EntryType::KNOWN
                .get(usize::from(c))
                .map_or(EntryType::Other, |(_, t)| *t),
        }
    }
}

/// The few fields of a line the reader keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// `type` ([`EntryType::Missing`] when not a string).
    pub entry_type: EntryType,
    /// `id`, when a string of at most 128 bytes.
    pub id: Option<String>,
    /// `parentId`, when a string of at most 128 bytes (`null` and anything else: none).
    pub parent_id: Option<String>,
    /// Whether `parentId` is present, not `null` and yet not such a string (a number, an
    /// object, an escaped or over-long string): the entry names a parent no entry can be.
    pub parent_unusable: bool,
    /// Whether `customType` is `context-decisions-tools`.
    pub ledger_custom_type: bool,
    /// Whether `message` is an object whose `role` is `user`.
    pub user_role: bool,
}

impl Head {
    /// The entry's type.
    pub fn entry_type(&self) -> EntryType {
        self.entry_type
    }

    /// Whether the line is a ledger entry (`custom` with the ledger's `customType`).
    pub fn is_ledger(&self) -> bool {
        self.entry_type == EntryType::Custom && self.ledger_custom_type
    }

    /// Whether the line is a user message.
    pub fn is_user_message(&self) -> bool {
        self.entry_type == EntryType::Message && self.user_role
    }
}

/// A value read as a string and mapped without allocating; anything else is skipped as `None`.
pub(crate) struct StrSeed<F>(pub(crate) F);

impl<'de, T, F: FnOnce(&str) -> T> de::DeserializeSeed<'de> for StrSeed<F> {
    type Value = Option<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        d.deserialize_any(StrSeedVisitor(self.0))
    }
}

struct StrSeedVisitor<F>(F);

macro_rules! none_of {
    ($($name:ident: $t:ty),*) => {$(
        fn $name<E: de::Error>(self, _: $t) -> Result<Self::Value, E> { Ok(None) }
    )*};
}

impl<'de, T, F: FnOnce(&str) -> T> Visitor<'de> for StrSeedVisitor<F> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<T>, E> {
        Ok(Some((self.0)(v)))
    }
    none_of!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64);
    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<T>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<T>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

fn bounded(s: Cow<'_, str>) -> Option<String> {
    (s.len() <= MAX_ID_BYTES).then(|| s.into_owned())
}

/// A value that is kept when it is a string and skipped otherwise.
struct MaybeStr(Option<String>);

impl<'de> serde::Deserialize<'de> for MaybeStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MaybeStrVisitor)
    }
}

struct MaybeStrVisitor;

macro_rules! none_for {
    ($($name:ident: $t:ty),*) => {$(
        fn $name<E: de::Error>(self, _: $t) -> Result<Self::Value, E> { Ok(MaybeStr(None)) }
    )*};
}

impl<'de> Visitor<'de> for MaybeStrVisitor {
    type Value = MaybeStr;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<MaybeStr, E> {
        Ok(MaybeStr(bounded(Cow::Borrowed(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<MaybeStr, E> {
        Ok(MaybeStr(bounded(Cow::Borrowed(v))))
    }
    none_for!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64);
    fn visit_unit<E: de::Error>(self) -> Result<MaybeStr, E> {
        Ok(MaybeStr(None))
    }
    fn visit_none<E: de::Error>(self) -> Result<MaybeStr, E> {
        Ok(MaybeStr(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MaybeStr, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(MaybeStr(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MaybeStr, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(MaybeStr(None))
    }
}

/// `parentId`: `null`, a usable string (at most 128 bytes), or anything else (unusable).
struct ParentId {
    id: Option<String>,
    unusable: bool,
}

impl<'de> serde::Deserialize<'de> for ParentId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        const NONE: ParentId = ParentId {
            id: None,
            unusable: false,
        };
        const UNUSABLE: ParentId = ParentId {
            id: None,
            unusable: true,
        };
        impl<'de> Visitor<'de> for V {
            type Value = ParentId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ParentId, E> {
                Ok(match bounded(Cow::Borrowed(v)) {
                    Some(id) => ParentId {
                        id: Some(id),
                        unusable: false,
                    },
                    None => UNUSABLE,
                })
            }
            fn visit_unit<E: de::Error>(self) -> Result<ParentId, E> {
                Ok(NONE)
            }
            fn visit_none<E: de::Error>(self) -> Result<ParentId, E> {
                Ok(NONE)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<ParentId, E> {
                Ok(UNUSABLE)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<ParentId, E> {
                Ok(UNUSABLE)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<ParentId, E> {
                Ok(UNUSABLE)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<ParentId, E> {
                Ok(UNUSABLE)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ParentId, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(UNUSABLE)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ParentId, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(UNUSABLE)
            }
        }
        d.deserialize_any(V)
    }
}

/// `message`: whether it is an object whose `role` is `user`.
struct Message(bool);

impl<'de> serde::Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Message;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
                let mut user = false;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if key == "role" {
                        user = map.next_value_seed(StrSeed(|r: &str| r == "user"))? == Some(true);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Message(user))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Message, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Message(false))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Message, E> {
                Ok(Message(false))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Message, E> {
                Ok(Message(false))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Message, E> {
                Ok(Message(false))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Message, E> {
                Ok(Message(false))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Message, E> {
                Ok(Message(false))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Message, E> {
                Ok(Message(false))
            }
        }
        d.deserialize_any(V)
    }
}

/// The top level: the fields the reader keeps; the last duplicate wins, as with JSON.parse.
struct HeadDe(Head);

impl<'de> serde::Deserialize<'de> for HeadDe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = HeadDe;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HeadDe, A::Error> {
                let mut head = Head::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "type" => {
                            head.entry_type = map
                                .next_value_seed(StrSeed(EntryType::parse))?
                                .unwrap_or(EntryType::Missing)
                        }
                        "id" => head.id = map.next_value::<MaybeStr>()?.0,
                        "parentId" => {
                            let parent = map.next_value::<ParentId>()?;
                            head.parent_unusable = parent.unusable;
                            head.parent_id = parent.id;
                        }
                        "customType" => {
                            head.ledger_custom_type = map
                                .next_value_seed(StrSeed(|t: &str| t == crate::CUSTOM_TYPE))?
                                == Some(true)
                        }
                        "message" => head.user_role = map.next_value::<Message>()?.0,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(HeadDe(head))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<HeadDe, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(HeadDe(Head::default()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<HeadDe, E> {
                Ok(HeadDe(Head::default()))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<HeadDe, E> {
                Ok(HeadDe(Head::default()))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<HeadDe, E> {
                Ok(HeadDe(Head::default()))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<HeadDe, E> {
                Ok(HeadDe(Head::default()))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<HeadDe, E> {
                Ok(HeadDe(Head::default()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<HeadDe, E> {
                Ok(HeadDe(Head::default()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses a line of at most [`MAX_DECODED_LINE_BYTES`]; `None` when it is not valid JSON.
pub fn parse_head(line: &[u8]) -> Option<Head> {
    serde_json::from_slice::<HeadDe>(line).ok().map(|h| h.0)
}

/// The stub the session reader makes of an entry it cannot decode whole: its `type`, `id` and
/// `parentId`, and that it is a user message (`message.role`) or a ledger entry
/// (`customType`). A ledger entry's stub has no `data`, so the fold reports it undecodable.
pub(crate) fn stub(
    entry_type: EntryType,
    id: Option<&str>,
    parent_id: Option<&str>,
    user: bool,
    ledger: bool,
) -> serde_json::Value {
    let mut obj = serde_json::Map::new();
    obj.insert("type".into(), entry_type.as_str().into());
    obj.insert("id".into(), id.map_or(serde_json::Value::Null, Into::into));
    obj.insert(
        "parentId".into(),
        parent_id.map_or(serde_json::Value::Null, Into::into),
    );
    if user {
        obj.insert("message".into(), serde_json::json!({"role": "user"}));
    }
    if ledger {
        obj.insert("customType".into(), crate::CUSTOM_TYPE.into());
    }
    serde_json::Value::Object(obj)
}

/// One entry's JSON text decoded, a lone surrogate escape in it (half an emoji a tool result cut
/// in two) read as U+FFFD; `None` when it does not decode even so.
pub(crate) fn decode_entry(bytes: &[u8]) -> Option<serde_json::Value> {
    if let Ok(value) = serde_json::from_slice(bytes) {
        return Some(value);
    }
    let fixed = pcd_model::lone_surrogates_replaced(std::str::from_utf8(bytes).ok()?)?;
    serde_json::from_str(&fixed).ok()
}

/// A branch's entries from its JSON array text (the extension's `JSON.stringify` of Pi's
/// `getBranch()`), each decoded on its own (a lone surrogate escape read as U+FFFD, as the session
/// reader reads it): an entry that does not decode even so (nesting deeper than the decoder
/// follows) becomes the stub the session reader makes of such a line (its head, read by a
/// [`LineScanner`]), so one odd entry never makes the whole branch unreadable, and the addon
/// reads a branch as the program reads its file. `None` when the text is not one JSON array of
/// balanced values.
pub fn branch_entries(text: &str) -> Option<Vec<serde_json::Value>> {
    if let Ok(serde_json::Value::Array(entries)) = serde_json::from_str(text) {
        return Some(entries);
    }
    array_elements(text)?
        .into_iter()
        .map(|element| {
            if let Some(value) = decode_entry(element.as_bytes()) {
                return Some(value);
            }
            let mut scanner = LineScanner::new();
            scanner.feed(element.as_bytes());
            let head = scanner.finish()?;
            Some(stub(
                head.entry_type,
                head.id.as_deref(),
                head.parent_id.as_deref(),
                head.user_role,
                head.ledger_custom_type,
            ))
        })
        .collect()
}

/// The elements of a JSON array text, each as its own text (trimmed), found without decoding
/// them (no recursion, however deep they nest); `None` when the text is not one array.
fn array_elements(text: &str) -> Option<Vec<&str>> {
    // Just past the opening bracket, after any leading whitespace.
    let offset = text.len() - text.trim_start().strip_prefix('[')?.len();
    let mut out = Vec::new();
    let (mut depth, mut in_string, mut escape) = (0usize, false, false);
    let mut start = offset;
    for (i, b) in text.bytes().enumerate().skip(offset) {
        if in_string {
            match b {
                _ if escape => escape = false,
                b'\\' => escape = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' if depth > 0 => depth -= 1,
            b',' if depth == 0 => {
                let element = text[start..i].trim();
                if element.is_empty() {
                    return None;
                }
                out.push(element);
                start = i + 1;
            }
            b']' => {
                let element = text[start..i].trim();
                match (element.is_empty(), out.is_empty()) {
                    (false, _) => out.push(element),
                    (true, false) => return None, // a trailing comma
                    (true, true) => {}
                }
                return text[i + 1..].trim().is_empty().then_some(out);
            }
            b'}' => return None,
            _ => {}
        }
    }
    None
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Type,
    Id,
    ParentId,
    CustomType,
    Message,
    Role,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    object: bool,
    expect_key: bool,
    is_message: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Capture {
    Nothing,
    Key,
    Value(Field),
}

/// A streaming scanner for one long line: feed it the line in pieces, then [`LineScanner::finish`].
///
/// It tracks nesting and strings, keeps the top-level `type`, `id`, `parentId`, `customType`
/// and `message.role` (each at most 128 bytes, without escapes), and checks that brackets
/// balance and that exactly one top-level value is present. It does not validate numbers or
/// literals: a long line with a malformed literal is indexed, where JSON.parse would skip it.
#[derive(Debug)]
pub struct LineScanner {
    stack: Vec<Frame>,
    in_string: bool,
    escape: bool,
    capture: Capture,
    captured: Vec<u8>,
    spoiled: bool,
    key_field: Option<Field>,
    head: Head,
    started: bool,
    closed: bool,
    broken: bool,
}

impl Default for LineScanner {
    fn default() -> Self {
        LineScanner::new()
    }
}

impl LineScanner {
    /// A scanner at the start of a line.
    pub fn new() -> LineScanner {
        LineScanner {
            stack: Vec::new(),
            in_string: false,
            escape: false,
            capture: Capture::Nothing,
            captured: Vec::new(),
            spoiled: false,
            key_field: None,
            head: Head::default(),
            started: false,
            closed: false,
            broken: false,
        }
    }

    fn value_start(&mut self) {
        if self.stack.is_empty() {
            if self.started {
                self.broken = true;
            }
            self.started = true;
        }
    }

    /// Feeds the next piece of the line.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() && !self.broken {
            if self.in_string {
                if self.capture == Capture::Nothing && !self.escape {
                    // The common case in a long line: skip to the next quote or backslash.
                    match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                        Some(p) => i += p,
                        None => return,
                    }
                }
                let b = bytes[i];
                i += 1;
                if self.escape {
                    self.escape = false;
                    continue;
                }
                match b {
                    b'\\' => {
                        self.escape = true;
                        self.spoiled = true;
                    }
                    b'"' => {
                        self.in_string = false;
                        self.end_string();
                    }
                    _ if self.capture != Capture::Nothing => {
                        if self.captured.len() < MAX_ID_BYTES {
                            self.captured.push(b);
                        } else {
                            self.spoiled = true;
                        }
                    }
                    _ => {}
                }
                continue;
            }
            let b = bytes[i];
            i += 1;
            match b {
                b' ' | b'\t' | b'\r' | b'\n' => {}
                b'"' => {
                    self.in_string = true;
                    self.captured.clear();
                    self.spoiled = false;
                    let depth = self.stack.len();
                    self.capture = match self.stack.last_mut() {
                        Some(f) if f.object && f.expect_key => {
                            if depth == 1 || f.is_message {
                                Capture::Key
                            } else {
                                Capture::Nothing
                            }
                        }
                        _ => {
                            self.value_start();
                            match self.key_field.take() {
                                Some(Field::Message) | None => Capture::Nothing,
                                Some(field) => Capture::Value(field),
                            }
                        }
                    };
                }
                b'{' | b'[' => {
                    self.value_start();
                    if self.stack.len() >= MAX_DEPTH || self.closed {
                        self.broken = true;
                        continue;
                    }
                    let is_message = b == b'{' && self.key_field == Some(Field::Message);
                    if self.key_field == Some(Field::ParentId) {
                        self.set_parent(None);
                    }
                    self.key_field = None;
                    self.stack.push(Frame {
                        object: b == b'{',
                        expect_key: b == b'{',
                        is_message,
                    });
                }
                b'}' | b']' => match self.stack.pop() {
                    Some(f) if f.object == (b == b'}') => {
                        self.key_field = None;
                        if self.stack.is_empty() {
                            self.closed = true;
                        }
                    }
                    _ => self.broken = true,
                },
                b':' => match self.stack.last_mut() {
                    Some(f) if f.object && f.expect_key => f.expect_key = false,
                    _ => self.broken = true,
                },
                b',' => match self.stack.last_mut() {
                    Some(f) => {
                        f.expect_key = f.object;
                        self.key_field = None;
                    }
                    None => self.broken = true,
                },
                _ => {
                    // A literal or a number: it ends whatever field was waiting for a value.
                    if self.stack.is_empty() && !self.started {
                        self.started = true;
                    } else if self.stack.is_empty() && self.closed {
                        self.broken = true;
                    }
                    if self.key_field == Some(Field::ParentId) {
                        // `null` names no parent; a number or `true`/`false` names one no entry
                        // can be.
                        if b == b'n' {
                            self.head.parent_id = None;
                            self.head.parent_unusable = false;
                        } else {
                            self.set_parent(None);
                        }
                    }
                    self.key_field = None;
                }
            }
        }
    }

    fn end_string(&mut self) {
        let text = (!self.spoiled)
            .then(|| std::str::from_utf8(&self.captured).ok())
            .flatten();
        match self.capture {
            Capture::Nothing => {}
            Capture::Key => {
                let in_message = self.stack.last().is_some_and(|f| f.is_message);
                self.key_field = match (in_message, text) {
                    (false, Some("type")) => Some(Field::Type),
                    (false, Some("id")) => Some(Field::Id),
                    (false, Some("parentId")) => Some(Field::ParentId),
                    (false, Some("customType")) => Some(Field::CustomType),
                    (false, Some("message")) => Some(Field::Message),
                    (true, Some("role")) => Some(Field::Role),
                    _ => None,
                };
            }
            Capture::Value(field) => match field {
                Field::Type => {
                    self.head.entry_type = text.map_or(EntryType::Other, EntryType::parse)
                }
                Field::Id => self.head.id = text.map(str::to_owned),
                Field::ParentId => {
                    let parent = text.map(str::to_owned);
                    self.set_parent(parent);
                }
                Field::CustomType => {
                    self.head.ledger_custom_type = text == Some(crate::CUSTOM_TYPE)
                }
                Field::Role => self.head.user_role = text == Some("user"),
                Field::Message => {}
            },
        }
        self.capture = Capture::Nothing;
    }

    /// A `parentId` value: a usable string, or (`None`) one no entry can be.
    fn set_parent(&mut self, parent: Option<String>) {
        self.head.parent_unusable = parent.is_none();
        self.head.parent_id = parent;
    }

    /// The fields found, or `None` when the line is not one balanced JSON value.
    pub fn finish(self) -> Option<Head> {
        (!self.broken && !self.in_string && self.stack.is_empty() && self.started)
            .then_some(self.head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn scan(line: &[u8], piece: usize) -> Option<Head> {
        let mut s = LineScanner::new();
        for chunk in line.chunks(piece.max(1)) {
            s.feed(chunk);
        }
        s.finish()
    }

    #[test]
    fn a_branch_keeps_every_entry_an_odd_one_becoming_its_stub() {
        let ledger = r#"{"type":"custom","customType":"context-decisions-tools","id":"b","parentId":"a","data":{"v":1}}"#;
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        let text = format!(
            r#" [ {{"type":"message","id":"a","parentId":null,"message":{{"role":"user","content":"cut \ud83d here"}}}},
              {ledger},
              {{"type":"message","id":"c","parentId":"b","message":{{"role":"toolResult","content":{deep}}}}} ] "#
        );
        assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
        let entries = branch_entries(&text).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(
            entries[0],
            serde_json::json!({"type": "message", "id": "a", "parentId": null,
                               "message": {"role": "user", "content": "cut \u{FFFD} here"}})
        );
        assert_eq!(
            entries[1],
            serde_json::from_str::<serde_json::Value>(ledger).unwrap()
        );
        assert_eq!(
            entries[2],
            serde_json::json!({"type": "message", "id": "c", "parentId": "b"})
        );
        // A ledger entry that does not decode keeps its kind, without data.
        let torn = format!(
            r#"[{{"type":"custom","customType":"context-decisions-tools","id":"d","parentId":null,"data":{deep}}}]"#
        );
        assert_eq!(
            branch_entries(&torn).unwrap()[0],
            serde_json::json!({"type": "custom", "id": "d", "parentId": null,
                               "customType": "context-decisions-tools"})
        );
        // A valid array is read as it is; `[]` is empty.
        assert_eq!(
            branch_entries("[]").unwrap(),
            Vec::<serde_json::Value>::new()
        );
        assert_eq!(branch_entries(&format!("[{ledger}]")).unwrap().len(), 1);
    }

    #[test]
    fn text_that_is_not_one_array_is_no_branch() {
        for text in [
            "",
            "{}",
            "[1,]",
            "[,1]",
            "[1,,2]",
            "[1] [2]",
            "[{\"a\": \"\\ud800\"}",
            "[{\"a\": \"\\ud800\"}}]",
            "[{\"a\": \"\\ud800]",
            "[{\"a\": \"\\ud800\" ]}]",
        ] {
            assert_eq!(branch_entries(text), None, "{text}");
        }
    }

    #[test]
    fn heads_of_pi_lines() {
        let custom = br#"{"type":"custom","customType":"context-decisions-tools","data":{"id":"inner","type":"x"},"id":"a2331584","parentId":"b15ae340","timestamp":"t"}"#;
        let message = br#"{"type":"message","id":"c1","parentId":null,"timestamp":"t","message":{"content":[{"role":"nested"}],"role":"user"}}"#;
        for line in [&custom[..], &message[..]] {
            let parsed = parse_head(line).unwrap();
            for piece in [1, 3, 7, 1000] {
                assert_eq!(scan(line, piece).as_ref(), Some(&parsed), "{piece}");
            }
        }
        let head = parse_head(custom).unwrap();
        assert_eq!(head.id.as_deref(), Some("a2331584"));
        assert_eq!(head.parent_id.as_deref(), Some("b15ae340"));
        assert_eq!(head.entry_type(), EntryType::Custom);
        assert!(head.is_ledger());
        let head = parse_head(message).unwrap();
        assert!(head.is_user_message());
        assert!(!head.is_ledger());
        assert_eq!(head.parent_id, None);
    }

    #[test]
    fn the_last_duplicate_wins_and_odd_values_are_skipped() {
        let head = parse_head(br#"{"id":"a","id":"b","type":5,"parentId":{"x":1}}"#).unwrap();
        assert_eq!(head.id.as_deref(), Some("b"));
        assert_eq!(head.entry_type, EntryType::Missing);
        assert_eq!(head.parent_id, None);
        assert!(head.parent_unusable, "a parent no entry can be");
        for line in [&br#"{"parentId":null}"#[..], br#"{"id":"a"}"#] {
            let head = parse_head(line).unwrap();
            assert!(!head.parent_unusable && head.parent_id.is_none());
        }
        assert_eq!(parse_head(b"[1,2]"), Some(Head::default()));
        assert_eq!(parse_head(br#"{"id":"a""#), None);
    }

    #[test]
    fn broken_lines_are_refused_by_the_scanner() {
        for line in [
            &br#"{"id":"a""#[..],
            br#"{"id":"a"]"#,
            br#"{"id":"a"} {"#,
            br#"{"a":"unterminated}"#,
            b"",
        ] {
            assert_eq!(scan(line, 2), None, "{}", String::from_utf8_lossy(line));
        }
    }

    proptest! {
        /// On valid JSON objects, the scanner finds what serde finds, however the line is cut.
        #[test]
        fn the_scanner_agrees_with_serde(
            ty in prop::option::of("[a-z_]{1,12}"),
            id in prop::option::of("[0-9a-f]{8}"),
            parent in prop_oneof![
                Just(serde_json::Value::Null),
                "[0-9a-f]{8}".prop_map(serde_json::Value::from),
                "[a-z]{129,140}".prop_map(serde_json::Value::from),
                any::<i32>().prop_map(serde_json::Value::from),
                any::<bool>().prop_map(serde_json::Value::from),
                Just(serde_json::json!({"id": "0000000a"})),
                Just(serde_json::json!(["0000000a"])),
            ],
            role in prop::option::of("user|assistant"),
            noise in prop::collection::vec(("[a-z]{1,6}", any::<u32>()), 0..4),
            piece in 1..64usize,
        ) {
            let mut obj = serde_json::Map::new();
            for (k, v) in &noise {
                obj.insert(k.clone(), serde_json::json!({"nested": [v, {"id": "zz"}], "s": "q\"\\"}));
            }
            if let Some(t) = &ty { obj.insert("type".into(), t.clone().into()); }
            if let Some(i) = &id { obj.insert("id".into(), i.clone().into()); }
            obj.insert("parentId".into(), parent.clone());
            if let Some(r) = &role {
                obj.insert("message".into(), serde_json::json!({"content": "x", "role": r}));
            }
            let line = serde_json::to_vec(&serde_json::Value::Object(obj)).unwrap();
            let parsed = parse_head(&line).unwrap();
            prop_assert_eq!(scan(&line, piece), Some(parsed));
        }
    }
}
