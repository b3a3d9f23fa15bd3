//! The extension's settings with their defaults, validated per field: one bad field falls back to
//! its default with a warning code and every other field still applies. Reading and writing the
//! files is `config-reader`'s job; this is the pure part.

use crate::allowlist::{
    parse_group_entry, parse_tool_entry, AllowlistError, ScopedAllowlist, ToolName,
};
use crate::key::GroupKey;
use serde_json::{json, Map, Value};

/// `tools.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Every external tool is its own candidate.
    #[default]
    Tools,
    /// Group mode: every MCP server and extension is switched as a whole.
    Mcp,
}

impl Mode {
    /// `tools` or `mcp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Tools => "tools",
            Mode::Mcp => "mcp",
        }
    }

    /// Parses `tools` or `mcp`.
    pub fn parse(value: &str) -> Option<Mode> {
        match value {
            "tools" => Some(Mode::Tools),
            "mcp" => Some(Mode::Mcp),
            _ => None,
        }
    }
}

/// `tools.cadence`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Cadence {
    /// One pick, from the first user prompt after filtering became active on the branch.
    Initial,
    /// On each new user prompt, queued steering and follow-up text included.
    #[default]
    Prompt,
    /// Also after completed tool rounds, from cached scores.
    ToolRound,
}

impl Cadence {
    /// `initial`, `prompt` or `tool-round`.
    pub fn as_str(self) -> &'static str {
        match self {
            Cadence::Initial => "initial",
            Cadence::Prompt => "prompt",
            Cadence::ToolRound => "tool-round",
        }
    }

    /// Parses `initial`, `prompt` or `tool-round`.
    pub fn parse(value: &str) -> Option<Cadence> {
        match value {
            "initial" => Some(Cadence::Initial),
            "prompt" => Some(Cadence::Prompt),
            "tool-round" => Some(Cadence::ToolRound),
            _ => None,
        }
    }
}

/// `decision.provider`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DecisionProvider {
    /// No model selected: nothing is scored and every tool stays available.
    #[default]
    None,
    /// The embedded offline scorer.
    Embedded,
    /// An OpenAI-compatible HTTP endpoint.
    Http,
    /// One of Pi's own configured models.
    Pi,
}

impl DecisionProvider {
    /// `null`, `embedded`, `http` or `pi`.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionProvider::None => "null",
            DecisionProvider::Embedded => "embedded",
            DecisionProvider::Http => "http",
            DecisionProvider::Pi => "pi",
        }
    }
}

/// `decision.failMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FailMode {
    /// A failed round adds nothing.
    #[default]
    Closed,
    /// A failed round adds the remaining candidates (never after a configuration error or a
    /// cancellation).
    Open,
}

impl FailMode {
    /// `closed` or `open`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailMode::Closed => "closed",
            FailMode::Open => "open",
        }
    }
}

/// The `tools.*` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolsSettings {
    /// `tools.enabled`: the Tools switch. Default off.
    pub enabled: bool,
    /// `tools.mode`.
    pub mode: Mode,
    /// `tools.cadence`.
    pub cadence: Cadence,
    /// `tools.readMcpConfig`: the user's explicit approval of the names-only `mcp.json` read.
    pub read_mcp_config: bool,
    /// `tools.alwaysAllowedTools`: the global tool allowlist.
    pub always_allowed_tools: Vec<ToolName>,
    /// `tools.alwaysAllowedMcpServers`: the global group allowlist (MCP servers and extensions).
    pub always_allowed_groups: Vec<GroupKey>,
}

impl Default for ToolsSettings {
    fn default() -> Self {
        ToolsSettings {
            enabled: false,
            mode: Mode::Tools,
            cadence: Cadence::Prompt,
            read_mcp_config: false,
            always_allowed_tools: Vec::new(),
            always_allowed_groups: Vec::new(),
        }
    }
}

/// The inclusive range a whole-number setting must be in; the reader warns about, and ignores,
/// a value outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bounds {
    /// The smallest accepted value.
    pub min: u64,
    /// The largest accepted value.
    pub max: u64,
}

impl Bounds {
    /// Whether `value` is accepted.
    pub fn contains(self, value: u64) -> bool {
        (self.min..=self.max).contains(&value)
    }
}

/// `decision.maxNewTools`: 0-1000.
pub const MAX_NEW_TOOLS_BOUNDS: Bounds = Bounds { min: 0, max: 1000 };
/// `decision.maxNewGroups`: 0-1000.
pub const MAX_NEW_GROUPS_BOUNDS: Bounds = Bounds { min: 0, max: 1000 };
/// `decision.minimumCandidates`: 0-100000.
pub const MINIMUM_CANDIDATES_BOUNDS: Bounds = Bounds {
    min: 0,
    max: 100_000,
};
/// `decision.minimumCandidates` when the file does not set it, in `tools` mode: with fewer than
/// 10 undecided tools nothing is scored.
pub const MINIMUM_TOOLS_DEFAULT: u32 = 10;
/// `decision.minimumCandidates` when the file does not set it, in `mcp` (group) mode: a typical
/// setup has 3 to 8 MCP servers and extensions, each with many tools, so group mode decides from
/// 2 groups on (chosen on the everyday set's small inventories: `BENCHMARKS.md`, "Issue 31:
/// small inventories").
pub const MINIMUM_GROUPS_DEFAULT: u32 = 2;
/// `decision.batchSize`: 1-1000.
pub const BATCH_SIZE_BOUNDS: Bounds = Bounds { min: 1, max: 1000 };
/// `decision.concurrency`: 1-64.
pub const CONCURRENCY_BOUNDS: Bounds = Bounds { min: 1, max: 64 };
/// `decision.timeoutMs`: 100-600000 milliseconds.
pub const TIMEOUT_MS_BOUNDS: Bounds = Bounds {
    min: 100,
    max: 600_000,
};

/// The `decision.*` settings, shared with skill filtering.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionSettings {
    /// `decision.provider`.
    pub provider: DecisionProvider,
    /// `decision.model` (`provider/model` for `pi`).
    pub model: Option<String>,
    /// `decision.baseUrl`, for `http`.
    pub base_url: Option<String>,
    /// `decision.apiKeyEnv`: the name of the environment variable holding the key, for `http`.
    pub api_key_env: Option<String>,
    /// `decision.threshold`: inclusive score threshold in [0, 1].
    pub threshold: f64,
    /// `decision.maxNewTools`: how many tools one round adds at most.
    pub max_new_tools: u32,
    /// `decision.maxNewGroups`: how many groups one round adds at most (3 by default; 2 before
    /// the recall-first policy, and a file that names 2 keeps it).
    pub max_new_groups: u32,
    /// `decision.minimumCandidates`: with fewer candidates nothing is scored. `None`: not set,
    /// [`MINIMUM_TOOLS_DEFAULT`] tools or [`MINIMUM_GROUPS_DEFAULT`] groups
    /// ([`DecisionSettings::minimum_candidates_for`]); a file that names a number means it in
    /// both modes.
    pub minimum_candidates: Option<u32>,
    /// `decision.batchSize`: candidates per request.
    pub batch_size: u32,
    /// `decision.concurrency`: requests in flight at once.
    pub concurrency: u32,
    /// `decision.timeoutMs`: one deadline per round.
    pub timeout_ms: u64,
    /// `decision.failMode`.
    pub fail_mode: FailMode,
}

impl Default for DecisionSettings {
    fn default() -> Self {
        DecisionSettings {
            provider: DecisionProvider::None,
            model: None,
            base_url: None,
            api_key_env: None,
            threshold: 0.625,
            max_new_tools: 6,
            max_new_groups: 3,
            minimum_candidates: None,
            batch_size: 50,
            concurrency: 6,
            timeout_ms: 30_000,
            fail_mode: FailMode::Closed,
        }
    }
}

impl DecisionSettings {
    /// The minimum number of candidates a round scores in `mode`: `decision.minimumCandidates`
    /// as set, else [`MINIMUM_TOOLS_DEFAULT`] tools or [`MINIMUM_GROUPS_DEFAULT`] groups.
    pub fn minimum_candidates_for(&self, mode: Mode) -> u32 {
        self.minimum_candidates.unwrap_or(match mode {
            Mode::Tools => MINIMUM_TOOLS_DEFAULT,
            Mode::Mcp => MINIMUM_GROUPS_DEFAULT,
        })
    }
}

impl DecisionSettings {
    /// Whether a decision model is selected and usable: `embedded`; `http` with a base URL and a
    /// model; `pi` with a model. Without one nothing is scored and every tool stays available.
    pub fn has_model(&self) -> bool {
        match self.provider {
            DecisionProvider::None => false,
            DecisionProvider::Embedded => true,
            DecisionProvider::Http => self.base_url.is_some() && self.model.is_some(),
            DecisionProvider::Pi => self.model.is_some(),
        }
    }
}

/// The global settings file's content.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// `tools.*`.
    pub tools: ToolsSettings,
    /// `decision.*`.
    pub decision: DecisionSettings,
}

/// What was wrong with one settings field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsWarningCode {
    /// The file's top level, or a section, is not an object; its fields take their defaults.
    NotAnObject,
    /// The field has the wrong JSON type.
    WrongType {
        /// What was expected, as a phrase (`a boolean`).
        expected: &'static str,
    },
    /// A number outside its range.
    OutOfRange {
        /// The smallest accepted value.
        min: String,
        /// The largest accepted value.
        max: String,
    },
    /// A string that is not one of the accepted values.
    UnknownValue {
        /// The accepted values.
        accepted: &'static [&'static str],
    },
    /// A string that breaks the field's format (`decision.apiKeyEnv`, `decision.baseUrl`, …).
    BadFormat {
        /// The rule, as a phrase.
        rule: &'static str,
    },
    /// One allowlist entry was refused (and skipped); the rest of the list applies.
    InvalidEntry {
        /// Its 0-based position in the list.
        index: usize,
        /// Which rule it broke.
        error: AllowlistError,
    },
}

/// A settings warning: the dotted field (`decision.threshold`) and what was wrong. The field's
/// value is never part of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsWarning {
    /// The dotted field name as written in the file.
    pub field: &'static str,
    /// What was wrong; the field fell back to its default (or the entry was skipped).
    pub code: SettingsWarningCode,
}

struct Reader<'a> {
    obj: Option<&'a Map<String, Value>>,
    warnings: &'a mut Vec<SettingsWarning>,
}

impl<'a> Reader<'a> {
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.obj?.get(key).filter(|v| !v.is_null())
    }

    fn warn(&mut self, field: &'static str, code: SettingsWarningCode) {
        self.warnings.push(SettingsWarning { field, code });
    }

    fn bool(&mut self, key: &str, field: &'static str, default: bool) -> bool {
        match self.get(key) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                self.warn(
                    field,
                    SettingsWarningCode::WrongType {
                        expected: "a boolean",
                    },
                );
                default
            }
        }
    }

    fn choice<T>(
        &mut self,
        key: &str,
        field: &'static str,
        accepted: &'static [&'static str],
        parse: impl Fn(&str) -> Option<T>,
        default: T,
    ) -> T {
        match self.get(key) {
            None => default,
            Some(Value::String(s)) => parse(s).unwrap_or_else(|| {
                self.warn(field, SettingsWarningCode::UnknownValue { accepted });
                default
            }),
            Some(_) => {
                self.warn(
                    field,
                    SettingsWarningCode::WrongType {
                        expected: "a string",
                    },
                );
                default
            }
        }
    }

    fn int(&mut self, key: &str, field: &'static str, min: u64, max: u64, default: u64) -> u64 {
        self.whole(key, field, min, max).unwrap_or(default)
    }

    /// A whole number in `min..=max`, or `None` when the key is absent or its value is not
    /// usable (warned).
    fn whole(&mut self, key: &str, field: &'static str, min: u64, max: u64) -> Option<u64> {
        let expected_whole = SettingsWarningCode::WrongType {
            expected: "a whole number",
        };
        match self.get(key)? {
            Value::Number(n) => match n.as_u64() {
                Some(v) if (min..=max).contains(&v) => return Some(v),
                _ if n.as_f64().is_some_and(|f| f.fract() != 0.0) => {
                    self.warn(field, expected_whole);
                }
                _ => {
                    self.warn(
                        field,
                        SettingsWarningCode::OutOfRange {
                            min: min.to_string(),
                            max: max.to_string(),
                        },
                    );
                }
            },
            _ => self.warn(field, expected_whole),
        }
        None
    }

    fn text(
        &mut self,
        key: &str,
        field: &'static str,
        rule: &'static str,
        valid: impl Fn(&str) -> bool,
    ) -> Option<String> {
        match self.get(key)? {
            Value::String(s) if valid(s) => Some(s.clone()),
            Value::String(_) => {
                self.warn(field, SettingsWarningCode::BadFormat { rule });
                None
            }
            _ => {
                self.warn(
                    field,
                    SettingsWarningCode::WrongType {
                        expected: "a string",
                    },
                );
                None
            }
        }
    }

    fn list<T>(
        &mut self,
        key: &str,
        field: &'static str,
        parse: impl Fn(&str) -> Result<T, AllowlistError>,
    ) -> Vec<T> {
        let items = match self.get(key) {
            None => return Vec::new(),
            Some(Value::Array(items)) => items,
            Some(_) => {
                self.warn(
                    field,
                    SettingsWarningCode::WrongType {
                        expected: "an array of strings",
                    },
                );
                return Vec::new();
            }
        };
        let mut out = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let parsed = item
                .as_str()
                .ok_or(AllowlistError::NotAString)
                .and_then(&parse);
            match parsed {
                Ok(v) => out.push(v),
                Err(error) => self.warn(field, SettingsWarningCode::InvalidEntry { index, error }),
            }
        }
        out
    }
}

fn section<'a>(
    root: Option<&'a Map<String, Value>>,
    key: &str,
    field: &'static str,
    warnings: &mut Vec<SettingsWarning>,
) -> Option<&'a Map<String, Value>> {
    match root?.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Object(obj)) => Some(obj),
        Some(_) => {
            warnings.push(SettingsWarning {
                field,
                code: SettingsWarningCode::NotAnObject,
            });
            None
        }
    }
}

// U+FFFD stands for text that is not valid Unicode (a lone surrogate escape in the file): such a
// value is not what the file meant, so the field falls back.
fn is_model_id(s: &str) -> bool {
    (1..=256).contains(&s.chars().count())
        && !s
            .chars()
            .any(|c| c.is_control() || c == crate::allowlist::REPLACEMENT)
}

fn is_base_url(s: &str) -> bool {
    s.len() <= 2048
        && (s.starts_with("https://") || s.starts_with("http://"))
        && !s
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || c == crate::allowlist::REPLACEMENT)
}

fn is_env_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    s.len() <= 128
        && bytes
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl Settings {
    /// Reads the global settings file's JSON, field by field. Never fails: every field that is
    /// absent takes its default, every field that is wrong takes its default with a warning.
    pub fn from_json(value: &Value) -> (Settings, Vec<SettingsWarning>) {
        let mut warnings = Vec::new();
        let root = match value {
            Value::Object(obj) => Some(obj),
            Value::Null => None,
            _ => {
                warnings.push(SettingsWarning {
                    field: "(top level)",
                    code: SettingsWarningCode::NotAnObject,
                });
                None
            }
        };
        let tools_obj = section(root, "tools", "tools", &mut warnings);
        let decision_obj = section(root, "decision", "decision", &mut warnings);
        let d = ToolsSettings::default();
        let mut r = Reader {
            obj: tools_obj,
            warnings: &mut warnings,
        };
        let tools = ToolsSettings {
            enabled: r.bool("enabled", "tools.enabled", d.enabled),
            mode: r.choice("mode", "tools.mode", &["tools", "mcp"], Mode::parse, d.mode),
            cadence: r.choice(
                "cadence",
                "tools.cadence",
                &["initial", "prompt", "tool-round"],
                Cadence::parse,
                d.cadence,
            ),
            read_mcp_config: r.bool("readMcpConfig", "tools.readMcpConfig", d.read_mcp_config),
            always_allowed_tools: r.list(
                "alwaysAllowedTools",
                "tools.alwaysAllowedTools",
                parse_tool_entry,
            ),
            always_allowed_groups: r.list(
                "alwaysAllowedMcpServers",
                "tools.alwaysAllowedMcpServers",
                parse_group_entry,
            ),
        };
        let d = DecisionSettings::default();
        let mut r = Reader {
            obj: decision_obj,
            warnings: &mut warnings,
        };
        let provider = match r.get("provider") {
            None => DecisionProvider::None,
            Some(_) => r.choice(
                "provider",
                "decision.provider",
                &["embedded", "http", "pi"],
                |s| match s {
                    "embedded" => Some(DecisionProvider::Embedded),
                    "http" => Some(DecisionProvider::Http),
                    "pi" => Some(DecisionProvider::Pi),
                    _ => None,
                },
                DecisionProvider::None,
            ),
        };
        let threshold = match r.get("threshold") {
            None => d.threshold,
            Some(Value::Number(n)) => match n.as_f64() {
                Some(t) if (0.0..=1.0).contains(&t) => t,
                _ => {
                    r.warn(
                        "decision.threshold",
                        SettingsWarningCode::OutOfRange {
                            min: "0".into(),
                            max: "1".into(),
                        },
                    );
                    d.threshold
                }
            },
            Some(_) => {
                r.warn(
                    "decision.threshold",
                    SettingsWarningCode::WrongType {
                        expected: "a number",
                    },
                );
                d.threshold
            }
        };
        let decision = DecisionSettings {
            provider,
            model: r.text(
                "model",
                "decision.model",
                "1 to 256 characters of valid Unicode, no control characters",
                is_model_id,
            ),
            base_url: r.text(
                "baseUrl",
                "decision.baseUrl",
                "an http:// or https:// URL of at most 2048 characters",
                is_base_url,
            ),
            api_key_env: r.text(
                "apiKeyEnv",
                "decision.apiKeyEnv",
                "an environment variable name ([A-Za-z_][A-Za-z0-9_]*)",
                is_env_name,
            ),
            threshold,
            max_new_tools: r.int(
                "maxNewTools",
                "decision.maxNewTools",
                MAX_NEW_TOOLS_BOUNDS.min,
                MAX_NEW_TOOLS_BOUNDS.max,
                d.max_new_tools.into(),
            ) as u32,
            max_new_groups: r.int(
                "maxNewGroups",
                "decision.maxNewGroups",
                MAX_NEW_GROUPS_BOUNDS.min,
                MAX_NEW_GROUPS_BOUNDS.max,
                d.max_new_groups.into(),
            ) as u32,
            // Not set, or not usable (warned): the mode's default.
            minimum_candidates: r
                .whole(
                    "minimumCandidates",
                    "decision.minimumCandidates",
                    MINIMUM_CANDIDATES_BOUNDS.min,
                    MINIMUM_CANDIDATES_BOUNDS.max,
                )
                .map(|v| v as u32),
            batch_size: r.int(
                "batchSize",
                "decision.batchSize",
                BATCH_SIZE_BOUNDS.min,
                BATCH_SIZE_BOUNDS.max,
                d.batch_size.into(),
            ) as u32,
            concurrency: r.int(
                "concurrency",
                "decision.concurrency",
                CONCURRENCY_BOUNDS.min,
                CONCURRENCY_BOUNDS.max,
                d.concurrency.into(),
            ) as u32,
            timeout_ms: r.int(
                "timeoutMs",
                "decision.timeoutMs",
                TIMEOUT_MS_BOUNDS.min,
                TIMEOUT_MS_BOUNDS.max,
                d.timeout_ms,
            ),
            fail_mode: r.choice(
                "failMode",
                "decision.failMode",
                &["closed", "open"],
                |s| match s {
                    "closed" => Some(FailMode::Closed),
                    "open" => Some(FailMode::Open),
                    _ => None,
                },
                d.fail_mode,
            ),
        };
        (Settings { tools, decision }, warnings)
    }

    /// The settings as the nested JSON object the global file holds (every key, canonical
    /// spellings; group entries as canonical keys; `minimumCandidates` only when it is set, so
    /// the mode's default stays a default).
    pub fn to_json(&self) -> Value {
        let t = &self.tools;
        let d = &self.decision;
        let mut value = json!({
            "tools": {
                "enabled": t.enabled,
                "mode": t.mode.as_str(),
                "cadence": t.cadence.as_str(),
                "readMcpConfig": t.read_mcp_config,
                "alwaysAllowedTools": t.always_allowed_tools.iter().map(ToolName::as_str).collect::<Vec<_>>(),
                "alwaysAllowedMcpServers": t.always_allowed_groups.iter().map(GroupKey::as_str).collect::<Vec<_>>(),
            },
            "decision": {
                "provider": match d.provider { DecisionProvider::None => Value::Null, p => Value::from(p.as_str()) },
                "model": d.model,
                "baseUrl": d.base_url,
                "apiKeyEnv": d.api_key_env,
                "threshold": d.threshold,
                "maxNewTools": d.max_new_tools,
                "maxNewGroups": d.max_new_groups,
                "minimumCandidates": d.minimum_candidates,
                "batchSize": d.batch_size,
                "concurrency": d.concurrency,
                "timeoutMs": d.timeout_ms,
                "failMode": d.fail_mode.as_str(),
            }
        });
        if d.minimum_candidates.is_none() {
            if let Some(decision) = value["decision"].as_object_mut() {
                decision.remove("minimumCandidates");
            }
        }
        value
    }

    /// The global allowlists.
    pub fn global_allowlist(&self) -> ScopedAllowlist {
        ScopedAllowlist {
            tools: self.tools.always_allowed_tools.clone(),
            groups: self.tools.always_allowed_groups.clone(),
        }
    }
}

/// The project file `<cwd>/.pi/pi-context-decisions.json`: `alwaysAllowedTools`,
/// `alwaysAllowedMcpServers`, and `alwaysAllowed` (the skills list of older readers, which this
/// crate never reads and the store always keeps).
#[derive(Debug, Clone, Copy)]
pub struct ProjectAllowlistFile;

impl ProjectAllowlistFile {
    /// Reads the project allowlists, field by field.
    pub fn from_json(value: &Value) -> (ScopedAllowlist, Vec<SettingsWarning>) {
        let mut warnings = Vec::new();
        let obj = match value {
            Value::Object(obj) => Some(obj),
            Value::Null => None,
            _ => {
                warnings.push(SettingsWarning {
                    field: "(top level)",
                    code: SettingsWarningCode::NotAnObject,
                });
                None
            }
        };
        let mut r = Reader {
            obj,
            warnings: &mut warnings,
        };
        let list = ScopedAllowlist {
            tools: r.list("alwaysAllowedTools", "alwaysAllowedTools", parse_tool_entry),
            groups: r.list(
                "alwaysAllowedMcpServers",
                "alwaysAllowedMcpServers",
                parse_group_entry,
            ),
        };
        (list, warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_ones() {
        let (s, w) = Settings::from_json(&json!({}));
        assert!(w.is_empty());
        assert_eq!(s, Settings::default());
        assert!(!s.tools.enabled);
        assert_eq!(s.tools.mode, Mode::Tools);
        assert_eq!(s.tools.cadence, Cadence::Prompt);
        assert!(!s.tools.read_mcp_config);
        assert_eq!(s.decision.provider, DecisionProvider::None);
        assert!(!s.decision.has_model());
        assert_eq!(s.decision.threshold, 0.625);
        assert_eq!(
            (s.decision.max_new_tools, s.decision.max_new_groups),
            (6, 3)
        );
        // A file that names the earlier default keeps it.
        let (two, w) = Settings::from_json(&json!({"decision": {"maxNewGroups": 2}}));
        assert!(w.is_empty());
        assert_eq!(two.decision.max_new_groups, 2);
        assert_eq!(two.to_json()["decision"]["maxNewGroups"], 2);
        assert_eq!(s.decision.minimum_candidates, None);
        assert_eq!(s.decision.minimum_candidates_for(Mode::Tools), 10);
        assert_eq!(s.decision.minimum_candidates_for(Mode::Mcp), 2);
        assert_eq!(
            (
                s.decision.batch_size,
                s.decision.concurrency,
                s.decision.timeout_ms
            ),
            (50, 6, 30_000)
        );
        assert_eq!(s.decision.fail_mode, FailMode::Closed);
    }

    #[test]
    fn one_bad_field_falls_back_alone() {
        let (s, w) = Settings::from_json(&json!({
            "tools": {"enabled": true, "mode": "groups", "cadence": "tool-round",
                      "alwaysAllowedTools": ["web_fetch", "has space", 3],
                      "alwaysAllowedMcpServers": ["dev-radius", "ext__Notes", "bad.name"]},
            "decision": {"provider": "embedded", "threshold": 1.5, "maxNewTools": 3,
                         "batchSize": 0, "timeoutMs": 2.5, "apiKeyEnv": "sk-live-SECRET",
                         "failMode": "open", "unknown": 1}
        }));
        assert!(s.tools.enabled);
        assert_eq!(s.tools.mode, Mode::Tools);
        assert_eq!(s.tools.cadence, Cadence::ToolRound);
        assert_eq!(s.tools.always_allowed_tools.len(), 1);
        let groups: Vec<_> = s
            .tools
            .always_allowed_groups
            .iter()
            .map(|g| g.as_str())
            .collect();
        assert_eq!(groups, ["mcp__dev_radius", "ext__notes"]);
        assert_eq!(s.decision.provider, DecisionProvider::Embedded);
        assert_eq!(s.decision.threshold, 0.625);
        assert_eq!(s.decision.max_new_tools, 3);
        assert_eq!(s.decision.batch_size, 50);
        assert_eq!(s.decision.timeout_ms, 30_000);
        assert_eq!(s.decision.api_key_env, None);
        assert_eq!(s.decision.fail_mode, FailMode::Open);
        let fields: Vec<_> = w.iter().map(|w| w.field).collect();
        assert_eq!(
            fields,
            [
                "tools.mode",
                "tools.alwaysAllowedTools",
                "tools.alwaysAllowedTools",
                "tools.alwaysAllowedMcpServers",
                "decision.threshold",
                "decision.apiKeyEnv",
                "decision.batchSize",
                "decision.timeoutMs",
            ]
        );
        assert!(!format!("{w:?}").contains("SECRET"));
    }

    #[test]
    fn non_object_sections_warn() {
        let (s, w) = Settings::from_json(&json!({"tools": [], "decision": "x"}));
        assert_eq!(s, Settings::default());
        assert_eq!(w.len(), 2);
        let (_, w) = Settings::from_json(&json!(7));
        assert_eq!(w[0].code, SettingsWarningCode::NotAnObject);
    }

    /// Issue 34, item 6: unset, the minimum is the mode's default (10 tools, 2 groups), and it
    /// stays unset through the file's JSON; a file that names a number (the old default 10
    /// included) means it in both modes; a value out of range warns and falls back to the
    /// mode's default.
    #[test]
    fn the_minimum_candidates_default_depends_on_the_mode_until_set() {
        let (unset, w) = Settings::from_json(&json!({"tools": {"mode": "mcp"}}));
        assert!(w.is_empty());
        assert_eq!(unset.decision.minimum_candidates, None);
        assert_eq!(unset.decision.minimum_candidates_for(Mode::Mcp), 2);
        assert_eq!(unset.decision.minimum_candidates_for(Mode::Tools), 10);
        assert!(unset.to_json()["decision"]
            .get("minimumCandidates")
            .is_none());
        let (ten, _) = Settings::from_json(&json!({"decision": {"minimumCandidates": 10}}));
        assert_eq!(ten.decision.minimum_candidates_for(Mode::Mcp), 10);
        assert_eq!(ten.to_json()["decision"]["minimumCandidates"], 10);
        let (again, _) = Settings::from_json(&ten.to_json());
        assert_eq!(again.decision.minimum_candidates, Some(10));
        let (bad, w) = Settings::from_json(&json!({"decision": {"minimumCandidates": -1}}));
        assert_eq!(w.len(), 1);
        assert_eq!(bad.decision.minimum_candidates, None);
    }

    #[test]
    fn round_trips_through_json() {
        let (s, _) = Settings::from_json(&json!({
            "tools": {"enabled": true, "mode": "mcp", "alwaysAllowedMcpServers": ["a-b"]},
            "decision": {"provider": "http", "model": "m", "baseUrl": "http://127.0.0.1:8080", "apiKeyEnv": "KEY"}
        }));
        assert!(s.decision.has_model());
        let (again, w) = Settings::from_json(&s.to_json());
        assert!(w.is_empty());
        assert_eq!(again, s);
    }

    #[test]
    fn project_file() {
        let (list, w) = ProjectAllowlistFile::from_json(&json!({
            "alwaysAllowedTools": ["t"], "alwaysAllowedMcpServers": ["docs"], "alwaysAllowed": ["skill"]
        }));
        assert!(w.is_empty());
        assert!(list.has_tool("t"));
        assert!(list.has_group(&GroupKey::for_mcp_server("docs")));
    }
}
