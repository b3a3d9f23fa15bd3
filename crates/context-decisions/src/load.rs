//! The facade's file edge: reading what a session starts from (settings, the project allowlist,
//! the `mcp.json` origins) with the config-reader, and turning every problem into a warning
//! sentence from ui-text. The `Session` itself never touches a file.

use crate::session::SettingsRead;
use pcd_config_reader::store::{self, Loaded, StoreError, StoreStep};
use pcd_config_reader::{read_mcp_origins, PiVersion};
use pcd_gate::ProjectRead;
use pcd_model::Scope;
use pcd_ui_text::{
    config_warning, settings_fallback, settings_warning, FileProblem, FileStep, SettingsFallback,
    SettingsFile,
};
use std::path::Path;

/// What the files say, and the warnings to show about them.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedFiles {
    /// The global settings.
    pub settings: SettingsRead,
    /// The project allowlist.
    pub project: ProjectRead,
    /// Whether the global settings file was found and read (absent or unreadable: no).
    pub settings_found: bool,
    /// Warnings (sentences, names and codes only).
    pub warnings: Vec<String>,
}

/// What ui-text says about a store error: the step that failed and why, so a failed save gives
/// its reason (a read-only folder, a full disk, a symlinked lock file).
pub(crate) fn problem(error: &StoreError) -> FileProblem {
    match error {
        StoreError::NotJson { .. } => FileProblem::NotJson,
        StoreError::TooLarge { .. } => FileProblem::TooLarge {
            limit_kib: store::MAX_SETTINGS_FILE_BYTES / 1024,
        },
        StoreError::NotRegularFile { .. } => FileProblem::NotRegularFile,
        StoreError::NotOwned { .. } => FileProblem::NotOwned,
        StoreError::LockNotRegularFile { .. } => FileProblem::LockNotRegularFile,
        StoreError::NotUnicode { .. } => FileProblem::NotUnicode,
        StoreError::HugeNumber { .. } => FileProblem::HugeNumber,
        StoreError::Io { step, kind, .. } => FileProblem::Io {
            step: file_step(*step),
            kind: *kind,
        },
        // A change the store refuses before touching the file; the dialog never builds one.
        StoreError::InvalidEntry { .. } | StoreError::InvalidSetting { .. } => FileProblem::Io {
            step: FileStep::Write,
            kind: std::io::ErrorKind::InvalidInput,
        },
    }
}

fn file_step(step: StoreStep) -> FileStep {
    match step {
        StoreStep::CreateFolder => FileStep::CreateFolder,
        StoreStep::Lock => FileStep::Lock,
        StoreStep::Read => FileStep::Read,
        StoreStep::CreateTemporary => FileStep::CreateTemporary,
        StoreStep::Write => FileStep::Write,
        StoreStep::Sync => FileStep::Sync,
        StoreStep::Rename => FileStep::Rename,
        StoreStep::SyncFolder => FileStep::SyncFolder,
    }
}

/// One file's reading: what applies, whether the file was read (absent or unreadable: no), and
/// the warnings about it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRead<T> {
    /// What applies.
    pub value: T,
    /// Whether the file was found and read (so its values, less bad fields, apply).
    pub read: bool,
    /// Warnings (sentences, names and codes only).
    pub warnings: Vec<String>,
}

/// Reads the global settings. `branch_filters` says whether the branch already has a ledger (it
/// decides which fallback sentence applies when the file cannot be read).
pub fn load_global_settings(agent_dir: &Path, branch_filters: bool) -> FileRead<SettingsRead> {
    match store::read_global_settings(agent_dir) {
        Loaded::Absent => FileRead {
            value: SettingsRead::Read(Default::default()),
            read: false,
            warnings: Vec::new(),
        },
        Loaded::Read { value, warnings } => FileRead {
            value: SettingsRead::Read(value),
            read: true,
            warnings: warnings
                .iter()
                .map(|w| settings_warning(SettingsFile::Global, w))
                .collect(),
        },
        Loaded::Unreadable(e) => {
            let fallback = if branch_filters {
                SettingsFallback::GlobalUnreadableBranchKept(problem(&e))
            } else {
                SettingsFallback::GlobalUnreadableBlocks(problem(&e))
            };
            FileRead {
                value: SettingsRead::Unreadable,
                read: false,
                warnings: vec![settings_fallback(fallback)],
            }
        }
    }
}

/// Reads the project allowlist (`<cwd>/.pi/pi-context-decisions.json`).
pub fn load_project_allowlist(cwd: &Path) -> FileRead<ProjectRead> {
    match store::read_project_allowlist(cwd) {
        Loaded::Absent => FileRead {
            value: ProjectRead::Absent,
            read: false,
            warnings: Vec::new(),
        },
        Loaded::Read { value, warnings } => FileRead {
            value: ProjectRead::Read(value),
            read: true,
            warnings: warnings
                .iter()
                .map(|w| settings_warning(SettingsFile::Project, w))
                .collect(),
        },
        Loaded::Unreadable(e) => FileRead {
            value: ProjectRead::Unreadable,
            read: false,
            warnings: vec![settings_fallback(
                SettingsFallback::ProjectUnreadableLastGood(problem(&e)),
            )],
        },
    }
}

/// Reads the global settings and the project allowlist. `branch_filters` says whether the branch
/// already has a ledger (it decides which fallback sentence applies when the settings cannot be
/// read).
pub fn load_settings(agent_dir: &Path, cwd: &Path, branch_filters: bool) -> LoadedFiles {
    let global = load_global_settings(agent_dir, branch_filters);
    let project = load_project_allowlist(cwd);
    let mut warnings = global.warnings;
    warnings.extend(project.warnings);
    LoadedFiles {
        settings: global.value,
        project: project.value,
        settings_found: global.read,
        warnings,
    }
}

/// Reads the names-only MCP origins when the user approved it (`tools.readMcpConfig`); without
/// approval nothing is read and built-in MCP servers count as global. Returns (raw server name,
/// scope) pairs and warning sentences.
pub fn load_mcp_origins(
    approved: bool,
    agent_dir: &Path,
    cwd: &Path,
    project_trusted: bool,
    version: PiVersion,
) -> (Vec<(String, Scope)>, Vec<String>) {
    if !approved {
        return (Vec::new(), Vec::new());
    }
    let origins = read_mcp_origins(agent_dir, cwd, project_trusted, version);
    let servers = origins
        .servers()
        .iter()
        .map(|s| (s.name().as_str().to_owned(), s.scope()))
        .collect();
    let warnings = origins.warnings().iter().map(config_warning).collect();
    (servers, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_and_absent_files() {
        let dir = std::env::temp_dir().join(format!("pcd-load-{}", std::process::id()));
        let agent = dir.join("agent");
        let cwd = dir.join("cwd");
        std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
        std::fs::create_dir_all(cwd.join(".pi")).unwrap();
        let loaded = load_settings(&agent, &cwd, false);
        assert_eq!(loaded.settings, SettingsRead::Read(Default::default()));
        assert_eq!(loaded.project, ProjectRead::Absent);
        assert!(loaded.warnings.is_empty());
        std::fs::write(
            agent.join("pi-context-decisions/settings.json"),
            "{\"tools\": {\"enabled\": \"sk-live-SECRET\"}",
        )
        .unwrap();
        std::fs::write(
            cwd.join(".pi/pi-context-decisions.json"),
            r#"{"alwaysAllowedTools": ["ok", "has space"]}"#,
        )
        .unwrap();
        let loaded = load_settings(&agent, &cwd, true);
        assert_eq!(loaded.settings, SettingsRead::Unreadable);
        assert!(matches!(loaded.project, ProjectRead::Read(_)));
        assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
        assert!(!loaded.warnings.concat().contains("SECRET"));
        assert!(!loaded.warnings.concat().contains(dir.to_str().unwrap()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Issue 18, item 7: a failed save reaches the person with its reason (which step, and a
    /// read-only folder, a full disk or a symlinked lock file), not only "saving failed".
    #[test]
    fn a_failed_save_says_why() {
        use pcd_config_reader::store::{save_global_settings, SettingsChange, StoreFile};
        let said =
            |e: &StoreError| settings_fallback(SettingsFallback::GlobalSaveFailed(problem(e)));
        let io = |step, kind| StoreError::Io {
            file: StoreFile::GlobalSettings,
            step,
            kind,
        };
        let full = said(&io(StoreStep::Write, std::io::ErrorKind::StorageFull));
        assert!(
            full.contains("writing the temporary file: the disk is full"),
            "{full}"
        );
        let read_only = said(&io(
            StoreStep::CreateTemporary,
            std::io::ErrorKind::ReadOnlyFilesystem,
        ));
        assert!(read_only.contains("read-only"), "{read_only}");
        let denied = said(&io(
            StoreStep::CreateTemporary,
            std::io::ErrorKind::PermissionDenied,
        ));
        assert!(denied.contains("permission denied"), "{denied}");

        let dir = std::env::temp_dir().join(format!("pcd-load-lock-{}", std::process::id()));
        let folder = dir.join("pi-context-decisions");
        std::fs::create_dir_all(&folder).unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere"), folder.join("settings.json.lock"))
            .unwrap();
        let change = SettingsChange::default()
            .set("tools.enabled", serde_json::json!(true))
            .unwrap();
        let error = save_global_settings(&dir, &change).unwrap_err();
        let lock = said(&error);
        assert!(lock.contains("lock file"), "{lock}");
        assert!(lock.contains("symbolic link"), "{lock}");
        assert!(
            !dir.join("elsewhere").exists(),
            "nothing is created through the link"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
