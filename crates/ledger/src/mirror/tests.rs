use super::*;
use crate::{encode_round_chunked, Basis, Boundary, Round, SessionFile};
use pcd_model::Mode;
use proptest::prelude::*;
use std::io::Cursor;
use std::time::Duration;

/// One generated step of a session: what is appended, and where (`/tree` moves the leaf).
#[derive(Debug, Clone)]
enum Step {
    User,
    Assistant,
    Label,
    Round {
        tools: Vec<u8>,
        chunk: usize,
        drop_part: Option<usize>,
        edit: bool,
    },
    MoveTo(usize),
    Garbage,
    /// An entry Pi never writes (issue 18, finding 2): see [`hostile`].
    Hostile(u8),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => Just(Step::User),
        2 => Just(Step::Assistant),
        1 => Just(Step::Label),
        3 => (
            prop::collection::vec(0..60u8, 0..25),
            1..8usize,
            prop::option::weighted(0.15, 0..4usize),
            prop::bool::weighted(0.1),
        )
            .prop_map(|(tools, chunk, drop_part, edit)| Step::Round { tools, chunk, drop_part, edit }),
        1 => any::<usize>().prop_map(Step::MoveTo),
        1 => Just(Step::Garbage),
        1 => (0..6u8).prop_map(Step::Hostile),
    ]
}

/// Writes a session as Pi would: a header, then entries each a child of the current leaf.
fn session(steps: &[Step], id: &str) -> Vec<u8> {
    let mut out = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"cwd\":\"/home/u/secret\"}}\n"
    );
    let mut ids: Vec<String> = Vec::new();
    let mut leaf: Option<String> = None;
    let mut rounds = 0;
    fn push(ids: &mut Vec<String>, out: &mut String, leaf: &mut Option<String>, body: String) {
        let id = format!("{:08x}", 0x1000 + ids.len());
        let parent = leaf
            .as_ref()
            .map_or("null".to_owned(), |p| format!("\"{p}\""));
        out.push_str(&format!(
            "{{{body},\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-11-29T17:13:20.686Z\"}}\n"
        ));
        ids.push(id.clone());
        *leaf = Some(id);
    }
    for step in steps {
        match step {
            Step::User => push(
                &mut ids,
                &mut out,
                &mut leaf,
                r#""type":"message","message":{"role":"user","content":"hi"}"#.into(),
            ),
            Step::Assistant => push(
                &mut ids,
                &mut out,
                &mut leaf,
                r#""type":"message","message":{"role":"assistant"}"#.into(),
            ),
            Step::Label => push(
                &mut ids,
                &mut out,
                &mut leaf,
                r#""type":"label","label":"x""#.into(),
            ),
            Step::Garbage => out.push_str("{\"type\":\"message\",\n"),
            Step::Hostile(kind) => {
                let n = ids.len();
                let (line, new_leaf) = hostile(*kind, n, leaf.as_deref());
                out.push_str(&line);
                // Placeholders keep the generated ids unique.
                ids.push(format!("{:08x}", 0x1000 + n));
                if let Some(l) = new_leaf {
                    leaf = Some(l);
                }
            }
            Step::MoveTo(i) => {
                if !ids.is_empty() {
                    leaf = Some(ids[*i % ids.len()].clone());
                }
            }
            Step::Round {
                tools,
                chunk,
                drop_part,
                edit,
            } => {
                rounds += 1;
                let mut r = Round::new(
                    format!("r{rounds}"),
                    Mode::Tools,
                    Boundary::Prompt,
                    Basis::Scored,
                );
                r.tools = tools.iter().map(|t| format!("tool_{t}")).collect();
                r.first_prompt = Some(crate::FirstPromptRef::NextUserMessage);
                let parts = encode_round_chunked(&r, *chunk).unwrap();
                for (i, mut data) in parts.into_iter().enumerate() {
                    if Some(i) == *drop_part {
                        continue;
                    }
                    if *edit && i == 0 {
                        data["basis"] = "unscored".into();
                    }
                    push(
                        &mut ids,
                        &mut out,
                        &mut leaf,
                        format!(r#""type":"custom","customType":"{CUSTOM_TYPE}","data":{data}"#),
                    );
                }
            }
        }
    }
    out.into_bytes()
}

/// A hostile line (issue 18, finding 2) appended after `leaf`, and the leaf after it when it
/// moves: a ledger entry without an id or with a numeric one, an entry whose parent is not in
/// the file or not a string, a message without an id, and two entries that are each other's
/// parent (a cycle).
fn hostile(kind: u8, n: usize, leaf: Option<&str>) -> (String, Option<String>) {
    let parent = leaf.map_or("null".to_owned(), |p| format!("\"{p}\""));
    let mut r = Round::new(
        format!("h{n}"),
        Mode::Tools,
        Boundary::Prompt,
        Basis::Scored,
    );
    r.tools = vec![format!("hostile_{n}")];
    let data = crate::encode_round(&r).unwrap().remove(0);
    let ledger = format!(r#""type":"custom","customType":"{CUSTOM_TYPE}","data":{data}"#);
    let id = format!("{:08x}", 0x1000 + n);
    let ts = "\"timestamp\":\"2026-11-29T17:13:20.686Z\"";
    match kind {
        0 => (format!("{{{ledger},\"parentId\":{parent},{ts}}}\n"), None),
        1 => (
            format!("{{{ledger},\"id\":{n},\"parentId\":{parent},{ts}}}\n"),
            None,
        ),
        2 => (
            format!("{{{ledger},\"id\":\"{id}\",\"parentId\":\"deadbeef\",{ts}}}\n"),
            Some(id),
        ),
        3 => (
            format!("{{{ledger},\"id\":\"{id}\",\"parentId\":7,{ts}}}\n"),
            Some(id),
        ),
        4 => (
            format!("{{\"type\":\"message\",\"message\":{{\"role\":\"user\"}},\"parentId\":{parent},{ts}}}\n"),
            None,
        ),
        _ => {
            // `c…` ids are never generated otherwise.
            let (a, b) = (format!("c{n:07x}"), format!("d{n:07x}"));
            (
                format!(
                    "{{{ledger},\"id\":\"{a}\",\"parentId\":\"{b}\",{ts}}}\n{{\"type\":\"label\",\"id\":\"{b}\",\"parentId\":\"{a}\",{ts}}}\n"
                ),
                Some(b),
            )
        }
    }
}

type Dump = Vec<Vec<String>>;

fn dump(mirror: &Mirror) -> Dump {
    let mut all = Vec::new();
    for table in ["sessions", "entries", "problems", "rounds", "names"] {
        let mut stmt = mirror
            .connection()
            .prepare(&format!("SELECT * FROM {table}"))
            .unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                (0..n)
                    .map(|i| {
                        r.get::<_, rusqlite::types::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .unwrap();
        for row in rows {
            let mut row = row.unwrap();
            row.insert(0, table.to_owned());
            all.push(row);
        }
    }
    all.sort();
    all
}

fn jsonl_replay(bytes: &[u8], leaf: Option<&str>) -> BranchReplay {
    let mut file = SessionFile::from_reader(Cursor::new(bytes.to_vec())).unwrap();
    let branch = file.branch_for(leaf).unwrap();
    file.fold_branch(&branch).unwrap()
}

fn sample_steps() -> Vec<Step> {
    vec![
        Step::User,
        Step::Round {
            tools: vec![1, 2, 3],
            chunk: 2,
            drop_part: None,
            edit: false,
        },
        Step::User,
        Step::Assistant,
        Step::Round {
            tools: (0..50).collect(),
            chunk: 7,
            drop_part: Some(1),
            edit: false,
        },
        Step::Garbage,
        Step::MoveTo(1),
        Step::Round {
            tools: vec![9],
            chunk: 1,
            drop_part: None,
            edit: false,
        },
        Step::Label,
    ]
}

#[test]
fn mirroring_twice_changes_nothing() {
    let bytes = session(&sample_steps(), "s1");
    let mut mirror = Mirror::open_in_memory().unwrap();
    let first = mirror.mirror_reader(Cursor::new(bytes.clone())).unwrap();
    assert!(first.entries > 0 && first.parts > 0 && first.names > 0);
    let before = dump(&mirror);
    let again = mirror.mirror_reader(Cursor::new(bytes)).unwrap();
    assert_eq!((again.entries, again.names, again.bytes), (0, 0, 0));
    assert_eq!(before, dump(&mirror));
    assert_eq!(mirror.sessions().unwrap(), ["s1"]);
    assert_eq!(
        mirror.problems("s1").unwrap(),
        [(14, "malformed_line".to_owned())]
    );
}

#[test]
fn mirroring_is_incremental() {
    let bytes = session(&sample_steps(), "s1");
    let mut whole = Mirror::open_in_memory().unwrap();
    whole.mirror_reader(Cursor::new(bytes.clone())).unwrap();
    // Cut at every line end, and once mid-line (a line being written).
    let cuts: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .chain([bytes.len() / 2])
        .collect();
    for cut in cuts {
        let mut parts = Mirror::open_in_memory().unwrap();
        if parts
            .mirror_reader(Cursor::new(bytes[..cut].to_vec()))
            .is_err()
        {
            continue; // not even a header yet
        }
        let rest = parts.mirror_reader(Cursor::new(bytes.clone())).unwrap();
        assert!(!rest.restarted);
        assert_eq!(dump(&whole), dump(&parts), "cut at {cut}");
    }
}

#[test]
fn a_replaced_file_is_mirrored_again() {
    let mut mirror = Mirror::open_in_memory().unwrap();
    mirror
        .mirror_reader(Cursor::new(session(&sample_steps(), "s1")))
        .unwrap();
    let shorter = session(&[Step::User], "s1");
    let report = mirror.mirror_reader(Cursor::new(shorter.clone())).unwrap();
    assert!(report.restarted);
    let mut fresh = Mirror::open_in_memory().unwrap();
    fresh.mirror_reader(Cursor::new(shorter)).unwrap();
    assert_eq!(dump(&mirror), dump(&fresh));
}

#[test]
fn a_failure_mid_mirror_leaves_the_previous_state() {
    let steps = sample_steps();
    let bytes = session(&steps, "s1");
    let mut mirror = Mirror::open_in_memory().unwrap();
    let half = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
    mirror
        .mirror_reader(Cursor::new(bytes[..half].to_vec()))
        .unwrap();
    let mut more = steps.clone();
    more.push(Step::Round {
        tools: vec![42],
        chunk: 1,
        drop_part: None,
        edit: false,
    });
    let before = dump(&mirror);
    // Fault injection: the disk "fails" on the 42nd tool name, after many rows were written.
    mirror
        .connection()
        .execute_batch(
            "CREATE TRIGGER fail BEFORE INSERT ON names WHEN NEW.name = 'tool_42'
             BEGIN SELECT RAISE(ABORT, 'injected fault'); END;",
        )
        .unwrap();
    let error = mirror
        .mirror_reader(Cursor::new(session(&more, "s1")))
        .unwrap_err();
    assert!(matches!(error, MirrorError::Sqlite(_)));
    assert_eq!(before, dump(&mirror));
    mirror
        .connection()
        .execute_batch("DROP TRIGGER fail")
        .unwrap();
    mirror
        .mirror_reader(Cursor::new(session(&more, "s1")))
        .unwrap();
    let mut fresh = Mirror::open_in_memory().unwrap();
    fresh
        .mirror_reader(Cursor::new(session(&more, "s1")))
        .unwrap();
    assert_eq!(dump(&fresh), dump(&mirror));
}

#[test]
fn files_use_wal_and_readers_see_committed_state_during_a_write() {
    let dir = std::env::temp_dir().join(format!("pcd-ledger-wal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mirror.db");
    let _ = std::fs::remove_file(&path);
    let mut mirror = Mirror::open(&path).unwrap();
    let mode: String = mirror
        .connection()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    mirror
        .mirror_reader(Cursor::new(session(&sample_steps(), "s1")))
        .unwrap();
    let reader = Mirror::open(&path).unwrap();
    mirror
        .connection()
        .execute_batch("BEGIN IMMEDIATE; DELETE FROM names;")
        .unwrap();
    let names: i64 = reader
        .connection()
        .query_row("SELECT count(*) FROM names", [], |r| r.get(0))
        .unwrap();
    assert!(names > 0, "the reader sees the committed rows");
    mirror.connection().execute_batch("ROLLBACK").unwrap();
    drop((mirror, reader));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 18, item 7: `replay --sqlite` opened a missing database by creating it. Reading an
/// existing mirror creates and writes nothing, and what is not a mirror says so.
#[test]
fn opening_an_existing_mirror_creates_nothing() {
    let dir = std::env::temp_dir().join(format!("pcd-ledger-existing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.db");
    assert!(matches!(
        Mirror::open_existing(&missing),
        Err(MirrorError::NoDatabase)
    ));
    assert!(!missing.exists(), "nothing is created");

    let not_a_db = dir.join("notes.db");
    std::fs::write(
        &not_a_db,
        "not a database at all, just some notes\n".repeat(200),
    )
    .unwrap();
    assert!(matches!(
        Mirror::open_existing(&not_a_db),
        Err(MirrorError::NotAMirror)
    ));
    let empty = dir.join("empty.db");
    std::fs::write(&empty, "").unwrap();
    assert!(matches!(
        Mirror::open_existing(&empty),
        Err(MirrorError::NotAMirror)
    ));

    let path = dir.join("mirror.db");
    let bytes = session(&sample_steps(), "s1");
    Mirror::open(&path)
        .unwrap()
        .mirror_reader(Cursor::new(bytes.clone()))
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    let existing = Mirror::open_existing(&path).unwrap();
    assert_eq!(
        existing.replay("s1", None).unwrap().state,
        jsonl_replay(&bytes, None).state
    );
    assert!(existing
        .connection()
        .execute_batch("DELETE FROM names")
        .is_err());
    drop(existing);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replay_from_sqlite_matches_the_jsonl_on_a_known_session() {
    let bytes = session(&sample_steps(), "s1");
    let mut mirror = Mirror::open_in_memory().unwrap();
    mirror.mirror_reader(Cursor::new(bytes.clone())).unwrap();
    let from_sql = mirror.replay("s1", None).unwrap();
    let from_jsonl = jsonl_replay(&bytes, None);
    assert!(from_jsonl.state.is_tool_available("tool_9"));
    assert!(!from_jsonl.findings.is_empty());
    assert_eq!(from_sql.state, from_jsonl.state);
    assert_eq!(from_sql.findings, from_jsonl.findings);
    assert!(matches!(
        mirror.replay("nope", None),
        Err(MirrorError::UnknownSession)
    ));
    assert!(matches!(
        mirror.replay("s1", Some("ffffffff")),
        Err(MirrorError::UnknownLeaf)
    ));
}

#[test]
fn long_lines_replay_the_same_from_sqlite() {
    let big = "B".repeat(1_100_000);
    let mut text = String::from_utf8(session(&sample_steps(), "s2")).unwrap();
    text.push_str(&format!(
        "{{\"type\":\"custom\",\"customType\":\"{CUSTOM_TYPE}\",\"data\":{{\"v\":1,\"x\":\"{big}\"}},\"id\":\"0000ffff\",\"parentId\":\"00001009\"}}\n"
    ));
    text.push_str(&format!(
        "{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"{big}\"}},\"id\":\"0000fffe\",\"parentId\":\"0000ffff\"}}\n"
    ));
    let bytes = text.into_bytes();
    let mut mirror = Mirror::open_in_memory().unwrap();
    mirror.mirror_reader(Cursor::new(bytes.clone())).unwrap();
    let from_jsonl = jsonl_replay(&bytes, None);
    let from_sql = mirror.replay("s2", None).unwrap();
    assert_eq!(from_sql.state, from_jsonl.state);
    assert_eq!(from_sql.findings, from_jsonl.findings);
    assert_eq!(from_sql.entries, from_jsonl.entries);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Replaying from SQLite gives exactly what replaying the JSONL gives, for every leaf of
    /// generated sessions with forks, chunked rounds, torn and edited rounds and garbage lines,
    /// mirrored in one pass or two.
    #[test]
    fn replay_from_sqlite_equals_replay_from_jsonl(
        steps in prop::collection::vec(step(), 0..40),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = session(&steps, "gen");
        let mut mirror = Mirror::open_in_memory().unwrap();
        let newline_ends: Vec<usize> =
            bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1).collect();
        let first = newline_ends[cut.index(newline_ends.len())];
        mirror.mirror_reader(Cursor::new(bytes[..first].to_vec())).unwrap();
        mirror.mirror_reader(Cursor::new(bytes.clone())).unwrap();

        let file = SessionFile::from_reader(Cursor::new(bytes.clone())).unwrap();
        let leaves: Vec<Option<String>> = std::iter::once(None)
            .chain(file.positions().filter_map(|p| file.id(p)).map(Some))
            .collect();
        for leaf in leaves {
            let from_jsonl = jsonl_replay(&bytes, leaf.as_deref());
            let from_sql = mirror.replay("gen", leaf.as_deref()).unwrap();
            prop_assert_eq!(&from_sql.state, &from_jsonl.state);
            prop_assert_eq!(&from_sql.findings, &from_jsonl.findings);
            prop_assert_eq!(from_sql.entries, from_jsonl.entries);
        }
    }
}

#[test]
fn version_one_files_replay_the_same_from_sqlite() {
    let text = "{\"type\":\"session\",\"id\":\"old\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\"}}\n{\"type\":\"message\",\"message\":{\"role\":\"assistant\"}}\n";
    let mut mirror = Mirror::open_in_memory().unwrap();
    mirror
        .mirror_reader(Cursor::new(text.as_bytes().to_vec()))
        .unwrap();
    let from_sql = mirror.replay("old", None).unwrap();
    let from_jsonl = jsonl_replay(text.as_bytes(), None);
    assert_eq!(from_sql.entries, 2);
    assert_eq!(from_sql.entries, from_jsonl.entries);
    assert_eq!(from_sql.state, from_jsonl.state);
}

/// A fresh folder for a mirror database, removed on drop.
struct DbDir(std::path::PathBuf);

impl DbDir {
    fn new(name: &str) -> DbDir {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("pcd-ledger-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        DbDir(dir)
    }

    fn db(&self) -> std::path::PathBuf {
        self.0.join("mirror.db")
    }
}

impl Drop for DbDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The session of [`sample_steps`] with one more round, and the length of its first part.
fn grown_session() -> (Vec<u8>, Vec<u8>) {
    let steps = sample_steps();
    let first = session(&steps, "s1");
    let mut more = steps;
    more.push(Step::User);
    more.push(Step::Round {
        tools: vec![42, 43],
        chunk: 1,
        drop_part: None,
        edit: false,
    });
    (first, session(&more, "s1"))
}

fn fresh_dump(bytes: &[u8]) -> Dump {
    let mut fresh = Mirror::open_in_memory().unwrap();
    fresh.mirror_reader(Cursor::new(bytes.to_vec())).unwrap();
    dump(&fresh)
}

/// Another connection holds the write lock (`BEGIN IMMEDIATE` with a write in flight): a mirror
/// pass that may not wait fails with [`MirrorError::Busy`], changes nothing, and works when
/// tried again after the lock is released.
#[test]
fn a_busy_database_fails_clearly_keeps_the_previous_state_and_works_when_retried() {
    let dir = DbDir::new("busy");
    let (first, grown) = grown_session();
    let mut mirror = Mirror::open_with_busy_timeout(&dir.db(), Duration::ZERO).unwrap();
    mirror.mirror_reader(Cursor::new(first.clone())).unwrap();
    let before = dump(&mirror);
    let replay_before = mirror.replay("s1", None).unwrap();

    let other = rusqlite::Connection::open(dir.db()).unwrap();
    other
        .execute_batch("BEGIN IMMEDIATE; DELETE FROM names; INSERT INTO meta VALUES ('x', 'y');")
        .unwrap();
    let error = mirror
        .mirror_reader(Cursor::new(grown.clone()))
        .unwrap_err();
    assert!(matches!(error, MirrorError::Busy), "{error:?}");
    let text = error.to_string();
    assert!(
        text.contains("busy") && !text.contains(dir.0.to_str().unwrap()),
        "{text}"
    );
    // Reading still works (WAL) and sees exactly the previous state.
    assert_eq!(before, dump(&mirror));
    let replay_now = mirror.replay("s1", None).unwrap();
    assert_eq!(replay_now.state, replay_before.state);
    assert_eq!(replay_now.findings, replay_before.findings);

    other.execute_batch("ROLLBACK").unwrap();
    mirror.mirror_reader(Cursor::new(grown.clone())).unwrap();
    assert_eq!(dump(&mirror), fresh_dump(&grown));
}

static WAITED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static MIRROR_DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A busy handler that records that the mirror waited, and waits (bounded).
fn record_and_wait(count: i32) -> bool {
    WAITED.store(true, std::sync::atomic::Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(1));
    count < 60_000
}

/// A writer that commits while a mirror pass waits for its lock: the pass waits (SQLite's
/// busy handler, which `busy_timeout` installs) and then succeeds. The writer commits only
/// once the mirror is seen waiting, so nothing here depends on timing.
#[test]
fn a_mirror_pass_waits_for_a_writer_and_then_succeeds() {
    let dir = DbDir::new("wait");
    let (first, grown) = grown_session();
    let mut mirror = Mirror::open(&dir.db()).unwrap();
    mirror.mirror_reader(Cursor::new(first)).unwrap();
    let other = rusqlite::Connection::open(dir.db()).unwrap();
    other
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO meta VALUES ('writer', 'was here');")
        .unwrap();
    mirror
        .connection()
        .busy_handler(Some(record_and_wait))
        .unwrap();
    let writer = std::thread::spawn(move || {
        // Commits once the mirror waits for it (or gives up waiting when the mirror is done).
        while !WAITED.load(std::sync::atomic::Ordering::SeqCst)
            && !MIRROR_DONE.load(std::sync::atomic::Ordering::SeqCst)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        other.execute_batch("COMMIT").unwrap();
    });
    let result = mirror.mirror_reader(Cursor::new(grown.clone()));
    MIRROR_DONE.store(true, std::sync::atomic::Ordering::SeqCst);
    writer.join().unwrap();
    let report = result.unwrap();
    assert!(WAITED.load(std::sync::atomic::Ordering::SeqCst));
    assert!(report.entries > 0);
    assert_eq!(dump(&mirror), fresh_dump(&grown));
    let writer_row: String = mirror
        .connection()
        .query_row("SELECT value FROM meta WHERE key = 'writer'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(writer_row, "was here");
}

const LOCKER_DB: &str = "PCD_LEDGER_TEST_LOCKER_DB";
const LOCKER_MODE: &str = "PCD_LEDGER_TEST_LOCKER_MODE";

/// The other process of [`another_process_holding_the_database_busy_or_locked_fails_a_mirror_cleanly`]:
/// takes the database's lock, says so by creating `<db>.held`, and keeps it until its standard
/// input closes.
#[test]
#[ignore = "run as a child process by another_process_holding_the_database_..."]
fn child_lock_holder() {
    let (Ok(db), Ok(mode)) = (std::env::var(LOCKER_DB), std::env::var(LOCKER_MODE)) else {
        return;
    };
    let conn = rusqlite::Connection::open(&db).unwrap();
    if mode == "exclusive" {
        // Locked: no other connection may even read.
        conn.execute_batch("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; DELETE FROM names;")
            .unwrap();
    } else {
        conn.execute_batch("BEGIN IMMEDIATE; DELETE FROM names;")
            .unwrap();
    }
    std::fs::write(format!("{db}.held"), b"").unwrap();
    let mut rest = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut rest);
    conn.execute_batch("ROLLBACK").unwrap();
}

/// Another process holds the mirror's write lock (busy), or an exclusive lock that keeps even
/// readers out (locked): mirroring fails with [`MirrorError::Busy`] instead of waiting forever,
/// changes nothing, and works once that process lets go.
#[test]
fn another_process_holding_the_database_busy_or_locked_fails_a_mirror_cleanly() {
    let exe = std::env::current_exe().unwrap();
    for mode in ["busy", "exclusive"] {
        let dir = DbDir::new(mode);
        let (first, grown) = grown_session();
        let mut mirror = Mirror::open(&dir.db()).unwrap();
        mirror.mirror_reader(Cursor::new(first.clone())).unwrap();
        let before = dump(&mirror);
        drop(mirror);
        let held = dir.0.join("mirror.db.held");
        let mut child = std::process::Command::new(&exe)
            .args([
                "--exact",
                "mirror::tests::child_lock_holder",
                "--ignored",
                "--quiet",
            ])
            .env(LOCKER_DB, dir.db())
            .env(LOCKER_MODE, mode)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Waits for the other process to hold the lock (it says so with a file).
        for _ in 0..60_000 {
            if held.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(held.exists(), "{mode}: the lock holder did not start");
        let attempt = Mirror::open_with_busy_timeout(&dir.db(), Duration::ZERO)
            .and_then(|mut m| m.mirror_reader(Cursor::new(grown.clone())).map(|_| m));
        match attempt {
            Err(MirrorError::Busy) => {}
            Err(other) => panic!("{mode}: {other:?}"),
            Ok(_) => panic!("{mode}: mirrored while another process held the lock"),
        }
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success(), "{mode}");
        let mut mirror = Mirror::open_with_busy_timeout(&dir.db(), Duration::ZERO).unwrap();
        assert_eq!(
            before,
            dump(&mirror),
            "{mode}: the previous state is intact"
        );
        mirror.mirror_reader(Cursor::new(grown.clone())).unwrap();
        assert_eq!(dump(&mirror), fresh_dump(&grown), "{mode}");
    }
}
