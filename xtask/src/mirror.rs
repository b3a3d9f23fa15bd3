//! `cargo xtask mirror SESSION.jsonl|FOLDER… --sqlite DB`: mirrors session files into SQLite
//! (new lines only; each file in its own transaction).
//!
//! Exit status: 0 when every file was mirrored, 2 when one could not be read or written.

use crate::sessions::{display_name, session_files};
use pcd_ledger::Mirror;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask mirror SESSION.jsonl|FOLDER... --sqlite DB";

/// Runs the command.
pub fn run(args: &[String]) -> ExitCode {
    let mut paths = Vec::new();
    let mut db = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--sqlite" => match it.next() {
                Some(p) => db = Some(PathBuf::from(p)),
                None => return usage("--sqlite needs a file"),
            },
            flag if flag.starts_with("--") => return usage("unknown option"),
            _ => paths.push(PathBuf::from(arg)),
        }
    }
    let Some(db) = db else {
        return usage("--sqlite DB is needed");
    };
    if paths.is_empty() {
        return usage("at least one session file or folder is needed");
    }
    let mut mirror = match Mirror::open(&db) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("xtask mirror: cannot open the mirror: {e}");
            return ExitCode::from(2);
        }
    };
    let mut failed = false;
    for path in paths {
        let files = match session_files(&path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("xtask mirror: cannot read a session path: {}", e.kind());
                failed = true;
                continue;
            }
        };
        for file in files {
            let name = display_name(&file);
            match mirror.mirror_file(&file) {
                Ok(r) => println!(
                    "{name}: session {}: +{} entries, +{} round parts, +{} names ({} bytes read){}",
                    r.session_id,
                    r.entries,
                    r.parts,
                    r.names,
                    r.bytes,
                    if r.restarted {
                        "; the file no longer extended the mirror, so it was mirrored again"
                    } else {
                        ""
                    }
                ),
                Err(e) => {
                    println!("{name}: not mirrored: {e}");
                    failed = true;
                }
            }
        }
    }
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("xtask mirror: {problem}\n{USAGE}");
    ExitCode::from(2)
}
