//! The one way pi-context-decisions opens a file to read it: non-blocking, only a regular file,
//! and never more than a bound.
//!
//! Every file the program, the Node addon and `cargo xtask` read goes through [`open_bounded`]
//! (a seekable handle, for session files) or [`read_bounded`] (the whole file). The open uses
//! `O_NONBLOCK` (and `O_NOCTTY`), so a FIFO never makes it wait for a writer; the opened handle
//! is then checked with `fstat`, so a folder, a FIFO, a device or a socket is refused by what it
//! is at that moment, not by what the path was a moment before. A file whose size is over the
//! bound is refused before a byte is read, and reading stops one byte past the bound, so a file
//! that grows while it is read, or a special file that claims a size of 0, can never make the
//! reader allocate more than the bound. Errors are codes ([`FileReadProblem`]) that name no path
//! and nothing from the file; the callers name the file in ui-text's sentences.
//!
//! **Architecture invariant:** it reads only what it is asked to, never writes, and never returns
//! more than `limit` bytes; it holds no sentence.
//!
//! ```
//! use pcd_bounded_read::{read_bounded, Follow};
//! use pcd_model::FileReadProblem;
//!
//! let dir = std::env::temp_dir().join(format!("pcd-bounded-read-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let file = dir.join("tools.json");
//! std::fs::write(&file, b"[]").unwrap();
//! assert_eq!(read_bounded(&file, 1024, Follow::Symlinks).unwrap(), b"[]");
//! assert_eq!(
//!     read_bounded(&file, 1, Follow::Symlinks),
//!     Err(FileReadProblem::TooLarge { limit: 1 })
//! );
//! assert_eq!(read_bounded(&dir, 1024, Follow::Symlinks), Err(FileReadProblem::Directory));
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use pcd_model::FileReadProblem;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, ErrorKind, Read, Seek, SeekFrom};
use std::path::Path;

/// Whether a symbolic link as the path's last component is followed. Folders above it may always
/// be links (dotfile managers make them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Follow it: a file the person named on the command line.
    Symlinks,
    /// Refuse it ([`FileReadProblem::Symlink`]): the extension's own configuration files, which
    /// the specification reads only when they are not links.
    NoSymlinks,
}

/// An opened regular file that refuses to read past its bound: a read that would go beyond
/// `limit` bytes from the start fails with [`ErrorKind::FileTooLarge`] (the file grew after it
/// was opened). It seeks freely.
#[derive(Debug)]
pub struct BoundedFile {
    file: File,
    position: u64,
    limit: u64,
    len: u64,
}

impl BoundedFile {
    /// The file's size when it was opened (at most the bound).
    pub fn len_at_open(&self) -> u64 {
        self.len
    }

    /// Whether the file was empty when it was opened.
    pub fn is_empty_at_open(&self) -> bool {
        self.len == 0
    }

    /// The bound, in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

impl Read for BoundedFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // One byte past the bound may be read, to tell "exactly at the bound" from "over it".
        let allowed = self.limit.saturating_add(1).saturating_sub(self.position);
        if allowed == 0 {
            return Err(ErrorKind::FileTooLarge.into());
        }
        let n = buf
            .len()
            .min(usize::try_from(allowed).unwrap_or(usize::MAX));
        let read = self.file.read(&mut buf[..n])?;
        self.position += read as u64;
        if self.position > self.limit {
            return Err(ErrorKind::FileTooLarge.into());
        }
        Ok(read)
    }
}

impl Seek for BoundedFile {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.position = self.file.seek(to)?;
        Ok(self.position)
    }
}

/// Opens `path` for reading without blocking, and only if it is a regular file of at most `limit`
/// bytes. The size is checked on the opened handle before anything is read.
pub fn open_bounded(
    path: &Path,
    limit: u64,
    follow: Follow,
) -> Result<BoundedFile, FileReadProblem> {
    let file = open_non_blocking(path, follow).map_err(|e| open_problem(path, &e, follow))?;
    let meta = file.metadata().map_err(|e| FileReadProblem::Io(e.kind()))?;
    if let Some(problem) = not_regular(&meta) {
        return Err(problem);
    }
    if meta.len() > limit {
        return Err(FileReadProblem::TooLarge { limit });
    }
    Ok(BoundedFile {
        file,
        position: 0,
        limit,
        len: meta.len(),
    })
}

/// Reads the whole regular file at `path`, at most `limit` bytes (see [`open_bounded`]).
pub fn read_bounded(path: &Path, limit: u64, follow: Follow) -> Result<Vec<u8>, FileReadProblem> {
    let file = open_bounded(path, limit, follow)?;
    let capacity = usize::try_from(file.len.min(limit))
        .unwrap_or(0)
        .saturating_add(1);
    let mut bytes = Vec::with_capacity(capacity);
    match file.take(limit.saturating_add(1)).read_to_end(&mut bytes) {
        Ok(_) if bytes.len() as u64 > limit => Err(FileReadProblem::TooLarge { limit }),
        Ok(_) => Ok(bytes),
        Err(e) if e.kind() == ErrorKind::FileTooLarge => Err(FileReadProblem::TooLarge { limit }),
        Err(e) => Err(FileReadProblem::Io(e.kind())),
    }
}

/// What the opened file is, when it is not a regular file.
fn not_regular(meta: &Metadata) -> Option<FileReadProblem> {
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    if kind.is_dir() {
        return Some(FileReadProblem::Directory);
    }
    if kind.is_symlink() {
        return Some(FileReadProblem::Symlink);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some(FileReadProblem::Fifo);
        }
        if kind.is_socket() {
            return Some(FileReadProblem::Socket);
        }
    }
    Some(FileReadProblem::Device)
}

#[cfg(unix)]
fn open_non_blocking(path: &Path, follow: Follow) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
    if follow == Follow::NoSymlinks {
        flags |= libc::O_NOFOLLOW;
    }
    OpenOptions::new().read(true).custom_flags(flags).open(path)
}

#[cfg(not(unix))]
fn open_non_blocking(path: &Path, _follow: Follow) -> io::Result<File> {
    OpenOptions::new().read(true).open(path)
}

/// Why an open failed, in terms of what is at the path.
fn open_problem(path: &Path, error: &io::Error, follow: Follow) -> FileReadProblem {
    #[cfg(unix)]
    if error.raw_os_error() == Some(libc::ENOTDIR) {
        return FileReadProblem::NotFound;
    }
    if error.kind() == ErrorKind::NotFound {
        return FileReadProblem::NotFound;
    }
    // ELOOP (a link under O_NOFOLLOW), ENXIO (a socket, a device with no driver) and the like:
    // look at the path itself, without opening it.
    let meta = match follow {
        Follow::Symlinks => std::fs::metadata(path),
        Follow::NoSymlinks => std::fs::symlink_metadata(path),
    };
    match meta {
        Ok(meta) => not_regular(&meta).unwrap_or(FileReadProblem::Io(error.kind())),
        Err(e) if e.kind() == ErrorKind::NotFound => FileReadProblem::NotFound,
        Err(_) => FileReadProblem::Io(error.kind()),
    }
}

pub mod replace;

#[cfg(test)]
mod tests;
