//! What an edit did, as a behaviour signal stores it: the symbol classes counted before and
//! after, the greeting, pleasantry and sign-off before and after, the phrases removed and
//! added, the length ratio, the rewrite distance, the languages and the draft's word hashes.
//! How these are computed from a draft and the text sent is `learn::features`; how they are
//! laid out in bytes is `record::signal`.

/// Punctuation and symbol classes whose removal or addition is a habit worth noticing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Symbol {
    /// `;`
    Semicolon,
    /// `!`
    Exclamation,
    /// `?`
    Question,
    /// Emoji and pictographs.
    Emoji,
    /// `—` and `–`.
    Dash,
    /// `…` or `...`.
    Ellipsis,
}

impl Symbol {
    /// Every class, in byte-format order.
    pub const ALL: [Symbol; 6] = [
        Symbol::Semicolon,
        Symbol::Exclamation,
        Symbol::Question,
        Symbol::Emoji,
        Symbol::Dash,
        Symbol::Ellipsis,
    ];

    /// Its name in pattern keys (`semicolon`…).
    pub fn name(self) -> &'static str {
        match self {
            Symbol::Semicolon => "semicolon",
            Symbol::Exclamation => "exclamation",
            Symbol::Question => "question",
            Symbol::Emoji => "emoji",
            Symbol::Dash => "dash",
            Symbol::Ellipsis => "ellipsis",
        }
    }

    /// The plural a rule names ("semicolons").
    pub fn plural(self) -> &'static str {
        match self {
            Symbol::Semicolon => "semicolons",
            Symbol::Exclamation => "exclamation marks",
            Symbol::Question => "question marks",
            Symbol::Emoji => "emoji",
            Symbol::Dash => "dashes",
            Symbol::Ellipsis => "ellipses",
        }
    }

    /// The class named `s`.
    pub fn from_name(s: &str) -> Option<Symbol> {
        Symbol::ALL.into_iter().find(|x| x.name() == s)
    }
}

/// The structural parts of a message an edit may remove, add or replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Part {
    /// The opening salutation ("Dear Marco,").
    Greeting,
    /// An opening pleasantry sentence ("I hope you are well.").
    Pleasantry,
    /// The closing line ("Best regards,").
    Signoff,
}

impl Part {
    /// Every part, in byte-format order.
    pub const ALL: [Part; 3] = [Part::Greeting, Part::Pleasantry, Part::Signoff];

    /// Its name in pattern keys.
    pub fn name(self) -> &'static str {
        match self {
            Part::Greeting => "greeting",
            Part::Pleasantry => "pleasantry",
            Part::Signoff => "signoff",
        }
    }

    /// The part named `s`.
    pub fn from_name(s: &str) -> Option<Part> {
        Part::ALL.into_iter().find(|x| x.name() == s)
    }
}

/// One part before and after the edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct PartChange {
    /// The draft had it.
    pub before: bool,
    /// The sent text has it.
    pub after: bool,
    /// Both have it, with different words.
    pub changed: bool,
}

/// What an edit did, reduced to counts and flags (see the module docs).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct EditFeatures {
    /// Count of each [`Symbol`] (in [`Symbol::ALL`] order) in the draft.
    pub symbols_before: [u16; 6],
    /// The same in the sent text.
    pub symbols_after: [u16; 6],
    /// Each [`Part`], in [`Part::ALL`] order.
    pub parts: [PartChange; 3],
    /// Runs of words the user removed (folded, space-joined).
    pub removed: Vec<String>,
    /// Runs of words the user added.
    pub added: Vec<String>,
    /// Sent characters / draft characters.
    pub length_ratio: f32,
    /// Word-level normalised edit distance.
    pub distance: f32,
    /// Language guess of the draft (ISO 639-1, empty when unsure).
    pub lang_before: String,
    /// Language guess of the sent text.
    pub lang_after: String,
    /// Sorted FNV-1a hashes of the draft's folded words and word pairs.
    pub draft_words: Vec<u32>,
}
