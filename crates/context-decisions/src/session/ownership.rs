//! Ownership of Pi's active tool set: which tools this extension withholds, and so may put back.
//!
//! **Invariant:** the Session takes out of Pi's active set only tools the gate would not let
//! through, and puts back only tools it *owns*: a tool this process took out itself, a tool the
//! branch's ledger decided against when it was folded (considered, by name or with its group,
//! and not available), or a tool a round of this process made available (its own fresh decision:
//! declared even when Pi's active set lacks it, as after a restart whose first pick failed before
//! anything was recorded), that Pi declares on registration (direct or model-only exposure). A
//! tool another party deactivated while this extension had not decided against it is never
//! activated.
//!
//! What the ledger decided against is recomputed from the branch each time it is folded (start,
//! resume, fork, `/reload`, `/tree`), so it survives a restart; the registry, the allowlists (in
//! the gate's verdicts) and Pi's active set come with every boundary (at `session_start`, the
//! active set is the loadout Pi replayed from the transcript). What this process took out is only
//! a cache over that. Once a tool is put back it is no longer owned: an explicit `selectedTools`
//! edit that drops it wins for its run, and the next run declares it again.

use pcd_ledger::BranchState;
use pcd_model::{Classified, ToolInfo};
use std::collections::HashSet;

/// What this extension withholds from Pi's active set, and what it put back. See the module
/// documentation for the invariant.
#[derive(Debug, Default)]
pub(crate) struct Ownership {
    /// Tool names the branch's ledger decided against when it was folded: considered by a
    /// `tools`-mode round and not available. (A round of this process that decides against a
    /// tool still in Pi's active set takes it out, so `removed` covers it; one that decides
    /// against a tool already inactive never made it inactive, so it is not this extension's.)
    decided_tools: HashSet<String>,
    /// Group keys the branch's ledger decided against, likewise for `mcp`-mode rounds.
    decided_groups: HashSet<String>,
    /// Tools this process took out of Pi's active set (a cache; the ledger is the record).
    removed: HashSet<String>,
    /// Tools and group keys a round committed by this process made available: this extension's
    /// own fresh decision, so they are declared at the next boundary even when Pi's active set
    /// lacks them (an earlier process withheld them before any round recorded it, say, which
    /// Pi 1.3.0's replayed loadout keeps). Cleared when the branch is folded.
    granted_tools: HashSet<String>,
    granted_groups: HashSet<String>,
    /// Tools this process put back. If one goes missing without this process taking it out
    /// (another extension's explicit `selectedTools` edit, which Pi applies to the live loadout),
    /// that edit won for its run only: the next run's boundary declares it again.
    restored: HashSet<String>,
    /// Filtering is off and every owned tool was put back since the branch was last folded:
    /// nothing is read from Pi's registry again while it stays off.
    released: bool,
    /// How many times this process changed Pi's active set.
    changes: u64,
}

impl Ownership {
    /// The branch was folded (start, `/reload`, resume, fork, `/tree`, a refused append): what its
    /// ledger decided against is recomputed from it.
    pub(crate) fn folded(&mut self, branch: &BranchState) {
        self.decided_tools = branch
            .considered_tools()
            .filter(|name| !branch.is_tool_available(name))
            .map(str::to_owned)
            .collect();
        self.decided_groups = branch
            .considered_groups()
            .filter(|key| !branch.is_group_key_available(key))
            .map(str::to_owned)
            .collect();
        self.granted_tools.clear();
        self.granted_groups.clear();
        self.released = false;
    }

    /// A round of this process made `tools` and `groups` available: this extension's own fresh
    /// decision, declared at the next boundary even where Pi's active set lacks them. (What the
    /// round decides against that was already inactive stays as it is: this process never took
    /// it out, and the branch's ledger did not say so when it was folded.)
    pub(crate) fn committed<'a>(
        &mut self,
        tools: impl IntoIterator<Item = &'a str>,
        groups: impl IntoIterator<Item = &'a str>,
    ) {
        self.granted_tools
            .extend(tools.into_iter().map(str::to_owned));
        self.granted_groups
            .extend(groups.into_iter().map(str::to_owned));
    }

    /// Whether this extension withholds `tool` (and so may put it back).
    fn owns(&self, tool: &ToolInfo, class: &Classified) -> bool {
        if self.restored.contains(&tool.name) {
            return false;
        }
        if self.removed.contains(&tool.name) {
            return true;
        }
        let in_group = |set: &HashSet<String>| {
            class
                .group
                .as_ref()
                .is_some_and(|g| set.contains(g.key.as_str()))
        };
        let decided = self.decided_tools.contains(&tool.name)
            || in_group(&self.decided_groups)
            || self.granted_tools.contains(&tool.name)
            || in_group(&self.granted_groups);
        decided && !class.kind.is_internal() && tool.exposure.is_declared()
    }

    /// Whether a boundary while filtering is off must read Pi's registry and active set: only
    /// while something owned may still be missing from the active set.
    pub(crate) fn needs_registry_while_off(&self) -> bool {
        !self.released
            && (!self.removed.is_empty()
                || !self.decided_tools.is_empty()
                || !self.decided_groups.is_empty())
    }

    /// How many times this process changed Pi's active set.
    pub(crate) fn changes(&self) -> u64 {
        self.changes
    }

    /// Re-applies the restriction while filtering is on: takes out of `active` every tool
    /// `allowed` refuses, and puts back every owned tool of the registry that `allowed` lets
    /// through (and, when a run starts, every tool put back earlier that went missing). Pi's
    /// order is kept; tools put back follow in registry order. `None` when nothing changes.
    pub(crate) fn reconcile(
        &mut self,
        tools: &[ToolInfo],
        classes: &[Classified],
        active: &[String],
        new_run: bool,
        allowed: impl Fn(&str) -> bool,
    ) -> Option<Vec<String>> {
        self.released = false;
        let (mut next, taken_out): (Vec<String>, Vec<String>) =
            active.iter().cloned().partition(|name| allowed(name));
        let in_active: HashSet<&str> = active.iter().map(String::as_str).collect();
        let mut put_back = Vec::new();
        for (tool, class) in tools.iter().zip(classes) {
            let name = tool.name.as_str();
            if in_active.contains(name) || !allowed(name) {
                continue;
            }
            let lost_edit = new_run && self.restored.contains(name);
            if self.owns(tool, class) || lost_edit {
                put_back.push(tool.name.clone());
            }
        }
        for name in &put_back {
            self.removed.remove(name);
            self.restored.insert(name.clone());
        }
        for name in taken_out {
            self.restored.remove(&name);
            self.removed.insert(name);
        }
        next.extend(put_back);
        self.changed(active, next)
    }

    /// Filtering is off: every owned tool of the registry comes back, nothing else changes.
    /// `None` when nothing changes.
    pub(crate) fn release(
        &mut self,
        tools: &[ToolInfo],
        classes: &[Classified],
        active: &[String],
    ) -> Option<Vec<String>> {
        let in_active: HashSet<&str> = active.iter().map(String::as_str).collect();
        let mut next = active.to_vec();
        for (tool, class) in tools.iter().zip(classes) {
            if !in_active.contains(tool.name.as_str()) && self.owns(tool, class) {
                next.push(tool.name.clone());
            }
        }
        self.removed.clear();
        self.released = true;
        self.changed(active, next)
    }

    fn changed(&mut self, active: &[String], next: Vec<String>) -> Option<Vec<String>> {
        if next == active {
            return None;
        }
        self.changes += 1;
        tracing::info!(
            before = active.len(),
            after = next.len(),
            changes = self.changes,
            "active set re-applied"
        );
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_ledger::{Basis, Boundary, Round};
    use pcd_model::{Classifier, Mode, ToolExposure};

    fn tool(name: &str, exposure: ToolExposure) -> ToolInfo {
        let mut t = ToolInfo::new(name, "", None);
        t.exposure = exposure;
        t
    }

    fn decided_against(names: &[&str], available: &[&str]) -> BranchState {
        let mut round = Round::new("r1", Mode::Tools, Boundary::Prompt, Basis::Scored);
        round.considered = names.iter().map(|n| (*n).to_owned()).collect();
        round.tools = available.iter().map(|n| (*n).to_owned()).collect();
        let mut branch = BranchState::new();
        branch.apply_round(&round, None, None);
        branch
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn what_the_ledger_decided_against_is_put_back_by_a_fresh_process() {
        let tools = vec![
            tool("mail_send", ToolExposure::Direct),
            tool("mail_read", ToolExposure::Direct),
            tool("chart", ToolExposure::Direct),
            tool("indirect", ToolExposure::Deferred),
        ];
        let classes: Vec<_> = tools
            .iter()
            .map(|t| Classifier::default().classify(t))
            .collect();
        let branch = decided_against(&["mail_send", "mail_read", "chart", "indirect"], &["chart"]);
        let mut ownership = Ownership::default();
        ownership.folded(&branch);
        // Pi replayed the restricted loadout; a round (or a pin) now allows the mail tools and
        // the deferred one, which Pi never declares by itself.
        let active = names(&["chart"]);
        let next = ownership.reconcile(&tools, &classes, &active, true, |_| true);
        assert_eq!(next, Some(names(&["chart", "mail_send", "mail_read"])));
    }

    #[test]
    fn a_tool_another_party_deactivated_is_never_activated() {
        let tools = vec![
            tool("chart", ToolExposure::Direct),
            tool("x", ToolExposure::Direct),
        ];
        let classes: Vec<_> = tools
            .iter()
            .map(|t| Classifier::default().classify(t))
            .collect();
        // `chart` was made available, `x` never considered: neither is this extension's.
        let branch = decided_against(&["chart"], &["chart"]);
        let mut ownership = Ownership::default();
        ownership.folded(&branch);
        assert!(!ownership.needs_registry_while_off());
        assert_eq!(
            ownership.reconcile(&tools, &classes, &[], true, |_| true),
            None
        );
        assert_eq!(ownership.release(&tools, &classes, &[]), None);
    }

    #[test]
    fn what_a_round_of_this_process_decides_is_declared_though_pi_lacks_it() {
        // A first pick failed before a restart: nothing recorded, everything withheld; Pi 1.3.0
        // replays that loadout. This process's round makes `mail_send` available and decides
        // against `chart`: the first is declared; the second, inactive before this process
        // decided anything, is not this extension's to put back when switched off.
        let tools = vec![
            tool("mail_send", ToolExposure::Direct),
            tool("chart", ToolExposure::Direct),
        ];
        let classes: Vec<_> = tools
            .iter()
            .map(|t| Classifier::default().classify(t))
            .collect();
        let mut ownership = Ownership::default();
        ownership.folded(&BranchState::new());
        assert_eq!(
            ownership.reconcile(&tools, &classes, &[], true, |n| n == "mail_send"),
            None,
            "before the round, neither is this extension's"
        );
        ownership.committed(["mail_send"], []);
        assert_eq!(
            ownership.reconcile(&tools, &classes, &[], true, |n| n == "mail_send"),
            Some(names(&["mail_send"]))
        );
        assert_eq!(
            ownership.release(&tools, &classes, &names(&["mail_send"])),
            None
        );
        // A branch move forgets what this process granted (a tool put back that later went
        // missing is another rule, for new runs).
        ownership.folded(&BranchState::new());
        assert_eq!(
            ownership.reconcile(&tools, &classes, &[], false, |_| true),
            None
        );
    }

    #[test]
    fn switching_off_puts_back_what_the_ledger_withheld_once() {
        let tools = vec![tool("mail_send", ToolExposure::Direct)];
        let classes: Vec<_> = tools
            .iter()
            .map(|t| Classifier::default().classify(t))
            .collect();
        let mut ownership = Ownership::default();
        ownership.folded(&decided_against(&["mail_send"], &[]));
        assert!(ownership.needs_registry_while_off());
        assert_eq!(
            ownership.release(&tools, &classes, &[]),
            Some(names(&["mail_send"]))
        );
        assert!(!ownership.needs_registry_while_off(), "read once");
    }
}
