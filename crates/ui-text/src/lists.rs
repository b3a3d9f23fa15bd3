//! `/decisions tools list` (one row per tool) and `/decisions mcp list` (one row per MCP server
//! or extension): a local, names-only inventory saying why each tool is available, with a
//! summary of what is withheld.

use crate::display::display_safe;
use crate::words::{approx_tokens, count, list_title, thousands};
use pcd_model::{
    bound_label, Classified, GroupKey, GroupKind, GroupScope, Mode, RemedyList, Scope, ToolInfo,
    ToolKind,
};
use std::collections::BTreeMap;

/// When in a session a round ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// At session start (or when filtering became active).
    SessionStart,
    /// At a user prompt (steering and follow-up text included).
    Prompt,
    /// After a completed tool round.
    ToolRound,
    /// Lazily, when the tool was first called.
    FirstCall,
}

impl Boundary {
    fn phrase(self) -> &'static str {
        match self {
            Boundary::SessionStart => "at session start",
            Boundary::Prompt => "at a prompt",
            Boundary::ToolRound => "after a tool round",
            Boundary::FirstCall => "at its first call",
        }
    }
}

/// Why nothing was scored, as the settings are now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NotScored {
    /// No decision model is selected.
    NoModel,
    /// Fewer candidates than *Minimum candidates*.
    FewCandidates {
        /// How many candidates there are in this mode.
        candidates: u32,
        /// *Minimum candidates*.
        minimum: u32,
        /// The mode (in `mcp` mode a candidate is a whole MCP server or extension).
        mode: Mode,
    },
}

/// Why a tool is available on this branch, or that it is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Availability {
    /// Built-in provenance: always available.
    Internal,
    /// An allowlist entry in `scope`, in the tools list or the groups list.
    Allowlisted {
        /// Whose list.
        scope: Scope,
        /// Which of the two lists.
        list: RemedyList,
    },
    /// Made available by round `round` of this branch.
    Round {
        /// The round's number on this branch (1 is the first).
        round: u32,
        /// When it ran.
        boundary: Boundary,
    },
    /// Group mode leaves it unfiltered: its provenance names no group.
    Unfiltered,
    /// Not scored, so it stays available, and that is recorded; why, as the settings are now.
    NotScored(NotScored),
    /// It was registered before filtering became active on this branch, so it stays available.
    AlreadyRegistered,
    /// Tool filtering is off: every tool is available.
    FilteringOff,
    /// Not available for this task: withheld from the request and blocked when called.
    Withheld,
}

impl Availability {
    /// Whether the tool may be called.
    pub fn is_available(self) -> bool {
        !matches!(self, Availability::Withheld)
    }

    /// The short reason shown in the lists.
    pub fn describe(self) -> String {
        match self {
            Availability::Internal => "available: built-in".to_owned(),
            Availability::Allowlisted { scope, list } => format!(
                "available: {} {} list",
                scope.as_str(),
                list_title(list).trim_matches('*')
            ),
            Availability::Round { round, boundary } => {
                format!("available: round {round}, {}", boundary.phrase())
            }
            Availability::Unfiltered => "available: unfiltered (no group)".to_owned(),
            Availability::NotScored(NotScored::NoModel) => {
                "available: not scored, no decision model is selected".to_owned()
            }
            Availability::NotScored(NotScored::FewCandidates {
                candidates,
                minimum,
                mode,
            }) => {
                let what = match mode {
                    Mode::Mcp => count(candidates.into(), "group", "groups"),
                    Mode::Tools => count(candidates.into(), "tool", "tools"),
                };
                format!(
                    "available: not scored: {what}, fewer than Minimum candidates ({minimum}; \
                     lower it in Advanced)"
                )
            }
            Availability::AlreadyRegistered => {
                "available: registered before filtering began".to_owned()
            }
            Availability::FilteringOff => "available: filtering is off".to_owned(),
            Availability::Withheld => "withheld".to_owned(),
        }
    }
}

/// One tool as the lists (and the allowlist editor) see it: names, codes and nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRow {
    /// The tool's name.
    pub name: String,
    /// Its kind, by provenance.
    pub kind: ToolKind,
    /// Its group's canonical key, for MCP and extension tools.
    pub group: Option<GroupKey>,
    /// Its group's display label.
    pub label: Option<String>,
    /// The tool's own allowlist scope.
    pub scope: Scope,
    /// Roughly how many characters its definition takes in a request.
    pub definition_chars: usize,
    /// Why it is available, or that it is withheld.
    pub availability: Availability,
    /// How many of its calls the gate let through in this session (since Pi started or last
    /// reloaded it): what the session actually used.
    pub calls: u32,
}

impl ToolRow {
    /// The row for a classified tool.
    pub fn new(tool: &ToolInfo, class: &Classified, availability: Availability) -> ToolRow {
        ToolRow {
            name: tool.name.clone(),
            kind: class.kind,
            group: class.group.as_ref().map(|g| g.key.clone()),
            label: class.group.as_ref().map(|g| g.label.clone()),
            scope: class.scope,
            definition_chars: tool.definition_chars,
            availability,
            calls: 0,
        }
    }
}

/// Whether tool filtering is on, and in which mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filtering {
    /// Off: every tool is available and nothing is recorded.
    Off,
    /// On, in this mode.
    On(Mode),
}

/// What the two lists print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryView {
    /// On or off, and the mode.
    pub filtering: Filtering,
    /// Every registered tool.
    pub rows: Vec<ToolRow>,
    /// How many times this extension changed Pi's active tool set in this session.
    pub active_set_changes: u64,
}

fn kind_rank(kind: ToolKind) -> u8 {
    match kind {
        ToolKind::Internal | ToolKind::McpResource => 0,
        ToolKind::Mcp => 1,
        ToolKind::Extension => 2,
        ToolKind::Unfiltered => 3,
    }
}

fn status_line(view: &InventoryView) -> String {
    match view.filtering {
        Filtering::Off => "tool filtering is off, so every tool is available".to_owned(),
        Filtering::On(Mode::Tools) => "tool filtering is on, deciding each tool".to_owned(),
        Filtering::On(Mode::Mcp) => {
            "tool filtering is on, deciding each MCP server and extension".to_owned()
        }
    }
}

fn summary(view: &InventoryView) -> String {
    let withheld: Vec<&ToolRow> = view
        .rows
        .iter()
        .filter(|r| !r.availability.is_available())
        .collect();
    let chars: u64 = withheld.iter().map(|r| r.definition_chars as u64).sum();
    let withheld_line = if withheld.is_empty() {
        "Withheld: nothing.".to_owned()
    } else {
        format!(
            "Withheld: {} of {}, about {} of definitions (estimated at 4 characters a token).",
            thousands(withheld.len() as u64),
            count(view.rows.len() as u64, "tool", "tools"),
            count(approx_tokens(chars), "token", "tokens"),
        )
    };
    let called: Vec<&ToolRow> = view.rows.iter().filter(|r| r.calls > 0).collect();
    let called_line = if called.is_empty() {
        "No tool has been called this session.".to_owned()
    } else {
        format!(
            "Called this session: {} ({}).",
            count(called.len() as u64, "tool", "tools"),
            count(
                called.iter().map(|r| u64::from(r.calls)).sum(),
                "call",
                "calls"
            ),
        )
    };
    let changes = match view.active_set_changes {
        0 => "The active tool set has not been changed this session.".to_owned(),
        n => format!(
            "The active tool set was changed {} this session.",
            count(n, "time", "times")
        ),
    };
    format!("{withheld_line}\n{called_line}\n{changes}\n")
}

/// Cells as left-aligned columns separated by two spaces, trailing spaces trimmed.
fn table(header: &[&str], cells: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| crate::words::width(h)).collect();
    for row in cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(crate::words::width(cell));
        }
    }
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    let mut out = String::new();
    for row in std::iter::once(&header).chain(cells) {
        let mut line = String::new();
        for (cell, w) in row.iter().zip(&widths) {
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', w - crate::words::width(cell) + 2));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `/decisions tools list`: one row per tool (built-in first, then MCP, extension and ungrouped
/// tools, each by group and name), with its group, scope and availability, then the summary.
pub fn tools_list(view: &InventoryView) -> String {
    let mut rows: Vec<&ToolRow> = view.rows.iter().collect();
    rows.sort_by(|a, b| {
        (kind_rank(a.kind), &a.group, &a.name).cmp(&(kind_rank(b.kind), &b.group, &b.name))
    });
    let mut out = format!(
        "Tools: {}; {}.\n\n",
        status_line(view),
        count(view.rows.len() as u64, "tool", "tools")
    );
    if rows.is_empty() {
        out.push_str("No tools are registered.\n\n");
    } else {
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                vec![
                    display_safe(&r.name),
                    r.group
                        .as_ref()
                        .map_or_else(|| "-".to_owned(), |g| display_safe(g.as_str())),
                    r.label
                        .as_deref()
                        .map_or_else(|| "-".to_owned(), bound_label),
                    r.scope.as_str().to_owned(),
                    r.availability.describe(),
                    match r.calls {
                        0 => "-".to_owned(),
                        n => thousands(u64::from(n)),
                    },
                ]
            })
            .collect();
        out.push_str(&table(
            &["TOOL", "GROUP", "LABEL", "SCOPE", "AVAILABILITY", "CALLS"],
            &cells,
        ));
        out.push('\n');
    }
    out.push_str(&summary(view));
    out
}

/// `/decisions mcp list`: one row per MCP server and extension with tools loaded (servers first,
/// then extensions, each by key), with its label, its members' common scope, its tool count and
/// availability, then the summary.
pub fn mcp_list(view: &InventoryView) -> String {
    struct Acc<'a> {
        label: &'a str,
        scope: GroupScope,
        members: Vec<&'a ToolRow>,
    }
    let mut groups: BTreeMap<(GroupKind, &GroupKey), Acc> = BTreeMap::new();
    for row in &view.rows {
        let Some(key) = &row.group else { continue };
        groups
            .entry((key.kind(), key))
            .and_modify(|acc| {
                acc.scope = acc.scope.join(row.scope);
                acc.members.push(row);
            })
            .or_insert_with(|| Acc {
                label: row.label.as_deref().unwrap_or(""),
                scope: row.scope.into(),
                members: vec![row],
            });
    }
    let mut out = format!(
        "MCP servers & extensions: {}; {}.\n\n",
        status_line(view),
        count(groups.len() as u64, "group", "groups")
    );
    if groups.is_empty() {
        out.push_str("No MCP server or extension has tools loaded.\n\n");
    } else {
        let cells: Vec<Vec<String>> = groups
            .iter()
            .map(|((kind, key), acc)| {
                vec![
                    // A third-party adapter's namespace is not validated beyond `mcp__`.
                    display_safe(key.as_str()),
                    bound_label(acc.label),
                    match kind {
                        GroupKind::Mcp => "MCP server",
                        GroupKind::Extension => "extension",
                    }
                    .to_owned(),
                    acc.scope.as_str().to_owned(),
                    thousands(acc.members.len() as u64),
                    group_availability(&acc.members),
                ]
            })
            .collect();
        out.push_str(&table(
            &["GROUP", "LABEL", "KIND", "SCOPE", "TOOLS", "AVAILABILITY"],
            &cells,
        ));
        out.push('\n');
    }
    out.push_str(&summary(view));
    out
}

fn group_availability(members: &[&ToolRow]) -> String {
    let first = members[0].availability;
    if members.iter().all(|m| m.availability == first) {
        return first.describe();
    }
    let available = members
        .iter()
        .filter(|m| m.availability.is_available())
        .count();
    if available == members.len() {
        "available: for several reasons (see `/decisions tools list`)".to_owned()
    } else {
        format!(
            "partly: {available} of {} available (see `/decisions tools list`)",
            members.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_model::{parse_inventory, Classifier};

    pub(crate) fn sample_inventory() -> Vec<ToolInfo> {
        parse_inventory(
            r#"[
  {"name":"read","sourceInfo":{"path":"builtin:read","source":"builtin","scope":"temporary","origin":"top-level"}},
  {"name":"list_mcp_resources","sourceInfo":{"path":"builtin:mcp","source":"builtin","scope":"temporary","origin":"top-level"}},
  {"name":"mcp__dev_radius__search","description":"Search radius","exposure":"deferred",
   "namespace":{"name":"mcp__dev_radius","aliases":["dev-radius"],"instructions":"sk-SECRET-instr"},
   "parameters":{"type":"object","properties":{"q":{"type":"string","description":"sk-SECRET-schema"}}},
   "sourceInfo":{"path":"builtin:mcp","source":"builtin","scope":"temporary","origin":"top-level"}},
  {"name":"mcp__dev_radius__fetch","exposure":"deferred","namespace":{"name":"mcp__dev_radius","aliases":["dev-radius"]},
   "sourceInfo":{"path":"builtin:mcp","source":"builtin","scope":"temporary","origin":"top-level"}},
  {"name":"mcp__kb__query","exposure":"deferred","description":"Query the knowledge base","namespace":{"name":"mcp__kb"},
   "sourceInfo":{"path":"builtin:mcp","source":"builtin","scope":"temporary","origin":"top-level"}},
  {"name":"web_fetch","description":"Fetch a web page and return it as markdown text.",
   "parameters":{"type":"object","properties":{"url":{"type":"string"}}},
   "sourceInfo":{"path":"/home/u/.pi/agent/npm/node_modules/@acme/pi-web/index.ts","source":"npm:@acme/pi-web@2.0.0","scope":"user","origin":"package"}},
  {"name":"web_search","description":"Search the web.",
   "sourceInfo":{"path":"/home/u/.pi/agent/npm/node_modules/@acme/pi-web/index.ts","source":"npm:@acme/pi-web@2.0.0","scope":"user","origin":"package"}},
  {"name":"notes_add","sourceInfo":{"path":"/home/u/proj/.pi/extensions/notes.ts","source":"auto","scope":"project","origin":"top-level"}},
  {"name":"notes_find","sourceInfo":{"path":"/home/u/.pi/agent/extensions/notes/index.ts","source":"auto","scope":"user","origin":"top-level"}},
  {"name":"ask_host","description":"Ask the host app.","sourceInfo":{"path":"<sdk:ask_host>","source":"sdk","scope":"temporary","origin":"top-level"}}
]"#,
        )
        .unwrap()
        .tools
    }

    fn sample_view(filtering: Filtering) -> InventoryView {
        let tools = sample_inventory();
        let classifier = Classifier::default();
        let availability = |name: &str| match name {
            _ if filtering == Filtering::Off => Availability::FilteringOff,
            "read" | "list_mcp_resources" => Availability::Internal,
            "mcp__dev_radius__search" | "mcp__dev_radius__fetch" => Availability::Round {
                round: 2,
                boundary: Boundary::Prompt,
            },
            "web_fetch" => Availability::Allowlisted {
                scope: Scope::Global,
                list: RemedyList::Tools,
            },
            "notes_add" => Availability::Allowlisted {
                scope: Scope::Project,
                list: RemedyList::Groups,
            },
            "ask_host" => Availability::Round {
                round: 3,
                boundary: Boundary::FirstCall,
            },
            _ => Availability::Withheld,
        };
        InventoryView {
            filtering,
            rows: tools
                .iter()
                .map(|t| ToolRow::new(t, &classifier.classify(t), availability(&t.name)))
                .collect(),
            active_set_changes: 4,
        }
    }

    #[test]
    fn tools_list_on() {
        let text = tools_list(&sample_view(Filtering::On(Mode::Tools)));
        assert!(!text.contains("SECRET") && !text.contains("/home"));
        insta::assert_snapshot!(text);
    }

    #[test]
    fn mcp_list_on() {
        let text = mcp_list(&sample_view(Filtering::On(Mode::Mcp)));
        assert!(!text.contains("SECRET") && !text.contains("/home"));
        insta::assert_snapshot!(text);
    }

    #[test]
    fn lists_off() {
        let view = sample_view(Filtering::Off);
        insta::assert_snapshot!(format!("{}\n---\n{}", tools_list(&view), mcp_list(&view)));
    }

    #[test]
    fn lists_empty() {
        let view = InventoryView {
            filtering: Filtering::On(Mode::Tools),
            rows: Vec::new(),
            active_set_changes: 1,
        };
        insta::assert_snapshot!(format!("{}\n---\n{}", tools_list(&view), mcp_list(&view)));
    }

    #[test]
    fn withheld_tokens_are_a_quarter_of_the_definition_chars_rounded_up() {
        let view = sample_view(Filtering::On(Mode::Tools));
        let chars: usize = view
            .rows
            .iter()
            .filter(|r| r.availability == Availability::Withheld)
            .map(|r| r.definition_chars)
            .sum();
        assert!(chars > 0);
        let expected = format!("about {} tokens", thousands(chars.div_ceil(4) as u64));
        assert!(tools_list(&view).contains(&expected));
        assert!(mcp_list(&view).contains(&expected));
    }

    #[test]
    fn the_tools_the_session_called_are_counted_per_tool_and_in_the_summary() {
        let mut view = sample_view(Filtering::On(Mode::Tools));
        view.rows[0].calls = 3;
        view.rows[2].calls = 1_200;
        let text = tools_list(&view);
        let row = |name: &str| {
            text.lines()
                .find(|l| l.split_whitespace().next() == Some(name))
                .unwrap()
                .to_owned()
        };
        assert!(row(&view.rows[0].name).ends_with(" 3"), "{text}");
        assert!(row(&view.rows[2].name).ends_with(" 1,200"), "{text}");
        assert!(row(&view.rows[1].name).ends_with(" -"), "{text}");
        assert!(
            text.contains("Called this session: 2 tools (1,203 calls)."),
            "{text}"
        );
    }

    #[test]
    fn a_mixed_scope_extension_is_one_mixed_row() {
        let text = mcp_list(&sample_view(Filtering::On(Mode::Mcp)));
        let notes = text.lines().find(|l| l.starts_with("ext__notes")).unwrap();
        assert!(notes.contains("mixed"), "{notes}");
        assert!(notes.contains("partly: 1 of 2"), "{notes}");
    }

    #[test]
    fn hostile_names_labels_and_namespaces_print_safely() {
        let key = GroupKey::for_mcp_namespace("mcp__x\u{1b}[2J\u{202E}").unwrap();
        let view = InventoryView {
            filtering: Filtering::On(Mode::Mcp),
            rows: vec![ToolRow {
                name: "t\nool\u{7}".into(),
                kind: ToolKind::Mcp,
                group: Some(key),
                label: Some(format!("label\r\n{}", "z".repeat(100))),
                scope: Scope::Global,
                definition_chars: 10,
                availability: Availability::Withheld,
                calls: 0,
            }],
            active_set_changes: 0,
        };
        for text in [tools_list(&view), mcp_list(&view)] {
            assert!(
                !text.contains(['\u{1b}', '\u{202E}', '\u{7}', '\r']),
                "{text:?}"
            );
            assert!(!text.contains(&"z".repeat(48)), "labels are bounded");
            assert_eq!(text.lines().count(), 8, "{text}");
        }
    }
}
