//! A summary written by the host's language model, and the checks it must pass before it is
//! stored.
//!
//! The model gets the same inputs as the extractive summariser ([`prompt`]); its answer is
//! plain text. [`check`] accepts it only when it fits the tier's token cap and every number
//! (dates and amounts included), every identifier (a token with a digit in it) and every
//! proper name (a capitalised word that does not start a sentence) in it also occurs in the
//! sources. Anything else is refused with the reason, and the extractive summary is written
//! instead: the model may phrase, never add facts.

use super::summary::{tokens, Summary};
use crate::learn::phrasing::{names, numbers};

/// The instructions and inputs for a summary of `sources` (their texts and verdicts), with the
/// extractive draft.
pub fn prompt(sources: &[String], draft: &Summary, cap: usize) -> String {
    let mut p = String::from(
        "You summarise an agent's memory records for later retrieval. Keep failures with \
         their causes, decisions with their reasons, open issues and next steps; count routine \
         successes instead of listing them. DO NOT invent: use only numbers, dates, names and \
         identifiers that appear in the records below.\n",
    );
    p.push_str(&format!("Answer with plain text of at most {} words.\n\nRecords:\n", cap * 3 / 4));
    for s in sources {
        p.push_str("- ");
        p.push_str(s);
        p.push('\n');
    }
    p.push_str("\nDraft to improve:\n");
    p.push_str(&draft.text());
    p
}

/// Checks the model's `answer` against the `sources` texts and the token `cap`; returns the
/// text to store, or why it was refused.
pub fn check(answer: &str, sources: &[String], cap: usize) -> Result<String, String> {
    let text = answer.trim();
    if text.is_empty() {
        return Err("empty summary".into());
    }
    if tokens(text) > cap {
        return Err(format!("{} tokens, over the cap of {cap}", tokens(text)));
    }
    let all = sources.join("\n");
    let known_numbers = numbers(&all);
    for n in numbers(text) {
        if !known_numbers.contains(&n) {
            return Err(format!("number {n} is not in the sources"));
        }
    }
    let lower = all.to_lowercase();
    for w in text.split_whitespace() {
        let clean = w.trim_matches(|c: char| !c.is_alphanumeric());
        if clean.chars().any(|c| c.is_ascii_digit()) && !lower.contains(&clean.to_lowercase()) {
            return Err(format!("identifier {clean:?} is not in the sources"));
        }
    }
    // Names are compared as letters and digits only ("INV-2291" is the name "inv2291").
    let squashed: String =
        lower.chars().filter(|c| c.is_alphanumeric() || c.is_whitespace()).collect();
    for n in names(text) {
        if !lower.contains(n.as_str()) && !squashed.contains(n.as_str()) {
            return Err(format!("name {n:?} is not in the sources"));
        }
    }
    Ok(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources() -> Vec<String> {
        vec![
            "Invoice INV-2291 for 4,200 EUR sent to Dana Whitfield".into(),
            "Deploy failed — the cache held a stale lockfile".into(),
        ]
    }

    #[test]
    fn a_faithful_summary_passes() {
        let ok = "Sent invoice INV-2291 (4,200 EUR) to Dana Whitfield. One deploy failed on a stale lockfile.";
        assert_eq!(check(ok, &sources(), 100).as_deref(), Ok(ok));
    }

    #[test]
    fn invented_amounts_names_and_ids_are_refused() {
        let e = check("Sent invoice INV-2291 for 5,100 EUR to Dana.", &sources(), 100).unwrap_err();
        assert!(e.contains("5100"), "{e}");
        let e = check("Sent the invoice to Dana Whitfield and Marco Rossi.", &sources(), 100)
            .unwrap_err();
        assert!(e.contains("marco"), "{e}");
        let e = check("Sent invoice INV-2292 to Dana Whitfield.", &sources(), 100).unwrap_err();
        assert!(e.contains("2292"), "{e}");
        assert!(check(&"word ".repeat(200), &sources(), 100).unwrap_err().contains("cap"));
    }
}
