//! The names-only `mcp.json` reader: which MCP servers the global file defines and which the
//! project file, mirroring Pi's `loadMcpConfig` within the specification's bounds.

use crate::bounded::{read_bounded, FileRead};
use crate::json::{self, FnvMap, JsString, Object, Value};
use crate::validate::{is_valid_name, validate, Refusal};
use crate::version::PiVersion;
use pcd_model::{ConfigFile, ConfigWarning, ConfigWarningCode, GroupKey, Scope};
use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// The largest `mcp.json` read; a larger file contributes nothing and warns `too_large`.
pub const MAX_MCP_FILE_BYTES: u64 = 64 * 1024;

/// The most server entries one file may hold; with more it contributes nothing and warns
/// `too_many_servers`.
pub const MAX_MCP_SERVER_ENTRIES: usize = 1000;

/// The keys a project settings-only override may set.
const OVERRIDE_KEYS: [&str; 3] = ["enabled", "exposure", "toolExposure"];

/// A server name that passed Pi's name rule (`[A-Za-z0-9_-]+`). Only the reader makes them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerName(String);

impl ServerName {
    /// The name, as written in the file.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One MCP server Pi will load from the files, with where it is defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerOrigin {
    name: ServerName,
    namespace: GroupKey,
    scope: Scope,
    project_override: bool,
}

impl McpServerOrigin {
    /// The server's name.
    pub fn name(&self) -> &ServerName {
        &self.name
    }

    /// Pi's namespace for it (`mcp__` + the name with `-` as `_`).
    pub fn namespace(&self) -> &GroupKey {
        &self.namespace
    }

    /// The file that defines it. A settings-only project override keeps [`Scope::Global`].
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// Whether a project settings-only override (`enabled`/`exposure`/`toolExposure`) applies to
    /// this global server.
    pub fn has_project_override(&self) -> bool {
        self.project_override
    }
}

/// What the reader learned: server names in Pi's order, and safe warnings.
///
/// It cannot hold a command, argument, env value, URL, header or credential: only validated
/// names, their namespaces, scopes and warning codes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct McpOrigins {
    servers: Vec<McpServerOrigin>,
    warnings: Vec<ConfigWarning>,
}

impl McpOrigins {
    /// The servers, in Pi's order (a replaced global server keeps its position).
    pub fn servers(&self) -> &[McpServerOrigin] {
        &self.servers
    }

    /// The warnings, in the order Pi reports its errors.
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// The (namespace, scope) pairs a `pcd_model::Classifier` takes as built-in MCP origins.
    pub fn classifier_origins(&self) -> impl Iterator<Item = (GroupKey, Scope)> + '_ {
        self.servers.iter().map(|s| (s.namespace.clone(), s.scope))
    }
}

/// One file's content as the sans-IO core sees it.
#[derive(Debug, Clone, Copy)]
pub enum McpFileInput<'a> {
    /// No file (or no folder): no names, no warning.
    Absent,
    /// The file's bytes as read (the size bound is still checked).
    Bytes(&'a [u8]),
    /// The file could not be used before parsing: the warning to give.
    Refused(ConfigWarningCode),
}

/// Reads `<agent_dir>/mcp.json` and, only when `project_trusted`, `<cwd>/.pi/mcp.json`, exactly
/// as Pi `version` would, within the specification's bounds. Never writes, executes or expands
/// anything; never fails (every problem is a warning).
///
/// `agent_dir` is Pi's agent directory as the caller resolved it (`PI_CODING_AGENT_DIR`, else
/// `~/.pi/agent`); this crate reads no environment.
pub fn read_mcp_origins(
    agent_dir: &Path,
    cwd: &Path,
    project_trusted: bool,
    version: PiVersion,
) -> McpOrigins {
    let global = read_file(&agent_dir.join("mcp.json"));
    let project = project_trusted.then(|| read_file(&cwd.join(".pi").join("mcp.json")));
    evaluate(as_input(&global), project.as_ref().map(as_input), version)
}

fn as_input(read: &(Option<Vec<u8>>, Option<ConfigWarningCode>)) -> McpFileInput<'_> {
    match read {
        (_, Some(code)) => McpFileInput::Refused(*code),
        (Some(bytes), None) => McpFileInput::Bytes(bytes),
        (None, None) => McpFileInput::Absent,
    }
}

fn read_file(path: &Path) -> (Option<Vec<u8>>, Option<ConfigWarningCode>) {
    match read_bounded(path, MAX_MCP_FILE_BYTES) {
        FileRead::Absent => (None, None),
        FileRead::Bytes(bytes) => (Some(bytes), None),
        FileRead::NotRegular => (None, Some(ConfigWarningCode::NotRegularFile)),
        FileRead::TooLarge => (None, Some(ConfigWarningCode::TooLarge)),
        FileRead::Unreadable(_) => (None, Some(ConfigWarningCode::ReadOrParse)),
    }
}

/// The sans-IO core: the two files' contents in, names and warnings out. `project` is `None`
/// when the project is not trusted (its file is then never looked at).
pub fn evaluate(
    global: McpFileInput<'_>,
    project: Option<McpFileInput<'_>>,
    version: PiVersion,
) -> McpOrigins {
    // The decoded texts outlive the parsed trees, which borrow their strings from them, and the
    // trees outlive the loader, which borrows its names from them.
    let global_text = decode(global);
    let project_text = project.map(decode);
    let (global_tree, global_codes) = prepare(&global_text, version);
    let (project_tree, project_codes) = match &project_text {
        Some(text) => prepare(text, version),
        None => (None, Vec::new()),
    };
    let mut loader = Loader {
        version,
        slots: Vec::new(),
        by_namespace: FnvMap::default(),
        warnings: Vec::new(),
    };
    for code in global_codes {
        loader.warn(ConfigFile::Global, code, None);
    }
    let global_servers = global_tree.as_ref().and_then(mcp_servers);
    if let Some(servers) = global_servers {
        loader.apply(servers, ConfigFile::Global, None);
    }
    for code in project_codes {
        loader.warn(ConfigFile::Project, code, None);
    }
    if let Some(servers) = project_tree.as_ref().and_then(mcp_servers) {
        loader.apply(servers, ConfigFile::Project, global_servers);
    }
    McpOrigins {
        servers: loader
            .slots
            .into_iter()
            .map(|slot| McpServerOrigin {
                namespace: GroupKey::for_mcp_server(slot.name),
                name: ServerName(slot.name.to_owned()),
                scope: slot.scope,
                project_override: slot.project_override,
            })
            .collect(),
        warnings: loader.warnings,
    }
}

fn mcp_servers<'t, 'a>(tree: &'t Value<'a>) -> Option<&'t Object<'a>> {
    tree.as_object()?.get("mcpServers")?.as_object()
}

/// The size bound and decoding: the text when the file is to be parsed, or the warning that
/// refuses it.
fn decode(input: McpFileInput<'_>) -> Result<Option<Cow<'_, str>>, ConfigWarningCode> {
    let bytes = match input {
        McpFileInput::Absent => return Ok(None),
        McpFileInput::Refused(code) => return Err(code),
        McpFileInput::Bytes(bytes) => bytes,
    };
    if bytes.len() as u64 > MAX_MCP_FILE_BYTES {
        return Err(ConfigWarningCode::TooLarge);
    }
    // Node's readFileSync(path, "utf8") replaces invalid UTF-8 rather than failing.
    // (The strict check first: it is much faster than the lossy one on valid text.)
    Ok(Some(match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }))
}

/// Parsing and the top-level checks: the parsed file when its servers are to be walked, and the
/// file-level warnings, in Pi's order.
fn prepare<'t>(
    decoded: &'t Result<Option<Cow<'_, str>>, ConfigWarningCode>,
    version: PiVersion,
) -> (Option<Value<'t>>, Vec<ConfigWarningCode>) {
    let text = match decoded {
        Ok(None) => return (None, Vec::new()),
        Err(code) => return (None, vec![*code]),
        Ok(Some(text)) => text.as_ref(),
    };
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) if version.strips_bom() => rest,
        _ => text,
    };
    let Ok(tree) = json::parse(text) else {
        return (None, vec![ConfigWarningCode::ReadOrParse]);
    };
    let Some(top) = tree.as_object() else {
        return (None, vec![ConfigWarningCode::NotObject]);
    };
    let servers = match top.get("mcpServers") {
        None => None,
        Some(Value::Object(servers)) => Some(servers),
        Some(_) => return (None, vec![ConfigWarningCode::NotObject]),
    };
    if servers.is_some_and(|s| s.len() > MAX_MCP_SERVER_ENTRIES) {
        return (None, vec![ConfigWarningCode::TooManyServers]);
    }
    let mut codes = Vec::new();
    if top
        .get("autoEnableCodemode")
        .is_some_and(|v| !matches!(v, Value::Bool(_)))
    {
        codes.push(ConfigWarningCode::AutoEnableCodemodeType);
    }
    (Some(tree), codes)
}

/// A server Pi keeps, its name borrowed from the parsed file. Its raw entry stays in the parsed
/// global file while the reader runs (a project override is merged into it and validated
/// again); nothing but the name leaves the reader.
struct Slot<'t> {
    name: &'t str,
    scope: Scope,
    project_override: bool,
}

struct Loader<'t> {
    version: PiVersion,
    slots: Vec<Slot<'t>>,
    /// Slot index by namespace (`-` folded to `_`): at most one kept name per namespace.
    by_namespace: FnvMap<Cow<'t, str>, usize>,
    warnings: Vec<ConfigWarning>,
}

fn scope_of(file: ConfigFile) -> Scope {
    match file {
        ConfigFile::Global => Scope::Global,
        ConfigFile::Project => Scope::Project,
    }
}

/// Pi's namespace folding (`-` to `_`), borrowing when there is nothing to fold.
fn fold(name: &str) -> Cow<'_, str> {
    if name.contains('-') {
        Cow::Owned(name.replace('-', "_"))
    } else {
        Cow::Borrowed(name)
    }
}

impl<'t> Loader<'t> {
    fn warn(&mut self, file: ConfigFile, code: ConfigWarningCode, name: Option<&JsString>) {
        let server = name
            .filter(|n| is_valid_name(n.as_bytes()))
            .and_then(|n| n.as_str())
            .map(str::to_owned);
        self.warnings.push(ConfigWarning { file, code, server });
    }

    /// The slot of exactly `name` (JavaScript's `servers.get(name)`).
    fn find(&self, name: &str) -> Option<usize> {
        self.find_in(&fold(name), name)
    }

    /// [`Loader::find`] with the namespace already folded.
    fn find_in(&self, namespace: &str, name: &str) -> Option<usize> {
        let i = *self.by_namespace.get(namespace)?;
        (self.slots[i].name == name).then_some(i)
    }

    /// Walks one file's servers; `global` is the global file's `mcpServers`, the base of project
    /// overrides.
    fn apply(&mut self, servers: &'t Object<'t>, file: ConfigFile, global: Option<&Object>) {
        let scope = scope_of(file);
        self.slots.reserve(servers.len());
        self.by_namespace.reserve(servers.len());
        for (name, value) in servers.js_entries() {
            if file == ConfigFile::Project {
                if let Some(entry) = value.as_object().filter(|o| is_override(o)) {
                    self.apply_override(name, entry, global);
                    continue;
                }
            }
            if let Err(refusal) = validate(name, value, self.version) {
                let code = match refusal {
                    Refusal::InvalidName => ConfigWarningCode::InvalidName,
                    Refusal::NotObject => ConfigWarningCode::ServerNotObject,
                    Refusal::InvalidServer => ConfigWarningCode::InvalidServer,
                };
                self.warn(file, code, Some(name));
                continue;
            }
            // Validation passed, so the name is ASCII.
            let Some(text) = name.as_str() else { continue };
            let namespace = fold(text);
            let clash = self
                .by_namespace
                .get(&namespace)
                .is_some_and(|&i| self.slots[i].name != text);
            if clash {
                self.warn(file, ConfigWarningCode::NameClash, Some(name));
                continue;
            }
            let entry = value.as_object();
            if file == ConfigFile::Project
                && entry.is_some_and(|e| {
                    e.contains_key("url") && e.get("auth").is_some_and(Value::is_truthy)
                })
            {
                self.warn(file, ConfigWarningCode::ProjectAuth, Some(name));
                continue;
            }
            let slot = Slot {
                name: text,
                scope,
                project_override: false,
            };
            match self.find_in(&namespace, text) {
                Some(i) => self.slots[i] = slot,
                None => {
                    self.by_namespace.insert(namespace, self.slots.len());
                    self.slots.push(slot);
                }
            }
        }
    }

    /// A project entry without `command`, `url` and `type`: it adjusts the global server of
    /// exactly the same name (no `-`/`_` folding) and keeps its global scope.
    fn apply_override(&mut self, name: &JsString, entry: &Object, global: Option<&Object>) {
        let file = ConfigFile::Project;
        let Some(index) = name.as_str().and_then(|n| self.find(n)) else {
            self.warn(file, ConfigWarningCode::OverrideWithoutBase, Some(name));
            return;
        };
        if entry
            .entries()
            .any(|(k, _)| !OVERRIDE_KEYS.iter().any(|o| k.is(o)))
        {
            self.warn(file, ConfigWarningCode::OverrideExtraKeys, Some(name));
            return;
        }
        // The base is always a global entry: a project file cannot define a name and override it
        // too (a duplicate key is one entry).
        let base = global
            .and_then(|g| g.get(self.slots[index].name))
            .and_then(Value::as_object);
        let mut merged = base.cloned().unwrap_or_default();
        for (k, v) in entry.entries() {
            merged.insert(k.clone(), v.clone());
        }
        if validate(name, &Value::Object(merged), self.version).is_err() {
            self.warn(file, ConfigWarningCode::InvalidServer, Some(name));
            return;
        }
        self.slots[index].project_override = true;
    }
}

/// Pi's `isMcpServerOverride`: none of the `command`, `url` and `type` keys (a JSON `null` value
/// counts as present).
fn is_override(entry: &Object) -> bool {
    !entry.contains_key("command") && !entry.contains_key("url") && !entry.contains_key("type")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdir::TestDir;
    use crate::vectors::render;
    use proptest::prelude::*;

    fn run(global: &str, project: Option<&str>) -> (Vec<String>, Vec<String>) {
        run_in(global, project, PiVersion::NEWEST)
    }

    fn run_in(global: &str, project: Option<&str>, v: PiVersion) -> (Vec<String>, Vec<String>) {
        render(&evaluate(
            McpFileInput::Bytes(global.as_bytes()),
            project.map(|p| McpFileInput::Bytes(p.as_bytes())),
            v,
        ))
    }

    fn servers(n: usize) -> String {
        let entries: Vec<String> = (0..n)
            .map(|i| format!(r#""s{i}":{{"command":"x"}}"#))
            .collect();
        format!(r#"{{"mcpServers":{{{}}}}}"#, entries.join(","))
    }

    #[test]
    fn entry_bound() {
        let (s, w) = run(&servers(MAX_MCP_SERVER_ENTRIES), None);
        assert_eq!((s.len(), w.len()), (1000, 0));
        let (s, w) = run(&servers(MAX_MCP_SERVER_ENTRIES + 1), None);
        assert!(s.is_empty());
        assert_eq!(w, ["global:too_many_servers"]);
        // Duplicate keys are one entry, as in JavaScript.
        let dup = servers(1000).replace(r#""s0":"#, r#""s1":"#);
        assert_eq!(run(&dup, None).0.len(), 999);
    }

    #[test]
    fn size_bound() {
        let pad = |n: usize| {
            let base = r#"{"mcpServers":{"a":{"command":"x"}}}"#;
            format!("{base}{}", " ".repeat(n - base.len()))
        };
        let at = pad(MAX_MCP_FILE_BYTES as usize);
        assert_eq!(run(&at, None).0, ["a/global"]);
        let over = pad(MAX_MCP_FILE_BYTES as usize + 1);
        assert_eq!(
            run(&over, None),
            (vec![], vec!["global:too_large".to_owned()])
        );
        // Through the file system too, and the project file is still read.
        let dir = TestDir::new();
        dir.write("agent/mcp.json", over.as_bytes());
        dir.write(
            "cwd/.pi/mcp.json",
            br#"{"mcpServers":{"a":{"enabled":false},"b":{"command":"x"}}}"#,
        );
        let got = render(&read_mcp_origins(
            &dir.path().join("agent"),
            &dir.path().join("cwd"),
            true,
            PiVersion::NEWEST,
        ));
        assert_eq!(got.0, ["b/project"]);
        assert_eq!(
            got.1,
            ["global:too_large", "project:override_without_base:a"]
        );
    }

    #[test]
    fn untrusted_project_file_is_never_opened() {
        let dir = TestDir::new();
        // A FIFO would block a reader that opened it without O_NONBLOCK; a directory would warn.
        std::fs::create_dir_all(dir.path().join("cwd/.pi/mcp.json")).unwrap();
        let got = read_mcp_origins(
            &dir.path().join("agent"),
            &dir.path().join("cwd"),
            false,
            PiVersion::NEWEST,
        );
        assert_eq!(got, McpOrigins::default());
    }

    #[test]
    fn javascript_number_and_string_parity() {
        let (s, w) = run(
            r#"{"mcpServers":{"a":{"command":"x","timeout":1e400},"b":{"command":"x","description":"\ud800"}}}"#,
            None,
        );
        assert_eq!(
            (s, w.len()),
            (vec!["a/global".into(), "b/global".into()], 0)
        );
        // Lone-surrogate names are two distinct invalid names, as in JavaScript.
        let (_, w) = run(
            r#"{"mcpServers":{"\ud800":{"command":"x"},"\ud801":{"command":"x"}}}"#,
            None,
        );
        assert_eq!(w, ["global:invalid_name", "global:invalid_name"]);
        // Invalid UTF-8 is replaced, as Node's decoder does, not a read error.
        let mut bytes = br#"{"mcpServers":{"a":{"command":"x","description":""#.to_vec();
        bytes.extend_from_slice(&[0xff, 0xfe]);
        bytes.extend_from_slice(br#""}}}"#);
        let got = render(&evaluate(
            McpFileInput::Bytes(&bytes),
            None,
            PiVersion::NEWEST,
        ));
        assert_eq!(got.0, ["a/global"]);
    }

    #[test]
    fn object_prototype_names_are_ordinary() {
        let (s, w) = run(
            r#"{"mcpServers":{"__proto__":{"command":"x"},"constructor":{"command":"x"},"toString":{"command":"x"}}}"#,
            Some(r#"{"mcpServers":{"hasOwnProperty":{"enabled":false}}}"#),
        );
        assert_eq!(
            s,
            ["__proto__/global", "constructor/global", "toString/global"]
        );
        assert_eq!(w, ["project:override_without_base:hasOwnProperty"]);
    }

    #[test]
    fn auto_client_registration_by_version() {
        let g = r#"{"mcpServers":{"a":{"url":"https://e.example","oauth":{"clientRegistration":"auto"}}}}"#;
        let v = |s| PiVersion::parse(s).unwrap();
        assert_eq!(run_in(g, None, v("1.6.0")).0, ["a/global"]);
        assert_eq!(run_in(g, None, v("1.5.2")).1, ["global:invalid_server:a"]);
    }

    #[test]
    fn override_and_auth_details() {
        // `url` of any type with a truthy `auth` is refused in the project file, even on stdio.
        let (s, w) = run(
            "{}",
            Some(
                r#"{"mcpServers":{"a":{"command":"x","url":5,"auth":1},"b":{"command":"x","url":5,"auth":0}}}"#,
            ),
        );
        assert_eq!(s, ["b/project"]);
        assert_eq!(w, ["project:project_auth:a"]);
        // The override's merged entry is validated; its base stays when it fails.
        let (s, w) = run(
            r#"{"mcpServers":{"a":{"command":"x","exposure":"direct"}}}"#,
            Some(r#"{"mcpServers":{"a":{"toolExposure":[]}}}"#),
        );
        assert_eq!(
            (s, w),
            (
                vec!["a/global".into()],
                vec!["project:invalid_server:a".into()]
            )
        );
        // An override with an invalid name warns without naming it.
        let (_, w) = run("{}", Some(r#"{"mcpServers":{"bad.name":{}}}"#));
        assert_eq!(w, ["project:override_without_base"]);
    }

    #[test]
    fn classifier_origins_use_model_keys() {
        let o = evaluate(
            McpFileInput::Bytes(br#"{"mcpServers":{"dev-radius":{"command":"x"}}}"#),
            None,
            PiVersion::NEWEST,
        );
        let pairs: Vec<_> = o.classifier_origins().collect();
        assert_eq!(
            pairs,
            [(GroupKey::for_mcp_server("dev_radius"), Scope::Global)]
        );
    }

    /// A planted secret; not a valid server name, so it may never come out in any form.
    const SECRET: &str = "sk.live/SECRET 7f3a";

    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            (-5i64..70000).prop_map(serde_json::Value::from),
            prop_oneof![
                Just(SECRET.to_owned()),
                Just(format!("https://{SECRET}.example/mcp")),
                Just(format!("http://localhost:8080/{SECRET}")),
                Just("stdio".to_owned()),
                Just("http".to_owned()),
                Just("direct".to_owned()),
                "[a-z_.-]{0,6}",
            ]
            .prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::vec(
                    (
                        prop_oneof![
                            Just("command".to_owned()),
                            Just("url".to_owned()),
                            Just("type".to_owned()),
                            Just("auth".to_owned()),
                            Just("env".to_owned()),
                            Just("headers".to_owned()),
                            Just("enabled".to_owned()),
                            Just(SECRET.to_owned()),
                            "[A-Za-z0-9_.-]{0,5}",
                        ],
                        inner
                    ),
                    0..5
                )
                .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    fn file() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::collection::vec(
                (
                    prop_oneof![Just(SECRET.to_owned()), "[A-Za-z0-9_-]{1,4}", "[ -~]{0,4}"],
                    json_value()
                ),
                0..6
            )
            .prop_map(|kv| {
                let servers: serde_json::Map<_, _> = kv.into_iter().collect();
                serde_json::json!({"mcpServers": servers, "autoEnableCodemode": SECRET}).to_string()
            }),
            json_value().prop_map(|v| v.to_string()),
            "[ -~]{0,40}",
        ]
    }

    proptest! {
        /// Nothing but validated names (taken from the input's keys) reaches the output.
        #[test]
        fn only_validated_names_come_out(global in file(), project in file(), trusted: bool) {
            let o = evaluate(
                McpFileInput::Bytes(global.as_bytes()),
                trusted.then_some(McpFileInput::Bytes(project.as_bytes())),
                PiVersion::NEWEST,
            );
            let names = o.servers().iter().map(|s| s.name().as_str())
                .chain(o.warnings().iter().filter_map(|w| w.server.as_deref()));
            for name in names {
                prop_assert!(is_valid_name(name.as_bytes()), "{:?}", name);
                let quoted = format!("\"{name}\"");
                prop_assert!(global.contains(&quoted) || project.contains(&quoted));
                prop_assert!(!name.contains(SECRET));
            }
            let debug = format!("{:?}", o);
            prop_assert!(!debug.contains("SECRET"));
        }
    }
}
