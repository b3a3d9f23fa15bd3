//! The embedded scorer's semantic rounds: when the host says the sentence-embedding model is
//! loaded (or loading), a prompt boundary scored by the embedded scorer becomes a job like an
//! HTTP model's ([`Effect::Embed`]): the host embeds the prompt and the candidates' texts off its
//! event loop, within its own bound, fuses the cosines with the lexical scores the job carries
//! ([`SemanticJob::scores`], pure) and hands the scores back through
//! [`Session::semantic_decided`]. Without vectors the round keeps the lexical scores computed when
//! it started, so a round is always scored by one scorer. No I/O and no model here.

use super::*;
use pcd_picker::semantic;

/// A round the embedded scorer scores with the semantic signal, as the host receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct SemanticJob {
    /// The job, for [`Session::semantic_decided`].
    pub id: u64,
    /// What is embedded: first the prompt's texts (what its decision request carries, and each
    /// block of it when it has several: [`pcd_picker::embedded::prompt_texts`]), then each
    /// candidate's texts (only what its decision request carries, [`semantic::candidate_texts`]:
    /// a tool's whole text, then its description's first sentence; a group's whole text, then
    /// its member names), in candidate order.
    pub texts: Vec<String>,
    /// How many of [`SemanticJob::texts`] are the prompt's (at least one).
    pub prompts: usize,
    /// How many of the texts after the prompt's are each candidate's, in candidate order.
    pub per_candidate: Vec<usize>,
    /// The mode the candidates were formed in (each has its calibration).
    pub mode: Mode,
    /// The lexical scorer's score of each candidate, in candidate order.
    pub lexical: Vec<f64>,
    /// Whether the prompt names a file (an input of the fused calibration).
    pub names_a_file: bool,
}

impl SemanticJob {
    /// The fused scores given the vectors of [`SemanticJob::texts`] (in the same order), or
    /// `None` when they are not all there (the round is then lexical). Pure: the same job and
    /// the same vectors always give the same scores.
    pub fn scores(&self, vectors: &[Vec<f32>]) -> Option<Vec<f64>> {
        if vectors.len() != self.texts.len() || self.prompts == 0 || vectors.len() < self.prompts {
            return None;
        }
        let (prompts, mut rest) = vectors.split_at(self.prompts);
        if self.per_candidate.iter().sum::<usize>() != rest.len() {
            return None;
        }
        // Each candidate's texts' vectors joined as the cosine reads them (a tool's into one
        // vector, a group's one after another).
        let mut candidates: Vec<Vec<f32>> = Vec::with_capacity(self.per_candidate.len());
        for &n in &self.per_candidate {
            let (texts, after) = rest.split_at(n);
            candidates.push(semantic::joined_vector(self.mode, texts));
            rest = after;
        }
        Some(semantic::scores_from_vectors(
            &self.lexical,
            prompts,
            &candidates,
            self.names_a_file,
            self.mode,
        ))
    }
}

/// The scorer note's name for a round scored with the semantic signal (as `pick` names it).
pub const SCORER_FUSED: &str = "semantic+lexical";
/// The scorer note's name for a round the embedded scorer scored lexically.
pub const SCORER_LEXICAL: &str = "lexical";

/// The data of the note that says which scorer decided round `round`: names only.
pub(super) fn scorer_note(round: &str, scorer: &'static str) -> Value {
    serde_json::json!({ "v": 1, "round": round, "scorer": scorer })
}

/// Which scorer decided the latest round the embedded scorer scored in this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoundScorer {
    /// Sentence embeddings fused with the lexical scorer.
    Fused,
    /// The lexical scorer alone, and why (empty: the model was never asked for).
    Lexical(String),
}

/// The Session's part of the semantic signal.
#[derive(Debug, Default)]
pub(super) struct Embedding {
    /// The host can answer semantic jobs (the model is loaded or loading).
    on: bool,
    /// Why it cannot, when it said so (empty: it never said).
    off_reason: String,
    /// The lexical scores of the semantic jobs handed out and not answered yet.
    pending: HashMap<u64, Vec<f64>>,
    /// Which scorer decided the latest embedded round.
    last: Option<RoundScorer>,
    /// The folder the host's model was loaded from, once it said.
    folder: Option<pcd_ui_text::ModelFolder>,
}

impl Session {
    /// The host says whether it can answer semantic jobs (`Ok`: its model is loaded or
    /// loading) or why not (`Err`, shown by `/decisions` after a lexical round). Off by default:
    /// the embedded scorer then scores every round lexically, inline.
    pub fn set_semantic(&mut self, can: Result<(), String>) {
        if can.is_err() {
            self.embedding.folder = None;
        }
        self.embedding.on = can.is_ok();
        self.embedding.off_reason = can.err().unwrap_or_default();
    }

    /// A prompt boundary's embedded round was scored lexically, inline: remembers why.
    pub(super) fn scored_lexically_inline(&mut self) {
        self.embedding.last = Some(RoundScorer::Lexical(self.embedding.off_reason.clone()));
    }

    /// Whether the semantic signal could be used now: tool filtering is on and the embedded
    /// scorer decides (the host loads the model only then).
    pub fn wants_semantic(&self) -> bool {
        self.filtering_on() && self.settings.decision.provider == DecisionProvider::Embedded
    }

    /// Which scorer decided the latest round the embedded scorer scored, if any.
    pub fn last_scorer(&self) -> Option<&RoundScorer> {
        self.embedding.last.as_ref()
    }

    /// The host's model was loaded from `folder` (what `/decisions` names beside a fused round).
    pub fn set_model_folder(&mut self, folder: pcd_ui_text::ModelFolder) {
        self.embedding.folder = Some(folder);
    }

    /// [`Session::last_scorer`] as `/decisions` shows it, `(fused, detail)`: with the semantic
    /// signal, the folder its model came from (when the host said); lexical, why.
    pub fn last_scorer_shown(&self) -> Option<(bool, String)> {
        Some(match self.embedding.last.as_ref()? {
            RoundScorer::Fused => (
                true,
                self.embedding
                    .folder
                    .map(|f| f.describe().to_owned())
                    .unwrap_or_default(),
            ),
            RoundScorer::Lexical(why) => (false, why.clone()),
        })
    }

    /// The texts the semantic signal would embed for the current inventory's candidates (only
    /// what their decision requests carry), so the host can embed them ahead of the first
    /// prompt, off its event loop. Empty unless the embedded scorer decides and the host said
    /// it can answer semantic jobs.
    pub fn candidate_texts(&self) -> Vec<String> {
        if !self.embedding.on || self.settings.decision.provider != DecisionProvider::Embedded {
            return Vec::new();
        }
        self.candidate_set().map_or_else(Vec::new, |set| {
            set.candidates
                .iter()
                .flat_map(semantic::candidate_texts)
                .collect()
        })
    }

    /// Whether a prompt boundary's embedded round goes to the host as a semantic job.
    pub(super) fn semantic_on(&self) -> bool {
        self.embedding.on
    }

    /// Hands an embedded round to the host as a semantic job: the lexical scores are computed now
    /// (they are the round's scores when no vectors come back), the round waits under the
    /// current generation like an HTTP model's.
    pub(super) fn start_semantic_job(
        &mut self,
        round_id: String,
        boundary: Boundary,
        set: CandidateSet,
        text: &str,
        effects: &mut Vec<Effect>,
    ) {
        let lexical = self.lexical_scores(&set.candidates, text);
        let mut texts: Vec<String> = pcd_picker::embedded::prompt_texts(text)
            .into_iter()
            .map(std::borrow::Cow::into_owned)
            .collect();
        let prompts = texts.len();
        let per_candidate: Vec<Vec<String>> = set
            .candidates
            .iter()
            .map(semantic::candidate_texts)
            .collect();
        let counts = per_candidate.iter().map(Vec::len).collect();
        texts.extend(per_candidate.into_iter().flatten());
        let mode = self.settings.tools.mode;
        let first_prompt = (boundary == Boundary::InitialPrompt).then(|| text.to_owned());
        let id = self.pend(round_id, boundary, set, Vec::new(), first_prompt, None);
        self.embedding.pending.insert(id, lexical.clone());
        effects.push(Effect::Embed(SemanticJob {
            id,
            texts,
            prompts,
            per_candidate: counts,
            mode,
            lexical,
            // Of what a request carries (`names_a_file` reads only that), as the lexical scorer.
            names_a_file: pcd_picker::embedded::names_a_file(text),
        }));
    }

    /// The host's answer to a [`SemanticJob`]: the fused scores (one per candidate), or `Err`
    /// with why the round is scored lexically (the vectors were not ready within the bound, the
    /// model could not be used). Finishes the round as [`Session::decided`] does; an unknown job
    /// changes nothing. Scores of the wrong length, or not numbers in `[0, 1]`, count as no
    /// vectors: the lexical scores decide.
    pub fn semantic_decided(
        &mut self,
        job: u64,
        fused: Result<Vec<f64>, String>,
        active: &[String],
    ) -> Vec<Effect> {
        let Some(lexical) = self.embedding.pending.remove(&job) else {
            return Vec::new();
        };
        let valid = |s: &Vec<f64>| {
            s.len() == lexical.len() && s.iter().all(|x| x.is_finite() && (0.0..=1.0).contains(x))
        };
        let (scores, scorer) = match fused {
            Ok(scores) if valid(&scores) => (scores, RoundScorer::Fused),
            Ok(_) => (lexical, RoundScorer::Lexical(String::new())),
            Err(why) => (lexical, RoundScorer::Lexical(why)),
        };
        let name = match scorer {
            RoundScorer::Fused => SCORER_FUSED,
            RoundScorer::Lexical(_) => SCORER_LEXICAL,
        };
        self.embedding.last = Some(scorer);
        let Some(pending) = self.jobs.remove(&job) else {
            return Vec::new();
        };
        self.finish_job(
            pending,
            Ok(scores.into_iter().map(Some).collect()),
            Some(name),
            active,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_job_and_vectors_give_the_same_scores_and_missing_vectors_give_none() {
        let job = SemanticJob {
            id: 1,
            texts: vec!["p".into(), "a".into(), "b".into()],
            prompts: 1,
            per_candidate: vec![1, 1],
            mode: Mode::Tools,
            lexical: vec![0.2, 0.0],
            names_a_file: false,
        };
        let vectors = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![1.0, 0.0]];
        let once = job.scores(&vectors).unwrap();
        assert_eq!(once, job.scores(&vectors).unwrap());
        // The candidate whose vector is the prompt's ranks first, whatever the lexical score.
        assert!(once[1] > once[0], "{once:?}");
        assert_eq!(job.scores(&vectors[..2]), None);
        // With two prompt texts, the second of which is the first candidate's: each candidate
        // takes its best cosine, and it is the first candidate that now ranks first.
        let two = SemanticJob {
            texts: vec!["p".into(), "q".into(), "a".into(), "b".into()],
            prompts: 2,
            ..job
        };
        let vectors = vec![
            vec![1.0, 0.0],
            vec![0.0, 1.0],
            vec![0.0, 1.0],
            vec![1.0, 0.0],
        ];
        let both = two.scores(&vectors).unwrap();
        assert!(both[0] >= both[1], "{both:?}");
        assert_eq!(
            SemanticJob {
                prompts: 0,
                ..two.clone()
            }
            .scores(&vectors),
            None
        );
        // A layout that does not cover the vectors is no answer.
        let short = SemanticJob {
            per_candidate: vec![1],
            ..two
        };
        assert_eq!(short.scores(&vectors), None);
    }

    /// A tool's texts (its whole text, then its description's first sentence) are joined into
    /// its one vector: a prompt like the first sentence finds the tool whose whole text it is
    /// not like.
    #[test]
    fn a_tool_is_scored_by_its_whole_text_and_first_sentence_together() {
        let job = SemanticJob {
            id: 1,
            // The prompt; a tool of two texts; a tool of one.
            texts: ["p", "t1", "t1 first", "t2"].map(String::from).to_vec(),
            prompts: 1,
            per_candidate: vec![2, 1],
            mode: Mode::Tools,
            lexical: vec![0.0, 0.0],
            names_a_file: false,
        };
        // The prompt is the first tool's first sentence and unlike its whole text: joined, the
        // first tool's cosine is 0.71; the second tool's whole text is 0.5 like the prompt.
        let vectors = vec![
            vec![1.0, 0.0, 0.0],
            vec![0.0, 1.0, 0.0],
            vec![1.0, 0.0, 0.0],
            vec![0.5, 0.0, 0.75f32.sqrt()],
        ];
        let joined = job.scores(&vectors).unwrap();
        assert!(joined[0] > joined[1], "{joined:?}");
        // Without its first sentence the first tool has no cosine, and the second ranks first.
        let without_first = SemanticJob {
            texts: ["p", "t1", "t2"].map(String::from).to_vec(),
            per_candidate: vec![1, 1],
            ..job
        };
        let alone = without_first
            .scores(&[vectors[0].clone(), vectors[1].clone(), vectors[3].clone()])
            .unwrap();
        assert!(alone[0] < alone[1], "{alone:?}");
    }

    /// A group's texts (its whole text, then each member name) are joined into its one vector:
    /// the member that fits the prompt lifts its group, however many others it has.
    #[test]
    fn a_group_is_scored_by_its_best_member_too() {
        let job = SemanticJob {
            id: 1,
            // The prompt; a group of three (its text, then two member names); a lone tool.
            texts: ["p", "g", "m1", "m2", "t"].map(String::from).to_vec(),
            prompts: 1,
            per_candidate: vec![3, 1],
            mode: Mode::Mcp,
            lexical: vec![0.0, 0.0],
            names_a_file: false,
        };
        let (x, y) = (vec![1.0, 0.0], vec![0.0, 1.0]);
        let h = std::f32::consts::FRAC_1_SQRT_2;
        // The group's own text and the lone tool are equally far from the prompt (cosine
        // 0.71); the group's second member is the prompt's own vector.
        let far = vec![h, h];
        let vectors = vec![x.clone(), far.clone(), y, x, far];
        let scores = job.scores(&vectors).unwrap();
        assert!(scores[0] > scores[1], "{scores:?}");
    }
}
