//! JSON text as JavaScript writes it: `JSON.stringify` escapes a lone UTF-16 surrogate (half of
//! an emoji a tool cut in two) as `\udXXX`, which is valid JSON but no Unicode scalar value, so a
//! strict decoder rejects the whole document. Replacing such escapes by `\ufffd` (what a lossy
//! UTF-8 conversion makes of them) lets the rest be read.

/// `text` with every lone surrogate escape (`\uD800`–`\uDFFF` not part of a high-low pair)
/// replaced by `\ufffd`, or `None` when it has none. Other escapes, an escaped backslash before a
/// `u` among them, are kept as they are.
pub fn lone_surrogates_replaced(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let surrogate = |at: usize| -> Option<u16> {
        let hex = text.get(at + 2..at + 6)?;
        (bytes.get(at) == Some(&b'\\') && bytes.get(at + 1) == Some(&b'u'))
            .then(|| u16::from_str_radix(hex, 16).ok())
            .flatten()
            .filter(|v| (0xD800..=0xDFFF).contains(v))
    };
    let mut out: Option<String> = None;
    let (mut i, mut copied) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        match surrogate(i) {
            Some(0xD800..=0xDBFF) if surrogate(i + 6).is_some_and(|low| low >= 0xDC00) => {
                i += 12; // a pair: one character
            }
            Some(_) => {
                let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                o.push_str(&text[copied..i]);
                o.push_str("\\ufffd");
                i += 6;
                copied = i;
            }
            None => i += 2, // any other escape, `\\` included
        }
    }
    let mut out = out?;
    out.push_str(&text[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_the_replacement_character_and_pairs_stay() {
        assert_eq!(lone_surrogates_replaced(r#"{"a":"x"}"#), None);
        assert_eq!(lone_surrogates_replaced(r#""\ud83d\ude00""#), None);
        assert_eq!(
            lone_surrogates_replaced(r#""cut \ud83d here""#).unwrap(),
            r#""cut \ufffd here""#
        );
        assert_eq!(
            lone_surrogates_replaced(r#""\ude00\ud83d""#).unwrap(),
            r#""\ufffd\ufffd""#
        );
        // A high surrogate before another high one, and at the very end.
        assert_eq!(
            lone_surrogates_replaced(r#""\ud83d\ud83d\ude00\ud800"#).unwrap(),
            r#""\ufffd\ud83d\ude00\ufffd"#
        );
        // An escaped backslash before `ud800` is text, not an escape.
        assert_eq!(lone_surrogates_replaced(r#""\\ud800""#), None);
        assert_eq!(
            lone_surrogates_replaced(r#""\\\ud800""#).unwrap(),
            r#""\\\ufffd""#
        );
        // A high surrogate followed by text that merely looks like a low one's escape is lone.
        assert_eq!(
            lone_surrogates_replaced(r#""\ud83dxudc00""#).unwrap(),
            r#""\ufffdxudc00""#
        );
        // Short or odd escapes are left to the decoder.
        assert_eq!(lone_surrogates_replaced(r#""\ud8"#), None);
        assert_eq!(lone_surrogates_replaced("\\"), None);
        // What comes out decodes, and the text around is intact.
        let fixed = lone_surrogates_replaced(r#"{"d":"é \udc00 ü"}"#).unwrap();
        let v: serde_json::Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["d"], "é \u{FFFD} ü");
    }
}
