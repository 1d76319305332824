//! mnemo: long-term memory for LLM agents that runs where the user's data is.
#![warn(missing_docs)]

//!
//! This crate is the engine alone: synchronous, deterministic, no I/O of its own, no host. It
//! takes time and seeds as parameters and persists through the [`store::KvStore`] contract a
//! host implements. Texts become vectors through the [`Embedder`] trait: `mnemo-embed` runs
//! the default model in-process; a host with vectors of its own implements the trait.

pub mod compact;
pub mod context;
pub mod demo;
pub mod embed;
pub mod engine;
pub mod error;
pub mod index;
pub mod learn;
pub mod record;
pub mod store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod time;
pub mod trust;

pub use embed::{Embedder, Embedding, Polarity, Role};
pub use engine::{Config, Engine, Query, Recall, Remembered};
pub use error::{Error, Result};

#[cfg(test)]
mod fuzz;
