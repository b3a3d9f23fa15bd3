//! The allowlist editors of the Tools tab, as a pure state machine: the host forwards raw keys
//! and prints the lines it gets back.
//!
//! - *Always allowed tools* ([`EditorKind::Tools`]) is nested. Built-in tools come first,
//!   collapsed and locked (always available, never saved). Then every MCP server, then every
//!   extension **of the selected scope** is a collapsible group (Enter expands; groups start
//!   collapsed; a search expands the groups it matches), then the tools with no group. A header
//!   shows `[ ]` (nothing selected), `[x]` (everything) or `[-]` (some tools picked one by one).
//!   Space on a header selects the whole group (pins its key, the same entry as the *MCP servers
//!   & extensions* list, so tools it registers later are included) or clears it (removes the pin
//!   and every individual pick). Unchecking one tool of a pinned group replaces the pin by the
//!   group's other tools; checking every tool one by one shows `[x]` but stays a list of names.
//! - *MCP servers & extensions* ([`EditorKind::Groups`]) is the same group list, flat.
//!
//! Both save both lists of their scope at once. Saved names that match no loaded tool or group of
//! this scope stay, shown as `(not loaded)`, and no save drops them. Groups whose members have
//! mixed global/project scopes are never offered as groups: their tools of this scope are listed
//! one by one with the tools that have no group.
//!
//! Pressing Space twice on the same header restores exactly the lists from before the first
//! press (the second press undoes the first), so a stray press never loses individual picks.
//!
//! **Width rule:** every rendered line has at most `width` Unicode scalar values; each character
//! counts as one column (see `words::width`).

use crate::lists::ToolRow;
use crate::progress::RANKING;
use crate::view::{Hint, HintAction};
use crate::warnings::allowlist_error;
use crate::words::{code, fit, wrap};
use pcd_model::{
    bound_label, parse_group_entry, parse_tool_entry, AllowlistError, GroupKey, GroupKind,
    GroupScope, RemedyList, Scope, ScopedAllowlist, ToolKind,
};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Which of the two editors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EditorKind {
    /// *Always allowed tools*: nested groups of tools.
    Tools,
    /// *MCP servers & extensions*: the same groups, flat.
    Groups,
}

/// A key the host forwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// Move up.
    Up,
    /// Move down.
    Down,
    /// Expand or collapse the group under the cursor.
    Enter,
    /// Select or clear the row under the cursor.
    Space,
    /// Delete the last search character.
    Backspace,
    /// Clear the search, or close without saving when there is none.
    Escape,
    /// Save both lists (the host's save key, e.g. Ctrl+S).
    Save,
    /// The left arrow: a smaller value in the dialog's Advanced tab; nothing in an editor.
    Left,
    /// The right arrow: a larger value in the dialog's Advanced tab; nothing in an editor.
    Right,
    /// Tab: the dialog's next tab; nothing in an editor.
    Tab,
    /// Shift+Tab: the dialog's previous tab; nothing in an editor.
    BackTab,
    /// A typed character: extends the search (whitespace and control characters are ignored;
    /// the host sends the space bar as [`Key::Space`]).
    Char(char),
}

/// What the host does after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorOutcome {
    /// Keep the editor open and draw it again.
    Continue,
    /// Write these lists (both lists of the editor's scope) and close.
    Save(ScopedAllowlist),
    /// Close without saving.
    Cancel,
}

/// What the cursor is on, for hosts and tests that need to know.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CursorTarget {
    /// The built-in tools header.
    BuiltinHeader,
    /// A built-in tool.
    Builtin(String),
    /// A group header, loaded or `(not loaded)`.
    Group(GroupKey),
    /// A tool row, loaded (in a group or not) or `(not loaded)`.
    Tool(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Row {
    BuiltinHeader,
    Builtin(usize),
    GroupHeader(usize),
    Member(usize, usize),
    Loose(usize),
    StaleGroup(usize),
    StaleTool(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Empty,
    Partial,
    Full,
}

impl Check {
    fn mark(self) -> &'static str {
        match self {
            Check::Empty => "[ ]",
            Check::Partial => "[-]",
            Check::Full => "[x]",
        }
    }

    fn of(on: bool) -> Check {
        if on {
            Check::Full
        } else {
            Check::Empty
        }
    }
}

#[derive(Debug, Clone)]
struct GroupItem {
    key: GroupKey,
    label: String,
    members: Vec<String>,
    /// Why the key cannot be saved as a group entry (a server name over 64 characters, or a
    /// third-party namespace with characters no entry accepts).
    pin_error: Option<AllowlistError>,
    expanded: bool,
}

#[derive(Debug, Clone)]
struct LooseItem {
    name: String,
    /// The label of the mixed-scope group it belongs to, if any.
    mixed_group: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Lists {
    tools: Vec<String>,
    groups: Vec<GroupKey>,
}

/// The state of one allowlist editor. See the module documentation for the behaviour.
///
/// ```
/// use pcd_model::{GroupKey, Scope, ScopedAllowlist, ToolKind};
/// use pcd_ui_text::{AllowlistEditor, Availability, EditorKind, EditorOutcome, Key, ToolRow};
///
/// let kb = GroupKey::for_mcp_server("kb");
/// let rows = [ToolRow {
///     name: "mcp__kb__query".into(),
///     kind: ToolKind::Mcp,
///     group: Some(kb.clone()),
///     label: Some("kb".into()),
///     scope: Scope::Global,
///     definition_chars: 120,
///     availability: Availability::Withheld,
///     calls: 0,
/// }];
/// let mut editor =
///     AllowlistEditor::new(EditorKind::Tools, Scope::Global, &rows, &ScopedAllowlist::default());
/// assert!(editor.render(60, 10).iter().any(|l| l.contains("[ ] kb  mcp__kb · 1 tool")));
/// editor.handle_key(Key::Space);
/// let EditorOutcome::Save(lists) = editor.handle_key(Key::Save) else { panic!() };
/// assert_eq!(lists.groups, vec![kb]);
/// ```
#[derive(Debug, Clone)]
pub struct AllowlistEditor {
    kind: EditorKind,
    scope: Scope,
    builtins: Vec<String>,
    builtins_expanded: bool,
    groups: Vec<GroupItem>,
    loose: Vec<LooseItem>,
    stale_groups: Vec<GroupKey>,
    stale_tools: Vec<String>,
    builtin_names: HashSet<String>,
    lists: Lists,
    saved: Lists,
    query: String,
    cursor: usize,
    status: Option<String>,
    ranking: bool,
}

impl AllowlistEditor {
    /// An editor of `kind` for the lists of `scope`, over every registered tool (`rows`, in any
    /// scope; the editor picks what belongs to `scope`) and the scope's saved lists.
    pub fn new(
        kind: EditorKind,
        scope: Scope,
        rows: &[ToolRow],
        saved: &ScopedAllowlist,
    ) -> AllowlistEditor {
        let mut builtins = Vec::new();
        let mut by_group: BTreeMap<GroupKey, (String, GroupScope, Vec<&ToolRow>)> = BTreeMap::new();
        let mut ungrouped = Vec::new();
        for row in rows {
            if row.kind.is_internal() {
                builtins.push(row.name.clone());
                continue;
            }
            match (&row.group, row.kind) {
                (Some(key), ToolKind::Mcp | ToolKind::Extension) => {
                    by_group
                        .entry(key.clone())
                        .and_modify(|(_, s, members)| {
                            *s = s.join(row.scope);
                            members.push(row);
                        })
                        .or_insert_with(|| {
                            (
                                row.label.clone().unwrap_or_else(|| key.as_str().to_owned()),
                                row.scope.into(),
                                vec![row],
                            )
                        });
                }
                _ if row.scope == scope => ungrouped.push(LooseItem {
                    name: row.name.clone(),
                    mixed_group: None,
                }),
                _ => {}
            }
        }
        builtins.sort();
        let mut groups = Vec::new();
        let mut mixed = Vec::new();
        for (key, (label, group_scope, members)) in by_group {
            match group_scope.single() {
                Some(s) if s == scope => {
                    let mut names: Vec<String> = members.iter().map(|m| m.name.clone()).collect();
                    names.sort();
                    groups.push(GroupItem {
                        pin_error: parse_group_entry(key.as_str()).err(),
                        key,
                        label,
                        members: names,
                        expanded: false,
                    });
                }
                Some(_) => {}
                None => mixed.extend(members.into_iter().filter(|m| m.scope == scope).map(|m| {
                    LooseItem {
                        name: m.name.clone(),
                        mixed_group: Some(label.clone()),
                    }
                })),
            }
        }
        groups.sort_by(|a, b| {
            let order = |g: &GroupItem| (g.key.kind() != GroupKind::Mcp, g.label.to_lowercase());
            order(a).cmp(&order(b)).then_with(|| a.key.cmp(&b.key))
        });
        let mut loose: Vec<LooseItem> = ungrouped.into_iter().chain(mixed).collect();
        loose.sort_by(|a, b| a.name.cmp(&b.name));

        let lists = Lists {
            tools: dedup(saved.tools.iter().map(|t| t.as_str().to_owned())),
            groups: dedup(saved.groups.iter().cloned()),
        };
        let loaded_tools: HashSet<&str> = groups
            .iter()
            .flat_map(|g| g.members.iter())
            .chain(loose.iter().map(|l| &l.name))
            .map(String::as_str)
            .collect();
        let loaded_groups: HashSet<&GroupKey> = groups.iter().map(|g| &g.key).collect();
        let stale_tools = lists
            .tools
            .iter()
            .filter(|t| !loaded_tools.contains(t.as_str()))
            .cloned()
            .collect();
        let stale_groups = lists
            .groups
            .iter()
            .filter(|g| !loaded_groups.contains(g))
            .cloned()
            .collect();
        AllowlistEditor {
            kind,
            scope,
            builtin_names: builtins.iter().cloned().collect(),
            builtins,
            builtins_expanded: false,
            groups,
            loose,
            stale_groups,
            stale_tools,
            saved: lists.clone(),
            lists,
            query: String::new(),
            cursor: 0,
            status: None,
            ranking: false,
        }
    }

    /// Shows or hides the inline `ranking…` state while an idle-time relevance ranking runs.
    pub fn set_ranking(&mut self, ranking: bool) {
        self.ranking = ranking;
    }

    /// Whether the inline `ranking…` state shows.
    pub fn is_ranking(&self) -> bool {
        self.ranking
    }

    /// A message under the rows until the next key (a save that failed, say).
    pub fn set_status(&mut self, message: String) {
        self.status = Some(message);
    }

    /// What a relevance ranking scores for this editor: the loaded tools it lists (members of
    /// its groups and tools with no group; the nested editor), or its loaded groups (the flat
    /// one). Built-in tools and `(not loaded)` entries are never ranked.
    pub fn rank_targets(&self) -> (Vec<String>, Vec<GroupKey>) {
        match self.kind {
            EditorKind::Tools => (
                self.groups
                    .iter()
                    .flat_map(|g| g.members.iter().cloned())
                    .chain(self.loose.iter().map(|l| l.name.clone()))
                    .collect(),
                Vec::new(),
            ),
            EditorKind::Groups => (
                Vec::new(),
                self.groups.iter().map(|g| g.key.clone()).collect(),
            ),
        }
    }

    /// Orders the rows by relevance and ends the `ranking…` state. Each section keeps its place
    /// (built-in tools, MCP servers, extensions, tools with no group, `(not loaded)` entries);
    /// within a section, and within a group, higher scores come first and ties keep the
    /// alphabetical order. A group without a score of its own ranks by its best tool. The cursor
    /// stays on the row it was on; selections are not touched.
    pub fn set_relevance(&mut self, tools: &HashMap<String, f64>, groups: &HashMap<GroupKey, f64>) {
        self.ranking = false;
        let target = self.cursor_target();
        let score = |s: Option<&f64>| s.copied().filter(|s| s.is_finite()).unwrap_or(-1.0);
        let by_score = |a: f64, b: f64| b.partial_cmp(&a).unwrap_or(std::cmp::Ordering::Equal);
        for group in &mut self.groups {
            group
                .members
                .sort_by(|a, b| by_score(score(tools.get(a)), score(tools.get(b))));
        }
        let group_score = |g: &GroupItem| {
            groups
                .get(&g.key)
                .copied()
                .filter(|s| s.is_finite())
                .unwrap_or_else(|| {
                    g.members
                        .iter()
                        .map(|m| score(tools.get(m)))
                        .fold(-1.0, f64::max)
                })
        };
        self.groups.sort_by(|a, b| {
            (a.key.kind() != GroupKind::Mcp)
                .cmp(&(b.key.kind() != GroupKind::Mcp))
                .then_with(|| by_score(group_score(a), group_score(b)))
        });
        self.loose
            .sort_by(|a, b| by_score(score(tools.get(&a.name)), score(tools.get(&b.name))));
        if let Some(target) = target {
            let rows = self.rows();
            if let Some(i) = (0..rows.len()).find(|&i| self.target_of(rows[i]) == target) {
                self.cursor = i;
            }
        }
    }

    /// Whether the lists differ from the saved ones.
    pub fn is_modified(&self) -> bool {
        self.lists != self.saved
    }

    /// What the cursor is on, or `None` when nothing is shown.
    pub fn cursor_target(&self) -> Option<CursorTarget> {
        let row = *self.rows().get(self.cursor)?;
        Some(self.target_of(row))
    }

    fn target_of(&self, row: Row) -> CursorTarget {
        match row {
            Row::BuiltinHeader => CursorTarget::BuiltinHeader,
            Row::Builtin(i) => CursorTarget::Builtin(self.builtins[i].clone()),
            Row::GroupHeader(g) => CursorTarget::Group(self.groups[g].key.clone()),
            Row::StaleGroup(i) => CursorTarget::Group(self.stale_groups[i].clone()),
            Row::Member(g, m) => CursorTarget::Tool(self.groups[g].members[m].clone()),
            Row::Loose(i) => CursorTarget::Tool(self.loose[i].name.clone()),
            Row::StaleTool(i) => CursorTarget::Tool(self.stale_tools[i].clone()),
        }
    }

    /// Handles one key.
    pub fn handle_key(&mut self, key: Key) -> EditorOutcome {
        if key != Key::Save {
            self.status = None;
        }
        let rows = self.rows();
        let current = rows.get(self.cursor).copied();
        match key {
            Key::Up => self.cursor = self.cursor.saturating_sub(1),
            Key::Down => {
                if self.cursor + 1 < rows.len() {
                    self.cursor += 1;
                }
            }
            Key::Enter => match current {
                Some(Row::BuiltinHeader) => self.builtins_expanded = !self.builtins_expanded,
                Some(Row::GroupHeader(g)) if self.kind == EditorKind::Tools => {
                    self.groups[g].expanded = !self.groups[g].expanded;
                }
                _ => {}
            },
            Key::Space => match current {
                // Selecting pins the group key; clearing (from `[x]`, also right after a pin
                // from `[-]`) removes the pin and every individual pick, as the spec says.
                Some(Row::GroupHeader(g)) => self.toggle_group(g),
                Some(Row::Member(g, m)) => self.toggle_member(g, m),
                Some(Row::Loose(i)) => {
                    let name = self.loose[i].name.clone();
                    toggle(&mut self.lists.tools, name);
                }
                Some(Row::StaleTool(i)) => {
                    let name = self.stale_tools[i].clone();
                    toggle(&mut self.lists.tools, name);
                }
                Some(Row::StaleGroup(i)) => {
                    let key = self.stale_groups[i].clone();
                    toggle(&mut self.lists.groups, key);
                }
                Some(Row::BuiltinHeader | Row::Builtin(_)) => {
                    self.status =
                        Some("Built-in tools are always available and never saved.".to_owned());
                }
                None => {}
            },
            Key::Char(c) if !c.is_control() && !c.is_whitespace() => {
                self.query.push(c);
                self.cursor = 0;
            }
            Key::Char(_) => {}
            Key::Backspace => {
                self.query.pop();
                self.cursor = 0;
            }
            Key::Escape => {
                if self.query.is_empty() {
                    return EditorOutcome::Cancel;
                }
                self.query.clear();
                self.cursor = 0;
            }
            Key::Left | Key::Right | Key::Tab | Key::BackTab => {}
            Key::Save => {
                return match self.save() {
                    Ok(lists) => EditorOutcome::Save(lists),
                    Err(message) => {
                        self.status = Some(message);
                        EditorOutcome::Continue
                    }
                }
            }
        }
        let len = self.rows().len();
        self.cursor = self.cursor.min(len.saturating_sub(1));
        EditorOutcome::Continue
    }

    /// The lists to write, or the sentence saying why they cannot be: every entry is checked
    /// against the allowlist rules, and nothing is written unless all pass.
    pub fn save(&self) -> Result<ScopedAllowlist, String> {
        let mut problems = Vec::new();
        let mut tools = Vec::with_capacity(self.lists.tools.len());
        for name in &self.lists.tools {
            match parse_tool_entry(name) {
                Ok(t) => tools.push(t),
                Err(e) => problems.push(format!(
                    "{}: {}",
                    code(&bound_label(name)),
                    allowlist_error(RemedyList::Tools, &e)
                )),
            }
        }
        for key in &self.lists.groups {
            if let Some(g) = self.groups.iter().find(|g| &g.key == key) {
                if let Some(e) = &g.pin_error {
                    problems.push(format!(
                        "{}: {}",
                        code(&bound_label(&g.label)),
                        allowlist_error(RemedyList::Groups, e)
                    ));
                }
            }
        }
        if !problems.is_empty() {
            return Err(format!("Not saved. {}", problems.join(" ")));
        }
        Ok(ScopedAllowlist {
            tools,
            groups: self.lists.groups.clone(),
        })
    }

    fn pinned(&self, g: usize) -> bool {
        self.lists.groups.contains(&self.groups[g].key)
    }

    fn picked(&self, name: &str) -> bool {
        self.lists.tools.iter().any(|t| t == name)
    }

    fn group_check(&self, g: usize) -> Check {
        if self.pinned(g) {
            return Check::Full;
        }
        let members = &self.groups[g].members;
        let picked = members.iter().filter(|m| self.picked(m)).count();
        match picked {
            0 => Check::Empty,
            n if n == members.len() => Check::Full,
            _ => Check::Partial,
        }
    }

    fn toggle_group(&mut self, g: usize) {
        let group = &self.groups[g];
        let members: HashSet<&String> = group.members.iter().collect();
        let clear = self.group_check(g) == Check::Full;
        self.lists.tools.retain(|t| !members.contains(t));
        self.lists.groups.retain(|k| k != &group.key);
        if clear {
            return;
        }
        self.lists.groups.push(group.key.clone());
        if let Some(e) = &group.pin_error {
            self.status = Some(format!(
                "{}: {}",
                code(&bound_label(&group.label)),
                allowlist_error(RemedyList::Groups, e)
            ));
        }
    }

    fn toggle_member(&mut self, g: usize, m: usize) {
        let name = self.groups[g].members[m].clone();
        if self.pinned(g) {
            let key = self.groups[g].key.clone();
            self.lists.groups.retain(|k| k != &key);
            for other in &self.groups[g].members {
                if other != &name && !self.lists.tools.contains(other) {
                    self.lists.tools.push(other.clone());
                }
            }
            self.lists.tools.retain(|t| t != &name);
        } else {
            toggle(&mut self.lists.tools, name);
        }
    }

    fn matches(&self, text: &str) -> bool {
        text.to_lowercase().contains(&self.query.to_lowercase())
    }

    fn rows(&self) -> Vec<Row> {
        let searching = !self.query.is_empty();
        let mut rows = Vec::new();
        if self.kind == EditorKind::Tools && !self.builtins.is_empty() {
            let shown: Vec<usize> = (0..self.builtins.len())
                .filter(|&i| !searching || self.matches(&self.builtins[i]))
                .collect();
            let header_match = searching && self.matches("built-in tools");
            if !searching || header_match || !shown.is_empty() {
                rows.push(Row::BuiltinHeader);
                if searching && !header_match {
                    rows.extend(shown.into_iter().map(Row::Builtin));
                } else if self.builtins_expanded || header_match {
                    rows.extend((0..self.builtins.len()).map(Row::Builtin));
                }
            }
        }
        for (g, group) in self.groups.iter().enumerate() {
            let header_match =
                searching && (self.matches(&group.label) || self.matches(group.key.as_str()));
            let flat = self.kind == EditorKind::Groups;
            let shown: Vec<usize> = (0..group.members.len())
                .filter(|&m| searching && !flat && self.matches(&group.members[m]))
                .collect();
            if searching && !header_match && shown.is_empty() {
                continue;
            }
            rows.push(Row::GroupHeader(g));
            if flat {
                continue;
            }
            if searching && !header_match {
                rows.extend(shown.into_iter().map(|m| Row::Member(g, m)));
            } else if group.expanded || header_match {
                rows.extend((0..group.members.len()).map(|m| Row::Member(g, m)));
            }
        }
        for (i, key) in self.stale_groups.iter().enumerate() {
            if !searching || self.matches(key.as_str()) {
                rows.push(Row::StaleGroup(i));
            }
        }
        if self.kind == EditorKind::Tools {
            for (i, item) in self.loose.iter().enumerate() {
                if !searching || self.matches(&item.name) {
                    rows.push(Row::Loose(i));
                }
            }
            for (i, name) in self.stale_tools.iter().enumerate() {
                if !searching || self.matches(name) {
                    rows.push(Row::StaleTool(i));
                }
            }
        }
        rows
    }

    fn row_text(&self, row: Row) -> String {
        let arrow = |expanded: bool| if expanded { "▾ " } else { "▸ " };
        let searching = !self.query.is_empty();
        match row {
            Row::BuiltinHeader => format!(
                "{}[x] Built-in tools ({}) · always available, not saved",
                arrow(self.builtins_expanded || searching),
                self.builtins.len()
            ),
            Row::Builtin(i) => format!("    [x] {}", safe(&self.builtins[i])),
            Row::GroupHeader(g) => {
                let group = &self.groups[g];
                let prefix = match self.kind {
                    EditorKind::Tools => arrow(group.expanded || searching),
                    EditorKind::Groups => "",
                };
                let tools = if group.members.len() == 1 {
                    "1 tool".to_owned()
                } else {
                    format!("{} tools", group.members.len())
                };
                let warning = if group.pin_error.is_some() {
                    "  (cannot be pinned)"
                } else {
                    ""
                };
                // The key is shown bounded like a label: a long server name makes a long key,
                // and the full one is in `/decisions mcp list`.
                format!(
                    "{prefix}{} {}{warning}  {} · {tools}",
                    self.group_check(g).mark(),
                    bound_label(&group.label),
                    bound_label(group.key.as_str())
                )
            }
            Row::Member(g, m) => {
                let name = &self.groups[g].members[m];
                let on = self.pinned(g) || self.picked(name);
                format!("    {} {}", Check::of(on).mark(), safe(name))
            }
            Row::Loose(i) => {
                let item = &self.loose[i];
                let note = match &item.mixed_group {
                    Some(label) => format!("  ({}, mixed scopes)", bound_label(label)),
                    None => String::new(),
                };
                format!(
                    "  {} {}{note}",
                    Check::of(self.picked(&item.name)).mark(),
                    safe(&item.name)
                )
            }
            Row::StaleGroup(i) => {
                let key = &self.stale_groups[i];
                let on = self.lists.groups.contains(key);
                let indent = if self.kind == EditorKind::Tools {
                    "  "
                } else {
                    ""
                };
                format!(
                    "{indent}{} {}  (not loaded)",
                    Check::of(on).mark(),
                    bound_label(key.as_str())
                )
            }
            Row::StaleTool(i) => {
                let name = &self.stale_tools[i];
                let note = if self.builtin_names.contains(name) {
                    "(built-in, always available)"
                } else {
                    "(not loaded)"
                };
                format!(
                    "  {} {}  {note}",
                    Check::of(self.picked(name)).mark(),
                    safe(name)
                )
            }
        }
    }

    /// The editor's key hints as actions a host spells with its own key bindings (typing
    /// searches: that hint has no key).
    pub fn hints(&self) -> Vec<Hint> {
        let mut hints = vec![Hint::new(&[HintAction::Space], "select")];
        if self.kind == EditorKind::Tools {
            hints.push(Hint::new(&[HintAction::Confirm], "expand"));
        }
        hints.extend([
            Hint::new(&[], "type to search"),
            Hint::new(&[HintAction::Save], "save"),
            Hint::new(&[HintAction::Cancel], "cancel"),
        ]);
        hints
    }

    /// The editor as at most `height` lines of at most `width` characters each (see the width
    /// rule in the module documentation): a title, the search, the rows around the cursor, any
    /// message, and the key hints (spelled with the keys ui-text knows: Space, Enter, Ctrl+S,
    /// Esc).
    pub fn render(&self, width: usize, height: usize) -> Vec<String> {
        let hints: Vec<String> = self
            .hints()
            .iter()
            .map(|h| {
                let keys: Vec<&str> = h.actions.iter().map(|a| a.key_name()).collect();
                if keys.is_empty() {
                    h.words.to_owned()
                } else {
                    format!("{} {}", keys.join("/"), h.words)
                }
            })
            .collect();
        self.lines(width, height, crate::view::hint_lines(&hints, width))
    }

    /// The editor without its key hints, for a host that spells [`AllowlistEditor::hints`]
    /// with its own key bindings below these lines; `height` is what the lines may take.
    pub fn render_body(&self, width: usize, height: usize) -> Vec<String> {
        self.lines(width, height, Vec::new())
    }

    fn lines(&self, width: usize, height: usize, hint_lines: Vec<String>) -> Vec<String> {
        let list = match self.kind {
            EditorKind::Tools => "Always allowed tools",
            EditorKind::Groups => "MCP servers & extensions",
        };
        let scope = match self.scope {
            Scope::Global => "Global",
            Scope::Project => "Project",
        };
        let mut title = format!("{list} · {scope}");
        if self.is_modified() {
            title.push_str(" · modified");
        }
        let mut search = if self.query.is_empty() {
            "Type to search".to_owned()
        } else {
            format!("Search: {}", safe(&self.query))
        };
        if self.ranking {
            // The idle-time ranking cannot use Pi's working row, so it shows here.
            search = format!("{RANKING} {search}");
        }
        let top = [title, search];
        let mut bottom: Vec<String> = match &self.status {
            Some(message) => wrap(message, width),
            None => Vec::new(),
        };
        // Broken between hints at a narrow width, never cut inside one.
        bottom.extend(hint_lines);
        let rows = self.rows();
        let window = height.saturating_sub(top.len() + bottom.len()).max(1);
        let mut middle: Vec<String> = if rows.is_empty() {
            vec![if self.query.is_empty() {
                "  Nothing to allow in this scope.".to_owned()
            } else {
                "  Nothing matches.".to_owned()
            }]
        } else {
            let start = (self.cursor + 1).saturating_sub(window);
            rows.iter()
                .enumerate()
                .skip(start)
                .take(window)
                .map(|(i, &row)| {
                    let mark = if i == self.cursor { "> " } else { "  " };
                    format!("{mark}{}", self.row_text(row))
                })
                .collect()
        };
        middle.truncate(window);
        // When the height cannot hold everything, the rows (and the cursor) matter most, then
        // the title, then the message, then the hints.
        let mut lines: Vec<String> = top.into_iter().chain(middle).chain(bottom).collect();
        if lines.len() > height {
            let cursor_line = lines.iter().position(|l| l.starts_with("> ")).unwrap_or(2);
            let start = cursor_line.saturating_sub(height.saturating_sub(1));
            lines = lines.into_iter().skip(start).take(height).collect();
        }
        lines.into_iter().map(|l| fit(&l, width)).collect()
    }
}

fn safe(name: &str) -> String {
    crate::display::display_safe(name)
}

fn dedup<T: Clone + Eq + std::hash::Hash>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut seen = HashSet::new();
    items.filter(|item| seen.insert(item.clone())).collect()
}

fn toggle<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if list.contains(&item) {
        list.retain(|x| x != &item);
    } else {
        list.push(item);
    }
}

#[cfg(test)]
mod tests;
