//! The `pick` command: what the picker would make available for one prompt, and why.
//!
//! It reads an inventory file and the user's settings as Pi finds them (the global settings in
//! the agent directory, the project allowlist in `<cwd>/.pi/`, and, when the settings approve
//! it, the names-only MCP origins of the global `mcp.json`), forms the candidates (internal and
//! allowlisted tools are never candidates; in `mcp` mode extension tools with no usable
//! provenance are left unfiltered), scores them with the chosen decision model (`--scorer`,
//! whatever `decision.provider` says, so that it always shows a decision), and applies the
//! threshold and cap of the settings or of the flags. Nothing is recorded.

use context_decisions::http_scorer::HttpScorer;
use context_decisions::inventory::read_inventory_file;
use pcd_eval::SelectionFlags;
use pcd_model::{Allowlists, Classifier, DecisionSettings, GroupKey, Mode, Settings};
use pcd_picker::candidates::{candidates, Available, CandidateKey, Exempt};
use pcd_picker::embedded::{self, EmbeddedIndex, Evidence};
use pcd_picker::request::{build_requests, parse_answer, Cancellation, DecisionModel, ModelError};
use pcd_picker::round::{rounded, select, Outcome};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The `pick` command's arguments.
#[derive(Debug, clap::Args)]
pub struct PickArgs {
    /// A JSON array shaped like Pi's getAllTools().
    #[arg(long, value_name = "FILE")]
    pub tools: std::path::PathBuf,
    /// The user's prompt.
    #[arg(long, value_name = "TEXT")]
    pub prompt: String,
    /// tools: every external tool is a candidate; mcp: every group is [default: tools.mode of
    /// the settings].
    #[arg(long, value_parser = ["tools", "mcp"])]
    pub mode: Option<String>,
    /// The decision model: embedded (offline), or http (an OpenAI-compatible endpoint named by
    /// CONTEXT_DECISIONS_BASE_URL and CONTEXT_DECISIONS_MODEL, key in CONTEXT_DECISIONS_API_KEY).
    /// The settings' decision.provider does not change it.
    #[arg(long, default_value = "embedded", value_parser = ["embedded", "http"])]
    pub scorer: String,
    /// Pi's agent directory, whose pi-context-decisions/settings.json applies [default:
    /// $PI_CODING_AGENT_DIR, else ~/.pi/agent].
    #[arg(long, value_name = "DIR")]
    pub agent_dir: Option<std::path::PathBuf>,
    /// The project folder, whose .pi/pi-context-decisions.json allowlist applies [default: the
    /// current one].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<std::path::PathBuf>,
    /// The threshold and caps, each overriding the settings.
    #[command(flatten)]
    pub selection: SelectionFlags,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Score with the lexical scorer alone, even where the semantic model is installed.
    #[arg(long)]
    pub lexical: bool,
    /// The semantic model's folder [default: $PCD_MODEL_DIR, else
    /// AGENT_DIR/pi-context-decisions/models/all-minilm-l6-v2, else the repository's
    /// .cache/models/all-minilm-l6-v2 (what `cargo xtask fetch-model` installs)].
    #[arg(long, value_name = "DIR")]
    pub model_dir: Option<std::path::PathBuf>,
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

/// Every public field of a value as a JSON object, by name; the pattern names every field, so
/// a field added to the type fails to compile here until it is added to the list (one word).
macro_rules! fields_json {
    ($value:expr, $type:ident { $($field:ident),* $(,)? }) => {{
        let $type { $($field),* } = $value;
        json!({ $(stringify!($field): $field),* })
    }};
}

/// One candidate's evidence, as `pick --json` shows it: every field of the scorer's
/// [`Evidence`] (a group's is its best document's), and the calibrated score it makes.
fn evidence_json(index: &EmbeddedIndex, evidence: &Evidence) -> Value {
    let mut value = fields_json!(
        evidence,
        Evidence {
            raw,
            coverage,
            strength,
            name_share,
            rank,
            relative,
            best_coverage,
            best_strength,
            gap,
            candidates,
            local_file,
        }
    );
    value["calibrated"] = json!(index.calibrate(evidence));
    value
}

/// Each candidate's evidence for `prompt`, in candidate order.
fn candidate_evidence(index: &EmbeddedIndex, prompt: &str) -> Vec<Value> {
    index
        .candidate_evidence(prompt)
        .iter()
        .map(|e| evidence_json(index, e))
        .collect()
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

/// The settings `pick` applies and where they came from.
struct Applied {
    settings: Settings,
    allowlists: Allowlists,
    classifier: Classifier,
    files: Vec<(&'static str, std::path::PathBuf)>,
    /// The files that are there but could not be read (`global`, `project`).
    unreadable: Vec<&'static str>,
    warnings: Vec<String>,
}

/// Reads the settings, the project allowlist and (when approved) the global `mcp.json` origins
/// as Pi finds them. A file that is absent or unreadable applies nothing (an unreadable one is
/// named in a warning).
fn applied_settings(args: &PickArgs) -> Result<Applied, String> {
    let agent_dir = crate::commands::agent_dir(&args.agent_dir)?;
    let cwd = crate::commands::cwd_or_current(&args.cwd)?;
    let global = context_decisions::load::load_global_settings(&agent_dir, false);
    let project = context_decisions::load::load_project_allowlist(&cwd);
    let mut files = Vec::new();
    if global.read {
        files.push((
            "global",
            pcd_config_reader::store::global_settings_path(&agent_dir),
        ));
    }
    if project.read {
        files.push((
            "project",
            pcd_config_reader::store::project_allowlist_path(&cwd),
        ));
    }
    let mut warnings = global.warnings;
    warnings.extend(project.warnings);
    let mut unreadable = Vec::new();
    if matches!(
        global.value,
        context_decisions::session::SettingsRead::Unreadable
    ) {
        unreadable.push("global");
    }
    if matches!(project.value, pcd_gate::ProjectRead::Unreadable) {
        unreadable.push("project");
    }
    let settings = match global.value {
        context_decisions::session::SettingsRead::Read(s) => s,
        context_decisions::session::SettingsRead::Unreadable => Settings::default(),
    };
    let allowlists = Allowlists {
        global: settings.global_allowlist(),
        project: match project.value {
            pcd_gate::ProjectRead::Read(list) => list,
            _ => Default::default(),
        },
    };
    // The project's own mcp.json is read only for a trusted project, which `pick` cannot know.
    let (origins, origin_warnings) = context_decisions::load::load_mcp_origins(
        settings.tools.read_mcp_config,
        &agent_dir,
        &cwd,
        false,
        pcd_config_reader::PiVersion::NEWEST,
    );
    warnings.extend(origin_warnings);
    let classifier = Classifier::with_mcp_origins(
        origins
            .iter()
            .map(|(name, scope)| (GroupKey::for_mcp_server(name), *scope)),
    );
    Ok(Applied {
        settings,
        allowlists,
        classifier,
        files,
        unreadable,
        warnings,
    })
}

/// Runs `pick` and returns what to print.
pub fn run(args: &PickArgs) -> Result<String, String> {
    let inventory = read_inventory_file(&args.tools).map_err(|e| e.to_string())?;
    let Applied {
        settings,
        allowlists,
        classifier,
        files,
        unreadable,
        mut warnings,
    } = applied_settings(args)?;
    let mut decision = settings.decision.clone();
    let overridden = args.selection.apply(&mut decision);
    let mode = args
        .mode
        .as_deref()
        .and_then(Mode::parse)
        .unwrap_or(settings.tools.mode);
    let set = candidates(
        &inventory.tools,
        &classifier,
        mode,
        &allowlists,
        &Available::default(),
    );
    let cap = match mode {
        Mode::Tools => decision.max_new_tools,
        Mode::Mcp => decision.max_new_groups,
    } as usize;
    // Bounded as the Session bounds a prompt (its end kept, line breaks too: the scorer reads a
    // request's paragraphs one by one).
    let prompt = context_decisions::session::bounded_text(&args.prompt);
    tracing::info!(
        tools = inventory.tools.len(),
        candidates = set.candidates.len(),
        mode = mode.as_str(),
        settings_files = files.len(),
        "pick: candidates formed"
    );
    let too_few = set.candidates.len() < decision.minimum_candidates_for(mode) as usize;
    let mut evidence = Vec::new();
    // With the model: each candidate's cosine, fused evidence and place in the fused ranking.
    let mut semantic_evidence = Vec::new();
    let mut signal = None;
    // The need gate's answer, when the model read the prompt: how likely it needs anything
    // outside the code at all.
    let mut need = None;
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
        let model = if args.lexical {
            Err(pcd_ui_text::LEXICAL_ASKED.to_owned())
        } else {
            context_decisions::semantic::Semantic::load(
                &context_decisions::semantic::model_dirs(
                    args.model_dir.as_deref(),
                    args.agent_dir.as_deref(),
                    None,
                    None,
                ),
                args.agent_dir.as_deref(),
            )
        };
        let (scores, used) = match &model {
            Ok(model) => {
                let vectors = pcd_picker::semantic::candidate_vectors(model, &set.candidates);
                let prompts = context_decisions::semantic::prompt_vectors(model, &prompt);
                need = prompts
                    .as_ref()
                    .and_then(|p| p.first())
                    .and_then(|p| pcd_picker::semantic::need_probability(p));
                let (scores, used, explained) =
                    context_decisions::semantic::scores_and_evidence_with_prompt(
                        &index,
                        Some(model).zip(vectors.as_deref()),
                        &prompt,
                        prompts.as_deref(),
                        mode,
                    );
                semantic_evidence = explained;
                warnings.extend(model.notes().iter().cloned());
                warnings.extend(model.save());
                (scores, used)
            }
            Err(reason) => (
                index.scores(&prompt),
                context_decisions::semantic::ScorerUsed::Lexical(reason.clone()),
            ),
        };
        tracing::info!(signal = used.name(), "pick: scored");
        if let context_decisions::semantic::ScorerUsed::Lexical(reason) = &used {
            tracing::debug!(reason = %reason, "pick: the semantic signal is not used");
            // The lexical scores do not read the gate: its answer would explain nothing.
            need = None;
        }
        signal = Some(used);
        let scores: Vec<Option<f64>> = scores.into_iter().map(Some).collect();
        evidence = candidate_evidence(&index, &prompt);
        select(&scores, decision.threshold, cap)
    };
    for (i, outcome) in outcomes.iter().enumerate() {
        tracing::trace!(candidate = i, score = ?outcome.score(), "pick: outcome");
    }
    let mut available = Vec::new();
    let mut withheld = Vec::new();
    // The best withheld candidate with a score: (score, name, cut by the cap).
    let mut best_withheld: Option<(f64, String, bool)> = None;
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
        if let Some(e) = evidence.get(i).filter(|e| !e.is_null()) {
            row["evidence"] = e.clone();
        }
        if let Some(e) = semantic_evidence.get(i) {
            row["semantic"] = json!({
                "cosine": rounded(e.cosine),
                "fused": rounded(e.fused),
                "rank": e.rank,
            });
        }
        use pcd_ui_text::PickReason;
        let (reason, added) = match outcome {
            Outcome::Added { .. } => (PickReason::Added, true),
            Outcome::CutByCap { .. } => (PickReason::CutByCap, false),
            Outcome::BelowThreshold { .. } => (PickReason::BelowThreshold, false),
            Outcome::Dropped => (PickReason::NoValidScore, false),
        };
        if let (false, Some(score)) = (added, outcome.score()) {
            // Candidates come in inventory order: on a tie the first stays the best.
            if best_withheld
                .as_ref()
                .is_none_or(|(best, ..)| score > *best)
            {
                let cut = matches!(outcome, Outcome::CutByCap { .. });
                best_withheld = Some((score, name.to_owned(), cut));
            }
        }
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
    let best_withheld = best_withheld.map(|(score, name, cut)| {
        json!({
            "name": name,
            "score": rounded(score),
            "why": if cut { "cap" } else { "threshold" },
            "below_threshold_by": if cut { 0.0 } else { rounded(decision.threshold - score) },
        })
    });
    let value = json!({
        "mode": mode.as_str(),
        "scorer": args.scorer,
        "signal": signal.as_ref().map(context_decisions::semantic::ScorerUsed::name),
        "signal_reason": match &signal {
            Some(context_decisions::semantic::ScorerUsed::Lexical(reason)) if !reason.is_empty() => json!(reason),
            _ => Value::Null,
        },
        "need_gate": need.map(rounded),
        "threshold": decision.threshold,
        "cap": cap,
        "minimum_candidates": decision.minimum_candidates_for(mode),
        "settings_files": files
            .iter()
            .map(|(scope, path)| json!({ "scope": scope, "path": path.display().to_string() }))
            .collect::<Vec<_>>(),
        "overridden": overridden,
        "settings_unreadable": unreadable,
        "warnings": warnings,
        "candidates": set.candidates.len(),
        "available": available,
        "withheld": withheld,
        "best_withheld": best_withheld,
        "always_available": exempt,
    });
    if args.json {
        let mut s = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
        s.push('\n');
        return Ok(s);
    }
    let mut text = render(&value);
    if let Some(reason) = value["signal_reason"].as_str() {
        // Why the semantic signal was not used, after the report (`--lexical` needs no word).
        if reason != pcd_ui_text::LEXICAL_ASKED {
            text.push_str(&pcd_ui_text::semantic_note(reason));
        }
    }
    Ok(pcd_ui_text::with_warnings(text, &warnings))
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
    fn list(v: &Value) -> &[Value] {
        v.as_array().map(Vec::as_slice).unwrap_or_default()
    }
    let best = &v["best_withheld"];
    let best_withheld = (!best.is_null()).then(|| {
        let (name, score) = (text(&best["name"]), best["score"].as_f64().unwrap_or(0.0));
        if best["why"] == "cap" {
            pcd_ui_text::PickWithheld::OverCap { name, score }
        } else {
            pcd_ui_text::PickWithheld::BelowThreshold { name, score }
        }
    });
    pcd_ui_text::pick_report(&pcd_ui_text::PickReport {
        mode: text(&v["mode"]),
        scorer: pcd_ui_text::scorer_words(&text(&v["scorer"]), v["signal"].as_str()),
        need: v["need_gate"].as_f64(),
        threshold: v["threshold"].as_f64().unwrap_or_default(),
        cap: v["cap"].as_u64().unwrap_or_default(),
        candidates: v["candidates"].as_u64().unwrap_or_default() as usize,
        available: rows(&v["available"]),
        withheld: rows(&v["withheld"]),
        always_available: list(&v["always_available"])
            .iter()
            .map(|r| (text(&r["name"]), text(&r["reason"])))
            .collect(),
        settings_files: list(&v["settings_files"])
            .iter()
            .map(|f| pcd_ui_text::PickSettingsFile {
                scope: if f["scope"] == "project" {
                    "project"
                } else {
                    "global"
                },
                path: text(&f["path"]),
            })
            .collect(),
        overridden: list(&v["overridden"]).iter().map(text).collect(),
        global_unreadable: list(&v["settings_unreadable"]).contains(&json!("global")),
        project_unreadable: list(&v["settings_unreadable"]).contains(&json!("project")),
        best_withheld,
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
        // One file per call: tests run in parallel.
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "pcd-pick-{}-{}.json",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::write(&path, Value::Array(tools).to_string()).unwrap();
        path
    }

    /// An agent directory and a project folder of their own, with no settings file: one per
    /// call (tests run in parallel, and two of them may share a mode and a prompt length).
    fn folders(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("pcd-pick-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (agent, cwd) = (root.join("agent"), root.join("project"));
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        (agent, cwd)
    }

    fn args(prompt: &str, mode: &str) -> PickArgs {
        let (agent, cwd) = folders(&format!("{mode}-{}", prompt.len()));
        PickArgs {
            tools: inventory_file(),
            prompt: prompt.to_owned(),
            mode: Some(mode.to_owned()),
            scorer: "embedded".to_owned(),
            agent_dir: Some(agent),
            cwd: Some(cwd),
            selection: SelectionFlags::default(),
            json: true,
            // The lexical scorer's evidence and figures; the fused path is checked in
            // tests/tests/defaults_select.rs, with and without the model.
            lexical: true,
            model_dir: None,
        }
    }

    /// Issue 32, item 7: settings that could not be read gave a headline as if they applied.
    #[test]
    fn pick_leads_with_settings_that_could_not_be_read() {
        let mut args = args("weather in Porto", "tools");
        let agent = args.agent_dir.clone().unwrap();
        std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
        std::fs::write(
            agent.join("pi-context-decisions/settings.json"),
            b"{\"tools\": {",
        )
        .unwrap();
        args.json = false;
        let out = run(&args).unwrap();
        assert!(
            out.starts_with("the settings could not be read (see the warning below)"),
            "{out}"
        );
        args.json = true;
        let v: Value = serde_json::from_str(&run(&args).unwrap()).unwrap();
        assert_eq!(v["settings_unreadable"], json!(["global"]));
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
        assert_eq!(v["always_available"][0]["reason"], "built-in");
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

    #[test]
    fn the_users_settings_apply_and_flags_override_them() {
        let mut a = args("Send an email about the invoice payment", "tools");
        a.mode = None;
        let agent = a.agent_dir.clone().unwrap();
        let cwd = a.cwd.clone().unwrap();
        // No file: the built-in defaults, and the text says so.
        let v: Value = serde_json::from_str(&run(&a).unwrap()).unwrap();
        assert_eq!(v["settings_files"], json!([]));
        assert_eq!(
            (v["threshold"].clone(), v["cap"].clone()),
            (json!(0.625), json!(6))
        );
        a.json = false;
        assert!(run(&a)
            .unwrap()
            .contains("no settings file found, so the built-in defaults apply"));
        std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
        std::fs::write(
            agent.join("pi-context-decisions/settings.json"),
            r#"{"tools": {"mode": "tools", "alwaysAllowedTools": ["send_email"]},
                "decision": {"provider": "http", "threshold": 0, "maxNewTools": 2}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(cwd.join(".pi")).unwrap();
        std::fs::write(
            cwd.join(".pi/pi-context-decisions.json"),
            r#"{"alwaysAllowedTools": ["stock_price"], "alwaysAllowed": []}"#,
        )
        .unwrap();
        a.json = true;
        let v: Value = serde_json::from_str(&run(&a).unwrap()).unwrap();
        assert_eq!(
            v["scorer"], "embedded",
            "the settings' provider does not change --scorer"
        );
        assert_eq!(
            (v["threshold"].clone(), v["cap"].clone()),
            (json!(0.0), json!(2))
        );
        assert_eq!(v["settings_files"][0]["scope"], "global");
        assert_eq!(v["settings_files"][1]["scope"], "project");
        assert_eq!(
            v["candidates"], 11,
            "the globally allowlisted tool is no candidate"
        );
        let exempt = v["always_available"].as_array().unwrap();
        assert!(exempt
            .iter()
            .any(|e| e["name"] == "send_email" && e["reason"] == "allowlisted"));
        assert_eq!(v["available"].as_array().unwrap().len(), 2);
        assert_eq!(v["overridden"], json!([]));
        // Flags win over the settings.
        a.selection = SelectionFlags {
            threshold: Some(0.99),
            max_new_tools: Some(1),
            max_new_groups: None,
        };
        let v: Value = serde_json::from_str(&run(&a).unwrap()).unwrap();
        assert_eq!(
            (v["threshold"].clone(), v["cap"].clone()),
            (json!(0.99), json!(1))
        );
        assert_eq!(v["overridden"], json!(["--threshold", "--max-new-tools"]));
        a.json = false;
        let text = run(&a).unwrap();
        assert!(text.contains("settings: global "), "{text}");
        assert!(
            text.contains("; overridden by --threshold, --max-new-tools"),
            "{text}"
        );
        std::fs::remove_dir_all(agent.parent().unwrap()).unwrap();
    }

    #[test]
    fn the_best_withheld_candidate_says_why_and_every_candidate_shows_its_evidence() {
        let mut a = args("Send an email about the invoice payment", "tools");
        a.selection.threshold = Some(0.99);
        let v: Value = serde_json::from_str(&run(&a).unwrap()).unwrap();
        let best = &v["best_withheld"];
        let top = &v["withheld"][0];
        assert_eq!(best["name"], top["name"]);
        assert_eq!(best["why"], "threshold");
        let by = best["below_threshold_by"].as_f64().unwrap();
        assert!(
            (by - (0.99 - top["score"].as_f64().unwrap())).abs() < 0.002,
            "{best}"
        );
        for row in v["withheld"].as_array().unwrap() {
            let e = &row["evidence"];
            for field in ["raw", "coverage", "strength", "calibrated"] {
                assert!(e[field].is_f64(), "{field}: {row}");
            }
            assert!(
                (e["calibrated"].as_f64().unwrap() - row["score"].as_f64().unwrap()).abs() < 0.001
            );
        }
        a.json = false;
        let text = run(&a).unwrap();
        assert!(
            text.contains("is ") && text.contains("below the threshold 0.99"),
            "{text}"
        );
        // Everything clears the threshold: the second best is cut by the cap of one.
        a.selection = SelectionFlags {
            threshold: Some(0.0),
            max_new_tools: Some(1),
            max_new_groups: None,
        };
        a.json = true;
        let v: Value = serde_json::from_str(&run(&a).unwrap()).unwrap();
        assert_eq!(v["best_withheld"]["why"], "cap");
        assert_eq!(v["best_withheld"]["name"], v["withheld"][0]["name"]);
        a.json = false;
        assert!(run(&a)
            .unwrap()
            .contains("but the cap of 1 per round was already filled"));
        // Group mode: each group's evidence, from its best document.
        let mut a = args("Send an email about the invoice payment", "mcp");
        a.selection.max_new_groups = Some(1);
        let mut tools: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&a.tools).unwrap()).unwrap();
        for (i, t) in tools.iter_mut().enumerate().skip(1) {
            t.as_object_mut().unwrap().remove("namespace");
            t["sourceInfo"]["source"] = json!(format!("npm:@acme/tools-{i}@1.0.0"));
            t["sourceInfo"]["path"] = json!(format!("/x/tools-{i}/index.ts"));
        }
        a.tools = a.tools.with_extension("groups.json");
        std::fs::write(&a.tools, Value::Array(tools).to_string()).unwrap();
        let v: Value = serde_json::from_str(&run(&a).unwrap()).unwrap();
        assert_eq!(v["candidates"], 12);
        let best = &v["available"][0];
        assert!(best["evidence"]["raw"].as_f64().unwrap() > 0.0, "{best}");
    }
}
