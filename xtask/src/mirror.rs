//! `cargo xtask mirror SESSION.jsonl|FOLDER… --sqlite DB`: mirrors session files into SQLite
//! (new lines only; each file in its own transaction).
//!
//! Exit status: 0 when every file was mirrored, 2 when one could not be read or written.

use crate::sessions::{display_name, session_files};
use pcd_ledger::Mirror;
use pcd_ui_text::{Audit, AuditArgProblem as A, MirrorLine};
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs the command.
pub fn run(args: &[String]) -> ExitCode {
    let mut paths = Vec::new();
    let mut db = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--sqlite" => match it.next() {
                Some(p) => db = Some(PathBuf::from(p)),
                None => return usage(A::SqliteNeedsFile),
            },
            flag if flag.starts_with("--") => return usage(A::UnknownOption),
            _ => paths.push(PathBuf::from(arg)),
        }
    }
    let Some(db) = db else {
        return usage(A::NoSqlite);
    };
    if paths.is_empty() {
        return usage(A::NoPaths);
    }
    let mut mirror = match Mirror::open(&db) {
        Ok(m) => m,
        Err(e) => {
            eprint!(
                "{}",
                pcd_ui_text::audit_mirror_unopened(Audit::Mirror, &display_name(&db), false, &e)
            );
            return ExitCode::from(2);
        }
    };
    let mut failed = false;
    for path in paths {
        let files = match session_files(&path) {
            Ok(f) => f,
            Err(e) => {
                eprint!(
                    "{}",
                    pcd_ui_text::audit_path_unreadable(Audit::Mirror, &e.kind().to_string())
                );
                failed = true;
                continue;
            }
        };
        for file in files {
            let name = display_name(&file);
            let line = match mirror.mirror_file(&file) {
                Ok(r) => pcd_ui_text::mirror_line(
                    &name,
                    Ok(&MirrorLine {
                        session: r.session_id,
                        entries: r.entries,
                        parts: r.parts,
                        names: r.names,
                        bytes: r.bytes,
                        restarted: r.restarted,
                    }),
                ),
                Err(e) => {
                    failed = true;
                    pcd_ui_text::mirror_line(&name, Err(&e))
                }
            };
            print!("{line}");
        }
    }
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

fn usage(problem: A) -> ExitCode {
    eprint!("{}", pcd_ui_text::audit_usage(Audit::Mirror, problem));
    ExitCode::from(2)
}
