//! Issue 18, finding 5: every file the program reads is opened without blocking, only if it is a
//! regular file, and with a size bound. A FIFO (which blocked forever), a device (`/dev/zero`
//! grew past 2 GB as a script and ran forever as a session), a folder or a huge sparse file gets
//! an error that names the file and what is wrong, within a second.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a refusal may take.
const WITHIN: Duration = Duration::from_secs(1);
/// When a run that has not finished counts as hung and is killed.
const HUNG: Duration = Duration::from_secs(10);

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("pcd-cli-hostile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("agent")).unwrap();
        std::fs::create_dir_all(dir.join("project")).unwrap();
        TempDir(dir)
    }

    fn fifo(&self, name: &str) -> PathBuf {
        let path = self.0.join(name);
        let made = Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(made.success(), "mkfifo");
        path
    }

    /// A sparse file of `len` bytes (no disk space used).
    fn sparse(&self, name: &str, len: u64) -> PathBuf {
        let path = self.0.join(name);
        std::fs::File::create(&path).unwrap().set_len(len).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/inventory.json")
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Runs the program with a deadline and returns its exit code and standard error, asserting
/// that it ended within [`WITHIN`].
fn refused(dir: &TempDir, args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_context-decisions"))
        .args(args)
        .env("PI_CODING_AGENT_DIR", dir.0.join("agent"))
        .current_dir(dir.0.join("project"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > HUNG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = started.elapsed();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(took < WITHIN, "{args:?} took {took:?}: {stderr}");
    (status.code(), stderr)
}

fn assert_error(dir: &TempDir, args: &[&str], file: &Path, what: &str) {
    let (code, stderr) = refused(dir, args);
    assert_eq!(code, Some(2), "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(
        stderr.contains(s(file)),
        "{args:?} names the file: {stderr}"
    );
    assert!(stderr.contains(what), "{args:?} says `{what}`: {stderr}");
}

#[test]
fn a_fifo_as_tools_is_refused_by_every_command() {
    let dir = TempDir::new("tools");
    let fifo = dir.fifo("tools.json");
    let call = r#"{"toolName":"read","input":{}}"#;
    for args in [
        vec!["groups", "--tools", s(&fifo)],
        vec!["pick", "--tools", s(&fifo), "--prompt", "find the bug"],
        vec!["list", "tools", "--tools", s(&fifo)],
        vec!["gate", "--tools", s(&fifo), "--call", call],
    ] {
        assert_error(
            &dir,
            &args,
            &fifo,
            "is a FIFO (named pipe), not a regular file",
        );
    }
    let folder = dir.0.join("project");
    assert_error(
        &dir,
        &["groups", "--tools", s(&folder)],
        &folder,
        "is a folder, not a regular file",
    );
    let zero = Path::new("/dev/zero");
    assert_error(
        &dir,
        &["groups", "--tools", s(zero)],
        zero,
        "is a device, not a regular file",
    );
}

#[test]
fn a_fifo_a_device_a_folder_or_a_huge_file_as_the_script_is_refused() {
    let dir = TempDir::new("script");
    let fifo = dir.fifo("script.json");
    assert_error(
        &dir,
        &["simulate", s(&fifo)],
        &fifo,
        "is a FIFO (named pipe)",
    );
    let zero = Path::new("/dev/zero");
    assert_error(&dir, &["simulate", s(zero)], zero, "is a device");
    let folder = dir.0.join("project");
    assert_error(&dir, &["simulate", s(&folder)], &folder, "is a folder");
    // 2 GB, sparse: refused by its size before a byte is read (it took 13 s and 2.1 GB).
    let sparse = dir.sparse("sparse.json", 2 << 30);
    assert_error(
        &dir,
        &["simulate", s(&sparse)],
        &sparse,
        &format!(
            "is larger than {} bytes",
            pcd_cli::commands::MAX_SCRIPT_FILE_BYTES
        ),
    );
}

#[test]
fn a_fifo_a_device_a_folder_or_a_huge_file_as_the_session_is_refused() {
    let dir = TempDir::new("session");
    let fifo = dir.fifo("session.jsonl");
    let sparse = dir.sparse("sparse.jsonl", pcd_ledger::MAX_SESSION_FILE_BYTES + 1);
    let folder = dir.0.join("project");
    let zero = PathBuf::from("/dev/zero");
    let tools = example();
    for (session, what) in [
        (&fifo, "is a FIFO (named pipe), not a regular file"),
        (&zero, "is a device, not a regular file"),
        (&folder, "is a folder, not a regular file"),
        (&sparse, "is larger than"),
    ] {
        for command in [
            vec!["list", "mcp"],
            vec!["gate", "--call", r#"{"toolName":"read"}"#],
        ] {
            let mut args = command.clone();
            args.extend(["--tools", s(&tools), "--session", s(session)]);
            assert_error(&dir, &args, session, what);
        }
    }
}

#[test]
fn a_fifo_in_an_eval_set_is_refused() {
    let dir = TempDir::new("eval");
    let set = dir.0.join("set");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::copy(example(), set.join("tools.json")).unwrap();
    let queries = set.join("queries.jsonl");
    Command::new("mkfifo").arg(&queries).status().unwrap();
    assert_error(&dir, &["eval", "--set", s(&set)], &queries, "is a FIFO");
    std::fs::remove_file(&queries).unwrap();
    std::fs::write(
        &queries,
        "{\"id\":\"q1\",\"prompt\":\"read a file\",\"relevant_tools\":[\"read\"]}\n",
    )
    .unwrap();
    let irrelevance = set.join("irrelevance.jsonl");
    Command::new("mkfifo").arg(&irrelevance).status().unwrap();
    assert_error(&dir, &["eval", "--set", s(&set)], &irrelevance, "is a FIFO");
    std::fs::remove_file(&irrelevance).unwrap();
    let tools = set.join("tools.json");
    std::fs::remove_file(&tools).unwrap();
    Command::new("mkfifo").arg(&tools).status().unwrap();
    assert_error(&dir, &["eval", "--set", s(&set)], &tools, "is a FIFO");
}

#[test]
fn fifos_as_the_settings_files_are_warned_about_without_waiting() {
    let dir = TempDir::new("settings");
    std::fs::create_dir_all(dir.0.join("agent/pi-context-decisions")).unwrap();
    std::fs::create_dir_all(dir.0.join("project/.pi")).unwrap();
    dir.fifo("agent/pi-context-decisions/settings.json");
    dir.fifo("project/.pi/pi-context-decisions.json");
    dir.fifo("agent/mcp.json");
    let (code, stderr) = refused(
        &dir,
        &[
            "list",
            "tools",
            "--tools",
            s(&example()),
            "--agent-dir",
            s(&dir.0.join("agent")),
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
}
