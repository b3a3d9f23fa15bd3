//! The `context-decisions` command-line program over the facade: `pick` (one prompt's decision),
//! `list` and `gate` (a session's views and verdicts), `simulate` (a scripted or recorded Pi
//! session replayed through a real `Session`), `groups` and `mcp-origins`; `eval` is the
//! evaluation crate's (`pcd-eval`), which this program calls.
//!
//! **Architecture invariant:** a host of the facade like the binding: it parses flags, reads the
//! files a command names and prints what ui-text returns; it holds no policy of its own.

pub mod commands;
pub mod origins;
pub mod pick;
pub mod simulate;
