//! A JSON parser with the semantics of JavaScript's `JSON.parse` where Pi's loader depends on them,
//! so the reader accepts and rejects exactly the files Pi does:
//!
//! - numbers are `f64` and overflow to infinity (`1e400` is accepted, as in JavaScript, where
//!   `serde_json` rejects the whole file);
//! - strings keep lone surrogates (`"\ud800"` is accepted; keys that differ only in lone
//!   surrogates stay distinct), stored as WTF-8;
//! - duplicate keys keep their first position and take the last value;
//! - nesting has no depth limit and never recurses (the parser keeps an explicit stack), yet only
//!   the first [`KEEP_LEVELS`] levels keep their children: Pi's validation never looks deeper, so
//!   deeper containers are checked for syntax and kept empty, which also bounds memory and drops.
//!
//! Values live only inside the reader and are never part of its output.

use std::borrow::Cow;

/// How many container levels keep their children: the top level, `mcpServers`, a server, and a
/// server's fields (`oauth`, `toolExposure`, `headers`, `args`, …), whose members are checked by
/// type and, for strings, by content.
pub(crate) const KEEP_LEVELS: usize = 4;

/// A JavaScript string as WTF-8: UTF-8 that may also hold lone surrogates.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct JsString<'a>(Cow<'a, [u8]>);

impl JsString<'_> {
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The string as a USVString (lone surrogates become U+FFFD), which is what JavaScript's URL
    /// parser sees.
    pub(crate) fn to_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }

    pub(crate) fn is(&self, s: &str) -> bool {
        *self.0 == *s.as_bytes()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The string when it is valid UTF-8 (no lone surrogate).
    pub(crate) fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }
}

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value<'a> {
    Null,
    Bool(bool),
    Number(f64),
    String(JsString<'a>),
    Array(Vec<Value<'a>>),
    Object(Object<'a>),
}

impl<'a> Value<'a> {
    /// JavaScript truthiness.
    pub(crate) fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::String(s) => !s.is_empty(),
            Value::Array(_) | Value::Object(_) => true,
        }
    }

    pub(crate) fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    pub(crate) fn as_js_str(&self) -> Option<&JsString<'a>> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn is_str(&self, s: &str) -> bool {
        self.as_js_str().is_some_and(|v| v.is(s))
    }
}

pub(crate) use pcd_model::fnv::FnvMap;

/// Objects up to this size merge duplicate keys as they are parsed; larger ones (`mcpServers`)
/// merge them once when they close, with a hash map, so parsing stays linear.
const MERGE_ON_INSERT_UP_TO: usize = 16;

/// A JSON object: entries in first-insertion order, a duplicate key replacing the value in place.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Object<'a> {
    entries: Vec<(JsString<'a>, Value<'a>)>,
}

impl<'a> Object<'a> {
    fn position(&self, key: &[u8]) -> Option<usize> {
        self.entries.iter().position(|(k, _)| *k.0 == *key)
    }

    /// Sets `key`, keeping the position of an existing entry (JavaScript's `[[Set]]` on an own
    /// data property, as `JSON.parse` and object spread do).
    pub(crate) fn insert(&mut self, key: JsString<'a>, value: Value<'a>) {
        if let Some(i) = self.position(&key.0) {
            self.entries[i].1 = value;
        } else {
            self.entries.push((key, value));
        }
    }

    /// Appends while parsing; [`Object::finish`] merges duplicates of large objects afterwards.
    fn push_parsed(&mut self, key: JsString<'a>, value: Value<'a>) {
        if self.entries.len() < MERGE_ON_INSERT_UP_TO {
            self.insert(key, value);
        } else {
            self.entries.push((key, value));
        }
    }

    fn finish(mut self) -> Object<'a> {
        if self.entries.len() <= MERGE_ON_INSERT_UP_TO {
            return self;
        }
        let mut first: FnvMap<&[u8], usize> =
            FnvMap::with_capacity_and_hasher(self.entries.len(), Default::default());
        // For each entry, the index of the entry whose position it takes (None: its own).
        let mut target: Vec<Option<usize>> = Vec::with_capacity(self.entries.len());
        for (i, (k, _)) in self.entries.iter().enumerate() {
            match first.get(k.0.as_ref()) {
                Some(&j) => target.push(Some(j)),
                None => {
                    first.insert(k.0.as_ref(), i);
                    target.push(None);
                }
            }
        }
        drop(first);
        if target.iter().all(Option::is_none) {
            return self;
        }
        let mut slots: Vec<Option<(JsString<'a>, Value<'a>)>> =
            self.entries.drain(..).map(Some).collect();
        for i in 0..slots.len() {
            if let Some(j) = target[i] {
                if let Some((_, value)) = slots[i].take() {
                    if let Some(slot) = slots[j].as_mut() {
                        slot.1 = value;
                    }
                }
            }
        }
        self.entries = slots.into_iter().flatten().collect();
        self
    }

    /// The value of `key` (`undefined` in JavaScript when `None`).
    pub(crate) fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.position(key.as_bytes()).map(|i| &self.entries[i].1)
    }

    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.position(key.as_bytes()).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The entries in insertion order (the order of the JSON text, duplicates merged).
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&JsString<'a>, &Value<'a>)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The entries in JavaScript's property order (`Object.entries`): canonical array-index keys
    /// (`0` to `4294967294`, no leading zero) ascending, then the other keys in insertion order.
    pub(crate) fn js_entries(&self) -> Vec<(&JsString<'a>, &Value<'a>)> {
        let mut indexed: Vec<(u32, usize)> = Vec::new();
        let mut named: Vec<usize> = Vec::with_capacity(self.entries.len());
        for (i, (k, _)) in self.entries.iter().enumerate() {
            match array_index(k.as_bytes()) {
                Some(n) => indexed.push((n, i)),
                None => named.push(i),
            }
        }
        indexed.sort_unstable();
        indexed
            .into_iter()
            .map(|(_, i)| i)
            .chain(named)
            .map(|i| (&self.entries[i].0, &self.entries[i].1))
            .collect()
    }
}

/// The value of a canonical array-index key: `0`, or digits without a leading zero, at most
/// 2^32 - 2.
fn array_index(key: &[u8]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || !key.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if key.len() > 1 && key[0] == b'0' {
        return None;
    }
    let n: u64 = key
        .iter()
        .fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0'));
    (n <= 4_294_967_294).then_some(n as u32)
}

/// Where the text stopped being JSON: a byte offset, never a piece of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not valid JSON (at byte {offset})")]
pub(crate) struct ParseError {
    pub(crate) offset: usize,
}

enum Frame<'a> {
    Array(Vec<Value<'a>>),
    Object(Object<'a>, JsString<'a>),
}

/// Parses `text` as `JSON.parse` would.
pub(crate) fn parse(text: &str) -> Result<Value<'_>, ParseError> {
    Parser {
        bytes: text.as_bytes(),
        pos: 0,
    }
    .run()
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn err<T>(&self) -> Result<T, ParseError> {
        Err(ParseError { offset: self.pos })
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn expect(&mut self, b: u8) -> Result<(), ParseError> {
        self.skip_ws();
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            self.err()
        }
    }

    fn run(mut self) -> Result<Value<'a>, ParseError> {
        // Kept containers (at most KEEP_LEVELS deep) hold their children; below them only the
        // kind of each open container is tracked (true = object).
        let mut stack: Vec<Frame<'a>> = Vec::new();
        let mut skipped: Vec<bool> = Vec::new();
        'value: loop {
            self.skip_ws();
            // A container here is kept when it is at most KEEP_LEVELS deep; a string when its
            // container is.
            let keep = skipped.is_empty() && stack.len() < KEEP_LEVELS;
            let keep_text = skipped.is_empty() && stack.len() <= KEEP_LEVELS;
            let mut value = match self.peek() {
                Some(b'{') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        Value::Object(Object::default())
                    } else {
                        let key = self.key(keep)?;
                        if keep {
                            stack.push(Frame::Object(Object::default(), key));
                        } else {
                            skipped.push(true);
                        }
                        continue 'value;
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        Value::Array(Vec::new())
                    } else {
                        if keep {
                            stack.push(Frame::Array(Vec::new()));
                        } else {
                            skipped.push(false);
                        }
                        continue 'value;
                    }
                }
                Some(b'"') => Value::String(self.string(keep_text)?),
                Some(b't') => self.literal(b"true", Value::Bool(true))?,
                Some(b'f') => self.literal(b"false", Value::Bool(false))?,
                Some(b'n') => self.literal(b"null", Value::Null)?,
                Some(b'-' | b'0'..=b'9') => Value::Number(self.number()?),
                _ => return self.err(),
            };
            // Hand the finished value to its container, closing containers as they end.
            loop {
                self.skip_ws();
                if let Some(&is_object) = skipped.last() {
                    match self.peek() {
                        Some(b',') => {
                            self.pos += 1;
                            if is_object {
                                self.skip_ws();
                                self.key(false)?;
                            }
                            continue 'value;
                        }
                        Some(b'}') if is_object => {}
                        Some(b']') if !is_object => {}
                        _ => return self.err(),
                    }
                    self.pos += 1;
                    skipped.pop();
                    value = if is_object {
                        Value::Object(Object::default())
                    } else {
                        Value::Array(Vec::new())
                    };
                    continue;
                }
                match stack.last_mut() {
                    None => {
                        if self.pos != self.bytes.len() {
                            return self.err();
                        }
                        return Ok(value);
                    }
                    Some(Frame::Array(items)) => {
                        items.push(value);
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => self.pos += 1,
                            _ => return self.err(),
                        }
                    }
                    Some(Frame::Object(object, key)) => {
                        object.push_parsed(std::mem::take(key), value);
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                *key = self.key(true)?;
                                continue 'value;
                            }
                            Some(b'}') => self.pos += 1,
                            _ => return self.err(),
                        }
                    }
                }
                value = match stack.pop() {
                    Some(Frame::Array(items)) => Value::Array(items),
                    Some(Frame::Object(object, _)) => Value::Object(object.finish()),
                    None => return self.err(),
                };
            }
        }
    }

    /// A key and its colon.
    fn key(&mut self, keep: bool) -> Result<JsString<'a>, ParseError> {
        if self.peek() != Some(b'"') {
            return self.err();
        }
        let key = self.string(keep)?;
        self.expect(b':')?;
        Ok(key)
    }

    fn literal(&mut self, word: &[u8], value: Value<'a>) -> Result<Value<'a>, ParseError> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            self.err()
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<f64, ParseError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return self.err(),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return self.err();
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return self.err();
            }
        }
        // The slice is ASCII by construction; Rust's parser rounds correctly and overflows to
        // infinity, as JavaScript does.
        let text = std::str::from_utf8(&self.bytes[start..self.pos])
            .map_err(|_| ParseError { offset: start })?;
        text.parse::<f64>()
            .map_err(|_| ParseError { offset: start })
    }

    fn hex4(&mut self) -> Result<u16, ParseError> {
        let Some(chunk) = self.bytes.get(self.pos..self.pos + 4) else {
            return self.err();
        };
        let mut n: u16 = 0;
        for &b in chunk {
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => return self.err(),
            };
            n = n * 16 + u16::from(d);
        }
        self.pos += 4;
        Ok(n)
    }

    /// A string starting at its opening quote. With `keep` false it is only checked.
    fn string(&mut self, keep: bool) -> Result<JsString<'a>, ParseError> {
        self.pos += 1;
        let bytes = self.bytes;
        let mut out = Vec::new();
        let mut escaped_before = false;
        loop {
            let start = self.pos;
            while let Some(&b) = bytes.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    if !keep {
                        return Ok(JsString::default());
                    }
                    // Most strings have no escape: borrow them from the text.
                    if !escaped_before {
                        return Ok(JsString(Cow::Borrowed(&bytes[start..self.pos - 1])));
                    }
                    out.extend_from_slice(&bytes[start..self.pos - 1]);
                    return Ok(JsString(Cow::Owned(out)));
                }
                Some(b'\\') => {
                    if keep {
                        out.extend_from_slice(&bytes[start..self.pos]);
                    }
                    escaped_before = true;
                    self.pos += 1;
                    let escaped = match self.peek() {
                        Some(b'"') => b'"',
                        Some(b'\\') => b'\\',
                        Some(b'/') => b'/',
                        Some(b'b') => 0x08,
                        Some(b'f') => 0x0c,
                        Some(b'n') => b'\n',
                        Some(b'r') => b'\r',
                        Some(b't') => b'\t',
                        Some(b'u') => {
                            self.pos += 1;
                            let unit = self.hex4()?;
                            let code = self.after_unit(unit)?;
                            if keep {
                                push_wtf8(&mut out, code);
                            }
                            continue;
                        }
                        _ => return self.err(),
                    };
                    self.pos += 1;
                    if keep {
                        out.push(escaped);
                    }
                }
                // A raw control character or the end of the text.
                _ => return self.err(),
            }
        }
    }

    /// Joins a high surrogate with an escaped low surrogate right after it, as UTF-16 does;
    /// anything else stays a single code unit (a lone surrogate is kept).
    fn after_unit(&mut self, unit: u16) -> Result<u32, ParseError> {
        if (0xD800..0xDC00).contains(&unit)
            && self.bytes.get(self.pos..self.pos + 2) == Some(b"\\u".as_slice())
        {
            let save = self.pos;
            self.pos += 2;
            let low = self.hex4()?;
            if (0xDC00..0xE000).contains(&low) {
                return Ok(0x10000
                    + ((u32::from(unit) - 0xD800) << 10)
                    + (u32::from(low) - 0xDC00));
            }
            self.pos = save;
        }
        Ok(u32::from(unit))
    }
}

/// Appends a code point (a surrogate included) in WTF-8.
fn push_wtf8(out: &mut Vec<u8>, code: u32) {
    match code {
        0..=0x7F => out.push(code as u8),
        0x80..=0x7FF => {
            out.push(0xC0 | (code >> 6) as u8);
            out.push(0x80 | (code & 0x3F) as u8);
        }
        0x800..=0xFFFF => {
            out.push(0xE0 | (code >> 12) as u8);
            out.push(0x80 | ((code >> 6) & 0x3F) as u8);
            out.push(0x80 | (code & 0x3F) as u8);
        }
        _ => {
            out.push(0xF0 | (code >> 18) as u8);
            out.push(0x80 | ((code >> 12) & 0x3F) as u8);
            out.push(0x80 | ((code >> 6) & 0x3F) as u8);
            out.push(0x80 | (code & 0x3F) as u8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj<'v, 'a>(v: &'v Value<'a>) -> &'v Object<'a> {
        v.as_object().unwrap()
    }

    #[test]
    fn scalars_and_containers() {
        assert_eq!(parse(" null ").unwrap(), Value::Null);
        assert_eq!(parse("true").unwrap(), Value::Bool(true));
        assert_eq!(parse("-0.5e1").unwrap(), Value::Number(-5.0));
        assert!(parse("[1,[2]]").unwrap().is_truthy());
        let v = parse(r#"{"a":{"b":[1,"x"]}}"#).unwrap();
        assert!(obj(&v)
            .get("a")
            .unwrap()
            .as_object()
            .unwrap()
            .get("b")
            .is_some());
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        for bad in [
            "",
            " ",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "+1",
            "1e",
            "'a'",
            "\"\t\"",
            "\"\\x\"",
            "\"\\u12\"",
            "nul",
            "{} x",
            "\u{feff}{}",
            "[1 2]",
            "{\"a\" 1}",
            "{1:2}",
            "NaN",
            "Infinity",
            "\"abc",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn numbers_overflow_to_infinity_as_in_javascript() {
        assert_eq!(parse("1e400").unwrap(), Value::Number(f64::INFINITY));
        assert_eq!(parse("-1e400").unwrap(), Value::Number(f64::NEG_INFINITY));
        assert_eq!(parse("1e-400").unwrap(), Value::Number(0.0));
    }

    #[test]
    fn duplicate_keys_in_large_objects() {
        let mut text: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        text.push("\"k3\":\"last\"".into());
        text.push("\"k39\":1".into());
        text.push("\"k3\":\"really last\"".into());
        let text = format!("{{{}}}", text.join(","));
        let v = parse(&text).unwrap();
        let o = obj(&v);
        assert_eq!(o.len(), 40);
        let keys: Vec<_> = o
            .entries()
            .map(|(k, _)| k.to_lossy().into_owned())
            .collect();
        assert_eq!(keys[3], "k3");
        assert!(o.get("k3").unwrap().is_str("really last"));
        assert_eq!(o.get("k39"), Some(&Value::Number(1.0)));
    }

    #[test]
    fn duplicate_keys_keep_first_position_and_last_value() {
        let v = parse(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        let e: Vec<_> = obj(&v)
            .entries()
            .map(|(k, v)| (k.to_lossy().into_owned(), v.clone()))
            .collect();
        assert_eq!(
            e,
            [
                ("a".to_owned(), Value::Number(3.0)),
                ("b".to_owned(), Value::Number(2.0))
            ]
        );
    }

    #[test]
    fn javascript_key_order() {
        let v = parse(r#"{"b":0,"10":0,"a":0,"2":0,"01":0,"4294967295":0,"4294967294":0,"-1":0}"#)
            .unwrap();
        let keys: Vec<_> = obj(&v)
            .js_entries()
            .into_iter()
            .map(|(k, _)| k.to_lossy().into_owned())
            .collect();
        assert_eq!(
            keys,
            ["2", "10", "4294967294", "b", "a", "01", "4294967295", "-1"]
        );
    }

    #[test]
    fn surrogates() {
        let v = parse(r#"{"\ud800":1,"\ud801":2,"\ud83d\ude00":3,"😀":4}"#).unwrap();
        // Two distinct lone surrogates stay two keys; an escaped pair equals the literal.
        assert_eq!(obj(&v).len(), 3);
        assert_eq!(obj(&v).get("😀"), Some(&Value::Number(4.0)));
        let s = parse(r#""a\ud800b""#).unwrap();
        assert_eq!(
            s.as_js_str().unwrap().to_lossy(),
            "a\u{fffd}\u{fffd}\u{fffd}b"
        );
        assert!(s.as_js_str().unwrap().as_str().is_none());
    }

    #[test]
    fn escapes() {
        let v = parse(r#""\"\\\/\b\f\n\r\t\u0041\u00e9""#).unwrap();
        assert!(v.is_str("\"\\/\u{8}\u{c}\n\r\tAé"));
    }

    #[test]
    fn deep_nesting_does_not_recurse_and_keeps_shallow_levels_only() {
        let depth = 100_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(parse(&text).is_ok());
        let text = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        assert!(parse(&text).is_ok());
        let bad = format!("{}{}", "[".repeat(depth), "]".repeat(depth - 1));
        assert!(parse(&bad).is_err());
        let mismatched = format!("{}{}", "[".repeat(10), "}".repeat(10));
        assert!(parse(&mismatched).is_err());
        // Level 5 and deeper are checked but kept empty; level 4 keeps its strings.
        let v = parse(r#"{"a":{"b":{"c":{"d":{"e":1},"s":"kept"}}}}"#).unwrap();
        let c = obj(&v)
            .get("a")
            .and_then(|v| v.as_object()?.get("b"))
            .and_then(|v| v.as_object()?.get("c"))
            .unwrap();
        assert!(c.as_object().unwrap().get("s").unwrap().is_str("kept"));
        let d = obj(&v)
            .get("a")
            .and_then(|v| v.as_object()?.get("b"))
            .and_then(|v| v.as_object()?.get("c"))
            .and_then(|v| v.as_object()?.get("d"))
            .unwrap();
        assert_eq!(d, &Value::Object(Object::default()));
        assert!(parse(r#"{"a":{"b":{"c":{"d":{"e":1,}}}}}"#).is_err());
    }

    #[test]
    fn truthiness() {
        assert!(!Value::Null.is_truthy());
        assert!(!Value::Number(0.0).is_truthy());
        assert!(!Value::Number(f64::NAN).is_truthy());
        assert!(!Value::String(JsString::default()).is_truthy());
        assert!(Value::Array(vec![]).is_truthy());
        assert!(Value::Object(Object::default()).is_truthy());
        assert!(Value::Number(-1.0).is_truthy());
    }
}
