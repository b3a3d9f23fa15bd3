//! The texts of the `/decisions` command: its usage, `tools`/`mcp` (each takes only `list`),
//! `export-inventory FILE`, the status it prints where Pi has no interactive terminal, and `/decisions test`.

use crate::reports::json_number;
use crate::rounds::{round_problem_code, RoundProblem};
use crate::settings_tab::{cadence_text, mode_text, tools_tab};
use crate::words::{code, count, thousands};
use pcd_model::{bound_label, DecisionProvider, DecisionSettings, ScopedAllowlist, ToolsSettings};

/// Which command was given an argument it does not take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListCommand {
    /// `/decisions tools`.
    Tools,
    /// `/decisions mcp`.
    Mcp,
}

/// The reply to `/decisions tools` or `/decisions mcp` with no argument or any argument but
/// `list`. The argument itself is never repeated.
pub fn list_command_usage(command: ListCommand) -> String {
    match command {
        ListCommand::Tools => {
            "`/decisions tools` takes only `list`: `/decisions tools list` prints every tool and \
             why it is available, names only (`/decisions export-inventory FILE` writes Pi's \
             tool inventory to a new file, for `context-decisions pick` and `eval`). Allowlists \
             are edited in `/decisions` → Tools tab."
                .to_owned()
        }
        ListCommand::Mcp => "`/decisions mcp` takes only `list`: `/decisions mcp list` prints \
             every MCP server and extension with its key and availability, names only. \
             Allowlists are edited in `/decisions` → Tools tab."
            .to_owned(),
    }
}

/// `/decisions export-inventory FILE` wrote Pi's tool inventory (`count` tools) to `file`.
pub fn tools_exported(file: &str, count: usize) -> String {
    format!(
        "Wrote {} (Pi's tool inventory, as getAllTools() gives it) to {}. Try the picker on it: \
         `context-decisions pick --tools {} --prompt \"…\"`.",
        count_of(count),
        crate::display::display_safe(file),
        crate::display::display_safe(file)
    )
}

fn count_of(n: usize) -> String {
    if n == 1 {
        "1 tool".to_owned()
    } else {
        format!("{n} tools")
    }
}

/// `/decisions export-inventory FILE` could not write `file`, for `reason` (an I/O error kind, or
/// that it exists already).
pub fn tools_export_failed(file: &str, reason: &str) -> String {
    format!(
        "Could not write Pi's tool inventory to {}: {}. Nothing was written.",
        crate::display::display_safe(file),
        crate::display::display_safe(reason)
    )
}

/// The reason for [`tools_export_failed`] when Pi's registry did not read as an inventory.
pub const EXPORT_REGISTRY_UNREADABLE: &str = "Pi's registry could not be read";

/// The reason for [`tools_export_failed`] when the file exists: nothing is overwritten.
pub const EXPORT_FILE_EXISTS: &str = "the file exists (choose a new name; nothing is overwritten)";

/// The reason for [`tools_export_failed`] while tool filtering is off: off means Pi's registry
/// is not read, so there is nothing to write.
pub const EXPORT_FILTERING_OFF: &str =
    "tool filtering is off, and while it is off Pi's registry is not read (switch it on in /decisions first)";

/// `/decisions export-inventory` without a file name.
pub const EXPORT_USAGE: &str =
    "`/decisions export-inventory FILE` writes Pi's tool inventory to FILE (a new file, relative to \
     the project folder), to try `context-decisions pick` and `eval` on your own tools.";

/// The `/decisions` command's one-line description in Pi's command list.
pub const DECISIONS_COMMAND_DESCRIPTION: &str =
    "Tool and MCP filtering: the Tools tab (no argument), list what is available and why (tools list, mcp list), export the tools for the program (export-inventory FILE), test the decision model (test)";

/// The reason a call is blocked when checking it failed inside the extension itself (an
/// unexpected error): it fails closed.
pub fn check_failed_reason() -> String {
    "Blocked: pi-context-decisions could not check this call (an internal error), so it failed \
     closed. Try again; if it keeps happening, turn tool filtering off and report it."
        .to_owned()
}

/// The reason to block a call with when the decision that would allow it could not be written to
/// the session (Pi refused the entry): availability is what the branch records, so it fails
/// closed.
pub fn not_recorded_reason() -> String {
    "Blocked: the decision for this tool could not be written to the session, so it was not \
     made available (fail closed). Try again; to run it regardless, add it to an allowlist in \
     /decisions (Tools tab)."
        .to_owned()
}

/// Where the switch, the mode, the cadence and the pins are written by hand: said without a
/// path of this machine (the files' places are the same everywhere).
const SETTINGS_FILES: &str = "The switch, the mode, the cadence and the global pins are \
     `tools.enabled`, `tools.mode`, `tools.cadence`, `tools.alwaysAllowedTools` and \
     `tools.alwaysAllowedMcpServers` in `pi-context-decisions/settings.json` in Pi's agent folder \
     (`~/.pi/agent`, or the folder `PI_CODING_AGENT_DIR` names); the project pins are \
     `alwaysAllowedTools` and `alwaysAllowedMcpServers` in `.pi/pi-context-decisions.json` in the \
     project. Both files are read again at the next boundary (the next prompt).";

/// The reply to `/decisions` with an argument it does not take: what the command takes, and
/// where the switch and the pins live.
pub fn decisions_usage() -> String {
    format!(
        "`/decisions` opens the Tools tab where Pi has an interactive terminal (elsewhere it \
         prints the settings and the allowlists); `/decisions tools list` prints every tool and \
         why it is available; `/decisions mcp list` prints every MCP server and extension with \
         its key and availability (names only, no decision calls); `/decisions export-inventory \
         FILE` writes Pi's tool inventory to a new file for the program; `/decisions test` asks the \
         selected decision model one small question and reports how it answered. {SETTINGS_FILES}"
    )
}

/// `/decisions` with words it does not know: says which, then the usage. The words are bounded
/// and made safe to print.
pub fn decisions_unknown(given: &str) -> String {
    let shown: String = given.chars().take(60).collect();
    let more = if given.chars().count() > 60 {
        "…"
    } else {
        ""
    };
    format!(
        "`/decisions {}{more}` is not a /decisions command. {}",
        crate::display::display_safe(&shown),
        decisions_usage()
    )
}

/// What Pi offers on Tab after `/decisions `: each argument that starts with `prefix` (ignoring
/// leading spaces and case), with what it does.
pub fn decisions_completions(prefix: &str) -> Vec<(&'static str, &'static str)> {
    const ARGUMENTS: [(&str, &str); 4] = [
        ("tools list", "every tool and why it is available"),
        (
            "mcp list",
            "every MCP server and extension, with its key and availability",
        ),
        (
            "export-inventory",
            "write Pi's tool inventory to a new file, for the program",
        ),
        ("test", "ask the decision model one small question"),
    ];
    let prefix = prefix.trim_start().to_lowercase();
    ARGUMENTS
        .into_iter()
        .filter(|(value, _)| value.starts_with(&prefix))
        .collect()
}

/// The most entries of one allowlist `/decisions` prints without a terminal; the rest are
/// counted.
pub const MAX_STATUS_ENTRIES: usize = 50;

/// `/decisions` where Pi has no interactive terminal (print, JSON and RPC modes): the Tools
/// tab's settings and its four allowlists as text, and where to change them. Entries are names
/// and keys from the settings files, made safe to print.
pub fn decisions_status(
    tools: &ToolsSettings,
    decision: &DecisionSettings,
    project: &ScopedAllowlist,
    last_round: Option<LastRound>,
) -> String {
    let model = match decision.provider {
        DecisionProvider::None => "none (every tool stays available)".to_owned(),
        DecisionProvider::Embedded => "the built-in scorer".to_owned(),
        DecisionProvider::Http => format!(
            "HTTP, {}",
            code(&bound_label(decision.model.as_deref().unwrap_or("")))
        ),
        DecisionProvider::Pi => format!(
            "Pi's {}",
            code(&bound_label(decision.model.as_deref().unwrap_or("")))
        ),
    };
    let mut lines = vec![format!(
        "Tool filtering: {} · Decide: {} · When: {} · Decision model: {model}",
        if tools.enabled { "On" } else { "Off" },
        mode_text(tools.mode),
        cadence_text(tools.cadence),
    )];
    if let Some(last) = last_round {
        lines.push(last_round_text(last));
    }
    lines.extend(allowlist_lines(tools, project, |_| true));
    lines.push(format!(
        "There is no interactive terminal here, so the Tools tab cannot open. {SETTINGS_FILES} \
         `/decisions tools list` and `/decisions mcp list` show what is available and why."
    ));
    lines.join("\n")
}

/// Names as the status shows them: at most [`MAX_STATUS_ENTRIES`], then how many more.
fn names_text(names: Vec<&str>) -> String {
    if names.is_empty() {
        return "none".to_owned();
    }
    let mut shown: Vec<String> = names
        .iter()
        .take(MAX_STATUS_ENTRIES)
        .map(|n| code(&bound_label(n)))
        .collect();
    if names.len() > MAX_STATUS_ENTRIES {
        shown.push(format!(
            "and {} more",
            thousands((names.len() - MAX_STATUS_ENTRIES) as u64)
        ));
    }
    shown.join(", ")
}

/// One line per saved allowlist (global tools, global groups, project tools, project groups),
/// those `keep` takes by index, names only.
fn allowlist_lines(
    tools: &ToolsSettings,
    project: &ScopedAllowlist,
    keep: impl Fn(usize) -> bool,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (index, (row, names)) in tools_tab(tools, project)
        .iter()
        .skip(3)
        .zip([
            tools
                .always_allowed_tools
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>(),
            tools
                .always_allowed_groups
                .iter()
                .map(|g| g.as_str())
                .collect(),
            project.tools.iter().map(|t| t.as_str()).collect(),
            project.groups.iter().map(|g| g.as_str()).collect(),
        ])
        .enumerate()
    {
        if keep(index) {
            lines.push(format!("{}: {}", row.label, names_text(names)));
        }
    }
    lines
}

/// `/decisions tools list` or `/decisions mcp list` while tool filtering is off: off means the
/// registry is not read, so the reply says that filtering is off and shows the saved allowlists
/// of that kind (tool names, or group keys) by name.
pub fn list_while_off(
    command: ListCommand,
    tools: &ToolsSettings,
    project: &ScopedAllowlist,
) -> String {
    let (what, groups) = match command {
        ListCommand::Tools => ("Tools", false),
        ListCommand::Mcp => ("MCP servers & extensions", true),
    };
    let mut lines = vec![format!(
        "{what}: tool filtering is off, so every tool is available and Pi's tool registry is not \
         read. Turn filtering on (the Tools tab of `/decisions` in Pi's interactive mode, or \
         `\"tools\": {{\"enabled\": true}}` in the settings file) to list each tool with its \
         availability. The saved allowlists:"
    )];
    lines.extend(allowlist_lines(tools, project, |index| {
        (index % 2 == 1) == groups
    }));
    lines.join("\n")
}

/// The outcome of the latest decision round of this session, as `/decisions` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LastRound {
    /// It was recorded: `added` of `candidates` candidates were made available.
    Recorded {
        /// How many were made available.
        added: usize,
        /// How many candidates it considered.
        candidates: usize,
    },
    /// It added nothing (or, with `failMode: open`, everything left), for this reason.
    Problem(RoundProblem),
}

/// The line `/decisions` shows about the latest decision round.
pub fn last_round_text(last: LastRound) -> String {
    match last {
        LastRound::Recorded { added, candidates } => format!(
            "Last decision: {} of {} made available.",
            thousands(added as u64),
            count(candidates as u64, "candidate", "candidates")
        ),
        LastRound::Problem(problem) => format!(
            "Last decision: added nothing (reason: {}).",
            code(round_problem_code(problem))
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_words_are_named_and_completions_offer_the_commands() {
        let text = decisions_unknown("foo\u{1b}[31m");
        assert!(text.starts_with("`/decisions foo"), "{text}");
        assert!(!text.contains('\u{1b}'));
        assert!(text.contains("`/decisions tools list`"));
        let all: Vec<&str> = decisions_completions("").iter().map(|c| c.0).collect();
        assert_eq!(all, ["tools list", "mcp list", "export-inventory", "test"]);
        let t: Vec<&str> = decisions_completions("t").iter().map(|c| c.0).collect();
        assert_eq!(t, ["tools list", "test"]);
        // The spec: `tools` and `mcp` take no argument but `list` (issue 30, item 10).
        assert!(decisions_completions("")
            .iter()
            .all(
                |(v, _)| !v.starts_with("tools ") && !v.starts_with("mcp ") || v.ends_with(" list")
            ));
        assert!(decisions_completions("tools x").is_empty());
        assert!(decisions_completions("report.md").is_empty());
    }

    #[test]
    fn decisions_usage_text() {
        insta::assert_snapshot!(format!(
            "{DECISIONS_COMMAND_DESCRIPTION}\n{}\n{}",
            decisions_usage(),
            check_failed_reason()
        ));
    }

    #[test]
    fn status_without_a_terminal() {
        use pcd_model::{parse_group_entry, parse_tool_entry, Cadence, Mode};
        let tools = ToolsSettings {
            enabled: true,
            mode: Mode::Mcp,
            cadence: Cadence::Initial,
            always_allowed_tools: vec![parse_tool_entry("web_fetch").unwrap()],
            always_allowed_groups: vec![parse_group_entry("kb").unwrap()],
            ..ToolsSettings::default()
        };
        let project = ScopedAllowlist {
            tools: vec![],
            groups: vec![parse_group_entry("ext__notes").unwrap()],
        };
        let decision = DecisionSettings {
            provider: DecisionProvider::Pi,
            model: Some("anthropic/claude".into()),
            ..DecisionSettings::default()
        };
        insta::assert_snapshot!(decisions_status(
            &tools,
            &decision,
            &project,
            Some(LastRound::Recorded {
                added: 2,
                candidates: 14
            })
        ));
    }

    #[test]
    fn lists_while_off_name_the_saved_allowlists_only() {
        use pcd_model::{parse_group_entry, parse_tool_entry};
        let tools = ToolsSettings {
            always_allowed_tools: vec![parse_tool_entry("web_fetch").unwrap()],
            always_allowed_groups: vec![parse_group_entry("kb").unwrap()],
            ..ToolsSettings::default()
        };
        let project = ScopedAllowlist {
            tools: vec![parse_tool_entry("db_query").unwrap()],
            groups: vec![],
        };
        insta::assert_snapshot!(format!(
            "{}\n---\n{}\n---\n{}\n{}",
            list_while_off(ListCommand::Tools, &tools, &project),
            list_while_off(ListCommand::Mcp, &tools, &project),
            last_round_text(LastRound::Problem(RoundProblem::Failed)),
            crate::rounds::round_failed_warning(RoundProblem::Failed),
        ));
    }

    #[test]
    fn a_long_list_is_cut_and_counted() {
        use pcd_model::parse_tool_entry;
        let tools = ToolsSettings {
            always_allowed_tools: (0..60)
                .map(|i| parse_tool_entry(&format!("t{i}")).unwrap())
                .collect(),
            ..ToolsSettings::default()
        };
        let text = decisions_status(
            &tools,
            &DecisionSettings::default(),
            &ScopedAllowlist::default(),
            None,
        );
        assert!(text.contains("`t49`, and 10 more"), "{text}");
        assert!(!text.contains("`t50`"));
    }

    #[test]
    fn usage() {
        insta::assert_snapshot!(format!(
            "{}\n{}",
            list_command_usage(ListCommand::Tools),
            list_command_usage(ListCommand::Mcp)
        ));
    }
}

/// What the selected model scored in `/decisions test`, and what the settings in force would
/// make of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeScores {
    /// Its score for the relevant probe tool (a forecast tool, for a weather question).
    pub relevant: f64,
    /// Its score for the irrelevant one (a chart tool).
    pub irrelevant: f64,
    /// The threshold in force.
    pub threshold: f64,
    /// The cap of new tools (or groups, in `mcp` mode) per round in force.
    pub cap: u64,
    /// Whether the relevant tool would be made available (at or above the threshold, within
    /// the cap).
    pub relevant_available: bool,
    /// Whether the irrelevant tool would be made available.
    pub irrelevant_available: bool,
}

/// The outcome of `/decisions test`: one small decision asked of the selected model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DecisionTest {
    /// No decision model is selected (every tool stays available).
    NoModel,
    /// The embedded scorer answered (it always can).
    Embedded(ProbeScores),
    /// The model answered with valid scores.
    Answered(ProbeScores),
    /// The model answered, but not with a valid score for each probe tool.
    Malformed,
    /// The model could not be reached or did not answer in time.
    Unavailable,
    /// The model is not set up correctly (no such model, no key, a bad URL).
    Configuration,
    /// The test was cancelled.
    Cancelled,
}

/// The sentence `/decisions test` reports when the call returns: whether the relevant tool would
/// be made available at the threshold and cap in force, and whether the irrelevant one would be.
pub fn decision_test(result: DecisionTest) -> String {
    let scored = |who: &str, p: ProbeScores| {
        let threshold = json_number(p.threshold);
        let verdict = match (p.relevant_available, p.irrelevant_available) {
            (true, false) => format!(
                "at the threshold {threshold}, the forecast tool would be made available and the \
                 chart tool withheld, as they should"
            ),
            (true, true) => format!(
                "at the threshold {threshold}, both would be made available, so its picks may \
                 expose tools a task does not need; raise the threshold in Advanced or choose \
                 another model"
            ),
            (false, _) if p.relevant >= p.threshold => format!(
                "the forecast tool clears the threshold {threshold}, but a cap of {} new per \
                 round lets nothing in; raise the cap in Advanced",
                p.cap
            ),
            (false, irrelevant) => format!(
                "at the threshold {threshold}, the forecast tool would not be made available \
                 ({:.2} below it){}, so the model would not get the tool the question needs; \
                 lower the threshold in Advanced or choose another model",
                p.threshold - p.relevant,
                if irrelevant {
                    " but the chart tool would"
                } else {
                    ""
                },
            ),
        };
        format!(
            "Decision test: {who} answered. A weather question scored {:.2} for a forecast tool \
             and {:.2} for a chart tool: {verdict}.",
            p.relevant, p.irrelevant
        )
    };
    match result {
        DecisionTest::NoModel => "Decision test: no decision model is selected, so nothing is \
             scored and every tool stays available. Choose one in Advanced (`decision.provider`)."
            .to_owned(),
        DecisionTest::Embedded(p) => scored("the built-in scorer", p),
        DecisionTest::Answered(p) => scored("the decision model", p),
        DecisionTest::Malformed => "Decision test: the decision model answered, but not with a \
             score for each tool, so its answers would add nothing. Try another model."
            .to_owned(),
        DecisionTest::Unavailable => "Decision test: the decision model did not answer (it could \
             not be reached, or took longer than the timeout in Advanced)."
            .to_owned(),
        DecisionTest::Configuration => "Decision test: the decision model is not set up \
             correctly (check the model name, the endpoint and its key in Advanced)."
            .to_owned(),
        DecisionTest::Cancelled => "Decision test: cancelled.".to_owned(),
    }
}

#[cfg(test)]
mod decision_test_tests {
    use super::*;

    /// What the picker's selection makes of two scores at the default threshold and a cap of 6.
    fn probe(relevant: f64, irrelevant: f64) -> ProbeScores {
        ProbeScores {
            relevant,
            irrelevant,
            threshold: 0.625,
            cap: 6,
            relevant_available: relevant >= 0.625,
            irrelevant_available: irrelevant >= 0.625,
        }
    }

    #[test]
    fn every_outcome() {
        let all = [
            DecisionTest::NoModel,
            DecisionTest::Embedded(probe(0.91, 0.0)),
            DecisionTest::Answered(probe(0.2, 0.7)),
            DecisionTest::Embedded(probe(0.46, 0.0)),
            DecisionTest::Answered(probe(0.9, 0.8)),
            DecisionTest::Answered(ProbeScores {
                cap: 0,
                relevant_available: false,
                ..probe(0.9, 0.1)
            }),
            DecisionTest::Malformed,
            DecisionTest::Unavailable,
            DecisionTest::Configuration,
            DecisionTest::Cancelled,
        ];
        insta::assert_snapshot!(all.map(decision_test).join("\n"));
    }
}
