//! A labelled set: its files, read within their bounds, and the tune and test halves.

use crate::peer;
use context_decisions::inventory::{read_inventory_file, InventoryFileError};
use pcd_bounded_read::{read_bounded, Follow};
use pcd_model::ToolInfo;
use pcd_ui_text::{QueryProblem, ReadProblem};
use serde_json::Value;
use std::io::BufRead;
use std::path::Path;

/// The largest queries file read.
pub(crate) const MAX_QUERIES_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The longest query line read.
pub(crate) const MAX_QUERY_LINE_BYTES: usize = 64 * 1024;

/// Which queries to evaluate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Split {
    /// The held-out half (the default).
    Test,
    /// The half the scorer was tuned on.
    Tune,
    /// Every query.
    All,
}

/// Why a set could not be evaluated. Files are named; no value from them is echoed. The
/// sentences are ui-text's.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The tools file.
    #[error(transparent)]
    Tools(#[from] InventoryFileError),
    /// A file could not be read.
    #[error("{}", pcd_ui_text::eval_read_error(file, problem))]
    Read {
        /// The file.
        file: String,
        /// The operating system's reason, or the bound exceeded.
        problem: ReadProblem,
    },
    /// A line of a queries file is not a query.
    #[error("{}", pcd_ui_text::query_line_error(file, *line, *problem))]
    BadQuery {
        /// The file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        problem: QueryProblem,
    },
}

/// What kind of prompt an irrelevance line is, when it says (`"kind"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    /// About the code in front of the model: no external tool is needed.
    Coding,
    /// A tool of the right domain exists, but none that does the job.
    NearMiss,
}

/// One labelled prompt.
#[derive(Debug, Clone)]
pub struct Query {
    /// Its id (used for the split).
    pub id: String,
    /// The user's prompt.
    pub prompt: String,
    /// The tools an annotator used (empty for irrelevance prompts): `relevant_tools`, or the
    /// first tool of each need.
    pub relevant: Vec<String>,
    /// What the prompt needs: groups of interchangeable tools, the labelled one first (each
    /// `relevant_tools` name alone when the line has no `needs`).
    pub needs: Vec<Vec<String>>,
    /// Whether the line said its `needs`.
    pub has_needs: bool,
    /// Its `topics`, if the line has them.
    pub topics: Option<Vec<String>>,
    /// Its `kind`, if the line has one.
    pub kind: Option<PromptKind>,
    /// Its `slice`, if the line has one (the everyday set's `"paraphrase"`: prompts that share
    /// no content word with the tools they need).
    pub slice: Option<String>,
    /// Its 1-based line in its file.
    pub line: usize,
}

/// A loaded set.
#[derive(Debug)]
pub struct EvalSet {
    /// The tools, as the picker sees them.
    pub tools: Vec<ToolInfo>,
    /// Each tool's `topic`, when the tools file gives one (the scorer never reads it).
    pub tool_topics: Vec<Option<String>>,
    /// Pi 1.3.0's `tool_search` document text of each tool (it reads schemas; the picker never
    /// does).
    pub peer_documents: Vec<String>,
    /// Pi 1.6.0's `tool_search` documents of each tool (schemas too).
    pub peer_documents_latest: Vec<peer::v1_6::Document>,
    /// `queries.jsonl`.
    pub queries: Vec<Query>,
    /// `irrelevance.jsonl`, if present.
    pub irrelevance: Vec<Query>,
}

/// The text of a set's file, through the workspace's one bounded reader.
pub(crate) fn read_text(path: &Path, max: u64) -> Result<String, EvalError> {
    let file = path.display().to_string();
    let err = |problem: ReadProblem| EvalError::Read {
        file: file.clone(),
        problem,
    };
    let bytes = read_bounded(path, max, Follow::Symlinks).map_err(|p| err(ReadProblem::File(p)))?;
    String::from_utf8(bytes).map_err(|_| err(ReadProblem::NotUtf8))
}

/// A JSON array of strings, or `None` when it is anything else.
pub(crate) fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

pub(crate) fn read_queries(path: &Path) -> Result<Vec<Query>, EvalError> {
    let file = path.display().to_string();
    let text = read_text(path, MAX_QUERIES_FILE_BYTES)?;
    let mut out = Vec::new();
    for (i, line) in text.as_bytes().lines().enumerate() {
        let bad = |problem| EvalError::BadQuery {
            file: file.clone(),
            line: i + 1,
            problem,
        };
        let line = line.map_err(|_| bad(QueryProblem::Unreadable))?;
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_QUERY_LINE_BYTES {
            return Err(bad(QueryProblem::TooLong(MAX_QUERY_LINE_BYTES)));
        }
        let value: Value =
            serde_json::from_str(&line).map_err(|_| bad(QueryProblem::NotAnObject))?;
        let id = value
            .get("id")
            .and_then(Value::as_str)
            .ok_or(bad(QueryProblem::NoId))?;
        let prompt = value
            .get("prompt")
            .and_then(Value::as_str)
            .ok_or(bad(QueryProblem::NoPrompt))?;
        let given_needs = match value.get("needs") {
            None => None,
            Some(v) => Some(
                v.as_array()
                    .and_then(|needs| {
                        needs
                            .iter()
                            .map(|need| strings(need).filter(|tools| !tools.is_empty()))
                            .collect::<Option<Vec<_>>>()
                    })
                    .ok_or(bad(QueryProblem::BadNeeds))?,
            ),
        };
        let listed = match value.get("relevant_tools").and_then(Value::as_array) {
            None if given_needs.is_some() => None,
            None => return Err(bad(QueryProblem::NoRelevantTools)),
            Some(items) => Some(
                items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_owned)
                            .ok_or(bad(QueryProblem::RelevantToolNotString))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let topics = match value.get("topics") {
            None => None,
            Some(v) => Some(strings(v).ok_or(bad(QueryProblem::BadTopics))?),
        };
        let kind = match value.get("kind") {
            None => None,
            Some(v) => Some(match v.as_str() {
                Some("coding") => PromptKind::Coding,
                Some("near-miss") => PromptKind::NearMiss,
                _ => return Err(bad(QueryProblem::BadKind)),
            }),
        };
        let slice = match value.get("slice") {
            None => None,
            Some(v) => Some(v.as_str().ok_or(bad(QueryProblem::BadSlice))?.to_owned()),
        };
        let has_needs = given_needs.is_some();
        let mut needs = given_needs.unwrap_or_default();
        for name in listed.iter().flatten() {
            if !needs.iter().any(|need| need.contains(name)) {
                needs.push(vec![name.clone()]);
            }
        }
        let relevant = listed.unwrap_or_else(|| needs.iter().map(|n| n[0].clone()).collect());
        out.push(Query {
            id: id.to_owned(),
            prompt: prompt.to_owned(),
            relevant,
            needs,
            has_needs,
            topics,
            kind,
            slice,
            line: i + 1,
        });
    }
    Ok(out)
}

/// Refuses a set whose `needs` or `relevant_tools` name a tool its inventory lacks: such a need
/// would otherwise be dropped without a word and the figures would rise. The error names the
/// file and the line, not the name.
pub(crate) fn known_tools_only(
    queries: &[Query],
    tools: &[ToolInfo],
    path: &Path,
) -> Result<(), EvalError> {
    let names: std::collections::HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for q in queries {
        let named = q.needs.iter().flatten().chain(&q.relevant);
        if named.into_iter().any(|n| !names.contains(n.as_str())) {
            return Err(EvalError::BadQuery {
                file: path.display().to_string(),
                line: q.line,
                problem: QueryProblem::UnknownTool,
            });
        }
    }
    Ok(())
}

/// Whether `path` is a symbolic link whose target does not exist.
pub(crate) fn dangling_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
        && std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
}

impl EvalSet {
    /// Loads `DIR/tools.json`, `DIR/queries.jsonl` and `DIR/irrelevance.jsonl` (optional).
    pub fn load(dir: &Path) -> Result<EvalSet, EvalError> {
        let tools_path = dir.join("tools.json");
        let tools = read_inventory_file(&tools_path)?.tools;
        // The peer's documents need the schemas and namespace instructions, which the model
        // crate never keeps; read the raw array once more, only for the peer.
        let raw: Value = serde_json::from_str(&read_text(
            &tools_path,
            context_decisions::inventory::MAX_INVENTORY_FILE_BYTES,
        )?)
        .map_err(|_| EvalError::Read {
            file: tools_path.display().to_string(),
            problem: ReadProblem::NotJson,
        })?;
        let items = raw.as_array().map(Vec::as_slice).unwrap_or_default();
        let peer_documents = items.iter().map(peer::document).collect();
        let peer_documents_latest = items.iter().map(peer::v1_6::document).collect();
        let tool_topics = items
            .iter()
            .map(|t| t.get("topic").and_then(Value::as_str).map(str::to_owned))
            .collect();
        let queries_path = dir.join("queries.jsonl");
        let queries = read_queries(&queries_path)?;
        known_tools_only(&queries, &tools, &queries_path)?;
        // Absent is fine (a set without irrelevance prompts); a link to nothing is a mistake
        // that would silently drop every irrelevance figure.
        let irrelevance_path = dir.join("irrelevance.jsonl");
        let irrelevance = if dangling_symlink(&irrelevance_path) {
            return Err(EvalError::Read {
                file: irrelevance_path.display().to_string(),
                problem: ReadProblem::DanglingSymlink,
            });
        } else if irrelevance_path.exists() {
            let irrelevance = read_queries(&irrelevance_path)?;
            known_tools_only(&irrelevance, &tools, &irrelevance_path)?;
            irrelevance
        } else {
            Vec::new()
        };
        Ok(EvalSet {
            tools,
            tool_topics,
            peer_documents,
            peer_documents_latest,
            queries,
            irrelevance,
        })
    }
}

/// FNV-1a, 64 bits: a stable hash of a query id, the same on every machine and release.
pub(crate) fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Whether a query id belongs to `split`: even hashes tune, odd ones test.
pub fn in_split(id: &str, split: Split) -> bool {
    match split {
        Split::All => true,
        Split::Tune => stable_hash(id) % 2 == 0,
        Split::Test => stable_hash(id) % 2 == 1,
    }
}
