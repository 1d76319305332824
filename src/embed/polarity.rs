//! Polarity: is a text a negated directive ("never use semicolons") or not?
//!
//! Sentence encoders barely see negation: multilingual-e5-small scores "never use semicolons"
//! against "use semicolons" at 0.938, as close as a paraphrase. A memory engine that stores
//! rules must not confuse a rule with its opposite, so every embedding carries a [`Polarity`]
//! found from negation cues, and [`stance`] combines it with the cosine to tell *same*,
//! *opposite* and *unrelated* apart.
//!
//! Cues cover English, Italian, German, French, Spanish and Portuguese. Negative concord
//! ("ne … jamais", "non … mai", "no … nunca") is one negation, not two, so the rule is simply
//! "any cue negates", except for fixed phrases that do not negate the claim ("not only",
//! "no matter", "nicht nur", "non solo", "non seulement", "no solo", "não só").

/// Whether a text states something or its negation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Polarity {
    /// No negation cue: "use semicolons".
    #[default]
    Affirmative,
    /// At least one negation cue: "never use semicolons", "non usare il punto e virgola".
    Negated,
}

/// A negation cue found in a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cue {
    /// The cue word as listed (lower case).
    pub word: &'static str,
    /// ISO 639-1 code of the language the cue was listed for (`"en"`, `"it"`…).
    pub lang: &'static str,
}

/// How two texts relate, from their cosine and polarities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stance {
    /// About the same thing, same polarity: a paraphrase or restatement.
    Same,
    /// About the same thing, opposite polarity: one contradicts the other.
    Opposite,
    /// Not about the same thing (cosine below the threshold).
    Unrelated,
}

/// Default cosine above which two E5 texts are "about the same thing". E5 puts unrelated
/// sentences at 0.70–0.80 and paraphrases and negations at 0.90–0.97.
pub const DEFAULT_SAME_TOPIC: f32 = 0.88;

const CUES: &[(&str, &str)] = &[
    // English
    ("not", "en"),
    ("no", "en"),
    ("never", "en"),
    ("cannot", "en"),
    ("nothing", "en"),
    ("none", "en"),
    ("nobody", "en"),
    ("neither", "en"),
    ("nor", "en"),
    ("dont", "en"),
    ("avoid", "en"),
    ("avoiding", "en"),
    ("refrain", "en"),
    ("n't", "en"),
    // Italian
    ("non", "it"),
    ("mai", "it"),
    ("nessun", "it"),
    ("nessuno", "it"),
    ("nessuna", "it"),
    ("niente", "it"),
    ("nulla", "it"),
    ("né", "it"),
    ("evita", "it"),
    ("evitare", "it"),
    ("evitate", "it"),
    // German
    ("nicht", "de"),
    ("nie", "de"),
    ("niemals", "de"),
    ("kein", "de"),
    ("keine", "de"),
    ("keinen", "de"),
    ("keinem", "de"),
    ("keiner", "de"),
    ("keines", "de"),
    ("nichts", "de"),
    ("weder", "de"),
    ("vermeide", "de"),
    ("vermeiden", "de"),
    ("verzichte", "de"),
    // French
    ("ne", "fr"),
    ("n'", "fr"),
    ("pas", "fr"),
    ("jamais", "fr"),
    ("aucun", "fr"),
    ("aucune", "fr"),
    ("rien", "fr"),
    ("ni", "fr"),
    ("évite", "fr"),
    ("éviter", "fr"),
    ("évitez", "fr"),
    // Spanish
    ("nunca", "es"),
    ("jamás", "es"),
    ("ningún", "es"),
    ("ninguno", "es"),
    ("ninguna", "es"),
    ("nada", "es"),
    ("nadie", "es"),
    ("evitar", "es"),
    ("evite", "es"),
    // Portuguese
    ("não", "pt"),
    ("nao", "pt"),
    ("nenhum", "pt"),
    ("nenhuma", "pt"),
    ("ninguém", "pt"),
    ("nem", "pt"),
    ("evita", "pt"),
];

/// Phrases that contain a cue but do not negate the statement.
const NOT_NEGATIONS: &[&[&str]] = &[
    &["not", "only"],
    &["no", "matter"],
    &["no", "longer", "than"],
    &["nicht", "nur"],
    &["non", "solo"],
    &["non", "soltanto"],
    &["non", "seulement"],
    &["pas", "seulement"],
    &["no", "solo"],
    &["no", "sólo"],
    &["não", "só"],
    &["não", "apenas"],
];

impl Polarity {
    /// The polarity of `text` (see the module docs for the rule).
    pub fn of(text: &str) -> Polarity {
        if find_cue(text).is_some() {
            Polarity::Negated
        } else {
            Polarity::Affirmative
        }
    }
}

/// The first negation cue in `text`, if any.
pub fn find_cue(text: &str) -> Option<Cue> {
    let words = words(text);
    for (i, w) in words.iter().enumerate() {
        let followed_by = |phrase: &[&str]| {
            phrase[0] == w.as_str()
                && phrase[1..]
                    .iter()
                    .enumerate()
                    .all(|(j, p)| words.get(i + 1 + j).map(String::as_str) == Some(*p))
        };
        if NOT_NEGATIONS.iter().any(|p| followed_by(p)) {
            continue;
        }
        if let Some(cue) = cue_of(w) {
            return Some(cue);
        }
    }
    None
}

/// How `a` relates to `b`, given their cosine and polarities, with `same_topic` as the cosine
/// from which they are about the same thing (see [`DEFAULT_SAME_TOPIC`]).
pub fn stance(cosine: f32, a: Polarity, b: Polarity, same_topic: f32) -> Stance {
    if cosine < same_topic {
        Stance::Unrelated
    } else if a == b {
        Stance::Same
    } else {
        Stance::Opposite
    }
}

fn cue_of(word: &str) -> Option<Cue> {
    if let Some(&(w, lang)) = CUES.iter().find(|(c, _)| *c == word) {
        return Some(Cue { word: w, lang });
    }
    // English contractions (don't, isn't, won't) and French elision (n'utilise, n'est).
    if word.len() > 3 && word.ends_with("n't") {
        return Some(Cue { word: "n't", lang: "en" });
    }
    if word.len() > 2 && word.starts_with("n'") {
        return Some(Cue { word: "n'", lang: "fr" });
    }
    None
}

/// Lower-cased words; apostrophes (straight and typographic) stay inside words.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .map(|w| w.replace('’', "'").to_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn neg(t: &str) -> bool {
        Polarity::of(t) == Polarity::Negated
    }

    #[test]
    fn negated_directives_in_six_languages() {
        for t in [
            "Never use semicolons",
            "Do not use semicolons in JavaScript code.",
            "Don't draft quotes above €10,000",
            "no exclamation marks",
            "Non usare mai il punto e virgola",
            "Verwende niemals Semikolons",
            "Keine Semikolons verwenden",
            "N'utilise jamais de points-virgules",
            "Ne mets pas de points-virgules",
            "No uses punto y coma",
            "Nunca uses punto y coma",
            "Não use ponto e vírgula",
            "Nunca use ponto e vírgula",
            "Avoid semicolons",
        ] {
            assert!(neg(t), "{t:?} should be negated");
        }
    }

    #[test]
    fn affirmative_statements_in_six_languages() {
        for t in [
            "Use semicolons",
            "Always use semicolons",
            "Usa sempre il punto e virgola",
            "Verwende immer Semikolons",
            "Utilise toujours des points-virgules",
            "Usa siempre punto y coma",
            "Use sempre ponto e vírgula",
            "Note the node version", // "no" inside words is not a cue
            "The user prefers dark mode",
            "Not only tests but also lints must pass",
        ] {
            assert!(!neg(t), "{t:?} should be affirmative");
        }
    }

    #[test]
    fn cue_reports_word_and_language() {
        assert_eq!(
            find_cue("Verwende niemals Semikolons"),
            Some(Cue { word: "niemals", lang: "de" })
        );
        assert_eq!(find_cue("it isn’t ready"), Some(Cue { word: "n't", lang: "en" }));
        assert_eq!(find_cue("use tabs"), None);
    }

    #[test]
    fn stance_needs_topic_and_polarity() {
        use Polarity::*;
        assert_eq!(stance(0.94, Negated, Affirmative, DEFAULT_SAME_TOPIC), Stance::Opposite);
        assert_eq!(stance(0.94, Negated, Negated, DEFAULT_SAME_TOPIC), Stance::Same);
        assert_eq!(stance(0.75, Negated, Affirmative, DEFAULT_SAME_TOPIC), Stance::Unrelated);
    }
}
