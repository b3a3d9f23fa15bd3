//! Fuzzes the names-only mcp.json reader: the input is split into a global and a project file,
//! read as Pi 1.3 and 1.6 would. Nothing but validated names may come out, and never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcd_config_reader::{evaluate, McpFileInput, PiVersion};

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fuzz_target!(|data: &[u8]| {
    // The first byte chooses the split point and the trust; the rest is the two files.
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let split = if rest.is_empty() {
        0
    } else {
        usize::from(head) * rest.len() / 256
    };
    let (global, project) = rest.split_at(split);
    for version in [PiVersion::new(1, 3, 0), PiVersion::NEWEST] {
        let origins = evaluate(
            McpFileInput::Bytes(global),
            (head & 1 == 1).then_some(McpFileInput::Bytes(project)),
            version,
        );
        for s in origins.servers() {
            assert!(valid_name(s.name().as_str()));
            assert!(s.namespace().as_str().starts_with("mcp__"));
        }
        for w in origins.warnings() {
            assert!(w.server.as_deref().is_none_or(valid_name));
        }
    }
});
