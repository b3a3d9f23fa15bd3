//! What a host may watch of a `Session`: every event it is fed, as data, with the effects it
//! answered. The recording (`crate::record`) is the one observer today; the `Session` calls the
//! trait and never names the recorder, so the recording depends on the session and not the other
//! way round.

use super::{
    Answer, BoundaryEvent, BranchRead, CallOutcome, DecisionJob, Effect, InventoryRead,
    SettingsRead, StartEvent, ToolCallEvent,
};
use pcd_gate::ProjectRead;
use std::sync::{Arc, Mutex};

/// Watches a session's events. Every method receives data only; the observer does its own
/// writing and says through [`SessionObserver::take_failure`] when it stopped.
pub trait SessionObserver: Send + std::fmt::Debug {
    /// A session starts (before its reconcile boundary).
    fn start(&mut self, event: &StartEvent);
    /// The branch moved.
    fn branch_moved(&mut self, branch: &BranchRead);
    /// A boundary, with whether the session asked for the registry, and its effects.
    fn boundary(&mut self, needed: bool, event: &BoundaryEvent, effects: &[Effect]);
    /// A settings or allowlist save, or a read at a prompt.
    fn settings_changed(&mut self, settings: &SettingsRead, project: &ProjectRead);
    /// A `tool_call` (with the registry read for its retry, if any) and its outcome.
    fn tool_call(
        &mut self,
        call: &ToolCallEvent,
        refresh: Option<&InventoryRead>,
        outcome: &CallOutcome,
    );
    /// The answers to a decision job, with Pi's active set then, and the effects.
    fn decided(&mut self, job: u64, answers: &[Answer], active: &[String], effects: &[Effect]);
    /// `/decisions test` and what it answered at once, or its job.
    fn decision_test(&mut self, result: &Result<String, DecisionJob>);
    /// The answers to a `/decisions test` job and the sentence reported.
    fn test_decided(&mut self, job: u64, answers: &[Answer], text: &str);
    /// A registry read outside a boundary (`/decisions tools list`).
    fn refresh_inventory(&mut self, inventory: &InventoryRead);
    /// Whether the observer failed since the last call (the session then warns once).
    fn take_failure(&mut self) -> bool;
}

/// An observer a host shares with its sessions (one recording serves every session of a
/// process).
pub type SharedObserver = Arc<Mutex<dyn SessionObserver>>;
