//! Tests of the edits and the saves: what a save keeps, adds and removes, what it refuses, and
//! concurrent savers (threads and processes) losing nothing.

use super::*;
use crate::store::testing::{groups, raw, tools};
use crate::store::{read_global_settings, read_project_allowlist, Loaded};
use crate::testdir::TestDir;
use pcd_model::GroupKey;
use proptest::strategy::Strategy;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

#[test]
fn saves_keep_unknown_fields_and_every_saved_name() {
    let dir = TestDir::new();
    let path = dir.write(
        "pi-context-decisions/settings.json",
        br#"{"zeta":{"keep":1},"tools":{"alwaysAllowedTools":["a b", "gone_tool", 7],
                 "alwaysAllowedMcpServers":["bad.name","dev-radius"],"future":true},
               "decision":{"threshold":0.9,"apiKeyEnv":"KEY"},"skills":{"x":1}}"#,
    );
    let change = SettingsChange {
        allowlists: AllowlistChange {
            tools: ListEdit {
                add: vec!["web_fetch".into(), "gone_tool".into()],
                remove: vec![],
            },
            groups: ListEdit {
                add: vec!["dev_radius".into(), "ext__notes".into()],
                remove: vec![],
            },
        },
        ..SettingsChange::default()
    }
    .set("tools.enabled", json!(true))
    .unwrap();
    let (settings, _) = save_global_settings(dir.path(), &change).unwrap();
    assert!(settings.tools.enabled);
    let v = raw(&path);
    assert_eq!(v["zeta"], json!({"keep":1}));
    assert_eq!(v["skills"], json!({"x":1}));
    assert_eq!(v["tools"]["future"], json!(true));
    assert_eq!(v["decision"], json!({"threshold":0.9,"apiKeyEnv":"KEY"}));
    assert_eq!(
        v["tools"]["alwaysAllowedTools"],
        json!(["a b", "gone_tool", 7, "web_fetch"])
    );
    assert_eq!(
        v["tools"]["alwaysAllowedMcpServers"],
        json!(["bad.name", "dev-radius", "ext__notes"]),
        "dev_radius is the same group as dev-radius"
    );
    // Order of the file's keys is kept.
    let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["zeta", "tools", "decision", "skills"]);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn removals_take_out_every_spelling_of_a_group_and_nothing_else() {
    let dir = TestDir::new();
    dir.write(
        ".pi/pi-context-decisions.json",
        br#"{"alwaysAllowedMcpServers":["dev-radius","mcp__dev_radius","docs","bad.name"],
                 "alwaysAllowedTools":["t1","t2"],"alwaysAllowed":["skill-a"]}"#,
    );
    let change = AllowlistChange {
        groups: groups(&[], &["dev_radius", "bad.name"]).groups,
        tools: tools(&[], &["t1"]).tools,
    };
    let (list, _) = save_project_allowlist(dir.path(), &change).unwrap();
    assert!(list.has_group(&GroupKey::for_mcp_server("docs")));
    assert!(!list.has_group(&GroupKey::for_mcp_server("dev_radius")));
    let v = raw(&project_allowlist_path(dir.path()));
    assert_eq!(v["alwaysAllowedMcpServers"], json!(["docs"]));
    assert_eq!(v["alwaysAllowedTools"], json!(["t2"]));
    assert_eq!(v["alwaysAllowed"], json!(["skill-a"]), "kept as it is");
}

proptest::proptest! {
    /// A save keeps every saved entry it was not told to remove (invalid ones and
    /// non-strings included), in order, and adds each addition once.
    #[test]
    fn edits_lose_nothing(
        saved in proptest::collection::vec(
            proptest::prop_oneof![
                "[a-c][-_]?[a-c]".prop_map(Value::from),
                "[a-c. ]{0,3}".prop_map(Value::from),
                (0i64..3).prop_map(Value::from),
            ],
            0..8,
        ),
        add in proptest::collection::vec("[a-c][-_]?[a-c]", 0..4),
        remove in proptest::collection::vec("[a-c][-_]?[a-c]", 0..3),
    ) {
        let edit = ListEdit { add: add.clone(), remove: remove.clone() };
        let mut list = saved.clone();
        edit_list(&mut list, &edit, same_group);
        let removed = |v: &Value| {
            v.as_str().is_some_and(|s| remove.iter().any(|r| same_group(s, r)))
        };
        let kept: Vec<&Value> = saved.iter().filter(|v| !removed(v)).collect();
        proptest::prop_assert_eq!(&list.iter().take(kept.len()).collect::<Vec<_>>(), &kept);
        for a in &add {
            let n = list.iter().filter(|v| v.as_str().is_some_and(|s| same_group(s, a))).count();
            proptest::prop_assert!(n >= 1);
        }
        for extra in &list[kept.len()..] {
            let s = extra.as_str().unwrap();
            proptest::prop_assert!(add.iter().any(|a| a == s));
        }
    }
}

#[test]
fn project_file_always_holds_always_allowed() {
    let dir = TestDir::new();
    save_project_allowlist(dir.path(), &tools(&["web_fetch"], &[])).unwrap();
    let v = raw(&project_allowlist_path(dir.path()));
    assert_eq!(
        v,
        json!({"alwaysAllowedTools":["web_fetch"],"alwaysAllowed":[]}),
        "no tool goes into alwaysAllowed"
    );
}

#[test]
fn invalid_changes_are_refused_and_the_file_is_untouched() {
    let dir = TestDir::new();
    let path = dir.write(
        ".pi/pi-context-decisions.json",
        br#"{"alwaysAllowedTools":["t"]}"#,
    );
    let before = std::fs::read(&path).unwrap();
    let e = save_project_allowlist(dir.path(), &groups(&["sk-SECRET.bad"], &[])).unwrap_err();
    assert!(matches!(e, StoreError::InvalidEntry { index: 0, .. }));
    assert!(!e.to_string().contains("SECRET"));
    let e = save_project_allowlist(dir.path(), &tools(&["has space"], &[])).unwrap_err();
    assert!(matches!(e, StoreError::InvalidEntry { .. }));
    assert!(SettingsChange::default()
        .set("tools.mode", json!("groups"))
        .is_err());
    assert!(SettingsChange::default()
        .set("tools.alwaysAllowedTools", json!([]))
        .is_err());
    assert!(SettingsChange::default().set("nope", json!(1)).is_err());
    assert!(SettingsChange::default()
        .set("decision.threshold", json!(0.5))
        .is_ok());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn an_unreadable_file_is_never_overwritten() {
    let dir = TestDir::new();
    let path = dir.write("pi-context-decisions/settings.json", b"{\"tools\": oops");
    let change = SettingsChange::default()
        .set("tools.enabled", json!(true))
        .unwrap();
    let e = save_global_settings(dir.path(), &change).unwrap_err();
    assert!(matches!(e, StoreError::NotJson { .. }));
    assert_eq!(std::fs::read(&path).unwrap(), b"{\"tools\": oops");
}

const CHILD_DIR: &str = "PCD_STORE_TEST_CHILD_DIR";
const CHILD_ID: &str = "PCD_STORE_TEST_CHILD_ID";

/// The writer half of [`two_processes_at_once_lose_nothing`], run in a child process.
#[test]
#[ignore = "run as a child process by two_processes_at_once_lose_nothing"]
fn child_writer() {
    let (Ok(dir), Ok(id)) = (std::env::var(CHILD_DIR), std::env::var(CHILD_ID)) else {
        return;
    };
    for i in 0..30 {
        let name = format!("p{id}_tool_{i}");
        save_project_allowlist(Path::new(&dir), &tools(&[&name], &[])).unwrap();
    }
}

#[test]
fn two_processes_at_once_lose_nothing() {
    let dir = TestDir::new();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|id| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "store::edits::tests::child_writer",
                    "--ignored",
                    "--quiet",
                ])
                .env(CHILD_DIR, dir.path())
                .env(CHILD_ID, id.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    match read_project_allowlist(dir.path()) {
        Loaded::Read { value, warnings } => {
            assert!(warnings.is_empty());
            assert_eq!(value.tools.len(), 60);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn two_writers_at_once_lose_nothing() {
    let dir = TestDir::new();
    let per_writer = 40;
    std::thread::scope(|s| {
        for writer in 0..2 {
            let agent = dir.path();
            s.spawn(move || {
                for i in 0..per_writer {
                    let name = format!("w{writer}_tool_{i}");
                    let change = SettingsChange {
                        allowlists: tools(&[&name], &[]),
                        ..SettingsChange::default()
                    };
                    save_global_settings(agent, &change).unwrap();
                    save_project_allowlist(agent, &groups(&[&format!("srv-{writer}-{i}")], &[]))
                        .unwrap();
                }
            });
        }
    });
    match read_global_settings(dir.path()) {
        Loaded::Read { value, warnings } => {
            assert!(warnings.is_empty());
            assert_eq!(value.tools.always_allowed_tools.len(), 2 * per_writer);
        }
        other => panic!("{other:?}"),
    }
    match read_project_allowlist(dir.path()) {
        Loaded::Read { value, .. } => assert_eq!(value.groups.len(), 2 * per_writer),
        other => panic!("{other:?}"),
    }
}
