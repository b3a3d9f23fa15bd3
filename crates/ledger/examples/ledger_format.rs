//! Prints one example of every kind of ledger entry, with real digests: the examples in
//! `docs/ledger-format.md` come from here (`cargo run -p pcd-ledger --example ledger_format`).
#![allow(clippy::print_stdout)] // Printing the examples is this program's job.

use pcd_ledger::{
    encode_round, encode_round_chunked, inventory_fingerprint, Basis, Boundary, FirstPromptRef,
    Round, Score,
};
use pcd_model::{GroupKey, Mode};

fn show(title: &str, round: &Round, chunk: usize) {
    println!("### {title}\n");
    let parts = if chunk == 1000 {
        encode_round(round)
    } else {
        encode_round_chunked(round, chunk)
    };
    for data in parts.unwrap() {
        println!("```json\n{}\n```\n", serde_json::to_string(&data).unwrap());
    }
}

fn score(x: f64) -> Score {
    Score::from_f64(x).unwrap()
}

fn main() {
    let inventory =
        inventory_fingerprint(["web_fetch", "notes_add", "mcp__kb__search", "bar_tool"]);

    let mut first = Round::new("r1", Mode::Tools, Boundary::InitialPrompt, Basis::Scored);
    first.tools = vec!["web_fetch".into()];
    first.considered = vec!["web_fetch".into(), "notes_add".into(), "bar_tool".into()];
    first.scores = vec![
        ("web_fetch".into(), score(0.91)),
        ("notes_add".into(), score(0.42)),
        ("bar_tool".into(), score(0.05)),
    ];
    first.threshold = Some(score(0.6));
    first.inventory = Some(inventory.clone());
    first.first_prompt = Some(FirstPromptRef::NextUserMessage);
    show("The first pick (`initial-prompt`)", &first, 1000);

    let mut late = Round::new("r2", Mode::Tools, Boundary::FirstCall, Basis::Scored);
    late.considered = vec!["mcp__kb__search".into()];
    late.scores = vec![("mcp__kb__search".into(), score(0.77))];
    late.tools = vec!["mcp__kb__search".into()];
    late.threshold = Some(score(0.6));
    late.inventory = Some(inventory.clone());
    show(
        "A late arrival scored on its first call (`first-call`)",
        &late,
        1000,
    );

    let mut tool_round = Round::new("r3", Mode::Tools, Boundary::ToolRound, Basis::Scored);
    tool_round.tools = vec!["notes_add".into()];
    show(
        "The next-best candidate from cached scores (`tool-round`)",
        &tool_round,
        1000,
    );

    let mut allow = Round::new("r4", Mode::Tools, Boundary::Allowlist, Basis::Allowlist);
    allow.allowlisted_tools = vec!["bar_tool".into()];
    allow.allowlisted_groups = vec![GroupKey::for_mcp_server("dev-radius")];
    show(
        "Allowlist grants, by name and canonical key (`allowlist`)",
        &allow,
        1000,
    );

    let mut mcp = Round::new("r5", Mode::Mcp, Boundary::Prompt, Basis::Scored);
    mcp.groups = vec![GroupKey::for_mcp_server("kb")];
    mcp.considered = vec!["mcp__kb".into(), "ext__notes".into()];
    mcp.scores = vec![
        ("mcp__kb".into(), score(0.83)),
        ("ext__notes".into(), score(0.2)),
    ];
    mcp.threshold = Some(score(0.6));
    mcp.inventory = Some(inventory.clone());
    show("Group mode (`mcp`) on a later prompt", &mcp, 1000);

    let mut unscored = Round::new("r6", Mode::Tools, Boundary::Prompt, Basis::Unscored);
    unscored.tools = vec!["pi_bar_tool".into()];
    unscored.considered = vec!["pi_bar_tool".into()];
    show(
        "No decision model: late arrivals stay available and are recorded (`unscored`)",
        &unscored,
        1000,
    );

    let mut baseline = Round::new("r7", Mode::Tools, Boundary::Prompt, Basis::Baseline);
    baseline.tools = vec![
        "web_fetch".into(),
        "notes_add".into(),
        "bar_tool".into(),
        "mcp__kb__search".into(),
        "pi_bar_tool".into(),
    ];
    show(
        "A round in three parts (chunks of 2 names here; 1000 in practice), `baseline`",
        &baseline,
        2,
    );

    let mut open = Round::new("r8", Mode::Tools, Boundary::Prompt, Basis::FailOpen);
    open.tools = vec!["late_tool".into()];
    show(
        "`failMode: open` after a failed round (`fail-open`)",
        &open,
        1000,
    );
}
