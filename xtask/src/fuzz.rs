//! `cargo xtask fuzz [--seconds N] [--quick] [--no-sanitizer] [TARGET…]`: every cargo-fuzz
//! target of every `crates/*/fuzz` package, for N seconds each (default 60), one after the
//! other.
//!
//! cargo-fuzz needs a nightly toolchain. This uses one that is installed (`rustup toolchain
//! list`) and never fetches one: without it, it says so and exits 0, so CI on a machine without
//! nightly passes. A missing `cargo-fuzz` is installed from crates.io at [`CARGO_FUZZ_VERSION`].
//!
//! Each target runs as `cargo +nightly fuzz run TARGET <scratch> corpus/TARGET --
//! -max_total_time=N`: new inputs go to a scratch folder under `target/fuzz-corpus/`, which
//! later runs start from, and the committed corpus is only read. Per target it prints the
//! executions (libFuzzer's `stat::number_of_executed_units`) and any crash with the file that
//! reproduces it (`cargo +nightly fuzz run TARGET FILE`); the whole output of each run is kept in
//! a log file. Exit status: 0 when every target ran without a crash (or nothing could run for
//! want of a nightly toolchain), 1 when one crashed or did not build, 2 on a usage error.
//!
//! A target may carry libFuzzer flags of its own in `fuzz_targets/<target>.flags` (whitespace
//! separated; `#` starts a comment): the structure-aware targets start at full input length
//! (`-len_control=0`), since a plan of a few bytes builds too small a session to be interesting.
//!
//! Builds: by default cargo-fuzz's release build with AddressSanitizer (`target/fuzz/`), for long
//! runs; `--no-sanitizer` leaves the sanitizer out (`target/fuzz-nosan/`), which runs the
//! allocation-heavy `session_events` five times faster: the workspace forbids `unsafe`, so the
//! sanitizer mostly guards dependencies. `--quick` builds the dev profile at `-Copt-level=1` without a
//! sanitizer (`target/fuzz-quick/`): it builds about five times faster than the release build,
//! checks debug assertions (overflow included), and suits the short runs of `cargo xtask ci`;
//! libFuzzer itself is still compiled at `-O2` there (`CXXFLAGS`), since its hooks run on every
//! comparison of the code under test.
//!
//! The progress lines are developer automation, not product text (see ARCHITECTURE.md).

use crate::workspace_root;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The cargo-fuzz release installed when none is found.
pub const CARGO_FUZZ_VERSION: &str = "0.13.2";
/// How long each target runs by default, in seconds.
pub const DEFAULT_SECONDS: u64 = 60;
/// How long each target runs in `cargo xtask ci`, in seconds.
pub const CI_SECONDS: u64 = 20;
/// The longest one input may take before libFuzzer reports a timeout (a hang is a finding).
const INPUT_TIMEOUT_SECONDS: u64 = 30;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Seconds per target.
    pub seconds: u64,
    /// The quick build (see the module documentation).
    pub quick: bool,
    /// AddressSanitizer in the release build (the quick build never has it).
    pub sanitizer: bool,
    /// Only these targets (by target name, or `crate/target`); all when empty.
    pub only: Vec<String>,
}

/// One fuzz target: its package folder and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The `crates/*/fuzz` folder.
    pub package: PathBuf,
    /// The crate folder's name (`ledger` for `crates/ledger/fuzz`), for reports.
    pub crate_name: String,
    /// The `[[bin]]` name.
    pub name: String,
}

impl Target {
    fn label(&self) -> String {
        format!("{}/{}", self.crate_name, self.name)
    }
}

/// What one run gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// Executions, when libFuzzer reported them.
    pub executions: Option<u64>,
    /// The file libFuzzer wrote the crashing input to, when it found one.
    pub crash_file: Option<String>,
    /// libFuzzer's or the panic's first line about what went wrong.
    pub reason: Option<String>,
}

/// How the run ended, for the summary.
enum Outcome {
    Clean(RunReport),
    Crashed(RunReport),
    Failed(String),
}

/// Why fuzzing could not start at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// No nightly toolchain is installed (or rustup is missing).
    NoNightly,
    /// cargo-fuzz is missing and `cargo install` failed.
    NoCargoFuzz,
}

impl Unavailable {
    fn explain(&self) -> String {
        match self {
            Unavailable::NoNightly => "no nightly toolchain is installed (`rustup toolchain list` \
                shows none), and cargo-fuzz needs one; nothing was fuzzed. Install one with \
                `rustup toolchain install nightly` to fuzz."
                .to_owned(),
            Unavailable::NoCargoFuzz => format!(
                "cargo-fuzz is not installed and `cargo install cargo-fuzz --version \
                 {CARGO_FUZZ_VERSION} --locked` failed (is crates.io reachable?); nothing was \
                 fuzzed."
            ),
        }
    }
}

/// Parses `cargo xtask fuzz`'s arguments.
pub fn parse_args(args: &[String]) -> Result<Options, ()> {
    let mut options = Options {
        seconds: DEFAULT_SECONDS,
        quick: false,
        sanitizer: true,
        only: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--seconds" => {
                let n = it.next().and_then(|n| n.parse::<u64>().ok());
                options.seconds = n.filter(|n| *n > 0).ok_or(())?;
            }
            "--quick" => options.quick = true,
            "--no-sanitizer" => options.sanitizer = false,
            flag if flag.starts_with('-') => return Err(()),
            name => options.only.push(name.to_owned()),
        }
    }
    Ok(options)
}

/// `cargo xtask fuzz`.
pub fn run(args: &[String]) -> ExitCode {
    let Ok(options) = parse_args(args) else {
        eprintln!("{}", pcd_ui_text::FUZZ_USAGE);
        return ExitCode::from(2);
    };
    let toolchain = match prepare(false) {
        Ok(t) => t,
        Err(Unavailable::NoNightly) => {
            eprintln!("xtask: fuzz: {}", Unavailable::NoNightly.explain());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("xtask: fuzz: {}", e.explain());
            return ExitCode::FAILURE;
        }
    };
    let targets = match select(&workspace_root(), &options.only) {
        Ok(t) => t,
        Err(unknown) => {
            eprintln!("xtask: fuzz: no fuzz target is named `{unknown}`");
            return ExitCode::from(2);
        }
    };
    if fuzz_all(&toolchain, &targets, &options) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The fuzz step of `cargo xtask ci`: every target for [`CI_SECONDS`] with the quick build when
/// a nightly toolchain and cargo-fuzz are there (or cargo-fuzz installs); otherwise it says why
/// and passes. Returns false when a target crashed or did not build.
pub fn ci_step() -> bool {
    let started = Instant::now();
    let toolchain = match prepare(true) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("xtask: ci: fuzzing skipped: {}", e.explain());
            return true;
        }
    };
    let targets = discover(&workspace_root());
    let options = Options {
        seconds: CI_SECONDS,
        quick: true,
        sanitizer: false,
        only: Vec::new(),
    };
    let ok = fuzz_all(&toolchain, &targets, &options);
    eprintln!(
        "xtask: ci: the fuzz step took {}",
        minutes(started.elapsed())
    );
    ok
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    format!("{} min {:02} s", s / 60, s % 60)
}

/// A nightly toolchain with cargo-fuzz, installing cargo-fuzz when it is missing.
fn prepare(ci: bool) -> Result<String, Unavailable> {
    let toolchain = installed_nightly().ok_or(Unavailable::NoNightly)?;
    let prefix = if ci { "ci" } else { "fuzz" };
    eprintln!("xtask: {prefix}: fuzzing with the {toolchain} toolchain");
    if !has_cargo_fuzz(&toolchain) {
        eprintln!(
            "xtask: {prefix}: cargo-fuzz is missing; installing cargo-fuzz {CARGO_FUZZ_VERSION} \
             from crates.io"
        );
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let installed = Command::new(cargo)
            .args([
                "install",
                "cargo-fuzz",
                "--version",
                &format!("={CARGO_FUZZ_VERSION}"),
                "--locked",
            ])
            .status()
            .is_ok_and(|s| s.success());
        if !installed || !has_cargo_fuzz(&toolchain) {
            return Err(Unavailable::NoCargoFuzz);
        }
    }
    Ok(toolchain)
}

/// The first nightly toolchain `rustup toolchain list` shows, if any.
fn installed_nightly() -> Option<String> {
    let out = Command::new("rustup")
        .args(["toolchain", "list"])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    nightly_from_list(&String::from_utf8_lossy(&out.stdout))
}

/// The first nightly toolchain in `rustup toolchain list`'s output (`nightly-x86_64-… (default)`
/// lines, or a dated `nightly-2026-01-01-…`).
pub fn nightly_from_list(list: &str) -> Option<String> {
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .find(|name| *name == "nightly" || name.starts_with("nightly-"))
        .map(str::to_owned)
}

/// A command run with `toolchain`'s cargo, without the variables the outer `cargo xtask` set
/// (they would make cargo-fuzz's inner cargo the stable one).
fn toolchain_cargo(toolchain: &str) -> Command {
    let mut cmd = Command::new("rustup");
    cmd.args(["run", toolchain, "cargo"]);
    for var in [
        "CARGO",
        "RUSTUP_TOOLCHAIN",
        "RUSTC",
        "RUSTDOC",
        "CARGO_TARGET_DIR",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn has_cargo_fuzz(toolchain: &str) -> bool {
    toolchain_cargo(toolchain)
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Every `crates/*/fuzz` package's targets, in folder order, keeping those `only` names (all
/// when empty). Returns the first name of `only` that matches nothing.
fn select(root: &Path, only: &[String]) -> Result<Vec<Target>, String> {
    let all = discover(root);
    if let Some(unknown) = only
        .iter()
        .find(|n| !all.iter().any(|t| t.name == **n || t.label() == **n))
    {
        return Err(unknown.clone());
    }
    Ok(all
        .into_iter()
        .filter(|t| only.is_empty() || only.iter().any(|n| *n == t.name || *n == t.label()))
        .collect())
}

/// Every target of every `crates/*/fuzz/Cargo.toml`.
pub fn discover(root: &Path) -> Vec<Target> {
    let mut packages: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("fuzz"))
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    packages.sort();
    let mut targets = Vec::new();
    for package in packages {
        let Ok(manifest) = std::fs::read_to_string(package.join("Cargo.toml")) else {
            continue;
        };
        let crate_name = package
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for name in bin_names(&manifest) {
            targets.push(Target {
                package: package.clone(),
                crate_name: crate_name.clone(),
                name,
            });
        }
    }
    targets
}

/// The `name` of every `[[bin]]` table of a fuzz package's manifest, in order.
pub fn bin_names(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
            continue;
        }
        if !in_bin {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim() == "name" {
            names.push(value.trim().trim_matches('"').to_owned());
            in_bin = false;
        }
    }
    names
}

/// Runs every target in turn; prints each result and a summary. True when none failed.
fn fuzz_all(toolchain: &str, targets: &[Target], options: &Options) -> bool {
    let root = workspace_root();
    let (dir, build) = match (options.quick, options.sanitizer) {
        (true, _) => ("fuzz-quick", "quick build"),
        (false, true) => ("fuzz", "release build with AddressSanitizer"),
        (false, false) => ("fuzz-nosan", "release build without a sanitizer"),
    };
    let target_dir = root.join("target").join(dir);
    let logs = target_dir.join("logs");
    let _ = std::fs::create_dir_all(&logs);
    eprintln!(
        "xtask: fuzz: {} targets, {} s each, {build}; logs in {}",
        targets.len(),
        options.seconds,
        logs.display()
    );
    let mut results = Vec::new();
    for target in targets {
        let scratch = root
            .join("target")
            .join("fuzz-corpus")
            .join(&target.crate_name)
            .join(&target.name);
        let _ = std::fs::create_dir_all(&scratch);
        let log = logs.join(format!("{}-{}.log", target.crate_name, target.name));
        eprintln!(
            "xtask: fuzz: {} for {} s (building first if needed)",
            target.label(),
            options.seconds
        );
        let started = Instant::now();
        let outcome = run_target(toolchain, target, &target_dir, &scratch, &log, options);
        let took = started.elapsed();
        eprintln!(
            "xtask: fuzz: {}",
            line(target, &outcome, took, &log, toolchain)
        );
        results.push((target, outcome, took));
    }
    let mut summary = String::from("xtask: fuzz summary:\n");
    let mut ok = true;
    for (target, outcome, took) in &results {
        let (execs, verdict) = match outcome {
            Outcome::Clean(r) => (r.executions, "no crash".to_owned()),
            Outcome::Crashed(r) => {
                ok = false;
                (r.executions, "CRASH".to_owned())
            }
            Outcome::Failed(why) => {
                ok = false;
                (None, format!("FAILED: {why}"))
            }
        };
        let _ = writeln!(
            summary,
            "  {:<32} {:>7} {:>15} executions  {verdict}",
            target.label(),
            minutes(*took),
            execs.map_or("-".to_owned(), thousands)
        );
    }
    eprint!("{summary}");
    ok
}

/// One target's result line.
fn line(target: &Target, outcome: &Outcome, took: Duration, log: &Path, toolchain: &str) -> String {
    match outcome {
        Outcome::Clean(r) => format!(
            "{}: {} executions in {}, no crash",
            target.label(),
            r.executions.map_or("?".to_owned(), thousands),
            minutes(took)
        ),
        Outcome::Crashed(r) => {
            let file = r.crash_file.as_deref().unwrap_or("(no file written)");
            let file = absolute(&target.package, file);
            format!(
                "{}: CRASH after {} executions: {}\n  input: {}\n  reproduce: (cd {} && \
                 cargo +{toolchain} fuzz run {} {})\n  log: {}",
                target.label(),
                r.executions.map_or("?".to_owned(), thousands),
                r.reason.as_deref().unwrap_or("see the log"),
                file,
                target.package.display(),
                target.name,
                file,
                log.display()
            )
        }
        Outcome::Failed(why) => format!(
            "{}: FAILED: {why}\n  log: {}{}",
            target.label(),
            log.display(),
            tail(log, 20)
        ),
    }
}

fn absolute(package: &Path, file: &str) -> String {
    let path = Path::new(file);
    if path.is_absolute() {
        file.to_owned()
    } else {
        package.join(path).display().to_string()
    }
}

/// The last `n` lines of a log, indented, for a failure that left no crash file.
fn tail(log: &Path, n: usize) -> String {
    let text = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for l in &lines[lines.len().saturating_sub(n)..] {
        let _ = write!(out, "\n    {l}");
    }
    out
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The quick build's flags, after what the caller's `RUSTFLAGS` and `CXXFLAGS` already hold: the
/// Rust code at `-Copt-level=1`, and libFuzzer itself (C++ that libfuzzer-sys compiles with the
/// profile's level, 0 in the dev profile) at `-O2`. At `-O0` libFuzzer's own comparison hooks
/// took most of the time: `session_events` ran 54 inputs a second, 185 with this. Line tables
/// only, and no incremental build: a crash's backtrace still names the lines, and the build folder
/// is 1.6 GB smaller (CI once ran out of disk building the fifth target).
fn quick_env(rustflags: &str, cxxflags: &str) -> [(&'static str, String); 3] {
    let after = |before: &str, flag: &str| format!("{before} {flag}").trim().to_owned();
    [
        (
            "RUSTFLAGS",
            after(rustflags, "-Copt-level=1 -Cdebuginfo=line-tables-only"),
        ),
        ("CXXFLAGS", after(cxxflags, "-O2")),
        ("CARGO_INCREMENTAL", "0".to_owned()),
    ]
}

fn run_target(
    toolchain: &str,
    target: &Target,
    target_dir: &Path,
    scratch: &Path,
    log: &Path,
    options: &Options,
) -> Outcome {
    let Ok(log_file) = std::fs::File::create(log) else {
        return Outcome::Failed(format!("cannot create the log file {}", log.display()));
    };
    let Ok(log_err) = log_file.try_clone() else {
        return Outcome::Failed("cannot share the log file".to_owned());
    };
    let mut cmd = toolchain_cargo(toolchain);
    cmd.current_dir(&target.package)
        .args(["fuzz", "run"])
        .arg("--target-dir")
        .arg(target_dir);
    if options.quick {
        cmd.arg("--dev");
        let env = |name: &str| std::env::var(name).unwrap_or_default();
        for (name, value) in quick_env(&env("RUSTFLAGS"), &env("CXXFLAGS")) {
            cmd.env(name, value);
        }
    }
    if options.quick || !options.sanitizer {
        cmd.args(["--sanitizer", "none"]);
    }
    cmd.arg(&target.name).arg(scratch);
    let committed = target.package.join("corpus").join(&target.name);
    if committed.is_dir() {
        cmd.arg(&committed);
    }
    cmd.arg("--").args([
        format!("-max_total_time={}", options.seconds),
        format!("-timeout={INPUT_TIMEOUT_SECONDS}"),
        "-print_final_stats=1".to_owned(),
    ]);
    let flags = target
        .package
        .join("fuzz_targets")
        .join(format!("{}.flags", target.name));
    if let Ok(text) = std::fs::read_to_string(flags) {
        cmd.args(target_flags(&text));
    }
    let status = cmd
        .stdin(Stdio::null())
        .stdout(log_file)
        .stderr(log_err)
        .status();
    let status = match status {
        Ok(s) => s,
        Err(e) => return Outcome::Failed(format!("cannot run rustup: {e}")),
    };
    let text = String::from_utf8_lossy(&std::fs::read(log).unwrap_or_default()).into_owned();
    let report = parse_log(&text);
    if status.success() {
        Outcome::Clean(report)
    } else if report.crash_file.is_some() || report.reason.is_some() {
        Outcome::Crashed(report)
    } else {
        Outcome::Failed(format!(
            "exit status {} without a crash report (a build error?)",
            status.code().map_or("?".to_owned(), |c| c.to_string())
        ))
    }
}

/// The flags of a `<target>.flags` file: whitespace-separated words, `#` to the end of a line a
/// comment.
pub fn target_flags(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(str::split_whitespace)
        .map(str::to_owned)
        .collect()
}

/// What libFuzzer's output says: executions (`stat::number_of_executed_units: N`, else the
/// `#N DONE` or `Done N runs` line), the crash file (`Test unit written to PATH`) and the first
/// line that says what went wrong.
pub fn parse_log(text: &str) -> RunReport {
    let mut report = RunReport {
        executions: None,
        crash_file: None,
        reason: None,
    };
    let mut stat = None;
    let mut done = None;
    let mut last_progress = None;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim_end();
        if let Some(n) = line.strip_prefix("stat::number_of_executed_units:") {
            stat = n.trim().parse().ok();
        } else if let Some(rest) = line.strip_prefix("Done ") {
            if let Some(n) = rest.split_whitespace().next().and_then(|n| n.parse().ok()) {
                done = Some(n);
            }
        } else if let Some(rest) = line.strip_prefix('#') {
            let mut words = rest.split_whitespace();
            if let Some(n) = words.next().and_then(|n| n.parse::<u64>().ok()) {
                if words.next() == Some("DONE") {
                    done = Some(n);
                }
                last_progress = Some(n);
            }
        }
        if let Some(path) = line.split("Test unit written to ").nth(1) {
            report.crash_file = Some(path.trim().to_owned());
        }
        if report.reason.is_none() {
            if line.contains("panicked at") {
                // The panic's message is on the next line.
                let message = lines.get(i + 1).map_or("", |l| l.trim());
                report.reason = Some(format!("{line} {message}").chars().take(300).collect());
            } else if line.starts_with("==") && line.contains("ERROR")
                || line.contains("ERROR: libFuzzer:")
            {
                report.reason = Some(line.chars().take(300).collect());
            }
        }
    }
    report.executions = stat.or(done).or(if report.reason.is_some() {
        last_progress
    } else {
        None
    });
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let args = |a: &[&str]| parse_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            args(&[]),
            Ok(Options {
                seconds: 60,
                quick: false,
                sanitizer: true,
                only: vec![]
            })
        );
        assert_eq!(
            args(&[
                "--seconds",
                "600",
                "session_events",
                "--quick",
                "--no-sanitizer"
            ]),
            Ok(Options {
                seconds: 600,
                quick: true,
                sanitizer: false,
                only: vec!["session_events".into()]
            })
        );
        assert_eq!(args(&["--seconds"]), Err(()));
        assert_eq!(args(&["--seconds", "0"]), Err(()));
        assert_eq!(args(&["--seconds", "x"]), Err(()));
        assert_eq!(args(&["--minutes", "1"]), Err(()));
    }

    #[test]
    fn nightly_toolchains_are_found_in_rustups_list() {
        let list = "stable-x86_64-unknown-linux-gnu (active, default)\n\
                    nightly-x86_64-unknown-linux-gnu\n1.95.0-x86_64-unknown-linux-gnu\n";
        assert_eq!(
            nightly_from_list(list).as_deref(),
            Some("nightly-x86_64-unknown-linux-gnu")
        );
        assert_eq!(
            nightly_from_list("nightly-2026-01-01-x86_64-unknown-linux-gnu (default)\n").as_deref(),
            Some("nightly-2026-01-01-x86_64-unknown-linux-gnu")
        );
        assert_eq!(nightly_from_list("stable-x86_64-unknown-linux-gnu\n"), None);
        assert_eq!(nightly_from_list(""), None);
    }

    #[test]
    fn bins_are_read_from_a_fuzz_manifest() {
        let manifest = "[package]\nname = \"pcd-ledger-fuzz\"\n\n[dependencies]\nname = 1\n\n\
                        [[bin]]\nname = \"entry_decoder\"\npath = \"x.rs\"\n\n[[bin]]\npath = \
                        \"y.rs\"\nname = \"session_reader\"\n\n[workspace]\n";
        assert_eq!(bin_names(manifest), ["entry_decoder", "session_reader"]);
    }

    #[test]
    fn every_fuzz_package_of_the_workspace_is_found() {
        let targets = discover(&workspace_root());
        let labels: Vec<String> = targets.iter().map(Target::label).collect();
        for expected in [
            "context-decisions/session_events",
            "ledger/session_fold",
            "ledger/session_reader",
            "model/inventory",
            "picker/decision_answer",
            "picker/prompt_scores",
            "config-reader/mcp_json",
        ] {
            assert!(labels.iter().any(|l| l == expected), "{labels:?}");
        }
        assert_eq!(
            select(&workspace_root(), &["nope".into()]),
            Err("nope".into())
        );
        assert_eq!(
            select(&workspace_root(), &["ledger/session_fold".into()])
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn the_quick_build_optimises_libfuzzer_and_keeps_the_callers_flags() {
        assert_eq!(
            quick_env("", ""),
            [
                (
                    "RUSTFLAGS",
                    "-Copt-level=1 -Cdebuginfo=line-tables-only".to_owned()
                ),
                ("CXXFLAGS", "-O2".to_owned()),
                ("CARGO_INCREMENTAL", "0".to_owned()),
            ]
        );
        // The caller's flags stay, and ours come last, so they win where both set a level.
        assert_eq!(
            quick_env("-Dwarnings", "-O0 -g"),
            [
                (
                    "RUSTFLAGS",
                    "-Dwarnings -Copt-level=1 -Cdebuginfo=line-tables-only".to_owned()
                ),
                ("CXXFLAGS", "-O0 -g -O2".to_owned()),
                ("CARGO_INCREMENTAL", "0".to_owned()),
            ]
        );
    }

    #[test]
    fn a_targets_own_flags_are_read_without_comments() {
        assert_eq!(
            target_flags("# start long\n-len_control=0  -max_len=8192 # bigger\n\n"),
            ["-len_control=0", "-max_len=8192"]
        );
        assert!(target_flags("").is_empty());
    }

    #[test]
    fn a_clean_run_reports_its_executions() {
        let log = "INFO: Running with entropic power schedule (0xFF, 100).\n\
                   #2\tINITED cov: 10 ft: 10 corp: 1/1b exec/s: 0 rss: 30Mb\n\
                   #31972\tDONE   cov: 2907 ft: 12292 corp: 1073/1313Kb lim: 2121 exec/s: 1522\n\
                   Done 31972 runs in 21 second(s)\n\
                   stat::number_of_executed_units: 31972\n\
                   stat::average_exec_per_sec:     1522\n";
        assert_eq!(
            parse_log(log),
            RunReport {
                executions: Some(31972),
                crash_file: None,
                reason: None
            }
        );
        // Without the final stats, the DONE line.
        assert_eq!(parse_log("#120\tDONE   cov: 1\n").executions, Some(120));
    }

    #[test]
    fn a_crash_reports_its_file_and_reason() {
        let log = "#1024\tNEW    cov: 80 ft: 90\n\
                   thread '<unnamed>' panicked at fuzz_targets/x.rs:9:5:\nboom\n\
                   ==4242== ERROR: libFuzzer: deadly signal\n\
                   artifact_prefix='/w/crates/x/fuzz/artifacts/x/'; Test unit written to \
                   /w/crates/x/fuzz/artifacts/x/crash-0123abcd\n\
                   stat::number_of_executed_units: 1030\n";
        let report = parse_log(log);
        assert_eq!(report.executions, Some(1030));
        assert_eq!(
            report.crash_file.as_deref(),
            Some("/w/crates/x/fuzz/artifacts/x/crash-0123abcd")
        );
        assert_eq!(
            report.reason.as_deref(),
            Some("thread '<unnamed>' panicked at fuzz_targets/x.rs:9:5: boom")
        );
        assert_eq!(thousands(1030), "1,030");
        assert_eq!(thousands(4_647_540), "4,647,540");
        assert_eq!(thousands(7), "7");
    }
}
