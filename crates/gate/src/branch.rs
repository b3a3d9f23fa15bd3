//! What the gate reads of a branch's ledger state, indexed once per branch change so a verdict
//! reads flags instead of hashing names again.

use crate::registry::Registry;
use pcd_ledger::BranchState;
use pcd_model::GroupKey;
use std::collections::HashSet;

/// The branch's availability as the gate asks it. Implemented by `pcd_ledger::BranchState` (the
/// fold over the branch's entries); tests may implement it over plain sets.
pub trait BranchView {
    /// Whether the tool is available on the branch.
    fn tool_available(&self, name: &str) -> bool;
    /// Whether the group (canonical key) is available on the branch.
    fn group_available(&self, key: &str) -> bool;
    /// Whether a round already considered the tool.
    fn tool_considered(&self, name: &str) -> bool;
    /// Whether a round already considered the group.
    fn group_considered(&self, key: &GroupKey) -> bool;
    /// Calls `f` with every available group key.
    fn for_each_available_group(&self, f: &mut dyn FnMut(&str));
}

impl BranchView for BranchState {
    fn tool_available(&self, name: &str) -> bool {
        self.is_tool_available(name)
    }

    fn group_available(&self, key: &str) -> bool {
        self.is_group_key_available(key)
    }

    fn tool_considered(&self, name: &str) -> bool {
        self.was_tool_considered(name)
    }

    fn group_considered(&self, key: &GroupKey) -> bool {
        self.was_group_considered(key)
    }

    fn for_each_available_group(&self, f: &mut dyn FnMut(&str)) {
        self.available_groups().for_each(f);
    }
}

/// A branch's state laid over a [`Registry`]: one flag per registered tool and group, plus the
/// available group keys (for servers with no registered tool). Rebuild it whenever the branch or
/// the registry changes; both happen at boundaries, never per call.
#[derive(Debug, Clone, Default)]
pub struct BranchIndex {
    pub(crate) tool_available: Vec<bool>,
    pub(crate) tool_considered: Vec<bool>,
    pub(crate) group_available: Vec<bool>,
    pub(crate) group_considered: Vec<bool>,
    pub(crate) available_keys: HashSet<Box<str>>,
}

impl BranchIndex {
    /// Indexes `branch` over `registry`.
    pub fn build(registry: &Registry, branch: &dyn BranchView) -> BranchIndex {
        let mut available_keys = HashSet::new();
        branch.for_each_available_group(&mut |key| {
            available_keys.insert(key.into());
        });
        BranchIndex {
            tool_available: registry
                .names
                .iter()
                .map(|n| branch.tool_available(n))
                .collect(),
            tool_considered: registry
                .names
                .iter()
                .map(|n| branch.tool_considered(n))
                .collect(),
            group_available: registry
                .groups
                .iter()
                .map(|g| available_keys.contains(g.key.as_str()))
                .collect(),
            group_considered: registry
                .groups
                .iter()
                .map(|g| branch.group_considered(&g.key))
                .collect(),
            available_keys,
        }
    }

    pub(crate) fn tool_available(&self, ti: u32) -> bool {
        self.tool_available
            .get(ti as usize)
            .copied()
            .unwrap_or(false)
    }

    pub(crate) fn tool_considered(&self, ti: u32) -> bool {
        self.tool_considered
            .get(ti as usize)
            .copied()
            .unwrap_or(false)
    }

    pub(crate) fn group_available(&self, gi: u32) -> bool {
        self.group_available
            .get(gi as usize)
            .copied()
            .unwrap_or(false)
    }

    pub(crate) fn group_considered(&self, gi: u32) -> bool {
        self.group_considered
            .get(gi as usize)
            .copied()
            .unwrap_or(false)
    }
}
