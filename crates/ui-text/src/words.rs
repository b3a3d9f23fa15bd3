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
