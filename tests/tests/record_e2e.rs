//! A session recorded inside a real Pi (`PI_CONTEXT_DECISIONS_RECORD`, Pi 1.3.0 and 1.6.0 driven
//! headless by `tests/pi-harness/run.mjs`) replays with `context-decisions simulate --check`: the
//! replay produces the effects the live extension carried out, and the ledger entries in the
//! recording are the ones Pi wrote to its session.
//!
//! The addon and the program are built by the test itself (`pcd_tests::addon`, `program`).

use pcd_tests::{addon, install, program, repo};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn record(scenario: &str, version: &str) -> (Value, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "pcd-record-e2e-{}-{scenario}-{version}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("recording.json");
    let out = Command::new(install("node"))
        .arg(repo().join("tests/pi-harness/run.mjs"))
        .arg(repo().join("tests/e2e/scenarios").join(scenario))
        .arg("--pi")
        .arg(install(version))
        .env("PI_CONTEXT_DECISIONS_ADDON", addon())
        .env("PI_CONTEXT_DECISIONS_RECORD", &file)
        .output()
        .expect("node runs the harness");
    assert!(
        out.status.success(),
        "{scenario} on Pi {version}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("the harness prints JSON");
    (report, file)
}

/// `value` with every number as a float.
fn by_value(value: &Value) -> Value {
    match value {
        Value::Number(n) => serde_json::json!(n.as_f64()),
        Value::Array(items) => Value::Array(items.iter().map(by_value).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), by_value(v))).collect())
        }
        other => other.clone(),
    }
}

#[test]
fn sessions_recorded_inside_pi_replay_with_the_same_effects() {
    for version in ["1.3.0", "1.6.0"] {
        for scenario in ["pick.json", "pi-model.json", "branches.json"] {
            let (report, file) = record(scenario, version);
            let what = format!("{scenario} on Pi {version}");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&file).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o600, "{what}: owner-only");
            }
            let out = Command::new(program())
                .args(["simulate", "--check"])
                .arg(&file)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
            assert!(stderr.starts_with("The replay matches"), "{what}: {stderr}");
            let text = std::fs::read_to_string(&file).unwrap();
            let script: Value = serde_json::from_str(&text).unwrap();
            let events = script["events"].as_array().unwrap();
            assert!(events.len() >= 3, "{what}: {events:?}");
            // The entries the recording expects are exactly those Pi wrote, in order.
            let recorded: Vec<&Value> = events
                .iter()
                .filter_map(|e| e["expect"]["effects"].as_array())
                .flatten()
                .filter(|e| e["type"] == "appendEntry")
                .map(|e| &e["data"])
                .collect();
            let written: Vec<&Value> = report["customEntries"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| {
                    e["customType"] == pcd_ledger::CUSTOM_TYPE
                        || e["customType"] == pcd_ledger::SCORER_CUSTOM_TYPE
                })
                .map(|e| &e["data"])
                .collect();
            assert!(!written.is_empty(), "{what}");
            // JavaScript writes `0.0` as `0`: numbers compare by value.
            let numbers = |v: Vec<&Value>| -> Vec<Value> { v.into_iter().map(by_value).collect() };
            assert_eq!(numbers(recorded), numbers(written), "{what}");
            // Nothing of the machine or the calls: no paths, schemas or results.
            let tmp = std::env::temp_dir();
            for needle in [
                tmp.to_str().unwrap(),
                "\"parameters\"",
                "docs result",
                "baseDir",
                "node_modules",
            ] {
                assert!(!text.contains(needle), "{what}: {needle} in the recording");
            }
            std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
        }
    }
}
