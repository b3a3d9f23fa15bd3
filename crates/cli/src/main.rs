//! The `context-decisions` command-line program.
//!
//! Exit codes: 0 success; 1 `gate` blocked the call, or `simulate --check` found a replay that
//! differs from the recording or nothing to compare; 2 bad input (a file that cannot be read or is not what was
//! expected, or bad arguments).

use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Decide which tools the Pi coding agent's model may see and call: try a prompt on an inventory
/// (pick), measure the picker on labelled sets (eval), and read a session's decisions (list,
/// gate, simulate).
#[derive(Parser)]
#[command(name = "context-decisions", version)]
struct Cli {
    /// Log to stderr: -v decisions (counts and codes only), -vv details, -vvv everything.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
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
    /// List the MCP servers the mcp.json files define and where (names only). Running it approves
    /// the read.
    McpOrigins {
        /// Pi's agent directory [default: $PI_CODING_AGENT_DIR, else ~/.pi/agent].
        #[arg(long, value_name = "DIR")]
        agent_dir: Option<PathBuf>,
        /// The project folder whose .pi/mcp.json is read when trusted [default: the current one].
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Whether the project is trusted (only then is its mcp.json read).
        #[arg(long, value_name = "yes|no", default_value = "no", action = clap::ArgAction::Set, value_parser = pcd_cli::origins::parse_trusted)]
        trusted: bool,
        /// The Pi version whose loader to mirror [default: the newest known].
        #[arg(long, value_name = "V", value_parser = |v: &str| context_decisions::mcp_origins::PiVersion::parse(v).map_err(|e| e.to_string()))]
        pi_version: Option<context_decisions::mcp_origins::PiVersion>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Measure the picker's ranking and selection on a labelled set, next to Pi's tool_search.
    Eval(pcd_eval::EvalArgs),
    /// Show what the picker would make available for one prompt, and what it would withhold.
    Pick(pcd_cli::pick::PickArgs),
    /// The `/decisions tools list` or `/decisions mcp list` view over an inventory, the settings
    /// and allowlists, and a session's ledger.
    List(pcd_cli::commands::ListArgs),
    /// The verdict and reason for one tool call on a session's branch.
    Gate(pcd_cli::commands::GateArgs),
    /// Run a scripted Pi session through a real Session and print every effect (JSON lines).
    /// A session recorded inside Pi (PI_CONTEXT_DECISIONS_RECORD=FILE) is such a script.
    Simulate {
        /// The script (JSON; see the simulate module's documentation).
        script: PathBuf,
        /// Compare the replayed effects with those the script expects (a recording's) and exit
        /// with 1 when they differ.
        #[arg(long)]
        check: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.verbose > 0 {
        let level = match cli.verbose {
            1 => tracing::Level::INFO,
            2 => tracing::Level::DEBUG,
            _ => tracing::Level::TRACE,
        };
        tracing_subscriber::fmt()
            .with_max_level(level)
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_target(false)
            .without_time()
            .init();
    }
    match run(cli) {
        Ok(code) => code,
        Err(message) => {
            let _ = std::io::stderr().write_all(pcd_ui_text::program_error(&message).as_bytes());
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
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
            out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::McpOrigins {
            agent_dir,
            cwd,
            trusted,
            pi_version,
            json,
        } => {
            use context_decisions::mcp_origins as mo;
            let agent_dir = match agent_dir {
                Some(dir) => dir,
                None => mo::resolve_agent_dir(
                    std::env::var_os(mo::AGENT_DIR_ENV).as_deref(),
                    std::env::var_os("HOME")
                        .as_deref()
                        .map(std::path::Path::new),
                )
                .map_err(|e| e.to_string())?,
            };
            let cwd = match cwd {
                Some(dir) => dir,
                None => std::env::current_dir()
                    .map_err(|e| pcd_ui_text::current_folder_error(&e.kind().to_string()))?,
            };
            let origins =
                mo::read_mcp_origins(&agent_dir, &cwd, trusted, pi_version.unwrap_or_default());
            let text = if json {
                format!("{}\n", pcd_cli::origins::origins_json(&origins))
            } else {
                let global = agent_dir.join("mcp.json");
                let project = cwd.join(".pi").join("mcp.json");
                pcd_cli::origins::origins_text_for(
                    &origins,
                    &global,
                    trusted.then_some(project.as_path()),
                )
            };
            out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Eval(args) => {
            let text = pcd_eval::run(&args)?;
            out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Pick(args) => {
            let text = pcd_cli::pick::run(&args)?;
            out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::List(args) => {
            let text = pcd_cli::commands::list(&args)?;
            out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Gate(args) => {
            let (text, blocked) = pcd_cli::commands::gate(&args)?;
            out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
            Ok(if blocked {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Simulate { script, check } => {
            let (text, (checked, differing)) = pcd_cli::commands::simulate(&script)?;
            out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
            if !check {
                return Ok(ExitCode::SUCCESS);
            }
            let report = pcd_ui_text::replay_check(checked, &differing);
            let _ = std::io::stderr().write_all(report.as_bytes());
            // A check that compared nothing did not pass: a script without expectations is
            // not a recording.
            Ok(if differing.is_empty() && checked > 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
    }
}
