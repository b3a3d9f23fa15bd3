//! The bounded, names-only `mcp.json` reader, and the extension's settings and allowlist store.
//!
//! Not built yet (issue: config-reader). This crate will read `<agentDir>/mcp.json` and a trusted
//! `<cwd>/.pi/mcp.json` the way Pi's loader does, within the specification's bounds, and return
//! server names, scopes and warning codes only.
//!
//! **Architecture invariant:** nothing read from a configuration but validated server names
//! leaves this crate; it never writes an `mcp.json`, never executes or expands anything.
