//! What Pi's `getAllTools()` returns, read strictly and boundedly.
//!
//! The conversion is written by hand over `serde_json::Value` rather than derived, for two
//! reasons: every problem names the tool's index and the field (never the offending value, which
//! may be a secret), and the parameter schema is measured and dropped on the spot, so no schema,
//! annotation or namespace instruction is ever held by this process past parsing.

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Names longer than this are not accepted from an inventory (no provider accepts them either);
/// such a tool is rejected, which leaves it unknown and therefore blocked by the gate.
pub const MAX_INVENTORY_TOOL_NAME_CHARS: usize = 256;

/// Descriptions are kept up to this many bytes (cut at a character boundary); the picker bounds
/// them much further before anything is sent.
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;

/// How Pi exposes a tool (`ToolInfo.exposure`; a missing value means `direct`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ToolExposure {
    /// Declared to the model and callable.
    #[default]
    Direct,
    /// Declared to the model, not callable from codemode scripts.
    ModelOnly,
    /// Reached through codemode scripts (extension tools; MCP maps this to `Deferred`).
    Codemode,
    /// Inactive but callable from codemode, `ctx.executeTool`, or after `tool_search`.
    Deferred,
    /// Unreachable.
    Hidden,
    /// A value this version does not know; treated as declared, so it is filtered like `direct`.
    Unknown,
}

impl ToolExposure {
    /// Parses Pi's exposure string; an unknown string is [`ToolExposure::Unknown`].
    pub fn parse(value: &str) -> ToolExposure {
        match value {
            "direct" => ToolExposure::Direct,
            "model-only" => ToolExposure::ModelOnly,
            "codemode" => ToolExposure::Codemode,
            "deferred" => ToolExposure::Deferred,
            "hidden" => ToolExposure::Hidden,
            _ => ToolExposure::Unknown,
        }
    }

    /// Pi's spelling (`unknown` for a value this version does not know).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolExposure::Direct => "direct",
            ToolExposure::ModelOnly => "model-only",
            ToolExposure::Codemode => "codemode",
            ToolExposure::Deferred => "deferred",
            ToolExposure::Hidden => "hidden",
            ToolExposure::Unknown => "unknown",
        }
    }

    /// Whether the tool is declared to the model in a request when active (`direct`,
    /// `model-only`, and unknown values); these are the ones `setActiveTools` withholds.
    pub fn is_declared(self) -> bool {
        matches!(
            self,
            ToolExposure::Direct | ToolExposure::ModelOnly | ToolExposure::Unknown
        )
    }

    /// Whether the tool is reached indirectly (codemode scripts, `tool_search`).
    pub fn is_indirect(self) -> bool {
        matches!(self, ToolExposure::Codemode | ToolExposure::Deferred)
    }
}

/// `sourceInfo.scope` as Pi assigns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceScope {
    /// User-level (global) resources.
    User,
    /// Project-level resources under `<cwd>/.pi`.
    Project,
    /// CLI `-e`, SDK factories and built-ins.
    Temporary,
    /// A value this version does not know (treated like a missing scope: global).
    Unknown,
}

impl SourceScope {
    /// Parses Pi's scope string.
    pub fn parse(value: &str) -> SourceScope {
        match value {
            "user" => SourceScope::User,
            "project" => SourceScope::Project,
            "temporary" => SourceScope::Temporary,
            _ => SourceScope::Unknown,
        }
    }
}

/// `sourceInfo.origin` as Pi assigns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceOrigin {
    /// Loaded from a package (npm, git, local package path, CLI `-e`).
    Package,
    /// A loose file, a settings `extensions` entry, an SDK factory or a built-in.
    TopLevel,
    /// A value this version does not know.
    Unknown,
}

impl SourceOrigin {
    /// Parses Pi's origin string.
    pub fn parse(value: &str) -> SourceOrigin {
        match value {
            "package" => SourceOrigin::Package,
            "top-level" => SourceOrigin::TopLevel,
            _ => SourceOrigin::Unknown,
        }
    }
}

/// Pi's public provenance of a tool (`ToolInfo.sourceInfo`). Paths are used only to derive a
/// group name and are never sent, written or shown.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceInfo {
    /// The entry file, or a synthetic path (`builtin:read`, `<inline:2>`, `<sdk:name>`).
    pub path: String,
    /// The settings string (`npm:@acme/pi-web@2.0.0`), `auto`, `local`, `inline`, `sdk` or
    /// `builtin`.
    pub source: String,
    /// `user`, `project` or `temporary`; `None` when Pi gave none.
    pub scope: Option<SourceScope>,
    /// `package` or `top-level`; `None` when Pi gave none.
    pub origin: Option<SourceOrigin>,
    /// The package's resolved directory, where Pi gives one.
    pub base_dir: Option<String>,
}

impl SourceInfo {
    /// Whether this is Pi-assigned built-in provenance (`source: "builtin"` with a `builtin:`
    /// path). Both must hold: a local package whose settings string happens to be `builtin` has a
    /// real file path and stays external.
    pub fn is_builtin(&self) -> bool {
        self.source == "builtin" && self.path.starts_with("builtin:")
    }
}

/// `ToolInfo.namespace`: for MCP tools, the server's namespace. Its `instructions` are never
/// read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolNamespace {
    /// `mcp__<server>` with `-` folded to `_` for MCP servers.
    pub name: String,
    /// The configured namespace description (sent to the decision model in group mode only).
    pub description: Option<String>,
    /// Pi 1.2+: the raw server name(s), e.g. `dev-radius` for `mcp__dev_radius`.
    pub aliases: Vec<String>,
}

/// One tool of Pi's registry, holding only what the policy and the decision model may use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolInfo {
    /// The tool's name, unique in an inventory.
    pub name: String,
    /// Its description (third-party data), bounded to [`MAX_DESCRIPTION_BYTES`].
    pub description: String,
    /// How Pi exposes it.
    pub exposure: ToolExposure,
    /// Its namespace, for MCP tools.
    pub namespace: Option<ToolNamespace>,
    /// Its provenance; `None` means unknown provenance (external).
    pub source_info: Option<SourceInfo>,
    /// Roughly how many characters its definition (name, description, parameter schema) takes in
    /// a request; used only to estimate the tokens withheld.
    pub definition_chars: usize,
}

impl ToolInfo {
    /// A tool with the given name, description and provenance, direct exposure and no namespace;
    /// handy for tests and examples.
    pub fn new(name: &str, description: &str, source_info: Option<SourceInfo>) -> ToolInfo {
        ToolInfo {
            name: name.to_owned(),
            description: description.to_owned(),
            exposure: ToolExposure::Direct,
            namespace: None,
            source_info,
            definition_chars: name.len() + description.len(),
        }
    }
}

/// A parsed inventory: the tools that were valid, and the entries that were not.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    /// Valid tools, in Pi's order.
    pub tools: Vec<ToolInfo>,
    /// Entries that could not be used; they stay unknown, so the gate blocks them.
    pub rejected: Vec<RejectedTool>,
}

/// An inventory entry that was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedTool {
    /// Its position in the array (0-based).
    pub index: usize,
    /// What was wrong.
    pub problem: ToolProblem,
}

/// Why an inventory entry was not accepted. Never carries the offending value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolProblem {
    /// The entry is not a JSON object.
    #[error("is not a JSON object")]
    NotAnObject,
    /// A required field is absent.
    #[error("has no `{0}` field")]
    MissingField(&'static str),
    /// A field has the wrong JSON type.
    #[error("field `{field}` must be {expected}")]
    WrongType {
        /// The field, dotted (`sourceInfo.scope`).
        field: &'static str,
        /// What was expected (`a string`).
        expected: &'static str,
    },
    /// The name is empty.
    #[error("has an empty name")]
    EmptyName,
    /// The name is longer than [`MAX_INVENTORY_TOOL_NAME_CHARS`].
    #[error("has a name of {chars} characters (at most {MAX_INVENTORY_TOOL_NAME_CHARS})")]
    NameTooLong {
        /// The name's length in characters.
        chars: usize,
    },
    /// The name contains a control character.
    #[error("has a control character in its name at position {position}")]
    ControlCharacterInName {
        /// The character position (0-based).
        position: usize,
    },
    /// Another entry earlier in the array has the same name; Pi keeps the first.
    #[error("repeats the name of entry {first}")]
    DuplicateName {
        /// The index of the first entry with that name.
        first: usize,
    },
}

/// Why a whole inventory could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InventoryError {
    /// The text is not JSON.
    #[error("not valid JSON ({category} at line {line}, column {column})")]
    Syntax {
        /// `syntax error`, `unexpected end of input` or `invalid data`.
        category: &'static str,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// The JSON is not an array.
    #[error("expected a JSON array of tools, found {found}")]
    NotAnArray {
        /// The JSON type found (`an object`, `a string`, …).
        found: &'static str,
    },
}

/// Parses a `getAllTools()`-shaped JSON array. Entries that are not usable tools are returned in
/// [`Inventory::rejected`] instead of failing the whole inventory, so one broken extension cannot
/// make every call unknowable; a rejected tool is unknown and therefore blocked.
pub fn parse_inventory(json: &str) -> Result<Inventory, InventoryError> {
    // The array's elements are borrowed as raw text, and each tool reads only the fields the
    // policy uses: the parameter schemas (most of an inventory) are measured, never built.
    let items: Vec<&RawValue> = match serde_json::from_str(json) {
        Ok(items) => items,
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            let value: Value = serde_json::from_str(json).map_err(|e| syntax(&e))?;
            return Err(InventoryError::NotAnArray {
                found: json_type(&value),
            });
        }
        Err(e) => return Err(syntax(&e)),
    };
    let mut inventory = Inventory {
        tools: Vec::with_capacity(items.len()),
        rejected: Vec::new(),
    };
    let mut first_of: HashMap<String, usize> = HashMap::with_capacity(items.len());
    for (index, raw) in items.iter().enumerate() {
        let parsed = match serde_json::from_str::<RawTool<'_>>(raw.get()) {
            Ok(tool) => tool.into_tool(),
            // A lone surrogate escape (half an emoji in a description) is read as U+FFFD rather
            // than losing the tool, which would block it even where an allowlist names it.
            Err(_) => match crate::lone_surrogates_replaced(raw.get()) {
                Some(fixed) => serde_json::from_str::<RawTool<'_>>(&fixed)
                    .map_err(|_| ToolProblem::NotAnObject)
                    .and_then(|t| t.into_tool()),
                None => Err(ToolProblem::NotAnObject),
            },
        };
        push_tool(&mut inventory, &mut first_of, index, parsed);
    }
    Ok(inventory)
}

fn syntax(e: &serde_json::Error) -> InventoryError {
    InventoryError::Syntax {
        category: match e.classify() {
            serde_json::error::Category::Eof => "unexpected end of input",
            serde_json::error::Category::Syntax => "syntax error",
            _ => "invalid data",
        },
        line: e.line(),
        column: e.column(),
    }
}

/// The fields of one tool the policy reads; every other field is skipped without being built.
#[derive(serde::Deserialize)]
struct RawTool<'a> {
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    description: Option<Value>,
    #[serde(default)]
    exposure: Option<Value>,
    #[serde(default)]
    namespace: Option<Value>,
    #[serde(default, rename = "sourceInfo")]
    source_info: Option<Value>,
    #[serde(default, borrow)]
    parameters: Option<&'a RawValue>,
}

impl RawTool<'_> {
    fn into_tool(self) -> Result<ToolInfo, ToolProblem> {
        let mut obj = Map::new();
        for (key, value) in [
            ("name", self.name),
            ("description", self.description),
            ("exposure", self.exposure),
            ("namespace", self.namespace),
            ("sourceInfo", self.source_info),
        ] {
            if let Some(value) = value {
                obj.insert(key.to_owned(), value);
            }
        }
        tool_from_map(&obj, self.parameters.map_or(0, |p| p.get().len()))
    }
}

fn push_tool(
    inventory: &mut Inventory,
    first_of: &mut HashMap<String, usize>,
    index: usize,
    parsed: Result<ToolInfo, ToolProblem>,
) {
    match parsed {
        Ok(tool) => {
            if let Some(&first) = first_of.get(&tool.name) {
                inventory.rejected.push(RejectedTool {
                    index,
                    problem: ToolProblem::DuplicateName { first },
                });
                return;
            }
            first_of.insert(tool.name.clone(), index);
            inventory.tools.push(tool);
        }
        Err(problem) => inventory.rejected.push(RejectedTool { index, problem }),
    }
}

/// Like [`parse_inventory`], from an already parsed JSON value.
pub fn inventory_from_value(value: &Value) -> Result<Inventory, InventoryError> {
    let Value::Array(items) = value else {
        return Err(InventoryError::NotAnArray {
            found: json_type(value),
        });
    };
    let mut inventory = Inventory {
        tools: Vec::with_capacity(items.len()),
        rejected: Vec::new(),
    };
    let mut first_of: HashMap<String, usize> = HashMap::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        push_tool(&mut inventory, &mut first_of, index, tool_from_value(item));
    }
    Ok(inventory)
}

fn tool_from_value(value: &Value) -> Result<ToolInfo, ToolProblem> {
    let Value::Object(obj) = value else {
        return Err(ToolProblem::NotAnObject);
    };
    tool_from_map(obj, obj.get("parameters").map_or(0, approx_json_len))
}

/// A tool from its fields; `parameters_chars` is how many characters its schema takes.
fn tool_from_map(
    obj: &Map<String, Value>,
    parameters_chars: usize,
) -> Result<ToolInfo, ToolProblem> {
    let name = match obj.get("name") {
        None | Some(Value::Null) => return Err(ToolProblem::MissingField("name")),
        Some(Value::String(s)) => s,
        Some(_) => {
            return Err(ToolProblem::WrongType {
                field: "name",
                expected: "a string",
            })
        }
    };
    validate_name(name)?;
    let description = bounded(opt_str(obj, "description", "description")?.unwrap_or_default());
    let exposure = opt_str(obj, "exposure", "exposure")?
        .map(ToolExposure::parse)
        .unwrap_or_default();
    let namespace = match obj.get("namespace") {
        None | Some(Value::Null) => None,
        Some(Value::Object(ns)) => Some(namespace_from(ns)?),
        Some(_) => {
            return Err(ToolProblem::WrongType {
                field: "namespace",
                expected: "an object",
            })
        }
    };
    let source_info = match obj.get("sourceInfo") {
        None | Some(Value::Null) => None,
        Some(Value::Object(si)) => Some(source_info_from(si)?),
        Some(_) => {
            return Err(ToolProblem::WrongType {
                field: "sourceInfo",
                expected: "an object",
            })
        }
    };
    let definition_chars = name.len() + description.len() + parameters_chars;
    Ok(ToolInfo {
        name: name.clone(),
        description,
        exposure,
        namespace,
        source_info,
        definition_chars,
    })
}

fn validate_name(name: &str) -> Result<(), ToolProblem> {
    if name.is_empty() {
        return Err(ToolProblem::EmptyName);
    }
    let chars = name.chars().count();
    if chars > MAX_INVENTORY_TOOL_NAME_CHARS {
        return Err(ToolProblem::NameTooLong { chars });
    }
    if let Some(position) = name.chars().position(char::is_control) {
        return Err(ToolProblem::ControlCharacterInName { position });
    }
    Ok(())
}

fn namespace_from(ns: &Map<String, Value>) -> Result<ToolNamespace, ToolProblem> {
    let name = match ns.get("name") {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => return Err(ToolProblem::MissingField("namespace.name")),
        Some(_) => {
            return Err(ToolProblem::WrongType {
                field: "namespace.name",
                expected: "a string",
            })
        }
    };
    let description = opt_str(ns, "description", "namespace.description")?.map(bounded);
    let aliases = match ns.get("aliases") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_owned).ok_or(ToolProblem::WrongType {
                    field: "namespace.aliases",
                    expected: "an array of strings",
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ToolProblem::WrongType {
                field: "namespace.aliases",
                expected: "an array of strings",
            })
        }
    };
    Ok(ToolNamespace {
        name,
        description,
        aliases,
    })
}

fn source_info_from(si: &Map<String, Value>) -> Result<SourceInfo, ToolProblem> {
    Ok(SourceInfo {
        path: opt_str(si, "path", "sourceInfo.path")?
            .unwrap_or_default()
            .to_owned(),
        source: opt_str(si, "source", "sourceInfo.source")?
            .unwrap_or_default()
            .to_owned(),
        scope: opt_str(si, "scope", "sourceInfo.scope")?.map(SourceScope::parse),
        origin: opt_str(si, "origin", "sourceInfo.origin")?.map(SourceOrigin::parse),
        base_dir: opt_str(si, "baseDir", "sourceInfo.baseDir")?.map(str::to_owned),
    })
}

fn opt_str<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    field: &'static str,
) -> Result<Option<&'a str>, ToolProblem> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ToolProblem::WrongType {
            field,
            expected: "a string",
        }),
    }
}

fn bounded(text: &str) -> String {
    if text.len() <= MAX_DESCRIPTION_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_DESCRIPTION_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// The JSON type of a value, as a phrase for error messages.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// About how many characters `value` takes serialised, without serialising it.
fn approx_json_len(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::Number(_) => 4,
        Value::String(s) => s.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|v| approx_json_len(v) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| k.len() + 4 + approx_json_len(v))
                .sum::<usize>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_field_pi_gives_and_ignores_unknown_ones() {
        let inv = parse_inventory(
            r#"[{"name":"mcp__dev_radius__search","description":"Search","exposure":"deferred",
                "namespace":{"name":"mcp__dev_radius","description":"Radius","instructions":"SECRET","aliases":["dev-radius"]},
                "parameters":{"type":"object","properties":{"q":{"type":"string"}}},
                "annotations":{"readOnlyHint":true},"promptGuidelines":["x"],"reachesTools":"all",
                "sourceInfo":{"path":"builtin:mcp","source":"builtin","scope":"temporary","origin":"top-level","changelogPath":"/x"}}]"#,
        )
        .unwrap();
        assert!(inv.rejected.is_empty());
        let t = &inv.tools[0];
        assert_eq!(t.exposure, ToolExposure::Deferred);
        let ns = t.namespace.as_ref().unwrap();
        assert_eq!(ns.name, "mcp__dev_radius");
        assert_eq!(ns.aliases, vec!["dev-radius".to_owned()]);
        assert_eq!(ns.description.as_deref(), Some("Radius"));
        assert!(t.source_info.as_ref().unwrap().is_builtin());
        assert!(t.definition_chars > t.name.len() + t.description.len());
        assert!(
            !format!("{t:?}").contains("SECRET"),
            "instructions are never kept"
        );
    }

    #[test]
    fn missing_exposure_is_direct_and_missing_source_info_is_none() {
        let inv = parse_inventory(r#"[{"name":"x"}]"#).unwrap();
        assert_eq!(inv.tools[0].exposure, ToolExposure::Direct);
        assert_eq!(inv.tools[0].source_info, None);
        assert_eq!(inv.tools[0].description, "");
    }

    #[test]
    fn bad_entries_are_rejected_by_index_without_echoing_values() {
        let inv = parse_inventory(
            r#"[1, {"description":"d"}, {"name":7}, {"name":""}, {"name":"a\u0007b"},
                {"name":"ok","sourceInfo":{"scope":"sk-SECRET-1"}}, {"name":"ok"},
                {"name":"y","sourceInfo":{"path":5}}, {"name":"z","namespace":"mcp__q"}]"#,
        )
        .unwrap();
        let problems: Vec<(usize, String)> = inv
            .rejected
            .iter()
            .map(|r| (r.index, r.problem.to_string()))
            .collect();
        assert_eq!(
            problems,
            vec![
                (0, "is not a JSON object".to_owned()),
                (1, "has no `name` field".to_owned()),
                (2, "field `name` must be a string".to_owned()),
                (3, "has an empty name".to_owned()),
                (
                    4,
                    "has a control character in its name at position 1".to_owned()
                ),
                (6, "repeats the name of entry 5".to_owned()),
                (7, "field `sourceInfo.path` must be a string".to_owned()),
                (8, "field `namespace` must be an object".to_owned()),
            ]
        );
        assert_eq!(inv.tools.len(), 1);
        assert_eq!(
            inv.tools[0].source_info.as_ref().unwrap().scope,
            Some(SourceScope::Unknown)
        );
    }

    #[test]
    fn a_lone_surrogate_in_a_description_keeps_the_tool() {
        // JSON.stringify writes half an emoji as a lone `\udXXX` escape, which serde_json
        // rejects; the tool is still read, the half read as U+FFFD.
        let inv = parse_inventory(
            r#"[{"name":"web_fetch","description":"Fetch \ud83d a page"},
                {"name":"pair","description":"\ud83d\ude00"},
                {"name":7,"description":"\udc00"}]"#,
        )
        .unwrap();
        assert_eq!(inv.tools.len(), 2, "{:?}", inv.rejected);
        assert_eq!(inv.tools[0].description, "Fetch \u{FFFD} a page");
        assert_eq!(inv.tools[1].description, "\u{1F600}");
        // An entry that is bad for another reason is still rejected for it.
        assert_eq!(
            inv.rejected[0].problem.to_string(),
            "field `name` must be a string"
        );
    }

    #[test]
    fn long_names_are_rejected() {
        let json = format!(r#"[{{"name":"{}"}}]"#, "n".repeat(300));
        let inv = parse_inventory(&json).unwrap();
        assert_eq!(
            inv.rejected[0].problem,
            ToolProblem::NameTooLong { chars: 300 }
        );
    }

    #[test]
    fn whole_file_errors_name_what_is_wrong_without_values() {
        let err = parse_inventory(r#"{"tools": "sk-SECRET"}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected a JSON array of tools, found an object"
        );
        let err = parse_inventory("[{\"name\": \"sk-SECRET\"").unwrap_err();
        assert!(err
            .to_string()
            .starts_with("not valid JSON (unexpected end of input"));
        assert!(!err.to_string().contains("SECRET"));
    }

    #[test]
    fn descriptions_are_bounded_at_a_char_boundary() {
        let long = "é".repeat(MAX_DESCRIPTION_BYTES);
        let json = serde_json::json!([{"name": "x", "description": long}]).to_string();
        let inv = parse_inventory(&json).unwrap();
        assert!(inv.tools[0].description.len() <= MAX_DESCRIPTION_BYTES);
        assert!(inv.tools[0].description.len() >= MAX_DESCRIPTION_BYTES - 1);
    }

    #[test]
    fn exposure_strings_round_trip() {
        for e in [
            ToolExposure::Direct,
            ToolExposure::ModelOnly,
            ToolExposure::Codemode,
            ToolExposure::Deferred,
            ToolExposure::Hidden,
        ] {
            assert_eq!(ToolExposure::parse(e.as_str()), e);
        }
        assert_eq!(ToolExposure::parse("future"), ToolExposure::Unknown);
        assert!(ToolExposure::Unknown.is_declared());
        assert!(ToolExposure::Deferred.is_indirect());
    }
}
