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

/// The `/decisions` command's one-line description in Pi's command list.
pub const DECISIONS_COMMAND_DESCRIPTION: &str =
    "Tool and MCP filtering: list what is available and why (tools list, mcp list)";

/// The reason a call is blocked when checking it failed inside the extension itself (an
/// unexpected error): it fails closed.
pub fn check_failed_reason() -> String {
    "Blocked: pi-context-decisions could not check this call (an internal error), so it failed \
     closed. Try again; if it keeps happening, turn tool filtering off and report it."
        .to_owned()
}

/// The reply to `/decisions` with no argument or an unknown one, in this build (which has no
/// Tools tab yet): what the command takes, and where the switch and the pins live.
pub fn decisions_usage() -> String {
    "`/decisions tools list` prints every tool and why it is available; `/decisions mcp list` \
     prints every MCP server and extension with its key and availability (names only, no \
     decision calls). The switch, the mode, the cadence, the decision model and the allowlists \
     are set in the settings files (`pi-context-decisions/settings.json` in Pi's agent folder, \
     `.pi/pi-context-decisions.json` in the project) and read again at the next prompt."
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_usage_text() {
        insta::assert_snapshot!(format!(
            "{DECISIONS_COMMAND_DESCRIPTION}\n{}\n{}",
            decisions_usage(),
            check_failed_reason()
        ));
    }

    #[test]
    fn usage() {
        insta::assert_snapshot!(format!(
            "{}\n{}",
            list_command_usage(ListCommand::Tools),
            list_command_usage(ListCommand::Mcp)
        ));
    }
}
