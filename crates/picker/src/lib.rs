//! Candidates, cadence, decision requests and answers, the embedded scorer, and rounds.
//!
//! Not built yet (issue: picker).
//!
//! **Architecture invariant:** no I/O; the decision model is a trait, and time and cancellation
//! come in as arguments.
