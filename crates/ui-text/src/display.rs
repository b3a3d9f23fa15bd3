//! Making third-party names safe to print.

/// `text` with control, bidi-override and invisible formatting characters replaced by `?`, so a
/// hostile tool or server name cannot reorder or hide what a terminal shows. Nothing is cut.
pub fn display_safe(text: &str) -> String {
    text.chars()
        .map(|c| if is_unsafe(c) { '?' } else { c })
        .collect()
}

fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_controls_and_bidi() {
        assert_eq!(display_safe("ok_name"), "ok_name");
        assert_eq!(display_safe("a\u{1b}[31mb\u{202E}c\u{2066}"), "a?[31mb?c?");
    }
}
