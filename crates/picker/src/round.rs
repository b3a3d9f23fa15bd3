//! Rounds: from validated scores to what one boundary adds, with generations so a round that
//! was overtaken commits nothing.
//!
//! A round is opened with the generation of the configuration and branch it was started under;
//! any settings or allowlist save, disable, mode change or branch change bumps the caller's
//! generation, and [`Round::finish`] then refuses to commit. A failed or cancelled round adds
//! nothing; `failMode: open` adds the remaining candidates after a model failure, but never
//! after a configuration error or a cancellation.

use crate::candidates::{Candidate, CandidateKey};
use pcd_model::FailMode;

/// What became of one candidate in a round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// Scored at or above the threshold and within the cap: made available.
    Added {
        /// Its score.
        score: f64,
    },
    /// Scored below the threshold.
    BelowThreshold {
        /// Its score.
        score: f64,
    },
    /// Scored at or above the threshold but the cap was reached by better ones.
    CutByCap {
        /// Its score.
        score: f64,
    },
    /// Its answer was missing or invalid: never selected.
    Dropped,
}

impl Outcome {
    /// The score, if the candidate has a valid one.
    pub fn score(&self) -> Option<f64> {
        match *self {
            Outcome::Added { score }
            | Outcome::BelowThreshold { score }
            | Outcome::CutByCap { score } => Some(score),
            Outcome::Dropped => None,
        }
    }
}

/// Applies the inclusive `threshold` and the `cap` to validated scores (`None` = dropped).
///
/// The best scores win; equal scores keep candidate (inventory) order, whatever order the
/// batches finished in, because the order comes from the candidates' positions, not arrival.
pub fn select(scores: &[Option<f64>], threshold: f64, cap: usize) -> Vec<Outcome> {
    let mut order: Vec<usize> = (0..scores.len())
        .filter(|&i| scores[i].is_some_and(|s| s >= threshold))
        .collect();
    order.sort_by(|&a, &b| {
        let (sa, sb) = (scores[a].unwrap_or(0.0), scores[b].unwrap_or(0.0));
        sb.total_cmp(&sa).then(a.cmp(&b))
    });
    let mut out: Vec<Outcome> = scores
        .iter()
        .map(|s| match *s {
            Some(score) => Outcome::BelowThreshold { score },
            None => Outcome::Dropped,
        })
        .collect();
    for (rank, i) in order.into_iter().enumerate() {
        let score = scores[i].unwrap_or(0.0);
        out[i] = if rank < cap {
            Outcome::Added { score }
        } else {
            Outcome::CutByCap { score }
        };
    }
    out
}

/// Why a round ended without scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RoundFailure {
    /// The decision model failed.
    #[error("the decision model failed")]
    Model,
    /// The decision model did not answer before the deadline.
    #[error("the decision model did not answer in time")]
    TimedOut,
    /// The decision model is misconfigured (no key, bad URL, unknown model).
    #[error("the decision model is not configured correctly")]
    Configuration,
    /// The run was cancelled.
    #[error("the round was cancelled")]
    Cancelled,
}

/// A score rounded to 3 decimals, as it is recorded.
pub fn rounded(score: f64) -> f64 {
    (score * 1000.0).round() / 1000.0
}

/// The boundary a round ran at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boundary {
    /// A user prompt (including queued steering and follow-up text).
    Prompt,
    /// A completed tool round (`tool-round` cadence).
    ToolRound,
    /// A call to a tool nobody had scored yet.
    LazyCall,
}

impl Boundary {
    /// `prompt`, `tool-round` or `lazy-call`.
    pub fn as_str(self) -> &'static str {
        match self {
            Boundary::Prompt => "prompt",
            Boundary::ToolRound => "tool-round",
            Boundary::LazyCall => "lazy-call",
        }
    }
}

/// One considered candidate of a committed round.
#[derive(Debug, Clone, PartialEq)]
pub struct Considered {
    /// The tool or group.
    pub key: CandidateKey,
    /// Its score rounded to 3 decimals, or `None` when its answer was dropped (or the round
    /// failed open).
    pub score: Option<f64>,
}

/// What a committed round adds, for the facade to record as ledger events. Names and keys only.
#[derive(Debug, Clone, PartialEq)]
pub struct CommittedRound {
    /// The generation it ran under.
    pub generation: u64,
    /// Where it ran.
    pub boundary: Boundary,
    /// The inclusive threshold applied.
    pub threshold: f64,
    /// The cap applied.
    pub cap: usize,
    /// Tool names made available (`tools` mode, or every member of an added group).
    pub added_tools: Vec<String>,
    /// Groups made available as a whole (`mcp` mode).
    pub added_groups: Vec<pcd_model::GroupKey>,
    /// Every candidate the round considered, in candidate order.
    pub considered: Vec<Considered>,
    /// Whether the candidates were added by `failMode: open` after a model failure.
    pub failed_open: bool,
}

/// A round in flight.
#[derive(Debug, Clone)]
pub struct Round {
    generation: u64,
    boundary: Boundary,
    candidates: Vec<Candidate>,
    member_names: Vec<Vec<String>>,
}

/// Why a finished round commits nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotCommitted {
    /// A settings or allowlist save, disable, mode change or branch change overtook it.
    #[error("the round was superseded (generation {started} < {current})")]
    Superseded {
        /// The generation it started under.
        started: u64,
        /// The current generation.
        current: u64,
    },
    /// It failed or was cancelled and nothing may be added.
    #[error("{0}")]
    Failed(RoundFailure),
}

impl Round {
    /// Opens a round over `candidates` under `generation`. `member_names` gives, per candidate,
    /// the full tool names it stands for (the ledger records names, never descriptions).
    pub fn new(
        generation: u64,
        boundary: Boundary,
        candidates: Vec<Candidate>,
        member_names: Vec<Vec<String>>,
    ) -> Round {
        Round {
            generation,
            boundary,
            candidates,
            member_names,
        }
    }

    /// The candidates it asks about.
    pub fn candidates(&self) -> &[Candidate] {
        &self.candidates
    }

    /// Finishes the round at `current_generation` with the validated scores (one per candidate)
    /// or a failure. Superseded rounds and closed failures commit nothing.
    pub fn finish(
        self,
        current_generation: u64,
        result: Result<Vec<Option<f64>>, RoundFailure>,
        threshold: f64,
        cap: usize,
        fail_mode: FailMode,
    ) -> Result<CommittedRound, NotCommitted> {
        if current_generation != self.generation {
            return Err(NotCommitted::Superseded {
                started: self.generation,
                current: current_generation,
            });
        }
        let (outcomes, failed_open) = match result {
            Ok(scores) => {
                assert_eq!(
                    scores.len(),
                    self.candidates.len(),
                    "one score per candidate"
                );
                (select(&scores, threshold, cap), false)
            }
            Err(RoundFailure::Model | RoundFailure::TimedOut) if fail_mode == FailMode::Open => (
                vec![Outcome::Added { score: f64::NAN }; self.candidates.len()],
                true,
            ),
            Err(failure) => return Err(NotCommitted::Failed(failure)),
        };
        let mut round = CommittedRound {
            generation: self.generation,
            boundary: self.boundary,
            threshold,
            cap,
            added_tools: Vec::new(),
            added_groups: Vec::new(),
            considered: Vec::with_capacity(self.candidates.len()),
            failed_open,
        };
        for ((candidate, outcome), names) in self
            .candidates
            .iter()
            .zip(&outcomes)
            .zip(&self.member_names)
        {
            round.considered.push(Considered {
                key: candidate.key.clone(),
                score: outcome.score().filter(|s| s.is_finite()).map(rounded),
            });
            if matches!(outcome, Outcome::Added { .. }) {
                if let CandidateKey::Group(key) = &candidate.key {
                    round.added_groups.push(key.clone());
                }
                round.added_tools.extend(names.iter().cloned());
            }
        }
        Ok(round)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(name: &str) -> Candidate {
        Candidate::tool(name, "", 0)
    }

    fn round(generation: u64, names: &[&str]) -> Round {
        Round::new(
            generation,
            Boundary::Prompt,
            names.iter().map(|n| cand(n)).collect(),
            names.iter().map(|n| vec![(*n).to_owned()]).collect(),
        )
    }

    #[test]
    fn threshold_is_inclusive_and_ties_keep_candidate_order() {
        let out = select(
            &[Some(0.5), Some(0.625), Some(0.9), Some(0.625), None],
            0.625,
            2,
        );
        assert_eq!(out[0], Outcome::BelowThreshold { score: 0.5 });
        assert_eq!(out[2], Outcome::Added { score: 0.9 });
        assert_eq!(out[1], Outcome::Added { score: 0.625 });
        assert_eq!(out[3], Outcome::CutByCap { score: 0.625 });
        assert_eq!(out[4], Outcome::Dropped);
    }

    #[test]
    fn a_superseded_round_commits_nothing() {
        let r = round(3, &["a", "b"]);
        let err = r
            .finish(4, Ok(vec![Some(1.0), Some(1.0)]), 0.5, 6, FailMode::Open)
            .unwrap_err();
        assert_eq!(
            err,
            NotCommitted::Superseded {
                started: 3,
                current: 4
            }
        );
    }

    #[test]
    fn failures_add_nothing_unless_fail_open_after_a_model_failure() {
        for failure in [
            RoundFailure::Model,
            RoundFailure::Configuration,
            RoundFailure::Cancelled,
        ] {
            let r = round(1, &["a"]);
            assert_eq!(
                r.finish(1, Err(failure), 0.5, 6, FailMode::Closed)
                    .unwrap_err(),
                NotCommitted::Failed(failure)
            );
        }
        for failure in [RoundFailure::Configuration, RoundFailure::Cancelled] {
            let r = round(1, &["a"]);
            assert!(r.finish(1, Err(failure), 0.5, 6, FailMode::Open).is_err());
        }
        let r = round(1, &["a", "b"]);
        let c = r
            .finish(1, Err(RoundFailure::Model), 0.5, 6, FailMode::Open)
            .unwrap();
        assert!(c.failed_open);
        assert_eq!(c.added_tools, ["a", "b"]);
        assert!(c.considered.iter().all(|x| x.score.is_none()));
    }

    #[test]
    fn a_committed_round_records_rounded_scores_and_the_cap() {
        let r = round(7, &["a", "b", "c"]);
        let c = r
            .finish(
                7,
                Ok(vec![Some(0.91234), Some(0.2), Some(0.8)]),
                0.625,
                1,
                FailMode::Closed,
            )
            .unwrap();
        assert_eq!(c.generation, 7);
        assert_eq!(c.added_tools, ["a"]);
        assert_eq!(c.considered[0].score, Some(0.912));
        assert_eq!(c.cap, 1);
        assert_eq!(c.threshold, 0.625);
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    fn score() -> impl Strategy<Value = Option<f64>> {
        // Few distinct values, so ties are common.
        prop_oneof![Just(None), (0u8..=8).prop_map(|x| Some(f64::from(x) / 8.0))]
    }

    proptest! {
        #[test]
        fn selection_obeys_threshold_cap_and_stable_ties(
            scores in proptest::collection::vec(score(), 0..40),
            threshold in (0u8..=8).prop_map(|x| f64::from(x) / 8.0),
            cap in 0usize..8,
        ) {
            let out = select(&scores, threshold, cap);
            prop_assert_eq!(out.len(), scores.len());
            let added: Vec<usize> = (0..out.len()).filter(|&i| matches!(out[i], Outcome::Added { .. })).collect();
            prop_assert!(added.len() <= cap);
            for (i, o) in out.iter().enumerate() {
                match *o {
                    Outcome::Dropped => prop_assert!(scores[i].is_none()),
                    Outcome::Added { score } => prop_assert!(score >= threshold),
                    Outcome::BelowThreshold { score } => prop_assert!(score < threshold),
                    Outcome::CutByCap { score } => {
                        prop_assert!(score >= threshold);
                        prop_assert_eq!(added.len(), cap);
                        // Nothing added scores lower, and an equal score was added only if it
                        // comes earlier in candidate order.
                        for &a in &added {
                            let sa = out[a].score().unwrap();
                            prop_assert!(sa > score || (sa == score && a < i));
                        }
                    }
                }
            }
        }
    }
}
