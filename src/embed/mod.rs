//! Text embeddings.
//!
//! Everything the engine stores or looks up goes through the [`Embedder`] trait: texts plus a
//! [`Role`] in, unit vectors out. The default implementation, `mnemo_embed::BertEmbedder`, runs a
//! BERT-family ONNX model (by default multilingual-e5-small) in-process with tract, natively
//! and in WebAssembly. Hosts that already have vectors (an edge AI binding, a server) can
//! implement the trait themselves.
//!
//! Every vector is tagged with the [`Embedder::model_id`] that made it, so a change of model is
//! detected instead of silently mixing two vector spaces.
//!
//! Because the model cannot tell "never use semicolons" from "use semicolons" (cosine 0.938),
//! each embedding also carries the text's [`Polarity`], detected from negation cues in six
//! languages (see [`polarity`]).

pub mod passages;
pub mod polarity;

pub use passages::{Passage, TextVectors};
pub use polarity::{Polarity, Stance};

use crate::error::Result;

/// Why a text is being embedded. E5-style models need a different prefix for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Something stored: an episode, a fact, a rule (`passage: ` for E5).
    Passage,
    /// Something searched for (`query: ` for E5).
    Query,
}

/// One embedded text.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// The unit-length vector (L2 norm 1 within float precision).
    pub vector: Vec<f32>,
    /// The detected polarity of the text (negated directive or not).
    pub polarity: Polarity,
    /// How many tokens the model saw (special tokens included, after truncation).
    pub tokens: usize,
    /// True when the text was longer than the model limit and its tail was cut. Never silent:
    /// callers should split long texts or store a summary instead.
    pub truncated: bool,
}

/// Turns texts into unit vectors.
///
/// Implementations must be deterministic: the same model, role and text give the same vector.
/// `embed` takes `&mut self` so an implementation may cache and prepare plans lazily; a host
/// that wants the UI thread free runs the whole engine in a worker (Web Worker, worker thread).
pub trait Embedder {
    /// Identifies the model (name and a content hash of its files). Stored with every vector.
    fn model_id(&self) -> &str;
    /// Vector dimension.
    fn dim(&self) -> usize;
    /// The longest input, in tokens including special tokens, before truncation.
    fn max_tokens(&self) -> usize;
    /// Embeds each text for the given role, in order. Empty or whitespace-only texts are an
    /// [`crate::Error::InvalidInput`].
    fn embed(&mut self, texts: &[&str], role: Role) -> Result<Vec<Embedding>>;
    /// Whether the model would cut `text` (more than [`Embedder::max_tokens`] tokens), when the
    /// implementation can tell without running the model; `None` when it cannot, and the text
    /// is then embedded whole first and split when [`Embedding::truncated`] says it was cut
    /// ([`passages`]).
    fn truncates(&mut self, text: &str, role: Role) -> Option<bool> {
        let _ = (text, role);
        None
    }
}

/// Cosine similarity of two unit vectors (their dot product).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Checks a host-supplied vector: right dimension, finite, non-zero. Returns it normalised.
pub fn checked_unit_vector(v: &[f32], dim: usize) -> Result<Vec<f32>> {
    use crate::error::Error;
    if v.len() != dim {
        return Err(Error::InvalidInput(format!(
            "vector has {} dimensions but the model produces {dim}: supply vectors from the same model",
            v.len()
        )));
    }
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(Error::InvalidInput(format!(
            "vector component {i} is {} (NaN or infinite): fix the embedder that produced it",
            v[i]
        )));
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm == 0.0 {
        return Err(Error::InvalidInput("vector is all zeros: it has no direction".into()));
    }
    Ok(v.iter().map(|x| x / norm).collect())
}
