//! The storage contract: the one small key-value interface every host implements.
//!
//! The engine does no I/O of its own. Everything it persists goes through [`KvStore`]: point
//! reads, paged prefix scans, and atomic batches. Each mutation of the engine is exactly one
//! [`Batch`], so a crash can never leave half of one behind.
//!
//! Promises every implementation keeps (checked by `contract::check`, which every backend
//! runs; feature `testing`):
//!
//! - **Read your writes.** Once [`KvStore::write`] returns `Ok`, every later `get` and `scan`
//!   sees the whole batch.
//! - **Atomic batches.** After a crash, a reopened store holds either all of a batch or none of
//!   it. A batch that returned an error changed nothing.
//! - **Durable acknowledgement.** `write` returns `Ok` only once the batch is stored as durably
//!   as the backend can (fsync for files; the host's own commit for IndexedDB, KV, Durable
//!   Objects).
//! - **Ordered scans.** `scan` returns keys in ascending byte order, starting strictly after
//!   `after`, at most `limit` entries, all starting with `prefix`.
//! - **Last write wins inside a batch.** Operations apply in order.
//!
//! Keys are namespaced per user by the engine (`u/<namespace>/…`), so dropping a user is a
//! prefix scan plus one batch of deletes.

pub mod codec;
#[cfg(any(test, feature = "testing"))]
pub mod contract;
pub(crate) mod fields;
#[cfg(not(target_arch = "wasm32"))]
pub mod file;
pub mod journal;
pub mod keys;
pub mod memory;
pub(crate) mod scan;

pub use keys::{purge_namespace, Namespace, Table};
pub use memory::MemoryStore;

use crate::error::Result;

/// One operation of a [`Batch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Store `value` under `key`, replacing any previous value.
    Put(Vec<u8>, Vec<u8>),
    /// Remove `key` (no error when absent).
    Delete(Vec<u8>),
}

/// Operations applied together, in order, atomically.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    ops: Vec<Op>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a put.
    pub fn put(&mut self, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> &mut Self {
        self.ops.push(Op::Put(key.into(), value.into()));
        self
    }

    /// Adds a delete.
    pub fn delete(&mut self, key: impl Into<Vec<u8>>) -> &mut Self {
        self.ops.push(Op::Delete(key.into()));
        self
    }

    /// The operations, in order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// True when the batch holds no operation.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// A key-value store as the engine needs it. See the module docs for the promises.
pub trait KvStore {
    /// The value under `key`, if any.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Up to `limit` entries whose keys start with `prefix` and sort strictly after `after`
    /// (from the first such key when `None`), in ascending key order. Page through a prefix by
    /// passing the last key returned as the next `after`.
    fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;

    /// Applies `batch` atomically and durably; returns once it is stored.
    fn write(&mut self, batch: &Batch) -> Result<()>;

    /// Makes deleted values unrecoverable from the backend's own files: log-shaped backends
    /// rewrite their log with only the live data, SQLite checkpoints and truncates its WAL.
    /// Erasure calls it after its delete batch. The default does nothing, right for backends
    /// whose deletes already drop the bytes (memory).
    fn vacuum(&mut self) -> Result<()> {
        Ok(())
    }

    /// True when `vacuum` only asks for a vacuum that the host carries out later (the journal
    /// the JS layer writes through): erasure then writes no crash marker of its own, since the
    /// host's compaction is crash-safe by itself and runs right after the batch is stored.
    fn defers_vacuum(&self) -> bool {
        false
    }

    /// What the backend could not read of its own files (one line each, saying where and
    /// why): records skipped when it opened, kept for inspection. Empty for backends that
    /// detect no damage of their own.
    fn damage(&self) -> Vec<String> {
        Vec::new()
    }
}
