//! The human-readable report of an evaluation's figures (ui-text's sentences over the JSON).

use crate::metrics::*;
use serde_json::{Map, Value};
use std::path::Path;

/// The human-readable report of an evaluation's JSON (ui-text's [`pcd_ui_text::eval_report`]
/// over the same figures `--json` prints).
pub fn report(set_dir: &Path, value: &Value) -> String {
    let g = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    let sessions = |x: &Value| pcd_ui_text::EvalSessions {
        sessions: n(x, "sessions"),
        length: n(x, "length"),
        withheld_text_median: g(x, "withheld_text_median"),
        withheld_candidates_median: g(x, "withheld_candidates_median"),
        needs_met: (g(x, "needs_met_share"), n(x, "topical_prompts")),
        exposed_per_session: g(x, "exposed_per_session"),
        tool_rounds: n(x, "tool_rounds_per_prompt"),
    };
    let scores = |v: &Value| pcd_ui_text::EvalScores {
        recall: KS.map(|k| g(v, &format!("recall@{k}"))),
        complete: [g(v, "complete@5"), g(v, "complete@10")],
        ndcg10: g(v, "ndcg@10"),
        ms_median: g(v, "ms_per_prompt_median"),
        ms_p99: g(v, "ms_per_prompt_p99"),
    };
    let share = |v: &Value, key: &str, prompts: &str| {
        v.get(key)
            .and_then(Value::as_f64)
            .map(|share| (share, n(v, prompts)))
    };
    let sel = &value["selection"];
    let cal = &value["calibration"];
    let day = &value["everyday"];
    let scorer = pcd_ui_text::scorer_line(
        value["scorer"].as_str().unwrap_or("lexical"),
        value["scorer_reason"].as_str().unwrap_or_default(),
    );
    let comparison = if value.get("lexical").is_some() {
        pcd_ui_text::scorer_comparison(&comparison_rows(value))
    } else {
        String::new()
    };
    let body = pcd_ui_text::eval_report(&pcd_ui_text::EvalReport {
        set: set_dir.display().to_string(),
        mode: value["mode"].as_str().unwrap_or("").to_owned(),
        split: value["split"].as_str().unwrap_or("").to_owned(),
        candidates: n(value, "candidates"),
        prompts: n(value, "prompts"),
        embedded: scores(value),
        tool_search: scores(&value["peer_tool_search_bm25"]),
        tool_search_latest: scores(&value["peer_tool_search_pi_1_6"]),
        selection: pcd_ui_text::EvalSelection {
            threshold: g(sel, "threshold"),
            cap: n(sel, "cap"),
            recall: g(sel, "recall"),
            precision: g(sel, "precision"),
            exposed_per_prompt: g(sel, "exposed_per_prompt"),
            withheld_share: g(sel, "withheld_share"),
            reach_recall: g(sel, "reach_recall"),
        },
        irrelevance: share(value, "nothing_exposed_share", "irrelevance_prompts"),
        irrelevance_exposed: value
            .get("irrelevance_exposed_per_prompt")
            .and_then(Value::as_f64),
        most_often_available: value["most_often_available"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                let name = m["candidate"].as_str().unwrap_or_default().to_owned();
                (name, g(m, "share"))
            })
            .collect(),
        need_gate: value.get("need_gate").map(|x| pcd_ui_text::EvalNeedGate {
            auc: g(x, "auc"),
            passed_topical: x.get("passed_topical").and_then(Value::as_f64),
            passed_coding: x.get("passed_coding").and_then(Value::as_f64),
            passed_near_miss: x.get("passed_near_miss").and_then(Value::as_f64),
            passed_other: x.get("passed_other_irrelevance").and_then(Value::as_f64),
        }),
        sessions: value.get("sessions").map(sessions),
        sessions_tool_round: value.get("sessions_tool_round").map(sessions),
        calibration: pcd_ui_text::EvalCalibration {
            pairs: n(cal, "pairs"),
            brier: g(cal, "brier"),
            top10_pairs: n(cal, "top10_pairs"),
            brier_top10: g(cal, "brier_top10"),
            bins: cal["reliability"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|b| pcd_ui_text::EvalBin {
                    low: g(b, "low"),
                    high: g(b, "high"),
                    pairs: n(b, "pairs"),
                    mean_score: g(b, "mean_score"),
                    observed: g(b, "observed_relevant"),
                })
                .collect(),
        },
        everyday: pcd_ui_text::EvalEveryday {
            needs_met: share(day, "needs_met_share", "needs_prompts"),
            unrelated_topic: share(day, "unrelated_topic_share", "topic_prompts"),
            coding_nothing_exposed: share(day, "coding_nothing_exposed_share", "coding_prompts"),
            near_miss_nothing_exposed: share(
                day,
                "near_miss_nothing_exposed_share",
                "near_miss_prompts",
            ),
            needs_within_cap: share(day, "needs_within_cap_share", "needs_prompts"),
            paraphrase_needs_met: share(day, "paraphrase_needs_met_share", "paraphrase_prompts"),
            coding_exposed: day.get("coding_exposed_per_prompt").and_then(Value::as_f64),
            near_miss_exposed: day
                .get("near_miss_exposed_per_prompt")
                .and_then(Value::as_f64),
        },
        sweep: sweep_rows(value),
    });
    format!("{scorer}\n{body}{comparison}")
}

/// The `sweep` rows of an evaluation's JSON.
pub(crate) fn sweep_rows(value: &Value) -> Vec<pcd_ui_text::EvalSweepRow> {
    let g = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    value["sweep"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| pcd_ui_text::EvalSweepRow {
            threshold: g(r, "threshold"),
            recall: g(r, "recall"),
            precision: g(r, "precision"),
            exposed_per_prompt: g(r, "exposed_per_prompt"),
            needs_met: r.get("needs_met_share").and_then(Value::as_f64),
            paraphrase_needs_met: r.get("paraphrase_needs_met_share").and_then(Value::as_f64),
            nothing_exposed: r.get("nothing_exposed_share").and_then(Value::as_f64),
            coding_exposed: r.get("coding_exposed_per_prompt").and_then(Value::as_f64),
            session_withheld: r
                .get("session_withheld_text_median")
                .and_then(Value::as_f64),
            session_needs_met: r.get("session_needs_met_share").and_then(Value::as_f64),
        })
        .collect()
}

/// The figures of the lexical scorer alone that `eval` shows beside the fused ones.
pub(crate) fn lexical_summary(value: &Value) -> Value {
    let mut m = Map::new();
    for key in ["recall@1", "recall@5", "recall@10", "ndcg@10"] {
        if let Some(v) = value.get(key) {
            m.insert(key.into(), v.clone());
        }
    }
    for key in [
        "selection",
        "nothing_exposed_share",
        "everyday",
        "calibration",
    ] {
        if let Some(v) = value.get(key) {
            let mut v = v.clone();
            if let Some(o) = v.as_object_mut() {
                o.remove("reliability");
            }
            m.insert(key.into(), v);
        }
    }
    Value::Object(m)
}

/// The comparison rows of a fused evaluation with its `lexical` summary.
pub(crate) fn comparison_rows(value: &Value) -> Vec<pcd_ui_text::ScorerComparisonRow> {
    let lexical = &value["lexical"];
    let at = |v: &Value, path: &[&str]| {
        let mut v = v;
        for p in path {
            v = v.get(*p)?;
        }
        v.as_f64()
    };
    let rows: [(&'static str, &[&str]); 13] = [
        ("recall@5", &["recall@5"]),
        ("recall@10", &["recall@10"]),
        ("ndcg@10", &["ndcg@10"]),
        ("selection recall", &["selection", "recall"]),
        ("selection precision", &["selection", "precision"]),
        ("exposed per prompt", &["selection", "exposed_per_prompt"]),
        (
            "reach: recall within the cap",
            &["selection", "reach_recall"],
        ),
        ("irrelevance: nothing exposed", &["nothing_exposed_share"]),
        ("needs met", &["everyday", "needs_met_share"]),
        (
            "reach: needs within the cap",
            &["everyday", "needs_within_cap_share"],
        ),
        (
            "coding-only: nothing exposed",
            &["everyday", "coding_nothing_exposed_share"],
        ),
        (
            "near-miss: nothing exposed",
            &["everyday", "near_miss_nothing_exposed_share"],
        ),
        ("brier", &["calibration", "brier"]),
    ];
    rows.iter()
        .filter_map(|(metric, path)| {
            let (fused, lex) = (at(value, path), at(lexical, path));
            (fused.is_some() || lex.is_some()).then_some(pcd_ui_text::ScorerComparisonRow {
                metric,
                fused,
                lexical: lex,
            })
        })
        .collect()
}
