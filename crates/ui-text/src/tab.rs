//! The `/decisions` dialog as a pure state machine, with two tabs (Tab and Shift+Tab switch
//! between them):
//!
//! - **Tools**: the switch, the mode, the cadence and the four allowlists (Global and Project,
//!   each *Always allowed tools* and *MCP servers & extensions*);
//! - **Advanced**: the `decision.*` settings shared with skill filtering. Enter or Space cycles
//!   the provider and the fail mode, Left/Right (or `-`/`+`) step a number within the bounds the
//!   settings reader accepts, and the model, base URL and key variable are only shown (they are
//!   edited in the settings file).
//!
//! Keys in, lines out, and outcomes the host carries out: a setting to write, an editor that
//! opened (to rank), lists to save, or close.
//!
//! The host writes what an outcome asks, then reports back with [`ToolsTab::saved`] (what the
//! files say now) or [`ToolsTab::save_failed`] (the sentence to show). Until then the tab shows
//! the values it had: nothing is shown as saved that was not written.
//!
//! The rows and their help come from [`tools_tab`]; the editors are [`AllowlistEditor`]s.
//! Rendering follows the editor's width rule: at most `width` characters per line.

use crate::editor::{AllowlistEditor, EditorKind, EditorOutcome, Key};
use crate::lists::ToolRow;
use crate::settings_tab::{
    advanced_tab, advanced_tab_notes, tools_tab, tools_tab_notes, SettingId,
};
use crate::view::{
    hint_lines, Hint, HintAction, PromptKind, PromptView, TabView, ViewRow, MODEL_HELP,
    MODEL_TITLE, NO_MODELS, THRESHOLD_HELP, THRESHOLD_TITLE,
};
use crate::words::{fit, wrap};
use pcd_model::{
    Bounds, Cadence, DecisionProvider, DecisionSettings, FailMode, Mode, Scope, ScopedAllowlist,
    ToolsSettings, BATCH_SIZE_BOUNDS, CONCURRENCY_BOUNDS, MAX_NEW_GROUPS_BOUNDS,
    MAX_NEW_TOOLS_BOUNDS, MINIMUM_CANDIDATES_BOUNDS, TIMEOUT_MS_BOUNDS,
};

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

/// A `decision.*` setting to write to the global settings file, from the Advanced tab. Every
/// value is one the settings reader accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DecisionChange {
    /// `decision.provider` (`None` is written as `null`).
    Provider(DecisionProvider),
    /// `decision.threshold`, in [0, 1] with at most three decimals.
    Threshold(f64),
    /// `decision.maxNewTools`.
    MaxNewTools(u32),
    /// `decision.maxNewGroups`.
    MaxNewGroups(u32),
    /// `decision.minimumCandidates`.
    MinimumCandidates(u32),
    /// `decision.batchSize`.
    BatchSize(u32),
    /// `decision.concurrency`.
    Concurrency(u32),
    /// `decision.timeoutMs`.
    TimeoutMs(u64),
    /// `decision.failMode`.
    FailMode(FailMode),
}

impl DecisionChange {
    /// The dotted settings field it writes (`decision.provider`, `decision.threshold`, …).
    pub fn field(self) -> &'static str {
        match self {
            DecisionChange::Provider(_) => "decision.provider",
            DecisionChange::Threshold(_) => "decision.threshold",
            DecisionChange::MaxNewTools(_) => "decision.maxNewTools",
            DecisionChange::MaxNewGroups(_) => "decision.maxNewGroups",
            DecisionChange::MinimumCandidates(_) => "decision.minimumCandidates",
            DecisionChange::BatchSize(_) => "decision.batchSize",
            DecisionChange::Concurrency(_) => "decision.concurrency",
            DecisionChange::TimeoutMs(_) => "decision.timeoutMs",
            DecisionChange::FailMode(_) => "decision.failMode",
        }
    }
}

/// Which tab of the dialog is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Page {
    /// The Tools tab (the dialog opens on it).
    #[default]
    Tools,
    /// The Advanced tab.
    Advanced,
}

/// What the host does after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum TabOutcome {
    /// Draw the tab again.
    Continue,
    /// Write this setting, then call [`ToolsTab::saved`] or [`ToolsTab::save_failed`].
    Set(ToolsChange),
    /// Write this `decision.*` setting, then call [`ToolsTab::saved`] or
    /// [`ToolsTab::save_failed`].
    SetDecision(DecisionChange),
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
    /// Write `decision.model` (a model chosen from Pi's registry, `provider/model`), then call
    /// [`ToolsTab::saved`] or [`ToolsTab::save_failed`].
    SetModel(String),
    /// Close the tab.
    Close,
}

/// The `/decisions` dialog: the Tools tab and the Advanced tab. See the module documentation.
#[derive(Debug, Clone)]
pub struct ToolsTab {
    tools: ToolsSettings,
    decision: DecisionSettings,
    project: ScopedAllowlist,
    rows: Vec<ToolRow>,
    page: Page,
    cursor: usize,
    advanced_cursor: usize,
    editor: Option<(AllowlistEditor, Scope, ScopedAllowlist)>,
    serial: u64,
    status: Option<String>,
    /// The latest decision round's outcome, shown on the Tools page.
    last_round: Option<crate::commands::LastRound>,
    /// Which scorer decided the latest embedded round (`None`: no such round), and why it was
    /// lexical when it was.
    scorer: Option<(bool, String)>,
    /// An open prompt (the threshold's input, the model picker) and why the last value was
    /// refused.
    prompt: Option<(PromptKind, Option<String>)>,
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

const ADVANCED: [SettingId; 12] = [
    SettingId::Provider,
    SettingId::Model,
    SettingId::BaseUrl,
    SettingId::ApiKeyEnv,
    SettingId::Threshold,
    SettingId::MaxNewTools,
    SettingId::MaxNewGroups,
    SettingId::MinimumCandidates,
    SettingId::BatchSize,
    SettingId::Concurrency,
    SettingId::TimeoutMs,
    SettingId::FailMode,
];

/// `value` one step up or down, on multiples of `step`, within `bounds`.
fn step_whole(value: u64, step: u64, bounds: Bounds, up: bool) -> u64 {
    let next = if up {
        (value / step + 1) * step
    } else if value % step == 0 {
        value.saturating_sub(step)
    } else {
        value / step * step
    };
    next.clamp(bounds.min, bounds.max)
}

/// The threshold one 0.05 step up or down, on multiples of 0.05 in [0, 1].
fn step_threshold(value: f64, up: bool) -> f64 {
    let twentieths = value * 20.0;
    let next = if up {
        (twentieths + 1e-9).floor() + 1.0
    } else {
        (twentieths - 1e-9).ceil() - 1.0
    };
    // Hundredths, so 0.65 is written as 0.65 rather than 0.6500000000000001.
    let next = (next.clamp(0.0, 20.0) * 5.0).round() / 100.0;
    // The default (0.625, off the 0.05 grid) is a stop too, so a person can always step back to
    // it.
    let default = pcd_model::DecisionSettings::default().threshold;
    let passes = if up {
        value < default - 1e-9 && next > default + 1e-9
    } else {
        value > default + 1e-9 && next < default - 1e-9
    };
    if passes {
        default
    } else {
        next
    }
}

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
            page: Page::Tools,
            cursor: 0,
            advanced_cursor: 0,
            editor: None,
            serial: 0,
            status: None,
            last_round: None,
            scorer: None,
            prompt: None,
        }
    }

    /// The tab showing which scorer decided the latest embedded round (`fused`: with the
    /// semantic signal, the text the folder its model came from; otherwise lexical, the text
    /// why), under the last round's outcome.
    pub fn with_scorer(mut self, scorer: Option<(bool, String)>) -> ToolsTab {
        self.scorer = scorer;
        self
    }

    /// The tab showing the latest decision round's outcome (as `/decisions` without a terminal
    /// shows it) on its Tools page.
    pub fn with_last_round(mut self, last: Option<crate::commands::LastRound>) -> ToolsTab {
        self.last_round = last;
        self
    }

    /// The inventory's rows the editors list, replaced (an editor opened later shows them; an
    /// open one keeps what it opened with).
    pub fn set_rows(&mut self, rows: Vec<ToolRow>) {
        self.rows = rows;
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

    /// The row the cursor is on, in the tab shown.
    pub fn cursor(&self) -> SettingId {
        match self.page {
            Page::Tools => ITEMS[self.cursor],
            Page::Advanced => ADVANCED[self.advanced_cursor],
        }
    }

    /// The tab shown.
    pub fn page(&self) -> Page {
        self.page
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
        self.prompt = None;
    }

    /// A write failed: `message` shows (in the open editor, which stays open with its changes,
    /// or under the tab's rows).
    pub fn save_failed(&mut self, message: String) {
        match (&mut self.editor, &mut self.prompt) {
            (Some((editor, _, _)), _) => editor.set_status(message),
            (None, Some((_, error))) => *error = Some(message),
            (None, None) => self.status = Some(message),
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
        if self.prompt.is_some() {
            // The host's input or list has the keys; Escape reaches here only from a host
            // that forwards it.
            if key == Key::Escape {
                self.prompt = None;
            }
            return TabOutcome::Continue;
        }
        self.status = None;
        match key {
            Key::Tab | Key::BackTab => {
                // Two tabs: forward and back both go to the other one.
                self.page = match self.page {
                    Page::Tools => Page::Advanced,
                    Page::Advanced => Page::Tools,
                };
                return TabOutcome::Continue;
            }
            Key::Escape => return TabOutcome::Close,
            _ => {}
        }
        if self.page == Page::Advanced {
            return self.advanced_key(key);
        }
        match key {
            Key::Up => self.cursor = self.cursor.saturating_sub(1),
            Key::Down => self.cursor = (self.cursor + 1).min(ITEMS.len() - 1),
            Key::Enter | Key::Space => return self.activate(),
            _ => {}
        }
        TabOutcome::Continue
    }

    /// One key on the Advanced tab.
    fn advanced_key(&mut self, key: Key) -> TabOutcome {
        let id = ADVANCED[self.advanced_cursor];
        match key {
            Key::Up => self.advanced_cursor = self.advanced_cursor.saturating_sub(1),
            Key::Down => self.advanced_cursor = (self.advanced_cursor + 1).min(ADVANCED.len() - 1),
            Key::Enter | Key::Space => {
                let d = &self.decision;
                match id {
                    SettingId::Provider => {
                        return TabOutcome::SetDecision(DecisionChange::Provider(
                            match d.provider {
                                DecisionProvider::None => DecisionProvider::Embedded,
                                DecisionProvider::Embedded => DecisionProvider::Pi,
                                DecisionProvider::Pi => DecisionProvider::Http,
                                DecisionProvider::Http => DecisionProvider::None,
                            },
                        ))
                    }
                    SettingId::Threshold => self.prompt = Some((PromptKind::Number, None)),
                    SettingId::Model if d.provider == DecisionProvider::Pi => {
                        self.prompt = Some((PromptKind::Model, None))
                    }
                    SettingId::FailMode => {
                        return TabOutcome::SetDecision(DecisionChange::FailMode(
                            match d.fail_mode {
                                FailMode::Closed => FailMode::Open,
                                FailMode::Open => FailMode::Closed,
                            },
                        ))
                    }
                    id if id.is_file_only() => {
                        self.status = Some(
                            "This one is edited in the global settings file, \
                             pi-context-decisions/settings.json in Pi's agent directory; the \
                             tab shows what it says after the next change or when reopened."
                                .to_owned(),
                        )
                    }
                    _ => {
                        self.status =
                            Some("Use Left and Right (or - and +) to change a number.".to_owned())
                    }
                }
            }
            Key::Left | Key::Char('-') => return self.step(id, false),
            Key::Right | Key::Char('+') | Key::Char('=') => return self.step(id, true),
            _ => {}
        }
        TabOutcome::Continue
    }

    /// A number one step up or down; nothing when it is already at its bound.
    fn step(&self, id: SettingId, up: bool) -> TabOutcome {
        let d = &self.decision;
        let whole = |value: u32, step: u64, bounds: Bounds| {
            let next = step_whole(value.into(), step, bounds, up);
            (next != u64::from(value)).then_some(next as u32)
        };
        let change = match id {
            SettingId::Threshold => {
                let next = step_threshold(d.threshold, up);
                (next != d.threshold).then_some(DecisionChange::Threshold(next))
            }
            SettingId::MaxNewTools => {
                whole(d.max_new_tools, 1, MAX_NEW_TOOLS_BOUNDS).map(DecisionChange::MaxNewTools)
            }
            SettingId::MaxNewGroups => {
                whole(d.max_new_groups, 1, MAX_NEW_GROUPS_BOUNDS).map(DecisionChange::MaxNewGroups)
            }
            SettingId::MinimumCandidates => {
                // Unset, a step starts from the current mode's default.
                whole(
                    d.minimum_candidates_for(self.tools.mode),
                    1,
                    MINIMUM_CANDIDATES_BOUNDS,
                )
                .map(DecisionChange::MinimumCandidates)
            }
            SettingId::BatchSize => {
                whole(d.batch_size, 10, BATCH_SIZE_BOUNDS).map(DecisionChange::BatchSize)
            }
            SettingId::Concurrency => {
                whole(d.concurrency, 1, CONCURRENCY_BOUNDS).map(DecisionChange::Concurrency)
            }
            SettingId::TimeoutMs => {
                let next = step_whole(d.timeout_ms, 1000, TIMEOUT_MS_BOUNDS, up);
                (next != d.timeout_ms).then_some(DecisionChange::TimeoutMs(next))
            }
            _ => None,
        };
        change.map_or(TabOutcome::Continue, TabOutcome::SetDecision)
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

    /// The open prompt, if any.
    pub fn prompt(&self) -> Option<PromptKind> {
        self.prompt.as_ref().map(|(kind, _)| *kind)
    }

    /// What the open prompt's host submitted: the text typed (the threshold) or the model
    /// chosen (`provider/model`). A value that is not one is refused in one line under the
    /// prompt, which stays open; an accepted one is to be written.
    pub fn submit(&mut self, text: &str) -> TabOutcome {
        let Some((kind, error)) = &mut self.prompt else {
            return TabOutcome::Continue;
        };
        match kind {
            PromptKind::Number => match crate::view::parse_threshold(text) {
                Ok(value) => TabOutcome::SetDecision(DecisionChange::Threshold(value)),
                Err(message) => {
                    *error = Some(message);
                    TabOutcome::Continue
                }
            },
            PromptKind::Model => TabOutcome::SetModel(text.to_owned()),
        }
    }

    /// Closes the open prompt without writing anything.
    pub fn dismiss(&mut self) {
        self.prompt = None;
    }

    /// The key hints of what is shown.
    fn hints(&self) -> Vec<Hint> {
        use HintAction::*;
        let moving = Hint::new(&[Up, Down], "move");
        if let Some((kind, _)) = &self.prompt {
            return match kind {
                PromptKind::Number => {
                    vec![Hint::new(&[Confirm], "save"), Hint::new(&[Cancel], "back")]
                }
                PromptKind::Model => vec![
                    moving,
                    Hint::new(&[Confirm], "choose (saved at once)"),
                    Hint::new(&[Cancel], "back"),
                ],
            };
        }
        let (other, id) = match self.page {
            Page::Tools => ("Advanced", ITEMS[self.cursor]),
            Page::Advanced => ("Tools", ADVANCED[self.advanced_cursor]),
        };
        let change = match id {
            SettingId::Threshold => vec![
                Hint::new(&[Confirm], "type a value"),
                Hint::new(&[Left, Right], "step"),
            ],
            SettingId::Model if self.decision.provider == DecisionProvider::Pi => {
                vec![Hint::new(&[Confirm], "choose")]
            }
            id if id.is_number() => vec![Hint::new(&[Left, Right], "change (saved at once)")],
            id if id.is_file_only() => vec![Hint::new(&[], "edited in the settings file")],
            SettingId::GlobalTools
            | SettingId::GlobalGroups
            | SettingId::ProjectTools
            | SettingId::ProjectGroups => vec![Hint::new(&[Confirm], "edit")],
            _ => vec![Hint::new(&[Confirm], "change (saved at once)")],
        };
        let mut hints = vec![moving];
        hints.extend(change);
        hints.push(Hint::new(&[Tab], other));
        hints.push(Hint::new(&[Cancel], "close"));
        hints
    }

    /// The dialog as data for a host that draws it (see [`TabView`]); an open editor is drawn
    /// here to `width` cells and `height` lines.
    pub fn view(&self, width: usize, height: usize) -> TabView {
        let (title, rows, cursor, mut notes) = match self.page {
            Page::Tools => (
                "Decisions · Tools",
                tools_tab(&self.tools, &self.project),
                self.cursor,
                tools_tab_notes(&self.tools, &self.decision),
            ),
            Page::Advanced => (
                "Decisions · Advanced",
                advanced_tab(&self.decision),
                self.advanced_cursor,
                advanced_tab_notes(&self.decision),
            ),
        };
        if let (Page::Tools, Some((fused, reason))) = (self.page, &self.scorer) {
            notes.insert(0, crate::semantic::last_scorer_text(*fused, reason));
        }
        if let (Page::Tools, Some(last)) = (self.page, self.last_round) {
            notes.insert(0, crate::commands::last_round_text(last));
        }
        let prompt = self.prompt.as_ref().map(|(kind, error)| {
            let (title, help, value) = match kind {
                PromptKind::Number => (
                    THRESHOLD_TITLE,
                    THRESHOLD_HELP,
                    format!("{}", self.decision.threshold),
                ),
                PromptKind::Model => (
                    MODEL_TITLE,
                    MODEL_HELP,
                    self.decision.model.clone().unwrap_or_default(),
                ),
            };
            PromptView {
                kind: *kind,
                title,
                help,
                value,
                error: error.clone(),
                empty: NO_MODELS,
                hints: self.hints(),
            }
        });
        TabView {
            title,
            help: rows.get(cursor).map(|r| r.help.clone()).unwrap_or_default(),
            rows: rows
                .into_iter()
                .map(|r| ViewRow {
                    label: r.label.to_owned(),
                    value: r.value,
                })
                .collect(),
            cursor,
            notes,
            status: self.status.clone(),
            hints: self.hints(),
            // Two lines are left for the hints the host spells below the editor's lines.
            editor: self
                .editor
                .as_ref()
                .map(|(e, _, _)| e.render_body(width, height.saturating_sub(2).max(1))),
            editor_hints: self
                .editor
                .as_ref()
                .map(|(e, _, _)| e.hints())
                .unwrap_or_default(),
            prompt,
        }
    }

    /// The tab (or its open editor) as at most `height` lines of at most `width` characters:
    /// the title, every row with its value, the help of the row under the cursor, the notes,
    /// any message, and the key hints.
    pub fn render(&self, width: usize, height: usize) -> Vec<String> {
        if let Some((editor, _, _)) = &self.editor {
            return editor.render(width, height);
        }
        let view = self.view(width, height);
        let mut notes = view.notes;
        if let Some(prompt) = &view.prompt {
            notes.push(format!("{}: {}", prompt.title, prompt.help));
            notes.extend(prompt.error.clone());
        }
        let hints: Vec<String> = view.hints.iter().map(hint_text).collect();
        let (title, rows, cursor) = (view.title, view.rows, view.cursor);
        let help = view.help;
        page_lines(
            title,
            &rows,
            cursor,
            &help,
            &notes,
            self.status.as_deref(),
            &hint_lines(&hints, width),
            width,
            height,
        )
    }
}

/// One tab as at most `height` lines of at most `width` characters: the title, every row with
/// its value (a window around the cursor when they do not all fit), the help of the row under
/// the cursor, the notes, any message, and the key hints.
#[allow(clippy::too_many_arguments)]
fn page_lines(
    title: &str,
    rows: &[ViewRow],
    cursor: usize,
    help: &str,
    notes: &[String],
    status: Option<&str>,
    hints: &[String],
    width: usize,
    height: usize,
) -> Vec<String> {
    let row_line = |(i, row): (usize, &ViewRow)| {
        let mark = if i == cursor { "> " } else { "  " };
        format!("{mark}{}: {}", row.label, row.value)
    };
    let keep = height.max(1);
    // Title and hints around the rows; when even the rows do not fit, a window of them that
    // holds the cursor.
    if rows.len() + 1 + hints.len() > keep {
        let room = keep.saturating_sub(1 + hints.len()).max(1);
        let start = cursor
            .saturating_sub(room - 1)
            .min(rows.len().saturating_sub(room));
        let mut lines = vec![title.to_owned()];
        lines.extend(rows.iter().enumerate().skip(start).take(room).map(row_line));
        let room_for_hints = keep.saturating_sub(lines.len());
        lines.extend(hints.iter().take(room_for_hints).cloned());
        lines.truncate(keep);
        return lines.into_iter().map(|l| fit(&l, width)).collect();
    }
    let mut lines = vec![title.to_owned()];
    lines.extend(rows.iter().enumerate().map(row_line));
    lines.push(String::new());
    if !help.is_empty() {
        lines.extend(wrap(help, width));
    }
    for note in notes {
        lines.extend(wrap(note, width));
    }
    if let Some(message) = status {
        lines.extend(wrap(message, width));
    }
    if lines.len() + hints.len() > keep {
        // The rows (with the cursor) first, then the hints.
        lines.truncate(
            keep.saturating_sub(hints.len())
                .max(1 + rows.len())
                .min(keep),
        );
    }
    let room_for_hints = keep.saturating_sub(lines.len());
    lines.extend(hints.iter().take(room_for_hints).cloned());
    lines.into_iter().map(|l| fit(&l, width)).collect()
}

/// A hint as ui-text's own lines spell it (the fixed default keys; a host with key bindings
/// spells its own).
fn hint_text(hint: &Hint) -> String {
    let keys: Vec<&str> = hint.actions.iter().map(|a| a.key_name()).collect();
    let arrows = hint.actions.iter().all(|a| {
        matches!(
            a,
            HintAction::Up | HintAction::Down | HintAction::Left | HintAction::Right
        )
    });
    let keys = if arrows {
        keys.concat()
    } else {
        keys.join("/")
    };
    if keys.is_empty() {
        return hint.words.to_owned();
    }
    format!("{keys} {}", hint.words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lists::Availability;
    use pcd_model::{parse_group_entry, parse_tool_entry, GroupKey, ToolKind};
    use pcd_model::{DecisionProvider, FailMode};

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
                calls: 0,
            },
            ToolRow {
                name: "mcp__kb__query".into(),
                kind: ToolKind::Mcp,
                group: Some(kb),
                label: Some("kb".into()),
                scope: Scope::Global,
                definition_chars: 10,
                availability: Availability::Withheld,
                calls: 0,
            },
            ToolRow {
                name: "local_tool".into(),
                kind: ToolKind::Extension,
                group: Some(GroupKey::for_extension("local")),
                label: Some("local".into()),
                scope: Scope::Project,
                definition_chars: 10,
                availability: Availability::Withheld,
                calls: 0,
            },
        ]
    }

    #[test]
    fn the_tools_page_shows_the_last_round_and_advanced_does_not() {
        use crate::commands::LastRound;
        let plain = tab().render(100, 40).join("\n");
        assert!(!plain.contains("Last decision"), "{plain}");
        let mut shown = tab().with_last_round(Some(LastRound::Problem(
            crate::rounds::RoundProblem::TimedOut,
        )));
        let text = shown.render(100, 40).join("\n");
        assert!(
            text.contains("Last decision: added nothing (reason: `timed-out`)."),
            "{text}"
        );
        shown.handle_key(Key::Tab);
        assert!(!shown.render(100, 40).join("\n").contains("Last decision"));
    }

    #[test]
    fn the_tools_page_says_which_scorer_decided() {
        assert!(!tab().render(100, 40).join("\n").contains("Scored by"));
        let fused = tab().with_scorer(Some((true, String::new())));
        let text = fused.render(100, 40).join("\n");
        assert!(
            text.contains("Scored by: the built-in scorer with the semantic model."),
            "{text}"
        );
        let from = crate::ModelFolder::Checkout.describe();
        let fused = tab().with_scorer(Some((true, from.to_owned())));
        let text = fused.render(160, 40).join("\n");
        assert!(
            text.contains(
                "Scored by: the built-in scorer with the semantic model, from the checkout's \
                 .cache/models/all-minilm-l6-v2."
            ),
            "{text}"
        );
        let lexical = tab().with_scorer(Some((false, "no model".into())));
        let text = lexical.render(100, 40).join("\n");
        assert!(text.contains("lexical only: no model."), "{text}");
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
    fn tab_switches_to_advanced_and_back() {
        let mut tab = tab();
        assert_eq!(tab.page(), Page::Tools);
        assert!(tab.render(100, 30).last().unwrap().contains("Tab Advanced"));
        tab.handle_key(Key::Down);
        assert_eq!(tab.handle_key(Key::Tab), TabOutcome::Continue);
        assert_eq!(tab.page(), Page::Advanced);
        assert_eq!(tab.cursor(), SettingId::Provider);
        let screen = tab.render(100, 30);
        assert_eq!(screen[0], "Decisions · Advanced");
        assert_eq!(screen[1], "> Decision model: None");
        // Back with Shift+Tab: the Tools cursor is where it was.
        tab.handle_key(Key::BackTab);
        assert_eq!(tab.page(), Page::Tools);
        assert_eq!(tab.cursor(), SettingId::Mode);
        // Tab inside an editor does nothing to the page.
        tab.handle_key(Key::Down);
        tab.handle_key(Key::Down);
        tab.handle_key(Key::Enter);
        tab.handle_key(Key::Tab);
        assert!(tab.editor().is_some());
        assert_eq!(tab.page(), Page::Tools);
        tab.handle_key(Key::Escape);
        tab.handle_key(Key::Tab);
        assert_eq!(tab.handle_key(Key::Escape), TabOutcome::Close);
    }

    #[test]
    fn advanced_choices_cycle_and_wait_for_the_write() {
        let mut tab = tab();
        tab.handle_key(Key::Tab);
        let mut decision = DecisionSettings::default();
        for expected in [
            DecisionProvider::Embedded,
            DecisionProvider::Pi,
            DecisionProvider::Http,
            DecisionProvider::None,
        ] {
            assert_eq!(
                tab.handle_key(Key::Enter),
                TabOutcome::SetDecision(DecisionChange::Provider(expected))
            );
            decision.provider = expected;
            tab.saved(
                &ToolsSettings::default(),
                &decision,
                &ScopedAllowlist::default(),
            );
        }
        decision.provider = DecisionProvider::Pi;
        tab.handle_key(Key::Space);
        assert!(
            tab.render(100, 30)[1].ends_with("None"),
            "not shown before it is saved"
        );
        tab.saved(
            &ToolsSettings::default(),
            &decision,
            &ScopedAllowlist::default(),
        );
        assert_eq!(tab.render(100, 30)[1], "> Decision model: A Pi model");
        for _ in 0..20 {
            tab.handle_key(Key::Down);
        }
        assert_eq!(tab.cursor(), SettingId::FailMode);
        assert_eq!(
            tab.handle_key(Key::Enter),
            TabOutcome::SetDecision(DecisionChange::FailMode(FailMode::Open))
        );
        assert_eq!(
            DecisionChange::FailMode(FailMode::Open).field(),
            "decision.failMode"
        );
    }

    #[test]
    fn advanced_numbers_step_within_the_reader_bounds() {
        let mut tab = tab();
        tab.handle_key(Key::Tab);
        let go = |tab: &mut ToolsTab, id: SettingId| {
            for _ in 0..ADVANCED.len() {
                tab.handle_key(Key::Up);
            }
            for _ in 0..ADVANCED.len() {
                if tab.cursor() == id {
                    return;
                }
                tab.handle_key(Key::Down);
            }
            panic!("{id:?} not found");
        };
        go(&mut tab, SettingId::Threshold);
        // 0.625 (the default) steps to the 0.05 grid, and the grid steps back to it.
        assert_eq!(
            tab.handle_key(Key::Right),
            TabOutcome::SetDecision(DecisionChange::Threshold(0.65))
        );
        assert_eq!(
            tab.handle_key(Key::Char('-')),
            TabOutcome::SetDecision(DecisionChange::Threshold(0.6))
        );
        assert_eq!(step_threshold(0.6, true), 0.625);
        assert_eq!(step_threshold(0.65, false), 0.625);
        assert_eq!(step_threshold(0.625, true), 0.65);
        assert_eq!(step_threshold(0.625, false), 0.6);
        assert_eq!(step_threshold(0.61, true), 0.625);
        assert_eq!(step_threshold(0.55, true), 0.6);
        assert_eq!(step_threshold(0.65, true), 0.7);
        assert_eq!(step_threshold(0.95, true), 1.0);
        assert_eq!(step_threshold(1.0, true), 1.0);
        assert_eq!(step_threshold(0.05, false), 0.0);
        assert_eq!(step_threshold(0.0, false), 0.0);
        go(&mut tab, SettingId::MaxNewTools);
        assert_eq!(
            tab.handle_key(Key::Char('+')),
            TabOutcome::SetDecision(DecisionChange::MaxNewTools(7))
        );
        go(&mut tab, SettingId::MaxNewGroups);
        assert_eq!(
            tab.handle_key(Key::Left),
            TabOutcome::SetDecision(DecisionChange::MaxNewGroups(2))
        );
        go(&mut tab, SettingId::MinimumCandidates);
        assert_eq!(
            tab.handle_key(Key::Left),
            TabOutcome::SetDecision(DecisionChange::MinimumCandidates(9))
        );
        go(&mut tab, SettingId::BatchSize);
        assert_eq!(
            tab.handle_key(Key::Right),
            TabOutcome::SetDecision(DecisionChange::BatchSize(60))
        );
        go(&mut tab, SettingId::Concurrency);
        assert_eq!(
            tab.handle_key(Key::Right),
            TabOutcome::SetDecision(DecisionChange::Concurrency(7))
        );
        go(&mut tab, SettingId::TimeoutMs);
        assert_eq!(
            tab.handle_key(Key::Left),
            TabOutcome::SetDecision(DecisionChange::TimeoutMs(29_000))
        );
        // At a bound nothing is written.
        let low = DecisionSettings {
            max_new_groups: 0,
            batch_size: 1,
            timeout_ms: 100,
            concurrency: 64,
            ..DecisionSettings::default()
        };
        tab.saved(&ToolsSettings::default(), &low, &ScopedAllowlist::default());
        assert_eq!(tab.handle_key(Key::Left), TabOutcome::Continue);
        assert_eq!(
            tab.handle_key(Key::Right),
            TabOutcome::SetDecision(DecisionChange::TimeoutMs(1000))
        );
        go(&mut tab, SettingId::Concurrency);
        assert_eq!(tab.handle_key(Key::Right), TabOutcome::Continue);
        assert_eq!(step_whole(1, 10, BATCH_SIZE_BOUNDS, false), 1);
        assert_eq!(step_whole(1, 10, BATCH_SIZE_BOUNDS, true), 10);
        assert_eq!(step_whole(1000, 10, BATCH_SIZE_BOUNDS, true), 1000);
        assert_eq!(
            step_whole(100_000, 1, MINIMUM_CANDIDATES_BOUNDS, true),
            100_000
        );
        assert_eq!(step_whole(0, 1, MAX_NEW_GROUPS_BOUNDS, false), 0);
        // Every stepped value is one the reader accepts.
        for (field, value) in [
            (
                "maxNewTools",
                step_whole(1000, 1, MAX_NEW_TOOLS_BOUNDS, true),
            ),
            (
                "timeoutMs",
                step_whole(600_000, 1000, TIMEOUT_MS_BOUNDS, true),
            ),
            ("timeoutMs", step_whole(100, 1000, TIMEOUT_MS_BOUNDS, false)),
        ] {
            let json = serde_json::json!({"decision": {field: value}});
            assert!(
                pcd_model::Settings::from_json(&json).1.is_empty(),
                "{field}"
            );
        }
    }

    #[test]
    fn advanced_text_rows_are_only_shown() {
        let mut tab = tab();
        tab.handle_key(Key::Tab);
        tab.handle_key(Key::Down);
        assert_eq!(tab.cursor(), SettingId::Model);
        assert!(tab
            .render(100, 30)
            .last()
            .unwrap()
            .contains("edited in the settings file"));
        assert_eq!(tab.handle_key(Key::Enter), TabOutcome::Continue);
        assert_eq!(tab.handle_key(Key::Right), TabOutcome::Continue);
        tab.handle_key(Key::Enter);
        let screen = tab.render(100, 30).join("\n");
        assert!(screen.contains("This one is edited in the"), "{screen}");
        assert!(screen.contains("> Model: (not set)"), "{screen}");
    }

    #[test]
    fn a_small_screen_keeps_the_cursor_row() {
        let mut tab = tab();
        tab.handle_key(Key::Tab);
        for _ in 0..11 {
            tab.handle_key(Key::Down);
        }
        let lines = tab.render(60, 8);
        assert_eq!(lines.len(), 8);
        assert_eq!(lines[0], "Decisions · Advanced");
        assert!(
            lines[5].starts_with("> When a decision fails"),
            "{lines:#?}"
        );
        // At 60 columns the hints wrap between hints instead of being cut.
        assert_eq!(
            lines[6],
            "↑↓ move · Enter change (saved at once) · Tab Tools"
        );
        assert_eq!(lines[7], "Esc close");
    }

    #[test]
    fn the_threshold_takes_any_value_typed_to_three_decimals() {
        let mut tab = tab();
        tab.handle_key(Key::Tab);
        while tab.cursor() != SettingId::Threshold {
            tab.handle_key(Key::Down);
        }
        assert_eq!(tab.handle_key(Key::Enter), TabOutcome::Continue);
        assert_eq!(tab.prompt(), Some(PromptKind::Number));
        let view = tab.view(80, 30);
        let prompt = view.prompt.unwrap();
        assert_eq!(prompt.value, "0.625");
        assert_eq!(
            prompt.hints.iter().map(|h| h.words).collect::<Vec<_>>(),
            ["save", "back"]
        );
        // A refused value stays in the prompt with one line saying why.
        assert_eq!(tab.submit("0.6251"), TabOutcome::Continue);
        let error = tab.view(80, 30).prompt.unwrap().error.unwrap();
        assert!(error.contains("at most three decimals"), "{error}");
        assert_eq!(
            tab.submit("0.613"),
            TabOutcome::SetDecision(DecisionChange::Threshold(0.613))
        );
        let saved = DecisionSettings {
            threshold: 0.613,
            ..DecisionSettings::default()
        };
        tab.saved(
            &ToolsSettings::default(),
            &saved,
            &ScopedAllowlist::default(),
        );
        assert_eq!(tab.prompt(), None, "a write closes the prompt");
        assert_eq!(tab.view(80, 30).rows[4].value, "0.613");
        // From an off-grid value the arrows step onto the grid and back to the default.
        assert_eq!(
            tab.handle_key(Key::Right),
            TabOutcome::SetDecision(DecisionChange::Threshold(0.625))
        );
        // Escape closes the prompt, not the dialog.
        tab.handle_key(Key::Enter);
        assert_eq!(tab.handle_key(Key::Escape), TabOutcome::Continue);
        assert_eq!(tab.prompt(), None);
        tab.handle_key(Key::Enter);
        tab.dismiss();
        assert_eq!(tab.handle_key(Key::Escape), TabOutcome::Close);
    }

    #[test]
    fn a_pi_model_is_chosen_from_a_picker() {
        let mut tab = tab();
        tab.handle_key(Key::Tab);
        tab.handle_key(Key::Down);
        assert_eq!(tab.cursor(), SettingId::Model);
        // Without a Pi provider the model is only shown.
        tab.handle_key(Key::Enter);
        assert_eq!(tab.prompt(), None);
        let pi = DecisionSettings {
            provider: DecisionProvider::Pi,
            ..DecisionSettings::default()
        };
        tab.saved(&ToolsSettings::default(), &pi, &ScopedAllowlist::default());
        let hints = tab.view(80, 30).hints;
        assert!(hints.iter().any(|h| h.words == "choose"), "{hints:?}");
        tab.handle_key(Key::Enter);
        assert_eq!(tab.prompt(), Some(PromptKind::Model));
        assert_eq!(
            tab.submit("anthropic/claude-x"),
            TabOutcome::SetModel("anthropic/claude-x".into())
        );
        // A refused write shows in the picker, which stays open.
        tab.save_failed("Not written.".into());
        assert_eq!(
            tab.view(80, 30).prompt.unwrap().error.as_deref(),
            Some("Not written.")
        );
    }

    #[test]
    fn the_view_names_the_actions_of_its_hints() {
        let tab = tab();
        let view = tab.view(80, 30);
        assert_eq!(view.title, "Decisions · Tools");
        assert_eq!(view.rows.len(), 7);
        assert_eq!(view.rows[0].label, "Tool filtering");
        assert_eq!(view.rows[0].value, "Off");
        let actions: Vec<Vec<&str>> = view
            .hints
            .iter()
            .map(|h| h.actions.iter().map(|a| a.as_str()).collect())
            .collect();
        assert_eq!(
            actions,
            [
                vec!["up", "down"],
                vec!["confirm"],
                vec!["tab"],
                vec!["cancel"]
            ]
        );
        assert!(view.editor.is_none() && view.prompt.is_none());
    }

    #[test]
    fn rendering_fits_any_size() {
        let mut tab = tab();
        for (w, h) in [(1, 1), (10, 3), (40, 8), (200, 60)] {
            for _ in 0..8 {
                let lines = tab.render(w, h);
                assert!(lines.len() <= h, "{w}x{h}: {lines:?}");
                assert!(lines.iter().all(|l| crate::words::width(l) <= w), "{w}x{h}");
                tab.handle_key(Key::Down);
            }
            tab.handle_key(Key::Tab);
            for _ in 0..13 {
                let lines = tab.render(w, h);
                assert!(lines.len() <= h, "{w}x{h}: {lines:?}");
                assert!(lines.iter().all(|l| crate::words::width(l) <= w), "{w}x{h}");
                tab.handle_key(Key::Down);
            }
            tab = self::tab();
        }
    }
}
