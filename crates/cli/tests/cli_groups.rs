//! The `context-decisions groups` command, run as a user runs it.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_context-decisions"))
}

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/inventory.json")
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the program runs")
}

fn temp_file(name: &str, content: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pcd-cli-groups-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

#[test]
fn json_rows_have_exactly_the_documented_fields() {
    let out = run(&["groups", "--tools", example().to_str().unwrap(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 36);
    for row in rows {
        let mut keys: Vec<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["group", "kind", "label", "name", "scope"]);
    }
    let find = |name: &str| rows.iter().find(|r| r["name"] == name).unwrap().clone();
    assert_eq!(
        find("read"),
        serde_json::json!({"kind":"internal","name":"read","group":null,"label":null,"scope":"global"})
    );
    assert_eq!(find("read_mcp_resource")["kind"], "internal");
    assert_eq!(find("codemode")["kind"], "internal");
    assert_eq!(
        find("mcp__dev_radius__page_oncall"),
        serde_json::json!({"kind":"mcp","name":"mcp__dev_radius__page_oncall","group":"mcp__dev_radius","label":"dev-radius","scope":"global"})
    );
    let web = find("web_fetch");
    assert_eq!(web["label"], "@acme/pi-web");
    assert!(web["group"]
        .as_str()
        .unwrap()
        .starts_with("ext__acme_pi_web_"));
    assert_eq!(find("bar_chart")["group"], "ext__pi_bar");
    assert_eq!(find("db_query")["scope"], "project");
    assert_eq!(find("db_query")["group"], "ext__pi_db");
    assert_eq!(find("notes_add")["group"], "ext__notes");
    assert_eq!(find("todo_list")["group"], "ext__todo");
    assert_eq!(find("translate_text")["group"], "ext__inline_2");
    assert_eq!(find("translate_text")["label"], "inline-2");
    assert_eq!(find("jira_search")["group"], "ext__jira");
    // An SDK host tool (`customTools`, `<sdk:calculator>`) is a group of its own (issue 30,
    // item 7); a tool with no provenance at all has none.
    assert_eq!(find("calculator")["kind"], "extension");
    assert_eq!(find("calculator")["group"], "ext__calculator");
    assert_eq!(find("weather_now")["kind"], "unfiltered");
}

#[test]
fn the_table_names_every_tool_and_sums_up() {
    let out = run(&["groups", "--tools", example().to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("TOOL "));
    assert!(
        text.contains("36 tools: 12 built-in, 6 MCP, 17 extension, 1 without a group; 11 groups.")
    );
    // One vocabulary: built-in tools are "built-in", and a tool without a group is not called
    // "unfiltered" (tools mode scores and withholds it).
    let row = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap()
            .to_owned()
    };
    assert!(row("read").contains(" built-in "), "{text}");
    assert!(row("weather_now").contains(" no group "), "{text}");
    assert!(
        !text.contains("unfiltered") && !text.contains("internal"),
        "{text}"
    );
    assert!(!text.contains("/home/dev"), "paths never appear");
}

#[test]
fn bad_files_get_an_error_naming_the_file_and_the_problem() {
    let cases: Vec<(PathBuf, &str)> = vec![
        (PathBuf::from("/nonexistent/tools.json"), "tools file `/nonexistent/tools.json` does not exist"),
        (temp_file("obj.json", br#"{"tools":"sk-live-SECRET"}"#), "expected a JSON array of tools, found an object"),
        (temp_file("trunc.json", br#"[{"name":"sk-live-SECRET""#), "not valid JSON"),
        (temp_file("bin.json", &[0xff, 0xfe, b'[']), "is not UTF-8 text"),
        (
            temp_file("entries.json", br#"[{"name":"ok"},{"name":5},{"name":"x","sourceInfo":{"scope":["sk-live-SECRET"]}}]"#),
            "entry 1 field `name` must be a string; entry 2 field `sourceInfo.scope` must be a string",
        ),
    ];
    for (path, expected) in cases {
        let out = run(&["groups", "--tools", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains(expected), "{err}");
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(!err.contains("SECRET"), "{err}");
        assert!(out.stdout.is_empty());
    }
}
