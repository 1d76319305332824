//! A namespace's episodes in memory: the fields every recall reads ([`Hot`]) for each one,
//! the rest decoded on demand.
//!
//! Episodes that came from a snapshot stay as their sealed records in one byte arena and are
//! decoded only when a filter, a hit or a caller needs them whole; episodes written or changed
//! since are held decoded. A cold open therefore copies the arena instead of allocating every
//! string of every episode.

use std::borrow::Cow;

use crate::error::Result;
use crate::index::id_map::IdMap;
use crate::record::{Episode, Status};

/// What ranking and the common filters read, per episode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Hot {
    pub id: u64,
    pub created_at: i64,
    pub last_accessed_at: i64,
    pub access_count: u32,
    pub importance: f32,
    pub tier: u8,
    pub status: Status,
    /// When a task memory expires (0: never).
    pub expires_at: i64,
    /// Compacted or represented by a rule: reached only when a recall asks for cold records.
    pub cold: bool,
}

impl Hot {
    pub fn of(e: &Episode) -> Self {
        Self {
            id: e.id,
            created_at: e.created_at,
            last_accessed_at: e.last_accessed_at,
            access_count: e.access_count,
            importance: e.importance,
            tier: e.tier,
            status: e.status,
            expires_at: e.expires_at,
            cold: e.is_cold(),
        }
    }

    /// True when the episode is indexed and may be recalled.
    pub fn is_live(&self) -> bool {
        matches!(self.status, Status::Raw | Status::Active)
    }

    /// True when a recall at `now` may return it: live and not expired.
    pub fn recallable(&self, now: i64) -> bool {
        self.is_live() && (self.expires_at == 0 || self.expires_at > now)
    }
}

enum Body {
    /// `arena[start..end]` holds its sealed record; with `true`, its access statistics are
    /// older than the hot fields' ([`Episodes::set_access`]), which are taken instead.
    Arena(u32, u32, bool),
    Owned(Box<Episode>),
}

/// Episodes by id.
#[derive(Default)]
pub(crate) struct Episodes {
    hot: Vec<Hot>,
    body: Vec<Body>,
    slot: IdMap<u32>,
    arena: Vec<u8>,
}

impl Episodes {
    /// Episodes whose records sit in `arena` at `spans` (one per `hot`, same order).
    pub fn from_arena(hot: Vec<Hot>, spans: Vec<(u32, u32)>, arena: Vec<u8>) -> Self {
        let mut slot = IdMap::default();
        slot.reserve_for(hot.iter().map(|h| h.id));
        for (i, h) in hot.iter().enumerate() {
            slot.insert(h.id, i as u32);
        }
        let body = spans.into_iter().map(|(s, e)| Body::Arena(s, e, false)).collect();
        Self { hot, body, slot, arena }
    }

    pub fn len(&self) -> usize {
        self.hot.len()
    }

    pub fn hot(&self, id: u64) -> Option<&Hot> {
        self.slot.get(id).map(|&i| &self.hot[i as usize])
    }

    pub fn hots(&self) -> &[Hot] {
        &self.hot
    }

    /// The whole episode (decoded from the arena when it lives there).
    pub fn get(&self, id: u64) -> Result<Option<Cow<'_, Episode>>> {
        let Some(&i) = self.slot.get(id) else { return Ok(None) };
        Ok(Some(match &self.body[i as usize] {
            Body::Owned(e) => Cow::Borrowed(&**e),
            &Body::Arena(s, e, restat) => {
                let mut ep = Episode::decode(&self.arena[s as usize..e as usize])?;
                if restat {
                    let hot = &self.hot[i as usize];
                    (ep.last_accessed_at, ep.access_count) =
                        (hot.last_accessed_at, hot.access_count);
                }
                Cow::Owned(ep)
            }
        }))
    }

    /// Sets the access statistics of an episode held as an arena record (`false`: none is),
    /// which keeps its older ones: the snapshot's access entries on open.
    pub fn set_access(&mut self, id: u64, last_accessed_at: i64, access_count: u32) -> bool {
        let Some(&i) = self.slot.get(id) else { return false };
        let Body::Arena(_, _, restat) = &mut self.body[i as usize] else { return false };
        *restat = true;
        let hot = &mut self.hot[i as usize];
        (hot.last_accessed_at, hot.access_count) = (last_accessed_at, access_count);
        true
    }

    /// The episode's sealed record.
    pub fn record(&self, id: u64) -> Option<Cow<'_, [u8]>> {
        let &i = self.slot.get(id)?;
        Some(match &self.body[i as usize] {
            Body::Owned(e) => Cow::Owned(e.encode()),
            &Body::Arena(s, e, false) => Cow::Borrowed(&self.arena[s as usize..e as usize]),
            // Decoded to take the hot fields' statistics; the stored bytes if that fails (they
            // were checked when the snapshot was read).
            &Body::Arena(s, e, true) => match self.get(id) {
                Ok(Some(ep)) => Cow::Owned(ep.encode()),
                _ => Cow::Borrowed(&self.arena[s as usize..e as usize]),
            },
        })
    }

    /// Adds or replaces an episode.
    pub fn insert(&mut self, e: Episode) {
        let hot = Hot::of(&e);
        match self.slot.get(e.id) {
            Some(&i) => {
                self.hot[i as usize] = hot;
                self.body[i as usize] = Body::Owned(Box::new(e));
            }
            None => {
                self.slot.insert(e.id, self.hot.len() as u32);
                self.hot.push(hot);
                self.body.push(Body::Owned(Box::new(e)));
            }
        }
    }

    /// Removes an episode; returns its hot fields.
    pub fn remove(&mut self, id: u64) -> Option<Hot> {
        let i = self.slot.remove(id)? as usize;
        let hot = self.hot.swap_remove(i);
        self.body.swap_remove(i);
        if let Some(moved) = self.hot.get(i) {
            self.slot.insert(moved.id, i as u32);
        }
        Some(hot)
    }

    /// Approximate bytes held.
    pub fn memory(&self) -> usize {
        let owned: usize = self
            .body
            .iter()
            .map(|b| match b {
                Body::Arena(..) => 0,
                Body::Owned(e) => {
                    std::mem::size_of::<Episode>()
                        + e.text.len()
                        + e.verdict.len()
                        + e.entities.iter().chain(&e.tags).map(|s| s.len() + 24).sum::<usize>()
                        + 48
                }
            })
            .sum();
        self.arena.capacity()
            + self.hot.capacity() * std::mem::size_of::<Hot>()
            + self.body.capacity() * std::mem::size_of::<Body>()
            + self.slot.memory()
            + owned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arena_and_owned_episodes_read_alike() {
        let mut eps: Vec<Episode> = (1..=3)
            .map(|i| {
                let mut e = Episode::new(format!("episode {i}"), 1_000 * i as i64);
                e.id = i;
                e.tags = vec![format!("t{i}")];
                e
            })
            .collect();
        let mut arena = Vec::new();
        let mut spans = Vec::new();
        for e in &eps {
            let start = arena.len() as u32;
            arena.extend_from_slice(&e.encode());
            spans.push((start, arena.len() as u32));
        }
        let mut store = Episodes::from_arena(eps.iter().map(Hot::of).collect(), spans, arena);
        assert_eq!(store.get(2).unwrap().unwrap().as_ref(), &eps[1]);
        assert_eq!(store.record(3).unwrap().as_ref(), eps[2].encode().as_slice());
        eps[1].status = Status::Rejected;
        store.insert(eps[1].clone());
        assert!(!store.hot(2).unwrap().is_live());
        assert_eq!(store.get(2).unwrap().unwrap().as_ref(), &eps[1]);
        assert_eq!(store.remove(1).map(|h| h.id), Some(1));
        assert_eq!(store.len(), 2);
        assert_eq!(store.get(3).unwrap().unwrap().as_ref(), &eps[2], "moved slot still found");
        assert!(store.get(1).unwrap().is_none());

        // Access statistics newer than an arena record's: read and written with them.
        assert!(store.set_access(3, 9_000, 4));
        let mut e3 = eps[2].clone();
        (e3.last_accessed_at, e3.access_count) = (9_000, 4);
        assert_eq!(store.get(3).unwrap().unwrap().as_ref(), &e3);
        assert_eq!(store.record(3).unwrap().as_ref(), e3.encode().as_slice());
        assert_eq!(store.hot(3).map(|h| (h.last_accessed_at, h.access_count)), Some((9_000, 4)));
        assert!(!store.set_access(2, 9_000, 4), "held decoded: its statistics are its own");
    }
}
