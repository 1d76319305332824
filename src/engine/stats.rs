//! Counts of a namespace's episodes by tier and status, retrievable and cold, and its bytes.

use super::Engine;
use crate::error::Result;
use crate::record::Status;
use crate::store::{KvStore, Namespace};

/// Episodes per compaction tier.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tiers {
    /// Tier 0: raw episodes.
    pub raw: u64,
    /// Tier 1: weekly summaries.
    pub weekly: u64,
    /// Tier 2: monthly overviews.
    pub monthly: u64,
}

/// Episodes per status.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Statuses {
    /// As recorded.
    pub raw: u64,
    /// Summaries in use.
    pub active: u64,
    /// Summarised, evicted or corrected away: kept, not recalled.
    pub superseded: u64,
    /// Marked wrong.
    pub rejected: u64,
}

/// What [`Engine::stats`] counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Every episode record (summaries included).
    pub episodes: u64,
    /// Those a recall may return now: live and not expired.
    pub retrievable: u64,
    /// Those only a recall with `include_cold` reaches: compacted sources and episodes a rule
    /// represents.
    pub cold: u64,
    /// Per tier.
    pub tiers: Tiers,
    /// Per status.
    pub statuses: Statuses,
    /// Bytes the namespace holds in the store (keys and values, every table).
    pub bytes: u64,
}

impl<S: KvStore> Engine<S> {
    /// Counts namespace `ns`'s episodes at `now` (module docs).
    pub fn stats(&mut self, ns: &str, now: i64) -> Result<Stats> {
        let nsc = Namespace::new(ns)?;
        let space = self.space(&nsc)?;
        let mut s = Stats::default();
        for h in space.episodes.hots() {
            s.episodes += 1;
            s.retrievable += u64::from(h.recallable(now));
            s.cold += u64::from(h.cold);
            match h.tier {
                0 => s.tiers.raw += 1,
                1 => s.tiers.weekly += 1,
                _ => s.tiers.monthly += 1,
            }
            match h.status {
                Status::Raw => s.statuses.raw += 1,
                Status::Active => s.statuses.active += 1,
                Status::Superseded => s.statuses.superseded += 1,
                Status::Rejected => s.statuses.rejected += 1,
            }
        }
        crate::store::scan::scan_all(&self.store, &nsc.prefix(), None, |k, v| {
            s.bytes += (k.len() + v.len()) as u64;
            Ok(())
        })?;
        Ok(s)
    }
}
