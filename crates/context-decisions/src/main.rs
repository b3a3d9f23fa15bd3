//! The `context-decisions` command-line program.
//!
//! Exit codes: 0 success; 2 bad input (a file that cannot be read or is not what was expected,
//! or bad arguments).

use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Decide which tools the Pi coding agent's model may see and call.
#[derive(Parser)]
#[command(name = "context-decisions", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Classify every tool of an inventory: kind, group key, label and scope.
    Groups {
        /// A JSON array shaped like Pi's getAllTools().
        #[arg(long, value_name = "FILE")]
        tools: PathBuf,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Groups { tools, json } => {
            let inventory = context_decisions::inventory::read_inventory_file(&tools)
                .map_err(|e| e.to_string())?;
            let rows = context_decisions::groups::rows(&inventory);
            let text = if json {
                let mut s =
                    serde_json::to_string_pretty(&context_decisions::groups::rows_json(&rows))
                        .map_err(|e| e.to_string())?;
                s.push('\n');
                s
            } else {
                pcd_ui_text::groups_table(&rows)
            };
            out.write_all(text.as_bytes()).map_err(|e| e.to_string())
        }
    }
}
