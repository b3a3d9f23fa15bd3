//! What the program says about the semantic signal: which scorer decided, and why the model is
//! not used when it is not. A model folder is named by its role ([`ModelFolder`]), never by its
//! path; no model file's contents and no embedded text is ever shown.

use crate::display::display_safe;

/// Built without the `semantic` feature.
pub const SEMANTIC_NOT_BUILT: &str =
    "built without the semantic signal (cargo feature `semantic`); scoring lexically";

/// `--lexical` was given.
pub const LEXICAL_ASKED: &str = "--lexical";

/// The prompt could not be embedded, so the round was scored lexically.
pub const SEMANTIC_PROMPT_FAILED: &str =
    "the prompt could not be embedded; this round was scored lexically";

/// Where a model folder was looked for, named by its role: what the program says never holds a
/// path of the machine (a home folder, a user name), only where the folder is meant to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFolder {
    /// `--model-dir`.
    Explicit,
    /// `PCD_MODEL_DIR`.
    Environment,
    /// The agent folder's `pi-context-decisions/models/all-minilm-l6-v2`.
    AgentDir,
    /// The model's npm package, found by the extension.
    Package,
    /// The checkout's `.cache/models/all-minilm-l6-v2`, beside a program built in `target/`.
    Checkout,
}

impl ModelFolder {
    /// The folder as the program names it.
    pub fn describe(self) -> &'static str {
        match self {
            ModelFolder::Explicit => "the folder named by --model-dir",
            ModelFolder::Environment => "the folder named by PCD_MODEL_DIR",
            ModelFolder::AgentDir => {
                "the agent folder's pi-context-decisions/models/all-minilm-l6-v2"
            }
            ModelFolder::Package => "the npm package pi-context-decisions-model-all-minilm-l6-v2",
            ModelFolder::Checkout => "the checkout's .cache/models/all-minilm-l6-v2",
        }
    }
}

/// No model folder where `folder` says.
pub fn semantic_model_missing(folder: ModelFolder) -> String {
    format!(
        "no semantic model in {} (`pi install npm:pi-context-decisions` brings it for Pi; `cargo xtask fetch-model` installs it in a checkout); scoring lexically",
        folder.describe()
    )
}

/// The model in `folder` could not be used, for `reason` (an `EmbedError`'s sentence, which names
/// the file and what was wrong).
pub fn semantic_model_unusable(folder: ModelFolder, reason: &str) -> String {
    format!(
        "the semantic model in {} is not used: {}; scoring lexically",
        folder.describe(),
        display_safe(reason)
    )
}

/// The model in `folder` was skipped for `reason` (an `EmbedError`'s sentence) and a later
/// folder's model is used: said, so a damaged install is not hidden by a working one.
pub fn semantic_model_skipped(folder: ModelFolder, reason: &str) -> String {
    format!(
        "the semantic model in {} was skipped: {}; a later folder's model is used",
        folder.describe(),
        display_safe(reason)
    )
}

/// The vector cache on disk was not read or not used for `problem`; vectors are kept in memory
/// for this run (or recomputed).
pub fn vector_cache_not_used(problem: pcd_model::VectorCacheProblem) -> String {
    format!(
        "the vector cache on disk is not used: {problem}; vectors are computed and kept in memory \
         for this run"
    )
}

/// The vector cache could not be saved for `problem` (said once a run); its vectors are computed
/// again next time.
pub fn vector_cache_not_saved(problem: pcd_model::VectorCacheProblem) -> String {
    format!(
        "the vector cache was not saved: {problem}; its vectors will be computed again next run"
    )
}

/// How long a round inside Pi waits for its vectors before it is scored lexically.
pub const SEMANTIC_WAIT_MS: u64 = 250;

/// The vectors of a round were not ready within [`SEMANTIC_WAIT_MS`].
pub fn semantic_not_ready(waited_ms: u64) -> String {
    format!("the vectors were not ready within {waited_ms} ms; this round was scored lexically")
}

/// The model is still loading when a round needs it.
pub const SEMANTIC_LOADING: &str =
    "the semantic model was still loading; this round was scored lexically";

/// The warning said once per process inside Pi when the model cannot be used: `reason` is one
/// of [`semantic_model_unusable`]'s or [`semantic_model_missing`]'s sentences.
pub fn semantic_off_warning(reason: &str) -> String {
    format!(
        "pi-context-decisions: the semantic signal is off, decisions use the lexical scorer alone: {}",
        display_safe(reason)
    )
}

/// The line `/decisions` shows about which scorer decided the latest embedded round: the
/// semantic signal fused with the lexical scorer (with `detail` the folder its model was loaded
/// from, [`ModelFolder::describe`]), or the lexical scorer alone and why (`detail`).
pub fn last_scorer_text(fused: bool, detail: &str) -> String {
    match (fused, detail.is_empty()) {
        (true, true) => "Scored by: the built-in scorer with the semantic model.".to_owned(),
        (true, false) => format!(
            "Scored by: the built-in scorer with the semantic model, from {}.",
            display_safe(detail)
        ),
        (false, true) => "Scored by: the built-in scorer, lexical only.".to_owned(),
        (false, false) => format!(
            "Scored by: the built-in scorer, lexical only: {}.",
            display_safe(detail)
        ),
    }
}

/// `pick`'s last line when the semantic signal was not used: why.
pub fn semantic_note(reason: &str) -> String {
    format!("semantic signal: not used: {}\n", display_safe(reason))
}

/// Who scored, in the words `pick` prints: `scorer` is the decision provider's code (`embedded`,
/// `http`) and `signal` the semantic signal's (`semantic+lexical`, `lexical`), when there is one.
/// The built-in scorer is never called "embedded" here, which reads like embeddings.
pub fn scorer_words(scorer: &str, signal: Option<&str>) -> String {
    match (scorer, signal) {
        ("embedded", Some("semantic+lexical")) => {
            "the built-in scorer with the semantic model".to_owned()
        }
        ("embedded", _) => "the built-in scorer, lexical only".to_owned(),
        ("http", _) => "the HTTP decision model".to_owned(),
        (other, _) => display_safe(other),
    }
}

/// The line `pick` and `eval` print about the scorer: `scorer: NAME` and, when it is the lexical
/// scorer for a reason, the reason.
pub fn scorer_line(name: &str, reason: &str) -> String {
    if reason.is_empty() {
        format!("scorer: {name}")
    } else {
        format!("scorer: {name} ({reason})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_named_by_role_never_by_path_and_the_way_back_is_named() {
        for folder in [
            ModelFolder::Explicit,
            ModelFolder::Environment,
            ModelFolder::AgentDir,
            ModelFolder::Package,
            ModelFolder::Checkout,
        ] {
            let line = semantic_model_missing(folder);
            assert!(line.contains(folder.describe()), "{line}");
            // Relative names only: no absolute path of the machine.
            assert!(!line.contains(" /") && !line.contains("~/"), "{line}");
            assert!(line.contains("cargo xtask fetch-model"));
            let unusable = semantic_model_unusable(folder, "bad\u{1b}[31m");
            assert!(!unusable.contains('\u{1b}'), "{unusable}");
        }
        assert_eq!(scorer_line("lexical", ""), "scorer: lexical");
        assert_eq!(
            scorer_line("lexical", "no model"),
            "scorer: lexical (no model)"
        );
    }
}

/// One row of `eval`'s comparison of the fused scorer with the lexical scorer alone.
#[derive(Debug, Clone, PartialEq)]
pub struct ScorerComparisonRow {
    /// The figure's name.
    pub metric: &'static str,
    /// With the semantic signal.
    pub fused: Option<f64>,
    /// The lexical scorer alone.
    pub lexical: Option<f64>,
}

/// `eval`'s side-by-side table: the same prompts scored with and without the semantic signal.
pub fn scorer_comparison(rows: &[ScorerComparisonRow]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nwith and without the semantic signal (same prompts, same defaults):"
    );
    let _ = writeln!(s, "{:<34}{:>18}{:>10}", "", "semantic+lexical", "lexical");
    let cell = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"));
    for row in rows {
        let _ = writeln!(
            s,
            "{:<34}{:>18}{:>10}",
            row.metric,
            cell(row.fused),
            cell(row.lexical)
        );
    }
    s
}
