//! The napi-rs addon that exposes the pi-context-decisions core to Node, for the Pi extension.
//!
//! Built with cargo alone (`cargo build -p pcd-node --release`, then the shared library is copied
//! to `pcd_node.node` by `bindings/node/build.sh`); nothing prebuilt is downloaded. It is a thin
//! layer: JSON in, JSON out, no policy and no user-visible sentence of its own.
//!
//! So far it exposes the addon's version and the `groups` classification of an inventory; the
//! facade `Session` (events in, effects out) comes with the facade issue.
//!
//! **Architecture invariant:** no policy decision and no user-facing text here; every verdict,
//! effect and sentence comes from the Rust crates below.

use napi::bindgen_prelude::*;
use napi_derive::napi;

/// The addon's version (the workspace version), so the extension can check what it loaded.
#[napi]
pub fn addon_version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// Classifies a `getAllTools()` JSON array (as text) and returns the `groups --json` rows as
/// JSON text. Invalid input throws an `Error` naming what is wrong (never a value from it).
#[napi]
pub fn classify_groups(tools_json: String) -> Result<String> {
    let inventory =
        context_decisions::inventory::parse_inventory_text(&tools_json, "getAllTools()")
            .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
    let rows = context_decisions::groups::rows(&inventory);
    Ok(context_decisions::groups::rows_json(&rows).to_string())
}
