//! The learning loop's algorithms, free of storage: edit features from a draft and what was
//! sent (`features`), patterns and their keys (`pattern`), confidence bands and statistics
//! (`confidence`), the pattern detector (`detect`), signals from JSON (`input`) and the
//! checks a host LLM's phrasing must pass (`phrasing`), and the mail agent's 90-day scenario
//! the demo replays (`scenario`, built on the seeded signal trace of `trace`). The engine's
//! side — storing signals, observations and rules, feedback, promotion, outcomes, the nightly
//! job, replaying the scenario — is in `engine`.
//!
//! Nothing here needs an LLM: every observation is counted from structured signals.

pub mod confidence;
pub mod cues;
pub mod detect;
pub mod features;
pub mod input;
pub mod pattern;
pub mod phrasing;
pub mod scenario;
#[doc(hidden)]
pub mod trace;
