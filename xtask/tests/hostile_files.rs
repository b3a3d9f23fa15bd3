//! Issue 18, finding 5: `replay` and `mirror` open a session file without blocking, only if it is
//! a regular file of at most `MAX_SESSION_FILE_BYTES`. A FIFO blocked them forever and
//! `/dev/zero` ran forever; now each is refused within a second, naming the file and what it is.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("xtask-hostile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs xtask, killing it if it hangs, and returns its exit code and its whole output; asserts
/// that it ended within a second.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = started.elapsed();
    let mut output = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut output).unwrap();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut output).unwrap();
    assert!(
        took < Duration::from_secs(1),
        "{args:?} took {took:?}: {output}"
    );
    (status.code(), output)
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

#[test]
fn replay_and_mirror_refuse_a_fifo_a_device_and_a_huge_file_at_once() {
    let dir = TempDir::new("files");
    let fifo = dir.0.join("fifo.jsonl");
    mkfifo(&fifo);
    let sparse = dir.0.join("sparse.jsonl");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(pcd_ledger::MAX_SESSION_FILE_BYTES + 1)
        .unwrap();
    let db = dir.0.join("mirror.sqlite");
    let db = db.to_str().unwrap();
    for (file, name, what) in [
        (
            fifo.as_path(),
            "fifo.jsonl",
            "is a FIFO (named pipe), not a regular file",
        ),
        (
            Path::new("/dev/zero"),
            "zero",
            "is a device, not a regular file",
        ),
        (
            sparse.as_path(),
            "sparse.jsonl",
            "is larger than 1073741824 bytes",
        ),
    ] {
        let file = file.to_str().unwrap();
        for args in [
            vec!["replay", file],
            vec!["replay", file, "--json"],
            vec!["mirror", file, "--sqlite", db],
        ] {
            let (code, output) = refused(&args);
            assert_eq!(code, Some(2), "{args:?}: {output}");
            assert!(output.contains(name), "{args:?} names the file: {output}");
            assert!(output.contains(what), "{args:?} says `{what}`: {output}");
        }
    }
}

#[test]
fn a_fifo_in_a_sessions_folder_is_not_waited_for() {
    let dir = TempDir::new("folder");
    mkfifo(&dir.0.join("fifo.jsonl"));
    // The folder walk takes regular files only; the FIFO is not one of them.
    let (code, output) = refused(&["replay", dir.0.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{output}");
    assert!(output.contains("no session files found"), "{output}");
}

#[test]
fn a_fifo_or_a_device_as_the_mirror_database_is_refused_at_once() {
    let dir = TempDir::new("db");
    let session = dir.0.join("s.jsonl");
    std::fs::write(
        &session,
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/w\"}\n\
         {\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"x\"},\"id\":\"00000001\",\"parentId\":null}\n",
    )
    .unwrap();
    let fifo = dir.0.join("db.sqlite");
    mkfifo(&fifo);
    let session = session.to_str().unwrap();
    for db in [fifo.to_str().unwrap(), "/dev/zero"] {
        for args in [
            vec!["replay", session, "--sqlite", db],
            vec!["mirror", session, "--sqlite", db],
        ] {
            let (code, output) = refused(&args);
            assert_eq!(code, Some(2), "{args:?}: {output}");
            assert!(output.contains("not a regular file"), "{args:?}: {output}");
        }
    }
}
