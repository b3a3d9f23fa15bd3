//! The `context-decisions groups` table.

use crate::display::display_safe;
use pcd_model::{Classified, ToolInfo};

/// One row of the groups table: a tool's name, kind, group key, label and scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupsRow {
    /// The tool's name.
    pub name: String,
    /// `internal`, `mcp`, `extension` or `unfiltered`.
    pub kind: &'static str,
    /// The canonical group key, if the tool has a group.
    pub group: Option<String>,
    /// The group's display label, if the tool has a group.
    pub label: Option<String>,
    /// `global` or `project`.
    pub scope: &'static str,
}

impl GroupsRow {
    /// The row for a classified tool.
    pub fn new(tool: &ToolInfo, class: &Classified) -> GroupsRow {
        GroupsRow {
            name: tool.name.clone(),
            kind: class.kind.as_str(),
            group: class.group.as_ref().map(|g| g.key.as_str().to_owned()),
            label: class.group.as_ref().map(|g| g.label.clone()),
            scope: class.scope.as_str(),
        }
    }
}

/// A kind as the table prints it: the built-in tools are "built-in", and a tool without a group
/// is "no group" (tools mode still scores it; only group mode leaves it unfiltered).
fn kind_words(kind: &str) -> &str {
    match kind {
        "internal" => "built-in",
        "unfiltered" => "no group",
        other => other,
    }
}

/// The rows as an aligned text table with a header and a one-line summary.
pub fn groups_table(rows: &[GroupsRow]) -> String {
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            [
                display_safe(&r.name),
                kind_words(r.kind).to_owned(),
                r.group
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), display_safe),
                r.label
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), display_safe),
                r.scope.to_owned(),
            ]
        })
        .collect();
    let header = ["TOOL", "KIND", "GROUP", "LABEL", "SCOPE"].map(str::to_owned);
    let mut widths = header.clone().map(|h| crate::words::width(&h));
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(crate::words::width(cell));
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&cells) {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', w - crate::words::width(cell) + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let count = |kind: &str| rows.iter().filter(|r| r.kind == kind).count();
    let mut groups: Vec<&str> = rows.iter().filter_map(|r| r.group.as_deref()).collect();
    groups.sort_unstable();
    groups.dedup();
    out.push_str(&format!(
        "\n{} tools: {} built-in, {} MCP, {} extension, {} without a group; {} groups.\n",
        rows.len(),
        count("internal"),
        count("mcp"),
        count("extension"),
        count("unfiltered"),
        groups.len()
    ));
    out
}
