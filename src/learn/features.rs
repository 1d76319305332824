//! Edit features: what a user changed between the agent's draft (`before`) and what they sent
//! (`after`), reduced at write time to a few counts and flags so the texts themselves need not
//! be kept.
//!
//! Everything here is deterministic and language-light:
//!
//! - **Symbol classes** ([`Symbol`]): how many of each the draft and the sent text hold.
//! - **Greeting, pleasantry, sign-off** ([`Part`]): whether the opening salutation ("Dear
//!   Marco,"), an opening pleasantry sentence ("I hope you are well.") or a closing line ("Best
//!   regards,") is present before and after, and whether it changed ([`crate::learn::cues`]).
//! - **Phrases** removed or added: runs of 1–[`MAX_PHRASE_WORDS`] words the token diff (longest
//!   common subsequence over folded words) deletes or inserts in the body, outside the parts
//!   above. At most [`MAX_PHRASES`] each way.
//! - **Rewrite**: the word-level Levenshtein distance divided by the longer text's word count
//!   is above [`REWRITE_DISTANCE`] (0.6): the user threw the draft away. A rewrite records no
//!   phrases (every word changed; the rewrite says it all).
//! - **Length ratio**: characters after / before.
//! - **Language**: a guess from function words for each text (six languages).
//! - **Draft words**: FNV-1a 32-bit hashes of the draft's folded words and word pairs, sorted
//!   and deduplicated, so a later pass can ask "did this draft contain the phrase P?" (a
//!   removal is only possible where the phrase was) without keeping the draft.

use crate::index::terms::fold;
use crate::learn::cues::{GREETINGS, LANGUAGE_WORDS, PLEASANTRIES, SIGNOFFS};
pub use crate::record::edit::{EditFeatures, Part, PartChange, Symbol};

/// Word-level normalised edit distance above which an edit is a full rewrite.
pub const REWRITE_DISTANCE: f32 = 0.6;
/// Longest removed or added run of words kept as a phrase.
pub const MAX_PHRASE_WORDS: usize = 6;
/// Phrases kept each way per edit.
pub const MAX_PHRASES: usize = 8;
/// Words of each text the diff looks at (beyond this, the rest is not compared).
pub const MAX_DIFF_WORDS: usize = 1000;

impl Symbol {
    fn count(self, text: &str) -> u16 {
        let n = match self {
            Symbol::Semicolon => text.matches(';').count(),
            Symbol::Exclamation => text.matches('!').count(),
            Symbol::Question => text.matches('?').count(),
            Symbol::Emoji => text.chars().filter(|c| is_emoji(*c)).count(),
            Symbol::Dash => text.matches(['—', '–']).count(),
            Symbol::Ellipsis => text.matches('…').count() + text.matches("...").count(),
        };
        n.min(u16::MAX as usize) as u16
    }
}

fn is_emoji(c: char) -> bool {
    matches!(c as u32, 0x1F300..=0x1FAFF | 0x2600..=0x27BF | 0x1F000..=0x1F2FF)
}

impl EditFeatures {
    /// Compares a draft with what was sent.
    pub fn of(before: &str, after: &str) -> Self {
        let (b, a) = (Message::parse(before), Message::parse(after));
        let mut f = EditFeatures {
            length_ratio: if before.is_empty() {
                1.0
            } else {
                after.chars().count() as f32 / before.chars().count() as f32
            },
            lang_before: language(&b.all_words).to_string(),
            lang_after: language(&a.all_words).to_string(),
            ..EditFeatures::default()
        };
        for (i, s) in Symbol::ALL.into_iter().enumerate() {
            f.symbols_before[i] = s.count(before);
            f.symbols_after[i] = s.count(after);
        }
        for (i, (pb, pa)) in b.parts.iter().zip(&a.parts).enumerate() {
            f.parts[i] = PartChange {
                before: pb.is_some(),
                after: pa.is_some(),
                changed: matches!((pb, pa), (Some(x), Some(y)) if x != y),
            };
        }
        let (bw, aw) = (&b.all_words, &a.all_words);
        let (bw, aw) = (&bw[..bw.len().min(MAX_DIFF_WORDS)], &aw[..aw.len().min(MAX_DIFF_WORDS)]);
        let longest = bw.len().max(aw.len());
        f.distance = if longest == 0 { 0.0 } else { levenshtein(bw, aw) as f32 / longest as f32 };
        if !f.rewrite() {
            let (removed, added) = diff_runs(&b.body, &a.body);
            f.removed = removed;
            f.added = added;
        }
        f.draft_words = word_hashes(&b.body);
        f
    }

    /// The user threw the draft away and wrote their own.
    pub fn rewrite(&self) -> bool {
        self.distance > REWRITE_DISTANCE
    }

    /// The draft held `class`.
    pub fn symbol_before(&self, class: Symbol) -> u16 {
        self.symbols_before[class as usize]
    }

    /// The sent text holds `class`.
    pub fn symbol_after(&self, class: Symbol) -> u16 {
        self.symbols_after[class as usize]
    }

    /// How `part` changed.
    pub fn part(&self, part: Part) -> PartChange {
        self.parts[part as usize]
    }

    /// True when the draft contained `phrase` (folded words), as far as the stored word
    /// hashes tell: every word, and every pair of neighbouring words, was in the draft.
    pub fn draft_had(&self, phrase: &str) -> bool {
        let words: Vec<&str> = phrase.split(' ').filter(|w| !w.is_empty()).collect();
        let has = |h: u32| self.draft_words.binary_search(&h).is_ok();
        !words.is_empty()
            && words.iter().all(|w| has(fnv(w)))
            && words.windows(2).all(|p| has(fnv(&format!("{} {}", p[0], p[1]))))
    }
}

/// A message split into the parts edit features compare.
struct Message {
    /// Folded text of greeting, pleasantry and sign-off, when present.
    parts: [Option<String>; 3],
    /// Folded words outside those parts.
    body: Vec<String>,
    /// Folded words of the whole text.
    all_words: Vec<String>,
}

impl Message {
    fn parse(text: &str) -> Self {
        let sentences = sentences(text);
        let mut parts: [Option<String>; 3] = [None, None, None];
        let mut used = vec![false; sentences.len()];
        let starts = |s: &str, list: &[&str]| {
            list.iter().any(|g| {
                s.strip_prefix(g).is_some_and(|rest| {
                    rest.is_empty() || !rest.starts_with(|c: char| c.is_alphanumeric())
                })
            })
        };
        let mut i = 0;
        if let Some(first) = sentences.first() {
            if starts(first, GREETINGS) {
                parts[Part::Greeting as usize] = Some(first.clone());
                used[0] = true;
                i = 1;
            }
        }
        if let Some(s) = sentences.get(i) {
            if PLEASANTRIES.iter().any(|p| s.contains(p)) {
                parts[Part::Pleasantry as usize] = Some(s.clone());
                used[i] = true;
            }
        }
        // A sign-off is one of the last two lines ("Best regards," then a name).
        let n = sentences.len();
        for j in (n.saturating_sub(2)..n).rev() {
            if !used[j] && starts(&sentences[j], SIGNOFFS) {
                parts[Part::Signoff as usize] = Some(sentences[j].clone());
                used[j] = true;
                break;
            }
        }
        let body =
            sentences.iter().zip(&used).filter(|(_, u)| !**u).flat_map(|(s, _)| words(s)).collect();
        let all_words = sentences.iter().flat_map(|s| words(s)).collect();
        Message { parts, body, all_words }
    }
}

/// Folded sentences: split at line breaks and after `.`, `!`, `?` followed by a space.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        for (k, &(i, c)) in chars.iter().enumerate() {
            let next_space = chars.get(k + 1).is_none_or(|(_, n)| n.is_whitespace());
            if matches!(c, '.' | '!' | '?') && next_space {
                push_sentence(&mut out, &line[start..i + c.len_utf8()]);
                start = i + c.len_utf8();
            }
        }
        push_sentence(&mut out, &line[start..]);
    }
    out
}

fn push_sentence(out: &mut Vec<String>, s: &str) {
    let s = s.trim();
    if s.chars().any(char::is_alphanumeric) {
        out.push(fold(s));
    }
}

fn words(folded: &str) -> Vec<String> {
    folded
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// FNV-1a, 32 bits: stable across builds and platforms (the hashes are stored).
pub fn fnv(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

fn word_hashes(words: &[String]) -> Vec<u32> {
    let words = &words[..words.len().min(MAX_DIFF_WORDS)];
    let mut h: Vec<u32> = words.iter().map(|w| fnv(w)).collect();
    h.extend(words.windows(2).map(|p| fnv(&format!("{} {}", p[0], p[1]))));
    h.sort_unstable();
    h.dedup();
    h
}

fn language(words: &[String]) -> &'static str {
    let mut best = ("", 0usize, 0usize);
    for (lang, list) in LANGUAGE_WORDS {
        let n = words.iter().filter(|w| list.contains(&w.as_str())).count();
        if n > best.1 {
            best = (lang, n, best.1);
        } else if n > best.2 {
            best.2 = n;
        }
    }
    // At least two function words, and clearly more than the runner-up.
    if best.1 >= 2 && best.1 >= best.2 * 2 {
        best.0
    } else {
        ""
    }
}

fn levenshtein(a: &[String], b: &[String]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, x) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(x != y);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Runs of words deleted from `a` and inserted into `b` by a longest-common-subsequence diff.
fn diff_runs(a: &[String], b: &[String]) -> (Vec<String>, Vec<String>) {
    let (a, b) = (&a[..a.len().min(MAX_DIFF_WORDS)], &b[..b.len().min(MAX_DIFF_WORDS)]);
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: LCS length of a[i..] and b[j..], in one flat table.
    let mut lcs = vec![0u16; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    let (mut del, mut ins): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    let flush = |run: &mut Vec<&str>, out: &mut Vec<String>| {
        if !run.is_empty() && run.len() <= MAX_PHRASE_WORDS && out.len() < MAX_PHRASES {
            let p = run.join(" ");
            if !out.contains(&p) {
                out.push(p);
            }
        }
        run.clear();
    };
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            flush(&mut del, &mut removed);
            flush(&mut ins, &mut added);
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[at(i, j + 1)] >= lcs[at(i + 1, j)]) {
            ins.push(&b[j]);
            j += 1;
        } else {
            del.push(&a[i]);
            i += 1;
        }
    }
    flush(&mut del, &mut removed);
    flush(&mut ins, &mut added);
    (removed, added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semicolons_and_pleasantries() {
        let f = EditFeatures::of(
            "Dear Marco,\nI hope you are doing well. The invoice is attached; payment is due \
             Friday.\nBest regards,\nMaria",
            "Dear Marco,\nThe invoice is attached, payment is due Friday.\nBest regards,\nMaria",
        );
        assert_eq!(f.symbol_before(Symbol::Semicolon), 1);
        assert_eq!(f.symbol_after(Symbol::Semicolon), 0);
        let p = f.part(Part::Pleasantry);
        assert!(p.before && !p.after, "{p:?}");
        let g = f.part(Part::Greeting);
        assert!(g.before && g.after && !g.changed, "{g:?}");
        assert!(f.part(Part::Signoff).before && f.part(Part::Signoff).after);
        assert!(f.removed.is_empty(), "the pleasantry is a part, not a phrase: {:?}", f.removed);
        assert!(!f.rewrite());
        assert_eq!(f.lang_before, "en");
        assert!(f.draft_had("the invoice is"));
        assert!(!f.draft_had("the contract"));
    }

    #[test]
    fn phrases_and_rewrites() {
        let f = EditFeatures::of(
            "Just wanted to say the shipment left today and should arrive Monday.",
            "The shipment left today and should arrive Monday.",
        );
        assert_eq!(f.removed, vec!["just wanted to say"]);
        assert!(f.added.is_empty());
        let r = EditFeatures::of(
            "Please find our quote for 40 jackets attached, valid for thirty days.",
            "Ciao Marco, ti chiamo domani per discutere il prezzo delle giacche.",
        );
        assert!(r.rewrite(), "distance {}", r.distance);
        assert!(r.removed.is_empty() && r.added.is_empty());
        assert_eq!(r.lang_after, "it");
    }

    #[test]
    fn emoji_dashes_and_ellipses_are_counted() {
        let f = EditFeatures::of("Great news 🎉 — see you soon...", "Great news, see you soon.");
        assert_eq!(f.symbol_before(Symbol::Emoji), 1);
        assert_eq!(f.symbol_before(Symbol::Dash), 1);
        assert_eq!(f.symbol_before(Symbol::Ellipsis), 1);
        assert_eq!(f.symbol_after(Symbol::Emoji), 0);
    }
}
