//! When to score what: the picker's cadence as a pure planner.
//!
//! The facade feeds each boundary in with the branch's picker memory and the current candidates
//! and gets back a [`Plan`]: which candidates to score against which prompt (if any), which
//! cached candidates to add with no call (`tool-round`), and which candidates simply stay
//! available because nothing may be scored (no decision model, or fewer candidates than the
//! minimum). It never calls a model itself.

use crate::candidates::{Candidate, CandidateKey};
use crate::round::Boundary;
use pcd_model::{Cadence, DecisionSettings};
use std::collections::HashSet;

/// A boundary the host reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// A user prompt, including queued steering and follow-up text.
    UserPrompt(&'a str),
    /// A run started by a custom message (it never supplies the first prompt).
    CustomMessageRun,
    /// A completed tool round.
    ToolRoundCompleted,
    /// A call to a tool; scored lazily if nobody scored it yet.
    ToolCall(&'a str),
}

/// What the picker remembers on a branch (rebuilt by the facade from the ledger).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Memory {
    /// `initial` cadence: the first user prompt after filtering became active, once a pick from
    /// it committed (a failed pick leaves it unset, so the next prompt retries).
    pub first_prompt: Option<String>,
    /// Candidates ever considered on the branch (for `initial`: never re-picked, also after
    /// `/reload`).
    pub considered: HashSet<CandidateKey>,
    /// The prompt of the current task (the latest user prompt).
    pub task_prompt: Option<String>,
    /// Candidates scored for the current task, with their scores (a new prompt clears it).
    pub task_scores: Vec<(CandidateKey, f64)>,
}

/// A scoring job: candidates (indices into the boundary's candidates) and the prompt to score
/// them against.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The prompt to score against.
    pub prompt: String,
    /// Indices into the candidates given to [`plan`].
    pub candidates: Vec<usize>,
    /// Where it runs.
    pub boundary: Boundary,
}

/// What to do at a boundary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Candidates to score, if any (a boundary with no new candidate makes no model call).
    pub job: Option<Job>,
    /// `tool-round`: cached candidates of the same task to add with no call (at or above the
    /// threshold, cut by the cap before; at most the cap).
    pub add_cached: Vec<CandidateKey>,
    /// Candidates that stay available and are recorded, because nothing may be scored.
    pub keep_available: Vec<CandidateKey>,
}

/// Plans one boundary. `candidates` are the current candidates (never internal, available or
/// allowlisted ones); `cap` is the mode's cap.
pub fn plan(
    cadence: Cadence,
    decision: &DecisionSettings,
    cap: usize,
    memory: &Memory,
    candidates: &[Candidate],
    event: Event<'_>,
) -> Plan {
    let mut out = Plan::default();
    if candidates.is_empty() {
        return out;
    }
    // No model, or too few candidates: nothing is scored at any boundary and what arrives stays
    // available (and is recorded).
    if !decision.has_model() || candidates.len() < decision.minimum_candidates as usize {
        out.keep_available = candidates.iter().map(|c| c.key.clone()).collect();
        return out;
    }
    let scored_for_task: HashSet<&CandidateKey> =
        memory.task_scores.iter().map(|(k, _)| k).collect();
    let all = || (0..candidates.len()).collect::<Vec<_>>();
    let unscored = |exclude: &dyn Fn(&CandidateKey) -> bool| -> Vec<usize> {
        (0..candidates.len())
            .filter(|&i| !exclude(&candidates[i].key))
            .collect()
    };
    let job = |prompt: &str, idx: Vec<usize>, boundary| {
        (!idx.is_empty()).then(|| Job {
            prompt: prompt.to_owned(),
            candidates: idx,
            boundary,
        })
    };
    match (cadence, event) {
        (_, Event::ToolCall(name)) => {
            // A tool nobody has scored yet is scored once, against the prompt the cadence uses.
            let prompt = match cadence {
                Cadence::Initial => memory.first_prompt.as_deref(),
                _ => memory.task_prompt.as_deref(),
            };
            let target = candidates
                .iter()
                .position(|c| c.members_named(name))
                .filter(|&i| {
                    let key = &candidates[i].key;
                    !scored_for_task.contains(key) && !memory.considered.contains(key)
                });
            if let (Some(prompt), Some(i)) = (prompt, target) {
                out.job = job(prompt, vec![i], Boundary::LazyCall);
            }
        }
        (Cadence::Initial, Event::UserPrompt(prompt)) => match &memory.first_prompt {
            None => out.job = job(prompt, all(), Boundary::Prompt),
            Some(first) => {
                let new = unscored(&|k| memory.considered.contains(k));
                out.job = job(first, new, Boundary::Prompt);
            }
        },
        (Cadence::Initial, Event::ToolRoundCompleted | Event::CustomMessageRun) => {
            if let Some(first) = &memory.first_prompt {
                let new = unscored(&|k| memory.considered.contains(k));
                out.job = job(first, new, Boundary::ToolRound);
            }
        }
        (Cadence::Prompt | Cadence::ToolRound, Event::UserPrompt(prompt)) => {
            out.job = job(prompt, all(), Boundary::Prompt);
        }
        (Cadence::Prompt, Event::ToolRoundCompleted | Event::CustomMessageRun) => {}
        (Cadence::ToolRound, Event::CustomMessageRun) => {}
        (Cadence::ToolRound, Event::ToolRoundCompleted) => {
            let present: HashSet<&CandidateKey> = candidates.iter().map(|c| &c.key).collect();
            let mut cached: Vec<(usize, &CandidateKey, f64)> = memory
                .task_scores
                .iter()
                .enumerate()
                .filter(|(_, (k, s))| *s >= decision.threshold && present.contains(k))
                .map(|(i, (k, s))| (i, k, *s))
                .collect();
            cached.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
            out.add_cached = cached
                .into_iter()
                .take(cap)
                .map(|(_, k, _)| k.clone())
                .collect();
            if let Some(prompt) = &memory.task_prompt {
                let new = unscored(&|k| scored_for_task.contains(k));
                out.job = job(prompt, new, Boundary::ToolRound);
            }
        }
    }
    out
}

impl Candidate {
    /// Whether one of its tools is called `name` (a group compares its listed member names).
    fn members_named(&self, name: &str) -> bool {
        match &self.key {
            CandidateKey::Tool(n) => n == name,
            CandidateKey::Group(_) => self.names.iter().any(|n| n == name),
        }
    }
}

/// Enabling filtering mid-session: every tool already registered on the branch stays available
/// (the model may have seen them). Returns the names to record as available.
pub fn enable_mid_session<'a>(registered: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    registered.into_iter().map(str::to_owned).collect()
}

/// Lazy scores shared by parallel calls: the first call to an unscored tool starts the request,
/// later calls wait for the same one.
#[derive(Debug, Default)]
pub struct InFlight {
    pending: HashSet<CandidateKey>,
}

impl InFlight {
    /// `true` when this call must start the request; `false` when one is already in flight.
    pub fn begin(&mut self, key: &CandidateKey) -> bool {
        self.pending.insert(key.clone())
    }

    /// The request for `key` settled (committed, failed or superseded).
    pub fn settle(&mut self, key: &CandidateKey) {
        self.pending.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_model::DecisionProvider;

    fn cands(names: &[&str]) -> Vec<Candidate> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| Candidate {
                key: CandidateKey::Tool((*n).to_owned()),
                label: String::new(),
                description: String::new(),
                names: vec![(*n).to_owned()],
                members: vec![i],
                definition_chars: 0,
            })
            .collect()
    }

    fn key(n: &str) -> CandidateKey {
        CandidateKey::Tool(n.to_owned())
    }

    fn settings() -> DecisionSettings {
        DecisionSettings {
            provider: DecisionProvider::Embedded,
            minimum_candidates: 2,
            ..DecisionSettings::default()
        }
    }

    #[test]
    fn no_model_scores_nothing_and_keeps_everything_available() {
        let d = DecisionSettings::default();
        let c = cands(&["a", "b", "c"]);
        let p = plan(
            Cadence::Prompt,
            &d,
            6,
            &Memory::default(),
            &c,
            Event::UserPrompt("hi"),
        );
        assert_eq!(p.job, None);
        assert_eq!(p.keep_available, vec![key("a"), key("b"), key("c")]);
    }

    #[test]
    fn fewer_candidates_than_the_minimum_are_never_scored_at_any_boundary() {
        let d = DecisionSettings {
            minimum_candidates: 5,
            ..settings()
        };
        let c = cands(&["a", "b"]);
        for cadence in [Cadence::Initial, Cadence::Prompt, Cadence::ToolRound] {
            for event in [
                Event::UserPrompt("x"),
                Event::ToolRoundCompleted,
                Event::ToolCall("a"),
            ] {
                let p = plan(cadence, &d, 6, &Memory::default(), &c, event);
                assert_eq!(p.job, None);
                assert_eq!(p.keep_available.len(), 2);
            }
        }
    }

    #[test]
    fn a_boundary_with_no_candidate_makes_no_call() {
        let p = plan(
            Cadence::Prompt,
            &settings(),
            6,
            &Memory::default(),
            &[],
            Event::UserPrompt("x"),
        );
        assert_eq!(p, Plan::default());
    }

    #[test]
    fn initial_picks_once_from_the_first_prompt_and_scores_later_arrivals_against_it() {
        let d = settings();
        let c = cands(&["a", "b", "c"]);
        let mut m = Memory::default();
        // A custom-message run never supplies the first prompt.
        assert_eq!(
            plan(Cadence::Initial, &d, 6, &m, &c, Event::CustomMessageRun).job,
            None
        );
        let p = plan(Cadence::Initial, &d, 6, &m, &c, Event::UserPrompt("first"));
        assert_eq!(p.job.unwrap().candidates, vec![0, 1, 2]);
        // The pick committed: first prompt and considered recorded.
        m.first_prompt = Some("first".into());
        m.considered = [key("a"), key("b"), key("c")].into();
        let mut later = c.clone();
        later.extend(cands(&["d"]));
        let p = plan(
            Cadence::Initial,
            &d,
            6,
            &m,
            &later,
            Event::UserPrompt("second"),
        );
        let job = p.job.unwrap();
        assert_eq!(job.prompt, "first");
        assert_eq!(job.candidates, vec![3]);
        // Nothing new: no call, never a re-pick.
        assert_eq!(
            plan(Cadence::Initial, &d, 6, &m, &c, Event::UserPrompt("third")).job,
            None
        );
    }

    #[test]
    fn initial_retries_a_failed_pick_at_the_next_prompt() {
        let d = settings();
        let c = cands(&["a", "b"]);
        let m = Memory::default(); // the first pick failed: nothing recorded
        let job = plan(Cadence::Initial, &d, 6, &m, &c, Event::UserPrompt("again"))
            .job
            .unwrap();
        assert_eq!(job.prompt, "again");
    }

    #[test]
    fn prompt_cadence_scores_each_prompt_and_ignores_tool_rounds() {
        let d = settings();
        let c = cands(&["a", "b"]);
        let m = Memory::default();
        let job = plan(Cadence::Prompt, &d, 6, &m, &c, Event::UserPrompt("p2"))
            .job
            .unwrap();
        assert_eq!((job.prompt.as_str(), job.candidates.len()), ("p2", 2));
        assert_eq!(
            plan(Cadence::Prompt, &d, 6, &m, &c, Event::ToolRoundCompleted),
            Plan::default()
        );
    }

    #[test]
    fn tool_round_adds_capped_cached_candidates_above_the_threshold_with_no_call() {
        let d = settings();
        let c = cands(&["a", "b", "c", "d"]);
        let m = Memory {
            task_prompt: Some("task".into()),
            task_scores: vec![
                (key("a"), 0.7),
                (key("b"), 0.9),
                (key("c"), 0.5),
                (key("d"), 0.7),
            ],
            ..Memory::default()
        };
        let p = plan(Cadence::ToolRound, &d, 2, &m, &c, Event::ToolRoundCompleted);
        assert_eq!(p.add_cached, vec![key("b"), key("a")]);
        assert_eq!(
            p.job, None,
            "every candidate was scored for this task: no call"
        );
        assert!(
            !p.add_cached.contains(&key("c")),
            "never one below the threshold"
        );
    }

    #[test]
    fn an_unscored_tool_is_scored_once_when_called_shared_by_parallel_calls() {
        let d = settings();
        let c = cands(&["a", "b"]);
        let m = Memory {
            task_prompt: Some("task".into()),
            ..Memory::default()
        };
        let job = plan(Cadence::Prompt, &d, 6, &m, &c, Event::ToolCall("b"))
            .job
            .unwrap();
        assert_eq!(
            (job.candidates, job.boundary),
            (vec![1], Boundary::LazyCall)
        );
        let mut flight = InFlight::default();
        assert!(flight.begin(&key("b")));
        assert!(
            !flight.begin(&key("b")),
            "a parallel call joins the request in flight"
        );
        flight.settle(&key("b"));
        assert!(flight.begin(&key("b")));
    }

    #[test]
    fn mcp_mode_groups_follow_the_same_cadence_and_a_member_call_scores_its_group() {
        let groups: Vec<Candidate> = ["srv_a", "srv_b", "srv_c"]
            .iter()
            .enumerate()
            .map(|(i, g)| Candidate {
                key: CandidateKey::Group(pcd_model::GroupKey::for_mcp_server(g)),
                label: (*g).to_owned(),
                description: String::new(),
                names: vec![format!("mcp__{g}__one"), format!("mcp__{g}__two")],
                members: vec![2 * i, 2 * i + 1],
                definition_chars: 0,
            })
            .collect();
        let d = settings();
        let mut m = Memory::default();
        let job = plan(
            Cadence::Initial,
            &d,
            2,
            &m,
            &groups,
            Event::UserPrompt("first"),
        )
        .job
        .unwrap();
        assert_eq!(job.candidates, vec![0, 1, 2]);
        m.first_prompt = Some("first".into());
        m.considered = groups.iter().take(2).map(|g| g.key.clone()).collect();
        // The third group arrived late and nobody scored it: a call to one of its tools scores
        // the whole group once, against the first prompt.
        let job = plan(
            Cadence::Initial,
            &d,
            2,
            &m,
            &groups,
            Event::ToolCall("mcp__srv_c__two"),
        )
        .job
        .unwrap();
        assert_eq!(
            (job.prompt.as_str(), job.candidates.as_slice()),
            ("first", &[2][..])
        );
        assert_eq!(
            plan(
                Cadence::Initial,
                &d,
                2,
                &m,
                &groups,
                Event::ToolCall("mcp__srv_a__one")
            )
            .job,
            None,
            "already considered: never re-picked"
        );
    }

    #[test]
    fn enabling_mid_session_keeps_registered_tools_available() {
        assert_eq!(
            enable_mid_session(["x", "y"]),
            vec!["x".to_owned(), "y".to_owned()]
        );
    }
}
