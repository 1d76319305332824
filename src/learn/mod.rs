//! The learning loop's algorithms, free of storage: edit features from a draft and what was
//! sent (`features`), patterns and their keys (`pattern`), confidence bands and statistics
//! (`confidence`), the pattern detector (`detect`), signals from JSON (`input`) and the
//! checks a host LLM's phrasing must pass (`phrasing`). The engine's side — storing signals,
//! observations and rules, feedback, promotion, outcomes, the nightly job — is in
//! `engine::learning`.
//!
//! Nothing here needs an LLM: every observation is counted from structured signals.

pub mod confidence;
pub mod cues;
pub mod detect;
pub mod features;
pub mod input;
pub mod pattern;
pub mod phrasing;
