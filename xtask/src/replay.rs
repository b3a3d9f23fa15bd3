//! `cargo xtask replay SESSION.jsonl|FOLDER [--leaf ID] [--sqlite DB] [--json]`: the ledger of
//! one branch, round by round, its audit findings and the final availability.
//!
//! Exit status: 0 when clean, 1 when an entry of the ledger's type is torn, altered or
//! undecodable (tampering or damage), 2 when a file cannot be read (or the arguments are wrong).

use crate::sessions::{display_name, session_files};
use pcd_ledger::{BranchReplay, Mirror, RoundSummary, SessionFile};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What the digest can and cannot tell, stated in every report.
pub const DIGEST_NOTE: &str = "The digest detects torn or hand-edited rounds; it does not detect \
another extension in the same process writing a valid round.";

const USAGE: &str =
    "usage: cargo xtask replay SESSION.jsonl|FOLDER [--leaf ID] [--sqlite DB] [--json]";
/// Names listed per line in the text report; `--json` lists them all.
const TEXT_LIST_LIMIT: usize = 40;

struct Args {
    path: PathBuf,
    leaf: Option<String>,
    sqlite: Option<PathBuf>,
    json: bool,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let (mut path, mut leaf, mut sqlite, mut json) = (None, None, None, false);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--json" => json = true,
            "--leaf" => leaf = Some(it.next().ok_or("--leaf needs an entry id")?.clone()),
            "--sqlite" => sqlite = Some(PathBuf::from(it.next().ok_or("--sqlite needs a file")?)),
            flag if flag.starts_with("--") => return Err("unknown option".into()),
            _ if path.is_some() => return Err("one session file or folder at a time".into()),
            _ => path = Some(PathBuf::from(arg)),
        }
    }
    Ok(Args {
        path: path.ok_or("a session file or folder is needed")?,
        leaf,
        sqlite,
        json,
    })
}

/// One session's replay, or why it could not be read.
struct Outcome {
    name: String,
    result: Result<Report, String>,
}

struct Report {
    session: String,
    version: u64,
    forked: bool,
    source: &'static str,
    leaf: Option<String>,
    replay: BranchReplay,
    problems: Vec<(u64, String, bool)>,
}

impl Report {
    fn tampered(&self) -> bool {
        self.replay.findings.iter().any(|f| f.code.is_tampering())
            || self.problems.iter().any(|p| p.2)
    }
}

fn replay_file(path: &Path, leaf: Option<&str>, mirror: Option<&Mirror>) -> Result<Report, String> {
    let mut file = SessionFile::open(path).map_err(|e| e.to_string())?;
    let header = file.header().clone();
    let session = header.id.clone().unwrap_or_default();
    let branch = file.branch_for(leaf).map_err(|e| e.to_string())?;
    let leaf_id = branch.last().and_then(|p| file.id(*p));
    let (replay, problems, source) = match mirror {
        None => {
            let replay = file.fold_branch(&branch).map_err(|e| e.to_string())?;
            let problems = file
                .problems()
                .iter()
                .map(|p| (p.line, p.code.as_str().to_owned(), p.code.is_tampering()))
                .collect();
            (replay, problems, "jsonl")
        }
        Some(mirror) => {
            let replay = mirror
                .replay(&session, leaf)
                .map_err(|e| format!("{e} (mirror it first with cargo xtask mirror)"))?;
            let problems = mirror
                .problems(&session)
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|(line, code)| {
                    let tampering = code == "malformed_ledger_line";
                    (line, code, tampering)
                })
                .collect();
            (replay, problems, "sqlite")
        }
    };
    Ok(Report {
        session,
        version: header.version,
        forked: header.forked,
        source,
        leaf: leaf_id,
        replay,
        problems,
    })
}

/// Runs the command.
pub fn run(args: &[String]) -> ExitCode {
    let args = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("xtask replay: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let files = match session_files(&args.path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("xtask replay: cannot read the session path: {}", e.kind());
            return ExitCode::from(2);
        }
    };
    let mirror = match &args.sqlite {
        None => None,
        Some(db) => match Mirror::open(db) {
            Ok(m) => Some(m),
            Err(e) => {
                eprintln!("xtask replay: cannot open the mirror: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let outcomes: Vec<Outcome> = files
        .iter()
        .map(|f| Outcome {
            name: display_name(f),
            result: replay_file(f, args.leaf.as_deref(), mirror.as_ref()),
        })
        .collect();
    let single = !args.path.is_dir();
    if args.json {
        println!("{}", to_json(&outcomes, single));
    } else {
        for outcome in &outcomes {
            print_text(outcome);
        }
        if outcomes.is_empty() {
            println!("no session files found");
        }
        println!("note: {DIGEST_NOTE}");
    }
    exit_code(&outcomes)
}

fn exit_code(outcomes: &[Outcome]) -> ExitCode {
    if outcomes.iter().any(|o| o.result.is_err()) {
        ExitCode::from(2)
    } else if outcomes
        .iter()
        .any(|o| o.result.as_ref().is_ok_and(Report::tampered))
    {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn names_line(names: &[&str]) -> String {
    let shown: Vec<&str> = names.iter().take(TEXT_LIST_LIMIT).copied().collect();
    let mut line = shown.join(", ");
    if names.len() > TEXT_LIST_LIMIT {
        line.push_str(&format!(", … and {} more", names.len() - TEXT_LIST_LIMIT));
    }
    line
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn print_text(outcome: &Outcome) {
    let report = match &outcome.result {
        Ok(r) => r,
        Err(e) => {
            println!("{}: cannot be read: {e}", outcome.name);
            return;
        }
    };
    let fork = if report.forked { ", a fork" } else { "" };
    println!(
        "session {} ({}; version {}{fork}; replayed from {})",
        report.session, outcome.name, report.version, report.source
    );
    println!(
        "  branch: {} to leaf {}",
        plural(report.replay.entries, "entry", "entries"),
        report.leaf.as_deref().unwrap_or("(none)")
    );
    let state = &report.replay.state;
    if state.rounds().is_empty() {
        println!("  timeline: no rounds");
    } else {
        println!("  timeline:");
    }
    for (i, round) in state.rounds().iter().enumerate() {
        print_round(i + 1, round);
    }
    if !report.replay.findings.is_empty() {
        println!("  findings:");
        for f in &report.replay.findings {
            // The sentence (with the round and entry ids made safe to print) is ui-text's.
            println!("    {}: {}", f.code.as_str(), pcd_ui_text::audit_finding(f));
        }
    }
    if !report.problems.is_empty() {
        println!("  line problems:");
        for (line, code, _) in &report.problems {
            println!("    line {line}: {code}");
        }
    }
    let (tools, groups) = available(report);
    println!(
        "  available: {}, {}",
        plural(tools.len(), "tool", "tools"),
        plural(groups.len(), "group", "groups")
    );
    if !tools.is_empty() {
        println!("    tools: {}", names_line(&tools));
    }
    if !groups.is_empty() {
        println!("    groups: {}", names_line(&groups));
    }
    if let Some(first) = state.first_prompt() {
        println!(
            "  first prompt: entry {} (picked by round {})",
            first.entry_id.as_deref().unwrap_or("(not appended yet)"),
            first.round
        );
    }
    let verdict = if report.tampered() {
        "TAMPERED OR DAMAGED"
    } else {
        "clean"
    };
    println!("  verdict: {verdict}");
}

fn print_round(n: usize, round: &RoundSummary) {
    println!(
        "    {n}. round {} at {} (entry {}): {} boundary, {}, {} mode",
        round.id,
        round.timestamp.as_deref().unwrap_or("?"),
        round.entry_id.as_deref().unwrap_or("?"),
        round.boundary.as_str(),
        round.basis.as_str(),
        round.mode.as_str()
    );
    let tools: Vec<&str> = round.new_tools.iter().map(|s| &**s).collect();
    let groups: Vec<&str> = round.new_groups.iter().map(|s| &**s).collect();
    if !tools.is_empty() {
        println!(
            "       + {}: {}",
            plural(tools.len(), "tool", "tools"),
            names_line(&tools)
        );
    }
    if !groups.is_empty() {
        println!(
            "       + {}: {}",
            plural(groups.len(), "group", "groups"),
            names_line(&groups)
        );
    }
    let threshold = round
        .threshold
        .map(|t| format!(", threshold {:.3}", t.as_f64()))
        .unwrap_or_default();
    println!(
        "       considered {}, scored {}, allowlisted {}{threshold}",
        round.considered, round.scored, round.allowlisted
    );
}

fn available(report: &Report) -> (Vec<&str>, Vec<&str>) {
    let mut tools: Vec<&str> = report.replay.state.available_tools().collect();
    let mut groups: Vec<&str> = report.replay.state.available_groups().collect();
    tools.sort_unstable();
    groups.sort_unstable();
    (tools, groups)
}

fn round_json(round: &RoundSummary) -> Value {
    json!({
        "round": &*round.id,
        "entry": round.entry_id.as_deref(),
        "timestamp": round.timestamp.as_deref(),
        "mode": round.mode.as_str(),
        "boundary": round.boundary.as_str(),
        "basis": round.basis.as_str(),
        "threshold": round.threshold.map(|t| t.as_f64()),
        "newTools": round.new_tools.iter().map(|s| &**s).collect::<Vec<_>>(),
        "newGroups": round.new_groups.iter().map(|s| &**s).collect::<Vec<_>>(),
        "allowlisted": round.allowlisted,
        "considered": round.considered,
        "scored": round.scored,
    })
}

fn session_json(outcome: &Outcome) -> Value {
    let report = match &outcome.result {
        Ok(r) => r,
        Err(e) => return json!({"file": outcome.name, "error": e}),
    };
    let (tools, groups) = available(report);
    let state = &report.replay.state;
    json!({
        "file": outcome.name,
        "session": report.session,
        "version": report.version,
        "forked": report.forked,
        "source": report.source,
        "leaf": report.leaf,
        "branchEntries": report.replay.entries,
        "available": {"tools": tools, "groups": groups},
        "rounds": state.rounds().iter().map(round_json).collect::<Vec<_>>(),
        "findings": report.replay.findings.iter().map(|f| json!({
            "code": f.code.as_str(),
            "round": f.round,
            "entry": f.entry_id,
            "tampering": f.code.is_tampering(),
        })).collect::<Vec<_>>(),
        "problems": report.problems.iter().map(|(line, code, tampering)| json!({
            "line": line, "code": code, "tampering": tampering,
        })).collect::<Vec<_>>(),
        "firstPrompt": state.first_prompt().map(|f| json!({
            "round": &*f.round, "entry": f.entry_id.as_deref(),
        })),
        "modes": state.mode_history().iter().map(|m| json!({
            "round": &*m.round, "mode": m.mode.as_str(),
        })).collect::<Vec<_>>(),
        "clean": !report.tampered(),
    })
}

fn to_json(outcomes: &[Outcome], single: bool) -> Value {
    let note = Value::from(DIGEST_NOTE);
    if single {
        if let Some(outcome) = outcomes.first() {
            let mut value = session_json(outcome);
            if let Some(obj) = value.as_object_mut() {
                obj.insert("note".into(), note);
            }
            return value;
        }
    }
    // A folder: every session, and the three lists across sessions, each item naming its
    // session.
    let sessions: Vec<Value> = outcomes.iter().map(session_json).collect();
    let mut available = Map::new();
    let mut rounds = Vec::new();
    let mut findings = Vec::new();
    for s in &sessions {
        let Some(id) = s.get("session").and_then(Value::as_str) else {
            continue;
        };
        available.insert(id.to_owned(), s["available"].clone());
        for key in ["rounds", "findings"] {
            for item in s[key].as_array().into_iter().flatten() {
                let mut item = item.clone();
                item["session"] = id.into();
                if key == "rounds" {
                    rounds.push(item);
                } else {
                    findings.push(item);
                }
            }
        }
    }
    json!({
        "sessions": sessions,
        "available": available,
        "rounds": rounds,
        "findings": findings,
        "note": note,
    })
}
