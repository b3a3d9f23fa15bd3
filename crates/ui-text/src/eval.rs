//! The `context-decisions eval` report and its progress bar. They are handed figures (already
//! rounded as `--json` prints them), the set's folder as the person gave it, and the mode and
//! split names.

use crate::display::display_safe;
use crate::reports::json_number;
use std::fmt::Write as _;

/// The width of the `eval` progress bar, in cells.
pub const EVAL_PROGRESS_WIDTH: usize = 30;

/// One ranker's figures: the picker's embedded scorer, or Pi's `tool_search` (BM25).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EvalScores {
    /// Recall at 1, 3, 5 and 10.
    pub recall: [f64; 4],
    /// Every relevant candidate within the first 5, and within the first 10.
    pub complete: [f64; 2],
    /// nDCG at 10.
    pub ndcg10: f64,
    /// Milliseconds per prompt: the median.
    pub ms_median: f64,
    /// Milliseconds per prompt: the 99th percentile.
    pub ms_p99: f64,
}

/// What the default threshold and cap select, over the labelled prompts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EvalSelection {
    /// The threshold.
    pub threshold: f64,
    /// The cap per round.
    pub cap: u64,
    /// Relevant candidates selected, of all relevant ones.
    pub recall: f64,
    /// Selected candidates that are relevant, of all selected ones.
    pub precision: f64,
    /// Candidates selected per prompt.
    pub exposed_per_prompt: f64,
    /// The share of the candidates' definition text not exposed (0 to 1).
    pub withheld_share: f64,
}

/// What `eval` measured, for [`eval_report`].
#[derive(Debug, Clone, PartialEq)]
pub struct EvalReport {
    /// The set's folder, as the person gave it.
    pub set: String,
    /// `tools` or `mcp`.
    pub mode: String,
    /// `test`, `tune` or `all`.
    pub split: String,
    /// How many candidates the set's tools form.
    pub candidates: u64,
    /// How many labelled prompts were evaluated.
    pub prompts: u64,
    /// The picker's embedded scorer.
    pub embedded: EvalScores,
    /// Pi 1.3.0's `tool_search` ranker on the same data (plain BM25).
    pub tool_search: EvalScores,
    /// Pi 1.6.0's `tool_search` ranker on the same data (name and namespace fields, coverage
    /// first).
    pub tool_search_latest: EvalScores,
    /// What the default threshold and cap select.
    pub selection: EvalSelection,
    /// Irrelevance prompts: the share with nothing exposed (0 to 1) and how many there were.
    pub irrelevance: Option<(f64, u64)>,
}

/// The `eval` text report: a table of the embedded scorer and Pi's two `tool_search` rankers,
/// then the selection.
pub fn eval_report(r: &EvalReport) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "set {}  mode {}  split {}  {} candidates  {} prompts\n\n",
        display_safe(&r.set),
        display_safe(&r.mode),
        display_safe(&r.split),
        r.candidates,
        r.prompts,
    );
    let _ = writeln!(
        s,
        "{:<14}{:>10}{:>22}{:>22}",
        "metric", "embedded", "tool_search (1.3.0)", "tool_search (1.6.0)"
    );
    let columns = [&r.embedded, &r.tool_search, &r.tool_search_latest];
    type Metric = fn(&EvalScores) -> f64;
    let rows: [(&str, Metric); 9] = [
        ("recall@1", |x| x.recall[0]),
        ("recall@3", |x| x.recall[1]),
        ("recall@5", |x| x.recall[2]),
        ("recall@10", |x| x.recall[3]),
        ("complete@5", |x| x.complete[0]),
        ("complete@10", |x| x.complete[1]),
        ("ndcg@10", |x| x.ndcg10),
        ("ms median", |x| x.ms_median),
        ("ms p99", |x| x.ms_p99),
    ];
    for (metric, value) in rows {
        let [a, b, c] = columns.map(value);
        let _ = writeln!(s, "{metric:<14}{a:>10.3}{b:>22.3}{c:>22.3}");
    }
    let sel = &r.selection;
    let _ = writeln!(
        s,
        "\nselection at threshold {} and cap {}: recall {:.3}, precision {:.3}, {:.2} exposed per \
         prompt, {:.1}% of definition text withheld",
        json_number(sel.threshold),
        sel.cap,
        sel.recall,
        sel.precision,
        sel.exposed_per_prompt,
        100.0 * sel.withheld_share,
    );
    if let Some((share, prompts)) = r.irrelevance {
        let _ = writeln!(
            s,
            "irrelevance prompts with nothing exposed: {:.1}% of {prompts}",
            100.0 * share
        );
    }
    s
}

/// The `eval` progress bar after `done` of `total` prompts, drawn over itself with a carriage
/// return; the last one ends the line.
pub fn eval_progress(done: usize, total: usize) -> String {
    let filled = (done * EVAL_PROGRESS_WIDTH / total.max(1)).min(EVAL_PROGRESS_WIDTH);
    format!(
        "\r[{}{}] {done}/{total}{}",
        "#".repeat(filled),
        " ".repeat(EVAL_PROGRESS_WIDTH - filled),
        if done == total { "\n" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(base: f64) -> EvalScores {
        EvalScores {
            recall: [base, base + 0.1, base + 0.2, base + 0.25],
            complete: [base, base + 0.05],
            ndcg10: base + 0.125,
            ms_median: 0.042,
            ms_p99: 1.5,
        }
    }

    #[test]
    fn eval_report_table_and_selection() {
        let report = EvalReport {
            set: "../shared/eval/bfcl".into(),
            mode: "tools".into(),
            split: "test".into(),
            candidates: 1234,
            prompts: 200,
            embedded: scores(0.6),
            tool_search: scores(0.4),
            tool_search_latest: scores(0.3),
            selection: EvalSelection {
                threshold: 0.5,
                cap: 6,
                recall: 0.8125,
                precision: 0.3,
                exposed_per_prompt: 2.345,
                withheld_share: 0.9987,
            },
            irrelevance: Some((0.25, 40)),
        };
        insta::assert_snapshot!(eval_report(&report));
        let plain = eval_report(&EvalReport {
            irrelevance: None,
            set: "set\u{1b}[2J".into(),
            ..report
        });
        assert!(plain.starts_with("set set?[2J  mode tools"), "{plain}");
        assert!(!plain.contains("irrelevance"));
    }

    #[test]
    fn progress_bar() {
        assert_eq!(
            eval_progress(0, 200),
            format!("\r[{}] 0/200", " ".repeat(30))
        );
        assert_eq!(
            eval_progress(100, 200),
            format!("\r[{}{}] 100/200", "#".repeat(15), " ".repeat(15))
        );
        assert_eq!(
            eval_progress(200, 200),
            format!("\r[{}] 200/200\n", "#".repeat(30))
        );
        assert_eq!(eval_progress(0, 0), format!("\r[{}] 0/0\n", " ".repeat(30)));
    }
}
