//! Warnings a person reads: the names-only `mcp.json` reader's codes, the settings and project
//! allowlist readers' field warnings, the fallbacks when a file cannot be read or written, and
//! the errors for allowlist entries that are refused.
//!
//! None of them contains a path or a value from a file: the codes carry only the file's role, a
//! validated server name, a field name this product defines, or a rule.

use crate::display::display_safe;
use crate::words::{code, fit, list_title, TOOLS_TAB};
use pcd_model::{
    bound_label, AllowlistError, ConfigFile, ConfigWarning, ConfigWarningCode, InventoryWarning,
    InventoryWarningCode, RemedyList, Settings, SettingsWarning, SettingsWarningCode,
    MAX_GROUP_NAME_CHARS, MAX_TOOL_NAME_CHARS,
};

/// How many tools an inventory warning names; the rest are counted.
const INVENTORY_WARNING_NAMES: usize = 5;

/// The sentence for a warning about Pi's tool inventory. Tool names are shown bounded and made
/// safe (a name the ledger cannot record is odd by definition).
///
/// ```
/// use pcd_model::{InventoryWarning, InventoryWarningCode};
///
/// let text = pcd_ui_text::inventory_warning(&InventoryWarning {
///     code: InventoryWarningCode::UnrecordableNames,
///     tools: vec!["fetch page".into()],
/// });
/// assert!(text.starts_with("1 tool has a name"));
/// assert!(text.contains("`fetch page`"));
/// ```
pub fn inventory_warning(warning: &InventoryWarning) -> String {
    let n = warning.tools.len();
    let mut names: Vec<String> = warning
        .tools
        .iter()
        .take(INVENTORY_WARNING_NAMES)
        .map(|t| code(&fit(t, 64)))
        .collect();
    if n > INVENTORY_WARNING_NAMES {
        names.push(format!("and {} more", n - INVENTORY_WARNING_NAMES));
    }
    let names = names.join(", ");
    match warning.code {
        InventoryWarningCode::UnrecordableNames => {
            let (tools, have, them, their) = if n == 1 {
                ("1 tool", "has a name", "it", "its")
            } else {
                (&*format!("{n} tools"), "have names", "them", "their")
            };
            format!(
                "{tools} {have} that tool filtering cannot record (a space or other whitespace, \
                 or too long): {names}. Filtering leaves {them} as Pi declared {them}: never \
                 decided, never made available and never removed, and {their} calls are blocked \
                 unless an allowlist entry for {their} MCP server or extension allows them \
                 ({TOOLS_TAB}). Every other tool is decided as usual."
            )
        }
    }
}

/// The sentence for one warning of the names-only `mcp.json` reader.
///
/// ```
/// use pcd_model::{ConfigFile, ConfigWarning, ConfigWarningCode};
///
/// let text = pcd_ui_text::config_warning(&ConfigWarning {
///     file: ConfigFile::Project,
///     code: ConfigWarningCode::NameClash,
///     server: Some("dev_radius".into()),
/// });
/// assert!(text.starts_with("In the project MCP config, server `dev_radius`"));
/// ```
pub fn config_warning(warning: &ConfigWarning) -> String {
    let file = match warning.file {
        ConfigFile::Global => "global",
        ConfigFile::Project => "project",
    };
    let server = match &warning.server {
        Some(name) => format!("server {}", code(&bound_label(name))),
        None => "a server".to_owned(),
    };
    // The reader exists only to learn which file defines each built-in MCP server, so what a
    // file-level problem means is always about scopes. Global is also the fallback, so only the
    // project file's problems change anything.
    let unread = match warning.file {
        ConfigFile::Global => "Its servers count as Global either way, so no allowlist changes.",
        ConfigFile::Project => {
            "Its servers count as Global (their tools go in the global allowlists) until it is \
             fixed and Pi is reloaded (`/reload`)."
        }
    };
    match warning.code {
        ConfigWarningCode::ReadOrParse => {
            format!("The {file} MCP config could not be read or is not valid JSON. {unread}")
        }
        ConfigWarningCode::NotObject => {
            format!("The {file} MCP config, or its `mcpServers`, is not a JSON object. {unread}")
        }
        ConfigWarningCode::NotRegularFile => format!(
            "The {file} MCP config is not a regular file (it is a symbolic link, a directory or \
             a device), so it was not read. {unread}"
        ),
        ConfigWarningCode::TooLarge => {
            format!("The {file} MCP config is larger than 64 KiB, so it was not read. {unread}")
        }
        ConfigWarningCode::TooManyServers => format!(
            "The {file} MCP config defines more than 1000 servers, so it was not read. {unread}"
        ),
        ConfigWarningCode::AutoEnableCodemodeType => format!(
            "In the {file} MCP config, `autoEnableCodemode` is not true or false, so Pi ignores \
             it. Server scopes are not affected."
        ),
        ConfigWarningCode::InvalidName => format!(
            "In the {file} MCP config, a server name has characters other than ASCII letters, \
             digits, `-` and `_`, so Pi skips that server."
        ),
        ConfigWarningCode::ServerNotObject => {
            format!("In the {file} MCP config, {server} is not a JSON object, so Pi skips it.")
        }
        ConfigWarningCode::OverrideWithoutBase => format!(
            "In the {file} MCP config, {server} only changes settings (`enabled`, `exposure`, \
             `toolExposure`), but the global config has no server with exactly that name, so Pi \
             skips it."
        ),
        ConfigWarningCode::OverrideExtraKeys => format!(
            "In the {file} MCP config, {server} has no `command`, `url` or `type`, so it may \
             only change `enabled`, `exposure` and `toolExposure`; it has other keys, so Pi \
             skips it and the global server stays as it was."
        ),
        ConfigWarningCode::NameClash => format!(
            "In the {file} MCP config, {server} has the same namespace as a server defined \
             before it (`-` and `_` count as the same), so Pi keeps the earlier one."
        ),
        ConfigWarningCode::ProjectAuth => format!(
            "In the {file} MCP config, {server} sets `auth`, which Pi accepts only in the global \
             config, so Pi skips it."
        ),
        ConfigWarningCode::InvalidServer => format!(
            "In the {file} MCP config, {server} is not a valid server definition for Pi, so Pi \
             skips it."
        ),
    }
}

/// Which settings file a [`SettingsWarning`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SettingsFile {
    /// The global settings (`tools.*`, `decision.*` and the global allowlists).
    Global,
    /// The project allowlists.
    Project,
}

/// The sentence for a settings reader warning: which field, what was wrong and what applies
/// instead (the default, or the list without the refused entry).
///
/// ```
/// use pcd_model::{SettingsWarning, SettingsWarningCode};
/// use pcd_ui_text::{settings_warning, SettingsFile};
///
/// let text = settings_warning(SettingsFile::Global, &SettingsWarning {
///     field: "decision.batchSize",
///     code: SettingsWarningCode::OutOfRange { min: "1".into(), max: "1000".into() },
/// });
/// assert_eq!(text, "Settings: `decision.batchSize` must be between 1 and 1000; using the default (50).");
/// ```
pub fn settings_warning(file: SettingsFile, warning: &SettingsWarning) -> String {
    let field = warning.field;
    if let Some(list) = allowlist_field(file, field) {
        return allowlist_field_warning(file, list, field, &warning.code);
    }
    let prefix = match file {
        SettingsFile::Global => "Settings",
        SettingsFile::Project => "Project allowlists",
    };
    let fallback = default_phrase(field);
    match &warning.code {
        SettingsWarningCode::NotAnObject if field == "(top level)" => match file {
            SettingsFile::Global => "Settings: the global settings are not a JSON object; every \
                 setting uses its default."
                .to_owned(),
            SettingsFile::Project => "Project allowlists: the file is not a JSON object; no \
                 project allowlist applies."
                .to_owned(),
        },
        SettingsWarningCode::NotAnObject => format!(
            "{prefix}: `{field}` is not a JSON object; every setting in it uses its default."
        ),
        SettingsWarningCode::WrongType { expected } => {
            format!("{prefix}: `{field}` must be {expected}; {fallback}.")
        }
        SettingsWarningCode::OutOfRange { min, max } => {
            format!("{prefix}: `{field}` must be between {min} and {max}; {fallback}.")
        }
        SettingsWarningCode::UnknownValue { accepted } => format!(
            "{prefix}: `{field}` must be one of {}; {fallback}.",
            accepted
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        SettingsWarningCode::BadFormat { rule } => {
            format!("{prefix}: `{field}` must be {rule}; {fallback}.")
        }
        SettingsWarningCode::InvalidEntry { index, error } => format!(
            "{prefix}: entry {} of `{field}` was skipped: {}",
            index + 1,
            allowlist_error(RemedyList::Tools, error)
        ),
    }
}

fn allowlist_field(file: SettingsFile, field: &str) -> Option<RemedyList> {
    match (file, field) {
        (SettingsFile::Global, "tools.alwaysAllowedTools")
        | (SettingsFile::Project, "alwaysAllowedTools") => Some(RemedyList::Tools),
        (SettingsFile::Global, "tools.alwaysAllowedMcpServers")
        | (SettingsFile::Project, "alwaysAllowedMcpServers") => Some(RemedyList::Groups),
        _ => None,
    }
}

fn allowlist_field_warning(
    file: SettingsFile,
    list: RemedyList,
    field: &str,
    code: &SettingsWarningCode,
) -> String {
    let scope = match file {
        SettingsFile::Global => "global",
        SettingsFile::Project => "project",
    };
    let name = format!("the {scope} {} list (`{field}`)", list_title(list));
    match code {
        SettingsWarningCode::InvalidEntry { index, error } => format!(
            "Allowlists: entry {} of {name} was skipped; the rest of the list applies. {}",
            index + 1,
            allowlist_error(list, error)
        ),
        SettingsWarningCode::WrongType { expected } => format!(
            "Allowlists: {name} must be {expected}, so none of it applies until it is saved \
             again ({TOOLS_TAB})."
        ),
        _ => format!(
            "Allowlists: {name} could not be read, so none of it applies. Save the list again \
             in {TOOLS_TAB}."
        ),
    }
}

/// `using the default (…)` for a settings field, from [`Settings::default`] so the text cannot
/// drift from the real defaults.
fn default_phrase(field: &str) -> String {
    let d = Settings::default();
    let on_off = |b: bool| if b { "on" } else { "off" }.to_owned();
    let value = match field {
        "tools.enabled" => on_off(d.tools.enabled),
        "tools.readMcpConfig" => on_off(d.tools.read_mcp_config),
        "tools.mode" => format!("`{}`", d.tools.mode.as_str()),
        "tools.cadence" => format!("`{}`", d.tools.cadence.as_str()),
        "decision.provider" => return "no decision model is selected".to_owned(),
        "decision.model" | "decision.baseUrl" | "decision.apiKeyEnv" => {
            return "it is ignored".to_owned()
        }
        "decision.threshold" => d.decision.threshold.to_string(),
        "decision.maxNewTools" => d.decision.max_new_tools.to_string(),
        "decision.maxNewGroups" => d.decision.max_new_groups.to_string(),
        "decision.minimumCandidates" => {
            return format!(
                "using the default ({} tools, {} groups)",
                pcd_model::MINIMUM_TOOLS_DEFAULT,
                pcd_model::MINIMUM_GROUPS_DEFAULT
            )
        }
        "decision.batchSize" => d.decision.batch_size.to_string(),
        "decision.concurrency" => d.decision.concurrency.to_string(),
        "decision.timeoutMs" => d.decision.timeout_ms.to_string(),
        "decision.failMode" => format!("`{}`", d.decision.fail_mode.as_str()),
        _ => return "using its default".to_owned(),
    };
    format!("using the default ({value})")
}

/// Why a settings or allowlist file could not be read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileProblem {
    /// A step of reading or saving failed (permissions, a read-only folder or file system, a
    /// full disk, a quota, an I/O error): which step, and the operating system's kind of error.
    Io {
        /// The step that failed.
        step: FileStep,
        /// The operating system's kind of error.
        kind: std::io::ErrorKind,
    },
    /// The file is not valid JSON.
    NotJson,
    /// The file is larger than the reader accepts.
    TooLarge {
        /// The limit, in KiB.
        limit_kib: u64,
    },
    /// The path is a symbolic link, a directory or a device.
    NotRegularFile,
    /// The file belongs to another user, so a save does not replace it.
    NotOwned,
    /// The `.lock` file beside it is a symbolic link or not a regular file, so the lock that
    /// keeps two saves apart cannot be taken.
    LockNotRegularFile,
    /// The file holds a lone surrogate escape (`"\ud800"`): it is read field by field, but a
    /// save would have to rewrite that text, so it is not saved.
    NotUnicode,
    /// The file holds a number too large to read (`1e400`): it is read field by field (that
    /// field takes its default), but a save would have to rewrite that number, so it is not
    /// saved.
    HugeNumber,
}

/// The steps of reading and saving a settings or allowlist file, in the order a save takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileStep {
    /// Reading the file.
    Read,
    /// Creating the file's folder.
    CreateFolder,
    /// Creating or locking the `.lock` file beside the file.
    Lock,
    /// Creating the temporary file beside the file.
    CreateTemporary,
    /// Writing the temporary file.
    Write,
    /// Syncing the temporary file to the disk.
    Sync,
    /// Renaming the temporary file over the file.
    Rename,
    /// Syncing the folder after the rename (the new file is already in place).
    SyncFolder,
}

/// Why a step failed, in words: the causes a person can act on by name, else the operating
/// system's kind of error.
fn io_reason(kind: std::io::ErrorKind) -> String {
    use std::io::ErrorKind as K;
    match kind {
        K::PermissionDenied => {
            "permission denied (the folder or the file is read-only for this user)".to_owned()
        }
        K::ReadOnlyFilesystem => "the file system is read-only".to_owned(),
        K::StorageFull => "the disk is full".to_owned(),
        K::QuotaExceeded => "the disk quota is exceeded".to_owned(),
        K::FileTooLarge => "the file size limit is reached".to_owned(),
        K::NotADirectory => "a file is where a folder should be".to_owned(),
        K::WriteZero => "the disk took no more bytes".to_owned(),
        other => display_safe(&other.to_string()),
    }
}

fn step_phrase(step: FileStep) -> &'static str {
    match step {
        FileStep::Read => "reading the file",
        FileStep::CreateFolder => "creating its folder",
        FileStep::Lock => "taking its lock",
        FileStep::CreateTemporary => "creating the temporary file beside it",
        FileStep::Write => "writing the temporary file",
        FileStep::Sync => "syncing the temporary file to the disk",
        FileStep::Rename => "renaming the temporary file over it",
        FileStep::SyncFolder => "syncing the folder after the rename",
    }
}

/// What applies instead when a settings or allowlist file cannot be read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SettingsFallback {
    /// The global settings cannot be read and this branch already filters: it keeps enforcing
    /// what it recorded and adds nothing.
    GlobalUnreadableBranchKept(FileProblem),
    /// The global settings cannot be read and this branch has no ledger: calls to external tools
    /// no allowlist names are blocked, and nothing is recorded or changed.
    GlobalUnreadableBlocks(FileProblem),
    /// The project allowlists cannot be read; the last good read still applies.
    ProjectUnreadableLastGood(FileProblem),
    /// The project allowlists cannot be read and were never read: only the global lists apply.
    ProjectUnreadableGlobalOnly(FileProblem),
    /// Saving the global settings failed; nothing was changed.
    GlobalSaveFailed(FileProblem),
    /// Saving the project allowlists failed; nothing was changed.
    ProjectSaveFailed(FileProblem),
    /// The names-only `mcp.json` read is not approved: built-in MCP servers count as Global.
    McpConfigReadNotApproved,
}

fn problem_sentence(file: SettingsFile, problem: FileProblem, saving: bool) -> String {
    let what = match file {
        SettingsFile::Global => "global settings",
        SettingsFile::Project => "project allowlists",
    };
    match (problem, saving) {
        (FileProblem::Io { kind, .. }, false) => {
            format!("The {what} could not be read: {}.", io_reason(kind))
        }
        (
            FileProblem::Io {
                step: FileStep::SyncFolder,
                kind,
            },
            true,
        ) => format!(
            "The {what} were saved, but {} failed: {}.",
            step_phrase(FileStep::SyncFolder),
            io_reason(kind)
        ),
        (FileProblem::Io { step, kind }, true) => format!(
            "Saving the {what} failed while {}: {}.",
            step_phrase(step),
            io_reason(kind)
        ),
        (FileProblem::LockNotRegularFile, _) => format!(
            "The lock file beside the {what} file is a symbolic link or not a regular file, so \
             its lock cannot be taken."
        ),
        (FileProblem::NotUnicode, _) => format!(
            "The {what} file holds text that is not valid Unicode (a lone surrogate escape such \
             as `\\ud800`); every other field is read, but a save would have to rewrite it."
        ),
        (FileProblem::HugeNumber, _) => format!(
            "The {what} file holds a number too large to read (such as `1e400`); every other \
             field is read, but a save would have to rewrite it."
        ),
        (FileProblem::NotJson, _) => format!("The {what} file is not valid JSON."),
        (FileProblem::TooLarge { limit_kib }, _) => {
            format!("The {what} file is larger than {limit_kib} KiB.")
        }
        (FileProblem::NotOwned, _) => {
            format!("The {what} file belongs to another user, so it is not replaced.")
        }
        (FileProblem::NotRegularFile, _) => format!(
            "The {what} file is not a regular file (it is a symbolic link, a directory or a \
             device)."
        ),
    }
}

fn save_consequence(problem: FileProblem) -> &'static str {
    match problem {
        FileProblem::Io {
            step: FileStep::SyncFolder,
            ..
        } => "A power loss may still bring back the old file.",
        FileProblem::Io { .. } => {
            "Nothing was saved and the settings in use are unchanged. Save again once that is \
             resolved."
        }
        FileProblem::LockNotRegularFile => {
            "Nothing was saved and the settings in use are unchanged. Remove the lock file (it \
             is only ever an empty regular file), then save again."
        }
        // The store never overwrites a file it cannot read: that would lose what is in it.
        _ => {
            "Nothing was saved, so what is in that file is not lost, and the settings in use are \
             unchanged. Fix the file, then save again."
        }
    }
}

/// How to fix an unreadable global settings file: where it is, and when it is read again.
const GLOBAL_FIX: &str = "Fix or remove `pi-context-decisions/settings.json` in Pi's agent folder \
     (`~/.pi/agent`, or the folder `PI_CODING_AGENT_DIR` names); it is read again at the next \
     prompt.";

/// The sentences for a settings fallback: what went wrong, then what applies instead (and, for
/// the global settings, the file and how to fix it). No path of the machine and no error text
/// from the system is part of it.
pub fn settings_fallback(fallback: SettingsFallback) -> String {
    use SettingsFile::{Global, Project};
    let (cause, consequence) = match fallback {
        SettingsFallback::GlobalUnreadableBranchKept(p) => {
            return format!(
                "{} Tool filtering keeps enforcing what this branch already has, with the \
                 allowlists, and adds nothing until they can be read again. {GLOBAL_FIX}",
                problem_sentence(Global, p, false)
            )
        }
        SettingsFallback::GlobalUnreadableBlocks(p) => {
            return format!(
                "{} Whether tool filtering is on cannot be known, so until they can be read \
                 again calls to MCP and extension tools that no allowlist names are blocked; \
                 nothing is recorded and the tools declared to the model stay as they are. \
                 {GLOBAL_FIX}",
                problem_sentence(Global, p, false)
            )
        }
        SettingsFallback::ProjectUnreadableLastGood(p) => (
            problem_sentence(Project, p, false),
            "The project lists last read still apply.",
        ),
        SettingsFallback::ProjectUnreadableGlobalOnly(p) => (
            problem_sentence(Project, p, false),
            "Only the global allowlists apply.",
        ),
        SettingsFallback::GlobalSaveFailed(p) => {
            (problem_sentence(Global, p, true), save_consequence(p))
        }
        SettingsFallback::ProjectSaveFailed(p) => {
            (problem_sentence(Project, p, true), save_consequence(p))
        }
        SettingsFallback::McpConfigReadNotApproved => {
            return "Built-in MCP servers all count as Global, because reading server names from \
                    `mcp.json` is not approved: their tools and pins belong in the global \
                    allowlists. Approve the read to place project servers in the project lists."
                .to_owned()
        }
    };
    format!("{cause} {consequence}")
}

/// The error for an allowlist entry that is refused, said for the list it was meant for, with
/// what to do instead where something else would work.
pub fn allowlist_error(list: RemedyList, error: &AllowlistError) -> String {
    match error {
        AllowlistError::Empty => "The entry is empty.".to_owned(),
        AllowlistError::NotAString => "The entry is not a string.".to_owned(),
        AllowlistError::ToolNameTooLong { chars } => format!(
            "A tool name has at most {MAX_TOOL_NAME_CHARS} characters and this one has {chars}, \
             so it cannot be allowlisted by name. Allowlist its MCP server or extension \
             instead ({}), or let the decision model decide.",
            list_title(RemedyList::Groups)
        ),
        AllowlistError::NotUnicode { position } => format!(
            "A tool name cannot contain text that is not valid Unicode (character {} is U+FFFD, \
             which stands for it, such as a lone surrogate escape in the file).",
            position + 1
        ),
        AllowlistError::ToolNameWhitespace { position } => format!(
            "A tool name cannot contain whitespace (character {} is whitespace).",
            position + 1
        ),
        AllowlistError::GroupInvalidCharacter { position } => format!(
            "An MCP server or extension entry may contain only ASCII letters, digits, `-` and \
             `_`, optionally after `mcp__` or `ext__` (character {} is not one). For an \
             extension, use the `ext__` key that `/decisions mcp list` shows.",
            position + 1
        ),
        AllowlistError::EmptyAfterPrefix { prefix } => match *prefix {
            "ext__" => "`ext__` must be followed by an extension's key.".to_owned(),
            _ => "`mcp__` must be followed by a server name.".to_owned(),
        },
        AllowlistError::GroupNameTooLong { chars } => {
            let tools = match list {
                RemedyList::Tools => "its tools by name".to_owned(),
                RemedyList::Groups => {
                    format!("its tools by name ({})", list_title(RemedyList::Tools))
                }
            };
            format!(
                "This server or extension name has {chars} characters; a group entry allows at \
                 most {MAX_GROUP_NAME_CHARS}, so it cannot be pinned. Allowlist {tools} instead, \
                 or let the decision model decide."
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventory_warnings_name_a_few_tools_safely() {
        let one = inventory_warning(&InventoryWarning {
            code: InventoryWarningCode::UnrecordableNames,
            tools: vec!["fetch page".into()],
        });
        let many = inventory_warning(&InventoryWarning {
            code: InventoryWarningCode::UnrecordableNames,
            tools: ["evil`\u{202E}\u{1b}[2J name".to_owned(), "x ".repeat(200)]
                .into_iter()
                .chain((0..7).map(|i| format!("tool {i}")))
                .collect(),
        });
        assert!(!many.contains('\u{202E}') && !many.contains('\u{1b}'));
        assert!(many.contains("and 4 more"), "{many}");
        insta::assert_snapshot!(format!("{one}\n{many}"));
    }
    use pcd_model::ProjectAllowlistFile;
    use serde_json::json;

    #[test]
    fn every_config_warning() {
        let mut all = String::new();
        for code in ConfigWarningCode::ALL {
            for file in [ConfigFile::Global, ConfigFile::Project] {
                let server = match code {
                    ConfigWarningCode::InvalidName
                    | ConfigWarningCode::ReadOrParse
                    | ConfigWarningCode::NotObject
                    | ConfigWarningCode::NotRegularFile
                    | ConfigWarningCode::TooLarge
                    | ConfigWarningCode::TooManyServers
                    | ConfigWarningCode::AutoEnableCodemodeType => None,
                    _ => Some("dev_radius".to_owned()),
                };
                let text = config_warning(&ConfigWarning { file, code, server });
                all.push_str(&format!(
                    "{} / {}:\n{text}\n\n",
                    code.as_str(),
                    file.as_str()
                ));
            }
        }
        insta::assert_snapshot!(all);
    }

    #[test]
    fn config_warning_without_a_server_name_still_reads() {
        let text = config_warning(&ConfigWarning {
            file: ConfigFile::Global,
            code: ConfigWarningCode::InvalidServer,
            server: None,
        });
        assert_eq!(
            text,
            "In the global MCP config, a server is not a valid server definition for Pi, so Pi \
             skips it."
        );
    }

    #[test]
    fn long_server_names_are_bounded() {
        let text = config_warning(&ConfigWarning {
            file: ConfigFile::Global,
            code: ConfigWarningCode::NameClash,
            server: Some("s".repeat(300)),
        });
        assert!(!text.contains(&"s".repeat(49)));
        assert!(text.contains('…'));
    }

    /// Real warnings from the model's readers, with secrets planted in every value.
    #[test]
    fn every_settings_warning_from_the_real_readers() {
        let secret = "sk-SECRET-1234";
        let global = json!({
            "tools": {
                "enabled": secret, "mode": secret, "cadence": 3, "readMcpConfig": "yes",
                "alwaysAllowedTools": ["ok", format!("{secret} x"), 5, "t".repeat(129)],
                "alwaysAllowedMcpServers": ["kb", format!("{secret}.x"), "s".repeat(65), "mcp__"],
            },
            "decision": {
                "provider": secret, "model": "", "baseUrl": format!("ftp://{secret}"),
                "apiKeyEnv": format!("{secret}!"), "threshold": 7, "maxNewTools": -1,
                "maxNewGroups": 1.5, "minimumCandidates": "x", "batchSize": 0,
                "concurrency": 65, "timeoutMs": 1, "failMode": secret,
            }
        });
        let (_, warnings) = Settings::from_json(&global);
        assert!(warnings.len() >= 18, "{}", warnings.len());
        let mut all = String::new();
        for w in &warnings {
            let text = settings_warning(SettingsFile::Global, w);
            assert!(!text.contains("SECRET"), "{text}");
            all.push_str(&text);
            all.push('\n');
        }
        let (_, warnings) = ProjectAllowlistFile::from_json(&json!({
            "alwaysAllowedTools": secret,
            "alwaysAllowedMcpServers": ["ext__", "ext__@acme"],
        }));
        for w in &warnings {
            let text = settings_warning(SettingsFile::Project, w);
            assert!(!text.contains("SECRET"), "{text}");
            all.push_str(&text);
            all.push('\n');
        }
        for (file, value) in [
            (SettingsFile::Global, json!([secret])),
            (SettingsFile::Global, json!({"tools": secret})),
        ] {
            for w in Settings::from_json(&value).1 {
                all.push_str(&settings_warning(file, &w));
                all.push('\n');
            }
        }
        for w in ProjectAllowlistFile::from_json(&json!(secret)).1 {
            all.push_str(&settings_warning(SettingsFile::Project, &w));
            all.push('\n');
        }
        assert!(!all.contains("SECRET"));
        insta::assert_snapshot!(all);
    }

    /// Issue 18, item 7: a failed save says which step failed and why (a read-only folder, a
    /// full disk, a symlinked lock file), not only that it failed.
    #[test]
    fn every_save_failure_gives_its_reason() {
        use std::io::ErrorKind as K;
        let mut all = Vec::new();
        for (step, kind) in [
            (FileStep::CreateFolder, K::PermissionDenied),
            (FileStep::Lock, K::PermissionDenied),
            (FileStep::Read, K::Other),
            (FileStep::CreateTemporary, K::PermissionDenied),
            (FileStep::CreateTemporary, K::ReadOnlyFilesystem),
            (FileStep::Write, K::StorageFull),
            (FileStep::Write, K::QuotaExceeded),
            (FileStep::Write, K::FileTooLarge),
            (FileStep::Write, K::WriteZero),
            (FileStep::Sync, K::Other),
            (FileStep::Rename, K::NotADirectory),
            (FileStep::SyncFolder, K::Other),
        ] {
            all.push(settings_fallback(SettingsFallback::GlobalSaveFailed(
                FileProblem::Io { step, kind },
            )));
        }
        all.push(settings_fallback(SettingsFallback::ProjectSaveFailed(
            FileProblem::LockNotRegularFile,
        )));
        all.push(settings_fallback(SettingsFallback::GlobalSaveFailed(
            FileProblem::NotUnicode,
        )));
        assert!(all[4].contains("read-only"), "{}", all[4]);
        assert!(all[5].contains("disk is full"), "{}", all[5]);
        assert!(all[12].contains("lock file"), "{}", all[12]);
        insta::assert_snapshot!(all.join("\n"));
    }

    #[test]
    fn a_save_refused_for_another_users_file_says_whose_it_is() {
        let text = settings_fallback(SettingsFallback::ProjectSaveFailed(FileProblem::NotOwned));
        assert!(text.contains("belongs to another user"), "{text}");
        assert!(text.contains("Nothing was saved"), "{text}");
    }

    #[test]
    fn every_fallback() {
        use std::io::ErrorKind as K;
        let problems = [
            FileProblem::Io {
                step: FileStep::Read,
                kind: K::PermissionDenied,
            },
            FileProblem::NotJson,
            FileProblem::TooLarge { limit_kib: 256 },
            FileProblem::NotRegularFile,
        ];
        let mut all = Vec::new();
        for p in problems {
            for f in [
                SettingsFallback::GlobalUnreadableBranchKept,
                SettingsFallback::GlobalUnreadableBlocks,
                SettingsFallback::ProjectUnreadableLastGood,
                SettingsFallback::ProjectUnreadableGlobalOnly,
                SettingsFallback::GlobalSaveFailed,
                SettingsFallback::ProjectSaveFailed,
            ] {
                all.push(settings_fallback(f(p)));
            }
        }
        all.push(settings_fallback(
            SettingsFallback::McpConfigReadNotApproved,
        ));
        insta::assert_snapshot!(all.join("\n"));
    }

    #[test]
    fn every_allowlist_error() {
        let errors = [
            AllowlistError::Empty,
            AllowlistError::NotAString,
            AllowlistError::ToolNameTooLong { chars: 140 },
            AllowlistError::ToolNameWhitespace { position: 3 },
            AllowlistError::NotUnicode { position: 2 },
            AllowlistError::GroupInvalidCharacter { position: 0 },
            AllowlistError::EmptyAfterPrefix { prefix: "mcp__" },
            AllowlistError::EmptyAfterPrefix { prefix: "ext__" },
            AllowlistError::GroupNameTooLong { chars: 200 },
        ];
        let mut all = String::new();
        for list in [RemedyList::Tools, RemedyList::Groups] {
            for e in &errors {
                all.push_str(&format!(
                    "{list:?} / {e:?}:\n{}\n",
                    allowlist_error(list, e)
                ));
            }
        }
        insta::assert_snapshot!(all);
    }

    #[test]
    fn a_long_server_name_says_it_cannot_be_pinned_and_what_to_do() {
        let e = pcd_model::parse_group_entry(&"s".repeat(65)).unwrap_err();
        let text = allowlist_error(RemedyList::Groups, &e);
        assert!(text.contains("65 characters"));
        assert!(text.contains("cannot be pinned"));
        assert!(text.contains("tools by name"));
        assert!(text.contains("decision model"));
    }
}
