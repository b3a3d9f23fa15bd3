//! Tests of reading and parsing the two files.

use super::*;
use crate::store::testing::{raw, tools};
use crate::store::{save_global_settings, save_project_allowlist, SettingsChange};
use crate::testdir::TestDir;
use pcd_model::AllowlistError;
use serde_json::json;

#[test]
fn three_distinct_read_results() {
    let dir = TestDir::new();
    assert_eq!(read_global_settings(dir.path()), Loaded::Absent);
    assert_eq!(read_project_allowlist(dir.path()), Loaded::Absent);
    dir.write(
        "pi-context-decisions/settings.json",
        br#"{"tools":{"enabled":true,"mode":"bogus"}}"#,
    );
    match read_global_settings(dir.path()) {
        Loaded::Read { value, warnings } => {
            assert!(value.tools.enabled);
            assert_eq!(warnings.len(), 1);
            assert_eq!(warnings[0].field, "tools.mode");
        }
        other => panic!("{other:?}"),
    }
    dir.write(".pi/pi-context-decisions.json", b"{not json sk-SECRET");
    match read_project_allowlist(dir.path()) {
        Loaded::Unreadable(e @ StoreError::NotJson { line: 1, .. }) => {
            assert!(!e.to_string().contains("SECRET"));
        }
        other => panic!("{other:?}"),
    }
    dir.write(".pi/pi-context-decisions.json", b"[1]");
    assert!(matches!(
        read_project_allowlist(dir.path()),
        Loaded::Unreadable(StoreError::NotJson { line: 0, .. })
    ));
    let big = format!(
        "{{\"x\":\"{}\"}}",
        "a".repeat(MAX_SETTINGS_FILE_BYTES as usize)
    );
    dir.write(".pi/pi-context-decisions.json", big.as_bytes());
    assert!(matches!(
        read_project_allowlist(dir.path()),
        Loaded::Unreadable(StoreError::TooLarge { .. })
    ));
    std::fs::remove_file(project_allowlist_path(dir.path())).unwrap();
    std::fs::create_dir(project_allowlist_path(dir.path())).unwrap();
    assert!(matches!(
        read_project_allowlist(dir.path()),
        Loaded::Unreadable(StoreError::NotRegularFile { .. })
    ));
}

/// Issue 18, item 7: a lone surrogate in one list entry made the whole file "not JSON" (so
/// every setting fell back); now only that entry is refused, and a save refuses to rewrite
/// the file instead of changing that text.
#[test]
fn a_lone_surrogate_in_one_entry_falls_back_alone() {
    let dir = TestDir::new();
    let text = "{\"tools\": {\"enabled\": true, \"mode\": \"mcp\",\n  \"alwaysAllowedTools\": [\"web_fetch\", \"bad\\ud800\", \"ok\\ud83d\\ude00\"],\n  \"alwaysAllowedMcpServers\": [\"docs\"]},\n \"decision\": {\"model\": \"m\\udc00\", \"threshold\": 0.5}}";
    let path = dir.write("pi-context-decisions/settings.json", text.as_bytes());
    let Loaded::Read { value, warnings } = read_global_settings(dir.path()) else {
        panic!("{:?}", read_global_settings(dir.path()));
    };
    assert!(value.tools.enabled);
    assert_eq!(value.tools.mode, pcd_model::Mode::Mcp);
    let names: Vec<&str> = value
        .tools
        .always_allowed_tools
        .iter()
        .map(|t| t.as_str())
        .collect();
    assert_eq!(names, ["web_fetch", "ok\u{1F600}"]);
    assert_eq!(value.tools.always_allowed_groups.len(), 1);
    assert_eq!(value.decision.model, None);
    assert_eq!(value.decision.threshold, 0.5);
    assert_eq!(
        warnings,
        [
            SettingsWarning {
                field: "tools.alwaysAllowedTools",
                code: pcd_model::SettingsWarningCode::InvalidEntry {
                    index: 1,
                    error: AllowlistError::NotUnicode { position: 3 },
                },
            },
            SettingsWarning {
                field: "decision.model",
                code: pcd_model::SettingsWarningCode::BadFormat {
                    rule: "1 to 256 characters of valid Unicode, no control characters",
                },
            },
        ]
    );
    // The project file too.
    dir.write(
        ".pi/pi-context-decisions.json",
        br#"{"alwaysAllowedTools": ["\udfff", "t"], "alwaysAllowed": []}"#,
    );
    let Loaded::Read { value, warnings } = read_project_allowlist(dir.path()) else {
        panic!("the project file is read");
    };
    assert_eq!(value.tools.len(), 1);
    assert_eq!(warnings.len(), 1);
    // A save would have to rewrite the text: it is refused, naming where, and the file stays.
    let change = SettingsChange::default()
        .set("tools.enabled", json!(false))
        .unwrap();
    assert_eq!(
        save_global_settings(dir.path(), &change),
        Err(StoreError::NotUnicode {
            file: StoreFile::GlobalSettings,
            line: 2,
            column: 43,
        })
    );
    assert_eq!(std::fs::read(&path).unwrap(), text.as_bytes());
}

#[test]
fn lone_surrogates_are_found_only_inside_strings() {
    let stand_in = |t: &str| {
        stand_in_for_lone_surrogates(t.as_bytes())
            .map(|(text, at)| (String::from_utf8(text).unwrap(), at))
    };
    assert_eq!(stand_in(r#"{"a": "\ud83d\ude00", "b": "\\ud800"}"#), None);
    assert_eq!(
        stand_in(r#"{"a": "x\ud800\ud800\udc00"}"#),
        Some((r#"{"a": "x\ufffd\ud800\udc00"}"#.to_owned(), 8))
    );
    assert_eq!(
        stand_in(r#"{"\udc00": "\uDBFF"}"#),
        Some((r#"{"\ufffd": "\ufffd"}"#.to_owned(), 2))
    );
    // Cut short: left to the parser, which reports it.
    assert_eq!(stand_in(r#"{"a": "\ud8"#), None);
    assert_eq!(line_and_column(b"ab\ncd", 4), (2, 2));
}

/// Issue 18, item 7: a lock file that is a symbolic link is named as the reason a save
/// failed, and nothing is written through it.

#[test]
fn symlinked_files_are_neither_read_nor_replaced() {
    let dir = TestDir::new();
    let real = dir.write("real.json", br#"{"alwaysAllowedTools":["t"]}"#);
    std::fs::create_dir_all(dir.path().join(".pi")).unwrap();
    std::os::unix::fs::symlink(&real, project_allowlist_path(dir.path())).unwrap();
    assert!(matches!(
        read_project_allowlist(dir.path()),
        Loaded::Unreadable(StoreError::NotRegularFile { .. })
    ));
    let e = save_project_allowlist(dir.path(), &tools(&["u"], &[])).unwrap_err();
    assert!(matches!(e, StoreError::NotRegularFile { .. }));
    assert_eq!(raw(&real), json!({"alwaysAllowedTools":["t"]}));
}

/// The attack of issue 32, item 5: one number too large for an f64 (`1e400`, valid JSON) made
/// the whole file unreadable, so the switch, the mode and every allowlist stopped applying. Now
/// only the fields that hold one fall back to their defaults, each named in a warning.
#[test]
fn a_number_too_large_for_an_f64_is_that_fields_error_alone() {
    let dir = TestDir::new();
    let text = "{\"tools\": {\"enabled\": false, \"mode\": \"mcp\",\n  \"alwaysAllowedTools\": [\"web_fetch\"],\n  \"alwaysAllowedMcpServers\": [\"docs\"]},\n \"decision\": {\"threshold\": 1e400, \"timeoutMs\": -12E+0400, \"model\": \"1e400\", \"batchSize\": 3}}";
    let path = dir.write("pi-context-decisions/settings.json", text.as_bytes());
    let Loaded::Read { value, warnings } = read_global_settings(dir.path()) else {
        panic!("{:?}", read_global_settings(dir.path()));
    };
    let defaults = Settings::default();
    assert!(!value.tools.enabled, "the switch still reads as off");
    assert_eq!(value.tools.mode, pcd_model::Mode::Mcp);
    assert_eq!(value.tools.always_allowed_tools.len(), 1);
    assert_eq!(value.tools.always_allowed_groups.len(), 1);
    assert_eq!(value.decision.threshold, defaults.decision.threshold);
    assert_eq!(value.decision.timeout_ms, defaults.decision.timeout_ms);
    assert_eq!(value.decision.batch_size, 3);
    // A string that looks like a huge number is only a string.
    assert_eq!(value.decision.model.as_deref(), Some("1e400"));
    let fields: Vec<_> = warnings.iter().map(|w| w.field).collect();
    assert_eq!(fields, ["decision.threshold", "decision.timeoutMs"]);
    assert!(warnings
        .iter()
        .all(|w| matches!(w.code, pcd_model::SettingsWarningCode::OutOfRange { .. })));
    // A save would have to rewrite the number: refused, naming where, and the file stays.
    let change = SettingsChange::default()
        .set("tools.enabled", json!(true))
        .unwrap();
    assert_eq!(
        save_global_settings(dir.path(), &change),
        Err(StoreError::HugeNumber {
            file: StoreFile::GlobalSettings,
            line: 4,
            column: 28,
        })
    );
    assert_eq!(std::fs::read(&path).unwrap(), text.as_bytes());
}

#[test]
fn huge_numbers_are_found_only_outside_strings() {
    let stand_in = |t: &str| {
        stand_in_for_huge_numbers(t.as_bytes())
            .map(|(text, at)| (String::from_utf8(text).unwrap(), at))
    };
    assert_eq!(stand_in(r#"{"a": "1e400", "b": [1e308, -2.5e-400]}"#), None);
    assert_eq!(
        stand_in(r#"{"a\"1e999": [1e309,-1E+999]}"#),
        Some((r#"{"a\"1e999": [1e300,-1e300 ]}"#.to_owned(), 14))
    );
}
