//! What the gate asks of a branch's ledger state.

use pcd_ledger::BranchState;
use pcd_model::GroupKey;

/// The branch's availability, as the gate reads it on every call. Implemented by
/// `pcd_ledger::BranchState` (the fold over the branch's entries); tests may implement it over
/// plain sets.
pub trait BranchView {
    /// Whether the tool is available on the branch.
    fn tool_available(&self, name: &str) -> bool;
    /// Whether the group (canonical key) is available on the branch.
    fn group_available(&self, key: &str) -> bool;
    /// Whether a round already considered the tool.
    fn tool_considered(&self, name: &str) -> bool;
    /// Whether a round already considered the group.
    fn group_considered(&self, key: &GroupKey) -> bool;
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
}
