//! `cargo xtask replay SESSION.jsonl|FOLDER [--leaf ID] [--sqlite DB] [--json]`: the ledger of
//! one branch, round by round, its audit findings and the final availability.
//!
//! Exit status: 0 when clean, 1 when the ledger does not fold whole (any audit finding but an
//! interrupted append: an entry torn, altered, undecodable, of a newer version, without an id,
//! or cut off the branch by an orphan or a cycle; or a damaged ledger line), 2 when a file
//! cannot be read (or the arguments are wrong, or a `--sqlite` mirror is missing or does not
//! match the file).

use crate::sessions::{display_name, session_files};
use pcd_ledger::{BranchReplay, Mirror, MirrorError, RoundSummary, SessionFile};
use pcd_ui_text::{Audit, AuditArgProblem as A, ReplayRound, ReplaySession, DIGEST_NOTE};
use serde_json::{json, Map, Value};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

struct Args {
    path: PathBuf,
    leaf: Option<String>,
    sqlite: Option<PathBuf>,
    json: bool,
}

fn parse(args: &[String]) -> Result<Args, A> {
    let (mut path, mut leaf, mut sqlite, mut json) = (None, None, None, false);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--json" => json = true,
            "--leaf" => leaf = Some(it.next().ok_or(A::LeafNeedsId)?.clone()),
            "--sqlite" => sqlite = Some(PathBuf::from(it.next().ok_or(A::SqliteNeedsFile)?)),
            flag if flag.starts_with("--") => return Err(A::UnknownOption),
            _ if path.is_some() => return Err(A::OnePath),
            _ => path = Some(PathBuf::from(arg)),
        }
    }
    Ok(Args {
        path: path.ok_or(A::NoPath)?,
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
    /// Whether anything points to tampering or damage (the story the report tells).
    fn tampered(&self) -> bool {
        self.replay.findings.iter().any(|f| f.code.is_tampering())
            || self.problems.iter().any(|p| p.2)
    }

    /// Whether the audit passes: no finding untrusts the branch (a newer version's entries do:
    /// this reader cannot tell what they grant; an interrupted append does not) and no ledger
    /// line is damaged.
    fn clean(&self) -> bool {
        !self
            .replay
            .findings
            .iter()
            .any(|f| f.code.untrusts_branch())
            && !self.problems.iter().any(|p| p.2)
    }
}

fn replay_file(path: &Path, leaf: Option<&str>, mirror: Option<&Mirror>) -> Result<Report, String> {
    let mut file = SessionFile::open(path).map_err(|e| e.to_string())?;
    let header = file.header().clone();
    let session = header.id.clone().unwrap_or_default();
    let branch = file.branch_for(leaf).map_err(|e| e.to_string())?;
    let leaf_id = branch.last().and_then(|p| file.id(*p));
    let replay = file.fold_branch(&branch).map_err(|e| e.to_string())?;
    let problems: Vec<(u64, String, bool)> = file
        .problems()
        .iter()
        .map(|p| (p.line, p.code.as_str().to_owned(), p.code.is_tampering()))
        .collect();
    let (replay, problems, source) = match mirror {
        None => (replay, problems, "jsonl"),
        Some(mirror) => {
            let from_mirror = mirror
                .replay(&session, leaf)
                .map_err(|e| pcd_ui_text::replay_not_mirrored(&e))?;
            let mirror_problems: Vec<(u64, String)> =
                mirror.problems(&session).map_err(|e| e.to_string())?;
            // A mirror that no longer gives what the file gives (the file grew or was edited
            // since it was mirrored) is never reported as the file's state.
            let file_problems: Vec<(u64, String)> = problems
                .iter()
                .map(|(line, code, _)| (*line, code.clone()))
                .collect();
            if from_mirror.state != replay.state
                || from_mirror.findings != replay.findings
                || from_mirror.entries != replay.entries
                || mirror_problems != file_problems
            {
                return Err(pcd_ui_text::replay_mirror_stale());
            }
            (from_mirror, problems, "sqlite")
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
            eprint!("{}", pcd_ui_text::audit_usage(Audit::Replay, e));
            return ExitCode::from(2);
        }
    };
    let files = match session_files(&args.path) {
        Ok(f) => f,
        Err(e) => {
            eprint!(
                "{}",
                pcd_ui_text::audit_path_unreadable(Audit::Replay, &e.kind().to_string())
            );
            return ExitCode::from(2);
        }
    };
    // Replaying reads the mirror: a missing one is an error naming the file, never a new,
    // empty database.
    let mirror = match &args.sqlite {
        None => None,
        Some(db) => match Mirror::open_existing(db) {
            Ok(m) => Some(m),
            Err(e) => {
                let missing = matches!(e, MirrorError::NoDatabase);
                eprint!(
                    "{}",
                    pcd_ui_text::audit_mirror_unopened(
                        Audit::Replay,
                        &display_name(db),
                        missing,
                        &e
                    )
                );
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
        let mut out = std::io::stdout().lock();
        for outcome in &outcomes {
            let text = match &outcome.result {
                Ok(report) => pcd_ui_text::replay_session(&text_report(&outcome.name, report)),
                Err(e) => pcd_ui_text::replay_unreadable(&outcome.name, e),
            };
            let _ = out.write_all(text.as_bytes());
        }
        let _ = out.write_all(pcd_ui_text::replay_footer(outcomes.is_empty()).as_bytes());
    }
    exit_code(&outcomes)
}

fn exit_code(outcomes: &[Outcome]) -> ExitCode {
    if outcomes.iter().any(|o| o.result.is_err()) {
        ExitCode::from(2)
    } else if outcomes
        .iter()
        .any(|o| o.result.as_ref().is_ok_and(|r| !r.clean()))
    {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The text report's data: the ids, names and codes the ui-text report shows.
fn text_report(file: &str, report: &Report) -> ReplaySession {
    let (tools, groups) = available(report);
    let state = &report.replay.state;
    let owned = |names: Vec<&str>| names.into_iter().map(str::to_owned).collect();
    ReplaySession {
        file: file.to_owned(),
        session: report.session.clone(),
        version: report.version,
        forked: report.forked,
        source: report.source,
        entries: report.replay.entries,
        leaf: report.leaf.clone(),
        rounds: state.rounds().iter().map(text_round).collect(),
        findings: report.replay.findings.clone(),
        problems: report
            .problems
            .iter()
            .map(|(line, code, _)| (*line, code.clone()))
            .collect(),
        tools: owned(tools),
        groups: owned(groups),
        first_prompt: state.first_prompt().map(|f| {
            (
                f.entry_id.as_deref().map(str::to_owned),
                f.round.to_string(),
            )
        }),
        tampered: report.tampered(),
    }
}

fn text_round(round: &RoundSummary) -> ReplayRound {
    let owned = |names: &[std::sync::Arc<str>]| names.iter().map(|s| s.to_string()).collect();
    ReplayRound {
        id: round.id.to_string(),
        timestamp: round.timestamp.as_deref().map(str::to_owned),
        entry: round.entry_id.as_deref().map(str::to_owned),
        boundary: round.boundary.as_str(),
        basis: round.basis.as_str(),
        mode: round.mode.as_str(),
        new_tools: owned(&round.new_tools),
        new_groups: owned(&round.new_groups),
        considered: round.considered,
        scored: round.scored,
        allowlisted: round.allowlisted,
        threshold: round.threshold.map(|t| t.as_f64()),
    }
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
        "clean": report.clean(),
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
