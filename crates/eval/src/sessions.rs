//! Session runs: what a whole session costs, not only a prompt. Availability is additive per
//! branch, so a policy that exposes one stray tool per prompt opens most of the inventory within
//! a session. A run draws sequences of [`SESSION_LENGTH`] prompts from the set with a fixed seed,
//! the way a coding session goes (most prompts about the code in front of the model, the others
//! about one or two topics), and plays each through the decision as a `Session` does: each prompt
//! scores only the candidates the branch does not have yet (fewer than `minimumCandidates` of
//! them: they all stay available, unscored), the threshold and cap select, and the round is folded
//! into a real [`BranchState`] (the ledger's fold), whose availability the next prompt starts
//! from. At the end of each session it reports the share of the inventory's definition text
//! (names, descriptions and parameter schemas, in bytes) and of its candidates still withheld, and
//! whether each topical prompt's needs were available once its round was done.

use crate::set::{PromptKind, Query};
use context_decisions::semantic::Semantic;
use pcd_ledger::{Basis, Boundary, BranchState, Round};
use pcd_model::{Allowlists, Classifier, DecisionSettings, GroupKey, Mode, ToolInfo};
use pcd_picker::candidates::Candidate;
use pcd_picker::candidates::{candidates, Available, CandidateKey};
use pcd_picker::embedded::{self, Calibration, FieldWeights};
use pcd_picker::round::{select, Outcome};
use std::collections::HashMap;

/// How many prompts a session has.
pub const SESSION_LENGTH: usize = 20;
/// How many sessions a run draws.
pub const SESSIONS: usize = 40;
/// The seed of the draw: the same sessions on every machine and release.
pub const SESSION_SEED: u64 = 0x5EED_0031;
/// How many completed tool rounds follow each prompt in the `tool-round` cadence's session runs:
/// an agent answering a prompt reads, edits and runs something, a few rounds each time.
pub const TOOL_ROUNDS_PER_PROMPT: usize = 3;

/// One prompt of a drawn session: an index into the labelled queries or the coding prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionPrompt {
    /// A labelled query (it needs something outside the code).
    Topical(usize),
    /// A coding-only prompt.
    Coding(usize),
}

/// SplitMix64: a small, well-known generator; the draw only needs to be fixed, not strong.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A whole number in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A query's topic for the draw: its first `topic`, else its first labelled tool.
fn topic_of(q: &Query) -> Option<&str> {
    q.topics
        .as_ref()
        .and_then(|t| t.first())
        .or_else(|| q.relevant.first())
        .map(String::as_str)
}

/// Draws `count` sessions of `length` prompts from `queries` (topical) and `coding` (the coding-only
/// prompts), with `seed`: each session takes one or two topics, three to six prompts of them,
/// and coding prompts for the rest, in a shuffled order. Empty when either pool is.
pub fn draw_sessions(
    queries: &[Query],
    coding: &[Query],
    count: usize,
    length: usize,
    seed: u64,
) -> Vec<Vec<SessionPrompt>> {
    let mut topics: Vec<&str> = queries.iter().filter_map(topic_of).collect();
    topics.sort_unstable();
    topics.dedup();
    if topics.is_empty() || coding.is_empty() || length == 0 {
        return Vec::new();
    }
    let mut draw = Draw(seed);
    (0..count)
        .map(|_| {
            let mut chosen = vec![topics[draw.below(topics.len())]];
            if draw.below(2) == 1 && topics.len() > 1 {
                let second = loop {
                    let t = topics[draw.below(topics.len())];
                    if t != chosen[0] {
                        break t;
                    }
                };
                chosen.push(second);
            }
            let pool: Vec<usize> = (0..queries.len())
                .filter(|&i| topic_of(&queries[i]).is_some_and(|t| chosen.contains(&t)))
                .collect();
            let topical = (3 + draw.below(4)).min(length);
            let mut session: Vec<SessionPrompt> = Vec::with_capacity(length);
            let mut left = pool.clone();
            for _ in 0..topical {
                if left.is_empty() {
                    left = pool.clone();
                }
                let i = left.swap_remove(draw.below(left.len()));
                session.push(SessionPrompt::Topical(i));
            }
            while session.len() < length {
                session.push(SessionPrompt::Coding(draw.below(coding.len())));
            }
            // Fisher-Yates.
            for i in (1..session.len()).rev() {
                session.swap(i, draw.below(i + 1));
            }
            session
        })
        .collect()
}

/// What the session runs need of an evaluation.
pub struct SessionInputs<'a> {
    /// The set's tools.
    pub tools: &'a [ToolInfo],
    /// `tools` or `mcp`.
    pub mode: Mode,
    /// The threshold, caps and minimum candidates.
    pub decision: &'a DecisionSettings,
    /// The lexical scorer's weights and calibration.
    pub weights: FieldWeights,
    /// See [`SessionInputs::weights`].
    pub calibration: Calibration,
    /// The semantic model, when the prompts are scored fused.
    pub semantic: Option<&'a Semantic>,
    /// The labelled queries of the split.
    pub queries: &'a [Query],
    /// The coding-only prompts of the split.
    pub coding: &'a [Query],
    /// Each prompt's vectors, computed once per run (`None`: the model failed on it).
    pub prompt_vectors: &'a HashMap<String, Option<Vec<Vec<f32>>>>,
}

/// The figures of one run of sessions at one threshold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionFigures {
    /// How many sessions.
    pub sessions: usize,
    /// Per session, the share of the inventory's definition text still withheld at its end.
    pub withheld_text: Vec<f64>,
    /// Per session, the share of its candidates (tools, or groups in `mcp` mode) still withheld
    /// at its end.
    pub withheld_candidates: Vec<f64>,
    /// Topical prompts played, and those whose every need was available after their round.
    pub topical: usize,
    /// See [`SessionFigures::topical`].
    pub topical_met: usize,
    /// Candidates made available per session, on average.
    pub exposed_per_session: f64,
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

impl SessionFigures {
    /// The median share of definition text withheld at a session's end.
    pub fn withheld_text_median(&self) -> f64 {
        median(&self.withheld_text)
    }

    /// The median share of candidates withheld at a session's end.
    pub fn withheld_candidates_median(&self) -> f64 {
        median(&self.withheld_candidates)
    }

    /// The share of topical prompts whose every need was available after their round.
    pub fn needs_met_share(&self) -> f64 {
        self.topical_met as f64 / self.topical.max(1) as f64
    }
}

/// Which tools the branch has: available by name, or through an available group.
fn available(state: &BranchState) -> Available {
    Available {
        tools: state.available_tools().map(str::to_owned).collect(),
        groups: state
            .available_groups()
            .filter_map(GroupKey::from_canonical)
            .collect(),
    }
}

/// Plays every session of `plan` at `threshold` (see the module documentation), in the `prompt`
/// cadence when `tool_rounds` is 0. Otherwise in the `tool-round` cadence: each prompt's round is
/// followed by `tool_rounds` completed tool rounds, each adding, as a `Session`'s top-up does
/// with no model call, at most the cap of the prompt's candidates that scored at or above the
/// threshold and are not available yet; a topical prompt's needs are checked after its last one.
pub fn run_sessions(
    inputs: &SessionInputs<'_>,
    plan: &[Vec<SessionPrompt>],
    threshold: f64,
    tool_rounds: usize,
) -> SessionFigures {
    let classifier = Classifier::default();
    let allowlists = Allowlists::default();
    let cap = match inputs.mode {
        Mode::Tools => inputs.decision.max_new_tools,
        Mode::Mcp => inputs.decision.max_new_groups,
    } as usize;
    let all = candidates(
        inputs.tools,
        &classifier,
        inputs.mode,
        &allowlists,
        &Available::default(),
    );
    let total_chars: usize = all.candidates.iter().map(|c| c.definition_chars).sum();
    // Each tool's candidate (itself, or its group): a need is met when that candidate is open.
    let owner: HashMap<&str, &Candidate> = all
        .candidates
        .iter()
        .flat_map(|c| {
            c.members
                .iter()
                .map(move |&t| (inputs.tools[t].name.as_str(), c))
        })
        .collect();
    let mut figures = SessionFigures {
        sessions: plan.len(),
        ..SessionFigures::default()
    };
    let mut exposed = 0usize;
    for session in plan {
        let mut state = BranchState::new();
        for (turn, prompt) in session.iter().enumerate() {
            let query = match *prompt {
                SessionPrompt::Topical(i) => &inputs.queries[i],
                SessionPrompt::Coding(i) => &inputs.coding[i],
            };
            let open = available(&state);
            let set = candidates(inputs.tools, &classifier, inputs.mode, &allowlists, &open);
            let cands = &set.candidates;
            let mut round = Round::new(
                format!("s{turn}"),
                inputs.mode,
                Boundary::Prompt,
                Basis::Scored,
            );
            let mut scores: Vec<Option<f64>> = Vec::new();
            let added: Vec<usize> = if cands.is_empty() {
                Vec::new()
            } else if cands.len() < inputs.decision.minimum_candidates_for(inputs.mode) as usize {
                round.basis = Basis::Unscored;
                (0..cands.len()).collect()
            } else {
                let index = embedded::index_for_with(
                    inputs.tools,
                    cands,
                    inputs.weights,
                    inputs.calibration,
                );
                let vectors = inputs
                    .semantic
                    .and_then(|s| pcd_picker::semantic::candidate_vectors(s, cands));
                let semantic = inputs.semantic.zip(vectors.as_deref());
                let prompts = inputs
                    .prompt_vectors
                    .get(&query.prompt)
                    .and_then(Option::as_deref);
                let (fresh, _) = context_decisions::semantic::scores_with_prompt(
                    &index,
                    semantic,
                    &query.prompt,
                    prompts,
                    inputs.mode,
                );
                scores = fresh.into_iter().map(Some).collect();
                added_by(&scores, threshold, cap)
            };
            round.considered = cands.iter().map(|c| c.key.as_str().to_owned()).collect();
            add_to(&mut round, cands, &added);
            exposed += added.len();
            state.apply_round(&round, None, None);
            // The tool rounds' top-ups: from the prompt's own scores, never a new call, and only
            // what is not available yet (the prompt's candidates were all withheld before it).
            let mut more = added;
            for tool_round in 0..tool_rounds {
                for &i in &more {
                    // An unscored round has no scores to top up from.
                    if let Some(score) = scores.get_mut(i) {
                        *score = None;
                    }
                }
                more = added_by(&scores, threshold, cap);
                if more.is_empty() {
                    break;
                }
                let mut top_up = Round::new(
                    format!("s{turn}t{tool_round}"),
                    inputs.mode,
                    Boundary::ToolRound,
                    Basis::Scored,
                );
                add_to(&mut top_up, cands, &more);
                exposed += more.len();
                state.apply_round(&top_up, None, None);
            }
            if query.kind.is_none() && !query.needs.is_empty() {
                figures.topical += 1;
                let now = available(&state);
                let met = query.needs.iter().all(|need| {
                    need.iter()
                        .any(|name| owner.get(name.as_str()).is_some_and(|c| is_open(c, &now)))
                });
                figures.topical_met += usize::from(met);
            }
        }
        let now = available(&state);
        let mut withheld_chars = 0usize;
        let mut withheld = 0usize;
        for c in &all.candidates {
            if !is_open(c, &now) {
                withheld_chars += c.definition_chars;
                withheld += 1;
            }
        }
        figures
            .withheld_text
            .push(withheld_chars as f64 / total_chars.max(1) as f64);
        figures
            .withheld_candidates
            .push(withheld as f64 / all.candidates.len().max(1) as f64);
    }
    figures.exposed_per_session = exposed as f64 / plan.len().max(1) as f64;
    figures
}

/// The candidates `select` adds from `scores` at `threshold` within `cap`.
fn added_by(scores: &[Option<f64>], threshold: f64, cap: usize) -> Vec<usize> {
    select(scores, threshold, cap)
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o, Outcome::Added { .. }))
        .map(|(i, _)| i)
        .collect()
}

/// Records `added` of `cands` in `round`.
fn add_to(round: &mut Round, cands: &[Candidate], added: &[usize]) {
    for &i in added {
        match &cands[i].key {
            CandidateKey::Tool(name) => round.tools.push(name.clone()),
            CandidateKey::Group(key) => round.groups.push(key.clone()),
        }
    }
}

/// Whether a candidate of the full set is available on the branch.
fn is_open(candidate: &Candidate, now: &Available) -> bool {
    match &candidate.key {
        CandidateKey::Tool(name) => now.tools.contains(name),
        CandidateKey::Group(key) => now.groups.contains(key),
    }
}

/// The coding-only prompts among `irrelevance`.
pub fn coding_prompts(irrelevance: &[Query]) -> Vec<Query> {
    irrelevance
        .iter()
        .filter(|q| q.kind == Some(PromptKind::Coding))
        .cloned()
        .collect()
}
