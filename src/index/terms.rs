//! Text analysis for the lexical index: Unicode word segmentation, case and diacritic folding,
//! and exact terms for identifiers.
//!
//! BM25 is there for what embeddings blur: names, amounts, dates and identifiers. So besides
//! the UAX #29 words ("connection", "10.0.0.1", "10,000", "pg_hba.conf"), every whitespace-
//! separated token that holds punctuation inside it is also kept whole ("10.0.0.1:5432",
//! "2024-05-01t12:00:00z", "€10,000"), trimmed of the punctuation around it, so an exact query
//! for it matches exactly.

use unicode_segmentation::UnicodeSegmentation;

pub use crate::trust::normalize::fold;

/// The index terms of `text`, in order, with repeats (term frequency counts them).
pub fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text.unicode_words().map(fold).filter(|w| !w.is_empty()).collect();
    // Whole tokens are added once each; a set keeps that linear on long punctuated texts.
    let mut seen: std::collections::HashSet<String> = out.iter().cloned().collect();
    for token in text.split_whitespace() {
        let token = token.trim_matches(|c: char| !c.is_alphanumeric() && !"€$£¥%".contains(c));
        let inner_punct = token.chars().any(|c| !c.is_alphanumeric());
        if inner_punct && token.chars().any(char::is_alphanumeric) {
            let whole = fold(token);
            if seen.insert(whole.clone()) {
                out.push(whole);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_folded() {
        assert_eq!(terms("Café NAÏVE Straße"), vec!["cafe", "naive", "straße"]);
        assert_eq!(fold("ＡＢＣ"), "abc");
        assert_eq!(fold("Pg_HBA.conf"), "pg_hba.conf");
    }

    #[test]
    fn identifiers_amounts_and_dates_are_also_kept_whole() {
        let t =
            terms("ERROR 2024-05-01T12:00:00Z connection refused at 10.0.0.1:5432 (pg_hba.conf)");
        for want in [
            "error",
            "connection",
            "10.0.0.1",
            "pg_hba.conf",
            "10.0.0.1:5432",
            "2024-05-01t12:00:00z",
        ] {
            assert!(t.contains(&want.to_string()), "{want} missing from {t:?}");
        }
        let t = terms("Quotes above €10,000: don't draft.");
        assert!(t.contains(&"€10,000".to_string()), "{t:?}");
        assert!(t.contains(&"10,000".to_string()), "{t:?}");
        assert!(!t.iter().any(|w| w.ends_with(':') || w.ends_with('.')), "{t:?}");
    }
}
