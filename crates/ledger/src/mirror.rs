//! The SQLite mirror of session files: every entry's place in the tree, the ledger entries'
//! `data`, and the decoded rounds and names for querying.
//!
//! Mirroring is idempotent (a file mirrored twice changes nothing), incremental (only lines
//! after the last mirrored one are read), transactional (one transaction per file: a failure
//! leaves the previous state) and safe for concurrent readers (WAL). A pass takes the write
//! lock when it begins and waits up to a busy timeout ([`DEFAULT_BUSY_TIMEOUT`]) for another
//! writer; past it, or while another process keeps the database locked, it fails with
//! [`MirrorError::Busy`] and changes nothing. Replaying a branch from the
//! mirror gives exactly what replaying the JSONL file gives.
//!
//! Schema (version 1), documented in `docs/ledger-format.md`:
//!
//! ```sql
//! sessions(session_key PK, session_id UNIQUE, version, forked, header_sha256, mirrored_bytes,
//!          mirrored_lines, entry_count)
//! entries(session_key, seq, line, entry_id, parent_id, type, user_message, ledger, data,
//!         timestamp, PK(session_key, seq))
//! problems(session_key, line, code, PK(session_key, line))
//! rounds(session_key, seq, round_id, part, parts, digest, mode, boundary, basis,
//!        PK(session_key, seq))
//! names(session_key, seq, list, position, name, score), indexed by (session_key, seq)
//! ```

use crate::codec::decode_part;
use crate::scan::EntryType;
use crate::session::{
    ledger_round, malformed_code, read_header, LineProblemCode, LineReader, SessionHeader,
};
use crate::{fold, is_entry_id, BranchReplay, CUSTOM_TYPE, MAX_SESSION_FILE_BYTES};
use pcd_bounded_read::{open_bounded, Follow};
use pcd_model::{AuditFinding, AuditFindingCode, FileReadProblem};
use rusqlite::{
    params, Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior,
};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

/// How long a mirror waits for another connection's lock before failing with
/// [`MirrorError::Busy`]: five seconds, rusqlite's own default. Long enough for another pass
/// to finish (the mirror writes about a million names a second, see BENCHMARKS.md), short
/// enough that a process holding the lock for good is reported instead of hanging an audit.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The schema version this crate writes.
pub const MIRROR_SCHEMA_VERSION: i64 = 1;

// Integer session keys and an append-only `names` table: string keys in every B-tree made
// comparisons the larger part of a mirror pass.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    session_key INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE,
    version INTEGER NOT NULL,
    forked INTEGER NOT NULL,
    header_sha256 TEXT NOT NULL,
    mirrored_bytes INTEGER NOT NULL,
    mirrored_lines INTEGER NOT NULL,
    entry_count INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    session_key INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    line INTEGER NOT NULL,
    entry_id TEXT,
    parent_id TEXT,
    type TEXT NOT NULL,
    user_message INTEGER NOT NULL,
    ledger INTEGER NOT NULL,
    data TEXT,
    timestamp TEXT,
    PRIMARY KEY (session_key, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS problems (
    session_key INTEGER NOT NULL,
    line INTEGER NOT NULL,
    code TEXT NOT NULL,
    PRIMARY KEY (session_key, line)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rounds (
    session_key INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    round_id TEXT NOT NULL,
    part INTEGER NOT NULL,
    parts INTEGER NOT NULL,
    digest TEXT NOT NULL,
    mode TEXT,
    boundary TEXT,
    basis TEXT,
    PRIMARY KEY (session_key, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS names (
    session_key INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    list TEXT NOT NULL,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    score INTEGER
);
CREATE INDEX IF NOT EXISTS names_by_entry ON names (session_key, seq);
";

/// Why mirroring or replaying from the mirror failed. Never names a path.
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    /// The path is not a regular file (a folder, a FIFO, a device), the file is larger than
    /// [`crate::MAX_SESSION_FILE_BYTES`], or it cannot be opened.
    #[error("the session file {0}")]
    File(FileReadProblem),
    /// The session file cannot be read.
    #[error("the session file cannot be read: {0}")]
    Io(io::ErrorKind),
    /// The file is not a Pi session (its first parsed line is not a header with an id).
    #[error("not a Pi session file: the first entry is not a session header")]
    NotASession,
    /// The session id is not Pi's `[A-Za-z0-9._-]`, at most 128 bytes.
    #[error("the session header's id is not a valid session id")]
    BadSessionId,
    /// Another connection holds the database's lock (a mirror pass or an audit writing, or a
    /// process holding an exclusive lock) for longer than the busy timeout. Nothing was
    /// changed; trying again once it lets go works.
    #[error(
        "the mirror database is busy: another connection holds its lock; nothing was changed, try again"
    )]
    Busy,
    /// SQLite failed; the previous state is kept.
    #[error("SQLite: {0}")]
    Sqlite(rusqlite::Error),
    /// The database was written by a newer schema.
    #[error("the mirror has schema version {0}; this reader knows {MIRROR_SCHEMA_VERSION}")]
    SchemaVersion(i64),
    /// The mirror holds no session with this id.
    #[error("the mirror holds no such session")]
    UnknownSession,
    /// `--leaf` names an id no mirrored entry has.
    #[error("no mirrored entry has the requested leaf id")]
    UnknownLeaf,
    /// [`Mirror::open_existing`]: there is no database at the path (none is created).
    #[error("the mirror database does not exist")]
    NoDatabase,
    /// [`Mirror::open_existing`]: the database holds no mirror (no schema version).
    #[error("the database is not a mirror of session files")]
    NotAMirror,
}

impl From<rusqlite::Error> for MirrorError {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                MirrorError::Busy
            }
            _ => MirrorError::Sqlite(e),
        }
    }
}

impl From<io::Error> for MirrorError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            // The file grew past the bound while it was read.
            io::ErrorKind::FileTooLarge => MirrorError::File(FileReadProblem::TooLarge {
                limit: MAX_SESSION_FILE_BYTES,
            }),
            kind => MirrorError::Io(kind),
        }
    }
}

/// What one mirroring pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MirrorReport {
    /// The session's id.
    pub session_id: String,
    /// Entries added.
    pub entries: u64,
    /// Ledger entries (round parts) added that decoded.
    pub parts: u64,
    /// Names added (every list, scores included).
    pub names: u64,
    /// Bytes read in this pass.
    pub bytes: u64,
    /// Whether the session was mirrored from scratch because the file no longer extends what
    /// was mirrored (rewritten, or replaced).
    pub restarted: bool,
}

/// A SQLite mirror of session files.
pub struct Mirror {
    conn: Connection,
}

/// A database path is a regular file or nothing yet: SQLite would wait forever on a FIFO that
/// no one writes to, so what is there is checked first, opened without blocking.
fn database_file_or_none(path: &Path) -> Result<(), MirrorError> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    pcd_bounded_read::open_bounded(path, u64::MAX, pcd_bounded_read::Follow::Symlinks)
        .map(drop)
        .map_err(MirrorError::File)
}

impl Mirror {
    /// Opens (creating if needed) the mirror at `path`, in WAL mode, waiting up to
    /// [`DEFAULT_BUSY_TIMEOUT`] for another connection's lock.
    pub fn open(path: &Path) -> Result<Mirror, MirrorError> {
        Mirror::open_with_busy_timeout(path, DEFAULT_BUSY_TIMEOUT)
    }

    /// Opens the mirror at `path`, waiting up to `busy_timeout` whenever another connection
    /// holds the lock this one needs, then failing with [`MirrorError::Busy`]
    /// (`Duration::ZERO`: fail at once).
    pub fn open_with_busy_timeout(
        path: &Path,
        busy_timeout: Duration,
    ) -> Result<Mirror, MirrorError> {
        database_file_or_none(path)?;
        let conn = Connection::open(path)?;
        conn.busy_timeout(busy_timeout)?;
        Mirror::init(conn)
    }

    /// Opens the existing mirror at `path` to read it (an audit's replay): nothing is created
    /// or written, so a mistyped path is [`MirrorError::NoDatabase`] rather than a new, empty
    /// mirror, and a database that holds no mirror is [`MirrorError::NotAMirror`].
    pub fn open_existing(path: &Path) -> Result<Mirror, MirrorError> {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(MirrorError::NoDatabase),
            Err(e) => return Err(e.into()),
            Ok(_) => {}
        }
        database_file_or_none(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(DEFAULT_BUSY_TIMEOUT)?;
        let version: Option<String> = conn
            .query_row(
                "SELECT value FROM meta WHERE key='schema_version'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| match MirrorError::from(e) {
                MirrorError::Busy => MirrorError::Busy,
                _ => MirrorError::NotAMirror,
            })?;
        match version.and_then(|v| v.parse::<i64>().ok()) {
            Some(MIRROR_SCHEMA_VERSION) => Ok(Mirror { conn }),
            Some(other) => Err(MirrorError::SchemaVersion(other)),
            None => Err(MirrorError::NotAMirror),
        }
    }

    /// A mirror in memory (tests, one-off audits).
    pub fn open_in_memory() -> Result<Mirror, MirrorError> {
        Mirror::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Mirror, MirrorError> {
        // WAL lets readers (an audit, a second replay) run while a mirror pass writes.
        let _mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        conn.execute_batch("PRAGMA synchronous=NORMAL;")?;
        conn.execute_batch(SCHEMA)?;
        let version: Option<String> = conn
            .query_row(
                "SELECT value FROM meta WHERE key='schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        match version.and_then(|v| v.parse::<i64>().ok()) {
            None => {
                conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?1)",
                    [MIRROR_SCHEMA_VERSION.to_string()],
                )?;
            }
            Some(MIRROR_SCHEMA_VERSION) => {}
            Some(other) => return Err(MirrorError::SchemaVersion(other)),
        }
        Ok(Mirror { conn })
    }

    /// The underlying connection, for queries over the documented schema.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Mirrors the session file at `path` (new lines only). The file is opened as
    /// [`crate::SessionFile::open`] opens it: without blocking, only a regular file, at most
    /// [`crate::MAX_SESSION_FILE_BYTES`].
    pub fn mirror_file(&mut self, path: &Path) -> Result<MirrorReport, MirrorError> {
        let file = open_bounded(path, MAX_SESSION_FILE_BYTES, Follow::Symlinks)
            .map_err(MirrorError::File)?;
        self.mirror_reader(file)
    }

    /// Mirrors a session held by `source`, in one transaction.
    pub fn mirror_reader<R: Read + Seek>(
        &mut self,
        mut source: R,
    ) -> Result<MirrorReport, MirrorError> {
        let (header, header_sha, header_end, header_lines) = read_session_header(&mut source)?;
        let session_id = header.id.clone().ok_or(MirrorError::BadSessionId)?;
        let file_len = source.seek(SeekFrom::End(0))?;
        // IMMEDIATE: the write lock is taken at BEGIN, where SQLite waits for it (busy
        // timeout). A deferred transaction reads first, and SQLite never waits when a reader
        // asks to become a writer: the pass failed at once whenever another writer was active.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let known: Option<(i64, String, u64, u64, u64)> = tx
            .query_row(
                "SELECT session_key, header_sha256, mirrored_bytes, mirrored_lines, entry_count
                 FROM sessions WHERE session_id = ?1",
                [&session_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?;
        let mut report = MirrorReport {
            session_id: session_id.clone(),
            ..MirrorReport::default()
        };
        let (key, offset, lines, seq) = match known {
            Some((key, sha, bytes, lines, count)) if sha == header_sha && bytes <= file_len => {
                (key, bytes, lines, count)
            }
            Some((key, ..)) => {
                // The file no longer extends what was mirrored: mirror it again from scratch.
                for table in ["entries", "problems", "rounds", "names"] {
                    tx.execute(
                        &format!("DELETE FROM {table} WHERE session_key = ?1"),
                        [key],
                    )?;
                }
                report.restarted = true;
                (key, header_end, header_lines, 0)
            }
            None => {
                tx.execute(
                    "INSERT INTO sessions (session_id, version, forked, header_sha256,
                         mirrored_bytes, mirrored_lines, entry_count)
                     VALUES (?1, 0, 0, '', 0, 0, 0)",
                    [&session_id],
                )?;
                (tx.last_insert_rowid(), header_end, header_lines, 0)
            }
        };
        source.seek(SeekFrom::Start(offset))?;
        let (end, end_lines, count) = mirror_lines(
            &tx,
            key,
            header.version,
            &mut source,
            offset,
            lines,
            seq,
            &mut report,
        )?;
        report.bytes = end - offset;
        tx.execute(
            "UPDATE sessions SET version = ?2, forked = ?3, header_sha256 = ?4,
                 mirrored_bytes = ?5, mirrored_lines = ?6, entry_count = ?7
             WHERE session_key = ?1",
            params![
                key,
                header.version as i64,
                header.forked,
                header_sha,
                end as i64,
                end_lines as i64,
                count as i64
            ],
        )?;
        tx.commit()?;
        Ok(report)
    }

    /// The mirrored session ids, sorted.
    pub fn sessions(&self) -> Result<Vec<String>, MirrorError> {
        let mut stmt = self
            .conn
            .prepare("SELECT session_id FROM sessions ORDER BY session_id")?;
        let ids = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        Ok(ids)
    }

    /// Replays a branch of a mirrored session: Pi's leaf (the last entry) when `leaf` is
    /// `None`. The same walk and fold as [`crate::SessionFile`], over the mirrored rows.
    pub fn replay(
        &self,
        session_id: &str,
        leaf: Option<&str>,
    ) -> Result<BranchReplay, MirrorError> {
        let (key, version) = self.session_key(session_id)?;
        let mut stmt = self.conn.prepare(
            "SELECT entry_id, parent_id, user_message, ledger FROM entries
             WHERE session_key = ?1 ORDER BY seq",
        )?;
        let rows: Vec<MirrorRow> = stmt
            .query_map([key], |r| {
                Ok((
                    r.get::<_, Option<String>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, bool>(2)?,
                    r.get::<_, bool>(3)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(rows.len());
        for (seq, row) in rows.iter().enumerate() {
            if let Some(id) = &row.0 {
                by_id.insert(id, seq);
            }
        }
        let start = match leaf {
            Some(id) => Some(*by_id.get(id).ok_or(MirrorError::UnknownLeaf)?),
            None => rows
                .len()
                .checked_sub(1)
                .filter(|last| rows[*last].0.is_some() || version < 2),
        };
        let mut path = Vec::new();
        let mut visited = vec![false; rows.len()];
        let mut current = start;
        while let Some(seq) = current {
            if visited[seq] {
                break;
            }
            visited[seq] = true;
            path.push(seq);
            current = if version < 2 {
                seq.checked_sub(1)
            } else {
                rows[seq].1.as_deref().and_then(|p| by_id.get(p).copied())
            };
        }
        path.reverse();
        let mut data_stmt = self
            .conn
            .prepare("SELECT data, timestamp FROM entries WHERE session_key = ?1 AND seq = ?2")?;
        let mut values = Vec::new();
        for &seq in &path {
            let (id, _, user, ledger) = &rows[seq];
            if *ledger {
                let (data, timestamp): (Option<String>, Option<String>) = data_stmt
                    .query_row(params![key, seq as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
                let mut obj = Map::new();
                obj.insert("type".into(), "custom".into());
                obj.insert("customType".into(), CUSTOM_TYPE.into());
                if let Some(data) = data.and_then(|d| serde_json::from_str::<Value>(&d).ok()) {
                    obj.insert("data".into(), data);
                }
                obj.insert("id".into(), id.clone().map_or(Value::Null, Value::from));
                if let Some(t) = timestamp {
                    obj.insert("timestamp".into(), t.into());
                }
                values.push(Value::Object(obj));
            } else if *user {
                values.push(json!({"type": "message", "id": id, "message": {"role": "user"}}));
            }
        }
        let (state, fold_findings) = fold(&values);
        let mut findings = if version < 2 {
            Vec::new()
        } else {
            self.branch_findings(key, &rows, &by_id, &path)?
        };
        findings.extend(fold_findings);
        Ok(BranchReplay {
            state,
            findings,
            entries: path.len(),
        })
    }

    /// What [`crate::SessionFile::fold_branch`] reports about the shape of the file and the
    /// branch, from the mirrored rows: ledger entries without a usable id, a last entry without
    /// one that leaves Pi's branch empty, an orphan or a cycle at the branch's first entry.
    fn branch_findings(
        &self,
        key: i64,
        rows: &[MirrorRow],
        by_id: &HashMap<&str, usize>,
        path: &[usize],
    ) -> Result<Vec<AuditFinding>, MirrorError> {
        let finding = |code, entry_id: Option<String>, round: Option<String>| AuditFinding {
            code,
            entry_id,
            round,
        };
        let mut findings = Vec::new();
        let mut data_stmt = self
            .conn
            .prepare("SELECT data FROM entries WHERE session_key = ?1 AND seq = ?2")?;
        for (seq, row) in rows.iter().enumerate() {
            if row.0.is_none() && row.3 {
                let data: Option<String> =
                    data_stmt.query_row(params![key, seq as i64], |r| r.get(0))?;
                let round = data
                    .and_then(|d| serde_json::from_str::<Value>(&d).ok())
                    .as_ref()
                    .and_then(ledger_round);
                findings.push(finding(AuditFindingCode::EntryWithoutId, None, round));
            }
        }
        if path.is_empty() && rows.last().is_some_and(|r| r.0.is_none() && !r.3) {
            findings.push(finding(AuditFindingCode::EntryWithoutId, None, None));
        }
        if let Some(&root) = path.first() {
            let (id, parent, ..) = &rows[root];
            let id = id.clone().filter(|id| is_entry_id(id));
            let unusable: bool = self.conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM problems p JOIN entries e
                     ON e.session_key = p.session_key AND e.line = p.line
                 WHERE e.session_key = ?1 AND e.seq = ?2 AND p.code = ?3)",
                params![key, root as i64, LineProblemCode::UnusableParent.as_str()],
                |r| r.get(0),
            )?;
            match parent.as_deref() {
                Some(p) if by_id.contains_key(p) => {
                    findings.push(finding(AuditFindingCode::ParentCycle, id, None));
                }
                Some(_) => findings.push(finding(AuditFindingCode::OrphanParent, id, None)),
                None if unusable => {
                    findings.push(finding(AuditFindingCode::OrphanParent, id, None));
                }
                None => {}
            }
        }
        Ok(findings)
    }

    fn session_key(&self, session_id: &str) -> Result<(i64, i64), MirrorError> {
        self.conn
            .query_row(
                "SELECT session_key, version FROM sessions WHERE session_id = ?1",
                [session_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?
            .ok_or(MirrorError::UnknownSession)
    }

    /// The line problems recorded for a session, by line.
    pub fn problems(&self, session_id: &str) -> Result<Vec<(u64, String)>, MirrorError> {
        let (key, _) = self.session_key(session_id)?;
        let mut stmt = self
            .conn
            .prepare("SELECT line, code FROM problems WHERE session_key = ?1 ORDER BY line")?;
        let rows = stmt
            .query_map([key], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }
}

type Header = (SessionHeader, String, u64, u64);

/// One mirrored entry as the replay walks it: id, parent id, user message, ledger entry.
type MirrorRow = (Option<String>, Option<String>, bool, bool);

/// Finds the header as Pi does (the first parsed line) and returns it with the SHA-256 of its
/// bytes, the offset after it and its line number.
fn read_session_header<R: Read + Seek>(source: &mut R) -> Result<Header, MirrorError> {
    source.seek(SeekFrom::Start(0))?;
    let mut reader = LineReader::new(&mut *source, 0, 0);
    while let Some(line) = reader.next_line()? {
        let Some(head) = &line.head else { continue };
        if head.entry_type() != EntryType::Session || head.id.is_none() {
            return Err(MirrorError::NotASession);
        }
        let header = read_header(line.bytes, head);
        if header.id.is_none() {
            return Err(MirrorError::BadSessionId);
        }
        let sha = hex::encode(Sha256::digest(line.bytes.unwrap_or_default()));
        let end = line.offset + line.len + u64::from(line.terminated);
        let number = line.line - u64::from(!line.terminated);
        return Ok((header, sha, end, number));
    }
    Err(MirrorError::NotASession)
}

const LISTS: [&str; 5] = [
    "tools",
    "groups",
    "allowlistTools",
    "allowlistGroups",
    "considered",
];

/// Mirrors complete lines from `offset`; returns the offset after the last one mirrored, its
/// line number and the entry count.
#[allow(clippy::too_many_arguments)]
fn mirror_lines<R: Read>(
    tx: &Transaction<'_>,
    session: i64,
    version: u64,
    source: &mut R,
    offset: u64,
    lines: u64,
    mut seq: u64,
    report: &mut MirrorReport,
) -> Result<(u64, u64, u64), MirrorError> {
    let mut insert_entry = tx.prepare_cached(
        "INSERT INTO entries (session_key, seq, line, entry_id, parent_id, type, user_message,
                              ledger, data, timestamp)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    let mut insert_problem = tx.prepare_cached(
        "INSERT OR REPLACE INTO problems (session_key, line, code) VALUES (?1, ?2, ?3)",
    )?;
    let mut insert_round = tx.prepare_cached(
        "INSERT INTO rounds (session_key, seq, round_id, part, parts, digest, mode, boundary, basis)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    let mut insert_name = tx.prepare_cached(
        "INSERT INTO names (session_key, seq, list, position, name, score)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut reader = LineReader::new(source, offset, lines);
    let (mut end, mut end_line) = (offset, lines);
    while let Some(line) = reader.next_line()? {
        let Some(head) = &line.head else {
            if !line.terminated {
                // A truncated last line: left for the next pass, once it is complete.
                break;
            }
            let code = malformed_code(line.bytes);
            insert_problem.execute(params![session, line.line as i64, code.as_str()])?;
            end = line.offset + line.len + 1;
            end_line = line.line;
            continue;
        };
        end = line.offset + line.len + u64::from(line.terminated);
        // An unterminated last line is mirrored, but its newline (when Pi adds it) is read
        // next time as the end of this same line, so it does not count yet.
        end_line = line.line - u64::from(!line.terminated);
        let ty = head.entry_type();
        if ty == EntryType::Session {
            continue;
        }
        if head.id.is_none() {
            let code = LineProblemCode::NoId.as_str();
            insert_problem.execute(params![session, line.line as i64, code])?;
        }
        // An entry without an id is on no branch, so its parent never matters (and the table
        // keeps one problem a line).
        if head.parent_unusable && head.id.is_some() && version >= 2 {
            let code = LineProblemCode::UnusableParent.as_str();
            insert_problem.execute(params![session, line.line as i64, code])?;
        }
        let (ledger, user) = (head.is_ledger(), head.is_user_message());
        let (mut data, mut timestamp) = (None, None);
        if ledger {
            let value: Option<Value> = line.bytes.and_then(|b| serde_json::from_slice(b).ok());
            if let Some(value) = &value {
                data = value.get("data").map(Value::to_string);
                timestamp = value
                    .get("timestamp")
                    .and_then(Value::as_str)
                    .filter(|t| t.len() <= 64)
                    .map(str::to_owned);
                if let Some(part) = value.get("data").and_then(|d| decode_part(d).ok()) {
                    let header = part.header.as_ref();
                    insert_round.execute(params![
                        session,
                        seq as i64,
                        part.round,
                        part.part,
                        part.parts,
                        hex::encode(part.digest),
                        header.map(|h| h.mode.as_str()),
                        header.map(|h| h.boundary.as_str()),
                        header.map(|h| h.basis.as_str()),
                    ])?;
                    report.parts += 1;
                    for (list, names) in LISTS.iter().zip(&part.lists) {
                        for (position, name) in names.iter().enumerate() {
                            insert_name.execute(params![
                                session,
                                seq as i64,
                                list,
                                position as i64,
                                name,
                                Option::<i64>::None
                            ])?;
                        }
                        report.names += names.len() as u64;
                    }
                    for (position, (name, score)) in part.scores.iter().enumerate() {
                        insert_name.execute(params![
                            session,
                            seq as i64,
                            "scores",
                            position as i64,
                            name,
                            i64::from(score.thousandths())
                        ])?;
                    }
                    report.names += part.scores.len() as u64;
                }
            }
        }
        insert_entry.execute(params![
            session,
            seq as i64,
            line.line as i64,
            head.id,
            head.parent_id,
            ty.as_str(),
            user,
            ledger,
            data,
            timestamp
        ])?;
        seq += 1;
        report.entries += 1;
    }
    Ok((end, end_line, seq))
}

#[cfg(test)]
mod tests;
