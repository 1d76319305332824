//! Loading a namespace on an asynchronous host without holding its largest tables.
//!
//! A JS host keeps the engine's records in its own storage and hands them to the synchronous
//! core through an in-memory mirror (`store::journal`). Episodes and their vectors are most of
//! a namespace's bytes, and a loaded namespace already holds what ranking needs of them (the
//! snapshot's arena, int8 rows, BM25), so the mirror does not keep them:
//!
//! 1. the host preloads every table but those ([`Engine::eager_prefixes`]);
//! 2. [`Engine::load_needs`] says which episode and vector records loading reads: those at or
//!    above the snapshot's watermark, and those of episodes changed since (dirty markers) —
//!    or all of them when there is no usable snapshot;
//! 3. the host fetches them, the engine loads the namespace, and the host makes
//!    [`Engine::lazy_prefixes`] lazy: what is held under them is dropped after each call, and a
//!    later call that reads there fails with `NEED_RECORDS` until the host has fetched what it
//!    asked for and run it again.

use super::persist::snapshot;
use super::Engine;
use crate::error::Result;
use crate::store::journal::Need;
use crate::store::{KvStore, Namespace, Table};

/// The tables a host keeps in its own storage once a namespace is loaded.
const LAZY: [Table; 3] = [Table::Episode, Table::Vector, Table::Snapshot];

impl<S: KvStore> Engine<S> {
    /// Prefixes of namespace `ns` a host preloads whole before [`Engine::load_needs`]: every
    /// table but episodes and vectors.
    pub fn eager_prefixes(ns: &str) -> Result<Vec<Vec<u8>>> {
        let ns = Namespace::new(ns)?;
        Ok(Table::ALL
            .iter()
            .filter(|t| !matches!(t, Table::Episode | Table::Vector))
            .map(|&t| ns.table_prefix(t))
            .collect())
    }

    /// Prefixes of namespace `ns` a host may keep out of memory once it is loaded.
    pub fn lazy_prefixes(ns: &str) -> Result<Vec<Vec<u8>>> {
        let ns = Namespace::new(ns)?;
        Ok(LAZY.iter().map(|&t| ns.table_prefix(t)).collect())
    }

    /// The episode and vector records loading `ns` reads, given the tables of
    /// [`Engine::eager_prefixes`] (module docs).
    pub fn load_needs(&self, ns: &str) -> Result<Vec<Need>> {
        let ns = Namespace::new(ns)?;
        let tables = [Table::Episode, Table::Vector];
        let Some(watermark) = snapshot::watermark(&self.store, &ns)? else {
            return Ok(tables
                .iter()
                .map(|&t| Need::Range { prefix: ns.table_prefix(t), after: None })
                .collect());
        };
        let mut needs: Vec<Need> = tables
            .iter()
            .map(|&t| Need::Range {
                prefix: ns.table_prefix(t),
                after: watermark.checked_sub(1).map(|w| ns.key(t, &w.to_be_bytes())),
            })
            .collect();
        for id in snapshot::dirty_ids(&self.store, &ns)? {
            for t in tables {
                needs.push(Need::Key(ns.key(t, &id.to_be_bytes())));
            }
        }
        Ok(needs)
    }
}
