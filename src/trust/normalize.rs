//! Text as the detectors read it: what an attacker varies to slip past a phrase list is
//! undone first.
//!
//! 1. Invisible characters are removed: zero-width spaces and joiners, soft hyphens, word
//!    joiners, bidirectional controls and the byte-order mark ("ig\u{200b}nore").
//! 2. Compatibility forms are decomposed, diacritics dropped and case folded ([`fold`]):
//!    "ＩＧＮＯＲＥ", "Ignóre" and "ignore" read alike.
//! 3. Latin look-alikes from Cyrillic and Greek are mapped to the Latin letter they imitate
//!    ("іgnоrе" with Cyrillic і, о, е). Real Cyrillic or Greek text turns into Latin letters
//!    that match no phrase, which is harmless for these detectors.
//! 4. The text is cut into words at every character that is not a letter or digit, so
//!    "d'ora", "user's" and "IMPORTANT:" become "d ora", "user s" and "important :".
//!    A colon is kept as its own word because "important:" differs from "important".

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

fn invisible(c: char) -> bool {
    matches!(c, '\u{00ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}' | '\u{feff}')
}

/// The Latin letter a Cyrillic or Greek look-alike (already lower case) imitates.
fn unconfuse(c: char) -> char {
    match c {
        'а' | 'α' => 'a',
        'в' | 'β' => 'b',
        'с' | 'ϲ' => 'c',
        'ԁ' => 'd',
        'е' | 'ε' | 'ё' => 'e',
        'һ' | 'н' => 'h',
        'і' | 'ι' | 'ї' => 'i',
        'ј' => 'j',
        'к' | 'κ' => 'k',
        'ӏ' => 'l',
        'м' => 'm',
        'п' | 'η' => 'n',
        'о' | 'ο' | 'σ' => 'o',
        'р' | 'ρ' => 'p',
        'ԛ' => 'q',
        'г' => 'r',
        'ѕ' => 's',
        'т' | 'τ' => 't',
        'υ' => 'u',
        'ν' => 'v',
        'ԝ' | 'ω' => 'w',
        'х' | 'χ' => 'x',
        'у' | 'γ' => 'y',
        'ᴢ' => 'z',
        c => c,
    }
}

/// The words of `text` after the steps in the module docs.
pub fn words(text: &str) -> Vec<String> {
    let visible: String = text.chars().filter(|&c| !invisible(c)).collect();
    let folded: String = fold(&visible).chars().map(unconfuse).collect();
    let mut out = Vec::new();
    let mut word = String::new();
    for c in folded.chars() {
        if c.is_alphanumeric() {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        if c == ':' {
            out.push(":".into());
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The words a search for a name compares (erasure of a subject): [`words`] without the colon
/// words. "Zebulon  Quartz’s", "«ZEBULON QUARTZ»", "Zébulon\u{a0}Quartz" and
/// "Zebu\u{200b}lon Quartz" all hold the words `zebulon quartz`; "l’Émile" holds `l emile`.
pub fn search_words(text: &str) -> Vec<String> {
    let mut w = words(text);
    w.retain(|x| x != ":");
    w
}

/// [`search_words`] with each invisible character read as a space: a zero-width space may
/// stand between two words ("Zebulon\u{200b}Quartz") as well as inside one.
pub fn search_words_spaced(text: &str) -> Vec<String> {
    search_words(&text.chars().map(|c| if invisible(c) { ' ' } else { c }).collect::<String>())
}

/// Whether `text` holds an invisible character (step 1 of the module docs).
pub fn has_invisible(text: &str) -> bool {
    text.chars().any(invisible)
}

/// Lower case, compatibility-decomposed, without combining marks: "Café" and "cafe" fold alike.
pub fn fold(word: &str) -> String {
    // ASCII is its own NFKD form: the common case skips decomposition.
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    word.nfkd().filter(|c| !is_combining_mark(*c)).flat_map(char::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_invisible_characters_and_width_fold_away() {
        assert_eq!(words("IGNORE ALL"), words("іgnоrе\u{200b} ＡＬＬ"));
        assert_eq!(words("d'ora in poi"), ["d", "ora", "in", "poi"]);
        assert_eq!(words("IMPORTANT: Règles"), ["important", ":", "regles"]);
    }
}
