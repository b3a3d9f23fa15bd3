//! Fuzzes allowlist entries: never a panic; an accepted group entry's key is canonical, and its
//! canonical text is accepted again as the same group; an accepted tool name is 1-128
//! characters without whitespace.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcd_model::{parse_group_entry, parse_tool_entry, GroupKey};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(key) = parse_group_entry(text) {
        assert!(key.as_str().len() <= 69);
        if key.mcp_server_part().is_some() {
            assert_eq!(GroupKey::from_canonical(key.as_str()).as_ref(), Some(&key));
        }
        assert_eq!(parse_group_entry(key.as_str()).ok().as_ref(), Some(&key));
    }
    if let Ok(name) = parse_tool_entry(text) {
        let n = name.as_str().chars().count();
        assert!((1..=128).contains(&n));
        assert!(!name.as_str().chars().any(char::is_whitespace));
    }
});
