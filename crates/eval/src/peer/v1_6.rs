//! Pi 1.6.0's `tool_search` ranker, reimplemented from its behaviour
//! (`dist/extensions/tool-search/tool.js`, `Bm25Ranker` and `createToolSearchDocument`):
//! - a tool's text is its description and its schema descriptions and property names (local
//!   `$ref`s followed once); the name and the namespace (name, description, instructions) are
//!   separate fields;
//! - a query term scores its IDF times 3 when it is in the name, plus 0.5 when it is in the
//!   namespace, plus the Okapi BM25 weight (k1 1.2, b 0.75) of its mentions in the text;
//! - a tool whose whole local name (after the last `__`) is in the query gets a bonus of every
//!   query term's IDF;
//! - tools are ranked by whether the query is exactly their name, then by how many query terms
//!   they match, then by score; ties keep document order; tools that match nothing are left out.
//!
//! Terms are cut at camelCase and at anything that is not a letter, mark or digit, lowercased,
//! 21 stop words dropped, plurals of ASCII words folded. Two approximations, neither of which
//! the evaluation sets reach: text is not NFC-normalised (the sets are), and text in scripts
//! written without spaces is cut at script changes where Pi's `Intl.Segmenter` uses ICU's
//! dictionaries.

use super::{schema_text, split_identifiers, stem, SchemaRefs, STOP_WORDS};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// A query term in the name counts this many times its IDF.
const NAME_WEIGHT: f64 = 3.0;
/// A query term in the namespace counts this many times its IDF.
const NAMESPACE_WEIGHT: f64 = 0.5;
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Combining marks, which `\p{M}` keeps and `char::is_alphanumeric` may not.
fn is_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x0610..=0x061A | 0x064B..=0x065F
        | 0x0900..=0x0903 | 0x093A..=0x094F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF
        | 0x20D0..=0x20FF | 0x302A..=0x302F | 0x3099..=0x309A | 0xFE20..=0xFE2F)
}

/// Scripts written without spaces between words, which the segmenter cuts by dictionary.
fn is_unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF | 0x3040..=0x30FF | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FFFF)
}

/// The ranker's terms of `text`, in order.
pub fn tokenize(text: &str) -> Vec<String> {
    // `.toLowerCase().replace(/[^\p{L}\p{M}\p{N}]+/gu, " ")`.
    let normalized: String = split_identifiers(text)
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || is_mark(c) {
                c
            } else {
                ' '
            }
        })
        .collect();
    let mut words: Vec<&str> = Vec::new();
    for run in normalized.split(' ').filter(|w| !w.is_empty()) {
        if run.is_ascii() {
            words.push(run);
            continue;
        }
        // The segmenter's word boundaries: at script changes between spaced and unspaced text.
        let mut start = 0;
        let mut prev: Option<bool> = None;
        for (i, c) in run.char_indices() {
            let unspaced = is_unspaced(c);
            if prev.is_some_and(|p| p != unspaced) {
                words.push(&run[start..i]);
                start = i;
            }
            prev = Some(unspaced);
        }
        words.push(&run[start..]);
    }
    words
        .into_iter()
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .map(|w| {
            if w.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            {
                stem(w)
            } else {
                w.to_owned()
            }
        })
        .collect()
}

/// What the ranker reads of one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The tool's name.
    pub name: String,
    /// The description, schema descriptions and property names.
    pub text: String,
    /// The namespace's name, description and instructions (empty without a namespace).
    pub namespace_text: String,
}

/// The ranker's document of one raw `getAllTools()` entry.
pub fn document(tool: &Value) -> Document {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut parts = vec![s(tool.get("description"))];
    if let Some(schema) = tool.get("parameters") {
        schema_text(schema, &mut parts, Some(&mut SchemaRefs::new(schema)));
    }
    let namespace_text = match tool.get("namespace").filter(|v| v.is_object()) {
        Some(ns) => [
            s(ns.get("name")),
            s(ns.get("description")),
            s(ns.get("instructions")),
        ]
        .join(" "),
        None => String::new(),
    };
    parts.retain(|p| !p.trim().is_empty());
    Document {
        name: s(tool.get("name")),
        text: parts.join(" "),
        namespace_text,
    }
}

/// `normalizeName`: trimmed, lowercased, every UTF-16 unit that is not `[a-z0-9_$]` as `_`.
fn normalize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.trim().to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    out
}

struct Indexed {
    /// The name as `normalizeName` gives it, for exact-name queries.
    normalized_name: String,
    name_terms: HashSet<String>,
    local_name_terms: Vec<String>,
    text_counts: HashMap<String, u32>,
    text_length: f64,
    namespace_terms: HashSet<String>,
}

/// The ranker over a fixed list of documents (Pi indexes them per search; the ranking is the
/// same).
pub struct Ranker {
    docs: Vec<Indexed>,
    average: f64,
}

impl Ranker {
    /// Indexes the documents.
    pub fn new(documents: impl IntoIterator<Item = Document>) -> Ranker {
        let docs: Vec<Indexed> = documents
            .into_iter()
            .map(|d| {
                let mut text_counts: HashMap<String, u32> = HashMap::new();
                for t in tokenize(&d.text) {
                    *text_counts.entry(t).or_default() += 1;
                }
                let local = d.name.rsplit("__").next().unwrap_or_default();
                let mut local_name_terms: Vec<String> = Vec::new();
                for t in tokenize(local) {
                    if !local_name_terms.contains(&t) {
                        local_name_terms.push(t);
                    }
                }
                Indexed {
                    name_terms: tokenize(&d.name).into_iter().collect(),
                    local_name_terms,
                    text_length: f64::from(text_counts.values().sum::<u32>()),
                    text_counts,
                    namespace_terms: tokenize(&d.namespace_text).into_iter().collect(),
                    normalized_name: normalize_name(&d.name),
                }
            })
            .collect();
        let mut average = docs.iter().map(|d| d.text_length).sum::<f64>() / docs.len() as f64;
        if !average.is_finite() || average == 0.0 {
            average = 1.0;
        }
        Ranker { docs, average }
    }

    /// Document indices of the tools that match, best first.
    pub fn rank(&self, query: &str) -> Vec<usize> {
        let mut terms: Vec<String> = Vec::new();
        for t in tokenize(query) {
            if !terms.contains(&t) {
                terms.push(t);
            }
        }
        if terms.is_empty() || self.docs.is_empty() {
            return Vec::new();
        }
        let n = self.docs.len() as f64;
        let idf: Vec<f64> = terms
            .iter()
            .map(|t| {
                let f = self
                    .docs
                    .iter()
                    .filter(|d| {
                        d.name_terms.contains(t)
                            || d.text_counts.contains_key(t)
                            || d.namespace_terms.contains(t)
                    })
                    .count() as f64;
                (1.0 + (n - f + 0.5) / (f + 0.5)).ln()
            })
            .collect();
        let full_name_bonus: f64 = idf.iter().sum();
        let exact_query = normalize_name(query);
        let exact_suffix = format!("__{exact_query}");
        // (exact, covered, score, index)
        let mut matches: Vec<(bool, usize, f64, usize)> = Vec::new();
        for (i, d) in self.docs.iter().enumerate() {
            let norm = K1 * (1.0 - B + B * d.text_length / self.average);
            let mut score = 0.0;
            let mut covered = 0;
            for (t, w) in terms.iter().zip(&idf) {
                let count = f64::from(d.text_counts.get(t).copied().unwrap_or(0));
                let weight = if d.name_terms.contains(t) {
                    NAME_WEIGHT
                } else {
                    0.0
                } + if d.namespace_terms.contains(t) {
                    NAMESPACE_WEIGHT
                } else {
                    0.0
                } + count * (K1 + 1.0) / (count + norm);
                if weight > 0.0 {
                    covered += 1;
                }
                score += w * weight;
            }
            if score == 0.0 {
                continue;
            }
            let local = &d.local_name_terms;
            if !local.is_empty() && local.iter().all(|t| terms.contains(t)) {
                score += full_name_bonus;
            }
            let name = &d.normalized_name;
            let exact = *name == exact_query || name.ends_with(&exact_suffix);
            matches.push((exact, covered, score, i));
        }
        // A stable sort, as JavaScript's is: ties keep document order.
        matches.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(b.1.cmp(&a.1))
                .then(b.2.partial_cmp(&a.2).unwrap_or(std::cmp::Ordering::Equal))
        });
        matches.into_iter().map(|m| m.3).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokenizes_like_pi_1_6() {
        assert_eq!(
            tokenize("getHTTPResponse of the issues"),
            ["get", "http", "response", "issue"]
        );
        // Letters outside ASCII stay in their words, unstemmed.
        assert_eq!(
            tokenize("Tôi cần chuyến xe"),
            ["tôi", "cần", "chuyến", "xe"]
        );
        assert_eq!(tokenize("don't-stop"), ["don", "t", "stop"]);
    }

    #[test]
    fn documents_keep_name_text_and_namespace_apart_and_follow_local_refs() {
        let tool = json!({
            "name": "gh_issue", "description": "Issues",
            "parameters": {
                "type": "object",
                "properties": {"repo": {"$ref": "#/$defs/Repo"}},
                "$defs": {"Repo": {"description": "Repository", "properties": {"owner": {}}}}
            },
            "namespace": {"name": "mcp__gh", "instructions": "Use carefully"}
        });
        assert_eq!(
            document(&tool),
            Document {
                name: "gh_issue".into(),
                text: "Issues repo Repository owner".into(),
                namespace_text: "mcp__gh  Use carefully".into(),
            }
        );
    }

    #[test]
    fn covering_more_terms_beats_a_higher_score_and_an_exact_name_comes_first() {
        let doc = |name: &str, text: &str| Document {
            name: name.into(),
            text: text.into(),
            namespace_text: String::new(),
        };
        let ranker = Ranker::new([
            doc("window", "Lists windows"),
            doc("capture", "Takes a screenshot of a window"),
            doc("mcp__app__screenshot_window", "Other"),
        ]);
        // `capture` covers both terms in its text; `window` only one, in its name.
        assert_eq!(ranker.rank("screenshot window")[..2], [2, 1]);
        assert_eq!(ranker.rank("app__screenshot_window")[0], 2);
        assert!(ranker.rank("haiku").is_empty());
    }
}
