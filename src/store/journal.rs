//! A store that keeps every batch written to it until the host takes them: how an engine with a
//! synchronous core runs on asynchronous storage (IndexedDB, Workers KV, Durable Objects).
//!
//! The host loads a namespace's records into the inner store, lets the engine work against it,
//! then takes the journal ([`Journaled::take`]) and awaits its own storage's write of each
//! batch before it acknowledges the mutation. If that write fails, the host drops the engine's
//! loaded state and reloads from its storage, so memory never runs ahead of what is stored.
//!
//! **Lazy prefixes** keep the largest tables out of memory. Under a prefix made lazy
//! ([`Journaled::make_lazy`]), only what the current call was handed is held; a `get` or `scan`
//! that reaches past it fails with [`Error::NeedRecords`] and records what it needed
//! ([`Journaled::take_needs`]): the host fetches that ([`Journaled::hold`],
//! [`Journaled::hold_range`]) and runs the call again. A write fails the same way while a need
//! is pending, so a call never writes on the strength of a record it could not read. After
//! each call [`Journaled::settle`] drops what was held again.

use std::cell::RefCell;
use std::collections::BTreeSet;

use super::{Batch, KvStore};
use crate::error::{Error, Result};

/// What a call needed from the host's storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// One record (absent is an answer too).
    Key(Vec<u8>),
    /// Every record under `prefix` after key `after` (all of them: `None`).
    Range {
        /// The keys' prefix.
        prefix: Vec<u8>,
        /// Exclusive lower bound.
        after: Option<Vec<u8>>,
    },
}

/// `S` plus the batches written since the last [`Journaled::take`].
#[derive(Debug, Default)]
pub struct Journaled<S> {
    inner: S,
    journal: Vec<Batch>,
    vacuum: bool,
    /// Prefixes whose records are held only while a call needs them.
    lazy: Vec<Vec<u8>>,
    /// Lazy keys held for the current call (present in `inner`, or known absent).
    held: BTreeSet<Vec<u8>>,
    /// Lazy ranges held whole for the current call: (prefix, after).
    ranges: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// What the failed call needed.
    needs: RefCell<Vec<Need>>,
}

impl<S: KvStore> Journaled<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            journal: Vec::new(),
            vacuum: false,
            lazy: Vec::new(),
            held: BTreeSet::new(),
            ranges: Vec::new(),
            needs: RefCell::new(Vec::new()),
        }
    }

    /// Keeps the records under `prefix` out of memory from now on (module docs); what is held
    /// under it now is dropped at the next [`Journaled::settle`].
    pub fn make_lazy(&mut self, prefix: Vec<u8>) {
        if !self.lazy.contains(&prefix) {
            self.lazy.push(prefix);
        }
    }

    /// Drops every record under `prefix` from memory (not journaled), and stops treating the
    /// lazy prefixes under it as lazy: a namespace the host will load again from its storage.
    pub fn drop_prefix(&mut self, prefix: &[u8]) -> Result<()> {
        self.lazy.retain(|l| !l.starts_with(prefix));
        self.held.retain(|k| !k.starts_with(prefix));
        self.ranges.retain(|(p, _)| !p.starts_with(prefix));
        self.clear(prefix)
    }

    /// Deletes every record under `prefix` from the inner store, page by page (not journaled).
    fn clear(&mut self, prefix: &[u8]) -> Result<()> {
        loop {
            let page = self.inner.scan(prefix, None, 1024)?;
            if page.is_empty() {
                return Ok(());
            }
            let mut batch = Batch::new();
            for (k, _) in page {
                batch.delete(k);
            }
            self.inner.write(&batch)?;
        }
    }

    /// Hands over records the host fetched for `keys`: `values[i]` is `None` when `keys[i]` is
    /// absent from its storage.
    pub fn hold(&mut self, keys: Vec<Vec<u8>>, values: Vec<Option<Vec<u8>>>) -> Result<()> {
        let mut batch = Batch::new();
        for (k, v) in keys.into_iter().zip(values) {
            match v {
                Some(v) => batch.put(k.clone(), v),
                None => batch.delete(k.clone()),
            };
            self.held.insert(k);
        }
        self.inner.write(&batch)
    }

    /// Hands over every record under `prefix` after `after` in the host's storage.
    pub fn hold_range(
        &mut self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        entries: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> Result<()> {
        let mut batch = Batch::new();
        for (k, v) in entries {
            batch.put(k, v);
        }
        self.inner.write(&batch)?;
        self.ranges.push((prefix, after));
        Ok(())
    }

    /// What the last failed call needed (module docs), emptied.
    pub fn take_needs(&mut self) -> Vec<Need> {
        std::mem::take(self.needs.get_mut())
    }

    /// After a call: drops every record held under the lazy prefixes (they are in the host's
    /// storage, and in the journal until the host takes it), so memory holds only the rest.
    pub fn settle(&mut self) -> Result<()> {
        self.held.clear();
        self.ranges.clear();
        self.needs.get_mut().clear();
        for prefix in self.lazy.clone() {
            self.clear(&prefix)?;
        }
        Ok(())
    }

    fn lazy_for(&self, key: &[u8]) -> bool {
        self.lazy.iter().any(|l| key.starts_with(l))
    }

    fn range_holds(&self, prefix: &[u8], after: Option<&[u8]>) -> bool {
        self.ranges.iter().any(|(p, a)| {
            prefix.starts_with(p)
                && match (a, after) {
                    (None, _) => true,
                    (Some(a), Some(b)) => b >= a.as_slice(),
                    (Some(_), None) => false,
                }
        })
    }

    fn need(&self, need: Need) -> Error {
        let mut needs = self.needs.borrow_mut();
        if !needs.contains(&need) {
            needs.push(need);
        }
        Error::NeedRecords { count: needs.len() }
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
        let in_range = |(p, a): &(Vec<u8>, Option<Vec<u8>>)| {
            key.starts_with(p) && a.as_ref().is_none_or(|a| key > a.as_slice())
        };
        if self.lazy_for(key) && !self.held.contains(key) && !self.ranges.iter().any(in_range) {
            return Err(self.need(Need::Key(key.to_vec())));
        }
        self.inner.get(key)
    }

    fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        // Every lazy prefix this scan reaches must be held whole from its start (or from
        // `after`, when the scan is inside it).
        // Asks for every missing one at once, so the host fetches them in one round.
        let mut missing = None;
        for l in self.lazy.iter().filter(|l| l.starts_with(prefix) || prefix.starts_with(l)) {
            let (p, a) = if prefix.starts_with(l) { (prefix, after) } else { (l.as_slice(), None) };
            if !self.range_holds(p, a) {
                let need = Need::Range { prefix: p.to_vec(), after: a.map(<[u8]>::to_vec) };
                missing = Some(self.need(need));
            }
        }
        match missing {
            Some(e) => Err(e),
            None => self.inner.scan(prefix, after, limit),
        }
    }

    fn write(&mut self, batch: &Batch) -> Result<()> {
        if !self.needs.get_mut().is_empty() {
            // A read of this call failed and was swallowed: never write on its strength.
            let count = self.needs.get_mut().len();
            return Err(Error::NeedRecords { count });
        }
        for op in batch.ops() {
            let key = match op {
                super::Op::Put(k, _) | super::Op::Delete(k) => k,
            };
            if self.lazy_for(key) {
                self.held.insert(key.clone());
            }
        }
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

    fn damage(&self) -> Vec<String> {
        self.inner.damage()
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
