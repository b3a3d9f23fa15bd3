use super::*;
use crate::{encode_round, Basis, Boundary, Round};
use pcd_model::{AuditFindingCode, Mode};
use serde_json::json;
use std::io::Cursor;

fn header() -> String {
    r#"{"type":"session","version":3,"id":"019a-sess","timestamp":"2026-11-29T17:00:00.000Z","cwd":"/home/secret-user/project"}"#.to_owned()
}

fn line(ty: &str, id: &str, parent: Option<&str>, extra: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"{ty}","id":"{id}","parentId":{parent},"timestamp":"2026-11-29T17:13:20.686Z"{extra}}}"#
    )
}

fn user(id: &str, parent: Option<&str>) -> String {
    line(
        "message",
        id,
        parent,
        r#","message":{"role":"user","content":"use the token sk-SECRET"}"#,
    )
}

fn ledger(id: &str, parent: Option<&str>, round: &str, tools: &[&str]) -> String {
    let mut r = Round::new(round, Mode::Tools, Boundary::Prompt, Basis::Scored);
    r.tools = tools.iter().map(|t| (*t).to_owned()).collect();
    let data = encode_round(&r).unwrap().remove(0);
    // Pi's key order for custom entries: type, customType, data, id, parentId, timestamp.
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"custom","customType":"{CUSTOM_TYPE}","data":{data},"id":"{id}","parentId":{parent},"timestamp":"2026-11-29T17:13:20.686Z"}}"#
    )
}

fn open(lines: &[String], trailing_newline: bool) -> SessionFile<Cursor<Vec<u8>>> {
    let mut text = lines.join("\n");
    if trailing_newline {
        text.push('\n');
    }
    SessionFile::from_reader(Cursor::new(text.into_bytes())).unwrap()
}

fn codes(findings: &[AuditFinding]) -> Vec<AuditFindingCode> {
    findings.iter().map(|f| f.code).collect()
}

fn ids(file: &mut SessionFile<Cursor<Vec<u8>>>, branch: &[EntryPos]) -> Vec<String> {
    branch.iter().map(|p| file.id(*p).unwrap()).collect()
}

/// A tree: a1 <- a2 (ledger r1) <- a3, then /tree back to a1 and a second branch b1 (ledger r2)
/// <- b2, with a label, a branch summary and a compaction on the way.
fn tree() -> Vec<String> {
    vec![
        header(),
        line(
            "model_change",
            "0000000a",
            None,
            r#","provider":"p","modelId":"m""#,
        ),
        user("000000a1", Some("0000000a")),
        ledger("000000a2", Some("000000a1"), "r1", &["web_fetch"]),
        line(
            "message",
            "000000a3",
            Some("000000a2"),
            r#","message":{"role":"assistant"}"#,
        ),
        line(
            "branch_summary",
            "000000b0",
            Some("000000a1"),
            r#","fromId":"000000a3","summary":"s""#,
        ),
        ledger("000000b1", Some("000000b0"), "r2", &["notes_add"]),
        line(
            "label",
            "000000b2",
            Some("000000b1"),
            r#","targetId":"000000a1","label":"x""#,
        ),
        line(
            "compaction",
            "000000b3",
            Some("000000b2"),
            r#","summary":"c","firstKeptEntryId":"000000b1""#,
        ),
    ]
}

#[test]
fn the_leaf_is_the_last_entry_and_branches_go_root_first() {
    let mut file = open(&tree(), true);
    assert_eq!(file.len(), 8);
    assert_eq!(file.header().version, 3);
    assert_eq!(file.header().id.as_deref(), Some("019a-sess"));
    assert!(!file.header().forked);
    let branch = file.branch_for(None).unwrap();
    assert_eq!(
        ids(&mut file, &branch),
        ["0000000a", "000000a1", "000000b0", "000000b1", "000000b2", "000000b3"]
    );
    let branch = file.branch_for(Some("000000a3")).unwrap();
    assert_eq!(
        ids(&mut file, &branch),
        ["0000000a", "000000a1", "000000a2", "000000a3"]
    );
    assert!(matches!(
        file.branch_for(Some("ffffffff")),
        Err(SessionError::UnknownLeaf)
    ));
    let entries = file.read_branch(&branch).unwrap();
    assert_eq!(entries[1]["message"]["role"], "user");
    assert_eq!(entries[2]["customType"], CUSTOM_TYPE);
}

#[test]
fn availability_follows_the_branch() {
    let mut file = open(&tree(), true);
    let main = file.branch_for(None).unwrap();
    let replay = file.fold_branch(&main).unwrap();
    assert!(replay.findings.is_empty());
    assert!(replay.state.is_tool_available("notes_add"));
    assert!(!replay.state.is_tool_available("web_fetch"));
    let other = file.branch_for(Some("000000a3")).unwrap();
    let replay = file.fold_branch(&other).unwrap();
    assert!(replay.state.is_tool_available("web_fetch"));
    assert!(!replay.state.is_tool_available("notes_add"));
}

#[test]
fn a_line_over_one_mebibyte_keeps_the_branch_whole() {
    let image = "A".repeat(3 << 20);
    let mut lines = vec![
        header(),
        user("00000001", None),
        line(
            "message",
            "00000002",
            Some("00000001"),
            &format!(
                r#","message":{{"role":"toolResult","content":[{{"type":"image","data":"{image}"}}]}}"#
            ),
        ),
        ledger("00000003", Some("00000002"), "r1", &["web_fetch"]),
    ];
    // Pi writes message fields before `message`; put a long one where the id comes last too.
    lines.push(format!(
        r#"{{"type":"message","message":{{"role":"user","content":"{image}"}},"id":"00000004","parentId":"00000003"}}"#
    ));
    let mut file = open(&lines, true);
    let branch = file.branch_for(None).unwrap();
    assert_eq!(
        ids(&mut file, &branch),
        ["00000001", "00000002", "00000003", "00000004"]
    );
    let stub = file.read_entry(branch[1]).unwrap();
    assert_eq!(
        stub,
        json!({"type": "message", "id": "00000002", "parentId": "00000001"})
    );
    let stub = file.read_entry(branch[3]).unwrap();
    assert_eq!(stub["message"], json!({"role": "user"}));
    let replay = file.fold_branch(&branch).unwrap();
    assert!(replay.state.is_tool_available("web_fetch"));
}

#[test]
fn a_lone_surrogate_escape_is_read_as_the_replacement_character() {
    // Half an emoji, as Node's JSON.stringify writes it in a session file.
    let lines = vec![
        header(),
        line(
            "message",
            "00000001",
            None,
            r#","message":{"role":"user","content":"is it \ud83d chilly?"}"#,
        ),
        ledger("00000002", Some("00000001"), "r1", &["web_fetch"]),
    ];
    let mut file = open(&lines, true);
    let branch = file.branch_for(None).unwrap();
    let entry = file.read_entry(branch[0]).unwrap();
    assert_eq!(entry["message"]["content"], "is it \u{FFFD} chilly?");
    let replay = file.fold_branch(&branch).unwrap();
    assert!(replay.state.is_tool_available("web_fetch"));
}

#[test]
fn a_ledger_line_over_one_mebibyte_is_reported_not_decoded() {
    let filler = "x".repeat(2 << 20);
    let lines = vec![
        header(),
        format!(
            r#"{{"type":"custom","customType":"{CUSTOM_TYPE}","data":{{"v":1,"pad":"{filler}"}},"id":"00000001","parentId":null}}"#
        ),
    ];
    let mut file = open(&lines, true);
    let branch = file.branch_for(None).unwrap();
    let replay = file.fold_branch(&branch).unwrap();
    assert_eq!(replay.findings.len(), 1);
    assert_eq!(replay.findings[0].code, AuditFindingCode::Undecodable);
    assert_eq!(replay.findings[0].entry_id.as_deref(), Some("00000001"));
}

#[test]
fn truncated_tails_are_tolerated_and_malformed_lines_reported() {
    let mut lines = tree();
    lines.insert(3, "{\"type\":\"message\",\"id\":".to_owned());
    lines.insert(4, String::new());
    lines.insert(5, "   ".to_owned());
    lines.push(r#"{"type":"message","id":"000000c1","parentId":"000000b3","mes"#.to_owned());
    let mut file = open(&lines, false);
    assert!(file.truncated_tail());
    assert_eq!(
        file.problems(),
        [LineProblem {
            code: LineProblemCode::Malformed,
            line: 4
        }]
    );
    // The truncated line is not an entry: the leaf is the compaction before it.
    let branch = file.branch_for(None).unwrap();
    assert_eq!(file.id(*branch.last().unwrap()).unwrap(), "000000b3");
    // A complete last line without a newline counts, as in Pi.
    let file = open(&tree(), false);
    assert!(!file.truncated_tail());
    assert_eq!(file.len(), 8);
}

#[test]
fn files_that_are_not_sessions_are_refused() {
    for text in [
        "",
        "\n\n",
        "{\"type\":\"message\",\"id\":\"1\"}\n",
        "{\"type\":\"session\"}\n",
        "[1,2]\n",
    ] {
        assert!(
            matches!(
                SessionFile::from_reader(Cursor::new(text.as_bytes().to_vec())),
                Err(SessionError::NotASession)
            ),
            "{text:?}"
        );
    }
    // A malformed line before the header is skipped, as Pi skips it.
    let text = format!("garbage\n{}\n{}\n", header(), user("00000001", None));
    let file = SessionFile::from_reader(Cursor::new(text.into_bytes())).unwrap();
    assert_eq!(file.len(), 1);
}

#[test]
fn version_one_sessions_are_one_chain_and_forks_are_flagged() {
    let text = "{\"type\":\"session\",\"id\":\"old\",\"parentSession\":\"/p/x.jsonl\"}\n\
                {\"type\":\"message\",\"message\":{\"role\":\"user\"}}\n\
                {\"type\":\"message\",\"message\":{\"role\":\"assistant\"}}\n";
    let mut file = SessionFile::from_reader(Cursor::new(text.as_bytes().to_vec())).unwrap();
    assert_eq!(file.header().version, 1);
    assert!(file.header().forked);
    // Pi's migration gives the entries ids and chains them in file order.
    assert_eq!(file.leaf(), Some(EntryPos(1)));
    let branch = file.branch_for(None).unwrap();
    assert_eq!(branch, [EntryPos(0), EntryPos(1)]);
    let replay = file.fold_branch(&branch).unwrap();
    assert_eq!(replay.entries, 2);

    // A version 3 file whose last entry has no id: Pi's leaf id is undefined, its branch empty.
    let text = format!("{}\n{{\"type\":\"message\"}}\n", header());
    let mut file = SessionFile::from_reader(Cursor::new(text.into_bytes())).unwrap();
    assert_eq!(file.leaf(), None);
    assert!(file.branch_for(None).unwrap().is_empty());
}

#[test]
fn cycles_end_the_walk_and_duplicate_ids_take_the_last() {
    let lines = vec![
        header(),
        line("message", "00000001", Some("00000002"), ""),
        line("message", "00000002", Some("00000001"), ""),
    ];
    let mut file = open(&lines, true);
    let branch = file.branch_for(None).unwrap();
    assert_eq!(ids(&mut file, &branch), ["00000001", "00000002"]);
    let replay = file.fold_branch(&branch).unwrap();
    assert_eq!(
        codes(&replay.findings),
        [AuditFindingCode::ParentCycle],
        "the cycle is a finding of the replay"
    );
    assert_eq!(replay.findings[0].entry_id.as_deref(), Some("00000001"));

    let lines = vec![
        header(),
        line("message", "00000001", None, r#","n":1"#),
        line("message", "00000001", None, r#","n":2"#),
        line("message", "00000003", Some("00000001"), ""),
    ];
    let mut file = open(&lines, true);
    let branch = file.branch_for(None).unwrap();
    assert_eq!(file.read_entry(branch[0]).unwrap()["n"], 2);
    assert_eq!(file.find("00000001"), Some(EntryPos(1)));
}

#[test]
fn long_ids_and_odd_entries_work() {
    let uuid = "5d1c1f2e-0b7a-4c53-9d55-0b8a6cb1e0aa";
    let lines = vec![
        header(),
        line("message", uuid, None, ""),
        line("custom", "00000002", Some(uuid), r#","customType":"other""#),
        r#"{"type":"message","id":7,"parentId":"00000002"}"#.to_owned(),
        line("message", "00000004", Some("00000002"), ""),
    ];
    let mut file = open(&lines, true);
    assert_eq!(
        file.problems(),
        [LineProblem {
            code: LineProblemCode::NoId,
            line: 4
        }]
    );
    let branch = file.branch_for(None).unwrap();
    assert_eq!(ids(&mut file, &branch), [uuid, "00000002", "00000004"]);
    assert_eq!(file.find(uuid), Some(EntryPos(0)));
}

// The index stays at about 32 bytes a line (issue 4: memory bounded by a small index per line).
const _: () = assert!(SessionFile::<Cursor<Vec<u8>>>::INDEX_BYTES_PER_LINE <= 32);

#[test]
fn errors_never_name_the_path() {
    let path = Path::new("/home/secret-user/.pi/agent/sessions/missing.jsonl");
    let error = SessionFile::open(path).err().unwrap();
    assert!(!error.to_string().contains("secret-user"));
    assert!(matches!(
        error,
        SessionError::File(pcd_model::FileReadProblem::NotFound)
    ));
}

#[test]
fn a_malformed_ledger_line_is_told_apart() {
    let mut lines = tree();
    lines.insert(
        2,
        format!(r#"{{"type":"custom","customType":"{CUSTOM_TYPE}","data":{{"v":1,"tools":["#),
    );
    let file = open(&lines, true);
    assert_eq!(
        file.problems(),
        [LineProblem {
            code: LineProblemCode::MalformedLedger,
            line: 3
        }]
    );
    assert!(file.problems()[0].code.is_tampering());
}

/// The fuzz targets' seed corpus goes through the same paths as the fuzz targets, so a seed that
/// stops exercising them (or starts panicking) fails here, without cargo-fuzz.
#[test]
fn the_fuzz_seed_corpus_reads_without_panicking() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let mut sessions = 0;
    for entry in std::fs::read_dir(root.join("session_reader")).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let mut file = SessionFile::from_reader(Cursor::new(bytes)).unwrap();
        let positions: Vec<_> = file.positions().collect();
        for leaf in positions {
            let branch = file.branch(leaf);
            assert!(branch.len() <= file.len());
            file.read_branch(&branch).unwrap();
            file.fold_branch(&branch).unwrap();
        }
        sessions += 1;
    }
    assert!(sessions >= 5);
    let mut decoded = 0;
    for entry in std::fs::read_dir(root.join("entry_decoder")).unwrap() {
        let data: Value =
            serde_json::from_slice(&std::fs::read(entry.unwrap().path()).unwrap()).unwrap();
        decoded += usize::from(crate::decode_single(&data).is_ok());
    }
    assert_eq!(
        decoded, 7,
        "the single-part examples of the format document"
    );
}

#[test]
fn lines_straddling_the_read_buffer_are_read_whole() {
    let mut lines = vec![header()];
    let mut parent = None;
    for i in 0..24 {
        let id = format!("{:08x}", i + 1);
        let pad = "p".repeat(60_000 + i * 7_919);
        lines.push(line(
            "message",
            &id,
            parent.as_deref(),
            &format!(r#","message":{{"role":"user","content":"{pad}"}}"#),
        ));
        parent = Some(id);
    }
    let mut file = open(&lines, true);
    assert!(file.problems().is_empty());
    let branch = file.branch_for(None).unwrap();
    assert_eq!(branch.len(), 24);
    for (pos, text) in branch.iter().zip(&lines[1..]) {
        let expected: Value = serde_json::from_str(text).unwrap();
        assert_eq!(file.read_entry(*pos).unwrap(), expected);
    }
}

/// A session file (written to a temporary path) whose one branch is a single round of `parts`
/// parts of one name each, as a generator: no forged file is checked in.
fn many_parts_file(parts: usize) -> std::path::PathBuf {
    use std::io::Write as _;
    let path = std::env::temp_dir().join(format!(
        "pcd-ledger-many-parts-{}-{parts}.jsonl",
        std::process::id()
    ));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(out, "{}", header()).unwrap();
    let mut round = Round::new("many", Mode::Tools, Boundary::Prompt, Basis::Unscored);
    round.tools = (0..parts).map(|i| format!("t{i}")).collect();
    let mut parent = "null".to_owned();
    for (i, data) in crate::encode_round_chunked(&round, 1)
        .unwrap()
        .into_iter()
        .enumerate()
    {
        let id = format!("{i:08x}");
        writeln!(
            out,
            r#"{{"type":"custom","customType":"{CUSTOM_TYPE}","data":{data},"id":"{id}","parentId":{parent},"timestamp":"2026-11-29T17:13:20.686Z"}}"#
        )
        .unwrap();
        parent = format!("\"{id}\"");
    }
    out.flush().unwrap();
    path
}

/// Issue 18, finding 3: the session file's bounds (lines, bytes, parts of a round) admit a
/// round of 400,000 parts, and it replays whole.
#[test]
fn a_round_of_400_000_parts_replays_from_a_file() {
    let path = many_parts_file(400_000);
    let replay = SessionFile::open(&path).and_then(|mut file| {
        let branch = file.branch_for(None)?;
        file.fold_branch(&branch)
    });
    let _ = std::fs::remove_file(&path);
    let replay = replay.unwrap();
    assert_eq!(replay.entries, 400_000);
    assert!(replay.findings.is_empty(), "{:?}", replay.findings);
    assert_eq!(replay.state.available_tools().count(), 400_000);
}

/// A clean session whose one round grants `web_fetch`, then the forgery: each hides that round
/// from Pi's branch (or breaks it) and must be a finding of the replay (issue 18, finding 2).
fn forged(forgery: &str) -> Vec<String> {
    let mut lines = vec![
        header(),
        user("000000a1", None),
        ledger("000000a2", Some("000000a1"), "r1", &["web_fetch"]),
        user("000000a3", Some("000000a2")),
    ];
    let late = ledger("000000a4", Some("000000a3"), "r2", &["notes_add"]);
    match forgery {
        "v0" | "v2" => {
            let v = &forgery[1..];
            lines[2] = lines[2].replace(r#"{"v":1,"#, &format!(r#"{{"v":{v},"#));
        }
        "trailing ledger line without an id" => {
            lines.push(late.replace(r#""id":"000000a4","#, ""));
        }
        "trailing ledger line with a numeric id" => {
            lines.push(late.replace(r#""id":"000000a4""#, r#""id":164"#));
        }
        "trailing message without an id" => {
            lines.push(
                r#"{"type":"message","parentId":"000000a3","message":{"role":"user"}}"#.to_owned(),
            );
        }
        "orphan" => {
            lines.drain(1..3);
        }
        "orphan with a numeric parent" => {
            lines.drain(1..3);
            lines[1] = lines[1].replace(r#""parentId":"000000a2""#, r#""parentId":162"#);
        }
        _ => unreachable!(),
    }
    assert!(
        lines[1..].iter().any(|l| l.contains("web_fetch")) || forgery.starts_with("orphan"),
        "{forgery}"
    );
    lines
}

#[test]
fn forged_files_that_hide_or_break_a_round_are_findings() {
    for (forgery, code, round) in [
        ("v0", AuditFindingCode::Undecodable, Some("r1")),
        ("v2", AuditFindingCode::UnknownVersion, Some("r1")),
        (
            "trailing ledger line without an id",
            AuditFindingCode::EntryWithoutId,
            Some("r2"),
        ),
        (
            "trailing ledger line with a numeric id",
            AuditFindingCode::EntryWithoutId,
            Some("r2"),
        ),
        (
            "trailing message without an id",
            AuditFindingCode::EntryWithoutId,
            None,
        ),
        ("orphan", AuditFindingCode::OrphanParent, None),
        (
            "orphan with a numeric parent",
            AuditFindingCode::OrphanParent,
            None,
        ),
    ] {
        let mut file = open(&forged(forgery), true);
        let branch = file.branch_for(None).unwrap();
        let replay = file.fold_branch(&branch).unwrap();
        assert_eq!(codes(&replay.findings), [code], "{forgery}");
        assert_eq!(replay.findings[0].round.as_deref(), round, "{forgery}");
        assert!(!replay.state.is_tool_available("web_fetch"), "{forgery}");
        if code == AuditFindingCode::OrphanParent {
            assert_eq!(replay.findings[0].entry_id.as_deref(), Some("000000a3"));
        }
    }
}

#[test]
fn a_version_one_file_has_no_ids_to_miss() {
    let lines = vec![
        r#"{"type":"session","version":1,"id":"v1-sess"}"#.to_owned(),
        r#"{"type":"message","message":{"role":"user"}}"#.to_owned(),
    ];
    let mut file = open(&lines, true);
    let branch = file.branch_for(None).unwrap();
    assert!(file.fold_branch(&branch).unwrap().findings.is_empty());
}

/// Issue 18, finding 5: a FIFO, a device, a folder or a file over the bound is refused at once,
/// by what it is, before a byte is read (the FIFO blocked forever, `/dev/zero` ran forever).
#[cfg(target_os = "linux")]
#[test]
fn what_is_not_a_bounded_regular_file_is_refused_at_once() {
    use pcd_model::FileReadProblem as P;
    use std::time::{Duration, Instant};
    let dir = std::env::temp_dir().join(format!("pcd-ledger-special-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo.jsonl");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let sparse = dir.join("sparse.jsonl");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(MAX_SESSION_FILE_BYTES + 1)
        .unwrap();
    let started = Instant::now();
    let open = |path: &Path| match SessionFile::open(path) {
        Ok(_) => panic!("{} was read", path.display()),
        Err(SessionError::File(problem)) => problem,
        Err(other) => panic!("{}: {other}", path.display()),
    };
    assert_eq!(open(&fifo), P::Fifo);
    assert_eq!(open(Path::new("/dev/zero")), P::Device);
    assert_eq!(open(&dir), P::Directory);
    assert_eq!(
        open(&sparse),
        P::TooLarge {
            limit: MAX_SESSION_FILE_BYTES
        }
    );
    #[cfg(feature = "sqlite")]
    {
        let mut mirror = crate::Mirror::open_in_memory().unwrap();
        for (path, expected) in [
            (fifo.as_path(), P::Fifo),
            (Path::new("/dev/zero"), P::Device),
            (dir.as_path(), P::Directory),
        ] {
            match mirror.mirror_file(path) {
                Err(crate::MirrorError::File(problem)) => assert_eq!(problem, expected),
                other => panic!("{}: {other:?}", path.display()),
            }
        }
    }
    assert!(started.elapsed() < Duration::from_secs(1));
    let error = SessionFile::open(&fifo).err().unwrap().to_string();
    assert_eq!(
        error,
        "the session file is a FIFO (named pipe), not a regular file"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// The bound admits 400,000 parts of one name each: a part is under 300 bytes as the ledger writes
// it (issue 18: 100,000 parts made 28.6 MB, entry envelope included).
const _: () = assert!(MAX_SESSION_FILE_BYTES >= 400_000 * 300);
