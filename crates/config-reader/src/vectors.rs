//! The 38 vectors of the host contract (Pi's own loader agrees on them), as table tests over
//! temporary folders, for a Pi before 1.4 and the newest.

use crate::testdir::TestDir;
use crate::{read_mcp_origins, McpOrigins, PiVersion};
use serde_json::Value;
use std::path::Path;

const VECTORS: &str = include_str!("../tests/data/pi-vectors.json");

/// `name/scope[+override]` and `file:code[:server]`, the table's notation.
pub(crate) fn render(origins: &McpOrigins) -> (Vec<String>, Vec<String>) {
    let servers = origins
        .servers()
        .iter()
        .map(|s| {
            let o = if s.has_project_override() {
                "+override"
            } else {
                ""
            };
            format!("{}/{}{o}", s.name(), s.scope().as_str())
        })
        .collect();
    let warnings = origins
        .warnings()
        .iter()
        .map(|w| match &w.server {
            Some(s) => format!("{}:{}:{s}", w.file.as_str(), w.code.as_str()),
            None => format!("{}:{}", w.file.as_str(), w.code.as_str()),
        })
        .collect();
    (servers, warnings)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

fn materialize(dir: &TestDir, spec: Option<&Value>, path: &Path) {
    let Some(spec) = spec else { return };
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    if let Some(text) = spec.get("text").and_then(Value::as_str) {
        let mut bytes = Vec::new();
        if spec.get("bom").and_then(Value::as_bool) == Some(true) {
            bytes.extend_from_slice("\u{feff}".as_bytes());
        }
        bytes.extend_from_slice(text.as_bytes());
        std::fs::write(path, bytes).unwrap();
    } else if spec.get("dir").is_some() {
        std::fs::create_dir_all(path).unwrap();
    } else if let Some(text) = spec.get("symlink_to_text").and_then(Value::as_str) {
        let target = dir.write(
            &format!("elsewhere/{}", path.to_string_lossy().len()),
            text.as_bytes(),
        );
        std::os::unix::fs::symlink(target, path).unwrap();
    } else if spec.get("dangling").is_some() {
        std::os::unix::fs::symlink(dir.path().join("missing-target"), path).unwrap();
    } else {
        panic!("unknown file spec {spec}");
    }
}

#[test]
fn the_38_vectors() {
    let doc: Value = serde_json::from_str(VECTORS).unwrap();
    let vectors = doc["vectors"].as_array().unwrap();
    assert_eq!(vectors.len(), 38);
    for version in ["1.3.0", "1.6.0"] {
        let version = PiVersion::parse(version).unwrap();
        for vector in vectors {
            let id = vector["id"].as_str().unwrap();
            let dir = TestDir::new();
            let agent = dir.path().join("agent");
            let cwd = dir.path().join("project");
            materialize(&dir, vector.get("global"), &agent.join("mcp.json"));
            materialize(&dir, vector.get("project"), &cwd.join(".pi/mcp.json"));
            let trusted = vector.get("trusted").and_then(Value::as_bool) != Some(false);
            let expect = match vector.get("expect_before_1_4") {
                Some(e) if !version.strips_bom() => e,
                _ => &vector["expect"],
            };
            let got = render(&read_mcp_origins(&agent, &cwd, trusted, version));
            assert_eq!(
                got,
                (strings(&expect["servers"]), strings(&expect["warnings"])),
                "vector {id} on Pi {version}"
            );
        }
    }
}
