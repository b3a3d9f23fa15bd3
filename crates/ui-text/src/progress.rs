//! The progress texts: Pi's working row while a round is in flight, and the inline state the
//! editors show while an idle-time ranking runs (nothing is streaming then, so the working row
//! cannot be used).

/// The label of Pi's working row from the first in-flight round until the last one settles,
/// including a lazy score triggered by a tool call. Pi draws its own spinner next to it.
pub const DECIDING_CONTEXT: &str = "Deciding Context";

/// Pi's footer status while tool filtering is on: how many of the external tools Pi has
/// registered are available on this branch now, and, when some are withheld, the estimated
/// tokens their definitions take (`withheld_chars`: names, descriptions and parameter schemas,
/// in bytes, the measure of the lists and of eval's sessions; four to a token), for example
/// `tools 6/20 · ~9.8k tokens withheld`.
pub fn tools_status(available: usize, external: usize, withheld_chars: u64) -> String {
    if withheld_chars == 0 {
        return format!("tools {available}/{external}");
    }
    let tokens = crate::words::approx_tokens(withheld_chars);
    let tokens = if tokens >= 1000 {
        format!("{:.1}k", tokens as f64 / 1000.0)
    } else {
        tokens.to_string()
    };
    format!("tools {available}/{external} · ~{tokens} tokens withheld")
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
            tools_status(13, 23, 0)
        ));
        assert_eq!(
            tools_status(6, 20, 39_100),
            "tools 6/20 · ~9.8k tokens withheld"
        );
        assert_eq!(
            tools_status(19, 20, 800),
            "tools 19/20 · ~200 tokens withheld"
        );
    }
}
