//! Shared helpers of the workspace-level tests in `tests/tests/`: the repository root, the
//! installer of Node 22 and Pi from the npm registry, and the built addon as a `.node` file.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `tests/support/install-pi.sh WHAT` (`node`, or a Pi version such as `1.6.0`) and returns
/// the path it prints: the Node 22 binary, or the installed Pi package. Installs once into
/// `.cache/`; a failure fails the test (nothing is skipped).
pub fn install(what: &str) -> PathBuf {
    let out = Command::new("bash")
        .arg(repo().join("tests/support/install-pi.sh"))
        .arg(what)
        .output()
        .expect("bash runs the installer");
    assert!(
        out.status.success(),
        "installing {what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Runs `cargo build -p PACKAGE` (the debug profile the tests use; a no-op when it is up to
/// date), so a plain `cargo test --workspace` on a fresh checkout has the addon and the program
/// that the tests run inside Node, Pi and a shell. Cargo is the one running the tests (`CARGO`).
pub fn cargo_build(package: &str) {
    let status = cargo_command()
        .args(["build", "--quiet", "-p", package])
        .current_dir(repo())
        .status()
        .expect("cargo runs");
    assert!(status.success(), "`cargo build -p {package}` failed");
}

/// A `cargo` command (the one running the tests, `CARGO`) without the variables cargo sets for
/// the test it runs (see `without_crate_env`).
pub fn cargo_command() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    without_crate_env(&mut command);
    command
}

/// Removes from `command`'s environment the variables cargo sets for the test it runs
/// (`CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`, …). Some build scripts (ring's) ask to be rerun when
/// those change, so a cargo build started from a test, directly or through a script, would
/// otherwise redo what `cargo test` itself (or `cargo xtask`) had built, and the next build
/// redo it back.
pub fn without_crate_env(command: &mut Command) -> &mut Command {
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

/// The `context-decisions` program, built for the tests (once per test process).
pub fn program() -> PathBuf {
    static PROGRAM: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            cargo_build("pcd-cli");
            let bin = target_dir().join("debug").join("context-decisions");
            assert!(bin.exists(), "no program at {}", bin.display());
            bin
        })
        .clone()
}

/// The addon, built by `cargo build -p pcd-node` (once per test process) and copied to a
/// `.node` file: Node loads addons by that extension, and overwriting a library another Node
/// process has mapped would crash it. The copy is named after the build (its size and time), in
/// `target/pcd-addon-copies/`, and never overwritten: test processes share it, and a new build
/// gets a new copy, instead of every test process leaving a copy of its own in the temporary
/// folder. Copies of other builds more than an hour old are removed (with the semantic model a
/// debug addon is about 240 MB).
pub fn addon() -> PathBuf {
    static ADDON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ADDON
        .get_or_init(|| {
            cargo_build("pcd-node");
            let lib = target_dir().join("debug").join("libpcd_node.so");
            let meta = std::fs::metadata(&lib)
                .unwrap_or_else(|e| panic!("no addon at {}: {e}", lib.display()));
            let built = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let dir = target_dir()
                .join("pcd-addon-copies")
                .join(format!("{}-{built}", meta.len()));
            remove_old_copies(&dir);
            let copy = dir.join("pcd_node.node");
            if !copy.exists() {
                std::fs::create_dir_all(&dir).unwrap();
                // Copied whole under a name of this process's, then renamed into place, so no
                // process ever sees a partial copy.
                let partial = dir.join(format!("pcd_node.{}.partial", std::process::id()));
                std::fs::copy(&lib, &partial).unwrap();
                std::fs::rename(&partial, &copy).unwrap();
            }
            copy
        })
        .clone()
}

/// Removes the copies of other builds than `keep`'s that were made more than an hour ago (a
/// test process of an older build still running after an hour is not expected).
fn remove_old_copies(keep: &Path) {
    let Some(parent) = keep.parent() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let hour = std::time::Duration::from_secs(3600);
    for entry in entries.flatten() {
        let path = entry.path();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > hour);
        if path != keep && old {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// Cargo's target folder: `CARGO_TARGET_DIR`, else `target/` in the repository.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"))
}

/// A fresh folder under the system's temporary folder, unique to this process, this call and
/// `name`.
pub fn temp_dir(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("pcd-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A model folder that holds no model, for `PCD_MODEL_DIR`: the only folder the addon then looks
/// in, so a session inside Pi scores lexically even when it was loaded from this checkout (whose
/// `.cache` may hold the model).
pub fn no_model_dir() -> PathBuf {
    std::env::temp_dir().join("pcd-no-model-here")
}

/// Runs `script` with Node 22 (`node -e`), asserts it succeeded (showing its stderr when not),
/// and returns what it printed.
pub fn node_eval(script: &str) -> Vec<u8> {
    node_eval_with(script, &[])
}

/// [`node_eval`] with `env` set for the script (after the default, a model folder without the
/// model: without one the addon scores lexically, which is what most scripts expect).
pub fn node_eval_with(script: &str, env: &[(&str, &std::ffi::OsStr)]) -> Vec<u8> {
    let out = Command::new(install("node"))
        .env("PCD_MODEL_DIR", no_model_dir())
        .envs(env.iter().copied())
        .arg("-e")
        .arg(script)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The semantic model's folder for the tests that run it: `PCD_MODEL_DIR`, or the one
/// `cargo xtask fetch-model` installs in the repository's `.cache`. `None` (said on stderr) when
/// it is not installed, so such a test skips; but when `PCD_REQUIRE_MODEL` is set (as `cargo xtask
/// ci` sets it) its absence fails the test.
#[allow(clippy::print_stderr)] // says why the test is skipped
pub fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PCD_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".cache/models/all-minilm-l6-v2"));
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("PCD_REQUIRE_MODEL").is_none(),
        "PCD_REQUIRE_MODEL is set but no model is installed at {}: run `cargo xtask fetch-model`",
        dir.display()
    );
    eprintln!(
        "note: no semantic model at {}; skipped (run `cargo xtask fetch-model` to test it)",
        dir.display()
    );
    None
}
