//! Workspace-level conformance and end-to-end tests live in `tests/tests/`; this library holds
//! their shared helpers (none yet).
