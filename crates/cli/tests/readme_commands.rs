//! Every command the README shows runs from a clone: the files and sets it names are in the
//! repository, and the sentences it quotes are what the program prints.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// The paths that follow `flag` in the README's shell blocks (`cargo run … -- ARGS` lines).
fn shell_paths(flag: &str) -> Vec<String> {
    let text = readme();
    let mut paths = Vec::new();
    let mut in_shell = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_shell = line == "```sh";
            continue;
        }
        if !in_shell {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            if pair[0] == flag {
                paths.push(pair[1].to_owned());
            }
        }
    }
    paths
}

#[test]
fn the_sets_and_files_the_readme_names_are_in_the_clone() {
    let sets = shell_paths("--set");
    assert!(sets.contains(&"eval/everyday".to_owned()), "{sets:?}");
    for set in sets
        .iter()
        .chain(&["eval/bfcl".into(), "eval/metatool".into()])
    {
        for file in ["tools.json", "queries.jsonl"] {
            assert!(root().join(set).join(file).is_file(), "{set}/{file}");
        }
    }
    for (set, licence) in [
        ("eval/bfcl", "NOTICE"),
        ("eval/bfcl", "LICENSE"),
        ("eval/metatool", "LICENSE"),
    ] {
        assert!(root().join(set).join(licence).is_file(), "{set}/{licence}");
    }
    let text = readme();
    assert!(!text.contains("../shared"), "a clone has no ../shared");
    assert!(
        text.contains("[--split test\\|tune\\|all]"),
        "the table names --split"
    );
    for tools in shell_paths("--tools") {
        assert!(root().join(&tools).is_file(), "{tools}");
    }
}

fn program(args: &[&str], dir: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_context-decisions"))
        .args(args)
        .current_dir(root())
        .env("PI_CODING_AGENT_DIR", dir)
        .env_remove("PCD_MODEL_DIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_readme_quotes_what_pick_and_eval_print() {
    let agent = std::env::temp_dir().join(format!("pcd-readme-{}", std::process::id()));
    std::fs::create_dir_all(&agent).unwrap();
    let text = readme();
    let out = program(
        &[
            "pick",
            "--lexical",
            "--tools",
            "examples/inventory.json",
            "--prompt",
            "page the on-call engineer",
        ],
        &agent,
    );
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("tools mode, scored by the built-in scorer, lexical only,"),
        "{first}"
    );
    assert!(text.contains("`scored by the built-in scorer, lexical only`"));
    assert!(text.contains("`tools mode, scored by the built-in scorer with the semantic model, …`"));
    let out = program(
        &[
            "eval",
            "--set",
            "eval/everyday",
            "--lexical",
            "--limit",
            "5",
        ],
        &agent,
    );
    assert!(!out.is_empty());
}
