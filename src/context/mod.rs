//! Context assembly: what goes in front of the model for a task, within a token budget.
//!
//! [`crate::Engine::context`] returns the sections in this order, each within its cap
//! ([`budget::Budget`]): the host's system prompt, procedural rules (all active, whole, first),
//! semantic facts (direct lookup), episodic memories (recall), observations, the task's
//! working memory ([`working`]) and the host's tool-call history; the response buffer is
//! reserved. Whatever did not fit is listed as withheld (`assemble`), fetchable by id.
//! Tokens are counted by the host's tokenizer when it lends one, else by [`tokens::Estimate`].
//! Everything here is pure; the engine gathers the candidates (`engine::context`).

pub mod assemble;
pub mod budget;
pub mod tokens;
pub mod working;

pub use assemble::{Item, Section, Withheld};
pub use budget::Budget;
pub use tokens::{Estimate, TokenCounter};
pub use working::{Message, Step, StepKind, WorkingMemory};
