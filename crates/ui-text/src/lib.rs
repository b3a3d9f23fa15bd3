//! Every sentence a person reads, and the pure model of the allowlist editor.
//!
//! So far this crate renders the `context-decisions groups` table; the blocked-call reason, the
//! availability notice, the lists, the settings texts, the warnings and the allowlist editor come
//! with the ui-text issue.
//!
//! **Architecture invariant:** the only crate with user-facing sentences; it does no I/O and
//! depends on `model` alone. Nothing it renders contains a path, URL, schema or configuration
//! value: it is only ever handed names, keys, labels and codes.
//!
//! ```
//! use pcd_model::{Classifier, ToolInfo};
//! use pcd_ui_text::{groups_table, GroupsRow};
//!
//! let tool = ToolInfo::new("ask", "", None);
//! let class = Classifier::default().classify(&tool);
//! let text = groups_table(&[GroupsRow::new(&tool, &class)]);
//! assert!(text.contains("unfiltered"));
//! ```

mod display;
mod groups;

pub use display::display_safe;
pub use groups::{groups_table, GroupsRow};
