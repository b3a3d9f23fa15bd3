//! Lazy scoring on first call: one request per candidate, shared by parallel calls.

use std::collections::HashMap;

/// Identifies one lazy score request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId(pub u64);

/// Where a candidate's lazy score stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LazyStatus {
    /// A request is in flight; every call to the candidate waits for it.
    InFlight(RequestId),
    /// The request failed, was cancelled or was superseded: calls are blocked until the next
    /// boundary clears this.
    Failed,
}

/// The lazy score requests of a session: a candidate (tool name or group key) nobody has scored
/// yet gets exactly one request, however many calls wait on it.
#[derive(Debug, Default)]
pub struct LazyScores {
    status: HashMap<Box<str>, LazyStatus>,
    next: u64,
}

impl LazyScores {
    /// The candidate's status, if a request was ever made for it since the last boundary.
    pub fn status(&self, candidate: &str) -> Option<LazyStatus> {
        self.status.get(candidate).copied()
    }

    /// Starts a request for the candidate, or joins the one in flight. Returns the request and
    /// whether it is new (the caller then sends it). After a failure, the candidate stays failed.
    pub fn begin(&mut self, candidate: &str) -> Option<(RequestId, bool)> {
        match self.status.get(candidate) {
            Some(LazyStatus::InFlight(id)) => Some((*id, false)),
            Some(LazyStatus::Failed) => None,
            None => {
                self.next += 1;
                let id = RequestId(self.next);
                self.status
                    .insert(candidate.into(), LazyStatus::InFlight(id));
                Some((id, true))
            }
        }
    }

    /// The request settled with a committed result: the ledger now says whether the candidate is
    /// available, so its lazy status is dropped.
    pub fn committed(&mut self, id: RequestId) {
        self.status.retain(|_, s| *s != LazyStatus::InFlight(id));
    }

    /// The request failed, was cancelled or was superseded: every call waiting on it is blocked.
    pub fn failed(&mut self, id: RequestId) {
        for s in self.status.values_mut() {
            if *s == LazyStatus::InFlight(id) {
                *s = LazyStatus::Failed;
            }
        }
    }

    /// A new boundary: failures are forgotten (the boundary may score again); requests in flight
    /// stay.
    pub fn clear_failures(&mut self) {
        self.status.retain(|_, s| *s != LazyStatus::Failed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_calls_share_one_request() {
        let mut lazy = LazyScores::default();
        let (a, new_a) = lazy.begin("web_fetch").unwrap();
        let (b, new_b) = lazy.begin("web_fetch").unwrap();
        assert!(new_a && !new_b);
        assert_eq!(a, b);
        let (c, new_c) = lazy.begin("other").unwrap();
        assert!(new_c && c != a);
        lazy.failed(a);
        assert_eq!(lazy.status("web_fetch"), Some(LazyStatus::Failed));
        assert_eq!(lazy.begin("web_fetch"), None);
        assert_eq!(lazy.status("other"), Some(LazyStatus::InFlight(c)));
        lazy.committed(c);
        assert_eq!(lazy.status("other"), None);
        lazy.clear_failures();
        assert_eq!(lazy.status("web_fetch"), None);
    }
}
