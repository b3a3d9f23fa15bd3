//! A prompt's decision inside a `Session`, as the addon runs it with the semantic model: the
//! prompt boundary (the candidates, the lexical scores, the semantic job), the vectors (the
//! prompt's embedded, the candidates' from the vector cache, as after a session's warm-up), the
//! fused scores and the round committed. Over the everyday set's inventory (157 tools), a
//! session whose prompts are about the code in front of the model (most of a session's prompts),
//! so what is measured is each prompt's cost, not what earlier rounds made available. Needs the
//! model (`cargo xtask fetch-model`, or `PCD_MODEL_DIR`). And the same `Session` over 10,000 tools
//! (the gate's fixture) scored by the lexical scorer alone, as without the model: what the
//! `Session` itself costs a prompt at that scale.
//!
//! `cargo bench -p context-decisions --bench decision`

#![allow(missing_docs, clippy::print_stderr)]

use context_decisions::semantic::{ModelDir, Semantic};
use context_decisions::session::{
    BoundaryEvent, BoundaryKind, BranchRead, Effect, InventoryRead, Session, SettingsRead,
    StartEvent, StartReason,
};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pcd_gate::ProjectRead;
use pcd_model::{DecisionProvider, Settings, ToolInfo};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Prompts about the code, written the way people type them.
const PROMPTS: [&str; 4] = [
    "rename parse_config to load_config and fix the callers",
    "why does this test fail with a borrow error on line 42",
    "add a --verbose flag to the cli and print the timings",
    "refactor the retry loop into its own function",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn model() -> Option<Semantic> {
    let dir = std::env::var_os("PCD_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".cache/models/all-minilm-l6-v2"));
    let dirs = [ModelDir {
        path: dir,
        role: pcd_ui_text::ModelFolder::Explicit,
    }];
    // No agent folder: the vectors are kept in memory.
    Semantic::load(&dirs, None).ok()
}

fn tools() -> Vec<ToolInfo> {
    let json = std::fs::read_to_string(root().join("eval/everyday/tools.json"))
        .expect("eval/everyday/tools.json");
    pcd_model::parse_inventory(&json)
        .expect("the everyday inventory")
        .tools
}

/// A session over `tools` whose host can answer semantic jobs.
fn session(tools: &[ToolInfo]) -> (Session, Vec<String>) {
    let mut settings = Settings::default();
    settings.tools.enabled = true;
    settings.decision.provider = DecisionProvider::Embedded;
    let (mut session, _) = Session::start(StartEvent {
        reason: StartReason::Startup,
        nonce: "bench".into(),
        settings: SettingsRead::Read(settings),
        project: ProjectRead::Absent,
        mcp_origins: vec![],
        branch: BranchRead::Entries(vec![]),
    });
    session.refresh_inventory(InventoryRead::Tools(tools.to_vec()));
    session.set_semantic(Ok(()));
    let active = tools.iter().map(|t| t.name.clone()).collect();
    (session, active)
}

/// One prompt's decision; returns the time spent embedding the prompt, which `with` says
/// whether to count.
fn decide(
    session: &mut Session,
    active: &mut Vec<String>,
    tools: &[ToolInfo],
    model: &Semantic,
    prompt: &str,
) -> Duration {
    let effects = session.boundary(BoundaryEvent {
        kind: BoundaryKind::Prompt {
            text: Some(prompt.to_owned()),
        },
        inventory: InventoryRead::Tools(tools.to_vec()),
        active: active.clone(),
    });
    let mut embedding = Duration::ZERO;
    let mut done = Vec::new();
    for effect in &effects {
        if let Effect::Embed(job) = effect {
            let texts: Vec<&str> = job.texts.iter().map(String::as_str).collect();
            let (prompt_texts, candidates) = texts.split_at(job.prompts);
            let t = Instant::now();
            let mut vectors = model.prompt_vectors(prompt_texts).expect("prompt vectors");
            embedding += t.elapsed();
            vectors.extend(
                candidates
                    .iter()
                    .map(|text| model.vector(text).expect("a vector")),
            );
            let scores = job.scores(&vectors).expect("fused scores");
            done = session.semantic_decided(job.id, Ok(scores), active);
        }
    }
    for effect in effects.iter().chain(&done) {
        if let Effect::SetActiveTools(names) = effect {
            *active = names.clone();
        }
    }
    black_box(done);
    embedding
}

/// A prompt's decision in a session over `tools` without the model: the lexical scores decide,
/// inline.
fn decide_lexically(
    session: &mut Session,
    active: &mut Vec<String>,
    tools: &[ToolInfo],
    prompt: &str,
) {
    let effects = session.boundary(BoundaryEvent {
        kind: BoundaryKind::Prompt {
            text: Some(prompt.to_owned()),
        },
        inventory: InventoryRead::Tools(tools.to_vec()),
        active: active.clone(),
    });
    for effect in &effects {
        if let Effect::SetActiveTools(names) = effect {
            *active = names.clone();
        }
    }
    black_box(effects);
}

fn decision(c: &mut Criterion) {
    let fixture = pcd_gate::fixture::tools();
    let (mut s, mut active) = session(&fixture);
    s.set_semantic(Err("no model".into()));
    for prompt in PROMPTS {
        decide_lexically(&mut s, &mut active, &fixture, prompt);
    }
    let mut next = 0;
    c.bench_function(
        "a prompt's decision in a session, 10,000 tools, lexical",
        |b| {
            b.iter(|| {
                next += 1;
                decide_lexically(&mut s, &mut active, &fixture, PROMPTS[next % PROMPTS.len()])
            })
        },
    );
    let Some(model) = model() else {
        eprintln!("no model installed: run `cargo xtask fetch-model`");
        return;
    };
    let tools = tools();
    let (mut s, mut active) = session(&tools);
    // The first prompt (recorded as the task's) and the candidates' vectors into the cache.
    for prompt in PROMPTS {
        decide(&mut s, &mut active, &tools, &model, prompt);
    }
    let mut next = 0;
    c.bench_function(
        "a prompt's decision in a session, 157 tools, with the model",
        |b| {
            b.iter(|| {
                next += 1;
                decide(
                    &mut s,
                    &mut active,
                    &tools,
                    &model,
                    PROMPTS[next % PROMPTS.len()],
                )
            })
        },
    );
    c.bench_function(
        "a prompt's decision in a session, 157 tools, besides the prompt's embedding",
        |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    next += 1;
                    let t = Instant::now();
                    let embedding = decide(
                        &mut s,
                        &mut active,
                        &tools,
                        &model,
                        PROMPTS[next % PROMPTS.len()],
                    );
                    total += t.elapsed() - embedding;
                }
                total
            })
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = decision
}
criterion_main!(benches);
