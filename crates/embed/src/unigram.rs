//! A compact SentencePiece Unigram tokenizer for `tokenizer.json` files of the XLM-R / E5 shape.
//!
//! Hugging Face `tokenizers` holds a Unigram vocabulary in a trie of hash maps: for the default
//! model's 126,481 pieces that is ~100 MB resident, more than the whole 4-bit model, and seconds
//! of set-up in wasm. This module keeps the same vocabulary in a few flat arrays (~5 MB) and
//! reproduces `tokenizers`' output exactly for the pipeline it accepts:
//!
//! - normaliser: `Precompiled` (SentencePiece charsmap, applied per grapheme as `tokenizers`
//!   does), optionally followed by `Replace` of `" {2,}"` with `" "`;
//! - pre-tokeniser: `Metaspace` (`▁`, prepend `always`, split);
//! - model: `Unigram` without byte fallback (Viterbi, unknowns fused);
//! - post-processor: `<s> $A </s>` (`TemplateProcessing` or `RobertaProcessing`);
//! - special added tokens split out of the raw text first (with `lstrip` / `rstrip`).
//!
//! Anything else returns `None` from [`Unigram::from_json`] and the caller falls back to
//! `tokenizers`. `tests/tokenizer_equivalence.rs` checks both agree.

use serde::Deserialize;
use spm_precompiled::Precompiled;
use unicode_segmentation::UnicodeSegmentation;

const SPACE_MARK: char = '\u{2581}';
/// `tokenizers`' penalty under the lowest piece score for an unknown character.
const UNK_PENALTY: f64 = 10.0;

/// The vocabulary in flat arrays plus the pipeline around it.
pub(crate) struct Unigram {
    blob: String,
    /// Piece `i` is `blob[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<u32>,
    scores: Vec<f64>,
    /// Piece ids sorted by their bytes, for prefix search.
    sorted: Vec<u32>,
    unk: u32,
    unk_score: f64,
    bos: u32,
    eos: u32,
    charsmap: Option<Precompiled>,
    collapse_spaces: bool,
    specials: Vec<Special>,
    /// The file's own truncation length, special tokens included.
    pub max_length: Option<usize>,
}

struct Special {
    content: String,
    id: u32,
    lstrip: bool,
    rstrip: bool,
}

#[derive(Deserialize)]
struct Json {
    normalizer: Option<serde_json::Value>,
    pre_tokenizer: Option<serde_json::Value>,
    post_processor: Option<serde_json::Value>,
    #[serde(default)]
    added_tokens: Vec<Added>,
    truncation: Option<Truncation>,
    model: Model,
}

#[derive(Deserialize)]
struct Truncation {
    max_length: usize,
}

#[derive(Deserialize)]
struct Added {
    id: u32,
    content: String,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default)]
    special: bool,
    #[serde(default)]
    normalized: bool,
}

#[derive(Deserialize)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    unk_id: Option<u32>,
    vocab: Option<Vec<(String, f64)>>,
    #[serde(default)]
    byte_fallback: bool,
}

impl Unigram {
    /// Builds the compact tokenizer when `json` is a pipeline it reproduces exactly.
    pub fn from_json(json: &[u8]) -> Option<Unigram> {
        let j: Json = serde_json::from_slice(json).ok()?;
        if j.model.kind != "Unigram" || j.model.byte_fallback {
            return None;
        }
        let (charsmap, collapse_spaces) = normaliser(j.normalizer.as_ref()?)?;
        if !metaspace_always_split(j.pre_tokenizer.as_ref()?) {
            return None;
        }
        let vocab = j.model.vocab?;
        let unk = j.model.unk_id?;
        let id_of = |s: &str| vocab.iter().position(|(p, _)| p == s).map(|i| i as u32);
        let (bos, eos) = (id_of("<s>")?, id_of("</s>")?);
        if !bos_a_eos(j.post_processor.as_ref()?) {
            return None;
        }
        let mut specials = Vec::new();
        for a in j.added_tokens {
            if !a.special || a.normalized {
                return None; // non-special added tokens go through normalisation: not handled
            }
            specials.push(Special {
                content: a.content,
                id: a.id,
                lstrip: a.lstrip,
                rstrip: a.rstrip,
            });
        }
        let mut blob = String::with_capacity(vocab.iter().map(|(p, _)| p.len()).sum());
        let mut offsets = Vec::with_capacity(vocab.len() + 1);
        let mut scores = Vec::with_capacity(vocab.len());
        offsets.push(0u32);
        for (piece, score) in &vocab {
            blob.push_str(piece);
            offsets.push(u32::try_from(blob.len()).ok()?);
            scores.push(*score);
        }
        let min_score = scores.iter().copied().fold(f64::INFINITY, f64::min);
        let sorted = sorted_by_bytes(vocab.iter().map(|(p, _)| p.as_str()));
        Some(Unigram {
            blob,
            offsets,
            scores,
            sorted,
            unk,
            unk_score: min_score - UNK_PENALTY,
            bos,
            eos,
            charsmap,
            collapse_spaces,
            specials,
            max_length: j.truncation.map(|t| t.max_length),
        })
    }

    /// Token ids of `text` with `<s>` and `</s>` around them.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![self.bos];
        for segment in self.split_specials(text) {
            match segment {
                Segment::Special(id) => ids.push(id),
                Segment::Text(t) => self.encode_text(t, &mut ids),
            }
        }
        ids.push(self.eos);
        ids
    }

    fn piece(&self, id: u32) -> &str {
        &self.blob[self.offsets[id as usize] as usize..self.offsets[id as usize + 1] as usize]
    }

    /// Splits special tokens out of the raw text, honouring their strip flags.
    fn split_specials<'a>(&self, text: &'a str) -> Vec<Segment<'a>> {
        let mut out = Vec::new();
        let mut rest = 0;
        let mut at = 0;
        while at < text.len() {
            let hit = self
                .specials
                .iter()
                .filter(|s| !s.content.is_empty() && text[at..].starts_with(s.content.as_str()))
                .max_by_key(|s| s.content.len());
            let Some(s) = hit else {
                at += text[at..].chars().next().map_or(1, char::len_utf8);
                continue;
            };
            let mut before = &text[rest..at];
            if s.lstrip {
                before = before.trim_end();
            }
            if !before.is_empty() {
                out.push(Segment::Text(before));
            }
            out.push(Segment::Special(s.id));
            at += s.content.len();
            if s.rstrip {
                at += text[at..].len() - text[at..].trim_start().len();
            }
            rest = at;
        }
        if rest < text.len() {
            out.push(Segment::Text(&text[rest..]));
        }
        out
    }

    fn encode_text(&self, text: &str, ids: &mut Vec<u32>) {
        let mut normal = self.normalise(text);
        if normal.is_empty() {
            return;
        }
        normal = normal.replace(' ', "\u{2581}");
        if !normal.starts_with(SPACE_MARK) {
            normal.insert(0, SPACE_MARK);
        }
        let mut start = 0;
        for (i, _) in normal.match_indices(SPACE_MARK).skip(1) {
            self.viterbi(&normal[start..i], ids);
            start = i;
        }
        self.viterbi(&normal[start..], ids);
    }

    fn normalise(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        match &self.charsmap {
            None => out.push_str(text),
            Some(map) => {
                for g in text.graphemes(true) {
                    if g.len() < 6 {
                        if let Some(n) = map.transform(g) {
                            out.push_str(n);
                            continue;
                        }
                    }
                    for (i, c) in g.char_indices() {
                        let part = &g[i..i + c.len_utf8()];
                        out.push_str(map.transform(part).unwrap_or(part));
                    }
                }
            }
        }
        if self.collapse_spaces && out.contains("  ") {
            let mut collapsed = String::with_capacity(out.len());
            let mut prev_space = false;
            for c in out.chars() {
                if !(c == ' ' && prev_space) {
                    collapsed.push(c);
                }
                prev_space = c == ' ';
            }
            out = collapsed;
        }
        out
    }

    /// Ids of the pieces that are prefixes of `s`, shortest first.
    fn prefixes(&self, s: &str, mut found: impl FnMut(u32, usize)) {
        let (mut lo, mut hi) = (0usize, self.sorted.len());
        for (i, c) in s.char_indices() {
            let end = i + c.len_utf8();
            let key = &s.as_bytes()[..end];
            // narrow [lo, hi) to the pieces starting with `key`
            lo += self.sorted[lo..hi].partition_point(|&id| self.piece(id).as_bytes() < key);
            hi = lo
                + self.sorted[lo..hi]
                    .partition_point(|&id| self.piece(id).as_bytes().starts_with(key));
            if lo == hi {
                return;
            }
            let first = self.sorted[lo];
            if self.piece(first).len() == end {
                found(first, end);
            }
        }
    }

    /// `tokenizers`' Viterbi over one pre-token, with unknown characters fused.
    fn viterbi(&self, s: &str, ids: &mut Vec<u32>) {
        #[derive(Clone, Copy)]
        struct Best {
            score: f64,
            start: usize,
            id: u32,
            set: bool,
        }
        let n = s.len();
        let mut best = vec![Best { score: 0.0, start: 0, id: 0, set: false }; n + 1];
        let mut at = 0;
        while at < n {
            let here = best[at].score;
            let char_len = s[at..].chars().next().map_or(1, char::len_utf8);
            let mut single = false;
            self.prefixes(&s[at..], |id, len| {
                let cand = here + self.scores[id as usize];
                let node = &mut best[at + len];
                if !node.set || cand > node.score {
                    *node = Best { score: cand, start: at, id, set: true };
                }
                single |= len == char_len;
            });
            if !single {
                let cand = here + self.unk_score;
                let node = &mut best[at + char_len];
                if !node.set || cand > node.score {
                    *node = Best { score: cand, start: at, id: self.unk, set: true };
                }
            }
            at += char_len;
        }
        let mut path = Vec::new();
        let mut end = n;
        while end > 0 {
            let node = best[end];
            if node.id != self.unk || path.last() != Some(&self.unk) {
                path.push(node.id);
            }
            end = node.start;
        }
        ids.extend(path.iter().rev());
    }
}

enum Segment<'a> {
    Text(&'a str),
    Special(u32),
}

fn normaliser(v: &serde_json::Value) -> Option<(Option<Precompiled>, bool)> {
    let precompiled = |v: &serde_json::Value| -> Option<Precompiled> {
        if v["type"] != "Precompiled" {
            return None;
        }
        let bytes = base64::decode(v["precompiled_charsmap"].as_str()?).ok()?;
        Precompiled::from(&bytes).ok()
    };
    let collapse = |v: &serde_json::Value| {
        v["type"] == "Replace" && v["pattern"]["Regex"] == " {2,}" && v["content"] == " "
    };
    if v.is_null() {
        return Some((None, false));
    }
    if let Some(p) = precompiled(v) {
        return Some((Some(p), false));
    }
    if v["type"] != "Sequence" {
        return None;
    }
    match v["normalizers"].as_array()?.as_slice() {
        [a] => Some((Some(precompiled(a)?), false)),
        [a, b] if collapse(b) => Some((Some(precompiled(a)?), true)),
        _ => None,
    }
}

fn metaspace_always_split(v: &serde_json::Value) -> bool {
    v["type"] == "Metaspace"
        && v["replacement"] == "\u{2581}"
        && v["prepend_scheme"] == "always"
        && v["split"] != false
}

fn bos_a_eos(v: &serde_json::Value) -> bool {
    match v["type"].as_str() {
        Some("RobertaProcessing") => true,
        Some("TemplateProcessing") => {
            let single = &v["single"];
            single.as_array().map(|a| a.len()) == Some(3)
                && single[0]["SpecialToken"]["id"] == "<s>"
                && single[1]["Sequence"]["id"] == "A"
                && single[2]["SpecialToken"]["id"] == "</s>"
        }
        _ => false,
    }
}

/// The ids of `pieces` in the byte order of the pieces (ties, which only equal pieces make, by
/// id): the order a stable `sort_by` on the bytes gives. The sort runs on `(key, id)` pairs,
/// where the key is a piece's first 8 bytes read big-endian and zero-padded. Two keys that
/// differ order their pieces as the bytes do, so the pieces themselves are only read for equal
/// keys. Sorting through the pieces instead (a pointer chase per comparison over a ~250,000
/// word vocabulary) was a seventh of a native model load.
fn sorted_by_bytes<'a>(pieces: impl Iterator<Item = &'a str>) -> Vec<u32> {
    let pieces: Vec<&[u8]> = pieces.map(str::as_bytes).collect();
    let key = |p: &[u8]| {
        let mut k = [0u8; 8];
        let n = p.len().min(8);
        k[..n].copy_from_slice(&p[..n]);
        u64::from_be_bytes(k)
    };
    let mut keyed: Vec<(u64, u32)> =
        pieces.iter().enumerate().map(|(i, p)| (key(p), i as u32)).collect();
    keyed.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| pieces[a.1 as usize].cmp(pieces[b.1 as usize]))
            .then(a.1.cmp(&b.1))
    });
    keyed.into_iter().map(|(_, id)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::sorted_by_bytes;

    #[test]
    fn sorted_by_bytes_is_a_stable_sort_on_the_bytes() {
        // shared 8-byte prefixes, pieces shorter than the key, NUL bytes (which the key's
        // padding also holds), multi-byte characters, and a duplicate
        let pieces = [
            "▁international",
            "▁internal",
            "▁inter",
            "a",
            "a\0",
            "a\0b",
            "",
            "▁",
            "é",
            "e",
            "▁internal",
            "zzzzzzzzz",
            "zzzzzzzz",
            "\u{10FFFF}",
            "ab",
            "a\u{1}",
        ];
        let mut expected: Vec<u32> = (0..pieces.len() as u32).collect();
        expected.sort_by(|a, b| pieces[*a as usize].as_bytes().cmp(pieces[*b as usize].as_bytes()));
        assert_eq!(sorted_by_bytes(pieces.iter().copied()), expected);
    }
}
