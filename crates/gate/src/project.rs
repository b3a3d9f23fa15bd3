//! The project allowlist when its read fails: the last good copy, else only the global lists.

use pcd_model::ScopedAllowlist;

/// The outcome of reading the project allowlist file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProjectRead {
    /// There is no project file: no project entries.
    Absent,
    /// The file was read (invalid entries already skipped).
    Read(ScopedAllowlist),
    /// The file exists but could not be read or parsed.
    Unreadable,
}

/// Keeps the last good project allowlist so that a throwing read never widens or drops what
/// applies: on [`ProjectRead::Unreadable`] the last good copy stays, and with none only the global
/// lists apply (an empty project list).
#[derive(Debug, Clone, Default)]
pub struct ProjectListCache {
    last_good: Option<ScopedAllowlist>,
}

impl ProjectListCache {
    /// Applies a read and returns the project list that now applies.
    pub fn update(&mut self, read: ProjectRead) -> ScopedAllowlist {
        match read {
            ProjectRead::Absent => self.last_good = Some(ScopedAllowlist::default()),
            ProjectRead::Read(list) => self.last_good = Some(list),
            ProjectRead::Unreadable => {}
        }
        self.last_good.clone().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_model::parse_tool_entry;

    #[test]
    fn unreadable_keeps_the_last_good_copy_else_nothing() {
        let mut cache = ProjectListCache::default();
        assert_eq!(
            cache.update(ProjectRead::Unreadable),
            ScopedAllowlist::default()
        );
        let list = ScopedAllowlist {
            tools: vec![parse_tool_entry("db_query").unwrap()],
            groups: vec![],
        };
        assert_eq!(cache.update(ProjectRead::Read(list.clone())), list);
        assert_eq!(cache.update(ProjectRead::Unreadable), list);
        assert_eq!(
            cache.update(ProjectRead::Absent),
            ScopedAllowlist::default()
        );
        assert_eq!(
            cache.update(ProjectRead::Unreadable),
            ScopedAllowlist::default()
        );
    }
}
