//! What the embedded scorer makes available at the defaults (threshold 0.625, 6 tools a round)
//! on the example inventory, through `pick` as a user runs it: the prompts a new user tried
//! first, which used to make nothing available, now get the tool they ask for, and a prompt
//! about the code in front of the model exposes nothing.

use context_decisions::pick::{run, PickArgs, SelectionFlags};
use serde_json::Value;
use std::path::Path;

fn pick(prompt: &str) -> Value {
    let root = std::env::temp_dir().join(format!(
        "pcd-defaults-{}-{}",
        std::process::id(),
        prompt.len()
    ));
    let (agent, cwd) = (root.join("agent"), root.join("project"));
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let out = run(&PickArgs {
        tools: Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/inventory.json"),
        prompt: prompt.to_owned(),
        mode: Some("tools".into()),
        scorer: "embedded".into(),
        agent_dir: Some(agent),
        cwd: Some(cwd),
        selection: SelectionFlags::default(),
        json: true,
    })
    .unwrap();
    let _ = std::fs::remove_dir_all(&root);
    serde_json::from_str(&out).unwrap()
}

fn available(v: &Value) -> Vec<String> {
    v["available"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
}

#[test]
fn plain_requests_make_their_tool_available_at_the_defaults() {
    for (prompt, tool) in [
        ("calculator", "calculator"),
        ("Translate the release notes into German", "translate_text"),
        ("Fetch https://example.com and summarize it", "web_fetch"),
        (
            "Where's the on-call schedule for the checkout service?",
            "mcp__dev_radius__page_oncall",
        ),
    ] {
        let v = pick(prompt);
        assert_eq!(v["threshold"], 0.625, "the defaults apply");
        let names = available(&v);
        assert!(names.iter().any(|n| n == tool), "{prompt}: {names:?}");
        assert!(names.len() <= 3, "{prompt}: {names:?}");
    }
}

#[test]
fn a_coding_only_prompt_exposes_nothing() {
    for prompt in [
        "add logging to the retry loop in client.rs",
        "rename the `parse_args` function in src/cli.rs to `parse_flags` and fix the callers",
        "why does this test fail? thread 'main' panicked at src/lib.rs:14:5",
    ] {
        let v = pick(prompt);
        assert_eq!(available(&v), Vec::<String>::new(), "{prompt}");
    }
}

#[test]
fn contractions_do_not_match_unrelated_tools() {
    // The lone `s` of "who's" once matched "project's" in the todo tools' descriptions.
    let v = pick("Who's on call for payments tonight?");
    let scored: Vec<(String, f64)> = v["withheld"]
        .as_array()
        .unwrap()
        .iter()
        .chain(v["available"].as_array().unwrap())
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["score"].as_f64().unwrap(),
            )
        })
        .collect();
    for (name, score) in &scored {
        if name.starts_with("todo_") {
            assert_eq!(*score, 0.0, "{name}");
        }
    }
}
