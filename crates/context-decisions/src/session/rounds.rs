//! From the picker's rounds to ledger rounds: the facade's mapping, plus the two rounds the
//! picker has no model call for (unscored, and the `tool-round` top-up from cached scores), and
//! committing a round to the branch (its entries, and the scorer note after an embedded one).
//! No I/O.

use super::embedding::scorer_note;
use super::Effect;
use pcd_ledger::{
    encode_round, is_recordable_name, Basis, Boundary, BranchState, FirstPromptRef, Round, Score,
};
use pcd_model::{FailMode, Mode, ToolInfo};
use pcd_picker::candidates::{Candidate, CandidateKey, CandidateSet};
use pcd_picker::embedded;
use pcd_picker::round::{
    self as picker_round, CommittedRound, NotCommitted, Outcome, RoundFailure,
};
use pcd_ui_text::{round_problem, LastRound, RoundProblem};

/// Scores every candidate (formed from `tools`) against `prompt` with the embedded scorer.
pub(crate) fn embedded_scores(
    tools: &[ToolInfo],
    candidates: &[Candidate],
    prompt: &str,
) -> Vec<f64> {
    embedded::index_for(tools, candidates).scores(prompt)
}

/// The embedded scorer's index over the candidates it last scored, kept while they and the
/// inventory stay the same. Building it reads every candidate's text (about half a millisecond
/// for 157 tools, 25 ms for 10,000), and most prompts of a session make nothing new available,
/// so their candidates are the previous prompt's: each such prompt is scored without building
/// it again. The index is a function of the inventory and the candidates alone, so a prompt's
/// scores are the same whether it was kept or built.
#[derive(Debug, Default)]
pub(crate) struct LexicalIndex {
    /// The inventory's generation ([`Session`](super::Session)'s count of inventory changes)
    /// and the candidates the index was built over; `None` before the first build.
    built_for: Option<(u64, Vec<Candidate>)>,
    index: Option<embedded::EmbeddedIndex>,
    /// How many times it was built (for the tests).
    builds: u64,
}

impl LexicalIndex {
    /// [`embedded_scores`], with the index kept from the last call when `inventory` (the
    /// inventory's generation) and `candidates` are the same as then.
    pub(crate) fn scores(
        &mut self,
        inventory: u64,
        tools: &[ToolInfo],
        candidates: &[Candidate],
        prompt: &str,
    ) -> Vec<f64> {
        let kept = matches!(
            (&self.built_for, &self.index),
            (Some((generation, built)), Some(_)) if *generation == inventory && built == candidates
        );
        if !kept {
            self.index = None;
            self.built_for = Some((inventory, candidates.to_vec()));
        }
        let builds = &mut self.builds;
        self.index
            .get_or_insert_with(|| {
                *builds += 1;
                embedded::index_for(tools, candidates)
            })
            .scores(prompt)
    }
}

/// Runs the picker's round over `set` with `scores` (one per candidate, `None` for an answer that
/// was dropped) or a failure, and maps what it commits to a ledger round. `Err` when the picker
/// commits nothing (superseded, or failed closed).
#[allow(clippy::too_many_arguments)]
pub(crate) fn scored_round(
    id: String,
    mode: Mode,
    boundary: Boundary,
    set: CandidateSet,
    scores: Result<Vec<Option<f64>>, RoundFailure>,
    generation: u64,
    current_generation: u64,
    threshold: f64,
    cap: usize,
    fail_mode: FailMode,
) -> Result<Round, NotCommitted> {
    let picker_boundary = match boundary {
        Boundary::ToolRound => picker_round::Boundary::ToolRound,
        Boundary::FirstCall => picker_round::Boundary::LazyCall,
        _ => picker_round::Boundary::Prompt,
    };
    let members = set.candidates.iter().map(|c| c.names.clone()).collect();
    // The set is the round's: its candidates move into it, uncopied.
    let round = picker_round::Round::new(generation, picker_boundary, set.candidates, members);
    // A score outside [0, 1] (or not a number) is dropped, never selected.
    let scores = scores.map(|scores| {
        scores
            .into_iter()
            .map(|s| s.filter(|s| s.is_finite() && (0.0..=1.0).contains(s)))
            .collect()
    });
    let committed = round.finish(current_generation, scores, threshold, cap, fail_mode)?;
    Ok(to_ledger(id, mode, boundary, &committed))
}

fn to_ledger(id: String, mode: Mode, boundary: Boundary, committed: &CommittedRound) -> Round {
    let basis = if committed.failed_open {
        Basis::FailOpen
    } else {
        Basis::Scored
    };
    let mut round = Round::new(id, mode, boundary, basis);
    match mode {
        Mode::Tools => round.tools = committed.added_tools.clone(),
        Mode::Mcp => round.groups = committed.added_groups.clone(),
    }
    for c in &committed.considered {
        round.considered.push(c.key.as_str().to_owned());
        if let Some(score) = c.score.and_then(Score::from_f64) {
            round.scores.push((c.key.as_str().to_owned(), score));
        }
    }
    round.threshold = Score::from_f64(committed.threshold);
    round
}

fn add(round: &mut Round, key: &CandidateKey) {
    match key {
        CandidateKey::Tool(name) => round.tools.push(name.clone()),
        CandidateKey::Group(key) => round.groups.push(key.clone()),
    }
}

/// The round when nothing can be scored (no decision model, or fewer candidates than the
/// minimum): every candidate stays available, and that is recorded.
pub(crate) fn unscored_round(
    id: String,
    mode: Mode,
    boundary: Boundary,
    set: &CandidateSet,
) -> Round {
    let mut round = Round::new(id, mode, boundary, Basis::Unscored);
    for c in &set.candidates {
        add(&mut round, &c.key);
        round.considered.push(c.key.as_str().to_owned());
    }
    round
}

/// `tool-round` cadence: with no model call, adds at most `cap` cached candidates of the current
/// task that scored at or above the threshold but were cut by the cap before. Never one below
/// the threshold. `None` when there is nothing to add.
pub(crate) fn top_up_round(
    id: String,
    mode: Mode,
    branch: &BranchState,
    set: &CandidateSet,
    threshold: f64,
    cap: usize,
) -> Option<Round> {
    let cached: Vec<Option<f64>> = set
        .candidates
        .iter()
        .map(|c| branch.cached_score(mode, c.key.as_str()).map(Score::as_f64))
        .collect();
    let outcomes = picker_round::select(&cached, threshold, cap);
    let mut round = Round::new(id, mode, Boundary::ToolRound, Basis::Scored);
    for (c, outcome) in set.candidates.iter().zip(&outcomes) {
        if matches!(outcome, Outcome::Added { .. }) {
            add(&mut round, &c.key);
        }
    }
    if round.tools.is_empty() && round.groups.is_empty() {
        return None;
    }
    round.threshold = Score::from_f64(threshold);
    Some(round)
}

/// Marks `round` as the branch's first pick: the first user message after its entries.
pub(crate) fn mark_first_prompt(round: &mut Round) {
    round.first_prompt = Some(FirstPromptRef::NextUserMessage);
}

/// The cap of a round in `mode`.
pub(crate) fn cap(mode: Mode, max_new_tools: u32, max_new_groups: u32) -> usize {
    match mode {
        Mode::Tools => max_new_tools as usize,
        Mode::Mcp => max_new_groups as usize,
    }
}

impl super::Session {
    /// The embedded scorer's scores of `candidates` (formed from the inventory) against
    /// `prompt`, with the index kept while the inventory and the candidates stay the same.
    pub(super) fn lexical_scores(&mut self, candidates: &[Candidate], prompt: &str) -> Vec<f64> {
        let tools = self.inventory.as_deref().unwrap_or_default();
        self.lexical
            .scores(self.inventory_generation, tools, candidates, prompt)
    }

    /// Records `round` on the branch: its entries, the branch state, and what this process now
    /// owns; a round that cannot be encoded is a warning and records nothing.
    pub(super) fn commit(&mut self, round: Round, effects: &mut Vec<Effect>) {
        self.commit_scored_by(round, None, effects);
    }

    /// Records `round` as `commit` does and, when the embedded scorer decided it (`scorer`:
    /// `SCORER_FUSED` or `SCORER_LEXICAL`), says which scorer right after its entries
    /// ([`Effect::RecordScorer`]).
    pub(super) fn commit_scored_by(
        &mut self,
        mut round: Round,
        scorer: Option<&'static str>,
        effects: &mut Vec<Effect>,
    ) {
        let Some(branch) = self.branch.as_mut() else {
            return;
        };
        for list in [
            &mut round.tools,
            &mut round.allowlisted_tools,
            &mut round.considered,
        ] {
            list.retain(|name| is_recordable_name(name));
        }
        round.scores.retain(|(name, _)| is_recordable_name(name));
        match encode_round(&round) {
            Ok(parts) => {
                tracing::info!(
                    boundary = round.boundary.as_str(),
                    basis = round.basis.as_str(),
                    added = round.tools.len() + round.groups.len(),
                    allowlisted = round.allowlisted_tools.len() + round.allowlisted_groups.len(),
                    considered = round.considered.len(),
                    parts = parts.len(),
                    "round recorded"
                );
                if matches!(round.basis, Basis::Scored | Basis::FailOpen) {
                    self.last_round = Some(LastRound::Recorded {
                        added: round.tools.len() + round.groups.len(),
                        candidates: round.scores.len().max(round.considered.len()),
                    });
                }
                effects.extend(parts.into_iter().map(Effect::AppendEntry));
                if let Some(scorer) = scorer {
                    effects.push(Effect::RecordScorer(scorer_note(&round.id, scorer)));
                }
                branch.apply_round(&round, None, None);
                self.ownership.committed(
                    round
                        .tools
                        .iter()
                        .chain(&round.allowlisted_tools)
                        .map(String::as_str),
                    round
                        .groups
                        .iter()
                        .chain(&round.allowlisted_groups)
                        .map(|g| g.as_str()),
                );
                self.rebuild_index();
            }
            Err(_) => effects.push(Effect::Warn(round_problem(RoundProblem::Failed))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<ToolInfo> {
        vec![
            ToolInfo::new("weather_now", "Current weather for a city.", None),
            ToolInfo::new("calculator", "Evaluate an arithmetic expression.", None),
            ToolInfo::new("translate_text", "Translate text between languages.", None),
        ]
    }

    fn candidates(tools: &[ToolInfo]) -> Vec<Candidate> {
        tools
            .iter()
            .enumerate()
            .map(|(i, t)| Candidate::tool(&t.name, &t.description, i))
            .collect()
    }

    /// The index is kept while the inventory and the candidates stay the same, and a kept
    /// index scores exactly as a fresh one.
    #[test]
    fn the_lexical_index_is_kept_for_the_same_candidates_and_scores_alike() {
        let tools = tools();
        let all = candidates(&tools);
        let mut kept = LexicalIndex::default();
        for prompt in ["weather in Oslo", "translate this to French", "what is 2+2"] {
            assert_eq!(
                kept.scores(1, &tools, &all, prompt),
                embedded_scores(&tools, &all, prompt),
                "{prompt}"
            );
        }
        assert_eq!(kept.builds, 1);
    }

    /// Other candidates (a tool made available left them), or another inventory with the same
    /// candidates, build the index again: nothing is scored over what is no longer there.
    #[test]
    fn other_candidates_or_another_inventory_build_the_index_again() {
        let tools = tools();
        let all = candidates(&tools);
        let mut index = LexicalIndex::default();
        let prompt = "translate the weather report";
        index.scores(1, &tools, &all, prompt);
        let fewer = &all[1..];
        assert_eq!(
            index.scores(1, &tools, fewer, prompt),
            embedded_scores(&tools, fewer, prompt)
        );
        assert_eq!(index.builds, 2);
        let mut described = all.clone();
        described[0].description = "Translate a weather report between languages.".into();
        let scores = index.scores(1, &tools, &described, prompt);
        assert_eq!(scores, embedded_scores(&tools, &described, prompt));
        assert_ne!(scores, embedded_scores(&tools, &all, prompt));
        assert_eq!(index.builds, 3);
        index.scores(2, &tools, &described, prompt);
        assert_eq!(
            index.builds, 4,
            "a new inventory generation builds it again"
        );
        index.scores(2, &tools, &described, prompt);
        assert_eq!(index.builds, 4);
    }
}
