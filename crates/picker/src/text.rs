//! Terms for the embedded scorer: tokenising names and prose the same way, and a light stemmer.
//!
//! Tool names arrive as `camelCase`, `snake_case`, `kebab-case` or `SCREAMING_CASE`, prose as
//! sentences; both are cut into lowercase words at case changes and at anything that is not a
//! letter or a digit, so `getWeatherForecast` and "get the weather forecast" share their terms.

/// Words too common in prompts and descriptions to say anything about a tool.
///
/// Pi's `tool_search` drops 21 articles and prepositions; prompts addressed to an assistant also
/// carry politeness and question words ("can you please help me find…") that would otherwise
/// match every description that uses them.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "for",
    "from", "had", "has", "have", "having", "he", "her", "here", "him", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "just", "let", "like", "me", "might", "more", "most", "much",
    "must", "my", "need", "no", "not", "now", "of", "off", "on", "once", "only", "or", "other",
    "our", "out", "over", "own", "please", "same", "shall", "she", "should", "so", "some", "such",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "under", "until", "up", "us", "very", "want", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
    "you", "your", "yours",
];

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// English clitics after an apostrophe: possessive or `is`/`has` (`s`), negation (`n't`), and
/// `are`, `have`, `will`, `would`/`had`, `am`.
const CLITICS: &[&str] = &["s", "t", "re", "ve", "ll", "d", "m"];

fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '\u{02bc}')
}

/// The verb before a negation whose `n` was just dropped: `ca(n't)`, `wo(n't)`, `sha(n't)` and
/// `ai(n't)` are `can`, `will`, `shall` and `is`; the others (`do`, `does`, `is`, `were`…) are
/// already whole.
fn negated_base(word: &mut String) {
    let base = match word.as_str() {
        "ca" => "can",
        "wo" => "will",
        "sha" => "shall",
        "ai" => "is",
        _ => return,
    };
    word.clear();
    word.push_str(base);
}

/// Calls `emit` with every stemmed, lowercase term of `text`, in order, without stop words and
/// without terms made only of digits (in prompts those are values: ids, amounts, dates).
pub fn for_each_term(text: &str, mut emit: impl FnMut(&str)) {
    for_each_word(text, |w| emit(&stem(w)));
}

/// Like [`for_each_term`] but before stemming, so callers can cache stems per word.
pub fn for_each_word(text: &str, mut emit: impl FnMut(&str)) {
    words(text, false, |w, _| emit(w));
}

/// Calls `emit` with every pair of adjacent words of `text` (stop words included, digits-only
/// words not) written as one (`on call` -> `oncall`, `sign-up` -> `signup`, `data base` ->
/// `database`), stemmed: a prompt may split what a tool's name writes as one word.
pub fn for_each_compound(text: &str, mut emit: impl FnMut(&str)) {
    let mut previous = String::new();
    let mut joined = String::new();
    words(text, true, |w, adjacent| {
        if adjacent && !previous.is_empty() {
            joined.clear();
            joined.push_str(&previous);
            joined.push_str(w);
            emit(&stem(&joined));
        }
        previous.clear();
        previous.push_str(w);
    });
}

/// The words of `text`; `emit` also learns whether a word follows the previous one with only a
/// blank or a hyphen between them (not at a case change, an apostrophe or other punctuation).
fn words(text: &str, keep_stop_words: bool, mut emit: impl FnMut(&str, bool)) {
    let mut adjacent = false;
    let mut gap_is_join = true;
    let mut word = String::new();
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    // `word` is lowercased as it is read, so no word needs a second buffer.
    let mut flush = |word: &mut String, adjacent: &mut bool| {
        if !word.is_empty() {
            // A lone Latin letter says nothing about a tool (`o'clock`, `x` in `x = 2`).
            let lone_letter = word.len() == 1 && word.as_bytes()[0].is_ascii_alphabetic();
            let digits = word.bytes().all(|b| b.is_ascii_digit());
            if !lone_letter && !digits && (keep_stop_words || !is_stop_word(word)) {
                emit(word, *adjacent);
                *adjacent = true;
            } else {
                *adjacent = false;
            }
            word.clear();
        }
    };
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            // `who's`, `project's`, `don't`, `we'll`: the word before the apostrophe counts, the
            // clitic after it never becomes a term of its own.
            if is_apostrophe(c) && !word.is_empty() {
                let mut ahead = chars.clone();
                let mut clitic = String::new();
                while let Some(&n) = ahead.peek() {
                    if !n.is_alphabetic() || clitic.len() > 2 {
                        break;
                    }
                    clitic.extend(n.to_lowercase());
                    ahead.next();
                }
                let at_word_end = !ahead.peek().is_some_and(|n| n.is_alphanumeric());
                if at_word_end && CLITICS.contains(&clitic.as_str()) {
                    if clitic == "t" && word.ends_with('n') {
                        word.pop();
                        negated_base(&mut word);
                    }
                    chars = ahead;
                }
            }
            flush(&mut word, &mut adjacent);
            gap_is_join &= c == ' ' || c == '-';
            prev = None;
            continue;
        }
        if word.is_empty() {
            adjacent &= gap_is_join;
            gap_is_join = true;
        }
        if let Some(p) = prev {
            // `getWeather` -> get|Weather, `HTTPServer` -> HTTP|Server, `v2Api` -> v2|Api.
            let lower_to_upper = (p.is_lowercase() || p.is_ascii_digit()) && c.is_uppercase();
            let acronym_end = p.is_uppercase()
                && c.is_uppercase()
                && chars.peek().is_some_and(|n| n.is_lowercase());
            if lower_to_upper || acronym_end {
                flush(&mut word, &mut adjacent);
                adjacent = false;
            }
        }
        if c.is_ascii() {
            word.push(c.to_ascii_lowercase());
        } else {
            word.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    flush(&mut word, &mut adjacent);
}

/// The terms of `text`, as [`for_each_term`] finds them.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_owned()));
    out
}

fn has_vowel(s: &str) -> bool {
    s.bytes()
        .any(|b| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y'))
}

fn strip<'a>(word: &'a str, suffix: &str, min_stem: usize) -> Option<&'a str> {
    let stem = word.strip_suffix(suffix)?;
    (stem.len() >= min_stem && has_vowel(stem)).then_some(stem)
}

/// A light English stemmer: plurals, `-ed`/`-ing` and a few derivational endings, then a final
/// `e`, so "create", "creates", "created", "creating" and "creation" all become `creat`.
///
/// It only needs to map related words of one language to one term consistently; it is applied
/// to prompts and tool text alike, and words it does not know pass through unchanged.
pub fn stem(word: &str) -> String {
    if word.len() <= 3 || !word.is_ascii() {
        return word.to_owned();
    }
    // `ies` and a final consonant-`y` both become `i`, so "companies"/"company" and
    // "movies"/"movie" (after the final `e` goes) each meet.
    let mut w: String = if let Some(s) = word.strip_suffix("ies").filter(|s| s.len() > 1) {
        format!("{s}i")
    } else if let Some(s) = ["sses", "ches", "shes", "xes", "zes"]
        .iter()
        .find_map(|suf| word.strip_suffix(suf).map(|s| (s, suf)))
        .map(|(s, suf)| format!("{s}{}", &suf[..suf.len() - 2]))
    {
        s
    } else if word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        word[..word.len() - 1].to_owned()
    } else {
        word.to_owned()
    };
    let verbal = strip(&w, "ing", 3).or_else(|| strip(&w, "ed", 3));
    if let Some(s) = verbal {
        let b = s.as_bytes();
        let n = b.len();
        // `running` -> `run`, but `called` stays `call` and `passed` `pass`.
        let undouble = n >= 2
            && b[n - 1] == b[n - 2]
            && !matches!(b[n - 1], b'l' | b's' | b'z')
            && b[n - 1].is_ascii_alphabetic()
            && !has_vowel(&s[n - 1..]);
        w = if undouble {
            s[..n - 1].to_owned()
        } else {
            s.to_owned()
        };
    }
    for (suffix, replacement) in [
        ("ational", "ate"),
        ("ization", "ize"),
        ("isation", "ize"),
        ("ation", "ate"),
        ("ator", "ate"),
        ("fulness", "ful"),
        ("iveness", "ive"),
        ("ousness", "ous"),
        ("ness", ""),
        ("ment", ""),
        ("er", ""),
        ("or", ""),
        ("ion", ""),
    ] {
        if let Some(s) = strip(&w, suffix, 3) {
            w = format!("{s}{replacement}");
            break;
        }
    }
    if w.len() > 3 && w.ends_with('e') {
        w.pop();
    }
    // `reservation`/`reserve`, `information`/`inform`, `confirmation`/`confirm`: the `-ate` that
    // `-ation` became goes when a long enough stem stays (`update` and `format` keep theirs).
    if w.len() >= 7 && w.ends_with("at") {
        w.truncate(w.len() - 2);
    }
    if w.len() > 3 && w.ends_with('y') && !has_vowel(&w[w.len() - 2..w.len() - 1]) {
        w.pop();
        w.push('i');
    }
    w
}

/// `text` cut to at most `max_chars` characters on a character boundary, with `…` when cut, and
/// with control characters replaced by spaces (they carry no meaning for relevance and could
/// break a line-oriented request).
pub fn bounded(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars * 4));
    for (count, c) in text.chars().enumerate() {
        if count == max_chars {
            out.pop();
            out.push('…');
            return out;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out
}

/// At most how many blocks of a prompt are scored on their own: the first and the last (a request
/// is usually one or the other, around what was pasted).
pub const MAX_PROMPT_BLOCKS: usize = 2;

/// The blocks of a prompt: its paragraphs (split at blank lines) and its fenced code blocks
/// (from a line starting with three backticks to the next), each with at least two words of two
/// letters or more, in order; of more than [`MAX_PROMPT_BLOCKS`], the first and the last.
/// A request is usually a paragraph of its own next to what was pasted around it (a log, a stack
/// trace, code), so each block can be read alone.
pub fn blocks(prompt: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut start: Option<usize> = None;
    let mut in_fence = false;
    let mut offset = 0;
    for line in prompt.split_inclusive('\n') {
        let trimmed = line.trim();
        let fence = trimmed.starts_with("```");
        if fence || (trimmed.is_empty() && !in_fence) {
            if let Some(s) = start.take() {
                out.push(&prompt[s..offset]);
            }
            in_fence ^= fence;
        } else if start.is_none() {
            start = Some(offset);
        }
        offset += line.len();
    }
    if let Some(s) = start {
        out.push(&prompt[s..]);
    }
    out.retain(|block| {
        block
            .split(|c: char| !c.is_alphabetic())
            .filter(|word| word.chars().nth(1).is_some())
            .nth(1)
            .is_some()
    });
    if out.len() > MAX_PROMPT_BLOCKS {
        let keep = MAX_PROMPT_BLOCKS / 2;
        out.drain(keep..out.len() - keep);
    }
    out
}

/// The texts of a prompt read on their own: the prompt itself, then, when it has more than one
/// [block](blocks), those blocks (the first and the last). The embedded scorer reads them of the
/// part a request carries ([`crate::embedded::prompt_texts`]).
pub(crate) fn prompt_texts(prompt: &str) -> Vec<&str> {
    let parts = blocks(prompt);
    let mut texts = vec![prompt];
    if parts.len() > 1 {
        texts.extend(parts);
    }
    texts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn names_and_prose_share_terms() {
        assert_eq!(
            terms("getWeatherForecast"),
            terms("get the weather forecast")
        );
        assert_eq!(
            terms("get_weather_forecast"),
            terms("Get weather-forecasts!")
        );
        assert_eq!(terms("HTTPServerStatus"), vec!["http", "serv", "status"]);
        assert_eq!(
            terms("uber_ride 42 v2Api"),
            vec!["uber", "rid", "v2", "api"]
        );
    }

    #[test]
    fn related_word_forms_stem_alike() {
        let creat = ["create", "creates", "created", "creating", "creation"];
        for w in creat {
            assert_eq!(stem(w), "creat", "{w}");
        }
        assert_eq!(stem("issues"), stem("issue"));
        assert_eq!(stem("searches"), stem("search"));
        assert_eq!(stem("running"), stem("run"));
        assert_eq!(stem("called"), "call");
        assert_eq!(stem("companies"), stem("company"));
        assert_eq!(stem("movies"), stem("movie"));
        // No `-ly` rule: it would split "family" from "families".
        assert_eq!(stem("families"), stem("family"));
        assert_eq!(stem("directed"), stem("director"));
        for (a, b) in [
            ("reservation", "reserve"),
            ("information", "inform"),
            ("confirmation", "confirmed"),
            ("recommendation", "recommend"),
            ("calculation", "calculator"),
            ("updated", "update"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} {b}");
        }
        assert_ne!(stem("format"), stem("form"));
    }

    #[test]
    fn contractions_and_possessives_never_make_one_letter_terms() {
        assert_eq!(
            terms("Who's on call for payments tonight?"),
            terms("Who is on call for payments tonight?")
        );
        assert_eq!(terms("the project's board"), terms("the project board"));
        assert_eq!(terms("don't deploy, it's late"), terms("deploy late"));
        assert_eq!(
            terms("we can't and won't, they'll, I'd, I'm, you've, we're"),
            Vec::<String>::new()
        );
        assert_eq!(terms("the team\u{2019}s pager"), terms("the team pager"));
        for text in [
            "o'clock",
            "rock 'n' roll",
            "x = y + z",
            "l'avion",
            "'quoted' words",
        ] {
            assert!(
                terms(text).iter().all(|t| t.chars().count() > 1),
                "{text}: {:?}",
                terms(text)
            );
        }
    }

    #[test]
    fn adjacent_words_make_compounds() {
        let mut out = Vec::new();
        for_each_compound("Who's on call? sign-up, data base; getWeather x y", |c| {
            out.push(c.to_owned())
        });
        assert_eq!(out, ["oncall", "signup", "databas"]);
    }

    #[test]
    fn stop_words_and_bare_numbers_are_dropped() {
        assert_eq!(
            terms("Can you please find the 1234 files for me?"),
            vec!["find", "fil"]
        );
    }

    #[test]
    fn non_ascii_words_are_kept_whole() {
        assert_eq!(
            terms("Tôi cần một chuyến xe"),
            vec!["tôi", "cần", "một", "chuyến", "xe"]
        );
        assert_eq!(terms("笔记"), vec!["笔记"]);
    }

    #[test]
    fn bounded_cuts_on_characters_and_blanks_controls() {
        assert_eq!(bounded("abc", 3), "abc");
        assert_eq!(bounded("abcd", 3), "ab…");
        assert_eq!(bounded("é\u{7}é\né", 10), "é é é");
        assert_eq!(bounded("ééééé", 2), "é…");
    }

    #[test]
    fn blocks_are_paragraphs_and_fenced_code() {
        // A fenced block is one block, blank lines and all.
        let fenced = "search the tracker for this crash:\n```\nthread 'w' panicked at src/q.rs:2:1\n\nnote: run with backtrace\n```\n\n  \n42\n";
        assert_eq!(
            blocks(fenced),
            [
                "search the tracker for this crash:\n",
                "thread 'w' panicked at src/q.rs:2:1\n\nnote: run with backtrace\n",
            ]
        );
        // Of three paragraphs, the first and the last.
        let prompt =
            "the deploy failed:\n\nerror: refused at worker.rs:88\n\n  \nand open an issue\n";
        assert_eq!(
            blocks(prompt),
            ["the deploy failed:\n", "and open an issue\n"]
        );
        // One paragraph is one block, and the prompt is read whole only.
        assert_eq!(
            blocks("what's the weather\nin Porto?"),
            ["what's the weather\nin Porto?"]
        );
        assert_eq!(
            prompt_texts("what's the weather in Porto?"),
            ["what's the weather in Porto?"]
        );
        assert_eq!(prompt_texts(prompt).len(), 3);
        assert_eq!(prompt_texts(prompt)[0], prompt);
        // No words, no block; an empty prompt is still read.
        assert!(blocks("\n\n12 34\n\n").is_empty());
        assert_eq!(prompt_texts(""), [""]);
    }

    #[test]
    fn of_many_blocks_the_first_and_the_last_are_read() {
        let prompt = (1..=7)
            .map(|i| format!("paragraph number {i}"))
            .collect::<Vec<_>>()
            .join("\n\n");
        let read = blocks(&prompt);
        assert_eq!(read.len(), MAX_PROMPT_BLOCKS);
        assert!(read[0].contains("number 1") && read[1].contains("number 7"));
    }
}
