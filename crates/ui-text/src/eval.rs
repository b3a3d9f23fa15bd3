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
    /// Relevant candidates among each prompt's cap's worth of best-ranked ones (any positive
    /// score), of all relevant ones: the most recall any threshold could give this ranking.
    pub reach_recall: f64,
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
    /// Irrelevance prompts: candidates exposed per prompt, on average.
    pub irrelevance_exposed: Option<f64>,
    /// The candidates made available most often at the default threshold and cap, most first:
    /// each one's name and the share of every evaluated prompt (labelled and irrelevance) that
    /// made it available (empty: nothing was made available).
    pub most_often_available: Vec<(String, f64)>,
    /// What sessions of prompts leave withheld, when the set has coding-only prompts to draw.
    pub sessions: Option<EvalSessions>,
    /// The same sessions in the `tool-round` cadence: completed tool rounds after each prompt,
    /// each topping up from the prompt's scores.
    pub sessions_tool_round: Option<EvalSessions>,
    /// The need gate's accuracy, with the model.
    pub need_gate: Option<EvalNeedGate>,
    /// How well the embedded scorer's scores match how often a candidate is relevant.
    pub calibration: EvalCalibration,
    /// The figures of a set whose lines carry needs, topics and kinds (all `None` otherwise).
    pub everyday: EvalEveryday,
    /// `--sweep`: the selection at each threshold (empty without it).
    pub sweep: Vec<EvalSweepRow>,
}

/// One bin of the reliability table: the (prompt, candidate) pairs whose score falls in
/// `[low, high)` (the last bin includes 1.0).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EvalBin {
    /// The bin's lower bound.
    pub low: f64,
    /// The bin's upper bound.
    pub high: f64,
    /// How many pairs fall in it.
    pub pairs: u64,
    /// Their mean score.
    pub mean_score: f64,
    /// The share of them whose candidate is relevant (0 to 1).
    pub observed: f64,
}

/// The Brier score and reliability table over every (prompt, candidate) pair of the evaluated
/// prompts, irrelevance prompts included.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EvalCalibration {
    /// How many pairs.
    pub pairs: u64,
    /// The mean squared difference between score and relevance (0 or 1).
    pub brier: f64,
    /// How many pairs each prompt's 10 best candidates make.
    pub top10_pairs: u64,
    /// The Brier score over those pairs only.
    pub brier_top10: f64,
    /// Ten bins, [0, 0.1) to [0.9, 1.0].
    pub bins: Vec<EvalBin>,
}

/// A share (0 to 1) of how many prompts.
pub type EvalShare = Option<(f64, u64)>;

/// The figures of a set labelled with needs, topics and kinds of irrelevance prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EvalEveryday {
    /// Labelled prompts with needs whose every need is met by the selection.
    pub needs_met: EvalShare,
    /// Labelled prompts with topics that expose a tool (or group) of an unrelated topic.
    pub unrelated_topic: EvalShare,
    /// Coding-only irrelevance prompts that expose nothing.
    pub coding_nothing_exposed: EvalShare,
    /// Near-miss irrelevance prompts that expose nothing.
    pub near_miss_nothing_exposed: EvalShare,
    /// Labelled prompts with needs whose every need ranks among the cap's worth of best
    /// candidates: the most prompts any threshold could meet with this ranking.
    pub needs_within_cap: EvalShare,
    /// Prompts of the paraphrase slice (no content word shared with the tools they need) whose
    /// every need is made available.
    pub paraphrase_needs_met: EvalShare,
    /// Candidates exposed per coding-only prompt, on average.
    pub coding_exposed: Option<f64>,
    /// Candidates exposed per near-miss prompt, on average.
    pub near_miss_exposed: Option<f64>,
}

/// How well the need gate ("does this prompt need anything outside the code?") tells the kinds
/// of prompt apart.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EvalNeedGate {
    /// The AUC between topical prompts and coding-only ones (or every irrelevance prompt).
    pub auc: f64,
    /// The share of topical prompts it passes.
    pub passed_topical: Option<f64>,
    /// The share of coding-only prompts it passes.
    pub passed_coding: Option<f64>,
    /// The share of near-miss prompts it passes.
    pub passed_near_miss: Option<f64>,
    /// The share of other irrelevance prompts it passes.
    pub passed_other: Option<f64>,
}

/// What sessions of prompts cost: each a fixed-seed draw of mostly coding-only prompts and a
/// few about one or two topics, played with availability adding up as on a branch.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EvalSessions {
    /// How many sessions.
    pub sessions: u64,
    /// How many prompts each.
    pub length: u64,
    /// The median share of the inventory's definition text still withheld at a session's end.
    pub withheld_text_median: f64,
    /// The median share of the candidates (tools, or groups) still withheld at a session's end.
    pub withheld_candidates_median: f64,
    /// The share of the sessions' topical prompts whose every need was available after their
    /// round, and how many there were.
    pub needs_met: (f64, u64),
    /// Candidates made available per session, on average.
    pub exposed_per_session: f64,
    /// Completed tool rounds after each prompt (0: the `prompt` cadence).
    pub tool_rounds: u64,
}

/// The selection at one threshold of `eval --sweep`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EvalSweepRow {
    /// The threshold.
    pub threshold: f64,
    /// Relevant candidates selected, of all relevant ones.
    pub recall: f64,
    /// Selected candidates that are relevant, of all selected ones.
    pub precision: f64,
    /// Candidates selected per labelled prompt.
    pub exposed_per_prompt: f64,
    /// The share of labelled prompts whose every need is made available, when the set says
    /// needs.
    pub needs_met: Option<f64>,
    /// The same share over the paraphrase slice (prompts that share no word with their tools),
    /// when the set marks one.
    pub paraphrase_needs_met: Option<f64>,
    /// The share of irrelevance prompts that expose nothing, when the set has some.
    pub nothing_exposed: Option<f64>,
    /// Candidates exposed per coding-only prompt, when the set has some.
    pub coding_exposed: Option<f64>,
    /// The median share of definition text withheld at a session's end, when sessions ran.
    pub session_withheld: Option<f64>,
    /// The share of the sessions' topical prompts whose needs were met, when sessions ran.
    pub session_needs_met: Option<f64>,
}

/// One run of sessions' line: the `prompt` cadence's, or the same sessions in the `tool-round`
/// cadence when tool rounds followed each prompt.
fn sessions(s: &mut String, x: &EvalSessions, what: &str) {
    let (opening, after) = if x.tool_rounds == 0 {
        (
            format!(
                "sessions ({} of {} prompts, mostly coding-only)",
                x.sessions, x.length
            ),
            "their round",
        )
    } else {
        (
            format!(
                "the same sessions in the tool-round cadence ({} tool rounds after each prompt, \
                 each adding up to the cap of the prompt's candidates at or above the threshold)",
                x.tool_rounds
            ),
            "their rounds",
        )
    };
    let _ = writeln!(
        s,
        "{opening}: at the end {:.1}% of definition text and {:.1}% of {what} still withheld \
         (medians), {:.1} {what} made available per session; topical prompts whose every need \
         was available after {after}: {:.1}% of {}",
        100.0 * x.withheld_text_median,
        100.0 * x.withheld_candidates_median,
        x.exposed_per_session,
        100.0 * x.needs_met.0,
        x.needs_met.1,
    );
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
    let _ = writeln!(
        s,
        "within the cap at any threshold (the ranking's reach): recall {:.3}",
        sel.reach_recall,
    );
    if let Some((share, prompts)) = r.irrelevance {
        let _ = writeln!(
            s,
            "irrelevance prompts with nothing exposed: {:.1}% of {prompts}",
            100.0 * share
        );
    }
    if let Some(exposed) = r.irrelevance_exposed {
        let _ = writeln!(s, "irrelevance prompts: {exposed:.2} exposed per prompt");
    }
    if !r.most_often_available.is_empty() {
        let most: Vec<String> = r
            .most_often_available
            .iter()
            .map(|(name, share)| format!("{} {:.1}%", display_safe(name), 100.0 * share))
            .collect();
        let _ = writeln!(
            s,
            "made available most often (share of every prompt): {}",
            most.join(", ")
        );
    }
    everyday(&mut s, &r.everyday, &r.mode);
    if let Some(g) = &r.need_gate {
        let mut passed = Vec::new();
        for (kind, share) in [
            ("topical", g.passed_topical),
            ("coding-only", g.passed_coding),
            ("near-miss", g.passed_near_miss),
            ("other irrelevance", g.passed_other),
        ] {
            if let Some(share) = share {
                passed.push(format!("{kind} {:.1}%", 100.0 * share));
            }
        }
        let _ = writeln!(
            s,
            "need gate (does the prompt need anything outside the code?): AUC {:.3}; passed: {}",
            g.auc,
            passed.join(", ")
        );
    }
    let what = if r.mode == "mcp" { "groups" } else { "tools" };
    for x in [&r.sessions, &r.sessions_tool_round].into_iter().flatten() {
        sessions(&mut s, x, what);
    }
    calibration(&mut s, &r.calibration);
    if !r.sweep.is_empty() {
        sweep(&mut s, &r.sweep, r.selection.cap);
    }
    s
}

fn everyday(s: &mut String, e: &EvalEveryday, mode: &str) {
    let unrelated = if mode == "mcp" {
        "labelled prompts exposing a group of an unrelated topic"
    } else {
        "labelled prompts exposing a tool of an unrelated topic"
    };
    let lines = [
        (
            "labelled prompts whose every need is made available",
            e.needs_met,
        ),
        (unrelated, e.unrelated_topic),
        (
            "coding-only prompts with nothing exposed",
            e.coding_nothing_exposed,
        ),
        (
            "near-miss prompts with nothing exposed",
            e.near_miss_nothing_exposed,
        ),
        (
            "labelled prompts whose every need ranks within the cap (the most any threshold meets)",
            e.needs_within_cap,
        ),
    ];
    for (what, share) in lines {
        if let Some((share, prompts)) = share {
            let _ = writeln!(s, "{what}: {:.1}% of {prompts}", 100.0 * share);
        }
    }
    if let Some((share, prompts)) = e.paraphrase_needs_met {
        let _ = writeln!(
            s,
            "paraphrase slice (no word shared with its tools), every need made available: \
             {:.1}% of {prompts}",
            100.0 * share
        );
    }
    let what = if mode == "mcp" { "groups" } else { "tools" };
    for (kind, exposed) in [
        ("coding-only", e.coding_exposed),
        ("near-miss", e.near_miss_exposed),
    ] {
        if let Some(exposed) = exposed {
            let _ = writeln!(s, "{kind} prompts: {exposed:.2} {what} exposed per prompt");
        }
    }
}

fn calibration(s: &mut String, c: &EvalCalibration) {
    let _ = writeln!(
        s,
        "\ncalibration: Brier score {:.4} over {} (prompt, candidate) pairs, {:.4} over each \
         prompt's 10 best candidates ({} pairs)",
        c.brier, c.pairs, c.brier_top10, c.top10_pairs,
    );
    let _ = writeln!(
        s,
        "{:<12}{:>12}{:>12}{:>16}",
        "score", "pairs", "mean score", "share relevant"
    );
    let last = c.bins.len().saturating_sub(1);
    for (i, bin) in c.bins.iter().enumerate() {
        let close = if i == last { ']' } else { ')' };
        let range = format!("[{:.1}, {:.1}{close}", bin.low, bin.high);
        if bin.pairs == 0 {
            let _ = writeln!(s, "{range:<12}{:>12}{:>12}{:>16}", 0, "-", "-");
        } else {
            let _ = writeln!(
                s,
                "{range:<12}{:>12}{:>12.3}{:>16.3}",
                bin.pairs, bin.mean_score, bin.observed
            );
        }
    }
}

fn sweep(s: &mut String, rows: &[EvalSweepRow], cap: u64) {
    let _ = writeln!(s, "\nselection by threshold (cap {cap}):");
    let needs = rows.iter().any(|r| r.needs_met.is_some());
    let paraphrase = rows.iter().any(|r| r.paraphrase_needs_met.is_some());
    let sessions = rows.iter().any(|r| r.session_withheld.is_some());
    let _ = write!(
        s,
        "{:<12}{:>10}{:>12}{:>22}",
        "threshold", "recall", "precision", "exposed per prompt"
    );
    if needs {
        let _ = write!(s, "{:>12}", "needs met");
    }
    if paraphrase {
        let _ = write!(s, "{:>18}", "paraphrase slice");
    }
    let _ = write!(s, "{:>30}", "irrelevance, nothing exposed");
    if sessions {
        let _ = write!(
            s,
            "{:>16}{:>20}{:>20}",
            "coding exposed", "session withheld", "session needs met"
        );
    }
    s.push('\n');
    let percent = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{:.1}%", 100.0 * x));
    let share = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{x:.3}"));
    for r in rows {
        let _ = write!(
            s,
            "{:<12.2}{:>10.3}{:>12.3}{:>22.2}",
            r.threshold, r.recall, r.precision, r.exposed_per_prompt
        );
        if needs {
            let _ = write!(s, "{:>12}", share(r.needs_met));
        }
        if paraphrase {
            let _ = write!(s, "{:>18}", share(r.paraphrase_needs_met));
        }
        let _ = write!(s, "{:>30}", percent(r.nothing_exposed));
        if sessions {
            let coding = r
                .coding_exposed
                .map_or("-".to_owned(), |x| format!("{x:.2}"));
            let _ = write!(
                s,
                "{coding:>16}{:>20}{:>20}",
                percent(r.session_withheld),
                percent(r.session_needs_met)
            );
        }
        s.push('\n');
    }
}

/// Escapes text for SVG (XML) content and attribute values.
fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// `eval --plot`: an SVG of recall (left axis, 0 to 1) and candidates exposed per prompt (right
/// axis) against the threshold, one `<polyline>` per series (`id="recall"`, `id="exposed"`,
/// a point per row; `id="needs-met"`, the share of labelled prompts whose every need is made
/// available, and `id="session-withheld"` when every row has them), and the threshold in use as
/// a dashed vertical line
/// (`id="default-threshold"`), labelled `default` when it is the built-in default (`is_default`)
/// and `in use` when settings or flags chose another. `title` names the set, mode and split.
pub fn eval_sweep_svg(
    rows: &[EvalSweepRow],
    default_threshold: f64,
    is_default: bool,
    title: &str,
) -> String {
    const W: f64 = 640.0;
    const H: f64 = 430.0;
    const LEFT: f64 = 60.0;
    const RIGHT: f64 = 580.0;
    const TOP: f64 = 50.0;
    const BOTTOM: f64 = 340.0;
    let most_exposed = rows
        .iter()
        .map(|r| r.exposed_per_prompt)
        .fold(1.0f64, f64::max)
        .ceil();
    let x = |t: f64| LEFT + (RIGHT - LEFT) * t.clamp(0.0, 1.0);
    let y = |share: f64| BOTTOM - (BOTTOM - TOP) * share.clamp(0.0, 1.0);
    let points = |value: &dyn Fn(&EvalSweepRow) -> f64| -> String {
        rows.iter()
            .map(|r| format!("{:.1},{:.1}", x(r.threshold), y(value(r))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" \
         viewBox=\"0 0 {W} {H}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(
        s,
        "<title>{}</title>",
        xml_escape(&display_safe(&format!(
            "{title}: recall and exposure by threshold"
        )))
    );
    let _ = writeln!(s, "<rect width=\"{W}\" height=\"{H}\" fill=\"white\"/>");
    let _ = writeln!(
        s,
        "<text x=\"{LEFT}\" y=\"28\" font-size=\"14\">{}</text>",
        xml_escape(&display_safe(title))
    );
    // Axes and ticks: thresholds below, recall on the left, exposure on the right.
    let _ = writeln!(
        s,
        "<path d=\"M{LEFT},{TOP} V{BOTTOM} H{RIGHT} V{TOP}\" fill=\"none\" stroke=\"black\"/>"
    );
    for i in 0..=10 {
        let t = f64::from(i) / 10.0;
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{t:.1}</text>",
            x(t),
            BOTTOM + 16.0
        );
    }
    for i in 0..=4 {
        let share = f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{share:.2}</text>",
            LEFT - 6.0,
            y(share) + 4.0
        );
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{:.1}\">{:.1}</text>",
            RIGHT + 6.0,
            y(share) + 4.0,
            share * most_exposed
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">threshold</text>",
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 34.0
    );
    let _ = writeln!(
        s,
        "<polyline id=\"recall\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" \
         points=\"{}\"/>",
        points(&|r| r.recall)
    );
    let _ = writeln!(
        s,
        "<polyline id=\"exposed\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" \
         points=\"{}\"/>",
        points(&|r| r.exposed_per_prompt / most_exposed)
    );
    if rows.iter().all(|r| r.needs_met.is_some()) && !rows.is_empty() {
        let _ = writeln!(
            s,
            "<polyline id=\"needs-met\" fill=\"none\" stroke=\"#9467bd\" stroke-width=\"2\" \
             points=\"{}\"/>",
            points(&|r| r.needs_met.unwrap_or(0.0))
        );
        let _ = writeln!(
            s,
            "<text x=\"{LEFT}\" y=\"{}\" fill=\"#9467bd\">labelled prompts whose every need is \
             made available (left axis)</text>",
            H - 44.0
        );
    }
    if rows.iter().all(|r| r.session_withheld.is_some()) && !rows.is_empty() {
        let _ = writeln!(
            s,
            "<polyline id=\"session-withheld\" fill=\"none\" stroke=\"#2ca02c\" \
             stroke-width=\"2\" stroke-dasharray=\"6 3\" points=\"{}\"/>",
            points(&|r| r.session_withheld.unwrap_or(0.0))
        );
        let _ = writeln!(
            s,
            "<text x=\"{LEFT}\" y=\"{}\" fill=\"#2ca02c\">definition text withheld at a \
             session's end, median (left axis)</text>",
            H - 28.0
        );
    }
    let _ = writeln!(
        s,
        "<line id=\"default-threshold\" x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{TOP}\" \
         y2=\"{BOTTOM}\" stroke=\"gray\" stroke-dasharray=\"4 3\"/>",
        x(default_threshold)
    );
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{}\">{} {}</text>",
        x(default_threshold) + 4.0,
        TOP + 12.0,
        if is_default { "default" } else { "in use" },
        json_number(default_threshold)
    );
    let _ = writeln!(
        s,
        "<text x=\"{LEFT}\" y=\"{}\" fill=\"#1f77b4\">recall (left axis)</text>",
        H - 12.0
    );
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" fill=\"#d62728\">exposed per prompt (right axis)</text>",
        LEFT + 200.0,
        H - 12.0
    );
    s.push_str("</svg>\n");
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
            set: "eval/bfcl".into(),
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
                reach_recall: 0.875,
            },
            irrelevance: Some((0.25, 40)),
            irrelevance_exposed: None,
            most_often_available: Vec::new(),
            sessions: None,
            sessions_tool_round: None,
            need_gate: None,
            calibration: EvalCalibration {
                pairs: 246_800,
                brier: 0.00123,
                top10_pairs: 2000,
                brier_top10: 0.0456,
                bins: (0..10)
                    .map(|i: u32| EvalBin {
                        low: f64::from(i) / 10.0,
                        high: f64::from(i + 1) / 10.0,
                        pairs: if i == 8 { 0 } else { 1000 / (u64::from(i) + 1) },
                        mean_score: f64::from(i) / 10.0 + 0.05,
                        observed: f64::from(i) / 12.0,
                    })
                    .collect(),
            },
            everyday: EvalEveryday {
                needs_met: Some((0.9, 80)),
                unrelated_topic: Some((0.0375, 80)),
                coding_nothing_exposed: Some((0.975, 40)),
                near_miss_nothing_exposed: Some((0.6, 20)),
                needs_within_cap: Some((0.95, 80)),
                ..EvalEveryday::default()
            },
            sweep: vec![
                EvalSweepRow {
                    threshold: 0.05,
                    recall: 0.9,
                    precision: 0.15,
                    exposed_per_prompt: 5.9,
                    nothing_exposed: Some(0.0),
                    ..EvalSweepRow::default()
                },
                EvalSweepRow {
                    threshold: 0.95,
                    recall: 0.1,
                    precision: 0.8,
                    exposed_per_prompt: 0.125,
                    nothing_exposed: Some(1.0),
                    ..EvalSweepRow::default()
                },
            ],
        };
        insta::assert_snapshot!(eval_report(&report));
        let plain = eval_report(&EvalReport {
            irrelevance: None,
            set: "set\u{1b}[2J".into(),
            everyday: EvalEveryday::default(),
            sweep: Vec::new(),
            ..report
        });
        assert!(plain.starts_with("set set?[2J  mode tools"), "{plain}");
        for absent in ["irrelevance", "need", "topic", "by threshold"] {
            assert!(!plain.contains(absent), "{absent}: {plain}");
        }
        assert!(plain.contains("Brier score 0.0012 over 246800"), "{plain}");
    }

    #[test]
    fn sweep_svg_has_both_series_and_the_default_marked() {
        let rows: Vec<EvalSweepRow> = (1..=19)
            .map(|i| EvalSweepRow {
                threshold: f64::from(i) * 0.05,
                recall: 1.0 - f64::from(i) * 0.05,
                precision: 0.5,
                exposed_per_prompt: 6.0 - f64::from(i) * 0.3,
                nothing_exposed: None,
                ..EvalSweepRow::default()
            })
            .collect();
        let svg = eval_sweep_svg(&rows, 0.625, true, "set <a&b> \u{1b} tools test");
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{svg}"
        );
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("set &lt;a&amp;b&gt; ? tools test"), "{svg}");
        assert!(
            svg.contains("id=\"default-threshold\" x1=\"385.0\""),
            "{svg}"
        );
        assert!(svg.contains(">default 0.625</text>"));
        assert!(eval_sweep_svg(&rows, 0.4, false, "t").contains(">in use 0.4</text>"));
    }

    #[test]
    fn sessions_paraphrase_and_exposure_lines_name_their_figures() {
        let report = EvalReport {
            set: "eval/everyday".into(),
            mode: "mcp".into(),
            split: "test".into(),
            candidates: 28,
            prompts: 167,
            embedded: scores(0.6),
            tool_search: scores(0.4),
            tool_search_latest: scores(0.3),
            selection: EvalSelection::default(),
            irrelevance: Some((0.5, 52)),
            irrelevance_exposed: Some(0.375),
            most_often_available: vec![
                ("mcp__cloudcrate".into(), 0.3),
                ("ext__evil\u{1b}[2J".into(), 0.05),
            ],
            need_gate: Some(EvalNeedGate {
                auc: 0.9375,
                passed_topical: Some(0.875),
                passed_coding: Some(0.125),
                passed_near_miss: None,
                passed_other: None,
            }),
            sessions: Some(EvalSessions {
                sessions: 40,
                length: 20,
                withheld_text_median: 0.6125,
                withheld_candidates_median: 0.75,
                needs_met: (0.8, 180),
                exposed_per_session: 7.25,
                tool_rounds: 0,
            }),
            sessions_tool_round: Some(EvalSessions {
                sessions: 40,
                length: 20,
                withheld_text_median: 0.25,
                withheld_candidates_median: 0.375,
                needs_met: (0.875, 180),
                exposed_per_session: 17.5,
                tool_rounds: 3,
            }),
            calibration: EvalCalibration::default(),
            everyday: EvalEveryday {
                paraphrase_needs_met: Some((0.625, 59)),
                coding_exposed: Some(0.25),
                near_miss_exposed: Some(1.5),
                ..EvalEveryday::default()
            },
            sweep: vec![EvalSweepRow {
                threshold: 0.5,
                needs_met: Some(0.6875),
                paraphrase_needs_met: Some(0.5625),
                coding_exposed: Some(0.25),
                session_withheld: Some(0.6125),
                session_needs_met: Some(0.8),
                ..EvalSweepRow::default()
            }],
        };
        let text = eval_report(&report);
        for line in [
            "irrelevance prompts: 0.38 exposed per prompt",
            "need gate (does the prompt need anything outside the code?): AUC 0.938; passed: \
             topical 87.5%, coding-only 12.5%",
            "sessions (40 of 20 prompts, mostly coding-only): at the end 61.3% of definition text \
             and 75.0% of groups still withheld (medians), 7.2 groups made available per \
             session; topical prompts whose every need was available after their round: 80.0% \
             of 180",
            "the same sessions in the tool-round cadence (3 tool rounds after each prompt, each \
             adding up to the cap of the prompt's candidates at or above the threshold): at the \
             end 25.0% of definition text and 37.5% of groups still withheld (medians), 17.5 \
             groups made available per session; topical prompts whose every need was available \
             after their rounds: 87.5% of 180",
            "paraphrase slice (no word shared with its tools), every need made available: 62.5% \
             of 59",
            "coding-only prompts: 0.25 groups exposed per prompt",
            "near-miss prompts: 1.50 groups exposed per prompt",
            "made available most often (share of every prompt): mcp__cloudcrate 30.0%, \
             ext__evil?[2J 5.0%",
            "session withheld",
            "61.3%",
        ] {
            assert!(text.contains(line), "{line}: {text}");
        }
        // The sweep's row says its needs met and its paraphrase slice's under their own headers.
        let header = text
            .lines()
            .find(|l| l.starts_with("threshold"))
            .expect("the sweep's header");
        let row = text
            .lines()
            .find(|l| l.starts_with("0.50 "))
            .expect("the sweep's row");
        for (column, value) in [("needs met", "0.688"), ("paraphrase slice", "0.562")] {
            let end = header.find(column).expect(column) + column.len();
            assert_eq!(
                row[..end].split_whitespace().last(),
                Some(value),
                "{column}: {text}"
            );
        }
        let rows: Vec<EvalSweepRow> = (1..=3)
            .map(|i| EvalSweepRow {
                threshold: f64::from(i) * 0.25,
                session_withheld: Some(0.5),
                ..EvalSweepRow::default()
            })
            .collect();
        let svg = eval_sweep_svg(&rows, 0.5, true, "t");
        assert_eq!(svg.matches("<polyline").count(), 3);
        assert!(svg.contains("id=\"session-withheld\""), "{svg}");
        assert!(!svg.contains("id=\"needs-met\""), "{svg}");
        // Needs met is drawn on the left axis when every row has it: 1.0 at the top, 0.5 half-way.
        let rows: Vec<EvalSweepRow> = [1.0, 0.5]
            .iter()
            .enumerate()
            .map(|(i, &met)| EvalSweepRow {
                threshold: (i as f64 + 1.0) * 0.25,
                needs_met: Some(met),
                ..EvalSweepRow::default()
            })
            .collect();
        let svg = eval_sweep_svg(&rows, 0.5, true, "t");
        assert_eq!(svg.matches("<polyline").count(), 3);
        assert!(
            svg.contains("id=\"needs-met\" fill=\"none\" stroke=\"#9467bd\" stroke-width=\"2\" points=\"190.0,50.0 320.0,195.0\""),
            "{svg}"
        );
        assert!(svg.contains("every need is made available (left axis)"));
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
