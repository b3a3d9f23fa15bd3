//! The `pick` command: what the picker would make available for one prompt, and why.
//!
//! It reads an inventory file, forms the candidates (internal tools are never candidates; in
//! `mcp` mode extension tools with no usable provenance are left unfiltered), scores them with
//! the chosen decision model, and applies the default threshold and cap. Nothing is recorded.

use crate::http_scorer::HttpScorer;
use crate::inventory::read_inventory_file;
use pcd_model::{Allowlists, Classifier, DecisionSettings, Mode};
use pcd_picker::candidates::{candidates, Available, CandidateKey, Exempt};
use pcd_picker::embedded;
use pcd_picker::request::{build_requests, parse_answer, Cancellation, DecisionModel, ModelError};
use pcd_picker::round::{rounded, select, Outcome};
use pcd_picker::text::bounded;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The longest prompt the picker reads, in characters (the rest is ignored).
pub const MAX_PROMPT_CHARS: usize = 4000;

/// The `pick` command's arguments.
#[derive(Debug, clap::Args)]
pub struct PickArgs {
    /// A JSON array shaped like Pi's getAllTools().
    #[arg(long, value_name = "FILE")]
    pub tools: std::path::PathBuf,
    /// The user's prompt.
    #[arg(long, value_name = "TEXT")]
    pub prompt: String,
    /// tools: every external tool is a candidate; mcp: every group is.
    #[arg(long, default_value = "tools", value_parser = ["tools", "mcp"])]
    pub mode: String,
    /// The decision model: embedded (offline), or http (an OpenAI-compatible endpoint named by
    /// CONTEXT_DECISIONS_BASE_URL and CONTEXT_DECISIONS_MODEL, key in CONTEXT_DECISIONS_API_KEY).
    #[arg(long, default_value = "embedded", value_parser = ["embedded", "http"])]
    pub scorer: String,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn exempt_reason(e: Exempt) -> &'static str {
    use pcd_ui_text::PickExempt;
    match e {
        Exempt::Internal => PickExempt::Internal,
        Exempt::Available => PickExempt::Available,
        Exempt::Allowlisted => PickExempt::Allowlisted,
        Exempt::Unfiltered => PickExempt::Unfiltered,
        Exempt::Unrecordable => PickExempt::Unrecordable,
    }
    .text()
}

/// Environment variables of the HTTP scorer for the command-line program (the extension reads
/// `decision.baseUrl`, `decision.model` and `decision.apiKeyEnv` from its settings instead).
pub const ENV_BASE_URL: &str = "CONTEXT_DECISIONS_BASE_URL";
/// See [`ENV_BASE_URL`].
pub const ENV_MODEL: &str = "CONTEXT_DECISIONS_MODEL";
/// See [`ENV_BASE_URL`]: the name of the variable holding the API key, if any.
pub const ENV_API_KEY: &str = "CONTEXT_DECISIONS_API_KEY";

fn http_from_env(decision: &DecisionSettings) -> Result<HttpScorer, String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let base = var(ENV_BASE_URL).ok_or_else(|| pcd_ui_text::http_scorer_needs(ENV_BASE_URL))?;
    let model = var(ENV_MODEL).ok_or_else(|| pcd_ui_text::http_scorer_needs(ENV_MODEL))?;
    HttpScorer::new(
        &base,
        &model,
        var(ENV_API_KEY),
        Duration::from_millis(decision.timeout_ms),
    )
    .map_err(|e| e.to_string())
}

/// Scores every candidate through `model`: bounded batches, at most `decision.concurrency` in
/// flight, one `deadline` for the whole round, each answer checked per candidate. Any failed
/// batch, a passed deadline or a cancellation fails the whole round.
pub fn score_with(
    model: &(dyn DecisionModel + Sync),
    prompt: &str,
    candidates: &[pcd_picker::candidates::Candidate],
    decision: &DecisionSettings,
    deadline: Instant,
    cancel: &Cancellation,
) -> Result<Vec<Option<f64>>, ModelError> {
    let requests = build_requests(prompt, candidates, decision.batch_size as usize);
    let mut scores = vec![None; candidates.len()];
    let width = (decision.concurrency as usize).max(1);
    for wave in requests.chunks(width) {
        if cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        if Instant::now() >= deadline {
            return Err(ModelError::Unavailable);
        }
        let answers: Vec<Result<String, ModelError>> = std::thread::scope(|s| {
            let handles: Vec<_> = wave
                .iter()
                .map(|r| s.spawn(move || model.answer(r, deadline, cancel)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(Err(ModelError::Unavailable)))
                .collect()
        });
        for (request, answer) in wave.iter().zip(answers) {
            // A malformed answer drops its candidates (they stay `None`); it does not fail the
            // round, since nothing is selected from it.
            if let Ok(valid) = parse_answer(request, &answer?) {
                for (index, score) in valid {
                    scores[index] = Some(score);
                }
            }
        }
    }
    Ok(scores)
}

/// Runs `pick` and returns what to print.
pub fn run(args: &PickArgs) -> Result<String, String> {
    let inventory = read_inventory_file(&args.tools).map_err(|e| e.to_string())?;
    let mode = Mode::parse(&args.mode).unwrap_or_default();
    let decision = DecisionSettings::default();
    let set = candidates(
        &inventory.tools,
        &Classifier::default(),
        mode,
        &Allowlists::default(),
        &Available::default(),
    );
    let cap = match mode {
        Mode::Tools => decision.max_new_tools,
        Mode::Mcp => decision.max_new_groups,
    } as usize;
    let prompt = bounded(&args.prompt, MAX_PROMPT_CHARS);
    let too_few = set.candidates.len() < decision.minimum_candidates as usize;
    let outcomes = if too_few {
        Vec::new()
    } else if args.scorer == "http" {
        let scorer = http_from_env(&decision)?;
        let deadline = Instant::now() + Duration::from_millis(decision.timeout_ms);
        let cancel = Cancellation::default();
        let scores = score_with(
            &scorer,
            &prompt,
            &set.candidates,
            &decision,
            deadline,
            &cancel,
        )
        .map_err(|e| pcd_ui_text::pick_failed(&e))?;
        select(&scores, decision.threshold, cap)
    } else {
        let index = embedded::index_for(&inventory.tools, &set.candidates);
        let scores: Vec<Option<f64>> = index.scores(&prompt).into_iter().map(Some).collect();
        select(&scores, decision.threshold, cap)
    };
    let mut available = Vec::new();
    let mut withheld = Vec::new();
    for (i, c) in set.candidates.iter().enumerate() {
        let (kind, name) = match &c.key {
            CandidateKey::Tool(n) => ("tool", n.as_str()),
            CandidateKey::Group(k) => ("group", k.as_str()),
        };
        let mut row = json!({ "kind": kind, "name": name, "label": c.label });
        if kind == "group" {
            row["tools"] = json!(c.members.len());
        }
        let Some(outcome) = outcomes.get(i) else {
            row["reason"] = json!(pcd_ui_text::PickReason::BelowMinimum.text());
            available.push(row);
            continue;
        };
        if let Some(s) = outcome.score() {
            row["score"] = json!(rounded(s));
        }
        use pcd_ui_text::PickReason;
        let (reason, added) = match outcome {
            Outcome::Added { .. } => (PickReason::Added, true),
            Outcome::CutByCap { .. } => (PickReason::CutByCap, false),
            Outcome::BelowThreshold { .. } => (PickReason::BelowThreshold, false),
            Outcome::Dropped => (PickReason::NoValidScore, false),
        };
        row["reason"] = json!(reason.text());
        if added {
            available.push(row);
        } else {
            withheld.push(row);
        }
    }
    // Best first among what was added and withheld; ties keep inventory order (stable sort).
    let by_score = |a: &Value, b: &Value| {
        let s = |v: &Value| v["score"].as_f64().unwrap_or(0.0);
        s(b).total_cmp(&s(a))
    };
    available.sort_by(by_score);
    withheld.sort_by(by_score);
    let exempt: Vec<Value> = set
        .exempt
        .iter()
        .map(|&(i, e)| json!({ "name": inventory.tools[i].name, "reason": exempt_reason(e) }))
        .collect();
    let value = json!({
        "mode": mode.as_str(),
        "scorer": args.scorer,
        "threshold": decision.threshold,
        "cap": cap,
        "minimum_candidates": decision.minimum_candidates,
        "candidates": set.candidates.len(),
        "available": available,
        "withheld": withheld,
        "always_available": exempt,
    });
    if args.json {
        let mut s = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
        s.push('\n');
        return Ok(s);
    }
    Ok(render(&value))
}

/// The text report, from the JSON one.
fn render(v: &Value) -> String {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let rows = |v: &Value| -> Vec<pcd_ui_text::PickRow> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|r| pcd_ui_text::PickRow {
                name: text(&r["name"]),
                label: text(&r["label"]),
                score: r["score"].as_f64(),
                reason: text(&r["reason"]),
            })
            .collect()
    };
    pcd_ui_text::pick_report(&pcd_ui_text::PickReport {
        mode: text(&v["mode"]),
        scorer: text(&v["scorer"]),
        threshold: v["threshold"].as_f64().unwrap_or_default(),
        cap: v["cap"].as_u64().unwrap_or_default(),
        candidates: v["candidates"].as_u64().unwrap_or_default() as usize,
        available: rows(&v["available"]),
        withheld: rows(&v["withheld"]),
        always_available: v["always_available"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| (text(&r["name"]), text(&r["reason"])))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_picker::candidates::Candidate;
    use pcd_picker::request::DecisionRequest;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const SECRETS: [&str; 3] = [
        "SECRET_SCHEMA_q1",
        "/home/alice/SECRET_PATH",
        "SECRET_NS_INSTR",
    ];

    fn inventory_file() -> std::path::PathBuf {
        let mut tools = vec![json!({"name": "read", "description": "Read a file",
            "sourceInfo": {"path": "builtin:read", "source": "builtin"}})];
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
            "music playlist",
            "news article",
        ];
        for t in topics {
            tools.push(json!({
                "name": t.replace(' ', "_"),
                "description": format!("Handle {t} tasks."),
                "parameters": {"type": "object", "properties": {"x": {"description": SECRETS[0]}}},
                "namespace": {"name": "mcp__srv", "instructions": SECRETS[2]},
                "sourceInfo": {"path": format!("{}/index.ts", SECRETS[1]), "source": "npm:@acme/tools@1.0.0",
                               "scope": "user", "origin": "package"},
            }));
        }
        let path = std::env::temp_dir().join(format!("pcd-pick-{}.json", std::process::id()));
        std::fs::write(&path, Value::Array(tools).to_string()).unwrap();
        path
    }

    fn args(prompt: &str, mode: &str) -> PickArgs {
        PickArgs {
            tools: inventory_file(),
            prompt: prompt.to_owned(),
            mode: mode.to_owned(),
            scorer: "embedded".to_owned(),
            json: true,
        }
    }

    #[test]
    fn pick_explains_what_is_added_and_withheld_and_leaks_nothing() {
        let out = run(&args(
            "What's the weather forecast for Porto this weekend?",
            "tools",
        ))
        .unwrap();
        for secret in SECRETS {
            assert!(!out.contains(secret), "{secret}");
        }
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["threshold"], 0.625);
        assert_eq!(v["cap"], 6);
        assert_eq!(v["candidates"], 12);
        assert_eq!(v["available"][0]["name"], "weather_forecast");
        assert!(v["available"][0]["score"].as_f64().unwrap() >= 0.625);
        assert_eq!(v["withheld"].as_array().unwrap().len(), 11);
        assert_eq!(v["always_available"][0]["name"], "read");
        assert_eq!(v["always_available"][0]["reason"], "internal");
    }

    #[test]
    fn fewer_candidates_than_the_minimum_keep_everything_available_unscored() {
        let v: Value = serde_json::from_str(&run(&args("weather", "mcp")).unwrap()).unwrap();
        assert_eq!(v["candidates"], 1);
        assert_eq!(v["available"].as_array().unwrap().len(), 1);
        assert!(v["available"][0].get("score").is_none());
    }

    struct Fake {
        in_flight: AtomicUsize,
        most: AtomicUsize,
        fail: bool,
    }

    impl DecisionModel for Fake {
        fn answer(
            &self,
            request: &DecisionRequest,
            _deadline: Instant,
            _cancel: &Cancellation,
        ) -> Result<String, ModelError> {
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(20));
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            if self.fail {
                return Err(ModelError::Unavailable);
            }
            if request.ids[0].0 == 0 {
                return Ok("not json".into());
            }
            let scores: Vec<Value> = request
                .ids
                .iter()
                .map(|(i, id)| json!({"id": id, "score": (*i as f64) / 100.0}))
                .collect();
            Ok(json!({ "scores": scores }).to_string())
        }
    }

    fn cands(n: usize) -> Vec<Candidate> {
        (0..n)
            .map(|i| Candidate::tool(&format!("t{i}"), "", i))
            .collect()
    }

    #[test]
    fn batches_run_with_bounded_concurrency_and_bad_answers_drop_their_candidates() {
        let model = Fake {
            in_flight: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
            fail: false,
        };
        let decision = DecisionSettings {
            batch_size: 10,
            concurrency: 3,
            ..DecisionSettings::default()
        };
        let far = Instant::now() + Duration::from_secs(30);
        let none = Cancellation::default();
        let scores = score_with(&model, "p", &cands(95), &decision, far, &none).unwrap();
        assert!(model.most.load(Ordering::SeqCst) <= 3);
        assert!(
            model.most.load(Ordering::SeqCst) >= 2,
            "batches ran in parallel"
        );
        assert!(
            scores[..10].iter().all(Option::is_none),
            "the malformed batch is dropped"
        );
        assert_eq!(scores[42], Some(0.42));
        assert_eq!(scores[94], Some(0.94));
    }

    #[test]
    fn a_failed_batch_fails_the_round() {
        let model = Fake {
            in_flight: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
            fail: true,
        };
        let decision = DecisionSettings::default();
        let far = Instant::now() + Duration::from_secs(30);
        let none = Cancellation::default();
        assert_eq!(
            score_with(&model, "p", &cands(3), &decision, far, &none),
            Err(ModelError::Unavailable)
        );
        let ok = Fake {
            in_flight: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
            fail: false,
        };
        let cancelled = Cancellation::default();
        cancelled.cancel();
        assert_eq!(
            score_with(&ok, "p", &cands(3), &decision, far, &cancelled),
            Err(ModelError::Cancelled)
        );
        assert_eq!(
            score_with(&ok, "p", &cands(3), &decision, Instant::now(), &none),
            Err(ModelError::Unavailable),
            "a passed deadline fails the round"
        );
    }

    #[test]
    fn the_http_scorer_needs_its_settings() {
        let mut a = args("x", "tools");
        a.scorer = "http".into();
        // Unset in the test environment: a clear error naming the variable, not a panic.
        if std::env::var_os(ENV_BASE_URL).is_none() {
            assert!(run(&a).unwrap_err().contains(ENV_BASE_URL));
        }
    }
}
