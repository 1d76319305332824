//! A map from ids to small values, for ids that are mostly dense from 0 — a namespace hands out
//! episode ids in order, and the indexes key their rows by them.
//!
//! Ids below about twice as many as the map holds are kept in a vector indexed by id (an
//! `Option<V>` each, no hashing); the rest — a long text's passage keys, with bits above 48
//! set, or an id far past the others — in a hash map. For 100,000 episode ids a `u32` value
//! then takes 0.8 MB where a hash map took 2.2 (capacity 131,072 of a 16-byte entry and a
//! control byte), and a lookup is an index.

use super::FastMap;

/// Ids below this always go to the vector, however few the map holds.
const DENSE_FLOOR: u64 = 1024;

#[derive(Debug, Clone)]
pub struct IdMap<V> {
    /// `dense[id]` for every id below `dense.len()`; no such id is in `sparse`.
    dense: Vec<Option<V>>,
    sparse: FastMap<u64, V>,
    /// No id in `sparse` is below this (a long text's passage keys, the usual sparse ids, are
    /// far above any dense one, so growing the vector rarely has any to take over).
    sparse_min: u64,
    len: usize,
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        IdMap { dense: Vec::new(), sparse: FastMap::default(), sparse_min: u64::MAX, len: 0 }
    }
}

impl<V: Copy> IdMap<V> {
    /// The value of `id`.
    #[inline]
    pub fn get(&self, id: u64) -> Option<&V> {
        if id < self.dense.len() as u64 {
            return self.dense[id as usize].as_ref();
        }
        self.sparse.get(&id)
    }

    /// The value of `id`, to change in place.
    pub fn get_mut(&mut self, id: u64) -> Option<&mut V> {
        if id < self.dense.len() as u64 {
            return self.dense[id as usize].as_mut();
        }
        self.sparse.get_mut(&id)
    }

    /// True when `id` has a value.
    pub fn contains_key(&self, id: u64) -> bool {
        self.get(id).is_some()
    }

    /// Sets `id`'s value; returns the one it replaces.
    pub fn insert(&mut self, id: u64, v: V) -> Option<V> {
        if id >= self.dense.len() as u64 && id < self.dense_limit() {
            self.grow(id as usize + 1);
        }
        let old = if id < self.dense.len() as u64 {
            self.dense[id as usize].replace(v)
        } else {
            self.sparse_min = self.sparse_min.min(id);
            self.sparse.insert(id, v)
        };
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Removes `id`'s value and returns it.
    pub fn remove(&mut self, id: u64) -> Option<V> {
        let old = if id < self.dense.len() as u64 {
            self.dense[id as usize].take()
        } else {
            self.sparse.remove(&id)
        };
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    /// Ids with a value.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Makes room at once for `ids`, about to be inserted: the vector is allocated once
    /// instead of doubling its way up (in a wasm heap, which never shrinks, each smaller copy
    /// would stay behind as a hole).
    pub fn reserve_for(&mut self, ids: impl Iterator<Item = u64> + Clone) {
        let limit = 2 * (self.len + ids.clone().count()) as u64 + DENSE_FLOOR;
        let top = ids.filter(|&id| id < limit).max();
        if let Some(top) = top.filter(|&t| t >= self.dense.len() as u64) {
            self.dense.reserve_exact(top as usize + 1 - self.dense.len());
        }
    }

    /// Every (id, value), the vector's in id order first.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &V)> + Clone + '_ {
        let dense =
            self.dense.iter().enumerate().filter_map(|(i, v)| Some((i as u64, v.as_ref()?)));
        dense.chain(self.sparse.iter().map(|(&id, v)| (id, v)))
    }

    /// Every id with a value.
    pub fn keys(&self) -> impl Iterator<Item = u64> + Clone + '_ {
        self.iter().map(|(id, _)| id)
    }

    /// Approximate bytes held.
    pub fn memory(&self) -> usize {
        let v = std::mem::size_of::<Option<V>>();
        self.dense.capacity() * v + self.sparse.capacity() * (9 + std::mem::size_of::<(u64, V)>())
    }

    /// Ids below this go to the vector: it stays at least about half full.
    fn dense_limit(&self) -> u64 {
        2 * self.len as u64 + DENSE_FLOOR
    }

    /// Extends the vector to `len` ids, taking over the sparse ones it now covers.
    fn grow(&mut self, len: usize) {
        let from = self.dense.len();
        if len > self.dense.capacity() {
            let doubled = (2 * self.dense.capacity()).max(len);
            self.dense.reserve_exact(doubled - from);
        }
        self.dense.resize(len, None);
        if self.sparse_min < len as u64 {
            let covered: Vec<u64> =
                self.sparse.keys().copied().filter(|&id| id < len as u64).collect();
            for id in covered {
                self.dense[id as usize] = self.sparse.remove(&id);
            }
            self.sparse_min = self.sparse.keys().copied().min().unwrap_or(u64::MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn answers_as_a_map_whatever_the_ids() {
        let mut m: IdMap<u32> = IdMap::default();
        let mut want: BTreeMap<u64, u32> = BTreeMap::new();
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        for step in 0..20_000u32 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            // Mostly ids in order, some far ones (passage keys), some repeats and removals.
            let id = match s % 10 {
                0 => (1 << 48) | (s >> 40),
                1 => s >> 20,
                2 | 3 => u64::from(step) / 2,
                _ => u64::from(step),
            };
            if s.is_multiple_of(7) {
                assert_eq!(m.remove(id), want.remove(&id), "remove {id}");
            } else {
                assert_eq!(m.insert(id, step), want.insert(id, step), "insert {id}");
            }
            assert_eq!(m.len(), want.len());
        }
        let mut got: Vec<(u64, u32)> = m.iter().map(|(k, &v)| (k, v)).collect();
        got.sort_unstable();
        assert_eq!(got, want.iter().map(|(&k, &v)| (k, v)).collect::<Vec<_>>());
        for (&k, &v) in &want {
            assert_eq!(m.get(k), Some(&v));
        }
        assert!(m.dense.len() as u64 >= 19_000, "ids in order stay in the vector");
        assert!(m.sparse.len() < 5_000, "{} sparse", m.sparse.len());
    }
}
