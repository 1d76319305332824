//! The records the engine stores, each with its documented byte format (inside the
//! [`crate::store::codec`] envelope).

pub mod confidence;
pub mod edit;
pub mod episode;
pub mod fact;
pub mod json;
pub mod observation;
pub mod origin;
pub mod outcome;
pub mod rule;
pub mod signal;

pub use confidence::Confidence;
pub use edit::EditFeatures;
pub use episode::{Episode, Outcome, Situation, Status};
pub use fact::{Fact, Policy, Triple};
pub use observation::{Observation, ObservationStatus};
pub use origin::{Origin, Source};
pub use rule::{Rule, RuleStatus};
pub use signal::{Category, Signal, SignalKind};
