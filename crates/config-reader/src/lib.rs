//! The bounded, names-only `mcp.json` reader, and the extension's settings and allowlist store.
//!
//! **The reader** ([`read_mcp_origins`]) tells which MCP servers Pi loads from the global
//! `<agentDir>/mcp.json` and which from a trusted project's `<cwd>/.pi/mcp.json`, so that built-in
//! MCP namespaces get the right allowlist scope. It mirrors the validation and precedence of the
//! Pi version in use ([`PiVersion`]) exactly, and goes beyond Pi where the specification says so:
//! regular files only (the file itself is never followed if it is a symlink), at most 64 KiB and
//! 1000 server entries per file. It learns names, never values: its output ([`McpOrigins`]) holds
//! validated server names, their namespaces, scopes and safe warning codes, nothing else.
//!
//! **The store** ([`store`]) reads and atomically writes the extension's own files: the global
//! settings `<agentDir>/pi-context-decisions/settings.json` and the project allowlist
//! `<cwd>/.pi/pi-context-decisions.json`.
//!
//! **Architecture invariant:** nothing read from an `mcp.json` but validated server names leaves
//! this crate; it never writes an `mcp.json`, never executes, expands or follows anything in it,
//! and reads no environment variable (paths come in as arguments).
//!
//! ```
//! use pcd_config_reader::{evaluate, McpFileInput, PiVersion};
//! use pcd_model::Scope;
//!
//! let global = br#"{"mcpServers": {"dev-radius": {"command": "npx", "env": {"TOKEN": "sk-secret"}},
//!                                    "docs": {"url": "https://docs.example/mcp"}}}"#;
//! let project = br#"{"mcpServers": {"docs": {"url": "https://internal.example/mcp"}}}"#;
//! let origins = evaluate(
//!     McpFileInput::Bytes(global),
//!     Some(McpFileInput::Bytes(project)),
//!     PiVersion::NEWEST,
//! );
//! let found: Vec<_> = origins
//!     .servers()
//!     .iter()
//!     .map(|s| (s.name().as_str(), s.namespace().as_str(), s.scope()))
//!     .collect();
//! assert_eq!(found, [
//!     ("dev-radius", "mcp__dev_radius", Scope::Global),
//!     ("docs", "mcp__docs", Scope::Project),
//! ]);
//! assert!(origins.warnings().is_empty());
//! assert!(!format!("{origins:?}").contains("sk-secret"));
//! ```

mod bounded;
mod json;
mod mcp;
pub mod store;
#[cfg(test)]
mod testdir;
mod validate;
mod version;

pub use mcp::{
    evaluate, read_mcp_origins, McpFileInput, McpOrigins, McpServerOrigin, ServerName,
    MAX_MCP_FILE_BYTES, MAX_MCP_SERVER_ENTRIES,
};
pub use version::{PiVersion, PiVersionError};

#[cfg(test)]
mod vectors;
