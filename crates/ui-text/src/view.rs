//! The `/decisions` dialog as data for a host that draws it with its own components (Pi's
//! `pi-tui`, in the current theme): the title, the rows as label and value, the cursor, the
//! help of the row under it, the notes, a message, the key hints as (action, words) pairs the
//! host spells with its own key bindings, and an open prompt (a number to type, a model to
//! choose). Every word is here; the host only lays them out.
//!
//! Also the threshold's parser: any value in [0, 1] with at most three decimals (what the
//! ledger stores), or a one-line error.

use crate::words::{width, wrap};

/// An action a key hint names. The host shows the keys it binds to the action (Pi's
/// `tui.select.up`, …), so a person who rebound a key sees their own key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HintAction {
    /// Move the cursor up.
    Up,
    /// Move the cursor down.
    Down,
    /// Step a number down.
    Left,
    /// Step a number up.
    Right,
    /// Enter: change, edit, choose or save what is typed.
    Confirm,
    /// Escape: close, or go back.
    Cancel,
    /// Tab: switch between the tabs.
    Tab,
    /// Space: select in an editor.
    Space,
    /// Ctrl+S: save an editor.
    Save,
}

impl HintAction {
    /// The action's name in the JSON a host reads (`up`, `down`, `confirm`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            HintAction::Up => "up",
            HintAction::Down => "down",
            HintAction::Left => "left",
            HintAction::Right => "right",
            HintAction::Confirm => "confirm",
            HintAction::Cancel => "cancel",
            HintAction::Tab => "tab",
            HintAction::Space => "space",
            HintAction::Save => "save",
        }
    }
}

impl HintAction {
    /// The key ui-text itself shows for the action where it draws its own lines (a host shows
    /// the keys it binds instead).
    pub fn key_name(self) -> &'static str {
        match self {
            HintAction::Up => "↑",
            HintAction::Down => "↓",
            HintAction::Left => "←",
            HintAction::Right => "→",
            HintAction::Confirm => "Enter",
            HintAction::Cancel => "Esc",
            HintAction::Tab => "Tab",
            HintAction::Space => "Space",
            HintAction::Save => "Ctrl+S",
        }
    }
}

/// One key hint: the actions whose keys are shown (joined), and what they do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// The actions, in order (`[Up, Down]` is shown as the keys of both).
    pub actions: Vec<HintAction>,
    /// What the keys do (`move`, `close`).
    pub words: &'static str,
}

impl Hint {
    pub(crate) fn new(actions: &[HintAction], words: &'static str) -> Hint {
        Hint {
            actions: actions.to_vec(),
            words,
        }
    }
}

/// A row as the host draws it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewRow {
    /// The label (left).
    pub label: String,
    /// The value (right; the host dims it unless the cursor is on the row).
    pub value: String,
}

/// What an open prompt asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromptKind {
    /// A number typed into a one-line input (the threshold).
    Number,
    /// A model chosen from Pi's model registry (`provider/model`).
    Model,
}

impl PromptKind {
    /// `number` or `model`, in the JSON a host reads.
    pub fn as_str(self) -> &'static str {
        match self {
            PromptKind::Number => "number",
            PromptKind::Model => "model",
        }
    }
}

/// An open prompt over the Advanced tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptView {
    /// What it asks for.
    pub kind: PromptKind,
    /// Its title (`Threshold`, `Decision model`).
    pub title: &'static str,
    /// One line on what to type or choose.
    pub help: &'static str,
    /// The value it starts from (the saved one).
    pub value: String,
    /// Why the last value typed was refused, in one line.
    pub error: Option<String>,
    /// The line shown when a model list is empty.
    pub empty: &'static str,
    /// The key hints.
    pub hints: Vec<Hint>,
}

/// The dialog as data. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabView {
    /// The title (`Decisions · Tools`).
    pub title: &'static str,
    /// The rows, in order.
    pub rows: Vec<ViewRow>,
    /// The row under the cursor.
    pub cursor: usize,
    /// The help of the row under the cursor.
    pub help: String,
    /// Notes under the help.
    pub notes: Vec<String>,
    /// A message (a failed write, a row that is only shown).
    pub status: Option<String>,
    /// The key hints.
    pub hints: Vec<Hint>,
    /// An open allowlist editor's own lines without its key hints (drawn by ui-text, to the
    /// width given).
    pub editor: Option<Vec<String>>,
    /// The open editor's key hints, for the host to spell with its key bindings below
    /// [`TabView::editor`]'s lines (empty without an editor).
    pub editor_hints: Vec<Hint>,
    /// An open prompt.
    pub prompt: Option<PromptView>,
}

/// The threshold prompt's words.
pub(crate) const THRESHOLD_TITLE: &str = "Threshold";
pub(crate) const THRESHOLD_HELP: &str =
    "A score from 0 to 1, up to three decimals (for example 0.625).";
/// The model picker's words.
pub(crate) const MODEL_TITLE: &str = "Decision model";
pub(crate) const MODEL_HELP: &str =
    "One of Pi's models with a configured key; it scores the tools and groups.";
pub(crate) const NO_MODELS: &str =
    "Pi has no model with a configured key; add one with /login, then reopen this tab.";

/// `text` as a threshold: a number in [0, 1] with at most three decimals, or the one-line
/// error to show under the input.
///
/// ```
/// use pcd_ui_text::parse_threshold;
/// assert_eq!(parse_threshold(" 0.625 "), Ok(0.625));
/// assert_eq!(parse_threshold("1"), Ok(1.0));
/// assert!(parse_threshold("0.6251").is_err());
/// assert!(parse_threshold("1.5").is_err());
/// ```
pub fn parse_threshold(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let refuse = || {
        Err(format!(
            "`{}` is not a threshold: type a number from 0 to 1 with at most three decimals, such as 0.625.",
            crate::words::fit(&crate::display::display_safe(text), 24)
        ))
    };
    let (whole, decimals) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if text.is_empty()
        || !digits(whole)
        || !digits(decimals)
        || (whole.is_empty() && decimals.is_empty())
        || decimals.trim_end_matches('0').len() > 3
    {
        return refuse();
    }
    match text.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok((v * 1000.0).round() / 1000.0),
        _ => refuse(),
    }
}

/// Hints spelled as the words alone, broken between hints (never inside one) into lines of at
/// most `max` cells, separated by ` · `. A host that spells the keys does its own layout; this
/// is for lines ui-text draws itself.
pub(crate) fn hint_lines(hints: &[String], max: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for hint in hints {
        let sep = if line.is_empty() { "" } else { " · " };
        if !line.is_empty() && width(&line) + width(sep) + width(hint) > max {
            lines.push(std::mem::take(&mut line));
        }
        if line.is_empty() {
            if width(hint) > max {
                lines.extend(wrap(hint, max));
                continue;
            }
            line.push_str(hint);
        } else {
            line.push_str(" · ");
            line.push_str(hint);
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_take_three_decimals_within_zero_and_one() {
        for (text, value) in [
            ("0", 0.0),
            ("1", 1.0),
            ("1.000", 1.0),
            ("0.625", 0.625),
            (".5", 0.5),
            ("0.6250", 0.625),
            ("0.001", 0.001),
        ] {
            assert_eq!(parse_threshold(text), Ok(value), "{text}");
        }
        for text in [
            "", "-0.1", "1.001", "0.6251", "abc", "0.5.1", "1e-1", "NaN", "inf", ".", "+0.5", "0,5",
        ] {
            let error = parse_threshold(text).unwrap_err();
            assert!(error.contains("from 0 to 1"), "{text}: {error}");
            assert!(!error.contains('\n'), "one line");
        }
        // A hostile text is shown safe and short.
        let error =
            parse_threshold("\u{1b}[31m0.5\u{202E}aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa").unwrap_err();
        assert!(
            !error.contains('\u{1b}') && !error.contains('\u{202E}'),
            "{error}"
        );
        assert!(width(&error) < 120, "{error}");
    }

    #[test]
    fn hints_break_between_hints() {
        let hints: Vec<String> = [
            "↑↓ move",
            "Enter change (saved at once)",
            "Tab Advanced",
            "Esc close",
        ]
        .map(str::to_owned)
        .to_vec();
        assert_eq!(
            hint_lines(&hints, 60),
            [
                "↑↓ move · Enter change (saved at once) · Tab Advanced",
                "Esc close"
            ]
        );
        assert_eq!(hint_lines(&hints, 200).len(), 1);
        for line in hint_lines(&hints, 10) {
            assert!(width(&line) <= 10, "{line}");
        }
    }
}
