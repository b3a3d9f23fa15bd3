//! The napi-rs addon loads in Node 22 (the Node that Pi 1.3+ needs, installed from the npm
//! registry by `tests/support/install-pi.sh`) and answers as the Rust library does.
//!
//! `cargo xtask ci` builds the addon (`cargo build -p pcd-node`) before the tests; run that first
//! when running this test alone.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn addon() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"));
    let lib = target.join("debug").join("libpcd_node.so");
    assert!(
        lib.exists(),
        "the addon is not built at {}: run `cargo build -p pcd-node` first (cargo xtask ci does)",
        lib.display()
    );
    // Node loads addons by the `.node` extension.
    let dir = std::env::temp_dir().join(format!("pcd-node-addon-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("pcd_node.node");
    std::fs::copy(&lib, &copy).unwrap();
    copy
}

fn node22() -> PathBuf {
    let out = Command::new("bash")
        .arg(repo().join("tests/support/install-pi.sh"))
        .arg("node")
        .output()
        .expect("bash runs the installer");
    assert!(
        out.status.success(),
        "installing Node 22 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

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
    let out = Command::new(node22())
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
