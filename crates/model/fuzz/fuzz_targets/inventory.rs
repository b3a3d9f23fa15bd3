//! Fuzzes the `getAllTools()` reader and classification: never a panic; every accepted tool has
//! a bounded name without control characters; every group key is canonical and bounded; labels
//! are bounded and safe to print.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcd_model::{parse_inventory, Classifier, GroupKey, MAX_INVENTORY_TOOL_NAME_CHARS, MAX_LABEL_CHARS};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(inventory) = parse_inventory(text) else { return };
    let (classes, _) = Classifier::default().classify_all(&inventory.tools);
    for (tool, class) in inventory.tools.iter().zip(&classes) {
        assert!(!tool.name.is_empty());
        assert!(tool.name.chars().count() <= MAX_INVENTORY_TOOL_NAME_CHARS);
        assert!(!tool.name.chars().any(char::is_control));
        if let Some(group) = &class.group {
            assert_eq!(GroupKey::from_canonical(group.key.as_str()).as_ref(), Some(&group.key));
            assert!(group.label.chars().count() <= MAX_LABEL_CHARS);
            assert!(!group.label.chars().any(char::is_control));
        }
    }
});
