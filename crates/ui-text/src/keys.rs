//! Raw terminal input to editor [`Key`]s, so a host forwards what the terminal sent and never
//! interprets it.
//!
//! Understands the legacy sequences (`ESC [ A`, `ESC O A`, `\r`, `\x7f`, Ctrl+S as `\x13`, …)
//! and the kitty keyboard protocol Pi turns on where the terminal supports it (`ESC [ 115 ; 5 u`
//! for Ctrl+S, `ESC [ 27 u` for Escape, `ESC [ 9 ; 2 u` for Shift+Tab, key-release events, which
//! are dropped). The arrows are `ESC [ A`-`D` (or `ESC O A`-`D`), Tab is `\t` and Shift+Tab
//! `ESC [ Z`. Anything else
//! (function keys, Alt+key, mouse reports) is ignored rather than guessed at.

use crate::editor::Key;

/// The keys in `data`, in order. Pasted text gives one [`Key::Char`] per character.
///
/// ```
/// use pcd_ui_text::{decode_keys, Key};
/// assert_eq!(decode_keys("\x1b[B"), vec![Key::Down]);
/// assert_eq!(decode_keys("\x1b[115;5u"), vec![Key::Save]);
/// assert_eq!(decode_keys("kb "), vec![Key::Char('k'), Key::Char('b'), Key::Space]);
/// ```
pub fn decode_keys(data: &str) -> Vec<Key> {
    let chars: Vec<char> = data.chars().collect();
    let mut keys = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\x1b' {
            match chars.get(i + 1) {
                None => {
                    keys.push(Key::Escape);
                    i += 1;
                }
                Some('[') => {
                    // A CSI sequence: parameters, then one final byte in '@'..='~'.
                    let start = i + 2;
                    let mut end = start;
                    while end < chars.len() && !('@'..='~').contains(&chars[end]) {
                        end += 1;
                    }
                    if end >= chars.len() {
                        // Cut short: nothing usable.
                        return keys;
                    }
                    let params: String = chars[start..end].iter().collect();
                    keys.extend(csi(&params, chars[end]));
                    i = end + 1;
                }
                Some('O') => {
                    match chars.get(i + 2) {
                        Some('A') => keys.push(Key::Up),
                        Some('B') => keys.push(Key::Down),
                        Some('C') => keys.push(Key::Right),
                        Some('D') => keys.push(Key::Left),
                        Some('M') => keys.push(Key::Enter),
                        _ => {}
                    }
                    i += 3;
                }
                // Escape twice, or Alt+key: the first is an Escape only when nothing follows it
                // as a key of its own.
                Some('\x1b') => {
                    keys.push(Key::Escape);
                    i += 1;
                }
                Some(_) => i += 2,
            }
            continue;
        }
        if let Some(key) = plain(c) {
            keys.push(key);
        }
        i += 1;
    }
    keys
}

/// One character outside an escape sequence.
fn plain(c: char) -> Option<Key> {
    match c {
        '\r' | '\n' => Some(Key::Enter),
        '\t' => Some(Key::Tab),
        '\x7f' | '\x08' => Some(Key::Backspace),
        '\x13' => Some(Key::Save),
        ' ' => Some(Key::Space),
        c if c.is_control() => None,
        c => Some(Key::Char(c)),
    }
}

/// A CSI sequence's parameters (`1;5:1`) and final byte.
fn csi(params: &str, last: char) -> Option<Key> {
    let mut fields = params.split(';');
    let first = fields.next().unwrap_or("");
    let modifier_field = fields.next().unwrap_or("");
    let mut modifier_parts = modifier_field.split(':');
    let modifiers: u32 = modifier_parts
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(1);
    // Kitty's event type: 1 press, 2 repeat, 3 release. Releases are not keys.
    if modifier_parts.next() == Some("3") {
        return None;
    }
    let bits = modifiers.saturating_sub(1);
    let (shift, alt, ctrl) = (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
    match last {
        'A' if !alt && !ctrl && !shift => Some(Key::Up),
        'B' if !alt && !ctrl && !shift => Some(Key::Down),
        'C' if !alt && !ctrl && !shift => Some(Key::Right),
        'D' if !alt && !ctrl && !shift => Some(Key::Left),
        'Z' if !alt && !ctrl => Some(Key::BackTab),
        'u' => {
            let code: u32 = first.split(':').next()?.parse().ok()?;
            let c = char::from_u32(code)?;
            if alt {
                return None;
            }
            if ctrl {
                return c.eq_ignore_ascii_case(&'s').then_some(Key::Save);
            }
            match code {
                13 => Some(Key::Enter),
                9 if shift => Some(Key::BackTab),
                9 => Some(Key::Tab),
                27 => Some(Key::Escape),
                127 | 8 => Some(Key::Backspace),
                32 => Some(Key::Space),
                _ if c.is_control() => None,
                // Kitty reports the unshifted key; with Shift, the shifted one is the text.
                _ if shift => Some(Key::Char(c.to_uppercase().next().unwrap_or(c))),
                _ => Some(Key::Char(c)),
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_sequences() {
        assert_eq!(
            decode_keys("\x1b[A\x1b[B\x1bOA\x1bOB\r\n\x7f\x08\x13 "),
            vec![
                Key::Up,
                Key::Down,
                Key::Up,
                Key::Down,
                Key::Enter,
                Key::Enter,
                Key::Backspace,
                Key::Backspace,
                Key::Save,
                Key::Space
            ]
        );
        assert_eq!(decode_keys("\x1b"), vec![Key::Escape]);
        assert_eq!(decode_keys("\x1b\x1b"), vec![Key::Escape, Key::Escape]);
    }

    #[test]
    fn kitty_sequences() {
        assert_eq!(decode_keys("\x1b[115;5u"), vec![Key::Save]);
        assert_eq!(decode_keys("\x1b[83;5u"), vec![Key::Save]);
        assert_eq!(decode_keys("\x1b[27u"), vec![Key::Escape]);
        assert_eq!(decode_keys("\x1b[13u"), vec![Key::Enter]);
        assert_eq!(decode_keys("\x1b[127u"), vec![Key::Backspace]);
        assert_eq!(decode_keys("\x1b[32u"), vec![Key::Space]);
        assert_eq!(decode_keys("\x1b[97u"), vec![Key::Char('a')]);
        assert_eq!(decode_keys("\x1b[97;2u"), vec![Key::Char('A')]);
        assert_eq!(decode_keys("\x1b[1;1:1A"), vec![Key::Up]);
        assert_eq!(
            decode_keys("\x1b[1;1:2B"),
            vec![Key::Down],
            "a repeat is a key"
        );
        assert!(decode_keys("\x1b[1;1:3B").is_empty(), "a release is not");
        assert!(decode_keys("\x1b[115;5:3u").is_empty());
    }

    #[test]
    fn arrows_and_tabs() {
        assert_eq!(
            decode_keys("\x1b[C\x1b[D\x1bOC\x1bOD\x1b[1;1:1C"),
            vec![Key::Right, Key::Left, Key::Right, Key::Left, Key::Right]
        );
        assert_eq!(
            decode_keys("\t\x1b[Z\x1b[9u\x1b[9;2u\x1b[1;2Z"),
            vec![Key::Tab, Key::BackTab, Key::Tab, Key::BackTab, Key::BackTab]
        );
        assert!(
            decode_keys("\x1b[9;1:3u").is_empty(),
            "a release is not a key"
        );
    }

    #[test]
    fn everything_else_is_ignored() {
        for data in [
            "\x1b[3~",
            "\x1bx",
            "\x1b[97;3u",
            "\x1b[99;5u",
            "\x1b[1;5C",
            "\x1b[9;5u",
            "\x01",
            "\x1b[1;5A",
            "\x1b[",
            "\x1b[<0;3;4M",
        ] {
            assert!(decode_keys(data).is_empty(), "{data:?}");
        }
    }

    #[test]
    fn text_and_keys_mix() {
        assert_eq!(
            decode_keys("ab\x1b[Bc"),
            vec![Key::Char('a'), Key::Char('b'), Key::Down, Key::Char('c')]
        );
        assert_eq!(decode_keys("é"), vec![Key::Char('é')]);
    }
}
