//! The specification's clauses as `simulate` scripts (`tests/scripts/*.json`), each run through a
//! real `Session` by `pcd_cli::simulate` (what `context-decisions simulate` prints).
//!
//! A script says which clause it covers (`"clause"`) and carries, on the events that show it, an
//! `"assert"` object checked against that event's printed line:
//! - `"verdict"`: `allow`, `block` or `pending`; `"reason"`: text the block reason contains;
//! - `"effects"`: the effect types, exactly and in order;
//! - `"warn"`: text one warning contains; `"noEntry": true`: no ledger entry is appended;
//! - `"notice"`: text the availability notice contains (each of a list of texts);
//! - `"added"`: names a ledger entry of this event makes available (`tools`, `groups`,
//!   `allowlistTools`, `allowlistGroups`);
//! - `"active"` / `"inactive"`: names that are / are not in Pi's active set afterwards.
//!
//! `docs/spec-coverage.md` maps every clause to its script or test.

use serde_json::Value;
use std::path::Path;

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn check(name: &str, index: usize, want: &Value, line: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut fail = |what: String| problems.push(format!("{name} event {index}: {what}"));
    let effects = line["effects"].as_array().cloned().unwrap_or_default();
    let types: Vec<&str> = effects.iter().filter_map(|e| e["type"].as_str()).collect();
    for (key, expected) in want.as_object().expect("`assert` is an object") {
        match key.as_str() {
            "verdict" => {
                if &line["verdict"] != expected {
                    fail(format!("verdict {} (expected {expected})", line["verdict"]));
                }
            }
            "reason" => {
                let reason = line["reason"].as_str().unwrap_or_default();
                if !reason.contains(expected.as_str().unwrap()) {
                    fail(format!("reason {reason:?} lacks {expected}"));
                }
            }
            "effects" => {
                if types != strings(expected) {
                    fail(format!("effects {types:?} (expected {expected})"));
                }
            }
            "warn" => {
                let found = effects.iter().any(|e| {
                    e["type"] == "warn"
                        && e["text"]
                            .as_str()
                            .is_some_and(|t| t.contains(expected.as_str().unwrap()))
                });
                if !found {
                    fail(format!("no warning with {expected} in {types:?}"));
                }
            }
            "notice" => {
                let notices: Vec<&str> = effects
                    .iter()
                    .filter(|e| e["type"] == "notice")
                    .filter_map(|e| e["text"].as_str())
                    .collect();
                let wanted = match expected.as_str() {
                    Some(one) => vec![one],
                    None => strings(expected),
                };
                for text in wanted {
                    if !notices.iter().any(|n| n.contains(text)) {
                        fail(format!("no notice with {text:?} in {notices:?}"));
                    }
                }
            }
            "noEntry" => {
                if types.contains(&"appendEntry") {
                    fail("an entry was appended".into());
                }
            }
            "added" => {
                let added: Vec<&str> = effects
                    .iter()
                    .filter(|e| e["type"] == "appendEntry")
                    .flat_map(|e| {
                        ["tools", "groups", "allowlistTools", "allowlistGroups"]
                            .into_iter()
                            .flat_map(|k| strings(&e["data"][k]))
                    })
                    .collect();
                for name in strings(expected) {
                    if !added.contains(&name) {
                        fail(format!("{name} not added (added {added:?})"));
                    }
                }
            }
            "active" | "inactive" => {
                let active = strings(&line["active"]);
                for name in strings(expected) {
                    if active.contains(&name) != (key == "active") {
                        fail(format!("{name} {key} expected, active is {active:?}"));
                    }
                }
            }
            other => fail(format!("unknown assertion `{other}`")),
        }
    }
    problems
}

#[test]
fn every_clause_script_behaves_as_it_asserts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    let mut problems = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let script: Value = serde_json::from_slice(&std::fs::read(file).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(script["clause"].is_string(), "{name} names its clause");
        let lines = pcd_cli::simulate::run(&script).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut asserted = 0;
        for (i, (event, line)) in script["events"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&lines)
            .enumerate()
        {
            if let Some(want) = event.get("assert") {
                asserted += 1;
                problems.extend(check(&name, i, want, line));
            }
        }
        assert!(asserted > 0, "{name} asserts nothing");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
