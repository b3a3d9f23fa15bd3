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
    "Tool and MCP filtering: list what is available and why (tools list, mcp list), test the decision model (test)";

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
     decision calls); `/decisions test` asks the selected decision model one small question and \
     reports how it answered. The switch, the mode, the cadence, the decision model and the allowlists \
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

/// The outcome of `/decisions test`: one small decision asked of the selected model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DecisionTest {
    /// No decision model is selected (every tool stays available).
    NoModel,
    /// The embedded scorer answered (it always can).
    Embedded {
        /// Its score for the relevant probe tool.
        relevant: f64,
        /// Its score for the irrelevant one.
        irrelevant: f64,
    },
    /// The model answered with valid scores.
    Answered {
        /// Its score for the relevant probe tool.
        relevant: f64,
        /// Its score for the irrelevant one.
        irrelevant: f64,
    },
    /// The model answered, but not with a valid score for each probe tool.
    Malformed,
    /// The model could not be reached or did not answer in time.
    Unavailable,
    /// The model is not set up correctly (no such model, no key, a bad URL).
    Configuration,
    /// The test was cancelled.
    Cancelled,
}

/// The sentence `/decisions test` reports when the call returns.
pub fn decision_test(result: DecisionTest) -> String {
    let scored = |who: &str, relevant: f64, irrelevant: f64| {
        let verdict = if relevant > irrelevant {
            "it ranks the relevant tool first"
        } else {
            "it does not rank the relevant tool first, so its picks may be poor"
        };
        format!(
            "Decision test: {who} answered. A weather question scored {relevant:.2} for a \
             forecast tool and {irrelevant:.2} for a chart tool: {verdict}."
        )
    };
    match result {
        DecisionTest::NoModel => "Decision test: no decision model is selected, so nothing is \
             scored and every tool stays available. Choose one in Advanced (`decision.provider`)."
            .to_owned(),
        DecisionTest::Embedded {
            relevant,
            irrelevant,
        } => scored("the embedded scorer", relevant, irrelevant),
        DecisionTest::Answered {
            relevant,
            irrelevant,
        } => scored("the decision model", relevant, irrelevant),
        DecisionTest::Malformed => "Decision test: the decision model answered, but not with a \
             score for each tool, so its answers would add nothing. Try another model."
            .to_owned(),
        DecisionTest::Unavailable => "Decision test: the decision model did not answer (it could \
             not be reached, or took longer than the timeout in Advanced)."
            .to_owned(),
        DecisionTest::Configuration => "Decision test: the decision model is not set up \
             correctly (check the model name, the endpoint and its key in Advanced)."
            .to_owned(),
        DecisionTest::Cancelled => "Decision test: cancelled.".to_owned(),
    }
}

#[cfg(test)]
mod decision_test_tests {
    use super::*;

    #[test]
    fn every_outcome() {
        let all = [
            DecisionTest::NoModel,
            DecisionTest::Embedded {
                relevant: 0.91,
                irrelevant: 0.0,
            },
            DecisionTest::Answered {
                relevant: 0.2,
                irrelevant: 0.7,
            },
            DecisionTest::Malformed,
            DecisionTest::Unavailable,
            DecisionTest::Configuration,
            DecisionTest::Cancelled,
        ];
        insta::assert_snapshot!(all.map(decision_test).join("\n"));
    }
}
