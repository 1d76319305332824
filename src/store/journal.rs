//! A store that keeps every batch written to it until the host takes them: how an engine with a
//! synchronous core runs on asynchronous storage (IndexedDB, Workers KV, Durable Objects).
//!
//! The host loads a namespace's records into the inner store, lets the engine work against it,
//! then takes the journal ([`Journaled::take`]) and awaits its own storage's write of each
//! batch before it acknowledges the mutation. If that write fails, the host drops the engine's
//! loaded state and reloads from its storage, so memory never runs ahead of what is stored.

use super::{Batch, KvStore};
use crate::error::Result;

/// `S` plus the batches written since the last [`Journaled::take`].
#[derive(Debug, Default)]
pub struct Journaled<S> {
    inner: S,
    journal: Vec<Batch>,
    vacuum: bool,
}

impl<S: KvStore> Journaled<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        Self { inner, journal: Vec::new(), vacuum: false }
    }

    /// Applies `batch` to the inner store without journaling it (records the host loaded from
    /// its own storage).
    pub fn preload(&mut self, batch: &Batch) -> Result<()> {
        self.inner.write(batch)
    }

    /// The batches written since the last call, oldest first.
    pub fn take(&mut self) -> Vec<Batch> {
        std::mem::take(&mut self.journal)
    }

    /// True once after the engine asked for a vacuum (an erasure): the host then compacts its
    /// own storage once the journal is written, so deleted bytes leave it too.
    pub fn take_vacuum(&mut self) -> bool {
        std::mem::take(&mut self.vacuum)
    }

    /// The inner store.
    pub fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: KvStore> KvStore for Journaled<S> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.get(key)
    }

    fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.inner.scan(prefix, after, limit)
    }

    fn write(&mut self, batch: &Batch) -> Result<()> {
        self.inner.write(batch)?;
        if !batch.is_empty() {
            self.journal.push(batch.clone());
        }
        Ok(())
    }

    fn vacuum(&mut self) -> Result<()> {
        self.vacuum = true;
        self.inner.vacuum()
    }

    fn defers_vacuum(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{contract, MemoryStore};

    #[test]
    fn passes_the_contract_and_journals_only_engine_writes() {
        contract::check(&mut Journaled::new(MemoryStore::new()));
        let mut s = Journaled::new(MemoryStore::new());
        let mut b = Batch::new();
        b.put(b"a".to_vec(), b"1".to_vec());
        s.preload(&b).unwrap();
        assert!(s.take().is_empty());
        let mut c = Batch::new();
        c.put(b"b".to_vec(), b"2".to_vec()).delete(b"a".to_vec());
        s.write(&c).unwrap();
        s.write(&Batch::new()).unwrap();
        let taken = s.take();
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].ops(), c.ops());
        assert!(s.take().is_empty());
        assert_eq!(s.get(b"b").unwrap(), Some(b"2".to_vec()));
    }
}
