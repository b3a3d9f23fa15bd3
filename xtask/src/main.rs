//! Developer and audit automation, run as `cargo xtask NAME`.
//!
//! - `cargo xtask ci`: what CI runs (`.ci/run`): `cargo fmt --check`, clippy with `-D warnings`
//!   on every target, every test of the workspace, and every fuzz target for 20 seconds when a
//!   nightly toolchain is installed (see `fuzz.rs`).
//! - `cargo xtask fuzz [--seconds N] [--quick] [TARGET…]`: every cargo-fuzz target of
//!   `crates/*/fuzz` for N seconds each (see `fuzz.rs`).
//! - `cargo xtask replay SESSION.jsonl|FOLDER [--leaf ID] [--sqlite DB] [--json]`: audit the
//!   ledger of a branch (see `replay.rs`).
//! - `cargo xtask mirror SESSION.jsonl|FOLDER… --sqlite DB`: mirror sessions into SQLite.

use std::process::{Command, ExitCode};

mod fuzz;
mod mirror;
mod replay;
mod sessions;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("replay") => replay::run(&args[1..]),
        Some("mirror") => mirror::run(&args[1..]),
        _ => {
            eprintln!("{}", pcd_ui_text::XTASK_USAGE);
            ExitCode::from(2)
        }
    }
}

fn cargo(args: &[&str]) -> bool {
    eprintln!("xtask: cargo {}", args.join(" "));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    match Command::new(cargo).args(args).status() {
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
        &[
            "build",
            "-p",
            "pcd-node",
            "-p",
            "context-decisions",
            "--locked",
        ],
        &["test", "--workspace", "--locked"],
    ];
    for step in steps {
        if !cargo(step) {
            eprintln!("xtask: ci failed at: cargo {}", step.join(" "));
            return ExitCode::FAILURE;
        }
    }
    // Last: the tests say more about a change, and fuzzing needs what they built no more.
    if !fuzz::ci_step() {
        eprintln!("xtask: ci failed at: the fuzz step");
        return ExitCode::FAILURE;
    }
    eprintln!("xtask: ci passed");
    ExitCode::SUCCESS
}
