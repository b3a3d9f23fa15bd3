//! The `list`, `gate` and `simulate` subcommands: the extension's views and verdicts over files,
//! through a real [`Session`].

use context_decisions::load::{load_mcp_origins, load_settings};
use context_decisions::mcp_origins::{resolve_agent_dir, AGENT_DIR_ENV};
use context_decisions::session::{
    BranchRead, InventoryRead, Session, SettingsRead, StartEvent, StartReason, ToolCallEvent,
};
use pcd_bounded_read::{read_bounded, Follow};
use pcd_config_reader::PiVersion;
use pcd_ledger::SessionFile;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The largest `simulate` script read: a recording holds the inventory once and then only what
/// changed, so this is the inventory's own bound ([`context_decisions::inventory::MAX_INVENTORY_FILE_BYTES`]).
pub const MAX_SCRIPT_FILE_BYTES: u64 = context_decisions::inventory::MAX_INVENTORY_FILE_BYTES;

/// Where the settings and the session come from, for `list` and `gate`.
#[derive(Debug, clap::Args)]
pub struct SessionArgs {
    /// A JSON array shaped like Pi's getAllTools().
    #[arg(long, value_name = "FILE")]
    pub tools: PathBuf,
    /// A Pi session file (JSONL) whose branch ledger applies [default: none, an empty branch].
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,
    /// The branch's leaf entry id [default: the session file's last entry, as Pi loads it].
    #[arg(long, value_name = "ID", requires = "session")]
    pub leaf: Option<String>,
    /// Pi's agent directory [default: $PI_CODING_AGENT_DIR, else ~/.pi/agent].
    #[arg(long, value_name = "DIR")]
    pub agent_dir: Option<PathBuf>,
    /// The project folder [default: the current one].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Whether the project is trusted (its mcp.json is read only then, and only when the settings
    /// approve the names-only read).
    #[arg(long, value_name = "yes|no", default_value = "no", action = clap::ArgAction::Set, value_parser = crate::origins::parse_trusted)]
    pub trusted: bool,
}

/// `list tools|mcp`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// `tools` (one row per tool) or `mcp` (one row per MCP server and extension).
    #[arg(value_parser = ["tools", "mcp"])]
    pub what: String,
    /// Where the inventory, settings and session come from.
    #[command(flatten)]
    pub from: SessionArgs,
    /// Print one JSON object: the rows with a stable availability code, and the warnings.
    #[arg(long)]
    pub json: bool,
}

/// `gate`.
#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// Where the inventory, settings and session come from.
    #[command(flatten)]
    pub from: SessionArgs,
    /// The call as Pi's `tool_call` event has it: `{"toolName": …, "input": {…}}`.
    #[arg(long, value_name = "JSON")]
    pub call: String,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn agent_dir(given: &Option<PathBuf>) -> Result<PathBuf, String> {
    match given {
        Some(dir) => Ok(dir.clone()),
        None => resolve_agent_dir(
            std::env::var_os(AGENT_DIR_ENV).as_deref(),
            std::env::var_os("HOME").as_deref().map(Path::new),
        )
        .map_err(|e| e.to_string()),
    }
}

fn branch_entries(path: &Path, leaf: Option<&str>) -> Result<Vec<Value>, String> {
    let name = path.display().to_string();
    let error = |e: &dyn std::fmt::Display| pcd_ui_text::session_file_error(&name, e);
    let mut file = SessionFile::open(path).map_err(|e| error(&e))?;
    let branch = file.branch_for(leaf).map_err(|e| error(&e))?;
    file.read_branch(&branch).map_err(|e| error(&e))
}

/// The folder given, or the current one.
pub(crate) fn cwd_or_current(given: &Option<PathBuf>) -> Result<PathBuf, String> {
    match given {
        Some(dir) if !dir.is_dir() => Err(pcd_ui_text::project_folder_error(
            &dir.display().to_string(),
        )),
        Some(dir) => Ok(dir.clone()),
        None => std::env::current_dir()
            .map_err(|e| pcd_ui_text::current_folder_error(&e.kind().to_string())),
    }
}

/// Builds a session over the files, with the inventory as its registry snapshot; returns it and
/// the warnings about the files and the ledger.
fn open_session(args: &SessionArgs) -> Result<(Session, Vec<String>), String> {
    let inventory = context_decisions::inventory::read_inventory_file(&args.tools)
        .map_err(|e| e.to_string())?;
    let agent_dir = agent_dir(&args.agent_dir)?;
    let cwd = cwd_or_current(&args.cwd)?;
    let entries = match &args.session {
        Some(path) => branch_entries(path, args.leaf.as_deref())?,
        None => Vec::new(),
    };
    let filters = entries
        .iter()
        .any(|e| e.get("customType").and_then(Value::as_str) == Some(pcd_ledger::CUSTOM_TYPE));
    let files = load_settings(&agent_dir, &cwd, filters);
    let approved = matches!(&files.settings, SettingsRead::Read(s) if s.tools.read_mcp_config);
    let (origins, origin_warnings) =
        load_mcp_origins(approved, &agent_dir, &cwd, args.trusted, PiVersion::NEWEST);
    let mut warnings = files.warnings;
    if filters && !files.settings_found && matches!(files.settings, SettingsRead::Read(_)) {
        warnings.push(pcd_ui_text::settings_absent_with_ledger());
    }
    warnings.extend(origin_warnings);
    let (mut session, start) = Session::start(StartEvent {
        reason: StartReason::Resume,
        nonce: "cli".into(),
        settings: files.settings,
        project: files.project,
        mcp_origins: origins,
        branch: BranchRead::Entries(entries),
    });
    // What the session says when it starts (a ledger that does not fold) is said here too.
    warnings.extend(crate::simulate::start_warnings(&start));
    session.refresh_inventory(InventoryRead::Tools(inventory.tools));
    Ok((session, warnings))
}

/// Runs `list` and returns what to print.
pub fn list(args: &ListArgs) -> Result<String, String> {
    let (session, warnings) = open_session(&args.from)?;
    let view = context_decisions::views::inventory_view(&session);
    if args.json {
        return Ok(format!("{}\n", list_json(&view, &args.what, &warnings)));
    }
    let text = match args.what.as_str() {
        "mcp" => pcd_ui_text::mcp_list(&view),
        _ => pcd_ui_text::tools_list(&view),
    };
    Ok(pcd_ui_text::with_warnings(text, &warnings))
}

/// A stable code for why a tool is available (or that it is withheld).
fn availability_code(a: pcd_ui_text::Availability) -> Value {
    use pcd_ui_text::Availability as A;
    match a {
        A::Internal => json!({"available": true, "reason": "internal"}),
        A::Allowlisted { scope, list } => json!({"available": true, "reason": "allowlisted",
            "scope": scope.as_str(), "list": match list { pcd_model::RemedyList::Tools => "tools", pcd_model::RemedyList::Groups => "groups" }}),
        A::Round { round, .. } => json!({"available": true, "reason": "round", "round": round}),
        A::Unfiltered => json!({"available": true, "reason": "unfiltered"}),
        A::NotScored(pcd_ui_text::NotScored::NoModel) => {
            json!({"available": true, "reason": "not_scored", "cause": "no_model"})
        }
        A::NotScored(pcd_ui_text::NotScored::FewCandidates {
            candidates,
            minimum,
            ..
        }) => json!({"available": true, "reason": "not_scored",
            "cause": "few_candidates", "candidates": candidates, "minimum": minimum}),
        A::AlreadyRegistered => json!({"available": true, "reason": "already_registered"}),
        A::FilteringOff => json!({"available": true, "reason": "filtering_off"}),
        A::Withheld => json!({"available": false, "reason": "withheld"}),
    }
}

fn list_json(view: &pcd_ui_text::InventoryView, what: &str, warnings: &[String]) -> Value {
    let rows: Vec<Value> = match what {
        "mcp" => {
            let mut groups: Vec<(String, Value)> = Vec::new();
            for row in &view.rows {
                let Some(key) = &row.group else { continue };
                let key = key.as_str().to_owned();
                let available = row.availability.is_available();
                match groups.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, g)) => {
                        g["tools"] = json!(g["tools"].as_u64().unwrap_or(0) + 1);
                        g["available"] = json!(g["available"].as_u64().unwrap_or(0) + u64::from(available));
                    }
                    None => groups.push((key.clone(), json!({
                        "key": key, "label": row.label, "kind": row.kind.as_str(),
                        "tools": 1, "available": u64::from(available),
                    }))),
                }
            }
            groups.into_iter().map(|(_, g)| g).collect()
        }
        _ => view
            .rows
            .iter()
            .map(|r| json!({
                "name": r.name, "kind": r.kind.as_str(), "group": r.group.as_ref().map(|g| g.as_str()),
                "label": r.label, "scope": r.scope.as_str(), "availability": availability_code(r.availability),
            }))
            .collect(),
    };
    json!({
        "filtering": match view.filtering { pcd_ui_text::Filtering::Off => "off".to_owned(), pcd_ui_text::Filtering::On(m) => m.as_str().to_owned() },
        "rows": rows,
        "active_set_changes": view.active_set_changes,
        "warnings": warnings,
    })
}

/// Runs `gate` and returns what to print and whether the call is blocked (the program then exits
/// with status 1). Nothing is written: a tool nobody has scored yet is scored in memory, as the
/// extension would score it at its first call.
pub fn gate(args: &GateArgs) -> Result<(String, bool), String> {
    use pcd_ui_text::{call_error, CallProblem};
    let call: Value =
        serde_json::from_str(&args.call).map_err(|_| call_error(CallProblem::NotJson))?;
    let tool = call
        .get("toolName")
        .and_then(Value::as_str)
        .ok_or_else(|| call_error(CallProblem::NoToolName))?;
    let (mut session, warnings) = open_session(&args.from)?;
    let call = ToolCallEvent::from_input(tool, call.get("input"));
    let mut outcome = session.tool_call(&call);
    if let Some(job) = outcome.pending.take() {
        // An HTTP or Pi model would answer inside Pi; this command calls no model, so the
        // verdict is the one for a model that did not answer.
        let answers = job
            .requests
            .iter()
            .map(|_| Err(pcd_picker::request::ModelError::Unavailable))
            .collect();
        let mut effects = session.decided(job.id, answers, &[]);
        outcome = session.tool_call(&call);
        effects.append(&mut outcome.effects);
        outcome.effects = effects;
    }
    let scored = !outcome.effects.is_empty();
    tracing::info!(
        blocked = outcome.block.is_some(),
        scored_now = scored,
        session = args.from.session.is_some(),
        "gate: verdict"
    );
    // Why an allowed call is allowed: the tool's row in the lists (unknown tools are blocked
    // while filtering is on, so a tool without a row is allowed only because filtering is off).
    let available = context_decisions::views::inventory_view(&session)
        .rows
        .iter()
        .find(|r| r.name == tool)
        .map_or(pcd_ui_text::Availability::FilteringOff, |r| r.availability);
    if args.json {
        let verdict = json!({
            "verdict": if outcome.block.is_some() { "block" } else { "allow" },
            "reason": match &outcome.block {
                Some(reason) => json!(reason),
                None => json!(pcd_ui_text::allow_reason(available)),
            },
            "availability": availability_code(available),
            "scored_now": scored,
            "warnings": warnings,
        });
        return Ok((format!("{verdict}\n"), outcome.block.is_some()));
    }
    let verdict = match outcome.block.as_deref() {
        Some(reason) => Err(reason),
        None => Ok(available),
    };
    let text = pcd_ui_text::gate_verdict(verdict);
    Ok((
        pcd_ui_text::with_warnings(text, &warnings),
        outcome.block.is_some(),
    ))
}

/// Runs `simulate SCRIPT` and returns one JSON line per event, and how the replay compared with
/// the effects the script expects (see [`crate::simulate::check`]).
pub fn simulate(script: &Path) -> Result<(String, (usize, Vec<usize>)), String> {
    use pcd_ui_text::{script_file_error, ScriptFileProblem as P};
    let name = script.display().to_string();
    let bytes = read_bounded(script, MAX_SCRIPT_FILE_BYTES, Follow::Symlinks)
        .map_err(|problem| script_file_error(&name, P::Read(problem)))?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        script_file_error(
            &name,
            P::NotJson {
                line: e.line(),
                column: e.column(),
            },
        )
    })?;
    let lines = crate::simulate::run(&value)
        .map_err(|e| script_file_error(&name, P::Script(&e.to_string())))?;
    let check = crate::simulate::check(&value, &lines);
    Ok((lines.iter().map(|l| format!("{l}\n")).collect(), check))
}
