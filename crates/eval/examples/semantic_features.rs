//! Dumps, for every prompt of an evaluation set, the lexical scorer's score and evidence and the
//! semantic cosine of every candidate, one JSON line per prompt, for fitting the fused
//! calibration (`crates/picker/data/decision_policy.py`).
//!
//! Each line also carries the prompt's own vector (`prompt_vector`), for fitting the need gate
//! and the decision policy (`crates/picker/data/decision_policy.py`).
//!
//! Each candidate carries its label, and, for a group of two or more tools, the cosine of each
//! member name's own vector (`member_cosines`: what `semantic::candidate_texts` embeds).
//!
//! A prompt is read as the program reads it: its texts (`embedded::prompt_texts`: the whole
//! prompt, its first and last paragraph, or the prompt without a paste) encoded in one pass
//! (`MiniLm::embed_prompt`), each candidate's cosine its best over them; `prompt_vector` is the
//! first text's, which the need gate reads. So `decision_policy.py`'s figures on these dumps are
//! `eval`'s.
//!
//! `cargo run --release -p pcd-eval --example semantic_features -- SET_DIR tools|mcp MODEL_DIR > out.jsonl`

#![allow(clippy::print_stderr)] // a development tool: timings go to stderr

use pcd_eval::EvalSet;
use pcd_model::{Allowlists, Classifier, Mode};
use pcd_picker::candidates::{candidates, Available};
use pcd_picker::{embedded, semantic};
use serde_json::json;
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args[1].ends_with(".jsonl") {
        let (model_dir, files) = args[1..].split_last().expect("files and a model folder");
        return prompt_vectors(files, model_dir);
    }
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
    let start = std::time::Instant::now();
    let vectors: Vec<Vec<f32>> = cset
        .candidates
        .iter()
        .map(|c| {
            // A tool's texts joined into its one vector; a group's whole text here, its member
            // names' below.
            let texts = match mode {
                Mode::Tools => semantic::candidate_texts(c),
                Mode::Mcp => vec![semantic::candidate_text(c)],
            };
            let parts: Vec<Vec<f32>> = texts.iter().map(|t| model.embed(t).unwrap()).collect();
            semantic::joined_vector(mode, &parts)
        })
        .collect();
    eprintln!(
        "{} candidates embedded in {:?}",
        vectors.len(),
        start.elapsed()
    );
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
    // Each group member's name as words, embedded on its own (what `mcp` mode's request
    // carries of a member), for scoring a group by its best member.
    let member_vectors: Vec<Vec<Vec<f32>>> = cset
        .candidates
        .iter()
        .map(|c| {
            if c.names.len() < 2 {
                return Vec::new();
            }
            c.names
                .iter()
                .map(|n| model.embed(&semantic::name_words(n)).unwrap())
                .collect()
        })
        .collect();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let every = args
        .get(4)
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(1);
    let start = std::time::Instant::now();
    let mut prompts = 0;
    for (kind, qs) in [("query", &set.queries), ("irrelevance", &set.irrelevance)] {
        for (n, q) in qs.iter().enumerate() {
            let split = if pcd_eval::in_split(&q.id, pcd_eval::Split::Tune) {
                "tune"
            } else {
                "test"
            };
            if split == "tune" && n % every != 0 {
                continue;
            }
            prompts += 1;
            // The prompt's texts as the program reads them (`embedded::prompt_texts`: the whole
            // prompt, then its first and last paragraph or the prompt without a paste), encoded
            // in one pass as `MiniLm::embed_prompt` does; the need gate reads the first.
            let texts = embedded::prompt_texts(&q.prompt);
            let refs: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
            let prompt_vectors = model.embed_prompt(&refs).unwrap();
            let p = &prompt_vectors[0];
            let lexical = index.scores(&q.prompt);
            let ev = index.candidate_evidence(&q.prompt);
            // The cosines read each text's vector as the adapter moves it, and a candidate keeps
            // its best over the texts (`semantic::cosines`); a group's mixes its whole text's
            // with its best member name's, so its `cosine` and `member_cosines` are the text's
            // whose mix is best (the fit mixes them again).
            let adapted: Vec<Vec<f32>> = prompt_vectors
                .iter()
                .map(|v| semantic::adapted_prompt(v))
                .collect();
            let read = |i: usize, a: &[f32]| {
                let whole = semantic::cosine(a, &vectors[i]);
                let members: Vec<f64> = member_vectors[i]
                    .iter()
                    .map(|v| semantic::cosine(a, v))
                    .collect();
                let best = members.iter().copied().reduce(f64::max);
                (semantic::mixed_cosine(whole, best), whole, members)
            };
            let best_read: Vec<(f64, f64, Vec<f64>)> = (0..ev.len())
                .map(|i| {
                    adapted
                        .iter()
                        .map(|a| read(i, a))
                        .reduce(|x, y| if y.0 > x.0 { y } else { x })
                        .expect("a prompt has at least one text")
                })
                .collect();
            // Every candidate's fused evidence as the policy reads it, for its mean and spread
            // over the whole inventory: how far a candidate stands out from the rest.
            let calibration = semantic::FusedCalibration::shipped(mode);
            let all_fused: Vec<f64> = (0..ev.len())
                .map(|i| calibration.fused_evidence(lexical[i], best_read[i].0))
                .collect();
            let count = all_fused.len().max(1) as f64;
            let fused_mean = all_fused.iter().sum::<f64>() / count;
            let fused_std = (all_fused
                .iter()
                .map(|f| (f - fused_mean).powi(2))
                .sum::<f64>()
                / count)
                .sqrt();
            // The fused ranking (ties in candidate order), as `semantic::fused_scores` ranks: a
            // candidate's place in it is the calibration's rank term.
            let mut order: Vec<usize> = (0..ev.len()).collect();
            order.sort_by(|&a, &b| all_fused[b].total_cmp(&all_fused[a]).then(a.cmp(&b)));
            order.truncate(40);
            let cands: Vec<_> = order
                .iter()
                .map(|&i| {
                    json!({
                        "members": names[i],
                        "label": cset.candidates[i].label,
                        "member_cosines": best_read[i].2,
                        "lexical": lexical[i],
                        "cosine": best_read[i].1,
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
                "split": split,
                "candidates_total": ev.len(),
                "fused_mean": fused_mean,
                "fused_std": fused_std,
                "local_file": embedded::names_a_file(&q.prompt),
                "candidates": cands,
                // The prompt's own vector, for fitting the need gate (`need_gate.py`).
                "prompt_vector": p.iter().map(|x| (x * 1e5).round() / 1e5).collect::<Vec<f32>>(),
            });
            writeln!(out, "{line}").unwrap();
        }
    }
    eprintln!("{prompts} prompts in {:?}", start.elapsed());
}

/// `semantic_features -- PROMPTS.jsonl [MORE.jsonl ...] MODEL_DIR`: every line's prompt vector,
/// file after file, with its id and `external` label (`crates/picker/data/need-prompts.jsonl`;
/// none in the training sets' `queries.jsonl`, whose every prompt asks for a tool), for fitting
/// the need gate. Each vector is the first of the prompt's texts as the program encodes them
/// (`MiniLm::embed_prompt`): of a prompt with more than one text, the whole prompt within a share
/// of the token bound.
fn prompt_vectors(files: &[String], model_dir: &str) {
    let model = pcd_embed::MiniLm::load(std::path::Path::new(model_dir)).expect("model loads");
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("the file reads"))
        .collect();
    for line in texts.iter().flat_map(|t| t.lines()) {
        let Ok(q) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        // The first of the prompt's texts as the program encodes them, what the gate reads.
        let texts = embedded::prompt_texts(q["prompt"].as_str().unwrap_or(""));
        let refs: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
        let p = model.embed_prompt(&refs).unwrap().swap_remove(0);
        let v: Vec<f32> = p.iter().map(|x| (x * 1e5).round() / 1e5).collect();
        // The shipped gate's logit too, so the fit can check it computes the same.
        let need = pcd_picker::semantic::need_logit(&p);
        let line = json!({"id": q["id"], "external": q["external"], "kind": q["kind"], "need_logit": need, "prompt_vector": v});
        writeln!(out, "{line}").unwrap();
    }
}
