//! Every example the specification gives for modes, extension groups, internal tools and scoped
//! allowlists, checked through the public API of the model crate.

use pcd_model::{
    parse_group_entry, parse_inventory, parse_tool_entry, AllowlistError, Classifier, GroupKey,
    GroupScope, Scope, ToolKind,
};

fn tool_json(
    name: &str,
    path: &str,
    source: &str,
    scope: &str,
    origin: &str,
    base_dir: Option<&str>,
) -> String {
    serde_json::json!({
        "name": name,
        "description": "",
        "sourceInfo": {"path": path, "source": source, "scope": scope, "origin": origin, "baseDir": base_dir},
    })
    .to_string()
}

fn classify_one(json: &str) -> pcd_model::Classified {
    let inv = parse_inventory(&format!("[{json}]")).unwrap();
    assert!(inv.rejected.is_empty());
    Classifier::default().classify(&inv.tools[0])
}

#[test]
fn extension_group_names_from_source_info() {
    let cases = [
        (
            tool_json(
                "a",
                "/ag/npm/node_modules/@acme/pi-web/index.ts",
                "npm:@acme/pi-web@2.0.0",
                "user",
                "package",
                Some("/ag/npm/node_modules/@acme/pi-web"),
            ),
            "@acme/pi-web",
        ),
        (
            tool_json(
                "a",
                "/ag/git/github.com/me/pi-bar/index.ts",
                "git:github.com/me/pi-bar@v2",
                "user",
                "package",
                Some("/ag/git/github.com/me/pi-bar"),
            ),
            "pi-bar",
        ),
        (
            tool_json(
                "a",
                "/ag/extensions/notes.ts",
                "auto",
                "user",
                "top-level",
                Some("/ag"),
            ),
            "notes",
        ),
        (
            tool_json(
                "a",
                "/ag/extensions/notes/index.ts",
                "auto",
                "user",
                "top-level",
                Some("/ag"),
            ),
            "notes",
        ),
        (
            tool_json(
                "a",
                "<inline:tracker>",
                "inline",
                "temporary",
                "top-level",
                None,
            ),
            "tracker",
        ),
        (
            tool_json("a", "<inline:2>", "inline", "temporary", "top-level", None),
            "inline-2",
        ),
        (
            tool_json(
                "a",
                "/w/proj/index.ts",
                ".",
                "project",
                "package",
                Some("/w/proj"),
            ),
            "proj",
        ),
        (
            tool_json("a", "/w/index.ts", "..", "project", "package", Some("/w")),
            "w",
        ),
        (
            tool_json(
                "a",
                "/w/x/index.ts",
                "./pkgs/..",
                "project",
                "package",
                Some("/w/x"),
            ),
            "x",
        ),
    ];
    for (json, label) in cases {
        let c = classify_one(&json);
        assert_eq!(c.kind, ToolKind::Extension, "{json}");
        let group = c.group.unwrap();
        assert_eq!(group.label, label, "{json}");
        assert_eq!(group.key, GroupKey::for_extension(label));
        assert!(
            !group.label.contains('/') || label.starts_with('@'),
            "labels are never paths"
        );
    }
}

#[test]
fn extension_keys_as_the_spec_spells_them() {
    assert_eq!(GroupKey::for_extension("notes").as_str(), "ext__notes");
    assert_eq!(GroupKey::for_extension("Pi-Web").as_str(), "ext__pi_web");
    let acme = GroupKey::for_extension("@acme/pi-web").as_str().to_owned();
    assert_eq!(acme.len(), "ext__acme_pi_web_".len() + 10);
    assert!(acme.starts_with("ext__acme_pi_web_"));
    assert!(acme["ext__acme_pi_web_".len()..]
        .bytes()
        .all(|b| b.is_ascii_hexdigit()));
    assert_ne!(
        GroupKey::for_extension("@acme/pi-web"),
        GroupKey::for_extension("acme-pi-web")
    );
    let cjk = GroupKey::for_extension("笔记").as_str().to_owned();
    assert!(cjk.starts_with("ext__ext_") && cjk.len() == "ext__ext_".len() + 10);
    // The key comes from the full name, never the 48-character label.
    let long_a = format!("{}-alpha", "n".repeat(60));
    let long_b = format!("{}-omega", "n".repeat(60));
    assert_ne!(
        GroupKey::for_extension(&long_a),
        GroupKey::for_extension(&long_b)
    );
}

#[test]
fn internal_tools_by_provenance_never_by_name() {
    for path in [
        "builtin:read",
        "builtin:bash",
        "builtin:codemode",
        "builtin:tool-search",
    ] {
        let c = classify_one(&tool_json(
            "whatever",
            path,
            "builtin",
            "temporary",
            "top-level",
            None,
        ));
        assert_eq!(c.kind, ToolKind::Internal, "{path}");
    }
    let resource = classify_one(&tool_json(
        "read_mcp_resource",
        "builtin:mcp",
        "builtin",
        "temporary",
        "top-level",
        None,
    ));
    assert_eq!(resource.kind, ToolKind::McpResource);
    // An extension that registers `read`, an SDK host tool, unknown provenance: external.
    let ext_read = classify_one(&tool_json(
        "read",
        "/ag/extensions/evil.ts",
        "auto",
        "user",
        "top-level",
        None,
    ));
    assert_eq!(ext_read.kind, ToolKind::Extension);
    let sdk = classify_one(&tool_json(
        "bash",
        "<sdk:bash>",
        "sdk",
        "temporary",
        "top-level",
        None,
    ));
    // ... and a group of its own, so `mcp` mode filters it too (issue 30, item 7).
    assert_eq!(sdk.kind, ToolKind::Extension);
    let unknown = classify_one(r#"{"name":"read"}"#);
    assert_eq!(unknown.kind, ToolKind::Unfiltered);
    // SDK embedders adding codemode as a plain factory: external.
    let inline_codemode = classify_one(&tool_json(
        "codemode",
        "<inline:1>",
        "inline",
        "temporary",
        "top-level",
        None,
    ));
    assert_eq!(inline_codemode.kind, ToolKind::Extension);
}

#[test]
fn built_in_mcp_provenance_does_not_make_server_tools_internal() {
    let c = classify_one(
        r#"{"name":"mcp__dev_radius__search","exposure":"deferred",
        "namespace":{"name":"mcp__dev_radius","aliases":["dev-radius"]},
        "sourceInfo":{"path":"builtin:mcp","source":"builtin","scope":"temporary","origin":"top-level"}}"#,
    );
    assert_eq!(c.kind, ToolKind::Mcp);
    assert_eq!(c.group.unwrap().key.as_str(), "mcp__dev_radius");
    assert_eq!(
        c.scope,
        Scope::Global,
        "unknown origin falls back to Global"
    );
    // Third-party adapters without an `mcp__` namespace are grouped by their extension.
    let adapter = classify_one(
        r#"{"name":"kb_search","namespace":{"name":"kb"},
        "sourceInfo":{"path":"/ag/extensions/kb-adapter.ts","source":"auto","scope":"user","origin":"top-level"}}"#,
    );
    assert_eq!(adapter.group.unwrap().key.as_str(), "ext__kb_adapter");
}

#[test]
fn extensions_sharing_a_name_share_a_group_and_mixed_scopes_are_marked() {
    let inv = parse_inventory(&format!(
        "[{},{},{}]",
        tool_json(
            "a",
            "/ag/extensions/notes.ts",
            "auto",
            "user",
            "top-level",
            None
        ),
        tool_json(
            "b",
            "/w/.pi/extensions/notes/index.ts",
            "auto",
            "project",
            "top-level",
            None
        ),
        tool_json(
            "c",
            "/w/pkgs/notes/index.ts",
            "./pkgs/notes",
            "project",
            "package",
            None
        ),
    ))
    .unwrap();
    let (classes, scopes) = Classifier::default().classify_all(&inv.tools);
    let keys: Vec<_> = classes
        .iter()
        .map(|c| c.group.clone().unwrap().key)
        .collect();
    assert!(keys.iter().all(|k| k.as_str() == "ext__notes"));
    assert_eq!(scopes[&keys[0]], GroupScope::Mixed);
}

#[test]
fn scoped_allowlist_entries() {
    assert_eq!(
        parse_group_entry("dev-radius").unwrap(),
        parse_group_entry("dev_radius").unwrap()
    );
    assert_eq!(
        parse_group_entry("mcp__prod").unwrap(),
        GroupKey::for_mcp_server("prod")
    );
    assert_eq!(
        GroupKey::for_mcp_server("mcp__prod").as_str(),
        "mcp__mcp__prod"
    );
    assert_eq!(
        parse_group_entry("mcp__mcp__prod").unwrap(),
        GroupKey::for_mcp_server("mcp__prod")
    );
    assert_eq!(GroupKey::for_mcp_server("ext__x").as_str(), "mcp__ext__x");
    assert_eq!(
        parse_group_entry("ext__Notes").unwrap().as_str(),
        "ext__notes"
    );
    // The canonical key of every valid server name is valid too, up to 69 characters.
    let longest = "s".repeat(64);
    let key = parse_group_entry(&longest).unwrap();
    assert_eq!(key.as_str().len(), 69);
    assert_eq!(parse_group_entry(key.as_str()).unwrap(), key);
    // A server whose name is longer cannot be pinned.
    assert_eq!(
        parse_group_entry(&"s".repeat(65)),
        Err(AllowlistError::GroupNameTooLong { chars: 65 })
    );
    // Tool names: 1-128 characters without whitespace.
    assert!(parse_tool_entry("x").is_ok());
    assert!(parse_tool_entry(&"x".repeat(128)).is_ok());
    assert!(parse_tool_entry(&"x".repeat(129)).is_err());
    assert!(parse_tool_entry("x y").is_err());
    assert!(parse_tool_entry("").is_err());
}
