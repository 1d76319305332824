//! Tokenisation from `tokenizer.json` bytes: the compact Unigram tokenizer (`unigram.rs`) when
//! the file is of the SentencePiece shape it reproduces, Hugging Face `tokenizers` otherwise.
//!
//! Truncation is reported, never silent: the caller learns when a text was cut.

use tokenizers::Tokenizer;

use super::unigram::Unigram;
use crate::error::{Error, ModelFile, Result};

/// A loaded tokenizer plus the token limit it enforces.
pub(crate) struct TextTokenizer {
    inner: Inner,
    max_tokens: usize,
}

enum Inner {
    Compact(Box<Unigram>),
    Hf(Box<Tokenizer>),
}

/// Token ids of one text, ready for the model.
#[derive(Debug, Clone)]
pub(crate) struct Tokens {
    pub ids: Vec<i64>,
    pub type_ids: Vec<i64>,
    pub truncated: bool,
}

impl TextTokenizer {
    /// Parses `tokenizer.json` bytes. `max_tokens` caps every encoding (special tokens included);
    /// the tokenizer's own truncation setting, if lower, wins.
    pub fn from_bytes(bytes: &[u8], max_tokens: usize) -> Result<Self> {
        let load_err =
            |stage, detail: String| Error::ModelLoad { file: ModelFile::Tokenizer, stage, detail };
        std::str::from_utf8(bytes)
            .map_err(|e| load_err("utf-8", format!("not UTF-8 text ({e})")))?;
        if let Some(u) = Unigram::from_json(bytes) {
            let max_tokens = u.max_length.map_or(max_tokens, |m| m.min(max_tokens));
            if max_tokens < 3 {
                return Err(load_err(
                    "truncation",
                    format!("max length {max_tokens} is too small"),
                ));
            }
            return Ok(Self { inner: Inner::Compact(Box::new(u)), max_tokens });
        }
        Self::from_bytes_hf(bytes, max_tokens)
    }

    /// Parses `tokenizer.json` with Hugging Face `tokenizers` only.
    pub fn from_bytes_hf(bytes: &[u8], max_tokens: usize) -> Result<Self> {
        let load_err =
            |stage, detail: String| Error::ModelLoad { file: ModelFile::Tokenizer, stage, detail };
        let mut inner =
            Tokenizer::from_bytes(bytes).map_err(|e| load_err("parse", e.to_string()))?;
        let max_tokens =
            inner.get_truncation().map(|t| t.max_length.min(max_tokens)).unwrap_or(max_tokens);
        if max_tokens < 3 {
            return Err(load_err("truncation", format!("max length {max_tokens} is too small")));
        }
        inner
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|e| load_err("truncation", e.to_string()))?;
        inner.with_padding(None);
        Ok(Self { inner: Inner::Hf(Box::new(inner)), max_tokens })
    }

    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// True when the compact Unigram tokenizer is in use.
    pub fn is_compact(&self) -> bool {
        matches!(self.inner, Inner::Compact(_))
    }

    /// Encodes one text with the model's special tokens.
    pub fn encode(&self, text: &str) -> Result<Tokens> {
        let hf = match &self.inner {
            Inner::Hf(t) => t,
            Inner::Compact(u) => {
                let mut ids: Vec<i64> = u.encode(text).into_iter().map(i64::from).collect();
                let truncated = ids.len() > self.max_tokens;
                if truncated {
                    let eos = ids[ids.len() - 1];
                    ids.truncate(self.max_tokens - 1);
                    ids.push(eos);
                }
                let type_ids = vec![0; ids.len()];
                return Ok(Tokens { ids, type_ids, truncated });
            }
        };
        let enc = hf
            .encode_fast(text, true)
            .map_err(|e| Error::Inference { stage: "tokenising", detail: e.to_string() })?;
        let ids: Vec<i64> = enc.get_ids().iter().map(|&i| i64::from(i)).collect();
        let type_ids = enc.get_type_ids().iter().map(|&i| i64::from(i)).collect();
        Ok(Tokens { ids, type_ids, truncated: !enc.get_overflowing().is_empty() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default model's tokenizer.json.
    fn default_tokenizer() -> Vec<u8> {
        std::fs::read(crate::test_model_dir().join("tokenizer.json")).unwrap()
    }

    /// Deterministic text over the scripts and marks that exercise normalisation.
    fn corpus(seed: u64, count: usize) -> Vec<String> {
        let ranges: &[(u32, u32)] = &[
            (0x20, 0x7e),
            (0x20, 0x7e),
            (0x20, 0x7e),
            (0xa0, 0x24f),
            (0x300, 0x36f),
            (0x1e00, 0x1eff),
            (0x2000, 0x206f),
            (0x400, 0x4ff),
            (0x3040, 0x30ff),
            (0x4e00, 0x4fff),
            (0x600, 0x6ff),
            (0xff00, 0xffef),
            (0x1f300, 0x1f64f),
            (0x9, 0xd),
            (0xfb00, 0xfb06),
            (0x2150, 0x218f),
            (0x3200, 0x32ff),
        ];
        let mut state = seed;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        (0..count)
            .map(|_| {
                let len = 1 + next() % 60;
                (0..len)
                    .filter_map(|_| {
                        let (lo, hi) = ranges[(next() as usize) % ranges.len()];
                        char::from_u32(lo + next() % (hi - lo + 1))
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn compact_unigram_matches_tokenizers_exactly() {
        let json = default_tokenizer();
        let compact = TextTokenizer::from_bytes(&json, 512).unwrap();
        let hf = TextTokenizer::from_bytes_hf(&json, 512).unwrap();
        assert!(compact.is_compact(), "the default model's tokenizer must take the compact path");
        assert!(!hf.is_compact());
        let mut texts: Vec<String> = [
            "passage:   leading   and    multiple   spaces\tand\ttabs  ",
            "passage: cafe\u{301} vs café (decomposed)",
            "query: <s> literal specials </s> and <mask> here <unk><pad>",
            "ﬁ ① ＡＢＣ ½ Ⅻ ㈱ Ångström Straße ŉ ǅ \u{200b}\u{ad} zero\u{200d}width \u{feff}",
            "fn main() { println!(\"hello, world\"); } // rust code",
            "",
            " ",
            "\u{200b}",
            "a  <mask>b",
            "▁▁already▁marked",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        texts.extend(corpus(42, 3000));
        texts.push("memory ".repeat(600)); // truncation
        let mut compared = 0;
        for t in &texts {
            let (a, b) = (compact.encode(t).unwrap(), hf.encode(t).unwrap());
            assert_eq!(a.ids, b.ids, "ids differ for {t:?}");
            assert_eq!(a.truncated, b.truncated, "truncation differs for {t:?}");
            compared += 1;
        }
        assert_eq!(compared, texts.len());
    }
}
