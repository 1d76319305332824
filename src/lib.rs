//! mnemo: long-term memory for LLM agents that runs where the user's data is.
#![warn(missing_docs)]

pub mod embed;
pub mod engine;
pub mod error;

#[cfg(feature = "model")]
pub use embed::{BertConfig, BertEmbedder};
pub use embed::{Embedder, Embedding, Polarity, Role};
pub use engine::{Config, Engine, Query, Recall, Remembered};
pub use error::{Error, Result};
#[cfg(feature = "workloads")]
#[doc(hidden)]
pub mod bench;
pub mod bindings;
pub mod compact;
pub mod context;
pub mod index;
pub mod learn;
pub mod record;
pub mod store;
pub mod time;
pub mod trust;

#[cfg(test)]
mod fuzz;
