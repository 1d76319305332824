//! Derived indexes over stored records (rebuilt from the store; never the source of truth).

pub mod bm25;
mod hnsw;
pub(crate) mod id_map;
mod links;
pub mod persist;
pub mod postings;
pub(crate) mod progress;
pub(crate) mod row_seqs;
pub(crate) mod rows_fields;
pub(crate) mod segment_fields;
pub mod stem;
pub mod stopwords;
pub mod terms;
#[cfg(test)]
mod test_vectors;
pub mod vectors;

/// A hash map with foldhash's fixed-seed hasher: several times faster than SipHash on the
/// integer and short-string keys the indexes use, and deterministic (no random seed).
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

/// A set of ids with the same hasher as [`FastMap`].
pub type FastSet = std::collections::HashSet<u64, foldhash::fast::FixedState>;
