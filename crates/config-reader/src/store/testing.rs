//! What the store's test modules share: a file's raw JSON and the allowlist changes they save.

use super::{AllowlistChange, ListEdit};
use serde_json::Value;
use std::path::Path;

pub(super) fn raw(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

pub(super) fn tools(add: &[&str], remove: &[&str]) -> AllowlistChange {
    AllowlistChange {
        tools: ListEdit {
            add: add.iter().map(|s| s.to_string()).collect(),
            remove: remove.iter().map(|s| s.to_string()).collect(),
        },
        groups: ListEdit::default(),
    }
}

pub(super) fn groups(add: &[&str], remove: &[&str]) -> AllowlistChange {
    AllowlistChange {
        groups: tools(add, remove).tools,
        tools: ListEdit::default(),
    }
}
