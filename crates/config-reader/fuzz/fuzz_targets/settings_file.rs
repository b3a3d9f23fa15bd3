//! Fuzzes the settings and project allowlist readers: never a panic, and every allowlist entry
//! that comes out passes the allowlist rules.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcd_config_reader::store::{parse_global_settings, parse_project_allowlist};
use pcd_model::{parse_group_entry, parse_tool_entry};

fuzz_target!(|data: &[u8]| {
    if let Ok((settings, _)) = parse_global_settings(data) {
        for t in &settings.tools.always_allowed_tools {
            assert!(parse_tool_entry(t.as_str()).is_ok());
        }
    }
    if let Ok((list, _)) = parse_project_allowlist(data) {
        for t in &list.tools {
            assert!(parse_tool_entry(t.as_str()).is_ok());
        }
        for g in &list.groups {
            assert!(parse_group_entry(g.as_str()).is_ok());
        }
    }
});
