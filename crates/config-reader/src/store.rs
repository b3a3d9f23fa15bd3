//! The extension's own settings and allowlist files: bounded per-field reads, and atomic,
//! merging writes.
//!
//! - Global: `<agentDir>/pi-context-decisions/settings.json` (`tools.*`, `decision.*`, the global
//!   allowlists `tools.alwaysAllowedTools` and `tools.alwaysAllowedMcpServers`).
//! - Project: `<cwd>/.pi/pi-context-decisions.json` (`alwaysAllowedTools`,
//!   `alwaysAllowedMcpServers`, and always an `alwaysAllowed` array for older readers).
//!
//! Reading gives one of three results ([`Loaded`]): absent, read (with per-field warnings), or
//! unreadable, so the facade can keep enforcing what a branch has, or keep the last good project
//! allowlist, when a file cannot be read.
//!
//! Writing is a *change* ([`SettingsChange`], [`AllowlistChange`]) applied under an advisory lock
//! (`flock` on a `.lock` file beside the target) to the file as it is on disk at that moment, then
//! written to a temporary file in the same folder (mode 0600), synced and renamed over the old
//! one. So two Pi windows saving at once lose nothing, unknown fields and every saved name stay
//! (invalid or unmatched ones too), and a failed save leaves the old file as it was. A file that
//! cannot be read is never overwritten: that would lose what is in it.
//!
//! A save that fails (an I/O error, a full disk, a quota, a short write that cannot be
//! finished) at any step before the rename leaves the old file byte for byte and removes its
//! temporary file; the error names the file and the step ([`StoreStep`]), never a path or a
//! value. A save that crashed between steps can leave a temporary file behind; the next save
//! removes it under the lock. The tests make every step fail through a private seam (`SaveFs`)
//! and crash the process between steps.
//!
//! The parts, each in its own file: `document` reads and parses the two files (bounded,
//! field by field, with the lone surrogate stand-in), `edits` holds the changes and the saves
//! (the read-modify-write under the lock), and `durable` the atomic write and the lock. This
//! file keeps what they share: the paths, [`StoreFile`], [`StoreStep`], [`StoreError`] and
//! [`Loaded`]. Dependencies point one way: `edits` uses `document` and `durable`, and neither
//! of those uses the other.

use pcd_model::{AllowlistError, SettingsWarning};
use std::path::{Path, PathBuf};

mod document;
mod durable;
mod edits;
#[cfg(test)]
mod testing;

pub use document::{
    parse_global_settings, parse_project_allowlist, read_global_settings, read_project_allowlist,
};
pub use edits::{
    save_global_settings, save_project_allowlist, AllowlistChange, ListEdit, SettingsChange,
};

/// The largest settings or allowlist file read.
pub const MAX_SETTINGS_FILE_BYTES: u64 = 64 * 1024;

/// `<agent_dir>/pi-context-decisions/settings.json`.
pub fn global_settings_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("pi-context-decisions").join("settings.json")
}

/// `<cwd>/.pi/pi-context-decisions.json`.
pub fn project_allowlist_path(cwd: &Path) -> PathBuf {
    cwd.join(".pi").join("pi-context-decisions.json")
}

/// Which of the two files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreFile {
    /// The global settings file.
    GlobalSettings,
    /// The project allowlist file.
    ProjectAllowlists,
}

impl StoreFile {
    fn describe(self) -> &'static str {
        match self {
            StoreFile::GlobalSettings => "the global settings file",
            StoreFile::ProjectAllowlists => "the project allowlist file",
        }
    }
}

/// The steps of reading and saving a file, in the order a save takes them. A save that fails
/// at any step before [`StoreStep::SyncFolder`] leaves the file exactly as it was and no
/// temporary file behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreStep {
    /// Creating the file's folder.
    CreateFolder,
    /// Creating or locking the `.lock` file beside the file.
    Lock,
    /// Reading the file (on its own, or under the lock before a save).
    Read,
    /// Creating the temporary file beside the file.
    CreateTemporary,
    /// Writing the new content to the temporary file.
    Write,
    /// Syncing the temporary file to the disk.
    Sync,
    /// Renaming the temporary file over the file.
    Rename,
    /// Syncing the folder after the rename. The new content is in place (every reader sees it),
    /// but a power loss may still bring back the old one.
    SyncFolder,
}

impl StoreStep {
    /// Every step, in the order a save takes them.
    pub const ALL: [StoreStep; 8] = [
        StoreStep::CreateFolder,
        StoreStep::Lock,
        StoreStep::Read,
        StoreStep::CreateTemporary,
        StoreStep::Write,
        StoreStep::Sync,
        StoreStep::Rename,
        StoreStep::SyncFolder,
    ];

    fn describe(self) -> &'static str {
        match self {
            StoreStep::CreateFolder => "was not saved: creating its folder failed",
            StoreStep::Lock => "was not saved: taking its lock failed",
            StoreStep::Read => "could not be read",
            StoreStep::CreateTemporary => "was not saved: creating the temporary file failed",
            StoreStep::Write => "was not saved: writing the temporary file failed",
            StoreStep::Sync => "was not saved: syncing the temporary file failed",
            StoreStep::Rename => "was not saved: renaming the temporary file over it failed",
            StoreStep::SyncFolder => {
                "was saved, but syncing its folder failed, so a power loss may undo the save"
            }
        }
    }
}

/// Why a file could not be read or written. Names the file and the problem; never a path's
/// content, a value or a system message that could carry one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// A step of reading or saving the file failed (an I/O error, a full disk, a quota, a
    /// read-only file system, a file size limit).
    #[error("{} {} ({kind})", file.describe(), step.describe())]
    Io {
        /// Which file.
        file: StoreFile,
        /// Which step failed.
        step: StoreStep,
        /// The operating system's error kind.
        kind: std::io::ErrorKind,
    },
    /// The file is not JSON, or its top level is not an object (a save would lose it).
    #[error("{} is not a JSON object (problem at line {line}, column {column})", file.describe())]
    NotJson {
        /// Which file.
        file: StoreFile,
        /// 1-based line of the problem (0 when the JSON is valid but not an object).
        line: usize,
        /// 1-based column of the problem.
        column: usize,
    },
    /// The file is larger than [`MAX_SETTINGS_FILE_BYTES`].
    #[error("{} is larger than {} KiB", file.describe(), MAX_SETTINGS_FILE_BYTES / 1024)]
    TooLarge {
        /// Which file.
        file: StoreFile,
    },
    /// The path is a symlink, a directory or a device: it is never read or replaced.
    #[error("{} is not a regular file (a symbolic link, a directory or a device)", file.describe())]
    NotRegularFile {
        /// Which file.
        file: StoreFile,
    },
    /// The `.lock` file beside the file is a symlink or not a regular file: the lock is never
    /// taken through a link, so the file is not saved.
    #[error(
        "{} was not saved: its lock file is a symbolic link or not a regular file",
        file.describe()
    )]
    LockNotRegularFile {
        /// Which file.
        file: StoreFile,
    },
    /// The file holds a lone surrogate escape (`"\ud800"`). Reading it works field by field
    /// (the text reads as U+FFFD, which no field accepts), but a save would rewrite that text,
    /// so it is refused.
    #[error(
        "{} was not saved: it holds text that is not valid Unicode (a lone surrogate escape at \
         line {line}, column {column})",
        file.describe()
    )]
    NotUnicode {
        /// Which file.
        file: StoreFile,
        /// 1-based line of the first lone surrogate escape.
        line: usize,
        /// 1-based column (in bytes) of its backslash.
        column: usize,
    },
    /// The file holds a number too large for an f64 (`1e400`). Reading it works field by field
    /// (that field is out of range and takes its default), but a save would rewrite that number,
    /// so it is refused.
    #[error(
        "{} was not saved: it holds a number too large to read (at line {line}, column {column})",
        file.describe()
    )]
    HugeNumber {
        /// Which file.
        file: StoreFile,
        /// 1-based line of the first such number.
        line: usize,
        /// 1-based column (in bytes) of its first character.
        column: usize,
    },
    /// The file belongs to another user: a save never replaces it (it is read as any file is).
    #[error("{} was not saved: it belongs to another user", file.describe())]
    NotOwned {
        /// Which file.
        file: StoreFile,
    },
    /// A change would save an entry that breaks the allowlist rules.
    #[error("{} cannot save entry {index} of the change: {error}", file.describe())]
    InvalidEntry {
        /// Which file.
        file: StoreFile,
        /// The entry's 0-based position among the change's additions.
        index: usize,
        /// Which rule it broke.
        error: AllowlistError,
    },
    /// A settings change names a field that is not a known setting, or gives it a value that
    /// would be refused on reading.
    #[error("cannot save `{field}`: not a known setting or not a valid value for it")]
    InvalidSetting {
        /// The dotted field name as given by the program (never a value).
        field: String,
    },
}

/// The three results of reading a file.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded<T> {
    /// No file (or no folder): the defaults apply.
    Absent,
    /// The file was read; fields that were wrong took their defaults and are reported.
    Read {
        /// What the file says.
        value: T,
        /// One warning per field that fell back, or entry that was skipped.
        warnings: Vec<SettingsWarning>,
    },
    /// The file exists but cannot be used.
    Unreadable(StoreError),
}
