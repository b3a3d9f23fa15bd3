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

/// The folders the model is looked for in, first match wins: `explicit` (`--model-dir`) alone, else
/// `PCD_MODEL_DIR` alone when it is set and not empty (a person who names the model's folder means
/// that one: a folder without the model there means lexical scoring, said as such, never another
/// folder's model), else `checkout`'s `.cache/models/all-minilm-l6-v2` (the checkout a host names:
/// the addon takes it as the start event's `checkoutDir`, the clone a path or git install of the
/// extension was loaded from), then
/// `<agent dir>/pi-context-decisions/models/all-minilm-l6-v2`, then `package` (inside Pi, the
/// folder of the model's npm package, which the extension resolves), then the repository's
/// `.cache/models/all-minilm-l6-v2` beside a program built in `target/`.
pub fn model_dirs(
    explicit: Option<&Path>,
    agent_dir: Option<&Path>,
    package: Option<&Path>,
    checkout: Option<&Path>,
) -> Vec<ModelDir> {
    model_dirs_with(
        explicit,
        std::env::var_os("PCD_MODEL_DIR").as_deref(),
        agent_dir,
        package,
        checkout,
    )
}

/// [`model_dirs`] with `PCD_MODEL_DIR`'s value passed in, so it stays testable.
pub fn model_dirs_with(
    explicit: Option<&Path>,
    env_model_dir: Option<&std::ffi::OsStr>,
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
    if let Some(env) = env_model_dir.filter(|v| !v.is_empty()) {
        return vec![dir(PathBuf::from(env), ModelFolder::Environment)];
    }
    let mut dirs = Vec::new();
    if let Some(checkout) = checkout {
        dirs.push(dir(
            checkout.join(".cache").join("models").join(folder),
            ModelFolder::Checkout,
        ));
    }
    if let Some(agent) = agent_or_env(agent_dir) {
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

/// `agent_dir` (`--agent-dir`, or the folder the extension was given), else Pi's agent folder
/// from the environment, if it resolves ([`crate::mcp_origins::resolve_agent_dir`]: never from a
/// relative `HOME`).
pub fn agent_or_env(agent_dir: Option<&Path>) -> Option<PathBuf> {
    agent_dir.map(Path::to_owned).or_else(|| {
        crate::mcp_origins::resolve_agent_dir(
            std::env::var_os(crate::mcp_origins::AGENT_DIR_ENV).as_deref(),
            std::env::var_os("HOME").map(PathBuf::from).as_deref(),
        )
        .ok()
    })
}

/// The vector cache's file: `PCD_VECTOR_CACHE`, else
/// `$XDG_CACHE_HOME/pi-context-decisions/vectors.bin`, else `$HOME/.cache/…`, following the XDG
/// base directory rules: a relative or empty path in any of them is ignored (it would name a file
/// in whatever folder Pi runs in, such as a checked-out repository's, which could ship a planted
/// cache). `None` (no absolute one): no cache on disk, vectors are kept in memory for the run.
pub fn cache_file() -> Option<PathBuf> {
    cache_file_from(
        std::env::var_os("PCD_VECTOR_CACHE").as_deref(),
        std::env::var_os("XDG_CACHE_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
}

/// [`cache_file`] over the three variables' values, passed in so it stays testable.
pub fn cache_file_from(
    explicit: Option<&std::ffi::OsStr>,
    xdg_cache_home: Option<&std::ffi::OsStr>,
    home: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
    let absolute = |v: Option<&std::ffi::OsStr>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(file) = absolute(explicit) {
        return Some(file);
    }
    let root = absolute(xdg_cache_home).or_else(|| absolute(home).map(|h| h.join(".cache")))?;
    Some(root.join("pi-context-decisions").join("vectors.bin"))
}

/// The per-user secret that authenticates the vector cache's entries:
/// `<agent dir>/pi-context-decisions/vector-cache.key`.
pub fn cache_secret_file(agent_dir: &Path) -> PathBuf {
    agent_dir
        .join("pi-context-decisions")
        .join(pcd_embed::pinned::CACHE_SECRET_FILE)
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

    /// The loaded model and its vector cache (on disk, or in memory for the run).
    pub struct Semantic {
        model: MiniLm,
        cache: Mutex<VectorCache>,
        /// What the person is told once: folders skipped, a cache on disk not used.
        notes: Vec<String>,
        /// The folder the model was loaded from, by its role.
        folder: pcd_ui_text::ModelFolder,
        /// Whether a failed save was already said.
        save_failed: std::sync::atomic::AtomicBool,
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
        /// `PCD_MODEL_DIR`, or the agent folder's, where a Pi user installs it). A folder that
        /// is there but unusable before the one that loads is named in [`Semantic::notes`].
        /// The vector cache is [`cache_file`] with its secret in `agent_dir`
        /// ([`cache_secret_file`]); without either, or when the cache on disk cannot be
        /// trusted, vectors are kept in memory for the run (and the notes say why).
        pub fn load(dirs: &[ModelDir], agent_dir: Option<&Path>) -> Result<Semantic, String> {
            let mut problem = String::from("no model folder to look in");
            let (mut unusable, mut missing) = (false, false);
            let mut notes = Vec::new();
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
                        let (cache, note) = open_cache(&model, agent_dir);
                        notes.extend(note);
                        return Ok(Semantic {
                            model,
                            cache: Mutex::new(cache),
                            notes,
                            folder: *role,
                            save_failed: false.into(),
                        });
                    }
                    Err(e) => {
                        notes.push(pcd_ui_text::semantic_model_skipped(*role, &e.to_string()));
                        if !unusable {
                            unusable = true;
                            problem = pcd_ui_text::semantic_model_unusable(*role, &e.to_string());
                        }
                    }
                }
            }
            Err(problem)
        }

        /// What the person should be told about the load: model folders skipped, and why the
        /// vector cache on disk is not used. Sentences from ui-text.
        pub fn notes(&self) -> &[String] {
            &self.notes
        }

        /// The folder the model was loaded from, by its role (what `/decisions` names).
        pub fn folder(&self) -> pcd_ui_text::ModelFolder {
            self.folder
        }

        /// The vector of `text`, from the cache or the model. Only unit vectors are cached.
        pub fn vector(&self, text: &str) -> Option<Vec<f32>> {
            self.cached(text).or_else(|| self.embedded(text))
        }

        /// The model's vector of `text`, put in the cache when it is a unit vector.
        fn embedded(&self, text: &str) -> Option<Vec<f32>> {
            let v = self.model.embed(text).ok()?;
            if is_unit(&v) {
                if let Ok(mut cache) = self.cache.lock() {
                    cache.insert(text, &v);
                }
            }
            Some(v)
        }

        /// [`Semantic::cached`] for every text of `texts`, looked up together (see
        /// `VectorCache::get_all`: each key hashed once, the entries checked side by side).
        pub fn cached_all(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
            match self.cache.lock() {
                Ok(mut cache) => cache
                    .get_all(texts)
                    .into_iter()
                    .map(|v| v.filter(|v| is_unit(v)))
                    .collect(),
                Err(_) => vec![None; texts.len()],
            }
        }

        /// [`Semantic::vector`] for every text of `texts`: the cached ones looked up together,
        /// the others embedded (and cached) one by one.
        pub fn vectors(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
            let mut vectors = self.cached_all(texts);
            for (v, text) in vectors.iter_mut().zip(texts) {
                if v.is_none() {
                    *v = self.embedded(text);
                }
            }
            vectors
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
            self.cache.lock().ok()?.get(text).filter(|v| is_unit(v))
        }

        /// Writes what was added to the cache (a failure only costs time next run, and is said
        /// once a run: the returned sentence, for the host to show). The file is written after
        /// the cache's lock is released, so a round looking up its vectors meanwhile is not held
        /// up by the disk.
        pub fn save(&self) -> Option<String> {
            let pending = match self.cache.lock() {
                Ok(mut cache) => cache.take_save(),
                Err(_) => None,
            };
            let problem = pending?.write().err()?;
            tracing::debug!(%problem, "the vector cache was not saved");
            let first = !self
                .save_failed
                .swap(true, std::sync::atomic::Ordering::Relaxed);
            first.then(|| pcd_ui_text::vector_cache_not_saved(problem))
        }
    }

    /// The vector cache for `model`: on disk at [`cache_file`] with the secret in `agent_dir`,
    /// else in memory, with the sentence saying why when the disk is not used.
    fn open_cache(model: &MiniLm, agent_dir: Option<&Path>) -> (VectorCache, Option<String>) {
        let in_memory = || VectorCache::in_memory(model.vectors_key(), pcd_embed::DIMENSION);
        let place = cache_file().zip(agent_dir.map(Path::to_owned).or_else(|| agent_or_env(None)));
        let Some((file, agent)) = place else {
            let note = pcd_ui_text::vector_cache_not_used(pcd_model::VectorCacheProblem::NoPlace);
            return (in_memory(), Some(note));
        };
        let secret = match pcd_embed::cache::CacheSecret::load_or_create(&cache_secret_file(&agent))
        {
            Ok(secret) => secret,
            Err(problem) => {
                return (
                    in_memory(),
                    Some(pcd_ui_text::vector_cache_not_used(problem)),
                );
            }
        };
        let (cache, problem) = VectorCache::open(
            &file,
            &secret,
            model.vectors_key(),
            pcd_embed::DIMENSION,
            CACHE_BYTES,
        );
        (cache, problem.map(pcd_ui_text::vector_cache_not_used))
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
        pub fn load(_dirs: &[ModelDir], _agent_dir: Option<&Path>) -> Result<Semantic, String> {
            Err(pcd_ui_text::SEMANTIC_NOT_BUILT.to_owned())
        }

        /// Never called: there is no model.
        pub fn folder(&self) -> pcd_ui_text::ModelFolder {
            pcd_ui_text::ModelFolder::Explicit
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

        /// Never called: there is no cache.
        pub fn cached_all(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
            vec![None; texts.len()]
        }

        /// Never called: there is no model.
        pub fn vectors(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
            vec![None; texts.len()]
        }

        /// Nothing to save.
        pub fn save(&self) -> Option<String> {
            None
        }

        /// Nothing to say.
        pub fn notes(&self) -> &[String] {
            &[]
        }
    }
}

pub use real::Semantic;

impl semantic::TextEmbedder for Semantic {
    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        self.vector(text)
    }

    fn embed_all(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        self.vectors(texts)
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
    let texts = embedded::prompt_texts(prompt);
    model.prompt_vectors(&texts.iter().map(AsRef::as_ref).collect::<Vec<&str>>())
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
    let (scores, used, ()) = scored(index, semantic, prompt, prompts, |l, p, v, file| {
        (semantic::scores_from_vectors(l, p, v, file, mode), ())
    });
    (scores, used)
}

/// [`scores_with_prompt`], with each candidate's semantic evidence (in candidate order) when the
/// scores are fused, and none when they are lexical: what `pick --json` shows, read from the
/// same vectors as the scores.
pub fn scores_and_evidence_with_prompt(
    index: &EmbeddedIndex,
    semantic: Option<(&Semantic, &[Vec<f32>])>,
    prompt: &str,
    prompts: Option<&[Vec<f32>]>,
    mode: Mode,
) -> (Vec<f64>, ScorerUsed, Vec<semantic::SemanticEvidence>) {
    scored(index, semantic, prompt, prompts, |l, p, v, file| {
        semantic::scores_and_evidence(l, p, v, file, mode)
    })
}

/// The lexical scores of `prompt`, fused by `fuse` (lexical scores, the prompt's vectors, the
/// candidates' vectors, whether the prompt names a file) when the model and the prompt's vectors
/// are there; else the lexical scores, with why, and `E`'s default.
fn scored<E: Default>(
    index: &EmbeddedIndex,
    semantic: Option<(&Semantic, &[Vec<f32>])>,
    prompt: &str,
    prompts: Option<&[Vec<f32>]>,
    fuse: impl FnOnce(&[f64], &[Vec<f32>], &[Vec<f32>], bool) -> (Vec<f64>, E),
) -> (Vec<f64>, ScorerUsed, E) {
    let lexical = index.scores(prompt);
    let Some((_, vectors)) = semantic else {
        return (lexical, ScorerUsed::Lexical(String::new()), E::default());
    };
    let Some(prompts) = prompts else {
        return (
            lexical,
            ScorerUsed::Lexical(pcd_ui_text::SEMANTIC_PROMPT_FAILED.to_owned()),
            E::default(),
        );
    };
    let (scores, extra) = fuse(&lexical, prompts, vectors, embedded::names_a_file(prompt));
    (scores, ScorerUsed::Fused, extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    /// Issue 32, item 3: an empty or relative `HOME` or `XDG_CACHE_HOME` put the cache in the
    /// folder Pi runs in (a checked-out repository could ship a planted one). The XDG rules:
    /// a relative `XDG_CACHE_HOME` is ignored, and without an absolute one or an absolute `HOME`
    /// there is no cache on disk.
    #[test]
    fn the_cache_is_never_in_a_relative_folder() {
        let at = |explicit: Option<&str>, xdg: Option<&str>, home: Option<&str>| {
            cache_file_from(
                explicit.map(OsStr::new),
                xdg.map(OsStr::new),
                home.map(OsStr::new),
            )
        };
        let file = |p: &str| Some(PathBuf::from(p));
        assert_eq!(
            at(None, Some("/x/cache"), Some("/home/u")),
            file("/x/cache/pi-context-decisions/vectors.bin")
        );
        for xdg in [None, Some(""), Some("cache"), Some("./.cache")] {
            assert_eq!(
                at(None, xdg, Some("/home/u")),
                file("/home/u/.cache/pi-context-decisions/vectors.bin")
            );
            for home in [None, Some(""), Some("."), Some("repo")] {
                assert_eq!(at(None, xdg, home), None, "{xdg:?} {home:?}");
                assert_eq!(at(Some("vectors.bin"), xdg, home), None);
            }
        }
        assert_eq!(at(Some("/v.bin"), None, None), file("/v.bin"));
    }

    /// Issue 34, item 1: a folder named by `PCD_MODEL_DIR` is the only one looked in (a person
    /// who names the model's folder means that one), as `--model-dir` is; empty, it is not set,
    /// and the checkout the host names comes first.
    #[test]
    fn the_model_folder_named_by_the_environment_is_the_only_one() {
        use pcd_ui_text::ModelFolder;
        let checkout = Path::new("/clone");
        let package = Path::new("/npm/model");
        let dirs = |env: Option<&str>| {
            model_dirs_with(
                None,
                env.map(OsStr::new),
                Some(Path::new("/agent")),
                Some(package),
                Some(checkout),
            )
        };
        let named = dirs(Some("/models/here"));
        assert_eq!(
            named,
            vec![ModelDir {
                path: PathBuf::from("/models/here"),
                role: ModelFolder::Environment
            }]
        );
        for env in [None, Some("")] {
            let found = dirs(env);
            let roles: Vec<_> = found.iter().map(|d| d.role).collect();
            assert_eq!(
                &roles[..3],
                [
                    ModelFolder::Checkout,
                    ModelFolder::AgentDir,
                    ModelFolder::Package
                ],
                "{env:?}"
            );
            assert_eq!(
                found[0].path,
                checkout
                    .join(".cache/models")
                    .join(pcd_embed::pinned::MODEL_FOLDER)
            );
            assert_eq!(found[2].path, package);
        }
        let explicit = model_dirs_with(
            Some(Path::new("/given")),
            Some(OsStr::new("/models/here")),
            None,
            Some(package),
            Some(checkout),
        );
        assert_eq!(explicit.len(), 1);
        assert_eq!(explicit[0].role, ModelFolder::Explicit);
    }

    /// Issue 32, item 7: a damaged first model folder was skipped without a word when a later
    /// one loaded. It is named with the reason. Needs the model (`cargo xtask fetch-model`).
    #[cfg(feature = "semantic")]
    #[test]
    fn a_damaged_model_folder_skipped_for_a_later_one_is_named() {
        let good = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../.cache/models")
            .join(pcd_embed::pinned::MODEL_FOLDER);
        if !good.exists() {
            return;
        }
        let damaged = tempfile::tempdir().unwrap();
        let first = &pcd_embed::pinned::FILES[0];
        std::fs::write(damaged.path().join(first.name), b"truncated").unwrap();
        let dirs = [
            ModelDir {
                path: damaged.path().to_owned(),
                role: pcd_ui_text::ModelFolder::AgentDir,
            },
            ModelDir {
                path: good,
                role: pcd_ui_text::ModelFolder::Checkout,
            },
        ];
        let agent = tempfile::tempdir().unwrap();
        let model = Semantic::load(&dirs, Some(agent.path())).expect("the later folder loads");
        assert_eq!(model.folder(), pcd_ui_text::ModelFolder::Checkout);
        let notes = model.notes().join("\n");
        assert!(
            notes.contains("the agent folder's")
                && notes.contains("skipped")
                && notes.contains(first.name),
            "{notes}"
        );
    }
}
