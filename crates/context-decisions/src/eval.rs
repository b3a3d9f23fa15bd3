//! The `eval` command: the picker's ranking and selection quality on a labelled set, next to
//! Pi's own `tool_search` ranker (BM25) run on the same data in the same harness.
//!
//! A set is a folder shaped like `../shared/eval/*`: `tools.json` (a `getAllTools()` array),
//! `queries.jsonl` (`{"id", "prompt", "relevant_tools"}` a line) and optionally
//! `irrelevance.jsonl` (prompts for which nothing should be exposed). Queries are split in two
//! halves by a stable hash of their id: the `tune` half was used to choose the embedded scorer's
//! weights, the `test` half (the default) is the one to report.

use crate::inventory::{read_inventory_file, InventoryFileError};
use pcd_bounded_read::{read_bounded, Follow};
use pcd_model::{Allowlists, Classifier, DecisionSettings, Mode, ToolInfo};
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

/// One labelled prompt.
#[derive(Debug, Clone)]
pub struct Query {
    /// Its id (used for the split).
    pub id: String,
    /// The user's prompt.
    pub prompt: String,
    /// The tools an annotator used (empty for irrelevance prompts).
    pub relevant: Vec<String>,
}

/// A loaded set.
#[derive(Debug)]
pub struct EvalSet {
    /// The tools, as the picker sees them.
    pub tools: Vec<ToolInfo>,
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
        let relevant = value
            .get("relevant_tools")
            .and_then(Value::as_array)
            .ok_or(bad(QueryProblem::NoRelevantTools))?
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or(bad(QueryProblem::RelevantToolNotString))
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.push(Query {
            id: id.to_owned(),
            prompt: prompt.to_owned(),
            relevant,
        });
    }
    Ok(out)
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
        let queries = read_queries(&dir.join("queries.jsonl"))?;
        let irrelevance_path = dir.join("irrelevance.jsonl");
        let irrelevance = if irrelevance_path.exists() {
            read_queries(&irrelevance_path)?
        } else {
            Vec::new()
        };
        Ok(EvalSet {
            tools,
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
}

#[derive(Debug, Default)]
struct Ranking {
    recall: [f64; 4],
    complete: [f64; 2],
    ndcg: f64,
    prompts: usize,
}

const KS: [usize; 4] = [1, 3, 5, 10];

impl Ranking {
    fn add(&mut self, ranked: &[usize], relevant: &[usize]) {
        if relevant.is_empty() {
            return;
        }
        self.prompts += 1;
        let hits_at = |k: usize| {
            relevant
                .iter()
                .filter(|r| ranked.iter().take(k).any(|x| x == *r))
                .count()
        };
        for (slot, k) in KS.iter().enumerate() {
            self.recall[slot] += hits_at(*k) as f64 / relevant.len() as f64;
        }
        self.complete[0] += f64::from(u8::from(hits_at(5) == relevant.len()));
        self.complete[1] += f64::from(u8::from(hits_at(10) == relevant.len()));
        let dcg: f64 = ranked
            .iter()
            .take(10)
            .enumerate()
            .filter(|(_, x)| relevant.contains(x))
            .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        let ideal: f64 = (0..relevant.len().min(10))
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
    let total_chars: usize = cands.iter().map(|c| c.definition_chars).sum();
    let threshold = options.decision.threshold;
    let cap = match options.mode {
        Mode::Tools => options.decision.max_new_tools,
        Mode::Mcp => options.decision.max_new_groups,
    } as usize;
    let select = |scores: &[f64]| -> Vec<usize> {
        let mut chosen: Vec<usize> = ranked(scores)
            .into_iter()
            .filter(|&i| scores[i] >= threshold)
            .collect();
        chosen.truncate(cap);
        chosen
    };

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
    let (mut hits, mut selected, mut relevant_total, mut withheld) = (0usize, 0usize, 0usize, 0.0);
    let mut nothing_exposed = 0usize;
    let mut unlabelled = 0usize;
    for (done, q) in queries.iter().chain(&irrelevance).enumerate() {
        let start = Instant::now();
        let scores = index.scores(&q.prompt);
        let order = ranked(&scores);
        times.push(start.elapsed().as_secs_f64() * 1e3);
        let chosen = select(&scores);

        let start = Instant::now();
        let peer_order = as_candidates(peer_index.rank(&q.prompt));
        peer_times.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        let latest_order = as_candidates(latest_index.rank(&q.prompt));
        latest_times.push(start.elapsed().as_secs_f64() * 1e3);

        let mut relevant: Vec<usize> = Vec::new();
        for name in &q.relevant {
            match candidate_of_name.get(name.as_str()) {
                Some(&c) if !relevant.contains(&c) => relevant.push(c),
                Some(_) => {}
                None => unlabelled += 1,
            }
        }
        if done < queries.len() {
            ours.add(&order, &relevant);
            theirs.add(&peer_order, &relevant);
            latest.add(&latest_order, &relevant);
            relevant_total += relevant.len();
            hits += chosen.iter().filter(|c| relevant.contains(c)).count();
            selected += chosen.len();
            let exposed: usize = chosen.iter().map(|&c| cands[c].definition_chars).sum();
            withheld += 1.0 - exposed as f64 / total_chars.max(1) as f64;
        } else if chosen.is_empty() {
            nothing_exposed += 1;
        }
        progress(done + 1, total);
    }
    times.sort_by(f64::total_cmp);
    peer_times.sort_by(f64::total_cmp);
    latest_times.sort_by(f64::total_cmp);

    let mut out = Map::new();
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
    let n = queries.len().max(1) as f64;
    out.insert(
        "selection".into(),
        json!({
            "threshold": threshold,
            "cap": cap,
            "recall": round(hits as f64 / relevant_total.max(1) as f64),
            "precision": round(if selected == 0 { 0.0 } else { hits as f64 / selected as f64 }),
            "exposed_per_prompt": round(selected as f64 / n),
            "withheld_share": round(withheld / n),
        }),
    );
    if !irrelevance.is_empty() {
        out.insert("irrelevance_prompts".into(), json!(irrelevance.len()));
        out.insert(
            "nothing_exposed_share".into(),
            round(nothing_exposed as f64 / irrelevance.len() as f64),
        );
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
    let sel = &value["selection"];
    pcd_ui_text::eval_report(&pcd_ui_text::EvalReport {
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
        },
        irrelevance: value
            .get("nothing_exposed_share")
            .and_then(Value::as_f64)
            .map(|share| (share, n(value, "irrelevance_prompts"))),
    })
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
    /// tools: every external tool is a candidate; mcp: every group is.
    #[arg(long, default_value = "tools", value_parser = ["tools", "mcp"])]
    pub mode: String,
    /// Which half of the queries (split by a stable hash of their id).
    #[arg(long, value_enum, default_value = "test")]
    pub split: Split,
    /// Evaluate at most N queries (and N irrelevance prompts).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
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
        let [bias, coverage, strength, unknown_term_weight] = parse_list::<4>(c, "--calibration")?;
        calibration = Calibration {
            bias,
            coverage,
            strength,
            unknown_term_weight,
        };
    }
    let options = EvalOptions {
        mode: Mode::parse(&args.mode).unwrap_or_default(),
        split: args.split,
        limit: args.limit,
        decision: DecisionSettings::default(),
        weights,
        calibration,
    };
    let terminal = std::io::stderr().is_terminal();
    let mut last_drawn = 0;
    let value = evaluate(&set, &options, |done, total| {
        if !terminal || (done != total && done - last_drawn < 97) {
            return;
        }
        last_drawn = done;
        let _ = write!(
            std::io::stderr(),
            "{}",
            pcd_ui_text::eval_progress(done, total)
        );
    });
    Ok(if args.json {
        let mut s = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
        s.push('\n');
        s
    } else {
        report(&args.set, &value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_metrics_follow_their_definitions() {
        let mut r = Ranking::default();
        r.add(&[2, 0, 1], &[0]);
        r.add(&[5, 6, 7, 8, 9, 10], &[9, 1]);
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
}
