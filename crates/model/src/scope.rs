//! Where an allowlist entry applies: the global lists or the project lists.

use crate::tool::{SourceInfo, SourceScope};

/// The allowlist scope a tool or group belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// User, temporary and missing-scope items: `<agentDir>/pi-context-decisions/settings.json`.
    Global,
    /// `project`-scope items: `<cwd>/.pi/pi-context-decisions.json`.
    Project,
}

impl Scope {
    /// The scope of a provenance: project for `scope: "project"`, global for everything else
    /// (user, temporary, unknown, or no provenance at all).
    pub fn of_source(info: Option<&SourceInfo>) -> Scope {
        match info.and_then(|i| i.scope) {
            Some(SourceScope::Project) => Scope::Project,
            _ => Scope::Global,
        }
    }

    /// `global` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Project => "project",
        }
    }
}

/// The common scope of a group's members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupScope {
    /// Every member is global.
    Global,
    /// Every member is project.
    Project,
    /// Members of both scopes: the group cannot be pinned as a whole.
    Mixed,
}

impl GroupScope {
    /// The scope after adding a member of scope `member`.
    pub fn join(self, member: Scope) -> GroupScope {
        match (self, member) {
            (GroupScope::Global, Scope::Global) => GroupScope::Global,
            (GroupScope::Project, Scope::Project) => GroupScope::Project,
            _ => GroupScope::Mixed,
        }
    }

    /// The group's pinning scope, or `None` when mixed.
    pub fn single(self) -> Option<Scope> {
        match self {
            GroupScope::Global => Some(Scope::Global),
            GroupScope::Project => Some(Scope::Project),
            GroupScope::Mixed => None,
        }
    }

    /// `global`, `project` or `mixed`.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupScope::Global => "global",
            GroupScope::Project => "project",
            GroupScope::Mixed => "mixed",
        }
    }
}

impl From<Scope> for GroupScope {
    fn from(scope: Scope) -> GroupScope {
        match scope {
            Scope::Global => GroupScope::Global,
            Scope::Project => GroupScope::Project,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_of_every_source_scope() {
        let with = |scope| SourceInfo {
            scope,
            ..SourceInfo::default()
        };
        assert_eq!(
            Scope::of_source(Some(&with(Some(SourceScope::Project)))),
            Scope::Project
        );
        for s in [
            Some(SourceScope::User),
            Some(SourceScope::Temporary),
            Some(SourceScope::Unknown),
            None,
        ] {
            assert_eq!(Scope::of_source(Some(&with(s))), Scope::Global);
        }
        assert_eq!(Scope::of_source(None), Scope::Global);
    }

    #[test]
    fn mixed_groups() {
        let g = GroupScope::from(Scope::Global);
        assert_eq!(g.join(Scope::Global), GroupScope::Global);
        assert_eq!(g.join(Scope::Project), GroupScope::Mixed);
        assert_eq!(GroupScope::Mixed.join(Scope::Global), GroupScope::Mixed);
        assert_eq!(GroupScope::Mixed.single(), None);
        assert_eq!(GroupScope::Project.single(), Some(Scope::Project));
    }
}
