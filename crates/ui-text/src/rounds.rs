//! What a person is told when a decision round adds nothing, or adds everything because of
//! `failMode: open`, and the sentences of a ledger audit.

use crate::display::display_safe;
use crate::words::fit;
use pcd_model::{AuditFinding, AuditFindingCode};

/// Why a round added nothing (or, with `failMode: open`, everything that was left).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoundProblem {
    /// The decision model's call failed or its answer could not be read.
    Failed,
    /// The round ran past `decision.timeoutMs`.
    TimedOut,
    /// The run was cancelled.
    Cancelled,
    /// A settings or allowlist save, a disable, a mode change or a branch change overtook it.
    Superseded,
    /// The decision model is misconfigured (for example an `http` provider whose key variable is
    /// unset); `failMode: open` never applies to this.
    Configuration,
    /// The call failed and `failMode: open` made the remaining candidates available.
    FailedOpen,
    /// Pi refused to write the round's entries to the session, so it grants nothing.
    NotRecorded,
}

/// The reason code of a round that did not go as planned, as warnings and `/decisions` show it.
pub fn round_problem_code(problem: RoundProblem) -> &'static str {
    match problem {
        RoundProblem::Failed => "model-failed",
        RoundProblem::TimedOut => "timed-out",
        RoundProblem::Cancelled => "cancelled",
        RoundProblem::Superseded => "superseded",
        RoundProblem::Configuration => "configuration",
        RoundProblem::FailedOpen => "failed-open",
        RoundProblem::NotRecorded => "not-recorded",
    }
}

/// The warning for a failed decision (shown once per prompt): the sentence and its reason code.
pub fn round_failed_warning(problem: RoundProblem) -> String {
    format!(
        "{} (reason: `{}`)",
        round_problem(problem),
        round_problem_code(problem)
    )
}

/// The sentence for a round that did not go as planned. Nothing the model answered, and no
/// error text from a provider, is part of it.
pub fn round_problem(problem: RoundProblem) -> String {
    match problem {
        RoundProblem::Failed => "Deciding tools failed, so no tool was added this time; tools \
             already available stay available. It is tried again at the next prompt."
            .to_owned(),
        RoundProblem::TimedOut => "Deciding tools took longer than the timeout (Advanced), so no \
             tool was added this time; tools already available stay available."
            .to_owned(),
        RoundProblem::Cancelled => {
            "Deciding tools was cancelled, so no tool was added this time.".to_owned()
        }
        RoundProblem::Superseded => "A newer change (settings, allowlists or the branch) \
             replaced this decision, so it added nothing; the next one uses the new state."
            .to_owned(),
        RoundProblem::Configuration => "The decision model is not set up correctly (Advanced), \
             so no tool was added. Tools already available stay available."
            .to_owned(),
        RoundProblem::FailedOpen => "Deciding tools failed, and the fail mode is open, so every \
             remaining tool was made available for this branch."
            .to_owned(),
        RoundProblem::NotRecorded => "A decision could not be written to the session, so it \
             added nothing; tools already available stay available. The next prompt decides \
             again."
            .to_owned(),
    }
}

/// The sentence shown when a session starts on a branch whose ledger holds `count` records that
/// grant nothing (torn by a crash while they were written, altered, or unreadable). Counts only.
pub fn ledger_findings(count: usize) -> String {
    let records = if count == 1 {
        "1 decision record".to_owned()
    } else {
        format!("{count} decision records")
    };
    format!(
        "{records} on this branch could not be read whole (a crash while writing, or an edited \
         session file) and grant nothing. `cargo xtask replay` on the session file shows which."
    )
}

/// The warning when a session starts on a branch whose ledger does not fold (an edited, damaged
/// or newer-version entry): what still applies, that nothing new is granted, and how to recover.
/// Counts only.
pub fn ledger_untrusted(count: usize) -> String {
    let records = if count == 1 {
        "1 decision record".to_owned()
    } else {
        format!("{count} decision records")
    };
    format!(
        "This session's branch has {records} that could not be trusted (edited, damaged, or \
         written by a newer version of pi-context-decisions). Tool filtering keeps what the \
         intact records made available and your allowlists, but adds nothing new on this branch. \
         To go on deciding: use /tree to go back to before the first of them, start a new \
         session, or switch filtering off in /decisions. `cargo xtask replay` on the session \
         file shows which records."
    )
}

/// The sentence for one ledger audit finding. Entry and round ids are shown bounded and made
/// safe: a hand-edited file can put anything there.
pub fn audit_finding(finding: &AuditFinding) -> String {
    let id = |label: &str, value: &Option<String>| {
        value
            .as_deref()
            .map(|v| format!(" {label} `{}`", fit(&display_safe(v), 40).replace('`', "'")))
            .unwrap_or_default()
    };
    let at = format!(
        "{}{}",
        id("round", &finding.round),
        id("entry", &finding.entry_id)
    );
    let at = if at.is_empty() {
        String::new()
    } else {
        format!(" (at{at})")
    };
    let what = match finding.code {
        AuditFindingCode::TornRound => {
            "Torn round: parts of it are missing before others that are present, or out of \
             order (entries removed or moved); none of it was applied."
        }
        AuditFindingCode::InterruptedRound => {
            "Interrupted round: its first parts are present and the rest were never written (a \
             crash or a failed write while appending); it was not applied."
        }
        AuditFindingCode::DigestMismatch => {
            "Altered round: its parts disagree with their digest or with each other, so it was \
             edited after it was written; it was not applied."
        }
        AuditFindingCode::Undecodable => "Unreadable entry: it does not decode; it was skipped.",
        AuditFindingCode::UnknownVersion => {
            "Newer entry: it was written by a newer version and skipped, so this version cannot \
             tell what the branch grants; update to read it."
        }
        AuditFindingCode::EntryWithoutId => {
            "Entry without an id: Pi never writes one, and what it hides (a record on no branch, \
             or a branch left empty) was not applied."
        }
        AuditFindingCode::OrphanParent => {
            "Orphaned branch: its first entry names a parent the file does not have, so the \
             entries before it, and the records among them, were removed."
        }
        AuditFindingCode::ParentCycle => {
            "Looping branch: the parent links loop back on themselves; the branch was read up to \
             where the loop closes."
        }
    };
    format!("{what}{at}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_round_problem() {
        let all = [
            RoundProblem::Failed,
            RoundProblem::TimedOut,
            RoundProblem::Cancelled,
            RoundProblem::Superseded,
            RoundProblem::Configuration,
            RoundProblem::FailedOpen,
            RoundProblem::NotRecorded,
        ]
        .map(round_problem)
        .join("\n");
        insta::assert_snapshot!(all);
    }

    #[test]
    fn an_untrusted_ledger_says_what_applies_and_how_to_recover() {
        let text = ledger_untrusted(2);
        assert!(text.contains("2 decision records"));
        assert!(text.contains("adds nothing new"));
        for way in [
            "/tree",
            "new session",
            "switch filtering off",
            "cargo xtask replay",
        ] {
            assert!(text.contains(way), "{way}");
        }
    }

    #[test]
    fn ledger_findings_count_records_and_name_the_audit_command() {
        assert!(ledger_findings(1).starts_with("1 decision record on this branch"));
        assert!(ledger_findings(3).starts_with("3 decision records on this branch"));
        assert!(ledger_findings(3).contains("cargo xtask replay"));
    }

    #[test]
    fn every_audit_finding() {
        let mut all = String::new();
        for code in AuditFindingCode::ALL {
            all.push_str(&audit_finding(&AuditFinding {
                code,
                entry_id: Some("a2331584".into()),
                round: Some("r-7f3a".into()),
            }));
            all.push('\n');
        }
        all.push_str(&audit_finding(&AuditFinding {
            code: AuditFindingCode::Undecodable,
            entry_id: None,
            round: None,
        }));
        insta::assert_snapshot!(all);
    }

    #[test]
    fn hostile_ids_are_bounded_and_safe() {
        let text = audit_finding(&AuditFinding {
            code: AuditFindingCode::TornRound,
            entry_id: Some(format!("x\n\u{1b}[2J`{}", "y".repeat(500))),
            round: None,
        });
        assert!(!text.contains(['\n', '\u{1b}']));
        assert!(text.len() < 300);
        assert_eq!(text.matches('`').count(), 2);
    }
}
