//! Pi's `tool_search` ranker, reimplemented from its behaviour in Pi 1.3.0
//! (`dist/extensions/tool-search/tool.js`): Okapi BM25 (k1 1.2, b 0.75) over one text per tool
//! made of the name, the name with `_` as spaces, the description, every schema description
//! and property name, and the namespace's name, description and instructions; terms split at
//! camelCase and non-alphanumerics, lowercased, 21 stop words dropped, plurals folded; only
//! positive scores are returned, ties in document order.

use super::{schema_text, split_identifiers, stem, STOP_WORDS};
use serde_json::Value;
use std::collections::HashMap;

/// The peer's terms: ASCII letters and digits only, as its regular expressions do.
pub fn tokenize(text: &str) -> Vec<String> {
    split_identifiers(text)
        .to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty() && !STOP_WORDS.contains(t))
        .map(stem)
        .collect()
}

/// The peer's search text of one raw `getAllTools()` entry.
pub fn document(tool: &Value) -> String {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    let name = s(tool.get("name"));
    let mut parts = vec![
        name.clone(),
        name.replace('_', " "),
        s(tool.get("description")),
    ];
    if let Some(schema) = tool.get("parameters") {
        schema_text(schema, &mut parts, None);
    }
    if let Some(ns) = tool.get("namespace").filter(|v| v.is_object()) {
        parts.push(s(ns.get("name")));
        parts.push(s(ns.get("description")));
        parts.push(s(ns.get("instructions")));
    }
    parts.retain(|p| !p.trim().is_empty());
    parts.join(" ")
}

/// A BM25 index over documents, built once.
pub struct Bm25 {
    counts: Vec<HashMap<String, u32>>,
    lengths: Vec<f64>,
    average: f64,
    df: HashMap<String, usize>,
}

impl Bm25 {
    /// Indexes the documents.
    pub fn new<'a>(documents: impl IntoIterator<Item = &'a str>) -> Bm25 {
        let mut counts = Vec::new();
        let mut lengths = Vec::new();
        let mut df: HashMap<String, usize> = HashMap::new();
        for d in documents {
            let mut c: HashMap<String, u32> = HashMap::new();
            for t in tokenize(d) {
                *c.entry(t).or_default() += 1;
            }
            for t in c.keys() {
                *df.entry(t.clone()).or_default() += 1;
            }
            lengths.push(f64::from(c.values().sum::<u32>()));
            counts.push(c);
        }
        let n = lengths.len() as f64;
        let mut average = lengths.iter().sum::<f64>() / n;
        if !average.is_finite() || average == 0.0 {
            average = 1.0;
        }
        Bm25 {
            counts,
            lengths,
            average,
            df,
        }
    }

    /// Document indices with a positive score, best first, ties in document order.
    pub fn rank(&self, query: &str) -> Vec<usize> {
        let (k1, b) = (1.2, 0.75);
        let mut terms = tokenize(query);
        let mut seen = std::collections::HashSet::new();
        terms.retain(|t| seen.insert(t.clone()));
        let n = self.counts.len() as f64;
        let idf: Vec<f64> = terms
            .iter()
            .map(|t| {
                let f = *self.df.get(t).unwrap_or(&0) as f64;
                (1.0 + (n - f + 0.5) / (f + 0.5)).ln()
            })
            .collect();
        let mut matches: Vec<(usize, f64)> = Vec::new();
        for (i, c) in self.counts.iter().enumerate() {
            let mut score = 0.0;
            for (t, w) in terms.iter().zip(&idf) {
                if let Some(&count) = c.get(t) {
                    let count = f64::from(count);
                    let norm = k1 * (1.0 - b + b * self.lengths[i] / self.average);
                    score += w * (count * (k1 + 1.0)) / (count + norm);
                }
            }
            if score > 0.0 {
                matches.push((i, score));
            }
        }
        matches.sort_by(|a, b| b.1.total_cmp(&a.1));
        matches.into_iter().map(|(i, _)| i).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizes_like_pi() {
        assert_eq!(
            tokenize("getHTTPResponse of the issues"),
            ["get", "http", "response", "issue"]
        );
        assert_eq!(tokenize("searches boxes class"), ["search", "box", "class"]);
        assert_eq!(tokenize("Tôi cần"), ["t", "i", "c", "n"]);
    }

    #[test]
    fn documents_include_schema_text_and_namespace() {
        let tool = serde_json::json!({
            "name": "gh_issue", "description": "Issues",
            "parameters": {"type": "object", "properties": {"repo": {"description": "Repository"}}},
            "namespace": {"name": "mcp__gh", "instructions": "Use carefully"}
        });
        assert_eq!(
            document(&tool),
            "gh_issue gh issue Issues repo Repository mcp__gh Use carefully"
        );
    }

    #[test]
    fn ranks_by_bm25_and_drops_non_matches() {
        let idx = Bm25::new(["weather forecast", "send email", "weather weather radar"]);
        assert_eq!(idx.rank("weather"), vec![2, 0]);
        assert!(idx.rank("haiku").is_empty());
    }
}
