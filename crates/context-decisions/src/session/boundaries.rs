//! Boundaries: what a prompt, a completed tool round or a branch move does: the baseline of a
//! branch that starts filtering, allowlist grants, the round that decides (per the cadence; the
//! first prompt is recorded as the first pick even with no candidate), late arrivals at a tool
//! round or at the start of a run a custom message started, and the report of names the ledger
//! cannot record.

use super::*;

impl Session {
    /// A boundary: decides (per the cadence), records, and re-applies the restriction to Pi's
    /// active set. Returns the effects to carry out, in order.
    pub fn boundary(&mut self, event: BoundaryEvent) -> Vec<Effect> {
        if self.recorder.is_none() {
            return self.boundary_inner(event);
        }
        let needed = self.needs_inventory();
        let copy = event.clone();
        let mut effects = self.boundary_inner(event);
        if self.record(|r| r.boundary(needed, &copy, &effects)) {
            effects.push(Effect::Warn(pcd_ui_text::recording_stopped()));
        }
        effects
    }

    pub(super) fn boundary_inner(&mut self, event: BoundaryEvent) -> Vec<Effect> {
        let mut effects = Vec::new();
        self.lazy.clear_failures();
        if let InventoryRead::Tools(tools) = event.inventory {
            self.set_inventory(tools);
        }
        if let BoundaryKind::Prompt { text } = &event.kind {
            // A new prompt: its first failed decision is reported again.
            self.failure_warned = false;
            if let Some(text) = text {
                self.task_text = Some(bounded_text(text));
                // A new task: the cached scores are the previous task's until its pick commits.
                self.task_decided = false;
            }
        }
        if !self.filtering_on() {
            self.filtering_seen_off = true;
            self.restore_all(&event.active, &mut effects);
            self.note_conversation(&event.kind);
            return effects;
        }
        self.report_unrecordable(&mut effects);
        // An unreadable branch: no boundary writes, grants or reconciles anything.
        if self.branch.is_none() || self.inventory.is_none() {
            return effects;
        }
        // A branch whose ledger does not fold writes nothing: no baseline, no allowlist record,
        // no decision; it is only reconciled to what folds.
        if self.settings_readable && !self.branch_untrusted() {
            self.baseline(&mut effects);
            self.record_allowlist_grants(&mut effects);
            self.decide_round(&event.kind, &mut effects);
            // A run started by a custom message picks nothing, but a direct tool that
            // registered since is met here first, as at a tool round: scored against the
            // cadence's prompt, never taken out with no entry considering it.
            if matches!(
                event.kind,
                BoundaryKind::ToolRound | BoundaryKind::Prompt { text: None }
            ) {
                self.late_arrivals_at_tool_round(&mut effects);
            }
        }
        self.filtering_seen_off = false;
        let new_run = matches!(event.kind, BoundaryKind::Prompt { .. });
        if self.switch_unknown() && !self.branch_has_ledger() {
            // The switch cannot be read on a branch that never filtered: calls are gated, but
            // Pi's active set is left as it is, so the model sees every tool it declares, and
            // switching filtering on later keeps them (as when it was off).
            self.note_conversation(&event.kind);
        } else {
            self.reconcile(&event.active, new_run, &mut effects);
        }
        if matches!(event.kind, BoundaryKind::Prompt { .. }) {
            effects.push(Effect::Notice(self.notice()));
        }
        // Filtering is on: the model sees only what the restriction leaves, so this prompt is no
        // reason for a baseline later (a first pick that failed is retried, not granted).
        effects
    }

    /// Names, once per session, the external tools whose names the ledger cannot record: they
    /// are left as Pi declared them (never decided, granted or withheld) and their calls are
    /// blocked unless allowlisted, while every other tool is decided as usual.
    pub(super) fn report_unrecordable(&mut self, effects: &mut Vec<Effect>) {
        let Some(registry) = &self.registry else {
            return;
        };
        let tools: Vec<String> = self
            .inventory
            .iter()
            .flatten()
            .map(|t| &t.name)
            .filter(|name| registry.is_unrecordable(name))
            .filter(|name| !self.unrecordable_reported.contains(*name))
            .cloned()
            .collect();
        if tools.is_empty() {
            return;
        }
        tracing::warn!(
            code = InventoryWarningCode::UnrecordableNames.as_str(),
            tools = tools.len(),
            "tools left alone"
        );
        self.unrecordable_reported.extend(tools.iter().cloned());
        effects.push(Effect::Warn(pcd_ui_text::inventory_warning(
            &InventoryWarning {
                code: InventoryWarningCode::UnrecordableNames,
                tools,
            },
        )));
    }

    /// From a prompt or a tool round while filtering is off, the model has seen the branch's
    /// tools unfiltered: switching filtering on later keeps what it may have seen.
    pub(super) fn note_conversation(&mut self, kind: &BoundaryKind) {
        if matches!(
            kind,
            BoundaryKind::Prompt { text: Some(_) } | BoundaryKind::ToolRound
        ) {
            self.branch_has_messages = true;
        }
    }

    /// Enabling mid-session keeps every tool already registered on the branch available: the
    /// model may have seen them. A branch with no messages yet has shown the model nothing, and
    /// records that as an empty baseline the first time filtering is on there: otherwise a
    /// branch whose first pick failed (or was never written) would later look like one where
    /// filtering was switched on mid-session, and a reload would grant it everything.
    pub(super) fn baseline(&mut self, effects: &mut Vec<Effect>) {
        let (Some(branch), Some(tools)) = (&self.branch, &self.inventory) else {
            return;
        };
        let has_ledger = self.branch_has_ledger();
        let fresh_enable = !has_ledger || self.filtering_seen_off;
        if !fresh_enable {
            return;
        }
        let names: Vec<String> = if self.branch_has_messages {
            tools
                .iter()
                .zip(&self.classes)
                .filter(|(t, c)| !c.kind.is_internal() && !branch.is_tool_available(&t.name))
                .map(|(t, _)| t.name.clone())
                .collect()
        } else {
            Vec::new()
        };
        if names.is_empty() && has_ledger {
            return;
        }
        let mode = self.settings.tools.mode;
        let mut round = Round::new(
            self.next_round_id(),
            mode,
            Boundary::Prompt,
            Basis::Baseline,
        );
        round.tools = names;
        self.commit(round, effects);
    }

    /// Allowlisted tools and groups are recorded by name and canonical key, so removing the entry
    /// later never takes away availability the branch already had. So are the groups a pin
    /// promotes in `mcp` mode (a tool pinned by name, in a group whose members share one scope),
    /// and pinned MCP servers with no tool in the registry (resource-only or disconnected) in the
    /// scope of their file, or Global when their origin is unknown: all in the v1 field
    /// `allowlistGroups`, so ledgers written before and after fold alike.
    pub(super) fn record_allowlist_grants(&mut self, effects: &mut Vec<Effect>) {
        let (Some(branch), Some(tools)) = (&self.branch, &self.inventory) else {
            return;
        };
        let (classes, scopes) = (&self.classes, &self.group_scopes);
        let promotes = self.settings.tools.mode == Mode::Mcp;
        let mut names = Vec::new();
        let mut groups: BTreeSet<GroupKey> = BTreeSet::new();
        let mut registered: HashSet<&GroupKey> = HashSet::new();
        for (tool, class) in tools.iter().zip(classes) {
            if class.kind.is_internal() {
                continue;
            }
            let list = self.allowlists.for_scope(class.scope);
            let pinned = list.has_tool(&tool.name);
            if pinned && !branch.is_tool_available(&tool.name) {
                names.push(tool.name.clone());
            }
            if let Some(g) = &class.group {
                registered.insert(&g.key);
                let single = scopes.get(&g.key).and_then(|s| s.single());
                let group_pinned =
                    single.is_some_and(|s| self.allowlists.for_scope(s).has_group(&g.key));
                let promoted = promotes && pinned && single.is_some();
                if (group_pinned || promoted) && !branch.is_group_available(&g.key) {
                    groups.insert(g.key.clone());
                }
            }
        }
        // Pinned MCP servers with no tool in the registry, admitted (as the gate admits them)
        // in the scope of their file, or Global when the origin is unknown.
        for (scope, list) in [
            (Scope::Global, &self.allowlists.global),
            (Scope::Project, &self.allowlists.project),
        ] {
            for key in &list.groups {
                if registered.contains(key) || key.mcp_server_part().is_none() {
                    continue;
                }
                let origin = self
                    .mcp_origins
                    .iter()
                    .find(|(name, _)| GroupKey::for_mcp_server(name) == *key)
                    .map_or(Scope::Global, |(_, s)| *s);
                if origin == scope && !branch.is_group_available(key) {
                    groups.insert(key.clone());
                }
            }
        }
        if names.is_empty() && groups.is_empty() {
            return;
        }
        let mut round = Round::new(
            self.next_round_id(),
            self.settings.tools.mode,
            Boundary::Allowlist,
            Basis::Allowlist,
        );
        round.allowlisted_tools = names;
        round.allowlisted_groups = groups.into_iter().collect();
        self.commit(round, effects);
    }

    pub(super) fn candidate_set(&self) -> Option<CandidateSet> {
        let (branch, tools) = (self.branch.as_ref()?, self.inventory.as_ref()?);
        let available = Available {
            tools: branch.available_tools().map(str::to_owned).collect(),
            groups: branch
                .available_groups()
                .filter_map(GroupKey::from_canonical)
                .collect(),
        };
        Some(classified_candidates(
            tools,
            (&self.classes, &self.group_scopes),
            self.settings.tools.mode,
            &self.allowlists,
            &available,
        ))
    }

    pub(super) fn decide_round(&mut self, kind: &BoundaryKind, effects: &mut Vec<Effect>) {
        // Custom-message runs and reconciles pick nothing (and need no candidates).
        let event = match kind {
            BoundaryKind::Prompt { text: Some(text) } => cadence::Event::UserPrompt(text),
            BoundaryKind::ToolRound => cadence::Event::ToolRoundCompleted,
            BoundaryKind::Prompt { text: None } | BoundaryKind::Reconcile => return,
        };
        let cadence = self.settings.tools.cadence;
        let Some(branch) = self.branch.as_ref() else {
            return;
        };
        let first_pick_done = branch.first_prompt().is_some();
        let first_prompt = self.first_prompt_text.clone();
        let step = cadence::step(cadence, event, first_pick_done, first_prompt.as_deref());
        if step == Step::Nothing {
            return;
        }
        let Some(mut set) = self.candidate_set() else {
            return;
        };
        let mode = self.settings.tools.mode;
        let decision = self.settings.decision.clone();
        let branch = self.branch.as_ref().expect("checked above");
        // What to score, against which text.
        let (boundary, text) = match step {
            Step::Pick {
                prompt,
                first: true,
            } => (Boundary::InitialPrompt, Some(bounded_text(prompt))),
            Step::Pick {
                prompt,
                first: false,
            } => (Boundary::Prompt, Some(bounded_text(prompt))),
            Step::LateArrivals { first_prompt } => {
                set.candidates.retain(|c| !considered(branch, mode, &c.key));
                (Boundary::Prompt, first_prompt.map(str::to_owned))
            }
            // Only from the scores of this task's own pick: after a pick that failed, was
            // cancelled or was superseded, a tool round adds nothing.
            Step::TopUp if !self.task_decided => return,
            Step::TopUp => {
                let cap = rounds::cap(mode, decision.max_new_tools, decision.max_new_groups);
                let id = self.next_round_id();
                let branch = self.branch.as_ref().expect("checked above");
                if let Some(round) =
                    rounds::top_up_round(id, mode, branch, &set, decision.threshold, cap)
                {
                    self.commit(round, effects);
                }
                return;
            }
            Step::Nothing => return,
        };
        if set.candidates.is_empty() {
            // The first user prompt is the first pick's even with nothing to pick (no external
            // tool registered yet, or only tools the branch already has): it is recorded, so
            // what arrives later is scored against it, never against a later prompt.
            if let (Boundary::InitialPrompt, Some(text)) = (boundary, text) {
                self.first_pick_without_candidates(mode, text, effects);
            }
            return;
        }
        let id = self.next_round_id();
        if !self.can_score() {
            let mut round = rounds::unscored_round(id, mode, boundary, &set);
            if boundary == Boundary::InitialPrompt {
                rounds::mark_first_prompt(&mut round);
            }
            self.commit(round, effects);
            self.task_decided = true;
            return;
        }
        let Some(text) = text else {
            // The first prompt cannot be found again: nothing is scored (fail closed); the tools
            // stay unconsidered and withheld, and are blocked when called.
            return;
        };
        let scores = match decision.provider {
            DecisionProvider::Embedded if self.semantic_on() => {
                // The host embeds off its event loop and hands the scores to `semantic_decided`.
                self.start_semantic_job(id, boundary, set, &text, effects);
                return;
            }
            DecisionProvider::Embedded => {
                self.scored_lexically_inline();
                self.lexical_scores(&set.candidates, &text)
            }
            _ => {
                // An HTTP or Pi model answers outside the Session: the host carries out the job
                // and hands the answers to `decided`.
                let first_prompt = (boundary == Boundary::InitialPrompt).then_some(text.clone());
                self.start_job(id, boundary, set, &text, first_prompt, None, effects);
                return;
            }
        };
        let cap = rounds::cap(mode, decision.max_new_tools, decision.max_new_groups);
        let generation = self.generation;
        let round = rounds::scored_round(
            id,
            mode,
            boundary,
            set,
            Ok(scores.into_iter().map(Some).collect()),
            generation,
            self.generation,
            decision.threshold,
            cap,
            decision.fail_mode,
        );
        let Ok(mut round) = round else {
            effects.push(Effect::Warn(round_problem(RoundProblem::Superseded)));
            return;
        };
        if boundary == Boundary::InitialPrompt {
            rounds::mark_first_prompt(&mut round);
            self.first_prompt_text = Some(text);
        }
        // Only the embedded scorer reaches here (the others answer as jobs), lexically.
        self.commit_scored_by(round, Some(SCORER_LEXICAL), effects);
        self.task_decided = true;
    }

    /// Records the branch's first pick when its prompt has no candidate: an empty round marking
    /// the first user prompt (its text stays in Pi's session, never in the ledger), scored or
    /// unscored as the round would have been.
    fn first_pick_without_candidates(
        &mut self,
        mode: Mode,
        text: String,
        effects: &mut Vec<Effect>,
    ) {
        let basis = if self.can_score() {
            Basis::Scored
        } else {
            Basis::Unscored
        };
        let mut round = Round::new(self.next_round_id(), mode, Boundary::InitialPrompt, basis);
        if basis == Basis::Scored {
            round.threshold = pcd_ledger::Score::from_f64(self.settings.decision.threshold);
        }
        rounds::mark_first_prompt(&mut round);
        self.commit(round, effects);
        self.first_prompt_text = Some(text);
        self.task_decided = true;
    }

    /// A completed tool round (or the start of a run a custom message started), in every
    /// cadence: candidates nobody has considered on the branch
    /// that Pi declares (a direct tool of an MCP server that connected during the run) are
    /// scored now, when first met, against the task's prompt (the first prompt in `initial`
    /// cadence), or recorded unscored (and so available) when nothing may be scored. Pi rejects a
    /// call to a tool missing from its active set before `tool_call`, so a lazy score could
    /// never rescue one that the reconcile takes out without an entry. Indirect tools stay for
    /// their first call. With no prompt to score against, nothing is scored (fail closed).
    pub(super) fn late_arrivals_at_tool_round(&mut self, effects: &mut Vec<Effect>) {
        let (Some(mut set), Some(branch), Some(tools)) =
            (self.candidate_set(), &self.branch, &self.inventory)
        else {
            return;
        };
        let mode = self.settings.tools.mode;
        set.candidates.retain(|c| {
            !considered(branch, mode, &c.key)
                && !self.lazy_jobs.contains_key(c.key.as_str())
                && c.members
                    .iter()
                    .any(|&i| tools.get(i).is_some_and(|t| t.exposure.is_declared()))
        });
        if set.candidates.is_empty() {
            return;
        }
        let id = self.next_round_id();
        if !self.can_score() {
            let round = rounds::unscored_round(id, mode, Boundary::ToolRound, &set);
            self.commit(round, effects);
            return;
        }
        let Some(text) = cadence::lazy_prompt(
            self.settings.tools.cadence,
            self.first_prompt_text.as_deref(),
            self.task_text.as_deref(),
        )
        .map(str::to_owned) else {
            return;
        };
        let decision = self.settings.decision.clone();
        if decision.provider != DecisionProvider::Embedded {
            self.start_job(id, Boundary::ToolRound, set, &text, None, None, effects);
            return;
        }
        // Scored among every current candidate, so a score means what a prompt's would.
        let Some(all) = self.candidate_set() else {
            return;
        };
        let every = self.lexical_scores(&all.candidates, &text);
        let scores = set
            .candidates
            .iter()
            .map(|c| {
                all.candidates
                    .iter()
                    .position(|a| a.key == c.key)
                    .map(|p| every[p])
            })
            .collect();
        let cap = rounds::cap(mode, decision.max_new_tools, decision.max_new_groups);
        let round = rounds::scored_round(
            id,
            mode,
            Boundary::ToolRound,
            set,
            Ok(scores),
            self.generation,
            self.generation,
            decision.threshold,
            cap,
            decision.fail_mode,
        );
        if let Ok(round) = round {
            self.commit_scored_by(round, Some(SCORER_LEXICAL), effects);
        }
    }
}

pub(super) fn considered(branch: &BranchState, mode: Mode, key: &CandidateKey) -> bool {
    match (mode, key) {
        (_, CandidateKey::Tool(name)) => branch.was_tool_considered(name),
        (_, CandidateKey::Group(key)) => branch.was_group_considered(key),
    }
}
