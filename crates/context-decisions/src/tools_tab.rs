//! The `/decisions` dialog (its **Tools** and **Advanced** tabs) with its file edge: ui-text's
//! [`ToolsTab`] (the rows, the editors, every word) driven by raw terminal input, its writes
//! carried out through the config-reader store (atomic, merged, under the file's lock), the
//! [`Session`] told after every write, and the editors' idle-time relevance ranking.
//!
//! - A switch, mode or cadence change, and every Advanced change (`decision.*`), is written to
//!   the global settings file at once.
//! - An editor's save writes only the difference between the lists it opened with and the ones
//!   it saves (additions and removals), so what another window saved meanwhile, entries this
//!   build cannot read, and `(not loaded)` names all stay in the file.
//! - After a write the files are read again and handed to [`Session::settings_changed`], so the
//!   next boundary uses them (and rounds in flight are superseded, as for any save).
//! - A write that fails changes nothing and says why in the tab or the open editor.
//! - Opening an editor starts a ranking ([`Session::ranking`]) against the latest user prompt on
//!   the branch: the embedded scorer answers at once; another model gets a job the host answers
//!   while the editor shows `ranking…`, then [`ToolsDialog::ranked`] orders it.

use crate::load::{load_settings, problem};
use crate::session::{user_text, Answer, DecisionJob, Ranking, Session};
use pcd_config_reader::store::{
    save_global_settings, save_project_allowlist, AllowlistChange, ListEdit, SettingsChange,
};
use pcd_model::DecisionProvider;
use pcd_model::{GroupKey, Scope, ScopedAllowlist};
use pcd_picker::candidates::CandidateKey;
use pcd_ui_text::{
    decode_keys, settings_fallback, DecisionChange, Hint, Key, SettingsFallback, TabOutcome,
    TabView, ToolsChange, ToolsTab,
};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What the host does after forwarding input.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DialogStep {
    /// Close the tab.
    pub close: bool,
    /// A ranking job to answer with the decision model (no working row: nothing is streaming);
    /// its answers go to [`ToolsDialog::ranked`].
    pub job: Option<DecisionJob>,
}

/// One open Tools tab. See the module documentation.
#[derive(Debug)]
pub struct ToolsDialog {
    tab: ToolsTab,
    agent_dir: PathBuf,
    cwd: PathBuf,
    prompt: Option<String>,
    /// The ranking job in flight and the serial of the editor it ranks.
    ranking: Option<(u64, u64)>,
}

/// The text of the last user message of `entries` (a branch, root first).
fn latest_user_text(entries: &[Value]) -> Option<String> {
    entries.iter().rev().find_map(user_text)
}

/// Reads both files again and hands them to the session; returns the warnings.
fn reload(session: &mut Session, agent_dir: &Path, cwd: &Path) -> Vec<String> {
    let filters = session.branch().is_some_and(|b| !b.rounds().is_empty());
    let files = load_settings(agent_dir, cwd, filters);
    session.settings_changed(files.settings, files.project);
    files.warnings
}

fn project_lists(session: &Session) -> ScopedAllowlist {
    session.allowlists().project.clone()
}

/// The JSON value an Advanced change writes (no provider is `null`).
fn decision_value(change: DecisionChange) -> Value {
    match change {
        DecisionChange::Provider(DecisionProvider::None) => Value::Null,
        DecisionChange::Provider(provider) => Value::from(provider.as_str()),
        DecisionChange::Threshold(t) => Value::from(t),
        DecisionChange::MaxNewTools(n)
        | DecisionChange::MaxNewGroups(n)
        | DecisionChange::MinimumCandidates(n)
        | DecisionChange::BatchSize(n)
        | DecisionChange::Concurrency(n) => Value::from(n),
        DecisionChange::TimeoutMs(ms) => Value::from(ms),
        DecisionChange::FailMode(mode) => Value::from(mode.as_str()),
    }
}

/// The additions and removals that turn `before` into `after`.
fn difference(before: &ScopedAllowlist, after: &ScopedAllowlist) -> AllowlistChange {
    fn edit<'a>(
        before: impl Iterator<Item = &'a str> + Clone,
        after: impl Iterator<Item = &'a str> + Clone,
    ) -> ListEdit {
        ListEdit {
            add: after
                .clone()
                .filter(|a| !before.clone().any(|b| b == *a))
                .map(str::to_owned)
                .collect(),
            remove: before
                .filter(|b| !after.clone().any(|a| a == *b))
                .map(str::to_owned)
                .collect(),
        }
    }
    AllowlistChange {
        tools: edit(
            before.tools.iter().map(|t| t.as_str()),
            after.tools.iter().map(|t| t.as_str()),
        ),
        groups: edit(
            before.groups.iter().map(GroupKey::as_str),
            after.groups.iter().map(GroupKey::as_str),
        ),
    }
}

impl ToolsDialog {
    /// Opens the tab: reads the files again (and tells the session), and lists every tool of the
    /// session's snapshot for the editors. `entries` is the branch (root first), for the latest
    /// user prompt the ranking uses. Warnings about the files are appended to `warnings`.
    pub fn open(
        session: &mut Session,
        agent_dir: &Path,
        cwd: &Path,
        entries: Option<&[Value]>,
        warnings: &mut Vec<String>,
    ) -> ToolsDialog {
        warnings.extend(reload(session, agent_dir, cwd));
        // Off means off: while tool filtering is off the editors show the saved names only
        // (the host did not read Pi's registry, and a snapshot from earlier is not shown).
        let rows = if session.filtering_on() {
            crate::views::inventory_view(session).rows
        } else {
            Vec::new()
        };
        let settings = session.settings();
        let tab = ToolsTab::new(
            &settings.tools,
            &settings.decision,
            &project_lists(session),
            rows,
        )
        .with_last_round(session.last_round())
        .with_scorer(session.last_scorer_shown());
        let prompt = entries
            .and_then(latest_user_text)
            .or_else(|| session.latest_task_text().map(str::to_owned));
        ToolsDialog {
            tab,
            agent_dir: agent_dir.to_owned(),
            cwd: cwd.to_owned(),
            prompt,
            ranking: None,
        }
    }

    /// Takes the session's inventory for the editors once filtering is on (it was switched on
    /// inside the dialog, after the host handed Pi's inventory to the session); while off,
    /// nothing changes.
    pub fn inventory_arrived(&mut self, session: &Session) {
        if session.filtering_on() {
            self.tab
                .set_rows(crate::views::inventory_view(session).rows);
        }
    }

    /// The tab as at most `height` lines of at most `width` characters.
    pub fn render(&self, width: usize, height: usize) -> Vec<String> {
        self.tab.render(width, height)
    }

    /// The tab itself, for hosts and tests that look at its state.
    pub fn tab(&self) -> &ToolsTab {
        &self.tab
    }

    /// The dialog as data for a host that draws it (see [`TabView`] and [`view_json`]).
    pub fn view(&self, width: usize, height: usize) -> TabView {
        self.tab.view(width, height)
    }

    /// Raw terminal input (one key, an escape sequence, or pasted text). Writes what the keys
    /// ask for; warnings about the files read again are appended to `warnings`.
    pub fn input(
        &mut self,
        session: &mut Session,
        data: &str,
        warnings: &mut Vec<String>,
    ) -> DialogStep {
        let mut step = DialogStep::default();
        for key in decode_keys(data) {
            if self.key(session, key, warnings, &mut step) {
                break;
            }
        }
        step
    }

    /// One action the host matched with its key bindings (`up`, `down`, `left`, `right`,
    /// `confirm`, `cancel`, `tab`, `backTab`, `space`, `save`, `backspace`); an unknown name does
    /// nothing.
    pub fn action(
        &mut self,
        session: &mut Session,
        name: &str,
        warnings: &mut Vec<String>,
    ) -> DialogStep {
        let key = match name {
            "up" => Key::Up,
            "down" => Key::Down,
            "left" => Key::Left,
            "right" => Key::Right,
            "confirm" => Key::Enter,
            "cancel" => Key::Escape,
            "tab" => Key::Tab,
            "backTab" => Key::BackTab,
            "space" => Key::Space,
            "save" => Key::Save,
            "backspace" => Key::Backspace,
            _ => return DialogStep::default(),
        };
        let mut step = DialogStep::default();
        self.key(session, key, warnings, &mut step);
        step
    }

    /// What the open prompt's host submitted (the threshold typed, the model chosen): written
    /// when it is one, refused in one line under the prompt otherwise.
    pub fn submit(&mut self, session: &mut Session, text: &str, warnings: &mut Vec<String>) {
        match self.tab.submit(text) {
            TabOutcome::SetDecision(change) => {
                self.set(session, change.field(), decision_value(change), warnings)
            }
            TabOutcome::SetModel(model) => {
                self.set(session, "decision.model", Value::from(model), warnings)
            }
            _ => {}
        }
    }

    /// Closes the open prompt without writing.
    pub fn dismiss(&mut self) {
        self.tab.dismiss();
    }

    /// One key; true when the dialog closes.
    fn key(
        &mut self,
        session: &mut Session,
        key: Key,
        warnings: &mut Vec<String>,
        step: &mut DialogStep,
    ) -> bool {
        {
            match self.tab.handle_key(key) {
                TabOutcome::Continue => {}
                TabOutcome::Close => {
                    step.close = true;
                    return true;
                }
                TabOutcome::SetModel(model) => {
                    self.set(session, "decision.model", Value::from(model), warnings)
                }
                TabOutcome::Set(change) => {
                    let value = match change {
                        ToolsChange::Enabled(on) => Value::Bool(on),
                        ToolsChange::Mode(mode) => Value::from(mode.as_str()),
                        ToolsChange::Cadence(cadence) => Value::from(cadence.as_str()),
                    };
                    self.set(session, change.field(), value, warnings)
                }
                TabOutcome::SetDecision(change) => {
                    self.set(session, change.field(), decision_value(change), warnings)
                }
                TabOutcome::SaveLists {
                    scope,
                    before,
                    after,
                } => self.save_lists(session, scope, &before, &after, warnings),
                TabOutcome::EditorOpened { serial } => {
                    if let Some(job) = self.start_ranking(session, serial) {
                        step.job = Some(job);
                    }
                }
            }
        }
        false
    }

    fn written(&mut self, session: &mut Session, warnings: &mut Vec<String>) {
        warnings.extend(reload(session, &self.agent_dir, &self.cwd));
        let project = project_lists(session);
        let settings = session.settings();
        self.tab
            .saved(&settings.tools, &settings.decision, &project);
    }

    fn set(
        &mut self,
        session: &mut Session,
        field: &str,
        value: Value,
        warnings: &mut Vec<String>,
    ) {
        let result = SettingsChange::default()
            .set(field, value)
            .and_then(|c| save_global_settings(&self.agent_dir, &c));
        match result {
            Ok(_) => self.written(session, warnings),
            Err(e) => self
                .tab
                .save_failed(settings_fallback(SettingsFallback::GlobalSaveFailed(
                    problem(&e),
                ))),
        }
    }

    fn save_lists(
        &mut self,
        session: &mut Session,
        scope: Scope,
        before: &ScopedAllowlist,
        after: &ScopedAllowlist,
        warnings: &mut Vec<String>,
    ) {
        let change = difference(before, after);
        let result = match scope {
            Scope::Global => {
                let mut settings = SettingsChange::default();
                settings.allowlists = change;
                save_global_settings(&self.agent_dir, &settings).map(|_| ())
            }
            Scope::Project => save_project_allowlist(&self.cwd, &change).map(|_| ()),
        };
        match result {
            Ok(()) => {
                self.ranking = None;
                self.written(session, warnings);
            }
            Err(e) => {
                let fallback = match scope {
                    Scope::Global => SettingsFallback::GlobalSaveFailed(problem(&e)),
                    Scope::Project => SettingsFallback::ProjectSaveFailed(problem(&e)),
                };
                self.tab.save_failed(settings_fallback(fallback));
            }
        }
    }

    fn start_ranking(&mut self, session: &mut Session, serial: u64) -> Option<DecisionJob> {
        let prompt = self.prompt.clone()?;
        let (tools, groups) = self.tab.editor()?.rank_targets();
        match session.ranking(&prompt, &tools, &groups) {
            Ranking::Unavailable => None,
            Ranking::Scores(scores) => {
                self.apply(&scores);
                None
            }
            Ranking::Job(job) => {
                if let Some(editor) = self.tab.editor_mut() {
                    editor.set_ranking(true);
                }
                self.ranking = Some((job.id, serial));
                Some(job)
            }
        }
    }

    fn apply(&mut self, scores: &[(CandidateKey, f64)]) {
        let mut tools = HashMap::new();
        let mut groups = HashMap::new();
        for (key, score) in scores {
            match key {
                CandidateKey::Tool(name) => {
                    tools.insert(name.clone(), *score);
                }
                CandidateKey::Group(key) => {
                    groups.insert(key.clone(), *score);
                }
            }
        }
        if let Some(editor) = self.tab.editor_mut() {
            editor.set_relevance(&tools, &groups);
        }
    }

    /// The answers to a ranking job. The editor it was started for is ordered by them (or, when
    /// the model failed, keeps its order and stops showing `ranking…`); an answer for an editor
    /// that has closed since is dropped.
    pub fn ranked(&mut self, session: &mut Session, job: u64, answers: Vec<Answer>) {
        let scores = session.ranking_decided(job, answers);
        let Some((expected, serial)) = self.ranking else {
            return;
        };
        if expected != job {
            return;
        }
        self.ranking = None;
        if self.tab.editor_serial() != Some(serial) {
            return;
        }
        match scores {
            Some(scores) => self.apply(&scores),
            None => {
                if let Some(editor) = self.tab.editor_mut() {
                    editor.set_ranking(false);
                }
            }
        }
    }
}

fn hints_json(hints: &[Hint]) -> Value {
    hints
        .iter()
        .map(|h| {
            serde_json::json!({
                "actions": h.actions.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
                "words": h.words,
            })
        })
        .collect()
}

/// The dialog's view as the JSON the extension lays out: `title`, `rows` (`label`, `value`),
/// `cursor`, `help`, `notes`, `status`, `hints` (`actions`, `words`), `editor` (its lines, or
/// null) and `prompt` (`kind` `number` or `model`, `title`, `help`, `value`, `error`, `empty`,
/// `hints`; or null).
pub fn view_json(view: &TabView) -> Value {
    serde_json::json!({
        "title": view.title,
        "rows": view.rows.iter().map(|r| serde_json::json!({"label": r.label, "value": r.value})).collect::<Vec<_>>(),
        "cursor": view.cursor,
        "help": view.help,
        "notes": view.notes,
        "status": view.status,
        "hints": hints_json(&view.hints),
        "editor": view.editor,
        "editor_hints": hints_json(&view.editor_hints),
        "prompt": view.prompt.as_ref().map(|p| serde_json::json!({
            "kind": p.kind.as_str(),
            "title": p.title,
            "help": p.help,
            "value": p.value,
            "error": p.error,
            "empty": p.empty,
            "hints": hints_json(&p.hints),
        })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_model::{parse_group_entry, parse_tool_entry};

    fn lists(tools: &[&str], groups: &[&str]) -> ScopedAllowlist {
        ScopedAllowlist {
            tools: tools.iter().map(|t| parse_tool_entry(t).unwrap()).collect(),
            groups: groups
                .iter()
                .map(|g| parse_group_entry(g).unwrap())
                .collect(),
        }
    }

    #[test]
    fn a_save_writes_only_the_difference() {
        let change = difference(
            &lists(&["a", "gone"], &["kb", "ext__notes"]),
            &lists(&["gone", "b"], &["kb", "docs"]),
        );
        assert_eq!(change.tools.add, ["b"]);
        assert_eq!(change.tools.remove, ["a"]);
        assert_eq!(change.groups.add, ["mcp__docs"]);
        assert_eq!(change.groups.remove, ["ext__notes"]);
        assert_eq!(
            difference(&lists(&["a"], &["kb"]), &lists(&["a"], &["kb"])),
            AllowlistChange::default()
        );
    }

    #[test]
    fn the_latest_user_message_is_the_prompt() {
        let entries: Vec<Value> = serde_json::from_str(
            r#"[{"type":"message","message":{"role":"user","content":"first"}},
                {"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"x"}]}},
                {"type":"message","message":{"role":"user","content":[{"type":"text","text":"second"}]}},
                {"type":"custom","customType":"x","data":{}}]"#,
        )
        .unwrap();
        assert_eq!(latest_user_text(&entries).as_deref(), Some("second"));
        assert_eq!(latest_user_text(&[]), None);
    }

    mod with_files {
        use super::super::*;
        use crate::session::{
            BoundaryEvent, BoundaryKind, BranchRead, InventoryRead, StartEvent, StartReason,
        };
        use pcd_ui_text::CursorTarget;

        struct Fixture {
            dir: PathBuf,
            agent: PathBuf,
            cwd: PathBuf,
            session: Session,
        }

        impl Drop for Fixture {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.dir);
            }
        }

        fn fixture(name: &str, settings: Value) -> Fixture {
            let dir = std::env::temp_dir().join(format!("pcd-tab-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let agent = dir.join("agent");
            let cwd = dir.join("cwd");
            std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
            std::fs::create_dir_all(cwd.join(".pi")).unwrap();
            std::fs::write(
                agent.join("pi-context-decisions/settings.json"),
                settings.to_string(),
            )
            .unwrap();
            std::fs::write(
                cwd.join(".pi/pi-context-decisions.json"),
                r#"{"alwaysAllowed": ["skill-x"], "alwaysAllowedTools": ["db_query", "gone_project_tool"]}"#,
            )
            .unwrap();
            let files = load_settings(&agent, &cwd, false);
            let (mut session, _) = Session::start(StartEvent {
                reason: StartReason::Startup,
                nonce: "t".into(),
                settings: files.settings,
                project: files.project,
                mcp_origins: Vec::new(),
                branch: BranchRead::Entries(Vec::new()),
            });
            let inventory = std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/inventory.json"),
            )
            .unwrap();
            let tools = pcd_model::parse_inventory(&inventory).unwrap().tools;
            session.boundary(BoundaryEvent {
                kind: BoundaryKind::Reconcile,
                inventory: InventoryRead::Tools(tools),
                active: Vec::new(),
            });
            Fixture {
                dir,
                agent,
                cwd,
                session,
            }
        }

        fn prompt(text: &str) -> Vec<Value> {
            vec![
                serde_json::json!({"type": "message", "message": {"role": "user", "content": text}}),
            ]
        }

        fn read(path: &Path) -> Value {
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
        }

        /// Presses Down until the editor's cursor is on `target`.
        fn go_to(dialog: &mut ToolsDialog, f: &mut Fixture, target: &CursorTarget) {
            let mut w = Vec::new();
            for _ in 0..100 {
                if dialog.tab().editor().unwrap().cursor_target().as_ref() == Some(target) {
                    return;
                }
                dialog.input(&mut f.session, "\x1b[B", &mut w);
            }
            panic!("{target:?} not found");
        }

        #[test]
        fn settings_and_both_scopes_are_written_and_the_session_is_told() {
            let mut f = fixture(
                "write",
                serde_json::json!({
                    "tools": {"enabled": true, "alwaysAllowedTools": ["gone_tool"]},
                    "decision": {"provider": "embedded"},
                    "unknownKey": 1
                }),
            );
            let entries = prompt("Render a bar chart of this CSV");
            let mut warnings = Vec::new();
            let (agent, cwd) = (f.agent.clone(), f.cwd.clone());
            let mut dialog =
                ToolsDialog::open(&mut f.session, &agent, &cwd, Some(&entries), &mut warnings);
            assert!(warnings.is_empty(), "{warnings:?}");
            assert!(dialog.render(80, 30)[1].contains("Tool filtering: On"));
            // The switch: written at once, and the session follows.
            let step = dialog.input(&mut f.session, "\r", &mut warnings);
            assert_eq!(step, DialogStep::default());
            let settings_path = agent.join("pi-context-decisions/settings.json");
            assert_eq!(read(&settings_path)["tools"]["enabled"], false);
            assert!(!f.session.filtering_on());
            assert!(dialog.render(80, 30)[1].contains("Tool filtering: Off"));
            // The global tools editor, ranked at once by the embedded scorer.
            dialog.input(&mut f.session, "\x1b[B\x1b[B\x1b[B\r", &mut warnings);
            let editor = dialog.tab().editor().expect("open");
            assert!(!editor.is_ranking());
            let screen = dialog.render(100, 40).join("\n");
            let bar = screen.find("pi-bar").expect("listed");
            let web = screen.find("@acme/pi-web").expect("listed");
            assert!(bar < web, "the chart extension is ranked first: {screen}");
            assert!(screen.contains("gone_tool  (not loaded)"), "{screen}");
            let pi_bar = GroupKey::for_extension("pi-bar");
            go_to(&mut dialog, &mut f, &CursorTarget::Group(pi_bar.clone()));
            dialog.input(&mut f.session, " \x1b[115;5u", &mut warnings);
            assert!(dialog.tab().editor().is_none(), "a save closes the editor");
            let global = read(&settings_path);
            assert_eq!(
                global["tools"]["alwaysAllowedTools"],
                serde_json::json!(["gone_tool"])
            );
            assert_eq!(
                global["tools"]["alwaysAllowedMcpServers"],
                serde_json::json!([pi_bar.as_str()])
            );
            assert_eq!(global["unknownKey"], 1);
            assert_eq!(global["tools"]["enabled"], false);
            assert!(f.session.allowlists().global.has_group(&pi_bar));
            // The project tools editor: uncheck db_query, keep the name not loaded.
            dialog.input(&mut f.session, "\x1b[B\x1b[B\r", &mut warnings);
            let pi_db = CursorTarget::Group(GroupKey::for_extension("pi-db"));
            go_to(&mut dialog, &mut f, &pi_db);
            dialog.input(&mut f.session, "\r", &mut warnings);
            go_to(&mut dialog, &mut f, &CursorTarget::Tool("db_query".into()));
            dialog.input(&mut f.session, " \x13", &mut warnings);
            let project = read(&cwd.join(".pi/pi-context-decisions.json"));
            assert_eq!(
                project,
                serde_json::json!({"alwaysAllowed": ["skill-x"], "alwaysAllowedTools": ["gone_project_tool"]})
            );
            assert!(!f.session.allowlists().project.has_tool("db_query"));
            // Escape closes the tab.
            assert!(dialog.input(&mut f.session, "\x1b", &mut warnings).close);
        }

        #[test]
        fn a_failed_write_changes_nothing_and_says_so() {
            let mut f = fixture("fail", serde_json::json!({"tools": {"enabled": true}}));
            let (agent, cwd) = (f.agent.clone(), f.cwd.clone());
            let mut warnings = Vec::new();
            let mut dialog = ToolsDialog::open(&mut f.session, &agent, &cwd, None, &mut warnings);
            let path = agent.join("pi-context-decisions/settings.json");
            std::fs::write(&path, "{ not json sk-SECRET").unwrap();
            dialog.input(&mut f.session, "\r", &mut warnings);
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                "{ not json sk-SECRET"
            );
            let screen = dialog.render(100, 30).join("\n");
            assert!(screen.contains("not valid JSON"), "{screen}");
            assert!(screen.contains("Tool filtering: On"), "{screen}");
            assert!(!screen.contains("SECRET"));
            assert!(f.session.filtering_on());
        }

        #[test]
        fn advanced_changes_write_exactly_their_key_and_the_session_follows() {
            let mut f = fixture(
                "advanced",
                serde_json::json!({
                    "tools": {"enabled": true},
                    "decision": {"provider": "embedded", "futureKey": "kept"},
                    "unknownKey": 1
                }),
            );
            let (agent, cwd) = (f.agent.clone(), f.cwd.clone());
            let path = agent.join("pi-context-decisions/settings.json");
            let mut warnings = Vec::new();
            let mut dialog = ToolsDialog::open(&mut f.session, &agent, &cwd, None, &mut warnings);
            dialog.input(&mut f.session, "\t", &mut warnings);
            assert_eq!(dialog.render(80, 30)[0], "Decisions · Advanced");
            let mut expected = serde_json::json!({
                "tools": {"enabled": true},
                "decision": {"provider": "embedded", "futureKey": "kept"},
                "unknownKey": 1
            });
            // The provider: embedded → pi → http → none (written as null).
            for (provider, value) in [
                (DecisionProvider::Pi, serde_json::json!("pi")),
                (DecisionProvider::Http, serde_json::json!("http")),
                (DecisionProvider::None, Value::Null),
            ] {
                dialog.input(&mut f.session, "\r", &mut warnings);
                expected["decision"]["provider"] = value;
                assert_eq!(read(&path), expected);
                assert_eq!(f.session.settings().decision.provider, provider);
            }
            assert!(!f.session.settings().decision.has_model());
            assert!(dialog.render(80, 30)[1].ends_with("Decision model: None"));
            // Down past the three rows edited in the file, then every number and the fail mode.
            for (keys, key, value) in [
                (
                    "\x1b[B\x1b[B\x1b[B\x1b[B\x1b[C",
                    "threshold",
                    serde_json::json!(0.65),
                ),
                ("\x1b[B+", "maxNewTools", serde_json::json!(7)),
                ("\x1b[B\x1b[D", "maxNewGroups", serde_json::json!(2)),
                ("\x1b[B-", "minimumCandidates", serde_json::json!(9)),
                ("\x1b[B\x1b[C", "batchSize", serde_json::json!(60)),
                ("\x1b[B\x1b[C", "concurrency", serde_json::json!(7)),
                ("\x1b[B\x1b[D", "timeoutMs", serde_json::json!(29_000)),
                ("\x1b[B ", "failMode", serde_json::json!("open")),
            ] {
                dialog.input(&mut f.session, keys, &mut warnings);
                expected["decision"][key] = value;
                assert_eq!(read(&path), expected, "{key}");
            }
            assert!(warnings.is_empty(), "{warnings:?}");
            let d = &f.session.settings().decision;
            assert_eq!(
                (
                    d.threshold,
                    d.max_new_tools,
                    d.max_new_groups,
                    d.minimum_candidates
                ),
                (0.65, 7, 2, Some(9))
            );
            assert_eq!((d.batch_size, d.concurrency, d.timeout_ms), (60, 7, 29_000));
            assert_eq!(d.fail_mode, pcd_model::FailMode::Open);
            let screen = dialog.render(80, 30).join("\n");
            assert!(screen.contains("  Threshold: 0.65"), "{screen}");
            assert!(
                screen.contains("> When a decision fails: Add the rest"),
                "{screen}"
            );
            // A broken file is never overwritten; the tab says why and keeps its value.
            std::fs::write(&path, "{ not json sk-SECRET").unwrap();
            dialog.input(&mut f.session, "\r", &mut warnings);
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                "{ not json sk-SECRET"
            );
            let screen = dialog.render(100, 30).join("\n");
            assert!(screen.contains("not valid JSON"), "{screen}");
            assert!(
                screen.contains("When a decision fails: Add the rest"),
                "{screen}"
            );
            assert!(!screen.contains("SECRET"));
            assert_eq!(
                f.session.settings().decision.fail_mode,
                pcd_model::FailMode::Open
            );
            // Back to the Tools tab, where the note points at Advanced.
            dialog.input(&mut f.session, "\x1b[Z", &mut warnings);
            let screen = dialog.render(100, 30).join("\n");
            assert!(screen.starts_with("Decisions · Tools"), "{screen}");
            assert!(screen.contains("Choose one in Advanced"), "{screen}");
        }

        #[test]
        fn a_model_ranking_shows_ranking_until_it_returns() {
            let mut f = fixture(
                "job",
                serde_json::json!({"tools": {"enabled": true}, "decision": {"provider": "pi", "model": "faux/m"}}),
            );
            let (agent, cwd) = (f.agent.clone(), f.cwd.clone());
            let mut warnings = Vec::new();
            let entries = prompt("Query the database schema");
            let mut dialog =
                ToolsDialog::open(&mut f.session, &agent, &cwd, Some(&entries), &mut warnings);
            // The project groups editor.
            let step = dialog.input(
                &mut f.session,
                "\x1b[B\x1b[B\x1b[B\x1b[B\x1b[B\x1b[B\r",
                &mut warnings,
            );
            let job = step.job.expect("a ranking job");
            assert!(dialog.render(80, 20)[1].starts_with("ranking…"));
            assert_eq!(f.session.pending_jobs(), 0, "no round is pending");
            // Score every candidate: the todo extension highest.
            let answers: Vec<Answer> = job
                .requests
                .iter()
                .map(|body| {
                    let doc: Value = serde_json::from_str(body).unwrap();
                    assert_eq!(doc["prompt"], "Query the database schema");
                    let scores: Vec<Value> = doc["candidates"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| {
                            let todo = c.to_string().contains("todo");
                            serde_json::json!({"id": c["id"], "score": if todo { 0.9 } else { 0.1 }})
                        })
                        .collect();
                    Ok(serde_json::json!({"scores": scores}).to_string())
                })
                .collect();
            dialog.ranked(&mut f.session, job.id, answers);
            let screen = dialog.render(80, 20);
            assert!(!screen[1].contains("ranking…"));
            let first = screen.iter().position(|l| l.contains("[ ] ")).unwrap();
            assert!(screen[first].contains("todo"), "{screen:#?}");
            // A second answer to the same job changes nothing; a failed one ends `ranking…`.
            dialog.input(&mut f.session, "\x1b", &mut warnings);
            let step = dialog.input(&mut f.session, "\r", &mut warnings);
            let job = step.job.expect("a new ranking");
            dialog.ranked(
                &mut f.session,
                job.id,
                vec![Err(crate::session::ModelError::Unavailable)],
            );
            assert!(!dialog.render(80, 20)[1].contains("ranking…"));
        }
    }
}
