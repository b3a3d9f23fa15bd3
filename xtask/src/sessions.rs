//! Finding session files: a file as given, or every `*.jsonl` under a folder (Pi keeps one
//! folder per working directory under `<agentDir>/sessions`).

use std::io;
use std::path::{Path, PathBuf};

/// How deep a folder is searched; Pi's layout needs two levels.
const MAX_DEPTH: usize = 4;
/// The most files one run reads.
const MAX_FILES: usize = 100_000;

/// The session files at `path`, sorted: the file itself, or the `*.jsonl` files under a folder.
pub fn session_files(path: &Path) -> io::Result<Vec<PathBuf>> {
    if !std::fs::metadata(path)?.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let mut out = Vec::new();
    walk(path, 0, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() && depth + 1 < MAX_DEPTH {
            walk(&path, depth + 1, out)?;
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
            if out.len() >= MAX_FILES {
                return Err(io::Error::other("too many session files"));
            }
            out.push(path);
        }
    }
    Ok(())
}

/// A file's base name, which is what reports show: Pi names sessions
/// `<timestamp>_<sessionId>.jsonl`, and the folders above can hold a user name.
pub fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "(session)".to_owned())
}
