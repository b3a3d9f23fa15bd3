//! The picker's hot paths: building the embedded index over 10,000 candidates, ranking them for
//! one prompt (per tool, and in `mcp` mode per group over 10,000 member tools), and building the
//! decision requests for 1,000 candidates; what the scorer reads of a long prompt with a paste in
//! it; and reading the table of related words, which the
//! first index of a process pays once.

#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pcd_picker::candidates::{Candidate, CandidateKey};
use pcd_picker::embedded::{self, CandidateText, EmbeddedIndex};
use pcd_picker::related::RelatedWords;
use pcd_picker::request::build_requests;
use pcd_picker::semantic;

const WORDS: &[&str] = &[
    "weather",
    "forecast",
    "email",
    "send",
    "calendar",
    "event",
    "create",
    "delete",
    "update",
    "search",
    "flight",
    "hotel",
    "book",
    "ride",
    "stock",
    "price",
    "translate",
    "text",
    "file",
    "upload",
    "download",
    "image",
    "resize",
    "database",
    "query",
    "table",
    "issue",
    "pull",
    "request",
    "review",
    "deploy",
    "service",
    "metric",
    "alert",
    "incident",
    "page",
    "user",
    "account",
    "invoice",
    "payment",
    "refund",
    "order",
    "product",
    "inventory",
    "shipment",
    "track",
    "map",
    "route",
    "distance",
    "restaurant",
    "menu",
    "recipe",
    "music",
    "playlist",
    "video",
    "subtitle",
    "news",
    "article",
    "summary",
    "note",
    // Related to prompt words (see `pcd_picker::related`), so ranking also reads related words.
    "mail",
    "messages",
    "airline",
    "flights",
    "hotels",
    "resort",
    "forecasts",
    "rain",
    "conferences",
    "summit",
];

/// Deterministic pseudo-random candidates (a tiny LCG, so the bench needs no dependency).
fn synthetic(n: usize) -> Vec<Candidate> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        WORDS[(state >> 33) as usize % WORDS.len()]
    };
    (0..n)
        .map(|i| {
            let name = format!("{}_{}_{i}", next(), next());
            let description: Vec<&str> = (0..14).map(|_| next()).collect();
            Candidate {
                key: CandidateKey::Tool(name.clone()),
                label: format!("ext-{}", i % 97),
                description: format!("{}.", description.join(" ")),
                names: vec![name],
                members: vec![i],
                definition_chars: 200,
            }
        })
        .collect()
}

/// A unit-length vector from its components.
fn unit(v: impl Iterator<Item = f32>) -> Vec<f32> {
    let v: Vec<f32> = v.collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn texts(c: &[Candidate]) -> impl Iterator<Item = CandidateText<'_>> {
    c.iter().map(|c| CandidateText {
        names: &c.names,
        label: &c.label,
        description: &c.description,
    })
}

fn benches(crit: &mut Criterion) {
    let many = synthetic(10_000);
    crit.bench_function("embedded index build, 10,000 candidates", |b| {
        b.iter(|| EmbeddedIndex::build(texts(black_box(&many))))
    });
    let index = EmbeddedIndex::build(texts(&many));
    let prompt = "Can you check the weather forecast and book a flight and a hotel for the \
                  conference, then send an email with the invoice to the team?";
    crit.bench_function("embedded ranking, 10,000 candidates, one prompt", |b| {
        b.iter(|| {
            let scores = index.scores(black_box(prompt));
            let mut order: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] > 0.0).collect();
            order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
            order
        })
    });
    // A request between two pasted blocks: the prompt and each of its three blocks are scored.
    let pasted = "The deploy failed again:\n\nerror: connection refused at worker.rs:88\n\
                  retrying in 5 seconds\n\nCan you check the weather forecast and book a \
                  flight for the conference?";
    crit.bench_function(
        "embedded ranking, 10,000 candidates, a prompt of three paragraphs",
        |b| b.iter(|| index.scores(black_box(pasted))),
    );
    // `mcp` mode: 10,000 member tools in 100 groups, each group scored by its best members.
    let members = synthetic(10_000);
    let tools: Vec<pcd_model::ToolInfo> = members
        .iter()
        .map(|c| pcd_model::ToolInfo::new(&c.names[0], &c.description, None))
        .collect();
    let groups: Vec<Candidate> = (0..100)
        .map(|g| Candidate {
            key: CandidateKey::Group(pcd_model::GroupKey::for_mcp_server(&format!("server{g}"))),
            label: format!("server{g}"),
            description: String::new(),
            names: Vec::new(),
            members: (g..10_000).step_by(100).collect(),
            definition_chars: 0,
        })
        .collect();
    crit.bench_function(
        "embedded group index build, 10,000 tools in 100 groups",
        |b| b.iter(|| embedded::index_for(black_box(&tools), black_box(&groups))),
    );
    let grouped = embedded::index_for(&tools, &groups);
    crit.bench_function("embedded group ranking, 10,000 tools in 100 groups", |b| {
        b.iter(|| grouped.scores(black_box(prompt)))
    });
    // The fused ranking with cached vectors: the lexical scores, 10,000 cosines of 384
    // dimensions, the need gate, the decision policy's calibration, and the final sort.
    let vectors: Vec<Vec<f32>> = (0..many.len())
        .map(|i| unit((0..384).map(|d| ((i * 31 + d * 17) % 101) as f32 - 50.0)))
        .collect();
    let prompt_vector = unit((0..384).map(|d| ((d * 13) % 29) as f32 - 14.0));
    crit.bench_function(
        "fused ranking, 10,000 candidates with cached vectors, one prompt",
        |b| {
            b.iter(|| {
                let lexical = index.scores(black_box(prompt));
                let scores = semantic::scores_from_vectors(
                    &lexical,
                    std::slice::from_ref(black_box(&prompt_vector)),
                    black_box(&vectors),
                    false,
                    pcd_model::Mode::Tools,
                );
                let mut order: Vec<usize> = (0..scores.len()).collect();
                order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
                order
            })
        },
    );
    crit.bench_function("query adapter, one prompt vector", |b| {
        b.iter(|| semantic::adapted_prompt(black_box(&prompt_vector)))
    });
    // `mcp` mode with the model: 100 groups of 100 members, each group's vector its whole text's
    // then its 100 member names' (10,100 vectors), so each group is also scored by its best
    // member.
    let group_vectors: Vec<Vec<f32>> = (0..100)
        .map(|g| {
            (0..101)
                .flat_map(|m| vectors[(g * 101 + m) % vectors.len()].clone())
                .collect()
        })
        .collect();
    crit.bench_function(
        "fused group ranking, 100 groups of 100 members with cached vectors, one prompt",
        |b| {
            b.iter(|| {
                let lexical = grouped.scores(black_box(prompt));
                semantic::scores_from_vectors(
                    &lexical,
                    std::slice::from_ref(black_box(&prompt_vector)),
                    black_box(&group_vectors),
                    false,
                    pcd_model::Mode::Mcp,
                )
            })
        },
    );
    crit.bench_function("related words table, read once per process", |b| {
        b.iter(|| RelatedWords::parse(black_box(include_str!("../data/related-words.txt"))))
    });
    // What the scorer reads of a prompt at the most a request carries (2,000 characters), typed
    // around a paste at its worst for `text::without_paste`: every word like code, a colon or a
    // quote.
    let pasted = format!(
        "search online for this: {}",
        "'a::b(c) \"x_y:1\" z.rs:9: ".repeat(80)
    );
    let pasted = &pasted[..2_000];
    crit.bench_function("prompt texts, a 2,000-character prompt with a paste", |b| {
        b.iter(|| embedded::prompt_texts(black_box(pasted)))
    });
    // The same bound, every word a web address (`text::links_as_pages` reads each as a page).
    let links =
        "see https://user:pw@docs.example.org:8443/api/v2/limits/index.html?x=1#top ".repeat(40);
    let links = &links[..2_000];
    crit.bench_function(
        "prompt texts, a 2,000-character prompt of web addresses",
        |b| b.iter(|| embedded::prompt_texts(black_box(links))),
    );
    let thousand = synthetic(1_000);
    crit.bench_function("decision requests, 1,000 candidates", |b| {
        b.iter(|| build_requests(black_box(prompt), black_box(&thousand), 50))
    });
}

criterion_group!(picker, benches);
criterion_main!(picker);
