//! The flags `pick` and `eval` share for the selection: the threshold and the caps.

use pcd_model::DecisionSettings;

/// The flags `pick` and `eval` share for the selection; each overrides the settings.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SelectionFlags {
    /// The inclusive score threshold, 0 to 1 [default: decision.threshold of the settings,
    /// 0.625 built in].
    #[arg(long, value_name = "T", value_parser = parse_threshold)]
    pub threshold: Option<f64>,
    /// How many tools one round adds at most, 0 to 1000 [default: decision.maxNewTools, 6 built
    /// in].
    #[arg(long, value_name = "N", value_parser = |v: &str| parse_cap(v, "--max-new-tools"))]
    pub max_new_tools: Option<u32>,
    /// How many groups one round adds at most in mcp mode, 0 to 1000 [default:
    /// decision.maxNewGroups, 3 built in].
    #[arg(long, value_name = "N", value_parser = |v: &str| parse_cap(v, "--max-new-groups"))]
    pub max_new_groups: Option<u32>,
}

impl SelectionFlags {
    /// Puts the flags given into `decision`; returns the flags that were given.
    pub fn apply(&self, decision: &mut DecisionSettings) -> Vec<String> {
        let mut given = Vec::new();
        if let Some(t) = self.threshold {
            decision.threshold = t;
            given.push("--threshold".to_owned());
        }
        if let Some(n) = self.max_new_tools {
            decision.max_new_tools = n;
            given.push("--max-new-tools".to_owned());
        }
        if let Some(n) = self.max_new_groups {
            decision.max_new_groups = n;
            given.push("--max-new-groups".to_owned());
        }
        given
    }
}

/// `--threshold`: a number in [0, 1], as `decision.threshold` takes it.
pub fn parse_threshold(value: &str) -> Result<f64, String> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|t| (0.0..=1.0).contains(t))
        .ok_or_else(|| pcd_ui_text::flag_range_error("--threshold", false, "0", "1"))
}

/// A cap flag: a whole number within `decision.maxNewTools`'s bounds (the same for groups).
fn parse_cap(value: &str, flag: &str) -> Result<u32, String> {
    let bounds = pcd_model::MAX_NEW_TOOLS_BOUNDS;
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|n| (bounds.min..=bounds.max).contains(n))
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            pcd_ui_text::flag_range_error(
                flag,
                true,
                &bounds.min.to_string(),
                &bounds.max.to_string(),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_flags_are_bounded() {
        assert_eq!(parse_threshold("0.5"), Ok(0.5));
        assert!(parse_threshold("1.5")
            .unwrap_err()
            .contains("--threshold takes a number"));
        assert!(parse_threshold("x").is_err());
        assert_eq!(parse_cap("0", "--max-new-tools"), Ok(0));
        assert!(parse_cap("1001", "--max-new-groups")
            .unwrap_err()
            .contains("--max-new-groups"));
        assert!(parse_cap("-1", "--max-new-tools").is_err());
    }
}
