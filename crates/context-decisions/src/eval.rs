//! The `eval` command: the picker's ranking and selection quality on a labelled set, next to
//! Pi's own `tool_search` ranker (BM25) run on the same data in the same harness.
//!
//! A set is a folder shaped like `../shared/eval/*`: `tools.json` (a `getAllTools()` array),
//! `queries.jsonl` (`{"id", "prompt", "relevant_tools"}` a line) and optionally
//! `irrelevance.jsonl` (prompts for which nothing should be exposed). Queries are split in two
//! halves by a stable hash of their id: the `tune` half was used to choose the embedded scorer's
//! weights, the `test` half (the default) is the one to report.
//!
//! A set may say more (the everyday set does), and the shared sets need none of it:
//! - a query's `"needs": [["tool_a", "alt_b"], ["tool_c"]]`: each need is a group of
//!   interchangeable tools, the labelled one first and accepted alternatives after it (a
//!   `relevant_tools` name that no need holds is a need of its own);
//! - a query's or irrelevance prompt's `"topics": ["issues"]`, and a tool's `"topic"`;
//! - an irrelevance prompt's `"kind"`: `"coding"` (about the code in front of the model) or
//!   `"near-miss"` (a tool of the right domain exists, but none that does the job).
//!
//! A need is the unit of relevance: ranking and selection recall count a need found when any of
//! its tools is (in `mcp` mode, any group holding one of them), and every tool of a need is a
//! positive for precision, the Brier score and the reliability table. Any other field of a line
//! or a tool is ignored.

use crate::inventory::{read_inventory_file, InventoryFileError};
use pcd_bounded_read::{read_bounded, Follow};
use pcd_model::{Allowlists, Classifier, DecisionSettings, Mode, Settings, ToolInfo};
use pcd_picker::candidates::{candidates, Available, Candidate};
use pcd_picker::embedded::{self, Calibration, FieldWeights};
use pcd_ui_text::{NumberListProblem, QueryProblem, ReadProblem};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;
use std::time::Instant;

/// The largest queries file read.
const MAX_QUERIES_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The longest query line read.
const MAX_QUERY_LINE_BYTES: usize = 64 * 1024;

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
fn read_text(path: &Path, max: u64) -> Result<String, EvalError> {
    let file = path.display().to_string();
    let err = |problem: ReadProblem| EvalError::Read {
        file: file.clone(),
        problem,
    };
    let bytes = read_bounded(path, max, Follow::Symlinks).map_err(|p| err(ReadProblem::File(p)))?;
    String::from_utf8(bytes).map_err(|_| err(ReadProblem::NotUtf8))
}

/// A JSON array of strings, or `None` when it is anything else.
fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn read_queries(path: &Path) -> Result<Vec<Query>, EvalError> {
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
        });
    }
    Ok(out)
}

/// Whether `path` is a symbolic link whose target does not exist.
fn dangling_symlink(path: &Path) -> bool {
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
            crate::inventory::MAX_INVENTORY_FILE_BYTES,
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
        let queries = read_queries(&dir.join("queries.jsonl"))?;
        // Absent is fine (a set without irrelevance prompts); a link to nothing is a mistake
        // that would silently drop every irrelevance figure.
        let irrelevance_path = dir.join("irrelevance.jsonl");
        let irrelevance = if dangling_symlink(&irrelevance_path) {
            return Err(EvalError::Read {
                file: irrelevance_path.display().to_string(),
                problem: ReadProblem::DanglingSymlink,
            });
        } else if irrelevance_path.exists() {
            read_queries(&irrelevance_path)?
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
fn stable_hash(text: &str) -> u64 {
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

pub mod peer;

/// Options of one evaluation.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// `tools` or `mcp`.
    pub mode: Mode,
    /// Which queries.
    pub split: Split,
    /// Evaluate at most this many queries of the split (and of irrelevance prompts).
    pub limit: Option<usize>,
    /// The selection threshold and caps.
    pub decision: DecisionSettings,
    /// Scorer weights (the shipped ones unless tuning).
    pub weights: FieldWeights,
    /// Scorer calibration (the shipped one unless tuning).
    pub calibration: Calibration,
    /// Also select at each threshold of [`SWEEP_THRESHOLDS`] (the prompts are scored once).
    pub sweep: bool,
    /// The semantic signal, when the model is loaded: the prompts are scored fused.
    pub semantic: Option<std::sync::Arc<crate::semantic::Semantic>>,
}

/// The thresholds `eval --sweep` selects at: 0.05, 0.10, … 0.95.
pub const SWEEP_THRESHOLDS: [f64; 19] = {
    let mut t = [0.0; 19];
    let mut i = 0;
    while i < 19 {
        t[i] = (i + 1) as f64 / 20.0;
        i += 1;
    }
    t
};

/// How many bins the reliability table has: [0, 0.1), [0.1, 0.2), … [0.9, 1.0].
const BINS: usize = 10;

#[derive(Debug, Default)]
struct Ranking {
    recall: [f64; 4],
    complete: [f64; 2],
    ndcg: f64,
    prompts: usize,
}

const KS: [usize; 4] = [1, 3, 5, 10];

impl Ranking {
    /// Adds one prompt: `needs` are groups of interchangeable candidates; a need is found at
    /// rank k when any of its candidates is among the first k, and counts once in nDCG.
    fn add(&mut self, ranked: &[usize], needs: &[Vec<usize>]) {
        if needs.is_empty() {
            return;
        }
        self.prompts += 1;
        let found_at = |k: usize| {
            needs
                .iter()
                .filter(|need| ranked.iter().take(k).any(|x| need.contains(x)))
                .count()
        };
        for (slot, k) in KS.iter().enumerate() {
            self.recall[slot] += found_at(*k) as f64 / needs.len() as f64;
        }
        self.complete[0] += f64::from(u8::from(found_at(5) == needs.len()));
        self.complete[1] += f64::from(u8::from(found_at(10) == needs.len()));
        let mut met = vec![false; needs.len()];
        let mut dcg = 0.0;
        for (i, x) in ranked.iter().take(10).enumerate() {
            if let Some(n) = (0..needs.len()).find(|&n| !met[n] && needs[n].contains(x)) {
                met[n] = true;
                dcg += 1.0 / (i as f64 + 2.0).log2();
            }
        }
        let ideal: f64 = (0..needs.len().min(10))
            .map(|i| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        self.ndcg += dcg / ideal;
    }

    fn json(&self, into: &mut Map<String, Value>) {
        let n = self.prompts.max(1) as f64;
        for (slot, k) in KS.iter().enumerate() {
            into.insert(format!("recall@{k}"), round(self.recall[slot] / n));
        }
        into.insert("complete@5".into(), round(self.complete[0] / n));
        into.insert("complete@10".into(), round(self.complete[1] / n));
        into.insert("ndcg@10".into(), round(self.ndcg / n));
    }
}

fn round(x: f64) -> Value {
    json!((x * 1000.0).round() / 1000.0)
}

/// Brier scores are small on large inventories (most pairs are plain negatives): five decimals.
fn round_brier(x: f64) -> Value {
    json!((x * 100_000.0).round() / 100_000.0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Candidates sorted by score, best first, ties in inventory order, zero scores left out (as
/// the peer leaves out documents that match no term).
fn ranked(scores: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] > 0.0).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
}

/// One evaluated prompt, scored once: what selection at any threshold needs.
#[derive(Debug)]
struct Scored {
    /// From `queries.jsonl` (else an irrelevance prompt).
    labelled: bool,
    /// Its needs as candidates (distinct sets; needs naming no candidate left out).
    needs: Vec<Vec<usize>>,
    /// Whether the line said its needs.
    has_needs: bool,
    topics: Option<Vec<String>>,
    kind: Option<PromptKind>,
    /// The best candidates, best first (ties in inventory order, zero scores last), as many as
    /// the cap: a selection at threshold t is the prefix scoring at least t.
    top: Vec<(usize, f64)>,
}

impl Scored {
    fn relevant(&self, candidate: usize) -> bool {
        self.needs.iter().any(|need| need.contains(&candidate))
    }

    fn chosen(&self, threshold: f64) -> impl Iterator<Item = usize> + '_ {
        self.top
            .iter()
            .take_while(move |(_, s)| *s >= threshold)
            .map(|(c, _)| *c)
    }
}

/// What the candidates are, for the figures of a selection.
struct Universe<'a> {
    candidates: &'a [Candidate],
    total_chars: usize,
    /// Each candidate's topics: its tool's, or its members' (distinct); empty when none is said.
    topics: Vec<Vec<&'a str>>,
    /// Whether any candidate has a topic (without one, no prompt can expose an unrelated one).
    any_topic: bool,
}

/// The figures of one selection (one threshold) over every scored prompt.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Selection {
    labelled: usize,
    needs: usize,
    needs_found: usize,
    selected: usize,
    selected_relevant: usize,
    withheld: f64,
    irrelevant: usize,
    irrelevant_nothing: usize,
    needs_prompts: usize,
    needs_prompts_met: usize,
    topic_prompts: usize,
    topic_prompts_unrelated: usize,
    coding: usize,
    coding_nothing: usize,
    near_miss: usize,
    near_miss_nothing: usize,
}

impl Selection {
    fn at(scored: &[Scored], threshold: f64, universe: &Universe<'_>) -> Selection {
        let mut s = Selection::default();
        let mut chosen: Vec<usize> = Vec::new();
        for p in scored {
            chosen.clear();
            chosen.extend(p.chosen(threshold));
            if !p.labelled {
                s.irrelevant += 1;
                let nothing = usize::from(chosen.is_empty());
                s.irrelevant_nothing += nothing;
                match p.kind {
                    Some(PromptKind::Coding) => {
                        s.coding += 1;
                        s.coding_nothing += nothing;
                    }
                    Some(PromptKind::NearMiss) => {
                        s.near_miss += 1;
                        s.near_miss_nothing += nothing;
                    }
                    None => {}
                }
                continue;
            }
            s.labelled += 1;
            let found = p
                .needs
                .iter()
                .filter(|need| need.iter().any(|c| chosen.contains(c)))
                .count();
            s.needs += p.needs.len();
            s.needs_found += found;
            s.selected += chosen.len();
            s.selected_relevant += chosen.iter().filter(|&&c| p.relevant(c)).count();
            let exposed: usize = chosen
                .iter()
                .map(|&c| universe.candidates[c].definition_chars)
                .sum();
            s.withheld += 1.0 - exposed as f64 / universe.total_chars.max(1) as f64;
            if p.has_needs && !p.needs.is_empty() {
                s.needs_prompts += 1;
                s.needs_prompts_met += usize::from(found == p.needs.len());
            }
            if let Some(topics) = p.topics.as_ref().filter(|_| universe.any_topic) {
                s.topic_prompts += 1;
                let unrelated = chosen.iter().any(|&c| {
                    let own = &universe.topics[c];
                    !own.is_empty() && !own.iter().any(|t| topics.iter().any(|p| p == t))
                });
                s.topic_prompts_unrelated += usize::from(unrelated);
            }
        }
        s
    }

    fn recall(&self) -> f64 {
        self.needs_found as f64 / self.needs.max(1) as f64
    }

    fn precision(&self) -> f64 {
        if self.selected == 0 {
            0.0
        } else {
            self.selected_relevant as f64 / self.selected as f64
        }
    }

    fn exposed_per_prompt(&self) -> f64 {
        self.selected as f64 / self.labelled.max(1) as f64
    }

    fn nothing_exposed_share(&self) -> Option<f64> {
        (self.irrelevant > 0).then(|| self.irrelevant_nothing as f64 / self.irrelevant as f64)
    }
}

/// The Brier score and the reliability table, accumulated pair by pair.
#[derive(Debug, Default)]
struct Reliability {
    pairs: u64,
    squared: f64,
    top10_pairs: u64,
    top10_squared: f64,
    /// Per bin: pairs, summed score, relevant pairs.
    bins: [(u64, f64, u64); BINS],
}

impl Reliability {
    /// Every candidate of one prompt: `scores` in candidate order, `order` best first (all
    /// candidates), `relevant` per candidate.
    fn add(&mut self, scores: &[f64], order: &[usize], relevant: &[bool]) {
        for (c, &score) in scores.iter().enumerate() {
            let y = f64::from(u8::from(relevant[c]));
            self.pairs += 1;
            self.squared += (score - y) * (score - y);
            let bin = ((score * BINS as f64).floor().max(0.0) as usize).min(BINS - 1);
            let slot = &mut self.bins[bin];
            slot.0 += 1;
            slot.1 += score;
            slot.2 += u64::from(relevant[c]);
        }
        for &c in order.iter().take(10) {
            let y = f64::from(u8::from(relevant[c]));
            self.top10_pairs += 1;
            self.top10_squared += (scores[c] - y) * (scores[c] - y);
        }
    }

    fn json(&self) -> Value {
        let bins: Vec<Value> = self
            .bins
            .iter()
            .enumerate()
            .map(|(i, &(pairs, summed, relevant))| {
                let n = pairs.max(1) as f64;
                json!({
                    "low": i as f64 / BINS as f64,
                    "high": (i + 1) as f64 / BINS as f64,
                    "pairs": pairs,
                    "mean_score": round(summed / n),
                    "observed_relevant": round(relevant as f64 / n),
                })
            })
            .collect();
        json!({
            "pairs": self.pairs,
            "brier": round_brier(self.squared / self.pairs.max(1) as f64),
            "top10_pairs": self.top10_pairs,
            "brier_top10": round_brier(self.top10_squared / self.top10_pairs.max(1) as f64),
            "reliability": bins,
        })
    }
}

/// Runs the evaluation and returns the `--json` object. `progress` is called with (done, total).
pub fn evaluate(
    set: &EvalSet,
    options: &EvalOptions,
    mut progress: impl FnMut(usize, usize),
) -> Value {
    let cset = candidates(
        &set.tools,
        &Classifier::default(),
        options.mode,
        &Allowlists::default(),
        &Available::default(),
    );
    let cands: &[Candidate] = &cset.candidates;
    let build_start = Instant::now();
    let index = embedded::index_for_with(&set.tools, cands, options.weights, options.calibration);
    let build_ms = build_start.elapsed().as_secs_f64() * 1e3;
    // One scorer for every prompt: fused only when every candidate has its vector.
    let vectors = options
        .semantic
        .as_deref()
        .and_then(|s| pcd_picker::semantic::candidate_vectors(s, cands));
    let semantic = options.semantic.as_deref().zip(vectors.as_deref());
    let mut lexical_rounds = 0usize;
    // The peer ranks the candidates' tools; in group mode a group ranks where its best tool does.
    let member_of: HashMap<usize, usize> = cands
        .iter()
        .enumerate()
        .flat_map(|(ci, c)| c.members.iter().map(move |&t| (t, ci)))
        .collect();
    let peer_tools: Vec<usize> = {
        let mut v: Vec<usize> = member_of.keys().copied().collect();
        v.sort_unstable();
        v
    };
    let peer_index = peer::Bm25::new(peer_tools.iter().map(|&t| set.peer_documents[t].as_str()));
    let latest_index = peer::v1_6::Ranker::new(
        peer_tools
            .iter()
            .map(|&t| set.peer_documents_latest[t].clone()),
    );
    // A peer's tool order as candidates: a group ranks where its best tool does.
    let as_candidates = |tool_order: Vec<usize>| -> Vec<usize> {
        let mut order: Vec<usize> = Vec::new();
        for d in tool_order {
            let c = member_of[&peer_tools[d]];
            if !order.contains(&c) {
                order.push(c);
            }
        }
        order
    };
    let candidate_of_name: HashMap<&str, usize> = set
        .tools
        .iter()
        .enumerate()
        .filter_map(|(t, tool)| member_of.get(&t).map(|&c| (tool.name.as_str(), c)))
        .collect();
    let mut universe = Universe {
        candidates: cands,
        total_chars: cands.iter().map(|c| c.definition_chars).sum(),
        topics: cands
            .iter()
            .map(|c| {
                let mut topics: Vec<&str> = c
                    .members
                    .iter()
                    .filter_map(|&t| set.tool_topics.get(t)?.as_deref())
                    .collect();
                topics.sort_unstable();
                topics.dedup();
                topics
            })
            .collect(),
        any_topic: false,
    };
    universe.any_topic = universe.topics.iter().any(|t| !t.is_empty());
    let threshold = options.decision.threshold;
    let cap = match options.mode {
        Mode::Tools => options.decision.max_new_tools,
        Mode::Mcp => options.decision.max_new_groups,
    } as usize;

    let pick = |qs: &[Query]| -> Vec<Query> {
        let mut v: Vec<Query> = qs
            .iter()
            .filter(|q| in_split(&q.id, options.split))
            .cloned()
            .collect();
        if let Some(limit) = options.limit {
            v.truncate(limit);
        }
        v
    };
    let queries = pick(&set.queries);
    let irrelevance = pick(&set.irrelevance);
    let total = queries.len() + irrelevance.len();

    let (mut ours, mut theirs, mut latest) =
        (Ranking::default(), Ranking::default(), Ranking::default());
    let mut times = Vec::with_capacity(total);
    let mut peer_times = Vec::with_capacity(total);
    let mut latest_times = Vec::with_capacity(total);
    let mut unlabelled = 0usize;
    let mut reliability = Reliability::default();
    let mut scored: Vec<Scored> = Vec::with_capacity(total);
    let mut relevant = vec![false; cands.len()];
    for (done, q) in queries.iter().chain(&irrelevance).enumerate() {
        let labelled = done < queries.len();
        let start = Instant::now();
        let (scores, used) = crate::semantic::scores(&index, semantic, &q.prompt);
        if used != crate::semantic::ScorerUsed::Fused {
            lexical_rounds += 1;
        }
        let order = ranked(&scores);
        times.push(start.elapsed().as_secs_f64() * 1e3);

        let start = Instant::now();
        let peer_order = as_candidates(peer_index.rank(&q.prompt));
        peer_times.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        let latest_order = as_candidates(latest_index.rank(&q.prompt));
        latest_times.push(start.elapsed().as_secs_f64() * 1e3);

        // An irrelevance prompt needs nothing, whatever its line says.
        let mut needs: Vec<Vec<usize>> = Vec::new();
        for need in q.needs.iter().filter(|_| labelled) {
            let mut as_candidates: Vec<usize> = Vec::new();
            for name in need {
                match candidate_of_name.get(name.as_str()) {
                    Some(&c) if !as_candidates.contains(&c) => as_candidates.push(c),
                    Some(_) => {}
                    None => unlabelled += 1,
                }
            }
            as_candidates.sort_unstable();
            if !as_candidates.is_empty() && !needs.contains(&as_candidates) {
                needs.push(as_candidates);
            }
        }
        if labelled {
            ours.add(&order, &needs);
            theirs.add(&peer_order, &needs);
            latest.add(&latest_order, &needs);
        }
        // Every candidate, best first: the scored ones, then the zeros in inventory order.
        let zeros = (0..cands.len()).filter(|&c| scores[c] <= 0.0);
        let full: Vec<usize> = order
            .iter()
            .copied()
            .chain(zeros)
            .take(cap.max(10))
            .collect();
        for need in &needs {
            for &c in need {
                relevant[c] = true;
            }
        }
        reliability.add(&scores, &full, &relevant);
        relevant.iter_mut().for_each(|r| *r = false);
        scored.push(Scored {
            labelled,
            needs,
            has_needs: q.has_needs,
            topics: q.topics.clone(),
            kind: q.kind,
            top: full.iter().take(cap).map(|&c| (c, scores[c])).collect(),
        });
        progress(done + 1, total);
    }
    times.sort_by(f64::total_cmp);
    peer_times.sort_by(f64::total_cmp);
    latest_times.sort_by(f64::total_cmp);

    if let Some(s) = options.semantic.as_deref() {
        s.save();
    }
    let mut out = Map::new();
    out.insert(
        "scorer".into(),
        json!(if semantic.is_some() && lexical_rounds == 0 {
            crate::semantic::ScorerUsed::Fused.name()
        } else {
            "lexical"
        }),
    );
    if semantic.is_some() && lexical_rounds > 0 {
        out.insert("lexical_rounds".into(), json!(lexical_rounds));
    }
    out.insert("mode".into(), json!(options.mode.as_str()));
    out.insert(
        "split".into(),
        json!(format!("{:?}", options.split).to_lowercase()),
    );
    out.insert("candidates".into(), json!(cands.len()));
    out.insert("prompts".into(), json!(ours.prompts));
    ours.json(&mut out);
    out.insert(
        "ms_per_prompt_median".into(),
        json!(round_ms(percentile(&times, 0.5))),
    );
    out.insert(
        "ms_per_prompt_p99".into(),
        json!(round_ms(percentile(&times, 0.99))),
    );
    out.insert("index_build_ms".into(), json!(round_ms(build_ms)));
    let at_default = Selection::at(&scored, threshold, &universe);
    // Every prompt's cap's worth of best candidates (any positive score): the most any threshold
    // could make available with this ranking.
    let reach = Selection::at(&scored, f64::MIN_POSITIVE, &universe);
    out.insert(
        "selection".into(),
        json!({
            "threshold": threshold,
            "cap": cap,
            "recall": round(at_default.recall()),
            "precision": round(at_default.precision()),
            "exposed_per_prompt": round(at_default.exposed_per_prompt()),
            "withheld_share": round(at_default.withheld / at_default.labelled.max(1) as f64),
            "reach_recall": round(reach.recall()),
        }),
    );
    if let Some(share) = at_default.nothing_exposed_share() {
        out.insert("irrelevance_prompts".into(), json!(at_default.irrelevant));
        out.insert("nothing_exposed_share".into(), round(share));
    }
    let mut everyday = everyday_json(&at_default);
    if reach.needs_prompts > 0 {
        everyday.insert(
            "needs_within_cap_share".into(),
            round(reach.needs_prompts_met as f64 / reach.needs_prompts as f64),
        );
    }
    if !everyday.is_empty() {
        out.insert("everyday".into(), Value::Object(everyday));
    }
    out.insert("calibration".into(), reliability.json());
    if options.sweep {
        let rows: Vec<Value> = SWEEP_THRESHOLDS
            .iter()
            .map(|&t| {
                let s = Selection::at(&scored, t, &universe);
                let mut row = json!({
                    "threshold": round(t),
                    "recall": round(s.recall()),
                    "precision": round(s.precision()),
                    "exposed_per_prompt": round(s.exposed_per_prompt()),
                });
                if let Some(share) = s.nothing_exposed_share() {
                    row["nothing_exposed_share"] = round(share);
                }
                row
            })
            .collect();
        out.insert("sweep".into(), Value::Array(rows));
    }
    if unlabelled > 0 {
        out.insert("labels_not_candidates".into(), json!(unlabelled));
    }
    let peer_json = |ranking: &Ranking, times: &[f64]| {
        let mut m = Map::new();
        ranking.json(&mut m);
        m.insert(
            "ms_per_prompt_median".into(),
            json!(round_ms(percentile(times, 0.5))),
        );
        m.insert(
            "ms_per_prompt_p99".into(),
            json!(round_ms(percentile(times, 0.99))),
        );
        Value::Object(m)
    };
    out.insert(
        "peer_tool_search_bm25".into(),
        peer_json(&theirs, &peer_times),
    );
    out.insert(
        "peer_tool_search_pi_1_6".into(),
        peer_json(&latest, &latest_times),
    );
    Value::Object(out)
}

/// The figures only a set with needs, topics or kinds has: each a share and how many prompts.
fn everyday_json(s: &Selection) -> Map<String, Value> {
    let mut out = Map::new();
    let mut share = |key: &str, prompts_key: &str, part: usize, of: usize| {
        if of > 0 {
            out.insert(key.into(), round(part as f64 / of as f64));
            out.insert(prompts_key.into(), json!(of));
        }
    };
    share(
        "needs_met_share",
        "needs_prompts",
        s.needs_prompts_met,
        s.needs_prompts,
    );
    share(
        "unrelated_topic_share",
        "topic_prompts",
        s.topic_prompts_unrelated,
        s.topic_prompts,
    );
    share(
        "coding_nothing_exposed_share",
        "coding_prompts",
        s.coding_nothing,
        s.coding,
    );
    share(
        "near_miss_nothing_exposed_share",
        "near_miss_prompts",
        s.near_miss_nothing,
        s.near_miss,
    );
    out
}

fn round_ms(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The human-readable report of an evaluation's JSON (ui-text's [`pcd_ui_text::eval_report`]
/// over the same figures `--json` prints).
pub fn report(set_dir: &Path, value: &Value) -> String {
    let g = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
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
        },
        sweep: sweep_rows(value),
    });
    format!("{scorer}\n{body}{comparison}")
}

/// The `sweep` rows of an evaluation's JSON.
fn sweep_rows(value: &Value) -> Vec<pcd_ui_text::EvalSweepRow> {
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
            nothing_exposed: r.get("nothing_exposed_share").and_then(Value::as_f64),
        })
        .collect()
}

fn parse_list<const N: usize>(text: &str, what: &str) -> Result<[f64; N], String> {
    let values: Vec<f64> = text
        .split(',')
        .enumerate()
        .map(|(i, p)| {
            p.trim().parse::<f64>().map_err(|_| {
                pcd_ui_text::number_list_error(what, NumberListProblem::NotANumber(i + 1))
            })
        })
        .collect::<Result<_, _>>()?;
    values
        .try_into()
        .map_err(|_| pcd_ui_text::number_list_error(what, NumberListProblem::Count(N)))
}

/// The `eval` command's arguments.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// A folder with tools.json, queries.jsonl and optionally irrelevance.jsonl.
    #[arg(long, value_name = "DIR")]
    pub set: std::path::PathBuf,
    /// tools: every external tool is a candidate; mcp: every group is [default: tools.mode of
    /// the settings with --agent-dir, else tools].
    #[arg(long, value_parser = ["tools", "mcp"])]
    pub mode: Option<String>,
    /// Which half of the queries (split by a stable hash of their id).
    #[arg(long, value_enum, default_value = "test")]
    pub split: Split,
    /// Evaluate at most N queries (and N irrelevance prompts).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Read the threshold, caps and mode from the settings in this Pi agent directory
    /// (DIR/pi-context-decisions/settings.json) [default: the built-in defaults].
    #[arg(long, value_name = "DIR")]
    pub agent_dir: Option<std::path::PathBuf>,
    /// The threshold and caps, each overriding the settings.
    #[command(flatten)]
    pub selection: crate::pick::SelectionFlags,
    /// Also print the selection at each threshold from 0.05 to 0.95 (the prompts are scored
    /// once).
    #[arg(long)]
    pub sweep: bool,
    /// Draw the sweep's recall and exposure against the threshold into this SVG file (implies
    /// --sweep).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<std::path::PathBuf>,
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
    /// Tuning only: name,label,description,k1,b,related,name-coverage field weights.
    #[arg(long, hide = true)]
    pub weights: Option<String>,
    /// Tuning only: bias,coverage,strength,unknown calibration.
    #[arg(long, hide = true)]
    pub calibration: Option<String>,
}

/// Runs `eval` and returns what to print; the progress bar goes to stderr only on a terminal.
pub fn run(args: &EvalArgs) -> Result<String, String> {
    use std::io::{IsTerminal, Write};
    let set = EvalSet::load(&args.set).map_err(|e| e.to_string())?;
    tracing::info!(
        tools = set.tools.len(),
        queries = set.queries.len(),
        irrelevance = set.irrelevance.len(),
        "eval: set loaded"
    );
    let mut weights = FieldWeights::default();
    if let Some(w) = &args.weights {
        let [name, label, description, k1, b, related, name_coverage] =
            parse_list::<7>(w, "--weights")?;
        weights = FieldWeights {
            related,
            name_coverage,
            name,
            label,
            description,
            k1,
            b,
        };
    }
    let mut calibration = Calibration::default();
    if let Some(c) = &args.calibration {
        calibration =
            Calibration::from_weights(parse_list::<{ Calibration::WEIGHTS }>(c, "--calibration")?);
    }
    // The built-in defaults, unless the person names an agent directory to read.
    let (mut settings, warnings) = match &args.agent_dir {
        Some(dir) => {
            let global = crate::load::load_global_settings(dir, false);
            let settings = match global.value {
                crate::session::SettingsRead::Read(s) => s,
                crate::session::SettingsRead::Unreadable => Settings::default(),
            };
            (settings, global.warnings)
        }
        None => (Settings::default(), Vec::new()),
    };
    args.selection.apply(&mut settings.decision);
    let options = EvalOptions {
        mode: args
            .mode
            .as_deref()
            .and_then(Mode::parse)
            .unwrap_or(settings.tools.mode),
        split: args.split,
        limit: args.limit,
        decision: settings.decision,
        weights,
        calibration,
        sweep: args.sweep || args.plot.is_some(),
        semantic: None,
    };
    let mut options = options;
    let mut scorer_reason = String::new();
    if args.lexical {
        scorer_reason = pcd_ui_text::LEXICAL_ASKED.to_owned();
    } else {
        let dirs =
            crate::semantic::model_dirs(args.model_dir.as_deref(), args.agent_dir.as_deref(), None);
        match crate::semantic::Semantic::load(&dirs) {
            Ok(model) => options.semantic = Some(std::sync::Arc::new(model)),
            Err(reason) => scorer_reason = reason,
        }
    }
    let terminal = std::io::stderr().is_terminal();
    let mut last_drawn = 0;
    let mut draw = |done: usize, total: usize| {
        if done < last_drawn {
            last_drawn = 0;
        }
        if !terminal || (done != total && done - last_drawn < 97) {
            return;
        }
        last_drawn = done;
        let _ = write!(
            std::io::stderr(),
            "{}",
            pcd_ui_text::eval_progress(done, total)
        );
    };
    tracing::info!(
        mode = options.mode.as_str(),
        semantic = options.semantic.is_some(),
        "eval: scoring"
    );
    if !scorer_reason.is_empty() {
        tracing::debug!(reason = %scorer_reason, "eval: the semantic signal is not used");
    }
    let started = std::time::Instant::now();
    let mut value = evaluate(&set, &options, &mut draw);
    tracing::info!(ms = started.elapsed().as_millis() as u64, "eval: scored");
    if options.semantic.is_some() {
        // The same prompts with the lexical scorer alone, side by side.
        let lexical_options = EvalOptions {
            semantic: None,
            sweep: false,
            ..options.clone()
        };
        let lexical = evaluate(&set, &lexical_options, &mut draw);
        value["lexical"] = lexical_summary(&lexical);
    } else if !scorer_reason.is_empty() {
        value["scorer_reason"] = json!(scorer_reason);
    }
    if let Some(file) = &args.plot {
        let title = format!(
            "{} {} {}",
            args.set.display(),
            options.mode.as_str(),
            value["split"].as_str().unwrap_or_default()
        );
        let threshold = options.decision.threshold;
        let is_default = threshold == DecisionSettings::default().threshold;
        let svg = pcd_ui_text::eval_sweep_svg(&sweep_rows(&value), threshold, is_default, &title);
        std::fs::write(file, svg).map_err(|e| {
            pcd_ui_text::plot_write_error(&file.display().to_string(), &e.kind().to_string())
        })?;
    }
    Ok(if args.json {
        let mut s = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
        s.push('\n');
        s
    } else {
        pcd_ui_text::with_warnings(report(&args.set, &value), &warnings)
    })
}

/// The figures of the lexical scorer alone that `eval` shows beside the fused ones.
fn lexical_summary(value: &Value) -> Value {
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
fn comparison_rows(value: &Value) -> Vec<pcd_ui_text::ScorerComparisonRow> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
            }
        );
        assert!((s.recall() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.precision(), 0.5);
        assert_eq!(s.exposed_per_prompt(), 2.0);
        assert_eq!(s.nothing_exposed_share(), Some(0.5));
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
        let lines =
            |values: &[Value]| -> String { values.iter().map(|v| format!("{v}\n")).collect() };
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
        }
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
                json!({"id": "a", "prompt": "p", "needs": [["x", "y"]]})
            ),
        )
        .unwrap();
        assert_eq!(EvalSet::load(&dir).unwrap().queries[0].relevant, ["x"]);
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
            selection: crate::pick::SelectionFlags::default(),
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
        assert_eq!(series.len(), 2);
        for (node, id) in series.iter().zip(["recall", "exposed"]) {
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
            selection: crate::pick::SelectionFlags::default(),
            sweep: false,
            lexical: true,
            model_dir: None,
            plot: None,
            json: true,
            weights: None,
            calibration: None,
        };
        let json =
            |args: &EvalArgs| -> Value { serde_json::from_str(&run(args).unwrap()).unwrap() };
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
}
