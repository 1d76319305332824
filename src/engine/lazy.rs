//! Loading a namespace on an asynchronous host without holding its largest tables.
//!
//! A JS host keeps the engine's records in its own storage and hands them to the synchronous
//! core through an in-memory mirror (`store::journal`). Episodes and their vectors are most of
//! a namespace's bytes, and a loaded namespace already holds what ranking needs of them (the
//! snapshot's arena, int8 rows, BM25), so the mirror does not keep them:
//!
//! 1. the host makes [`Engine::lazy_prefixes`] lazy: from now on what is held under them is
//!    dropped after each call, and a call that reads there fails with `NEED_RECORDS` until the
//!    host has fetched what it asked for and run it again;
//! 2. it preloads every other table ([`Engine::eager_prefixes`]);
//! 3. [`Engine::load_parts`] reads the snapshot's head and the vector records of the rows it
//!    left out (the vectors not sealed into a segment yet, quantised again as they are read);
//!    like any call, it first fails with `NEED_RECORDS` for them. It lists the parts, and the
//!    host lets go of what it fetched (`settle`) before handing them over one at a time,
//!    chunk by chunk ([`Engine::load_chunk`], then [`Engine::load_part_end`]): each chunk is
//!    hashed and decoded as it comes (`persist::feed`), its bytes going straight into what the
//!    namespace keeps, and the part is checked against the head once complete, so the host
//!    holds one page of chunks at a time and the engine no part whole;
//! 4. [`Engine::load_needs`] says which episode and vector records loading reads: those at or
//!    above the snapshot's watermark, and those of episodes changed since (dirty markers). It
//!    reads the snapshot's head, markers and access entries itself, so it too fails with
//!    `NEED_RECORDS` for them first;
//! 5. the engine loads the namespace ([`Engine::load`]). When the snapshot turned out to be
//!    unusable, it is rebuilt from every record, which the load asks for (`NEED_RECORDS`).

use super::persist::meta::decode_meta;
use super::persist::snapshot::{self, Feed, Reading};
use super::Engine;
use crate::error::{Error, Result};
use crate::store::journal::Need;
use crate::store::{KvStore, Namespace, Table};

/// The tables a host keeps in its own storage once a namespace is loaded.
const LAZY: [Table; 3] = [Table::Episode, Table::Vector, Table::Snapshot];

impl<S: KvStore> Engine<S> {
    /// Prefixes of namespace `ns` a host preloads whole before [`Engine::load_parts`]: every
    /// table but episodes, vectors and snapshots.
    pub fn eager_prefixes(ns: &str) -> Result<Vec<Vec<u8>>> {
        let ns = Namespace::new(ns)?;
        Ok(Table::ALL.iter().filter(|t| !LAZY.contains(t)).map(|&t| ns.table_prefix(t)).collect())
    }

    /// Prefixes of namespace `ns` a host keeps out of memory, from before it loads the
    /// namespace (module docs).
    pub fn lazy_prefixes(ns: &str) -> Result<Vec<Vec<u8>>> {
        let ns = Namespace::new(ns)?;
        Ok(LAZY.iter().map(|&t| ns.table_prefix(t)).collect())
    }

    /// The episode and vector records loading `ns` reads, given the tables of
    /// [`Engine::eager_prefixes`] (module docs).
    pub fn load_needs(&self, ns: &str) -> Result<Vec<Need>> {
        let ns = Namespace::new(ns)?;
        let tables = [Table::Episode, Table::Vector];
        // Every read before any error, so a lazy store names all needs in one round. The
        // access entries are not needed here, but loading reads them: asked for now, they are
        // at hand when it runs.
        let (watermark, markers) =
            (snapshot::watermark(&self.store, &ns), snapshot::markers(&self.store, &ns));
        let (watermark, markers) = (watermark?, markers?);
        // A snapshot its markers make unusable: loading rebuilds from every record.
        let usable = |w: &u64| *w == 0 || markers.unusable.is_none();
        let Some(watermark) = watermark.filter(usable) else {
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
        for id in markers.dirty {
            for t in tables {
                needs.push(Need::Key(ns.key(t, &id.to_be_bytes())));
            }
        }
        Ok(needs)
    }

    /// Starts handing over `ns`'s snapshot (module docs), reading its head and the vector
    /// records of the rows it left out: the key prefixes of its parts, in the order they are
    /// handed over in ([`Engine::load_chunk`]), each a prefix under which a scan yields the
    /// part's chunks in order. Empty when there is no snapshot, when its head is unusable
    /// (the load then says why and rebuilds), or when `ns` is loaded already.
    pub fn load_parts(&mut self, ns: &str) -> Result<Vec<Vec<u8>>> {
        let ns = Namespace::new(ns)?;
        if self.namespaces.contains_key(ns.as_str()) {
            return Ok(Vec::new());
        }
        let (next_id, model) = match self.store.get(&ns.key(Table::Meta, b"space"))? {
            Some(meta) => decode_meta(&meta)?,
            None => (1, String::new()),
        };
        let reading =
            Reading { next_id, model: &model, dim: self.config.dim, config: self.config.vectors };
        let Some(feed) = Feed::start(&self.store, &ns, &reading)? else {
            self.feeds.remove(ns.as_str());
            return Ok(Vec::new());
        };
        let prefixes = feed.pending().map(|p| Feed::prefix(&ns, p)).collect();
        self.feeds.insert(ns.as_str().to_string(), feed);
        Ok(prefixes)
    }

    /// Room for the next chunk (`len` bytes, in key order) of the next part
    /// [`Engine::load_parts`] listed: the host copies the chunk into it. `Ok(None)`: the
    /// snapshot is already known to be unusable (the load will say why and rebuild from the
    /// records), so the chunk is skipped. After a part's last chunk, [`Engine::load_part_end`].
    pub fn load_chunk(&mut self, ns: &str, len: usize) -> Result<Option<&mut [u8]>> {
        Ok(self.snapshot_feed(ns)?.receive(len))
    }

    /// Ends the part whose chunks [`Engine::load_chunk`] took: it is checked against the
    /// snapshot's head (chunks, length, hash) and decoded. One that does not check out makes
    /// the snapshot unusable, which the load reports (it rebuilds from the records); nothing is
    /// written.
    pub fn load_part_end(&mut self, ns: &str) -> Result<()> {
        self.snapshot_feed(ns)?.received();
        Ok(())
    }

    fn snapshot_feed(&mut self, ns: &str) -> Result<&mut Feed> {
        self.feeds.get_mut(ns).ok_or_else(|| {
            Error::InvalidInput(format!(
                "no snapshot of namespace {ns:?} is being handed over: call load_parts first"
            ))
        })
    }
}
