//! Bounded, no-follow reading of one configuration file, through the workspace's one bounded
//! reader ([`pcd_bounded_read`]), in the terms the configuration readers use.

use pcd_bounded_read::Follow;
use pcd_model::FileReadProblem;
use std::path::Path;

/// What reading one file gave.
#[derive(Debug)]
pub(crate) enum FileRead {
    /// The file, or a folder above it, does not exist.
    Absent,
    /// The file's bytes, at most the limit.
    Bytes(Vec<u8>),
    /// The path is a symlink (dangling or not), a directory, a device, a FIFO or a socket.
    NotRegular,
    /// The file is larger than the limit.
    TooLarge,
    /// The file exists but cannot be opened or read (permissions, I/O error).
    Unreadable(std::io::ErrorKind),
}

/// Reads a regular file of at most `limit` bytes, never reading more than `limit + 1`, without
/// following a symlink in its last component (folders above it may be links, as dotfile managers
/// make them) and without blocking on a FIFO.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> FileRead {
    match pcd_bounded_read::read_bounded(path, limit, Follow::NoSymlinks) {
        Ok(bytes) => FileRead::Bytes(bytes),
        Err(FileReadProblem::NotFound) => FileRead::Absent,
        Err(FileReadProblem::TooLarge { .. }) => FileRead::TooLarge,
        Err(FileReadProblem::Io(kind)) => FileRead::Unreadable(kind),
        Err(
            FileReadProblem::Directory
            | FileReadProblem::Fifo
            | FileReadProblem::Device
            | FileReadProblem::Socket
            | FileReadProblem::Symlink,
        ) => FileRead::NotRegular,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdir::TestDir;

    #[test]
    fn kinds_of_paths() {
        let dir = TestDir::new();
        let file = dir.write("f.json", b"{}");
        assert!(matches!(read_bounded(&file, 10), FileRead::Bytes(b) if b == b"{}"));
        assert!(matches!(
            read_bounded(&dir.path().join("none"), 10),
            FileRead::Absent
        ));
        assert!(matches!(
            read_bounded(&dir.path().join("none/deeper"), 10),
            FileRead::Absent
        ));
        assert!(matches!(
            read_bounded(&file.join("below-a-file"), 10),
            FileRead::Absent
        ));
        assert!(matches!(read_bounded(dir.path(), 10), FileRead::NotRegular));
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(matches!(read_bounded(&link, 10), FileRead::NotRegular));
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink(dir.path().join("missing"), &dangling).unwrap();
        assert!(matches!(read_bounded(&dangling, 10), FileRead::NotRegular));
        assert!(matches!(
            read_bounded(Path::new("/dev/null"), 10),
            FileRead::NotRegular
        ));
    }

    #[test]
    fn a_linked_folder_above_the_file_is_fine() {
        let dir = TestDir::new();
        dir.write("real/f.json", b"{}");
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("alias")).unwrap();
        assert!(matches!(
            read_bounded(&dir.path().join("alias/f.json"), 10),
            FileRead::Bytes(_)
        ));
    }

    #[test]
    fn fifo_does_not_block() {
        let dir = TestDir::new();
        let fifo = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status();
        if status.is_ok_and(|s| s.success()) {
            assert!(matches!(read_bounded(&fifo, 10), FileRead::NotRegular));
        }
    }

    #[test]
    fn size_bound_is_exact() {
        let dir = TestDir::new();
        let at = dir.write("at", &[b' '; 10]);
        let over = dir.write("over", &[b' '; 11]);
        assert!(matches!(read_bounded(&at, 10), FileRead::Bytes(b) if b.len() == 10));
        assert!(matches!(read_bounded(&over, 10), FileRead::TooLarge));
    }
}
