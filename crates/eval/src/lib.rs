//! The `eval` command: the picker's ranking and selection quality on a labelled set, next to
//! Pi's own `tool_search` ranker (BM25) run on the same data in the same harness.
//!
//! A set is a folder shaped like `eval/everyday`, `eval/bfcl` and `eval/metatool`: `tools.json` (a `getAllTools()` array),
//! `queries.jsonl` (`{"id", "prompt", "relevant_tools"}` a line) and optionally
//! `irrelevance.jsonl` (prompts for which nothing should be exposed). Queries are split in two
//! halves by a stable hash of their id: the `tune` half was used to choose the embedded scorer's
//! weights, the `test` half (the default) is the one to report.
//!
//! A set may say more (the everyday set does), and the shared sets need none of it:
//! - a query's `"needs": [["tool_a", "alt_b"], ["tool_c"]]`: each need is a group of
//!   interchangeable tools, the labelled one first and accepted alternatives after it (a
//!   `relevant_tools` name that no need holds is a need of its own);
//! - a query's or irrelevance prompt's `"topics": ["issues"]`, and a tool's `"topic"`;
//! - an irrelevance prompt's `"kind"`: `"coding"` (about the code in front of the model) or
//!   `"near-miss"` (a tool of the right domain exists, but none that does the job).
//!
//! A need is the unit of relevance: ranking and selection recall count a need found when any of
//! its tools is (in `mcp` mode, any group holding one of them), and every tool of a need is a
//! positive for precision, the Brier score and the reliability table. Any other field of a line
//! or a tool is ignored.

use pcd_model::{DecisionSettings, Mode, Settings};
use pcd_picker::embedded::{Calibration, FieldWeights};
use pcd_ui_text::NumberListProblem;
use serde_json::json;

mod metrics;
pub mod peer;
mod report;
mod selection;
pub mod sessions;
mod set;

pub use metrics::*;
pub use report::*;
pub use selection::*;
pub use set::*;

fn parse_list<const N: usize>(text: &str, what: &str) -> Result<[f64; N], String> {
    let values: Vec<f64> = text
        .split(',')
        .enumerate()
        .map(|(i, p)| {
            p.trim().parse::<f64>().map_err(|_| {
                pcd_ui_text::number_list_error(what, NumberListProblem::NotANumber(i + 1))
            })
        })
        .collect::<Result<_, _>>()?;
    values
        .try_into()
        .map_err(|_| pcd_ui_text::number_list_error(what, NumberListProblem::Count(N)))
}

/// The `eval` command's arguments.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// A folder with tools.json, queries.jsonl and optionally irrelevance.jsonl.
    #[arg(long, value_name = "DIR")]
    pub set: std::path::PathBuf,
    /// tools: every external tool is a candidate; mcp: every group is [default: tools.mode of
    /// the settings with --agent-dir, else tools].
    #[arg(long, value_parser = ["tools", "mcp"])]
    pub mode: Option<String>,
    /// Which half of the queries (split by a stable hash of their id).
    #[arg(long, value_enum, default_value = "test")]
    pub split: Split,
    /// Evaluate at most N queries (and N irrelevance prompts).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Read the threshold, caps and mode from the settings in this Pi agent directory
    /// (DIR/pi-context-decisions/settings.json) [default: the built-in defaults].
    #[arg(long, value_name = "DIR")]
    pub agent_dir: Option<std::path::PathBuf>,
    /// The threshold and caps, each overriding the settings.
    #[command(flatten)]
    pub selection: crate::SelectionFlags,
    /// Also print the selection at each threshold from 0.05 to 0.95 (the prompts are scored
    /// once).
    #[arg(long)]
    pub sweep: bool,
    /// Draw the sweep's recall, needs met and exposure against the threshold into this SVG file
    /// (implies --sweep).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<std::path::PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Score with the lexical scorer alone, even where the semantic model is installed.
    #[arg(long)]
    pub lexical: bool,
    /// The semantic model's folder [default: $PCD_MODEL_DIR, else
    /// AGENT_DIR/pi-context-decisions/models/all-minilm-l6-v2, else the repository's
    /// .cache/models/all-minilm-l6-v2 (what `cargo xtask fetch-model` installs)].
    #[arg(long, value_name = "DIR")]
    pub model_dir: Option<std::path::PathBuf>,
    /// Tuning only: name,label,description,k1,b,related,name-coverage field weights.
    #[arg(long, hide = true)]
    pub weights: Option<String>,
    /// Tuning only: bias,coverage,strength,unknown calibration.
    #[arg(long, hide = true)]
    pub calibration: Option<String>,
}

/// Runs `eval` and returns what to print; the progress bar goes to stderr only on a terminal.
pub fn run(args: &EvalArgs) -> Result<String, String> {
    use std::io::{IsTerminal, Write};
    let set = EvalSet::load(&args.set).map_err(|e| e.to_string())?;
    tracing::info!(
        tools = set.tools.len(),
        queries = set.queries.len(),
        irrelevance = set.irrelevance.len(),
        "eval: set loaded"
    );
    let mut weights = FieldWeights::default();
    if let Some(w) = &args.weights {
        let [name, label, description, k1, b, related, name_coverage] =
            parse_list::<7>(w, "--weights")?;
        weights = FieldWeights {
            related,
            name_coverage,
            name,
            label,
            description,
            k1,
            b,
        };
    }
    let mut calibration = Calibration::default();
    if let Some(c) = &args.calibration {
        calibration =
            Calibration::from_weights(parse_list::<{ Calibration::WEIGHTS }>(c, "--calibration")?);
    }
    // The built-in defaults, unless the person names an agent directory to read.
    let (mut settings, mut warnings) = match &args.agent_dir {
        Some(dir) => {
            let global = context_decisions::load::load_global_settings(dir, false);
            let settings = match global.value {
                context_decisions::session::SettingsRead::Read(s) => s,
                context_decisions::session::SettingsRead::Unreadable => Settings::default(),
            };
            (settings, global.warnings)
        }
        None => (Settings::default(), Vec::new()),
    };
    args.selection.apply(&mut settings.decision);
    let options = EvalOptions {
        mode: args
            .mode
            .as_deref()
            .and_then(Mode::parse)
            .unwrap_or(settings.tools.mode),
        split: args.split,
        limit: args.limit,
        decision: settings.decision,
        weights,
        calibration,
        sweep: args.sweep || args.plot.is_some(),
        semantic: None,
    };
    let mut options = options;
    let mut scorer_reason = String::new();
    if args.lexical {
        scorer_reason = pcd_ui_text::LEXICAL_ASKED.to_owned();
    } else {
        let dirs = context_decisions::semantic::model_dirs(
            args.model_dir.as_deref(),
            args.agent_dir.as_deref(),
            None,
            None,
        );
        match context_decisions::semantic::Semantic::load(&dirs, args.agent_dir.as_deref()) {
            Ok(model) => {
                warnings.extend(model.notes().iter().cloned());
                options.semantic = Some(std::sync::Arc::new(model));
            }
            Err(reason) => scorer_reason = reason,
        }
    }
    let terminal = std::io::stderr().is_terminal();
    let mut last_drawn = 0;
    let mut draw = |done: usize, total: usize| {
        if done < last_drawn {
            last_drawn = 0;
        }
        if !terminal || (done != total && done - last_drawn < 97) {
            return;
        }
        last_drawn = done;
        let _ = write!(
            std::io::stderr(),
            "{}",
            pcd_ui_text::eval_progress(done, total)
        );
    };
    tracing::info!(
        mode = options.mode.as_str(),
        semantic = options.semantic.is_some(),
        "eval: scoring"
    );
    if !scorer_reason.is_empty() {
        tracing::debug!(reason = %scorer_reason, "eval: the semantic signal is not used");
    }
    let started = std::time::Instant::now();
    let mut value = evaluate(&set, &options, &mut draw);
    tracing::info!(ms = started.elapsed().as_millis() as u64, "eval: scored");
    if options.semantic.is_some() {
        // The same prompts with the lexical scorer alone, side by side.
        let lexical_options = EvalOptions {
            semantic: None,
            sweep: false,
            ..options.clone()
        };
        let lexical = evaluate(&set, &lexical_options, &mut draw);
        value["lexical"] = lexical_summary(&lexical);
        // What was embedded goes to the vector cache; a failed save only costs time next run,
        // and is said once, as `pick` and the addon say it.
        if let Some(model) = options.semantic.as_deref() {
            warnings.extend(model.save());
        }
    } else if !scorer_reason.is_empty() {
        value["scorer_reason"] = json!(scorer_reason);
    }
    if let Some(file) = &args.plot {
        let title = format!(
            "{} {} {}",
            args.set.display(),
            options.mode.as_str(),
            value["split"].as_str().unwrap_or_default()
        );
        let threshold = options.decision.threshold;
        let is_default = threshold == DecisionSettings::default().threshold;
        let svg = pcd_ui_text::eval_sweep_svg(&sweep_rows(&value), threshold, is_default, &title);
        // Replaced only when absent or a regular file of this user's: a link, a FIFO (which
        // would block the write forever), a device or a folder there is an error.
        pcd_bounded_read::replace::replace_file(file, svg.as_bytes(), 0o644).map_err(|e| {
            pcd_ui_text::plot_write_error(&file.display().to_string(), &e.to_string())
        })?;
    }
    Ok(if args.json {
        let mut s = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
        s.push('\n');
        s
    } else {
        pcd_ui_text::with_warnings(report(&args.set, &value), &warnings)
    })
}

#[cfg(test)]
mod tests;
