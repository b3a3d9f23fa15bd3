//! When to score what: the picker's cadence, as a pure planner the facade follows.
//!
//! The facade reports a boundary and what the branch knows (whether its first pick committed, and
//! that pick's prompt when it can be found again), and gets back a [`Step`]: pick from a prompt,
//! score late arrivals against the first prompt, top up from cached scores, or nothing. Whether
//! anything may be scored at all ([`may_score`]) is decided per inventory, not per boundary: with
//! no decision model, or fewer candidates than the minimum, nothing is scored at any boundary and
//! what arrives stays available. It never calls a model itself.

use pcd_model::Cadence;

/// A boundary the host reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// A user prompt, including queued steering and follow-up text.
    UserPrompt(&'a str),
    /// A run started by a custom message: it never supplies the first prompt and picks nothing.
    CustomMessageRun,
    /// A completed tool round.
    ToolRoundCompleted,
}

/// What to do at one boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// Nothing is picked here (tools nobody considered are scored lazily when called).
    Nothing,
    /// Score every candidate against `prompt`; `first` when it is the branch's first pick (in
    /// `initial` cadence the only full pick; a failed one is retried at the next prompt, because
    /// `first` stays true until a first pick commits).
    Pick {
        /// The bounded user text to score against.
        prompt: &'a str,
        /// Whether this is the branch's first pick.
        first: bool,
    },
    /// `initial` cadence after the first pick: score only candidates never considered on the
    /// branch, against the first prompt; `None` when that prompt cannot be found again (then
    /// nothing is scored: fail closed, the tools stay withheld and are blocked when called).
    LateArrivals {
        /// The first pick's prompt, if it can be found.
        first_prompt: Option<&'a str>,
    },
    /// `tool-round` cadence after a completed tool round: add, with no model call, at most the
    /// cap of cached candidates of the same task that scored at or above the threshold.
    TopUp,
}

/// Whether anything may be scored: a decision model is selected and the inventory has at least
/// `minimum` candidates in the current mode (counted whatever is already available, so the
/// answer is the same at every boundary of that inventory).
pub fn may_score(has_model: bool, inventory_candidates: usize, minimum: usize) -> bool {
    has_model && inventory_candidates >= minimum
}

/// Plans one boundary. `first_pick_done`: a first pick committed on the branch;
/// `first_prompt`: its prompt, when it can be found again.
pub fn step<'a>(
    cadence: Cadence,
    event: Event<'a>,
    first_pick_done: bool,
    first_prompt: Option<&'a str>,
) -> Step<'a> {
    match (event, cadence) {
        (Event::UserPrompt(_), Cadence::Initial) if first_pick_done => {
            Step::LateArrivals { first_prompt }
        }
        (Event::UserPrompt(prompt), _) => Step::Pick {
            prompt,
            first: !first_pick_done,
        },
        (Event::ToolRoundCompleted, Cadence::ToolRound) => Step::TopUp,
        (Event::ToolRoundCompleted | Event::CustomMessageRun, _) => Step::Nothing,
    }
}

/// The prompt a tool nobody has scored yet is scored against when it is first called: the first
/// prompt in `initial` cadence, the current task's prompt otherwise.
pub fn lazy_prompt<'a>(
    cadence: Cadence,
    first_prompt: Option<&'a str>,
    task_prompt: Option<&'a str>,
) -> Option<&'a str> {
    match cadence {
        Cadence::Initial => first_prompt,
        Cadence::Prompt | Cadence::ToolRound => task_prompt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CADENCES: [Cadence; 3] = [Cadence::Initial, Cadence::Prompt, Cadence::ToolRound];

    #[test]
    fn the_first_user_prompt_is_the_first_pick_in_every_cadence() {
        for cadence in CADENCES {
            assert_eq!(
                step(cadence, Event::UserPrompt("find flights"), false, None),
                Step::Pick {
                    prompt: "find flights",
                    first: true
                },
                "{cadence:?}"
            );
        }
    }

    #[test]
    fn initial_scores_only_late_arrivals_against_the_first_prompt_after_its_pick() {
        assert_eq!(
            step(
                Cadence::Initial,
                Event::UserPrompt("now email"),
                true,
                Some("flights")
            ),
            Step::LateArrivals {
                first_prompt: Some("flights")
            }
        );
        // The first prompt cannot be found again (say, a pruned branch): nothing to score with.
        assert_eq!(
            step(Cadence::Initial, Event::UserPrompt("now email"), true, None),
            Step::LateArrivals { first_prompt: None }
        );
    }

    #[test]
    fn prompt_and_tool_round_pick_again_at_every_user_prompt() {
        for cadence in [Cadence::Prompt, Cadence::ToolRound] {
            assert_eq!(
                step(
                    cadence,
                    Event::UserPrompt("now email"),
                    true,
                    Some("flights")
                ),
                Step::Pick {
                    prompt: "now email",
                    first: false
                }
            );
        }
    }

    #[test]
    fn only_tool_round_does_anything_after_a_tool_round_and_it_makes_no_call() {
        assert_eq!(
            step(
                Cadence::ToolRound,
                Event::ToolRoundCompleted,
                true,
                Some("x")
            ),
            Step::TopUp
        );
        for cadence in [Cadence::Initial, Cadence::Prompt] {
            for done in [false, true] {
                assert_eq!(
                    step(cadence, Event::ToolRoundCompleted, done, Some("x")),
                    Step::Nothing
                );
            }
        }
    }

    #[test]
    fn custom_message_runs_never_pick_nor_supply_the_first_prompt() {
        for cadence in CADENCES {
            for done in [false, true] {
                assert_eq!(
                    step(cadence, Event::CustomMessageRun, done, None),
                    Step::Nothing
                );
            }
        }
    }

    #[test]
    fn nothing_is_scored_without_a_model_or_below_the_minimum_counted_per_inventory() {
        assert!(!may_score(false, 100, 1));
        assert!(!may_score(true, 4, 5));
        assert!(may_score(true, 5, 5));
    }

    #[test]
    fn a_lazy_score_uses_the_prompt_the_cadence_picks_from() {
        assert_eq!(
            lazy_prompt(Cadence::Initial, Some("first"), Some("latest")),
            Some("first")
        );
        assert_eq!(
            lazy_prompt(Cadence::Prompt, Some("first"), Some("latest")),
            Some("latest")
        );
        assert_eq!(
            lazy_prompt(Cadence::ToolRound, Some("first"), Some("latest")),
            Some("latest")
        );
        assert_eq!(lazy_prompt(Cadence::Initial, None, Some("latest")), None);
    }
}
