//! Tool calls: the gate's verdict on each `tool_call` (top-level or nested), the lazy score of a
//! tool nobody has scored yet, which the verdict waits for, and, when filtering was switched on
//! mid-run, the registry read and the branch's baseline that the next boundary would otherwise
//! be the first to write.

use super::*;

impl Session {
    /// The verdict on one `tool_call` (top-level or nested in a codemode script). A tool nobody
    /// has scored yet is scored once, here, before the verdict.
    pub fn tool_call(&mut self, call: &ToolCallEvent) -> CallOutcome {
        self.tool_call_with(call, None)
    }

    /// [`Session::tool_call`] after refreshing the registry snapshot with `inventory` (when the
    /// first answer asked for it). Never asks for a refresh again.
    pub fn tool_call_with(
        &mut self,
        call: &ToolCallEvent,
        inventory: Option<InventoryRead>,
    ) -> CallOutcome {
        if self.recorder.is_none() {
            return self.tool_call_inner(call, inventory);
        }
        let copy = inventory.clone();
        let outcome = self.tool_call_inner(call, inventory);
        self.record(|r| r.tool_call(call, copy.as_ref(), &outcome));
        outcome
    }

    pub(super) fn tool_call_inner(
        &mut self,
        call: &ToolCallEvent,
        inventory: Option<InventoryRead>,
    ) -> CallOutcome {
        let refreshed = inventory.is_some();
        if let InventoryRead::Tools(tools) = inventory.unwrap_or(InventoryRead::Unreadable) {
            self.set_inventory(tools);
        }
        let mut effects = Vec::new();
        if self.filtering_on() && self.registry.is_none() && !refreshed {
            // Switched on since the registry was last read (it is never read while off, so the
            // dialog can switch filtering on mid-run with no snapshot): read it now rather than
            // fall back as if it could not be read. Blocked until the host does (fail closed).
            return CallOutcome {
                block: Some(blocked_reason(&pcd_model::BlockCode {
                    kind: pcd_model::BlockKind::RegistryUnavailable,
                    tool: call.tool.clone(),
                    server: None,
                    remedy: None,
                })),
                effects,
                refresh_and_retry: true,
                pending: None,
            };
        }
        self.baseline_at_call(&mut effects);
        let verdict = match self.verdict(call) {
            Verdict::Pending(candidate) => {
                tracing::debug!("scoring a tool on its first call");
                let key = match candidate {
                    pcd_gate::Candidate::Tool(name) => CandidateKey::Tool(name),
                    pcd_gate::Candidate::Group(key) => CandidateKey::Group(key),
                };
                if let Some(job) = self.lazy_score(&key, &mut effects) {
                    return CallOutcome {
                        block: None,
                        effects,
                        refresh_and_retry: false,
                        pending: Some(job),
                    };
                }
                match self.verdict(call) {
                    Verdict::Pending(candidate) => {
                        // Nothing could score it (no task text yet, or nothing committed): the
                        // candidate counts as failed until the next boundary, and the gate's
                        // block names the entry that would allow it.
                        if let Some((id, _)) = self.lazy.begin(candidate.as_str()) {
                            self.lazy.failed(id);
                        }
                        match self.verdict(call) {
                            Verdict::Pending(_) => Verdict::Block(pcd_model::BlockCode {
                                kind: pcd_model::BlockKind::ScoringFailed,
                                tool: call.tool.clone(),
                                server: None,
                                remedy: None,
                            }),
                            v => v,
                        }
                    }
                    v => v,
                }
            }
            v => v,
        };
        if let Verdict::Block(code) = &verdict {
            tracing::debug!(code = code.kind.as_str(), "call blocked");
        }
        let unknown = matches!(&verdict, Verdict::Block(code)
            if code.kind == pcd_model::BlockKind::UnknownTool);
        if matches!(verdict, Verdict::Allow) {
            // The gate's hot path: the name is copied once per tool, not once per call.
            match self.calls.get_mut(&call.tool) {
                Some(calls) => *calls = calls.saturating_add(1),
                None => {
                    self.calls.insert(call.tool.clone(), 1);
                }
            }
        }
        CallOutcome {
            block: match verdict {
                Verdict::Block(code) => Some(blocked_reason(&code)),
                _ => None,
            },
            effects,
            refresh_and_retry: unknown && !refreshed,
            pending: None,
        }
    }

    /// Filtering switched on mid-run (the dialog's save) with the branch's baseline not written
    /// yet: it is written at the first call, so the tools already registered on the branch stay
    /// available until the next boundary as after it (the model may have seen them), and tools
    /// that register later are decided. Only where a boundary would write it (settings readable,
    /// a readable branch whose ledger folds).
    fn baseline_at_call(&mut self, effects: &mut Vec<Effect>) {
        if !self.filtering_seen_off
            || !self.filtering_on()
            || !self.settings_readable
            || self.branch.is_none()
            || self.inventory.is_none()
            || self.branch_untrusted()
        {
            return;
        }
        self.baseline(effects);
        self.filtering_seen_off = false;
    }

    pub(super) fn verdict(&self, call: &ToolCallEvent) -> Verdict {
        if !self.filtering_on() {
            return Verdict::Allow;
        }
        let server = match &call.server {
            None => ServerArg::Absent,
            Some(Ok(s)) => ServerArg::Str(s),
            Some(Err(())) => ServerArg::NotString,
        };
        decide(&self.gate_context(), &Call::resource(&call.tool, server))
    }

    /// Scores one candidate nobody has scored yet, against the task's text (the first prompt in
    /// `initial` cadence), and records the result as a first-call round.
    /// Returns the job when the decision model answers outside the Session.
    pub(super) fn lazy_score(
        &mut self,
        key: &CandidateKey,
        effects: &mut Vec<Effect>,
    ) -> Option<DecisionJob> {
        let text = cadence::lazy_prompt(
            self.settings.tools.cadence,
            self.first_prompt_text.as_deref(),
            self.task_text.as_deref(),
        )
        .map(str::to_owned);
        let mut set = self.candidate_set()?;
        set.candidates.retain(|c| &c.key == key);
        if set.candidates.is_empty() {
            return None;
        }
        let decision = self.settings.decision.clone();
        let mode = self.settings.tools.mode;
        let text = text?;
        if decision.provider != DecisionProvider::Embedded {
            let candidate = key.as_str().to_owned();
            if let Some(&job) = self.lazy_jobs.get(&candidate) {
                let pending = &self.jobs[&job];
                return Some(DecisionJob {
                    id: job,
                    instructions: INSTRUCTIONS,
                    requests: pending.requests.iter().map(|r| r.body.clone()).collect(),
                });
            }
            let (request, _) = self.lazy.begin(&candidate)?;
            let id = self.next_round_id();
            let job = self.start_job(
                id,
                Boundary::FirstCall,
                set,
                &text,
                None,
                Some((candidate.clone(), request)),
                effects,
            );
            self.lazy_jobs.insert(candidate, job.id);
            // The job goes back in the call's outcome, not as an effect.
            effects.pop();
            return Some(job);
        }
        // Scored among the current candidates, so the score means what a boundary's would.
        let all = self.candidate_set().expect("read above");
        let position = all.candidates.iter().position(|c| &c.key == key);
        let scores = self.lexical_scores(&all.candidates, &text);
        let score = position.map_or(0.0, |p| scores[p]);
        let cap = rounds::cap(mode, decision.max_new_tools, decision.max_new_groups);
        let id = self.next_round_id();
        let generation = self.generation;
        let round = rounds::scored_round(
            id,
            mode,
            Boundary::FirstCall,
            set,
            Ok(vec![Some(score)]),
            generation,
            self.generation,
            decision.threshold,
            cap,
            decision.fail_mode,
        );
        let Ok(round) = round else {
            return None;
        };
        self.commit_scored_by(round, Some(SCORER_LEXICAL), effects);
        None
    }
}
