//! A bounded content-hash cache: the same text, in the same role, is never embedded twice.
//!
//! Keys are SHA-256 of `role || text`, so the cache holds no text. Eviction is first-in,
//! first-out once `capacity` entries are held: cheap, deterministic, and good enough for the
//! engine's access pattern (a burst of writes, repeated queries).

use std::collections::{HashMap, VecDeque};

use sha2::{Digest, Sha256};

use super::{Embedding, Role};

pub(crate) type Key = [u8; 32];

pub(crate) struct EmbeddingCache {
    capacity: usize,
    map: HashMap<Key, Embedding>,
    order: VecDeque<Key>,
    hits: u64,
}

impl EmbeddingCache {
    pub fn new(capacity: usize) -> Self {
        Self { capacity, map: HashMap::new(), order: VecDeque::new(), hits: 0 }
    }

    pub fn key(role: Role, text: &str) -> Key {
        let mut h = Sha256::new();
        h.update([match role {
            Role::Passage => b'p',
            Role::Query => b'q',
        }]);
        h.update(text.as_bytes());
        h.finalize().into()
    }

    pub fn get(&mut self, key: &Key) -> Option<Embedding> {
        let hit = self.map.get(key).cloned();
        if hit.is_some() {
            self.hits += 1;
        }
        hit
    }

    pub fn insert(&mut self, key: Key, value: Embedding) {
        if self.capacity == 0 || self.map.contains_key(&key) {
            return;
        }
        while self.map.len() >= self.capacity {
            match self.order.pop_front() {
                Some(old) => {
                    self.map.remove(&old);
                }
                None => break,
            }
        }
        self.map.insert(key, value);
        self.order.push_back(key);
    }

    pub fn hits(&self) -> u64 {
        self.hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemo::embed::Polarity;

    fn emb(x: f32) -> Embedding {
        Embedding { vector: vec![x], polarity: Polarity::Affirmative, tokens: 1, truncated: false }
    }

    #[test]
    fn role_is_part_of_the_key() {
        assert_ne!(EmbeddingCache::key(Role::Query, "a"), EmbeddingCache::key(Role::Passage, "a"));
    }

    #[test]
    fn evicts_oldest_first_and_counts_hits() {
        let mut c = EmbeddingCache::new(2);
        let (a, b, d) = (
            EmbeddingCache::key(Role::Query, "a"),
            EmbeddingCache::key(Role::Query, "b"),
            EmbeddingCache::key(Role::Query, "d"),
        );
        c.insert(a, emb(1.0));
        c.insert(b, emb(2.0));
        c.insert(d, emb(3.0));
        assert_eq!(c.map.len(), 2);
        assert!(c.get(&a).is_none());
        assert_eq!(c.get(&d).unwrap().vector, vec![3.0]);
        assert_eq!(c.hits(), 1);
    }
}
