//! The semantic signal for the program's hosts (`pick`, `eval`): finding and loading the model,
//! embedding what decision requests carry through the on-disk vector cache, and fusing the
//! cosines with the lexical scores. Without the weights (or without the `semantic` feature) every
//! host scores lexically and says why, once.

use pcd_model::Mode;
use pcd_picker::embedded::{self, EmbeddedIndex};
use pcd_picker::semantic;
use std::path::{Path, PathBuf};

/// Which scorer decided a round, as `pick`, `eval` and rounds show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScorerUsed {
    /// Sentence embeddings fused with the lexical scorer.
    Fused,
    /// The lexical scorer alone, and why.
    Lexical(String),
}

impl ScorerUsed {
    /// The name shown for it: `semantic+lexical` or `lexical`.
    pub fn name(&self) -> &'static str {
        match self {
            ScorerUsed::Fused => "semantic+lexical",
            ScorerUsed::Lexical(_) => "lexical",
        }
    }
}

/// A folder the model is looked for in, and its role (what the program says of it: never the
/// path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelDir {
    /// The folder.
    pub path: PathBuf,
    /// Where it comes from.
    pub role: pcd_ui_text::ModelFolder,
}

/// The folders the model is looked for in, first match wins: `explicit` (`--model-dir`), then
/// `PCD_MODEL_DIR`, then `checkout`'s `.cache/models/all-minilm-l6-v2` (the checkout a host names;
/// the addon takes it as the start event's `checkoutDir`), then
/// `<agent dir>/pi-context-decisions/models/all-minilm-l6-v2`, then `package` (inside Pi, the
/// folder of the model's npm package, which the extension resolves), then the repository's
/// `.cache/models/all-minilm-l6-v2` beside a program built in `target/`.
pub fn model_dirs(
    explicit: Option<&Path>,
    agent_dir: Option<&Path>,
    package: Option<&Path>,
    checkout: Option<&Path>,
) -> Vec<ModelDir> {
    use pcd_ui_text::ModelFolder;
    let folder = pcd_embed::pinned::MODEL_FOLDER;
    let dir = |path: PathBuf, role| ModelDir { path, role };
    if let Some(explicit) = explicit {
        return vec![dir(explicit.to_owned(), ModelFolder::Explicit)];
    }
    let mut dirs = Vec::new();
    if let Some(env) = std::env::var_os("PCD_MODEL_DIR") {
        dirs.push(dir(PathBuf::from(env), ModelFolder::Environment));
    }
    if let Some(checkout) = checkout {
        dirs.push(dir(
            checkout.join(".cache").join("models").join(folder),
            ModelFolder::Checkout,
        ));
    }
    let agent = agent_dir.map(Path::to_owned).or_else(|| {
        crate::mcp_origins::resolve_agent_dir(
            std::env::var_os(crate::mcp_origins::AGENT_DIR_ENV).as_deref(),
            std::env::var_os("HOME").map(PathBuf::from).as_deref(),
        )
        .ok()
    });
    if let Some(agent) = agent {
        dirs.push(dir(
            agent
                .join("pi-context-decisions")
                .join("models")
                .join(folder),
            ModelFolder::AgentDir,
        ));
    }
    if let Some(package) = package {
        dirs.push(dir(package.to_owned(), ModelFolder::Package));
    }
    if let Ok(exe) = std::env::current_exe() {
        // target/<profile>/context-decisions -> the repository root.
        if let Some(root) = exe.parent().and_then(Path::parent).and_then(Path::parent) {
            dirs.push(dir(
                root.join(".cache").join("models").join(folder),
                ModelFolder::Checkout,
            ));
        }
    }
    dirs
}

/// The vector cache's file: `PCD_VECTOR_CACHE`, else
/// `$XDG_CACHE_HOME/pi-context-decisions/vectors.bin` (or `~/.cache/…`). A relative path in
/// either is ignored (it would name a file in whatever folder Pi runs in, such as a checked-out
/// repository's).
pub fn cache_file() -> Option<PathBuf> {
    if let Some(file) = std::env::var_os("PCD_VECTOR_CACHE")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
    {
        return Some(file);
    }
    let root = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(root.join("pi-context-decisions").join("vectors.bin"))
}

#[cfg(feature = "semantic")]
mod real {
    use super::*;
    use pcd_embed::cache::VectorCache;
    use pcd_embed::MiniLm;
    use pcd_picker::semantic::is_unit;
    use std::sync::Mutex;

    /// The bound on the vector cache: 64 MiB, about 42,000 vectors.
    const CACHE_BYTES: u64 = 64 << 20;

    /// The loaded model and its vector cache.
    pub struct Semantic {
        model: MiniLm,
        cache: Option<Mutex<VectorCache>>,
    }

    impl std::fmt::Debug for Semantic {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Semantic").finish_non_exhaustive()
        }
    }

    impl Semantic {
        /// Loads the model from the first of `dirs` that holds one, or says why none could be
        /// used: the first folder that is there but unusable (naming the file and what was
        /// wrong), else the first folder looked for (the most specific: `--model-dir`,
        /// `PCD_MODEL_DIR`, or the agent folder's, where a Pi user installs it).
        pub fn load(dirs: &[ModelDir]) -> Result<Semantic, String> {
            let mut problem = String::from("no model folder to look in");
            let (mut unusable, mut missing) = (false, false);
            for ModelDir { path: dir, role } in dirs {
                if !dir.exists() {
                    if !unusable && !missing {
                        missing = true;
                        problem = pcd_ui_text::semantic_model_missing(*role);
                    }
                    continue;
                }
                match MiniLm::load(dir) {
                    Ok(model) => {
                        let cache = cache_file().map(|file| {
                            Mutex::new(VectorCache::open(
                                &file,
                                model.vectors_key(),
                                pcd_embed::DIMENSION,
                                CACHE_BYTES,
                            ))
                        });
                        return Ok(Semantic { model, cache });
                    }
                    Err(e) if !unusable => {
                        unusable = true;
                        problem = pcd_ui_text::semantic_model_unusable(*role, &e.to_string())
                    }
                    Err(_) => {}
                }
            }
            Err(problem)
        }

        /// The vector of `text`, from the cache or the model. Only unit vectors are cached.
        pub fn vector(&self, text: &str) -> Option<Vec<f32>> {
            if let Some(v) = self.cached(text) {
                return Some(v);
            }
            let v = self.model.embed(text).ok()?;
            if is_unit(&v) {
                if let Some(cache) = &self.cache {
                    if let Ok(mut cache) = cache.lock() {
                        cache.insert(text, &v);
                    }
                }
            }
            Some(v)
        }

        /// The vectors of a prompt's `texts` ([`embedded::prompt_texts`]), read within one
        /// text's bound in all and encoded in one pass ([`MiniLm::embed_prompt`]); never cached:
        /// a user's words are not kept on disk, not even as a vector.
        pub fn prompt_vectors(&self, texts: &[&str]) -> Option<Vec<Vec<f32>>> {
            self.model.embed_prompt(texts).ok()
        }

        /// The vector of `text` when the cache already holds it as a unit vector; never runs the
        /// model. An entry off the unit sphere (a flipped bit, a planted file) is not the
        /// model's: it counts as missing, so the text is embedded again and the entry replaced.
        pub fn cached(&self, text: &str) -> Option<Vec<f32>> {
            self.cache
                .as_ref()?
                .lock()
                .ok()?
                .get(text)
                .filter(|v| is_unit(v))
        }

        /// Writes what was added to the cache (a failure only costs time next run). The file is
        /// written after the cache's lock is released, so a round looking up its vectors meanwhile
        /// is not held up by the disk.
        pub fn save(&self) {
            let Some(cache) = &self.cache else {
                return;
            };
            let pending = match cache.lock() {
                Ok(mut cache) => cache.take_save(),
                Err(_) => None,
            };
            if let Some(Err(e)) = pending.map(pcd_embed::cache::PendingSave::write) {
                tracing::debug!(error = %e.kind(), "the vector cache was not saved");
            }
        }
    }
}

#[cfg(not(feature = "semantic"))]
mod real {
    use super::*;

    /// Built without the `semantic` feature: never loads.
    #[derive(Debug)]
    pub struct Semantic;

    impl Semantic {
        /// Always says the program was built without the semantic signal.
        pub fn load(_dirs: &[ModelDir]) -> Result<Semantic, String> {
            Err(pcd_ui_text::SEMANTIC_NOT_BUILT.to_owned())
        }

        /// Never called: there is no model.
        pub fn vector(&self, _text: &str) -> Option<Vec<f32>> {
            None
        }

        /// Never called: there is no model.
        pub fn prompt_vectors(&self, _texts: &[&str]) -> Option<Vec<Vec<f32>>> {
            None
        }

        /// Never called: there is no cache.
        pub fn cached(&self, _text: &str) -> Option<Vec<f32>> {
            None
        }

        /// Nothing to save.
        pub fn save(&self) {}
    }
}

pub use real::Semantic;

impl semantic::TextEmbedder for Semantic {
    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        self.vector(text)
    }
}

/// Scores `prompt` against the candidates of `mode` (their vectors are
/// [`semantic::candidate_vectors`]'): fused when `semantic` and every vector are there, lexical
/// otherwise, with which scorer decided.
pub fn scores(
    index: &EmbeddedIndex,
    semantic: Option<(&Semantic, &[Vec<f32>])>,
    prompt: &str,
    mode: Mode,
) -> (Vec<f64>, ScorerUsed) {
    let prompts = semantic.and_then(|(model, _)| prompt_vectors(model, prompt));
    scores_with_prompt(index, semantic, prompt, prompts.as_deref(), mode)
}

/// The vectors of what the embedded scorer reads of `prompt` ([`embedded::prompt_texts`]), or
/// `None` when the model fails on it.
pub fn prompt_vectors(model: &Semantic, prompt: &str) -> Option<Vec<Vec<f32>>> {
    model.prompt_vectors(&embedded::prompt_texts(prompt))
}

/// [`scores`] with the prompt's vectors already computed by [`prompt_vectors`] (`None`: the
/// model failed on it), for a host that scores one prompt against several candidate sets (the
/// evaluation's session runs).
pub fn scores_with_prompt(
    index: &EmbeddedIndex,
    semantic: Option<(&Semantic, &[Vec<f32>])>,
    prompt: &str,
    prompts: Option<&[Vec<f32>]>,
    mode: Mode,
) -> (Vec<f64>, ScorerUsed) {
    let lexical = index.scores(prompt);
    let Some((_, vectors)) = semantic else {
        return (lexical, ScorerUsed::Lexical(String::new()));
    };
    let Some(prompts) = prompts else {
        return (
            lexical,
            ScorerUsed::Lexical(pcd_ui_text::SEMANTIC_PROMPT_FAILED.to_owned()),
        );
    };
    (
        semantic::scores_from_vectors(
            &lexical,
            prompts,
            vectors,
            embedded::names_a_file(prompt),
            mode,
        ),
        ScorerUsed::Fused,
    )
}
