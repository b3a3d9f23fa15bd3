//! The facade of pi-context-decisions: one `Session` per Pi session composing every crate, and
//! the edges every host shares (files, the HTTP decision model, the recording, the dialog).
//! The binding, the `context-decisions` program (`pcd-cli`) and the evaluation (`pcd-eval`) are
//! its hosts; it links no command line, terminal or chart.
//!
//! **Architecture invariant:** the only crate that composes the others; it holds no policy of its
//! own that a lower crate could own, and its I/O (files, HTTP, locks) stays at its edges.
//!
//! ```
//! let inventory = context_decisions::inventory::parse_inventory_text(
//!     r#"[{"name":"read","sourceInfo":{"path":"builtin:read","source":"builtin"}}]"#,
//!     "example.json",
//! ).unwrap();
//! let rows = context_decisions::groups::rows(&inventory);
//! assert_eq!(rows[0].kind, "internal");
//! ```

pub mod groups;
pub mod http_scorer;
pub mod inventory;
pub mod load;
pub mod mcp_origins;
pub mod record;
pub mod semantic;
pub mod session;
pub mod tools_tab;
pub mod views;

/// Reads the embedded scorer's compiled-in table of related words on a background thread, once
/// per process, so that the first prompt of a session does not wait for it (it takes about
/// 12 ms; see `BENCHMARKS.md`). A host calls it when a session starts; without it, the first
/// index reads the table itself.
pub fn warm_up_scorer() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Without a thread the table is read on first use instead; nothing is lost.
        let _ = std::thread::Builder::new()
            .name("pcd-warm-up".into())
            .spawn(pcd_picker::related::RelatedWords::warm);
    });
}

/// What the Node binding uses from the crates below the facade, so the binding depends on this
/// crate alone (its `Cargo.toml` names no other workspace crate).
pub mod binding {
    pub use pcd_config_reader::PiVersion;
    pub use pcd_ledger::{branch_entries, CUSTOM_TYPE};
    pub use pcd_model::parse_inventory;
    pub use pcd_ui_text::{
        check_failed_reason, decisions_completions, decisions_status, decisions_unknown,
        decisions_usage, list_command_usage, not_recorded_reason, ListCommand, DECIDING_CONTEXT,
        DECISIONS_COMMAND_DESCRIPTION, EXPORT_USAGE,
    };
    pub use pcd_ui_text::{
        last_scorer_text, semantic_not_ready, semantic_off_warning, SEMANTIC_LOADING,
        SEMANTIC_PROMPT_FAILED, SEMANTIC_WAIT_MS,
    };
    pub use pcd_ui_text::{tools_export_failed, EXPORT_FILTERING_OFF, EXPORT_REGISTRY_UNREADABLE};
}
