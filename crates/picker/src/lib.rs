//! The picker decides which tools or groups become available at a boundary: it forms the
//! candidates (internal, allowlisted and already available tools never are), builds bounded
//! decision requests that carry only names, labels and bounded descriptions, validates answers
//! strictly, and turns scores into a round (threshold, cap, generation) that the facade records
//! in the ledger. It also holds the embedded offline scorer, the default decision model of the
//! command-line program.
//!
//! ```
//! use pcd_picker::embedded::{CandidateText, EmbeddedIndex};
//!
//! let tools = [
//!     (vec!["get_weather_forecast".to_owned()], "Get the weather forecast for a city."),
//!     (vec!["send_email".to_owned()], "Send an email message to a recipient."),
//! ];
//! let index = EmbeddedIndex::build(tools.iter().map(|(names, description)| CandidateText {
//!     names,
//!     label: "",
//!     description,
//! }));
//! let scores = index.scores("What's the weather forecast for Lisbon?");
//! assert!(scores[0] > scores[1]);
//! assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)));
//! ```
//!
//! **Architecture invariant:** no I/O; the decision model is a trait, and time and cancellation
//! come in as arguments.

pub mod cadence;
pub mod candidates;
pub mod embedded;
pub mod related;
pub mod request;
pub mod round;
pub mod semantic;
pub mod text;
mod wide;
