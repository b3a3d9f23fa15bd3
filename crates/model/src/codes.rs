//! The codes other crates return, which `ui-text` turns into sentences: config warnings, gate
//! block codes, ledger audit findings and why a file could not be read. Codes carry names and keys only, never a value read
//! from a configuration.

use crate::key::GroupKey;
use crate::scope::Scope;

/// Which `mcp.json` file a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConfigFile {
    /// `<agentDir>/mcp.json`.
    Global,
    /// `<cwd>/.pi/mcp.json`.
    Project,
}

impl ConfigFile {
    /// `global` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigFile::Global => "global",
            ConfigFile::Project => "project",
        }
    }
}

/// A safe warning code from the names-only `mcp.json` reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConfigWarningCode {
    /// The file could not be read or is not valid JSON.
    ReadOrParse,
    /// The top level, or `mcpServers`, is not an object.
    NotObject,
    /// `autoEnableCodemode` is present but not a boolean.
    AutoEnableCodemodeType,
    /// A server name breaks `[A-Za-z0-9_-]+`.
    InvalidName,
    /// A server entry is not an object.
    ServerNotObject,
    /// A project settings-only override names no global server.
    OverrideWithoutBase,
    /// A project override has keys besides `enabled`, `exposure`, `toolExposure`.
    OverrideExtraKeys,
    /// Two names fold to the same namespace; the earlier one is kept.
    NameClash,
    /// `auth` in the project file.
    ProjectAuth,
    /// A server definition fails Pi's validation.
    InvalidServer,
    /// The path is a symlink, a directory, a device or anything but a regular file.
    NotRegularFile,
    /// The file is larger than 64 KiB.
    TooLarge,
    /// The file defines more than 1000 servers.
    TooManyServers,
}

impl ConfigWarningCode {
    /// Every code, in documentation order.
    pub const ALL: [ConfigWarningCode; 13] = [
        ConfigWarningCode::ReadOrParse,
        ConfigWarningCode::NotObject,
        ConfigWarningCode::AutoEnableCodemodeType,
        ConfigWarningCode::InvalidName,
        ConfigWarningCode::ServerNotObject,
        ConfigWarningCode::OverrideWithoutBase,
        ConfigWarningCode::OverrideExtraKeys,
        ConfigWarningCode::NameClash,
        ConfigWarningCode::ProjectAuth,
        ConfigWarningCode::InvalidServer,
        ConfigWarningCode::NotRegularFile,
        ConfigWarningCode::TooLarge,
        ConfigWarningCode::TooManyServers,
    ];

    /// The code as written in JSON output (`read_or_parse`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigWarningCode::ReadOrParse => "read_or_parse",
            ConfigWarningCode::NotObject => "not_object",
            ConfigWarningCode::AutoEnableCodemodeType => "auto_enable_codemode_type",
            ConfigWarningCode::InvalidName => "invalid_name",
            ConfigWarningCode::ServerNotObject => "server_not_object",
            ConfigWarningCode::OverrideWithoutBase => "override_without_base",
            ConfigWarningCode::OverrideExtraKeys => "override_extra_keys",
            ConfigWarningCode::NameClash => "name_clash",
            ConfigWarningCode::ProjectAuth => "project_auth",
            ConfigWarningCode::InvalidServer => "invalid_server",
            ConfigWarningCode::NotRegularFile => "not_regular_file",
            ConfigWarningCode::TooLarge => "too_large",
            ConfigWarningCode::TooManyServers => "too_many_servers",
        }
    }
}

/// One warning of the `mcp.json` reader: the file, the code and, where the name passed the name
/// rule (`[A-Za-z0-9_-]+`), the server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConfigWarning {
    /// Which file.
    pub file: ConfigFile,
    /// What was wrong.
    pub code: ConfigWarningCode,
    /// The server, only when its name is valid.
    pub server: Option<String>,
}

/// A warning about Pi's tool inventory that stops nothing: the tools it names are left alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InventoryWarningCode {
    /// Tools whose names the ledger cannot record (whitespace, or longer than its bound): no
    /// round decides or grants them, Pi's active set keeps them as Pi declared them, and the
    /// gate blocks their calls unless an allowlist entry (their group's) allows them.
    UnrecordableNames,
}

impl InventoryWarningCode {
    /// A stable code for logs and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            InventoryWarningCode::UnrecordableNames => "unrecordable_names",
        }
    }
}

/// One inventory warning: the code and the tools it is about (their names, which `ui-text`
/// makes safe to print).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InventoryWarning {
    /// What.
    pub code: InventoryWarningCode,
    /// Which tools, in inventory order.
    pub tools: Vec<String>,
}

/// Which list an allowlist remedy goes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemedyList {
    /// *Always allowed tools*.
    Tools,
    /// *MCP servers & extensions* (`alwaysAllowedMcpServers`).
    Groups,
}

/// The exact allowlist entry and scope that would allow a blocked tool.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Remedy {
    /// Which list.
    pub list: RemedyList,
    /// The entry: a tool name or a canonical group key.
    pub entry: String,
    /// Global or project.
    pub scope: Scope,
}

/// Why the gate blocked a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// The tool (or its group) is neither available on this branch nor allowlisted.
    NotAvailable,
    /// A resource tool was called without a `server` (listing every server) while filtering is on.
    ResourceWithoutServer,
    /// A resource tool's `server` argument is not a string.
    ResourceServerNotString,
    /// A resource tool named a server that is not available.
    ResourceServerNotAvailable,
    /// A resource tool's `server` argument matches no server the inventory, the configs, the
    /// allowlists or the branch know; the block names nothing of it.
    ResourceServerUnknown,
    /// The tool is not in the registry (or the last snapshot of it).
    UnknownTool,
    /// Pi's tool registry cannot be read and there is no earlier snapshot.
    RegistryUnavailable,
    /// The session branch cannot be read; only allowlisted and internal tools pass.
    BranchUnreadable,
    /// Scoring the tool on its first call failed, was cancelled or was superseded.
    ScoringFailed,
    /// The tool's name cannot be recorded in the ledger, so no round makes it available; only
    /// an allowlist entry (its group's) does.
    Unrecordable,
}

impl BlockKind {
    /// A stable code for logs and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockKind::NotAvailable => "not_available",
            BlockKind::ResourceWithoutServer => "resource_without_server",
            BlockKind::ResourceServerNotString => "resource_server_not_string",
            BlockKind::ResourceServerNotAvailable => "resource_server_not_available",
            BlockKind::ResourceServerUnknown => "resource_server_unknown",
            BlockKind::UnknownTool => "unknown_tool",
            BlockKind::RegistryUnavailable => "registry_unavailable",
            BlockKind::BranchUnreadable => "branch_unreadable",
            BlockKind::ScoringFailed => "scoring_failed",
            BlockKind::Unrecordable => "unrecordable",
        }
    }
}

/// A gate verdict's block code with what the sentence needs: the tool, and the allowlist entry
/// and scope that would allow it (when one would).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlockCode {
    /// Why.
    pub kind: BlockKind,
    /// The tool that was called.
    pub tool: String,
    /// The server a resource tool named, by its canonical key, when it matched a known server.
    /// Never the call's argument itself: that is the model's input and may hold a secret.
    pub server: Option<GroupKey>,
    /// The entry that would allow the call, when one would.
    pub remedy: Option<Remedy>,
}

/// What a ledger audit can find. Every finding but an interrupted append untrusts the branch and
/// fails the audit ([`AuditFindingCode::untrusts_branch`]): the branch's ledger does not fold to
/// what was written, so what it grants may differ. [`AuditFindingCode::is_tampering`] tells
/// tampering or damage apart from an entry that is merely newer than this reader (or an append a
/// crash cut short).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuditFindingCode {
    /// Some parts of a round are missing with more of its parts after the gap, or its parts
    /// are out of order (entries removed or moved).
    TornRound,
    /// A round's first parts are present in order, agree with each other, and the rest were
    /// never written: what a crash (or a failed write) while appending leaves. It grants
    /// nothing, and the branch goes on deciding: nothing an edit could gain this way that
    /// removing the whole round, which no audit can see, would not give.
    InterruptedRound,
    /// A round's parts are all present but its digest does not match, or its parts disagree on
    /// the digest or the part count, whole or not (hand-edited).
    DigestMismatch,
    /// An entry of this custom type does not decode (a version that never existed, such as
    /// `"v": 0`, included).
    Undecodable,
    /// An entry of a future version this reader does not know; skipped. It still fails the
    /// audit: this reader cannot tell what it grants, so the branch does not fold whole.
    UnknownVersion,
    /// An entry the branch needs has no usable `id` (missing, not a string, or too long): a
    /// ledger entry, which then lies on no branch, or the last entry of the file, which leaves
    /// Pi's branch empty. Pi never writes one; the rounds it hides grant nothing.
    EntryWithoutId,
    /// The branch's first entry names a `parentId` that no entry of the file has (or one that
    /// is not a string): entries before it were removed, and the rounds among them with them.
    OrphanParent,
    /// The `parentId` chain loops back on itself; the branch stops where the loop closes.
    ParentCycle,
}

impl AuditFindingCode {
    /// Every code, in documentation order.
    pub const ALL: [AuditFindingCode; 8] = [
        AuditFindingCode::TornRound,
        AuditFindingCode::InterruptedRound,
        AuditFindingCode::DigestMismatch,
        AuditFindingCode::Undecodable,
        AuditFindingCode::UnknownVersion,
        AuditFindingCode::EntryWithoutId,
        AuditFindingCode::OrphanParent,
        AuditFindingCode::ParentCycle,
    ];

    /// A stable code for JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditFindingCode::TornRound => "torn_round",
            AuditFindingCode::InterruptedRound => "interrupted_round",
            AuditFindingCode::DigestMismatch => "digest_mismatch",
            AuditFindingCode::Undecodable => "undecodable",
            AuditFindingCode::UnknownVersion => "unknown_version",
            AuditFindingCode::EntryWithoutId => "ledger_entry_without_id",
            AuditFindingCode::OrphanParent => "orphan_parent",
            AuditFindingCode::ParentCycle => "parent_cycle",
        }
    }

    /// Whether this finding means the file was torn, altered or damaged, as opposed to holding
    /// an entry of a newer version or an append a crash cut short. A newer version still fails
    /// the audit (see [`AuditFindingCode::untrusts_branch`]); this only says which story the
    /// report tells.
    pub fn is_tampering(self) -> bool {
        !matches!(
            self,
            AuditFindingCode::UnknownVersion | AuditFindingCode::InterruptedRound
        )
    }

    /// Whether a branch with this finding stops granting anything new: every finding but an
    /// interrupted append means the branch's ledger no longer says what was decided there
    /// (an edit, damage, or a version this reader cannot read and so cannot know what it
    /// grants or withholds).
    pub fn untrusts_branch(self) -> bool {
        !matches!(self, AuditFindingCode::InterruptedRound)
    }
}

/// One audit finding: the code, and where (entry id, round id) when known.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AuditFinding {
    /// What was found.
    pub code: AuditFindingCode,
    /// The session entry id it concerns.
    pub entry_id: Option<String>,
    /// The round id it concerns.
    pub round: Option<String>,
}

/// Why a file given to the program, the addon or xtask could not be read: what the path is
/// instead of a regular file, or which bound it broke. Names neither the path nor anything in the
/// file. Its `Display` is the short reason ui-text's sentences embed ("is a FIFO (named pipe),
/// not a regular file").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum FileReadProblem {
    /// Nothing is at the path (or a folder above it is missing or a file).
    #[error("does not exist")]
    NotFound,
    /// The path is a folder.
    #[error("is a folder, not a regular file")]
    Directory,
    /// The path is a FIFO (named pipe): reading it could wait forever for a writer.
    #[error("is a FIFO (named pipe), not a regular file")]
    Fifo,
    /// The path is a character or block device (`/dev/zero`, a terminal, a disk).
    #[error("is a device, not a regular file")]
    Device,
    /// The path is a socket.
    #[error("is a socket, not a regular file")]
    Socket,
    /// The path is a symbolic link, and this file is never read through one.
    #[error("is a symbolic link, which is not followed for this file")]
    Symlink,
    /// The file is larger than the bound for its kind of file.
    #[error("is larger than {limit} bytes")]
    TooLarge {
        /// The bound, in bytes.
        limit: u64,
    },
    /// Opening or reading failed: the operating system's kind of error.
    #[error("cannot be read ({0})")]
    Io(std::io::ErrorKind),
}

/// Why a file the program, the addon or xtask writes was not written: what is at the path
/// instead of an absent path or a regular file of this user's, or which step failed. Nothing was
/// replaced. Names neither the path nor anything written. Its `Display` is the short reason
/// ui-text's sentences embed ("is a FIFO (named pipe), not a regular file").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum FileWriteProblem {
    /// The path is a folder.
    #[error("is a folder, not a regular file")]
    Directory,
    /// The path is a FIFO (named pipe).
    #[error("is a FIFO (named pipe), not a regular file")]
    Fifo,
    /// The path is a character or block device.
    #[error("is a device, not a regular file")]
    Device,
    /// The path is a socket.
    #[error("is a socket, not a regular file")]
    Socket,
    /// The path is a symbolic link, which is never written through or replaced.
    #[error("is a symbolic link, which is never replaced")]
    Symlink,
    /// The path is a regular file another user owns.
    #[error("is a file another user owns")]
    NotOwned,
    /// Creating, writing or renaming the temporary file failed: the operating system's kind of
    /// error.
    #[error("cannot be written ({0})")]
    Io(std::io::ErrorKind),
}

/// Why a folder is not private to this user, as OpenSSH judges `~/.ssh`
/// (`pcd_bounded_read::replace::private_folder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum FolderProblem {
    /// The path is a symbolic link.
    #[error("is a symbolic link")]
    Symlink,
    /// The path is not a folder.
    #[error("is not a folder")]
    NotAFolder,
    /// Another user owns it.
    #[error("is owned by another user")]
    NotOwned,
    /// Its group or other users may write to it.
    #[error("can be written by other users")]
    WritableByOthers,
}

/// Why the vector cache on disk was not read or not saved; its vectors are then kept in memory
/// for the run, or recomputed. Names no path and nothing read. Its `Display` is the short reason
/// ui-text's sentence embeds ("its folder can be written by other users").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum VectorCacheProblem {
    /// The cache's folder is not private to this user (owner, mode, a link).
    #[error("its folder {0}")]
    Folder(FolderProblem),
    /// The cache's folder could not be created.
    #[error("its folder cannot be created ({0})")]
    CreateFolder(std::io::ErrorKind),
    /// The cache's file is not one this user may replace, or could not be written.
    #[error("its file {0}")]
    File(FileWriteProblem),
    /// The cache's file can be written by other users: its entries are not read.
    #[error("its file can be written by other users")]
    FileWritableByOthers,
    /// The per-user key that authenticates the entries could not be read.
    #[error("its key file {0}")]
    KeyUnreadable(FileReadProblem),
    /// The per-user key is another user's, or others may read or write it.
    #[error("its key file is not private to this user")]
    KeyNotPrivate,
    /// A new per-user key could not be written.
    #[error("its key file {0}")]
    KeyUnwritable(FileWriteProblem),
    /// No absolute home folder or cache folder, or no agent folder for the key: there is no
    /// place for a cache on disk.
    #[error("there is no absolute home or cache folder to keep it in")]
    NoPlace,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_codes_are_distinct_snake_case_and_what_is_not_tampering() {
        let mut seen = std::collections::HashSet::new();
        for code in AuditFindingCode::ALL {
            let s = code.as_str();
            assert!(
                s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{s}"
            );
            assert!(seen.insert(s));
            let benign = [
                AuditFindingCode::UnknownVersion,
                AuditFindingCode::InterruptedRound,
            ];
            assert_eq!(code.is_tampering(), !benign.contains(&code), "{s}");
            assert_eq!(
                code.untrusts_branch(),
                code != AuditFindingCode::InterruptedRound,
                "{s}"
            );
        }
    }

    #[test]
    fn config_codes_are_distinct_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for code in ConfigWarningCode::ALL {
            let s = code.as_str();
            assert!(
                s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{s}"
            );
            assert!(seen.insert(s));
        }
    }
}
