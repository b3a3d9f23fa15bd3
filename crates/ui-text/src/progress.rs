//! The progress texts: Pi's working row while a round is in flight, and the inline state the
//! editors show while an idle-time ranking runs (nothing is streaming then, so the working row
//! cannot be used).

/// The label of Pi's working row from the first in-flight round until the last one settles,
/// including a lazy score triggered by a tool call. Pi draws its own spinner next to it.
pub const DECIDING_CONTEXT: &str = "Deciding Context";

/// Pi's footer status while tool filtering is on: how many of the external tools Pi has
/// registered are available on this branch now (for example `tools 13/23`).
pub fn tools_status(available: usize, external: usize) -> String {
    format!("tools {available}/{external}")
}

/// The inline state an allowlist editor shows while the relevance ranking it asked for runs.
pub const RANKING: &str = "ranking…";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_texts() {
        insta::assert_snapshot!(format!(
            "working row: {DECIDING_CONTEXT}\neditor: {RANKING}\nfooter: {}",
            tools_status(13, 23)
        ));
    }
}
