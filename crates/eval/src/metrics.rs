//! What an evaluation measures: the ranking, the selection at the defaults and at each threshold
//! of the sweep, the reliability of the scores, and the everyday set's needs and exposure.

use crate::peer;
use crate::set::*;
use pcd_model::{Allowlists, Classifier, DecisionSettings, Mode};
use pcd_picker::candidates::{candidates, Available, Candidate};
use pcd_picker::embedded::{self, Calibration, FieldWeights};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::time::Instant;

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
    pub semantic: Option<std::sync::Arc<context_decisions::semantic::Semantic>>,
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

/// The `slice` of the everyday set's prompts that share no content word with the tools they
/// need.
pub const PARAPHRASE_SLICE: &str = "paraphrase";

/// How many bins the reliability table has: [0, 0.1), [0.1, 0.2), … [0.9, 1.0].
pub(crate) const BINS: usize = 10;

#[derive(Debug, Default)]
pub(crate) struct Ranking {
    pub(crate) recall: [f64; 4],
    pub(crate) complete: [f64; 2],
    pub(crate) ndcg: f64,
    pub(crate) prompts: usize,
}

pub(crate) const KS: [usize; 4] = [1, 3, 5, 10];

/// How many of the candidates made available most often `eval` names.
pub const MOST_OFTEN_AVAILABLE: usize = 5;

impl Ranking {
    /// Adds one prompt: `needs` are groups of interchangeable candidates; a need is found at
    /// rank k when any of its candidates is among the first k, and counts once in nDCG.
    pub(crate) fn add(&mut self, ranked: &[usize], needs: &[Vec<usize>]) {
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

    pub(crate) fn json(&self, into: &mut Map<String, Value>) {
        let n = self.prompts.max(1) as f64;
        for (slot, k) in KS.iter().enumerate() {
            into.insert(format!("recall@{k}"), round(self.recall[slot] / n));
        }
        into.insert("complete@5".into(), round(self.complete[0] / n));
        into.insert("complete@10".into(), round(self.complete[1] / n));
        into.insert("ndcg@10".into(), round(self.ndcg / n));
    }
}

pub(crate) fn round(x: f64) -> Value {
    json!((x * 1000.0).round() / 1000.0)
}

/// Brier scores are small on large inventories (most pairs are plain negatives): five decimals.
pub(crate) fn round_brier(x: f64) -> Value {
    json!((x * 100_000.0).round() / 100_000.0)
}

pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Candidates sorted by score, best first, ties in inventory order, zero scores left out (as
/// the peer leaves out documents that match no term).
pub(crate) fn ranked(scores: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] > 0.0).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
}

/// One evaluated prompt, scored once: what selection at any threshold needs.
#[derive(Debug)]
pub(crate) struct Scored {
    /// From `queries.jsonl` (else an irrelevance prompt).
    pub(crate) labelled: bool,
    /// Its needs as candidates (distinct sets; needs naming no candidate left out).
    pub(crate) needs: Vec<Vec<usize>>,
    /// Whether the line said its needs.
    pub(crate) has_needs: bool,
    pub(crate) topics: Option<Vec<String>>,
    pub(crate) kind: Option<PromptKind>,
    /// Whether it belongs to the paraphrase slice (no content word shared with its tools).
    pub(crate) paraphrase: bool,
    /// The best candidates, best first (ties in inventory order, zero scores last), as many as
    /// the cap: a selection at threshold t is the prefix scoring at least t.
    pub(crate) top: Vec<(usize, f64)>,
}

impl Scored {
    pub(crate) fn relevant(&self, candidate: usize) -> bool {
        self.needs.iter().any(|need| need.contains(&candidate))
    }

    pub(crate) fn chosen(&self, threshold: f64) -> impl Iterator<Item = usize> + '_ {
        self.top
            .iter()
            .take_while(move |(_, s)| *s >= threshold)
            .map(|(c, _)| *c)
    }
}

/// The candidates made available most often at `threshold`, over every scored prompt (labelled
/// and irrelevance alike), most first (ties in candidate order), at most
/// [`MOST_OFTEN_AVAILABLE`], each with how many prompts made it available: where a description
/// written to match every request, or a tool near every prompt, shows up.
pub(crate) fn most_often_available(
    scored: &[Scored],
    threshold: f64,
    count: usize,
) -> Vec<(usize, usize)> {
    let mut times = vec![0usize; count];
    for p in scored {
        for c in p.chosen(threshold) {
            times[c] += 1;
        }
    }
    let mut most: Vec<(usize, usize)> = times
        .into_iter()
        .enumerate()
        .filter(|&(_, n)| n > 0)
        .collect();
    most.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    most.truncate(MOST_OFTEN_AVAILABLE);
    most
}

/// What the candidates are, for the figures of a selection.
pub(crate) struct Universe<'a> {
    pub(crate) candidates: &'a [Candidate],
    pub(crate) total_chars: usize,
    /// Each candidate's topics: its tool's, or its members' (distinct); empty when none is said.
    pub(crate) topics: Vec<Vec<&'a str>>,
    /// Whether any candidate has a topic (without one, no prompt can expose an unrelated one).
    pub(crate) any_topic: bool,
}

/// The figures of one selection (one threshold) over every scored prompt.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct Selection {
    pub(crate) labelled: usize,
    pub(crate) needs: usize,
    pub(crate) needs_found: usize,
    pub(crate) selected: usize,
    pub(crate) selected_relevant: usize,
    pub(crate) withheld: f64,
    pub(crate) irrelevant: usize,
    pub(crate) irrelevant_nothing: usize,
    pub(crate) needs_prompts: usize,
    pub(crate) needs_prompts_met: usize,
    pub(crate) topic_prompts: usize,
    pub(crate) topic_prompts_unrelated: usize,
    pub(crate) coding: usize,
    pub(crate) coding_nothing: usize,
    pub(crate) near_miss: usize,
    pub(crate) near_miss_nothing: usize,
    /// Candidates exposed to irrelevance prompts, to coding-only ones and to near-miss ones.
    pub(crate) irrelevant_exposed: usize,
    pub(crate) coding_exposed: usize,
    pub(crate) near_miss_exposed: usize,
    /// Paraphrase-slice prompts with needs, and those whose every need is met.
    pub(crate) paraphrase_prompts: usize,
    pub(crate) paraphrase_met: usize,
}

impl Selection {
    pub(crate) fn at(scored: &[Scored], threshold: f64, universe: &Universe<'_>) -> Selection {
        let mut s = Selection::default();
        let mut chosen: Vec<usize> = Vec::new();
        for p in scored {
            chosen.clear();
            chosen.extend(p.chosen(threshold));
            if !p.labelled {
                s.irrelevant += 1;
                let nothing = usize::from(chosen.is_empty());
                s.irrelevant_nothing += nothing;
                s.irrelevant_exposed += chosen.len();
                match p.kind {
                    Some(PromptKind::Coding) => {
                        s.coding += 1;
                        s.coding_nothing += nothing;
                        s.coding_exposed += chosen.len();
                    }
                    Some(PromptKind::NearMiss) => {
                        s.near_miss += 1;
                        s.near_miss_nothing += nothing;
                        s.near_miss_exposed += chosen.len();
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
                if p.paraphrase {
                    s.paraphrase_prompts += 1;
                    s.paraphrase_met += usize::from(found == p.needs.len());
                }
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

    pub(crate) fn recall(&self) -> f64 {
        self.needs_found as f64 / self.needs.max(1) as f64
    }

    pub(crate) fn precision(&self) -> f64 {
        if self.selected == 0 {
            0.0
        } else {
            self.selected_relevant as f64 / self.selected as f64
        }
    }

    pub(crate) fn exposed_per_prompt(&self) -> f64 {
        self.selected as f64 / self.labelled.max(1) as f64
    }

    pub(crate) fn irrelevance_exposed_per_prompt(&self) -> Option<f64> {
        (self.irrelevant > 0).then(|| self.irrelevant_exposed as f64 / self.irrelevant as f64)
    }

    pub(crate) fn coding_exposed_per_prompt(&self) -> Option<f64> {
        (self.coding > 0).then(|| self.coding_exposed as f64 / self.coding as f64)
    }

    pub(crate) fn nothing_exposed_share(&self) -> Option<f64> {
        (self.irrelevant > 0).then(|| self.irrelevant_nothing as f64 / self.irrelevant as f64)
    }
}

/// The Brier score and the reliability table, accumulated pair by pair.
#[derive(Debug, Default)]
pub(crate) struct Reliability {
    pub(crate) pairs: u64,
    pub(crate) squared: f64,
    pub(crate) top10_pairs: u64,
    pub(crate) top10_squared: f64,
    /// Per bin: pairs, summed score, relevant pairs.
    pub(crate) bins: [(u64, f64, u64); BINS],
}

impl Reliability {
    /// Every candidate of one prompt: `scores` in candidate order, `order` best first (all
    /// candidates), `relevant` per candidate.
    pub(crate) fn add(&mut self, scores: &[f64], order: &[usize], relevant: &[bool]) {
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

    pub(crate) fn json(&self) -> Value {
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

/// The JSON of one run of sessions (`tool_rounds` after each prompt; 0: the `prompt` cadence).
fn sessions_json(f: &crate::sessions::SessionFigures, tool_rounds: usize) -> Value {
    json!({
        "sessions": f.sessions,
        "length": crate::sessions::SESSION_LENGTH,
        "seed": crate::sessions::SESSION_SEED,
        "tool_rounds_per_prompt": tool_rounds,
        "withheld_text_median": round(f.withheld_text_median()),
        "withheld_candidates_median": round(f.withheld_candidates_median()),
        "needs_met_share": round(f.needs_met_share()),
        "topical_prompts": f.topical,
        "exposed_per_session": round(f.exposed_per_session),
    })
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
    let mut prompt_vectors: HashMap<String, Option<Vec<Vec<f32>>>> = HashMap::new();
    // The need gate's probability per prompt: topical, coding-only, near-miss, other irrelevance.
    let mut gate: [Vec<f64>; 4] = Default::default();
    for (done, q) in queries.iter().chain(&irrelevance).enumerate() {
        let labelled = done < queries.len();
        let start = Instant::now();
        let prompts = semantic
            .and_then(|(model, _)| context_decisions::semantic::prompt_vectors(model, &q.prompt));
        let (scores, used) = context_decisions::semantic::scores_with_prompt(
            &index,
            semantic,
            &q.prompt,
            prompts.as_deref(),
            options.mode,
        );
        if let Some(p) = prompts.as_ref().and_then(|p| p.first()) {
            if let Some(need) = pcd_picker::semantic::need_probability(p) {
                let kind = match (labelled, q.kind) {
                    (true, _) => 0,
                    (false, Some(PromptKind::Coding)) => 1,
                    (false, Some(PromptKind::NearMiss)) => 2,
                    (false, None) => 3,
                };
                gate[kind].push(need);
            }
        }
        if semantic.is_some() {
            prompt_vectors.insert(q.prompt.clone(), prompts);
        }
        if used != context_decisions::semantic::ScorerUsed::Fused {
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
            paraphrase: q.slice.as_deref() == Some(PARAPHRASE_SLICE),
            top: full.iter().take(cap).map(|&c| (c, scores[c])).collect(),
        });
        progress(done + 1, total);
    }
    times.sort_by(f64::total_cmp);
    peer_times.sort_by(f64::total_cmp);
    latest_times.sort_by(f64::total_cmp);

    let mut out = Map::new();
    out.insert(
        "scorer".into(),
        json!(if semantic.is_some() && lexical_rounds == 0 {
            context_decisions::semantic::ScorerUsed::Fused.name()
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
    if let Some(exposed) = at_default.irrelevance_exposed_per_prompt() {
        out.insert("irrelevance_exposed_per_prompt".into(), round(exposed));
    }
    let most = most_often_available(&scored, threshold, cands.len());
    out.insert(
        "most_often_available".into(),
        Value::Array(
            most.iter()
                .map(|&(c, n)| {
                    json!({
                        "candidate": cands[c].key.as_str(),
                        "prompts": n,
                        "share": round(n as f64 / scored.len().max(1) as f64),
                    })
                })
                .collect(),
        ),
    );
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
    if let Some(g) = need_gate_json(&gate) {
        out.insert("need_gate".into(), g);
    }
    let coding = crate::sessions::coding_prompts(&irrelevance);
    let plan = crate::sessions::draw_sessions(
        &queries,
        &coding,
        crate::sessions::SESSIONS,
        crate::sessions::SESSION_LENGTH,
        crate::sessions::SESSION_SEED,
    );
    let session_inputs = crate::sessions::SessionInputs {
        tools: &set.tools,
        mode: options.mode,
        decision: &options.decision,
        weights: options.weights,
        calibration: options.calibration,
        semantic: semantic.map(|(model, _)| model),
        queries: &queries,
        coding: &coding,
        prompt_vectors: &prompt_vectors,
    };
    let sessions_at = |t: f64| crate::sessions::run_sessions(&session_inputs, &plan, t, 0);
    if !plan.is_empty() {
        out.insert("sessions".into(), sessions_json(&sessions_at(threshold), 0));
        let rounds = crate::sessions::TOOL_ROUNDS_PER_PROMPT;
        let f = crate::sessions::run_sessions(&session_inputs, &plan, threshold, rounds);
        out.insert("sessions_tool_round".into(), sessions_json(&f, rounds));
    }
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
                // The main figures' own shares, so a row at the threshold in use says the same.
                let everyday = everyday_json(&s);
                for key in ["needs_met_share", "paraphrase_needs_met_share"] {
                    if let Some(share) = everyday.get(key) {
                        row[key] = share.clone();
                    }
                }
                if let Some(share) = s.nothing_exposed_share() {
                    row["nothing_exposed_share"] = round(share);
                }
                if let Some(exposed) = s.coding_exposed_per_prompt() {
                    row["coding_exposed_per_prompt"] = round(exposed);
                }
                if !plan.is_empty() {
                    let f = sessions_at(t);
                    row["session_withheld_text_median"] = round(f.withheld_text_median());
                    row["session_needs_met_share"] = round(f.needs_met_share());
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
pub(crate) fn everyday_json(s: &Selection) -> Map<String, Value> {
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
    share(
        "paraphrase_needs_met_share",
        "paraphrase_prompts",
        s.paraphrase_met,
        s.paraphrase_prompts,
    );
    if let Some(exposed) = s.coding_exposed_per_prompt() {
        out.insert("coding_exposed_per_prompt".into(), round(exposed));
    }
    if s.near_miss > 0 {
        out.insert(
            "near_miss_exposed_per_prompt".into(),
            round(s.near_miss_exposed as f64 / s.near_miss as f64),
        );
    }
    out
}

pub(crate) fn round_ms(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The need gate's accuracy ("does this prompt need anything outside the code?"): the AUC of its
/// probability between topical prompts and the irrelevance prompts of a kind (coding-only when the
/// set says kinds, else every irrelevance prompt), and the share of each kind it passes (0.5 or
/// more). `None` without the model or without both kinds.
pub(crate) fn need_gate_json(gate: &[Vec<f64>; 4]) -> Option<Value> {
    let [topical, coding, near_miss, other] = gate;
    let negatives = if coding.is_empty() { other } else { coding };
    if topical.is_empty() || negatives.is_empty() {
        return None;
    }
    let passed = |v: &[f64]| {
        (!v.is_empty())
            .then(|| round(v.iter().filter(|&&p| p >= 0.5).count() as f64 / v.len() as f64))
    };
    Some(json!({
        "auc": round(auc(topical, negatives)),
        "passed_topical": passed(topical),
        "passed_coding": passed(coding),
        "passed_near_miss": passed(near_miss),
        "passed_other_irrelevance": passed(other),
    }))
}

/// The probability that a random positive scores above a random negative (ties count half).
pub(crate) fn auc(positives: &[f64], negatives: &[f64]) -> f64 {
    let mut wins = 0.0;
    for &p in positives {
        for &n in negatives {
            wins += if p > n {
                1.0
            } else if p == n {
                0.5
            } else {
                0.0
            };
        }
    }
    wins / (positives.len() * negatives.len()).max(1) as f64
}
