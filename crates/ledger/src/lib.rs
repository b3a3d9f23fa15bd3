//! The event-sourced branch ledger of pi-context-decisions.
//!
//! Every decision about which tools the model may see is a [`Round`], recorded on the session
//! branch as one or more non-context custom entries (`customType: "context-decisions-tools"`,
//! format version 1, at most 1000 names per list, each part carrying the round's SHA-256
//! digest). A branch's state ([`BranchState`]: what is available, what was considered, where the
//! first prompt is, the mode history, cached scores) is a pure fold over the branch's entries,
//! root to leaf, so `/tree`, fork, resume and `/reload` follow it. Availability only grows.
//!
//! - The pure core, for the picker, the gate and the facade: [`Round`] (the event),
//!   [`encode_round`] (the `data` of each custom entry to append), [`fold`] / [`Folder`] (a
//!   branch's entries to [`BranchState`] and audit findings) and [`BranchState::apply_round`] for
//!   the live path.
//! - With the `io` feature: `SessionFile` reads Pi session files (streaming, a 32-byte index per
//!   line, lines over 1 MiB never decoded whole) and `Mirror` copies them into SQLite (WAL,
//!   idempotent, incremental, transactional). `cargo xtask replay` and `cargo xtask mirror` use
//!   them for audits.
//!
//! The format is documented in `docs/ledger-format.md`.
//!
//! ```
//! use pcd_ledger::{encode_round, fold, Basis, Boundary, Round, CUSTOM_TYPE};
//! use pcd_model::{GroupKey, Mode};
//! use serde_json::json;
//!
//! let mut round = Round::new("r1", Mode::Tools, Boundary::Prompt, Basis::Scored);
//! round.tools.push("web_fetch".into());
//! round.allowlisted_groups.push(GroupKey::for_mcp_server("dev-radius"));
//!
//! // What the host appends, one custom entry per part.
//! let branch: Vec<_> = encode_round(&round)
//!     .unwrap()
//!     .into_iter()
//!     .enumerate()
//!     .map(|(i, data)| json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data,
//!                             "id": format!("e{i}"), "parentId": null}))
//!     .collect();
//!
//! let (state, findings) = fold(&branch);
//! assert!(findings.is_empty());
//! assert!(state.is_tool_available("web_fetch"));
//! assert!(state.is_group_available(&GroupKey::for_mcp_server("dev_radius")));
//! assert!(!state.is_tool_available("bar_tool"));
//! ```
//!
//! The digest detects torn and hand-edited rounds. It is a checksum, not a MAC: it does not stop
//! another extension in the same process from appending a valid round, nor someone who edits a
//! round and computes its digest again (both out of scope, see `docs/ledger-format.md`).
//!
//! **Architecture invariant:** the core (events, codec, fold) is pure: no I/O, no clock, no
//! environment, and no description, schema, argument, result, path, URL or secret ever enters an
//! entry. Session files and SQLite live behind the `io` feature.

mod codec;
mod event;
mod fold;
#[cfg(feature = "sqlite")]
mod mirror;
#[cfg(feature = "io")]
mod scan;
#[cfg(feature = "io")]
mod session;

pub use codec::{
    decode_single, encode_round, encode_round_chunked, is_entry_id, is_recordable_name,
    DecodeError, EncodeError, CUSTOM_TYPE, FORMAT_VERSION, MAX_NAMES_PER_CHUNK, MAX_PARTS,
    SCORER_CUSTOM_TYPE,
};
pub use event::{
    inventory_fingerprint, Basis, Boundary, FirstPromptRef, Round, Score, MAX_ENTRY_ID_BYTES,
    MAX_FINGERPRINT_CHARS, MAX_NAME_CHARS, MAX_ROUND_ID_BYTES,
};
pub use fold::{fold, BranchState, FirstPrompt, Folder, ModeChange, RoundSummary};
#[cfg(feature = "sqlite")]
pub use mirror::{Mirror, MirrorError, MirrorReport, DEFAULT_BUSY_TIMEOUT, MIRROR_SCHEMA_VERSION};
#[cfg(feature = "io")]
pub use scan::{branch_entries, EntryType, Head, LineScanner, MAX_DECODED_LINE_BYTES};
#[cfg(feature = "io")]
pub use session::{
    BranchReplay, EntryPos, LineProblem, LineProblemCode, LineReader, ScannedLine, SessionError,
    SessionFile, SessionHeader, MAX_SESSION_FILE_BYTES,
};

#[cfg(test)]
mod tests;
