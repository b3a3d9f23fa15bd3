//! Every sentence a person (or the model, in the hidden notice) reads from pi-context-decisions,
//! and the pure model of the allowlist editor.
//!
//! The other crates return codes (`BlockCode`, `ConfigWarning`, `SettingsWarning`,
//! `AllowlistError` from `pcd_model`) and names; this crate turns them into text:
//! - [`blocked_reason`]: the reason a blocked tool call returns, naming the exact allowlist
//!   entry and scope that would allow it;
//! - [`availability_notice`]: the hidden names-only notice of what is available indirectly;
//! - [`DECIDING_CONTEXT`] and [`RANKING`]: the progress texts;
//! - [`tools_list`] and [`mcp_list`]: `/decisions tools list` and `/decisions mcp list` (fed
//!   with [`ToolRow`]s, each with its [`Availability`]), and [`list_command_usage`];
//! - [`tools_tab`], [`tools_tab_notes`], [`advanced_tool_limits`]: the Tools tab;
//! - [`config_warning`], [`settings_warning`], [`settings_fallback`], [`allowlist_error`];
//! - [`round_problem`] and [`audit_finding`]: a round that added nothing, a ledger audit;
//! - [`recording_failed`], [`recording_stopped`], [`replay_check`]: session recordings;
//! - [`AllowlistEditor`]: the nested *Always allowed tools* editor and the flat *MCP servers &
//!   extensions* editor, as a pure state machine (keys in, lines of a given width out), with
//!   its relevance order;
//! - [`ToolsTab`]: the `/decisions` Tools tab (switch, mode, cadence, the four editors), and
//!   [`decode_keys`], raw terminal input to keys; [`decisions_status`], the same without a
//!   terminal;
//! - [`groups_table`]: the `context-decisions groups` table; [`pick_report`] and
//!   [`origins_report`]: the `pick` and `mcp-origins` reports; [`eval_report`],
//!   [`eval_progress`] and [`eval_sweep_svg`]: the `eval` report, progress bar and `--plot`;
//! - the program's errors about its arguments and input files ([`program_error`],
//!   [`tools_file_error`], [`script_error`], [`call_error`], …), each naming the file, entry or
//!   field and what was expected, never a value from them;
//! - [`replay_session`], [`mirror_line`] and their usages: the ledger audits `cargo xtask replay`
//!   and `cargo xtask mirror`.
//!
//! **Architecture invariant:** the only crate with user-facing sentences; it does no I/O and
//! depends on `model` alone. Nothing it renders contains a URL, schema or configuration value,
//! nor a path but the one a person gave the program (or a folder walk found) to name a file in
//! an error or a report: it is only ever handed names, keys, labels, codes and positions, and
//! third-party names (and file names) go through [`display_safe`] or `pcd_model::bound_label`
//! before they are shown.
//!
//! ```
//! use pcd_model::{BlockCode, BlockKind, Classifier, Remedy, RemedyList, Scope, ToolInfo};
//! use pcd_ui_text::{blocked_reason, groups_table, GroupsRow};
//!
//! let tool = ToolInfo::new("ask", "", None);
//! let class = Classifier::default().classify(&tool);
//! let text = groups_table(&[GroupsRow::new(&tool, &class)]);
//! assert!(text.contains("no group"));
//!
//! let reason = blocked_reason(&BlockCode {
//!     kind: BlockKind::NotAvailable,
//!     tool: "ask".into(),
//!     server: None,
//!     remedy: Some(Remedy { list: RemedyList::Tools, entry: "ask".into(), scope: Scope::Global }),
//! });
//! assert!(reason.contains("add `ask` to the global *Always allowed tools* list"));
//! ```

mod blocked;
mod commands;
mod display;
mod editor;
mod eval;
mod groups;
mod keys;
mod lists;
mod notice;
mod program;
mod progress;
mod recording;
mod replay;
mod reports;
mod rounds;
mod semantic;
mod settings_tab;
mod tab;
mod view;
mod warnings;
mod words;

pub use blocked::blocked_reason;
pub use commands::{
    check_failed_reason, decision_test, decisions_completions, decisions_status, decisions_unknown,
    decisions_usage, last_round_text, list_command_usage, list_while_off, not_recorded_reason,
    tools_export_failed, tools_exported, DecisionTest, LastRound, ListCommand, ProbeScores,
    DECISIONS_COMMAND_DESCRIPTION, EXPORT_FILE_EXISTS, EXPORT_FILTERING_OFF,
    EXPORT_REGISTRY_UNREADABLE, EXPORT_USAGE, MAX_STATUS_ENTRIES,
};
pub use display::display_safe;
pub use editor::{AllowlistEditor, CursorTarget, EditorKind, EditorOutcome, Key};
pub use eval::{
    eval_progress, eval_report, eval_sweep_svg, EvalBin, EvalCalibration, EvalEveryday,
    EvalNeedGate, EvalReport, EvalScores, EvalSelection, EvalSessions, EvalShare, EvalSweepRow,
    EVAL_PROGRESS_WIDTH,
};
pub use groups::{groups_table, GroupsRow};
pub use keys::decode_keys;
pub use lists::{
    mcp_list, tools_list, Availability, Boundary, Filtering, InventoryView, NotScored, ToolRow,
};
pub use notice::{availability_notice, AvailabilityNotice, NoticeGroup};
pub use program::{
    agent_dir_error, allow_reason, call_error, current_folder_error, endpoint_error,
    eval_read_error, flag_range_error, gate_verdict, http_scorer_needs, number_list_error,
    pick_failed, plot_write_error, program_error, project_folder_error, query_line_error,
    script_error, script_file_error, session_file_error, settings_absent_with_ledger,
    tools_file_error, trusted_error, with_warnings, AgentDirProblem, CallProblem, EndpointProblem,
    NumberListProblem, QueryProblem, ReadProblem, ScriptFileProblem, ScriptProblem,
    ToolsFileProblem,
};
pub use progress::{tools_status, DECIDING_CONTEXT, RANKING};
pub use recording::{recording_failed, recording_stopped, replay_check, RECORDING_IN_USE};
pub use replay::{
    audit_mirror_unopened, audit_path_unreadable, audit_usage, mirror_line, replay_footer,
    replay_mirror_stale, replay_not_mirrored, replay_session, replay_unreadable, Audit,
    AuditArgProblem, MirrorLine, ReplayRound, ReplaySession, DIGEST_NOTE, FUZZ_USAGE, MIRROR_USAGE,
    REPLAY_LIST_LIMIT, REPLAY_USAGE, XTASK_USAGE,
};
pub use reports::{
    no_mcp_servers, origin_warning_sentence, origins_report, pick_report, OriginRow, OriginWarning,
    PickExempt, PickReason, PickReport, PickRow, PickSettingsFile, PickWithheld, PICK_LISTED,
};
pub use rounds::{
    audit_finding, ledger_findings, ledger_untrusted, round_failed_warning, round_problem,
    round_problem_code, RoundProblem,
};
pub use semantic::{
    last_scorer_text, scorer_comparison, scorer_line, scorer_words, semantic_model_missing,
    semantic_model_skipped, semantic_model_unusable, semantic_not_ready, semantic_note,
    semantic_off_warning, vector_cache_not_saved, vector_cache_not_used, ModelFolder,
    ScorerComparisonRow, LEXICAL_ASKED, SEMANTIC_LOADING, SEMANTIC_NOT_BUILT,
    SEMANTIC_PROMPT_FAILED, SEMANTIC_WAIT_MS,
};
pub use settings_tab::{
    advanced_tab, advanced_tab_notes, advanced_tool_limits, cadence_text, mode_text, provider_text,
    tools_tab, tools_tab_notes, SettingId, SettingRow,
};
pub use tab::{DecisionChange, Page, TabOutcome, ToolsChange, ToolsTab};
pub use view::{parse_threshold, Hint, HintAction, PromptKind, PromptView, TabView, ViewRow};
pub use warnings::{
    allowlist_error, config_warning, inventory_warning, settings_fallback, settings_warning,
    FileProblem, FileStep, SettingsFallback, SettingsFile,
};
