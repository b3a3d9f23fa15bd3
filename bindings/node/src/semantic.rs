//! The semantic signal inside Pi: the sentence-embedding model, loaded once per process on a
//! background thread (never on Node's event loop, never blocking a session's start), and the
//! semantic jobs the `Session` hands out, answered on libuv's thread pool within a bound.
//!
//! The model is looked for where `context_decisions::semantic::model_dirs` says (`PCD_MODEL_DIR`
//! alone when set, else the checkout the extension was loaded from, then the agent folder's
//! `pi-context-decisions/models/all-minilm-l6-v2`, then the model's npm package the extension
//! found, then beside a build).
//! Vectors come from the on-disk vector cache or are embedded on one background thread at a time;
//! a job waits for its vectors up to [`wait_bound`] and is otherwise scored lexically.

use context_decisions::semantic::{model_dirs, ModelDir, Semantic};
use context_decisions::session::SemanticJob;
use napi::bindgen_prelude::*;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Where the process's model stands.
#[derive(Clone)]
pub(crate) enum ModelState {
    /// Loading on its background thread.
    Loading,
    /// Loaded and verified.
    Ready(Arc<Semantic>),
    /// Not usable: why, and whether a model folder was there at all (only a folder that is
    /// there and unusable is warned about; a missing one is the normal lexical install).
    Off { reason: String, folder_found: bool },
}

struct Model {
    /// The state, how long loading took, and the texts to embed once it is loaded.
    state: Mutex<(ModelState, Option<Duration>, Vec<String>)>,
    changed: Condvar,
}

static MODEL: OnceLock<Model> = OnceLock::new();
/// One thread embeds at a time (the model is CPU-bound; a second one would only slow both).
static EMBEDDING: Mutex<()> = Mutex::new(());
/// Background embeddings running or waiting (for tests and benches: `semanticState`).
static WARMING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// What the person is to be told about the model and its vector cache (a folder skipped, a
/// cache on disk not used, a save that failed: ui-text's sentences), until a session shows it.
static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Takes the notes no session has shown yet.
pub(crate) fn take_notes() -> Vec<String> {
    NOTES
        .lock()
        .map(|mut n| std::mem::take(&mut *n))
        .unwrap_or_default()
}

fn note(sentences: impl IntoIterator<Item = String>) {
    if let Ok(mut notes) = NOTES.lock() {
        notes.extend(sentences);
    }
}

/// The bound a round waits for its vectors: 250 ms, or `PCD_SEMANTIC_WAIT_MS` (0 to 60000) when
/// set, for slow machines and tests.
pub(crate) fn wait_bound() -> Duration {
    let ms = std::env::var("PCD_SEMANTIC_WAIT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms <= 60_000)
        .unwrap_or(context_decisions::binding::SEMANTIC_WAIT_MS);
    Duration::from_millis(ms)
}

/// Starts loading the model on a background thread, once per process; later calls do nothing.
/// `package` is the folder of the model's npm package, when the extension found one, and
/// `checkout` the checkout the extension was loaded from (a path or git install of a clone).
pub(crate) fn start_loading(agent_dir: &Path, package: Option<&Path>, checkout: Option<&Path>) {
    let dirs = model_dirs(None, Some(agent_dir), package, checkout);
    let agent_dir = agent_dir.to_owned();
    MODEL.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("pcd-model-load".into())
            .spawn(move || load(dirs, &agent_dir));
        let state = match spawned {
            Ok(_) => ModelState::Loading,
            Err(_) => ModelState::Off {
                reason: context_decisions::binding::SEMANTIC_LOADING.to_owned(),
                folder_found: false,
            },
        };
        Model {
            state: Mutex::new((state, None, Vec::new())),
            changed: Condvar::new(),
        }
    });
}

fn load(dirs: Vec<ModelDir>, agent_dir: &Path) {
    let started = Instant::now();
    let folder_found = dirs.iter().any(|d| d.path.exists());
    let state = match Semantic::load(&dirs, Some(agent_dir)) {
        Ok(model) => {
            note(model.notes().iter().cloned());
            ModelState::Ready(Arc::new(model))
        }
        Err(reason) => ModelState::Off {
            reason,
            folder_found,
        },
    };
    // `start_loading` set MODEL before this thread could run far; wait for it if not.
    let model = loop {
        if let Some(m) = MODEL.get() {
            break m;
        }
        std::thread::yield_now();
    };
    let waiting = match model.state.lock() {
        Ok(mut guard) => {
            let waiting = std::mem::take(&mut guard.2);
            *guard = (state.clone(), Some(started.elapsed()), Vec::new());
            waiting
        }
        Err(_) => Vec::new(),
    };
    model.changed.notify_all();
    // The warm-ups asked for while it loaded.
    if let ModelState::Ready(model) = state {
        embed_missing(model, waiting);
    }
}

/// The model's state now (`None` before any session started loading it).
pub(crate) fn state() -> Option<ModelState> {
    Some(MODEL.get()?.state.lock().ok()?.0.clone())
}

/// The model's state once it is no longer loading, waiting at most until `deadline`.
fn settled(deadline: Instant) -> Option<ModelState> {
    let model = MODEL.get()?;
    let mut guard = model.state.lock().ok()?;
    while matches!(guard.0, ModelState::Loading) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        guard = model.changed.wait_timeout(guard, left).ok()?.0;
    }
    Some(guard.0.clone())
}

/// `semanticState()`: the model's state as JSON (`{"state": "loading" | "ready" | "off",
/// "reason"?, "loadMs"?, "warming": n}`), for tests and benches.
pub(crate) fn state_json() -> String {
    let (state, took) = MODEL
        .get()
        .and_then(|m| m.state.lock().ok().map(|g| (g.0.clone(), g.1)))
        .unwrap_or((
            ModelState::Off {
                reason: String::new(),
                folder_found: false,
            },
            None,
        ));
    let mut out = serde_json::json!({
        "warming": WARMING.load(std::sync::atomic::Ordering::SeqCst),
    });
    match state {
        ModelState::Loading => out["state"] = "loading".into(),
        ModelState::Ready(model) => {
            out["state"] = "ready".into();
            out["folder"] = model.folder().describe().into();
        }
        ModelState::Off { reason, .. } => {
            out["state"] = "off".into();
            out["reason"] = reason.into();
        }
    }
    if let Some(took) = took {
        out["loadMs"] = (took.as_secs_f64() * 1000.0).into();
    }
    out.to_string()
}

/// Embeds `texts` that the cache lacks on a background thread (one at a time across the
/// process), sending each vector as it is ready, except the last one, which is sent once the cache
/// is saved (a round never ends before what it embedded is on disk). Without a sender it only
/// fills the cache (the warm-up at a session's start). The texts numbered below `prompts` are a
/// prompt's: embedded first, together ([`Semantic::prompt_vectors`]), never cached (a user's
/// words are not kept on disk, not even as a vector).
fn embed_in_background(
    model: Arc<Semantic>,
    texts: Vec<(usize, String)>,
    prompts: usize,
    sender: Option<std::sync::mpsc::Sender<(usize, Option<Vec<f32>>)>>,
) {
    if texts.is_empty() {
        return;
    }
    WARMING.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let spawned = std::thread::Builder::new()
        .name("pcd-embed".into())
        .spawn(move || {
            let _one = EMBEDDING.lock();
            let send = |i: usize, v: Option<Vec<f32>>| {
                if let Some(tx) = &sender {
                    // The job may have stopped waiting: the vector is in the cache anyway.
                    let _ = tx.send((i, v));
                }
            };
            // The prompt's texts first, together (one pass within one text's bound).
            let (prompt, candidates): (Vec<_>, Vec<_>) =
                texts.into_iter().partition(|(i, _)| *i < prompts);
            if !prompt.is_empty() {
                let read: Vec<&str> = prompt.iter().map(|(_, text)| text.as_str()).collect();
                let mut vectors = model.prompt_vectors(&read).map(Vec::into_iter);
                for (i, _) in &prompt {
                    send(*i, vectors.as_mut().and_then(Iterator::next));
                }
            }
            // The last vector waits for the save: a round that used what this thread embedded
            // ends only once it is on disk (Pi may exit right after the round).
            let mut last = None;
            for (i, text) in candidates {
                // From the cache, or embedded and cached.
                let v = model.vector(&text);
                if let Some((i, v)) = last.replace((i, v)) {
                    send(i, v);
                }
            }
            // Writes only when something was added; a failure is told once.
            note(model.save());
            if let Some((i, v)) = last {
                send(i, v);
            }
            WARMING.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        });
    if spawned.is_err() {
        WARMING.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Fills the vector cache with `texts` in the background: now when the model is ready, as soon
/// as it is when it is still loading.
pub(crate) fn warm(texts: Vec<String>) {
    if texts.is_empty() {
        return;
    }
    let Some(model) = MODEL.get() else {
        return;
    };
    let ready = {
        let Ok(mut guard) = model.state.lock() else {
            return;
        };
        match &guard.0 {
            ModelState::Ready(model) => model.clone(),
            ModelState::Loading => {
                guard.2.extend(texts);
                return;
            }
            ModelState::Off { .. } => return,
        }
    };
    embed_missing(ready, texts);
}

/// Embeds what the cache lacks of `texts`; even the cache look-ups run on the background thread.
fn embed_missing(model: Arc<Semantic>, texts: Vec<String>) {
    embed_in_background(model, texts.into_iter().enumerate().collect(), 0, None);
}

/// Fused scores for `job`, or why the round is lexical: waits for the model and the vectors up
/// to `bound` from `started`. Runs on libuv's thread pool, never on Node's event loop.
pub(crate) fn answer(
    job: &SemanticJob,
    started: Instant,
    bound: Duration,
) -> std::result::Result<Vec<f64>, String> {
    let deadline = started + bound;
    let model = match settled(deadline) {
        Some(ModelState::Ready(model)) => model,
        Some(ModelState::Off { reason, .. }) => return Err(reason),
        Some(ModelState::Loading) | None => {
            return Err(context_decisions::binding::SEMANTIC_LOADING.to_owned())
        }
    };
    // A prompt's texts are never in the cache (they are not kept); the candidates' may be, and
    // their entries are checked together first.
    let candidates: Vec<&str> = job
        .texts
        .iter()
        .skip(job.prompts)
        .map(String::as_str)
        .collect();
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; job.prompts];
    vectors.extend(model.cached_all(&candidates));
    let missing: Vec<(usize, String)> = vectors
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_none())
        .map(|(i, _)| (i, job.texts[i].clone()))
        .collect();
    let mut left = missing.len();
    if left > 0 {
        let (tx, rx) = std::sync::mpsc::channel();
        embed_in_background(model, missing, job.prompts, Some(tx));
        while left > 0 {
            let wait = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait) {
                Ok((i, Some(v))) => {
                    vectors[i] = Some(v);
                    left -= 1;
                }
                Ok((_, None)) => {
                    return Err(context_decisions::binding::SEMANTIC_PROMPT_FAILED.to_owned())
                }
                Err(_) => {
                    let waited = bound.as_millis() as u64;
                    return Err(context_decisions::binding::semantic_not_ready(waited));
                }
            }
        }
    }
    let vectors: Vec<Vec<f32>> = vectors.into_iter().flatten().collect();
    job.scores(&vectors)
        .ok_or_else(|| context_decisions::binding::SEMANTIC_PROMPT_FAILED.to_owned())
}

/// A semantic job answered on libuv's thread pool: JSON `{"scores": […]}` or `{"lexical": why}`.
pub struct SemanticTask {
    pub(crate) job: Option<SemanticJob>,
    pub(crate) started: Instant,
    pub(crate) bound: Duration,
}

impl Task for SemanticTask {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> Result<String> {
        let out = match &self.job {
            None => Err(String::new()),
            Some(job) => answer(job, self.started, self.bound),
        };
        Ok(match out {
            Ok(scores) => serde_json::json!({ "scores": scores }),
            Err(why) => serde_json::json!({ "lexical": why }),
        }
        .to_string())
    }

    fn resolve(&mut self, _env: Env, output: String) -> Result<String> {
        Ok(output)
    }
}
