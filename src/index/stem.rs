//! Stems for the lexical index: "researching", "researched" and "research" meet at "research",
//! "camping" and "camped" at "camp", so BM25 matches a question to the memory that says the
//! same word in another form.
//!
//! A text's language is guessed from its commonest function words (a dozen or so per
//! language, folded: `MARKERS`) among English, Italian, Spanish, French, German and
//! Portuguese; each word that is not a function word then gets its Snowball stem
//! (`rust-stemmers`) as an extra index term, marked "~research" so it is never taken for a
//! word. The words themselves stay, so an exact form (an identifier, a name) still matches
//! exactly, and a query in the memory's own form matches on both terms — "did the deploy
//! work?" finds "the deploy failed" on two terms and "we deployed it" on one. A text with none
//! of the markers (an identifier, a list of names, a bare keyword query such as "deploy")
//! gets no stems.

use rust_stemmers::{Algorithm, Stemmer};

/// Function words that say which language a text is in, folded as index terms are.
const MARKERS: [(Algorithm, &[&str]); 6] = [
    (
        Algorithm::English,
        &[
            "the", "and", "is", "are", "was", "were", "to", "of", "you", "i", "it", "that", "what",
            "did", "with", "my", "have", "for", "how", "when", "why",
        ],
    ),
    (
        Algorithm::Italian,
        &[
            "il", "che", "di", "non", "per", "sono", "una", "gli", "della", "del", "questo",
            "come", "ho", "anche", "ma", "nel", "cosa", "quando", "perche",
        ],
    ),
    (
        Algorithm::Spanish,
        &[
            "el", "que", "los", "las", "por", "una", "del", "para", "como", "pero", "esta", "muy",
            "yo", "lo", "cuando", "donde", "es",
        ],
    ),
    (
        Algorithm::French,
        &[
            "le", "les", "et", "est", "une", "pour", "pas", "je", "vous", "nous", "des", "du",
            "avec", "ce", "qui", "sur", "quand",
        ],
    ),
    (
        Algorithm::German,
        &[
            "der", "die", "das", "und", "ist", "nicht", "ich", "ein", "eine", "mit", "den", "zu",
            "auf", "sie", "wir", "wann", "warum",
        ],
    ),
    (
        Algorithm::Portuguese,
        &[
            "o", "os", "que", "nao", "um", "uma", "para", "com", "do", "da", "voce", "eu", "esta",
            "muito", "mas", "quando", "onde",
        ],
    ),
];

/// The language whose markers occur most often among `words` (folded index terms); the
/// first in `MARKERS` order on a tie; `None` when no marker occurs.
pub fn language(words: &[String]) -> Option<Algorithm> {
    let mut best: Option<(Algorithm, usize)> = None;
    for (lang, markers) in MARKERS {
        let n = words.iter().filter(|w| markers.contains(&w.as_str())).count();
        if n > 0 && best.is_none_or(|(_, m)| n > m) {
            best = Some((lang, n));
        }
    }
    best.map(|(lang, _)| lang)
}

/// Marks a stem term, so it never collides with a word: "~research".
pub const STEM_MARK: char = '~';

/// The stem terms of `words` (in `words`' language), in order, one per word of more than
/// three letters: [`STEM_MARK`] and the Snowball stem ("researching" → "~research"). Function
/// words and words with digits get none. A word always gets its stem term, even when the stem
/// is the word itself: an exact form then matches on the word and on its stem, an inflected
/// one on the stem alone, and BM25 prefers the exact form.
pub fn stems(words: &[String]) -> Vec<String> {
    let Some(lang) = language(words) else { return Vec::new() };
    let stemmer = Stemmer::create(lang);
    words
        .iter()
        .filter(|w| {
            w.chars().count() > 3
                && w.chars().all(char::is_alphabetic)
                && !super::stopwords::is_stopword(w)
        })
        .map(|w| {
            let mut t = String::with_capacity(w.len() + 1);
            t.push(STEM_MARK);
            t.push_str(&stemmer.stem(w));
            t
        })
        .collect()
}

/// `index::terms::terms` and, after them, the Snowball stems of its words in the text's
/// language: what BM25 indexes and queries with.
pub fn index_terms(text: &str) -> Vec<String> {
    let mut out = crate::index::terms::terms(text);
    let stems = stems(&out);
    out.extend(stems);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(t: &str) -> Vec<String> {
        crate::index::terms::terms(t)
    }

    #[test]
    fn the_language_is_the_one_whose_function_words_occur() {
        assert_eq!(language(&words("What did Caroline research?")), Some(Algorithm::English));
        assert_eq!(language(&words("Che cosa ha detto il cliente?")), Some(Algorithm::Italian));
        assert_eq!(language(&words("Der Kunde ist nicht zufrieden")), Some(Algorithm::German));
        assert_eq!(language(&words("Q-2024-117 INV-58")), None);
    }

    #[test]
    fn inflected_forms_meet_at_their_stem() {
        let a = stems(&words("Caroline: I was researching adoption agencies"));
        assert!(a.contains(&"~research".to_string()), "{a:?}");
        let b = stems(&words("we went camping and we camped twice"));
        assert!(b.iter().filter(|s| *s == "~camp").count() == 2, "{b:?}");
        assert_eq!(stems(&words("the camp")), vec!["~camp"], "the stem term even when unchanged");
        let ids = stems(&words("Q-2024-117 was sent"));
        assert!(ids.iter().all(|s| !s.contains(char::is_numeric)), "identifiers: {ids:?}");
        let it = stems(&words("il cliente ha chiesto le consegne e la consegna"));
        assert!(it.iter().filter(|s| *s == "~consegn").count() == 2, "{it:?}");
    }
}
