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

use crate::bounded::{read_bounded, FileRead};
use pcd_model::{
    parse_group_entry, parse_tool_entry, AllowlistError, ProjectAllowlistFile, ScopedAllowlist,
    Settings, SettingsWarning,
};
use serde_json::{Map, Value};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

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

/// The raw JSON object of a file, or why there is none.
fn read_object(path: &Path, file: StoreFile) -> Result<Option<Map<String, Value>>, StoreError> {
    Ok(object_of(read_bounded(path, MAX_SETTINGS_FILE_BYTES), file)?.map(|parsed| parsed.map))
}

/// A file's JSON object, and where its first lone surrogate escape is (1-based line and column),
/// if it has one.
struct Parsed {
    map: Map<String, Value>,
    lone_surrogate: Option<(usize, usize)>,
}

/// What one bounded read gave, as a JSON object.
fn object_of(read: FileRead, file: StoreFile) -> Result<Option<Parsed>, StoreError> {
    let bytes = match read {
        FileRead::Absent => return Ok(None),
        FileRead::Bytes(bytes) => bytes,
        FileRead::NotRegular => return Err(StoreError::NotRegularFile { file }),
        FileRead::TooLarge => return Err(StoreError::TooLarge { file }),
        FileRead::Unreadable(kind) => {
            return Err(StoreError::Io {
                file,
                step: StoreStep::Read,
                kind,
            })
        }
    };
    parse_object(&bytes, file).map(Some)
}

/// A file's bytes as a JSON object (a leading byte-order mark is allowed). A lone surrogate
/// escape reads as U+FFFD, so only the field or entry that holds it falls back.
fn parse_object(bytes: &[u8], file: StoreFile) -> Result<Parsed, StoreError> {
    if bytes.len() as u64 > MAX_SETTINGS_FILE_BYTES {
        return Err(StoreError::TooLarge { file });
    }
    let text = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let stood_in = stand_in_for_lone_surrogates(text);
    let (text, lone_surrogate) = match &stood_in {
        Some((text, at)) => (text.as_slice(), Some(line_and_column(text, *at))),
        None => (text, None),
    };
    match serde_json::from_slice::<Value>(text) {
        Ok(Value::Object(map)) => Ok(Parsed {
            map,
            lone_surrogate,
        }),
        Ok(_) => Err(StoreError::NotJson {
            file,
            line: 0,
            column: 0,
        }),
        Err(e) => Err(StoreError::NotJson {
            file,
            line: e.line(),
            column: e.column(),
        }),
    }
}

/// `text` with every lone surrogate escape in it (`\ud800` without its other half, which
/// `JSON.parse` accepts and serde_json refuses with the whole file) replaced by `\ufffd`, and the
/// byte offset of the first one; `None` when there is none. The replacement has the same length,
/// so every position the parser reports stays true. Escapes are only looked for inside strings;
/// the text is otherwise left to the parser.
fn stand_in_for_lone_surrogates(text: &[u8]) -> Option<(Vec<u8>, usize)> {
    let unit_at = |i: usize| -> Option<u16> {
        let digits = text.get(i..i + 4)?;
        u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let escape_at = |i: usize| text.get(i) == Some(&b'\\') && text.get(i + 1) == Some(&b'u');
    let mut out: Option<(Vec<u8>, usize)> = None;
    let mut in_string = false;
    let mut i = 0;
    while i < text.len() {
        match (in_string, text[i]) {
            (_, b'"') => {
                in_string = !in_string;
                i += 1;
            }
            (true, b'\\') if escape_at(i) => {
                let lone = match unit_at(i + 2) {
                    Some(0xD800..=0xDBFF) => {
                        if escape_at(i + 6) && matches!(unit_at(i + 8), Some(0xDC00..=0xDFFF)) {
                            i += 12;
                            continue;
                        }
                        true
                    }
                    Some(0xDC00..=0xDFFF) => true,
                    _ => false,
                };
                if lone {
                    let (copy, _) = out.get_or_insert_with(|| (text.to_vec(), i));
                    copy[i + 2..i + 6].copy_from_slice(b"fffd");
                }
                i += 6;
            }
            (true, b'\\') => i += 2,
            _ => i += 1,
        }
    }
    out
}

/// The 1-based line and column (in bytes) of byte `at` of `text`.
fn line_and_column(text: &[u8], at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.len()
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    (line, column)
}

/// The sans-IO part of [`read_global_settings`]: the file's bytes in, the settings out.
pub fn parse_global_settings(bytes: &[u8]) -> Result<(Settings, Vec<SettingsWarning>), StoreError> {
    let map = parse_object(bytes, StoreFile::GlobalSettings)?.map;
    Ok(Settings::from_json(&Value::Object(map)))
}

/// The sans-IO part of [`read_project_allowlist`]: the file's bytes in, the allowlists out.
pub fn parse_project_allowlist(
    bytes: &[u8],
) -> Result<(ScopedAllowlist, Vec<SettingsWarning>), StoreError> {
    let map = parse_object(bytes, StoreFile::ProjectAllowlists)?.map;
    Ok(ProjectAllowlistFile::from_json(&Value::Object(map)))
}

fn load<T>(
    path: &Path,
    file: StoreFile,
    parse: impl Fn(&Value) -> (T, Vec<SettingsWarning>),
) -> Loaded<T> {
    match read_object(path, file) {
        Ok(None) => Loaded::Absent,
        Ok(Some(map)) => {
            let (value, warnings) = parse(&Value::Object(map));
            Loaded::Read { value, warnings }
        }
        Err(e) => Loaded::Unreadable(e),
    }
}

/// Reads the global settings, field by field.
pub fn read_global_settings(agent_dir: &Path) -> Loaded<Settings> {
    load(
        &global_settings_path(agent_dir),
        StoreFile::GlobalSettings,
        Settings::from_json,
    )
}

/// Reads the project allowlists, field by field.
pub fn read_project_allowlist(cwd: &Path) -> Loaded<ScopedAllowlist> {
    load(
        &project_allowlist_path(cwd),
        StoreFile::ProjectAllowlists,
        ProjectAllowlistFile::from_json,
    )
}

/// Entries to add to and remove from one allowlist. Additions are validated and appended when
/// not already there; removals take out exactly the named entries (for groups, every spelling of
/// the same group). Everything else saved stays, invalid and unmatched entries included.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListEdit {
    /// Entries to add.
    pub add: Vec<String>,
    /// Entries to remove.
    pub remove: Vec<String>,
}

impl ListEdit {
    fn is_empty(&self) -> bool {
        self.add.is_empty() && self.remove.is_empty()
    }
}

/// A change to one scope's two allowlists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowlistChange {
    /// The tool list (`alwaysAllowedTools`).
    pub tools: ListEdit,
    /// The group list (`alwaysAllowedMcpServers`).
    pub groups: ListEdit,
}

/// A change to the global settings file: settings to set, and allowlist edits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SettingsChange {
    sets: Vec<(&'static str, &'static str, Value)>,
    /// The global allowlists.
    pub allowlists: AllowlistChange,
}

/// The settings a [`SettingsChange`] may set: (section, key).
const SETTABLE: &[(&str, &str)] = &[
    ("tools", "enabled"),
    ("tools", "mode"),
    ("tools", "cadence"),
    ("tools", "readMcpConfig"),
    ("decision", "provider"),
    ("decision", "model"),
    ("decision", "baseUrl"),
    ("decision", "apiKeyEnv"),
    ("decision", "threshold"),
    ("decision", "maxNewTools"),
    ("decision", "maxNewGroups"),
    ("decision", "minimumCandidates"),
    ("decision", "batchSize"),
    ("decision", "concurrency"),
    ("decision", "timeoutMs"),
    ("decision", "failMode"),
];

impl SettingsChange {
    /// Sets a dotted field (`tools.enabled`, `decision.threshold`, …) to `value`. Refuses an
    /// unknown field, an allowlist field (edit those through [`SettingsChange::allowlists`]) and
    /// a value the reader would not accept.
    pub fn set(mut self, field: &str, value: Value) -> Result<SettingsChange, StoreError> {
        let invalid = || StoreError::InvalidSetting {
            field: field.chars().take(64).collect(),
        };
        let &(section, key) = SETTABLE
            .iter()
            .find(|(s, k)| field.split_once('.') == Some((s, k)))
            .ok_or_else(invalid)?;
        let mut inner = Map::new();
        inner.insert(key.to_owned(), value.clone());
        let mut probe = Map::new();
        probe.insert(section.to_owned(), Value::Object(inner));
        let probe = Value::Object(probe);
        let (_, warnings) = Settings::from_json(&probe);
        if !warnings.is_empty() {
            return Err(invalid());
        }
        self.sets.retain(|(s, k, _)| (*s, *k) != (section, key));
        self.sets.push((section, key, value));
        Ok(self)
    }
}

/// Appends and removes entries of one JSON list in place. `same` says whether a saved entry is
/// the same as a named one.
fn edit_list(list: &mut Vec<Value>, edit: &ListEdit, same: impl Fn(&str, &str) -> bool) {
    list.retain(|saved| match saved.as_str() {
        Some(saved) => !edit.remove.iter().any(|r| same(saved, r)),
        None => true,
    });
    for add in &edit.add {
        if !list
            .iter()
            .any(|v| v.as_str().is_some_and(|s| same(s, add)))
        {
            list.push(Value::from(add.as_str()));
        }
    }
}

fn same_tool(a: &str, b: &str) -> bool {
    a == b
}

fn same_group(a: &str, b: &str) -> bool {
    a == b || matches!((parse_group_entry(a), parse_group_entry(b)), (Ok(x), Ok(y)) if x == y)
}

fn validate_additions(change: &AllowlistChange, file: StoreFile) -> Result<(), StoreError> {
    for (index, entry) in change.tools.add.iter().enumerate() {
        parse_tool_entry(entry).map_err(|error| StoreError::InvalidEntry { file, index, error })?;
    }
    for (index, entry) in change.groups.add.iter().enumerate() {
        parse_group_entry(entry).map_err(|error| StoreError::InvalidEntry {
            file,
            index,
            error,
        })?;
    }
    Ok(())
}

/// The list at `obj[key]`, made an array when absent. A present non-array value is replaced only
/// when the change edits it (the reader already ignores it with a warning).
fn list_mut<'a>(obj: &'a mut Map<String, Value>, key: &str) -> &'a mut Vec<Value> {
    let slot = obj
        .entry(key.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    match slot {
        Value::Array(list) => list,
        _ => unreachable!("made an array above"),
    }
}

fn apply_allowlists(obj: &mut Map<String, Value>, change: &AllowlistChange) {
    if !change.tools.is_empty() {
        edit_list(
            list_mut(obj, "alwaysAllowedTools"),
            &change.tools,
            same_tool,
        );
    }
    if !change.groups.is_empty() {
        edit_list(
            list_mut(obj, "alwaysAllowedMcpServers"),
            &change.groups,
            same_group,
        );
    }
}

/// Applies `change` to the global settings file under its lock, and returns what the file says
/// afterwards.
pub fn save_global_settings(
    agent_dir: &Path,
    change: &SettingsChange,
) -> Result<(Settings, Vec<SettingsWarning>), StoreError> {
    save_global_settings_with(&Os, agent_dir, change)
}

fn save_global_settings_with(
    fs: &dyn SaveFs,
    agent_dir: &Path,
    change: &SettingsChange,
) -> Result<(Settings, Vec<SettingsWarning>), StoreError> {
    let file = StoreFile::GlobalSettings;
    validate_additions(&change.allowlists, file)?;
    let path = global_settings_path(agent_dir);
    let saved = update(fs, &path, file, |root| {
        for (section, key, value) in &change.sets {
            section_mut(root, section).insert((*key).to_owned(), value.clone());
        }
        if change.allowlists != AllowlistChange::default() {
            apply_allowlists(section_mut(root, "tools"), &change.allowlists);
        }
    })?;
    Ok(Settings::from_json(&Value::Object(saved)))
}

/// `root[name]` as an object, made one when absent or not an object (a save replaces a broken
/// section it writes into; the reader already used its defaults).
fn section_mut<'a>(root: &'a mut Map<String, Value>, name: &str) -> &'a mut Map<String, Value> {
    let slot = root
        .entry(name.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(map) => map,
        _ => unreachable!("made an object above"),
    }
}

/// Applies `change` to the project allowlist file under its lock, and returns what the file
/// says afterwards. The file always keeps an `alwaysAllowed` array for older readers (its value
/// as it is, `[]` when absent); no tool is ever written into it.
pub fn save_project_allowlist(
    cwd: &Path,
    change: &AllowlistChange,
) -> Result<(ScopedAllowlist, Vec<SettingsWarning>), StoreError> {
    save_project_allowlist_with(&Os, cwd, change)
}

fn save_project_allowlist_with(
    fs: &dyn SaveFs,
    cwd: &Path,
    change: &AllowlistChange,
) -> Result<(ScopedAllowlist, Vec<SettingsWarning>), StoreError> {
    let file = StoreFile::ProjectAllowlists;
    validate_additions(change, file)?;
    let path = project_allowlist_path(cwd);
    let saved = update(fs, &path, file, |root| {
        apply_allowlists(root, change);
        root.entry("alwaysAllowed".to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
    })?;
    Ok(ProjectAllowlistFile::from_json(&Value::Object(saved)))
}

/// Read-modify-write under the lock; the new content is returned.
fn update(
    fs: &dyn SaveFs,
    path: &Path,
    file: StoreFile,
    modify: impl FnOnce(&mut Map<String, Value>),
) -> Result<Map<String, Value>, StoreError> {
    let failed = |step: StoreStep| {
        move |e: std::io::Error| StoreError::Io {
            file,
            step,
            kind: e.kind(),
        }
    };
    let dir = path.parent().ok_or(StoreError::Io {
        file,
        step: StoreStep::CreateFolder,
        kind: std::io::ErrorKind::InvalidInput,
    })?;
    fs.create_folder(dir)
        .map_err(failed(StoreStep::CreateFolder))?;
    let _lock = fs.lock(&lock_path(path)).map_err(|e| {
        if e.get_ref()
            .is_some_and(|inner| inner.is::<LockNotRegular>())
        {
            StoreError::LockNotRegularFile { file }
        } else {
            failed(StoreStep::Lock)(e)
        }
    })?;
    let mut root = match object_of(fs.read(path, MAX_SETTINGS_FILE_BYTES), file)? {
        None => Map::new(),
        Some(Parsed {
            lone_surrogate: Some((line, column)),
            ..
        }) => return Err(StoreError::NotUnicode { file, line, column }),
        Some(parsed) => parsed.map,
    };
    modify(&mut root);
    let mut text =
        serde_json::to_string_pretty(&Value::Object(root.clone())).map_err(|_| StoreError::Io {
            file,
            step: StoreStep::Write,
            kind: std::io::ErrorKind::InvalidData,
        })?;
    text.push('\n');
    remove_leftovers(fs, path, dir);
    write_atomically(fs, path, dir, text.as_bytes()).map_err(|(step, e)| failed(step)(e))?;
    Ok(root)
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// `.<name>.tmp-`: the start of the name of every temporary file of `path`.
fn temp_prefix(path: &Path) -> std::ffi::OsString {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(".tmp-");
    name
}

/// Removes temporary files of `path` left by a save that crashed between creating and renaming
/// one. Called under the lock: every saver holds it while its temporary file exists, so any
/// temporary file seen now belongs to no save in progress. Failing to remove one is not an
/// error (the next save tries again).
fn remove_leftovers(fs: &dyn SaveFs, path: &Path, dir: &Path) {
    let prefix = temp_prefix(path);
    let prefix = prefix.as_encoded_bytes();
    let Ok(names) = fs.list_folder(dir) else {
        return;
    };
    for name in names {
        if name.as_encoded_bytes().starts_with(prefix) {
            let _ = fs.remove(&dir.join(name));
        }
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to a new temporary file beside `path` (mode 0600), syncs it, renames it over
/// `path` and syncs the folder. On a failure before the rename the temporary file is removed
/// and `path` is as it was; the failing step is returned with the error.
fn write_atomically(
    fs: &dyn SaveFs,
    path: &Path,
    dir: &Path,
    bytes: &[u8],
) -> Result<(), (StoreStep, std::io::Error)> {
    // A name no live save uses: this process's id and a counter (a file of that name could only
    // be a crashed process's leftover that could not be removed).
    let mut name = temp_prefix(path);
    name.push(format!(
        "{}-{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let temp = dir.join(name);
    let mut f = fs
        .create_temporary(&temp)
        .map_err(|e| (StoreStep::CreateTemporary, e))?;
    let result = (|| {
        write_all(fs, &mut f, bytes).map_err(|e| (StoreStep::Write, e))?;
        fs.sync(&f).map_err(|e| (StoreStep::Sync, e))?;
        drop(f);
        fs.rename(&temp, path).map_err(|e| (StoreStep::Rename, e))
    })();
    if result.is_err() {
        let _ = fs.remove(&temp);
        return result;
    }
    fs.sync_folder(dir).map_err(|e| (StoreStep::SyncFolder, e))
}

/// `write_all` over [`SaveFs::write`]: short writes are continued, a write that takes nothing
/// is an error (`WriteZero`), an interrupted one is retried.
fn write_all(fs: &dyn SaveFs, file: &mut File, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match fs.write(file, bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                bytes = bytes
                    .get(n..)
                    .ok_or(std::io::Error::from(std::io::ErrorKind::InvalidData))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The file operations of a save, one method per step ([`StoreStep`]), so that tests can make
/// any of them fail, write short or crash (see `tests::Faulty`). [`Os`] is the only other
/// implementation.
trait SaveFs {
    /// Creates `dir` and the folders above it (mode 0700).
    fn create_folder(&self, dir: &Path) -> std::io::Result<()>;
    /// Takes the exclusive lock on the lock file at `path`, creating it.
    fn lock(&self, path: &Path) -> std::io::Result<Lock>;
    /// Reads the file at `path`, bounded.
    fn read(&self, path: &Path, limit: u64) -> FileRead;
    /// Creates the temporary file at `path` (new, mode 0600, not through a symlink).
    fn create_temporary(&self, path: &Path) -> std::io::Result<File>;
    /// One `write` call: may take fewer bytes than given.
    fn write(&self, file: &mut File, bytes: &[u8]) -> std::io::Result<usize>;
    /// Syncs the file's content to the disk.
    fn sync(&self, file: &File) -> std::io::Result<()>;
    /// Renames `from` over `to`.
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()>;
    /// Syncs the folder, so the rename survives a power loss.
    fn sync_folder(&self, dir: &Path) -> std::io::Result<()>;
    /// The names in a folder.
    fn list_folder(&self, dir: &Path) -> std::io::Result<Vec<std::ffi::OsString>>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> std::io::Result<()>;
}

/// The real file system.
struct Os;

impl SaveFs for Os {
    fn create_folder(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    }

    fn lock(&self, path: &Path) -> std::io::Result<Lock> {
        Lock::take(path)
    }

    fn read(&self, path: &Path, limit: u64) -> FileRead {
        read_bounded(path, limit)
    }

    fn create_temporary(&self, path: &Path) -> std::io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
    }

    fn write(&self, file: &mut File, bytes: &[u8]) -> std::io::Result<usize> {
        file.write(bytes)
    }

    fn sync(&self, file: &File) -> std::io::Result<()> {
        file.sync_all()
    }

    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        std::fs::rename(from, to)
    }

    fn sync_folder(&self, dir: &Path) -> std::io::Result<()> {
        // O_DIRECTORY: a FIFO or a file swapped in for the folder fails at once, never blocks.
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK)
            .open(dir)?
            .sync_all()
    }

    fn list_folder(&self, dir: &Path) -> std::io::Result<Vec<std::ffi::OsString>> {
        std::fs::read_dir(dir)?
            .map(|entry| entry.map(|e| e.file_name()))
            .collect()
    }

    fn remove(&self, path: &Path) -> std::io::Result<()> {
        std::fs::remove_file(path)
    }
}

/// An exclusive advisory lock (`flock`) on a lock file, released when dropped (the descriptor
/// closes). Other savers of the same file wait for it; readers do not need it because the
/// rename is atomic.
struct Lock {
    _file: File,
}

/// The error payload of a lock file that is a symlink or not a regular file.
#[derive(Debug)]
struct LockNotRegular;

impl std::fmt::Display for LockNotRegular {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the lock file is not a regular file")
    }
}

impl std::error::Error for LockNotRegular {}

impl Lock {
    /// Opens (creating it) and locks the lock file: never through a symlink, never blocking on
    /// a FIFO, only a regular file.
    fn take(path: &Path) -> std::io::Result<Lock> {
        let not_regular = || std::io::Error::new(std::io::ErrorKind::InvalidInput, LockNotRegular);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP | libc::ENXIO | libc::EISDIR) => not_regular(),
                _ => e,
            })?;
        if !file.metadata()?.is_file() {
            return Err(not_regular());
        }
        flock_exclusive(&file)?;
        Ok(Lock { _file: file })
    }
}

// The workspace denies unsafe code; this is the one FFI call the store needs (std's File::lock
// is newer than the workspace's minimum Rust).
#[allow(unsafe_code)]
fn flock_exclusive(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: the descriptor is owned by `file`, which outlives the call; flock takes no
        // pointers.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdir::TestDir;
    use pcd_model::GroupKey;
    use proptest::strategy::Strategy;
    use serde_json::json;
    use std::os::unix::fs::PermissionsExt;

    fn raw(path: &Path) -> Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    fn tools(add: &[&str], remove: &[&str]) -> AllowlistChange {
        AllowlistChange {
            tools: ListEdit {
                add: add.iter().map(|s| s.to_string()).collect(),
                remove: remove.iter().map(|s| s.to_string()).collect(),
            },
            groups: ListEdit::default(),
        }
    }

    fn groups(add: &[&str], remove: &[&str]) -> AllowlistChange {
        AllowlistChange {
            groups: tools(add, remove).tools,
            tools: ListEdit::default(),
        }
    }

    #[test]
    fn three_distinct_read_results() {
        let dir = TestDir::new();
        assert_eq!(read_global_settings(dir.path()), Loaded::Absent);
        assert_eq!(read_project_allowlist(dir.path()), Loaded::Absent);
        dir.write(
            "pi-context-decisions/settings.json",
            br#"{"tools":{"enabled":true,"mode":"bogus"}}"#,
        );
        match read_global_settings(dir.path()) {
            Loaded::Read { value, warnings } => {
                assert!(value.tools.enabled);
                assert_eq!(warnings.len(), 1);
                assert_eq!(warnings[0].field, "tools.mode");
            }
            other => panic!("{other:?}"),
        }
        dir.write(".pi/pi-context-decisions.json", b"{not json sk-SECRET");
        match read_project_allowlist(dir.path()) {
            Loaded::Unreadable(e @ StoreError::NotJson { line: 1, .. }) => {
                assert!(!e.to_string().contains("SECRET"));
            }
            other => panic!("{other:?}"),
        }
        dir.write(".pi/pi-context-decisions.json", b"[1]");
        assert!(matches!(
            read_project_allowlist(dir.path()),
            Loaded::Unreadable(StoreError::NotJson { line: 0, .. })
        ));
        let big = format!(
            "{{\"x\":\"{}\"}}",
            "a".repeat(MAX_SETTINGS_FILE_BYTES as usize)
        );
        dir.write(".pi/pi-context-decisions.json", big.as_bytes());
        assert!(matches!(
            read_project_allowlist(dir.path()),
            Loaded::Unreadable(StoreError::TooLarge { .. })
        ));
        std::fs::remove_file(project_allowlist_path(dir.path())).unwrap();
        std::fs::create_dir(project_allowlist_path(dir.path())).unwrap();
        assert!(matches!(
            read_project_allowlist(dir.path()),
            Loaded::Unreadable(StoreError::NotRegularFile { .. })
        ));
    }

    /// Issue 18, item 7: a lone surrogate in one list entry made the whole file "not JSON" (so
    /// every setting fell back); now only that entry is refused, and a save refuses to rewrite
    /// the file instead of changing that text.
    #[test]
    fn a_lone_surrogate_in_one_entry_falls_back_alone() {
        let dir = TestDir::new();
        let text = "{\"tools\": {\"enabled\": true, \"mode\": \"mcp\",\n  \"alwaysAllowedTools\": [\"web_fetch\", \"bad\\ud800\", \"ok\\ud83d\\ude00\"],\n  \"alwaysAllowedMcpServers\": [\"docs\"]},\n \"decision\": {\"model\": \"m\\udc00\", \"threshold\": 0.5}}";
        let path = dir.write("pi-context-decisions/settings.json", text.as_bytes());
        let Loaded::Read { value, warnings } = read_global_settings(dir.path()) else {
            panic!("{:?}", read_global_settings(dir.path()));
        };
        assert!(value.tools.enabled);
        assert_eq!(value.tools.mode, pcd_model::Mode::Mcp);
        let names: Vec<&str> = value
            .tools
            .always_allowed_tools
            .iter()
            .map(|t| t.as_str())
            .collect();
        assert_eq!(names, ["web_fetch", "ok\u{1F600}"]);
        assert_eq!(value.tools.always_allowed_groups.len(), 1);
        assert_eq!(value.decision.model, None);
        assert_eq!(value.decision.threshold, 0.5);
        assert_eq!(
            warnings,
            [
                SettingsWarning {
                    field: "tools.alwaysAllowedTools",
                    code: pcd_model::SettingsWarningCode::InvalidEntry {
                        index: 1,
                        error: AllowlistError::NotUnicode { position: 3 },
                    },
                },
                SettingsWarning {
                    field: "decision.model",
                    code: pcd_model::SettingsWarningCode::BadFormat {
                        rule: "1 to 256 characters of valid Unicode, no control characters",
                    },
                },
            ]
        );
        // The project file too.
        dir.write(
            ".pi/pi-context-decisions.json",
            br#"{"alwaysAllowedTools": ["\udfff", "t"], "alwaysAllowed": []}"#,
        );
        let Loaded::Read { value, warnings } = read_project_allowlist(dir.path()) else {
            panic!("the project file is read");
        };
        assert_eq!(value.tools.len(), 1);
        assert_eq!(warnings.len(), 1);
        // A save would have to rewrite the text: it is refused, naming where, and the file stays.
        let change = SettingsChange::default()
            .set("tools.enabled", json!(false))
            .unwrap();
        assert_eq!(
            save_global_settings(dir.path(), &change),
            Err(StoreError::NotUnicode {
                file: StoreFile::GlobalSettings,
                line: 2,
                column: 43,
            })
        );
        assert_eq!(std::fs::read(&path).unwrap(), text.as_bytes());
    }

    #[test]
    fn lone_surrogates_are_found_only_inside_strings() {
        let stand_in = |t: &str| {
            stand_in_for_lone_surrogates(t.as_bytes())
                .map(|(text, at)| (String::from_utf8(text).unwrap(), at))
        };
        assert_eq!(stand_in(r#"{"a": "\ud83d\ude00", "b": "\\ud800"}"#), None);
        assert_eq!(
            stand_in(r#"{"a": "x\ud800\ud800\udc00"}"#),
            Some((r#"{"a": "x\ufffd\ud800\udc00"}"#.to_owned(), 8))
        );
        assert_eq!(
            stand_in(r#"{"\udc00": "\uDBFF"}"#),
            Some((r#"{"\ufffd": "\ufffd"}"#.to_owned(), 2))
        );
        // Cut short: left to the parser, which reports it.
        assert_eq!(stand_in(r#"{"a": "\ud8"#), None);
        assert_eq!(line_and_column(b"ab\ncd", 4), (2, 2));
    }

    /// Issue 18, item 7: a lock file that is a symbolic link is named as the reason a save
    /// failed, and nothing is written through it.
    #[test]
    fn a_symlinked_lock_file_is_the_reason_a_save_fails() {
        let dir = TestDir::new();
        let path = dir.write("pi-context-decisions/settings.json", b"{}");
        let target = dir.write("elsewhere", b"");
        std::os::unix::fs::symlink(&target, lock_path(&path)).unwrap();
        let change = SettingsChange::default()
            .set("tools.enabled", json!(true))
            .unwrap();
        assert_eq!(
            save_global_settings(dir.path(), &change),
            Err(StoreError::LockNotRegularFile {
                file: StoreFile::GlobalSettings
            })
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        std::fs::remove_file(lock_path(&path)).unwrap();
        std::fs::create_dir(lock_path(&path)).unwrap();
        assert_eq!(
            save_global_settings(dir.path(), &change),
            Err(StoreError::LockNotRegularFile {
                file: StoreFile::GlobalSettings
            })
        );
    }

    #[test]
    fn symlinked_files_are_neither_read_nor_replaced() {
        let dir = TestDir::new();
        let real = dir.write("real.json", br#"{"alwaysAllowedTools":["t"]}"#);
        std::fs::create_dir_all(dir.path().join(".pi")).unwrap();
        std::os::unix::fs::symlink(&real, project_allowlist_path(dir.path())).unwrap();
        assert!(matches!(
            read_project_allowlist(dir.path()),
            Loaded::Unreadable(StoreError::NotRegularFile { .. })
        ));
        let e = save_project_allowlist(dir.path(), &tools(&["u"], &[])).unwrap_err();
        assert!(matches!(e, StoreError::NotRegularFile { .. }));
        assert_eq!(raw(&real), json!({"alwaysAllowedTools":["t"]}));
    }

    #[test]
    fn saves_keep_unknown_fields_and_every_saved_name() {
        let dir = TestDir::new();
        let path = dir.write(
            "pi-context-decisions/settings.json",
            br#"{"zeta":{"keep":1},"tools":{"alwaysAllowedTools":["a b", "gone_tool", 7],
                 "alwaysAllowedMcpServers":["bad.name","dev-radius"],"future":true},
               "decision":{"threshold":0.9,"apiKeyEnv":"KEY"},"skills":{"x":1}}"#,
        );
        let change = SettingsChange {
            allowlists: AllowlistChange {
                tools: ListEdit {
                    add: vec!["web_fetch".into(), "gone_tool".into()],
                    remove: vec![],
                },
                groups: ListEdit {
                    add: vec!["dev_radius".into(), "ext__notes".into()],
                    remove: vec![],
                },
            },
            ..SettingsChange::default()
        }
        .set("tools.enabled", json!(true))
        .unwrap();
        let (settings, _) = save_global_settings(dir.path(), &change).unwrap();
        assert!(settings.tools.enabled);
        let v = raw(&path);
        assert_eq!(v["zeta"], json!({"keep":1}));
        assert_eq!(v["skills"], json!({"x":1}));
        assert_eq!(v["tools"]["future"], json!(true));
        assert_eq!(v["decision"], json!({"threshold":0.9,"apiKeyEnv":"KEY"}));
        assert_eq!(
            v["tools"]["alwaysAllowedTools"],
            json!(["a b", "gone_tool", 7, "web_fetch"])
        );
        assert_eq!(
            v["tools"]["alwaysAllowedMcpServers"],
            json!(["bad.name", "dev-radius", "ext__notes"]),
            "dev_radius is the same group as dev-radius"
        );
        // Order of the file's keys is kept.
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["zeta", "tools", "decision", "skills"]);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn removals_take_out_every_spelling_of_a_group_and_nothing_else() {
        let dir = TestDir::new();
        dir.write(
            ".pi/pi-context-decisions.json",
            br#"{"alwaysAllowedMcpServers":["dev-radius","mcp__dev_radius","docs","bad.name"],
                 "alwaysAllowedTools":["t1","t2"],"alwaysAllowed":["skill-a"]}"#,
        );
        let change = AllowlistChange {
            groups: groups(&[], &["dev_radius", "bad.name"]).groups,
            tools: tools(&[], &["t1"]).tools,
        };
        let (list, _) = save_project_allowlist(dir.path(), &change).unwrap();
        assert!(list.has_group(&GroupKey::for_mcp_server("docs")));
        assert!(!list.has_group(&GroupKey::for_mcp_server("dev_radius")));
        let v = raw(&project_allowlist_path(dir.path()));
        assert_eq!(v["alwaysAllowedMcpServers"], json!(["docs"]));
        assert_eq!(v["alwaysAllowedTools"], json!(["t2"]));
        assert_eq!(v["alwaysAllowed"], json!(["skill-a"]), "kept as it is");
    }

    proptest::proptest! {
        /// A save keeps every saved entry it was not told to remove (invalid ones and
        /// non-strings included), in order, and adds each addition once.
        #[test]
        fn edits_lose_nothing(
            saved in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-c][-_]?[a-c]".prop_map(Value::from),
                    "[a-c. ]{0,3}".prop_map(Value::from),
                    (0i64..3).prop_map(Value::from),
                ],
                0..8,
            ),
            add in proptest::collection::vec("[a-c][-_]?[a-c]", 0..4),
            remove in proptest::collection::vec("[a-c][-_]?[a-c]", 0..3),
        ) {
            let edit = ListEdit { add: add.clone(), remove: remove.clone() };
            let mut list = saved.clone();
            edit_list(&mut list, &edit, same_group);
            let removed = |v: &Value| {
                v.as_str().is_some_and(|s| remove.iter().any(|r| same_group(s, r)))
            };
            let kept: Vec<&Value> = saved.iter().filter(|v| !removed(v)).collect();
            proptest::prop_assert_eq!(&list.iter().take(kept.len()).collect::<Vec<_>>(), &kept);
            for a in &add {
                let n = list.iter().filter(|v| v.as_str().is_some_and(|s| same_group(s, a))).count();
                proptest::prop_assert!(n >= 1);
            }
            for extra in &list[kept.len()..] {
                let s = extra.as_str().unwrap();
                proptest::prop_assert!(add.iter().any(|a| a == s));
            }
        }
    }

    #[test]
    fn project_file_always_holds_always_allowed() {
        let dir = TestDir::new();
        save_project_allowlist(dir.path(), &tools(&["web_fetch"], &[])).unwrap();
        let v = raw(&project_allowlist_path(dir.path()));
        assert_eq!(
            v,
            json!({"alwaysAllowedTools":["web_fetch"],"alwaysAllowed":[]}),
            "no tool goes into alwaysAllowed"
        );
    }

    #[test]
    fn invalid_changes_are_refused_and_the_file_is_untouched() {
        let dir = TestDir::new();
        let path = dir.write(
            ".pi/pi-context-decisions.json",
            br#"{"alwaysAllowedTools":["t"]}"#,
        );
        let before = std::fs::read(&path).unwrap();
        let e = save_project_allowlist(dir.path(), &groups(&["sk-SECRET.bad"], &[])).unwrap_err();
        assert!(matches!(e, StoreError::InvalidEntry { index: 0, .. }));
        assert!(!e.to_string().contains("SECRET"));
        let e = save_project_allowlist(dir.path(), &tools(&["has space"], &[])).unwrap_err();
        assert!(matches!(e, StoreError::InvalidEntry { .. }));
        assert!(SettingsChange::default()
            .set("tools.mode", json!("groups"))
            .is_err());
        assert!(SettingsChange::default()
            .set("tools.alwaysAllowedTools", json!([]))
            .is_err());
        assert!(SettingsChange::default().set("nope", json!(1)).is_err());
        assert!(SettingsChange::default()
            .set("decision.threshold", json!(0.5))
            .is_ok());
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn an_unreadable_file_is_never_overwritten() {
        let dir = TestDir::new();
        let path = dir.write("pi-context-decisions/settings.json", b"{\"tools\": oops");
        let change = SettingsChange::default()
            .set("tools.enabled", json!(true))
            .unwrap();
        let e = save_global_settings(dir.path(), &change).unwrap_err();
        assert!(matches!(e, StoreError::NotJson { .. }));
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"tools\": oops");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_file() {
        let dir = TestDir::new();
        let path = dir.write(
            ".pi/pi-context-decisions.json",
            br#"{"alwaysAllowedTools":["t"]}"#,
        );
        // A directory where the temporary file's rename target is makes the rename fail.
        let blocked = dir.path().join("blocked");
        std::fs::create_dir_all(blocked.join("pi-context-decisions").join("settings.json/x"))
            .unwrap();
        let change = SettingsChange::default()
            .set("tools.enabled", json!(true))
            .unwrap();
        let e = save_global_settings(&blocked, &change).unwrap_err();
        assert!(matches!(e, StoreError::NotRegularFile { .. }), "{e:?}");
        assert_eq!(raw(&path), json!({"alwaysAllowedTools":["t"]}));
        // The rename itself failing (the target is a non-empty directory): the temporary file
        // is removed.
        let target = path.parent().unwrap();
        std::fs::create_dir_all(target.join("occupied.json/x")).unwrap();
        let err = write_atomically(&Os, &target.join("occupied.json"), target, b"{}");
        assert!(err.is_err());
        let leftovers: Vec<_> = std::fs::read_dir(target)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty());
    }

    const CHILD_DIR: &str = "PCD_STORE_TEST_CHILD_DIR";
    const CHILD_ID: &str = "PCD_STORE_TEST_CHILD_ID";

    /// The writer half of [`two_processes_at_once_lose_nothing`], run in a child process.
    #[test]
    #[ignore = "run as a child process by two_processes_at_once_lose_nothing"]
    fn child_writer() {
        let (Ok(dir), Ok(id)) = (std::env::var(CHILD_DIR), std::env::var(CHILD_ID)) else {
            return;
        };
        for i in 0..30 {
            let name = format!("p{id}_tool_{i}");
            save_project_allowlist(Path::new(&dir), &tools(&[&name], &[])).unwrap();
        }
    }

    #[test]
    fn two_processes_at_once_lose_nothing() {
        let dir = TestDir::new();
        let exe = std::env::current_exe().unwrap();
        let children: Vec<_> = (0..2)
            .map(|id| {
                std::process::Command::new(&exe)
                    .args([
                        "--exact",
                        "store::tests::child_writer",
                        "--ignored",
                        "--quiet",
                    ])
                    .env(CHILD_DIR, dir.path())
                    .env(CHILD_ID, id.to_string())
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut child in children {
            assert!(child.wait().unwrap().success());
        }
        match read_project_allowlist(dir.path()) {
            Loaded::Read { value, warnings } => {
                assert!(warnings.is_empty());
                assert_eq!(value.tools.len(), 60);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn two_writers_at_once_lose_nothing() {
        let dir = TestDir::new();
        let per_writer = 40;
        std::thread::scope(|s| {
            for writer in 0..2 {
                let agent = dir.path();
                s.spawn(move || {
                    for i in 0..per_writer {
                        let name = format!("w{writer}_tool_{i}");
                        let change = SettingsChange {
                            allowlists: tools(&[&name], &[]),
                            ..SettingsChange::default()
                        };
                        save_global_settings(agent, &change).unwrap();
                        save_project_allowlist(
                            agent,
                            &groups(&[&format!("srv-{writer}-{i}")], &[]),
                        )
                        .unwrap();
                    }
                });
            }
        });
        match read_global_settings(dir.path()) {
            Loaded::Read { value, warnings } => {
                assert!(warnings.is_empty());
                assert_eq!(value.tools.always_allowed_tools.len(), 2 * per_writer);
            }
            other => panic!("{other:?}"),
        }
        match read_project_allowlist(dir.path()) {
            Loaded::Read { value, .. } => assert_eq!(value.groups.len(), 2 * per_writer),
            other => panic!("{other:?}"),
        }
    }

    /// A [`SaveFs`] over the real file system that fails, writes short or crashes on demand.
    struct Faulty {
        fault: Option<Fault>,
        /// Every `write` call takes at most this many bytes.
        short: Option<usize>,
        /// Removing a file fails.
        no_remove: bool,
        calls: std::cell::RefCell<std::collections::HashMap<StoreStep, usize>>,
        fired: std::cell::Cell<bool>,
    }

    #[derive(Debug, Clone, Copy)]
    enum Fault {
        /// The `nth` call (1-based) of `step` fails with `errno`.
        Fail {
            step: StoreStep,
            nth: usize,
            errno: i32,
        },
        /// The process ends just before the first call of the step, with no cleanup of any
        /// kind: a crash between two steps of a save.
        Crash(StoreStep),
    }

    /// The exit code of a process ended by [`Fault::Crash`].
    const CRASH_EXIT: i32 = 86;

    impl Faulty {
        fn new(fault: Option<Fault>, short: Option<usize>) -> Faulty {
            Faulty {
                fault,
                short,
                no_remove: false,
                calls: Default::default(),
                fired: Default::default(),
            }
        }

        fn enter(&self, step: StoreStep) -> std::io::Result<()> {
            let n = {
                let mut calls = self.calls.borrow_mut();
                let n = calls.entry(step).or_default();
                *n += 1;
                *n
            };
            match self.fault {
                Some(Fault::Fail {
                    step: at,
                    nth,
                    errno,
                }) if at == step && nth == n => {
                    self.fired.set(true);
                    Err(std::io::Error::from_raw_os_error(errno))
                }
                Some(Fault::Crash(at)) if at == step => std::process::exit(CRASH_EXIT),
                _ => Ok(()),
            }
        }
    }

    impl SaveFs for Faulty {
        fn create_folder(&self, dir: &Path) -> std::io::Result<()> {
            self.enter(StoreStep::CreateFolder)?;
            Os.create_folder(dir)
        }
        fn lock(&self, path: &Path) -> std::io::Result<Lock> {
            self.enter(StoreStep::Lock)?;
            Os.lock(path)
        }
        fn read(&self, path: &Path, limit: u64) -> FileRead {
            match self.enter(StoreStep::Read) {
                Ok(()) => Os.read(path, limit),
                Err(e) => FileRead::Unreadable(e.kind()),
            }
        }
        fn create_temporary(&self, path: &Path) -> std::io::Result<File> {
            self.enter(StoreStep::CreateTemporary)?;
            Os.create_temporary(path)
        }
        fn write(&self, file: &mut File, bytes: &[u8]) -> std::io::Result<usize> {
            self.enter(StoreStep::Write)?;
            let n = self.short.map_or(bytes.len(), |max| max.min(bytes.len()));
            Os.write(file, &bytes[..n])
        }
        fn sync(&self, file: &File) -> std::io::Result<()> {
            self.enter(StoreStep::Sync)?;
            Os.sync(file)
        }
        fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
            self.enter(StoreStep::Rename)?;
            Os.rename(from, to)
        }
        fn sync_folder(&self, dir: &Path) -> std::io::Result<()> {
            self.enter(StoreStep::SyncFolder)?;
            Os.sync_folder(dir)
        }
        fn list_folder(&self, dir: &Path) -> std::io::Result<Vec<std::ffi::OsString>> {
            Os.list_folder(dir)
        }
        fn remove(&self, path: &Path) -> std::io::Result<()> {
            if self.no_remove {
                return Err(std::io::Error::from_raw_os_error(libc::EACCES));
            }
            Os.remove(path)
        }
    }

    /// Planted in the folder's path, the old file and the change: no error may show it.
    const PLANTED: &str = "sk-PLANTED-4c1d";

    /// Which file a fault test saves.
    #[derive(Debug, Clone, Copy)]
    enum Target {
        Global,
        Project,
    }

    impl Target {
        fn file(self) -> StoreFile {
            match self {
                Target::Global => StoreFile::GlobalSettings,
                Target::Project => StoreFile::ProjectAllowlists,
            }
        }

        fn path(self, root: &Path) -> PathBuf {
            match self {
                Target::Global => global_settings_path(root),
                Target::Project => project_allowlist_path(root),
            }
        }

        /// An old file with an unknown field holding a secret, a valid and an invalid entry.
        fn old(self) -> String {
            match self {
                Target::Global => format!(
                    "{{\"zeta\":\"{PLANTED}\",\"tools\":{{\"enabled\":false,\
                     \"alwaysAllowedTools\":[\"keep_me\",\"drop_me\",\"bad name\"]}}}}\n"
                ),
                Target::Project => format!(
                    "{{\"zeta\":\"{PLANTED}\",\"alwaysAllowedTools\":[\"keep_me\",\"drop_me\"],\
                     \"alwaysAllowedMcpServers\":[\"docs\"],\"alwaysAllowed\":[\"skill\"]}}\n"
                ),
            }
        }

        /// Adds a tool and a group and removes one tool (a global save also switches
        /// filtering on).
        fn save(self, fs: &dyn SaveFs, root: &Path) -> Result<Vec<String>, StoreError> {
            let edit = AllowlistChange {
                tools: ListEdit {
                    add: vec![format!("{PLANTED}_tool"), "web_fetch".into()],
                    remove: vec!["drop_me".into()],
                },
                groups: ListEdit {
                    add: vec!["dev-radius".into()],
                    remove: vec![],
                },
            };
            match self {
                Target::Global => {
                    let change = SettingsChange {
                        allowlists: edit,
                        ..SettingsChange::default()
                    }
                    .set("tools.enabled", json!(true))?;
                    save_global_settings_with(fs, root, &change)
                        .map(|(s, _)| granted(&s.global_allowlist()))
                }
                Target::Project => {
                    save_project_allowlist_with(fs, root, &edit).map(|(l, _)| granted(&l))
                }
            }
        }

        /// What a reader grants from the file now: the allowlisted names, sorted, and whether
        /// filtering is on.
        fn read(self, root: &Path) -> (Vec<String>, bool) {
            match self {
                Target::Global => match read_global_settings(root) {
                    Loaded::Absent => (Vec::new(), false),
                    Loaded::Read { value, .. } => {
                        (granted(&value.global_allowlist()), value.tools.enabled)
                    }
                    Loaded::Unreadable(e) => panic!("{e:?}"),
                },
                Target::Project => match read_project_allowlist(root) {
                    Loaded::Absent => (Vec::new(), false),
                    Loaded::Read { value, .. } => (granted(&value), false),
                    Loaded::Unreadable(e) => panic!("{e:?}"),
                },
            }
        }
    }

    fn granted(list: &ScopedAllowlist) -> Vec<String> {
        let mut names: Vec<String> = list
            .tools
            .iter()
            .map(|t| format!("tool:{t:?}"))
            .chain(list.groups.iter().map(|g| format!("group:{g:?}")))
            .collect();
        names.sort();
        names
    }

    fn leftovers(folder: &Path) -> Vec<String> {
        std::fs::read_dir(folder)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.contains(".tmp-"))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A root folder whose path holds [`PLANTED`], with the old file written when given.
    fn planted_root(dir: &TestDir, target: Target, old: Option<&str>) -> PathBuf {
        let root = dir.path().join(PLANTED);
        std::fs::create_dir_all(&root).unwrap();
        if let Some(old) = old {
            let path = target.path(&root);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, old).unwrap();
        }
        root
    }

    /// What the file holds after a save that nothing disturbed: the new content, exactly.
    fn clean_result(target: Target, old: Option<&str>) -> (Vec<u8>, (Vec<String>, bool)) {
        let dir = TestDir::new();
        let root = planted_root(&dir, target, old);
        target.save(&Os, &root).unwrap();
        (
            std::fs::read(target.path(&root)).unwrap(),
            target.read(&root),
        )
    }

    /// I/O errors, a full disk, a quota, a file size limit, a read-only file system and a denied
    /// access at every step of a save, with and without short writes before them, to both
    /// files, with and without an old file. After each: the file is byte for byte the old one
    /// (or still absent), or, when only the folder's sync failed after the rename, exactly the
    /// new one; no temporary file is left; the error names the file and the step and nothing
    /// else; a reader grants exactly what it granted before (or, after the rename, what the
    /// change asked for, never more); and the next save works.
    #[test]
    fn a_fault_at_any_step_leaves_the_old_file_or_exactly_the_new_one() {
        let errnos = [
            libc::EIO,
            libc::ENOSPC,
            libc::EDQUOT,
            libc::EFBIG,
            libc::EROFS,
            libc::EACCES,
        ];
        let mut cases = 0;
        for target in [Target::Global, Target::Project] {
            let old_text = target.old();
            for old in [Some(old_text.as_str()), None] {
                let (new_bytes, new_read) = clean_result(target, old);
                for step in StoreStep::ALL {
                    // Short writes of 1 and 7 bytes before the failing write call.
                    let writes: &[(Option<usize>, usize)] = if step == StoreStep::Write {
                        &[
                            (None, 1),
                            (Some(7), 1),
                            (Some(7), 2),
                            (Some(7), 20),
                            (Some(1), 150),
                        ]
                    } else {
                        &[(None, 1), (Some(7), 1)]
                    };
                    for &(short, nth) in writes {
                        for errno in errnos {
                            let dir = TestDir::new();
                            let root = planted_root(&dir, target, old);
                            let path = target.path(&root);
                            let before = target.read(&root);
                            let fs = Faulty::new(Some(Fault::Fail { step, nth, errno }), short);
                            let case = format!("{target:?} old={} {step:?} errno={errno} short={short:?} nth={nth}", old.is_some());
                            let error = target.save(&fs, &root).unwrap_err();
                            assert!(fs.fired.get(), "{case}: the fault was not reached");
                            let kind = std::io::Error::from_raw_os_error(errno).kind();
                            assert_eq!(
                                error,
                                StoreError::Io {
                                    file: target.file(),
                                    step,
                                    kind
                                },
                                "{case}"
                            );
                            let text = error.to_string();
                            assert!(text.starts_with(target.file().describe()), "{case}: {text}");
                            assert!(text.contains(step.describe()), "{case}: {text}");
                            assert!(
                                !text.contains("PLANTED") && !text.contains('/'),
                                "{case}: {text}"
                            );
                            let on_disk = std::fs::read(&path).ok();
                            if step == StoreStep::SyncFolder {
                                assert_eq!(on_disk.as_deref(), Some(&new_bytes[..]), "{case}");
                                assert_eq!(target.read(&root), new_read, "{case}");
                            } else {
                                assert_eq!(on_disk.as_deref(), old.map(str::as_bytes), "{case}");
                                assert_eq!(target.read(&root), before, "{case}");
                            }
                            assert_eq!(
                                leftovers(path.parent().unwrap()),
                                Vec::<String>::new(),
                                "{case}"
                            );
                            // Nothing is left that stops the next save.
                            target.save(&Os, &root).unwrap();
                            assert_eq!(std::fs::read(&path).unwrap(), new_bytes, "{case}");
                            cases += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(cases, 2 * 2 * 6 * (7 * 2 + 5));
    }

    /// Short writes alone (the kernel taking 1 or 7 bytes a call) give exactly the new file.
    #[test]
    fn short_writes_are_continued_to_the_whole_file() {
        for target in [Target::Global, Target::Project] {
            let old = target.old();
            let (new_bytes, _) = clean_result(target, Some(&old));
            for short in [1, 7, 4096] {
                let dir = TestDir::new();
                let root = planted_root(&dir, target, Some(&old));
                target.save(&Faulty::new(None, Some(short)), &root).unwrap();
                assert_eq!(std::fs::read(target.path(&root)).unwrap(), new_bytes);
            }
        }
    }

    /// A temporary file that could not be removed after a failed rename (or one left by a
    /// crash) is removed by the next save, under the lock.
    #[test]
    fn the_next_save_removes_a_temporary_file_left_behind() {
        let target = Target::Project;
        let old = target.old();
        let (new_bytes, _) = clean_result(target, Some(&old));
        let dir = TestDir::new();
        let root = planted_root(&dir, target, Some(&old));
        let path = target.path(&root);
        let mut fs = Faulty::new(
            Some(Fault::Fail {
                step: StoreStep::Rename,
                nth: 1,
                errno: libc::EIO,
            }),
            None,
        );
        fs.no_remove = true;
        target.save(&fs, &root).unwrap_err();
        assert_eq!(std::fs::read(&path).unwrap(), old.as_bytes());
        assert_eq!(leftovers(path.parent().unwrap()).len(), 1);
        target.save(&Os, &root).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), new_bytes);
        assert_eq!(leftovers(path.parent().unwrap()), Vec::<String>::new());
    }

    const CRASH_ROOT: &str = "PCD_STORE_TEST_CRASH_ROOT";
    const CRASH_STEP: &str = "PCD_STORE_TEST_CRASH_STEP";
    const CRASH_TARGET: &str = "PCD_STORE_TEST_CRASH_TARGET";

    /// The saver half of [`a_crash_between_the_steps_of_a_save_leaves_the_old_or_the_new_file`],
    /// run in a child process that ends just before its step.
    #[test]
    #[ignore = "run as a child process by a_crash_between_the_steps_of_a_save_..."]
    fn child_crashing_saver() {
        let (Ok(root), Ok(step), Ok(target)) = (
            std::env::var(CRASH_ROOT),
            std::env::var(CRASH_STEP),
            std::env::var(CRASH_TARGET),
        ) else {
            return;
        };
        let step = StoreStep::ALL[step.parse::<usize>().unwrap()];
        let target = if target == "global" {
            Target::Global
        } else {
            Target::Project
        };
        let fs = Faulty::new(Some(Fault::Crash(step)), None);
        let _ = target.save(&fs, Path::new(&root));
        // Not reached: the process ended at the step.
    }

    /// A process that dies between any two steps of a save (no destructor, no cleanup) leaves
    /// the old file byte for byte, or after the rename exactly the new one; whatever temporary
    /// file it left is removed by the next save, which works.
    #[test]
    fn a_crash_between_the_steps_of_a_save_leaves_the_old_or_the_new_file() {
        let exe = std::env::current_exe().unwrap();
        for (target, name) in [(Target::Global, "global"), (Target::Project, "project")] {
            let old = target.old();
            let (new_bytes, new_read) = clean_result(target, Some(&old));
            for (index, step) in StoreStep::ALL.iter().enumerate() {
                let dir = TestDir::new();
                let root = planted_root(&dir, target, Some(&old));
                let path = target.path(&root);
                let before = target.read(&root);
                let status = std::process::Command::new(&exe)
                    .args([
                        "--exact",
                        "store::tests::child_crashing_saver",
                        "--ignored",
                        "--quiet",
                    ])
                    .env(CRASH_ROOT, &root)
                    .env(CRASH_STEP, index.to_string())
                    .env(CRASH_TARGET, name)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .unwrap();
                assert_eq!(
                    status.code(),
                    Some(CRASH_EXIT),
                    "{step:?}: did not crash there"
                );
                let on_disk = std::fs::read(&path).unwrap();
                if *step == StoreStep::SyncFolder {
                    assert_eq!(on_disk, new_bytes, "{step:?}");
                    assert_eq!(target.read(&root), new_read, "{step:?}");
                } else {
                    assert_eq!(on_disk, old.as_bytes(), "{step:?}");
                    assert_eq!(target.read(&root), before, "{step:?}");
                }
                let left = leftovers(path.parent().unwrap());
                let expect_left =
                    matches!(step, StoreStep::Write | StoreStep::Sync | StoreStep::Rename);
                assert_eq!(left.len(), usize::from(expect_left), "{step:?}: {left:?}");
                target.save(&Os, &root).unwrap();
                assert_eq!(std::fs::read(&path).unwrap(), new_bytes, "{step:?}");
                assert_eq!(
                    leftovers(path.parent().unwrap()),
                    Vec::<String>::new(),
                    "{step:?}"
                );
            }
        }
    }

    const LIMIT_ROOT: &str = "PCD_STORE_TEST_LIMIT_ROOT";

    /// The saver half of [`a_real_file_size_limit_fails_the_write_and_keeps_the_old_file`], run
    /// under a file size limit of 1 KiB (`ulimit -f 2`, with `SIGXFSZ` ignored so the kernel
    /// answers `EFBIG`).
    #[test]
    #[ignore = "run as a child process by a_real_file_size_limit_fails_the_write_..."]
    fn child_saver_under_a_size_limit() {
        let Ok(root) = std::env::var(LIMIT_ROOT) else {
            return;
        };
        let root = Path::new(&root);
        let many: Vec<String> = (0..200)
            .map(|i| format!("a_rather_long_tool_name_{i}"))
            .collect();
        let change = tools(&many.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
        let error = save_project_allowlist(root, &change).unwrap_err();
        assert_eq!(
            error,
            StoreError::Io {
                file: StoreFile::ProjectAllowlists,
                step: StoreStep::Write,
                kind: std::io::ErrorKind::FileTooLarge,
            }
        );
    }

    /// A real short write and a real error from the kernel: under a file size limit the first
    /// write of a temporary file larger than the limit is cut short and the next one fails
    /// with `EFBIG`, as a full disk fails. The old file is kept, no temporary file is left,
    /// and the same save works without the limit.
    #[test]
    fn a_real_file_size_limit_fails_the_write_and_keeps_the_old_file() {
        let dir = TestDir::new();
        let old = br#"{"alwaysAllowedTools":["keep_me"],"alwaysAllowed":[]}"#;
        let path = dir.write(".pi/pi-context-decisions.json", old);
        let exe = std::env::current_exe().unwrap();
        let status = std::process::Command::new("/bin/sh")
            .args([
                "-c",
                "trap '' XFSZ; ulimit -f 2 && exec \"$0\" \"$@\"",
                exe.to_str().unwrap(),
                "--exact",
                "store::tests::child_saver_under_a_size_limit",
                "--ignored",
                "--quiet",
            ])
            .env(LIMIT_ROOT, dir.path())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{status:?}");
        assert_eq!(std::fs::read(&path).unwrap(), old);
        assert_eq!(leftovers(path.parent().unwrap()), Vec::<String>::new());
        let many: Vec<String> = (0..200)
            .map(|i| format!("a_rather_long_tool_name_{i}"))
            .collect();
        let change = tools(&many.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
        save_project_allowlist(dir.path(), &change).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 1024);
    }
}
