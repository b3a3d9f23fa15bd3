//! The durable write and its lock: [`write_atomically`] (a new owner-only temporary file beside
//! the target, written, synced, renamed over it, the folder synced), the removal of temporary
//! files a crashed save left, the exclusive `flock` on the `.lock` file beside the target
//! ([`Lock`]), and [`SaveFs`], the seam through which the tests make every step fail, write
//! short or crash. It knows bytes and steps, not JSON.

use super::StoreStep;
use crate::bounded::{read_bounded, FileRead};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub(super) fn lock_path(path: &Path) -> PathBuf {
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
pub(super) fn remove_leftovers(fs: &dyn SaveFs, path: &Path, dir: &Path) {
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
pub(super) fn write_atomically(
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
pub(super) trait SaveFs {
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
pub(super) struct Os;

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
pub(super) struct Lock {
    _file: File,
}

/// The error payload of a lock file that is a symlink or not a regular file.
#[derive(Debug)]
pub(super) struct LockNotRegular;

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
mod tests;
