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
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--quiet", "-p", package])
        .current_dir(repo())
        .status()
        .expect("cargo runs");
    assert!(status.success(), "`cargo build -p {package}` failed");
}

/// The `context-decisions` program, built for the tests (once per test process).
pub fn program() -> PathBuf {
    static PROGRAM: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            cargo_build("context-decisions");
            let bin = target_dir().join("debug").join("context-decisions");
            assert!(bin.exists(), "no program at {}", bin.display());
            bin
        })
        .clone()
}

/// The addon, built by `cargo build -p pcd-node` (once per test process) and copied to a
/// `.node` file: Node loads addons by that extension, and overwriting a library another Node
/// process has mapped would crash it. The copies live in Cargo's target folder
/// (`tmp/pcd-addon-PID`; with the semantic model a debug addon is about 240 MB), and the copies of
/// test processes that have ended are removed first.
pub fn addon() -> PathBuf {
    static ADDON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ADDON
        .get_or_init(|| {
            cargo_build("pcd-node");
            let lib = target_dir().join("debug").join("libpcd_node.so");
            assert!(lib.exists(), "no addon at {}", lib.display());
            let copies = target_dir().join("tmp");
            remove_ended_copies(&copies);
            let dir = copies.join(format!("pcd-addon-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let copy = dir.join("pcd_node.node");
            std::fs::copy(&lib, &copy).unwrap();
            copy
        })
        .clone()
}

/// Removes the `pcd-addon-PID` folders under `dir` whose process has ended (Linux: no
/// `/proc/PID`; elsewhere nothing is removed).
fn remove_ended_copies(dir: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("pcd-addon-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
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

/// Runs `script` with Node 22 (`node -e`), asserts it succeeded (showing its stderr when not),
/// and returns what it printed.
pub fn node_eval(script: &str) -> Vec<u8> {
    // Without a model folder the addon scores lexically, which is what these scripts expect.
    let out = Command::new(install("node"))
        .env_remove("PCD_MODEL_DIR")
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
