//! The names-only `mcp.json` reader against Pi's own loader (Pi 1.3.0 and 1.6.0, run by Node 22
//! from the npm registry): the 38 contract vectors and a seeded generator of configurations that
//! exercises every rule and warning code at least 10 times. Names, scopes, override flags, order
//! and warning codes must agree, except where the specification deliberately differs (symlinks,
//! file type, size, entry count); there the expected result is the specification's: the file
//! contributes nothing and one warning, everything else as Pi.
//!
//! Node and Pi are installed once into `.cache/pi/` by `tests/support/install-pi.sh`; if that
//! fails the test fails (it never skips). One Node process runs a whole batch.

use context_decisions::mcp_origins::{read_mcp_origins, PiVersion};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const SEED: u64 = 0x5eed_c0de_2026_1129;
const GENERATED: usize = 1000;
const MIN_HITS: usize = 10;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is inside the repository")
        .to_path_buf()
}

/// Runs the installer; panics loudly (never skips) when Node or Pi cannot be installed.
fn install(what: &str) -> PathBuf {
    let script = repo().join("tests/support/install-pi.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(what)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "install-pi.sh {what} failed (the differential test needs Node 22 and Pi from the npm \
         registry):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(path.exists(), "install-pi.sh {what} printed a missing path");
    path
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "pcd-differential-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How one `mcp.json` is laid out on disk.
#[derive(Clone, Debug)]
enum FileSpec {
    Absent,
    Bytes(Vec<u8>),
    /// Where the specification differs from Pi: the reader must warn with this code and take
    /// nothing from the file; Pi's view of the case has the file absent.
    Refused(RefusedKind, Vec<u8>),
}

#[derive(Clone, Copy, Debug)]
enum RefusedKind {
    Symlink,
    Dangling,
    Directory,
    TooLarge,
    TooMany,
}

impl RefusedKind {
    fn code(self) -> &'static str {
        match self {
            RefusedKind::Symlink | RefusedKind::Dangling | RefusedKind::Directory => {
                "not_regular_file"
            }
            RefusedKind::TooLarge => "too_large",
            RefusedKind::TooMany => "too_many_servers",
        }
    }
}

struct Case {
    label: String,
    global: FileSpec,
    project: FileSpec,
    trusted: bool,
    /// Pi before 1.4 differs here and the vector says how (vector 12).
    expect_before_1_4: Option<Value>,
    /// What the vector table says this reader gives (vectors only).
    expect: Option<Value>,
    features: Vec<&'static str>,
}

/// Lays a file out for the reader (`real`) and for Pi's view (`pi`: refused files absent).
fn lay_out(spec: &FileSpec, path: &Path, pi_path: &Path, scratch: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::create_dir_all(pi_path.parent().unwrap()).unwrap();
    match spec {
        FileSpec::Absent => {}
        FileSpec::Bytes(bytes) => {
            std::fs::write(path, bytes).unwrap();
            std::fs::write(pi_path, bytes).unwrap();
        }
        FileSpec::Refused(kind, bytes) => match kind {
            RefusedKind::Symlink => {
                let target = scratch.join(format!("target-{}", path.display().to_string().len()));
                std::fs::create_dir_all(&target).unwrap();
                let target = target.join("mcp.json");
                std::fs::write(&target, bytes).unwrap();
                std::os::unix::fs::symlink(&target, path).unwrap();
            }
            RefusedKind::Dangling => {
                std::os::unix::fs::symlink(scratch.join("nothing-here"), path).unwrap();
            }
            RefusedKind::Directory => std::fs::create_dir_all(path).unwrap(),
            RefusedKind::TooLarge | RefusedKind::TooMany => std::fs::write(path, bytes).unwrap(),
        },
    }
}

fn refused(spec: &FileSpec) -> Option<RefusedKind> {
    match spec {
        FileSpec::Refused(kind, _) => Some(*kind),
        _ => None,
    }
}

/// Pi's result turned into the specification's where a file is refused.
fn spec_expectation(case: &Case, pi: &Value) -> Value {
    let mut warnings: Vec<Value> = pi["warnings"].as_array().unwrap().clone();
    if let Some(kind) = refused(&case.global) {
        warnings.insert(0, json!(["global", kind.code(), null]));
    }
    if case.trusted {
        if let Some(kind) = refused(&case.project) {
            warnings.push(json!(["project", kind.code(), null]));
        }
    }
    json!({"servers": pi["servers"], "warnings": warnings})
}

fn rust_result(agent: &Path, cwd: &Path, trusted: bool, version: PiVersion) -> Value {
    let o = read_mcp_origins(agent, cwd, trusted, version);
    let servers: Vec<Value> = o
        .servers()
        .iter()
        .map(|s| {
            json!([
                s.name().as_str(),
                s.scope().as_str(),
                s.has_project_override()
            ])
        })
        .collect();
    let warnings: Vec<Value> = o
        .warnings()
        .iter()
        .map(|w| json!([w.file.as_str(), w.code.as_str(), w.server]))
        .collect();
    json!({"servers": servers, "warnings": warnings})
}

/// The vector table's `name/scope[+override]` and `file:code[:server]` notation as values.
fn from_notation(expect: &Value) -> Value {
    let servers: Vec<Value> = expect["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let s = s.as_str().unwrap();
            let (s, o) = match s.strip_suffix("+override") {
                Some(s) => (s, true),
                None => (s, false),
            };
            let (name, scope) = s.rsplit_once('/').unwrap();
            json!([name, scope, o])
        })
        .collect();
    let warnings: Vec<Value> = expect["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let parts: Vec<&str> = w.as_str().unwrap().splitn(3, ':').collect();
            json!([parts[0], parts[1], parts.get(2)])
        })
        .collect();
    json!({"servers": servers, "warnings": warnings})
}

fn vector_cases() -> Vec<Case> {
    let text =
        std::fs::read_to_string(repo().join("crates/config-reader/tests/data/pi-vectors.json"))
            .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let file = |spec: Option<&Value>| -> FileSpec {
        let Some(spec) = spec else {
            return FileSpec::Absent;
        };
        if let Some(text) = spec.get("text").and_then(Value::as_str) {
            let mut bytes = Vec::new();
            if spec.get("bom").and_then(Value::as_bool) == Some(true) {
                bytes.extend_from_slice("\u{feff}".as_bytes());
            }
            bytes.extend_from_slice(text.as_bytes());
            FileSpec::Bytes(bytes)
        } else if spec.get("dir").is_some() {
            FileSpec::Refused(RefusedKind::Directory, Vec::new())
        } else if let Some(text) = spec.get("symlink_to_text").and_then(Value::as_str) {
            FileSpec::Refused(RefusedKind::Symlink, text.as_bytes().to_vec())
        } else if spec.get("dangling").is_some() {
            FileSpec::Refused(RefusedKind::Dangling, Vec::new())
        } else {
            panic!("unknown file spec {spec}")
        }
    };
    doc["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| Case {
            label: format!("vector {}", v["id"].as_str().unwrap()),
            global: file(v.get("global")),
            project: file(v.get("project")),
            trusted: v.get("trusted").and_then(Value::as_bool) != Some(false),
            expect_before_1_4: v.get("expect_before_1_4").map(from_notation),
            expect: Some(from_notation(&v["expect"])),
            features: Vec::new(),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The seeded generator.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Names chosen to collide: fold variants, integer-like keys, prototype names, invalid names.
const NAMES: &[&str] = &[
    "a",
    "b",
    "c",
    "docs",
    "a-b",
    "a_b",
    "dev-radius",
    "dev_radius",
    "x-y",
    "x_y",
    "10",
    "2",
    "01",
    "0",
    "__proto__",
    "constructor",
    "bad.name",
    "with space",
    "",
    "ünï",
    "a/b",
    "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk",
];

const VALID_DEFS: &[(&str, &str)] = &[
    (
        "stdio",
        r#"{"command":"npx","args":["-y","sk-secret-arg"],"env":{"TOKEN":"sk-secret"}}"#,
    ),
    (
        "http",
        r#"{"url":"https://h.example/mcp","headers":{"Authorization":"Bearer sk-secret"}}"#,
    ),
    (
        "http_and_command",
        r#"{"command":"x","url":"https://h.example/mcp"}"#,
    ),
    (
        "typed_stdio",
        r#"{"type":"stdio","command":"x","cwd":"/tmp"}"#,
    ),
    (
        "typed_http",
        r#"{"type":"streamable-http","url":"http://localhost:3000/mcp"}"#,
    ),
    ("disabled", r#"{"command":"x","enabled":false}"#),
    (
        "disabled",
        r#"{"url":"https://h.example/mcp","enabled":false}"#,
    ),
    (
        "alias_exposure",
        r#"{"command":"x","exposure":"codemode-deferred","toolExposure":{"get_*":"direct","t":"codemode-deferred"}}"#,
    ),
    (
        "infinite_timeout",
        r#"{"command":"x","timeout":1e400,"description":"\ud800 lone"}"#,
    ),
    (
        "oauth_ok",
        r#"{"url":"https://h.example","oauth":{"clientId":"id","callbackUrl":"http://127.0.0.1:8123/cb","callbackPort":8123,"clientName":"n","clientRegistration":"dcr","authServerMetadataUrl":"https://a.example/m"}}"#,
    ),
    (
        "oauth_cimd",
        r#"{"url":"https://h.example","oauth":{"clientRegistration":"cimd","callbackUrl":"http://localhost:9/callback"}}"#,
    ),
    (
        "auth_https",
        r#"{"url":"https://h.example","auth":{"provider":"anthropic"}}"#,
    ),
    (
        "auth_loopback",
        r#"{"url":"http://[::1]:9/x","auth":{"provider":"p"}}"#,
    ),
    (
        "stdio_url_auth",
        r#"{"command":"x","url":5,"auth":{"provider":"p"}}"#,
    ),
    (
        "deep_unknown",
        r#"{"command":"x","extra":[[[[[[[{"k":[1,{"z":null}]}]]]]]]]}"#,
    ),
];

/// Each fails one of Pi's per-field checks (`invalid_server`).
const INVALID_DEFS: &[(&str, &str)] = &[
    ("exposure", r#"{"command":"x","exposure":"bogus"}"#),
    (
        "tool_exposure",
        r#"{"command":"x","toolExposure":{"t":"nope"}}"#,
    ),
    (
        "tool_exposure_type",
        r#"{"command":"x","toolExposure":["direct"]}"#,
    ),
    ("enabled", r#"{"command":"x","enabled":"yes"}"#),
    ("description", r#"{"command":"x","description":1}"#),
    ("timeout", r#"{"command":"x","timeout":0}"#),
    ("timeout_type", r#"{"command":"x","timeout":"5"}"#),
    ("sse", r#"{"type":"sse","url":"https://h.example/sse"}"#),
    ("http_type_command", r#"{"type":"http","command":"x"}"#),
    (
        "unknown_type",
        r#"{"type":"bogus","url":"https://h.example"}"#,
    ),
    ("ftp_url", r#"{"url":"ftp://h.example","command":"x"}"#),
    ("bad_url", r#"{"url":"not a url"}"#),
    ("args", r#"{"command":"x","args":"x"}"#),
    ("args_items", r#"{"command":"x","args":[1]}"#),
    ("env", r#"{"command":"x","env":{"K":1}}"#),
    ("cwd", r#"{"command":"x","cwd":1}"#),
    (
        "headers",
        r#"{"url":"https://h.example","headers":{"A":1}}"#,
    ),
    ("oauth_type", r#"{"url":"https://h.example","oauth":[]}"#),
    (
        "oauth_port",
        r#"{"url":"https://h.example","oauth":{"callbackPort":70000}}"#,
    ),
    (
        "oauth_callback",
        r#"{"url":"https://h.example","oauth":{"callbackUrl":"http://h.example/cb"}}"#,
    ),
    (
        "oauth_callback_query",
        r#"{"url":"https://h.example","oauth":{"callbackUrl":"http://localhost/cb?x=1"}}"#,
    ),
    (
        "oauth_port_mismatch",
        r#"{"url":"https://h.example","oauth":{"callbackUrl":"http://localhost:1/cb","callbackPort":2}}"#,
    ),
    (
        "oauth_client_name",
        r#"{"url":"https://h.example","oauth":{"clientName":" \u3000"}}"#,
    ),
    (
        "oauth_registration",
        r#"{"url":"https://h.example","oauth":{"clientRegistration":"magic"}}"#,
    ),
    (
        "oauth_cimd_id",
        r#"{"url":"https://h.example","oauth":{"clientRegistration":"cimd","clientId":"x"}}"#,
    ),
    (
        "oauth_cimd_ipv6",
        r#"{"url":"https://h.example","oauth":{"clientRegistration":"cimd","callbackUrl":"http://[::1]:9/callback"}}"#,
    ),
    (
        "oauth_metadata",
        r#"{"url":"https://h.example","oauth":{"authServerMetadataUrl":"http://a.example/m"}}"#,
    ),
    (
        "auth_provider",
        r#"{"url":"https://h.example","auth":{"provider":""}}"#,
    ),
    (
        "auth_http",
        r#"{"url":"http://h.example","auth":{"provider":"p"}}"#,
    ),
    ("null_command", r#"{"command":null}"#),
    ("number_url", r#"{"url":5}"#),
];

const NOT_OBJECTS: &[&str] = &["null", "\"str\"", "[1]", "true", "5"];

const OVERRIDES: &[(&str, &str)] = &[
    ("override_empty", "{}"),
    ("override_disable", r#"{"enabled":false}"#),
    (
        "override_exposure",
        r#"{"exposure":"direct","toolExposure":{"t":"hidden"}}"#,
    ),
    ("override_alias", r#"{"exposure":"codemode-deferred"}"#),
    ("override_extra", r#"{"enabled":false,"description":"d"}"#),
    ("override_extra_secret", r#"{"headers":{"A":"sk-secret"}}"#),
    ("override_invalid", r#"{"exposure":"nope"}"#),
    ("override_invalid_enabled", r#"{"enabled":"no"}"#),
];

fn fold_variant(name: &'static str) -> &'static str {
    match name {
        "a-b" => "a_b",
        "a_b" => "a-b",
        "dev-radius" => "dev_radius",
        "dev_radius" => "dev-radius",
        "x-y" => "x_y",
        "x_y" => "x-y",
        other => other,
    }
}

/// One server entry's JSON text, and what it exercises.
fn entry(rng: &mut Rng, project: bool, version_rule: &mut Vec<&'static str>) -> String {
    let roll = rng.below(100);
    if project && roll < 30 {
        let (tag, text) = rng.pick(OVERRIDES);
        version_rule.push(tag);
        return (*text).to_owned();
    }
    // The global file defines valid servers more often, so project files have bases.
    let roll = if project { roll } else { roll * 6 / 10 };
    match roll % 100 {
        0..=44 => {
            let (tag, text) = rng.pick(VALID_DEFS);
            version_rule.push(tag);
            (*text).to_owned()
        }
        45..=79 => {
            let (tag, text) = rng.pick(INVALID_DEFS);
            version_rule.push(tag);
            (*text).to_owned()
        }
        80..=87 => {
            version_rule.push("auto_registration");
            r#"{"url":"https://h.example","oauth":{"clientRegistration":"auto"}}"#.to_owned()
        }
        _ => (*rng.pick(NOT_OBJECTS)).to_owned(),
    }
}

/// `reuse`: the names the global file used, which a project file picks often (so overrides find
/// their base and definitions replace global ones). Every name used is added to it.
fn servers_text(
    rng: &mut Rng,
    project: bool,
    features: &mut Vec<&'static str>,
    reuse: &mut Vec<&'static str>,
) -> String {
    let count = rng.below(7);
    let mut names: Vec<&'static str> = Vec::new();
    let mut parts = Vec::new();
    if !project && rng.chance(10) {
        // A disabled server keeps its name: its fold variant after it clashes.
        features.push("disabled_server_keeps_name");
        parts.push(r#""x-y":{"command":"x","enabled":false},"x_y":{"command":"x"}"#.to_owned());
        names.extend(["x-y", "x_y"]);
        reuse.extend(["x-y", "x_y"]);
    }
    if !project && rng.chance(15) {
        // An invalid entry frees its name (and namespace) for the project file.
        parts.push(r#""p-q":{"command":1}"#.to_owned());
        names.push("p-q");
        reuse.extend(["p_q", "p_q", "p-q"]);
    }
    for _ in 0..count {
        // Repeat an earlier key now and then: a duplicate JSON key.
        let name = if !names.is_empty() && rng.chance(12) {
            features.push("duplicate_key");
            *rng.pick(&names)
        } else if project && !reuse.is_empty() && rng.chance(50) {
            let name = *rng.pick(reuse);
            if rng.chance(30) {
                // The fold variant of a global name: overrides must not find it.
                fold_variant(name)
            } else {
                name
            }
        } else if rng.chance(45) {
            // Fold variants, so that namespaces clash often.
            *rng.pick(&["a-b", "a_b", "dev-radius", "dev_radius", "x-y", "x_y"])
        } else {
            *rng.pick(NAMES)
        };
        if name.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty() {
            features.push("integer_like_key");
        }
        names.push(name);
        if !project {
            reuse.push(name);
        }
        let value = entry(rng, project, features);
        parts.push(format!("{}:{value}", serde_json::to_string(name).unwrap()));
    }
    format!("{{{}}}", parts.join(","))
}

fn file_spec(
    rng: &mut Rng,
    project: bool,
    features: &mut Vec<&'static str>,
    reuse: &mut Vec<&'static str>,
) -> FileSpec {
    let roll = rng.below(100);
    let mut servers = |rng: &mut Rng, features: &mut Vec<&'static str>| {
        format!(
            r#"{{"mcpServers":{}}}"#,
            servers_text(rng, project, features, reuse)
        )
    };
    let text = match roll {
        0..=11 => return FileSpec::Absent,
        12..=15 => (*rng.pick(&[
            "[]",
            "\"x\"",
            "5",
            "null",
            r#"{"mcpServers":[]}"#,
            r#"{"mcpServers":null}"#,
            r#"{"mcpServers":"s"}"#,
        ]))
        .to_owned(),
        16..=18 => (*rng.pick(&[
            "{",
            "",
            r#"{"mcpServers":{"a":}}"#,
            r#"{"mcpServers":{},}"#,
            "{} x",
        ]))
        .to_owned(),
        19..=20 => r#"{"other":1,"mcpServers":{}}"#.to_owned(),
        21..=24 => {
            features.push("auto_enable_codemode");
            let flag = rng.pick(&["true", "false", "\"yes\"", "null", "1"]);
            let servers = servers(rng, features);
            format!(r#"{{"autoEnableCodemode":{flag},{}"#, &servers[1..])
        }
        25..=27 => {
            features.push("bom");
            let mut bytes = "\u{feff}".as_bytes().to_vec();
            bytes.extend_from_slice(servers(rng, features).as_bytes());
            return FileSpec::Bytes(bytes);
        }
        28..=29 => {
            features.push("bound_symlink");
            return FileSpec::Refused(RefusedKind::Symlink, servers(rng, features).into_bytes());
        }
        30 => {
            features.push("bound_dangling");
            return FileSpec::Refused(RefusedKind::Dangling, Vec::new());
        }
        31 => {
            features.push("bound_directory");
            return FileSpec::Refused(RefusedKind::Directory, Vec::new());
        }
        32..=33 => {
            features.push("bound_too_large");
            let mut text = servers(rng, features);
            let pad = 64 * 1024 + 1 + rng.below(100);
            text.push_str(&" ".repeat(pad));
            return FileSpec::Refused(RefusedKind::TooLarge, text.into_bytes());
        }
        34..=35 => {
            features.push("bound_too_many");
            let entries: Vec<String> = (0..1001 + rng.below(5))
                .map(|i| format!(r#""s{i}":{{"command":"x"}}"#))
                .collect();
            return FileSpec::Refused(
                RefusedKind::TooMany,
                format!(r#"{{"mcpServers":{{{}}}}}"#, entries.join(",")).into_bytes(),
            );
        }
        _ => servers(rng, features),
    };
    FileSpec::Bytes(text.into_bytes())
}

fn generated_cases() -> Vec<Case> {
    let mut rng = Rng(SEED);
    (0..GENERATED)
        .map(|i| {
            let mut features = Vec::new();
            let mut reuse = Vec::new();
            let global = file_spec(&mut rng, false, &mut features, &mut reuse);
            let project = file_spec(&mut rng, true, &mut features, &mut reuse);
            let trusted = rng.chance(85);
            if !trusted {
                features.push("untrusted_project");
            }
            Case {
                label: format!("generated case {i} (seed {SEED:#x})"),
                global,
                project,
                trusted,
                expect_before_1_4: None,
                expect: None,
                features,
            }
        })
        .collect()
}

/// Rules that are visible only in the result, counted from the reader's output.
fn result_rules(result: &Value, rules: &mut BTreeMap<&'static str, usize>) {
    let servers = result["servers"].as_array().unwrap();
    for s in servers {
        if s[2] == json!(true) {
            *rules.entry("override_applied_keeps_global").or_default() += 1;
        }
        if s[1] == json!("project") {
            *rules.entry("project_definition").or_default() += 1;
        }
    }
    let warnings = result["warnings"].as_array().unwrap();
    let names: Vec<&str> = servers.iter().filter_map(|s| s[0].as_str()).collect();
    for w in warnings {
        // An override whose exact name is missing though a fold variant is loaded.
        if w[1] == json!("override_without_base") {
            if let Some(n) = w[2].as_str() {
                let fold = n.replace('-', "_");
                if names.iter().any(|m| *m != n && m.replace('-', "_") == fold) {
                    *rules.entry("override_base_is_exact_name").or_default() += 1;
                }
            }
        }
        // An invalid global entry whose name (or namespace) the project file then defines.
        if w[0] == json!("global") && w[1] == json!("invalid_server") {
            if let Some(n) = w[2].as_str() {
                let fold = n.replace('-', "_");
                let defined = |s: &Value| {
                    s[1] == json!("project")
                        && s[0].as_str().is_some_and(|m| m.replace('-', "_") == fold)
                };
                if servers.iter().any(defined) {
                    *rules.entry("invalid_entry_frees_name").or_default() += 1;
                }
            }
        }
    }
}

struct Batch {
    cases: Vec<Case>,
    _root: TempDir,
    /// (reader agent dir, reader cwd, Pi's agent dir, Pi's cwd) per case.
    dirs: Vec<(PathBuf, PathBuf, PathBuf, PathBuf)>,
}

fn lay_out_batch(cases: Vec<Case>, tag: &str) -> Batch {
    let root = TempDir::new(tag);
    let dirs = cases
        .iter()
        .enumerate()
        .map(|(i, case)| {
            let base = root.0.join(format!("c{i}"));
            let d = (
                base.join("real/agent"),
                base.join("real/project"),
                base.join("pi/agent"),
                base.join("pi/project"),
            );
            for p in [&d.0, &d.1, &d.2, &d.3] {
                std::fs::create_dir_all(p).unwrap();
            }
            let scratch = base.join("scratch");
            lay_out(
                &case.global,
                &d.0.join("mcp.json"),
                &d.2.join("mcp.json"),
                &scratch,
            );
            lay_out(
                &case.project,
                &d.1.join(".pi/mcp.json"),
                &d.3.join(".pi/mcp.json"),
                &scratch,
            );
            d
        })
        .collect();
    Batch {
        cases,
        _root: root,
        dirs,
    }
}

/// Runs Pi's loader over every case of the batch in one Node process.
fn run_pi(node: &Path, pkg: &Path, batch: &Batch) -> Vec<Value> {
    let manifest: Vec<Value> = batch
        .cases
        .iter()
        .zip(&batch.dirs)
        .map(|(case, d)| json!({"agentDir": d.2, "cwd": d.3, "trusted": case.trusted}))
        .collect();
    let manifest_path = batch._root.0.join("cases.json");
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let out = Command::new(node)
        .arg(repo().join("tests/oracle/mcp-loader.mjs"))
        .arg(pkg)
        .arg(&manifest_path)
        .output()
        .expect("run Node");
    assert!(
        out.status.success(),
        "the Node oracle failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), batch.cases.len(), "one result line per case");
    lines
}

#[test]
fn reader_agrees_with_pis_own_loader() {
    let node = install("node");
    let versions = [("1.3.0", install("1.3.0")), ("1.6.0", install("1.6.0"))];

    let mut cases = vector_cases();
    assert_eq!(cases.len(), 38);
    cases.extend(generated_cases());
    let batch = lay_out_batch(cases, "batch");

    let mut rules: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut codes: BTreeMap<String, usize> = BTreeMap::new();
    for case in batch.cases.iter().filter(|c| c.expect.is_none()) {
        for f in &case.features {
            *rules.entry(f).or_default() += 1;
        }
    }
    let mut failures = Vec::new();
    for (version_text, pkg) in &versions {
        let version = PiVersion::parse(version_text).unwrap();
        let pi_results = run_pi(&node, pkg, &batch);
        for ((case, d), pi) in batch.cases.iter().zip(&batch.dirs).zip(&pi_results) {
            assert!(
                pi.get("threw").is_none(),
                "{}: Pi's loader threw",
                case.label
            );
            let ours = rust_result(&d.0, &d.1, case.trusted, version);
            let expected = spec_expectation(case, pi);
            if ours != expected {
                failures.push(format!(
                    "{} on Pi {version_text}:\n  reader: {ours}\n  expected (Pi, spec bounds applied): {expected}",
                    case.label
                ));
            }
            // The vectors' own table must hold too, on both sides.
            if let Some(table) = &case.expect {
                let table = match &case.expect_before_1_4 {
                    Some(t) if !version.strips_bom() => t,
                    _ => table,
                };
                if &ours != table {
                    failures.push(format!(
                        "{} on Pi {version_text}: reader {ours} differs from the contract table {table}",
                        case.label
                    ));
                }
            }
            // Rules are counted once per case (on the first version), codes per version.
            if case.expect.is_none() && *version_text == versions[0].0 {
                result_rules(&ours, &mut rules);
            }
            if case.expect.is_none() {
                for w in ours["warnings"].as_array().unwrap() {
                    *codes
                        .entry(format!("{} (Pi {version_text})", w[1].as_str().unwrap()))
                        .or_default() += 1;
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );

    let mut report = String::from("differential coverage (generated cases, both versions):\n");
    for (rule, n) in &rules {
        report.push_str(&format!("  rule {rule}: {n}\n"));
    }
    for (code, n) in &codes {
        report.push_str(&format!("  code {code}: {n}\n"));
    }
    // Printed so a run with --nocapture shows the counts; the asserts below enforce them.
    std::io::Write::write_all(&mut std::io::stderr(), report.as_bytes()).unwrap();

    let must_hit = [
        "duplicate_key",
        "integer_like_key",
        "bom",
        "auto_registration",
        "untrusted_project",
        "auto_enable_codemode",
        "disabled",
        "override_empty",
        "override_disable",
        "override_extra",
        "override_invalid",
        "override_applied_keeps_global",
        "override_base_is_exact_name",
        "project_definition",
        "invalid_entry_frees_name",
        "disabled_server_keeps_name",
        "bound_symlink",
        "bound_too_large",
        "bound_too_many",
    ];
    for rule in must_hit {
        let n = rules.get(rule).copied().unwrap_or(0);
        assert!(
            n >= MIN_HITS,
            "rule {rule} hit {n} times (< {MIN_HITS})\n{report}"
        );
    }
    for version in ["1.3.0", "1.6.0"] {
        for code in [
            "read_or_parse",
            "not_object",
            "auto_enable_codemode_type",
            "invalid_name",
            "server_not_object",
            "override_without_base",
            "override_extra_keys",
            "name_clash",
            "project_auth",
            "invalid_server",
            "not_regular_file",
            "too_large",
            "too_many_servers",
        ] {
            let n = codes
                .get(&format!("{code} (Pi {version})"))
                .copied()
                .unwrap_or(0);
            assert!(
                n >= MIN_HITS,
                "code {code} on Pi {version} hit {n} times (< {MIN_HITS})\n{report}"
            );
        }
    }
}
