//! mnemo's in-process embedder: [`BertEmbedder`] runs a BERT-family ONNX model (by default
//! multilingual-e5-small) with tract, natively and in WebAssembly, behind the engine's
//! [`mnemo::Embedder`] trait. Texts plus a [`mnemo::embed::Role`] in (E5 prefixes), unit
//! vectors out, each tagged with the model id (a content hash of the model files) and the
//! text's polarity.
//!
//! Besides tract's own ops, the graph runs three fused ops put in at load: layer norm with its
//! residual sum and masked softmax (`fuse.rs`), and multi-head self-attention (`attention/`,
//! AVX-512, AVX2 + FMA and wasm simd128 paths over a portable reference).
#![warn(missing_docs)]

mod attention;
mod bert;
mod cache;
mod dequant;
pub mod digest;
mod fuse;
#[cfg(test)]
mod fused_model_tests;
mod fused_ops;
pub mod isa;

pub use attention::{runs as attention_runs, Path as AttentionPath};
mod nnef;
mod plan;
mod tokenize;
mod unigram;

pub use bert::{BertConfig, BertEmbedder};
pub use nnef::archive_name;

// The engine's embedding types, under the paths the modules of this crate use.
use mnemo::embed::{polarity, Embedder, Embedding, Role};
use mnemo::error;

/// The default model's folder for unit tests: `MNEMO_MODEL_DIR`, else the repo's `models/`,
/// else the shared reference copy (the same search as the integration tests).
#[cfg(test)]
pub(crate) fn test_model_dir() -> std::path::PathBuf {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dirs = [
        std::env::var_os("MNEMO_MODEL_DIR").map(std::path::PathBuf::from),
        Some(root.join("models/multilingual-e5-small-latin")),
        Some(root.join("../shared/models/multilingual-e5-small-latin")),
    ];
    let dir = dirs.into_iter().flatten().find(|d| d.join("tokenizer.json").is_file());
    dir.expect("no model: run tools/build-model")
}
