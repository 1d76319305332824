//! Tokenisation through Hugging Face `tokenizers`, loaded from `tokenizer.json` bytes.
//!
//! Truncation is done here, not silently by the tokenizer: the caller learns when a text was cut.

use tokenizers::Tokenizer;

use crate::error::{Error, ModelFile, Result};

/// A loaded tokenizer plus the token limit it enforces.
pub(crate) struct TextTokenizer {
    inner: Tokenizer,
    max_tokens: usize,
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
        Ok(Self { inner, max_tokens })
    }

    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Encodes one text with the model's special tokens.
    pub fn encode(&self, text: &str) -> Result<Tokens> {
        let enc = self
            .inner
            .encode_fast(text, true)
            .map_err(|e| Error::Inference { stage: "tokenising", detail: e.to_string() })?;
        let ids: Vec<i64> = enc.get_ids().iter().map(|&i| i64::from(i)).collect();
        let type_ids = enc.get_type_ids().iter().map(|&i| i64::from(i)).collect();
        Ok(Tokens { ids, type_ids, truncated: !enc.get_overflowing().is_empty() })
    }
}
