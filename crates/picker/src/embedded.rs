//! The embedded scorer: offline, deterministic, nothing downloaded.
//!
//! A field-weighted BM25 (BM25F) over what a decision request may carry (names, the server or
//! extension label, bounded descriptions; never parameter schemas), in which each prompt term
//! also matches its closely related English words at a discount ([`crate::related`]; once per
//! term and tool, through the term or its best related word), plus a share for how much of a
//! candidate's name the prompt says, turned into a calibrated score in [0, 1] from two signals:
//! - *strength*: the raw BM25F score, which grows with how many of the prompt's informative
//!   (high-IDF) terms the candidate explains;
//! - *coverage*: the IDF-weighted share of the prompt's terms it explains, counting terms no
//!   candidate knows at a reduced weight, so prompts about things no tool covers score lower.
//!
//! The weights were tuned on the tuning half of the shared evaluation sets (a logistic fit of
//! "the top candidate is relevant", then a small grid for the selection at the default threshold
//! and cap) and checked on the other half (see `BENCHMARKS.md` at the root); they are constants, so the same inputs
//! give the same scores on every machine.

use crate::candidates::{Candidate, CandidateKey, MAX_REQUEST_NAME_CHARS};
use crate::related::RelatedWords;
use crate::text::{bounded, for_each_compound, for_each_term, for_each_word, stem};
use pcd_model::fnv::FnvMap;
use pcd_model::ToolInfo;
use std::borrow::Cow;

/// Maps keyed by short words: FNV-1a, since SipHash's per-call cost dominates the index build and
/// no key comes from an adversary who could profit from collisions beyond slowing their own tool.
type WordMap<V> = FnvMap<String, V>;

/// The text of one candidate, as a decision request carries it.
#[derive(Debug, Clone, Copy)]
pub struct CandidateText<'a> {
    /// The tool names: one in `tools` mode, the bounded member names in `mcp` mode.
    pub names: &'a [String],
    /// The server or extension label (may be empty).
    pub label: &'a str,
    /// The bounded description (a tool's in `tools` mode, an MCP namespace's in `mcp` mode; may
    /// be empty).
    pub description: &'a str,
}

/// How a candidate's evidence, read in the context of the whole prompt, becomes a score in
/// [0, 1]: a logistic function of what it explains and of where it stands among the other
/// candidates, so the tool a prompt plainly asks for stands out even where its absolute BM25F
/// score is modest, and a prompt that no tool explains well (or that points at files in the
/// working tree) exposes nothing. 0 for a candidate that shares no term with the prompt.
///
/// The weights were chosen for what the picker makes available at its defaults of the time
/// (threshold 0.625, caps 6 tools and 2 groups) on the tune halves of the everyday set and the shared sets:
/// as many needed tools (or accepted alternatives) as possible, under floors on the prompts
/// that must expose nothing (coding-only, near-miss, `bfcl`'s irrelevance prompts) and on the
/// tools exposed per prompt. `crates/picker/data/calibration.py` fits them; `BENCHMARKS.md` has
/// the method, the figures and the reliability table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Added to the weighted evidence.
    pub bias: f64,
    /// Weight of [`Evidence::strength`].
    pub strength: f64,
    /// Weight of [`Evidence::coverage`].
    pub coverage: f64,
    /// Weight of [`Evidence::name_share`].
    pub name_share: f64,
    /// Weight of [`Evidence::relative`].
    pub relative: f64,
    /// Weight of the logarithm of [`Evidence::rank`].
    pub log_rank: f64,
    /// Weight of [`Evidence::best_coverage`].
    pub best_coverage: f64,
    /// Weight of [`Evidence::best_strength`].
    pub best_strength: f64,
    /// Weight of [`Evidence::gap`].
    pub gap: f64,
    /// Weight of coverage times relative strength: explaining much of the prompt counts where
    /// the candidate is also near the top.
    pub coverage_relative: f64,
    /// Weight of the logarithm of the number of candidates.
    pub log_candidates: f64,
    /// Weight of [`Evidence::local_file`] (1 when the prompt names a file).
    pub local_file: f64,
    /// Weight of an unknown prompt term (one no candidate has) in the coverage denominator,
    /// relative to the rarest known term: prompts about things no tool covers score lower.
    pub unknown_term_weight: f64,
}

impl Calibration {
    /// Whether scores can only fall down the ranking by raw evidence: every weight on a
    /// candidate's own evidence is non-negative (coverage and strength grow with the raw score),
    /// none is on the name's share, and rank weighs nothing or counts against. The other
    /// features are the prompt's, the same for every candidate.
    pub fn is_monotone(&self) -> bool {
        self.strength >= 0.0
            && self.coverage >= 0.0
            && self.relative >= 0.0
            && self.coverage_relative >= 0.0
            && self.name_share == 0.0
            && self.log_rank <= 0.0
    }

    /// The number of weights [`Calibration::from_weights`] takes.
    pub const WEIGHTS: usize = 13;

    /// A calibration from its weights in field order (bias first, `unknown_term_weight` last),
    /// as `eval --calibration` takes them.
    pub fn from_weights(w: [f64; Self::WEIGHTS]) -> Calibration {
        Calibration {
            bias: w[0],
            strength: w[1],
            coverage: w[2],
            name_share: w[3],
            relative: w[4],
            log_rank: w[5],
            best_coverage: w[6],
            best_strength: w[7],
            gap: w[8],
            coverage_relative: w[9],
            log_candidates: w[10],
            local_file: w[11],
            unknown_term_weight: w[12],
        }
    }
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration::from_weights(SHIPPED_CALIBRATION)
    }
}

/// The fewest tools of an inventory the shipped calibration was fitted on (the everyday set's
/// 157; the shared sets have 199 and 1,383): below it, its weight of the logarithm of the number
/// of candidates is extrapolated ([`crate::semantic::lexical_as_fitted`]).
pub const FEWEST_FITTED_TOOLS: usize = 157;

/// The fewest groups of an inventory the shipped calibration was fitted on (the everyday set's
/// 28 in `mcp` mode); as [`FEWEST_FITTED_TOOLS`].
pub const FEWEST_FITTED_GROUPS: usize = 28;

/// The shipped calibration's weights, in [`Calibration::from_weights`] order.
const SHIPPED_CALIBRATION: [f64; Calibration::WEIGHTS] = [
    -1.711, 3.415, 1.368, -1.185, 0.943, 0.0, 0.241, 0.0, 0.235, 2.694, -0.407, -3.176, 0.25,
];

/// BM25F field weights and constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldWeights {
    /// Weight of a term in a name.
    pub name: f64,
    /// Weight of a term in the label.
    pub label: f64,
    /// Weight of a term in the description.
    pub description: f64,
    /// BM25 saturation.
    pub k1: f64,
    /// Length normalisation of the description (names and labels are short and not normalised).
    pub b: f64,
    /// Weight of a related word (see [`crate::related`]) standing in for a prompt term, times
    /// its similarity; 0 reads only the prompt's own terms.
    pub related: f64,
    /// Weight, in units of the rarest term's IDF, of how much of a candidate's name the prompt
    /// says: the squared IDF-weighted share of the name's distinct terms that are among the
    /// prompt's terms and their related words, so `FindEvents` gains from "find a music event"
    /// whatever else matches.
    pub name_coverage: f64,
}

impl Default for FieldWeights {
    fn default() -> Self {
        FieldWeights {
            name: 1.0,
            label: 0.5,
            description: 1.0,
            k1: 1.2,
            b: 0.2,
            related: 0.3,
            name_coverage: 0.2,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    name_tf: u16,
    label_tf: u16,
    description_tf: u16,
}

#[derive(Debug, Clone, Default)]
struct Doc {
    description_len: u32,
    /// The IDF of its names' distinct terms, summed.
    name_idf: f64,
}

/// An index over one set of candidates, built once and queried for any number of prompts.
#[derive(Debug, Clone)]
pub struct EmbeddedIndex {
    vocabulary: WordMap<u32>,
    postings: Vec<Vec<Posting>>,
    docs: Vec<Doc>,
    average_description_len: f64,
    weights: FieldWeights,
    calibration: Calibration,
    /// For an index built per member ([`EmbeddedIndex::build_grouped`]): which candidate each
    /// document belongs to. Empty: one document a candidate.
    owner: Vec<u32>,
    candidates: usize,
}

/// One candidate's evidence for one prompt, before calibration.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Evidence {
    /// The BM25F score.
    pub raw: f64,
    /// The IDF-weighted, saturated share of the prompt's terms it explains, in [0, 1].
    pub coverage: f64,
    /// `raw` divided by the IDF of a term only one candidate has.
    pub strength: f64,
    /// The IDF-weighted share of the candidate's name terms that the prompt's terms or their
    /// related words reach, in [0, 1].
    pub name_share: f64,
    /// Its place among the candidates with any evidence, by raw score (1 is the best; 0 for a
    /// candidate with none). Set by [`EmbeddedIndex::candidate_evidence`].
    pub rank: u32,
    /// `raw` divided by the best candidate's, in [0, 1].
    pub relative: f64,
    /// The prompt's: the best candidate's coverage.
    pub best_coverage: f64,
    /// The prompt's: the best candidate's strength.
    pub best_strength: f64,
    /// The prompt's: how far the best candidate stands ahead of the second, as a share of the
    /// best raw score, in [0, 1].
    pub gap: f64,
    /// The prompt's: how many candidates the index holds.
    pub candidates: u32,
    /// The prompt's: whether it names a file in the working tree (`client.rs`,
    /// `.github/workflows/ci.yml`), work for the built-in tools rather than an external one.
    pub local_file: bool,
}

fn idf(docs: usize, df: usize) -> f64 {
    let (n, df) = (docs as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl EmbeddedIndex {
    /// Builds the index with the shipped weights and calibration.
    pub fn build<'a>(candidates: impl IntoIterator<Item = CandidateText<'a>>) -> EmbeddedIndex {
        Self::build_with(candidates, FieldWeights::default(), Calibration::default())
    }

    /// Builds the index with explicit weights and calibration (for tuning).
    pub fn build_with<'a>(
        candidates: impl IntoIterator<Item = CandidateText<'a>>,
        weights: FieldWeights,
        calibration: Calibration,
    ) -> EmbeddedIndex {
        let mut vocabulary: WordMap<u32> = WordMap::default();
        // Words repeat across thousands of descriptions; stem each distinct word once.
        let mut word_ids: WordMap<u32> = WordMap::default();
        let mut postings: Vec<Vec<Posting>> = Vec::new();
        let mut docs = Vec::new();
        let mut total_description_len = 0u64;
        // This document's (term id, field) occurrences, sorted and counted once it is read.
        let mut seen: Vec<(u32, u8)> = Vec::new();
        let mut id_of = |word: &str, postings: &mut Vec<Vec<Posting>>| -> u32 {
            if let Some(&id) = word_ids.get(word) {
                return id;
            }
            let term = stem(word);
            let id = match vocabulary.get(&term) {
                Some(&id) => id,
                None => {
                    let id = postings.len() as u32;
                    postings.push(Vec::new());
                    vocabulary.insert(term, id);
                    id
                }
            };
            word_ids.insert(word.to_owned(), id);
            id
        };
        for (doc_id, candidate) in candidates.into_iter().enumerate() {
            seen.clear();
            let mut doc = Doc::default();
            for name in candidate.names {
                for_each_word(name, |w| seen.push((id_of(w, &mut postings), 0)));
            }
            for_each_word(candidate.label, |w| seen.push((id_of(w, &mut postings), 1)));
            for_each_word(candidate.description, |w| {
                seen.push((id_of(w, &mut postings), 2));
                doc.description_len += 1;
            });
            total_description_len += u64::from(doc.description_len);
            seen.sort_unstable_by_key(|(id, _)| *id);
            for run in seen.chunk_by(|a, b| a.0 == b.0) {
                let mut p = Posting {
                    doc: doc_id as u32,
                    name_tf: 0,
                    label_tf: 0,
                    description_tf: 0,
                };
                for &(_, field) in run {
                    let tf = match field {
                        0 => &mut p.name_tf,
                        1 => &mut p.label_tf,
                        _ => &mut p.description_tf,
                    };
                    *tf = tf.saturating_add(1);
                }
                postings[run[0].0 as usize].push(p);
            }
            docs.push(doc);
        }
        let average_description_len = if docs.is_empty() {
            1.0
        } else {
            (total_description_len as f64 / docs.len() as f64).max(1.0)
        };
        // A name's terms by their IDF, for how much of a name a prompt says.
        let n_docs = docs.len();
        for list in &postings {
            let term_idf = idf(n_docs, list.len());
            for p in list {
                if p.name_tf > 0 {
                    docs[p.doc as usize].name_idf += term_idf;
                }
            }
        }
        let candidates = docs.len();
        EmbeddedIndex {
            vocabulary,
            postings,
            docs,
            average_description_len,
            weights,
            calibration,
            owner: Vec::new(),
            candidates,
        }
    }

    /// Builds an index whose candidates are groups of documents (a group's own text and each of
    /// its members), with the shipped weights and calibration: a candidate scores what its best
    /// document scores, plus a little for a second relevant one, so a group ranks where its most
    /// relevant tools do.
    pub fn build_grouped<'a, G>(groups: impl IntoIterator<Item = G>) -> EmbeddedIndex
    where
        G: IntoIterator<Item = CandidateText<'a>>,
    {
        Self::build_grouped_with(groups, FieldWeights::default(), Calibration::default())
    }

    /// [`EmbeddedIndex::build_grouped`] with explicit weights and calibration (for tuning).
    pub fn build_grouped_with<'a, G>(
        groups: impl IntoIterator<Item = G>,
        weights: FieldWeights,
        calibration: Calibration,
    ) -> EmbeddedIndex
    where
        G: IntoIterator<Item = CandidateText<'a>>,
    {
        let mut owner = Vec::new();
        let mut texts = Vec::new();
        let mut candidates = 0usize;
        for (g, group) in groups.into_iter().enumerate() {
            for text in group {
                owner.push(g as u32);
                texts.push(text);
            }
            candidates = g + 1;
        }
        let mut index = Self::build_with(texts, weights, calibration);
        index.owner = owner;
        index.candidates = candidates;
        index
    }

    /// How many candidates the index holds.
    pub fn len(&self) -> usize {
        self.candidates
    }

    /// Whether the index holds no candidate.
    pub fn is_empty(&self) -> bool {
        self.candidates == 0
    }

    /// Every document's evidence for `prompt`, in document order (one document a candidate,
    /// unless the index was built grouped).
    pub fn evidence(&self, prompt: &str) -> Vec<Evidence> {
        let n = self.docs.len();
        let mut out = vec![Evidence::default(); n];
        if n == 0 {
            return out;
        }
        // The prompt's distinct terms: the known ones by id, the unknown ones by text.
        let mut terms: Vec<String> = Vec::new();
        for_each_term(prompt, |t| terms.push(t.to_owned()));
        // `on call` for a tool named `oncall`: a compound counts only where a candidate has it.
        for_each_compound(prompt, |t| {
            if self.vocabulary.contains_key(t) {
                terms.push(t.to_owned());
            }
        });
        terms.sort_unstable();
        terms.dedup();
        let max_idf = idf(n, 1);
        let mut known_mass = 0.0;
        let mut unknown = 0usize;
        for t in &terms {
            match self.vocabulary.get(t.as_str()) {
                Some(&id) => known_mass += idf(n, self.postings[id as usize].len()),
                None => unknown += 1,
            }
        }
        let mass = known_mass + unknown as f64 * max_idf * self.calibration.unknown_term_weight;
        if mass <= 0.0 {
            return out;
        }
        let w = self.weights;
        let related = RelatedWords::shipped();
        // Each prompt term counts once per document: through the term itself or, at a discount,
        // through the best of its related words, so a tool that uses several near-synonyms of
        // one word does not outscore the tool that uses the word.
        let mut best = vec![0.0f64; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut alternatives: Vec<(u32, f64)> = Vec::new();
        // Per document, the IDF of the name terms the prompt's terms and related words reach,
        // each vocabulary term counted once however many prompt terms reach it.
        let mut name_hits = vec![0.0f64; if w.name_coverage > 0.0 { n } else { 0 }];
        let mut name_hit_docs: Vec<u32> = Vec::new();
        let mut reached: Vec<u32> = Vec::new();
        for t in &terms {
            alternatives.clear();
            let own = self.vocabulary.get(t.as_str()).copied();
            if let Some(id) = own {
                alternatives.push((id, 1.0));
            }
            if w.related > 0.0 {
                for (other, similarity) in related.of(t) {
                    if let Some(&id) = self.vocabulary.get(other) {
                        if Some(id) != own && !alternatives.iter().any(|a| a.0 == id) {
                            alternatives.push((id, w.related * f64::from(similarity)));
                        }
                    }
                }
            }
            for &(id, weight) in &alternatives {
                let list = &self.postings[id as usize];
                let plain_idf = idf(n, list.len());
                let term_idf = weight * plain_idf;
                let count_name = w.name_coverage > 0.0 && !reached.contains(&id);
                if count_name {
                    reached.push(id);
                }
                for p in list {
                    if count_name && p.name_tf > 0 {
                        let hits = &mut name_hits[p.doc as usize];
                        if *hits == 0.0 {
                            name_hit_docs.push(p.doc);
                        }
                        *hits += plain_idf;
                    }
                    let doc = &self.docs[p.doc as usize];
                    let norm = 1.0 - w.b
                        + w.b * f64::from(doc.description_len) / self.average_description_len;
                    let tf = w.name * f64::from(p.name_tf)
                        + w.label * f64::from(p.label_tf)
                        + w.description * f64::from(p.description_tf) / norm;
                    let contribution = term_idf * tf / (w.k1 + tf);
                    let slot = &mut best[p.doc as usize];
                    if *slot == 0.0 {
                        touched.push(p.doc);
                    }
                    if contribution > *slot {
                        *slot = contribution;
                    }
                }
            }
            for &doc in &touched {
                out[doc as usize].raw += best[doc as usize];
                best[doc as usize] = 0.0;
            }
            touched.clear();
        }
        for &doc in &name_hit_docs {
            let share = (name_hits[doc as usize] / self.docs[doc as usize].name_idf).min(1.0);
            out[doc as usize].raw += w.name_coverage * max_idf * share * share;
            out[doc as usize].name_share = share;
        }
        for evidence in &mut out {
            if evidence.raw > 0.0 {
                evidence.coverage = (evidence.raw / mass).min(1.0);
                evidence.strength = evidence.raw / max_idf;
            }
        }
        out
    }

    /// Every candidate's evidence for `prompt`, in candidate order, read in the context of the
    /// whole prompt (its rank, its share of the best raw score, the prompt's own figures): a
    /// grouped candidate's is its best document's.
    pub fn candidate_evidence(&self, prompt: &str) -> Vec<Evidence> {
        // What a decision request carries of the prompt, as `scores` reads it.
        self.evidence_in_context(crate::request::latest_text(prompt), true)
    }

    /// [`EmbeddedIndex::candidate_evidence`], with ranks only when `ranked` (they take a sort).
    fn evidence_in_context(&self, prompt: &str, ranked: bool) -> Vec<Evidence> {
        let per_doc = self.evidence(prompt);
        let mut out = if self.owner.is_empty() {
            per_doc
        } else {
            let mut best = vec![Evidence::default(); self.candidates];
            for (doc, e) in per_doc.into_iter().enumerate() {
                let slot = &mut best[self.owner[doc] as usize];
                if e.raw > slot.raw {
                    *slot = e;
                }
            }
            best
        };
        // The best and the second by raw score, ties to the earlier candidate.
        let (mut top, mut second) = (None::<usize>, 0.0f64);
        for (i, e) in out.iter().enumerate() {
            if e.raw <= 0.0 {
                continue;
            }
            match top {
                Some(t) if e.raw <= out[t].raw => second = second.max(e.raw),
                Some(t) => {
                    second = out[t].raw;
                    top = Some(i);
                }
                None => top = Some(i),
            }
        }
        let Some(top) = top else {
            return out;
        };
        let best = out[top];
        let local_file = names_a_file(prompt);
        let candidates = u32::try_from(out.len()).unwrap_or(u32::MAX);
        for e in out.iter_mut().filter(|e| e.raw > 0.0) {
            e.relative = e.raw / best.raw;
            e.best_coverage = best.coverage;
            e.best_strength = best.strength;
            e.gap = (best.raw - second) / best.raw;
            e.candidates = candidates;
            e.local_file = local_file;
        }
        if ranked {
            for (rank, i) in Self::raw_order(&out).into_iter().enumerate() {
                out[i].rank = u32::try_from(rank + 1).unwrap_or(u32::MAX);
            }
        }
        out
    }

    /// The candidates with any evidence, best raw score first, ties in candidate order.
    fn raw_order(evidence: &[Evidence]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..evidence.len())
            .filter(|&i| evidence[i].raw > 0.0)
            .collect();
        // Unstable is enough: no two keys are equal once the index breaks ties.
        order
            .sort_unstable_by(|&a, &b| evidence[b].raw.total_cmp(&evidence[a].raw).then(a.cmp(&b)));
        order
    }

    /// The calibrated score in [0, 1] of a candidate's evidence, as
    /// [`EmbeddedIndex::candidate_evidence`] gives it.
    pub fn calibrate(&self, evidence: &Evidence) -> f64 {
        if evidence.raw <= 0.0 {
            return 0.0;
        }
        sigmoid(self.prompt_part(evidence) + self.candidate_part(evidence))
    }

    /// The part of the calibration's sum that is the prompt's, the same for every candidate.
    fn prompt_part(&self, e: &Evidence) -> f64 {
        let c = self.calibration;
        c.bias
            + c.best_coverage * e.best_coverage
            + c.best_strength * e.best_strength
            + c.gap * e.gap
            + c.log_candidates * f64::from(e.candidates.max(1)).ln()
            + c.local_file * f64::from(u8::from(e.local_file))
    }

    /// The part of the calibration's sum that is the candidate's own.
    fn candidate_part(&self, e: &Evidence) -> f64 {
        let c = self.calibration;
        let rank = if c.log_rank == 0.0 {
            0.0
        } else {
            c.log_rank * f64::from(e.rank.max(1)).ln()
        };
        c.strength * e.strength
            + c.coverage * e.coverage
            + c.name_share * e.name_share
            + c.relative * e.relative
            + c.coverage_relative * e.coverage * e.relative
            + rank
    }

    /// Every candidate's score in [0, 1] for `prompt`, in candidate order; 0 for a candidate that
    /// shares no term with it. What is read is what a decision request carries of the prompt
    /// ([`prompt_texts`]): the prompt, and when it has several blocks (paragraphs, fenced code)
    /// its first and last block too, or when it is one block with something pasted into it, the
    /// request [without the paste](crate::text::without_paste), a candidate scoring its best
    /// over them, so a request next to a pasted log is read as if alone. Over one text, scores
    /// never rise down the ranking by raw evidence (a calibration that is not
    /// [monotone](Calibration::is_monotone), the shipped one among them, is capped so), so the
    /// calibration decides how far down the ranking the threshold reaches, never the order.
    pub fn scores(&self, prompt: &str) -> Vec<f64> {
        let texts = prompt_texts(prompt);
        let mut best = self.text_scores(&texts[0]);
        for text in &texts[1..] {
            for (b, s) in best.iter_mut().zip(self.text_scores(text)) {
                *b = b.max(s);
            }
        }
        best
    }

    /// [`EmbeddedIndex::scores`] over one text.
    fn text_scores(&self, prompt: &str) -> Vec<f64> {
        let monotone = self.calibration.is_monotone();
        let evidence =
            self.evidence_in_context(prompt, !monotone || self.calibration.log_rank != 0.0);
        // Every candidate with evidence shares the prompt's part of the sum: computed once.
        let Some(any) = evidence.iter().find(|e| e.raw > 0.0) else {
            return vec![0.0; evidence.len()];
        };
        let prompt_part = self.prompt_part(any);
        let mut scores: Vec<f64> = evidence
            .iter()
            .map(|e| {
                if e.raw > 0.0 {
                    sigmoid(prompt_part + self.candidate_part(e))
                } else {
                    0.0
                }
            })
            .collect();
        if monotone {
            return scores;
        }
        // A calibration that could reorder: each score is capped strictly below the one above
        // it, by far less than anything shown or recorded (three decimals), so equal ceilings
        // never reorder candidates either.
        // The evidence is ranked here (a calibration that is not monotone asks for ranks): the
        // ranks give the raw order without sorting again.
        let mut order = vec![usize::MAX; evidence.iter().filter(|e| e.raw > 0.0).count()];
        for (i, e) in evidence.iter().enumerate().filter(|(_, e)| e.raw > 0.0) {
            order[e.rank as usize - 1] = i;
        }
        let mut ceiling = 1.0f64;
        for i in order {
            ceiling = scores[i].min(ceiling - ORDER_STEP).max(0.0);
            scores[i] = ceiling;
        }
        scores
    }
}

/// How much lower than the candidate above it a candidate scores at least (see
/// [`EmbeddedIndex::scores`]).
pub(crate) const ORDER_STEP: f64 = 1e-9;

/// Source and configuration file endings: a prompt that names such a file (`client.rs`,
/// `src/app.tsx`, `.github/workflows/ci.yml`) is about the working tree.
const FILE_ENDINGS: &[&str] = &[
    "c", "cc", "cpp", "cs", "css", "go", "h", "hpp", "html", "java", "js", "json", "jsx", "kt",
    "lock", "md", "mjs", "php", "proto", "py", "rb", "rs", "scss", "sh", "sql", "swift", "tf",
    "toml", "ts", "tsx", "yaml", "yml",
];

/// What the embedded scorer reads of a prompt, lexically and semantically alike: the part a
/// decision request carries ([`request::latest_text`](crate::request::latest_text)), then, when
/// that has more than one [block](crate::text::blocks), its first and its last, or, when it is
/// one block with something pasted into it, that part
/// [without the paste](crate::text::without_paste), or else, when it quotes something, that part
/// [without what it quotes](crate::text::without_quoted) (the first text is always that whole
/// part).
pub fn prompt_texts(prompt: &str) -> Vec<Cow<'_, str>> {
    crate::text::prompt_texts(crate::request::latest_text(prompt))
}

/// Whether `prompt` names a file in the working tree: a word (quotes, brackets and trailing
/// punctuation trimmed) that is not a URL and whose last path segment is `stem.ending` with a
/// source or configuration ending. Only the part a decision request carries
/// ([`request::latest_text`](crate::request::latest_text)) is read.
pub fn names_a_file(prompt: &str) -> bool {
    const TRIM: &[char] = &[
        '"', '\'', '`', '(', ')', '[', ']', '{', '}', '<', '>', ',', ';', ':', '!', '?', '*',
    ];
    let prompt = crate::request::latest_text(prompt);
    prompt.split_whitespace().any(|word| {
        let word = word
            .trim_matches(TRIM)
            .trim_end_matches('.')
            .trim_matches(TRIM);
        if word.contains("://")
            || word
                .get(..4)
                .is_some_and(|w| w.eq_ignore_ascii_case("www."))
        {
            return false;
        }
        // A location as compilers, test runners and stack traces print it: `lib.rs:14:5`.
        let word = strip_line_and_column(word);
        let segment = word.rsplit('/').next().unwrap_or(word);
        let Some((stem, ending)) = segment.rsplit_once('.') else {
            return false;
        };
        !stem.is_empty()
            && stem
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
            && FILE_ENDINGS.binary_search(&ending).is_ok()
    })
}

/// `word` without a trailing `:LINE` or `:LINE:COLUMN` (digits only).
fn strip_line_and_column(word: &str) -> &str {
    let mut word = word;
    for _ in 0..2 {
        match word.rsplit_once(':') {
            Some((head, tail))
                if !head.is_empty()
                    && !tail.is_empty()
                    && tail.bytes().all(|b| b.is_ascii_digit()) =>
            {
                word = head;
            }
            _ => break,
        }
    }
    word
}

/// The embedded scorer's index over `candidates` formed from `tools`, with the shipped weights.
///
/// Every candidate is read exactly as a decision request carries it (the spec's privacy list),
/// so every decision model sees the same text. A tool candidate: its name, bounded description
/// and label. A group candidate (`mcp` mode): its own text (label and, for an MCP server, the
/// namespace description) plus each member's bounded name, scoring what its best documents
/// score; member descriptions are not read. No parameter schema, annotation, namespace
/// instruction or path is read in either mode.
pub fn index_for(tools: &[ToolInfo], candidates: &[Candidate]) -> EmbeddedIndex {
    index_for_with(
        tools,
        candidates,
        FieldWeights::default(),
        Calibration::default(),
    )
}

/// [`index_for`] with explicit weights and calibration (for tuning).
pub fn index_for_with(
    tools: &[ToolInfo],
    candidates: &[Candidate],
    weights: FieldWeights,
    calibration: Calibration,
) -> EmbeddedIndex {
    let grouped = candidates
        .iter()
        .any(|c| matches!(c.key, CandidateKey::Group(_)));
    if !grouped {
        return EmbeddedIndex::build_with(
            candidates.iter().map(|c| CandidateText {
                names: &c.names,
                label: &c.label,
                description: &c.description,
            }),
            weights,
            calibration,
        );
    }
    // Owned bounded member texts first, then borrowed views of them. A tool candidate among
    // groups is one document, as in `tools` mode.
    let members: Vec<Vec<[String; 1]>> = candidates
        .iter()
        .map(|c| {
            if matches!(c.key, CandidateKey::Tool(_)) {
                return Vec::new();
            }
            c.members
                .iter()
                .filter_map(|&i| tools.get(i))
                .map(|t| [bounded(&t.name, MAX_REQUEST_NAME_CHARS)])
                .collect()
        })
        .collect();
    EmbeddedIndex::build_grouped_with(
        candidates.iter().zip(&members).map(|(c, members)| {
            let own = CandidateText {
                names: match c.key {
                    CandidateKey::Tool(_) => &c.names,
                    CandidateKey::Group(_) => &[],
                },
                label: &c.label,
                description: &c.description,
            };
            std::iter::once(own).chain(members.iter().map(|name| CandidateText {
                names: name,
                label: &c.label,
                description: "",
            }))
        }),
        weights,
        calibration,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<Vec<String>> {
        list.iter().map(|n| vec![(*n).to_owned()]).collect()
    }

    fn index(tools: &[(&str, &str)]) -> EmbeddedIndex {
        index_with(tools, FieldWeights::default())
    }

    fn index_with(tools: &[(&str, &str)], weights: FieldWeights) -> EmbeddedIndex {
        let n = names(&tools.iter().map(|t| t.0).collect::<Vec<_>>());
        EmbeddedIndex::build_with(
            tools.iter().zip(&n).map(|(t, names)| CandidateText {
                names,
                label: "",
                description: t.1,
            }),
            weights,
            Calibration::default(),
        )
    }

    fn fixture_tools() -> [(&'static str, &'static str); 8] {
        [
            (
                "get_weather_forecast",
                "Get the weather forecast for a city.",
            ),
            (
                "uber_ride",
                "Book a ride with Uber from one address to another.",
            ),
            ("send_email", "Send an email message to a recipient."),
            (
                "search_flights",
                "Search flights between two airports on a date.",
            ),
            ("create_calendar_event", "Create an event in the calendar."),
            (
                "translate_text",
                "Translate text from one language to another.",
            ),
            ("stock_price", "Look up the latest price of a stock ticker."),
            ("read_pdf", "Extract the text of a PDF document."),
        ]
    }

    fn fixture() -> EmbeddedIndex {
        index(&fixture_tools())
    }

    #[test]
    fn scores_never_rise_down_the_raw_ranking() {
        let prompts = [
            "send an email about the weather forecast",
            "search flights and translate the text",
            "price of the stock and the text of a PDF",
        ];
        // The shipped calibration (it weighs the name's share, which the raw score already
        // counts, slightly against), and one that weighs the name's share and the rank hard
        // against the order: the order by raw evidence holds for both.
        let reordering = Calibration {
            name_share: -3.0,
            log_rank: 2.0,
            ..Calibration::default()
        };
        assert!(!reordering.is_monotone());
        let names: Vec<Vec<String>> = fixture_tools()
            .iter()
            .map(|t| vec![t.0.to_owned()])
            .collect();
        let other = EmbeddedIndex::build_with(
            fixture_tools()
                .iter()
                .zip(&names)
                .map(|(t, n)| CandidateText {
                    names: n,
                    label: "",
                    description: t.1,
                }),
            FieldWeights::default(),
            reordering,
        );
        for idx in [fixture(), other] {
            for prompt in prompts {
                let evidence = idx.candidate_evidence(prompt);
                let scores = idx.scores(prompt);
                let order = EmbeddedIndex::raw_order(&evidence);
                assert!(order.len() >= 2, "{prompt}");
                for pair in order.windows(2) {
                    assert!(
                        scores[pair[0]] > scores[pair[1]]
                            || evidence[pair[0]].raw == evidence[pair[1]].raw
                                && scores[pair[0]] >= scores[pair[1]],
                        "{prompt}: {scores:?}"
                    );
                }
            }
        }
    }

    /// Of a long prompt, only what a decision request carries is read: a file named before its
    /// last [`MAX_PROMPT_CHARS`](crate::request::MAX_PROMPT_CHARS) characters changes neither
    /// whether the prompt names a file (which the fused semantic score reads), nor the evidence.
    #[test]
    fn text_before_what_a_request_carries_is_never_read() {
        let tail = format!(
            "translate this text into German {}",
            "lorem ipsum dolor ".repeat(120)
        );
        let plain = format!("{} {tail}", "see the notes ".repeat(100));
        let file = format!("{} {tail}", "see client.rs ".repeat(100));
        assert_eq!(
            crate::request::latest_text(&plain),
            crate::request::latest_text(&file)
        );
        assert!(names_a_file(&format!("see client.rs {tail}")[..40]));
        assert!(!names_a_file(&file));
        let idx = fixture();
        assert_eq!(
            idx.candidate_evidence(&plain),
            idx.candidate_evidence(&file)
        );
        assert_eq!(idx.scores(&plain), idx.scores(&file));
    }

    #[test]
    fn a_prompt_that_names_a_file_is_work_for_the_built_in_tools() {
        for prompt in [
            "add logging to the retry loop in client.rs",
            "our .github/workflows/ci.yml runs the test job twice",
            "see `src/app.tsx`, line 40",
            "fix the typo in README.md.",
            "why does this test fail? thread 'main' panicked at src/lib.rs:14:5",
            "TypeError at app/models/user.py:88",
        ] {
            assert!(names_a_file(prompt), "{prompt}");
        }
        for prompt in [
            "fetch https://example.com/docs/index.html and summarize it",
            "what's new on www.example.com/a.js",
            "summarise the release notes",
            "the .rs files",
            "version 1.2.3",
            "meet at 10:30",
            "the host is db.internal:5432",
        ] {
            assert!(!names_a_file(prompt), "{prompt}");
        }
        let idx = fixture();
        let plain = idx.scores("translate this text into German");
        let file = idx.scores("translate this text in strings.json into German");
        assert!(file[5] < plain[5], "{plain:?} {file:?}");
    }

    #[test]
    fn scores_are_in_unit_range_and_deterministic() {
        let idx = fixture();
        for prompt in [
            "weather in Paris",
            "",
            "zzz qqq",
            "send an email about the weather",
        ] {
            let a = idx.scores(prompt);
            assert_eq!(a, idx.scores(prompt));
            assert!(a.iter().all(|s| (0.0..=1.0).contains(s)), "{prompt}: {a:?}");
        }
    }

    #[test]
    fn the_matching_tool_clears_the_default_threshold_and_others_do_not() {
        let idx = fixture();
        let scores = idx.scores("What is the weather forecast for Paris tomorrow?");
        assert!(scores[0] >= 0.625, "{scores:?}");
        assert!(scores[1..].iter().all(|&s| s < 0.625), "{scores:?}");
        let scores = idx.scores("Get me an Uber ride to the airport");
        let best = scores.iter().cloned().fold(0.0, f64::max);
        assert_eq!(scores[1], best);
        assert!(scores[1] >= 0.625, "{scores:?}");
    }

    #[test]
    fn a_tool_whose_name_the_prompt_says_outranks_one_that_shares_rare_words() {
        let tools = [
            ("find_events", "Look up what is on in a city on a date."),
            (
                "book_house",
                "Book a house, for example in New York or Paris.",
            ),
            ("send_email", "Send an email message to a recipient."),
            ("find_files", "Find files by name."),
        ];
        let prompt = "Find a music event in New York this Saturday";
        let s = index(&tools).scores(prompt);
        assert!(s[0] > s[1], "{s:?}");
        // Without the name's share, the rare words of the example win.
        let plain = index_with(
            &tools,
            FieldWeights {
                name_coverage: 0.0,
                ..FieldWeights::default()
            },
        )
        .scores(prompt);
        assert!(plain[1] > plain[0], "{plain:?}");
    }

    #[test]
    fn a_related_word_finds_a_tool_at_a_discount_and_only_once_per_prompt_term() {
        let tools = [
            ("find_psychologist", "Find a psychologist near you."),
            ("book_flight", "Book a flight between two airports."),
            ("clinic_staff", "A psychologist or physician of the clinic."),
            ("psychiatrist_directory", "Every psychiatrist of a city."),
        ];
        let prompt = "I need a psychiatrist";
        let s = index(&tools[..3]).scores(prompt);
        assert!(s[0] > 0.0 && s[2] > 0.0, "{s:?}");
        assert_eq!(s[1], 0.0);
        // Two related words of one prompt term count as the better of them, not as both.
        let e = index(&[
            ("t1", "psychologist physician"),
            ("t2", "psychologist clinic"),
            ("t3", "physician clinic"),
        ])
        .evidence(prompt);
        assert!(e[2].raw > 0.0 && e[2].raw < e[1].raw, "{e:?}");
        assert!((e[0].raw - e[1].raw).abs() < 1e-12, "{e:?}");
        // The tool that uses the prompt's own word ranks above the one that uses a related word.
        let s = index(&tools).scores(prompt);
        assert!(s[3] > s[0], "{s:?}");
        // Without related words, only the own word matches.
        let plain = index_with(
            &tools,
            FieldWeights {
                related: 0.0,
                ..FieldWeights::default()
            },
        )
        .scores(prompt);
        assert_eq!(plain[0], 0.0);
        assert!(plain[3] > 0.0);
    }

    #[test]
    fn an_unrelated_prompt_scores_below_the_threshold_everywhere() {
        let idx = fixture();
        let scores = idx.scores("Write a haiku about autumn leaves falling in the garden");
        assert!(scores.iter().all(|&s| s < 0.625), "{scores:?}");
    }

    #[test]
    fn no_shared_term_scores_zero() {
        let idx = fixture();
        assert!(idx.scores("haiku garden").iter().all(|&s| s == 0.0));
    }

    #[test]
    fn an_empty_index_scores_nothing() {
        let idx = EmbeddedIndex::build(std::iter::empty());
        assert!(idx.is_empty());
        assert!(idx.scores("anything").is_empty());
    }
}

/// The embedded scorer as a [`crate::request::DecisionModel`]: it reads a request exactly as a
/// remote model would (the bounded prompt and candidates of the JSON body, nothing else) and
/// answers in the same format, so a round treats every decision model alike.
///
/// IDF is computed over the candidates of the request, so give it the whole round in one batch
/// where possible (the `pick` and `eval` commands index every candidate at once instead).
#[derive(Debug, Clone, Copy, Default)]
pub struct EmbeddedScorer;

impl crate::request::DecisionModel for EmbeddedScorer {
    fn answer(
        &self,
        request: &crate::request::DecisionRequest,
        _deadline: std::time::Instant,
        cancel: &crate::request::Cancellation,
    ) -> Result<String, crate::request::ModelError> {
        use serde_json::{json, Value};
        if cancel.is_cancelled() {
            return Err(crate::request::ModelError::Cancelled);
        }
        let body: Value = serde_json::from_str(&request.body)
            .map_err(|_| crate::request::ModelError::Unavailable)?;
        let items = body["candidates"].as_array().cloned().unwrap_or_default();
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let fields: Vec<(Vec<String>, String, String)> = items
            .iter()
            .map(|c| {
                let names = match c.get("tools").and_then(Value::as_array) {
                    Some(list) => list.iter().map(text).collect(),
                    None => vec![text(&c["name"])],
                };
                (names, text(&c["label"]), text(&c["description"]))
            })
            .collect();
        let index =
            EmbeddedIndex::build(
                fields
                    .iter()
                    .map(|(names, label, description)| CandidateText {
                        names,
                        label,
                        description,
                    }),
            );
        let scores = index.scores(&request.prompt);
        let answer: Vec<Value> = items
            .iter()
            .zip(scores)
            .map(|(c, s)| json!({"id": c["id"], "score": s}))
            .collect();
        Ok(json!({ "scores": answer }).to_string())
    }
}

#[cfg(test)]
mod scorer_tests {
    use super::*;
    use crate::candidates::Candidate;
    use crate::request::{build_requests, parse_answer, Cancellation, DecisionModel};

    #[test]
    fn the_embedded_scorer_answers_requests_like_any_model() {
        let tools = [
            (
                "get_weather_forecast",
                "Get the weather forecast for a city.",
            ),
            ("send_email", "Send an email message to a recipient."),
            ("search_flights", "Search flights between two airports."),
        ];
        let candidates: Vec<Candidate> = tools
            .iter()
            .enumerate()
            .map(|(i, (n, d))| Candidate::tool(n, d, i))
            .collect();
        let request = build_requests("weather forecast for Oslo", &candidates, 50).remove(0);
        let far = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let text = EmbeddedScorer
            .answer(&request, far, &Cancellation::default())
            .unwrap();
        let scores = parse_answer(&request, &text).unwrap();
        assert_eq!(scores.len(), 3);
        assert!(
            scores[0].1 > scores[1].1 && scores[0].1 > scores[2].1,
            "{scores:?}"
        );
        let cancelled = Cancellation::default();
        cancelled.cancel();
        assert!(EmbeddedScorer.answer(&request, far, &cancelled).is_err());
    }
}

#[cfg(test)]
mod grouped_tests {
    use super::*;
    use crate::candidates::{candidates, Available};
    use pcd_model::{parse_inventory, Allowlists, Classifier, Mode};

    fn ext(name: &str, description: &str, package: &str) -> String {
        format!(
            r#"{{"name": "{name}", "description": "{description}",
               "parameters": {{"type": "object", "properties": {{"weather": {{"type": "string"}}}}}},
               "sourceInfo": {{"path": "/n/{package}/index.ts", "source": "npm:{package}@1.0.0",
                               "scope": "user", "origin": "package"}}}}"#
        )
    }

    /// The candidates' labels and scores for `prompt` over `tools` in `mode`.
    fn scores_in(mode: Mode, prompt: &str, tools: &[String]) -> (Vec<String>, Vec<f64>) {
        let inventory = parse_inventory(&format!("[{}]", tools.join(","))).unwrap();
        let set = candidates(
            &inventory.tools,
            &Classifier::default(),
            mode,
            &Allowlists::default(),
            &Available::default(),
        );
        let keys = set.candidates.iter().map(|c| c.label.clone()).collect();
        let index = index_for(&inventory.tools, &set.candidates);
        assert_eq!(index.len(), set.candidates.len());
        (keys, index.scores(prompt))
    }

    fn scores(prompt: &str, tools: &[String]) -> (Vec<String>, Vec<f64>) {
        scores_in(Mode::Mcp, prompt, tools)
    }

    #[test]
    fn a_group_is_read_as_a_request_carries_it_never_by_member_descriptions() {
        // Opaque member names: only the member descriptions say what the groups do, and a
        // decision request never carries them, so neither does the embedded scorer read them.
        let tools = [
            ext("wx_q1", "Get the weather forecast for a city.", "sky"),
            ext("wx_q2", "Current air pressure at an airport.", "sky"),
            ext("ml_s1", "Send an email message to a recipient.", "post"),
            ext("ml_s2", "List the folders of a mailbox.", "post"),
        ];
        let prompt = "what is the weather forecast for Oslo tomorrow";
        let (labels, s) = scores(prompt, &tools);
        assert_eq!(labels, ["sky", "post"]);
        assert!(s.iter().all(|&s| s == 0.0), "{s:?}");
        // In `tools` mode the same descriptions travel, and the forecast tool leads.
        let (_, single) = scores_in(Mode::Tools, prompt, &tools);
        assert!(single[0] > single[1] && single[0] > 0.0, "{single:?}");
        // Member names do travel: a group whose tool names say the job is found by them.
        let named = [
            ext("weather_forecast", "", "sky"),
            ext("air_pressure", "", "sky"),
            ext("send_email", "", "post"),
        ];
        let (_, s) = scores(prompt, &named);
        assert!(s[0] > 0.0 && s[1] == 0.0, "{s:?}");
    }

    #[test]
    fn group_scores_stay_in_unit_range_and_follow_their_members_names() {
        let tools = [
            ext("forecast", "Get the weather forecast for a city.", "sky"),
            ext(
                "weather_alerts",
                "Severe weather alerts for a region.",
                "sky",
            ),
            ext(
                "send_email",
                "Send an email message to a recipient.",
                "post",
            ),
        ];
        let prompt = "weather forecast and severe weather alerts for Bergen";
        let (_, grouped) = scores(prompt, &tools);
        assert!(
            grouped.iter().all(|s| (0.0..=1.0).contains(s)),
            "{grouped:?}"
        );
        assert!(grouped[0] > grouped[1], "{grouped:?}");
        assert!(scores("haiku about autumn", &tools)
            .1
            .iter()
            .all(|&s| s == 0.0));
    }

    #[test]
    fn the_schema_is_never_read_even_when_only_it_matches() {
        // Every tool's schema has a property named `weather`; no description mentions it.
        let (_, s) = scores(
            "weather",
            &[
                ext("a", "Send an email.", "one"),
                ext("b", "Book a table.", "two"),
            ],
        );
        assert!(s.iter().all(|&s| s == 0.0), "{s:?}");
    }
}
