//! The napi-rs addon loads in Node 22 (the Node that Pi 1.3+ needs, installed from the npm
//! registry by `tests/support/install-pi.sh`) and answers as the Rust library does.
//!
//! `cargo xtask ci` builds the addon (`cargo build -p pcd-node`) before the tests; run that first
//! when running this test alone.

use pcd_tests::{addon, install, repo};
use std::process::Command;

#[test]
fn the_addon_classifies_as_the_library_does() {
    let addon = addon();
    let example = repo().join("examples/inventory.json");
    let script = format!(
        r#"const a = require({addon:?});
           const rows = JSON.parse(a.classifyGroups(require('fs').readFileSync({example:?}, 'utf8')));
           let error = null;
           try {{ a.classifyGroups('{{"tools":"sk-live-SECRET"}}'); }} catch (e) {{ error = e.message; }}
           process.stdout.write(JSON.stringify({{ version: a.addonVersion(), rows, error }}));"#,
    );
    let out = Command::new(install("node"))
        .arg("-e")
        .arg(script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["version"], env!("CARGO_PKG_VERSION"));
    let inventory = context_decisions::inventory::read_inventory_file(&example).unwrap();
    let expected =
        context_decisions::groups::rows_json(&context_decisions::groups::rows(&inventory));
    assert_eq!(got["rows"], expected);
    let error = got["error"].as_str().unwrap();
    assert!(error.contains("expected a JSON array of tools"), "{error}");
    assert!(!error.contains("SECRET"));
}
