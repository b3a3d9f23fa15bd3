//! The facade `Session` driven through scripted sessions, the way the Pi binding drives it:
//! events in, effects out, the effects' entries written to a branch and folded again.

use context_decisions::session::{
    BoundaryEvent, BoundaryKind, BranchRead, Effect, InventoryRead, Session, SettingsRead,
    StartEvent, StartReason, ToolCallEvent,
};
use pcd_gate::ProjectRead;
use pcd_ledger::CUSTOM_TYPE;
use pcd_model::{
    parse_tool_entry, Cadence, DecisionProvider, Mode, Scope, ScopedAllowlist, Settings, ToolInfo,
};
use serde_json::{json, Value};
use std::path::Path;

fn example() -> Vec<ToolInfo> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/inventory.json");
    context_decisions::inventory::read_inventory_file(&path)
        .unwrap()
        .tools
}

fn settings(enabled: bool, provider: DecisionProvider, mode: Mode, cadence: Cadence) -> Settings {
    let mut s = Settings::default();
    s.tools.enabled = enabled;
    s.tools.mode = mode;
    s.tools.cadence = cadence;
    s.decision.provider = provider;
    s
}

/// A branch as Pi keeps it: entries with ids and parent ids, root first.
#[derive(Default, Clone)]
struct Branch {
    entries: Vec<Value>,
}

impl Branch {
    fn push(&mut self, mut entry: Value) {
        let id = format!("{:08x}", self.entries.len() + 1);
        let parent = self
            .entries
            .last()
            .map(|e| e["id"].clone())
            .unwrap_or(Value::Null);
        entry["id"] = json!(id);
        entry["parentId"] = parent;
        self.entries.push(entry);
    }

    fn user(&mut self, text: &str) {
        self.push(json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}));
    }

    fn assistant(&mut self, text: &str) {
        self.push(json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}));
    }

    /// Carries out the effects the way the binding does: entries are appended to the branch.
    fn apply(&mut self, effects: &[Effect]) {
        for e in effects {
            if let Effect::AppendEntry(data) = e {
                self.push(json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data}));
            }
        }
    }

    /// Ledger entries that grant something (the empty baseline a branch records when filtering
    /// first applies to it grants nothing).
    fn granting_entries(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e["customType"] == CUSTOM_TYPE)
            .filter(|e| {
                ["tools", "groups"]
                    .iter()
                    .any(|k| e["data"][k].as_array().is_some_and(|list| !list.is_empty()))
            })
            .count()
    }

    fn ledger_entries(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e["customType"] == CUSTOM_TYPE)
            .count()
    }
}

struct Pi {
    session: Session,
    branch: Branch,
    tools: Vec<ToolInfo>,
    active: Vec<String>,
}

/// Filtering on, the embedded scorer, `tools` mode, a round per prompt.
fn embedded_tools_settings() -> Settings {
    settings(
        true,
        DecisionProvider::Embedded,
        Mode::Tools,
        Cadence::Prompt,
    )
}

impl Pi {
    fn start(settings: Settings, allow: ScopedAllowlist) -> Pi {
        Pi::start_with(settings, allow, Branch::default(), example())
    }

    /// Filtering on, the embedded scorer, `tools` mode, a round per prompt, no allowlist, an
    /// empty branch, and `tools` as Pi's inventory.
    fn embedded_prompt_tools(tools: Vec<ToolInfo>) -> Pi {
        Pi::start_with(
            embedded_tools_settings(),
            ScopedAllowlist::default(),
            Branch::default(),
            tools,
        )
    }

    fn start_with(
        settings: Settings,
        allow: ScopedAllowlist,
        branch: Branch,
        tools: Vec<ToolInfo>,
    ) -> Pi {
        let (session, effects) = Session::start(StartEvent {
            reason: StartReason::Startup,
            nonce: "t1".into(),
            settings: SettingsRead::Read(settings),
            project: ProjectRead::Read(allow),
            mcp_origins: vec![],
            branch: BranchRead::Entries(branch.entries.clone()),
        });
        // The only effect of a start: one warning, exactly when the branch holds records that
        // grant nothing (torn, altered, unreadable).
        let warnings = effects
            .iter()
            .filter(|e| {
                matches!(e, Effect::Warn(t) if t.contains("could not be read whole")
                    || t.contains("could not be trusted"))
            })
            .count();
        assert_eq!(effects.len(), warnings, "{effects:?}");
        assert_eq!(warnings, usize::from(!session.findings().is_empty()));
        // Pi activates direct and model-only tools on registration (codemode and tool_search are
        // activated by their extensions); deferred MCP tools stay inactive.
        let active = tools
            .iter()
            .filter(|t| t.exposure.is_declared())
            .map(|t| t.name.clone())
            .collect();
        Pi {
            session,
            branch,
            tools,
            active,
        }
    }

    fn boundary(&mut self, kind: BoundaryKind) -> Vec<Effect> {
        let inventory = if self.session.needs_inventory() {
            InventoryRead::Tools(self.tools.clone())
        } else {
            InventoryRead::Unreadable
        };
        let effects = self.session.boundary(BoundaryEvent {
            kind,
            inventory,
            active: self.active.clone(),
        });
        self.branch.apply(&effects);
        for e in &effects {
            if let Effect::SetActiveTools(names) = e {
                self.active = names.clone();
            }
        }
        effects
    }

    fn prompt(&mut self, text: &str) -> Vec<Effect> {
        let effects = self.boundary(BoundaryKind::Prompt {
            text: Some(text.into()),
        });
        self.branch.user(text);
        effects
    }

    /// A call as the binding makes it: when the session does not know the tool yet, it reads
    /// the registry and asks again.
    fn call(&mut self, tool: &str) -> Option<String> {
        let event = ToolCallEvent {
            tool: tool.into(),
            server: None,
        };
        let mut outcome = self.session.tool_call(&event);
        if outcome.refresh_and_retry {
            outcome = self
                .session
                .tool_call_with(&event, Some(InventoryRead::Tools(self.tools.clone())));
            assert!(!outcome.refresh_and_retry);
        }
        self.branch.apply(&outcome.effects);
        if let Some(job) = outcome.pending.take() {
            // A model outside the Session that does not answer.
            let answers = job
                .requests
                .iter()
                .map(|_| Err(context_decisions::session::ModelError::Unavailable))
                .collect();
            let effects = self.session.decided(job.id, answers, &self.active.clone());
            self.branch.apply(&effects);
            outcome = self.session.tool_call(&event);
            assert!(outcome.pending.is_none(), "a failed job is not asked again");
        }
        outcome.block
    }

    fn call_resource(&mut self, tool: &str, server: Option<Result<String, ()>>) -> Option<String> {
        self.session
            .tool_call(&ToolCallEvent {
                tool: tool.into(),
                server,
            })
            .block
    }

    /// A new process over the same branch (`pi -c`, resume, fork, `/reload`): a fresh
    /// `Session`, and Pi's active set as Pi replays it from the transcript (the loadout this
    /// extension last set), then the `session_start` boundary.
    fn reopen(&mut self, reason: StartReason, settings: Settings, project: ScopedAllowlist) {
        let (session, _) = Session::start(StartEvent {
            reason,
            nonce: "t9".into(),
            settings: SettingsRead::Read(settings),
            project: ProjectRead::Read(project),
            mcp_origins: vec![],
            branch: BranchRead::Entries(self.branch.entries.clone()),
        });
        self.session = session;
        self.boundary(BoundaryKind::Reconcile);
    }

    /// `/reload`: a new session over the same branch.
    fn reload(&mut self, settings: Settings) {
        let (session, _) = Session::start(StartEvent {
            reason: StartReason::Reload,
            nonce: "t2".into(),
            settings: SettingsRead::Read(settings),
            project: ProjectRead::Absent,
            mcp_origins: vec![],
            branch: BranchRead::Entries(self.branch.entries.clone()),
        });
        self.session = session;
    }
}

fn external(tools: &[ToolInfo]) -> Vec<String> {
    let classifier = pcd_model::Classifier::default();
    tools
        .iter()
        .filter(|t| !classifier.classify(t).kind.is_internal())
        .map(|t| t.name.clone())
        .collect()
}

#[test]
fn off_means_off() {
    let mut pi = Pi::start(Settings::default(), ScopedAllowlist::default());
    assert!(!pi.session.needs_inventory(), "off: no getAllTools");
    let effects = pi.prompt("deploy the preview and page on-call");
    assert!(effects.is_empty(), "{effects:?}");
    for tool in external(&pi.tools) {
        assert_eq!(pi.call(&tool), None);
    }
    assert_eq!(pi.call("not_even_registered"), None);
    assert_eq!(pi.call_resource("list_mcp_resources", None), None);
    assert_eq!(pi.branch.ledger_entries(), 0);
    assert_eq!(pi.session.active_set_changes(), 0);
}

#[test]
fn no_model_everything_stays_available_and_is_recorded() {
    let mut pi = Pi::start(
        settings(true, DecisionProvider::None, Mode::Tools, Cadence::Prompt),
        ScopedAllowlist::default(),
    );
    let effects = pi.prompt("summarise the docs");
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::SetActiveTools(_))),
        "{effects:?}"
    );
    assert!(pi.branch.ledger_entries() >= 1);
    for tool in external(&pi.tools) {
        assert_eq!(pi.call(&tool), None, "{tool}");
    }
    // Late arrivals stay available too.
    pi.tools
        .push(ToolInfo::new("late_tool", "arrived late", None));
    assert_eq!(pi.call("late_tool"), None);
}

#[test]
fn first_prompt_picks_withholds_and_blocks_with_the_reason() {
    let mut pi = Pi::embedded_prompt_tools(example());
    let effects =
        pi.prompt("Search the incidents of the checkout service and page the on-call engineer");
    let set_active = effects.iter().find_map(|e| match e {
        Effect::SetActiveTools(names) => Some(names.clone()),
        _ => None,
    });
    let active = set_active.expect("withheld direct tools are removed from the active set");
    // Built-in tools are never removed.
    for internal in [
        "read",
        "bash",
        "codemode",
        "tool_search",
        "read_mcp_resource",
    ] {
        assert!(active.contains(&internal.to_owned()), "{internal}");
    }
    // The relevant tools are available, irrelevant direct tools are withheld and blocked.
    assert_eq!(pi.call("mcp__dev_radius__search_incidents"), None);
    assert_eq!(pi.call("mcp__dev_radius__page_oncall"), None);
    assert!(!active.contains(&"bar_chart".to_owned()));
    let reason = pi.call("bar_chart").expect("blocked");
    assert!(
        reason.contains("`bar_chart` is not available for this task"),
        "{reason}"
    );
    assert!(reason.contains("global *Always allowed tools*"), "{reason}");
    // The notice is names-only and mentions the indirect tools that are available.
    let notice = effects.iter().find_map(|e| match e {
        Effect::Notice(n) => Some(n.clone()),
        _ => None,
    });
    let notice = notice.expect("a notice at every prompt");
    assert!(
        notice.contains("mcp__dev_radius__search_incidents"),
        "{notice}"
    );
    assert!(!notice.contains("/home/dev"), "no paths");
    // At most the cap (6) tools were added by the round.
    let (state, findings) = pcd_ledger::fold(&pi.branch.entries);
    assert!(findings.is_empty(), "{findings:?}");
    assert!(state.available_tools().count() <= 6);
}

#[test]
fn the_ledger_replays_to_the_same_availability_after_reload() {
    let mut pi = Pi::embedded_prompt_tools(example());
    pi.prompt("Query the development database schema and run a read-only SQL query");
    pi.branch.assistant("done");
    let before: Vec<(String, bool)> = external(&pi.tools)
        .into_iter()
        .map(|t| {
            let ok = pi.session.is_allowed(&t);
            (t, ok)
        })
        .collect();
    let s = embedded_tools_settings();
    pi.reload(s);
    pi.boundary(BoundaryKind::Reconcile);
    let after: Vec<(String, bool)> = external(&pi.tools)
        .into_iter()
        .map(|t| {
            let ok = pi.session.is_allowed(&t);
            (t, ok)
        })
        .collect();
    assert_eq!(before, after);
    assert!(
        after.iter().any(|(t, ok)| t == "db_query" && *ok),
        "{after:?}"
    );
}

#[test]
fn allowlists_in_both_scopes() {
    let project = ScopedAllowlist {
        tools: vec![parse_tool_entry("db_migrate").unwrap()],
        groups: vec![],
    };
    let mut s = embedded_tools_settings();
    s.tools.always_allowed_tools = vec![
        parse_tool_entry("notes_add").unwrap(),
        parse_tool_entry("todo_add").unwrap(),
    ];
    let mut pi = Pi::start(s, project);
    pi.prompt("Translate this paragraph into German");
    assert_eq!(pi.call("notes_add"), None, "global pin of a user tool");
    assert_eq!(pi.call("db_migrate"), None, "project pin of a project tool");
    // A global entry never pins a project-scope tool: `todo_add` is project-scope.
    let reason = pi.call("todo_add").expect("blocked");
    assert!(
        reason.contains("project *Always allowed tools*"),
        "{reason}"
    );
}

#[test]
fn a_late_arrival_is_scored_lazily_on_first_call() {
    let mut pi = Pi::embedded_prompt_tools(example());
    pi.prompt("What is the weather forecast in Lisbon tomorrow?");
    let entries = pi.branch.ledger_entries();
    let mut late = ToolInfo::new(
        "forecast_weather",
        "Get the weather forecast for a city for the next days.",
        None,
    );
    late.definition_chars = 80;
    pi.tools.push(late);
    // Unknown to the session's snapshot: the session asks for a refresh before deciding.
    let first = pi.session.tool_call(&ToolCallEvent {
        tool: "forecast_weather".into(),
        server: None,
    });
    assert!(first.refresh_and_retry && first.block.is_some() && first.effects.is_empty());
    let verdict = pi.call("forecast_weather");
    assert!(
        pi.branch.ledger_entries() > entries,
        "the lazy score was recorded"
    );
    assert_eq!(verdict, None, "relevant to the task: made available");
    // Asked again: no second score.
    let n = pi.branch.ledger_entries();
    assert_eq!(pi.call("forecast_weather"), None);
    assert_eq!(pi.branch.ledger_entries(), n);
}

#[test]
fn switching_off_restores_only_what_was_withheld() {
    let mut pi = Pi::embedded_prompt_tools(example());
    let original = pi.active.clone();
    pi.prompt("Search the product documentation for the rate limits");
    assert_ne!(pi.active, original);
    pi.session
        .settings_changed(SettingsRead::Read(Settings::default()), ProjectRead::Absent);
    assert_eq!(
        pi.call("bar_chart"),
        None,
        "off: every call allowed at once"
    );
    let effects = pi.boundary(BoundaryKind::ToolRound);
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::SetActiveTools(_))));
    let mut restored = pi.active.clone();
    let mut expected = original.clone();
    restored.sort();
    expected.sort();
    assert_eq!(restored, expected);
}

#[test]
fn re_activation_by_others_is_undone_at_the_next_boundary() {
    let mut pi = Pi::embedded_prompt_tools(example());
    pi.prompt("Search the product documentation for the rate limits");
    assert!(!pi.active.contains(&"bar_chart".to_owned()));
    // tool_search or another extension activates it again.
    pi.active.push("bar_chart".into());
    assert!(pi.call("bar_chart").is_some(), "blocked meanwhile");
    let effects = pi.boundary(BoundaryKind::ToolRound);
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::SetActiveTools(_))));
    assert!(!pi.active.contains(&"bar_chart".to_owned()));
}

#[test]
fn unreadable_settings_keep_enforcing_and_add_nothing() {
    let mut pi = Pi::embedded_prompt_tools(example());
    pi.prompt("Search the product documentation for the rate limits");
    let n = pi.branch.ledger_entries();
    pi.session
        .settings_changed(SettingsRead::Unreadable, ProjectRead::Unreadable);
    assert!(pi.session.filtering_on());
    pi.prompt("Now render a bar chart of this CSV");
    assert_eq!(pi.branch.ledger_entries(), n, "nothing added");
    assert!(pi.call("bar_chart").is_some(), "still enforced");
}

#[test]
fn unreadable_branch_writes_nothing_and_only_lets_internal_and_allowlisted_through() {
    let mut s = embedded_tools_settings();
    s.tools.always_allowed_tools = vec![parse_tool_entry("notes_add").unwrap()];
    let mut pi = Pi::start(s, ScopedAllowlist::default());
    pi.session.branch_moved(BranchRead::Unreadable);
    let effects = pi.prompt("Search the docs");
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(pi.call("read"), None);
    assert_eq!(pi.call("notes_add"), None);
    let reason = pi.call("mcp__docs__search").expect("blocked");
    assert!(reason.contains("session branch cannot be read"), "{reason}");
}

#[test]
fn resource_tools_are_routed_and_listing_all_is_blocked() {
    let mut pi = Pi::start(
        settings(true, DecisionProvider::Embedded, Mode::Mcp, Cadence::Prompt),
        ScopedAllowlist::default(),
    );
    pi.prompt("Search the product documentation for the rate limits");
    assert!(pi.call_resource("list_mcp_resources", None).is_some());
    assert!(pi
        .call_resource("list_mcp_resources", Some(Ok("  ".into())))
        .is_some());
    assert!(pi
        .call_resource("read_mcp_resource", Some(Err(())))
        .is_some());
    let docs_available = pi.call("mcp__docs__search").is_none();
    assert_eq!(
        pi.call_resource("read_mcp_resource", Some(Ok("docs".into())))
            .is_none(),
        docs_available
    );
}

#[test]
fn initial_cadence_picks_once_and_scores_late_arrivals_against_the_first_prompt() {
    let s = settings(
        true,
        DecisionProvider::Embedded,
        Mode::Tools,
        Cadence::Initial,
    );
    let mut pi = Pi::start(s.clone(), ScopedAllowlist::default());
    pi.prompt("What is the weather forecast in Lisbon tomorrow?");
    pi.branch.assistant("sunny");
    let n = pi.branch.ledger_entries();
    // A second prompt about something else picks nothing new.
    pi.prompt("Render a bar chart of this CSV");
    assert_eq!(pi.branch.ledger_entries(), n);
    assert!(pi.call("bar_chart").is_some());
    // After /reload a late arrival is scored against the first prompt, found again on the branch.
    pi.reload(s);
    pi.tools.push(ToolInfo::new(
        "forecast_weather",
        "Get the weather forecast for a city.",
        None,
    ));
    pi.tools.push(ToolInfo::new(
        "convert_currency",
        "Convert an amount between currencies.",
        None,
    ));
    pi.prompt("and now something unrelated: convert 10 euros to dollars");
    assert_eq!(
        pi.call("forecast_weather"),
        None,
        "relevant to the first prompt"
    );
    assert!(
        pi.call("convert_currency").is_some(),
        "scored against the first prompt only"
    );
}

/// The example inventory without its MCP servers and its db, jira, deploy and web tools: fewer
/// than 10 external tools, in a handful of groups.
fn small_example() -> Vec<ToolInfo> {
    example()
        .into_iter()
        .filter(|t| {
            !t.name.starts_with("mcp__")
                && !t.name.starts_with("db_")
                && !t.name.starts_with("jira")
                && !t.name.starts_with("deploy")
                && !t.name.starts_with("web")
        })
        .collect()
}

#[test]
fn minimum_candidates_leaves_a_small_inventory_unscored() {
    let tools = small_example();
    let candidates = external(&tools).len();
    assert!(candidates < 10, "{candidates}");
    let mut pi = Pi::embedded_prompt_tools(tools);
    pi.prompt("Render a bar chart of this CSV");
    for tool in external(&pi.tools) {
        assert_eq!(pi.call(&tool), None, "{tool}");
    }
}

/// Issue 34, item 6: `decision.minimumCandidates` not set means 10 tools in tools mode but 2
/// groups in group mode, so the same small setup (fewer than 10 tools, a handful of groups) is
/// left unscored in tools mode and decided in group mode; a file that names 10 still means 10
/// in group mode too.
#[test]
fn group_mode_decides_a_handful_of_groups_by_default() {
    let tools = small_example();
    assert!(external(&tools).len() < 10);
    let run = |minimum: Option<u32>| {
        let mut s = settings(true, DecisionProvider::Embedded, Mode::Mcp, Cadence::Prompt);
        s.decision.minimum_candidates = minimum;
        let mut pi = Pi::start_with(
            s,
            ScopedAllowlist::default(),
            Branch::default(),
            tools.clone(),
        );
        pi.prompt("Render a bar chart of this CSV");
        external(&pi.tools)
            .into_iter()
            .filter(|t| pi.call(t).is_some())
            .count()
    };
    let groups = {
        let classifier = pcd_model::Classifier::default();
        let keys: std::collections::BTreeSet<_> = tools
            .iter()
            .filter_map(|t| classifier.classify(t).group.map(|g| g.key))
            .collect();
        keys.len()
    };
    assert!((2..10).contains(&groups), "{groups}");
    assert!(
        run(None) > 0,
        "decided: the groups the prompt does not need are withheld"
    );
    assert_eq!(run(Some(10)), 0, "the old value as set: nothing scored");
}

#[test]
fn group_mode_switches_servers_and_extensions_as_a_whole() {
    let mut s = settings(true, DecisionProvider::Embedded, Mode::Mcp, Cadence::Prompt);
    s.decision.minimum_candidates = Some(1);
    s.tools.always_allowed_tools = vec![parse_tool_entry("web_fetch").unwrap()];
    let mut pi = Pi::start(s, ScopedAllowlist::default());
    pi.prompt("Search the incidents of the checkout service");
    // A pinned tool promotes its whole (single-scope) group.
    assert_eq!(pi.call("web_search"), None);
    // Groups are decided as a whole: both tools of a group share one verdict.
    assert_eq!(
        pi.call("bar_chart").is_none(),
        pi.call("bar_table").is_none()
    );
    assert_eq!(
        pi.call("mcp__dev_radius__get_incident").is_none(),
        pi.call("mcp__dev_radius__list_services").is_none()
    );
    // A tool with no usable provenance name is left alone in group mode.
    assert_eq!(pi.call("weather_now"), None);
    // An SDK host tool (`<sdk:calculator>`) is a group of its own and decided like any other
    // (issue 30, item 7): this prompt does not need it.
    assert!(pi.call("calculator").is_some());
}

#[test]
fn enabling_mid_session_keeps_what_the_model_may_have_seen() {
    let mut branch = Branch::default();
    branch.user("hello");
    branch.assistant("hi");
    let mut pi = Pi::start_with(
        embedded_tools_settings(),
        ScopedAllowlist::default(),
        branch,
        example(),
    );
    pi.prompt("Search the docs");
    for tool in external(&pi.tools) {
        assert_eq!(
            pi.call(&tool),
            None,
            "{tool} was registered before filtering began"
        );
    }
    pi.tools.push(ToolInfo::new(
        "brand_new",
        "A tool registered after filtering began.",
        None,
    ));
    pi.boundary(BoundaryKind::ToolRound);
    assert!(
        pi.call("brand_new").is_some(),
        "irrelevant and registered later: scored and withheld"
    );
}

/// The example inventory plus `secret_probe`, an MCP tool with `secret` planted in every field no
/// decision request may carry (a schema default, its title, the namespace's instructions, its
/// source paths).
fn example_with_secret(secret: &str) -> Vec<ToolInfo> {
    let mut tools = example();
    let raw = serde_json::to_string(&json!([{
        "name": "secret_probe",
        "description": "Search the incidents",
        "parameters": {"type": "object", "properties": {"token": {"type": "string", "default": secret}}},
        "annotations": {"title": secret},
        "namespace": {"name": "mcp__probe", "instructions": secret, "description": "probe"},
        "sourceInfo": {"path": format!("/home/{secret}/x.ts"), "source": "auto", "scope": "user", "baseDir": format!("/{secret}")}
    }]))
    .unwrap();
    tools.extend(pcd_model::parse_inventory(&raw).unwrap().tools);
    tools
}

#[test]
fn nothing_secret_reaches_any_effect() {
    let secret = "sk-live-PLANTED-7f3a";
    let tools = example_with_secret(secret);
    let mut pi = Pi::embedded_prompt_tools(tools);
    let mut all = pi.prompt("Search the incidents");
    all.extend(
        pi.session
            .tool_call(&ToolCallEvent {
                tool: "secret_probe".into(),
                server: Some(Ok(secret.into())),
            })
            .effects,
    );
    let reason = pi.call("bar_chart").unwrap_or_default();
    let text = format!("{all:?}{reason}{:?}", pi.branch.entries);
    assert!(!text.contains(secret), "a planted secret leaked");
}

#[test]
fn project_scope_origins_come_from_the_captured_config() {
    // A built-in MCP server defined in the project file is pinned by the project list.
    let (mut session, _) = Session::start(StartEvent {
        reason: StartReason::Startup,
        nonce: "x".into(),
        settings: SettingsRead::Read(settings(
            true,
            DecisionProvider::Embedded,
            Mode::Mcp,
            Cadence::Prompt,
        )),
        project: ProjectRead::Read(ScopedAllowlist {
            tools: vec![],
            groups: vec![pcd_model::parse_group_entry("docs").unwrap()],
        }),
        mcp_origins: vec![
            ("docs".into(), Scope::Project),
            ("dev-radius".into(), Scope::Global),
        ],
        branch: BranchRead::Entries(vec![]),
    });
    session.boundary(BoundaryEvent {
        kind: BoundaryKind::Prompt {
            text: Some("Render a bar chart".into()),
        },
        inventory: InventoryRead::Tools(example()),
        active: vec![],
    });
    assert!(session.is_allowed("mcp__docs__search"));
    assert!(session.is_allowed("mcp__docs__get_page"));
}

#[test]
fn tool_round_cadence_tops_up_from_cached_scores_without_a_model_call() {
    let mut s = settings(
        true,
        DecisionProvider::Embedded,
        Mode::Tools,
        Cadence::ToolRound,
    );
    s.decision.max_new_tools = 1;
    let mut pi = Pi::start(s, ScopedAllowlist::default());
    pi.prompt("Search the incidents of the checkout service and page the on-call engineer");
    let (state, _) = pcd_ledger::fold(&pi.branch.entries);
    let first: Vec<String> = state.available_tools().map(str::to_owned).collect();
    assert_eq!(first.len(), 1, "the cap of one: {first:?}");
    // Both dev-radius tools scored at or above the threshold for this prompt (see the pick
    // example in the README); the one cut by the cap is added after the tool round.
    pi.boundary(BoundaryKind::ToolRound);
    let (state, _) = pcd_ledger::fold(&pi.branch.entries);
    let after: Vec<&str> = state.available_tools().collect();
    assert_eq!(after.len(), 2, "{after:?}");
    for name in [
        "mcp__dev_radius__page_oncall",
        "mcp__dev_radius__search_incidents",
    ] {
        assert!(after.contains(&name), "{after:?}");
    }
    let last = state.rounds().last().unwrap();
    assert_eq!(last.boundary, pcd_ledger::Boundary::ToolRound);
    // Nothing below the threshold is ever added, however many tool rounds follow.
    let n = pi.branch.ledger_entries();
    pi.boundary(BoundaryKind::ToolRound);
    pi.boundary(BoundaryKind::ToolRound);
    assert_eq!(pi.branch.ledger_entries(), n);
    // In `prompt` cadence a tool round adds nothing.
    let mut s = embedded_tools_settings();
    s.decision.max_new_tools = 1;
    let mut pi = Pi::start(s, ScopedAllowlist::default());
    pi.prompt("Search the incidents of the checkout service and page the on-call engineer");
    let n = pi.branch.ledger_entries();
    pi.boundary(BoundaryKind::ToolRound);
    assert_eq!(pi.branch.ledger_entries(), n);
}

#[test]
fn a_branch_move_follows_the_ledger_of_the_new_branch() {
    let mut pi = Pi::embedded_prompt_tools(example());
    pi.prompt("What is the weather forecast for Lisbon tomorrow?");
    let fork_point = pi.branch.clone();
    pi.prompt("Query the development database schema and run a read-only SQL query");
    assert_eq!(pi.call("db_query"), None);
    // `/tree` back to before the second prompt: what that prompt added is not on this branch.
    pi.branch = fork_point;
    pi.session
        .branch_moved(BranchRead::Entries(pi.branch.entries.clone()));
    pi.boundary(BoundaryKind::Reconcile);
    assert!(
        pi.call("db_query").is_some(),
        "not available on this branch"
    );
    assert!(!pi.active.contains(&"db_query".to_owned()));
}

#[test]
fn an_unreadable_registry_keeps_the_last_snapshot_and_blocks_the_unknown() {
    let mut pi = Pi::embedded_prompt_tools(example());
    pi.prompt("Search the product documentation for the rate limits");
    // getAllTools() throws from now on; the host passes nothing.
    let effects = pi.session.boundary(BoundaryEvent {
        kind: BoundaryKind::ToolRound,
        inventory: InventoryRead::Unreadable,
        active: pi.active.clone(),
    });
    assert!(effects.iter().all(|e| !matches!(e, Effect::AppendEntry(_))));
    assert_eq!(pi.call("read"), None, "verified internal tools pass");
    assert!(
        pi.call("bar_chart").is_some(),
        "known external tools follow the ledger"
    );
    let unknown = pi.session.tool_call_with(
        &ToolCallEvent {
            tool: "registered_meanwhile".into(),
            server: None,
        },
        Some(InventoryRead::Unreadable),
    );
    assert!(unknown.block.unwrap().contains("not in Pi's tool registry"));
    // With no snapshot at all, every call is blocked.
    let (mut fresh, _) = Session::start(StartEvent {
        reason: StartReason::Startup,
        nonce: "x".into(),
        settings: SettingsRead::Read(embedded_tools_settings()),
        project: ProjectRead::Absent,
        mcp_origins: vec![],
        branch: BranchRead::Entries(vec![]),
    });
    let out = fresh.tool_call_with(
        &ToolCallEvent {
            tool: "read".into(),
            server: None,
        },
        Some(InventoryRead::Unreadable),
    );
    assert!(out.block.unwrap().contains("cannot be read"));
}

#[test]
fn a_misconfigured_model_adds_nothing_and_says_so() {
    let mut s = settings(true, DecisionProvider::Pi, Mode::Tools, Cadence::Prompt);
    s.decision.model = Some("nowhere/none".into());
    s.decision.fail_mode = pcd_model::FailMode::Open;
    let mut pi = Pi::start(s, ScopedAllowlist::default());
    let effects = pi.prompt("Search the docs");
    let job = effects
        .iter()
        .find_map(|e| match e {
            Effect::Decide(job) => Some(job.clone()),
            _ => None,
        })
        .expect("a job for the host's model");
    // The host cannot find the model: a configuration error.
    let answers = job
        .requests
        .iter()
        .map(|_| Err(context_decisions::session::ModelError::Configuration))
        .collect();
    let effects = pi.session.decided(job.id, answers, &pi.active.clone());
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Warn(w) if w.contains("not set up correctly"))),
        "{effects:?}"
    );
    pi.branch.apply(&effects);
    assert_eq!(
        pi.branch.granting_entries(),
        0,
        "a configuration error adds nothing, even with failMode open"
    );
    assert!(!pi.session.is_allowed("mcp__docs__search"));
}

#[test]
fn mixed_scope_groups_are_never_promoted_as_a_whole() {
    // `notes` exists as a user extension and as a project extension with the same name.
    let mut tools = example();
    let raw = serde_json::to_string(&json!([{
        "name": "notes_project_only",
        "description": "A project notebook tool.",
        "sourceInfo": {"path": "/w/.pi/extensions/notes.ts", "source": "auto", "scope": "project", "origin": "top-level"}
    }]))
    .unwrap();
    tools.extend(pcd_model::parse_inventory(&raw).unwrap().tools);
    let mut s = settings(true, DecisionProvider::Embedded, Mode::Mcp, Cadence::Prompt);
    s.decision.minimum_candidates = Some(1);
    s.tools.always_allowed_tools = vec![parse_tool_entry("notes_add").unwrap()];
    let mut pi = Pi::start_with(s, ScopedAllowlist::default(), Branch::default(), tools);
    pi.prompt("Render a bar chart of this CSV");
    assert_eq!(pi.call("notes_add"), None, "pinned by name in its scope");
    let reason = pi
        .call("notes_project_only")
        .expect("an opposite-scope sibling is not promoted");
    assert!(
        reason.contains("project *Always allowed tools*"),
        "{reason}"
    );
}

/// A decision model outside the Session (HTTP, or one of Pi's): the host answers the jobs.
fn pi_model_settings(mode: Mode) -> Settings {
    let mut s = settings(true, DecisionProvider::Pi, mode, Cadence::Prompt);
    s.decision.model = Some("faux/decider".into());
    s
}

fn jobs(effects: &[Effect]) -> Vec<context_decisions::session::DecisionJob> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Decide(job) => Some(job.clone()),
            _ => None,
        })
        .collect()
}

/// The answer a model would give: `score` for the candidates whose names contain `hit`, 0 for
/// the others (the request body is the JSON document the model reads).
fn answer(request: &str, hit: &str, score: f64) -> String {
    let body: serde_json::Value = serde_json::from_str(request).unwrap();
    let scores: Vec<serde_json::Value> = body["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let matches = c.to_string().contains(hit);
            json!({"id": c["id"], "score": if matches { score } else { 0.0 }})
        })
        .collect();
    json!({ "scores": scores }).to_string()
}

#[test]
fn a_model_outside_the_session_answers_jobs_and_the_round_commits() {
    let mut pi = Pi::start(pi_model_settings(Mode::Tools), ScopedAllowlist::default());
    let effects = pi.prompt("Render a bar chart of this CSV");
    let jobs = jobs(&effects);
    assert_eq!(jobs.len(), 1, "{effects:?}");
    assert!(
        pi.branch.granting_entries() == 0,
        "nothing is committed before the answers"
    );
    let job = &jobs[0];
    assert!(job.instructions.contains("data"));
    assert!(
        job.requests.iter().all(|r| !r.contains("/home/dev")),
        "no paths in requests"
    );
    let answers = job
        .requests
        .iter()
        .map(|r| Ok(answer(r, "bar_chart", 0.9)))
        .collect();
    let effects = pi.session.decided(job.id, answers, &pi.active.clone());
    pi.branch.apply(&effects);
    for e in &effects {
        if let Effect::SetActiveTools(names) = e {
            pi.active = names.clone();
        }
    }
    assert!(effects.iter().any(|e| matches!(e, Effect::Notice(_))));
    assert_eq!(pi.call("bar_chart"), None);
    assert!(pi.call("web_fetch").is_some());
    assert!(pi.active.contains(&"bar_chart".to_owned()));
}

#[test]
fn a_superseded_failed_or_cancelled_job_commits_nothing() {
    // Superseded by a settings save while the model was answering.
    let mut pi = Pi::start(pi_model_settings(Mode::Tools), ScopedAllowlist::default());
    let job = jobs(&pi.prompt("Render a bar chart of this CSV")).remove(0);
    let mut saved = pi_model_settings(Mode::Tools);
    saved.decision.threshold = 0.5;
    pi.session
        .settings_changed(SettingsRead::Read(saved), ProjectRead::Absent);
    let answers = job
        .requests
        .iter()
        .map(|r| Ok(answer(r, "bar_chart", 0.9)))
        .collect();
    let effects = pi.session.decided(job.id, answers, &[]);
    assert!(
        effects.iter().all(|e| !matches!(e, Effect::AppendEntry(_))),
        "{effects:?}"
    );
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::Warn(w) if w.contains("replaced this decision"))));
    // Failed, fail closed.
    let mut pi = Pi::start(pi_model_settings(Mode::Tools), ScopedAllowlist::default());
    let job = jobs(&pi.prompt("Render a bar chart of this CSV")).remove(0);
    let answers = job
        .requests
        .iter()
        .map(|_| Err(context_decisions::session::ModelError::Unavailable))
        .collect();
    let effects = pi.session.decided(job.id, answers, &[]);
    assert!(effects.iter().all(|e| !matches!(e, Effect::AppendEntry(_))));
    // Failed with failMode open: the remaining candidates are added.
    let mut s = pi_model_settings(Mode::Tools);
    s.decision.fail_mode = pcd_model::FailMode::Open;
    let mut pi = Pi::start(s.clone(), ScopedAllowlist::default());
    let job = jobs(&pi.prompt("Render a bar chart of this CSV")).remove(0);
    let answers = job
        .requests
        .iter()
        .map(|_| Err(context_decisions::session::ModelError::Unavailable))
        .collect();
    let effects = pi.session.decided(job.id, answers, &[]);
    pi.branch.apply(&effects);
    assert_eq!(pi.call("web_fetch"), None, "fail open adds what was left");
    // ... but never after a configuration error or a cancellation.
    for error in [
        context_decisions::session::ModelError::Configuration,
        context_decisions::session::ModelError::Cancelled,
    ] {
        let mut pi = Pi::start(s.clone(), ScopedAllowlist::default());
        let job = jobs(&pi.prompt("Render a bar chart of this CSV")).remove(0);
        let answers = job.requests.iter().map(|_| Err(error)).collect();
        let effects = pi.session.decided(job.id, answers, &[]);
        assert!(
            effects.iter().all(|e| !matches!(e, Effect::AppendEntry(_))),
            "{error:?}"
        );
    }
}

#[test]
fn a_first_call_waits_for_one_job_shared_by_parallel_calls() {
    let mut pi = Pi::start(pi_model_settings(Mode::Tools), ScopedAllowlist::default());
    let job = jobs(&pi.prompt("Render a bar chart of this CSV")).remove(0);
    let answers = job
        .requests
        .iter()
        .map(|r| Ok(answer(r, "bar_chart", 0.9)))
        .collect();
    let effects = pi.session.decided(job.id, answers, &[]);
    pi.branch.apply(&effects);
    pi.tools.push(ToolInfo::new(
        "chart_pie",
        "Render a pie chart from CSV data.",
        None,
    ));
    pi.session
        .refresh_inventory(InventoryRead::Tools(pi.tools.clone()));
    let call = ToolCallEvent {
        tool: "chart_pie".into(),
        server: None,
    };
    let first = pi.session.tool_call(&call);
    let second = pi.session.tool_call(&call);
    let (a, b) = (first.pending.unwrap(), second.pending.unwrap());
    assert_eq!(a.id, b.id, "one request shared by parallel calls");
    assert!(first.block.is_none());
    let answers = a
        .requests
        .iter()
        .map(|r| Ok(answer(r, "chart_pie", 0.95)))
        .collect();
    let effects = pi.session.decided(a.id, answers, &[]);
    pi.branch.apply(&effects);
    assert_eq!(pi.session.tool_call(&call).block, None);
    assert_eq!(pi.session.pending_jobs(), 0);
}

#[test]
fn decisions_test_asks_the_selected_model_one_small_question() {
    let mut pi = Pi::embedded_prompt_tools(example());
    let text = pi.session.decision_test().unwrap();
    assert!(
        text.contains("the built-in scorer answered") && text.contains("at the threshold 0.625"),
        "{text}"
    );
    // The settings as saved now, not as of the last prompt: a threshold lowered meanwhile lets
    // the forecast tool in (the chart tool shares no word with the question and scores 0).
    let mut saved = pi.session.settings().clone();
    saved.decision.threshold = 0.05;
    pi.session
        .settings_changed(SettingsRead::Read(saved.clone()), ProjectRead::Absent);
    let text = pi.session.decision_test().unwrap();
    assert!(
        text.contains(
            "at the threshold 0.05, the forecast tool would be made available and the chart \
             tool withheld"
        ),
        "{text}"
    );
    saved.decision.max_new_tools = 0;
    pi.session
        .settings_changed(SettingsRead::Read(saved), ProjectRead::Absent);
    let text = pi.session.decision_test().unwrap();
    assert!(text.contains("a cap of 0 new per round"), "{text}");
    let mut pi = Pi::start(Settings::default(), ScopedAllowlist::default());
    assert!(pi
        .session
        .decision_test()
        .unwrap()
        .contains("no decision model is selected"));
    // A model outside the Session: a job, answered by the host.
    let mut pi = Pi::start(pi_model_settings(Mode::Tools), ScopedAllowlist::default());
    let job = pi.session.decision_test().unwrap_err();
    let good = pi
        .session
        .test_decided(job.id, vec![Ok(answer(&job.requests[0], "forecast", 0.8))]);
    assert!(
        good.contains(
            "scored 0.80 for a forecast tool and 0.00 for a chart tool: at the threshold 0.625, \
             the forecast tool would be made available and the chart tool withheld"
        ),
        "{good}"
    );
    // A relevant score below the threshold is no success (issue 15: 0.46 was reported as one).
    let job = pi.session.decision_test().unwrap_err();
    let weak = pi
        .session
        .test_decided(job.id, vec![Ok(answer(&job.requests[0], "forecast", 0.46))]);
    assert!(
        weak.contains("the forecast tool would not be made available (0.1"),
        "{weak}"
    );
    let job = pi.session.decision_test().unwrap_err();
    let bad = pi
        .session
        .test_decided(job.id, vec![Ok("I think the first one".into())]);
    assert!(bad.contains("not with a score for each tool"), "{bad}");
    let job = pi.session.decision_test().unwrap_err();
    let down = pi.session.test_decided(
        job.id,
        vec![Err(context_decisions::session::ModelError::Unavailable)],
    );
    assert!(down.contains("did not answer"), "{down}");
    assert_eq!(pi.branch.ledger_entries(), 0, "a test records nothing");
}

#[test]
fn switching_off_and_on_again_keeps_what_the_model_saw_meanwhile() {
    let on = embedded_tools_settings();
    let mut pi = Pi::start(on.clone(), ScopedAllowlist::default());
    pi.prompt("What is the weather forecast for Lisbon tomorrow?");
    assert!(pi.call("bar_chart").is_some());
    // Off: every tool comes back and the model sees them all.
    pi.session
        .settings_changed(SettingsRead::Read(Settings::default()), ProjectRead::Absent);
    pi.prompt("Render a bar chart");
    assert!(pi.active.contains(&"bar_chart".to_owned()));
    // On again, mid-session: what the model may have seen stays available.
    pi.session
        .settings_changed(SettingsRead::Read(on), ProjectRead::Absent);
    pi.prompt("Now something else entirely");
    assert_eq!(pi.call("bar_chart"), None);
    assert!(pi.active.contains(&"bar_chart".to_owned()));
}

#[test]
fn reading_unchanged_settings_again_supersedes_nothing() {
    let mut pi = Pi::start(pi_model_settings(Mode::Tools), ScopedAllowlist::default());
    let job = jobs(&pi.prompt("Render a bar chart of this CSV")).remove(0);
    let generation = pi.session.generation();
    pi.session.settings_changed(
        SettingsRead::Read(pi_model_settings(Mode::Tools)),
        ProjectRead::Absent,
    );
    assert_eq!(
        pi.session.generation(),
        generation,
        "the same settings read again"
    );
    let answers = job
        .requests
        .iter()
        .map(|r| Ok(answer(r, "bar_chart", 0.9)))
        .collect();
    let effects = pi.session.decided(job.id, answers, &[]);
    assert!(
        effects.iter().any(|e| matches!(e, Effect::AppendEntry(_))),
        "{effects:?}"
    );
    // A real change (the mode) supersedes.
    let job = jobs(&pi.prompt("Render a bar table")).remove(0);
    pi.session.settings_changed(
        SettingsRead::Read(pi_model_settings(Mode::Mcp)),
        ProjectRead::Absent,
    );
    assert!(pi.session.generation() > generation);
    let answers = job
        .requests
        .iter()
        .map(|r| Ok(answer(r, "bar_table", 0.9)))
        .collect();
    let effects = pi.session.decided(job.id, answers, &[]);
    assert!(effects.iter().all(|e| !matches!(e, Effect::AppendEntry(_))));
}

/// The example inventory with `n` more tools, so that a round's lists exceed 1000 names and
/// the round is recorded in several parts.
fn bulk_inventory(n: usize) -> Vec<ToolInfo> {
    let mut tools = example();
    tools.extend((0..n).map(|i| {
        ToolInfo::new(
            &format!("filler_{i}"),
            &format!("Keeps record number {i} of the archive"),
            None,
        )
    }));
    tools
}

/// Tools that arrive after the first prompt (a server connecting late), with the chart tools
/// among many others.
fn late_arrivals(n: usize) -> Vec<ToolInfo> {
    let mut tools: Vec<ToolInfo> = (0..n)
        .map(|i| {
            ToolInfo::new(
                &format!("late_filler_{i}"),
                &format!("Keeps late record number {i}"),
                None,
            )
        })
        .collect();
    tools.push(ToolInfo::new(
        "pie_chart",
        "Render a pie chart from CSV data.",
        None,
    ));
    tools.push(ToolInfo::new(
        "donut_chart",
        "Render a donut chart from CSV data.",
        None,
    ));
    tools
}

fn appended(effects: &[Effect]) -> Vec<Value> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::AppendEntry(data) => Some(data.clone()),
            _ => None,
        })
        .collect()
}

/// Whether each tool of `tools` may be called, by name.
fn verdicts(session: &mut Session, tools: &[ToolInfo]) -> Vec<(String, bool)> {
    tools
        .iter()
        .map(|t| (t.name.clone(), session.is_allowed(&t.name)))
        .collect()
}

/// A host that crashed while appending a round's parts (Pi wrote the first part, then died),
/// and came back on the same branch with the same session nonce: the torn round grants
/// nothing and is reported, the restarted `Session` enforces exactly what a `Session` on the
/// branch without the torn parts enforces, and the next round works and folds the same way.
#[test]
fn a_round_torn_by_a_crash_grants_nothing_after_a_restart_and_the_next_round_works() {
    let s = embedded_tools_settings();
    for torn_first in [false, true] {
        let mut pi = Pi::start_with(
            s.clone(),
            ScopedAllowlist::default(),
            Branch::default(),
            bulk_inventory(1200),
        );
        if !torn_first {
            let effects = pi.prompt("Search the incidents of the checkout service");
            assert!(appended(&effects).len() >= 2, "a round of several parts");
            pi.branch.assistant("done");
        }
        let old_branch = pi.branch.clone();
        pi.tools.extend(late_arrivals(1100));
        // The round the crash tears: it would make the chart tools available.
        let effects = pi.session.boundary(BoundaryEvent {
            kind: BoundaryKind::Prompt {
                text: Some("Render a pie chart from CSV data".into()),
            },
            inventory: InventoryRead::Tools(pi.tools.clone()),
            active: pi.active.clone(),
        });
        // The pick's parts (a first boundary also records the empty baseline before them).
        let mut parts = appended(&effects);
        let round = parts.last().map(|p| p["round"].clone());
        parts.retain(|p| Some(&p["round"]) == round.as_ref());
        assert!(parts.len() >= 2, "{torn_first}: {} parts", parts.len());
        assert!(
            pi.session.is_allowed("pie_chart"),
            "{torn_first}: the live session had it"
        );
        let mut crashed = old_branch.clone();
        crashed.push(json!({"type": "custom", "customType": CUSTOM_TYPE, "data": parts[0]}));

        // Pi comes back with the same nonce ("t1", as the first start): round ids repeat.
        let mut restarted = Pi::start_with(
            s.clone(),
            ScopedAllowlist::default(),
            crashed.clone(),
            pi.tools.clone(),
        );
        let mut reference = Pi::start_with(
            s.clone(),
            ScopedAllowlist::default(),
            old_branch.clone(),
            pi.tools.clone(),
        );
        let codes: Vec<_> = restarted
            .session
            .findings()
            .iter()
            .map(|f| f.code)
            .collect();
        assert_eq!(
            codes,
            [pcd_model::AuditFindingCode::InterruptedRound],
            "{torn_first}"
        );
        assert!(reference.session.findings().is_empty());
        assert_eq!(restarted.session.branch(), reference.session.branch());
        restarted.boundary(BoundaryKind::Reconcile);
        reference.boundary(BoundaryKind::Reconcile);
        let tools = pi.tools.clone();
        assert_eq!(
            verdicts(&mut restarted.session, &tools),
            verdicts(&mut reference.session, &tools),
            "{torn_first}: exactly the old state"
        );
        assert_eq!(restarted.active, reference.active, "{torn_first}");
        assert!(!restarted.session.is_allowed("pie_chart"));
        assert!(restarted.call("pie_chart").is_some(), "blocked");

        // The next round is whole, is applied, and folds from the branch as it was applied
        // live.
        let effects = restarted.prompt("Render a pie chart from CSV data");
        assert!(appended(&effects).len() >= 2, "{torn_first}");
        assert_eq!(restarted.call("pie_chart"), None, "{torn_first}");
        let (state, findings) = pcd_ledger::fold(&restarted.branch.entries);
        assert_eq!(findings.len(), 1, "{torn_first}: only the old torn round");
        assert!(state.is_tool_available("pie_chart"));
        let mut again = Pi::start_with(
            s.clone(),
            ScopedAllowlist::default(),
            restarted.branch.clone(),
            pi.tools.clone(),
        );
        again.boundary(BoundaryKind::Reconcile);
        assert_eq!(
            verdicts(&mut again.session, &tools),
            verdicts(&mut restarted.session, &tools),
            "{torn_first}: the live state and the replayed one agree"
        );
    }
}

/// A crash while Pi was writing a ledger entry's line to the session file: the file ends in a
/// torn line. Resuming from the file, the torn line is reported and ignored, the round it
/// belonged to is torn and grants nothing, and everything before it is intact.
#[test]
fn a_torn_last_line_of_the_session_file_is_ignored_and_the_state_before_it_holds() {
    let s = embedded_tools_settings();
    let mut pi = Pi::start_with(
        s.clone(),
        ScopedAllowlist::default(),
        Branch::default(),
        bulk_inventory(1200),
    );
    pi.prompt("Search the incidents of the checkout service");
    pi.branch.assistant("done");
    let old_branch = pi.branch.clone();
    pi.tools.extend(late_arrivals(10));
    let effects = pi.prompt("Render a pie chart from CSV data");
    assert!(appended(&effects).len() >= 2);
    // The file as Pi writes it: a header, then one JSON line per entry. The crash cut the
    // last ledger line (the round's last part) in the middle; nothing came after it.
    let last_part = pi
        .branch
        .entries
        .iter()
        .rposition(|e| e["customType"] == CUSTOM_TYPE)
        .unwrap();
    let mut file = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"crash-1\",\"timestamp\":\"2026-11-29T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
    );
    for entry in &pi.branch.entries[..last_part] {
        file.push_str(&entry.to_string());
        file.push('\n');
    }
    let line = pi.branch.entries[last_part].to_string();
    file.push_str(&line[..line.len() / 2]);

    let mut session_file =
        pcd_ledger::SessionFile::from_reader(std::io::Cursor::new(file.into_bytes())).unwrap();
    assert!(session_file.truncated_tail(), "the torn line is reported");
    assert!(
        session_file.problems().is_empty(),
        "and it is not malformed"
    );
    let branch = session_file.branch_for(None).unwrap();
    let replay = session_file.fold_branch(&branch).unwrap();
    let codes: Vec<_> = replay.findings.iter().map(|f| f.code).collect();
    assert_eq!(codes, [pcd_model::AuditFindingCode::InterruptedRound]);
    assert!(!replay.state.is_tool_available("pie_chart"));
    let entries = session_file.read_branch(&branch).unwrap();

    let mut resumed = Pi::start_with(
        s.clone(),
        ScopedAllowlist::default(),
        Branch { entries },
        pi.tools.clone(),
    );
    let mut reference = Pi::start_with(
        s.clone(),
        ScopedAllowlist::default(),
        old_branch,
        pi.tools.clone(),
    );
    assert_eq!(resumed.session.branch(), Some(&replay.state));
    assert_eq!(resumed.session.branch(), reference.session.branch());
    resumed.boundary(BoundaryKind::Reconcile);
    reference.boundary(BoundaryKind::Reconcile);
    let tools = pi.tools.clone();
    assert_eq!(
        verdicts(&mut resumed.session, &tools),
        verdicts(&mut reference.session, &tools)
    );
    assert!(resumed.call("pie_chart").is_some());
}

/// Pi refuses to append a round's entries (it throws, short of a crash): the round grants
/// nothing, because availability is what the branch records, and the person is told. The
/// refold supersedes nothing that was already recorded, and the next prompt decides again.
#[test]
fn a_round_pi_could_not_append_grants_nothing_and_the_next_prompt_decides_again() {
    let s = embedded_tools_settings();
    let prompt = "Search the incidents of the checkout service and page the on-call engineer";
    let mut pi = Pi::start(s, ScopedAllowlist::default());
    pi.boundary(BoundaryKind::Reconcile);
    let before = pi.branch.clone();
    // The host runs the boundary but none of its entries reach the branch.
    let effects = pi.session.boundary(BoundaryEvent {
        kind: BoundaryKind::Prompt {
            text: Some(prompt.into()),
        },
        inventory: InventoryRead::Tools(pi.tools.clone()),
        active: pi.active.clone(),
    });
    assert!(!appended(&effects).is_empty());
    assert!(
        pi.session.is_allowed("mcp__dev_radius__page_oncall"),
        "the live round had it"
    );
    let warned = pi
        .session
        .append_failed(BranchRead::Entries(before.entries.clone()));
    assert!(
        matches!(&warned[..], [Effect::Warn(t), Effect::Notice(n)]
            if t.contains("could not be written") && !n.contains("page_oncall")),
        "{warned:?}"
    );
    assert!(!pi.session.is_allowed("mcp__dev_radius__page_oncall"));
    // The reconcile the host runs next withholds it again from the active set.
    pi.boundary(BoundaryKind::Reconcile);
    assert!(!pi
        .active
        .iter()
        .any(|n| n == "mcp__dev_radius__page_oncall"));
    // Nobody has a recorded score for it now, so a call scores it lazily, and this time the
    // branch records it.
    let entries = pi.branch.ledger_entries();
    assert!(pi.call("mcp__dev_radius__page_oncall").is_none());
    assert!(pi.branch.ledger_entries() > entries);
    assert!(pi.session.is_allowed("mcp__dev_radius__page_oncall"));
}

/// A branch whose first pick failed holds messages but no granting round. After a reload it must
/// not look like a branch where filtering was switched on mid-session (which keeps everything the
/// model may have seen): the empty baseline recorded when filtering first applied says the model
/// has seen nothing filtered away.
#[test]
fn a_failed_first_pick_grants_nothing_after_a_reload() {
    let s = pi_model_settings(Mode::Tools);
    let mut pi = Pi::start(s.clone(), ScopedAllowlist::default());
    pi.boundary(BoundaryKind::Reconcile);
    let effects = pi.prompt("Render a bar chart of this CSV");
    let job = jobs(&effects).remove(0);
    let answers = job
        .requests
        .iter()
        .map(|_| Err(context_decisions::session::ModelError::Unavailable))
        .collect();
    let effects = pi.session.decided(job.id, answers, &pi.active.clone());
    pi.branch.apply(&effects);
    pi.branch.assistant("I could not render it.");
    assert_eq!(pi.branch.granting_entries(), 0);
    assert!(
        pi.branch.ledger_entries() > 0,
        "the empty baseline is on the branch"
    );

    let mut reloaded = Pi::start_with(
        s,
        ScopedAllowlist::default(),
        pi.branch.clone(),
        pi.tools.clone(),
    );
    reloaded.boundary(BoundaryKind::Reconcile);
    assert_eq!(
        reloaded.branch.granting_entries(),
        0,
        "no baseline of everything"
    );
    for tool in ["bar_chart", "mcp__docs__search", "web_fetch"] {
        if reloaded.tools.iter().any(|t| t.name == tool) {
            assert!(!reloaded.session.is_allowed(tool), "{tool}");
        }
    }
}

/// Another extension's explicit `selectedTools` edit (which Pi applies to the live loadout) wins
/// for its run: a withheld tool it declares is removed again at the next boundary, and a tool
/// this session had declared and the edit dropped is declared again when the next run starts.
#[test]
fn a_selected_tools_edit_wins_for_its_run_only() {
    let s = embedded_tools_settings();
    let mut pi = Pi::start(s, ScopedAllowlist::default());
    pi.boundary(BoundaryKind::Reconcile);
    pi.prompt("Render a bar chart from this CSV data");
    let picked = "bar_chart";
    assert!(pi.active.iter().any(|n| n == picked), "{:?}", pi.active);
    let withheld = pi
        .tools
        .iter()
        .map(|t| t.name.clone())
        .find(|n| !pi.session.is_allowed(n) && n.starts_with("mcp__docs"))
        .expect("a withheld tool");
    // The edit: what the run started with, minus the pick, plus a withheld tool.
    pi.active.retain(|n| n != picked);
    pi.active.push(withheld.clone());
    pi.boundary(BoundaryKind::ToolRound);
    assert!(
        !pi.active.contains(&withheld),
        "removed again at the next boundary"
    );
    assert!(
        !pi.active.iter().any(|n| n == picked),
        "the edit wins for its run"
    );
    pi.branch.assistant("done");
    pi.prompt("And another bar chart");
    assert!(
        pi.active.iter().any(|n| n == picked),
        "declared again at the next run: {:?}",
        pi.active
    );
    assert!(!pi.active.contains(&withheld));
}

/// The adversarial finding "one edited entry grants every tool": a branch whose only round was
/// edited (digest broken), carries an unknown version (`"v"` 0 or 2, as a future release might
/// write), or an extra field that does not decode. Filtering was active there, so no
/// "enabled mid-session" baseline applies; the branch's ledger does not fold, so nothing new is
/// granted on it: boundaries reconcile to what folds and write nothing, the gate enforces what
/// folds plus the allowlists, and the user is told once.
#[test]
fn an_entry_that_does_not_fold_never_widens_and_writes_nothing() {
    let s = embedded_tools_settings();
    let mut pi = Pi::start(s.clone(), ScopedAllowlist::default());
    pi.prompt("Search the incidents of the checkout service and page the on-call engineer");
    pi.branch.assistant("done");
    assert!(
        !pi.session.is_allowed("web_search"),
        "the intact file blocks it"
    );
    let intact = pi.branch.clone();
    type Damage = fn(&mut Value);
    let damages: [(&str, Damage); 4] = [
        ("digest", |d| d["digest"] = json!("0".repeat(64))),
        ("v2", |d| d["v"] = json!(2)),
        ("v0", |d| d["v"] = json!(0)),
        ("extra field", |d| d["grantEverything"] = json!(true)),
    ];
    for (what, damage) in damages {
        let mut branch = intact.clone();
        for entry in &mut branch.entries {
            if entry["customType"] == CUSTOM_TYPE {
                damage(&mut entry["data"]);
            }
        }
        let (_, start_effects) = Session::start(StartEvent {
            reason: StartReason::Resume,
            nonce: "t3".into(),
            settings: SettingsRead::Read(s.clone()),
            project: ProjectRead::Absent,
            mcp_origins: vec![],
            branch: BranchRead::Entries(branch.entries.clone()),
        });
        let warnings: Vec<&String> = start_effects
            .iter()
            .filter_map(|e| match e {
                Effect::Warn(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(warnings.len(), 1, "{what}: told once");
        assert!(warnings[0].contains("adds nothing new"), "{what}");

        let mut again = Pi::start_with(s.clone(), ScopedAllowlist::default(), branch, example());
        assert!(again.session.branch_untrusted(), "{what}");
        let before = again.branch.ledger_entries();
        let effects = again.boundary(BoundaryKind::Reconcile);
        assert!(appended(&effects).is_empty(), "{what}: no baseline");
        let effects = again.prompt("Search the web for the checkout service status page");
        assert!(appended(&effects).is_empty(), "{what}: no decision");
        assert!(
            !effects.iter().any(|e| matches!(e, Effect::Decide(_))),
            "{what}: no model is asked"
        );
        assert_eq!(again.branch.ledger_entries(), before, "{what}");
        for tool in ["web_search", "web_fetch", "page_oncall"] {
            let name = example()
                .into_iter()
                .find(|t| t.name.ends_with(tool))
                .unwrap()
                .name;
            assert!(
                !again.session.is_allowed(&name),
                "{what}: {name} stays withheld"
            );
            assert!(
                again.call(&name).is_some(),
                "{what}: a call to {name} is blocked"
            );
        }
        assert!(
            !again.active.iter().any(|t| t == "web_search"),
            "{what}: reconciled to what folds"
        );
        // Internal tools still pass.
        assert!(again.session.is_allowed("read"), "{what}");
    }
}

fn set_active(effects: &[Effect]) -> Option<&Vec<String>> {
    effects.iter().find_map(|e| match e {
        Effect::SetActiveTools(names) => Some(names),
        _ => None,
    })
}

/// A branch whose first prompt withheld `web_search`, `notes_search` and the other direct tools
/// that do not draw charts, with Pi's active set as that prompt left it.
fn charted() -> Pi {
    let mut pi = Pi::embedded_prompt_tools(example());
    pi.boundary(BoundaryKind::Reconcile);
    pi.prompt("Render a bar chart from this CSV data");
    pi.branch.assistant("done");
    for tool in ["web_search", "notes_search", "db_migrate"] {
        assert!(!pi.active.iter().any(|t| t == tool), "{tool} withheld");
        assert!(!pi.session.is_allowed(tool), "{tool} decided against");
    }
    pi
}

/// Issue 17, item 1: which tools the extension withholds follows from the branch, not from the
/// memory of the process that withheld them. After a resume, a fork or a `/reload`, a tool a
/// decision or a pin makes available is declared at the next boundary, and switching off
/// restores every tool the branch withheld.
#[test]
fn after_a_reopen_what_the_branch_withheld_is_declared_once_available() {
    let on = embedded_tools_settings();
    for reason in [StartReason::Resume, StartReason::Fork, StartReason::Reload] {
        // By a decision.
        let mut pi = charted();
        pi.reopen(reason, on.clone(), ScopedAllowlist::default());
        let effects = pi.prompt("Search the web for the checkout service status page");
        assert!(pi.session.is_allowed("web_search"), "{reason:?}");
        let declared = set_active(&effects).expect("the active set changes");
        assert!(
            declared.iter().any(|t| t == "web_search"),
            "{reason:?}: {declared:?}"
        );

        // By a pin (saved while the session runs).
        let mut pi = charted();
        pi.reopen(reason, on.clone(), ScopedAllowlist::default());
        let mut pinned = on.clone();
        pinned.tools.always_allowed_tools = vec![parse_tool_entry("notes_search").unwrap()];
        pi.session
            .settings_changed(SettingsRead::Read(pinned), ProjectRead::Absent);
        let effects = pi.boundary(BoundaryKind::ToolRound);
        let declared = set_active(&effects).expect("the active set changes");
        assert!(
            declared.iter().any(|t| t == "notes_search"),
            "{reason:?}: {declared:?}"
        );

        // By switching off: every direct tool the branch withheld comes back.
        let mut pi = charted();
        let withheld: Vec<String> = pi
            .tools
            .iter()
            .filter(|t| t.exposure.is_declared() && !pi.active.contains(&t.name))
            .map(|t| t.name.clone())
            .collect();
        assert!(withheld.len() > 5, "{withheld:?}");
        pi.reopen(reason, on.clone(), ScopedAllowlist::default());
        pi.session
            .settings_changed(SettingsRead::Read(Settings::default()), ProjectRead::Absent);
        assert!(pi.session.needs_inventory(), "{reason:?}: read to restore");
        pi.prompt("Thanks");
        for tool in &withheld {
            assert!(pi.active.contains(tool), "{reason:?}: {tool} restored");
        }
        assert!(
            !pi.session.needs_inventory(),
            "{reason:?}: off reads nothing once restored"
        );
        assert_eq!(pi.prompt("And again"), vec![], "{reason:?}");
    }
}

/// Issue 17, item 1: a process started with filtering off on a branch that withheld tools puts
/// them back at its first boundary (Pi replayed the restricted loadout), reading the registry
/// once; a branch that withheld nothing is never read.
#[test]
fn starting_off_on_a_branch_that_withheld_tools_restores_them_once() {
    let mut pi = charted();
    let before = pi.active.len();
    pi.reopen(
        StartReason::Resume,
        Settings::default(),
        ScopedAllowlist::default(),
    );
    assert!(pi.active.len() > before, "restored at session start");
    assert!(pi.active.iter().any(|t| t == "web_search"));
    assert!(!pi.session.needs_inventory());
}

/// Issue 17, item 1, after a `/tree` move: a process that never withheld `web_search` itself
/// moves to a branch whose ledger decided against it (Pi replays that branch's loadout); a pin
/// then declares it at the next boundary.
#[test]
fn after_a_tree_move_a_pin_declares_what_the_other_branch_withheld() {
    let on = embedded_tools_settings();
    let withheld_there = charted();
    // Another branch of the session, where a prompt made `web_search` available.
    let mut pi = Pi::start(on.clone(), ScopedAllowlist::default());
    pi.prompt("Search the web for the checkout service status page");
    pi.branch.assistant("done");
    pi.reopen(StartReason::Resume, on.clone(), ScopedAllowlist::default());
    assert!(pi.active.iter().any(|t| t == "web_search"));
    // `/tree` to the first branch: Pi replays its loadout.
    pi.branch = withheld_there.branch.clone();
    pi.active = withheld_there.active.clone();
    pi.session
        .branch_moved(BranchRead::Entries(pi.branch.entries.clone()));
    pi.boundary(BoundaryKind::Reconcile);
    assert!(!pi.active.iter().any(|t| t == "web_search"));
    let mut pinned = on;
    pinned.tools.always_allowed_tools = vec![parse_tool_entry("web_search").unwrap()];
    pi.session
        .settings_changed(SettingsRead::Read(pinned), ProjectRead::Absent);
    let effects = pi.boundary(BoundaryKind::ToolRound);
    let declared = set_active(&effects).expect("the active set changes");
    assert!(declared.iter().any(|t| t == "web_search"), "{declared:?}");
}

/// Issue 17, item 1: a tool another party deactivated and this extension never decided against
/// (here `bar_chart`, which the branch made available) is never activated by it: not at the next
/// run after a reopen, not when filtering is switched off. Deferred tools the branch decided
/// against are not activated either (Pi never declares them by itself).
#[test]
fn a_tool_another_party_deactivated_is_never_activated_after_a_reopen() {
    let on = embedded_tools_settings();
    let mut pi = charted();
    assert!(pi.active.iter().any(|t| t == "bar_chart"));
    pi.active.retain(|t| t != "bar_chart");
    pi.reopen(StartReason::Resume, on, ScopedAllowlist::default());
    pi.prompt("Render another bar chart");
    assert!(pi.session.is_allowed("bar_chart"));
    assert!(
        !pi.active.iter().any(|t| t == "bar_chart"),
        "{:?}",
        pi.active
    );
    pi.session
        .settings_changed(SettingsRead::Read(Settings::default()), ProjectRead::Absent);
    pi.prompt("Thanks");
    assert!(pi.active.iter().any(|t| t == "web_search"), "restored");
    assert!(
        !pi.active.iter().any(|t| t == "bar_chart"),
        "{:?}",
        pi.active
    );
    assert!(!pi.active.iter().any(|t| t.starts_with("mcp__dev_radius__")));
}

/// The `data` of the appended ledger entries, without what differs per round (its id and its
/// digest), for comparing what two rounds record.
fn recorded(effects: &[Effect]) -> Vec<Value> {
    appended(effects)
        .into_iter()
        .map(|mut d| {
            let o = d.as_object_mut().unwrap();
            o.remove("round");
            o.remove("digest");
            d
        })
        .collect()
}

fn mcp_pinned(tool: Option<&str>, group: Option<&str>) -> Settings {
    let mut s = settings(true, DecisionProvider::Embedded, Mode::Mcp, Cadence::Prompt);
    s.decision.minimum_candidates = Some(1);
    s.tools.always_allowed_tools = tool
        .map(|t| parse_tool_entry(t).unwrap())
        .into_iter()
        .collect();
    s.tools.always_allowed_groups = group
        .map(|g| pcd_model::parse_group_entry(g).unwrap())
        .into_iter()
        .collect();
    s
}

/// Issue 17, item 2: in `mcp` mode a pinned tool promotes its group, and the promotion is
/// recorded by key in `allowlistGroups`, exactly as a pin of the group by key is: removing the pin
/// later never takes the group away, also after a reload.
#[test]
fn a_group_a_pinned_tool_promoted_stays_available_once_unpinned() {
    let mut pi = Pi::start(
        mcp_pinned(Some("mcp__docs__search"), None),
        ScopedAllowlist::default(),
    );
    let promoted = pi.boundary(BoundaryKind::Reconcile);
    let groups: Vec<Value> = appended(&promoted)
        .iter()
        .flat_map(|d| d["allowlistGroups"].as_array().cloned().unwrap_or_default())
        .collect();
    assert_eq!(groups, [json!("mcp__docs")], "{promoted:?}");
    pi.prompt("Render a bar chart from this CSV data");
    pi.branch.assistant("done");
    assert_eq!(pi.call("mcp__docs__get_page"), None, "promoted by the pin");
    pi.session.settings_changed(
        SettingsRead::Read(mcp_pinned(None, None)),
        ProjectRead::Absent,
    );
    assert_eq!(
        pi.call("mcp__docs__get_page"),
        None,
        "unpinned: still available"
    );
    pi.reload(mcp_pinned(None, None));
    pi.boundary(BoundaryKind::Reconcile);
    assert_eq!(pi.call("mcp__docs__get_page"), None, "after a reload too");

    // What the promotion records is what a pin of the group by key records.
    let mut by_key = Pi::start(
        mcp_pinned(None, Some("mcp__docs")),
        ScopedAllowlist::default(),
    );
    let pinned = by_key.boundary(BoundaryKind::Reconcile);
    let without_tool: Vec<Value> = recorded(&promoted)
        .into_iter()
        .map(|mut d| {
            d.as_object_mut().unwrap().remove("allowlistTools");
            d
        })
        .collect();
    assert_eq!(without_tool, recorded(&pinned));
}

/// Issue 17, item 2, on a ledger written before promotions were recorded
/// (`tests/fixtures/ledger-mcp-pinned-tool-before-issue-17.json`, the branch a session of
/// commit 0827dcf wrote with `mcp__docs__search` pinned in `mcp` mode): it folds as before, the
/// next boundary records the promotion in the same v1 field, and the branch with both folds
/// cleanly and keeps the group once the pin is gone.
#[test]
fn a_ledger_written_before_promotions_were_recorded_folds_alike_and_gains_them() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ledger-mcp-pinned-tool-before-issue-17.json");
    let entries: Vec<Value> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let (before, findings) = pcd_ledger::fold(&entries);
    assert!(findings.is_empty(), "{findings:?}");
    assert!(before.is_tool_available("mcp__docs__search"));
    assert!(
        !before.is_group_key_available("mcp__docs"),
        "not recorded then"
    );

    let branch = Branch { entries };
    let mut pi = Pi::start_with(
        mcp_pinned(Some("mcp__docs__search"), None),
        ScopedAllowlist::default(),
        branch,
        example(),
    );
    let effects = pi.boundary(BoundaryKind::Reconcile);
    let new = appended(&effects);
    assert_eq!(new.len(), 1, "{effects:?}");
    assert_eq!(new[0]["allowlistGroups"], json!(["mcp__docs"]));
    // A field the fold did not know would be a finding (a v1 entry with an extra field does not
    // fold): the old entries and the new one fold together without any.
    let (after, findings) = pcd_ledger::fold(&pi.branch.entries);
    assert!(findings.is_empty(), "{findings:?}");
    assert!(after.is_group_key_available("mcp__docs"));
    for tool in before.available_tools() {
        assert!(after.is_tool_available(tool), "{tool}");
    }
    pi.session.settings_changed(
        SettingsRead::Read(mcp_pinned(None, None)),
        ProjectRead::Absent,
    );
    assert_eq!(pi.call("mcp__docs__get_page"), None);
}

/// Issue 17, item 3: a resource-only MCP server pinned while its origin is unknown (the
/// `mcp.json` read not approved: no origins) is admitted in Global and recorded by key, so
/// unpinning it later never blocks reading its resources.
#[test]
fn a_resource_only_server_pinned_with_an_unknown_origin_is_recorded_by_key() {
    let mut s = embedded_tools_settings();
    s.tools.always_allowed_groups = vec![pcd_model::parse_group_entry("kb").unwrap()];
    let mut pi = Pi::start(s.clone(), ScopedAllowlist::default());
    assert!(!pi.tools.iter().any(|t| t.name.starts_with("mcp__kb")));
    let effects = pi.prompt("Read the onboarding guide from the knowledge base");
    assert!(
        appended(&effects)
            .iter()
            .any(|d| d["allowlistGroups"] == json!(["mcp__kb"])),
        "{effects:?}"
    );
    assert_eq!(
        pi.call_resource("read_mcp_resource", Some(Ok("kb".into()))),
        None
    );
    s.tools.always_allowed_groups.clear();
    pi.session
        .settings_changed(SettingsRead::Read(s.clone()), ProjectRead::Absent);
    assert_eq!(
        pi.call_resource("read_mcp_resource", Some(Ok("kb".into()))),
        None,
        "unpinned: still available"
    );
    pi.reload(s);
    pi.boundary(BoundaryKind::Reconcile);
    assert_eq!(
        pi.call_resource("read_mcp_resource", Some(Ok("kb".into()))),
        None,
        "after a reload too"
    );
}

/// Issue 17, item 4: a direct tool that registers during a run (an MCP server connecting late;
/// Pi activates it on registration) is scored when first met, at the next tool round, and
/// recorded either way: the relevant one stays declared, the irrelevant one is taken out with an
/// entry that considered it. With nothing to score with, it is recorded unscored and stays.
#[test]
fn a_direct_tool_registered_during_a_run_is_scored_at_the_next_tool_round() {
    for cadence in [Cadence::Prompt, Cadence::Initial, Cadence::ToolRound] {
        let mut pi = Pi::start(
            settings(true, DecisionProvider::Embedded, Mode::Tools, cadence),
            ScopedAllowlist::default(),
        );
        pi.prompt("What is the weather forecast for Lisbon tomorrow?");
        for (name, description) in [
            (
                "forecast_weather",
                "Get the weather forecast for a city for the next days.",
            ),
            ("render_svg", "Render an SVG drawing of a floor plan."),
        ] {
            pi.tools.push(ToolInfo::new(name, description, None));
            pi.active.push(name.into());
        }
        let effects = pi.boundary(BoundaryKind::ToolRound);
        let entries = appended(&effects);
        assert_eq!(entries.len(), 1, "{cadence:?}: {effects:?}");
        assert_eq!(entries[0]["boundary"], "tool-round");
        assert_eq!(
            entries[0]["considered"],
            json!(["forecast_weather", "render_svg"]),
            "{cadence:?}"
        );
        assert_eq!(
            entries[0]["tools"],
            json!(["forecast_weather"]),
            "{cadence:?}"
        );
        assert!(pi.active.iter().any(|t| t == "forecast_weather"));
        assert!(!pi.active.iter().any(|t| t == "render_svg"));
        assert_eq!(pi.call("forecast_weather"), None);
        assert!(pi.call("render_svg").is_some());
        // Met once: the next tool round scores nothing again.
        assert!(appended(&pi.boundary(BoundaryKind::ToolRound)).is_empty());
    }

    // A model outside the Session gets one job for the late arrival alone.
    let mut pi = Pi::start(pi_model_settings(Mode::Tools), ScopedAllowlist::default());
    let job = jobs(&pi.prompt("What is the weather forecast for Lisbon tomorrow?")).remove(0);
    let answers = job
        .requests
        .iter()
        .map(|r| Ok(answer(r, "nothing", 0.9)))
        .collect();
    let effects = pi.session.decided(job.id, answers, &pi.active.clone());
    pi.branch.apply(&effects);
    pi.tools.push(ToolInfo::new(
        "forecast_weather",
        "Get the weather forecast for a city for the next days.",
        None,
    ));
    pi.active.push("forecast_weather".into());
    let job = jobs(&pi.boundary(BoundaryKind::ToolRound)).remove(0);
    assert!(job.requests.iter().all(|r| r.contains("forecast_weather")));
    assert!(!job.requests.iter().any(|r| r.contains("bar_chart")));
    let answers = job
        .requests
        .iter()
        .map(|r| Ok(answer(r, "forecast_weather", 0.9)))
        .collect();
    let active = pi.active.clone();
    let effects = pi.session.decided(job.id, answers, &active);
    pi.branch.apply(&effects);
    assert_eq!(appended(&effects)[0]["tools"], json!(["forecast_weather"]));
    assert_eq!(pi.call("forecast_weather"), None);

    let mut pi = Pi::start(
        settings(true, DecisionProvider::None, Mode::Tools, Cadence::Prompt),
        ScopedAllowlist::default(),
    );
    pi.prompt("What is the weather forecast for Lisbon tomorrow?");
    pi.tools
        .push(ToolInfo::new("render_svg", "Render an SVG drawing.", None));
    pi.active.push("render_svg".into());
    let effects = pi.boundary(BoundaryKind::ToolRound);
    let entries = appended(&effects);
    assert_eq!(entries.len(), 1, "{effects:?}");
    assert_eq!(entries[0]["basis"], "unscored");
    assert_eq!(entries[0]["tools"], json!(["render_svg"]));
    assert!(pi.active.iter().any(|t| t == "render_svg"));
}

/// Issue 17, item 11: the switch cannot be read (the global settings file exists but is not
/// valid JSON). A branch with no ledger blocks calls to external tools that no allowlist names,
/// leaves Pi's active set as it is and writes nothing; a branch with rounds keeps enforcing them
/// plus the allowlists and adds nothing. Once the file reads again, the next boundary proceeds
/// normally.
#[test]
fn an_unreadable_switch_blocks_unallowlisted_calls_and_writes_nothing() {
    let project = ScopedAllowlist {
        tools: vec![parse_tool_entry("db_migrate").unwrap()],
        groups: vec![],
    };
    let start = |branch: Branch| {
        let (session, _) = Session::start(StartEvent {
            reason: StartReason::Startup,
            nonce: "u1".into(),
            settings: SettingsRead::Unreadable,
            project: ProjectRead::Read(project.clone()),
            mcp_origins: vec![],
            branch: BranchRead::Entries(branch.entries.clone()),
        });
        let mut pi = Pi::start_with(Settings::default(), project.clone(), branch, example());
        pi.session = session;
        pi
    };

    // No ledger.
    let mut pi = start(Branch::default());
    assert!(pi.session.filtering_on() && pi.session.switch_unknown());
    let before = pi.active.clone();
    assert!(pi.boundary(BoundaryKind::Reconcile).is_empty());
    let effects = pi.prompt("Render a bar chart from this CSV data");
    assert!(appended(&effects).is_empty(), "{effects:?}");
    assert!(set_active(&effects).is_none(), "{effects:?}");
    assert!(appended(&pi.boundary(BoundaryKind::ToolRound)).is_empty());
    assert_eq!(pi.active, before);
    assert_eq!(pi.branch.ledger_entries(), 0);
    assert!(pi.call("bar_chart").is_some(), "external, not allowlisted");
    assert_eq!(
        pi.call("db_migrate"),
        None,
        "the project allowlist names it"
    );
    assert_eq!(pi.call("read"), None, "internal");
    // The file reads again: the next boundary proceeds normally.
    let on = embedded_tools_settings();
    pi.session.settings_changed(
        SettingsRead::Read(on.clone()),
        ProjectRead::Read(project.clone()),
    );
    assert!(!pi.session.switch_unknown());
    pi.prompt("Search the web for the checkout service status page");
    assert!(pi.branch.ledger_entries() > 0);
    assert_eq!(pi.call("bar_chart"), None, "the model saw it: kept");
    let mut off = start(Branch::default());
    off.session
        .settings_changed(SettingsRead::Read(Settings::default()), ProjectRead::Absent);
    off.prompt("Render a bar chart");
    assert_eq!(off.call("bar_chart"), None, "off once read");
    assert_eq!(off.branch.ledger_entries(), 0);

    // A branch with rounds.
    let filtered = charted();
    let mut pi = start(filtered.branch.clone());
    pi.active = filtered.active.clone();
    let n = pi.branch.ledger_entries();
    pi.boundary(BoundaryKind::Reconcile);
    pi.prompt("Search the web for the checkout service status page");
    assert_eq!(pi.branch.ledger_entries(), n, "nothing added");
    assert_eq!(pi.call("bar_chart"), None, "available on the branch");
    assert!(pi.call("web_search").is_some(), "withheld on the branch");
    assert_eq!(pi.call("db_migrate"), None, "allowlisted");
}

/// Issue 17, item 10: a failed decision warns once per prompt with its reason code (a lazy score
/// failing later in the same prompt says nothing more), `/decisions` keeps the last outcome, and
/// the next prompt's failure warns again.
#[test]
fn a_failed_decision_warns_once_per_prompt_with_its_reason_code() {
    let failed = |effects: &[Effect]| {
        effects
            .iter()
            .filter(|e| matches!(e, Effect::Warn(w) if w.starts_with("Deciding tools failed")))
            .count()
    };
    let unavailable = |job: &context_decisions::session::DecisionJob| {
        job.requests
            .iter()
            .map(|_| Err(context_decisions::session::ModelError::Unavailable))
            .collect::<Vec<_>>()
    };
    let mut pi = Pi::start(pi_model_settings(Mode::Tools), ScopedAllowlist::default());
    let job = jobs(&pi.prompt("Render a bar chart of this CSV")).remove(0);
    let effects = pi.session.decided(job.id, unavailable(&job), &[]);
    assert_eq!(failed(&effects), 1, "{effects:?}");
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::Warn(w) if w.ends_with("(reason: `model-failed`)"))));
    assert_eq!(
        pi.session.last_round(),
        Some(pcd_ui_text::LastRound::Problem(
            pcd_ui_text::RoundProblem::Failed
        ))
    );
    // A lazy score of the same prompt fails too: no second warning.
    let event = ToolCallEvent {
        tool: "bar_chart".into(),
        server: None,
    };
    let outcome = pi.session.tool_call(&event);
    let job = outcome.pending.expect("bar_chart is scored lazily");
    let effects = pi.session.decided(job.id, unavailable(&job), &[]);
    assert_eq!(failed(&effects), 0, "{effects:?}");
    // The next prompt's failure is reported again.
    let job = jobs(&pi.prompt("Render another chart")).remove(0);
    let effects = pi.session.decided(job.id, unavailable(&job), &[]);
    assert_eq!(failed(&effects), 1, "{effects:?}");
}

/// Issue 17: a decision that did not answer before `decision.timeoutMs` is reported with its own
/// code, `timed-out` (not `model-failed`), as a failed round: fail mode closed adds nothing, fail
/// mode open makes the rest available; never as a cancellation.
#[test]
fn a_timed_out_decision_has_its_own_code_and_is_a_failed_round() {
    let timed_out = |job: &context_decisions::session::DecisionJob| {
        job.requests
            .iter()
            .map(|_| Err(context_decisions::session::ModelError::TimedOut))
            .collect::<Vec<_>>()
    };
    let mut pi = Pi::start(pi_model_settings(Mode::Tools), ScopedAllowlist::default());
    let job = jobs(&pi.prompt("Render a bar chart of this CSV")).remove(0);
    let n = pi.branch.ledger_entries();
    let effects = pi.session.decided(job.id, timed_out(&job), &[]);
    assert!(
        effects.iter().all(|e| !matches!(e, Effect::AppendEntry(_))),
        "{effects:?}"
    );
    let warnings: Vec<&String> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Warn(w) => Some(w),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 1, "{effects:?}");
    assert!(
        warnings[0].starts_with("Deciding tools took longer than the timeout")
            && warnings[0].ends_with("(reason: `timed-out`)"),
        "{warnings:?}"
    );
    assert_eq!(
        pi.session.last_round(),
        Some(pcd_ui_text::LastRound::Problem(
            pcd_ui_text::RoundProblem::TimedOut
        ))
    );
    assert_eq!(
        pi.branch.ledger_entries(),
        n,
        "fail mode closed: nothing recorded"
    );
    assert!(!pi.session.is_allowed("bar_chart"));

    // Fail mode open: a timeout is a failure, so the rest is made available.
    let mut settings = pi_model_settings(Mode::Tools);
    settings.decision.fail_mode = pcd_model::FailMode::Open;
    let mut pi = Pi::start(settings, ScopedAllowlist::default());
    let job = jobs(&pi.prompt("Render a bar chart of this CSV")).remove(0);
    let effects = pi.session.decided(job.id, timed_out(&job), &[]);
    assert!(pi.session.is_allowed("bar_chart"), "{effects:?}");
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::Warn(w) if w.ends_with("(reason: `failed-open`)"))));
}

/// Issue 17, items 6 and 10: while off, the lists name the saved allowlists and no tool of a
/// snapshot, and there is no footer status; while on, the footer counts the available external
/// tools.
#[test]
fn off_lists_name_the_allowlists_and_the_footer_counts_available_tools() {
    use context_decisions::views::{footer_status, list_text};
    use pcd_ui_text::ListCommand;
    let allow = ScopedAllowlist {
        tools: vec![pcd_model::parse_tool_entry("web_fetch").unwrap()],
        groups: vec![],
    };
    let mut pi = Pi::start(embedded_tools_settings(), allow.clone());
    pi.prompt("deploy the preview and page on-call");
    let status = footer_status(&pi.session).expect("a status while on");
    let count = external(&pi.tools).len();
    // `tools AVAILABLE/EXTERNAL`, then what the branch withholds (issue 34).
    let counts = status.split(" · ").next().unwrap();
    assert!(
        counts.starts_with("tools ") && counts.ends_with(&format!("/{count}")),
        "{status}"
    );
    assert!(status.ends_with(" tokens withheld"), "{status}");
    // Switched off: no status, and the lists do not show the snapshot's tools.
    pi.session.settings_changed(
        SettingsRead::Read(settings(
            false,
            DecisionProvider::Embedded,
            Mode::Tools,
            Cadence::Prompt,
        )),
        ProjectRead::Read(allow),
    );
    assert_eq!(footer_status(&pi.session), None);
    let list = list_text(&pi.session, ListCommand::Tools);
    assert!(list.contains("tool filtering is off"), "{list}");
    assert!(list.contains("`web_fetch`"), "{list}");
    for tool in external(&pi.tools).iter().filter(|t| *t != "web_fetch") {
        assert!(!list.contains(tool.as_str()), "{tool} in {list}");
    }
}

/// Issue 34, item 9: `/decisions tools list` says which tools the session called: each call the
/// gate let through counts for its tool, a blocked call counts for nothing.
#[test]
fn the_tools_list_counts_the_calls_the_gate_let_through() {
    use context_decisions::views::list_text;
    use pcd_ui_text::ListCommand;
    let mut pi = Pi::embedded_prompt_tools(example());
    pi.prompt("Search the incidents of the checkout service and page the on-call engineer");
    assert_eq!(pi.call("mcp__dev_radius__search_incidents"), None);
    assert_eq!(pi.call("mcp__dev_radius__search_incidents"), None);
    assert_eq!(pi.call("read"), None);
    assert!(pi.call("bar_chart").is_some(), "withheld: blocked");
    assert_eq!(pi.session.calls("mcp__dev_radius__search_incidents"), 2);
    assert_eq!(pi.session.calls("bar_chart"), 0);
    let list = list_text(&pi.session, ListCommand::Tools);
    let row = |name: &str| {
        list.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} in {list}"))
            .to_owned()
    };
    assert!(
        row("mcp__dev_radius__search_incidents").ends_with(" 2"),
        "{list}"
    );
    assert!(row("read").ends_with(" 1"), "{list}");
    assert!(row("bar_chart").ends_with(" -"), "{list}");
    assert!(
        list.contains("Called this session: 2 tools (3 calls)."),
        "{list}"
    );
}

/// The semantic job among a boundary's effects.
fn job_of(effects: &[Effect]) -> context_decisions::session::SemanticJob {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Embed(job) => Some(job.clone()),
            _ => None,
        })
        .expect("a semantic job")
}

/// Issue 16: with the semantic signal on, a prompt's embedded round is a semantic job that
/// carries only what decision requests carry (a planted secret never reaches it); answered
/// without vectors, it records exactly the round the lexical scorer records inline, so nothing
/// more is granted; answered with fused scores, those decide, and `last_scorer` says which, as
/// does the scorer note appended right after each round.
#[test]
fn a_semantic_round_without_vectors_is_the_lexical_round_and_embeds_only_request_text() {
    use context_decisions::session::RoundScorer;
    let secret = "sk-live-PLANTED-9c1d";
    let tools = example_with_secret(secret);
    let start = |semantic: bool| {
        let mut pi = Pi::embedded_prompt_tools(tools.clone());
        if semantic {
            pi.session.set_semantic(Ok(()));
        }
        pi
    };
    let prompt = "Search the incidents and render a bar chart";
    let entries = |effects: &[Effect]| -> Vec<Value> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::AppendEntry(data) => Some(data.clone()),
                _ => None,
            })
            .collect()
    };

    // The scorer note follows the scored round's entry directly, naming it and the scorer.
    let note_after_scored = |effects: &[Effect]| -> String {
        let at = effects
            .iter()
            .position(|e| matches!(e, Effect::AppendEntry(d) if d["basis"] == "scored"))
            .expect("a scored round");
        let Effect::AppendEntry(round) = &effects[at] else {
            unreachable!()
        };
        let Some(Effect::RecordScorer(note)) = effects.get(at + 1) else {
            panic!("no scorer note after the round: {effects:?}");
        };
        assert_eq!(note["round"], round["round"]);
        assert_eq!(note["v"], 1);
        assert_eq!(note.as_object().unwrap().len(), 3, "{note}");
        let json = Effect::RecordScorer(note.clone()).to_json();
        assert_eq!(json["customType"], pcd_ledger::SCORER_CUSTOM_TYPE);
        note["scorer"].as_str().unwrap().to_owned()
    };

    let mut lexical = start(false);
    let inline = lexical.prompt(prompt);
    assert!(
        entries(&inline).iter().any(|e| e["basis"] == "scored"),
        "{inline:?}"
    );
    assert_eq!(note_after_scored(&inline), "lexical");
    assert_eq!(
        lexical.session.last_scorer(),
        Some(&RoundScorer::Lexical(String::new()))
    );

    let mut fallback = start(true);
    let asked = fallback.boundary(BoundaryKind::Prompt {
        text: Some(prompt.into()),
    });
    // Only what the boundary records without scoring comes before the answer.
    let mut recorded = entries(&asked);
    assert!(
        recorded.iter().all(|e| e["basis"] != "scored"),
        "{recorded:?}"
    );
    let job = job_of(&asked);
    assert!(
        !format!("{job:?}").contains(secret),
        "a planted secret leaked"
    );
    // The prompt's text, then each candidate's: a tool's whole text, and its description's
    // first sentence when it has one.
    assert_eq!(job.prompts, 1);
    assert_eq!(job.texts[0], prompt);
    assert_eq!(job.per_candidate.len(), job.lexical.len());
    assert!(
        job.per_candidate.iter().all(|&n| n == 1 || n == 2),
        "{:?}",
        job.per_candidate
    );
    assert_eq!(
        job.texts.len(),
        job.prompts + job.per_candidate.iter().sum::<usize>()
    );
    let active = fallback.active.clone();
    let done = fallback
        .session
        .semantic_decided(job.id, Err("not ready".into()), &active);
    recorded.extend(entries(&done));
    assert_eq!(recorded, entries(&inline), "the same round, recorded alike");
    assert_eq!(note_after_scored(&done), "lexical");
    assert_eq!(
        fallback.session.last_scorer(),
        Some(&RoundScorer::Lexical("not ready".into()))
    );

    // Fused scores decide: every candidate at 0 but one at 0.99.
    let mut fused = start(true);
    let job = job_of(&fused.boundary(BoundaryKind::Prompt {
        text: Some(prompt.into()),
    }));
    // The candidate whose whole text (its first) is `notes_add`'s.
    let mut first_text = job.prompts;
    let pick = job
        .per_candidate
        .iter()
        .position(|&n| {
            let found = job.texts[first_text].starts_with("notes add");
            first_text += n;
            found
        })
        .expect("notes_add is a candidate");
    let mut scores = vec![0.0; job.lexical.len()];
    scores[pick] = 0.99;
    let active = fused.active.clone();
    let done = fused.session.semantic_decided(job.id, Ok(scores), &active);
    let recorded = entries(&done);
    let scored: Vec<&Value> = recorded.iter().filter(|e| e["basis"] == "scored").collect();
    assert_eq!(scored.len(), 1, "{done:?}");
    assert_eq!(scored[0]["tools"], json!(["notes_add"]), "{recorded:?}");
    assert_eq!(fused.session.last_scorer(), Some(&RoundScorer::Fused));
    assert_eq!(note_after_scored(&done), "semantic+lexical");
    assert!(
        !format!("{done:?}").contains(secret),
        "a planted secret leaked"
    );
}

/// The lexical scorer's index is kept between prompts while the inventory and the candidates
/// stay the same; an inventory read at a boundary with a tool's description changed is scored
/// as it now reads, never from the index built before it changed.
#[test]
fn a_changed_description_is_scored_at_the_next_prompt() {
    let lexical_after = |first: Vec<ToolInfo>, second: Vec<ToolInfo>| -> Vec<f64> {
        let mut pi = Pi::embedded_prompt_tools(first);
        pi.session.set_semantic(Ok(()));
        let mut lexical = Vec::new();
        for (prompt, tools) in [
            ("summarise the open incidents", None),
            ("plan my trip to the coast", Some(second)),
        ] {
            if let Some(tools) = tools {
                pi.tools = tools;
            }
            let job = job_of(&pi.prompt(prompt));
            // Nothing is made available: the second prompt has the first one's candidates.
            let active = pi.active.clone();
            let done =
                pi.session
                    .semantic_decided(job.id, Ok(vec![0.0; job.lexical.len()]), &active);
            pi.branch.apply(&done);
            lexical = job.lexical;
        }
        lexical
    };
    let tools = example();
    let mut changed = tools.clone();
    let at = changed
        .iter()
        .position(|t| t.name == "weather_now")
        .expect("weather_now");
    changed[at].description = "Plan a trip to the coast.".into();
    let before = lexical_after(tools.clone(), tools.clone());
    let after = lexical_after(tools, changed.clone());
    let fresh = lexical_after(changed.clone(), changed);
    assert_eq!(after, fresh, "scored as the inventory now reads");
    assert_ne!(after, before, "the changed description moved a score");
}

/// A semantic job reads of a long prompt only what a decision request carries (its last 2,000
/// characters): a file named only before that part does not make the fused calibration read the
/// prompt as work on the working tree.
#[test]
fn a_semantic_job_reads_whether_a_file_is_named_in_the_part_a_request_carries() {
    let mut pi = Pi::embedded_prompt_tools(example_with_secret("unused"));
    pi.session.set_semantic(Ok(()));
    let request = "Search the incidents and render a bar chart";
    let prompt = format!("see client.rs {}{request}", "lorem ipsum ".repeat(300));
    let effects = pi.boundary(BoundaryKind::Prompt {
        text: Some(prompt.clone()),
    });
    let job = job_of(&effects);
    assert!(!job.texts[0].contains("client.rs"), "{}", job.texts[0]);
    assert!(!job.names_a_file, "a file named outside what is read");
}

/// The scorer notes are not part of the ledger: a branch folds to the same state with or without
/// them, and an edited or malformed note changes nothing (it grants nothing and is no finding).
#[test]
fn scorer_notes_are_not_folded() {
    let round = pcd_ledger::Round {
        tools: vec!["notes_add".into()],
        ..pcd_ledger::Round::new(
            "r1",
            Mode::Tools,
            pcd_ledger::Boundary::Prompt,
            pcd_ledger::Basis::Scored,
        )
    };
    let parts = pcd_ledger::encode_round(&round).unwrap();
    let custom = |ty: &str, data: Value, id: usize| json!({"type": "custom", "customType": ty, "id": format!("e{id}"), "data": data});
    let plain: Vec<Value> = parts
        .iter()
        .enumerate()
        .map(|(i, d)| custom(pcd_ledger::CUSTOM_TYPE, d.clone(), i))
        .collect();
    let mut noted = plain.clone();
    noted.push(custom(
        pcd_ledger::SCORER_CUSTOM_TYPE,
        json!({"v": 1, "round": "r1", "scorer": "semantic+lexical"}),
        90,
    ));
    noted.push(custom(
        pcd_ledger::SCORER_CUSTOM_TYPE,
        json!({"v": 99, "round": "r1", "tools": ["web_fetch"], "scorer": 7}),
        91,
    ));
    let (a, _) = pcd_ledger::fold(&plain);
    let (b, findings) = pcd_ledger::fold(&noted);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert!(findings.is_empty(), "{findings:?}");
    assert!(b.is_tool_available("notes_add"));
    assert!(!b.is_tool_available("web_fetch"));
}
