//! The `/decisions` **Tools** tab as a pure state machine: the switch, the mode, the cadence and
//! the four allowlists (Global and Project, each *Always allowed tools* and *MCP servers &
//! extensions*). Keys in, lines out, and outcomes the host carries out: a setting to write, an
//! editor that opened (to rank), lists to save, or close.
//!
//! The host writes what an outcome asks, then reports back with [`ToolsTab::saved`] (what the
//! files say now) or [`ToolsTab::save_failed`] (the sentence to show). Until then the tab shows
//! the values it had: nothing is shown as saved that was not written.
//!
//! The rows and their help come from [`tools_tab`]; the editors are [`AllowlistEditor`]s.
//! Rendering follows the editor's width rule: at most `width` characters per line.

use crate::editor::{AllowlistEditor, EditorKind, EditorOutcome, Key};
use crate::lists::ToolRow;
use crate::settings_tab::{tools_tab, tools_tab_notes, SettingId};
use crate::words::{fit, wrap};
use pcd_model::{Cadence, DecisionSettings, Mode, Scope, ScopedAllowlist, ToolsSettings};

/// A `tools.*` setting to write to the global settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolsChange {
    /// `tools.enabled`.
    Enabled(bool),
    /// `tools.mode`.
    Mode(Mode),
    /// `tools.cadence`.
    Cadence(Cadence),
}

impl ToolsChange {
    /// The dotted settings field it writes (`tools.enabled`, `tools.mode`, `tools.cadence`).
    pub fn field(self) -> &'static str {
        match self {
            ToolsChange::Enabled(_) => "tools.enabled",
            ToolsChange::Mode(_) => "tools.mode",
            ToolsChange::Cadence(_) => "tools.cadence",
        }
    }
}

/// What the host does after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum TabOutcome {
    /// Draw the tab again.
    Continue,
    /// Write this setting, then call [`ToolsTab::saved`] or [`ToolsTab::save_failed`].
    Set(ToolsChange),
    /// An allowlist editor opened: the host may start its relevance ranking
    /// ([`AllowlistEditor::rank_targets`], then [`AllowlistEditor::set_relevance`]).
    EditorOpened {
        /// Increases with every editor opened, so a ranking that returns after its editor
        /// closed is recognised and dropped.
        serial: u64,
    },
    /// Write these lists of `scope` (the editor's whole lists: `before` is what it opened with,
    /// so the host can apply only the difference and keep what another window saved), then
    /// call [`ToolsTab::saved`] or [`ToolsTab::save_failed`].
    SaveLists {
        /// Whose lists.
        scope: Scope,
        /// The lists the editor opened with.
        before: ScopedAllowlist,
        /// The lists to save.
        after: ScopedAllowlist,
    },
    /// Close the tab.
    Close,
}

/// The Tools tab. See the module documentation.
#[derive(Debug, Clone)]
pub struct ToolsTab {
    tools: ToolsSettings,
    decision: DecisionSettings,
    project: ScopedAllowlist,
    rows: Vec<ToolRow>,
    cursor: usize,
    editor: Option<(AllowlistEditor, Scope, ScopedAllowlist)>,
    serial: u64,
    status: Option<String>,
}

const ITEMS: [SettingId; 7] = [
    SettingId::Enabled,
    SettingId::Mode,
    SettingId::Cadence,
    SettingId::GlobalTools,
    SettingId::GlobalGroups,
    SettingId::ProjectTools,
    SettingId::ProjectGroups,
];

impl ToolsTab {
    /// The tab over the settings and lists as the files say now, and every registered tool
    /// (`rows`, for the editors).
    pub fn new(
        tools: &ToolsSettings,
        decision: &DecisionSettings,
        project: &ScopedAllowlist,
        rows: Vec<ToolRow>,
    ) -> ToolsTab {
        ToolsTab {
            tools: tools.clone(),
            decision: decision.clone(),
            project: project.clone(),
            rows,
            cursor: 0,
            editor: None,
            serial: 0,
            status: None,
        }
    }

    /// The open editor, if any.
    pub fn editor(&self) -> Option<&AllowlistEditor> {
        self.editor.as_ref().map(|(e, _, _)| e)
    }

    /// The open editor, if any, for the ranking to update.
    pub fn editor_mut(&mut self) -> Option<&mut AllowlistEditor> {
        self.editor.as_mut().map(|(e, _, _)| e)
    }

    /// The serial of the open editor ([`TabOutcome::EditorOpened`]), if one is open.
    pub fn editor_serial(&self) -> Option<u64> {
        self.editor.as_ref().map(|_| self.serial)
    }

    /// The row the cursor is on.
    pub fn cursor(&self) -> SettingId {
        ITEMS[self.cursor]
    }

    /// A write succeeded: the settings and the project lists as the files say now. An editor
    /// that was saving closes.
    pub fn saved(
        &mut self,
        tools: &ToolsSettings,
        decision: &DecisionSettings,
        project: &ScopedAllowlist,
    ) {
        self.tools = tools.clone();
        self.decision = decision.clone();
        self.project = project.clone();
        self.editor = None;
        self.status = None;
    }

    /// A write failed: `message` shows (in the open editor, which stays open with its changes,
    /// or under the tab's rows).
    pub fn save_failed(&mut self, message: String) {
        match &mut self.editor {
            Some((editor, _, _)) => editor.set_status(message),
            None => self.status = Some(message),
        }
    }

    /// The saved lists of `scope`, as the tab knows them.
    fn lists(&self, scope: Scope) -> ScopedAllowlist {
        match scope {
            Scope::Global => ScopedAllowlist {
                tools: self.tools.always_allowed_tools.clone(),
                groups: self.tools.always_allowed_groups.clone(),
            },
            Scope::Project => self.project.clone(),
        }
    }

    /// Handles one key.
    pub fn handle_key(&mut self, key: Key) -> TabOutcome {
        if let Some((editor, scope, before)) = &mut self.editor {
            return match editor.handle_key(key) {
                EditorOutcome::Continue => TabOutcome::Continue,
                EditorOutcome::Cancel => {
                    self.editor = None;
                    TabOutcome::Continue
                }
                EditorOutcome::Save(after) => TabOutcome::SaveLists {
                    scope: *scope,
                    before: before.clone(),
                    after,
                },
            };
        }
        self.status = None;
        match key {
            Key::Up => self.cursor = self.cursor.saturating_sub(1),
            Key::Down => self.cursor = (self.cursor + 1).min(ITEMS.len() - 1),
            Key::Escape => return TabOutcome::Close,
            Key::Enter | Key::Space => return self.activate(),
            _ => {}
        }
        TabOutcome::Continue
    }

    fn activate(&mut self) -> TabOutcome {
        let (kind, scope) = match ITEMS[self.cursor] {
            SettingId::Enabled => {
                return TabOutcome::Set(ToolsChange::Enabled(!self.tools.enabled))
            }
            SettingId::Mode => {
                return TabOutcome::Set(ToolsChange::Mode(match self.tools.mode {
                    Mode::Tools => Mode::Mcp,
                    Mode::Mcp => Mode::Tools,
                }))
            }
            SettingId::Cadence => {
                return TabOutcome::Set(ToolsChange::Cadence(match self.tools.cadence {
                    Cadence::Initial => Cadence::Prompt,
                    Cadence::Prompt => Cadence::ToolRound,
                    Cadence::ToolRound => Cadence::Initial,
                }))
            }
            SettingId::GlobalTools => (EditorKind::Tools, Scope::Global),
            SettingId::GlobalGroups => (EditorKind::Groups, Scope::Global),
            SettingId::ProjectTools => (EditorKind::Tools, Scope::Project),
            SettingId::ProjectGroups => (EditorKind::Groups, Scope::Project),
            // Limits are in Advanced, not on this tab.
            _ => return TabOutcome::Continue,
        };
        let saved = self.lists(scope);
        let editor = AllowlistEditor::new(kind, scope, &self.rows, &saved);
        self.editor = Some((editor, scope, saved));
        self.serial += 1;
        TabOutcome::EditorOpened {
            serial: self.serial,
        }
    }

    /// The tab (or its open editor) as at most `height` lines of at most `width` characters:
    /// the title, every row with its value, the help of the row under the cursor, the notes,
    /// any message, and the key hints.
    pub fn render(&self, width: usize, height: usize) -> Vec<String> {
        if let Some((editor, _, _)) = &self.editor {
            return editor.render(width, height);
        }
        let rows = tools_tab(&self.tools, &self.project);
        let mut lines = vec!["Decisions · Tools".to_owned()];
        for (i, row) in rows.iter().enumerate() {
            let mark = if i == self.cursor { "> " } else { "  " };
            lines.push(format!("{mark}{}: {}", row.label, row.value));
        }
        lines.push(String::new());
        if let Some(row) = rows.get(self.cursor) {
            lines.extend(wrap(&row.help, width));
        }
        for note in tools_tab_notes(&self.tools, &self.decision) {
            lines.extend(wrap(&note, width));
        }
        if let Some(message) = &self.status {
            lines.extend(wrap(message, width));
        }
        let hint = match ITEMS[self.cursor] {
            SettingId::Enabled | SettingId::Mode | SettingId::Cadence => {
                "↑↓ move · Enter change (saved at once) · Esc close"
            }
            _ => "↑↓ move · Enter edit · Esc close",
        };
        lines.push(hint.to_owned());
        if lines.len() > height.max(1) {
            // The rows (with the cursor) first, then the hints.
            let keep = height.max(1);
            let last = lines.pop().unwrap_or_default();
            lines.truncate(keep.saturating_sub(1));
            if keep > 1 {
                lines.push(last);
            }
        }
        lines.into_iter().map(|l| fit(&l, width)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lists::Availability;
    use pcd_model::{parse_group_entry, parse_tool_entry, GroupKey, ToolKind};

    fn rows() -> Vec<ToolRow> {
        let kb = GroupKey::for_mcp_server("kb");
        vec![
            ToolRow {
                name: "read".into(),
                kind: ToolKind::Internal,
                group: None,
                label: None,
                scope: Scope::Global,
                definition_chars: 10,
                availability: Availability::Internal,
            },
            ToolRow {
                name: "mcp__kb__query".into(),
                kind: ToolKind::Mcp,
                group: Some(kb),
                label: Some("kb".into()),
                scope: Scope::Global,
                definition_chars: 10,
                availability: Availability::Withheld,
            },
            ToolRow {
                name: "local_tool".into(),
                kind: ToolKind::Extension,
                group: Some(GroupKey::for_extension("local")),
                label: Some("local".into()),
                scope: Scope::Project,
                definition_chars: 10,
                availability: Availability::Withheld,
            },
        ]
    }

    fn tab() -> ToolsTab {
        let tools = ToolsSettings {
            always_allowed_tools: vec![parse_tool_entry("gone_tool").unwrap()],
            ..ToolsSettings::default()
        };
        ToolsTab::new(
            &tools,
            &DecisionSettings::default(),
            &ScopedAllowlist::default(),
            rows(),
        )
    }

    #[test]
    fn settings_rows_ask_for_a_write_and_show_the_value_only_once_saved() {
        let mut tab = tab();
        assert!(tab.render(80, 30)[1].starts_with("> Tool filtering: Off"));
        assert_eq!(
            tab.handle_key(Key::Enter),
            TabOutcome::Set(ToolsChange::Enabled(true))
        );
        assert!(tab.render(80, 30)[1].contains("Off"), "not saved yet");
        let on = ToolsSettings {
            enabled: true,
            ..ToolsSettings::default()
        };
        tab.saved(
            &on,
            &DecisionSettings::default(),
            &ScopedAllowlist::default(),
        );
        assert!(tab.render(80, 30)[1].contains("On"));
        tab.handle_key(Key::Down);
        assert_eq!(
            tab.handle_key(Key::Space),
            TabOutcome::Set(ToolsChange::Mode(Mode::Mcp))
        );
        tab.handle_key(Key::Down);
        assert_eq!(
            tab.handle_key(Key::Enter),
            TabOutcome::Set(ToolsChange::Cadence(Cadence::ToolRound))
        );
        assert_eq!(
            ToolsChange::Cadence(Cadence::Initial).field(),
            "tools.cadence"
        );
    }

    #[test]
    fn a_failed_write_says_so_under_the_rows() {
        let mut tab = tab();
        tab.handle_key(Key::Enter);
        tab.save_failed("Saving failed.".into());
        assert!(tab.render(80, 30).iter().any(|l| l == "Saving failed."));
        tab.handle_key(Key::Down);
        assert!(!tab.render(80, 30).iter().any(|l| l == "Saving failed."));
    }

    #[test]
    fn each_list_row_opens_its_editor_and_a_save_hands_over_both_lists() {
        let mut tab = tab();
        for _ in 0..3 {
            tab.handle_key(Key::Down);
        }
        assert_eq!(tab.cursor(), SettingId::GlobalTools);
        assert_eq!(
            tab.handle_key(Key::Enter),
            TabOutcome::EditorOpened { serial: 1 }
        );
        let screen = tab.render(80, 30).join("\n");
        assert!(screen.contains("Always allowed tools · Global"), "{screen}");
        assert!(screen.contains("gone_tool  (not loaded)"), "{screen}");
        assert!(
            !screen.contains("local"),
            "a project tool is not global: {screen}"
        );
        assert_eq!(
            tab.editor().unwrap().rank_targets(),
            (vec!["mcp__kb__query".to_owned()], vec![])
        );
        // Down to the kb header, pin it, save.
        tab.handle_key(Key::Down);
        tab.handle_key(Key::Space);
        let TabOutcome::SaveLists {
            scope,
            before,
            after,
        } = tab.handle_key(Key::Save)
        else {
            panic!("a save")
        };
        assert_eq!(scope, Scope::Global);
        assert_eq!(before.tools, vec![parse_tool_entry("gone_tool").unwrap()]);
        assert_eq!(after.tools, before.tools, "the not-loaded name stays");
        assert_eq!(after.groups, vec![parse_group_entry("kb").unwrap()]);
        // Still open until the host reports the write.
        assert!(tab.editor().is_some());
        tab.save_failed("Not written.".into());
        assert!(tab.render(80, 30).iter().any(|l| l == "Not written."));
        tab.saved(
            &ToolsSettings {
                always_allowed_tools: after.tools.clone(),
                always_allowed_groups: after.groups.clone(),
                ..ToolsSettings::default()
            },
            &DecisionSettings::default(),
            &ScopedAllowlist::default(),
        );
        assert!(tab.editor().is_none());
        assert!(tab.render(80, 30)[5].contains("MCP servers & extensions (global): 1 entry"));
        // The project groups editor.
        for _ in 0..3 {
            tab.handle_key(Key::Down);
        }
        assert_eq!(
            tab.handle_key(Key::Enter),
            TabOutcome::EditorOpened { serial: 2 }
        );
        assert_eq!(tab.editor_serial(), Some(2));
        let screen = tab.render(80, 30).join("\n");
        assert!(
            screen.contains("MCP servers & extensions · Project"),
            "{screen}"
        );
        assert!(screen.contains("[ ] local"), "{screen}");
        // Escape closes the editor without saving, then the tab.
        assert_eq!(tab.handle_key(Key::Escape), TabOutcome::Continue);
        assert!(tab.editor().is_none());
        assert_eq!(tab.handle_key(Key::Escape), TabOutcome::Close);
    }

    #[test]
    fn rendering_fits_any_size() {
        let mut tab = tab();
        for (w, h) in [(1, 1), (10, 3), (40, 8), (200, 60)] {
            for _ in 0..8 {
                let lines = tab.render(w, h);
                assert!(lines.len() <= h, "{w}x{h}: {lines:?}");
                assert!(lines.iter().all(|l| l.chars().count() <= w), "{w}x{h}");
                tab.handle_key(Key::Down);
            }
            tab = self::tab();
        }
    }
}
