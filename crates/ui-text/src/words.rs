//! Small helpers shared by every text: how a third-party name is quoted, how numbers are
//! written, how a line is fitted to a width, and how the allowlists are named.

use crate::display::display_safe;
use pcd_model::{RemedyList, Scope};

/// A name in backticks, made safe to print. A backtick inside the name would end the code span
/// early and let the rest read as prose, so it is shown as `'`.
pub(crate) fn code(name: &str) -> String {
    format!("`{}`", display_safe(name).replace('`', "'"))
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` followed by the singular or plural noun.
pub(crate) fn count(n: u64, singular: &str, plural: &str) -> String {
    format!(
        "{} {}",
        thousands(n),
        if n == 1 { singular } else { plural }
    )
}

/// Roughly how many tokens `chars` characters of definitions take: one token per four
/// characters, rounded up.
pub(crate) fn approx_tokens(chars: u64) -> u64 {
    chars.div_ceil(4)
}

/// The width of a line in terminal cells, as a terminal draws it: a wide CJK character or an
/// emoji takes two columns, a combining mark none (`unicode-width`, the rule Pi's own
/// `visibleWidth` follows for text without escape sequences).
pub(crate) fn width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// The width of one character in cells (a control character counts as none).
fn char_width(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// The longest start of `text` that fits in `max` cells, and the rest.
fn split_at_width(text: &str, max: usize) -> (&str, &str) {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        let w = char_width(c);
        if used + w > max {
            return text.split_at(i);
        }
        used += w;
    }
    (text, "")
}

/// `text` cut to at most `max` cells, ending in `…` when something was cut (a wide character
/// that would straddle the edge is left out whole).
pub(crate) fn fit(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = split_at_width(text, max - 1).0.to_owned();
    out.push('…');
    out
}

/// `text` broken into lines of at most `max` cells at spaces; a word longer than a line is
/// cut (between characters, never inside a wide one). Always at least one line.
pub(crate) fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word = word.to_owned();
        loop {
            let sep = usize::from(!line.is_empty());
            if width(&line) + sep + width(&word) <= max {
                if sep == 1 {
                    line.push(' ');
                }
                line.push_str(&word);
                break;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            if max == 0 {
                break;
            }
            // A word longer than a whole line: cut it.
            let (head, rest) = split_at_width(&word, max);
            if head.is_empty() {
                // A wide character in a one-cell line: nothing fits; drop it.
                word = word.chars().skip(1).collect();
                if word.is_empty() {
                    break;
                }
                continue;
            }
            let (head, rest) = (head.to_owned(), rest.to_owned());
            word = rest;
            lines.push(head);
            if word.is_empty() {
                break;
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `global` or `project`.
pub(crate) fn scope_word(scope: Scope) -> &'static str {
    scope.as_str()
}

/// The list's name as the Tools tab shows it, in emphasis.
pub(crate) fn list_title(list: RemedyList) -> &'static str {
    match list {
        RemedyList::Tools => "*Always allowed tools*",
        RemedyList::Groups => "*MCP servers & extensions*",
    }
}

/// Where the allowlists are edited.
pub(crate) const TOOLS_TAB: &str = "`/decisions` → Tools tab";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(fit("abcdef", 6), "abcdef");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abcdef", 1), "…");
        assert_eq!(fit("abcdef", 0), "");
        assert_eq!(fit("笔记笔记", 5), "笔记…");
        assert_eq!(
            fit("笔记笔记", 4),
            "笔…",
            "a wide character never straddles the edge"
        );
        assert_eq!(width(&fit("笔记笔记", 4)), 3);
        assert_eq!(fit("🙂🙂🙂", 6), "🙂🙂🙂");
        assert_eq!(fit("🙂🙂🙂", 5), "🙂🙂…");
    }

    #[test]
    fn widths_are_terminal_cells() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("笔记"), 4);
        assert_eq!(width("🙂"), 2);
        assert_eq!(width("e\u{301}"), 1, "a combining mark takes no cell");
        assert_eq!(wrap("笔记笔记笔记", 5), vec!["笔记", "笔记", "笔记"]);
        assert_eq!(wrap("笔", 1), vec![""]);
        for line in wrap("データ 🙂 emoji と 漢字 mixed with words", 7) {
            assert!(width(&line) <= 7, "{line}");
        }
    }

    #[test]
    fn wrap_keeps_every_line_within_the_width() {
        assert_eq!(wrap("a bb ccc", 4), vec!["a bb", "ccc"]);
        assert_eq!(wrap("abcdefgh", 3), vec!["abc", "def", "gh"]);
        assert_eq!(wrap("", 5), vec![""]);
        for w in wrap("one two three four five six seven", 7) {
            assert!(width(&w) <= 7);
        }
    }

    #[test]
    fn code_neutralises_backticks_and_controls() {
        assert_eq!(code("a`b\u{1b}"), "`a'b?`");
    }

    #[test]
    fn tokens_round_up() {
        assert_eq!(approx_tokens(0), 0);
        assert_eq!(approx_tokens(1), 1);
        assert_eq!(approx_tokens(8), 2);
        assert_eq!(approx_tokens(9), 3);
    }
}
