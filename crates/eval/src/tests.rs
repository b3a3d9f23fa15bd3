//! The evaluation's unit tests.

use super::*;
use pcd_model::{Allowlists, Classifier};
use pcd_picker::candidates::{candidates, Available, Candidate};
use pcd_picker::embedded;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

#[test]
fn ranking_metrics_follow_their_definitions() {
    let mut r = Ranking::default();
    r.add(&[2, 0, 1], &[vec![0]]);
    r.add(&[5, 6, 7, 8, 9, 10], &[vec![9], vec![1]]);
    r.add(&[], &[]); // no label: not counted
    assert_eq!(r.prompts, 2);
    assert_eq!(r.recall, [0.0, 1.0, 1.5, 1.5]);
    assert_eq!(r.complete, [1.0, 1.0]);
    let ndcg1 = 1.0 / 3f64.log2();
    let ndcg2 = (1.0 / 6f64.log2()) / (1.0 + 1.0 / 3f64.log2());
    assert!((r.ndcg - (ndcg1 + ndcg2)).abs() < 1e-12);
}

#[test]
fn a_bad_number_list_is_named_by_position_not_value() {
    assert_eq!(parse_list::<2>(" 1, 2.5", "--x"), Ok([1.0, 2.5]));
    assert_eq!(
        parse_list::<2>("1,sk-live-SECRET", "--x"),
        Err("--x: item 2 is not a number".to_owned())
    );
    assert_eq!(
        parse_list::<3>("1,2", "--x"),
        Err("--x: expected 3 comma-separated numbers".to_owned())
    );
}

#[test]
fn the_split_is_stable_and_partitions_the_ids() {
    assert_eq!(stable_hash("a"), 0xaf63_dc4c_8601_ec8c);
    for id in ["single-0", "live_multiple_0-0-0", "x"] {
        assert_ne!(in_split(id, Split::Tune), in_split(id, Split::Test));
        assert!(in_split(id, Split::All));
    }
}

#[test]
fn evaluates_a_small_set_end_to_end() {
    let dir = std::env::temp_dir().join(format!("pcd-eval-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let topics = [
        "weather forecast",
        "send email",
        "calendar event",
        "flight search",
        "stock price",
        "translate text",
        "resize image",
        "database query",
        "pull request",
        "invoice payment",
    ];
    let tools: Vec<Value> = topics
        .iter()
        .map(|t| json!({"name": t.replace(' ', "_"), "description": format!("Handle {t} tasks."),
            "sourceInfo": {"path": "/x/index.ts", "source": "npm:@a/x@1.0.0", "scope": "user", "origin": "package"}}))
        .collect();
    std::fs::write(dir.join("tools.json"), Value::Array(tools).to_string()).unwrap();
    let queries: String = topics
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"id": format!("q{i}"), "prompt": format!("please {t} now"), "relevant_tools": [t.replace(' ', "_")]}).to_string() + "\n")
        .collect();
    std::fs::write(dir.join("queries.jsonl"), queries).unwrap();
    std::fs::write(
        dir.join("irrelevance.jsonl"),
        json!({"id": "n", "prompt": "write a haiku", "relevant_tools": []}).to_string(),
    )
    .unwrap();
    let set = EvalSet::load(&dir).unwrap();
    let options = EvalOptions {
        mode: Mode::Tools,
        split: Split::All,
        limit: None,
        decision: DecisionSettings::default(),
        weights: FieldWeights::default(),
        calibration: Calibration::default(),
        sweep: false,
        semantic: None,
    };
    let mut calls = 0;
    let v = evaluate(&set, &options, |_, _| calls += 1);
    assert_eq!(calls, 11);
    assert_eq!(v["prompts"], 10);
    assert_eq!(v["recall@1"], 1.0);
    assert_eq!(v["nothing_exposed_share"], 1.0);
    for key in [
        "recall@3",
        "recall@5",
        "recall@10",
        "complete@5",
        "complete@10",
        "ndcg@10",
        "ms_per_prompt_median",
        "ms_per_prompt_p99",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    for key in [
        "recall",
        "precision",
        "exposed_per_prompt",
        "withheld_share",
    ] {
        assert!(v["selection"].get(key).is_some(), "{key}");
    }
    assert_eq!(v["peer_tool_search_bm25"]["recall@1"], 1.0);
    std::fs::write(dir.join("queries.jsonl"), "{\"id\": 1}\n").unwrap();
    let err = EvalSet::load(&dir).unwrap_err().to_string();
    assert!(err.contains("line 1") && err.contains("`id`"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One candidate standing for `chars` characters of definitions.
fn sized(i: usize, chars: usize) -> Candidate {
    let mut c = Candidate::tool(&format!("t{i}"), "", i);
    c.definition_chars = chars;
    c
}

#[test]
fn needs_count_once_and_alternatives_are_found() {
    let mut r = Ranking::default();
    // Two needs; the first has an alternative (4), which ranks first.
    r.add(&[4, 7, 0, 2], &[vec![0, 4], vec![2]]);
    assert_eq!(r.recall, [0.5, 0.5, 1.0, 1.0]);
    assert_eq!(r.complete, [1.0, 1.0]);
    // 4 meets the first need at rank 1; 0 (the same need) adds nothing; 2 at rank 4.
    let dcg = 1.0 + 1.0 / 5f64.log2();
    let ideal = 1.0 + 1.0 / 3f64.log2();
    assert!((r.ndcg - dcg / ideal).abs() < 1e-12);
}

#[test]
fn selection_figures_by_hand() {
    let cands = [sized(0, 100), sized(1, 100), sized(2, 200), sized(3, 600)];
    let universe = Universe {
        candidates: &cands,
        total_chars: 1000,
        topics: vec![vec!["issues"], vec!["issues"], vec!["mail"], vec![]],
        any_topic: true,
    };
    let prompt = |labelled,
                  needs: Vec<Vec<usize>>,
                  has_needs,
                  topics: Option<&[&str]>,
                  kind,
                  top: Vec<(usize, f64)>| Scored {
        labelled,
        needs,
        has_needs,
        topics: topics.map(|t| t.iter().map(|s| (*s).to_owned()).collect()),
        kind,
        paraphrase: false,
        top,
    };
    let scored = [
        // Exposes 0 (its first need, by an alternative) and 3 (no topic): one need of two.
        prompt(
            true,
            vec![vec![0, 1], vec![2]],
            true,
            Some(&["issues", "mail"]),
            None,
            vec![(0, 0.9), (3, 0.7), (2, 0.4)],
        ),
        // Relevant_tools only; exposes 2, of the unrelated topic mail.
        prompt(
            true,
            vec![vec![3]],
            false,
            Some(&["issues"]),
            None,
            vec![(2, 0.8), (3, 0.6)],
        ),
        prompt(
            false,
            vec![],
            false,
            None,
            Some(PromptKind::Coding),
            vec![(1, 0.3)],
        ),
        prompt(
            false,
            vec![],
            false,
            Some(&["issues"]),
            Some(PromptKind::NearMiss),
            vec![(0, 0.55)],
        ),
    ];
    let s = Selection::at(&scored, 0.5, &universe);
    assert_eq!(
        s,
        Selection {
            labelled: 2,
            needs: 3,
            needs_found: 2,
            selected: 4,
            selected_relevant: 2,
            withheld: 0.3 + 0.2,
            irrelevant: 2,
            irrelevant_nothing: 1,
            needs_prompts: 1,
            needs_prompts_met: 0,
            topic_prompts: 2,
            topic_prompts_unrelated: 1,
            coding: 1,
            coding_nothing: 1,
            near_miss: 1,
            near_miss_nothing: 0,
            irrelevant_exposed: 1,
            coding_exposed: 0,
            near_miss_exposed: 1,
            paraphrase_prompts: 0,
            paraphrase_met: 0,
        }
    );
    assert_eq!(e_exposed(&s), (Some(0.0), Some(1.0)));
    assert!((s.recall() - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(s.precision(), 0.5);
    assert_eq!(s.exposed_per_prompt(), 2.0);
    assert_eq!(s.nothing_exposed_share(), Some(0.5));
    assert_eq!(s.irrelevance_exposed_per_prompt(), Some(0.5));
    let e = everyday_json(&s);
    assert_eq!(e["needs_met_share"], 0.0);
    assert_eq!(e["unrelated_topic_share"], 0.5);
    assert_eq!(e["coding_nothing_exposed_share"], 1.0);
    assert_eq!(e["near_miss_nothing_exposed_share"], 0.0);
    assert_eq!(e["near_miss_prompts"], 1);
    // The threshold is inclusive; below every score, the cap (the top list) bounds it.
    let all = Selection::at(&scored, 0.0, &universe);
    assert_eq!(
        (all.selected, all.needs_found, all.needs_prompts_met),
        (5, 3, 1)
    );
    assert_eq!(all.irrelevant_nothing, 0);
    // The ranking's reach counts only candidates with a positive score: one scored 0 is
    // ranked after every other and is never made available.
    let zero = [prompt(
        true,
        vec![vec![1]],
        true,
        None,
        None,
        vec![(0, 0.2), (1, 0.0)],
    )];
    let reach = Selection::at(&zero, f64::MIN_POSITIVE, &universe);
    assert_eq!((reach.selected, reach.needs_found), (1, 0));
    // Without any topic on the candidates, no prompt is counted for topics.
    let untopical = Universe {
        topics: vec![vec![]; 4],
        any_topic: false,
        ..universe
    };
    assert_eq!(Selection::at(&scored, 0.5, &untopical).topic_prompts, 0);
    assert!(everyday_json(&Selection::default()).is_empty());
}

#[test]
fn the_candidates_made_available_most_often_are_counted_over_every_prompt() {
    let prompt = |labelled, top: Vec<(usize, f64)>| Scored {
        labelled,
        needs: Vec::new(),
        has_needs: false,
        topics: None,
        kind: None,
        paraphrase: false,
        top,
    };
    let scored = [
        prompt(true, vec![(2, 0.9), (0, 0.7), (1, 0.4)]),
        // An irrelevance prompt counts like any other.
        prompt(false, vec![(0, 0.8), (2, 0.6)]),
        prompt(true, vec![(3, 0.65), (0, 0.625)]),
        prompt(false, Vec::new()),
    ];
    // At 0.5: 0 three times, 2 twice, 3 once, 1 never (0.4).
    assert_eq!(
        most_often_available(&scored, 0.5, 8),
        [(0, 3), (2, 2), (3, 1)]
    );
    // At 0.625 (inclusive: the third prompt's 0 counts) the irrelevance prompt's 2 falls out,
    // and 2 and 3, once each, tie: the first candidate goes first.
    assert_eq!(
        most_often_available(&scored, 0.625, 8),
        [(0, 3), (2, 1), (3, 1)]
    );
    assert!(most_often_available(&scored, 0.95, 8).is_empty());
    // At most MOST_OFTEN_AVAILABLE, most first.
    let many: Vec<Scored> = (0..10)
        .map(|c| prompt(true, (0..=c).map(|k| (k, 0.9)).collect()))
        .collect();
    let most = most_often_available(&many, 0.5, 10);
    assert_eq!(most.len(), MOST_OFTEN_AVAILABLE);
    assert_eq!(most[0], (0, 10));
    assert_eq!(
        most[MOST_OFTEN_AVAILABLE - 1],
        (MOST_OFTEN_AVAILABLE - 1, 6)
    );
}

#[test]
fn brier_score_and_reliability_bins_by_hand() {
    let mut r = Reliability::default();
    let scores = [0.0, 0.05, 0.95, 1.0, 0.5];
    let relevant = [false, false, true, true, false];
    r.add(&scores, &[3, 2, 4, 1, 0], &relevant);
    assert_eq!((r.pairs, r.top10_pairs), (5, 5));
    assert!((r.squared - 0.255).abs() < 1e-12);
    assert_eq!(r.bins[0].0, 2);
    assert!((r.bins[0].1 - 0.05).abs() < 1e-12);
    assert_eq!((r.bins[5].0, r.bins[5].2), (1, 0));
    assert_eq!(
        (r.bins[9].0, r.bins[9].2),
        (2, 2),
        "1.0 falls in the last bin"
    );
    let v = r.json();
    assert_eq!(v["brier"], 0.051);
    assert_eq!(v["brier_top10"], 0.051);
    assert_eq!(v["reliability"].as_array().unwrap().len(), 10);
    assert_eq!(v["reliability"][9]["mean_score"], 0.975);
    assert_eq!(v["reliability"][9]["observed_relevant"], 1.0);
    assert_eq!(v["reliability"][0]["mean_score"], 0.025);
    assert_eq!(v["reliability"][3]["pairs"], 0);
    // Only each prompt's 10 best count for the top-10 score: 12 candidates, the two worst
    // (relevant, scored 0) left out of it.
    let mut r = Reliability::default();
    let mut scores = vec![0.5; 12];
    scores[10] = 0.0;
    scores[11] = 0.0;
    let mut relevant = vec![false; 12];
    relevant[10] = true;
    relevant[11] = true;
    let order: Vec<usize> = (0..12).collect();
    r.add(&scores, &order, &relevant);
    assert_eq!((r.pairs, r.top10_pairs), (12, 10));
    assert!((r.squared - (10.0 * 0.25 + 2.0)).abs() < 1e-12);
    assert!((r.top10_squared - 2.5).abs() < 1e-12);
}

/// A small set in the everyday format: ten tools with topics (and a field nobody reads), in
/// three extensions; four prompts with needs, topics or neither; three irrelevance prompts.
fn everyday_set(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let tools = [
        (
            "list_issues",
            "List the issues of a repository.",
            "tracker",
            Some("issues"),
        ),
        (
            "search_issues",
            "Search issues by text.",
            "tracker",
            Some("issues"),
        ),
        (
            "create_issue",
            "Open a new issue.",
            "tracker",
            Some("issues"),
        ),
        ("send_email", "Send an email message.", "mail", Some("mail")),
        (
            "read_inbox",
            "Read the messages in the inbox.",
            "mail",
            Some("mail"),
        ),
        (
            "weather_forecast",
            "The weather forecast of a city.",
            "misc",
            Some("weather"),
        ),
        (
            "deploy_service",
            "Deploy a service to production.",
            "misc",
            Some("deploy"),
        ),
        (
            "page_oncall",
            "Page the on-call engineer.",
            "misc",
            Some("oncall"),
        ),
        (
            "translate_text",
            "Translate text into another language.",
            "misc",
            None,
        ),
        (
            "query_database",
            "Run a SQL query on the database.",
            "misc",
            Some("database"),
        ),
    ];
    let tools: Vec<Value> = tools
        .iter()
        .map(|(name, description, ext, topic)| {
            let mut t = json!({"name": name, "description": description,
                "x-vendor": {"anything": [1, 2]},
                "sourceInfo": {"path": format!("/x/{ext}/index.ts"),
                    "source": format!("npm:@a/{ext}@1.0.0"), "scope": "user", "origin": "package"}});
            if let Some(topic) = topic {
                t["topic"] = json!(topic);
            }
            t
        })
        .collect();
    std::fs::write(dir.join("tools.json"), Value::Array(tools).to_string()).unwrap();
    let lines = |values: &[Value]| -> String { values.iter().map(|v| format!("{v}\n")).collect() };
    std::fs::write(
        dir.join("queries.jsonl"),
        lines(&[
            json!({"id": "q1", "prompt": "find the open issues about the login page",
                "needs": [["search_issues", "list_issues"]], "topics": ["issues"], "note": "x"}),
            json!({"id": "q2", "prompt": "email the on-call engineer, then page them",
                "needs": [["send_email"], ["page_oncall"]], "topics": ["mail", "oncall"]}),
            json!({"id": "q3", "prompt": "translate the release notes into German",
                "relevant_tools": ["translate_text"]}),
            json!({"id": "q4", "prompt": "open an issue for the crash and email it to Ana",
                "relevant_tools": ["create_issue"], "needs": [["create_issue"], ["send_email"]],
                "topics": ["issues", "mail"]}),
        ]),
    )
    .unwrap();
    std::fs::write(
        dir.join("irrelevance.jsonl"),
        lines(&[
            json!({"id": "n1", "prompt": "add logging to the retry loop in client.rs",
                "relevant_tools": [], "kind": "coding"}),
            json!({"id": "n2", "prompt": "close the duplicate issue", "relevant_tools": [],
                "kind": "near-miss", "topics": ["issues"]}),
            json!({"id": "n3", "prompt": "write a haiku", "relevant_tools": []}),
        ]),
    )
    .unwrap();
}

fn options(mode: Mode, threshold: f64, cap: u32) -> EvalOptions {
    EvalOptions {
        mode,
        split: Split::All,
        limit: None,
        decision: DecisionSettings {
            threshold,
            max_new_tools: cap,
            max_new_groups: cap,
            ..DecisionSettings::default()
        },
        weights: FieldWeights::default(),
        calibration: Calibration::default(),
        sweep: true,
        semantic: None,
    }
}

#[test]
fn the_everyday_format_is_read_and_its_figures_follow_the_selection() {
    let dir = std::env::temp_dir().join(format!("pcd-eval-everyday-{}", std::process::id()));
    everyday_set(&dir);
    let set = EvalSet::load(&dir).unwrap();
    assert_eq!(set.tool_topics[0].as_deref(), Some("issues"));
    assert_eq!(set.tool_topics[8], None);
    let q = &set.queries;
    assert_eq!(q[0].needs, [vec!["search_issues", "list_issues"]]);
    assert_eq!(q[0].relevant, ["search_issues"]);
    assert!(q[0].has_needs && !q[2].has_needs);
    assert_eq!(q[2].needs, [vec!["translate_text"]]);
    assert_eq!(q[3].relevant, ["create_issue"]);
    assert_eq!(q[3].needs.len(), 2);
    assert_eq!(set.irrelevance[0].kind, Some(PromptKind::Coding));
    assert_eq!(set.irrelevance[1].kind, Some(PromptKind::NearMiss));
    assert_eq!(set.irrelevance[2].kind, None);

    // Everything exposed (threshold 0, no cap to speak of): every need met, every topical
    // prompt sees an unrelated tool, no irrelevance prompt stays clean.
    let v = evaluate(&set, &options(Mode::Tools, 0.0, 1000), |_, _| {});
    let sel = &v["selection"];
    assert_eq!(sel["recall"], 1.0);
    // 7 relevant of 4 prompts × 10 tools (q1: both alternatives; q2, q4: two; q3: one).
    assert_eq!(sel["precision"], 0.175);
    assert_eq!(sel["exposed_per_prompt"], 10.0);
    assert_eq!(sel["withheld_share"], 0.0);
    assert_eq!(v["nothing_exposed_share"], 0.0);
    let e = &v["everyday"];
    assert_eq!(
        (e["needs_met_share"].clone(), e["needs_prompts"].clone()),
        (json!(1.0), json!(3))
    );
    assert_eq!(
        (
            e["unrelated_topic_share"].clone(),
            e["topic_prompts"].clone()
        ),
        (json!(1.0), json!(3))
    );
    assert_eq!(e["coding_nothing_exposed_share"], 0.0);
    assert_eq!(e["coding_prompts"], 1);
    assert_eq!(e["near_miss_nothing_exposed_share"], 0.0);
    assert_eq!(e["near_miss_prompts"], 1);

    // Nothing exposed (no score reaches 1): the opposite.
    let v = evaluate(&set, &options(Mode::Tools, 1.0, 6), |_, _| {});
    assert_eq!(v["selection"]["recall"], 0.0);
    assert_eq!(v["selection"]["withheld_share"], 1.0);
    assert_eq!(v["nothing_exposed_share"], 1.0);
    assert_eq!(v["everyday"]["needs_met_share"], 0.0);
    assert_eq!(v["everyday"]["unrelated_topic_share"], 0.0);
    assert_eq!(v["everyday"]["coding_nothing_exposed_share"], 1.0);
    assert_eq!(v["everyday"]["near_miss_nothing_exposed_share"], 1.0);
    // The ranking's reach does not depend on the threshold: it is what the cap's worth of
    // best candidates with a positive score would make available.
    let lowest = evaluate(&set, &options(Mode::Tools, f64::MIN_POSITIVE, 6), |_, _| {});
    for t in [1.0, 0.625] {
        let v = evaluate(&set, &options(Mode::Tools, t, 6), |_, _| {});
        assert_eq!(
            v["selection"]["reach_recall"],
            lowest["selection"]["recall"]
        );
        assert_eq!(
            v["everyday"]["needs_within_cap_share"],
            lowest["everyday"]["needs_met_share"]
        );
    }
    assert!(lowest["selection"]["recall"].as_f64().unwrap() > 0.0);

    // Groups: tracker {issues}, mail {mail}, misc {weather, deploy, oncall, database}.
    let v = evaluate(&set, &options(Mode::Mcp, 0.0, 1000), |_, _| {});
    assert_eq!(v["candidates"], 3);
    assert_eq!(v["selection"]["recall"], 1.0);
    // q1: tracker; q2: mail, misc; q3: misc; q4: tracker, mail: 6 of 4 × 3.
    assert_eq!(v["selection"]["precision"], 0.5);
    assert_eq!(v["everyday"]["unrelated_topic_share"], 1.0);
    assert_eq!(v["everyday"]["needs_met_share"], 1.0);

    // The Brier score and the table over every pair: 7 prompts × 10 tools, positives as
    // labelled (alternatives included), scored as the embedded scorer scores them.
    let v = evaluate(&set, &options(Mode::Tools, 0.625, 6), |_, _| {});
    let cset = candidates(
        &set.tools,
        &Classifier::default(),
        Mode::Tools,
        &Allowlists::default(),
        &Available::default(),
    );
    let index = embedded::index_for(&set.tools, &cset.candidates);
    let positives: [&[usize]; 7] = [&[0, 1], &[3, 7], &[8], &[2, 3], &[], &[], &[]];
    let prompts = q.iter().chain(&set.irrelevance);
    let mut squared = 0.0;
    for (p, positive) in prompts.zip(positives) {
        for (c, s) in index.scores(&p.prompt).into_iter().enumerate() {
            let y = if positive.contains(&c) { 1.0 } else { 0.0 };
            squared += (s - y) * (s - y);
        }
    }
    let cal = &v["calibration"];
    assert_eq!(cal["pairs"], 70);
    assert_eq!(cal["top10_pairs"], 70);
    assert_eq!(cal["brier"], round_brier(squared / 70.0));
    assert_eq!(cal["brier_top10"], cal["brier"]);
    let bins = cal["reliability"].as_array().unwrap();
    let pairs: u64 = bins.iter().map(|b| b["pairs"].as_u64().unwrap()).sum();
    assert_eq!(pairs, 70);
    let relevant: f64 = bins
        .iter()
        .map(|b| b["pairs"].as_f64().unwrap() * b["observed_relevant"].as_f64().unwrap())
        .sum();
    assert!((relevant - 7.0).abs() < 0.01, "{relevant}");

    // The sweep: 19 thresholds, recall and exposure never grow with the threshold.
    let rows = v["sweep"].as_array().unwrap();
    assert_eq!(rows.len(), 19);
    assert_eq!(rows[0]["threshold"], 0.05);
    assert_eq!(rows[18]["threshold"], 0.95);
    for pair in rows.windows(2) {
        let f = |r: &Value, k: &str| r[k].as_f64().unwrap();
        assert!(f(&pair[1], "recall") <= f(&pair[0], "recall"));
        assert!(f(&pair[1], "exposed_per_prompt") <= f(&pair[0], "exposed_per_prompt"));
        assert!(f(&pair[1], "nothing_exposed_share") >= f(&pair[0], "nothing_exposed_share"));
        assert!(f(&pair[1], "needs_met_share") <= f(&pair[0], "needs_met_share"));
    }
    // No prompt of this set is in the paraphrase slice, so no row says a share of it.
    assert!(rows
        .iter()
        .all(|r| r.get("paraphrase_needs_met_share").is_none()));
    let text = report(&dir, &v);
    for line in [
        "labelled prompts whose every need is made available",
        "coding-only prompts with nothing exposed",
        "calibration: Brier score",
        "[0.9, 1.0]",
        "selection by threshold (cap 6)",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_sweep_row_at_the_threshold_in_use_says_the_needs_met_and_paraphrase_slice_of_the_selection() {
    let dir = std::env::temp_dir().join(format!("pcd-eval-sweep-needs-{}", std::process::id()));
    everyday_set(&dir);
    let mut queries = std::fs::read_to_string(dir.join("queries.jsonl")).unwrap();
    for line in [
        json!({"id": "p1", "prompt": "ring whoever carries the pager tonight",
            "needs": [["page_oncall"]], "slice": "paraphrase"}),
        json!({"id": "p2", "prompt": "will it rain in Oslo tomorrow",
            "needs": [["weather_forecast"]], "slice": "paraphrase"}),
    ] {
        queries.push_str(&format!("{line}\n"));
    }
    std::fs::write(dir.join("queries.jsonl"), queries).unwrap();
    let set = EvalSet::load(&dir).unwrap();
    for threshold in [0.05, 0.5, 0.95] {
        let v = evaluate(&set, &options(Mode::Tools, threshold, 6), |_, _| {});
        let row = v["sweep"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["threshold"] == json!(threshold))
            .unwrap()
            .clone();
        let e = &v["everyday"];
        assert_eq!(
            row["needs_met_share"], e["needs_met_share"],
            "{threshold}: {v}"
        );
        assert_eq!(
            row["paraphrase_needs_met_share"], e["paraphrase_needs_met_share"],
            "{threshold}: {v}"
        );
        assert_eq!(e["paraphrase_prompts"], 2);
    }
    // Every need is met with everything exposed, none with nothing: the rows follow the selection.
    let v = evaluate(&set, &options(Mode::Tools, 0.0, 1000), |_, _| {});
    assert_eq!(v["everyday"]["needs_met_share"], 1.0);
    let text = report(&dir, &v);
    assert!(
        text.lines().any(|l| l.starts_with("threshold")
            && l.contains("needs met")
            && l.contains("paraphrase slice")),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_shared_format_has_no_everyday_figures() {
    let dir = std::env::temp_dir().join(format!("pcd-eval-plain-{}", std::process::id()));
    everyday_set(&dir);
    let plain: String = (0..4)
        .map(|i| format!("{}\n", json!({"id": format!("p{i}"), "prompt": "send an email", "relevant_tools": ["send_email"]})))
        .collect();
    std::fs::write(dir.join("queries.jsonl"), plain).unwrap();
    std::fs::write(dir.join("irrelevance.jsonl"), "").unwrap();
    let set = EvalSet::load(&dir).unwrap();
    let v = evaluate(&set, &options(Mode::Tools, 0.625, 6), |_, _| {});
    assert!(v.get("everyday").is_none(), "{v}");
    assert!(v.get("nothing_exposed_share").is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_needs_topics_and_kinds_are_named_and_a_dangling_irrelevance_link_is_an_error() {
    let dir = std::env::temp_dir().join(format!("pcd-eval-bad-{}", std::process::id()));
    everyday_set(&dir);
    let queries = dir.join("queries.jsonl");
    for (line, problem) in [
        (
            json!({"id": "a", "prompt": "p", "needs": [[]]}),
            "`needs` is not a list",
        ),
        (
            json!({"id": "a", "prompt": "p", "needs": ["x"]}),
            "`needs` is not a list",
        ),
        (
            json!({"id": "a", "prompt": "p", "needs": [["x"]], "topics": "issues"}),
            "`topics`",
        ),
        (
            json!({"id": "a", "prompt": "p", "relevant_tools": [], "kind": "chat"}),
            "`kind`",
        ),
        (
            json!({"id": "a", "prompt": "p"}),
            "no array `relevant_tools`",
        ),
    ] {
        std::fs::write(&queries, format!("{line}\n")).unwrap();
        let err = EvalSet::load(&dir).unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains(problem), "{err}");
    }
    // `needs` alone is enough.
    std::fs::write(
        &queries,
        format!(
            "{}\n",
            json!({"id": "a", "prompt": "p", "needs": [["list_issues", "search_issues"]]})
        ),
    )
    .unwrap();
    assert_eq!(
        EvalSet::load(&dir).unwrap().queries[0].relevant,
        ["list_issues"]
    );
    // Absent irrelevance prompts are fine; a link to nothing is not.
    let irrelevance = dir.join("irrelevance.jsonl");
    std::fs::remove_file(&irrelevance).unwrap();
    assert!(EvalSet::load(&dir).unwrap().irrelevance.is_empty());
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.join("nowhere.jsonl"), &irrelevance).unwrap();
        let err = EvalSet::load(&dir).unwrap_err().to_string();
        assert!(
            err.contains("irrelevance.jsonl") && err.contains("symbolic link"),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_plot_is_svg_with_both_series_and_the_default_marked() {
    let dir = std::env::temp_dir().join(format!("pcd-eval-plot-{}", std::process::id()));
    everyday_set(&dir);
    let plot = dir.join("sweep.svg");
    let args = EvalArgs {
        set: dir.clone(),
        mode: None,
        split: Split::All,
        limit: None,
        agent_dir: None,
        selection: crate::SelectionFlags::default(),
        sweep: false,
        lexical: true,
        model_dir: None,
        plot: Some(plot.clone()),
        json: true,
        weights: None,
        calibration: None,
    };
    let v: Value = serde_json::from_str(&run(&args).unwrap()).unwrap();
    assert_eq!(
        v["sweep"].as_array().unwrap().len(),
        19,
        "--plot implies --sweep"
    );
    let text = std::fs::read_to_string(&plot).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    let series: Vec<_> = root
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .collect();
    // The set says needs, so the share of prompts whose every need is made available is drawn;
    // it has a coding-only prompt, so sessions are drawn and their series is drawn too.
    assert_eq!(series.len(), 4);
    for (node, id) in series
        .iter()
        .zip(["recall", "exposed", "needs-met", "session-withheld"])
    {
        assert_eq!(node.attribute("id"), Some(id));
        let points = node.attribute("points").unwrap().split_whitespace();
        let points: Vec<(f64, f64)> = points
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        assert_eq!(points.len(), 19, "{id}");
        assert!(
            points.windows(2).all(|w| w[0].0 < w[1].0),
            "{id}: by threshold"
        );
    }
    let marker = root
        .descendants()
        .find(|n| n.attribute("id") == Some("default-threshold"))
        .expect("the default threshold is marked");
    assert_eq!(marker.attribute("x1"), marker.attribute("x2"));
    assert!(root
        .descendants()
        .any(|n| n.text() == Some("default 0.625")));
    // A plot that cannot be written is an error naming the file.
    let args = EvalArgs {
        plot: Some(dir.join("missing/sweep.svg")),
        ..args
    };
    assert!(run(&args).unwrap_err().contains("missing/sweep.svg"));
    // Issue 32, item 4: a FIFO at the file made the write wait forever for a reader, and a link
    // there was written through. Both are refused at once, by what they are, and stay.
    let fifo = dir.join("fifo.svg");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let args = EvalArgs {
        plot: Some(fifo.clone()),
        ..args
    };
    let error = run(&args).unwrap_err();
    assert!(
        error.contains("fifo.svg") && error.contains("FIFO"),
        "{error}"
    );
    let victim = dir.join("victim");
    std::fs::write(&victim, b"keep me").unwrap();
    let link = dir.join("link.svg");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let args = EvalArgs {
        plot: Some(link.clone()),
        ..args
    };
    let error = run(&args).unwrap_err();
    assert!(error.contains("symbolic link"), "{error}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn eval_takes_the_threshold_and_caps_from_flags_over_the_settings() {
    let dir = std::env::temp_dir().join(format!("pcd-eval-flags-{}", std::process::id()));
    everyday_set(&dir);
    let agent = dir.join("agent");
    std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
    std::fs::write(
        agent.join("pi-context-decisions/settings.json"),
        r#"{"tools": {"mode": "mcp"}, "decision": {"threshold": 0.3, "maxNewGroups": 1}}"#,
    )
    .unwrap();
    let mut args = EvalArgs {
        set: dir.clone(),
        mode: None,
        split: Split::All,
        limit: None,
        agent_dir: None,
        selection: crate::SelectionFlags::default(),
        sweep: false,
        lexical: true,
        model_dir: None,
        plot: None,
        json: true,
        weights: None,
        calibration: None,
    };
    let json = |args: &EvalArgs| -> Value { serde_json::from_str(&run(args).unwrap()).unwrap() };
    // Without --agent-dir: the built-in defaults, whatever the user's settings say.
    let v = json(&args);
    assert_eq!(
        (
            v["mode"].clone(),
            v["selection"]["threshold"].clone(),
            v["selection"]["cap"].clone()
        ),
        (json!("tools"), json!(0.625), json!(6))
    );
    args.agent_dir = Some(agent);
    let v = json(&args);
    assert_eq!(
        (
            v["mode"].clone(),
            v["selection"]["threshold"].clone(),
            v["selection"]["cap"].clone()
        ),
        (json!("mcp"), json!(0.3), json!(1))
    );
    args.selection.threshold = Some(0.5);
    args.selection.max_new_groups = Some(3);
    args.mode = Some("tools".into());
    args.selection.max_new_tools = Some(2);
    let v = json(&args);
    assert_eq!(
        (
            v["mode"].clone(),
            v["selection"]["threshold"].clone(),
            v["selection"]["cap"].clone()
        ),
        (json!("tools"), json!(0.5), json!(2))
    );
    assert!(v.get("sweep").is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The coding-only and near-miss prompts' exposure per prompt, as `everyday_json` reports it.
fn e_exposed(s: &Selection) -> (Option<f64>, Option<f64>) {
    let e = everyday_json(s);
    (
        e.get("coding_exposed_per_prompt").and_then(Value::as_f64),
        e.get("near_miss_exposed_per_prompt")
            .and_then(Value::as_f64),
    )
}

/// Issue 31: a need naming a tool the inventory lacks is refused, naming the file and the line
/// (not the name); before, it was dropped without a word and the figures rose.
#[test]
fn a_need_the_inventory_lacks_is_refused_with_its_line() {
    let dir = std::env::temp_dir().join(format!("pcd-eval-unknown-{}", std::process::id()));
    everyday_set(&dir);
    let lines = [
        json!({"id": "a", "prompt": "p", "needs": [["list_issues"]]}),
        json!({"id": "b", "prompt": "p", "needs": [["list_issues", "sk-SECRET-tool"]]}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("queries.jsonl"), text).unwrap();
    let err = EvalSet::load(&dir).unwrap_err().to_string();
    assert!(
        err.contains("queries.jsonl") && err.contains("line 2") && err.contains("tools.json"),
        "{err}"
    );
    assert!(!err.contains("SECRET"), "{err}");
    // `relevant_tools` too, and in the irrelevance file.
    std::fs::write(
        dir.join("queries.jsonl"),
        format!(
            "{}\n",
            json!({"id": "a", "prompt": "p", "relevant_tools": ["nope"]})
        ),
    )
    .unwrap();
    assert!(EvalSet::load(&dir)
        .unwrap_err()
        .to_string()
        .contains("line 1"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 31: sessions are drawn with a fixed seed (mostly coding-only prompts, three to six
/// about one or two topics) and played with availability adding up on a folded branch.
#[test]
fn sessions_are_drawn_the_same_way_and_availability_adds_up() {
    use crate::sessions::{draw_sessions, run_sessions, SessionInputs, SessionPrompt};
    let dir = std::env::temp_dir().join(format!("pcd-eval-sessions-{}", std::process::id()));
    everyday_set(&dir);
    let set = EvalSet::load(&dir).unwrap();
    let coding = crate::sessions::coding_prompts(&set.irrelevance);
    assert_eq!(coding.len(), 1);
    let plan = draw_sessions(&set.queries, &coding, 12, 20, 7);
    assert_eq!(plan, draw_sessions(&set.queries, &coding, 12, 20, 7));
    assert_ne!(plan, draw_sessions(&set.queries, &coding, 12, 20, 8));
    for session in &plan {
        assert_eq!(session.len(), 20);
        let topical = session
            .iter()
            .filter(|p| matches!(p, SessionPrompt::Topical(_)))
            .count();
        assert!((3..=6).contains(&topical), "{session:?}");
    }
    assert!(draw_sessions(&set.queries, &[], 12, 20, 7).is_empty());
    let run_rounds =
        |plan: &[Vec<SessionPrompt>], threshold: f64, cap: u32, minimum: u32, rounds| {
            let decision = DecisionSettings {
                threshold,
                max_new_tools: cap,
                minimum_candidates: Some(minimum),
                ..DecisionSettings::default()
            };
            let vectors = HashMap::new();
            let inputs = SessionInputs {
                tools: &set.tools,
                mode: Mode::Tools,
                decision: &decision,
                weights: FieldWeights::default(),
                calibration: Calibration::default(),
                semantic: None,
                queries: &set.queries,
                coding: &coding,
                prompt_vectors: &vectors,
            };
            run_sessions(&inputs, plan, threshold, rounds)
        };
    let run =
        |threshold: f64, cap: u32, minimum: u32| run_rounds(&plan, threshold, cap, minimum, 0);
    // Nothing crosses a threshold above 1: everything stays withheld, no need is met.
    let none = run(1.5, 6, 1);
    assert_eq!(none.sessions, 12);
    assert_eq!(none.withheld_text_median(), 1.0);
    assert_eq!(none.withheld_candidates_median(), 1.0);
    assert_eq!((none.topical_met, none.exposed_per_session), (0, 0.0));
    assert!(none.topical >= 36);
    // Threshold 0 and a cap of one: one tool a prompt at most, never taken back, so a session
    // of 20 prompts opens all ten tools of the set (each prompt adds one until none is left).
    let one = run(0.0, 1, 1);
    assert_eq!(one.withheld_text_median(), 0.0);
    assert_eq!(one.exposed_per_session, 10.0);
    // Fewer candidates than the minimum: they all stay available unscored, as in a Session.
    let unscored = run(1.5, 6, 11);
    assert_eq!(unscored.withheld_candidates_median(), 0.0);
    assert_eq!(unscored.needs_met_share(), 1.0);
    // The tool-round cadence: one prompt, then three tool rounds, each topping up at most the
    // cap from the prompt's scores, never below the threshold.
    let one_prompt = vec![vec![SessionPrompt::Coding(0)]];
    for (threshold, cap, rounds, exposed) in [
        (0.0, 1, 0, 1.0),
        (0.0, 1, 3, 4.0),
        (0.0, 4, 3, 10.0),
        (1.5, 1, 3, 0.0),
    ] {
        let run = run_rounds(&one_prompt, threshold, cap, 1, rounds);
        assert_eq!(
            run.exposed_per_session, exposed,
            "{threshold} {cap} {rounds}"
        );
    }
    // Fewer candidates than the minimum: all available unscored, and no tool round adds more.
    assert_eq!(
        run_rounds(&one_prompt, 1.5, 6, 11, 3).exposed_per_session,
        10.0
    );
    // Tool rounds only ever add: a whole session opens at least what the prompts alone do.
    let prompts_only = run(0.3, 2, 1);
    let with_rounds = run_rounds(&plan, 0.3, 2, 1, 3);
    assert!(with_rounds.exposed_per_session >= prompts_only.exposed_per_session);
    assert!(with_rounds.withheld_text_median() <= prompts_only.withheld_text_median());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_need_gates_auc_and_shares_follow_their_definitions() {
    assert_eq!(auc(&[0.9, 0.8], &[0.1, 0.85]), 0.75);
    assert_eq!(auc(&[0.5], &[0.5]), 0.5);
    let gate = [vec![0.9, 0.4], vec![0.1, 0.6], vec![], vec![0.7]];
    let v = need_gate_json(&gate).unwrap();
    assert_eq!(v["auc"], 0.75);
    assert_eq!(v["passed_topical"], 0.5);
    assert_eq!(v["passed_coding"], 0.5);
    assert!(v["passed_near_miss"].is_null());
    assert_eq!(v["passed_other_irrelevance"], 1.0);
    assert!(need_gate_json(&[vec![], vec![0.1], vec![], vec![]]).is_none());
}
