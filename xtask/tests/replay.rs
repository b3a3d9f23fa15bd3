//! `cargo xtask replay` and `cargo xtask mirror`, run as a person would, on session files written
//! as Pi writes them.

use pcd_ledger::{encode_round_chunked, Basis, Boundary, Round, CUSTOM_TYPE};
use pcd_model::{GroupKey, Mode};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SECRET: &str = "sk-live-PLANTED-SECRET";

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A Pi session: a user prompt with a planted secret, a round in three parts (optionally torn
/// or edited), an allowlist round, then the user's message.
fn session(id: &str, damage: Option<&str>) -> String {
    let mut out = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"t\",\"cwd\":\"/home/{SECRET}\"}}\n"
    );
    let mut n = 0;
    let mut parent = "null".to_owned();
    let mut push = |out: &mut String, body: String| {
        n += 1;
        let id = format!("{n:08x}");
        out.push_str(&format!(
            "{{{body},\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-11-29T17:13:20.686Z\"}}\n"
        ));
        parent = format!("\"{id}\"");
    };
    push(
        &mut out,
        format!(r#""type":"message","message":{{"role":"user","content":"token {SECRET}"}}"#),
    );
    let mut round = Round::new("r1", Mode::Tools, Boundary::InitialPrompt, Basis::Scored);
    round.tools = vec!["web_fetch".into(), "notes_add".into(), "kb_search".into()];
    round.considered = round.tools.clone();
    for (i, mut data) in encode_round_chunked(&round, 1)
        .unwrap()
        .into_iter()
        .enumerate()
    {
        match (damage, i) {
            (Some("torn"), 1) => continue,
            (Some("edited"), 2) => data["tools"][0] = "evil_tool".into(),
            _ => {}
        }
        push(
            &mut out,
            format!(r#""type":"custom","customType":"{CUSTOM_TYPE}","data":{data}"#),
        );
    }
    let mut allow = Round::new("r2", Mode::Tools, Boundary::Allowlist, Basis::Allowlist);
    allow.allowlisted_groups = vec![GroupKey::for_mcp_server("dev-radius")];
    let data = encode_round_chunked(&allow, 1000).unwrap().remove(0);
    push(
        &mut out,
        format!(r#""type":"custom","customType":"{CUSTOM_TYPE}","data":{data}"#),
    );
    out
}

fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn a_clean_session_exits_0_with_the_final_availability() {
    let dir = TempDir::new("clean");
    let file = write(&dir.0, "s.jsonl", &session("clean", None));
    let out = xtask(&["replay", &file, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    assert_eq!(
        v["available"]["tools"],
        serde_json::json!(["kb_search", "notes_add", "web_fetch"])
    );
    assert_eq!(
        v["available"]["groups"],
        serde_json::json!(["mcp__dev_radius"])
    );
    assert_eq!(v["rounds"].as_array().unwrap().len(), 2);
    assert_eq!(v["rounds"][0]["boundary"], "initial-prompt");
    assert_eq!(v["rounds"][1]["basis"], "allowlist");
    assert_eq!(v["findings"], serde_json::json!([]));
    assert!(v["note"].as_str().unwrap().contains("same process"));

    let text = xtask(&["replay", &file]);
    assert_eq!(text.status.code(), Some(0));
    let stdout = String::from_utf8(text.stdout).unwrap();
    assert!(stdout.contains("timeline:"), "{stdout}");
    assert!(stdout.contains("+ 3 tools: web_fetch, notes_add, kb_search"));
    assert!(stdout.contains("does not detect another extension in the same process"));
    for output in [&stdout, &String::from_utf8(out.stdout).unwrap()] {
        assert!(!output.contains(SECRET));
        assert!(!output.contains(dir.0.to_str().unwrap()));
    }
}

#[test]
fn torn_and_edited_rounds_exit_1_and_grant_nothing() {
    let dir = TempDir::new("tamper");
    for (damage, code) in [("torn", "torn_round"), ("edited", "digest_mismatch")] {
        let file = write(&dir.0, "s.jsonl", &session("t", Some(damage)));
        let out = xtask(&["replay", &file, "--json"]);
        assert_eq!(out.status.code(), Some(1), "{damage}");
        let v = json(&out);
        assert_eq!(v["findings"][0]["code"], code);
        assert_eq!(v["findings"][0]["round"], "r1");
        assert_eq!(v["available"]["tools"], serde_json::json!([]));
        assert_eq!(v["clean"], false);
    }
}

#[test]
fn unreadable_files_exit_2() {
    let dir = TempDir::new("unreadable");
    let missing = dir.0.join("missing.jsonl");
    let out = xtask(&["replay", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let not_session = write(&dir.0, "x.jsonl", "{\"type\":\"message\",\"id\":\"1\"}\n");
    assert_eq!(xtask(&["replay", &not_session]).status.code(), Some(2));
    assert_eq!(xtask(&["replay"]).status.code(), Some(2));
    assert_eq!(
        xtask(&["replay", &not_session, "--bogus"]).status.code(),
        Some(2)
    );
}

#[test]
fn a_folder_of_sessions_and_a_chosen_leaf() {
    let dir = TempDir::new("folder");
    let sub = dir.0.join("--home-project--");
    std::fs::create_dir_all(&sub).unwrap();
    write(&sub, "a.jsonl", &session("sa", None));
    write(&sub, "b.jsonl", &session("sb", Some("torn")));
    write(&sub, "notes.txt", "not a session");
    let out = xtask(&["replay", dir.0.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["sessions"].as_array().unwrap().len(), 2);
    assert_eq!(v["available"]["sa"]["tools"].as_array().unwrap().len(), 3);
    assert_eq!(v["findings"][0]["session"], "sb");
    assert_eq!(v["rounds"].as_array().unwrap().len(), 3);

    // Leaf 00000002: only the first part of r1 is on that branch and nothing after it, as a
    // crash while appending leaves it: reported, grants nothing, and the branch is not
    // untrusted, so the audit passes.
    let file = sub.join("a.jsonl");
    let out = xtask(&[
        "replay",
        file.to_str().unwrap(),
        "--leaf",
        "00000002",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    assert_eq!(v["findings"][0]["code"], "interrupted_round");
    assert_eq!(v["available"]["tools"], serde_json::json!([]));
}

#[test]
fn mirror_then_replay_from_sqlite_agrees_with_the_jsonl() {
    let dir = TempDir::new("mirror");
    let file = write(&dir.0, "s.jsonl", &session("m", Some("edited")));
    let db = dir.0.join("mirror.db");
    let db = db.to_str().unwrap();
    let out = xtask(&["mirror", &file, "--sqlite", db]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("+5 entries"));
    let again = xtask(&["mirror", &file, "--sqlite", db]);
    assert!(String::from_utf8(again.stdout)
        .unwrap()
        .contains("+0 entries"));

    let from_jsonl = json(&xtask(&["replay", &file, "--json"]));
    let out = xtask(&["replay", &file, "--sqlite", db, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let from_sqlite = json(&out);
    assert_eq!(from_sqlite["source"], "sqlite");
    for key in ["available", "rounds", "findings", "firstPrompt", "leaf"] {
        assert_eq!(from_sqlite[key], from_jsonl[key], "{key}");
    }
    assert_eq!(xtask(&["mirror", &file]).status.code(), Some(2));
}

/// The clean session of [`session`] forged as an attacker with write access to the file would
/// (issue 18, finding 2): each forgery changes what the branch grants.
fn forge(forgery: &str) -> String {
    let clean = session("forged", None);
    let mut lines: Vec<String> = clean.lines().map(str::to_owned).collect();
    assert_eq!(
        lines.len(),
        6,
        "header, a user message, three parts of r1, r2"
    );
    match forgery {
        "v0" | "v2" => {
            let v = &forgery[1..];
            lines[2] = lines[2].replace(r#"{"v":1,"#, &format!(r#"{{"v":{v},"#));
        }
        "trailing ledger line without an id" => {
            let copy = lines[5].replace(r#""id":"00000005","#, "");
            lines.push(copy);
        }
        "trailing ledger line with a numeric id" => {
            let copy = lines[5].replace(r#""id":"00000005""#, r#""id":5"#);
            lines.push(copy);
        }
        "orphan" => {
            lines.drain(1..5);
        }
        "cycle" => {
            lines[1] = lines[1].replace(r#""parentId":null"#, r#""parentId":"00000005""#);
        }
        _ => unreachable!("{forgery}"),
    }
    let forged = lines.join("\n") + "\n";
    assert_ne!(forged, clean, "{forgery}");
    forged
}

#[test]
fn forged_files_exit_1_with_a_finding_from_the_file_and_from_the_mirror() {
    let dir = TempDir::new("forged");
    for (n, (forgery, code)) in [
        ("v0", "undecodable"),
        ("v2", "unknown_version"),
        (
            "trailing ledger line without an id",
            "ledger_entry_without_id",
        ),
        (
            "trailing ledger line with a numeric id",
            "ledger_entry_without_id",
        ),
        ("orphan", "orphan_parent"),
        ("cycle", "parent_cycle"),
    ]
    .into_iter()
    .enumerate()
    {
        let file = write(&dir.0, "s.jsonl", &forge(forgery));
        let out = xtask(&["replay", &file, "--json"]);
        assert_eq!(out.status.code(), Some(1), "{forgery}");
        let from_jsonl = json(&out);
        let codes: Vec<&str> = from_jsonl["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap())
            .collect();
        assert!(codes.contains(&code), "{forgery}: {codes:?}");
        assert_eq!(from_jsonl["clean"], false, "{forgery}");
        let text = xtask(&["replay", &file]);
        assert_eq!(text.status.code(), Some(1), "{forgery}");
        let stdout = String::from_utf8(text.stdout).unwrap();
        assert!(!stdout.contains("verdict: clean"), "{forgery}: {stdout}");

        // The mirror replays the same findings, the cycle's included.
        let db = dir.0.join(format!("mirror-{n}.db"));
        let db = db.to_str().unwrap();
        assert_eq!(
            xtask(&["mirror", &file, "--sqlite", db]).status.code(),
            Some(0)
        );
        let out = xtask(&["replay", &file, "--sqlite", db, "--json"]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{forgery}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let from_sqlite = json(&out);
        assert_eq!(from_sqlite["source"], "sqlite");
        for key in ["available", "findings", "problems", "rounds"] {
            assert_eq!(from_sqlite[key], from_jsonl[key], "{forgery}: {key}");
        }
    }
}

/// Issue 18, item 7: a mirror taken before the file was edited or grew is not replayed as the
/// file's state, and a missing database is an error naming it, not a new database.
#[test]
fn a_stale_or_missing_mirror_is_never_replayed_as_clean() {
    let dir = TempDir::new("stale");
    let file = write(&dir.0, "s.jsonl", &session("stale", None));
    let db = dir.0.join("mirror.db");
    let db = db.to_str().unwrap();
    assert_eq!(
        xtask(&["mirror", &file, "--sqlite", db]).status.code(),
        Some(0)
    );
    assert_eq!(
        xtask(&["replay", &file, "--sqlite", db]).status.code(),
        Some(0)
    );
    for changed in [
        session("stale", Some("edited")),
        session("stale", None)
            + &session("stale", None)
                .lines()
                .nth(1)
                .unwrap()
                .replace("00000001", "00000009")
            + "\n",
    ] {
        write(&dir.0, "s.jsonl", &changed);
        let out = xtask(&["replay", &file, "--sqlite", db]);
        assert_eq!(out.status.code(), Some(2));
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            stdout.contains("does not match the session file"),
            "{stdout}"
        );
        assert!(!stdout.contains("verdict: clean"), "{stdout}");
    }

    let missing = dir.0.join("missing.db");
    let out = xtask(&["replay", &file, "--sqlite", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("missing.db"), "{stderr}");
    assert!(stderr.contains("does not exist"), "{stderr}");
    assert!(
        !stderr.contains(dir.0.to_str().unwrap()),
        "only the base name"
    );
    assert!(!missing.exists(), "replay creates no database");
}
