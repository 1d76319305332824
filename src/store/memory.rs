//! [`MemoryStore`]: the in-memory backend (tests, and hosts that persist elsewhere).

use std::collections::BTreeMap;

use super::{Batch, KvStore, Op};
use crate::error::Result;

/// A `BTreeMap` behind the storage contract. Nothing survives the process.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    map: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of keys held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every entry, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&Vec<u8>, &Vec<u8>)> {
        self.map.iter()
    }

    /// Size of the value under `key`, if any (no copy).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn value_len(&self, key: &[u8]) -> Option<usize> {
        self.map.get(key).map(Vec::len)
    }

    /// Builds a store holding `map` (the file backend's replayed log).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn from_map(map: Map) -> Self {
        Self { map }
    }
}

/// The ordered map the in-memory backends keep.
pub(crate) type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// Applies `batch` to a map (shared by the backends that keep a map in memory).
pub(crate) fn apply(map: &mut Map, batch: &Batch) {
    for op in batch.ops() {
        match op {
            Op::Put(k, v) => {
                map.insert(k.clone(), v.clone());
            }
            Op::Delete(k) => {
                map.remove(k);
            }
        }
    }
}

/// The contract's scan over a map.
pub(crate) fn scan(
    map: &Map,
    prefix: &[u8],
    after: Option<&[u8]>,
    limit: usize,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    use std::ops::Bound;
    let start = match after {
        Some(a) if a >= prefix => Bound::Excluded(a.to_vec()),
        _ => Bound::Included(prefix.to_vec()),
    };
    map.range((start, Bound::Unbounded))
        .take_while(|(k, _)| k.starts_with(prefix))
        .take(limit)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

impl KvStore for MemoryStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.map.get(key).cloned())
    }

    fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        Ok(scan(&self.map, prefix, after, limit))
    }

    fn write(&mut self, batch: &Batch) -> Result<()> {
        apply(&mut self.map, batch);
        Ok(())
    }
}
