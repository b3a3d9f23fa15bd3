//! Developer and audit automation, run as `cargo xtask NAME`.
//!
//! - `cargo xtask ci`: what CI runs (`.ci/run`): `cargo fmt --check`, clippy with `-D warnings`
//!   on every target, and every test of the workspace.

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        _ => {
            eprintln!("usage: cargo xtask ci");
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
        &["test", "--workspace", "--locked"],
    ];
    for step in steps {
        if !cargo(step) {
            eprintln!("xtask: ci failed at: cargo {}", step.join(" "));
            return ExitCode::FAILURE;
        }
    }
    eprintln!("xtask: ci passed");
    ExitCode::SUCCESS
}
