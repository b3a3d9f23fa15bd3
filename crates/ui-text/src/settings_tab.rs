//! The texts of the `/decisions` dialog's **Tools** tab (its switch, mode, cadence and four
//! allowlists) and of its **Advanced** tab (the shared `decision.*` settings: the decision
//! model, its threshold and the limits). The binding draws the rows it gets; it has no words of
//! its own.

use crate::display::display_safe;
use crate::words::count;
use pcd_model::{
    bound_label, Cadence, DecisionProvider, DecisionSettings, FailMode, Mode, ScopedAllowlist,
    ToolsSettings, MINIMUM_GROUPS_DEFAULT, MINIMUM_TOOLS_DEFAULT,
};

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
    /// `decision.provider`.
    Provider,
    /// `decision.model` (edited in the settings file).
    Model,
    /// `decision.baseUrl` (edited in the settings file).
    BaseUrl,
    /// `decision.apiKeyEnv` (edited in the settings file).
    ApiKeyEnv,
    /// `decision.threshold`.
    Threshold,
    /// `decision.batchSize`.
    BatchSize,
    /// `decision.concurrency`.
    Concurrency,
    /// `decision.timeoutMs`.
    TimeoutMs,
    /// `decision.failMode`.
    FailMode,
}

impl SettingId {
    /// Whether the dialog shows the row's value but leaves editing it to the settings file
    /// (`decision.model`, `decision.baseUrl`, `decision.apiKeyEnv`).
    pub fn is_file_only(self) -> bool {
        matches!(
            self,
            SettingId::Model | SettingId::BaseUrl | SettingId::ApiKeyEnv
        )
    }

    /// Whether the row is a number changed with Left/Right (or `-`/`+`).
    pub fn is_number(self) -> bool {
        matches!(
            self,
            SettingId::Threshold
                | SettingId::MaxNewTools
                | SettingId::MaxNewGroups
                | SettingId::MinimumCandidates
                | SettingId::BatchSize
                | SettingId::Concurrency
                | SettingId::TimeoutMs
        )
    }
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
            help: "Decides which tools the model sees for each task. Off by default; while \
                   off, every tool is available and nothing is recorded."
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
         decision adds are in Advanced."
            .to_owned(),
    );
    notes
}

/// How a provider is shown in the Advanced tab.
pub fn provider_text(provider: DecisionProvider) -> &'static str {
    match provider {
        DecisionProvider::None => "None",
        DecisionProvider::Embedded => "Built-in scorer",
        DecisionProvider::Pi => "A Pi model",
        DecisionProvider::Http => "An HTTP endpoint",
    }
}

/// A text setting's value as the Advanced tab shows it: bounded and made safe to print, or
/// `(not set)`.
fn text_value(value: Option<&str>) -> String {
    match value {
        Some(v) => display_safe(&bound_label(v)),
        None => "(not set)".to_owned(),
    }
}

/// A base URL as the Advanced tab shows it: only its scheme and host (with port), so a user
/// name, password, path or query that may hold a secret is never shown.
fn url_value(value: Option<&str>) -> String {
    let Some(url) = value else {
        return "(not set)".to_owned();
    };
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let hidden = authority.contains('@') || authority.len() < rest.len();
    let shown = format!("{scheme}://{}", display_safe(&bound_label(host)));
    if hidden {
        format!("{shown}/…")
    } else {
        shown
    }
}

/// The Advanced tab's rows, in order: the decision model (provider, model, base URL, key
/// variable), the threshold, the limits, the request settings and the fail mode. Shared by tool
/// and skill filtering.
pub fn advanced_tab(decision: &DecisionSettings) -> Vec<SettingRow> {
    let file = "Edit it in the global settings file, pi-context-decisions/settings.json in \
                Pi's agent directory; this tab only shows it.";
    let mut rows = vec![
        SettingRow {
            id: SettingId::Provider,
            label: "Decision model",
            value: provider_text(decision.provider).to_owned(),
            help: match decision.provider {
                DecisionProvider::None => {
                    "No model: nothing is scored and every tool stays available."
                }
                DecisionProvider::Embedded => {
                    "The built-in offline scorer (with the semantic model where it is installed): no \
                     network, no key, answers at once."
                }
                DecisionProvider::Pi => {
                    "One of Pi's own configured models, named by Model (provider/model); \
                     choose it on the Model row."
                }
                DecisionProvider::Http => {
                    "An OpenAI-compatible endpoint at Base URL, with Model and the key from \
                     the variable named by API key variable."
                }
            }
            .to_owned(),
        },
        SettingRow {
            id: SettingId::Model,
            label: "Model",
            value: text_value(decision.model.as_deref()),
            help: match decision.provider {
                DecisionProvider::Pi => {
                    "The Pi model that scores (provider/model): Enter lists Pi's models with a \
                     configured key."
                        .to_owned()
                }
                _ => format!("The model id (provider/model for a Pi model). {file}"),
            },
        },
        SettingRow {
            id: SettingId::BaseUrl,
            label: "Base URL",
            value: url_value(decision.base_url.as_deref()),
            help: format!(
                "For an HTTP endpoint: its address (https, or http to this machine); only the \
                 host is shown. {file}"
            ),
        },
        SettingRow {
            id: SettingId::ApiKeyEnv,
            label: "API key variable",
            value: text_value(decision.api_key_env.as_deref()),
            help: format!(
                "For an HTTP endpoint: the NAME of the environment variable holding the key; \
                 the key itself is never stored or shown. {file}"
            ),
        },
        SettingRow {
            id: SettingId::Threshold,
            label: "Threshold",
            value: format!("{}", decision.threshold),
            help: "A tool or group is made available when its score is at least this \
                   (0 to 1, up to three decimals: Enter types a value, Left and Right step \
                   by 0.05)."
                .to_owned(),
        },
    ];
    rows.extend(advanced_tool_limits(decision));
    rows.extend([
        SettingRow {
            id: SettingId::BatchSize,
            label: "Candidates per request",
            value: decision.batch_size.to_string(),
            help: "How many tools or groups one request to the decision model scores.".to_owned(),
        },
        SettingRow {
            id: SettingId::Concurrency,
            label: "Requests at once",
            value: decision.concurrency.to_string(),
            help: "How many requests to the decision model are in flight at once.".to_owned(),
        },
        SettingRow {
            id: SettingId::TimeoutMs,
            label: "Timeout",
            value: format!("{} ms", decision.timeout_ms),
            help: "One deadline for a whole decision; what has not answered by then failed."
                .to_owned(),
        },
        SettingRow {
            id: SettingId::FailMode,
            label: "When a decision fails",
            value: match decision.fail_mode {
                FailMode::Closed => "Add nothing",
                FailMode::Open => "Add the rest",
            }
            .to_owned(),
            help: match decision.fail_mode {
                FailMode::Closed => "A failed decision makes nothing new available.",
                FailMode::Open => {
                    "A failed decision makes the remaining tools available (never after a \
                     configuration error or a cancellation)."
                }
            }
            .to_owned(),
        },
    ]);
    rows
}

/// Notes under the Advanced tab's rows: whether a model is usable, and that the tab is shared.
pub fn advanced_tab_notes(decision: &DecisionSettings) -> Vec<String> {
    let mut notes = Vec::new();
    let missing = match decision.provider {
        DecisionProvider::None => Some("No decision model is selected"),
        DecisionProvider::Embedded => None,
        DecisionProvider::Pi if decision.model.is_none() => Some("A Pi model needs Model"),
        DecisionProvider::Http if decision.base_url.is_none() || decision.model.is_none() => {
            Some("An HTTP endpoint needs Base URL and Model")
        }
        DecisionProvider::Pi | DecisionProvider::Http => None,
    };
    if let Some(missing) = missing {
        notes.push(format!(
            "{missing}, so nothing is scored and every tool stays available."
        ));
    }
    notes.push("Every change is written to the global settings file at once.".to_owned());
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
            value: match decision.minimum_candidates {
                Some(n) => n.to_string(),
                None => format!(
                    "{MINIMUM_TOOLS_DEFAULT} tools, {MINIMUM_GROUPS_DEFAULT} groups (default)"
                ),
            },
            help: format!(
                "With fewer undecided tools or groups than this, nothing is decided and they stay \
                 available. By default {MINIMUM_TOOLS_DEFAULT} tools in tools mode, \
                 {MINIMUM_GROUPS_DEFAULT} servers & extensions in group mode (a typical setup \
                 has a handful); a number set here counts in both."
            ),
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
    fn advanced_tab_defaults() {
        let decision = DecisionSettings::default();
        let mut text = render(&advanced_tab(&decision));
        text.push_str("\n\n");
        text.push_str(&advanced_tab_notes(&decision).join("\n"));
        insta::assert_snapshot!(text);
    }

    #[test]
    fn advanced_tab_http_with_secrets_in_the_url() {
        let decision = DecisionSettings {
            provider: DecisionProvider::Http,
            model: Some("gpt-mini\u{202E}x".into()),
            base_url: Some("https://user:sk-SECRET@api.example.com:8443/v1?key=sk-SECRET2".into()),
            api_key_env: Some("OPENAI_API_KEY".into()),
            threshold: 0.65,
            fail_mode: FailMode::Open,
            ..DecisionSettings::default()
        };
        let mut text = render(&advanced_tab(&decision));
        text.push_str("\n\n");
        text.push_str(&advanced_tab_notes(&decision).join("\n"));
        assert!(!text.contains("SECRET"), "{text}");
        assert!(!text.contains('\u{202E}'), "{text}");
        insta::assert_snapshot!(text);
    }

    #[test]
    fn base_urls_show_only_their_host() {
        assert_eq!(url_value(None), "(not set)");
        assert_eq!(
            url_value(Some("http://127.0.0.1:8080")),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            url_value(Some("https://api.example.com/v1")),
            "https://api.example.com/…"
        );
        assert_eq!(
            url_value(Some("https://a:b@h.example?k=1")),
            "https://h.example/…"
        );
    }

    #[test]
    fn a_model_missing_for_its_provider_is_noted() {
        let pi = DecisionSettings {
            provider: DecisionProvider::Pi,
            ..DecisionSettings::default()
        };
        assert!(advanced_tab_notes(&pi)[0].starts_with("A Pi model needs Model"));
        let ready = DecisionSettings {
            model: Some("anthropic/claude".into()),
            ..pi
        };
        assert_eq!(advanced_tab_notes(&ready).len(), 1);
        let embedded = DecisionSettings {
            provider: DecisionProvider::Embedded,
            ..DecisionSettings::default()
        };
        assert_eq!(advanced_tab_notes(&embedded).len(), 1);
        assert_eq!(advanced_tab_notes(&DecisionSettings::default()).len(), 2);
    }

    #[test]
    fn advanced_limits() {
        insta::assert_snapshot!(render(&advanced_tool_limits(&DecisionSettings::default())));
    }
}
