//! The attacks of issue 32, items 2 and 4: whatever is at a path the program writes, only an
//! absent path or a regular file of this user's is replaced, and nothing waits.

use super::*;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::process::Command;

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn only_entry_is(dir: &Path, name: &str) {
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, [name], "no temporary file is left behind");
}

#[test]
fn an_absent_path_or_an_own_regular_file_is_replaced_privately() {
    let dir = scratch();
    let path = dir.path().join("chart.svg");
    replace_file(&path, b"one", 0o600).unwrap();
    replace_file(&path, b"two", 0o600).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"two");
    assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
    only_entry_is(dir.path(), "chart.svg");
}

#[test]
fn a_fifo_at_the_path_is_refused_at_once_and_stays() {
    let dir = scratch();
    let path = dir.path().join("chart.svg");
    assert!(Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap()
        .success());
    // No reader ever opens it: a writer that opened it would wait forever.
    assert_eq!(
        replace_file(&path, b"x", 0o600),
        Err(FileWriteProblem::Fifo)
    );
    assert!(std::fs::symlink_metadata(&path)
        .unwrap()
        .file_type()
        .is_fifo());
    only_entry_is(dir.path(), "chart.svg");
}

#[test]
fn a_folder_or_a_symlink_at_the_path_is_refused_and_what_it_names_stays() {
    let dir = scratch();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    assert_eq!(
        replace_file(&folder, b"x", 0o600),
        Err(FileWriteProblem::Directory)
    );
    assert!(folder.is_dir());
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"keep me").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    assert_eq!(
        replace_file(&link, b"x", 0o600),
        Err(FileWriteProblem::Symlink)
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

/// As root (the reported attack: `PCD_VECTOR_CACHE` naming a device, run as root), a device node
/// made here stays a device; skipped when this user cannot make one.
#[test]
fn a_device_at_the_path_is_never_replaced_even_as_root() {
    let dir = scratch();
    let path = dir.path().join("null");
    let made = Command::new("mknod")
        .arg(&path)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        return; // mknod needs root (this machine's test user is root)
    }
    assert_eq!(
        replace_file(&path, b"x", 0o600),
        Err(FileWriteProblem::Device)
    );
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.file_type().is_char_device());
    only_entry_is(dir.path(), "null");
}

#[test]
fn another_users_file_is_not_replaced() {
    let dir = scratch();
    let path = dir.path().join("vectors.bin");
    std::fs::write(&path, b"theirs").unwrap();
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert_eq!(replaceable(&meta, meta.uid()), None);
    assert_eq!(
        replaceable(&meta, meta.uid() + 1),
        Some(FileWriteProblem::NotOwned)
    );
    if effective_uid() == 0 {
        // Root can hand the file to another account: then it is refused for real.
        std::os::unix::fs::chown(&path, Some(4242), Some(4242)).unwrap();
        assert_eq!(
            replace_file(&path, b"x", 0o600),
            Err(FileWriteProblem::NotOwned)
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"theirs");
    }
}

#[test]
fn a_private_folder_is_owned_not_a_link_and_writable_by_its_owner_alone() {
    let dir = scratch();
    let folder = dir.path().join("cache");
    std::fs::create_dir(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    let meta = |p: &Path| std::fs::symlink_metadata(p).unwrap();
    let uid = meta(&folder).uid();
    assert_eq!(private_folder(&meta(&folder), uid), None);
    assert_eq!(
        private_folder(&meta(&folder), uid + 1),
        Some(FolderProblem::NotOwned)
    );
    for mode in [0o770, 0o702, 0o777] {
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode)).unwrap();
        assert_eq!(
            private_folder(&meta(&folder), uid),
            Some(FolderProblem::WritableByOthers),
            "{mode:o}"
        );
    }
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(private_folder(&meta(&folder), uid), None);
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&folder, &link).unwrap();
    assert_eq!(
        private_folder(&meta(&link), uid),
        Some(FolderProblem::Symlink)
    );
    std::fs::write(dir.path().join("file"), b"").unwrap();
    assert_eq!(
        private_folder(&meta(&dir.path().join("file")), uid),
        Some(FolderProblem::NotAFolder)
    );
}
