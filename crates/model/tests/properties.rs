//! Property tests of the canonical keys and of classification.

use pcd_model::{
    parse_group_entry, Classifier, GroupKey, SourceInfo, SourceOrigin, SourceScope, ToolExposure,
    ToolInfo, ToolNamespace,
};
use proptest::prelude::*;

fn is_ext_key(s: &str) -> bool {
    s.len() <= 64
        && s.strip_prefix("ext__").is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

/// Pi's `mcpNamespace(server)`: `"mcp__" + server.replace(/-/g, "_")`, written out byte by byte
/// so the property does not merely restate the implementation.
fn pi_namespace(server: &str) -> String {
    let mut out = String::from("mcp__");
    for c in server.chars() {
        out.push(if c == '-' { '_' } else { c });
    }
    out
}

fn any_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9_-]{1,80}",
        "@[a-z]{1,10}/[a-z-]{1,20}",
        "\\PC{1,40}",
        "[a-z]{1,5}[ ./:@][a-z]{1,5}",
    ]
}

fn source_info() -> impl Strategy<Value = Option<SourceInfo>> {
    let forms = prop_oneof![
        Just(("builtin:read".to_owned(), "builtin".to_owned(), "top-level")),
        Just(("builtin:mcp".to_owned(), "builtin".to_owned(), "top-level")),
        "[a-z-]{1,12}".prop_map(|n| (
            format!("/a/npm/node_modules/{n}/index.js"),
            format!("npm:{n}@1.0.0"),
            "package"
        )),
        "[a-z-]{1,12}".prop_map(|n| (
            format!("/a/git/h/me/{n}/index.ts"),
            format!("git:h/me/{n}@v1"),
            "package"
        )),
        "[a-z]{1,12}".prop_map(|n| (
            format!("/a/extensions/{n}.ts"),
            "auto".to_owned(),
            "top-level"
        )),
        "[a-z0-9]{1,12}".prop_map(|n| (format!("<inline:{n}>"), "inline".to_owned(), "top-level")),
        "[a-z]{1,12}".prop_map(|n| (format!("<sdk:{n}>"), "sdk".to_owned(), "top-level")),
        "\\PC{0,20}".prop_map(|s| (s.clone(), s, "package")),
    ];
    let scope = prop_oneof![
        Just(None),
        Just(Some(SourceScope::User)),
        Just(Some(SourceScope::Project)),
        Just(Some(SourceScope::Temporary)),
    ];
    prop_oneof![
        Just(None),
        (forms, scope).prop_map(|((path, source, origin), scope)| Some(SourceInfo {
            path,
            source,
            scope,
            origin: Some(SourceOrigin::parse(origin)),
            base_dir: Some("/a/base".to_owned()),
        })),
    ]
}

fn namespace() -> impl Strategy<Value = Option<ToolNamespace>> {
    prop_oneof![
        Just(None),
        "[A-Za-z0-9_-]{1,20}".prop_map(|s| Some(ToolNamespace {
            name: pi_namespace(&s),
            description: None,
            aliases: vec![s],
        })),
        "[a-z]{1,10}".prop_map(|s| Some(ToolNamespace {
            name: s,
            description: None,
            aliases: vec![],
        })),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn extension_keys_are_deterministic_bounded_and_canonical(name in any_name()) {
        let key = GroupKey::for_extension(&name);
        prop_assert_eq!(&key, &GroupKey::for_extension(&name.clone()));
        prop_assert!(is_ext_key(key.as_str()), "{}", key);
        prop_assert_eq!(GroupKey::from_canonical(key.as_str()), Some(key));
    }

    #[test]
    fn names_equal_up_to_case_and_dash_underscore_share_a_key(
        name in any_name(),
        flips in proptest::collection::vec(any::<bool>(), 80),
    ) {
        let variant: String = name
            .chars()
            .zip(flips.iter().cycle())
            .map(|(c, &flip)| match (c, flip) {
                ('-', true) => '_',
                ('_', true) => '-',
                (c, true) if c.is_ascii_alphabetic() => {
                    if c.is_ascii_uppercase() { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() }
                }
                (c, _) => c,
            })
            .collect();
        prop_assert_eq!(GroupKey::for_extension(&name), GroupKey::for_extension(&variant));
    }

    #[test]
    fn mcp_keys_equal_pis_namespace(server in "[A-Za-z0-9_-]{1,200}") {
        let key = GroupKey::for_mcp_server(&server);
        prop_assert_eq!(key.as_str(), pi_namespace(&server));
        prop_assert_eq!(GroupKey::for_mcp_namespace(&pi_namespace(&server)), Some(key.clone()));
        if server.len() <= 64 {
            prop_assert_eq!(parse_group_entry(&server).unwrap(), key.clone());
            let prefixed = format!("mcp__{server}");
            prop_assert_eq!(parse_group_entry(&prefixed).unwrap(), GroupKey::for_mcp_server(&server));
        } else {
            prop_assert!(parse_group_entry(&server).is_err());
        }
    }

    #[test]
    fn classification_never_depends_on_the_tool_name(
        a in "\\PC{1,40}",
        b in "(read|bash|codemode|tool_search|list_mcp_resources|mcp__x__y|[a-z_]{1,20})",
        description in "\\PC{0,40}",
        info in source_info(),
        ns in namespace(),
    ) {
        let tool = |name: &str| ToolInfo {
            name: name.to_owned(),
            description: description.clone(),
            exposure: ToolExposure::Direct,
            namespace: ns.clone(),
            source_info: info.clone(),
            definition_chars: 0,
        };
        let c = Classifier::default();
        prop_assert_eq!(c.classify(&tool(&a)), c.classify(&tool(&b)));
    }
}

#[test]
fn different_spellings_of_a_package_are_different_groups() {
    assert_ne!(
        GroupKey::for_extension("@acme/pi-web"),
        GroupKey::for_extension("acme-pi-web")
    );
    assert_eq!(
        GroupKey::for_extension("acme-pi-web").as_str(),
        "ext__acme_pi_web"
    );
}
