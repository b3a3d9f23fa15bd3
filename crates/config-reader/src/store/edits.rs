//! The edits and the saves: [`ListEdit`], [`AllowlistChange`] and [`SettingsChange`], how a
//! change is validated and applied to a file's JSON object (every saved entry it does not
//! remove stays, unknown fields too), and the read-modify-write of a save under the lock
//! ([`save_global_settings`], [`save_project_allowlist`]), which reads through `document` and
//! writes through `durable`.

use super::document::{object_of, Parsed};
use super::durable::{lock_path, remove_leftovers, write_atomically, LockNotRegular, Os, SaveFs};
use super::{
    global_settings_path, project_allowlist_path, StoreError, StoreFile, StoreStep,
    MAX_SETTINGS_FILE_BYTES,
};
use pcd_model::{
    parse_group_entry, parse_tool_entry, FileWriteProblem, ProjectAllowlistFile, ScopedAllowlist,
    Settings, SettingsWarning,
};
use serde_json::{Map, Value};
use std::path::Path;

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
    // Visible in `store` for the fault tests in `durable`, which build changes with `..`.
    pub(super) sets: Vec<(&'static str, &'static str, Value)>,
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

pub(super) fn save_global_settings_with(
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

pub(super) fn save_project_allowlist_with(
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
        Some(Parsed {
            huge_number: Some((line, column)),
            ..
        }) => return Err(StoreError::HugeNumber { file, line, column }),
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
    // Replaced only when absent or a regular file this user owns (the read above already
    // refused a link, a folder or a device): another user's file in a shared project folder
    // stays theirs.
    match pcd_bounded_read::replace::check_target(path) {
        Ok(()) => {}
        Err(FileWriteProblem::NotOwned) => return Err(StoreError::NotOwned { file }),
        Err(FileWriteProblem::Io(kind)) => return Err(failed(StoreStep::Read)(kind.into())),
        Err(_) => return Err(StoreError::NotRegularFile { file }),
    }
    remove_leftovers(fs, path, dir);
    write_atomically(fs, path, dir, text.as_bytes()).map_err(|(step, e)| failed(step)(e))?;
    Ok(root)
}

#[cfg(test)]
mod tests;
