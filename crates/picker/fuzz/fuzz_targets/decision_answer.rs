//! Fuzzes the strict parsing of a decision model's answer: never a panic; every score that comes
//! out is in [0, 1] and belongs to one of the request's candidates, at most once each.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcd_picker::candidates::Candidate;
use pcd_picker::request::{build_requests, parse_answer};

fuzz_target!(|data: &[u8]| {
    let Ok(answer) = std::str::from_utf8(data) else { return };
    let candidates: Vec<Candidate> = ["web_fetch", "bar_chart", "db_query"]
        .iter()
        .enumerate()
        .map(|(i, name)| Candidate::tool(name, &format!("tool {i}"), i))
        .collect();
    for request in build_requests("a prompt", &candidates, 2) {
        if let Ok(scores) = parse_answer(&request, answer) {
            let mut seen = std::collections::HashSet::new();
            for (index, score) in scores {
                assert!((0.0..=1.0).contains(&score));
                assert!(request.ids.iter().any(|(i, _)| *i == index));
                assert!(seen.insert(index));
            }
        }
    }
});
