//! Structure-aware: whole Pi session files with real ledger rounds, some damaged, folded by the
//! session reader and by `pcd_ledger::fold`.
//!
//! The input (`arbitrary`) is a plan: a header version, then items (user and assistant messages,
//! other entries, malformed and blank lines, and rounds encoded by the real encoder in parts of
//! one to three names a list), each linked to its parent as Pi links them or otherwise (a fork
//! from an earlier entry, a new root, a parent that is not in the file, a later entry: a cycle,
//! a number); rounds may be damaged (a part dropped from the middle or the end, parts shuffled,
//! the digest or a name edited, an unknown or impossible version, an extra field, data that is
//! not an object, an id dropped or numeric); the last line may be cut short; the leaf is Pi's or
//! a chosen entry.
//!
//! What must hold:
//! - the reader never panics, and its branch is a parent chain ending at the leaf;
//! - the state from the file reader equals `pcd_ledger::fold` over the same branch read as JSON,
//!   and the reader's findings end with the fold's;
//! - availability comes only from whole valid rounds: the state equals the state built by
//!   applying, on the live path (`BranchState::apply_round`), exactly the undamaged rounds whose
//!   parts all lie on the branch together (when another ledger entry lies between a round's
//!   parts, the weaker rule: every available name is in an undamaged round on the branch);
//! - damage is found: an undecodable part on the branch, an edited round whose parts are all on
//!   it, parts that disagree on the digest or the part count, parts out of order or with a gap,
//!   a ledger entry without an id, an orphan root or a cycle each leave a finding that untrusts
//!   the branch (a round cut short at its end leaves one that does not have to).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pcd_ledger::{
    encode_round_chunked, fold, Basis, Boundary, BranchState, FirstPromptRef, Round, Score,
    SessionFile, CUSTOM_TYPE,
};
use pcd_model::{AuditFindingCode, GroupKey, Mode};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::io::Cursor;

const TOOLS: [&str; 8] = [
    "read_file",
    "web_fetch",
    "mcp__one__search",
    "mcp__one__fetch",
    "mcp__two_x__page",
    "notes_add",
    "db_query",
    "bar_chart",
];
const GROUPS: [(&str, bool); 4] = [
    ("one", true),
    ("two-x", true),
    ("notes", false),
    ("db", false),
];
const MAX_ITEMS: usize = 24;
const MAX_LIST: usize = 6;

fn group(i: u8) -> GroupKey {
    let (name, mcp) = GROUPS[i as usize % GROUPS.len()];
    if mcp {
        GroupKey::for_mcp_server(name)
    } else {
        GroupKey::for_extension(name)
    }
}

#[derive(Debug, Arbitrary)]
struct Plan {
    version: u8,
    items: Vec<Item>,
    /// Cut the last line short at this position.
    truncate: Option<u16>,
    /// The leaf: Pi's (the last entry) or this entry's id.
    leaf: Option<u8>,
}

#[derive(Debug, Arbitrary)]
struct Item {
    kind: ItemKind,
    link: Link,
    long_id: bool,
}

#[derive(Debug, Arbitrary)]
enum ItemKind {
    User,
    Assistant,
    OtherCustom,
    Compaction,
    Garbage { ledger_like: bool },
    Blank,
    Round(Box<RoundSpec>),
}

/// How an item's first entry names its parent.
#[derive(Debug, Clone, Copy, Arbitrary)]
enum Link {
    /// The entry before it (Pi appending to the leaf).
    Previous,
    /// A fork from an earlier entry (after `/tree`).
    Earlier(u8),
    /// `parentId: null`: a new root.
    Root,
    /// An id no entry has.
    Missing,
    /// A later entry: a cycle when the later one descends from this one.
    Later(u8),
    /// A number.
    Numeric,
}

#[derive(Debug, Arbitrary)]
struct RoundSpec {
    mcp: bool,
    boundary: u8,
    basis: u8,
    tools: Vec<u8>,
    groups: Vec<u8>,
    allowlisted_tools: Vec<u8>,
    allowlisted_groups: Vec<u8>,
    considered: Vec<u8>,
    scores: Vec<(u8, u16)>,
    threshold: Option<u16>,
    inventory: bool,
    first_prompt: u8,
    chunk: u8,
    damage: Damage,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Damage {
    None,
    /// Parts written in another order (benign: the fold reorders a whole round).
    Shuffle(u8),
    /// Only the first parts written (a crash while appending).
    Interrupt(u8),
    /// A part other than the last dropped: a gap with parts after it.
    Tear(u8),
    EditDigest(u8),
    EditName(u8),
    /// `v` of one part: 0 (never existed), 2 or more (a future version), or a string.
    Version(u8, u8),
    ExtraField(u8),
    NotAnObject(u8),
    DropId(u8),
    NumericId(u8),
    /// `parts` of one part changed.
    EditParts(u8),
}

impl Damage {
    /// Whether the round's content is changed (it must then grant nothing). A dropped or
    /// numeric id changes where the entry is, not what it says: from version 2 on such an entry
    /// is on no branch, and in a version 1 file (no ids at all) it is where it always was.
    fn changes(self) -> bool {
        !matches!(
            self,
            Damage::None | Damage::Shuffle(_) | Damage::DropId(_) | Damage::NumericId(_)
        )
    }
}

/// What was written for one line, as the oracle knows it.
#[derive(Debug, Clone)]
struct Written {
    /// The usable id written (`None`: no `id`, or a number).
    id: Option<String>,
    /// The `parentId`: `None` for null, `Some(Ok(id))` a string, `Some(Err(()))` a number.
    parent: Option<Result<String, ()>>,
    what: What,
    timestamp: String,
}

#[derive(Debug, Clone)]
enum What {
    User,
    Other,
    /// A part of round `round` (index into the rounds), with its part index and whether this
    /// entry itself was made undecodable.
    Part {
        round: usize,
        part: usize,
        undecodable: bool,
    },
}

struct GenRound {
    round: Round,
    parts: usize,
    damage: Damage,
    /// The part whose digest or part count was edited.
    edited: Option<usize>,
}

fn names(list: &[u8], pick: impl Fn(u8) -> String) -> Vec<String> {
    let mut out: Vec<String> = list.iter().take(MAX_LIST).map(|i| pick(*i)).collect();
    let mut seen = HashSet::new();
    out.retain(|n| seen.insert(n.clone()));
    out
}

fn build_round(id: String, spec: &RoundSpec) -> Round {
    let mode = if spec.mcp { Mode::Mcp } else { Mode::Tools };
    let boundary = Boundary::ALL[spec.boundary as usize % Boundary::ALL.len()];
    let basis = Basis::ALL[spec.basis as usize % Basis::ALL.len()];
    let mut round = Round::new(id, mode, boundary, basis);
    let tool = |i: u8| TOOLS[i as usize % TOOLS.len()].to_owned();
    let key = |i: u8| group(i).as_str().to_owned();
    round.tools = names(&spec.tools, tool);
    round.groups = names(&spec.groups, key)
        .iter()
        .filter_map(|k| GroupKey::from_canonical(k))
        .collect();
    round.allowlisted_tools = names(&spec.allowlisted_tools, tool);
    round.allowlisted_groups = names(&spec.allowlisted_groups, key)
        .iter()
        .filter_map(|k| GroupKey::from_canonical(k))
        .collect();
    let candidate = |i: u8| if spec.mcp { key(i) } else { tool(i) };
    round.considered = names(&spec.considered, candidate);
    let mut seen = HashSet::new();
    round.scores = spec
        .scores
        .iter()
        .take(MAX_LIST)
        .map(|(i, s)| (candidate(*i), Score::from_thousandths(s % 1001).unwrap()))
        .filter(|(n, _)| seen.insert(n.clone()))
        .collect();
    round.threshold = spec
        .threshold
        .map(|t| Score::from_thousandths(t % 1001).unwrap());
    round.inventory = spec.inventory.then(|| "0123456789abcdef".to_owned());
    round.first_prompt = match spec.first_prompt % 3 {
        0 => None,
        1 => Some(FirstPromptRef::NextUserMessage),
        _ => Some(FirstPromptRef::Entry("0000abcd".to_owned())),
    };
    round
}

/// Edits a name in the first list that has one (a hand edit that leaves the digest alone).
fn edit_name(data: &mut Value) -> bool {
    for key in [
        "tools",
        "allowlistTools",
        "considered",
        "groups",
        "allowlistGroups",
    ] {
        if let Some(Value::Array(items)) = data.get_mut(key) {
            if let Some(Value::String(name)) = items.first_mut() {
                name.push('x');
                return true;
            }
        }
    }
    false
}

fn edit_digest(data: &mut Value) {
    if let Some(Value::String(d)) = data.get_mut("digest") {
        let first = if d.starts_with('0') { "1" } else { "0" };
        d.replace_range(0..1, first);
    }
}

struct Generated {
    bytes: Vec<u8>,
    /// Every line that parses as an entry, in file order (what the reader indexes).
    entries: Vec<Written>,
    rounds: Vec<GenRound>,
    version: u64,
    garbage: usize,
    truncated: bool,
}

fn generate(plan: &Plan) -> Generated {
    let version = [1u64, 2, 3, 3][plan.version as usize % 4];
    let header = if plan.version % 8 == 7 {
        // No `version` at all: a version 1 file.
        json!({"type": "session", "id": "fuzz-session", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"})
    } else {
        json!({"type": "session", "version": version, "id": "fuzz-session", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"})
    };
    let version = if plan.version % 8 == 7 { 1 } else { version };
    // First pass: the lines, with each item's requested link.
    let mut lines: Vec<(Option<Value>, String, Option<Link>)> = Vec::new(); // (entry, raw, link)
    let mut entries: Vec<Written> = Vec::new();
    let mut rounds: Vec<GenRound> = Vec::new();
    let mut garbage = 0;
    let mut counter = 0u32;
    let mut next_id = |long: bool| {
        counter += 1;
        if long {
            format!("entry-{counter}-with-a-longer-id")
        } else {
            format!("{:08x}", 0x1000 + counter)
        }
    };
    let stamp = |n: usize| format!("2026-01-01T00:{:02}:{:02}.000Z", (n / 60) % 60, n % 60);
    for item in plan.items.iter().take(MAX_ITEMS) {
        let push_entry = |mut value: Value,
                          written: Written,
                          link: Option<Link>,
                          lines: &mut Vec<(Option<Value>, String, Option<Link>)>,
                          entries: &mut Vec<Written>| {
            if let Some(id) = &written.id {
                value["id"] = json!(id);
            }
            value["timestamp"] = json!(written.timestamp);
            lines.push((Some(value), String::new(), link));
            entries.push(written);
        };
        let plain = |what: What, id: String, n: usize| Written {
            id: Some(id),
            parent: None,
            what,
            timestamp: stamp(n),
        };
        match &item.kind {
            ItemKind::User => {
                let w = plain(What::User, next_id(item.long_id), entries.len());
                push_entry(
                    json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "deploy it"}]}}),
                    w,
                    Some(item.link),
                    &mut lines,
                    &mut entries,
                );
            }
            ItemKind::Assistant => {
                let w = plain(What::Other, next_id(item.long_id), entries.len());
                push_entry(
                    json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]}}),
                    w,
                    Some(item.link),
                    &mut lines,
                    &mut entries,
                );
            }
            ItemKind::OtherCustom => {
                let w = plain(What::Other, next_id(item.long_id), entries.len());
                push_entry(
                    json!({"type": "custom", "customType": "someone-else", "data": {"v": 1, "round": "r1", "tools": ["db_query"]}}),
                    w,
                    Some(item.link),
                    &mut lines,
                    &mut entries,
                );
            }
            ItemKind::Compaction => {
                let w = plain(What::Other, next_id(item.long_id), entries.len());
                push_entry(
                    json!({"type": "compaction", "summary": "earlier work", "firstKeptEntryId": "00001001"}),
                    w,
                    Some(item.link),
                    &mut lines,
                    &mut entries,
                );
            }
            ItemKind::Garbage { ledger_like } => {
                garbage += 1;
                let raw = if *ledger_like {
                    format!("{{\"type\":\"custom\",\"customType\":\"{CUSTOM_TYPE}\",\"data\":{{\"v\":1,")
                } else {
                    "this is not json {".to_owned()
                };
                lines.push((None, raw, None));
            }
            ItemKind::Blank => lines.push((None, "   ".to_owned(), None)),
            ItemKind::Round(spec) => {
                let index = rounds.len();
                let round = build_round(format!("r{index}"), spec);
                let chunk = 1 + spec.chunk as usize % 3;
                let Ok(mut parts) = encode_round_chunked(&round, chunk) else {
                    panic!("the encoder refused a round of valid names: {round:?}");
                };
                let n = parts.len();
                let mut order: Vec<usize> = (0..n).collect();
                let mut damage = spec.damage;
                let pick = |i: u8| i as usize % n;
                match damage {
                    Damage::None => {}
                    Damage::Shuffle(seed) => {
                        order.rotate_left(seed as usize % n);
                        if seed & 0x80 != 0 {
                            order.reverse();
                        }
                        if order.iter().enumerate().all(|(i, p)| i == *p) {
                            damage = Damage::None;
                        }
                    }
                    Damage::Interrupt(k) => order.truncate(k as usize % n),
                    Damage::Tear(i) => {
                        if n < 2 {
                            damage = Damage::None;
                        } else {
                            order.remove(i as usize % (n - 1));
                        }
                    }
                    Damage::EditDigest(i) => edit_digest(&mut parts[pick(i)]),
                    Damage::EditName(i) => {
                        if !edit_name(&mut parts[pick(i)]) {
                            edit_digest(&mut parts[pick(i)]);
                        }
                    }
                    Damage::Version(i, v) => {
                        parts[pick(i)]["v"] = match v % 4 {
                            0 => json!(0),
                            1 => json!(2),
                            2 => json!(100 + u64::from(v)),
                            _ => json!("1"),
                        }
                    }
                    Damage::ExtraField(i) => parts[pick(i)]["extra"] = json!(true),
                    Damage::NotAnObject(i) => parts[pick(i)] = json!(["not", "an", "object"]),
                    Damage::EditParts(i) => {
                        let p = pick(i);
                        let now = parts[p]["parts"].as_u64().unwrap();
                        parts[p]["parts"] = json!(if now > 1 && i & 1 == 0 {
                            now - 1
                        } else {
                            now + 1
                        });
                        // A part index beyond the new count does not decode: still damage.
                    }
                    Damage::DropId(_) | Damage::NumericId(_) => {}
                }
                let undecodable_part = match damage {
                    Damage::Version(i, _) | Damage::ExtraField(i) | Damage::NotAnObject(i) => {
                        Some(pick(i))
                    }
                    _ => None,
                };
                let edited = match damage {
                    Damage::EditDigest(i) | Damage::EditParts(i) => Some(pick(i)),
                    _ => None,
                };
                let id_damaged = match damage {
                    Damage::DropId(i) | Damage::NumericId(i) => Some(pick(i)),
                    _ => None,
                };
                for (k, &p) in order.iter().enumerate() {
                    let link = (k == 0).then_some(item.link);
                    let id = next_id(item.long_id);
                    let written = Written {
                        id: (id_damaged != Some(p)).then_some(id.clone()),
                        parent: None,
                        what: What::Part {
                            round: index,
                            part: p,
                            undecodable: undecodable_part == Some(p),
                        },
                        timestamp: stamp(entries.len()),
                    };
                    let mut value = json!({"type": "custom", "customType": CUSTOM_TYPE, "data": parts[p].clone()});
                    if matches!(damage, Damage::NumericId(_)) && id_damaged == Some(p) {
                        value["id"] = json!(4242);
                    }
                    push_entry(value, written, link, &mut lines, &mut entries);
                }
                rounds.push(GenRound {
                    round,
                    parts: n,
                    damage,
                    edited,
                });
            }
        }
    }
    // Second pass: parents. Entries are those lines with a value, in order.
    let ids: Vec<Option<String>> = entries.iter().map(|e| e.id.clone()).collect();
    let mut e: usize = 0;
    for (value, _, link) in lines.iter_mut() {
        let Some(value) = value else { continue };
        let previous = e.checked_sub(1).and_then(|p| ids[p].clone());
        let parent: Option<Result<String, ()>> = match link.unwrap_or(Link::Previous) {
            Link::Previous => previous.map(Ok),
            Link::Earlier(k) if e > 0 => ids[k as usize % e].clone().map(Ok),
            Link::Earlier(_) => None,
            Link::Root => None,
            Link::Missing => Some(Ok("deadbeef".to_owned())),
            Link::Later(k) if e + 1 < ids.len() => {
                let later = e + 1 + k as usize % (ids.len() - e - 1);
                Some(Ok(ids[later]
                    .clone()
                    .unwrap_or_else(|| "deadbeef".to_owned())))
            }
            Link::Later(_) => Some(Ok("deadbeef".to_owned())),
            Link::Numeric => Some(Err(())),
        };
        // An entry whose predecessor has no usable id names a parent no entry has.
        let parent = match (link.unwrap_or(Link::Previous), &parent) {
            (Link::Previous, None) if e > 0 => Some(Ok("deadbeef".to_owned())),
            _ => parent,
        };
        value["parentId"] = match &parent {
            None => Value::Null,
            Some(Ok(id)) => json!(id),
            Some(Err(())) => json!(7),
        };
        entries[e].parent = parent;
        e += 1;
    }
    let mut text = String::new();
    text.push_str(&header.to_string());
    text.push('\n');
    let count = lines.len();
    let mut truncated = false;
    for (i, (value, raw, _)) in lines.iter().enumerate() {
        let line = value.as_ref().map_or_else(|| raw.clone(), Value::to_string);
        let last = i + 1 == count;
        match plan.truncate {
            Some(at) if last && value.is_some() && line.len() > 1 => {
                let mut cut = 1 + at as usize % (line.len() - 1);
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.push_str(&line[..cut]);
                truncated = true;
            }
            _ => {
                text.push_str(&line);
                text.push('\n');
            }
        }
    }
    if truncated {
        entries.pop();
    }
    Generated {
        bytes: text.into_bytes(),
        entries,
        rounds,
        version,
        garbage,
        truncated,
    }
}

fn untrusted(findings: &[pcd_model::AuditFinding]) -> bool {
    findings.iter().any(|f| f.code.untrusts_branch())
}

fuzz_target!(|plan: Plan| {
    let g = generate(&plan);
    let mut file = SessionFile::from_reader(Cursor::new(g.bytes.clone()))
        .expect("a file with a session header indexes");
    assert_eq!(
        file.len(),
        g.entries.len(),
        "every whole entry line is indexed"
    );
    assert_eq!(file.truncated_tail(), g.truncated);
    let malformed = file
        .problems()
        .iter()
        .filter(|p| {
            matches!(
                p.code,
                pcd_ledger::LineProblemCode::Malformed
                    | pcd_ledger::LineProblemCode::MalformedLedger
            )
        })
        .count();
    assert_eq!(malformed, g.garbage);

    // The leaf: a chosen entry with an id, or Pi's.
    let chosen = plan
        .leaf
        .filter(|_| !g.entries.is_empty())
        .map(|k| k as usize % g.entries.len())
        .filter(|k| g.entries[*k].id.is_some());
    let branch = match chosen {
        Some(k) => file
            .branch_for(g.entries[k].id.as_deref())
            .expect("the chosen leaf is in the file"),
        None => file.branch_for(None).expect("Pi's leaf"),
    };
    let on: Vec<usize> = branch
        .iter()
        .map(|p| {
            let id = file.id(*p);
            // Positions are entries in file order; check the id agrees with what was written.
            let i = file.positions().position(|q| q == *p).unwrap();
            assert_eq!(id, g.entries[i].id, "entry {i}");
            i
        })
        .collect();

    // The branch is a parent chain ending at the leaf.
    let leaf = chosen.or_else(|| {
        let last = g.entries.len().checked_sub(1)?;
        (g.version < 2 || g.entries[last].id.is_some()).then_some(last)
    });
    assert_eq!(on.last().copied(), leaf, "the branch ends at the leaf");
    if g.version < 2 {
        let expected: Vec<usize> = leaf.map_or(Vec::new(), |l| (0..=l).collect());
        assert_eq!(on, expected, "a version 1 file is one chain in file order");
    } else {
        for pair in on.windows(2) {
            let (parent, child) = (&g.entries[pair[0]], &g.entries[pair[1]]);
            assert_eq!(
                child.parent.as_ref().and_then(|p| p.as_ref().ok()),
                parent.id.as_ref(),
                "each entry's parent is the one before it"
            );
        }
    }

    let replay = file.fold_branch(&branch).expect("folds");
    assert_eq!(replay.entries, branch.len());

    // The same state from `fold` over the branch read as JSON.
    let values = file.read_branch(&branch).expect("reads");
    let (state, findings) = fold(&values);
    assert_eq!(state, replay.state, "the file reader and fold agree");
    assert!(
        replay.findings.ends_with(&findings),
        "{:?} vs {:?}",
        replay.findings,
        findings
    );

    // Structure findings (version 2 and later).
    if g.version >= 2 {
        if g.entries
            .iter()
            .any(|e| matches!(e.what, What::Part { .. }) && e.id.is_none())
        {
            assert!(
                replay
                    .findings
                    .iter()
                    .any(|f| f.code == AuditFindingCode::EntryWithoutId),
                "a ledger entry without an id is found: {:?}",
                replay.findings
            );
        }
        if let Some(&root) = on.first() {
            let code = match &g.entries[root].parent {
                None => None,
                Some(Ok(id)) if g.entries.iter().any(|e| e.id.as_ref() == Some(id)) => {
                    Some(AuditFindingCode::ParentCycle)
                }
                Some(_) => Some(AuditFindingCode::OrphanParent),
            };
            if let Some(code) = code {
                assert!(
                    replay.findings.iter().any(|f| f.code == code),
                    "{code:?} expected: {:?}",
                    replay.findings
                );
            }
        }
    }

    // Which rounds lie whole on the branch, their parts together among its ledger entries.
    let ledger_on: Vec<usize> = on
        .iter()
        .copied()
        .filter(|i| matches!(g.entries[*i].what, What::Part { .. }))
        .collect();
    let parts_on = |r: usize| -> Vec<(usize, usize)> {
        // (position among the branch's ledger entries, part index)
        ledger_on
            .iter()
            .enumerate()
            .filter_map(|(k, i)| match g.entries[*i].what {
                What::Part { round, part, .. } if round == r => Some((k, part)),
                _ => None,
            })
            .collect()
    };
    let together = |parts: &[(usize, usize)]| parts.windows(2).all(|w| w[1].0 == w[0].0 + 1);
    let mut exact = true;
    let mut whole_valid = vec![false; g.rounds.len()];
    for (r, gen) in g.rounds.iter().enumerate() {
        let parts = parts_on(r);
        let all =
            parts.len() == gen.parts && (0..gen.parts).all(|p| parts.iter().any(|(_, q)| *q == p));
        if all && !together(&parts) {
            exact = false;
        }
        whole_valid[r] = all && together(&parts) && !gen.damage.changes();
    }

    // Availability only from whole valid rounds.
    let granted = |r: usize| {
        let round = &g.rounds[r].round;
        (
            round
                .tools
                .iter()
                .chain(&round.allowlisted_tools)
                .cloned()
                .collect::<HashSet<_>>(),
            round
                .groups
                .iter()
                .chain(&round.allowlisted_groups)
                .map(|k| k.as_str().to_owned())
                .collect::<HashSet<_>>(),
        )
    };
    for tool in replay.state.available_tools() {
        assert!(
            (0..g.rounds.len())
                .filter(|r| !g.rounds[*r].damage.changes() && !parts_on(*r).is_empty())
                .any(|r| granted(r).0.contains(tool)),
            "{tool} is available without an undamaged round on the branch"
        );
    }
    for key in replay.state.available_groups() {
        assert!(
            (0..g.rounds.len())
                .filter(|r| !g.rounds[*r].damage.changes() && !parts_on(*r).is_empty())
                .any(|r| granted(r).1.contains(key)),
            "{key} is available without an undamaged round on the branch"
        );
    }
    if exact {
        // The live path, applying exactly the whole valid rounds, gives the same state.
        let mut live = BranchState::new();
        for &i in &on {
            match &g.entries[i].what {
                What::User => {
                    if let Some(id) = &g.entries[i].id {
                        live.observe_user_message(id);
                    }
                }
                What::Other => {}
                What::Part { round, .. } => {
                    if !whole_valid[*round] {
                        continue;
                    }
                    let parts = parts_on(*round);
                    let last = ledger_on[parts.last().unwrap().0];
                    if last != i {
                        continue;
                    }
                    let first = ledger_on[parts.iter().find(|(_, p)| *p == 0).unwrap().0];
                    let e = &g.entries[first];
                    live.apply_round(&g.rounds[*round].round, e.id.as_deref(), Some(&e.timestamp));
                }
            }
        }
        assert_eq!(replay.state, live, "only whole valid rounds count");
    }

    // Damage is found.
    for (r, gen) in g.rounds.iter().enumerate() {
        let parts = parts_on(r);
        if parts.is_empty() || !together(&parts) {
            continue;
        }
        let undecodable_on = ledger_on.iter().any(|i| {
            matches!(g.entries[*i].what, What::Part { round, undecodable: true, .. } if round == r)
        });
        let complete = parts.len() == gen.parts;
        let in_order_prefix = parts.iter().enumerate().all(|(k, (_, p))| *p == k);
        let expect = match gen.damage {
            Damage::Version(..) | Damage::ExtraField(_) | Damage::NotAnObject(_) => undecodable_on,
            Damage::EditName(_) => complete,
            // Parts that disagree on the digest or the part count were not written as one
            // round, whether or not the rest of it is there.
            Damage::EditDigest(_) => {
                complete || parts.len() >= 2 && parts.iter().any(|(_, p)| Some(*p) == gen.edited)
            }
            // A lone part that claims more parts looks like an interrupted append.
            Damage::EditParts(_) => {
                parts.len() >= 2 && parts.iter().any(|(_, p)| Some(*p) == gen.edited)
            }
            Damage::Tear(_) | Damage::Shuffle(_) => !complete && !in_order_prefix,
            Damage::None => !complete && !in_order_prefix,
            // A round cut at its end is what a crash leaves; an id dropped is checked above.
            _ => false,
        };
        if expect {
            assert!(
                untrusted(&replay.findings),
                "round r{r} ({:?}) on the branch, parts {parts:?} of {}: no untrusting finding in {:?}",
                gen.damage,
                gen.parts,
                replay.findings
            );
        }
    }
});
