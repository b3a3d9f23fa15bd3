//! Pi's own `tool_search` rankers (`dist/extensions/tool-search/tool.js` in Pi's npm package),
//! reimplemented from their behaviour so that `eval` runs them on the same data in the same loop
//! as the embedded scorer. Both read what Pi's ranker reads, JSON schemas included; the embedded
//! scorer never does.
//!
//! Pi changed the ranker between the oldest release this project supports and the newest one:
//! - [`v1_3`]: Pi 1.3.0, plain Okapi BM25 over one text per tool;
//! - [`v1_6`]: Pi 1.6.0 (the newest release on 2026-11-29), BM25 over the description and schema
//!   text with the name and the namespace as separate fields, ranked by how many query terms a
//!   tool covers before its score.
//!
//! `tests/tests/peer_differential.rs` checks both against the real `tool.js` of those releases.

pub mod v1_3;
pub mod v1_6;

pub use v1_3::{document, tokenize, Bm25};

use serde_json::Value;
use std::collections::HashSet;

/// The 21 stop words both releases drop.
const STOP_WORDS: [&str; 21] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on",
    "or", "that", "the", "this", "to", "with",
];

/// Both releases' identifier boundaries: `([a-z0-9])([A-Z])` and then `([A-Z]+)([A-Z][a-z])`
/// become "$1 $2" (ASCII classes only), so `getHTTPResponse` reads as `get HTTP Response`.
fn split_identifiers(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut spaced = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if i > 0 {
            let p = chars[i - 1];
            let camel = (p.is_ascii_lowercase() || p.is_ascii_digit()) && c.is_ascii_uppercase();
            let acronym = p.is_ascii_uppercase()
                && c.is_ascii_uppercase()
                && chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if camel || acronym {
                spaced.push(' ');
            }
        }
        spaced.push(c);
    }
    spaced
}

/// Both releases' naive singular form, so `issues` matches `issue` and `searches` `search`.
fn stem(term: &str) -> String {
    let n = term.len();
    if n > 4 && term.ends_with("ies") {
        return format!("{}y", &term[..n - 3]);
    }
    if n > 4
        && ["ches", "shes", "sses", "xes", "zes"]
            .iter()
            .any(|s| term.ends_with(s))
    {
        return term[..n - 2].to_owned();
    }
    if n > 3 && term.ends_with('s') && !term.ends_with("ss") {
        return term[..n - 1].to_owned();
    }
    term.to_owned()
}

/// A local JSON pointer (`#`, `#/$defs/Item`) into `root`, as Pi's `resolveSchemaRef` reads it:
/// segments percent-decoded, `~1` as `/` and `~0` as `~`; only objects are returned.
fn resolve_ref<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    if reference != "#" && !reference.starts_with("#/") {
        return None;
    }
    let mut current = root;
    for segment in reference.get(2..).unwrap_or("").split('/') {
        if segment.is_empty() {
            continue;
        }
        let decoded = percent_decode(segment)?;
        let key = decoded.replace("~1", "/").replace("~0", "~");
        current = current.as_object()?.get(&key)?;
    }
    current.is_object().then_some(current)
}

/// `decodeURIComponent`: `None` for a malformed escape, which names nothing.
fn percent_decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Where Pi 1.6.0 follows a schema's local `$ref`s: the root they point into, and the
/// subschemas already reached through one (the root included), each read once.
struct SchemaRefs<'a> {
    root: &'a Value,
    seen: HashSet<*const Value>,
}

impl<'a> SchemaRefs<'a> {
    fn new(root: &'a Value) -> SchemaRefs<'a> {
        SchemaRefs {
            root,
            seen: HashSet::from([root as *const Value]),
        }
    }
}

/// Schema descriptions and property names, recursively, as both releases collect them; with
/// `refs` (Pi 1.6.0) local `$ref`s are followed too, each target once.
fn schema_text<'a>(
    schema: &'a Value,
    parts: &mut Vec<String>,
    mut refs: Option<&mut SchemaRefs<'a>>,
) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let (Some(reference), Some(r)) =
        (obj.get("$ref").and_then(Value::as_str), refs.as_deref_mut())
    {
        if let Some(target) = resolve_ref(reference, r.root) {
            if r.seen.insert(target as *const Value) {
                schema_text(target, parts, Some(r));
            }
        }
    }
    if let Some(d) = obj.get("description").and_then(Value::as_str) {
        parts.push(d.to_owned());
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            parts.push(name.clone());
            schema_text(prop, parts, refs.as_deref_mut());
        }
    }
    if let Some(items) = obj.get("items") {
        schema_text(items, parts, refs.as_deref_mut());
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(variants) = obj.get(key).and_then(Value::as_array) {
            for v in variants {
                schema_text(v, parts, refs.as_deref_mut());
            }
        }
    }
}
