//! Pi session files (JSONL), read as Pi reads them, streaming and bounded.
//!
//! Line 1 is the header `{"type":"session","version":3,"id":…}`; every other line is an entry
//! with `type`, `id`, `parentId` and `timestamp`. The leaf is the last entry in file order, and
//! a branch is the `parentId` chain from a leaf to the root, returned root first, all entry
//! types, not cut by compaction (as `getBranch()`). Forks and clones are separate files with the
//! same ids and `parentSession` set; each reads on its own.
//!
//! Reading keeps a small index per line ([`SessionFile::INDEX_BYTES_PER_LINE`] bytes) and decodes
//! only the lines asked for. A line over 1 MiB is never decoded whole: its `type`, `id` and
//! `parentId` are recovered by a streaming scan so the branch stays whole. Blank lines are
//! skipped; malformed lines are reported and skipped (as Pi does); a truncated last line (a
//! crash while writing) is tolerated. Nothing panics on any input.

use crate::scan::{parse_head, EntryType, Head, LineScanner, StrSeed, MAX_DECODED_LINE_BYTES};
use crate::{is_entry_id, BranchState, Folder, CUSTOM_TYPE};
use pcd_bounded_read::{open_bounded, BoundedFile, Follow};
use pcd_model::{AuditFinding, AuditFindingCode, FileReadProblem};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// The largest session file read: 1 GiB. A round of 400,000 parts of one name each is about
/// 115 MB; Pi's own session files with long tool results stay far below this.
pub const MAX_SESSION_FILE_BYTES: u64 = 1 << 30;

/// Why a session file cannot be read. Never names the path (it can hold a user name).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The path is not a regular file (a folder, a FIFO, a device), the file is larger than
    /// [`MAX_SESSION_FILE_BYTES`], or it cannot be opened.
    #[error("the session file {0}")]
    File(FileReadProblem),
    /// The file cannot be read.
    #[error("the session file cannot be read: {0}")]
    Io(io::ErrorKind),
    /// The first parsed line is not a session header with a string `id` (Pi loads no entries).
    #[error("not a Pi session file: the first entry is not a session header")]
    NotASession,
    /// The file has more lines than the index holds (over 4 billion).
    #[error("the session file has more than {0} lines")]
    TooManyLines(u32),
    /// `--leaf` names an id that no entry has.
    #[error("no entry has the requested leaf id")]
    UnknownLeaf,
}

impl From<io::Error> for SessionError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            // The file grew past the bound while it was read.
            io::ErrorKind::FileTooLarge => SessionError::File(FileReadProblem::TooLarge {
                limit: MAX_SESSION_FILE_BYTES,
            }),
            kind => SessionError::Io(kind),
        }
    }
}

/// What was wrong with one line; the line is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineProblemCode {
    /// Not valid JSON (and not the last line).
    Malformed,
    /// Not valid JSON, and it mentions `context-decisions-tools`: a damaged ledger entry.
    MalformedLedger,
    /// Valid JSON but no usable `id` (missing, not a string, or over 128 bytes).
    NoId,
    /// `parentId` is neither `null` nor a usable id (a number, an object, a string over 128
    /// bytes): the entry names a parent no entry can be. When such an entry starts a branch,
    /// the replay reports an orphan ([`pcd_model::AuditFindingCode::OrphanParent`]).
    UnusableParent,
}

impl LineProblemCode {
    /// Whether the problem is a damaged ledger entry (tampering or damage, as an audit sees it).
    pub fn is_tampering(self) -> bool {
        self == LineProblemCode::MalformedLedger
    }

    /// A stable code for JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            LineProblemCode::Malformed => "malformed_line",
            LineProblemCode::MalformedLedger => "malformed_ledger_line",
            LineProblemCode::NoId => "entry_without_id",
            LineProblemCode::UnusableParent => "unusable_parent",
        }
    }
}

/// A problem on a line (1-based line number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineProblem {
    /// What.
    pub code: LineProblemCode,
    /// Where: the 1-based line number.
    pub line: u64,
}

/// The session header's safe fields. `cwd` and `parentSession` are paths and are not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHeader {
    /// `version` (1 when absent). Versions below 2 have no ids: entries form one chain in file
    /// order, as Pi's migration makes them.
    pub version: u64,
    /// The session id (Pi's `[A-Za-z0-9._-]`, at most 128 bytes; otherwise `None`).
    pub id: Option<String>,
    /// Whether the file is a fork or clone of another session (`parentSession` set).
    pub forked: bool,
}

/// One line as the streaming reader sees it.
#[derive(Debug)]
pub struct ScannedLine<'a> {
    /// The 1-based line number.
    pub line: u64,
    /// The byte offset of the line's first byte.
    pub offset: u64,
    /// The line's length in bytes, without the newline.
    pub len: u64,
    /// Whether a newline ended it (false only for the last line of the file).
    pub terminated: bool,
    /// The fields found, or `None` when the line is not valid JSON.
    pub head: Option<Head>,
    /// The whole line, when it is at most 1 MiB.
    pub bytes: Option<&'a [u8]>,
}

/// Reads a JSONL file line by line in bounded memory, from any byte offset.
pub struct LineReader<R> {
    inner: BufReader<R>,
    offset: u64,
    line: u64,
    buf: Vec<u8>,
    /// Bytes of the line last returned in place, consumed on the next call.
    pending: usize,
}

impl<R: Read> LineReader<R> {
    /// A reader of `inner` whose first byte is at `offset` and whose next line is number
    /// `line + 1`.
    pub fn new(inner: R, offset: u64, line: u64) -> LineReader<R> {
        LineReader {
            inner: BufReader::with_capacity(256 * 1024, inner),
            offset,
            line,
            buf: Vec::new(),
            pending: 0,
        }
    }

    /// The next non-blank line, or `None` at the end of the input.
    pub fn next_line(&mut self) -> io::Result<Option<ScannedLine<'_>>> {
        self.inner.consume(std::mem::take(&mut self.pending));
        loop {
            let available = match self.inner.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(None);
            }
            let Some(end) = memchr::memchr(b'\n', available) else {
                // The line runs past the buffer: copy or scan it piece by piece.
                return self.next_line_across_buffers();
            };
            // The common case: the whole line is in the buffer and is parsed where it lies.
            let blank = available[..end].iter().all(u8::is_ascii_whitespace);
            let start = self.offset;
            self.offset += end as u64 + 1;
            self.line += 1;
            if blank {
                self.inner.consume(end + 1);
                continue;
            }
            self.pending = end + 1;
            let bytes = &self.inner.buffer()[..end];
            return Ok(Some(ScannedLine {
                line: self.line,
                offset: start,
                len: end as u64,
                terminated: true,
                head: parse_head(bytes),
                bytes: Some(bytes),
            }));
        }
    }

    fn next_line_across_buffers(&mut self) -> io::Result<Option<ScannedLine<'_>>> {
        loop {
            self.buf.clear();
            let start = self.offset;
            let mut scanner: Option<LineScanner> = None;
            let mut len = 0u64;
            let mut terminated = false;
            loop {
                let available = match self.inner.fill_buf() {
                    Ok(a) => a,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                if available.is_empty() {
                    break;
                }
                let (piece, used, end) = match memchr::memchr(b'\n', available) {
                    Some(i) => (&available[..i], i + 1, true),
                    None => (available, available.len(), false),
                };
                len += piece.len() as u64;
                match &mut scanner {
                    Some(s) => s.feed(piece),
                    None if self.buf.len() + piece.len() > MAX_DECODED_LINE_BYTES => {
                        let mut s = LineScanner::new();
                        s.feed(&self.buf);
                        s.feed(piece);
                        self.buf.clear();
                        scanner = Some(s);
                    }
                    None => self.buf.extend_from_slice(piece),
                }
                self.inner.consume(used);
                self.offset += used as u64;
                if end {
                    terminated = true;
                    break;
                }
            }
            if len == 0 && !terminated {
                return Ok(None);
            }
            self.line += 1;
            let blank = scanner.is_none() && self.buf.iter().all(|b| b.is_ascii_whitespace());
            if blank {
                continue;
            }
            let (head, bytes) = match scanner {
                Some(s) => (s.finish(), None),
                None => (parse_head(&self.buf), Some(&self.buf[..])),
            };
            return Ok(Some(ScannedLine {
                line: self.line,
                offset: start,
                len,
                terminated,
                head,
                bytes,
            }));
        }
    }

    /// The offset just past the last byte read.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

const NONE: u32 = u32::MAX;
const NO_ID: u64 = u64::MAX;
const FLAG_LONG: u8 = 1;
const FLAG_LEDGER: u8 = 2;
const FLAG_USER: u8 = 4;
/// `parentId` names no entry of the file, or is not a usable id (version 2 and later).
const FLAG_DANGLING: u8 = 8;

/// The per-line index: 24 bytes, plus 8 for the id key in [`SessionFile::ids`].
#[derive(Debug, Clone, Copy)]
struct LineIndex {
    offset: u64,
    len: u32,
    parent: u32,
    line: u32,
    kind: u8,
    flags: u8,
}

/// Where an entry is in a [`SessionFile`] (its position among the entries, in file order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryPos(u32);

/// An indexed Pi session file (or any `Read + Seek` holding one).
pub struct SessionFile<R> {
    source: R,
    header: SessionHeader,
    lines: Vec<LineIndex>,
    /// Id keys: 8 lowercase hex digits as their value, longer ids as `2^32 + n` into `long_ids`.
    ids: Vec<u64>,
    long_ids: Vec<Box<str>>,
    problems: Vec<LineProblem>,
    truncated_tail: bool,
    bytes: u64,
}

/// The fold of one branch of a session file.
#[derive(Debug, Clone)]
pub struct BranchReplay {
    /// The folded state.
    pub state: BranchState,
    /// Audit findings of the ledger entries on the branch.
    pub findings: Vec<AuditFinding>,
    /// How many entries the branch has.
    pub entries: usize,
}

impl SessionFile<BoundedFile> {
    /// Opens and indexes a session file: without blocking (a FIFO is refused at once), only a
    /// regular file, at most [`MAX_SESSION_FILE_BYTES`].
    pub fn open(path: &Path) -> Result<SessionFile<BoundedFile>, SessionError> {
        let file = open_bounded(path, MAX_SESSION_FILE_BYTES, Follow::Symlinks)
            .map_err(SessionError::File)?;
        SessionFile::from_reader(file)
    }
}

fn short_id(id: &str) -> Option<u64> {
    (id.len() == 8 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| u64::from_str_radix(id, 16).ok())
        .flatten()
}

fn session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

impl<R: Read + Seek> SessionFile<R> {
    /// What the index keeps per line, in bytes.
    pub const INDEX_BYTES_PER_LINE: usize =
        std::mem::size_of::<LineIndex>() + std::mem::size_of::<u64>();

    /// Indexes a session held by `source`, reading it once from the start.
    pub fn from_reader(mut source: R) -> Result<SessionFile<R>, SessionError> {
        source.seek(SeekFrom::Start(0))?;
        let mut reader = LineReader::new(&mut source, 0, 0);
        let mut header: Option<SessionHeader> = None;
        let mut lines = Vec::new();
        let mut ids = Vec::new();
        let mut parents = Vec::new();
        let mut long: HashMap<Box<str>, u64> = HashMap::new();
        let mut long_ids: Vec<Box<str>> = Vec::new();
        let mut problems = Vec::new();
        let mut truncated_tail = false;
        let mut key_of = |id: Option<&str>| -> u64 {
            let Some(id) = id else { return NO_ID };
            if let Some(k) = short_id(id) {
                return k;
            }
            if let Some(k) = long.get(id) {
                return *k;
            }
            let k = (1u64 << 32) + long_ids.len() as u64;
            long.insert(id.into(), k);
            long_ids.push(id.into());
            k
        };
        while let Some(line) = reader.next_line()? {
            let Some(head) = line.head else {
                if line.terminated {
                    problems.push(LineProblem {
                        code: malformed_code(line.bytes),
                        line: line.line,
                    });
                } else {
                    truncated_tail = true;
                }
                continue;
            };
            let ty = head.entry_type();
            if header.is_none() {
                // Pi takes the first parsed line as the header, or loads nothing.
                if ty != EntryType::Session || head.id.is_none() {
                    return Err(SessionError::NotASession);
                }
                header = Some(read_header(line.bytes, &head));
                continue;
            }
            if ty == EntryType::Session {
                continue;
            }
            if lines.len() >= NONE as usize {
                return Err(SessionError::TooManyLines(NONE));
            }
            if head.id.is_none() {
                problems.push(LineProblem {
                    code: LineProblemCode::NoId,
                    line: line.line,
                });
            }
            let mut flags = 0;
            // An entry without an id is on no branch (so its parent never matters).
            if head.parent_unusable
                && head.id.is_some()
                && header.as_ref().is_some_and(|h| h.version >= 2)
            {
                problems.push(LineProblem {
                    code: LineProblemCode::UnusableParent,
                    line: line.line,
                });
                flags |= FLAG_DANGLING;
            }
            if line.bytes.is_none() {
                flags |= FLAG_LONG;
            }
            if head.is_ledger() {
                flags |= FLAG_LEDGER;
            }
            if head.is_user_message() {
                flags |= FLAG_USER;
            }
            ids.push(key_of(head.id.as_deref()));
            parents.push(key_of(head.parent_id.as_deref()));
            lines.push(LineIndex {
                offset: line.offset,
                len: u32::try_from(line.len).unwrap_or(u32::MAX),
                parent: NONE,
                line: u32::try_from(line.line).unwrap_or(u32::MAX),
                kind: ty.code(),
                flags,
            });
        }
        let bytes = reader.offset();
        drop(reader);
        let header = header.ok_or(SessionError::NotASession)?;
        if header.version < 2 {
            // Pi's migration to version 2 chains entries in file order.
            for (i, l) in lines.iter_mut().enumerate().skip(1) {
                l.parent = (i - 1) as u32;
            }
        } else {
            // Pi's Map keeps the last entry of a duplicated id.
            let mut by_id: Vec<(u64, u32)> = ids
                .iter()
                .enumerate()
                .filter(|(_, k)| **k != NO_ID)
                .map(|(i, k)| (*k, i as u32))
                .collect();
            by_id.sort_unstable();
            for (l, parent) in lines.iter_mut().zip(&parents) {
                if *parent == NO_ID {
                    continue;
                }
                let end = by_id.partition_point(|(k, _)| k <= parent);
                if end > 0 && by_id[end - 1].0 == *parent {
                    l.parent = by_id[end - 1].1;
                } else {
                    l.flags |= FLAG_DANGLING;
                }
            }
        }
        Ok(SessionFile {
            source,
            header,
            lines,
            ids,
            long_ids,
            problems,
            truncated_tail,
            bytes,
        })
    }

    /// The header.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// How many entries (lines after the header that parsed).
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the session has no entries.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Malformed lines, entries without ids and entries whose `parentId` is unusable.
    pub fn problems(&self) -> &[LineProblem] {
        &self.problems
    }

    /// Whether the last line was cut short (a crash while writing) and skipped.
    pub fn truncated_tail(&self) -> bool {
        self.truncated_tail
    }

    /// The bytes read.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The leaf Pi picks on load: the last entry in file order, when it has an id (Pi's
    /// migration gives every entry of a version 1 file an id, so there it always has one).
    pub fn leaf(&self) -> Option<EntryPos> {
        let last = self.lines.len().checked_sub(1)?;
        (self.ids[last] != NO_ID || self.header.version < 2).then_some(EntryPos(last as u32))
    }

    /// The entry with this id (the last one, if several share it).
    pub fn find(&self, id: &str) -> Option<EntryPos> {
        let key = match short_id(id) {
            Some(k) => k,
            None => {
                let n = self.long_ids.iter().position(|l| &**l == id)?;
                (1u64 << 32) + n as u64
            }
        };
        self.ids
            .iter()
            .rposition(|k| *k == key)
            .map(|i| EntryPos(i as u32))
    }

    /// The entry's id.
    pub fn id(&self, pos: EntryPos) -> Option<String> {
        let key = *self.ids.get(pos.0 as usize)?;
        match key {
            NO_ID => None,
            k if k < (1 << 32) => Some(format!("{k:08x}")),
            k => self
                .long_ids
                .get((k - (1 << 32)) as usize)
                .map(|s| s.to_string()),
        }
    }

    /// The entry's type.
    pub fn entry_type(&self, pos: EntryPos) -> EntryType {
        self.lines
            .get(pos.0 as usize)
            .map_or(EntryType::Missing, |l| EntryType::from_code(l.kind))
    }

    /// The entry's 1-based line number.
    pub fn line_number(&self, pos: EntryPos) -> u64 {
        self.lines
            .get(pos.0 as usize)
            .map_or(0, |l| u64::from(l.line))
    }

    /// Whether the entry is a `context-decisions-tools` custom entry.
    pub fn is_ledger(&self, pos: EntryPos) -> bool {
        self.lines
            .get(pos.0 as usize)
            .is_some_and(|l| l.flags & FLAG_LEDGER != 0)
    }

    /// Every entry, in file order.
    pub fn positions(&self) -> impl Iterator<Item = EntryPos> {
        (0..self.lines.len() as u32).map(EntryPos)
    }

    /// The branch from the root to `leaf`, root first (as `getBranch(leaf)`). A `parentId`
    /// naming no entry ends the walk, as in Pi; a cycle ends it where it closes, each entry
    /// once (a replay reports both, see [`SessionFile::fold_branch`]).
    pub fn branch(&mut self, leaf: EntryPos) -> Vec<EntryPos> {
        let mut path = Vec::new();
        let mut visited = vec![0u64; self.lines.len().div_ceil(64)];
        let mut current = leaf.0;
        while current != NONE && (current as usize) < self.lines.len() {
            let (word, bit) = (current as usize / 64, 1u64 << (current % 64));
            if visited[word] & bit != 0 {
                break;
            }
            visited[word] |= bit;
            path.push(EntryPos(current));
            current = self.lines[current as usize].parent;
        }
        path.reverse();
        path
    }

    /// The branch for the leaf with this id, or for Pi's leaf when `None`. An empty session,
    /// or one whose last entry has no id, has an empty branch.
    pub fn branch_for(&mut self, leaf: Option<&str>) -> Result<Vec<EntryPos>, SessionError> {
        let leaf = match leaf {
            Some(id) => Some(self.find(id).ok_or(SessionError::UnknownLeaf)?),
            None => self.leaf(),
        };
        Ok(leaf.map(|l| self.branch(l)).unwrap_or_default())
    }

    /// The entry as JSON: the whole line when it is at most 1 MiB (a lone surrogate escape in it
    /// read as U+FFFD), otherwise a stub holding `type`, `id` and `parentId` (and `message.role`
    /// for a message).
    pub fn read_entry(&mut self, pos: EntryPos) -> Result<Value, SessionError> {
        let l = self.lines[pos.0 as usize];
        if l.flags & FLAG_LONG == 0 {
            let mut buf = vec![0; l.len as usize];
            self.source.seek(SeekFrom::Start(l.offset))?;
            self.source.read_exact(&mut buf)?;
            if let Some(value) = crate::scan::decode_entry(&buf) {
                return Ok(value);
            }
        }
        Ok(self.stub(pos))
    }

    fn stub(&self, pos: EntryPos) -> Value {
        let l = self.lines[pos.0 as usize];
        let parent = (l.parent != NONE)
            .then(|| self.id(EntryPos(l.parent)))
            .flatten();
        crate::scan::stub(
            EntryType::from_code(l.kind),
            self.id(pos).as_deref(),
            parent.as_deref(),
            l.flags & FLAG_USER != 0,
            l.flags & FLAG_LEDGER != 0,
        )
    }

    /// Every entry of the branch, root first, as [`SessionFile::read_entry`] gives them.
    pub fn read_branch(&mut self, branch: &[EntryPos]) -> Result<Vec<Value>, SessionError> {
        branch.iter().map(|p| self.read_entry(*p)).collect()
    }

    /// Folds a branch, decoding only its ledger entries (straight from their lines, without a
    /// JSON value for the envelope); other entries are seen as stubs (a user message still
    /// resolves the first-prompt reference).
    pub fn fold_branch(&mut self, branch: &[EntryPos]) -> Result<BranchReplay, SessionError> {
        let mut items = Vec::new();
        let mut window = Window::default();
        for &pos in branch {
            let l = self.lines[pos.0 as usize];
            if l.flags & FLAG_LEDGER != 0 {
                items.push(BranchItem::Ledger(self.read_ledger_line(pos, &mut window)?));
            } else if l.flags & FLAG_USER != 0 {
                items.push(BranchItem::User(self.id(pos)));
            }
        }
        let mut folder = Folder::new();
        for item in &items {
            match item {
                BranchItem::Ledger(line) => folder.push_ledger_entry(
                    line.data.as_ref(),
                    line.id.as_deref(),
                    line.timestamp.as_deref(),
                ),
                BranchItem::User(id) => folder.push_user_message(id.as_deref()),
            }
        }
        let (state, fold_findings) = folder.finish();
        let mut findings = self.branch_findings(branch, &mut window)?;
        findings.extend(fold_findings);
        Ok(BranchReplay {
            state,
            findings,
            entries: branch.len(),
        })
    }

    /// What the shape of the file and of the branch hide from the fold (version 2 and later,
    /// where entries are linked by id): every ledger entry without a usable id (it lies on no
    /// branch), a last entry without one when the branch is Pi's (left empty), and a branch
    /// whose first entry has a parent that is not in the file (an orphan: what came before it
    /// was removed) or already on the branch (a cycle). The mirror's replay reports the same.
    fn branch_findings(
        &mut self,
        branch: &[EntryPos],
        window: &mut Window,
    ) -> Result<Vec<AuditFinding>, SessionError> {
        let mut findings = Vec::new();
        if self.header.version < 2 {
            return Ok(findings);
        }
        let finding = |code, entry_id: Option<String>, round: Option<String>| AuditFinding {
            code,
            entry_id,
            round,
        };
        for i in 0..self.lines.len() {
            if self.ids[i] == NO_ID && self.lines[i].flags & FLAG_LEDGER != 0 {
                let line = self.read_ledger_line(EntryPos(i as u32), window)?;
                let round = line.data.as_ref().and_then(ledger_round);
                findings.push(finding(AuditFindingCode::EntryWithoutId, None, round));
            }
        }
        let last = self.lines.last();
        if branch.is_empty()
            && last.is_some_and(|l| l.flags & FLAG_LEDGER == 0)
            && self.ids.last() == Some(&NO_ID)
        {
            findings.push(finding(AuditFindingCode::EntryWithoutId, None, None));
        }
        if let Some(&root) = branch.first() {
            let l = self.lines[root.0 as usize];
            let id = self.id(root).filter(|id| is_entry_id(id));
            if l.parent != NONE {
                findings.push(finding(AuditFindingCode::ParentCycle, id, None));
            } else if l.flags & FLAG_DANGLING != 0 {
                findings.push(finding(AuditFindingCode::OrphanParent, id, None));
            }
        }
        Ok(findings)
    }

    /// A ledger entry's `data`, `id` and `timestamp`; a line over 1 MiB (or one that does not
    /// parse again) has no `data`, so the fold reports it as undecodable.
    fn read_ledger_line(
        &mut self,
        pos: EntryPos,
        window: &mut Window,
    ) -> Result<LedgerLine, SessionError> {
        let l = self.lines[pos.0 as usize];
        if l.flags & FLAG_LONG == 0 {
            let bytes = window.read(&mut self.source, l.offset, l.len as usize)?;
            if let Ok(line) = serde_json::from_slice::<LedgerLine>(bytes) {
                return Ok(line);
            }
        }
        Ok(LedgerLine {
            data: None,
            id: self.id(pos),
            timestamp: None,
        })
    }
}

/// A window of the file that serves the reads of consecutive lines: a branch is read root first,
/// mostly in file order, so one read of [`Window::SIZE`] bytes serves many ledger lines instead
/// of a seek and a read each.
#[derive(Default)]
struct Window {
    start: u64,
    bytes: Vec<u8>,
}

impl Window {
    const SIZE: usize = 256 * 1024;

    /// The `len` bytes at `offset`.
    fn read<R: Read + Seek>(
        &mut self,
        source: &mut R,
        offset: u64,
        len: usize,
    ) -> io::Result<&[u8]> {
        let end = self.start + self.bytes.len() as u64;
        if offset < self.start || offset + len as u64 > end {
            // Read ahead only while moving forward: a branch that jumps back (parents written
            // after their children, which Pi never does) reads each line alone, so no input
            // makes this read more than the file plus its ledger lines.
            let want = if offset >= self.start {
                len.max(Self::SIZE)
            } else {
                len
            };
            source.seek(SeekFrom::Start(offset))?;
            self.start = offset;
            self.bytes.clear();
            // Reads until the line is whole; past it, whatever one read gives is kept.
            while self.bytes.len() < len {
                let got = (&mut *source)
                    .take((want - self.bytes.len()) as u64)
                    .read_to_end(&mut self.bytes)?;
                if got == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
            }
        }
        let at = (offset - self.start) as usize;
        Ok(&self.bytes[at..at + len])
    }
}

/// What the fold of a session branch is fed, in branch order.
enum BranchItem {
    Ledger(LedgerLine),
    User(Option<String>),
}

/// A ledger entry as the fold needs it: its `data`, and its `id` and `timestamp` when they are
/// strings. Other fields are skipped; a duplicated key keeps its last value, as with JSON.parse.
#[derive(Debug, Default)]
struct LedgerLine {
    data: Option<Value>,
    id: Option<String>,
    timestamp: Option<String>,
}

impl<'de> serde::Deserialize<'de> for LedgerLine {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = LedgerLine;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<LedgerLine, A::Error> {
                let mut line = LedgerLine::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match &*key {
                        "data" => line.data = Some(map.next_value()?),
                        "id" => line.id = map.next_value_seed(StrSeed(str::to_owned))?,
                        "timestamp" => {
                            line.timestamp = map.next_value_seed(StrSeed(str::to_owned))?
                        }
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(line)
            }
        }
        d.deserialize_map(V)
    }
}

/// The round id a ledger entry's `data` names, when it is fit to be reported.
pub(crate) fn ledger_round(data: &Value) -> Option<String> {
    data.get("round")
        .and_then(Value::as_str)
        .filter(|r| is_entry_id(r))
        .map(str::to_owned)
}

/// A malformed line that mentions the ledger's custom type is a damaged ledger entry.
pub(crate) fn malformed_code(bytes: Option<&[u8]>) -> LineProblemCode {
    let needle = CUSTOM_TYPE.as_bytes();
    let ledger = bytes.is_some_and(|b| b.windows(needle.len()).any(|w| w == needle));
    if ledger {
        LineProblemCode::MalformedLedger
    } else {
        LineProblemCode::Malformed
    }
}

pub(crate) fn read_header(bytes: Option<&[u8]>, head: &Head) -> SessionHeader {
    let value: Option<Value> = bytes.and_then(|b| serde_json::from_slice(b).ok());
    // A header too long to decode is taken as current: only real version 1 files lack ids.
    let version = match &value {
        None => 3,
        Some(v) => v.get("version").and_then(Value::as_u64).unwrap_or(1),
    };
    let forked = value
        .as_ref()
        .and_then(|v| v.get("parentSession"))
        .is_some_and(|p| !p.is_null());
    SessionHeader {
        version,
        id: head.id.clone().filter(|id| session_id(id)),
        forked,
    }
}

#[cfg(test)]
mod tests;
