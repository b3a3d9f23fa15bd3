//! The event-sourced branch ledger: `context-decisions-tools` entries, their chunked codec, the
//! fold to branch state, Pi session files and the SQLite mirror.
//!
//! Not built yet (issue: ledger).
//!
//! **Architecture invariant:** the core (events, codec, fold) is pure; session files and SQLite
//! live behind the `io` feature.
