//! The texts of the `/decisions` dialog's **Tools** tab (its switch, mode, cadence and four
//! allowlists) and of the tool limits in **Advanced**. The binding draws the rows it gets; it
//! has no words of its own.

use crate::words::count;
use pcd_model::{Cadence, DecisionSettings, Mode, ScopedAllowlist, ToolsSettings};

/// Which setting a row edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SettingId {
    /// `tools.enabled`.
    Enabled,
    /// `tools.mode`.
    Mode,
    /// `tools.cadence`.
    Cadence,
    /// The global *Always allowed tools* list.
    GlobalTools,
    /// The global *MCP servers & extensions* list.
    GlobalGroups,
    /// The project *Always allowed tools* list.
    ProjectTools,
    /// The project *MCP servers & extensions* list.
    ProjectGroups,
    /// `decision.maxNewTools`.
    MaxNewTools,
    /// `decision.maxNewGroups`.
    MaxNewGroups,
    /// `decision.minimumCandidates`.
    MinimumCandidates,
}

/// One row of a settings tab: its label, its current value as shown, and a one-line help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingRow {
    /// Which setting.
    pub id: SettingId,
    /// The label.
    pub label: &'static str,
    /// The current value, as shown.
    pub value: String,
    /// What it does, in one or two sentences.
    pub help: String,
}

/// How a mode is shown in the Tools tab.
pub fn mode_text(mode: Mode) -> &'static str {
    match mode {
        Mode::Tools => "Each tool",
        Mode::Mcp => "Each MCP server & extension",
    }
}

/// How a cadence is shown in the Tools tab.
pub fn cadence_text(cadence: Cadence) -> &'static str {
    match cadence {
        Cadence::Initial => "Once, at the first prompt",
        Cadence::Prompt => "At every prompt",
        Cadence::ToolRound => "At every prompt and after tool rounds",
    }
}

/// The Tools tab's rows, in order: the switch, mode, cadence and the four allowlists. `project`
/// is the project's lists (empty when there is no project file).
pub fn tools_tab(tools: &ToolsSettings, project: &ScopedAllowlist) -> Vec<SettingRow> {
    let entries = |n: usize| count(n as u64, "entry", "entries");
    vec![
        SettingRow {
            id: SettingId::Enabled,
            label: "Tool filtering",
            value: if tools.enabled { "On" } else { "Off" }.to_owned(),
            help: "Decides which tools the model sees for each task, separately from skill \
                   filtering. Off by default; while off, every tool is available and nothing \
                   is recorded."
                .to_owned(),
        },
        SettingRow {
            id: SettingId::Mode,
            label: "Decide",
            value: mode_text(tools.mode).to_owned(),
            help: match tools.mode {
                Mode::Tools => {
                    "Every tool from an extension or MCP server is decided on its \
                                own. Built-in tools are always available."
                }
                Mode::Mcp => {
                    "Every MCP server and every extension is switched on or off as a \
                              whole; allowlisting one of its tools allows the whole group. \
                              Built-in tools are always available."
                }
            }
            .to_owned(),
        },
        SettingRow {
            id: SettingId::Cadence,
            label: "When",
            value: cadence_text(tools.cadence).to_owned(),
            help: match tools.cadence {
                Cadence::Initial => {
                    "One decision from your first prompt; tools that appear \
                                     later are decided against that prompt."
                }
                Cadence::Prompt => {
                    "A decision at every prompt, including steering and \
                                    follow-up messages. Tools only ever get added."
                }
                Cadence::ToolRound => {
                    "A decision at every prompt, and after each tool round \
                                       the next-best tools are added from the same scores (no \
                                       extra model call)."
                }
            }
            .to_owned(),
        },
        SettingRow {
            id: SettingId::GlobalTools,
            label: "Always allowed tools (global)",
            value: entries(tools.always_allowed_tools.len()),
            help: "Tools from your user-level extensions and MCP servers that are always \
                   available, in every project. Pin a whole server or extension from its header."
                .to_owned(),
        },
        SettingRow {
            id: SettingId::GlobalGroups,
            label: "MCP servers & extensions (global)",
            value: entries(tools.always_allowed_groups.len()),
            help: "User-level MCP servers and extensions whose tools are always available, \
                   including tools they register later."
                .to_owned(),
        },
        SettingRow {
            id: SettingId::ProjectTools,
            label: "Always allowed tools (project)",
            value: entries(project.tools.len()),
            help: "Tools from this project's extensions and MCP servers that are always \
                   available in this project."
                .to_owned(),
        },
        SettingRow {
            id: SettingId::ProjectGroups,
            label: "MCP servers & extensions (project)",
            value: entries(project.groups.len()),
            help: "This project's MCP servers and extensions whose tools are always available \
                   in this project."
                .to_owned(),
        },
    ]
}

/// Notes under the Tools tab's rows: where the limits are, and what happens without a model.
pub fn tools_tab_notes(tools: &ToolsSettings, decision: &DecisionSettings) -> Vec<String> {
    let mut notes = Vec::new();
    if tools.enabled && !decision.has_model() {
        notes.push(
            "No decision model is selected, so every tool stays available. Choose one in \
             Advanced; turning filtering on never selects one."
                .to_owned(),
        );
    }
    notes.push(
        "The decision model, its threshold and the limits on how many tools and groups a \
         decision adds are in Advanced, shared with skill filtering."
            .to_owned(),
    );
    notes
}

/// The tool limits in Advanced.
pub fn advanced_tool_limits(decision: &DecisionSettings) -> Vec<SettingRow> {
    vec![
        SettingRow {
            id: SettingId::MaxNewTools,
            label: "Max new tools per decision",
            value: decision.max_new_tools.to_string(),
            help: "In tools mode, the most tools one decision makes available.".to_owned(),
        },
        SettingRow {
            id: SettingId::MaxNewGroups,
            label: "Max new servers & extensions per decision",
            value: decision.max_new_groups.to_string(),
            help: "In group mode, the most MCP servers and extensions one decision makes \
                   available."
                .to_owned(),
        },
        SettingRow {
            id: SettingId::MinimumCandidates,
            label: "Minimum candidates",
            value: decision.minimum_candidates.to_string(),
            help: "With fewer undecided tools or groups than this, nothing is decided and they \
                   stay available."
                .to_owned(),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_model::{parse_group_entry, parse_tool_entry, DecisionProvider};

    fn render(rows: &[SettingRow]) -> String {
        rows.iter()
            .map(|r| format!("{} = {}\n    {}", r.label, r.value, r.help))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn tools_tab_defaults() {
        let tools = ToolsSettings::default();
        let decision = DecisionSettings::default();
        let mut text = render(&tools_tab(&tools, &ScopedAllowlist::default()));
        text.push_str("\n\n");
        text.push_str(&tools_tab_notes(&tools, &decision).join("\n"));
        insta::assert_snapshot!(text);
    }

    #[test]
    fn tools_tab_enabled_group_mode_without_a_model() {
        let tools = ToolsSettings {
            enabled: true,
            mode: Mode::Mcp,
            cadence: Cadence::ToolRound,
            always_allowed_tools: vec![parse_tool_entry("web_fetch").unwrap()],
            always_allowed_groups: vec![
                parse_group_entry("kb").unwrap(),
                parse_group_entry("ext__notes").unwrap(),
            ],
            ..ToolsSettings::default()
        };
        let project = ScopedAllowlist {
            tools: vec![],
            groups: vec![parse_group_entry("docs").unwrap()],
        };
        let decision = DecisionSettings::default();
        let mut text = render(&tools_tab(&tools, &project));
        text.push_str("\n\n");
        text.push_str(&tools_tab_notes(&tools, &decision).join("\n"));
        insta::assert_snapshot!(text);
    }

    #[test]
    fn every_mode_and_cadence_has_its_own_text() {
        let mut seen = std::collections::HashSet::new();
        for mode in [Mode::Tools, Mode::Mcp] {
            assert!(seen.insert(mode_text(mode)));
        }
        for c in [Cadence::Initial, Cadence::Prompt, Cadence::ToolRound] {
            assert!(seen.insert(cadence_text(c)));
        }
    }

    #[test]
    fn the_no_model_note_only_shows_when_it_matters() {
        let on = ToolsSettings {
            enabled: true,
            ..ToolsSettings::default()
        };
        let with_model = DecisionSettings {
            provider: DecisionProvider::Embedded,
            ..DecisionSettings::default()
        };
        assert_eq!(tools_tab_notes(&on, &with_model).len(), 1);
        assert_eq!(tools_tab_notes(&on, &DecisionSettings::default()).len(), 2);
        assert_eq!(
            tools_tab_notes(&ToolsSettings::default(), &DecisionSettings::default()).len(),
            1
        );
    }

    #[test]
    fn advanced_limits() {
        insta::assert_snapshot!(render(&advanced_tool_limits(&DecisionSettings::default())));
    }
}
