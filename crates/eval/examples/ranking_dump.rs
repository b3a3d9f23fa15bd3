//! Dumps what the fused ranking is computed from, for trying ranking changes offline: a first
//! line with every candidate (members, label, the vectors of its `semantic::candidate_texts`),
//! then one line per prompt (id, split, kind, slice, needs, lexical scores of every candidate,
//! the vectors of `embedded::prompt_texts`, whether it names a file).
//!
//! `cargo run --release -p pcd-eval --example ranking_dump -- SET_DIR tools|mcp MODEL_DIR > out.jsonl`

#![allow(clippy::print_stderr)]

use pcd_eval::EvalSet;
use pcd_model::{Allowlists, Classifier, Mode};
use pcd_picker::candidates::{candidates, Available};
use pcd_picker::{embedded, semantic};
use serde_json::json;
use std::io::Write;

fn round(v: &[f32]) -> Vec<f32> {
    v.iter().map(|x| (x * 1e5).round() / 1e5).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let mode = if args.get(2).map(String::as_str) == Some("mcp") {
        Mode::Mcp
    } else {
        Mode::Tools
    };
    let model = pcd_embed::MiniLm::load(std::path::Path::new(&args[3])).expect("model loads");
    let set = EvalSet::load(dir).expect("the set loads");
    let cset = candidates(
        &set.tools,
        &Classifier::default(),
        mode,
        &Allowlists::default(),
        &Available::default(),
    );
    let index = embedded::index_for(&set.tools, &cset.candidates);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let cands: Vec<_> = cset
        .candidates
        .iter()
        .map(|c| {
            let texts = semantic::candidate_texts(c);
            // Other views of a tool, for trying them: its name as words, its description's
            // first sentence, and both.
            let views: Vec<String> = if c.members.len() == 1 {
                let tool = &set.tools[c.members[0]];
                let words = semantic::name_words(&tool.name);
                let desc = tool.description.clone();
                let first = desc
                    .split_inclusive(". ")
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_owned();
                vec![words.clone(), first.clone(), format!("{words}: {first}")]
            } else {
                Vec::new()
            };
            json!({
                "views": views,
                "view_vectors": views.iter().map(|t| round(&model.embed(t).unwrap())).collect::<Vec<_>>(),
                "members": c.members.iter().map(|&i| set.tools[i].name.clone()).collect::<Vec<_>>(),
                "label": c.label,
                "texts": texts,
                "vectors": texts.iter().map(|t| round(&model.embed(t).unwrap())).collect::<Vec<_>>(),
            })
        })
        .collect();
    writeln!(out, "{}", json!({ "candidates": cands })).unwrap();
    for (kind, qs) in [("query", &set.queries), ("irrelevance", &set.irrelevance)] {
        for q in qs {
            let split = if pcd_eval::in_split(&q.id, pcd_eval::Split::Tune) {
                "tune"
            } else {
                "test"
            };
            let texts = embedded::prompt_texts(&q.prompt);
            let vectors: Vec<Vec<f32>> = texts
                .iter()
                .map(|t| round(&model.embed(t).unwrap()))
                .collect();
            let line = json!({
                "id": q.id,
                "kind": if kind == "irrelevance" { "irrelevance".to_owned() } else {
                    q.kind.map(|k| format!("{k:?}").to_lowercase()).unwrap_or_else(|| "topical".into())
                },
                "slice": q.slice,
                "split": split,
                "needs": q.needs,
                "lexical": index.scores(&q.prompt),
                "local_file": embedded::names_a_file(&q.prompt),
                "prompt_vectors": vectors,
            });
            writeln!(out, "{line}").unwrap();
        }
    }
}
