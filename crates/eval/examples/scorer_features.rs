//! Dumps the embedded scorer's evidence for every prompt of an evaluation set, one JSON line per
//! prompt, for fitting the calibration (`crates/picker/data/calibration.py`).
//!
//! `cargo run --release -p pcd-eval --example scorer_features -- SET_DIR tools|mcp > out.jsonl`

use pcd_eval::EvalSet;
use pcd_model::{Allowlists, Classifier, Mode};
use pcd_picker::candidates::{candidates, Available};
use pcd_picker::embedded;
use serde_json::json;
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let mode = if args.get(2).map(String::as_str) == Some("mcp") {
        Mode::Mcp
    } else {
        Mode::Tools
    };
    let set = EvalSet::load(dir).expect("the set loads");
    let cset = candidates(
        &set.tools,
        &Classifier::default(),
        mode,
        &Allowlists::default(),
        &Available::default(),
    );
    let index = embedded::index_for(&set.tools, &cset.candidates);
    let names: Vec<Vec<String>> = cset
        .candidates
        .iter()
        .map(|c| {
            c.members
                .iter()
                .map(|&i| set.tools[i].name.clone())
                .collect()
        })
        .collect();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (kind, qs) in [("query", &set.queries), ("irrelevance", &set.irrelevance)] {
        for q in qs.iter() {
            let ev = index.candidate_evidence(&q.prompt);
            let mut order: Vec<usize> = (0..ev.len()).filter(|&i| ev[i].raw > 0.0).collect();
            order.sort_by(|&a, &b| ev[b].raw.total_cmp(&ev[a].raw));
            order.truncate(30);
            let cands: Vec<_> = order
                .iter()
                .map(|&i| {
                    json!({
                        "members": names[i],
                        "raw": ev[i].raw,
                        "strength": ev[i].strength,
                        "coverage": ev[i].coverage,
                        "name_share": ev[i].name_share,
                    })
                })
                .collect();
            let line = json!({
                "kind": kind,
                "id": q.id,
                "split": if pcd_eval::in_split(&q.id, pcd_eval::Split::Tune) { "tune" } else { "test" },
                "candidates_total": ev.len(),
                "candidates": cands,
            });
            writeln!(out, "{line}").unwrap();
        }
    }
}
