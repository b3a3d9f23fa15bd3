//! The `tool_call` verdict of pi-context-decisions: [`Verdict::Allow`], [`Verdict::Block`] with a
//! code, or [`Verdict::Pending`] on a score request for a tool nobody has scored yet.
//!
//! Every call, top-level or nested in a codemode script, goes through [`decide`]. It reads a
//! provenance-classified [`Registry`] snapshot, the [`Grants`] that the allowlists give over that
//! snapshot, the branch's ledger state (any [`BranchView`], normally `pcd_ledger::BranchState`,
//! laid over the registry as a [`BranchIndex`]) and the [`LazyScores`] in flight. Each
//! unreadable source has its own fail-closed rule, written in [`GateContext`]. The verdict is a code; `ui-text` turns it into a sentence.
//!
//! ```
//! use pcd_gate::{decide, BranchIndex, Call, GateContext, Grants, LazyScores, Registry, Verdict};
//! use pcd_ledger::BranchState;
//! use pcd_model::{parse_inventory, Allowlists, BlockKind, Classifier, Mode};
//!
//! let inventory = parse_inventory(r#"[
//!   {"name": "read", "sourceInfo": {"path": "builtin:read", "source": "builtin"}},
//!   {"name": "web_fetch", "sourceInfo": {"path": "/a/ext/web.ts", "source": "auto", "scope": "user"}}
//! ]"#).unwrap();
//! let registry = Registry::build(&inventory.tools, &Classifier::default(), []);
//! let grants = Grants::compute(&registry, &Allowlists::default());
//! let branch = BranchIndex::build(&registry, &BranchState::new());
//! let lazy = LazyScores::default();
//! let mut ctx = GateContext::enabled(Mode::Tools, &registry, &grants, &lazy);
//! ctx.branch = Some(&branch);
//! ctx.scoring = false; // no decision model selected: a tool nobody considered stays available
//!
//! assert_eq!(decide(&ctx, &Call::tool("read")), Verdict::Allow);
//! assert_eq!(decide(&ctx, &Call::tool("web_fetch")), Verdict::Allow);
//! match decide(&ctx, &Call::tool("unknown_tool")) {
//!     Verdict::Block(code) => assert_eq!(code.kind, BlockKind::UnknownTool),
//!     other => panic!("{other:?}"),
//! }
//! ```
//!
//! **Architecture invariant:** no I/O and no allocation on the allow path; it returns codes,
//! never sentences, and never allows an external tool that is neither available on the branch,
//! allowlisted in its scope, nor (only while nothing can be scored) not yet considered.

mod branch;
#[doc(hidden)]
pub mod fixture;
mod lazy;
mod project;
mod registry;
mod verdict;

pub use branch::{BranchIndex, BranchView};
pub use lazy::{LazyScores, LazyStatus, RequestId};
pub use project::{ProjectListCache, ProjectRead};
pub use registry::{Grants, Registry};
pub use verdict::{decide, Call, Candidate, GateContext, ServerArg, Verdict};
