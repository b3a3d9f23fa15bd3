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

/// The width of a line under this crate's width rule: one column per Unicode scalar value.
///
/// Every character counts as one column, wide CJK characters and emoji included. It is the
/// rule the property tests check; a terminal that draws a wide character in two columns can
/// show a line up to twice as long, which is why names go through `bound_label` first.
pub(crate) fn width(text: &str) -> usize {
    text.chars().count()
}

/// `text` cut to at most `max` columns, ending in `…` when something was cut.
pub(crate) fn fit(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// `text` broken into lines of at most `max` columns at spaces; a word longer than a line is
/// cut. Always at least one line.
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
            let head: String = word.chars().take(max).collect();
            word = word.chars().skip(max).collect();
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
        assert_eq!(width(&fit("笔记笔记", 3)), 3);
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
