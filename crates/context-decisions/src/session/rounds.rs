//! Turning candidates and scores into a ledger round: the threshold, the cap, ties in inventory
//! order, and the cached-score top-up of `tool-round` cadence.
//!
//! This lives in the facade until the picker's round API lands; it uses the picker's candidates
//! and embedded scorer and hands the ledger a `Round`. It holds no I/O.

use pcd_ledger::{Basis, Boundary, BranchState, FirstPromptRef, Round, Score};
use pcd_model::Mode;
use pcd_picker::candidates::{Candidate, CandidateKey, CandidateSet};
use pcd_picker::embedded::{CandidateText, EmbeddedIndex};

/// The outcome of ranking: which candidates to add (indices into the candidate list, best first)
/// and every candidate's score.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Selection {
    pub(crate) chosen: Vec<usize>,
    pub(crate) scores: Vec<f64>,
}

/// Scores every candidate against `prompt` with the embedded scorer.
pub(crate) fn embedded_scores(candidates: &[Candidate], prompt: &str) -> Vec<f64> {
    let index = EmbeddedIndex::build(candidates.iter().map(|c| CandidateText {
        names: &c.names,
        label: &c.label,
        description: &c.description,
    }));
    index.scores(prompt)
}

/// Chooses what one round adds: candidates scoring at or above `threshold` (inclusive), best
/// first, ties in inventory order whatever order the scores came in, at most `cap`. A score that
/// is not a finite number in [0, 1] never selects its candidate.
pub(crate) fn select(scores: &[f64], threshold: f64, cap: usize) -> Selection {
    let mut ranked: Vec<usize> = (0..scores.len())
        .filter(|&i| valid(scores[i]) && scores[i] >= threshold)
        .collect();
    // A stable sort keeps inventory order among equal scores.
    ranked.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    ranked.truncate(cap);
    Selection {
        chosen: ranked,
        scores: scores.to_vec(),
    }
}

fn valid(score: f64) -> bool {
    score.is_finite() && (0.0..=1.0).contains(&score)
}

/// Adds the candidate's key to the round's available names.
fn add(round: &mut Round, key: &CandidateKey) {
    match key {
        CandidateKey::Tool(name) => round.tools.push(name.clone()),
        CandidateKey::Group(key) => round.groups.push(key.clone()),
    }
}

/// The round for a scored pick: the chosen candidates become available; every candidate is
/// recorded as considered with its score.
pub(crate) fn scored_round(
    id: String,
    mode: Mode,
    boundary: Boundary,
    set: &CandidateSet,
    selection: &Selection,
    threshold: f64,
) -> Round {
    let mut round = Round::new(id, mode, boundary, Basis::Scored);
    for &i in &selection.chosen {
        add(&mut round, &set.candidates[i].key);
    }
    for (c, &s) in set.candidates.iter().zip(&selection.scores) {
        round.considered.push(c.key.as_str().to_owned());
        if let Some(score) = Score::from_f64(s) {
            round.scores.push((c.key.as_str().to_owned(), score));
        }
    }
    round.threshold = Score::from_f64(threshold);
    round
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
    let cached: Vec<f64> = set
        .candidates
        .iter()
        .map(|c| {
            branch
                .cached_score(mode, c.key.as_str())
                .map_or(f64::NAN, Score::as_f64)
        })
        .collect();
    let selection = select(&cached, threshold, cap);
    if selection.chosen.is_empty() {
        return None;
    }
    let mut round = Round::new(id, mode, Boundary::ToolRound, Basis::Scored);
    for &i in &selection.chosen {
        add(&mut round, &set.candidates[i].key);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_is_inclusive_ties_keep_inventory_order_and_the_cap_cuts() {
        let scores = [0.5, 0.625, 0.9, 0.625, 0.9, f64::NAN, 1.5, -0.1, 0.7];
        let s = select(&scores, 0.625, 10);
        assert_eq!(s.chosen, vec![2, 4, 8, 1, 3]);
        let s = select(&scores, 0.625, 3);
        assert_eq!(s.chosen, vec![2, 4, 8]);
        let s = select(&scores, 0.625, 0);
        assert!(s.chosen.is_empty());
    }
}
