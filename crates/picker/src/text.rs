//! Terms for the embedded scorer: tokenising names and prose the same way, and a light stemmer.
//!
//! Tool names arrive as `camelCase`, `snake_case`, `kebab-case` or `SCREAMING_CASE`, prose as
//! sentences; both are cut into lowercase words at case changes and at anything that is not a
//! letter or a digit, so `getWeatherForecast` and "get the weather forecast" share their terms.

use std::borrow::Cow;

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
    out.retain(|block| has_two_words(block));
    if out.len() > MAX_PROMPT_BLOCKS {
        let keep = MAX_PROMPT_BLOCKS / 2;
        out.drain(keep..out.len() - keep);
    }
    out
}

/// `text`'s words without its quoted spans (`'…'`, `"…"`, `‘…’`, `“…”`, as [`quoted_spans`] finds
/// them, with three characters or more between the quotes on one line; a bracket before the
/// opening quote and punctuation after the closing one stay), one space between. What a request
/// quotes is mostly its argument (a title, a note, a search term), and its words can name
/// another tool's topic: `create a story 'retry webhooks' on the board` is also read as `create
/// a story on the board`. A second reading, never instead of the whole prompt: the quoted words
/// are as often what names the tool (`search datasets for 'churn'`), and a candidate keeps its
/// best over the texts (`BENCHMARKS.md`, "Issue 31: a request read without what it quotes too").
/// `None` when it has none, or when fewer than two words of two letters would remain.
pub fn without_quoted(text: &str) -> Option<String> {
    let words = words_at(text);
    let plain: Vec<&str> = words.iter().map(|&(_, w)| w).collect();
    let mut rest: Vec<&str> = Vec::with_capacity(plain.len());
    let mut next = 0;
    for span in quoted_spans(&plain) {
        // Backticks quote code, which is what the paste reading is for.
        let (start, end) = (
            span.inner.0 + words[span.first].0,
            span.inner.1 + words[span.last].0,
        );
        let inner = &text[start..end];
        if span.quote == '`' || inner.contains('\n') || inner.chars().nth(2).is_none() {
            continue;
        }
        // A bracket before the opening quote and punctuation after the closing one are the
        // sentence's, and stay.
        let (first, last) = (plain[span.first], plain[span.last]);
        let lead = &first[..span.inner.0 - span.quote.len_utf8()];
        let close = last[span.inner.1..]
            .chars()
            .next()
            .map_or(0, char::len_utf8);
        let trail = &last[span.inner.1 + close..];
        rest.extend(&plain[next..span.first]);
        rest.extend([lead, trail].into_iter().filter(|p| !p.is_empty()));
        next = span.last + 1;
    }
    if next == 0 {
        return None;
    }
    rest.extend(&plain[next..]);
    let rest = rest.join(" ");
    has_two_words(&rest).then_some(rest)
}

/// Whether `text` has at least two words of two letters or more (what a text needs to be read
/// on its own).
fn has_two_words(text: &str) -> bool {
    text.split(|c: char| !c.is_alphabetic())
        .filter(|word| word.chars().nth(1).is_some())
        .nth(1)
        .is_some()
}

/// `text`'s words (split at whitespace), each with its byte offset in `text`.
fn words_at(text: &str) -> Vec<(usize, &str)> {
    text.split_whitespace()
        .map(|w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
        .collect()
}

/// The texts of a prompt read on their own: the prompt itself, then, when it has more than one
/// [block](blocks), those blocks (the first and the last), or, when it is one block with
/// something pasted into it, the prompt [without what was pasted](without_paste), or else, when
/// it quotes something, the prompt [without what it quotes](without_quoted) (so never more than
/// three), each with its web addresses read as the pages they name ([`links_as_pages`]).
/// The embedded scorer reads them of the part a request carries
/// ([`crate::embedded::prompt_texts`]).
pub(crate) fn prompt_texts(prompt: &str) -> Vec<Cow<'_, str>> {
    let parts = blocks(prompt);
    let mut texts = vec![Cow::Borrowed(prompt)];
    if parts.len() > 1 {
        texts.extend(parts.into_iter().map(Cow::Borrowed));
    } else if let Some(request) = without_paste(prompt) {
        texts.push(Cow::Owned(request));
    } else if let Some(request) = without_quoted(prompt) {
        texts.push(Cow::Owned(request));
    }
    texts
        .into_iter()
        .map(|text| match text {
            Cow::Borrowed(text) => links_as_pages(text),
            // An owned text without an address is kept, not copied.
            Cow::Owned(text) => match links_as_pages(&text) {
                Cow::Owned(read) => Cow::Owned(read),
                Cow::Borrowed(_) => Cow::Owned(text),
            },
        })
        .collect()
}

/// At most how many words of a web address's path [`links_as_pages`] keeps.
pub const MAX_LINK_WORDS: usize = 8;

/// `text` with each web address in it (a word, or the rest of a word, from `http://`,
/// `https://` or `www.`) read as the page it names: `the web page URL HOST (WORDS)`, the host
/// without its user, password and port, the words of the path (letters only, two or more, the
/// last segment's ending dropped, at most [`MAX_LINK_WORDS`]) in brackets when there are any,
/// and nothing of the query or the fragment. Read as it is typed, an address is a run of
/// pieces that look like code (`/2024/11/28/Rust-1.83.0.html`, `3f2a9c1b`), and a request built
/// around one ("summarize https://…", "grab https://… and check it's safe") read as work on the
/// code: the need gate passed neither. The host and the path's words are what the address says
/// about the page, and "URL" is the word a tool that takes one uses for it. Borrowed when `text`
/// has no address; pure.
pub fn links_as_pages(text: &str) -> Cow<'_, str> {
    let starts = |rest: &str| {
        let b = rest.as_bytes();
        let has = |p: &[u8]| b.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
        has(b"http://") || has(b"https://") || has(b"www.")
    };
    // Where an address starts: at a word's start or after what opens it (`(`, a quote, `=`).
    let at = |i: usize| {
        text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric() && !matches!(c, '.' | '-' | '_' | '/'))
            && starts(&text[i..])
    };
    let Some(first) = text.char_indices().map(|(i, _)| i).find(|&i| at(i)) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 32);
    let mut from = 0;
    let mut i = first;
    while i < text.len() {
        if !at(i) {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        // The address runs to whitespace, a quote or a closing bracket; trailing punctuation is
        // the sentence's.
        let len = text[i..]
            .find(|c: char| c.is_whitespace() || "\"'`<>()[]{}".contains(c))
            .unwrap_or(text.len() - i);
        let link = text[i..i + len].trim_end_matches(['.', ',', ';', ':', '!', '?']);
        out.push_str(&text[from..i]);
        out.push_str(&page_of(link));
        i += link.len().max(1);
        from = i;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// What [`links_as_pages`] reads a web address as.
fn page_of(link: &str) -> String {
    let link = link.split_once("://").map_or(link, |(_, rest)| rest);
    let link = link.split(['?', '#']).next().unwrap_or(link);
    let (authority, path) = link.split_once('/').unwrap_or((link, ""));
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = host.split(':').next().unwrap_or(host);
    let mut segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if let Some(last) = segments.last_mut() {
        if let Some((stem, _)) = last.rsplit_once('.') {
            *last = stem;
        }
    }
    let words: Vec<&str> = segments
        .iter()
        .flat_map(|s| s.split(|c: char| !c.is_alphabetic()))
        .filter(|w| w.chars().nth(1).is_some())
        .take(MAX_LINK_WORDS)
        .collect();
    if host.is_empty() {
        "a web page URL".to_owned()
    } else if words.is_empty() {
        format!("the web page URL {host}")
    } else {
        format!("the web page URL {host} ({})", words.join(" "))
    }
}

/// Quotes that open a quoted span, each with those that close it (a straight quote is closed by
/// a curly one too, and the other way round, as keyboards and editors mix them).
const QUOTES: &[(char, &[char])] = &[
    ('\'', &['\'', '\u{2019}']),
    ('"', &['"', '\u{201d}']),
    ('`', &['`']),
    ('\u{201c}', &['\u{201d}', '"']),
    ('\u{2018}', &['\u{2019}', '\'']),
];

/// A quoted span of a prompt's words, as [`quoted_spans`] finds it.
struct QuotedSpan {
    /// The index of its first word (the one the quote opens).
    first: usize,
    /// The index of its last word (the one the quote closes; `first` for a one-word span).
    last: usize,
    /// The opening quote.
    quote: char,
    /// What is between the quotes, in bytes: from this offset in the first word to this offset
    /// in the last.
    inner: (usize, usize),
}

/// The quoted spans among a prompt's `words` (split at whitespace), in order and never
/// overlapping: from a word that opens with a quote (after any opening bracket) and has more
/// than the quote, to the first word at most [`MAX_QUOTED_WORDS`] on that ends with a quote
/// closing it (before any closing punctuation); a one-word span has more than its two quotes.
/// Contractions and possessives (`don't`, `kids'`) open nothing. The one finder of quoted spans,
/// for both [`without_paste`] and [`without_quoted`].
fn quoted_spans(words: &[&str]) -> Vec<QuotedSpan> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        let opened = word.trim_start_matches(['(', '[', '{']);
        let lead = word.len() - opened.len();
        let found = opened.chars().next().and_then(|c| {
            let &(quote, closes) = QUOTES.iter().find(|&&(open, _)| open == c)?;
            let after = lead + quote.len_utf8();
            (after < word.len()).then_some((quote, closes, after))
        });
        let Some((quote, closes, after)) = found else {
            i += 1;
            continue;
        };
        let end = (i..words.len().min(i + MAX_QUOTED_WORDS)).find_map(|j| {
            let w = words[j].trim_end_matches(is_wrapping_after(closes));
            let close = w.chars().next_back().filter(|c| closes.contains(c))?;
            let inner_end = w.len() - close.len_utf8();
            (j > i || inner_end > after).then_some((j, inner_end))
        });
        match end {
            Some((last, inner_end)) => {
                spans.push(QuotedSpan {
                    first: i,
                    last,
                    quote,
                    inner: (after, inner_end),
                });
                i = last + 1;
            }
            None => i += 1,
        }
    }
    spans
}

/// Punctuation around a word that says nothing about whether it is code.
fn is_wrapping(c: char) -> bool {
    matches!(c, ',' | '.' | ';' | ':' | '!' | '?' | '(' | ')')
        || QUOTES
            .iter()
            .any(|&(open, closes)| c == open || closes.contains(&c))
}

/// Whether a word of a prompt looks pasted rather than typed: an identifier, a path, a call, a
/// version or an error code (`snake_case`, `a/b`, `Option::unwrap()`, `pool.rs:123`,
/// `TypeError`, `E0502`), never a plain word with its punctuation.
fn looks_like_code(word: &str) -> bool {
    let word = word.trim_matches(is_wrapping);
    let chars: Vec<char> = word.chars().collect();
    let alnum = |c: char| c.is_ascii_alphanumeric();
    chars.iter().any(|c| "_/\\[]{}<>=#@$%&*+|~^".contains(*c))
        || chars.windows(2).any(|w| {
            (alnum(w[0]) && w[1] == '(')
                || (w[0] == ':' && w[1] == ':')
                || (w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
        })
        || chars
            .windows(3)
            .any(|w| alnum(w[0]) && matches!(w[1], '.' | ':') && alnum(w[2]))
        || (chars.iter().any(char::is_ascii_digit) && chars.iter().any(char::is_ascii_alphabetic))
}

/// At most how many words a quoted span runs before its closing quote is no longer looked for.
const MAX_QUOTED_WORDS: usize = 64;

/// The prompt without what was pasted into it, when a request was typed around a paste on the
/// same line or just before it: `search online for "error[E0502]: cannot borrow …"`, `google this
/// for me: TypeError: Cannot read properties of undefined (reading 'map') at …`. Read whole, such
/// a prompt's vector is mostly the paste's, and the request is lost in it; read without it, the
/// request is what remains. What is left out: a quoted span of three words or more of which one
/// looks like code (`looks_like_code`: an identifier, a path, a call, a version or an error code;
/// a quoted sentence is what the user typed: a note, a title); what follows a word that ends in a
/// colon or a question mark (the rest of its line, or every line after when that word ends the
/// line) when it holds three words or more, two or more of them like code and either its first
/// word or two in five of them; and any later line of which half the words look like code. `None`
/// when nothing was pasted, when fewer than two words of two letters remain, or when what remains
/// is most of the prompt (more than three quarters of it).
pub fn without_paste(text: &str) -> Option<String> {
    let words = words_at(text);
    if words.len() < 4 {
        return None;
    }
    let line_of: Vec<usize> = {
        let mut line = 0;
        let mut at = 0;
        words
            .iter()
            .map(|&(offset, _)| {
                line += text[at..offset].matches('\n').count();
                at = offset;
                line
            })
            .collect()
    };
    // Which words look like code, and how many do up to each word (each word is read once).
    let code: Vec<bool> = words.iter().map(|&(_, w)| looks_like_code(w)).collect();
    let mut code_before = vec![0; words.len() + 1];
    for (k, &c) in code.iter().enumerate() {
        code_before[k + 1] = code_before[k] + usize::from(c);
    }
    // Where each word's line ends (the index of the next line's first word).
    let mut line_end = vec![words.len(); words.len()];
    for k in (0..words.len().saturating_sub(1)).rev() {
        line_end[k] = if line_of[k + 1] != line_of[k] {
            k + 1
        } else {
            line_end[k + 1]
        };
    }
    let mut pasted = vec![false; words.len()];
    // Quoted spans of three words or more, one of them like code.
    let plain: Vec<&str> = words.iter().map(|&(_, w)| w).collect();
    for span in quoted_spans(&plain) {
        if span.last >= span.first + 2 && code_before[span.last + 1] > code_before[span.first] {
            pasted[span.first..=span.last]
                .iter_mut()
                .for_each(|p| *p = true);
        }
    }
    // What a colon or a question mark introduces, when it looks pasted: the rest of its line, or
    // every word after when it ends its line.
    for i in 0..words.len() {
        if pasted[i] || !words[i].1.ends_with([':', '?']) {
            continue;
        }
        let end = if line_end[i] == i + 1 {
            words.len()
        } else {
            line_end[i]
        };
        let (len, like_code) = (end - i - 1, code_before[end] - code_before[i + 1]);
        let opens_with_code = code.get(i + 1).copied().unwrap_or(false);
        if len >= 3 && like_code >= 2 && (opens_with_code || 5 * like_code >= 2 * len) {
            pasted[i + 1..end].iter_mut().for_each(|p| *p = true);
        }
    }
    // Later lines that are half code.
    let mut k = 0;
    while k < words.len() {
        let end = line_end[k];
        if line_of[k] > 0 && 2 * (code_before[end] - code_before[k]) >= end - k {
            pasted[k..end].iter_mut().for_each(|p| *p = true);
        }
        k = end;
    }
    if !pasted.contains(&true) {
        return None;
    }
    let kept = words
        .iter()
        .zip(&pasted)
        .filter(|(_, &p)| !p)
        .map(|(&(_, w), _)| w)
        .collect::<Vec<_>>()
        .join(" ");
    let kept = kept.trim_matches(|c: char| matches!(c, ':' | ',' | ';' | '-' | '\u{2014}' | ' '));
    (has_two_words(kept) && 4 * kept.len() <= 3 * text.trim().len()).then(|| kept.to_owned())
}

/// Punctuation that may follow a closing quote (`'…',` or `"…")`), other than those quotes.
fn is_wrapping_after(closes: &[char]) -> impl Fn(char) -> bool + '_ {
    move |c| {
        !closes.contains(&c) && matches!(c, ',' | '.' | ';' | ':' | '!' | '?' | ')' | ']' | '}')
    }
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
    fn a_request_typed_around_a_paste_is_read_without_it() {
        // A quoted paste, and what a colon introduces when it looks like code.
        assert_eq!(
            without_paste(
                "look up whether anyone online has seen this panic: 'thread main panicked at \
                 called Option::unwrap() on a None value, src/pool.rs:123'"
            )
            .as_deref(),
            Some("look up whether anyone online has seen this panic")
        );
        assert_eq!(
            without_paste(
                "google this for me: TypeError: Cannot read properties of undefined (reading \
                 'map') at UserList.render"
            )
            .as_deref(),
            Some("google this for me")
        );
        // Typed on both sides of the paste, in typographic quotes.
        assert_eq!(
            without_paste(
                "were there any \u{201c}connection reset by 10.0.3.14:5432\u{201d} errors in the logs?"
            )
            .as_deref(),
            Some("were there any errors in the logs?")
        );
        // A colon that ends its line introduces every line after it; a later line of code goes.
        assert_eq!(
            without_paste("search the tracker for this crash:\nat cart.total (cart.ts:88:21)\nat main (index.ts:4:1)")
                .as_deref(),
            Some("search the tracker for this crash")
        );
        assert_eq!(
            without_paste(
                "why does the export fail on big files\nexport.rs:88 buf.len() > MAX_LEN"
            )
            .as_deref(),
            Some("why does the export fail on big files")
        );
        // A paste quoted with a straight quote and closed by a curly one.
        assert_eq!(
            without_paste("google this for me 'cannot find module ./config.json\u{2019} please")
                .as_deref(),
            Some("google this for me please")
        );
        // The prompt's texts: the prompt whole, then the request alone.
        let prompt = "search online for \"error[E0502]: cannot borrow `self.items` as mutable\"";
        assert_eq!(prompt_texts(prompt), [prompt, "search online for"]);
        // Each text with its web addresses read as pages, the request without the paste too.
        let prompt = "check https://doc.rust-lang.org/error_codes for \"error[E0502]: cannot \
                      borrow `self.items` as mutable\"";
        let texts = prompt_texts(prompt);
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert_eq!(texts[0], links_as_pages(prompt));
        assert_eq!(
            texts[1],
            "check the web page URL doc.rust-lang.org (error codes) for"
        );
    }

    #[test]
    fn a_request_is_also_read_without_what_it_quotes() {
        for (prompt, rest) in [
            (
                "create a story 'retry webhooks w/ backoff' on the payments board, 3 points",
                Some("create a story on the payments board, 3 points"),
            ),
            ("search datasets for 'churn'", Some("search datasets for")),
            (
                "say \"where is the train station\" in spanish",
                Some("say in spanish"),
            ),
            (
                "file \u{201c}Q3 board pack\u{201d} under \u{2018}finance\u{2019}, thanks",
                Some("file under , thanks"),
            ),
            (
                "(\"nightly build\") failed again, rerun it",
                Some("( ) failed again, rerun it"),
            ),
            // Straight and curly quotes mixed, as editors mix them.
            (
                "note \u{201c}ship it friday\" and 'call the vet\u{2019} for me",
                Some("note and for me"),
            ),
            // Contractions and possessives are no quotes; a quote that never closes is no span.
            ("what's the weather, don't guess", None),
            ("it's sara's 'birthday list", None),
            // Two characters are not a span; nor is a quote that does not open a word.
            ("book the 'XL' ride", None),
            ("the word ' hello ' alone", None),
            // Too little left to read.
            ("'deploy the checkout service now'", None),
            ("ok 'deploy the checkout service now'", None),
            ("", None),
        ] {
            assert_eq!(without_quoted(prompt).as_deref(), rest, "{prompt}");
        }
    }

    proptest::proptest! {
        /// Whatever is typed, the prompt read without its quoted spans is shorter, and each of
        /// its words is in the prompt.
        #[test]
        fn without_quoted_keeps_the_prompts_words(prompt in "[a-z'\"()., \n\u{201c}\u{201d}]{0,80}") {
            if let Some(rest) = without_quoted(&prompt) {
                proptest::prop_assert!(rest.len() < prompt.len());
                for word in rest.split_whitespace() {
                    proptest::prop_assert!(prompt.contains(word), "{word:?} of {rest:?}");
                }
            }
        }
    }

    #[test]
    fn a_prompt_with_nothing_pasted_is_read_whole_and_without_its_quotes() {
        for prompt in [
            "what's the weather in Porto?",
            // An identifier or two, a quote of a word or two: typed, not pasted.
            "rename parse_config to load_config in src/config.rs",
            "book the 'Plus' ride from home to the office",
            "move ABC-88 to done, the fix is in 1.9.2",
            // A colon before words that are not code.
            "quick question: what time is it in Tokyo right now",
            // A quoted sentence is typed (a note, a title), and an unclosed quote is no span.
            "add 'call the dentist tomorrow' to my list",
            "add 'call the dentist tomorrow to my list",
            "",
        ] {
            assert_eq!(without_paste(prompt), None, "{prompt}");
            // Read whole, and, with a quoted span, without it too.
            match without_quoted(prompt) {
                Some(rest) => assert_eq!(prompt_texts(prompt), [prompt, rest.as_str()]),
                None => assert_eq!(prompt_texts(prompt), [prompt]),
            }
        }
        assert_eq!(
            prompt_texts("add 'call the dentist tomorrow' to my list"),
            [
                "add 'call the dentist tomorrow' to my list",
                "add to my list"
            ]
        );
        // What remains is not a request: one word, or most of the prompt.
        assert_eq!(
            without_paste("rustc: error[E0499]: cannot borrow `*self` as mutable more than once"),
            None
        );
        assert_eq!(
            without_paste(
                "we moved the billing job to the new scheduler last week and since then the \
                 nightly invoices arrive late, can you find out why the 'retry later' path runs"
            ),
            None
        );
    }

    proptest::proptest! {
        /// Whatever is typed, the request read without a paste is some of the prompt's words, in
        /// order, and never the whole prompt.
        #[test]
        fn without_paste_keeps_some_of_the_words_in_order(prompt in "[a-z:'`\"_(). \n]{0,80}") {
            if let Some(request) = without_paste(&prompt) {
                let mut words = prompt.split_whitespace();
                for kept in request.split_whitespace() {
                    let kept = kept.trim_matches(|c| matches!(c, ':' | ',' | ';' | '-'));
                    proptest::prop_assert!(
                        words.any(|w| w.contains(kept)),
                        "{request:?} of {prompt:?}"
                    );
                }
                proptest::prop_assert!(request.len() < prompt.trim().len());
            }
        }
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

    #[test]
    fn a_web_address_is_read_as_the_page_it_names() {
        assert_eq!(
            links_as_pages("summarize https://blog.rust-lang.org/2024/11/28/Rust-1.83.0.html"),
            "summarize the web page URL blog.rust-lang.org (Rust)"
        );
        assert_eq!(
            links_as_pages("review https://github.com/acme/web/pull/2291, esp. the cookie bit"),
            "review the web page URL github.com (acme web pull), esp. the cookie bit"
        );
        // Host without user, password or port; nothing of the query or the fragment.
        assert_eq!(
            links_as_pages("open http://me:hunter2@localhost:5173/login?next=/a#top now"),
            "open the web page URL localhost (login) now"
        );
        // A secret in the query or the user part is not read.
        let read = links_as_pages("see https://bot:t0ps3cret@ci.acme.dev/runs/7?token=s3cr3t&x=1");
        assert_eq!(read, "see the web page URL ci.acme.dev (runs)");
        assert_eq!(
            links_as_pages("just http:// here"),
            "just a web page URL here"
        );
        assert_eq!(
            links_as_pages("tldr www.example.org."),
            "tldr the web page URL www.example.org."
        );
        // In brackets, quotes and calls; twice; upper case.
        assert_eq!(
            links_as_pages("fetch('HTTPS://api.acme.dev/v2/users') and (http://x.io/ab_cd)"),
            "fetch('the web page URL api.acme.dev (users)') and (the web page URL x.io (ab cd))"
        );
    }

    #[test]
    fn a_prompt_without_a_web_address_is_read_as_it_is() {
        for prompt in [
            "fix the retry loop in src/net/http.rs",
            "what does notahttp://thing mean",
            "the docs/www.old folder is stale",
            "",
            "https:/one-slash and http: and www",
        ] {
            let read = links_as_pages(prompt);
            assert!(matches!(read, Cow::Borrowed(_)), "{prompt:?} -> {read:?}");
        }
        // A bare `www.` host is an address.
        assert_eq!(
            links_as_pages("is www.example.org up"),
            "is the web page URL www.example.org up"
        );
    }

    #[test]
    fn a_web_address_keeps_at_most_a_few_words_of_its_path() {
        let long = format!("read https://x.dev/{}", ["word"; 40].join("/"));
        let read = links_as_pages(&long);
        assert_eq!(read.matches("word").count(), MAX_LINK_WORDS);
    }

    proptest::proptest! {
        /// Whatever is typed around an address, reading it as a page never panics, keeps what is
        /// not the address as it was, and reads the address as a web page (the query string, the
        /// user and the port left out: `a_web_address_is_read_as_the_page_it_names`).
        #[test]
        fn links_as_pages_keeps_the_rest_of_the_prompt(
            before in "[a-zA-Z .,]{0,20}",
            link in "(https?://|www\\.)[a-z0-9.:@/_?=&#%-]{0,40}",
            after in "[a-zA-Z .,]{0,20}",
        ) {
            let prompt = format!("{before} {link} {after}");
            let read = links_as_pages(&prompt);
            proptest::prop_assert!(read.starts_with(&format!("{before} ")), "{read:?}");
            proptest::prop_assert!(read.ends_with(&format!(" {after}")), "{read:?}");
            proptest::prop_assert!(read.contains("web page"), "{read:?}");
        }

        /// Any text at all: no panic, and what has no address is borrowed as it is.
        #[test]
        fn links_as_pages_never_panics(text in "\\PC{0,60}") {
            let read = links_as_pages(&text);
            if matches!(read, Cow::Borrowed(_)) {
                proptest::prop_assert_eq!(read.as_ref(), text.as_str());
            }
        }
    }
}
