//! The one way pi-context-decisions replaces a file it writes whole (the vector cache, the
//! `eval --plot` chart): the new bytes go to a new temporary file in the target's folder, which
//! is renamed only over an absent path or a regular file this user owns. A folder, a FIFO, a
//! device, a socket or a symbolic link at the path is refused by what it is, and nothing is
//! replaced; nothing here opens an existing file, so nothing waits on a FIFO.

use pcd_model::{FileWriteProblem, FolderProblem};
use std::fs::Metadata;
use std::io::{ErrorKind, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// This process's effective user id (0 off Unix).
pub fn effective_uid() -> u32 {
    #[cfg(unix)]
    {
        effective_uid_unix()
    }
    #[cfg(not(unix))]
    {
        0
    }
}

// The workspace denies unsafe code; `geteuid` is the one call std does not wrap.
#[cfg(unix)]
#[allow(unsafe_code)]
fn effective_uid_unix() -> u32 {
    // SAFETY: `geteuid` takes nothing, touches no memory and always succeeds.
    unsafe { libc::geteuid() }
}

/// What is wrong with `meta` (from `symlink_metadata`, so a link is seen as a link) as a file to
/// replace for the user `uid`: `None` for a regular file `uid` owns.
pub fn replaceable(meta: &Metadata, uid: u32) -> Option<FileWriteProblem> {
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Some(FileWriteProblem::Symlink);
    }
    if kind.is_dir() {
        return Some(FileWriteProblem::Directory);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        if kind.is_fifo() {
            return Some(FileWriteProblem::Fifo);
        }
        if kind.is_socket() {
            return Some(FileWriteProblem::Socket);
        }
        if kind.is_file() && meta.uid() != uid {
            return Some(FileWriteProblem::NotOwned);
        }
    }
    #[cfg(not(unix))]
    let _ = uid;
    (!kind.is_file()).then_some(FileWriteProblem::Device)
}

/// Whether `path` may be replaced by this user: absent, or a regular file the user owns (see
/// [`replaceable`]).
pub fn check_target(path: &Path) -> Result<(), FileWriteProblem> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => replaceable(&meta, effective_uid()).map_or(Ok(()), Err),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(FileWriteProblem::Io(e.kind())),
    }
}

/// Replaces `path` with `bytes`: checked with [`check_target`], written to a new temporary file
/// beside it (created exclusively, so never through a link planted at its name, with `mode`),
/// synced, checked again and renamed over it. On any error the temporary file is removed and the
/// path is what it was. The folder must exist.
pub fn replace_file(path: &Path, bytes: &[u8], mode: u32) -> Result<(), FileWriteProblem> {
    check_target(path)?;
    let io = |e: std::io::Error| FileWriteProblem::Io(e.kind());
    let name = path
        .file_name()
        .ok_or(FileWriteProblem::Io(ErrorKind::InvalidInput))?
        .to_string_lossy();
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let write = WRITES.fetch_add(1, Ordering::Relaxed);
    let temporary = path.with_file_name(format!(".{name}.{}.{write}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(&temporary).map_err(io)?;
    let written = (|| {
        file.write_all(bytes).map_err(io)?;
        file.sync_all().map_err(io)?;
        // Checked again just before the rename: what was put there meanwhile is not replaced.
        check_target(path)?;
        std::fs::rename(&temporary, path).map_err(io)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Why a folder is not private to the user `uid`, as OpenSSH judges `~/.ssh`: `meta` (from
/// `symlink_metadata`) must be a folder, not a link, owned by `uid`, and writable by nobody else
/// (no group or other write bit). `None` when it is private.
pub fn private_folder(meta: &Metadata, uid: u32) -> Option<FolderProblem> {
    if meta.file_type().is_symlink() {
        return Some(FolderProblem::Symlink);
    }
    if !meta.is_dir() {
        return Some(FolderProblem::NotAFolder);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != uid {
            return Some(FolderProblem::NotOwned);
        }
        if meta.mode() & 0o022 != 0 {
            return Some(FolderProblem::WritableByOthers);
        }
    }
    #[cfg(not(unix))]
    let _ = uid;
    None
}

#[cfg(test)]
mod tests;
