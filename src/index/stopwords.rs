//! Function words a lexical query does not score: the commonest articles, pronouns,
//! prepositions, conjunctions, auxiliaries and question words of English, Italian, Spanish,
//! French, German and Portuguese, folded as index terms are (lower case, no diacritics).
//!
//! BM25's IDF gives every word some weight, and a word in half the documents still adds
//! `ln(1 + 1/1)·tf` ≈ 0.7 per occurrence: "the", "did" and "when" then rank long turns above the
//! one that holds the query's only rare word. They are dropped from queries (never from the
//! index, so an exact phrase search is unaffected), unless the query is nothing but them.
//! Lists are kept short on purpose: a word that is also a content word in another of the six
//! languages ("come", "also", "die" in English; "gift" in German) is not in them.

/// True when `term` (a folded index term) is a function word.
pub fn is_stopword(term: &str) -> bool {
    WORDS.binary_search(&term).is_ok()
}

/// Sorted, so a lookup is a binary search.
const WORDS: &[&str] = &[
    "a", "about", "after", "ai", "al", "all", "alla", "alle", "am", "an", "and", "any", "are",
    "as", "at", "au", "aux", "be", "been", "before", "being", "but", "by", "can", "ce", "ces",
    "che", "chi", "con", "cosa", "could", "da", "dal", "dalla", "das", "de", "dei", "del", "della",
    "delle", "dem", "den", "der", "des", "did", "do", "does", "dos", "du", "e", "ein", "eine",
    "einen", "einer", "el", "em", "en", "er", "es", "est", "et", "from", "had", "has", "have",
    "he", "her", "him", "his", "how", "i", "il", "in", "is", "ist", "it", "its", "je", "la", "las",
    "le", "les", "lo", "los", "ma", "mas", "me", "mi", "mit", "my", "na", "nao", "nel", "nella",
    "no", "o", "of", "on", "or", "os", "ou", "our", "par", "per", "pour", "qual", "quale",
    "quando", "que", "qui", "quoi", "se", "she", "si", "sie", "sind", "so", "su", "sul", "sulla",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "to", "tu", "um", "uma", "un", "una", "und", "une", "uno", "us", "von", "was", "we", "were",
    "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would", "y", "you",
    "your", "zu",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_folded_and_found() {
        assert!(WORDS.windows(2).all(|w| w[0] < w[1]), "WORDS must stay sorted and unique");
        for w in WORDS {
            assert_eq!(&crate::index::terms::fold(w), w, "{w} is not folded");
        }
        assert!(is_stopword("the") && is_stopword("della") && is_stopword("und"));
        assert!(!is_stopword("invoice") && !is_stopword("come") && !is_stopword("also"));
    }
}
