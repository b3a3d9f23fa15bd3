//! The usage text of the `/decisions tools` and `/decisions mcp` commands: each takes only `list`.

/// Which command was given an argument it does not take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListCommand {
    /// `/decisions tools`.
    Tools,
    /// `/decisions mcp`.
    Mcp,
}

/// The reply to `/decisions tools` or `/decisions mcp` with no argument or any argument but
/// `list`. The argument itself is never repeated.
pub fn list_command_usage(command: ListCommand) -> String {
    match command {
        ListCommand::Tools => "`/decisions tools` takes only `list`: `/decisions tools list` \
             prints every tool and why it is available, names only. Allowlists are edited in \
             `/decisions` → Tools tab."
            .to_owned(),
        ListCommand::Mcp => "`/decisions mcp` takes only `list`: `/decisions mcp list` prints \
             every MCP server and extension with its key and availability, names only. \
             Allowlists are edited in `/decisions` → Tools tab."
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage() {
        insta::assert_snapshot!(format!(
            "{}\n{}",
            list_command_usage(ListCommand::Tools),
            list_command_usage(ListCommand::Mcp)
        ));
    }
}
