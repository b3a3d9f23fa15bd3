//! The reports of the `context-decisions` program: `pick` and `mcp-origins`. They are handed
//! names, labels, scores and codes, never a path or a configuration value.

use crate::display::display_safe;
use std::fmt::Write as _;

/// How many rows of each `pick` list the text report shows (`--json` lists all).
pub const PICK_LISTED: usize = 15;

/// Why a `pick` candidate was made available or withheld.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickReason {
    /// Fewer candidates than *Minimum candidates*: nothing is scored, everything is available.
    BelowMinimum,
    /// At or above the threshold, within the cap.
    Added,
    /// At or above the threshold, past the cap.
    CutByCap,
    /// Below the threshold.
    BelowThreshold,
    /// The model gave no valid score.
    NoValidScore,
}

impl PickReason {
    /// The reason as `pick` prints it (also in its JSON).
    pub fn text(self) -> &'static str {
        match self {
            PickReason::BelowMinimum => "fewer candidates than the minimum: nothing is scored",
            PickReason::Added => "at or above the threshold, within the cap",
            PickReason::CutByCap => "at or above the threshold, cut by the cap",
            PickReason::BelowThreshold => "below the threshold",
            PickReason::NoValidScore => "no valid score",
        }
    }
}

/// Why a tool is not a `pick` candidate at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickExempt {
    /// Built-in provenance.
    Internal,
    /// Already available on the branch.
    Available,
    /// On an allowlist.
    Allowlisted,
    /// An extension tool without a provenance name (`mcp` mode).
    Unfiltered,
    /// A name the ledger cannot record: never decided.
    Unrecordable,
}

impl PickExempt {
    /// The reason as `pick` prints it (also in its JSON).
    pub fn text(self) -> &'static str {
        match self {
            PickExempt::Internal => "built-in",
            PickExempt::Available => "already available",
            PickExempt::Allowlisted => "allowlisted",
            PickExempt::Unfiltered => "unfiltered (no provenance name)",
            PickExempt::Unrecordable => "never decided (a name the record cannot hold)",
        }
    }
}

/// One `pick` row.
#[derive(Debug, Clone, PartialEq)]
pub struct PickRow {
    /// The tool's name or the group's key.
    pub name: String,
    /// The MCP server or extension label (empty for none).
    pub label: String,
    /// The score, when one was given.
    pub score: Option<f64>,
    /// Why it is where it is (a [`PickReason::text`]).
    pub reason: String,
}

/// What `pick` decided, for [`pick_report`].
#[derive(Debug, Clone, PartialEq)]
pub struct PickReport {
    /// `tools` or `mcp`.
    pub mode: String,
    /// Who scored, in words ([`crate::scorer_words`]).
    pub scorer: String,
    /// The need gate's probability that the prompt needs anything outside the code at all, when
    /// the semantic model read the prompt.
    pub need: Option<f64>,
    /// The threshold.
    pub threshold: f64,
    /// The cap per round.
    pub cap: u64,
    /// How many candidates there were.
    pub candidates: usize,
    /// Made available, best first.
    pub available: Vec<PickRow>,
    /// Withheld, best first.
    pub withheld: Vec<PickRow>,
    /// Not candidates: name and reason (a [`PickExempt::text`]).
    pub always_available: Vec<(String, String)>,
    /// Which settings files applied (none: the built-in defaults).
    pub settings_files: Vec<PickSettingsFile>,
    /// The flags that overrode the settings (`--threshold`, …), as given.
    pub overridden: Vec<String>,
    /// The global settings file is there but could not be read: the built-in defaults and no
    /// global allowlist applied. The report leads with it.
    pub global_unreadable: bool,
    /// The project allowlist file is there but could not be read: no project allowlist applied.
    pub project_unreadable: bool,
    /// Why the best withheld candidate with a score was withheld.
    pub best_withheld: Option<PickWithheld>,
}

/// A settings file `pick` read: its scope and the path it was found at (the one the person
/// gave, or where Pi looks by default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickSettingsFile {
    /// `global` (settings and global allowlists) or `project` (project allowlists).
    pub scope: &'static str,
    /// Where it was found.
    pub path: String,
}

/// Why the best withheld candidate was withheld.
#[derive(Debug, Clone, PartialEq)]
pub enum PickWithheld {
    /// Its score is below the threshold.
    BelowThreshold {
        /// Its name or key.
        name: String,
        /// Its score.
        score: f64,
    },
    /// It is at or above the threshold, but better ones filled the cap.
    OverCap {
        /// Its name or key.
        name: String,
        /// Its score.
        score: f64,
    },
}

/// A number as JSON writes it (`1.0`, `0.625`).
pub(crate) fn json_number(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

/// The `pick` text report.
pub fn pick_report(r: &PickReport) -> String {
    let mut s = String::new();
    // What applied instead comes first, so the figures below are not read as the settings'.
    if r.global_unreadable {
        let _ = writeln!(
            s,
            "the settings could not be read (see the warning below): this pick used the \
             built-in defaults and no global allowlist, not your settings\n"
        );
    }
    if r.project_unreadable {
        let _ = writeln!(
            s,
            "the project allowlists could not be read (see the warning below): none of them \
             applied to this pick\n"
        );
    }
    let _ = writeln!(
        s,
        "{} mode, scored by {}, threshold {}, cap {}: {} of {} candidates made available",
        display_safe(&r.mode),
        display_safe(&r.scorer),
        json_number(r.threshold),
        r.cap,
        r.available.len(),
        r.candidates,
    );
    if let Some(need) = r.need {
        let reads = if need < 0.5 {
            "work on the code, or a turn that carries on with the task"
        } else {
            "a request for something outside the code"
        };
        // The gate's answer scales every score, more the surer it is that nothing outside the
        // code is needed, less the better the best candidate fits the prompt; near 0.5 it scales
        // them hardly at all, so say only which way it reads.
        let _ = writeln!(
            s,
            "the need gate reads the prompt as {reads} ({need:.2} that it needs anything outside \
             the code; the lower, the lower every score, and the better a tool fits, the higher)"
        );
    }
    for (title, list) in [("made available", &r.available), ("withheld", &r.withheld)] {
        let _ = writeln!(s, "\n{title} ({}):", list.len());
        for row in list.iter().take(PICK_LISTED) {
            let score = row.score.map_or("  -  ".to_owned(), |x| format!("{x:.3}"));
            let label = if row.label.is_empty() {
                String::new()
            } else {
                format!(" ({})", display_safe(&row.label))
            };
            let _ = writeln!(
                s,
                "  {score}  {}{label}  {}",
                display_safe(&row.name),
                row.reason
            );
        }
        if list.len() > PICK_LISTED {
            let _ = writeln!(
                s,
                "  … and {} more (--json lists all)",
                list.len() - PICK_LISTED
            );
        }
    }
    if !r.always_available.is_empty() {
        let _ = writeln!(s, "\nalways available ({}):", r.always_available.len());
        for (name, reason) in &r.always_available {
            let _ = writeln!(s, "  {}  {reason}", display_safe(name));
        }
    }
    match &r.best_withheld {
        Some(PickWithheld::BelowThreshold { score, .. }) if *score <= 0.0 => {
            let _ = writeln!(
                s,
                "\nno withheld candidate matched the prompt at all: every one scored 0"
            );
        }
        Some(PickWithheld::BelowThreshold { name, score }) => {
            let _ = writeln!(
                s,
                "\nthe best withheld candidate, {} ({score:.3}), is {:.3} below the threshold {}",
                display_safe(name),
                r.threshold - score,
                json_number(r.threshold),
            );
        }
        Some(PickWithheld::OverCap { name, score }) => {
            let _ = writeln!(
                s,
                "\nthe best withheld candidate, {} ({score:.3}), clears the threshold {}, but the \
                 cap of {} per round was already filled by better ones",
                display_safe(name),
                json_number(r.threshold),
                r.cap,
            );
        }
        None => {}
    }
    if r.settings_files.is_empty() {
        let _ = write!(
            s,
            "\nsettings: no settings file found, so the built-in defaults apply"
        );
    } else {
        let files: Vec<String> = r
            .settings_files
            .iter()
            .map(|f| format!("{} {}", f.scope, display_safe(&f.path)))
            .collect();
        let _ = write!(s, "\nsettings: {}", files.join(", "));
    }
    if r.overridden.is_empty() {
        s.push('\n');
    } else {
        let flags: Vec<String> = r.overridden.iter().map(|f| display_safe(f)).collect();
        let _ = writeln!(s, "; overridden by {}", flags.join(", "));
    }
    s
}

/// One row of `mcp-origins`: server name, namespace, scope (`global` or `project`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginRow {
    /// The raw server name.
    pub name: String,
    /// Its namespace (`mcp__…`).
    pub namespace: String,
    /// `global` or `project`.
    pub scope: &'static str,
}

/// One warning of `mcp-origins`: which file (`global` or `project`), the safe code, and the
/// server it concerns, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginWarning {
    /// `global` or `project`.
    pub file: &'static str,
    /// The warning code.
    pub code: &'static str,
    /// The server, when the warning concerns one.
    pub server: Option<String>,
}

/// `mcp-origins` when no file defines a server: which files were looked for.
pub fn no_mcp_servers(global: &str, project: Option<&str>) -> String {
    match project {
        Some(project) => format!(
            "No MCP server is defined: neither {} nor {} defines one.\n",
            display_safe(global),
            display_safe(project)
        ),
        None => format!(
            "No MCP server is defined in {} (the project's .pi/mcp.json is read only with \
             --trusted yes).\n",
            display_safe(global)
        ),
    }
}

/// `mcp-origins`: one warning as a sentence, after the file it is about.
pub fn origin_warning_sentence(path: &str, sentence: &str) -> String {
    format!("{}: {sentence}\n", display_safe(path))
}

/// The `mcp-origins` text report: aligned rows, then one line per warning.
pub fn origins_report(rows: &[OriginRow], warnings: &[OriginWarning]) -> String {
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let ns_width = rows.iter().map(|r| r.namespace.len()).max().unwrap_or(0);
    let mut out = String::new();
    for r in rows {
        let _ = writeln!(
            out,
            "{:width$}  {:ns_width$}  {}",
            display_safe(&r.name),
            display_safe(&r.namespace),
            r.scope
        );
    }
    for w in warnings {
        let _ = write!(out, "warning  {}  {}", w.file, w.code);
        if let Some(server) = &w.server {
            let _ = write!(out, "  {}", display_safe(server));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_report_lists_and_counts() {
        let row = |name: &str, score, reason: PickReason| PickRow {
            name: name.into(),
            label: if name.starts_with("mcp") {
                "docs".into()
            } else {
                String::new()
            },
            score,
            reason: reason.text().into(),
        };
        let text = pick_report(&PickReport {
            mode: "tools".into(),
            scorer: crate::scorer_words("embedded", None),
            need: None,
            threshold: 1.0,
            cap: 6,
            candidates: 2,
            available: vec![row("mcp__docs__search", Some(0.9), PickReason::Added)],
            withheld: vec![row("bar\u{1b}chart", None, PickReason::NoValidScore)],
            always_available: vec![("read".into(), PickExempt::Internal.text().into())],
            settings_files: Vec::new(),
            overridden: Vec::new(),
            global_unreadable: false,
            project_unreadable: false,
            best_withheld: None,
        });
        assert_eq!(
            text,
            "tools mode, scored by the built-in scorer, lexical only, threshold 1.0, cap 6: 1 of 2 \
             candidates made available\n\
             \nmade available (1):\n  0.900  mcp__docs__search (docs)  at or above the threshold, within the cap\n\
             \nwithheld (1):\n    -    bar?chart  no valid score\n\
             \nalways available (1):\n  read  built-in\n\
             \nsettings: no settings file found, so the built-in defaults apply\n"
        );
        assert_eq!(json_number(0.625), "0.625");
    }

    /// Issue 32, item 7: with settings that could not be read, the headline "N made available"
    /// read as if they had applied. The report now leads with what applied instead.
    #[test]
    fn pick_report_leads_with_unreadable_settings() {
        let report = |global, project| {
            pick_report(&PickReport {
                mode: "tools".into(),
                scorer: "embedded".into(),
                need: None,
                threshold: 0.625,
                cap: 6,
                candidates: 3,
                available: Vec::new(),
                withheld: Vec::new(),
                always_available: Vec::new(),
                settings_files: Vec::new(),
                overridden: Vec::new(),
                global_unreadable: global,
                project_unreadable: project,
                best_withheld: None,
            })
        };
        let text = report(true, true);
        assert!(
            text.starts_with(
                "the settings could not be read (see the warning below): this pick used the \
                 built-in defaults and no global allowlist, not your settings\n\nthe project \
                 allowlists could not be read"
            ),
            "{text}"
        );
        assert!(report(false, false).starts_with("tools mode"));
    }

    #[test]
    fn pick_report_says_why_the_best_withheld_was_withheld_and_which_files_applied() {
        let report = |best: PickWithheld| PickReport {
            mode: "tools".into(),
            scorer: crate::scorer_words("embedded", None),
            need: None,
            threshold: 0.625,
            cap: 1,
            candidates: 12,
            available: Vec::new(),
            withheld: Vec::new(),
            always_available: Vec::new(),
            settings_files: vec![
                PickSettingsFile {
                    scope: "global",
                    path: "/home/u/.pi/agent/pi-context-decisions/settings.json".into(),
                },
                PickSettingsFile {
                    scope: "project",
                    path: "repo/.pi/pi-context-decisions.json".into(),
                },
            ],
            overridden: vec!["--threshold".into(), "--max-new-tools".into()],
            global_unreadable: false,
            project_unreadable: false,
            best_withheld: Some(best),
        };
        let below = pick_report(&report(PickWithheld::BelowThreshold {
            name: "calculator".into(),
            score: 0.443,
        }));
        let over = pick_report(&report(PickWithheld::OverCap {
            name: "web\u{1b}fetch".into(),
            score: 0.7,
        }));
        insta::assert_snapshot!(format!("{below}\n---\n{over}"));
    }

    /// With the model, the report says what the need gate made of the prompt, so that a prompt
    /// that gets nothing says why: it read as work on the code, not a request.
    #[test]
    fn pick_report_says_what_the_need_gate_read() {
        let report = |need| {
            pick_report(&PickReport {
                mode: "tools".into(),
                scorer: crate::scorer_words("embedded", Some("semantic+lexical")),
                need,
                threshold: 0.625,
                cap: 6,
                candidates: 24,
                available: Vec::new(),
                withheld: Vec::new(),
                always_available: Vec::new(),
                settings_files: Vec::new(),
                overridden: Vec::new(),
                global_unreadable: false,
                project_unreadable: false,
                best_withheld: None,
            })
        };
        let second = |text: &str| text.lines().nth(1).unwrap_or_default().to_owned();
        assert_eq!(
            second(&report(Some(0.125))),
            "the need gate reads the prompt as work on the code, or a turn that carries on with \
             the task (0.12 that it needs anything outside the code; the lower, the lower every \
             score, and the better a tool fits, the higher)"
        );
        assert_eq!(
            second(&report(Some(0.97))),
            "the need gate reads the prompt as a request for something outside the code (0.97 \
             that it needs anything outside the code; the lower, the lower every score, and the \
             better a tool fits, the higher)"
        );
        assert!(!report(None).contains("need gate"));
    }

    #[test]
    fn pick_report_names_no_gap_when_every_withheld_candidate_scored_0() {
        let text = pick_report(&PickReport {
            mode: "tools".into(),
            scorer: crate::scorer_words("embedded", Some("lexical")),
            need: None,
            threshold: 0.625,
            cap: 6,
            candidates: 2,
            available: Vec::new(),
            withheld: Vec::new(),
            always_available: vec![("read".into(), PickExempt::Internal.text().into())],
            settings_files: Vec::new(),
            overridden: Vec::new(),
            global_unreadable: false,
            project_unreadable: false,
            best_withheld: Some(PickWithheld::BelowThreshold {
                name: "calculator".into(),
                score: 0.0,
            }),
        });
        assert!(
            text.starts_with("tools mode, scored by the built-in scorer, lexical only,"),
            "{text}"
        );
        assert!(
            text.contains("no withheld candidate matched the prompt at all: every one scored 0"),
            "{text}"
        );
        assert!(!text.contains("below the threshold"), "{text}");
        assert!(text.contains("  read  built-in\n"), "{text}");
        assert_eq!(
            crate::scorer_words("embedded", Some("semantic+lexical")),
            "the built-in scorer with the semantic model"
        );
    }

    #[test]
    fn origins_report_aligns() {
        let text = origins_report(
            &[
                OriginRow {
                    name: "dev-radius".into(),
                    namespace: "mcp__dev_radius".into(),
                    scope: "project",
                },
                OriginRow {
                    name: "kb".into(),
                    namespace: "mcp__kb".into(),
                    scope: "global",
                },
            ],
            &[OriginWarning {
                file: "project",
                code: "override_without_base",
                server: Some("x".into()),
            }],
        );
        assert_eq!(
            text,
            "dev-radius  mcp__dev_radius  project\nkb          mcp__kb          global\nwarning  project  override_without_base  x\n"
        );
    }
}
