//! Tests of the durable write and the lock: a symlinked lock file, a failed rename, and faults
//! injected through [`SaveFs`] at every step of a save (errors, short writes, crashes of the
//! process between steps, a real file size limit).

use super::*;
use crate::store::edits::{save_global_settings_with, save_project_allowlist_with};
use crate::store::testing::{raw, tools};
use crate::store::{
    global_settings_path, project_allowlist_path, read_global_settings, read_project_allowlist,
    save_global_settings, save_project_allowlist, AllowlistChange, ListEdit, Loaded,
    SettingsChange, StoreError, StoreFile,
};
use crate::testdir::TestDir;
use pcd_model::ScopedAllowlist;
use serde_json::json;

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
fn another_users_settings_file_is_not_replaced() {
    // Only root can hand a file to another account; elsewhere there is nothing to attack with.
    if pcd_bounded_read::replace::effective_uid() != 0 {
        return;
    }
    let dir = TestDir::new();
    let theirs = br#"{"alwaysAllowedTools":["theirs"]}"#;
    let path = dir.write(".pi/pi-context-decisions.json", theirs);
    std::os::unix::fs::chown(&path, Some(4242), Some(4242)).unwrap();
    let change = AllowlistChange {
        tools: ListEdit {
            add: vec!["mine".into()],
            remove: vec![],
        },
        groups: ListEdit::default(),
    };
    let e = save_project_allowlist(dir.path(), &change).unwrap_err();
    assert!(
        matches!(
            e,
            StoreError::NotOwned {
                file: StoreFile::ProjectAllowlists
            }
        ),
        "{e:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), theirs);
    // Read as any file is: what it says still applies.
    assert!(matches!(
        read_project_allowlist(dir.path()),
        Loaded::Read { .. }
    ));
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
    std::fs::create_dir_all(blocked.join("pi-context-decisions").join("settings.json/x")).unwrap();
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
                        let case = format!(
                            "{target:?} old={} {step:?} errno={errno} short={short:?} nth={nth}",
                            old.is_some()
                        );
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
                    "store::durable::tests::child_crashing_saver",
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
            "store::durable::tests::child_saver_under_a_size_limit",
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
