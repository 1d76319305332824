//! What a loaded namespace keeps in the store besides its records, and how it is read back.
//!
//! The records (episodes, vectors, facts, rules, the retrieval log…) are the source of truth.
//! Everything here is about the state derived from them, so that opening a namespace copies
//! bytes instead of rebuilding it, and so that reads do not write:
//!
//! - [`meta`]: the namespace's next episode id and model (`Meta/space`);
//! - [`snapshot`]: episodes and indexes in one checksummed blob, with a watermark and dirty
//!   markers for what changed since (`Snapshot/…`);
//! - [`usage`]: access statistics kept in memory and folded into the records later, replayed
//!   from the retrieval log on open (`Meta/usage`).
//!
//! Nothing here reads `engine::namespace`: the loaded namespace calls in, handing over its parts.

pub(crate) mod assemble;
pub(crate) mod feed;
pub(crate) mod meta;
pub(crate) mod snapshot;
#[cfg(test)]
mod snapshot_tests;
pub(crate) mod usage;
