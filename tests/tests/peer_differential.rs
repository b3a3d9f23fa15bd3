//! The `eval` command's reimplementations of Pi's `tool_search` ranker rank exactly as Pi's own
//! code does: each release's shipped `dist/extensions/tool-search/tool.js` runs under Node 22 on
//! a fixture inventory (namespaces, nested schemas, a local `$ref`, camelCase and acronym names,
//! accented text, near-duplicates, an exact-name query, a stop-word-only query) and its order of
//! tool names must equal ours for every prompt.

use pcd_eval::peer;
use pcd_tests::{install, node_eval, repo};
use serde_json::Value;

fn fixture() -> (Vec<Value>, Vec<String>) {
    let dir = repo().join("tests/fixtures");
    let tools: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("peer-tools.json")).unwrap())
            .unwrap();
    let prompts = std::fs::read_to_string(dir.join("peer-prompts.txt"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    (tools.as_array().unwrap().clone(), prompts)
}

/// Pi's own ranking of the fixture for every prompt: tool names, best first.
fn pi_rankings(version: &str) -> Vec<Vec<String>> {
    let pi = install(version);
    let tool_js = pi.join("dist/extensions/tool-search/tool.js");
    assert!(tool_js.exists(), "{} has no tool.js", pi.display());
    let dir = repo().join("tests/fixtures");
    let script = format!(
        r#"
const fs = require("node:fs");
const {{ pathToFileURL }} = require("node:url");
(async () => {{
  const {{ Bm25Ranker, createToolSearchDocument }} = await import(pathToFileURL({tool_js}).href);
  const tools = JSON.parse(fs.readFileSync({tools}, "utf8"));
  const prompts = fs.readFileSync({prompts}, "utf8").split("\n").filter((p) => p.length > 0);
  const documents = tools.map((tool) => createToolSearchDocument(tool, tool.namespace));
  const ranker = new Bm25Ranker();
  const out = prompts.map((p) => ranker.rank(p, documents, 1000).map((m) => m.name));
  process.stdout.write(JSON.stringify(out));
}})().catch((e) => {{ console.error(e); process.exit(1); }});
"#,
        tool_js = serde_json::to_string(&tool_js.display().to_string()).unwrap(),
        tools = serde_json::to_string(&dir.join("peer-tools.json").display().to_string()).unwrap(),
        prompts =
            serde_json::to_string(&dir.join("peer-prompts.txt").display().to_string()).unwrap(),
    );
    serde_json::from_slice(&node_eval(&script)).expect("the script prints JSON")
}

fn names(tools: &[Value], order: Vec<usize>) -> Vec<String> {
    order
        .into_iter()
        .map(|i| tools[i]["name"].as_str().unwrap().to_owned())
        .collect()
}

fn assert_same(version: &str, ours: impl Fn(&str) -> Vec<String>) {
    let (_, prompts) = fixture();
    let theirs = pi_rankings(version);
    assert_eq!(theirs.len(), prompts.len());
    let mut non_empty = 0;
    for (prompt, pi_order) in prompts.iter().zip(theirs) {
        non_empty += usize::from(!pi_order.is_empty());
        assert_eq!(ours(prompt), pi_order, "Pi {version}, prompt {prompt:?}");
    }
    // The fixture exercises the rankers: most prompts match something, some match nothing.
    assert!(non_empty >= prompts.len() - 3, "{non_empty}");
    assert!(non_empty < prompts.len());
}

#[test]
fn the_pi_1_3_0_peer_ranks_as_pi_1_3_0_does() {
    let (tools, _) = fixture();
    let documents: Vec<String> = tools.iter().map(peer::document).collect();
    let index = peer::Bm25::new(documents.iter().map(String::as_str));
    assert_same("1.3.0", |p| names(&tools, index.rank(p)));
}

#[test]
fn the_pi_1_6_0_peer_ranks_as_pi_1_6_0_does() {
    let (tools, _) = fixture();
    let ranker = peer::v1_6::Ranker::new(tools.iter().map(peer::v1_6::document));
    assert_same("1.6.0", |p| names(&tools, ranker.rank(p)));
}
