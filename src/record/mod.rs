//! The records the engine stores, each with its documented byte format (inside the
//! [`crate::store::codec`] envelope).

pub mod episode;
pub mod fact;
pub mod json;
pub mod rule;

pub use episode::{Episode, Outcome, Situation, Status};
pub use fact::{Fact, Policy, Source, Triple};
pub use rule::{Rule, RuleStatus};
