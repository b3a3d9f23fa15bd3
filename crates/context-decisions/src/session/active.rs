//! Pi's active set at a boundary: reconciling it with what the gate allows (through
//! [`super::ownership`], which says which tools this extension may take out and put back), restoring
//! every withheld tool when filtering goes off, and the hidden availability notice.

use super::*;

impl Session {
    /// Re-applies the restriction: takes out of Pi's active set every tool the gate would not
    /// allow, and puts back the tools this extension withholds that are allowed now (see
    /// [`ownership`]).
    pub(super) fn reconcile(
        &mut self,
        active: &[String],
        new_run: bool,
        effects: &mut Vec<Effect>,
    ) {
        let mut ownership = std::mem::take(&mut self.ownership);
        let ctx = self.gate_context();
        let registry = self.registry.as_ref();
        // Internal tools (the resource tools, routed per call, included) stay declared, and so
        // do tools whose names the ledger cannot record: no entry could say why they were
        // withheld, so they are left as Pi declared them (their calls are blocked by the gate).
        let allowed = |name: &str| {
            registry.is_some_and(|r| r.is_internal(name) || r.is_unrecordable(name))
                || decide(&ctx, &Call::tool(name)) == Verdict::Allow
        };
        let tools = self.inventory.as_deref().unwrap_or_default();
        let next = ownership.reconcile(tools, &self.classes, active, new_run, allowed);
        self.ownership = ownership;
        if let Some(next) = next {
            effects.push(Effect::SetActiveTools(next));
        }
    }

    /// Filtering is off: every tool this extension withholds comes back, nothing else changes.
    pub(super) fn restore_all(&mut self, active: &[String], effects: &mut Vec<Effect>) {
        if !self.ownership.needs_registry_while_off() {
            return;
        }
        let Some(tools) = self.inventory.as_deref() else {
            return;
        };
        if let Some(next) = self.ownership.release(tools, &self.classes, active) {
            effects.push(Effect::SetActiveTools(next));
        }
    }

    /// The hidden names-only notice: which indirect MCP servers, extensions and tools are
    /// available for this task.
    pub(super) fn notice(&self) -> String {
        let mut notice = AvailabilityNotice::default();
        let Some(tools) = &self.inventory else {
            return availability_notice(&notice);
        };
        let ctx = self.gate_context();
        let mut groups_seen = HashSet::new();
        for (tool, class) in tools.iter().zip(&self.classes) {
            let indirect = tool.exposure.is_indirect();
            // A tool with no group (no usable provenance, or an SDK host tool) is decided per
            // tool in `tools` mode, so it is listed when available; only `mcp` mode leaves it
            // unfiltered, which the notice's last sentence covers.
            let unfiltered =
                class.kind == ToolKind::Unfiltered && self.settings.tools.mode == Mode::Mcp;
            if !indirect || class.kind.is_internal() || unfiltered {
                continue;
            }
            if decide(&ctx, &Call::tool(&tool.name)) != Verdict::Allow {
                continue;
            }
            let branch = self.branch.as_ref();
            match &class.group {
                Some(g)
                    if branch.is_some_and(|b| b.is_group_available(&g.key))
                        || self.allowlists.for_scope(class.scope).has_group(&g.key) =>
                {
                    if groups_seen.insert(g.key.clone()) {
                        notice.groups.push(NoticeGroup {
                            key: g.key.clone(),
                            label: g.label.clone(),
                        });
                    }
                }
                _ => notice.tools.push(tool.name.clone()),
            }
        }
        availability_notice(&notice)
    }
}
