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
