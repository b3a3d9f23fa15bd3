//! Decision jobs: handing bounded requests to a model outside the Session, taking its answers
//! back (one round per job, committed or reported), the decision test of the Advanced tab, and the
//! editors' idle-time ranking, which records nothing.

use super::*;

impl Session {
    /// Hands a round to a decision model outside the Session: builds its bounded requests, keeps
    /// the round pending under the current generation, and asks the host for the answers.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_job(
        &mut self,
        round_id: String,
        boundary: Boundary,
        set: CandidateSet,
        text: &str,
        first_prompt: Option<String>,
        lazy: Option<(String, pcd_gate::RequestId)>,
        effects: &mut Vec<Effect>,
    ) -> DecisionJob {
        let requests = build_requests(
            text,
            &set.candidates,
            self.settings.decision.batch_size as usize,
        );
        let bodies = requests.iter().map(|r| r.body.clone()).collect();
        let id = self.pend(round_id, boundary, set, requests, first_prompt, lazy);
        let job = DecisionJob {
            id,
            instructions: INSTRUCTIONS,
            requests: bodies,
        };
        effects.push(Effect::Decide(job.clone()));
        job
    }

    /// Keeps a round pending under the current generation and mode as a new job (a model's, or
    /// a semantic one with no requests), and returns the job's id.
    pub(super) fn pend(
        &mut self,
        round_id: String,
        boundary: Boundary,
        set: CandidateSet,
        requests: Vec<DecisionRequest>,
        first_prompt: Option<String>,
        lazy: Option<(String, pcd_gate::RequestId)>,
    ) -> u64 {
        self.next_job += 1;
        self.jobs.insert(
            self.next_job,
            PendingJob {
                round_id,
                generation: self.generation,
                mode: self.settings.tools.mode,
                boundary,
                set,
                requests,
                first_prompt,
                lazy,
            },
        );
        self.next_job
    }

    /// The answers to a [`DecisionJob`], one per request in order: finishes its round. A round
    /// overtaken by a settings save, a disable, a mode change or a branch move commits nothing;
    /// a failed or cancelled one adds nothing (`failMode: open` adds the remaining candidates
    /// after a model failure, never after a configuration error or a cancellation). `active` is
    /// Pi's active set now: the restriction is re-applied, and for a prompt the notice is
    /// written again.
    pub fn decided(&mut self, job: u64, answers: Vec<Answer>, active: &[String]) -> Vec<Effect> {
        if self.recorder.is_none() {
            return self.decided_inner(job, answers, active);
        }
        let copy = answers.clone();
        let mut effects = self.decided_inner(job, answers, active);
        if self.record(|r| r.decided(job, &copy, active, &effects)) {
            effects.push(Effect::Warn(pcd_ui_text::recording_stopped()));
        }
        effects
    }

    pub(super) fn decided_inner(
        &mut self,
        job: u64,
        answers: Vec<Answer>,
        active: &[String],
    ) -> Vec<Effect> {
        let Some(pending) = self.jobs.remove(&job) else {
            return Vec::new();
        };
        let scores = collect_scores(&pending, answers);
        self.finish_job(pending, scores, None, active)
    }

    /// Finishes a job's round with its scores (or its failure): commits it, with the scorer
    /// note when `scorer` names the embedded scorer's, or reports why not.
    pub(super) fn finish_job(
        &mut self,
        pending: PendingJob,
        scores: Result<Vec<Option<f64>>, RoundFailure>,
        scorer: Option<&'static str>,
        active: &[String],
    ) -> Vec<Effect> {
        let mut effects = Vec::new();
        if let Some((candidate, _)) = &pending.lazy {
            self.lazy_jobs.remove(candidate);
        }
        let decision = self.settings.decision.clone();
        let cap = rounds::cap(
            pending.mode,
            decision.max_new_tools,
            decision.max_new_groups,
        );
        let finished = if self.branch.is_some() && self.filtering_on() {
            rounds::scored_round(
                pending.round_id.clone(),
                pending.mode,
                pending.boundary,
                pending.set,
                scores,
                pending.generation,
                self.generation,
                decision.threshold,
                cap,
                decision.fail_mode,
            )
        } else {
            Err(NotCommitted::Superseded {
                started: pending.generation,
                current: self.generation,
            })
        };
        match finished {
            Ok(mut round) => {
                if round.basis == pcd_ledger::Basis::FailOpen {
                    self.warn_failure(RoundProblem::FailedOpen, &mut effects);
                }
                if pending.boundary == Boundary::InitialPrompt {
                    rounds::mark_first_prompt(&mut round);
                    self.first_prompt_text = pending.first_prompt.clone();
                }
                self.commit_scored_by(round, scorer, &mut effects);
                match pending.lazy {
                    Some((_, id)) => self.lazy.committed(id),
                    // A prompt's pick: the tool rounds of its task may top up from its scores.
                    None if matches!(
                        pending.boundary,
                        Boundary::InitialPrompt | Boundary::Prompt
                    ) =>
                    {
                        self.task_decided = true
                    }
                    None => {}
                }
            }
            Err(not) => {
                let superseded = matches!(not, NotCommitted::Superseded { .. });
                let problem = match not {
                    NotCommitted::Superseded { .. } => RoundProblem::Superseded,
                    NotCommitted::Failed(RoundFailure::Cancelled) => RoundProblem::Cancelled,
                    NotCommitted::Failed(RoundFailure::Configuration) => {
                        RoundProblem::Configuration
                    }
                    NotCommitted::Failed(RoundFailure::Model) => RoundProblem::Failed,
                    NotCommitted::Failed(RoundFailure::TimedOut) => RoundProblem::TimedOut,
                };
                if superseded {
                    effects.push(Effect::Warn(round_problem(problem)));
                } else {
                    self.last_round = Some(LastRound::Problem(problem));
                    self.warn_failure(problem, &mut effects);
                }
                if let Some((_, id)) = pending.lazy {
                    self.lazy.failed(id);
                }
                // What overtook it (a save, a disable, a mode change, a branch move) is followed
                // by its own boundary, which reconciles from what the branch has then.
                if superseded {
                    return effects;
                }
            }
        }
        if self.inventory.is_some() && self.branch.is_some() && self.filtering_on() {
            let new_run = matches!(pending.boundary, Boundary::InitialPrompt | Boundary::Prompt);
            self.reconcile(active, new_run, &mut effects);
            if new_run {
                effects.push(Effect::Notice(self.notice()));
            }
        }
        effects
    }

    /// `/decisions test`: one small decision (a weather question, a forecast tool and a chart
    /// tool) asked of the selected model, and whether the settings in force (threshold and cap)
    /// would make the forecast tool available and withhold the chart tool. The embedded scorer
    /// (or no model) answers at once; an HTTP or Pi model gets a job whose answers go to
    /// [`Session::test_decided`]. Nothing is recorded or made available. The host reads the
    /// settings files again first ([`Session::settings_changed`]), so the test uses them as saved
    /// now.
    pub fn decision_test(&mut self) -> Result<String, DecisionJob> {
        let result = self.decision_test_inner();
        self.record(|r| r.decision_test(&result));
        result
    }

    pub(super) fn decision_test_inner(&mut self) -> Result<String, DecisionJob> {
        let set = probe_candidates();
        match self.settings.decision.provider {
            DecisionProvider::None => Ok(pcd_ui_text::decision_test(
                pcd_ui_text::DecisionTest::NoModel,
            )),
            DecisionProvider::Embedded => {
                let scores = rounds::embedded_scores(&[], &set, PROBE_PROMPT);
                Ok(pcd_ui_text::decision_test(
                    pcd_ui_text::DecisionTest::Embedded(self.probe_scores(scores[0], scores[1])),
                ))
            }
            _ => {
                let requests = build_requests(PROBE_PROMPT, &set, 2);
                self.next_job += 1;
                let job = DecisionJob {
                    id: self.next_job,
                    instructions: INSTRUCTIONS,
                    requests: requests.iter().map(|r| r.body.clone()).collect(),
                };
                self.tests.insert(job.id, requests);
                Err(job)
            }
        }
    }

    /// What a round would make of the probe's two scores under the settings in force: the
    /// threshold, and the cap of the mode (each probe tool stands for a group in `mcp` mode).
    pub(super) fn probe_scores(&self, relevant: f64, irrelevant: f64) -> pcd_ui_text::ProbeScores {
        let decision = &self.settings.decision;
        let cap = match self.settings.tools.mode {
            Mode::Tools => decision.max_new_tools,
            Mode::Mcp => decision.max_new_groups,
        };
        let outcomes = pcd_picker::round::select(
            &[Some(relevant), Some(irrelevant)],
            decision.threshold,
            cap as usize,
        );
        let added = |i: usize| matches!(outcomes[i], pcd_picker::round::Outcome::Added { .. });
        pcd_ui_text::ProbeScores {
            relevant,
            irrelevant,
            threshold: decision.threshold,
            cap: u64::from(cap),
            relevant_available: added(0),
            irrelevant_available: added(1),
        }
    }

    /// The answers to a `/decisions test` job: the sentence to report.
    pub fn test_decided(&mut self, job: u64, answers: Vec<Answer>) -> String {
        if self.recorder.is_none() {
            return self.test_decided_inner(job, answers);
        }
        let copy = answers.clone();
        let text = self.test_decided_inner(job, answers);
        self.record(|r| r.test_decided(job, &copy, &text));
        text
    }

    pub(super) fn test_decided_inner(&mut self, job: u64, answers: Vec<Answer>) -> String {
        use pcd_ui_text::DecisionTest;
        let Some(requests) = self.tests.remove(&job) else {
            return pcd_ui_text::decision_test(DecisionTest::Cancelled);
        };
        let result = match answers.into_iter().next() {
            None | Some(Err(ModelError::Unavailable | ModelError::TimedOut)) => {
                DecisionTest::Unavailable
            }
            Some(Err(ModelError::Configuration)) => DecisionTest::Configuration,
            Some(Err(ModelError::Cancelled)) => DecisionTest::Cancelled,
            Some(Ok(text)) => match parse_answer(&requests[0], &text) {
                Ok(scores) if scores.len() == 2 => {
                    let score = |i| scores.iter().find(|(c, _)| *c == i).map_or(0.0, |s| s.1);
                    DecisionTest::Answered(self.probe_scores(score(0), score(1)))
                }
                _ => DecisionTest::Malformed,
            },
        };
        pcd_ui_text::decision_test(result)
    }

    /// The latest user text a boundary saw in this session (a prompt, or steering or follow-up
    /// text), bounded; `None` before the first.
    pub fn latest_task_text(&self) -> Option<&str> {
        self.task_text.as_deref()
    }

    /// An idle-time relevance ranking for the allowlist editors: scores `tools` (as in `tools`
    /// mode) and `groups` (as in `mcp` mode) of the inventory against `text` with the selected
    /// decision model, so the editor can show the most relevant first. It is a view only:
    /// nothing is recorded, made available or superseded, and no round's policy changes. Names
    /// that are not in the inventory (or are internal) are skipped.
    pub fn ranking(&mut self, text: &str, tools: &[String], groups: &[GroupKey]) -> Ranking {
        let provider = self.settings.decision.provider;
        let (Some(inventory), false) = (&self.inventory, provider == DecisionProvider::None) else {
            return Ranking::Unavailable;
        };
        if text.trim().is_empty() {
            return Ranking::Unavailable;
        }
        let text = bounded_text(text);
        let wanted_tools: HashSet<&str> = tools.iter().map(String::as_str).collect();
        let wanted_groups: HashSet<&GroupKey> = groups.iter().collect();
        let none = (Allowlists::default(), Available::default());
        let mut set: Vec<pcd_picker::candidates::Candidate> = Vec::new();
        if !wanted_tools.is_empty() {
            set.extend(
                candidates(inventory, &self.classifier, Mode::Tools, &none.0, &none.1)
                    .candidates
                    .into_iter()
                    .filter(|c| wanted_tools.contains(c.key.as_str())),
            );
        }
        if !wanted_groups.is_empty() {
            set.extend(
                candidates(inventory, &self.classifier, Mode::Mcp, &none.0, &none.1)
                    .candidates
                    .into_iter()
                    .filter(
                        |c| matches!(&c.key, CandidateKey::Group(k) if wanted_groups.contains(k)),
                    ),
            );
        }
        if set.is_empty() {
            return Ranking::Scores(Vec::new());
        }
        if provider == DecisionProvider::Embedded {
            let scores = rounds::embedded_scores(inventory, &set, &text);
            return Ranking::Scores(set.into_iter().map(|c| c.key).zip(scores).collect());
        }
        let requests = build_requests(&text, &set, self.settings.decision.batch_size as usize);
        self.next_job += 1;
        let job = DecisionJob {
            id: self.next_job,
            instructions: INSTRUCTIONS,
            requests: requests.iter().map(|r| r.body.clone()).collect(),
        };
        self.rankings
            .insert(job.id, (requests, set.into_iter().map(|c| c.key).collect()));
        Ranking::Job(job)
    }

    /// The answers to a ranking job: the scores (only valid ones, in `[0, 1]`), or `None` when
    /// the job is unknown or any request failed (the editor keeps its order).
    pub fn ranking_decided(
        &mut self,
        job: u64,
        answers: Vec<Answer>,
    ) -> Option<Vec<(CandidateKey, f64)>> {
        let (requests, keys) = self.rankings.remove(&job)?;
        if answers.len() != requests.len() {
            return None;
        }
        let mut out = Vec::new();
        for (request, answer) in requests.iter().zip(answers) {
            let text = answer.ok()?;
            if let Ok(valid) = parse_answer(request, &text) {
                out.extend(valid.into_iter().filter_map(|(i, score)| {
                    let ok = score.is_finite() && (0.0..=1.0).contains(&score);
                    Some((keys.get(i)?.clone(), score)).filter(|_| ok)
                }));
            }
        }
        Some(out)
    }

    /// Jobs handed out and not answered yet.
    pub fn pending_jobs(&self) -> usize {
        self.jobs.len()
    }
}

/// One score per candidate from the answers; any failed request fails the round (a malformed
/// answer only drops its own candidates). The failure is the round's worst cause over every
/// request, not its first: a configuration error or a cancellation anywhere in the round keeps
/// `failMode: open` from granting anything ([`worse`]).
pub(super) fn collect_scores(
    pending: &PendingJob,
    answers: Vec<Answer>,
) -> Result<Vec<Option<f64>>, RoundFailure> {
    if answers.len() != pending.requests.len() {
        return Err(RoundFailure::Model);
    }
    let mut scores = vec![None; pending.set.candidates.len()];
    let mut failure: Option<RoundFailure> = None;
    for (request, answer) in pending.requests.iter().zip(answers) {
        let text = match answer {
            Ok(text) => text,
            Err(e) => {
                let cause = match e {
                    ModelError::Cancelled => RoundFailure::Cancelled,
                    ModelError::Configuration => RoundFailure::Configuration,
                    ModelError::Unavailable => RoundFailure::Model,
                    ModelError::TimedOut => RoundFailure::TimedOut,
                };
                failure = Some(failure.map_or(cause, |f| worse(f, cause)));
                continue;
            }
        };
        if let Ok(valid) = parse_answer(request, &text) {
            for (index, score) in valid {
                if let Some(slot) = scores.get_mut(index) {
                    *slot = Some(score);
                }
            }
        }
    }
    failure.map_or(Ok(scores), Err)
}

/// The worse of two causes of one round's failure: a configuration error, then a cancellation
/// (neither ever fails open), then a timeout, then a model failure.
fn worse(a: RoundFailure, b: RoundFailure) -> RoundFailure {
    let rank = |f: RoundFailure| match f {
        RoundFailure::Configuration => 3,
        RoundFailure::Cancelled => 2,
        RoundFailure::TimedOut => 1,
        RoundFailure::Model => 0,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}
