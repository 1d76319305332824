//! Compaction: raw episodes older than a month become weekly summaries, weekly summaries older
//! than three months become monthly overviews, and nothing is deleted on the way.
//!
//! - [`group`] decides which records go together (agent × contact × ISO week, then × month);
//! - [`summary`] writes the structured summary deterministically (extractive);
//! - [`verify`] checks a summary the host's language model wrote instead, before it is stored.
//!
//! The engine step that stores the result (sources kept, superseded and out of the indexes,
//! the summary indexed in their place) is `engine::compaction`.

pub mod group;
pub mod summary;
pub mod verify;

pub use group::Compaction;
pub use summary::Summary;
