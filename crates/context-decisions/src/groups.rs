//! The `groups` view: every tool with its kind, group key, label and scope.

use pcd_model::{Classifier, Inventory};
use pcd_ui_text::GroupsRow;

/// One row per tool, in inventory order, classified with no MCP config origins (built-in MCP
/// namespaces are then global, the spec's fallback).
pub fn rows(inventory: &Inventory) -> Vec<GroupsRow> {
    let classifier = Classifier::default();
    inventory
        .tools
        .iter()
        .map(|tool| GroupsRow::new(tool, &classifier.classify(tool)))
        .collect()
}

/// The rows as the `--json` array: objects with exactly `kind`, `name`, `group`, `label`, `scope`.
pub fn rows_json(rows: &[GroupsRow]) -> serde_json::Value {
    rows.iter()
        .map(|r| {
            serde_json::json!({
                "kind": r.kind,
                "name": r.name,
                "group": r.group,
                "label": r.label,
                "scope": r.scope,
            })
        })
        .collect()
}
