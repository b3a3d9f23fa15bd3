//! The `context-decisions` program's messages about its arguments and input files: which file,
//! which entry or field, what was expected. They are handed the file as the person gave it (or as
//! a folder walk found it), positions, field names and codes, never a value read from a file or
//! typed as an argument, which could be a secret. File names go through [`display_safe`].

use crate::display::display_safe;
use pcd_model::{FileReadProblem, InventoryError, ToolProblem};
use std::fmt::Display;

/// The line the program ends with when it exits with status 2 (bad input or arguments).
pub fn program_error(message: &str) -> String {
    format!("error: {message}\n")
}

/// `text`, then one `warning:` line per warning about the files read (each already a sentence
/// of this crate), and a final newline when there were any.
pub fn with_warnings(text: String, warnings: &[String]) -> String {
    let mut out = text;
    for w in warnings {
        out.push_str("\nwarning: ");
        out.push_str(w);
    }
    if !warnings.is_empty() {
        out.push('\n');
    }
    out
}

/// Why a tools file (a `getAllTools()`-shaped inventory) cannot be used.
#[derive(Debug, Clone, Copy)]
pub enum ToolsFileProblem<'a> {
    /// It is not a regular file, is over its bound, or could not be opened or read.
    Read(FileReadProblem),
    /// It is not UTF-8.
    NotUtf8,
    /// It is not a JSON array of tools.
    Invalid(&'a InventoryError),
    /// Some entries are not usable tools: the first ones (entry index, problem), and how many
    /// were rejected in all.
    BadEntries {
        /// The first problems.
        problems: &'a [(usize, ToolProblem)],
        /// How many entries were rejected in all.
        total: usize,
    },
}

/// The error for a tools file that cannot be used.
pub fn tools_file_error(file: &str, problem: ToolsFileProblem<'_>) -> String {
    let file = display_safe(file);
    match problem {
        ToolsFileProblem::Read(problem) => format!("tools file `{file}` {problem}"),
        ToolsFileProblem::NotUtf8 => format!("tools file `{file}` is not UTF-8 text"),
        ToolsFileProblem::Invalid(error) => format!("tools file `{file}`: {error}"),
        ToolsFileProblem::BadEntries { problems, total } => {
            let mut parts: Vec<String> = problems
                .iter()
                .map(|(i, p)| format!("entry {i} {p}"))
                .collect();
            if total > problems.len() {
                parts.push(format!("and {} more", total - problems.len()));
            }
            format!("tools file `{file}`: {}", parts.join("; "))
        }
    }
}

/// Why a file of an `eval` set (or its tools file, read again for Pi's ranker) cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadProblem {
    /// It is not a regular file, is over its bound, or could not be opened or read.
    File(FileReadProblem),
    /// It is not UTF-8.
    NotUtf8,
    /// It is not JSON.
    NotJson,
    /// It is a symbolic link to nothing.
    DanglingSymlink,
}

/// The error for an `eval` set's file that cannot be read.
pub fn eval_read_error(file: &str, problem: &ReadProblem) -> String {
    let file = display_safe(file);
    match problem {
        ReadProblem::File(problem) => format!("`{file}` {problem}"),
        ReadProblem::NotUtf8 => format!("cannot read `{file}`: not UTF-8"),
        ReadProblem::NotJson => format!("cannot read `{file}`: not JSON"),
        ReadProblem::DanglingSymlink => {
            format!("cannot read `{file}`: it is a symbolic link to a file that does not exist")
        }
    }
}

/// The error for a flag whose value is out of its range or not a number: `--threshold` takes a
/// number from 0 to 1, the caps a whole number from 0 to 1000.
pub fn flag_range_error(flag: &str, whole: bool, min: &str, max: &str) -> String {
    let what = if whole { "a whole number" } else { "a number" };
    format!("{flag} takes {what} from {min} to {max}")
}

/// The error for an `eval --plot` file that cannot be written (`reason`: the operating system's
/// kind of error).
pub fn plot_write_error(file: &str, reason: &str) -> String {
    format!(
        "cannot write the plot `{}`: {}",
        display_safe(file),
        display_safe(reason)
    )
}

/// Why a line of an `eval` queries file (`{"id", "prompt", "relevant_tools"}`) is not a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryProblem {
    /// The line could not be read.
    Unreadable,
    /// The line is longer than this many bytes.
    TooLong(usize),
    /// The line is not a JSON object.
    NotAnObject,
    /// No string `id`.
    NoId,
    /// No string `prompt`.
    NoPrompt,
    /// No array `relevant_tools`.
    NoRelevantTools,
    /// An item of `relevant_tools` is not a string.
    RelevantToolNotString,
    /// `needs` is not a list of non-empty lists of tool names.
    BadNeeds,
    /// `topics` is not a list of strings.
    BadTopics,
    /// `kind` is neither `coding` nor `near-miss`.
    BadKind,
    /// A tool named by `needs` or `relevant_tools` is not in the set's `tools.json` (the name
    /// is not repeated: it comes from the file).
    UnknownTool,
    /// `slice` is not a string.
    BadSlice,
}

/// The error for a line of an `eval` queries file (`line` is 1-based).
pub fn query_line_error(file: &str, line: usize, problem: QueryProblem) -> String {
    let reason = match problem {
        QueryProblem::Unreadable => "unreadable".to_owned(),
        QueryProblem::TooLong(max) => format!("line longer than {} KiB", max / 1024),
        QueryProblem::NotAnObject => "not a JSON object".to_owned(),
        QueryProblem::NoId => "no string `id`".to_owned(),
        QueryProblem::NoPrompt => "no string `prompt`".to_owned(),
        QueryProblem::NoRelevantTools => "no array `relevant_tools` (nor `needs`)".to_owned(),
        QueryProblem::RelevantToolNotString => "a relevant tool is not a string".to_owned(),
        QueryProblem::BadNeeds => {
            "`needs` is not a list of non-empty lists of tool names".to_owned()
        }
        QueryProblem::BadTopics => "`topics` is not a list of strings".to_owned(),
        QueryProblem::BadKind => "`kind` is neither \"coding\" nor \"near-miss\"".to_owned(),
        QueryProblem::UnknownTool => {
            "a tool its `needs` or `relevant_tools` name is not in the set's tools.json (a need the \
             inventory lacks would be dropped and the figures would rise)"
                .to_owned()
        }
        QueryProblem::BadSlice => "`slice` is not a string".to_owned(),
    };
    format!("`{}` line {line}: {reason}", display_safe(file))
}

/// Why a comma-separated list of numbers given to a flag is not usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberListProblem {
    /// The item at this position (1-based) is not a number.
    NotANumber(usize),
    /// The list does not have this many items.
    Count(usize),
}

/// The error for a flag's list of numbers (`--weights`, `--calibration`). The item is named by
/// its position, not repeated.
pub fn number_list_error(flag: &str, problem: NumberListProblem) -> String {
    match problem {
        NumberListProblem::NotANumber(item) => format!("{flag}: item {item} is not a number"),
        NumberListProblem::Count(n) => format!("{flag}: expected {n} comma-separated numbers"),
    }
}

/// The current folder could not be read (`kind`: the operating system's kind of error).
pub fn current_folder_error(kind: &str) -> String {
    format!("cannot read the current folder: {}", display_safe(kind))
}

/// `--cwd DIR` names no folder: nothing would be read from it, so it is refused rather than
/// read as a project without files.
pub fn project_folder_error(dir: &str) -> String {
    format!(
        "project folder {} (--cwd) is not a folder",
        crate::display::display_safe(dir)
    )
}

/// Why Pi's agent folder could not be found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentDirProblem {
    /// It is needed under the home folder, and `HOME` is unset, empty or not an absolute path.
    NoHome,
    /// `PI_CODING_AGENT_DIR` is a `file://` URL that is not a local path.
    BadFileUrl,
}

/// The error for an agent folder that could not be found. The variable's value is not repeated.
pub fn agent_dir_error(problem: AgentDirProblem) -> String {
    match problem {
        AgentDirProblem::NoHome => {
            "cannot find the home folder (HOME is unset, empty or not an absolute path); pass \
             --agent-dir"
                .to_owned()
        }
        AgentDirProblem::BadFileUrl => {
            "PI_CODING_AGENT_DIR is a file:// URL that is not a local path; pass --agent-dir"
                .to_owned()
        }
    }
}

/// The error for a session file that cannot be read or has no such branch; `error` is the
/// ledger's reason, which names a line or an entry, never a value.
pub fn session_file_error(file: &str, error: &dyn Display) -> String {
    format!("session file `{}`: {error}", display_safe(file))
}

/// The error for `--trusted` given anything but `yes` or `no`.
pub fn trusted_error() -> String {
    "--trusted takes yes or no".to_owned()
}

/// Why `gate --call JSON` is not a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallProblem {
    /// Not JSON.
    NotJson,
    /// No string `toolName`.
    NoToolName,
}

/// The error for a `gate --call` that is not a call.
pub fn call_error(problem: CallProblem) -> String {
    match problem {
        CallProblem::NotJson => "--call is not valid JSON",
        CallProblem::NoToolName => "--call needs a string `toolName`",
    }
    .to_owned()
}

/// `gate`'s verdict, always with its reason: `allow:` and why the tool is available (its row's
/// reason in the lists, such as "filtering is off" or "round 1, at a prompt"), or `block:` and
/// the reason (a [`crate::blocked_reason`]).
pub fn gate_verdict(verdict: Result<crate::Availability, &str>) -> String {
    match verdict {
        Ok(available) => format!("allow: {}\n", allow_reason(available)),
        Err(reason) => format!("block: {reason}\n"),
    }
}

/// Why `gate` allows a call to a tool that is `available`: its row's reason in the lists.
pub fn allow_reason(available: crate::Availability) -> String {
    let reason = available.describe();
    match reason.strip_prefix("available: ") {
        Some(rest) => rest.to_owned(),
        None => reason,
    }
}

/// The warning for `list` and `gate` when the branch has a ledger but no settings file was found
/// in the agent folder: filtering is off (its default), so the ledger's decisions do not apply.
pub fn settings_absent_with_ledger() -> String {
    "no settings file (pi-context-decisions/settings.json) was found in the agent folder, so tool \
     filtering is off, its default, and this branch's recorded decisions do not apply; name the \
     agent folder Pi uses with --agent-dir"
        .to_owned()
}

/// The error for `pick --scorer http` without one of its environment variables.
pub fn http_scorer_needs(variable: &str) -> String {
    format!("--scorer http needs {variable}")
}

/// The error for `pick` when the decision model failed (`reason`: the picker's short reason):
/// the extension would make nothing available.
pub fn pick_failed(reason: &dyn Display) -> String {
    format!("{reason}; nothing would be made available (fail closed)")
}

/// Why an HTTP decision endpoint cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointProblem {
    /// The base URL is not a valid `http` or `https` URL.
    BadUrl,
    /// Plain `http` to a host that is not a loopback address.
    NotLoopback,
    /// No model is named.
    NoModel,
}

/// The error for an HTTP decision endpoint that cannot be used. The URL is not repeated.
pub fn endpoint_error(problem: EndpointProblem) -> String {
    match problem {
        EndpointProblem::BadUrl => "the decision base URL is not a valid http or https URL",
        EndpointProblem::NotLoopback => {
            "plain http is only allowed to a loopback address (127.0.0.1, ::1 or localhost)"
        }
        EndpointProblem::NoModel => "no decision model is named",
    }
    .to_owned()
}

/// Why a script file for `simulate` cannot be run.
#[derive(Debug, Clone, Copy)]
pub enum ScriptFileProblem<'a> {
    /// It is not a regular file, is over its bound, or could not be opened or read.
    Read(FileReadProblem),
    /// It is not JSON: where the parser stopped.
    NotJson {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// Its content is not a script: a [`script_error`].
    Script(&'a str),
}

/// The error for a `simulate` script file that cannot be run.
pub fn script_file_error(file: &str, problem: ScriptFileProblem<'_>) -> String {
    let file = display_safe(file);
    match problem {
        ScriptFileProblem::Read(problem) => format!("script `{file}` {problem}"),
        ScriptFileProblem::NotJson { line, column } => {
            format!("script `{file}` is not valid JSON (line {line}, column {column})")
        }
        ScriptFileProblem::Script(error) => format!("script `{file}`: {error}"),
    }
}

/// What is wrong in a `simulate` script: the field and what was expected, never its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptProblem {
    /// The script is not a JSON object.
    NotAnObject,
    /// A tool list is not an inventory; `field` names it (none: an event's `tool`).
    NotAnInventory {
        /// `tools`, or none for `register_tool`'s `tool`.
        field: Option<&'static str>,
        /// The model's reason.
        error: InventoryError,
    },
    /// An entry of a tool list is not a usable tool.
    BadTool {
        /// `tools`, or none for `register_tool`'s `tool`.
        field: Option<&'static str>,
        /// The entry's index.
        entry: usize,
        /// The model's reason.
        problem: ToolProblem,
    },
    /// An `mcpOrigins` entry is not `[name, "global"|"project"]`.
    McpOrigin(usize),
    /// A field that must be an array of strings (`active`, `names`).
    NotStrings(&'static str),
    /// `branch` is neither an array of entries nor `"unreadable"`.
    Branch,
    /// `answers` is not an array.
    AnswersNotArray,
    /// An `answers` entry is neither a string nor a known error.
    Answer(usize),
    /// `events` is not an array.
    EventsNotArray,
    /// An event has no `type`.
    NoType,
    /// An event's `type` is not one the simulator knows.
    UnknownType,
    /// `job` is not a job number.
    Job,
    /// `register_tool` has no `tool`.
    NoTool,
    /// `leafIndex` is not an entry index.
    LeafIndex,
    /// `leafIndex` is past the last entry.
    LeafPastEnd,
    /// `toolName` is not a string.
    ToolName,
}

/// The error for a `simulate` script, naming the event (its index) when the problem is in one.
pub fn script_error(event: Option<usize>, problem: &ScriptProblem) -> String {
    let body = match problem {
        ScriptProblem::NoType => {
            return match event {
                Some(i) => format!("event {i} has no `type`"),
                None => "an event has no `type`".to_owned(),
            };
        }
        ScriptProblem::NotAnObject => "the script is not a JSON object".to_owned(),
        ScriptProblem::NotAnInventory { field, error } => match field {
            Some(f) => format!("`{f}`: {error}"),
            None => error.to_string(),
        },
        ScriptProblem::BadTool {
            field,
            entry,
            problem,
        } => match field {
            Some(f) => format!("`{f}`: entry {entry} {problem}"),
            None => format!("entry {entry} {problem}"),
        },
        ScriptProblem::McpOrigin(entry) => {
            format!("`mcpOrigins` entry {entry} must be [name, \"global\"|\"project\"]")
        }
        ScriptProblem::NotStrings(field) => format!("`{field}` must be an array of strings"),
        ScriptProblem::Branch => {
            "`branch` must be an array of entries or \"unreadable\"".to_owned()
        }
        ScriptProblem::AnswersNotArray => "`answers` must be an array".to_owned(),
        ScriptProblem::Answer(entry) => format!(
            "`answers` entry {entry} must be a string or {{\"error\": \
             \"unavailable\"|\"configuration\"|\"cancelled\"}}"
        ),
        ScriptProblem::EventsNotArray => "`events` must be an array".to_owned(),
        ScriptProblem::UnknownType => "unknown type (expected session_start, reload, \
             before_agent_start, turn_end, tool_call, decided, register_tool, set_active_tools, \
             settings_saved, session_tree, decisions_test, test_decided or decisions_list)"
            .to_owned(),
        ScriptProblem::Job => "`job` must be a job number".to_owned(),
        ScriptProblem::NoTool => "`tool` is missing".to_owned(),
        ScriptProblem::LeafIndex => "`leafIndex` must be an entry index".to_owned(),
        ScriptProblem::LeafPastEnd => "`leafIndex` is past the last entry".to_owned(),
        ScriptProblem::ToolName => "`toolName` must be a string".to_owned(),
    };
    match event {
        Some(i) => format!("event {i}: {body}"),
        None => body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tools_file_error() {
        let invalid = InventoryError::NotAnArray { found: "an object" };
        let problems = [
            (0, ToolProblem::MissingField("name")),
            (3, ToolProblem::EmptyName),
        ];
        let all = [
            ToolsFileProblem::Read(FileReadProblem::NotFound),
            ToolsFileProblem::Read(FileReadProblem::Directory),
            ToolsFileProblem::Read(FileReadProblem::Fifo),
            ToolsFileProblem::Read(FileReadProblem::Device),
            ToolsFileProblem::Read(FileReadProblem::Socket),
            ToolsFileProblem::Read(FileReadProblem::Symlink),
            ToolsFileProblem::Read(FileReadProblem::TooLarge { limit: 1024 }),
            ToolsFileProblem::Read(FileReadProblem::Io(std::io::ErrorKind::PermissionDenied)),
            ToolsFileProblem::NotUtf8,
            ToolsFileProblem::Invalid(&invalid),
            ToolsFileProblem::BadEntries {
                problems: &problems,
                total: 2,
            },
            ToolsFileProblem::BadEntries {
                problems: &problems,
                total: 12,
            },
        ];
        insta::assert_snapshot!(all
            .map(|p| tools_file_error("tools\u{1b}[2J.json", p))
            .join("\n"));
    }

    #[test]
    fn every_eval_input_error() {
        let mut lines: Vec<String> = [
            ReadProblem::File(FileReadProblem::Io(std::io::ErrorKind::PermissionDenied)),
            ReadProblem::File(FileReadProblem::Fifo),
            ReadProblem::File(FileReadProblem::TooLarge { limit: 67_108_864 }),
            ReadProblem::NotUtf8,
            ReadProblem::NotJson,
            ReadProblem::DanglingSymlink,
        ]
        .iter()
        .map(|p| eval_read_error("set/queries.jsonl", p))
        .collect();
        lines.extend(
            [
                QueryProblem::Unreadable,
                QueryProblem::TooLong(64 * 1024),
                QueryProblem::NotAnObject,
                QueryProblem::NoId,
                QueryProblem::NoPrompt,
                QueryProblem::NoRelevantTools,
                QueryProblem::RelevantToolNotString,
                QueryProblem::BadNeeds,
                QueryProblem::BadTopics,
                QueryProblem::BadKind,
                QueryProblem::UnknownTool,
                QueryProblem::BadSlice,
            ]
            .map(|p| query_line_error("set/queries.jsonl", 7, p)),
        );
        lines.push(number_list_error(
            "--weights",
            NumberListProblem::NotANumber(2),
        ));
        lines.push(number_list_error(
            "--calibration",
            NumberListProblem::Count(4),
        ));
        lines.push(plot_write_error("out/sweep.svg", "permission denied"));
        lines.push(flag_range_error("--threshold", false, "0", "1"));
        lines.push(flag_range_error("--max-new-tools", true, "0", "1000"));
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn every_argument_error() {
        let lines = [
            program_error("--call is not valid JSON"),
            with_warnings("allow\n".into(), &["one".into(), "two".into()]),
            with_warnings("allow\n".into(), &[]),
            current_folder_error("entity not found"),
            agent_dir_error(AgentDirProblem::NoHome),
            agent_dir_error(AgentDirProblem::BadFileUrl),
            session_file_error("s.jsonl", &"no entry with that id"),
            trusted_error(),
            call_error(CallProblem::NotJson),
            call_error(CallProblem::NoToolName),
            gate_verdict(Ok(crate::Availability::FilteringOff)),
            gate_verdict(Ok(crate::Availability::Internal)),
            gate_verdict(Err("Blocked: not available.")),
            settings_absent_with_ledger(),
            http_scorer_needs("CONTEXT_DECISIONS_MODEL"),
            pick_failed(&"the decision model did not answer"),
            endpoint_error(EndpointProblem::BadUrl),
            endpoint_error(EndpointProblem::NotLoopback),
            endpoint_error(EndpointProblem::NoModel),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn every_script_error() {
        let mut lines = vec![
            script_file_error("s.json", ScriptFileProblem::Read(FileReadProblem::NotFound)),
            script_file_error("s.json", ScriptFileProblem::Read(FileReadProblem::Device)),
            script_file_error(
                "s.json",
                ScriptFileProblem::Read(FileReadProblem::TooLarge { limit: 268_435_456 }),
            ),
            script_file_error("s.json", ScriptFileProblem::NotJson { line: 3, column: 9 }),
            script_file_error(
                "s.json",
                ScriptFileProblem::Script("`events` must be an array"),
            ),
        ];
        let problems = [
            ScriptProblem::NotAnObject,
            ScriptProblem::NotAnInventory {
                field: Some("tools"),
                error: InventoryError::NotAnArray { found: "a string" },
            },
            ScriptProblem::NotAnInventory {
                field: None,
                error: InventoryError::NotAnArray { found: "a string" },
            },
            ScriptProblem::BadTool {
                field: Some("tools"),
                entry: 2,
                problem: ToolProblem::EmptyName,
            },
            ScriptProblem::BadTool {
                field: None,
                entry: 0,
                problem: ToolProblem::MissingField("name"),
            },
            ScriptProblem::McpOrigin(1),
            ScriptProblem::NotStrings("active"),
            ScriptProblem::Branch,
            ScriptProblem::AnswersNotArray,
            ScriptProblem::Answer(4),
            ScriptProblem::EventsNotArray,
            ScriptProblem::NoType,
            ScriptProblem::UnknownType,
            ScriptProblem::Job,
            ScriptProblem::NoTool,
            ScriptProblem::LeafIndex,
            ScriptProblem::LeafPastEnd,
            ScriptProblem::ToolName,
        ];
        for p in &problems {
            lines.push(script_error(None, p));
            lines.push(script_error(Some(5), p));
        }
        insta::assert_snapshot!(lines.join("\n"));
    }
}
