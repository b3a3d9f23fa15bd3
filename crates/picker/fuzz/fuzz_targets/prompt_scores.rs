//! Fuzzes the embedded scorer on what every user turn and every third-party tool brings: a
//! prompt (pasted logs, code, any script) and the candidates' names and descriptions. Never a
//! panic, and:
//! - the prompt's texts are one to three, the first what a request carries of it, its web
//!   addresses read as the pages they name (`text::links_as_pages`);
//! - the prompt read without a paste is some of its words, in order, and never all of it;
//! - the prompt read without what it quotes is shorter, and each of its words is in the prompt;
//! - the lexical scores and the evidence are one per candidate, every score in [0, 1], and the
//!   scores as the fusion reads them (`lexical_as_fitted`) keep their order and their zeros;
//! - the fused scores (both modes' shipped calibrations, with cosines and a need gate's logit
//!   that may be anything, NaN and infinities included) are one per candidate, in [0, 1], and
//!   never rise down the fused ranking: a candidate with more fused evidence never scores lower.
//!
//! Input: the prompt, then up to eight candidates, each `name<TAB>description`, separated by
//! NUL; the prompt's last bytes also give the cosines and the gate's logit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcd_model::Mode;
use pcd_picker::candidates::Candidate;
use pcd_picker::semantic::{fused_scores, lexical_as_fitted, FusedCalibration};
use pcd_picker::{embedded, request, text};

/// A value from one byte, the edges among them: NaN, both infinities, and -1 to 1 otherwise.
fn value(byte: u8) -> f64 {
    match byte {
        255 => f64::NAN,
        254 => f64::INFINITY,
        253 => f64::NEG_INFINITY,
        b => f64::from(b) / 126.0 - 1.0,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = input.split('\0');
    let prompt = parts.next().unwrap_or("");
    let candidates: Vec<Candidate> = parts
        .take(8)
        .enumerate()
        .map(|(i, part)| {
            let (name, description) = part.split_once('\t').unwrap_or((part, ""));
            Candidate::tool(name, description, i)
        })
        .collect();

    let latest = request::latest_text(prompt);
    let texts = embedded::prompt_texts(prompt);
    assert!((1..=3).contains(&texts.len()), "{} texts", texts.len());
    // The first text is what a request carries, its web addresses read as the pages they name.
    assert_eq!(texts[0], text::links_as_pages(latest));
    if let Some(request) = text::without_paste(latest) {
        assert!(request.len() < latest.trim().len());
        let mut words = latest.split_whitespace();
        for kept in request.split_whitespace() {
            let kept = kept.trim_matches(|c| matches!(c, ':' | ',' | ';' | '-'));
            assert!(words.any(|w| w.contains(kept)), "{kept:?} is not in order");
        }
    }

    if let Some(rest) = text::without_quoted(latest) {
        assert!(rest.len() < latest.len());
        for word in rest.split_whitespace() {
            assert!(latest.contains(word), "{word:?} is not in the prompt");
        }
    }

    let index = embedded::index_for(&[], &candidates);
    let raw = index.scores(prompt);
    assert_eq!(raw.len(), candidates.len());
    assert!(raw.iter().all(|s| (0.0..=1.0).contains(s)), "{raw:?}");
    assert_eq!(index.candidate_evidence(prompt).len(), candidates.len());

    let tail = prompt.as_bytes();
    let byte = |i: usize| {
        tail.get(tail.len().wrapping_sub(1 + i))
            .copied()
            .unwrap_or(0)
    };
    let cosines: Vec<f64> = (0..candidates.len()).map(|i| value(byte(i))).collect();
    let need = (byte(8) % 3 != 0).then(|| 20.0 * value(byte(9)));
    for mode in [Mode::Tools, Mode::Mcp] {
        // As the fusion reads them: the same order, a 0 still 0, all in [0, 1].
        let lexical = lexical_as_fitted(&raw, mode);
        for (&l, &r) in lexical.iter().zip(&raw) {
            assert!(
                (0.0..=1.0).contains(&l) && (r != 0.0 || l == 0.0),
                "{r} read as {l}"
            );
            assert!(
                raw.iter()
                    .zip(lexical.iter())
                    .all(|(&q, &m)| !(q < r && m > l)),
                "{raw:?} read as {lexical:?}"
            );
        }
        let calibration = FusedCalibration::shipped(mode);
        let scores = fused_scores(&lexical, &cosines, need, byte(10) % 2 == 0, &calibration);
        assert_eq!(scores.len(), candidates.len());
        assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)), "{scores:?}");
        let fused: Vec<f64> = lexical
            .iter()
            .zip(&cosines)
            .map(|(&l, &c)| calibration.fused_evidence(l, c))
            .collect();
        for i in 0..fused.len() {
            for j in 0..fused.len() {
                if fused[i] > fused[j] {
                    assert!(scores[i] >= scores[j], "{fused:?} scored {scores:?}");
                }
            }
        }
    }
});
