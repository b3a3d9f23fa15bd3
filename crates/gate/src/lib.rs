//! The `tool_call` verdict: allow, block with a code, or pending on a score request.
//!
//! Not built yet (issue: gate).
//!
//! **Architecture invariant:** no I/O and no allocation on the allow path; it returns codes, never
//! sentences.
