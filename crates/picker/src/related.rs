//! Related words: the embedded scorer's small, offline notion of "means much the same".
//!
//! A prompt says "psychiatrist" where a tool says "psychologist", "theater" where it says
//! "plays", "laundry" where it says "washing". The table in `data/related-words.txt` lists, for
//! the 20,000 most frequent English words, the words whose GloVe vectors are most similar (cosine
//! of at least 0.71; see `data/NOTICE.md` for its source and licence). It is compiled in, read
//! once per process on first use, and keyed by stem, so it meets prompts and tools however the
//! stemmer folds their words.

use crate::text::stem;
use pcd_model::fnv::FnvMap;
use std::sync::OnceLock;

/// The table as compiled in.
const TABLE: &str = include_str!("../data/related-words.txt");

/// Stems and their related stems with the similarity (0.71 to 1), most similar first.
#[derive(Debug, Default)]
pub struct RelatedWords {
    /// Every stem the table names, by id.
    stems: Vec<String>,
    /// A stem's related stems, by id.
    map: FnvMap<String, Vec<(u32, f32)>>,
}

impl RelatedWords {
    /// Reads a table: `word<TAB>word:hundredths word:hundredths …` a line, `#` comments. Words
    /// are stemmed; a related word with the key's own stem is dropped, and of several words with
    /// one stem the most similar is kept. Malformed items are skipped.
    pub fn parse<'a>(text: &'a str) -> RelatedWords {
        let mut stems: Vec<String> = Vec::new();
        let mut stem_ids: FnvMap<String, u32> = FnvMap::default();
        // The same words recur as keys and as related words; stem each once.
        let mut word_ids: FnvMap<&'a str, u32> = FnvMap::default();
        let mut id_of = |word: &'a str, stems: &mut Vec<String>| -> u32 {
            if let Some(&id) = word_ids.get(word) {
                return id;
            }
            let s = stem(word);
            let id = match stem_ids.get(&s) {
                Some(&id) => id,
                None => {
                    let id = stems.len() as u32;
                    stem_ids.insert(s.clone(), id);
                    stems.push(s);
                    id
                }
            };
            word_ids.insert(word, id);
            id
        };
        let mut lists: FnvMap<u32, Vec<(u32, f32)>> = FnvMap::default();
        for line in text.lines() {
            if line.starts_with('#') {
                continue;
            }
            let Some((word, rest)) = line.split_once('\t') else {
                continue;
            };
            let key = id_of(word, &mut stems);
            let entry = lists.entry(key).or_default();
            for item in rest.split(' ') {
                let Some((other, hundredths)) = item.split_once(':') else {
                    continue;
                };
                let Ok(hundredths) = hundredths.parse::<u8>() else {
                    continue;
                };
                let other = id_of(other, &mut stems);
                if other == key {
                    continue;
                }
                let similarity = f32::from(hundredths.min(100)) / 100.0;
                match entry.iter_mut().find(|(s, _)| *s == other) {
                    Some(slot) => slot.1 = slot.1.max(similarity),
                    None => entry.push((other, similarity)),
                }
            }
        }
        let map = lists
            .into_iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(key, mut list)| {
                list.sort_by(|a, b| {
                    b.1.total_cmp(&a.1)
                        .then_with(|| stems[a.0 as usize].cmp(&stems[b.0 as usize]))
                });
                (stems[key as usize].clone(), list)
            })
            .collect();
        RelatedWords { stems, map }
    }

    /// The compiled-in table, read on first use (or by [`RelatedWords::warm`]).
    pub fn shipped() -> &'static RelatedWords {
        static SHIPPED: OnceLock<RelatedWords> = OnceLock::new();
        SHIPPED.get_or_init(|| RelatedWords::parse(TABLE))
    }

    /// Reads the compiled-in table now, so that the first prompt does not wait for it (a host
    /// calls it on a background thread when a session starts).
    pub fn warm() {
        Self::shipped();
    }

    /// The stems related to `term` (a stem) with their similarity, most similar first; empty for
    /// a word the table does not know.
    pub fn of(&self, term: &str) -> impl Iterator<Item = (&str, f32)> + '_ {
        self.map
            .get(term)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|&(id, similarity)| (self.stems[id as usize].as_str(), similarity))
    }

    /// How many stems have related stems.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_relates_everyday_task_words() {
        let table = RelatedWords::shipped();
        assert!(table.len() > 8_000, "{}", table.len());
        let related = |a: &str, b: &str| table.of(&stem(a)).any(|(s, _)| s == stem(b));
        assert!(related("psychiatrist", "psychologist"));
        assert!(related("theater", "theatre"));
        assert!(related("stock", "shares"));
        assert!(!related("stock", "weather"));
        for key in table.map.keys() {
            let list: Vec<(&str, f32)> = table.of(key).collect();
            assert!(list.windows(2).all(|w| w[0].1 >= w[1].1));
            assert!(list.iter().all(|(_, s)| (0.71..=1.0).contains(s)));
            assert!(list.iter().all(|(s, _)| s != key));
        }
    }

    #[test]
    fn parsing_stems_merges_and_skips_what_it_cannot_read() {
        let table = RelatedWords::parse(
            "# comment\nmovies\tfilms:80 film:85 movie:99 bad cinema:x theater:71\nnolist\n",
        );
        // "movies" and "movie" share a stem, so "movie" is not related to itself; "films" and
        // "film" merge at the higher similarity.
        let film = stem("film");
        let theater = stem("theater");
        assert_eq!(
            table.of(&stem("movie")).collect::<Vec<_>>(),
            [(film.as_str(), 0.85), (theater.as_str(), 0.71)]
        );
        assert_eq!(table.of("nolist").count(), 0);
        assert_eq!(table.of("unknown").count(), 0);
    }
}
