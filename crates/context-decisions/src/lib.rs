//! The facade of pi-context-decisions: one `Session` per Pi session composing every crate (to
//! come with the facade issue), and the library side of the `context-decisions` program.
//!
//! So far it holds the inventory file reader and the `groups` view.
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

pub mod commands;
pub mod eval;
pub mod groups;
pub mod http_scorer;
pub mod inventory;
pub mod load;
pub mod mcp_origins;
pub mod pick;
pub mod record;
pub mod session;
pub mod simulate;
pub mod tools_tab;
pub mod views;
