//! The semantic signal, as pure functions of vectors: what text of a candidate is embedded (only
//! what its decision request carries), the cosine of the prompt's vector with each candidate's,
//! and the fusion of that cosine with the lexical scorer's score into one calibrated score.
//!
//! Vectors come from a [`TextEmbedder`] (texts in, vectors out); the picker never loads a model
//! or reads a file. The host embeds, caches and hands the vectors in.

use crate::candidates::{Candidate, CandidateKey};

/// Texts in, unit-length vectors out. Implemented by the host over the real model
/// (`pcd-embed`), and by tests over anything deterministic.
pub trait TextEmbedder {
    /// The vector of `text`, or `None` when it could not be embedded.
    fn embed(&self, text: &str) -> Option<Vec<f32>>;
}

/// Writes a tool name as words: `mcp__dev_radius__page_oncall` -> `dev radius page oncall`,
/// `getWeatherNow` -> `get weather now`. The `mcp` prefix of Pi's direct MCP tools is dropped.
pub fn name_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if c.is_alphanumeric() {
            let boundary = previous.is_some_and(|p| p.is_lowercase() && c.is_uppercase());
            if boundary && !out.ends_with(' ') {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
        } else if !out.is_empty() && !out.ends_with(' ') {
            out.push(' ');
        }
        previous = Some(c);
    }
    let trimmed = out.trim_end();
    trimmed.strip_prefix("mcp ").unwrap_or(trimmed).to_owned()
}

/// The text of a candidate that is embedded: exactly what its decision request carries. A tool:
/// its name as words, its label and its bounded description. A group (`mcp` mode): its key's
/// and label, the MCP namespace description (empty for an extension), and its bounded
/// member names as words.
pub fn candidate_text(candidate: &Candidate) -> String {
    let mut text = match &candidate.key {
        CandidateKey::Tool(_) => candidate.names.iter().map(|n| name_words(n)).collect(),
        CandidateKey::Group(key) => key.as_str().to_owned(),
    };
    if !candidate.label.is_empty() {
        text.push_str(" (");
        text.push_str(&candidate.label);
        text.push(')');
    }
    if !candidate.description.is_empty() {
        text.push_str(": ");
        text.push_str(&candidate.description);
    }
    if let CandidateKey::Group(_) = candidate.key {
        let names: Vec<String> = candidate.names.iter().map(|n| name_words(n)).collect();
        text.push_str(". Tools: ");
        text.push_str(&names.join(", "));
    }
    text
}

/// The vectors of every candidate's embedded text (only what its decision request carries), or
/// `None` if any could not be embedded: a round is scored by one scorer.
pub fn candidate_vectors(
    embedder: &(impl TextEmbedder + ?Sized),
    candidates: &[Candidate],
) -> Option<Vec<Vec<f32>>> {
    candidates
        .iter()
        .map(|c| embedder.embed(&candidate_text(c)))
        .collect()
}

/// How far a vector's squared length may be from 1 and still count as a unit vector. The
/// model's vectors are normalised in f32 (off by about 1e-7); anything further off did not come
/// from it as it is (a flipped bit in the vector cache, another embedder).
pub const UNIT_TOLERANCE: f32 = 1e-3;

/// Whether `v` is a unit vector within [`UNIT_TOLERANCE`] (and finite).
pub fn is_unit(v: &[f32]) -> bool {
    unit_length(sums(v, v).1)
}

/// Whether a squared length is 1 within [`UNIT_TOLERANCE`] (false for NaN).
fn unit_length(squared: f32) -> bool {
    (squared - 1.0).abs() <= UNIT_TOLERANCE
}

/// `a · b` and `b · b`, each summed in eight lanes (so the compiler can use vector
/// instructions) and the lanes in a fixed order: the same vectors always give the same sums.
/// `a` and `b` have the same length.
fn sums(a: &[f32], b: &[f32]) -> (f32, f32) {
    let (mut ab, mut bb) = ([0.0f32; 8], [0.0f32; 8]);
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (a8.remainder(), b8.remainder());
    for (x, y) in a8.zip(b8) {
        for i in 0..8 {
            ab[i] += x[i] * y[i];
            bb[i] += y[i] * y[i];
        }
    }
    let total = |lanes: [f32; 8]| lanes.iter().sum::<f32>();
    let (mut ab, mut bb) = (total(ab), total(bb));
    for (x, y) in ra.iter().zip(rb) {
        ab += x * y;
        bb += y * y;
    }
    (ab, bb)
}

/// The cosine of `b` with `unit`, a vector already known to be a unit vector: 0 when their
/// lengths differ or `b` is not a unit vector, else their dot product within [-1, 1].
fn cosine_with_unit(unit: &[f32], b: &[f32]) -> f64 {
    if unit.len() != b.len() {
        return 0.0;
    }
    let (ab, bb) = sums(unit, b);
    if !(unit_length(bb) && ab.is_finite()) {
        return 0.0;
    }
    f64::from(ab).clamp(-1.0, 1.0)
}

/// The cosine of two unit vectors (their dot product, within [-1, 1]); 0 when their lengths
/// differ or either is not a unit vector ([`is_unit`]), so a damaged or foreign vector can
/// never make its candidate look like the prompt. The same vectors always give the same cosine.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if !is_unit(a) {
        return 0.0;
    }
    cosine_with_unit(a, b)
}

/// Each candidate's cosine: its best with the prompt's vectors (the texts
/// [`embedded::prompt_texts`](crate::embedded::prompt_texts) gives), each as [`cosine`] has it;
/// 0 with no usable prompt vector. The prompt's vectors are checked once, not per candidate.
pub fn cosines(prompts: &[Vec<f32>], candidates: &[Vec<f32>]) -> Vec<f64> {
    let prompts: Vec<&Vec<f32>> = prompts.iter().filter(|p| is_unit(p)).collect();
    candidates
        .iter()
        .map(|v| {
            prompts
                .iter()
                .map(|p| cosine_with_unit(p, v))
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .map(|c| if c.is_finite() { c } else { 0.0 })
        .collect()
}

/// How much of the lexical score the fused ranking takes; the cosine takes the rest.
pub const LEXICAL_SHARE: f64 = 0.35;

/// How the fused evidence of a candidate, read in the context of its prompt, becomes a score in
/// [0, 1]: a logistic function of its lexical score, its cosine and where it stands in the fused
/// ranking (`LEXICAL_SHARE` of the lexical score plus the rest of the cosine). Fitted by
/// `crates/picker/data/semantic_calibration.py` on the tune halves for the selection at the
/// defaults, as the lexical calibration is; `BENCHMARKS.md` has the figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusedCalibration {
    /// Added to the weighted evidence.
    pub bias: f64,
    /// Weight of the lexical scorer's calibrated score, read as its logit (clamped to
    /// [1e-4, 1 - 1e-4] first), so weight 1 and nothing else is the lexical scorer's decision.
    pub lexical: f64,
    /// Weight of the cosine.
    pub cosine: f64,
    /// Weight of the prompt's best cosine.
    pub best_cosine: f64,
    /// Weight of how far the candidate's cosine is below the best.
    pub cosine_gap: f64,
    /// Weight of the fused score relative to the best fused score.
    pub relative: f64,
    /// Weight of the gap between the best two fused scores.
    pub gap: f64,
    /// Weight of the logarithm of the fused rank.
    pub log_rank: f64,
    /// Weight of "the prompt names a file".
    pub local_file: f64,
    /// Weight of the logarithm of the number of candidates.
    pub log_candidates: f64,
}

impl FusedCalibration {
    /// The number of weights [`FusedCalibration::from_weights`] takes.
    pub const WEIGHTS: usize = 10;

    /// A calibration from its weights in field order (bias first).
    pub fn from_weights(w: [f64; Self::WEIGHTS]) -> FusedCalibration {
        FusedCalibration {
            bias: w[0],
            lexical: w[1],
            cosine: w[2],
            best_cosine: w[3],
            cosine_gap: w[4],
            relative: w[5],
            gap: w[6],
            log_rank: w[7],
            local_file: w[8],
            log_candidates: w[9],
        }
    }
}

impl Default for FusedCalibration {
    fn default() -> Self {
        FusedCalibration::from_weights(SHIPPED_FUSED_CALIBRATION)
    }
}

/// The shipped fused calibration's weights, in [`FusedCalibration::from_weights`] order.
const SHIPPED_FUSED_CALIBRATION: [f64; FusedCalibration::WEIGHTS] = [
    -0.089, 0.745, 0.591, 0.215, -1.798, 0.039, 0.170, 0.832, -0.312, 0.000,
];

/// The candidates in fused order: best first, ties in candidate order.
pub fn fused_order(lexical: &[f64], cosines: &[f64]) -> Vec<usize> {
    let fused: Vec<f64> = lexical
        .iter()
        .zip(cosines)
        .map(|(l, c)| LEXICAL_SHARE * l + (1.0 - LEXICAL_SHARE) * c)
        .collect();
    let mut order: Vec<usize> = (0..fused.len()).collect();
    order.sort_unstable_by(|&a, &b| fused[b].total_cmp(&fused[a]).then(a.cmp(&b)));
    order
}

/// Every candidate's fused score in [0, 1], in candidate order, from the lexical scorer's scores
/// and the cosine of each candidate's vector with the prompt's (both in candidate order) and
/// whether the prompt names a file. Scores never rise down the fused ranking. Pure: the same
/// inputs always give the same scores.
pub fn fused_scores(
    lexical: &[f64],
    cosines: &[f64],
    local_file: bool,
    calibration: &FusedCalibration,
) -> Vec<f64> {
    let n = lexical.len().min(cosines.len());
    let (lexical, cosines) = (&lexical[..n], &cosines[..n]);
    let mut scores = vec![0.0; n];
    if n == 0 {
        return scores;
    }
    let order = fused_order(lexical, cosines);
    let fused = |i: usize| LEXICAL_SHARE * lexical[i] + (1.0 - LEXICAL_SHARE) * cosines[i];
    let best = fused(order[0]);
    let second = order.get(1).map_or(0.0, |&i| fused(i));
    let best_cosine = cosines.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let c = calibration;
    let prompt_part = c.bias
        + c.best_cosine * best_cosine
        + c.gap * (best - second)
        + c.local_file * f64::from(u8::from(local_file))
        + c.log_candidates * (n as f64).ln();
    let mut ceiling = 1.0f64;
    for (rank, &i) in order.iter().enumerate() {
        let relative = if best > 0.0 { fused(i) / best } else { 0.0 };
        let z = prompt_part
            + c.lexical * logit(lexical[i])
            + c.cosine * cosines[i]
            + c.cosine_gap * (best_cosine - cosines[i])
            + c.relative * relative
            + c.log_rank * ((rank + 1) as f64).ln();
        let score = 1.0 / (1.0 + (-z).exp());
        ceiling = score.min(ceiling - crate::embedded::ORDER_STEP).max(0.0);
        scores[i] = ceiling;
    }
    scores
}

/// The shipped fused scores from vectors: each candidate's cosine with the prompt's vectors (the
/// best over the texts [`embedded::prompt_texts`](crate::embedded::prompt_texts) gives), fused
/// with its lexical score ([`fused_scores`] with the shipped calibration). The one place every
/// host (the program, the Session's semantic jobs) turns vectors into scores.
pub fn scores_from_vectors(
    lexical: &[f64],
    prompts: &[Vec<f32>],
    candidates: &[Vec<f32>],
    local_file: bool,
) -> Vec<f64> {
    fused_scores(
        lexical,
        &cosines(prompts, candidates),
        local_file,
        &FusedCalibration::default(),
    )
}

/// The logit of a score, clamped so 0 and 1 stay finite.
fn logit(p: f64) -> f64 {
    let p = p.clamp(1e-4, 1.0 - 1e-4);
    (p / (1.0 - p)).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexical_only() -> FusedCalibration {
        let mut w = [0.0; FusedCalibration::WEIGHTS];
        w[1] = 1.0;
        FusedCalibration::from_weights(w)
    }

    #[test]
    fn weight_one_on_the_lexical_logit_alone_is_the_lexical_decision() {
        // The fused order (0, 2, 1, 3) agrees with the lexical one: the lexical scores come back.
        let lexical = [0.9, 0.2, 0.7, 0.0];
        let cosines = [0.5, 0.2, 0.3, 0.1];
        let fused = fused_scores(&lexical, &cosines, false, &lexical_only());
        for (f, l) in fused.iter().zip(lexical) {
            assert!((f - l.max(1e-4)).abs() < 1e-6, "{fused:?}");
        }
        // Where a candidate the prompt's meaning ranks first has no lexical evidence, it caps
        // the ones below it: scores never rise down the fused ranking.
        let fused = fused_scores(&lexical, &[0.1, 0.2, 0.3, 0.9], false, &lexical_only());
        assert!(fused.iter().all(|&s| s <= 1e-4 + 1e-9), "{fused:?}");
    }

    #[test]
    fn fused_scores_never_rise_down_the_fused_ranking_and_are_deterministic() {
        let lexical: Vec<f64> = (0..50).map(|i| ((i * 37) % 100) as f64 / 100.0).collect();
        let cosines: Vec<f64> = (0..50)
            .map(|i| ((i * 61) % 97) as f64 / 97.0 - 0.3)
            .collect();
        let calibration = FusedCalibration::default();
        let a = fused_scores(&lexical, &cosines, false, &calibration);
        let b = fused_scores(&lexical, &cosines, false, &calibration);
        assert_eq!(a, b);
        let order = fused_order(&lexical, &cosines);
        for pair in order.windows(2) {
            assert!(a[pair[0]] > a[pair[1]] || a[pair[1]] == 0.0, "{pair:?}");
        }
        assert!(a.iter().all(|s| (0.0..=1.0).contains(s)));
        assert!(fused_scores(&[], &[], false, &calibration).is_empty());
    }

    #[test]
    fn a_prompt_that_names_a_file_scores_lower() {
        let calibration = FusedCalibration::default();
        let plain = fused_scores(&[0.8, 0.1], &[0.5, 0.2], false, &calibration);
        let file = fused_scores(&[0.8, 0.1], &[0.5, 0.2], true, &calibration);
        assert!(file[0] < plain[0]);
    }

    #[test]
    fn each_candidate_takes_its_best_cosine_over_the_prompt_texts() {
        let unit = |i: usize| {
            let mut v = vec![0.0f32; 4];
            v[i] = 1.0;
            v
        };
        let candidates = [unit(0), unit(1)];
        let lexical = [0.0, 0.0];
        // The first text matches the first candidate, the second the second: each candidate's
        // cosine is its best, 1 for both.
        let both = scores_from_vectors(&lexical, &[unit(0), unit(1)], &candidates, false);
        let calibration = FusedCalibration::default();
        assert_eq!(
            both,
            fused_scores(&lexical, &[1.0, 1.0], false, &calibration)
        );
        let one = scores_from_vectors(&lexical, &[unit(1)], &candidates, false);
        assert_eq!(
            one,
            fused_scores(&lexical, &[0.0, 1.0], false, &calibration)
        );
        assert!(scores_from_vectors(&lexical, &[], &candidates, false)
            .iter()
            .all(|s| s.is_finite()));
    }

    fn normalised(v: Vec<f32>) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    #[test]
    fn the_cosine_is_the_dot_product() {
        let a = normalised((0..19).map(|i| i as f32 / 10.0).collect());
        let b = normalised((0..19).map(|i| 1.0 - i as f32 / 20.0).collect());
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((cosine(&a, &b) - f64::from(plain)).abs() < 1e-6);
        assert_eq!(cosine(&a, &b[..3]), 0.0);
        assert_eq!(cosine(&a, &a), cosine(&a, &a), "the same sums every time");
        assert!(cosine(&a, &a) <= 1.0);
    }

    /// A vector that is not of unit length (one flipped exponent bit in the vector cache, or
    /// every component scaled) never makes its candidate look like the prompt: its cosine is 0,
    /// where a plain dot product gave it hundreds and the fused score about 1.
    #[test]
    fn a_vector_off_the_unit_sphere_has_no_cosine() {
        let prompt = normalised((0..384).map(|d| ((d * 13) % 29) as f32 - 14.0).collect());
        let honest = normalised(vec![1.0; 384]);
        assert!(is_unit(&prompt) && is_unit(&honest));
        let scaled: Vec<f32> = honest.iter().map(|x| x * 10.0).collect();
        let mut flipped = honest.clone();
        flipped[7] = f32::from_bits(flipped[7].to_bits() | 0x4000_0000);
        assert!(flipped[7].is_finite() && flipped[7] > 1e30);
        let mut nan = honest.clone();
        nan[0] = f32::NAN;
        for bad in [&scaled, &flipped, &nan, &vec![0.0; 384]] {
            assert!(!is_unit(bad));
            assert_eq!(cosine(&prompt, bad), 0.0);
            assert_eq!(cosine(bad, &prompt), 0.0);
        }
        // Scored among honest candidates, the damaged one is scored as if it matched nothing.
        let lexical = [0.01, 0.5, 0.3];
        let others = [
            normalised((0..384).map(|d| (d % 7) as f32).collect()),
            normalised((0..384).map(|d| (d % 5) as f32 - 2.0).collect()),
        ];
        let with = |first: &Vec<f32>| {
            scores_from_vectors(
                &lexical,
                std::slice::from_ref(&prompt),
                &[first.clone(), others[0].clone(), others[1].clone()],
                false,
            )
        };
        let zero = normalised(
            (0..384)
                .map(|d| if d % 2 == 0 { 1.0 } else { -1.0 })
                .collect(),
        );
        assert!(cosine(&prompt, &zero).abs() < 0.2);
        for bad in [&scaled, &flipped] {
            let damaged = with(bad);
            assert!(damaged[0] < 0.625, "{damaged:?}");
            assert!(damaged[0] <= with(&zero)[0] + 0.05, "{damaged:?}");
        }
    }

    #[test]
    fn names_become_words() {
        assert_eq!(
            name_words("mcp__dev_radius__page_oncall"),
            "dev radius page oncall"
        );
        assert_eq!(name_words("getWeatherNow"), "get weather now");
        assert_eq!(name_words("web_fetch"), "web fetch");
        assert_eq!(name_words("ChaFod"), "cha fod");
        assert_eq!(name_words("HTTPServer"), "httpserver");
        assert_eq!(name_words(""), "");
    }
}
