//! The ledger audits' reports, `cargo xtask replay` and `cargo xtask mirror`. Everything read
//! from a session file or a mirror (session, entry and round ids, timestamps, tool and group
//! names, file names) is third-party data and goes through [`display_safe`].

use crate::display::display_safe;
use crate::rounds::audit_finding;
use pcd_model::AuditFinding;
use std::fmt::Write as _;

/// What the digest can and cannot tell, stated in every `replay` report.
pub const DIGEST_NOTE: &str = "The digest detects torn or hand-edited rounds; it does not detect \
another extension in the same process writing a valid round. It is a checksum, not a signature: \
whoever edits a round and computes its digest again is not detected.";

/// `cargo xtask` without a known command.
pub const XTASK_USAGE: &str = "usage: cargo xtask ci | replay SESSION [--leaf ID] [--sqlite DB] \
[--json] | mirror SESSION... --sqlite DB | fuzz [--seconds N] [--quick] [--no-sanitizer] \
[TARGET...] | fetch-model [--dest DIR] | dist [--debug] [--out DIR]";

/// How `cargo xtask fuzz` is called.
pub const FUZZ_USAGE: &str = "usage: cargo xtask fuzz [--seconds N] [--quick] [--no-sanitizer] \
[TARGET...] (N > 0, default 60; TARGET is a fuzz target's name or crate/name)";

/// How `cargo xtask replay` is called.
pub const REPLAY_USAGE: &str =
    "usage: cargo xtask replay SESSION.jsonl|FOLDER [--leaf ID] [--sqlite DB] [--json]";

/// How `cargo xtask mirror` is called.
pub const MIRROR_USAGE: &str = "usage: cargo xtask mirror SESSION.jsonl|FOLDER... --sqlite DB";

/// Names listed per line in the `replay` text report; `--json` lists them all.
pub const REPLAY_LIST_LIMIT: usize = 40;

/// Which `xtask` audit a message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audit {
    /// `cargo xtask replay`.
    Replay,
    /// `cargo xtask mirror`.
    Mirror,
}

impl Audit {
    fn name(self) -> &'static str {
        match self {
            Audit::Replay => "replay",
            Audit::Mirror => "mirror",
        }
    }
}

/// What is wrong with an audit's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditArgProblem {
    /// `--leaf` without an entry id.
    LeafNeedsId,
    /// `--sqlite` without a file.
    SqliteNeedsFile,
    /// An option the audit does not take (not repeated).
    UnknownOption,
    /// `replay` was given more than one path.
    OnePath,
    /// `replay` was given no path.
    NoPath,
    /// `mirror` was given no `--sqlite`.
    NoSqlite,
    /// `mirror` was given no path.
    NoPaths,
}

/// Wrong arguments to an audit: the problem, then how it is called (stderr).
pub fn audit_usage(audit: Audit, problem: AuditArgProblem) -> String {
    let usage = match audit {
        Audit::Replay => REPLAY_USAGE,
        Audit::Mirror => MIRROR_USAGE,
    };
    let problem = match problem {
        AuditArgProblem::LeafNeedsId => "--leaf needs an entry id",
        AuditArgProblem::SqliteNeedsFile => "--sqlite needs a file",
        AuditArgProblem::UnknownOption => "unknown option",
        AuditArgProblem::OnePath => "one session file or folder at a time",
        AuditArgProblem::NoPath => "a session file or folder is needed",
        AuditArgProblem::NoSqlite => "--sqlite DB is needed",
        AuditArgProblem::NoPaths => "at least one session file or folder is needed",
    };
    format!("xtask {}: {problem}\n{usage}\n", audit.name())
}

/// A session file or folder given to an audit cannot be read (`kind`: the operating system's
/// kind of error). `the` is `the` for one path, `a` when there are several.
pub fn audit_path_unreadable(audit: Audit, kind: &str) -> String {
    let article = match audit {
        Audit::Replay => "the",
        Audit::Mirror => "a",
    };
    format!(
        "xtask {}: cannot read {article} session path: {}\n",
        audit.name(),
        display_safe(kind)
    )
}

/// The SQLite mirror `file` (its base name) cannot be opened (`error`: the ledger's reason).
/// `missing`: it does not exist, and `replay` creates none, so the sentence says how to make one.
pub fn audit_mirror_unopened(
    audit: Audit,
    file: &str,
    missing: bool,
    error: &dyn std::fmt::Display,
) -> String {
    let hint = if missing {
        " (cargo xtask mirror SESSION --sqlite DB creates it)"
    } else {
        ""
    };
    format!(
        "xtask {}: cannot open the mirror {}: {error}{hint}\n",
        audit.name(),
        display_safe(file)
    )
}

/// One round of a replayed branch.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayRound {
    /// The round's id.
    pub id: String,
    /// When it was appended, if the entry says.
    pub timestamp: Option<String>,
    /// The id of its first entry, if known.
    pub entry: Option<String>,
    /// Its boundary code (`prompt`, `tool_round`, …).
    pub boundary: &'static str,
    /// Its basis code (`scored`, `baseline`, …).
    pub basis: &'static str,
    /// `tools` or `mcp`.
    pub mode: &'static str,
    /// The tools it made available.
    pub new_tools: Vec<String>,
    /// The groups it made available.
    pub new_groups: Vec<String>,
    /// How many candidates it considered.
    pub considered: usize,
    /// How many of them were scored.
    pub scored: usize,
    /// How many names it recorded as allowlisted.
    pub allowlisted: usize,
    /// Its threshold, when it scored.
    pub threshold: Option<f64>,
}

/// One session's replayed branch, for [`replay_session`].
#[derive(Debug, Clone, PartialEq)]
pub struct ReplaySession {
    /// The file's base name.
    pub file: String,
    /// The session's id.
    pub session: String,
    /// The session file's version.
    pub version: u64,
    /// Whether the session is a fork.
    pub forked: bool,
    /// `jsonl` or `sqlite`.
    pub source: &'static str,
    /// How many entries the branch has.
    pub entries: usize,
    /// The branch's leaf entry id.
    pub leaf: Option<String>,
    /// The rounds, oldest first.
    pub rounds: Vec<ReplayRound>,
    /// What the audit found.
    pub findings: Vec<AuditFinding>,
    /// Lines that are not entries: line number and code.
    pub problems: Vec<(u64, String)>,
    /// The tools available at the leaf, sorted.
    pub tools: Vec<String>,
    /// The groups available at the leaf, sorted.
    pub groups: Vec<String>,
    /// The first prompt's entry id (none: not appended yet) and the round that picked for it.
    pub first_prompt: Option<(Option<String>, String)>,
    /// Whether anything points to tampering or damage. Findings that do not but untrust the
    /// branch (entries of a newer version) still make the verdict unclean.
    pub tampered: bool,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn names_line(names: &[String]) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(REPLAY_LIST_LIMIT)
        .map(|n| display_safe(n))
        .collect();
    let mut line = shown.join(", ");
    if names.len() > REPLAY_LIST_LIMIT {
        let _ = write!(line, ", … and {} more", names.len() - REPLAY_LIST_LIMIT);
    }
    line
}

fn safe_or(value: Option<&str>, missing: &str) -> String {
    value.map_or_else(|| missing.to_owned(), display_safe)
}

/// The `replay` text report of one session: its branch, timeline, findings, line problems,
/// availability, first prompt and verdict.
pub fn replay_session(r: &ReplaySession) -> String {
    let mut s = String::new();
    let fork = if r.forked { ", a fork" } else { "" };
    let _ = writeln!(
        s,
        "session {} ({}; version {}{fork}; replayed from {})",
        display_safe(&r.session),
        display_safe(&r.file),
        r.version,
        r.source
    );
    let _ = writeln!(
        s,
        "  branch: {} to leaf {}",
        plural(r.entries, "entry", "entries"),
        safe_or(r.leaf.as_deref(), "(none)")
    );
    if r.rounds.is_empty() {
        s.push_str("  timeline: no rounds\n");
    } else {
        s.push_str("  timeline:\n");
    }
    for (i, round) in r.rounds.iter().enumerate() {
        replay_round(&mut s, i + 1, round);
    }
    if !r.findings.is_empty() {
        s.push_str("  findings:\n");
        for f in &r.findings {
            let _ = writeln!(s, "    {}: {}", f.code.as_str(), audit_finding(f));
        }
    }
    if !r.problems.is_empty() {
        s.push_str("  line problems:\n");
        for (line, code) in &r.problems {
            let _ = writeln!(s, "    line {line}: {}", display_safe(code));
        }
    }
    let _ = writeln!(
        s,
        "  available: {}, {}",
        plural(r.tools.len(), "tool", "tools"),
        plural(r.groups.len(), "group", "groups")
    );
    if !r.tools.is_empty() {
        let _ = writeln!(s, "    tools: {}", names_line(&r.tools));
    }
    if !r.groups.is_empty() {
        let _ = writeln!(s, "    groups: {}", names_line(&r.groups));
    }
    if let Some((entry, round)) = &r.first_prompt {
        let _ = writeln!(
            s,
            "  first prompt: entry {} (picked by round {})",
            safe_or(entry.as_deref(), "(not appended yet)"),
            display_safe(round)
        );
    }
    let verdict = if r.tampered {
        "TAMPERED OR DAMAGED"
    } else if r.findings.iter().any(|f| f.code.untrusts_branch()) {
        "NOT CLEAN: entries of a newer version were skipped, so what this branch grants is not \
         known here"
    } else {
        "clean"
    };
    let _ = writeln!(s, "  verdict: {verdict}");
    s
}

fn replay_round(s: &mut String, n: usize, round: &ReplayRound) {
    let _ = writeln!(
        s,
        "    {n}. round {} at {} (entry {}): {} boundary, {}, {} mode",
        display_safe(&round.id),
        safe_or(round.timestamp.as_deref(), "?"),
        safe_or(round.entry.as_deref(), "?"),
        round.boundary,
        round.basis,
        round.mode
    );
    for (names, one, many) in [
        (&round.new_tools, "tool", "tools"),
        (&round.new_groups, "group", "groups"),
    ] {
        if !names.is_empty() {
            let _ = writeln!(
                s,
                "       + {}: {}",
                plural(names.len(), one, many),
                names_line(names)
            );
        }
    }
    let threshold = round
        .threshold
        .map(|t| format!(", threshold {t:.3}"))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "       considered {}, scored {}, allowlisted {}{threshold}",
        round.considered, round.scored, round.allowlisted
    );
}

/// A session file `replay` could not read (`error`: the ledger's reason).
pub fn replay_unreadable(file: &str, error: &str) -> String {
    format!("{}: cannot be read: {error}\n", display_safe(file))
}

/// The end of the `replay` text report: that no session file was found, if none was, and the
/// [`DIGEST_NOTE`].
pub fn replay_footer(none_found: bool) -> String {
    let none = if none_found {
        "no session files found\n"
    } else {
        ""
    };
    format!("{none}note: {DIGEST_NOTE}\n")
}

/// The reason `replay --sqlite` gives when the mirror does not have the session.
pub fn replay_not_mirrored(error: &dyn std::fmt::Display) -> String {
    format!("{error} (mirror it first with cargo xtask mirror)")
}

/// The reason `replay --sqlite` gives when replaying the mirror does not give what replaying the
/// session file gives: a stale mirror is never reported as the file's state.
pub fn replay_mirror_stale() -> String {
    "the mirror does not match the session file (the file changed since it was mirrored, or \
     one of them was altered); mirror it again with cargo xtask mirror"
        .to_owned()
}

/// What `mirror` did with one session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorLine {
    /// The session's id.
    pub session: String,
    /// Entries mirrored.
    pub entries: u64,
    /// Round parts mirrored.
    pub parts: u64,
    /// Names mirrored.
    pub names: u64,
    /// Bytes read.
    pub bytes: u64,
    /// The file no longer extended the mirror, so it was mirrored again from the start.
    pub restarted: bool,
}

/// The `mirror` line of one session file: what was added, or why it was not mirrored.
pub fn mirror_line(file: &str, outcome: Result<&MirrorLine, &dyn std::fmt::Display>) -> String {
    let file = display_safe(file);
    match outcome {
        Ok(r) => format!(
            "{file}: session {}: +{} entries, +{} round parts, +{} names ({} bytes read){}\n",
            display_safe(&r.session),
            r.entries,
            r.parts,
            r.names,
            r.bytes,
            if r.restarted {
                "; the file no longer extended the mirror, so it was mirrored again"
            } else {
                ""
            }
        ),
        Err(e) => format!("{file}: not mirrored: {e}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_model::AuditFindingCode;

    fn round(id: &str, tools: usize) -> ReplayRound {
        ReplayRound {
            id: id.into(),
            timestamp: Some("2026-11-29T17:13:20.686Z".into()),
            entry: Some("00000002".into()),
            boundary: "prompt",
            basis: "scored",
            mode: "tools",
            new_tools: (0..tools).map(|i| format!("tool_{i}")).collect(),
            new_groups: Vec::new(),
            considered: 50,
            scored: 48,
            allowlisted: 0,
            threshold: Some(0.5),
        }
    }

    #[test]
    fn a_clean_session() {
        let mut allow = round("r2", 0);
        allow.new_groups = vec!["mcp__dev_radius".into()];
        allow.timestamp = None;
        allow.entry = None;
        allow.threshold = None;
        allow.basis = "allowlist";
        let text = replay_session(&ReplaySession {
            file: "2026_019a.jsonl".into(),
            session: "019a".into(),
            version: 3,
            forked: true,
            source: "jsonl",
            entries: 1,
            leaf: Some("00000005".into()),
            rounds: vec![round("r1", 42), allow],
            findings: Vec::new(),
            problems: Vec::new(),
            tools: (0..42).map(|i| format!("tool_{i}")).collect(),
            groups: vec!["mcp__dev_radius".into()],
            first_prompt: Some((None, "r1".into())),
            tampered: false,
        });
        insta::assert_snapshot!(text);
    }

    #[test]
    fn a_newer_entry_is_not_clean_but_not_tampering() {
        let text = replay_session(&ReplaySession {
            file: "s.jsonl".into(),
            session: "019a".into(),
            version: 3,
            forked: false,
            source: "jsonl",
            entries: 1,
            leaf: Some("00000001".into()),
            rounds: Vec::new(),
            findings: vec![AuditFinding {
                code: AuditFindingCode::UnknownVersion,
                round: Some("r1".into()),
                entry_id: Some("00000001".into()),
            }],
            problems: Vec::new(),
            tools: Vec::new(),
            groups: Vec::new(),
            first_prompt: None,
            tampered: false,
        });
        assert!(text.contains("verdict: NOT CLEAN"), "{text}");
        assert!(!text.contains("TAMPERED"), "{text}");
    }

    #[test]
    fn a_damaged_session_with_hostile_ids() {
        let text = replay_session(&ReplaySession {
            file: "x\u{1b}[2J.jsonl".into(),
            session: "evil\u{202E}id".into(),
            version: 3,
            forked: false,
            source: "sqlite",
            entries: 2,
            leaf: None,
            rounds: vec![round("r\u{7}1", 1)],
            findings: vec![AuditFinding {
                code: AuditFindingCode::TornRound,
                round: Some("r1".into()),
                entry_id: None,
            }],
            problems: vec![(4, "malformed_ledger_line".into())],
            tools: vec!["bad\u{1b}name".into()],
            groups: Vec::new(),
            first_prompt: None,
            tampered: true,
        });
        assert!(!text.contains('\u{1b}') && !text.contains('\u{202E}') && !text.contains('\u{7}'));
        insta::assert_snapshot!(text);
    }

    #[test]
    fn footers_usages_and_mirror_lines() {
        let line = MirrorLine {
            session: "019a".into(),
            entries: 5,
            parts: 3,
            names: 4,
            bytes: 1200,
            restarted: false,
        };
        let again = MirrorLine {
            restarted: true,
            ..line.clone()
        };
        let lines = [
            replay_footer(true),
            replay_footer(false),
            replay_unreadable("s.jsonl", "not a session file"),
            format!(
                "{}\n",
                replay_not_mirrored(&"no such session in the mirror")
            ),
            audit_usage(Audit::Replay, AuditArgProblem::UnknownOption),
            audit_usage(Audit::Replay, AuditArgProblem::LeafNeedsId),
            audit_usage(Audit::Replay, AuditArgProblem::OnePath),
            audit_usage(Audit::Replay, AuditArgProblem::NoPath),
            audit_usage(Audit::Mirror, AuditArgProblem::SqliteNeedsFile),
            audit_usage(Audit::Mirror, AuditArgProblem::NoSqlite),
            audit_usage(Audit::Mirror, AuditArgProblem::NoPaths),
            audit_path_unreadable(Audit::Replay, "entity not found"),
            audit_path_unreadable(Audit::Mirror, "entity not found"),
            audit_mirror_unopened(
                Audit::Mirror,
                "m.db",
                false,
                &"unable to open database file",
            ),
            audit_mirror_unopened(
                Audit::Replay,
                "m\u{1b}.db",
                true,
                &"the mirror database does not exist",
            ),
            format!("{}\n", replay_mirror_stale()),
            mirror_line("s.jsonl", Ok(&line)),
            mirror_line("s.jsonl", Ok(&again)),
            mirror_line("s\u{1b}.jsonl", Err(&"not a session file")),
            format!("{XTASK_USAGE}\n"),
            format!("{FUZZ_USAGE}\n"),
        ];
        insta::assert_snapshot!(lines.join(""));
    }
}
