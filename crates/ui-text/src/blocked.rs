//! The reason a blocked tool call returns. Pi shows it as the tool's error result (and, inside a
//! codemode script, as the thrown error), so the model and the person both read it: it is short,
//! says why, and names the exact allowlist entry and scope that would allow the call.

use crate::words::{code, list_title, scope_word, TOOLS_TAB};
use pcd_model::{BlockCode, BlockKind, Remedy};

/// The sentence for a gate's block code.
///
/// ```
/// use pcd_model::{BlockCode, BlockKind, Remedy, RemedyList, Scope};
///
/// let reason = pcd_ui_text::blocked_reason(&BlockCode {
///     kind: BlockKind::NotAvailable,
///     tool: "web_fetch".into(),
///     server: None,
///     remedy: Some(Remedy { list: RemedyList::Tools, entry: "web_fetch".into(), scope: Scope::Global }),
/// });
/// assert!(reason.starts_with("Blocked: `web_fetch` is not available for this task."));
/// assert!(reason.contains("global *Always allowed tools* list"));
/// ```
pub fn blocked_reason(block: &BlockCode) -> String {
    let tool = code(&block.tool);
    // The `server` argument is the model's own input; it is never echoed (the code does not even
    // carry it). A known server is named by its canonical key, in the remedy.
    let why = match block.kind {
        BlockKind::NotAvailable => format!("Blocked: {tool} is not available for this task."),
        BlockKind::ResourceWithoutServer => format!(
            "Blocked: {tool} must name a `server` while tool filtering is on, because listing \
             the resources of every server cannot be checked. Call it again with `server` set \
             to an available MCP server."
        ),
        BlockKind::ResourceServerNotString => {
            format!("Blocked: {tool} needs `server` to be the name of an MCP server (a string).")
        }
        BlockKind::ResourceServerNotAvailable => format!(
            "Blocked: the MCP server that this {tool} call names is not available for this task."
        ),
        BlockKind::ResourceServerUnknown => format!(
            "Blocked: the MCP server that this {tool} call names is not one Pi knows (no tool, \
             configured server or allowlist entry has that name), so it cannot be checked. Call \
             it again with `server` set to an available MCP server."
        ),
        BlockKind::UnknownTool => {
            format!("Blocked: {tool} is not in Pi's tool registry, so it cannot be checked.")
        }
        BlockKind::RegistryUnavailable => format!(
            "Blocked: Pi's tool registry cannot be read right now, so {tool} cannot be checked. \
             Calls are blocked until it can be read again."
        ),
        BlockKind::BranchUnreadable => format!(
            "Blocked: the session branch cannot be read, so only built-in and allowlisted tools \
             can run; {tool} is neither."
        ),
        BlockKind::ScoringFailed => format!(
            "Blocked: {tool} could not be checked for this task (deciding failed or was \
             cancelled). It can be picked again at the next prompt."
        ),
        BlockKind::Unrecordable => format!(
            "Blocked: {tool} has a name that tool filtering cannot record (a space or other \
             whitespace, or too long), so it is never made available while filtering is on."
        ),
    };
    // A name the tools allowlist cannot hold (over 128 characters) is never suggested as an
    // entry: the reason says so, and names what does work (its group's pin) when anything does.
    let why = match pcd_model::parse_tool_entry(&block.tool) {
        Err(pcd_model::AllowlistError::ToolNameTooLong { .. })
            if block.kind != BlockKind::Unrecordable =>
        {
            format!(
                "{why} Its name is longer than {} characters, so it cannot be added to the \
                 *Always allowed tools* lists.",
                pcd_model::MAX_TOOL_NAME_CHARS
            )
        }
        _ => why,
    };
    match (&block.remedy, block.kind) {
        (Some(remedy), _) => format!("{why} {}", remedy_sentence(remedy)),
        // No entry would help with these: they are about the call or the host, not the tool.
        (
            None,
            BlockKind::ResourceWithoutServer
            | BlockKind::ResourceServerNotString
            | BlockKind::ResourceServerUnknown
            | BlockKind::Unrecordable
            | BlockKind::UnknownTool
            | BlockKind::RegistryUnavailable,
        ) => why,
        (None, _) => format!(
            "{why} No allowlist entry can name it, so only the decision model can make it \
             available (allowlists: {TOOLS_TAB})."
        ),
    }
}

fn remedy_sentence(remedy: &Remedy) -> String {
    format!(
        "To always allow it, add {} to the {} {} list ({TOOLS_TAB}).",
        code(&remedy.entry),
        scope_word(remedy.scope),
        list_title(remedy.list),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_model::{GroupKey, RemedyList, Scope};

    fn block(kind: BlockKind, tool: &str, remedy: Option<(RemedyList, &str, Scope)>) -> BlockCode {
        BlockCode {
            kind,
            tool: tool.into(),
            server: Some(GroupKey::for_mcp_server("docs")),
            remedy: remedy.map(|(list, entry, scope)| Remedy {
                list,
                entry: entry.into(),
                scope,
            }),
        }
    }

    #[test]
    fn not_available_tool_global() {
        let b = block(
            BlockKind::NotAvailable,
            "web_fetch",
            Some((RemedyList::Tools, "web_fetch", Scope::Global)),
        );
        insta::assert_snapshot!(blocked_reason(&b));
    }

    #[test]
    fn not_available_group_project() {
        let b = block(
            BlockKind::NotAvailable,
            "mcp__kb__search",
            Some((RemedyList::Groups, "mcp__kb", Scope::Project)),
        );
        insta::assert_snapshot!(blocked_reason(&b));
    }

    #[test]
    fn not_available_without_remedy() {
        let b = block(BlockKind::NotAvailable, "weird tool", None);
        insta::assert_snapshot!(blocked_reason(&b));
    }

    #[test]
    fn every_kind() {
        let kinds = [
            BlockKind::NotAvailable,
            BlockKind::ResourceWithoutServer,
            BlockKind::ResourceServerNotString,
            BlockKind::ResourceServerNotAvailable,
            BlockKind::ResourceServerUnknown,
            BlockKind::UnknownTool,
            BlockKind::RegistryUnavailable,
            BlockKind::BranchUnreadable,
            BlockKind::ScoringFailed,
            BlockKind::Unrecordable,
        ];
        let mut all = String::new();
        for kind in kinds {
            let (tool, remedy) = match kind {
                BlockKind::ResourceWithoutServer
                | BlockKind::ResourceServerNotString
                | BlockKind::ResourceServerUnknown => ("list_mcp_resources", None),
                BlockKind::ResourceServerNotAvailable => (
                    "read_mcp_resource",
                    Some((RemedyList::Groups, "mcp__docs", Scope::Project)),
                ),
                BlockKind::UnknownTool | BlockKind::RegistryUnavailable => ("ghost_tool", None),
                BlockKind::Unrecordable => (
                    "fetch page",
                    Some((RemedyList::Groups, "ext__web", Scope::Global)),
                ),
                _ => (
                    "bar_tool",
                    Some((RemedyList::Tools, "bar_tool", Scope::Global)),
                ),
            };
            let text = blocked_reason(&block(kind, tool, remedy));
            assert!(text.starts_with("Blocked: "), "{text}");
            all.push_str(&format!("{}:\n{text}\n\n", kind.as_str()));
        }
        insta::assert_snapshot!(all);
    }

    /// Issue 30, item 9: a name over 128 characters is never offered as a tools allowlist
    /// entry; the reason says it is too long and names its group's pin when it has one.
    #[test]
    fn a_name_too_long_to_allowlist_is_never_suggested() {
        let long = format!("web_{}", "x".repeat(125));
        let with_group = block(
            BlockKind::NotAvailable,
            &long,
            Some((RemedyList::Groups, "ext__web", Scope::Global)),
        );
        let text = blocked_reason(&with_group);
        assert!(text.contains("longer than 128 characters"), "{text}");
        assert!(text.contains("add `ext__web` to the global"), "{text}");
        assert!(!text.contains(&format!("add `{long}`")), "{text}");
        let alone = blocked_reason(&block(BlockKind::NotAvailable, &long, None));
        assert!(alone.contains("longer than 128 characters"), "{alone}");
        assert!(alone.contains("only the decision model"), "{alone}");
    }

    #[test]
    fn hostile_names_are_neutralised() {
        let b = block(
            BlockKind::NotAvailable,
            "evil`\u{202E}name\n",
            Some((RemedyList::Tools, "evil`\u{202E}name\n", Scope::Global)),
        );
        let text = blocked_reason(&b);
        assert!(!text.contains('\u{202E}'));
        assert!(!text.contains('\n'));
        assert_eq!(text.matches('`').count() % 2, 0, "code spans stay balanced");
    }

    #[test]
    fn the_remedy_names_the_exact_entry_and_scope() {
        for scope in [Scope::Global, Scope::Project] {
            for list in [RemedyList::Tools, RemedyList::Groups] {
                let text = blocked_reason(&block(
                    BlockKind::NotAvailable,
                    "t",
                    Some((list, "mcp__exact_key", scope)),
                ));
                assert!(text.contains("`mcp__exact_key`"));
                assert!(text.contains(&format!("the {} {}", scope.as_str(), list_title(list))));
                assert!(text.contains("Tools tab"));
            }
        }
    }
}
