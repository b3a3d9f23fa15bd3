//! The vocabulary every other crate of pi-context-decisions speaks.
//!
//! This crate owns every shared word of the product: what Pi's `getAllTools()` returns
//! ([`ToolInfo`], [`SourceInfo`], [`ToolNamespace`], [`ToolExposure`]), how a tool is classified by
//! its provenance ([`Classifier`], [`ToolKind`]), the canonical group keys (`mcp__…` for MCP
//! servers, `ext__…` for extensions: [`GroupKey`]), allowlist entries ([`parse_tool_entry`],
//! [`parse_group_entry`]), scopes, the settings with their defaults, and the codes the other
//! crates return (config warnings, gate block codes, ledger audit findings, file read problems).
//!
//! **Architecture invariant:** no I/O, no clock, no environment. Canonical keys are derived here
//! and nowhere else.
//!
//! ```
//! use pcd_model::{parse_inventory, Classifier, ToolKind};
//!
//! let inventory = parse_inventory(r#"[
//!   {"name": "read", "description": "Read a file",
//!    "sourceInfo": {"path": "builtin:read", "source": "builtin", "scope": "temporary", "origin": "top-level"}},
//!   {"name": "web_fetch", "description": "Fetch a page",
//!    "sourceInfo": {"path": "/a/npm/node_modules/@acme/pi-web/index.ts", "source": "npm:@acme/pi-web@2.0.0",
//!                   "scope": "user", "origin": "package"}}
//! ]"#).unwrap();
//! let classifier = Classifier::default();
//! let read = classifier.classify(&inventory.tools[0]);
//! assert_eq!(read.kind, ToolKind::Internal);
//! let web = classifier.classify(&inventory.tools[1]);
//! assert_eq!(web.kind, ToolKind::Extension);
//! let group = web.group.unwrap();
//! assert_eq!(group.label, "@acme/pi-web");
//! assert!(group.key.as_str().starts_with("ext__acme_pi_web_"));
//! ```

mod allowlist;
mod classify;
mod codes;
mod extension_name;
pub mod fnv;
mod json_text;
mod key;
mod scope;
mod settings;
mod tool;

pub use allowlist::{
    parse_group_entry, parse_tool_entry, AllowlistError, Allowlists, ScopedAllowlist, ToolName,
    MAX_TOOL_NAME_CHARS,
};
pub use classify::{Classified, Classifier, Group, ToolKind};
pub use codes::{
    AuditFinding, AuditFindingCode, BlockCode, BlockKind, ConfigFile, ConfigWarning,
    ConfigWarningCode, FileReadProblem, FileWriteProblem, FolderProblem, InventoryWarning,
    InventoryWarningCode, Remedy, RemedyList, VectorCacheProblem,
};
pub use extension_name::extension_name;
pub use json_text::lone_surrogates_replaced;
pub use key::{
    bound_label, GroupKey, GroupKind, MAX_GROUP_KEY_CHARS, MAX_GROUP_NAME_CHARS, MAX_LABEL_CHARS,
};
pub use scope::{GroupScope, Scope};
pub use settings::{
    Bounds, Cadence, DecisionProvider, DecisionSettings, FailMode, Mode, ProjectAllowlistFile,
    Settings, SettingsWarning, SettingsWarningCode, ToolsSettings, BATCH_SIZE_BOUNDS,
    CONCURRENCY_BOUNDS, MAX_NEW_GROUPS_BOUNDS, MAX_NEW_TOOLS_BOUNDS, MINIMUM_CANDIDATES_BOUNDS,
    MINIMUM_GROUPS_DEFAULT, MINIMUM_TOOLS_DEFAULT, TIMEOUT_MS_BOUNDS,
};
pub use tool::{
    inventory_from_value, parse_inventory, Inventory, InventoryError, RejectedTool, SourceInfo,
    SourceOrigin, SourceScope, ToolExposure, ToolInfo, ToolNamespace, ToolProblem,
    MAX_DESCRIPTION_BYTES, MAX_INVENTORY_TOOL_NAME_CHARS,
};
